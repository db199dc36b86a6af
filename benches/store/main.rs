//! Benchmark of `nixcut store` on generated whole stores (issue 36), with Nix's own
//! garbage collector measured in the same run on the same data.
//!
//! `cargo bench --bench store -- [--shape builder|wide|layered]… [--scale 20k|1m|full|N]…
//! [--store-files|--no-store-files] [--clean] [--gen-only] [--no-peers]
//! [--nix-timeout SECONDS] [--json-only]`
//!
//! Shapes (benches/store/shapes.rs): (a) `builder`, a desktop or CI builder with
//! hundreds of system and profile generations over a shared base and many small
//! `result` roots; (b) `wide`, one small closure per root over a shared base (dev
//! shells in a CI cache); (c) `layered`, 24 bootstrap stages and 40 layers with the
//! roots on top. Scales: `full` is nix-du#17's store (4,325,879 paths, 44,421,500
//! references, 1,551,688 roots), `1m` one million paths in the same proportions.
//!
//! Each store is written once under `TARGET/bench-store/<shape>-<parameters>/` (a
//! Nix 2.8 database and the GC root symlinks, see write.rs) and reused while its
//! `manifest.json` exists; `--clean` deletes it after the measurements. Then:
//! `nixcut store --store-root DIR --format json` (its figures are checked against
//! the generator's own count of what no root reaches) and the table format; Nix's
//! `nix-store --gc --print-roots` and `--print-dead` on the same store (in a private
//! mount namespace where `/home` is the store's `DIR/home`, so Nix resolves the
//! indirect roots instead of deleting them as stale). `--print-dead` lists only dead
//! paths that exist under `DIR/nix/store`, so with `--store-files` (the default up to
//! 100,000 paths; the `20k` scale is there for this check) one empty file per path
//! is written there. Wall time and peak
//! memory come from `/usr/bin/time`. Nix's collector is stopped (SIGINT) after
//! `--nix-timeout` seconds (300 by default): it checks each path by walking its
//! referrers until it meets a root, which is quadratic on stores of this shape. A Markdown table is printed at the end and
//! appended to `TARGET/bench-store/results.md`.

mod shapes;
mod write;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use shapes::{Params, Store};

/// nix-du#17's store.
const FULL: (usize, usize, usize) = (4_325_879, 44_421_500, 1_551_688);
/// Bumped whenever the generator's output changes, so cached stores are not reused.
const GENERATOR_VERSION: u32 = 1;

struct Row {
    shape: String,
    paths: usize,
    refs: usize,
    roots: usize,
    tool: String,
    wall: Option<f64>,
    rss_mib: Option<f64>,
    result: String,
}

struct Manifest {
    paths: usize,
    refs: usize,
    roots: usize,
    store_size: u64,
    unreachable_paths: u64,
    unreachable_bytes: u64,
}

fn target_dir() -> PathBuf {
    // The bench runs as TARGET/release/deps/store-HASH.
    let exe = std::env::current_exe().expect("own path");
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("target"))
}

fn params_for(scale: &str) -> Params {
    let paths = match scale {
        "full" => FULL.0,
        "1m" => 1_000_000,
        "20k" => 20_000,
        n => n
            .parse()
            .unwrap_or_else(|_| panic!("--scale takes 1m, full or a number of paths, not {n:?}")),
    };
    Params {
        paths,
        refs_per_path: FULL.1 as f64 / FULL.0 as f64,
        roots: ((paths as f64) * FULL.2 as f64 / FULL.0 as f64).round() as usize,
        seed: 36,
    }
}

fn generate(shape: &str, p: Params) -> Store {
    match shape {
        "builder" => shapes::builder(p),
        "wide" => shapes::wide(p),
        "layered" => shapes::layered(p),
        other => panic!("unknown shape {other:?} (builder, wide, layered)"),
    }
}

