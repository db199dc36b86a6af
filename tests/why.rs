//! `nixcut why`: on the shipped examples, and on the Nix-built world against
//! `nix path-info -rS` for every source the world can be read from.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;

const ROCM: &str = "examples/llama-cpp-rocm.json";
const CUDA: &str = "examples/llama-cpp-cuda.json";

fn ex(p: &str) -> String {
    repo().join(p).to_string_lossy().into_owned()
}

fn by_path(report: &Value) -> BTreeMap<String, Value> {
    report["paths"]
        .as_array()
        .expect("paths")
        .iter()
        .map(|p| (p["path"].as_str().unwrap().to_string(), p.clone()))
        .collect()
}

#[test]
fn example_reproduces_published_figures() {
    let r = json(&["why", &ex(ROCM), "--format", "json"]);
    assert_eq!(r["schema_version"], 1);
    assert_eq!(nix_human(r["closure_size"].as_u64().unwrap()), "10.6G");
    let paths = by_path(&r);
    assert_eq!(paths.len() as u64, r["path_count"].as_u64().unwrap());
    for (name, published) in [
        ("9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-rocblas-5.7.1", "7.9G"),
        (
            "pk2gwl2bqr3yqwb8kb524ixbdbkms7dp-rocblas-tensile-gfx90-5.7.1",
            "1.8G",
        ),
        ("68xb3gyp792qyhpg6wwpamh9w08iwdkr-clr-5.7.1", "4.4G"),
        ("fdbz6r7h9kxzypyfz9h1mq93qwsrq9jx-hipblas-5.7.1", "10.4G"),
        ("gblj9yaj27f50h5fh2vyr774ygxvd3qf-rocsparse-5.7.1", "5.4G"),
    ] {
        let p = &paths[&format!("/nix/store/{name}")];
        assert_eq!(
            nix_human(p["closure_size"].as_u64().unwrap()),
            published,
            "{name}"
        );
        // Added size never exceeds closure size; chains start at the root.
        assert!(p["added_size"].as_u64() <= p["closure_size"].as_u64());
        assert_eq!(p["chain"][0], r["root"]);
        assert_eq!(
            p["chain"].as_array().unwrap().last().unwrap().as_str(),
            Some(p["path"].as_str().unwrap())
        );
    }
    let cuda = json(&["why", &ex(CUDA), "--format", "json"]);
    assert_eq!(nix_human(cuda["closure_size"].as_u64().unwrap()), "985.6M");
}

