//! `nixcut diff OLD NEW` and `check` of two package sets (files of store paths, one a
//! line), on a generated pair with planted changes (`set_world`): the first cause is
//! the planted dependency with its exact roots and bytes, every root's closure sizes
//! and the whole cause table equal a plain walk per root done here, the mass rebuild is
//! summarised, the Markdown fits a GitHub comment, and the inputs may be compressed,
//! read from standard input or walked in an HTTP binary cache.

mod common;
mod set_world;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

use common::{nixcut, run};
use serde_json::Value;
use set_world::{generate, Params, Side, World, HUGE};

struct Files {
    dir: PathBuf,
    world: World,
}

impl Files {
    fn p(&self, name: &str) -> String {
        self.dir.join(name).to_string_lossy().into_owned()
    }
}

/// 2,500 roots (three blocks of the bitset pass), 1,500 libraries in 12 layers.
fn files() -> &'static Files {
    static F: OnceLock<Files> = OnceLock::new();
    F.get_or_init(|| {
        let world = generate(Params {
            roots: 2500,
            libs: 1500,
            layers: 12,
            seed: 7,
        });
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("set-diff-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        set_world::write_files(&dir, &world);
        Files { dir, world }
    })
}

fn diff_json(extra: &[&str]) -> Value {
    let f = files();
    let (old, new) = (f.p("old.paths"), f.p("new.paths"));
    let (og, ng) = (f.p("old.json"), f.p("new.json"));
    let mut args = vec![
        "diff", &old, &new, "--graph", &og, "--graph", &ng, "--format", "json",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// Pairs of (old root, new root) as the contract says: same package name and output;
/// among several, the same full name first, then in name order.
fn pairs(w: &World) -> (Vec<(usize, usize)>, usize, usize) {
    let mut by_key: BTreeMap<String, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
    for &r in &w.old.roots {
        by_key
            .entry(set_world::key(&w.old.paths[r].name))
            .or_default()
            .0
            .push(r);
    }
    for &r in &w.new.roots {
        by_key
            .entry(set_world::key(&w.new.paths[r].name))
            .or_default()
            .1
            .push(r);
    }
    let mut out = Vec::new();
    let (mut only_old, mut only_new) = (0, 0);
    for (_, (os, ns)) in by_key {
        let mut os: Vec<usize> = os;
        let mut left_new = Vec::new();
        for n in ns {
            match os
                .iter()
                .position(|&o| w.old.paths[o].name == w.new.paths[n].name)
            {
                Some(k) => out.push((os.remove(k), n)),
                None => left_new.push(n),
            }
        }
        os.sort_by_key(|&o| w.old.paths[o].name.clone());
        left_new.sort_by_key(|&n| w.new.paths[n].name.clone());
        let both = os.len().min(left_new.len());
        out.extend(os.iter().copied().zip(left_new.iter().copied()).take(both));
        only_old += os.len() - both;
        only_new += left_new.len() - both;
    }
    (out, only_old, only_new)
}

/// (name, change) -> (roots, bytes), by one plain walk of each root on each side.
fn brute_causes(w: &World) -> BTreeMap<(String, String), (u64, i64)> {
    let mut acc: BTreeMap<(String, String), (u64, i64)> = BTreeMap::new();
    for (o, n) in pairs(w).0 {
        let (bo, bn) = (
            set_world::package_bytes(&w.old, o),
            set_world::package_bytes(&w.new, n),
        );
        for (p, &nb) in &bn {
            let (change, d) = match bo.get(p) {
                None => ("added", nb as i64),
                Some(&ob) if nb > ob => ("grown", nb as i64 - ob as i64),
                Some(&ob) if nb < ob => ("shrunk", nb as i64 - ob as i64),
                Some(_) => continue,
            };
            let e = acc.entry((p.clone(), change.to_string())).or_default();
            e.0 += 1;
            e.1 += d;
        }
        for (p, &ob) in &bo {
            if !bn.contains_key(p) {
                let e = acc.entry((p.clone(), "removed".to_string())).or_default();
                e.0 += 1;
                e.1 -= ob as i64;
            }
        }
    }
    acc.retain(|_, v| v.1 != 0);
    acc
}

/// A root's old and new closure size and its delta, as reported.
type Sizes = (Option<u64>, Option<u64>, i64);

fn full(s: &Side, v: usize) -> String {
    s.paths[v].full()
}

#[test]
fn the_planted_dependency_is_the_first_cause_with_exact_roots_and_bytes() {
    let f = files();
    let r = diff_json(&[]);
    let first = &r["causes"][0];
    assert_eq!(first["name"], "libhuge", "{first}");
    assert_eq!(first["change"], "added");
    assert_eq!(first["roots"].as_u64().unwrap(), f.world.huge_roots as u64);
    assert_eq!(
        first["bytes"].as_i64().unwrap(),
        f.world.huge_roots as i64 * HUGE as i64
    );
    // The example chain: its root, libfoo, libhuge.
    let chain: Vec<&str> = first["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(chain.len(), 3, "{chain:?}");
    assert!(
        chain[1].ends_with("-libfoo-1.2") && chain[2].ends_with("-libhuge-1.0"),
        "{chain:?}"
    );
    let root = first["example_root"].as_str().unwrap();
    assert!(chain[0].contains(&format!("-{root}-")), "{root} {chain:?}");
}

#[test]
fn every_root_and_every_cause_equals_a_plain_walk() {
    let f = files();
    let w = &f.world;
    let r = diff_json(&[]);
    let (pairs, only_old, only_new) = pairs(w);
    assert_eq!(r["counts"]["both"].as_u64().unwrap() as usize, pairs.len());
    assert_eq!(r["counts"]["only_old"].as_u64().unwrap() as usize, only_old);
    assert_eq!(r["counts"]["only_new"].as_u64().unwrap() as usize, only_new);
    assert!(only_old > 5 && only_new > 5, "{only_old} {only_new}");
    // Every root, matched or not, by its store path.
    let mut reported: BTreeMap<(Option<String>, Option<String>), Sizes> = BTreeMap::new();
    let side = |v: &Value| {
        (!v.is_null()).then(|| {
            (
                v["path"].as_str().unwrap().to_string(),
                v["closure_size"].as_u64().unwrap(),
            )
        })
    };
    for x in r["roots"].as_array().unwrap() {
        let (o, n) = (side(&x["old"]), side(&x["new"]));
        reported.insert(
            (
                o.as_ref().map(|x| x.0.clone()),
                n.as_ref().map(|x| x.0.clone()),
            ),
            (o.map(|x| x.1), n.map(|x| x.1), x["delta"].as_i64().unwrap()),
        );
    }
    assert_eq!(reported.len(), pairs.len() + only_old + only_new);
    let mut total = 0i64;
    for &(o, n) in &pairs {
        let (so, sn) = (
            set_world::closure_size(&w.old, o),
            set_world::closure_size(&w.new, n),
        );
        let got = reported
            .get(&(Some(full(&w.old, o)), Some(full(&w.new, n))))
            .unwrap_or_else(|| {
                panic!(
                    "pair {} / {} not reported",
                    full(&w.old, o),
                    full(&w.new, n)
                )
            });
        assert_eq!(
            *got,
            (Some(so), Some(sn), sn as i64 - so as i64),
            "{}",
            full(&w.new, n)
        );
        total += sn as i64 - so as i64;
    }
    assert_eq!(r["total"]["delta"].as_i64().unwrap(), total);
    // The cause table, all of it.
    let want = brute_causes(w);
    let mut got: BTreeMap<(String, String), (u64, i64)> = BTreeMap::new();
    for c in r["causes"].as_array().unwrap() {
        got.insert(
            (
                c["name"].as_str().unwrap().to_string(),
                c["change"].as_str().unwrap().to_string(),
            ),
            (c["roots"].as_u64().unwrap(), c["bytes"].as_i64().unwrap()),
        );
    }
    assert_eq!(got, want);
    let sum: i64 = got.values().map(|v| v.1).sum();
    assert_eq!(sum, total, "the causes add up to the total change");
    // Ranked by the size of the change, whatever its sign.
    let bytes: Vec<i64> = r["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["bytes"].as_i64().unwrap())
        .collect();
    assert!(
        bytes
            .windows(2)
            .all(|x| x[0].unsigned_abs() >= x[1].unsigned_abs()),
        "{bytes:?}"
    );
}

#[test]
fn the_mass_rebuild_is_summarised_not_listed() {
    let r = diff_json(&[]);
    let rebuilt = r["rebuild"]["paths_rebuilt_same_size"].as_u64().unwrap();
    // Most libraries reach openssl, so most of the graph was rebuilt.
    assert!(rebuilt > 1000, "{}", r["rebuild"]);
    // ... and every root above openssl grew by its 4 KiB.
    assert!(
        r["counts"]["grown"].as_u64().unwrap() > 1000,
        "{}",
        r["counts"]
    );
    let causes = r["causes"].as_array().unwrap();
    // openssl is one cause (grown: 4 KiB in each root reaching it), no rebuilt library is.
    assert!(causes
        .iter()
        .all(|c| !c["name"].as_str().unwrap().starts_with("libmid")));
    assert!(causes.len() < 100, "{} causes", causes.len());
    let openssl = causes
        .iter()
        .find(|c| c["name"] == "openssl")
        .expect("openssl is a cause");
    assert_eq!(openssl["change"], "grown");
    let md = markdown(&[]);
    assert!(md.contains("rebuilt: "), "{md}");
    assert!(!md.contains("libmid"), "rebuilt libraries are not listed");
}

fn markdown(extra: &[&str]) -> String {
    let f = files();
    let (old, new) = (f.p("old.paths"), f.p("new.paths"));
    let (og, ng) = (f.p("old.json"), f.p("new.json"));
    let mut args = vec![
        "diff", &old, &new, "--graph", &og, "--graph", &ng, "--format", "markdown",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    out
}

#[test]
fn markdown_fits_a_github_comment() {
    let md = markdown(&[]);
    assert!(md.len() <= 65_536, "{} bytes", md.len());
    assert!(md.chars().count() <= 65_536);
    assert!(md.contains("libhuge"), "{md}");
    assert!(md.contains("<details><summary>"), "the rest is collapsed");
    assert!(md.contains("more roots"), "{md}");
    // Even with every row asked for, the comment stays within the limit.
    let all = markdown(&["--all"]);
    assert!(all.len() <= 65_536, "{} bytes", all.len());
    assert!(
        all.contains("see `--format json`"),
        "the rows that did not fit are counted"
    );
}

#[test]
fn table_and_html_show_the_same_first_cause() {
    let f = files();
    let (old, new) = (f.p("old.paths"), f.p("new.paths"));
    let (og, ng) = (f.p("old.json"), f.p("new.json"));
    let base = ["diff", &old, &new, "--graph", &og, "--graph", &ng];
    let (code, table, err) = run(&[&base[..], &["--format", "table"]].concat());
    assert_eq!(code, 0, "{err}");
    let line = table
        .lines()
        .find(|l| l.contains("libhuge"))
        .expect("libhuge row");
    assert!(
        line.contains("added") && line.contains(&f.world.huge_roots.to_string()),
        "{line}"
    );
    let (code, html, err) = run(&[&base[..], &["--format", "html"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("libhuge"));
    let (code, _, err) = run(&[&base[..], &["--format", "dot"]].concat());
    assert_eq!(code, 2);
    assert!(err.contains("--format dot"), "{err}");
}

#[test]
fn check_fails_on_the_roots_that_grew_and_names_their_causes() {
    let f = files();
    let w = &f.world;
    let (old, new) = (f.p("old.paths"), f.p("new.paths"));
    let (og, ng) = (f.p("old.json"), f.p("new.json"));
    let base = [
        "check",
        &new,
        "--baseline",
        &old,
        "--graph",
        &og,
        "--graph",
        &ng,
    ];
    let (code, out, err) = run(&[&base[..], &["--max-growth", "5%", "--format", "json"]].concat());
    assert_eq!(code, 1, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let want = pairs(w)
        .0
        .iter()
        .filter(|&&(o, n)| {
            let (so, sn) = (
                set_world::closure_size(&w.old, o),
                set_world::closure_size(&w.new, n),
            );
            sn as f64 > so as f64 * 1.05
        })
        .count();
    assert!(want > 0);
    assert_eq!(r["check"]["roots_failed"].as_u64().unwrap() as usize, want);
    assert_eq!(r["check"]["pass"], false);
    let failed = r["check"]["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 10, "--top defaults to 10");
    assert_eq!(failed[0]["causes"][0]["name"], "libhuge", "{}", failed[0]);
    // Generous limits pass.
    let (code, _, err) = run(&[
        &base[..],
        &["--max-growth", "100000%", "--max-total-growth", "1000%"],
    ]
    .concat());
    assert_eq!(code, 0, "{err}");
    // The total alone: it grew by the planted bytes and more.
    let pct = r["total"]["percent"].as_f64().unwrap();
    assert!(pct > 1.0, "{pct}");
    let below = format!("{}%", pct / 2.0);
    let (code, out, err) = run(&[
        &base[..],
        &["--max-total-growth", &below, "--format", "json"],
    ]
    .concat());
    assert_eq!(code, 1, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["check"]["total_failed"], true);
    assert!(
        r["check"]["max_growth"].is_null(),
        "only the total was asked for"
    );
    let (code, md, _) = run(&[&base[..], &["--max-growth", "5%", "--format", "markdown"]].concat());
    assert_eq!(code, 1);
    assert!(md.contains("**FAIL**") && md.len() <= 65_536, "{md}");
}

fn compress_xz(b: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    liblzma::read::XzEncoder::new(b, 6)
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[test]
fn compressed_sets_and_standard_input_give_the_same_report() {
    let f = files();
    let plain = diff_json(&[]);
    let xz = f.dir.join("old.paths.xz");
    let zst = f.dir.join("new.paths.zst");
    std::fs::write(
        &xz,
        compress_xz(set_world::store_paths(&f.world.old).as_bytes()),
    )
    .unwrap();
    std::fs::write(
        &zst,
        zstd::encode_all(set_world::store_paths(&f.world.new).as_bytes(), 3).unwrap(),
    )
    .unwrap();
    let (og, ng) = (f.p("old.json"), f.p("new.json"));
    let mut child = nixcut()
        .args([
            "diff",
            xz.to_str().unwrap(),
            "-",
            "--graph",
            &og,
            "--graph",
            &ng,
            "--format",
            "json",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = std::fs::read(&zst).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&bytes));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["roots"], plain["roots"]);
    assert_eq!(r["causes"], plain["causes"]);
    assert_eq!(r["new"]["origin"], "standard input");
}

#[test]
fn a_binary_cache_over_http_is_walked_once_for_all_roots() {
    // A smaller pair, served by a real HTTP server from one directory of narinfos.
    let world = generate(Params {
        roots: 400,
        libs: 300,
        layers: 6,
        seed: 11,
    });
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("set-http-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = dir.join("cache");
    set_world::write_cache(&world.old, &cache);
    set_world::write_cache(&world.new, &cache);
    for (name, side) in [("old", &world.old), ("new", &world.new)] {
        std::fs::write(
            dir.join(format!("{name}.paths")),
            set_world::store_paths(side),
        )
        .unwrap();
        std::fs::write(
            dir.join(format!("{name}.json")),
            set_world::path_info_json(side),
        )
        .unwrap();
    }
    let server = common::serve::Server::start(&cache);
    let p = |n: &str| dir.join(n).to_string_lossy().into_owned();
    let xdg = dir.join("xdg");
    let via_cache = || -> Value {
        let out = nixcut()
            .env("XDG_CACHE_HOME", &xdg)
            .args([
                "diff",
                &p("old.paths"),
                &p("new.paths"),
                "--cache",
                &server.url,
            ])
            .args(["--format", "json"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let via_http = via_cache();
    // Every narinfo of the two unions fetched exactly once.
    let log = server.log();
    let narinfos: Vec<&String> = log.iter().filter(|l| l.ends_with(".narinfo")).collect();
    let unique: std::collections::BTreeSet<&String> = narinfos.iter().copied().collect();
    assert_eq!(narinfos.len(), unique.len(), "a narinfo was fetched twice");
    let mut hashes: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for s in [&world.old, &world.new] {
        hashes.extend(
            set_world::reachable(s)
                .into_iter()
                .map(|v| s.paths[v].hash.as_str()),
        );
    }
    assert_eq!(unique.len(), hashes.len());
    // The same report as from the path-info JSON.
    let (code, out, err) = run(&[
        "diff",
        &p("old.paths"),
        &p("new.paths"),
        "--graph",
        &p("old.json"),
        "--graph",
        &p("new.json"),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let via_json: Value = serde_json::from_str(&out).unwrap();
    // The narinfos give `FileSize`, the path-info JSON no `downloadSize`: the same
    // roots, with download sizes from the cache only.
    let without_downloads = |r: &Value| -> Value {
        let mut roots = r["roots"].clone();
        for x in roots.as_array_mut().unwrap() {
            for side in ["old", "new"] {
                if let Some(o) = x[side].as_object_mut() {
                    o.remove("download_size");
                }
            }
        }
        roots
    };
    assert_eq!(without_downloads(&via_http), without_downloads(&via_json));
    assert!(via_http["roots"][0]["new"]["download_size"].is_u64());
    assert!(via_json["roots"][0]["new"]["download_size"].is_null());
    assert_eq!(via_http["causes"], via_json["causes"]);
    // A second run reads the narinfo cache: no narinfo is fetched again, and the
    // download sizes come back from its closure records.
    server.reset();
    let warm = via_cache();
    assert_eq!(server.count(".narinfo"), 0, "{:?}", server.log());
    assert_eq!(warm["causes"], via_http["causes"]);
    assert_eq!(warm["roots"], via_http["roots"]);
}

#[test]
fn bad_sets_are_errors_naming_file_and_line() {
    let f = files();
    let dir = &f.dir;
    let good = set_world::store_paths(&f.world.new);
    let mut lines: Vec<&str> = good.lines().take(5).collect();
    lines.insert(3, "/nix/store/not-a-store-path");
    let bad = dir.join("bad.paths");
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let (og, ng) = (f.p("old.json"), f.p("new.json"));
    let (code, _, err) = run(&[
        "diff",
        &f.p("old.paths"),
        bad.to_str().unwrap(),
        "--graph",
        &og,
        "--graph",
        &ng,
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.paths:4: expected a store path"), "{err}");
    // A root the graph does not describe.
    let (code, _, err) = run(&["diff", &f.p("old.paths"), &f.p("new.paths"), "--graph", &og]);
    assert_eq!(code, 2);
    assert!(
        err.contains("new.paths") && err.contains("line 1:") && err.contains("not described"),
        "{err}"
    );
    // A set against a single closure.
    let (code, _, err) = run(&["diff", &f.p("old.paths"), &og]);
    assert_eq!(code, 2);
    assert!(
        err.contains("is a package set") && err.contains("single closure"),
        "{err}"
    );
}

// ---- issue 31, item 3: sums over roots and causes never wrap or saturate ----

/// A store path with a readable hash (`c` repeated) and `name`.
fn huge_sp(c: char, name: &str) -> String {
    format!("/nix/store/{}-{name}", c.to_string().repeat(32))
}

/// Writes `old.paths`, `new.paths` (the roots) and `graph.json` (`nix path-info
/// --json` of both sides: `(path, narSize, references)`) into a new directory.
fn huge_sets(
    old_roots: &[&str],
    new_roots: &[&str],
    entries: &[(&str, u64, &[&str])],
) -> (tempfile::TempDir, [String; 3]) {
    let dir = tempfile::tempdir().unwrap();
    let mut obj = serde_json::Map::new();
    for (path, size, refs) in entries {
        obj.insert(
            path.to_string(),
            serde_json::json!({ "narSize": size, "references": refs }),
        );
    }
    let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    std::fs::write(p("old.paths"), old_roots.join("\n") + "\n").unwrap();
    std::fs::write(p("new.paths"), new_roots.join("\n") + "\n").unwrap();
    std::fs::write(p("graph.json"), serde_json::Value::Object(obj).to_string()).unwrap();
    let files = [p("old.paths"), p("new.paths"), p("graph.json")];
    (dir, files)
}

/// Every command and format on the sets is exit 2 with an error naming both sets, what
/// was summed and the range it left; nothing on standard output.
fn assert_refused(files: &[String; 3], what: &str) {
    let [old, new, graph] = files;
    for format in ["table", "json", "markdown", "html"] {
        for args in [
            vec!["diff", old, new, "--graph", graph],
            vec![
                "check",
                new,
                "--baseline",
                old,
                "--graph",
                graph,
                "--max-total-growth",
                "1%",
            ],
            vec![
                "check",
                new,
                "--baseline",
                old,
                "--graph",
                graph,
                "--max-growth",
                "1%",
            ],
        ] {
            if args[0] == "check" && format == "html" {
                continue; // check writes no HTML
            }
            let mut args = args.clone();
            args.extend(["--format", format]);
            let (code, out, err) = run(&args);
            assert_eq!(code, 2, "{args:?}: {out}{err}");
            assert!(!out.contains("PASS"), "{args:?}: {out}");
            assert!(
                err.contains("old.paths") && err.contains("new.paths") && err.contains(what),
                "{args:?}: {err}"
            );
            assert!(err.contains("2^6"), "{args:?}: {err}");
        }
    }
}

/// One path of 2^62 + 5 bytes referenced by three new roots: the new closures sum to
/// about 13.8 EB (within 2^64 - 1) but grow by more than 2^63 - 1 bytes; `check
/// --max-total-growth 1%` printed PASS with a wrapped negative total, and the cause's
/// bytes stuck at 2^63 - 1.
#[test]
fn a_package_set_total_growth_beyond_i64_is_an_error_not_a_wrapped_pass() {
    let huge = huge_sp('h', "libhuge-1.0");
    let (a, b, c) = (
        huge_sp('a', "a-1.0"),
        huge_sp('b', "b-1.0"),
        huge_sp('c', "c-1.0"),
    );
    let (a2, b2, c2) = (
        huge_sp('d', "a-1.1"),
        huge_sp('f', "b-1.1"),
        huge_sp('g', "c-1.1"),
    );
    let r: &[&str] = &[huge.as_str()];
    let (_dir, files) = huge_sets(
        &[&a, &b, &c],
        &[&a2, &b2, &c2],
        &[
            (&a, 10, &[]),
            (&b, 10, &[]),
            (&c, 10, &[]),
            (&a2, 10, r),
            (&b2, 10, r),
            (&c2, 10, r),
            (&huge, (1 << 62) + 5, &[]),
        ],
    );
    assert_refused(&files, "the changes of the closure sizes of the 3 roots");
}

/// Five roots reaching the 2^62 + 5-byte path: their closure sizes sum past 2^64 - 1.
#[test]
fn a_package_set_total_beyond_u64_is_an_error_not_a_saturated_size() {
    let huge = huge_sp('h', "libhuge-1.0");
    let numbered = |c: char, i: usize, name: &str| format!("/nix/store/{c}{i:0>31}-{name}");
    let old: Vec<String> = (0..5)
        .map(|i| numbered('a', i, &format!("r{i}-1.0")))
        .collect();
    let new: Vec<String> = (0..5)
        .map(|i| numbered('b', i, &format!("r{i}-1.1")))
        .collect();
    let r: &[&str] = &[huge.as_str()];
    let mut entries: Vec<(&str, u64, &[&str])> = vec![(huge.as_str(), (1 << 62) + 5, &[])];
    entries.extend(old.iter().map(|p| (p.as_str(), 10, r)));
    entries.extend(new.iter().map(|p| (p.as_str(), 10, r)));
    let o: Vec<&str> = old.iter().map(String::as_str).collect();
    let n: Vec<&str> = new.iter().map(String::as_str).collect();
    let (_dir, files) = huge_sets(&o, &n, &entries);
    assert_refused(&files, "the closure sizes of the 5 roots in OLD");
}

/// Five roots move from one 2^61-byte library to another of 2^61 + 5 bytes: the total
/// grows by 25 bytes, but the `added` and `removed` causes each sum past the i64 range
/// (the cause's bytes stuck at ±(2^63 - 1), so the causes no longer added up).
#[test]
fn a_package_set_cause_beyond_i64_is_an_error_not_a_saturated_cause() {
    let (h1, h2) = (huge_sp('h', "libold-1.0"), huge_sp('i', "libnew-1.0"));
    let numbered = |c: char, i: usize, name: &str| format!("/nix/store/{c}{i:0>31}-{name}");
    let old: Vec<String> = (0..5)
        .map(|i| numbered('a', i, &format!("r{i}-1.0")))
        .collect();
    let new: Vec<String> = (0..5)
        .map(|i| numbered('b', i, &format!("r{i}-1.1")))
        .collect();
    let (r1, r2): (&[&str], &[&str]) = (&[h1.as_str()], &[h2.as_str()]);
    let mut entries: Vec<(&str, u64, &[&str])> = vec![
        (h1.as_str(), 1 << 61, &[]),
        (h2.as_str(), (1 << 61) + 5, &[]),
    ];
    entries.extend(old.iter().map(|p| (p.as_str(), 10, r1)));
    entries.extend(new.iter().map(|p| (p.as_str(), 10, r2)));
    let o: Vec<&str> = old.iter().map(String::as_str).collect();
    let n: Vec<&str> = new.iter().map(String::as_str).collect();
    let (_dir, files) = huge_sets(&o, &n, &entries);
    assert_refused(&files, "the bytes of the cause `lib");
}