fn read_manifest(dir: &Path) -> Option<Manifest> {
    let text = std::fs::read_to_string(dir.join("manifest.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let n = |k: &str| v[k].as_u64();
    Some(Manifest {
        paths: n("paths")? as usize,
        refs: n("references")? as usize,
        roots: n("roots")? as usize,
        store_size: n("store_size")?,
        unreachable_paths: v["unreachable"]["paths"].as_u64()?,
        unreachable_bytes: v["unreachable"]["bytes"].as_u64()?,
    })
}

/// Generates (or finds) the store of `shape` at `p`; returns its directory, its
/// manifest and the seconds generation took (None when cached).
fn prepare(
    root: &Path,
    shape: &str,
    p: Params,
    store_files: bool,
) -> (PathBuf, Manifest, Option<f64>) {
    let dir = root.join(format!(
        "{shape}-{}p-{}r-{:.3}-s{}-v{GENERATOR_VERSION}",
        p.paths, p.roots, p.refs_per_path, p.seed
    ));
    let files_done = dir.join("store-files.done");
    if let Some(m) = read_manifest(&dir) {
        if store_files && !files_done.exists() {
            eprintln!("{shape}: writing store files into the cached store");
            let s = generate(shape, p);
            write::store_files(&dir, &s, p.seed).expect("write store files");
            std::fs::write(&files_done, "").expect("mark store files");
        }
        return (dir, m, None);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create store directory");
    let start = Instant::now();
    let s = generate(shape, p);
    let t_graph = start.elapsed().as_secs_f64();
    let (store_size, dead_n, dead_b) = shapes::expected(&s);
    // The database on one core, the root symlinks and store files on the other.
    let (t_db, (n_roots, t_roots)) = std::thread::scope(|scope| {
        let files = scope.spawn(|| {
            let n = write::roots(&dir, &s, p.seed).expect("write GC roots");
            if store_files {
                write::store_files(&dir, &s, p.seed).expect("write store files");
                std::fs::write(&files_done, "").expect("mark store files");
            }
            (n, start.elapsed().as_secs_f64())
        });
        write::database(&dir, &s, p.seed).expect("write db.sqlite");
        let t_db = start.elapsed().as_secs_f64();
        (t_db, files.join().expect("root writer"))
    });
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "{shape}: graph {t_graph:.1} s, then database {:.1} s alongside roots and store files {:.1} s",
        t_db - t_graph,
        t_roots - t_graph,
    );
    let m = Manifest {
        paths: s.len(),
        refs: s.targets.len(),
        roots: n_roots,
        store_size,
        unreachable_paths: dead_n,
        unreachable_bytes: dead_b,
    };
    let json = serde_json::json!({
        "shape": shape, "seed": p.seed, "generator_version": GENERATOR_VERSION,
        "paths": m.paths, "references": m.refs, "roots": m.roots,
        "store_size": m.store_size,
        "unreachable": {"paths": m.unreachable_paths, "bytes": m.unreachable_bytes},
        "generation_seconds": secs,
    });
    std::fs::write(dir.join("manifest.json"), format!("{json:#}\n")).expect("write manifest");
    (dir, m, Some(secs))
}

/// Runs `cmd` under `/usr/bin/time`, stdout into `out`; returns (wall s, peak MiB,
/// exit code, stderr).
fn measure(cmd: Command, out: &Path, timefile: &Path) -> (f64, f64, Option<i32>, String) {
    let mut wrapped = Command::new("/usr/bin/time");
    wrapped.arg("-f").arg("%e %M").arg("-o").arg(timefile);
    wrapped.arg(cmd.get_program()).args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            wrapped.env(k, v);
        }
    }
    let start = Instant::now();
    let o = wrapped
        .stdout(std::fs::File::create(out).expect("create output file"))
        .stderr(Stdio::piped())
        .output()
        .expect("run /usr/bin/time");
    let wall = start.elapsed().as_secs_f64();
    let t = std::fs::read_to_string(timefile).unwrap_or_default();
    let rss = t
        .lines()
        .last()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<f64>().ok())
        .map_or(f64::NAN, |k| k / 1024.0);
    (
        wall,
        rss,
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn count_lines(file: &Path) -> usize {
    std::fs::read(file).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count())
}