#[test]
fn ranking_top_and_rest_add_up() {
    let r = json(&["why", &ex(ROCM), "--format", "json", "--top", "5"]);
    let shown = r["paths"].as_array().unwrap();
    assert_eq!(shown.len(), 5);
    let added: Vec<u64> = shown
        .iter()
        .map(|p| p["added_size"].as_u64().unwrap())
        .collect();
    assert!(
        added.windows(2).all(|w| w[0] >= w[1]),
        "not ranked: {added:?}"
    );
    // The root's added size is the whole closure.
    assert_eq!(added[0], r["closure_size"].as_u64().unwrap());
    let rest = &r["rest"];
    let total = r["path_count"].as_u64().unwrap();
    assert_eq!(rest["count"].as_u64().unwrap() + 5, total);
    let shown_nar: u64 = shown.iter().map(|p| p["nar_size"].as_u64().unwrap()).sum();
    assert_eq!(
        shown_nar + rest["nar_size"].as_u64().unwrap(),
        r["closure_size"].as_u64().unwrap()
    );

    for sort in ["closure", "nar"] {
        let r = json(&["why", &ex(ROCM), "--format", "json", "--sort", sort]);
        let key = format!("{sort}_size");
        let v: Vec<u64> = r["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p[&key].as_u64().unwrap())
            .collect();
        assert!(
            v.windows(2).all(|w| w[0] >= w[1]),
            "--sort {sort} not ranked"
        );
    }
}

/// The table and the Markdown of `why --top 3` show the same rows, and their numbers are
/// the JSON report's: the headline, each ranked path's NAR, closure and added size, and
/// the row that sums the paths not shown.
#[test]
fn table_and_markdown_show_the_same_numbers() {
    let r = json(&["why", &ex(ROCM), "--format", "json"]);
    let rows = r["paths"].as_array().unwrap();
    let name = |p: &Value| {
        let base = p["path"].as_str().unwrap().rsplit('/').next().unwrap();
        base[33..].to_string()
    };
    let size = |p: &Value, k: &str| human(p[k].as_u64().unwrap());
    let headline = format!(
        "{}: closure {} in {} paths",
        name(&rows[0]),
        human(r["closure_size"].as_u64().unwrap()),
        r["path_count"]
    );
    let rest: u64 = rows[3..]
        .iter()
        .map(|p| p["nar_size"].as_u64().unwrap())
        .sum();
    let more = format!("{} … {} more paths", human(rest), rows.len() - 3);

    let (code, table, _) = run(&["why", &ex(ROCM), "--top", "3"]);
    assert_eq!(code, 0);
    assert!(!table.contains('\x1b'), "colour in a pipe");
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], headline);
    for (i, p) in rows[..3].iter().enumerate() {
        let t: Vec<&str> = lines[2 + i].split_whitespace().collect();
        let cells = [
            t[0].to_string(),
            format!("{} {}", t[1], t[2]),
            format!("{} {}", t[3], t[4]),
            format!("{} {}", t[5], t[6]),
            t[7].to_string(),
        ];
        let want = [
            (i + 1).to_string(),
            size(p, "added_size"),
            size(p, "closure_size"),
            size(p, "nar_size"),
            name(p),
        ];
        assert_eq!(cells, want, "{table}");
    }
    let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(words(lines[5]), more, "{table}");

    let (code, md, _) = run(&["why", &ex(ROCM), "--top", "3", "--format", "markdown"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines[0], format!("### {headline}"));
    assert_eq!(
        lines[2], "| # | path | NAR | closure | added | via |",
        "{md}"
    );
    for (i, p) in rows[..3].iter().enumerate() {
        let cells: Vec<&str> = lines[4 + i]
            .trim_matches('|')
            .split(" | ")
            .map(str::trim)
            .collect();
        assert_eq!(cells[0], (i + 1).to_string(), "{md}");
        assert!(cells[1].ends_with(&format!("…-{}`", name(p))), "{md}");
        assert_eq!(
            cells[2..5],
            [
                size(p, "nar_size"),
                size(p, "closure_size"),
                size(p, "added_size")
            ],
            "{md}"
        );
    }
    let cells: Vec<&str> = lines[7]
        .trim_matches('|')
        .split(" | ")
        .map(str::trim)
        .collect();
    assert_eq!(format!("{} {}", cells[2], cells[1]), more, "{md}");
}

#[test]
fn chains_to_a_target() {
    let r = json(&[
        "why",
        &ex(ROCM),
        "rocblas-tensile-gfx90",
        "--format",
        "json",
    ]);
    assert!(r["chain_count"].as_u64().unwrap() >= 1);
    assert!(r["target"]
        .as_str()
        .unwrap()
        .ends_with("rocblas-tensile-gfx90-5.7.1"));
    let tree = &r["tree"];
    assert!(tree["path"]
        .as_str()
        .unwrap()
        .ends_with("llama-cpp-rocm-0.0.0"));
    let (code, out, _) = run(&["why", &ex(ROCM), "rocblas-tensile-gfx90"]);
    assert_eq!(code, 0);
    assert!(out.contains("└───"), "{out}");
    assert!(out.contains("graph-level"), "{out}");
}