fn short(err: &str) -> String {
    let l = err
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    l.chars().take(120).collect::<String>().replace('|', "/")
}

/// A row of the results table for the store `m` of `shape`.
fn row_of(
    shape: &str,
    m: &Manifest,
    tool: &str,
    wall: Option<f64>,
    rss_mib: Option<f64>,
    result: String,
) -> Row {
    Row {
        shape: shape.to_owned(),
        paths: m.paths,
        refs: m.refs,
        roots: m.roots,
        tool: tool.to_owned(),
        wall,
        rss_mib,
        result,
    }
}

fn run_nixcut(dir: &Path, m: &Manifest, shape: &str, table: bool, rows: &mut Vec<Row>) {
    let exe = env!("CARGO_BIN_EXE_nixcut");
    let out = dir.join("nixcut.json");
    let timefile = dir.join("time.txt");
    let row = |tool: &str, w: Option<f64>, r: Option<f64>, result: String| {
        row_of(shape, m, tool, w, r, result)
    };
    let mut cmd = Command::new(exe);
    cmd.arg("store")
        .arg("--store-root")
        .arg(dir)
        .args(["--format", "json"])
        .env("NIXCUT_TIMINGS", "1");
    let (w, r, code, err) = measure(cmd, &out, &timefile);
    // Where the time went, step by step, beside the output.
    let _ = std::fs::write(dir.join("nixcut-json.stderr"), &err);
    let result = if code != Some(0) {
        format!("failed: {}", short(&err))
    } else {
        check_json(&out, m)
    };
    rows.push(row("nixcut store --format json", Some(w), Some(r), result));
    if !table {
        return;
    }
    let mut cmd = Command::new(exe);
    cmd.arg("store").arg("--store-root").arg(dir);
    let table = dir.join("nixcut.txt");
    let (w, r, code, err) = measure(cmd, &table, &timefile);
    let result = if code == Some(0) {
        "ok".to_owned()
    } else {
        format!("failed: {}", short(&err))
    };
    rows.push(row("nixcut store (table)", Some(w), Some(r), result));
}

/// Compares nixcut's JSON with the generator's own counts.
fn check_json(out: &Path, m: &Manifest) -> String {
    let text = match std::fs::read_to_string(out) {
        Ok(t) => t,
        Err(e) => return format!("unreadable output: {e}"),
    };
    let v: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => return format!("output is not JSON: {e}"),
    };
    let mut bad = String::new();
    let mut cmp = |what: &str, got: Option<u64>, want: u64| {
        if got != Some(want) {
            let _ = write!(bad, "{what} {got:?} (expected {want}); ");
        }
    };
    cmp("path_count", v["path_count"].as_u64(), m.paths as u64);
    cmp("store_size", v["store_size"].as_u64(), m.store_size);
    cmp(
        "unreachable.paths",
        v["unreachable"]["paths"].as_u64(),
        m.unreachable_paths,
    );
    cmp(
        "unreachable.bytes",
        v["unreachable"]["bytes"].as_u64(),
        m.unreachable_bytes,
    );
    cmp("root_count", v["root_count"].as_u64(), m.roots as u64);
    if bad.is_empty() {
        format!("{} unreachable paths, as generated", m.unreachable_paths)
    } else {
        format!("MISMATCH: {bad}")
    }
}