#[test]
fn errors_name_the_problem_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "[\n  {\"path\": \"/nix/store/x\",\n  oops }\n]").unwrap();
    let (code, _, err) = run(&["why", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("bad.json:3:3"),
        "file:line:column expected: {err}"
    );

    let (code, _, err) = run(&["why", &ex(ROCM), "--root", "no-such-package"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("candidates") && err.contains("llama-cpp-rocm-0.0.0"),
        "{err}"
    );

    let (code, _, err) = run(&["why", "/does/not/exist.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("/does/not/exist.json"), "{err}");

    let (code, _, _) = run(&["why"]);
    assert_eq!(code, 2, "usage errors exit 2");
    let (code, out, _) = run(&["why", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("added size"));
}

/// Closure size and every per-path closure size equal `nix path-info -rS`, whether the
/// world is read from the live store, its JSON, a registration dump or a binary cache.
#[test]
fn world_sizes_match_nix_for_every_source() {
    if !nix_or_skip("world_sizes_match_nix_for_every_source") {
        return;
    }
    let w = rocm_world();
    let expect = nix_closure_sizes(&w.root);
    assert!(expect.len() > 10, "world too small: {expect:?}");
    let dir = tempfile::tempdir().unwrap();
    let json_file = path_info_file(dir.path(), &w.root, "world.json");
    let paths: Vec<&str> = expect.keys().map(String::as_str).collect();
    let mut dump_args = vec!["--dump-db"];
    dump_args.extend(&paths);
    let dump = nix_stdout("nix-store", &dump_args);
    let reg = dir.path().join("registration");
    std::fs::write(&reg, dump).unwrap();
    let cache = dir.path().join("cache");
    let cache_url = format!(
        "file://{}?compression=xz&write-nar-listing=true",
        cache.display()
    );
    nix_stdout("nix", &["copy", "--to", &cache_url, &w.root]);

    let check = |r: &Value, source: &str| {
        assert_eq!(
            r["closure_size"].as_u64().unwrap(),
            expect[&w.root],
            "closure size from {source}"
        );
        let got = by_path(r);
        assert_eq!(got.len(), expect.len(), "path count from {source}");
        for (p, size) in &expect {
            assert_eq!(
                got[p]["closure_size"].as_u64().unwrap(),
                *size,
                "{p} from {source}"
            );
        }
    };
    for source in [
        w.root.clone(),
        json_file.display().to_string(),
        reg.display().to_string(),
        cache.display().to_string(),
    ] {
        let r = json(&["why", &source, "--root", &w.root, "--format", "json"]);
        check(&r, &source);
    }
    // The live store both ways: its database alone (no `nix` on PATH to fall back on),
    // and `nix` alone.
    for (var, value) in [("PATH", "/nonexistent"), ("NIXCUT_NO_STORE_DB", "1")] {
        let out = nixcut()
            .args(["why", &w.root, "--format", "json"])
            .env(var, value)
            .output()
            .unwrap();
        let (code, stdout, stderr) = decode(out);
        assert_eq!(code, 0, "{var}={value}: {stderr}");
        let r: Value = serde_json::from_str(&stdout).unwrap();
        check(&r, &format!("{} with {var}={value}", w.root));
    }
}

/// With files available, `why ROOT` says what keeps the top paths in, and
/// `why ROOT TARGET` gives the evidence of every hop.
#[test]
fn world_why_shows_evidence() {
    if !nix_or_skip("world_why_shows_evidence") {
        return;
    }
    let w = rocm_world();
    let cache = tempfile::tempdir().unwrap();
    let out = nixcut()
        .args(["why", &w.root, "--format", "json", "--top", "10"])
        .env("XDG_CACHE_HOME", cache.path())
        .output()
        .unwrap();
    let (code, stdout, stderr) = decode(out);
    assert_eq!(code, 0, "{stderr}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(r["evidence"], "files");
    let gfx90 = by_path(&r)[w.path("rocblas-tensile-gfx90")].clone();
    let kept = &gfx90["kept_by"][0];
    assert_eq!(kept["referrer"], w.path("rocblas"));
    assert!(kept["kinds"]["symlink"].as_u64().unwrap() > 10, "{kept}");
    assert!(
        kept["verdict"].as_str().unwrap().starts_with("gpu:"),
        "{kept}"
    );

    let out = nixcut()
        .args(["why", &w.root, "rocblas-tensile-gfx90", "--format", "json"])
        .env("XDG_CACHE_HOME", cache.path())
        .output()
        .unwrap();
    let (code, stdout, stderr) = decode(out);
    assert_eq!(code, 0, "{stderr}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    // Every hop below the root carries evidence.
    let mut stack = vec![r["tree"].clone()];
    let mut hops = 0;
    while let Some(n) = stack.pop() {
        for c in n["children"].as_array().unwrap() {
            let via = &c["via"];
            assert!(via.is_object(), "hop to {} has no evidence", c["path"]);
            assert_eq!(via["referrer"], n["path"]);
            assert!(!via["evidence"].as_array().unwrap().is_empty());
            hops += 1;
            stack.push(c.clone());
        }
    }
    assert!(hops >= 4, "{hops} hops");
    // --no-evidence stays graph-level.
    let r = json(&[
        "why",
        &w.root,
        "--format",
        "json",
        "--no-evidence",
        "--no-cache",
    ]);
    assert_eq!(r["evidence"], "graph");
}

/// A closure in the keyed shape large enough to be read and parsed in parts and written
/// in tasks (over 16 MiB, over 4,096 rows): path i references paths i/2, i/3, … i/11.
fn large_keyed_closure(dir: &std::path::Path, n: usize) -> std::path::PathBuf {
    let h = |i: usize| {
        let alphabet = b"0123456789abcdfghijklmnpqrsvwxyz";
        let mut x = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..32)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                alphabet[(x % 32) as usize] as char
            })
            .collect::<String>()
    };
    let path = |i: usize| format!("/nix/store/{}-p{i}", h(i));
    let mut entries: Vec<(String, Value)> = (0..n)
        .map(|i| {
            // Shallow, as closures are: chains stay a few paths long.
            let refs: Vec<String> = [2, 3, 5, 7, 11]
                .iter()
                .filter(|&&k| i >= k)
                .map(|&k| path(i / k))
                .collect();
            let entry = serde_json::json!({
                "narHash": "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
                "narSize": 1000 + i * 7 % 5000,
                "references": refs,
                "deriver": format!("/nix/store/{}-p{i}.drv", h(i + n)),
                "signatures": [format!("cache.example.org-1:{}", "x".repeat(88))],
                "registrationTime": 1700000000,
                "ultimate": false,
            });
            (path(i), entry)
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let map: serde_json::Map<String, Value> = entries.into_iter().collect();
    let file = dir.join("large.json");
    std::fs::write(&file, serde_json::to_vec(&Value::Object(map)).unwrap()).unwrap();
    file
}

#[test]
fn a_large_closure_reads_and_writes_the_same_on_one_core_and_on_all() {
    let tmp = tempfile::tempdir().unwrap();
    let file = large_keyed_closure(tmp.path(), 45_000);
    assert!(std::fs::metadata(&file).unwrap().len() > 16 << 20);
    let f = file.to_str().unwrap();
    let out = |threads: Option<&str>, timings: bool| {
        let mut cmd = nixcut();
        cmd.args(["why", f, "--format", "json", "--no-evidence"]);
        if let Some(t) = threads {
            cmd.env("RAYON_NUM_THREADS", t);
        }
        if timings {
            cmd.env("NIXCUT_TIMINGS", "1");
        }
        decode(cmd.output().unwrap())
    };
    let (code, all, err) = out(None, false);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    let (code, one, _) = out(Some("1"), false);
    assert_eq!(code, 0);
    assert!(one == all, "one core and every core differ");
    let r: Value = serde_json::from_str(&all).unwrap();
    assert_eq!(r["path_count"].as_u64(), Some(45_000));
    // Timings go to stderr, one line per step, and change nothing on stdout.
    let (code, timed, err) = out(None, true);
    assert_eq!(code, 0);
    assert!(timed == all);
    for step in [
        "load: JSON parsing",
        "graph",
        "every path's closure size",
        "output",
    ] {
        assert!(
            err.lines()
                .any(|l| l.starts_with("nixcut: timing:") && l.ends_with(step)),
            "no `{step}` line in {err}"
        );
    }
}

// ---- issue 31, item 8: a deep chain's rows stay linear ----

/// A store path with a distinct hash for every `i`, named `p<i>`.
fn chain_path(i: usize) -> String {
    const NIX32: &[u8] = b"0123456789abcdfghijklmnpqrsvwxyz";
    let mut h = [b'0'; 32];
    let mut x = i;
    for c in h.iter_mut().rev() {
        *c = NIX32[x % 32];
        x /= 32;
    }
    format!("/nix/store/{}-p{i}", std::str::from_utf8(&h).unwrap())
}

/// `nix path-info --json` of `n` paths in one chain: p0 -> p1 -> … -> p<n-1>.
fn one_chain(dir: &std::path::Path, n: usize) -> std::path::PathBuf {
    let mut obj = serde_json::Map::new();
    for i in 0..n {
        let refs: Vec<String> = (i + 1 < n).then(|| chain_path(i + 1)).into_iter().collect();
        obj.insert(
            chain_path(i),
            serde_json::json!({ "narSize": 1000 + i, "references": refs }),
        );
    }
    let f = dir.join(format!("chain{n}.json"));
    std::fs::write(&f, serde_json::Value::Object(obj).to_string()).unwrap();
    f
}

/// Run nixcut; its stdout, or `Err(bytes read)` as soon as it passes `limit` bytes (the
/// process is killed then: a quadratic report is not waited for, nor held).
fn stdout_within(args: &[&str], limit: usize) -> Result<Vec<u8>, usize> {
    use std::io::Read;
    let mut child = nixcut()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run nixcut");
    let mut stdout = child.stdout.take().unwrap();
    let mut out = Vec::new();
    let mut buf = vec![0; 1 << 16];
    loop {
        let k = stdout.read(&mut buf).expect("read stdout");
        if k == 0 {
            break;
        }
        out.extend_from_slice(&buf[..k]);
        if out.len() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(out.len());
        }
    }
    let status = child.wait().expect("wait for nixcut");
    assert!(status.success(), "{args:?}: {status}");
    Ok(out)
}

/// On a 60,000-path chain (each path referring to the next), `why --format json` wrote
/// 25.4 GB in under a minute: every row listed its whole chain from the root, so the
/// report grew with the square of the depth. Now a row's chain lists at most
/// `--max-chain-length` paths (default 32: the root and the last 31) and counts those
/// left out (`chain_omitted`): every format stays within a constant number of bytes a
/// path, and `--max-chain-length` asks for longer chains (whole ones with N ≥ depth).
#[test]
fn why_on_a_deep_chain_writes_output_linear_in_the_graph() {
    let n = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let input = one_chain(dir.path(), n);
    let input = input.to_str().unwrap();
    // Longest name, with its quotes and a comma.
    let name = chain_path(n - 1).len() + 3;
    // A row: its path, dominator, sizes and keys (~8 names' worth), and its chain.
    let bound = |chain: usize| n * (chain + 8) * name;
    for format in ["json", "markdown", "html", "table", "dot"] {
        let mut args = vec!["why", input, "--no-evidence", "--all", "--format", format];
        let out = stdout_within(&args, bound(32))
            .unwrap_or_else(|b| panic!("{format}: more than {b} bytes for {n} paths"));
        eprintln!("{format}: {} bytes, {} a path", out.len(), out.len() / n);
        if format == "table" {
            args.push("--long");
            let long = stdout_within(&args, bound(32))
                .unwrap_or_else(|b| panic!("table --long: more than {b} bytes"));
            eprintln!("table --long: {} bytes", long.len());
        }
    }
    // The JSON rows (read into the contract's mirror): chains cut to the root and the
    // last 31 paths, the rest counted; or to N with --max-chain-length N.
    let report = |extra: &[&str], cap: usize| -> contract::WhyReport {
        let mut args = vec!["why", input, "--no-evidence", "--format", "json"];
        args.extend(extra);
        let out = stdout_within(&args, bound(cap)).unwrap_or_else(|b| panic!("{extra:?}: {b}"));
        serde_json::from_slice(&out).unwrap()
    };
    for (extra, cap) in [
        (&[][..], 32),
        (&["--max-chain-length", "2"][..], 2),
        (&["--max-chain-length", "48"][..], 48),
    ] {
        let paths = report(extra, cap).paths;
        assert_eq!(paths.len(), n);
        let mut longest = 0;
        for p in &paths {
            let me: usize = p.path.rsplit("-p").next().unwrap().parse().unwrap();
            let (chain, omitted) = (&p.chain, p.chain_omitted);
            assert_eq!(
                chain.len() + omitted,
                me + 1,
                "{extra:?}: the whole chain counted"
            );
            assert_eq!(chain.len(), (me + 1).min(cap), "{extra:?}: p{me}");
            assert_eq!(chain[0], chain_path(0), "the root leads");
            // The last paths are the chain's own: p<me - k> … p<me>.
            for (k, c) in chain[1..].iter().rev().enumerate() {
                assert_eq!(*c, chain_path(me - k), "{extra:?}: p{me}");
            }
            longest = longest.max(chain.len());
        }
        assert_eq!(longest, cap, "{extra:?}");
    }
    // Whole chains when asked for (the three deepest paths: largest NAR sizes).
    let top = report(
        &["--max-chain-length", "20000", "--top", "3", "--sort", "nar"],
        n,
    );
    assert_eq!(top.paths[0].chain.len(), n);
    assert_eq!(top.paths[0].chain_omitted, 0);
    // A cap under two is refused, naming the option.
    let (code, _, err) = run(&["why", input, "--max-chain-length", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("--max-chain-length"), "{err}");
}