/// Nix's collector, `--print-roots` and (with store files) `--print-dead`, each
/// stopped with SIGINT after `limit` seconds.
fn run_nix(
    dir: &Path,
    m: &Manifest,
    shape: &str,
    store_files: bool,
    limit: u64,
    rows: &mut Vec<Row>,
) {
    let row = |tool: &str, w: Option<f64>, r: Option<f64>, result: String| {
        row_of(shape, m, tool, w, r, result)
    };
    let nix_store = ["/usr/bin/nix-store", "/run/current-system/sw/bin/nix-store"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let Some(nix_store) = nix_store else {
        rows.push(row(
            "nix-store --gc",
            None,
            None,
            "SKIP: nix-store not installed".into(),
        ));
        return;
    };
    let auto_before =
        std::fs::read_dir(dir.join("nix/var/nix/gcroots/auto")).map_or(0, Iterator::count);
    let store = format!("local?root={}", dir.display());
    let nix_config = std::env::var("NIX_CONFIG")
        .unwrap_or_else(|_| "sandbox = false\nbuild-users-group =\nsubstituters =".to_owned());
    let mut asks: Vec<(&str, &str)> = vec![("--print-roots", "nix-store --gc --print-roots")];
    if store_files {
        asks.push(("--print-dead", "nix-store --gc --print-dead"));
    }
    for (flag, tool) in asks {
        // A private mount namespace where /home is the generated one: Nix resolves
        // an indirect root's absolute target on the running machine, and deletes the
        // root as stale when that target is missing.
        let mut cmd = Command::new("unshare");
        cmd.args(["-m", "sh", "-c"])
            .arg("mount --bind \"$1/home\" /home && shift && exec \"$@\"")
            .arg("sh")
            .arg(dir)
            .args(["timeout", "--signal=INT", &limit.to_string()])
            .arg(nix_store)
            .args(["--store", &store, "--gc", flag])
            .env("NIX_CONFIG", &nix_config);
        let out = dir.join("nix-gc.out");
        let (w, r, code, err) = measure(cmd, &out, &dir.join("time.txt"));
        let n = count_lines(&out);
        let result = if code == Some(124) {
            format!("stopped after {limit} s ({n} lines printed by then)")
        } else if code != Some(0) {
            format!("failed: {}", short(&err))
        } else if flag == "--print-dead" {
            if n as u64 == m.unreachable_paths {
                format!("{n} dead paths, as generated")
            } else {
                format!(
                    "MISMATCH: {n} dead paths (generated {})",
                    m.unreachable_paths
                )
            }
        } else if n == m.roots {
            format!("{n} roots, as generated")
        } else {
            format!("{n} root lines (generated {} roots)", m.roots)
        };
        rows.push(row(tool, Some(w), Some(r), result));
        let _ = std::fs::remove_file(&out);
    }
    let auto_after =
        std::fs::read_dir(dir.join("nix/var/nix/gcroots/auto")).map_or(0, Iterator::count);
    assert_eq!(
        auto_before,
        auto_after,
        "Nix's collector deleted indirect roots of {}; the store must be generated again",
        dir.display()
    );
}

fn nix_du_row(dir: &Path, m: &Manifest, shape: &str, rows: &mut Vec<Row>) {
    let bin = target_dir().join("nix-du/root/bin/nix-du");
    let mut row = Row {
        shape: shape.to_owned(),
        paths: m.paths,
        refs: m.refs,
        roots: m.roots,
        tool: "nix-du".to_owned(),
        wall: None,
        rss_mib: None,
        result: String::new(),
    };
    if !bin.exists() {
        row.result = format!(
            "not built (BENCHMARKS.md says why; expected at {})",
            bin.display()
        );
        rows.push(row);
        return;
    }
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "sh", "-c"])
        .arg("mount --bind \"$1/home\" /home && shift && exec \"$@\"")
        .arg("sh")
        .arg(dir)
        .arg(&bin)
        .args(["-s", "1GB"])
        .env("NIX_REMOTE", format!("local?root={}", dir.display()));
    let (w, r, code, err) = measure(cmd, &dir.join("nix-du.dot"), &dir.join("time.txt"));
    row.wall = Some(w);
    row.rss_mib = Some(r);
    row.result = if code == Some(0) {
        "ok".into()
    } else {
        format!("failed: {}", short(&err))
    };
    rows.push(row);
}

fn main() {
    let mut shapes_asked = Vec::new();
    let mut scales = Vec::new();
    let (mut files, mut clean, mut gen_only, mut peers) = (None, false, false, true);
    let mut nix_limit = 300u64;
    let mut with_table = true;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bench" => {}
            "--shape" => shapes_asked.push(args.next().expect("--shape NAME")),
            "--scale" => scales.push(args.next().expect("--scale 1m|full|N")),
            "--store-files" => files = Some(true),
            "--no-store-files" => files = Some(false),
            "--clean" => clean = true,
            "--gen-only" => gen_only = true,
            "--no-peers" => peers = false,
            "--json-only" => with_table = false,
            "--nix-timeout" => {
                nix_limit = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--nix-timeout SECONDS");
            }
            other => panic!("unknown argument {other:?}; see benches/store/main.rs"),
        }
    }
    if shapes_asked.is_empty() {
        shapes_asked = vec!["builder".into(), "wide".into(), "layered".into()];
    }
    if scales.is_empty() {
        scales = vec!["20k".into(), "1m".into(), "full".into()];
    }
    let root = target_dir().join("bench-store");
    std::fs::create_dir_all(&root).expect("create bench-store");
    let mut rows = Vec::new();
    for scale in &scales {
        let p = params_for(scale);
        for shape in &shapes_asked {
            let store_files = files.unwrap_or(p.paths <= 100_000);
            let (dir, m, gen_secs) = prepare(&root, shape, p, store_files);
            rows.push(Row {
                shape: shape.clone(),
                paths: m.paths,
                refs: m.refs,
                roots: m.roots,
                tool: "generator (db.sqlite + roots)".into(),
                wall: gen_secs,
                rss_mib: None,
                result: format!(
                    "{} unreachable paths{}",
                    m.unreachable_paths,
                    if gen_secs.is_none() { ", cached" } else { "" }
                ),
            });
            if !gen_only {
                run_nixcut(&dir, &m, shape, with_table, &mut rows);
                if peers {
                    run_nix(&dir, &m, shape, store_files, nix_limit, &mut rows);
                    nix_du_row(&dir, &m, shape, &mut rows);
                }
            }
            print_rows(&rows[rows.len().saturating_sub(6)..]);
            if clean {
                std::fs::remove_dir_all(&dir).expect("remove generated store");
            }
        }
    }
    let table = table(&rows);
    println!("\n{table}");
    let mut log = std::fs::read_to_string(root.join("results.md")).unwrap_or_default();
    log.push_str(&table);
    log.push('\n');
    std::fs::write(root.join("results.md"), log).expect("write results.md");
}

fn print_rows(rows: &[Row]) {
    for r in rows {
        eprintln!("  {} {}: {}", r.shape, r.tool, fmt_row(r));
    }
}

fn fmt_row(r: &Row) -> String {
    let w = r.wall.map_or("–".to_owned(), |w| format!("{w:.1} s"));
    let m = r.rss_mib.map_or("–".to_owned(), |m| format!("{m:.0} MiB"));
    format!("{w}, {m}, {}", r.result)
}

fn table(rows: &[Row]) -> String {
    let mut t = String::from(
        "| shape | paths | references | roots | tool | wall time | peak RSS | result |\n|---|--:|--:|--:|---|--:|--:|---|\n",
    );
    for r in rows {
        let w = r.wall.map_or("–".to_owned(), |w| format!("{w:.1} s"));
        let m = r.rss_mib.map_or("–".to_owned(), |m| format!("{m:.0} MiB"));
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.shape, r.paths, r.refs, r.roots, r.tool, w, m, r.result
        );
    }
    t
}
