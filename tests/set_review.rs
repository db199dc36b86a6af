//! The package-set report as a reviewer reads it: roots added and removed are summed in
//! the headline and gated by `check` (`--max-new-root-size`, and in
//! `--max-total-growth`); roots and causes are ranked by the size of their change;
//! versions, attribute paths (nix-eval-jobs lines, a nixpkgs-review directory) and
//! download sizes (`FileSize`) stand beside the root names; `--changed-only`; and the
//! typography of every human format. Numbers are checked against plain walks of the
//! generated worlds (`set_world`), never against nixcut's own output.

mod common;
mod set_world;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::run;
use nixcut::render::format_delta;
use nixcut::store::format_size;
use serde_json::Value;
use set_world::{generate, Params, Side, World, P};

/// A directory of the test's own under the target's temporary directory.
fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("set-review-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The small change a reviewer saw: `a` 1.0 → 1.1 drops `liba` (its closure shrinks by
/// 1.1 MB), `d` grows by 300 kB, `b` is unchanged, `old-tool` is gone and `c` (2 MiB
/// over glibc) is new. The roots in both shrink; the graphs grow.
fn small() -> World {
    let mut n = 0;
    let mut p = |name: &str, size: u64, refs: Vec<usize>| {
        n += 1;
        P {
            hash: set_world::hash(99, n, 0),
            name: name.to_string(),
            size,
            refs,
        }
    };
    // Shared indices: 0 glibc, 1 liba, 2 a-1.0, 3 b, 4 d-1.0, 5 old-tool.
    let old = Side {
        paths: vec![
            p("glibc-2.39", 3_000_000, vec![]),
            p("liba-1.0", 1_000_000, vec![0]),
            p("a-1.0", 500_000, vec![1, 0]),
            p("b-2.0", 200_000, vec![0]),
            p("d-1.0", 100_000, vec![0]),
            p("old-tool-0.9", 700_000, vec![0]),
        ],
        roots: vec![2, 3, 4, 5],
    };
    let mut new = Side {
        paths: vec![old.paths[0].clone(), old.paths[3].clone()],
        roots: vec![],
    };
    new.paths.push(p("a-1.1", 400_000, vec![0])); // 2
    new.paths.push(p("d-1.1", 400_000, vec![0])); // 3
    new.paths.push(p("c-3.0", 2 << 20, vec![0])); // 4
    new.roots = vec![2, 1, 3, 4];
    World {
        old,
        new,
        huge_roots: 0,
    }
}

/// Write a world's sets, path-info JSON, a binary cache with `FileSize`, and its
/// nix-eval-jobs listings into a fresh directory.
fn write_all(w: &World, name: &str) -> PathBuf {
    let d = dir(name);
    set_world::write_files(&d, w);
    let cache = d.join("cache");
    set_world::write_cache(&w.old, &cache);
    set_world::write_cache(&w.new, &cache);
    std::fs::write(d.join("old.jobs"), set_world::eval_jobs(&w.old)).unwrap();
    std::fs::write(d.join("new.jobs"), set_world::eval_jobs(&w.new)).unwrap();
    d
}

fn small_dir() -> &'static PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| write_all(&small(), "small"))
}

/// 600 roots with every kind of planted change (`set_world`).
fn big() -> &'static (World, PathBuf) {
    static B: OnceLock<(World, PathBuf)> = OnceLock::new();
    B.get_or_init(|| {
        let w = generate(Params {
            roots: 600,
            libs: 300,
            layers: 6,
            seed: 11,
        });
        let d = write_all(&w, "big");
        (w, d)
    })
}

/// `nixcut ARGS` on the two sets of `d` with their path-info JSON as the graph.
fn diff(d: &Path, extra: &[&str]) -> (i32, String, String) {
    let (o, n, og, ng) = (
        s(&d.join("old.paths")),
        s(&d.join("new.paths")),
        s(&d.join("old.json")),
        s(&d.join("new.json")),
    );
    let mut args = vec!["diff", &o, &n, "--graph", &og, "--graph", &ng];
    args.extend_from_slice(extra);
    run(&args)
}

fn json_of((code, out, err): (i32, String, String)) -> Value {
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// Closure size of each root of a side, by a plain walk, keyed by the root's name.
fn root_sizes(side: &Side) -> Vec<(String, u64)> {
    side.roots
        .iter()
        .map(|&r| (side.paths[r].name.clone(), set_world::closure_size(side, r)))
        .collect()
}

/// The roots of `side` whose matching key the other side has no root with.
fn one_sided(side: &Side, other: &Side) -> Vec<usize> {
    let keys: std::collections::BTreeSet<String> = other
        .roots
        .iter()
        .map(|&r| set_world::key(&other.paths[r].name))
        .collect();
    side.roots
        .iter()
        .copied()
        .filter(|&r| !keys.contains(&set_world::key(&side.paths[r].name)))
        .collect()
}

#[test]
fn the_headline_reports_added_and_removed_roots_and_the_graphs() {
    let d = small_dir();
    let w = small();
    let (code, table, err) = diff(d, &[]);
    assert_eq!(code, 0, "{err}");
    let head = table.lines().next().unwrap();
    // The roots in both shrink ...
    let both_old: u64 = [2usize, 3, 4]
        .iter()
        .map(|&r| set_world::closure_size(&w.old, r))
        .sum();
    let both_new: u64 = [2usize, 1, 3]
        .iter()
        .map(|&r| set_world::closure_size(&w.new, r))
        .sum();
    assert!(both_new < both_old);
    // ... but a 2 MiB root arrived and one left: the headline says so, with sizes.
    let c = set_world::closure_size(&w.new, 4);
    let gone = set_world::closure_size(&w.old, 5);
    let text = table.replace("\n  ", " ");
    assert!(
        text.contains(&format!("1 root added ({})", format_delta(c as i64))),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "1 root removed ({})",
            format_delta(-(gone as i64))
        )),
        "{text}"
    );
    let union = |side: &Side| -> u64 {
        set_world::reachable(side)
            .iter()
            .map(|&v| side.paths[v].size)
            .sum()
    };
    assert!(
        text.contains(&format!(
            "the graphs {} → {} ({})",
            format_size(union(&w.old)),
            format_size(union(&w.new)),
            format_delta(union(&w.new) as i64 - union(&w.old) as i64)
        )),
        "{head}"
    );
    // JSON: the one-sided totals and every root summed, against plain walks.
    let r = json_of(diff(d, &["--format", "json"]));
    let t = &r["total"];
    assert_eq!(t["added"]["roots"], 1);
    assert_eq!(t["added"]["closure_size"].as_u64().unwrap(), c);
    assert_eq!(t["removed"]["roots"], 1);
    assert_eq!(t["removed"]["closure_size"].as_u64().unwrap(), gone);
    let all_old: u64 = root_sizes(&w.old).iter().map(|x| x.1).sum();
    let all_new: u64 = root_sizes(&w.new).iter().map(|x| x.1).sum();
    assert_eq!(t["all_roots"]["old"].as_u64().unwrap(), all_old);
    assert_eq!(t["all_roots"]["new"].as_u64().unwrap(), all_new);
    assert_eq!(
        t["all_roots"]["delta"].as_i64().unwrap(),
        all_new as i64 - all_old as i64
    );
    assert_eq!(t["old"].as_u64().unwrap(), both_old);
    assert_eq!(t["new"].as_u64().unwrap(), both_new);
}

#[test]
fn one_sided_totals_equal_plain_walks_on_a_large_change() {
    let (w, d) = big();
    let r = json_of(diff(d, &["--format", "json", "--top", "3"]));
    for (key, side, other) in [("added", &w.new, &w.old), ("removed", &w.old, &w.new)] {
        let roots = one_sided(side, other);
        assert!(roots.len() > 1, "{key}: {}", roots.len());
        let want: u64 = roots
            .iter()
            .map(|&v| set_world::closure_size(side, v))
            .sum();
        assert_eq!(
            r["total"][key]["roots"].as_u64().unwrap() as usize,
            roots.len()
        );
        // Every one-sided root is summed, not only the three `--top` lists.
        assert_eq!(
            r["total"][key]["closure_size"].as_u64().unwrap(),
            want,
            "{key}"
        );
    }
}

fn check(d: &Path, extra: &[&str]) -> (i32, String, String) {
    let (o, n, og, ng) = (
        s(&d.join("old.paths")),
        s(&d.join("new.paths")),
        s(&d.join("old.json")),
        s(&d.join("new.json")),
    );
    let mut args = vec![
        "check",
        &n,
        "--baseline",
        &o,
        "--graph",
        &og,
        "--graph",
        &ng,
    ];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn check_counts_added_roots_in_the_total_and_gates_each_new_root() {
    let d = small_dir();
    let w = small();
    // Before: only the roots in both were gated, and they shrank: this passed.
    let (code, out, err) = check(d, &["--max-total-growth", "1%"]);
    assert_eq!(
        code, 1,
        "the added root's closure counts as growth\n{out}{err}"
    );
    assert!(out.contains("FAIL"), "{out}");
    let text = out.replace("\n  ", " ");
    assert!(
        text.contains("--max-total-growth): exceeded")
            && text.contains(&format!(
                "{} added",
                format_delta(set_world::closure_size(&w.new, 4) as i64)
            )),
        "{text}"
    );
    // A new root over --max-new-root-size fails the check, named with its size.
    let c = set_world::closure_size(&w.new, 4);
    let limit = format!("{}", c - 1);
    let r = json_of(check(
        d,
        &["--max-new-root-size", &limit, "--format", "json"],
    ));
    let k = &r["check"];
    assert_eq!(k["pass"], false, "{k}");
    assert_eq!(k["new_roots_failed"], 1);
    assert_eq!(k["max_new_root_size"].as_u64().unwrap(), c - 1);
    assert_eq!(k["failed_new"][0]["name"], "c");
    assert_eq!(k["failed_new"][0]["closure_size"].as_u64().unwrap(), c);
    // Only --max-new-root-size: the per-root default (5%) is not applied, so `d`'s
    // growth (+300 kB on 3.1 MB) does not fail it.
    let (code, out, err) = check(d, &["--max-new-root-size", &c.to_string()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("PASS"), "{out}");
    // A limit that is not a size is an error naming the option.
    let (code, _, err) = check(d, &["--max-new-root-size", "lots"]);
    assert_eq!(code, 2);
    assert!(err.contains("--max-new-root-size"), "{err}");
}

#[test]
fn check_gates_every_new_root_of_a_large_change() {
    let (w, d) = big();
    let added = one_sided(&w.new, &w.old);
    let mut sizes: Vec<u64> = added
        .iter()
        .map(|&v| set_world::closure_size(&w.new, v))
        .collect();
    sizes.sort();
    let limit = sizes[sizes.len() / 2];
    let over = sizes.iter().filter(|&&x| x > limit).count();
    assert!(over > 0);
    let r = json_of(check(
        d,
        &[
            "--max-new-root-size",
            &limit.to_string(),
            "--top",
            "2",
            "--format",
            "json",
        ],
    ));
    assert_eq!(
        r["check"]["new_roots_failed"].as_u64().unwrap() as usize,
        over
    );
    let listed = r["check"]["failed_new"].as_array().unwrap();
    assert_eq!(listed.len(), over.min(2));
    assert_eq!(
        listed[0]["closure_size"].as_u64().unwrap(),
        *sizes.last().unwrap()
    );
}

#[test]
fn roots_and_causes_rank_by_the_size_of_the_change() {
    let d = small_dir();
    let r = json_of(diff(d, &["--format", "json"]));
    let names: Vec<&str> = r["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    // a (−1.1 MB) before d (+300 kB) before b (0): the size of the change, not its sign.
    assert_eq!(names, ["a", "d", "b", "c", "old-tool"], "{}", r["roots"]);
    let causes: Vec<(String, i64)> = r["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["bytes"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        causes,
        [
            ("liba".to_string(), -1_000_000),
            ("d".to_string(), 300_000),
            ("a".to_string(), -100_000),
        ]
    );
    // The large change: every list non-increasing in absolute value.
    let (_, big_dir) = big();
    let r = json_of(diff(big_dir, &["--format", "json"]));
    let matched: Vec<u64> = r["roots"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| !x["old"].is_null() && !x["new"].is_null())
        .map(|x| x["delta"].as_i64().unwrap().unsigned_abs())
        .collect();
    assert!(matched.windows(2).all(|x| x[0] >= x[1]));
    let causes: Vec<u64> = r["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["bytes"].as_i64().unwrap().unsigned_abs())
        .collect();
    assert!(causes.windows(2).all(|x| x[0] >= x[1]), "{causes:?}");
}

#[test]
fn version_changes_show_beside_roots_and_causes() {
    let d = small_dir();
    for format in ["table", "markdown", "html"] {
        let (code, out, err) = diff(d, &["--format", format]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("a 1.0 → 1.1"), "{format}: {out}");
        assert!(out.contains("d 1.0 → 1.1"), "{format}: {out}");
        assert!(!out.contains("b 2.0 → 2.0"), "{format}: {out}");
    }
    let r = json_of(diff(d, &["--format", "json"]));
    let a = &r["roots"][0];
    assert_eq!(
        (a["old"]["version"].as_str(), a["new"]["version"].as_str()),
        (Some("1.0"), Some("1.1"))
    );
    // The large change: every matched root whose version changed shows both versions.
    let (w, big_dir) = big();
    let (code, table, err) = diff(big_dir, &["--all"]);
    assert_eq!(code, 0, "{err}");
    let r = json_of(diff(big_dir, &["--format", "json"]));
    let bumped: Vec<String> = r["roots"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| !x["old"].is_null() && !x["new"].is_null())
        .filter(|x| x["old"]["version"] != x["new"]["version"])
        .map(|x| {
            format!(
                "{} {} → {}",
                x["name"].as_str().unwrap(),
                x["old"]["version"].as_str().unwrap(),
                x["new"]["version"].as_str().unwrap()
            )
        })
        .collect();
    // Every 101st root was bumped (the generator's own version bump).
    let _ = w;
    assert!(!bumped.is_empty());
    for b in &bumped {
        assert!(table.contains(b.as_str()), "{b} not in the table");
    }
}

#[test]
fn download_sizes_stand_beside_nar_sizes_where_the_cache_gives_them() {
    let d = small_dir();
    let w = small();
    let (o, n, cache) = (
        s(&d.join("old.paths")),
        s(&d.join("new.paths")),
        s(&d.join("cache")),
    );
    let r = json_of(run(&[
        "diff", &o, &n, "--graph", &cache, "--format", "json",
    ]));
    let download = |side: &Side, v: usize| -> u64 {
        let mut seen = vec![false; side.paths.len()];
        let mut stack = vec![v];
        let mut total = 0;
        while let Some(x) = stack.pop() {
            if !std::mem::replace(&mut seen[x], true) {
                total += set_world::file_size(&side.paths[x]);
                stack.extend(side.paths[x].refs.iter().copied());
            }
        }
        total
    };
    let root = |name: &str| {
        r["roots"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(
        root("a")["old"]["download_size"].as_u64().unwrap(),
        download(&w.old, 2)
    );
    assert_eq!(
        root("a")["new"]["download_size"].as_u64().unwrap(),
        download(&w.new, 2)
    );
    assert_eq!(
        root("c")["new"]["download_size"].as_u64().unwrap(),
        download(&w.new, 4)
    );
    assert_eq!(
        r["total"]["added"]["download_size"].as_u64().unwrap(),
        download(&w.new, 4)
    );
    let union: u64 = set_world::reachable(&w.new)
        .iter()
        .map(|&v| set_world::file_size(&w.new.paths[v]))
        .sum();
    assert_eq!(r["new"]["union_download_size"].as_u64().unwrap(), union);
    let (code, table, err) = run(&["diff", &o, &n, "--graph", &cache]);
    assert_eq!(code, 0, "{err}");
    assert!(table.contains("download"), "{table}");
    assert!(table.contains(&format_size(download(&w.new, 4))), "{table}");
    // path-info JSON without `downloadSize`: unknown, never 0, and no column.
    let r = json_of(diff(d, &["--format", "json"]));
    assert!(
        r["roots"][0]["new"]["download_size"].is_null(),
        "{}",
        r["roots"][0]
    );
    assert!(r["new"]["union_download_size"].is_null());
    assert!(r["total"]["download_new"].is_null());
    let (_, table, _) = diff(d, &[]);
    assert!(!table.contains("download"), "{table}");
}

#[test]
fn changed_only_lists_the_roots_that_changed() {
    let (w, d) = big();
    let all = json_of(diff(d, &["--format", "json"]));
    let r = json_of(diff(d, &["--format", "json", "--changed-only"]));
    assert_eq!(r["changed_only"], true);
    let roots = r["roots"].as_array().unwrap();
    let c = &r["counts"];
    let changed = c["grown"].as_u64().unwrap() + c["shrunk"].as_u64().unwrap();
    let one_sided = c["only_old"].as_u64().unwrap() + c["only_new"].as_u64().unwrap();
    assert_eq!(roots.len() as u64, changed + one_sided);
    assert!(c["unchanged"].as_u64().unwrap() > 0, "{c}");
    assert!(roots
        .iter()
        .all(|x| x["old"].is_null() || x["new"].is_null() || x["delta"] != 0));
    // The totals and causes are those of the whole diff.
    assert_eq!(r["total"], all["total"]);
    assert_eq!(r["causes"], all["causes"]);
    assert!(w.old.roots.len() as u64 > roots.len() as u64);
    let (code, table, err) = diff(d, &["--changed-only"]);
    assert_eq!(code, 0, "{err}");
    assert!(table.contains("--changed-only"), "{table}");
}

#[test]
fn eval_jobs_listings_name_every_root_by_its_attribute() {
    let d = small_dir();
    let (o, n, og, ng) = (
        s(&d.join("old.jobs")),
        s(&d.join("new.jobs")),
        s(&d.join("old.json")),
        s(&d.join("new.json")),
    );
    let base = ["diff", &o, &n, "--graph", &og, "--graph", &ng];
    let r = json_of(run(&[&base[..], &["--format", "json"]].concat()));
    for x in r["roots"].as_array().unwrap() {
        let side = if x["new"].is_null() {
            &x["old"]
        } else {
            &x["new"]
        };
        assert_eq!(
            side["attr"].as_str(),
            Some(format!("jobs.{}", x["name"].as_str().unwrap()).as_str()),
            "{x}"
        );
    }
    let libs = r["causes"].as_array().unwrap();
    assert!(libs.iter().all(|c| c["example_attr"]
        .as_str()
        .is_some_and(|a| a.starts_with("jobs."))));
    for format in ["table", "markdown", "html"] {
        let (code, out, err) = run(&[&base[..], &["--format", format]].concat());
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("a 1.0 → 1.1 (jobs.a)"), "{format}: {out}");
        assert!(out.contains("c 3.0 (jobs.c)"), "{format}: {out}");
    }
    // The same sets as lists of store paths give the same numbers.
    let plain = json_of(diff(d, &["--format", "json"]));
    assert_eq!(plain["total"], r["total"]);
    // A broken line is an error naming the file and the line.
    let bad = d.join("bad.jobs");
    let text = std::fs::read_to_string(d.join("new.jobs")).unwrap();
    std::fs::write(
        &bad,
        format!("{text}{{\"attr\":\"x\",\"outputs\":{{\"out\":\"/etc/passwd\"}}}}\n"),
    )
    .unwrap();
    let (code, _, err) = run(&["diff", &o, &s(&bad), "--graph", &og, "--graph", &ng]);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!("bad.jobs:{}:", text.lines().count() + 1)),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_nixpkgs_review_directory_is_a_set_named_by_its_results() {
    let d = small_dir();
    let w = small();
    let review = d.join("review");
    let _ = std::fs::remove_dir_all(&review);
    std::fs::create_dir_all(review.join("results")).unwrap();
    // nixpkgs-review 3's report: systems, and per system the attributes built.
    std::fs::write(
        review.join("report.json"),
        r#"{"systems": ["x86_64-linux"], "pr": 1, "checkout": "merge",
            "result": {"x86_64-linux": {"built": [{"name": "a", "aliases": []}],
            "broken": [], "failed": [], "non-existent": [], "blacklisted": [], "tests": []}}}"#,
    )
    .unwrap();
    for (attr, v) in [("a", 2usize), ("pkgs.b", 1), ("d", 3), ("c", 4)] {
        std::os::unix::fs::symlink(
            w.new.paths[v].full(),
            review.join("results").join(format!("{attr}-x86_64-linux")),
        )
        .unwrap();
    }
    let (o, og, ng) = (
        s(&d.join("old.paths")),
        s(&d.join("old.json")),
        s(&d.join("new.json")),
    );
    let base = ["diff", &o, &s(&review), "--graph", &og, "--graph", &ng];
    let r = json_of(run(&[&base[..], &["--format", "json"]].concat()));
    let attrs: Vec<(String, Option<String>)> = r["roots"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| !x["new"].is_null())
        .map(|x| {
            (
                x["name"].as_str().unwrap().to_string(),
                x["new"]["attr"].as_str().map(str::to_string),
            )
        })
        .collect();
    assert!(
        attrs.contains(&("b".into(), Some("pkgs.b".into()))),
        "{attrs:?}"
    );
    assert!(attrs.contains(&("c".into(), Some("c".into()))), "{attrs:?}");
    let (code, table, err) = run(&base);
    assert_eq!(code, 0, "{err}");
    assert!(table.contains("b 2.0 (pkgs.b)"), "{table}");
    // A result that is not a link to a store path is an error naming it.
    std::os::unix::fs::symlink("/etc/passwd", review.join("results/evil-x86_64-linux")).unwrap();
    let (code, _, err) = run(&base);
    assert_eq!(code, 2);
    assert!(err.contains("evil-x86_64-linux"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Every human format: one minus sign, no `+-` or `−-`, `1 root` and `1 path`.
#[test]
fn set_reports_use_one_minus_sign_and_singular_counts() {
    let d = small_dir();
    for format in ["table", "markdown", "html"] {
        for extra in [&[][..], &["--changed-only"][..]] {
            let (code, out, err) = diff(d, &[&["--format", format][..], extra].concat());
            assert_eq!(code, 0, "{err}");
            for bad in ["+-", "−-", "-−", "1 roots", "1 paths", "1 causes", "(s)"] {
                assert!(!out.contains(bad), "{format}: `{bad}` in\n{out}");
            }
            // A negative number is written with U+2212, never a hyphen.
            let hyphen = out
                .split(|c: char| c.is_whitespace() || c == '|' || c == '(' || c == '>')
                .any(|w| w.starts_with('-') && w[1..].starts_with(|c: char| c.is_ascii_digit()));
            assert!(!hyphen, "{format}: a hyphen-minus in\n{out}");
        }
    }
    let (code, out, err) = check(d, &["--max-total-growth", "1%", "--max-new-root-size", "1"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("1 of 1 root only in NEW brings more than"),
        "{out}"
    );
}

/// Hostile job listings and review directories: an error naming the file and the
/// position, never a panic, and no raw control character on any output.
#[test]
fn hostile_listings_are_errors_naming_the_position_or_escaped() {
    let d = small_dir();
    let w = small();
    let (o, og, ng) = (
        s(&d.join("old.paths")),
        s(&d.join("old.json")),
        s(&d.join("new.json")),
    );
    let h = dir("hostile");
    let good = set_world::eval_jobs(&w.new);
    let lines = good.lines().count();
    let cases: Vec<(&str, Vec<u8>, String)> = vec![
        (
            "cut",
            format!("{good}{{\"attr\":\"x\",\"outputs\":{{\"out\":\"/nix/st").into_bytes(),
            format!("cut.jobs:{}:", lines + 1),
        ),
        (
            "utf8",
            [good.as_bytes(), b"{\"attr\":\"\xff\",\"outputs\":{}}\n"].concat(),
            format!("utf8.jobs:{}:", lines + 1),
        ),
        (
            "noattr",
            format!("{good}{{\"outputs\":{{}}}}\n").into_bytes(),
            format!("noattr.jobs:{}:", lines + 1),
        ),
        (
            "dotdot",
            format!(
                "{good}{{\"attr\":\"x\",\"outputs\":{{\"out\":\"/nix/store/../etc/{}-x\"}}}}\n",
                "a".repeat(32)
            )
            .into_bytes(),
            format!("dotdot.jobs:{}:", lines + 1),
        ),
    ];
    for (name, bytes, want) in cases {
        let f = h.join(format!("{name}.jobs"));
        std::fs::write(&f, bytes).unwrap();
        let (code, out, err) = run(&["diff", &o, &s(&f), "--graph", &og, "--graph", &ng]);
        assert_eq!(code, 2, "{name}: {out}{err}");
        assert!(err.contains(&want), "{name}: want `{want}` in {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(
            !err.chars().any(|c| c.is_control() && c != '\n'),
            "{name}: {err:?}"
        );
    }
    // Control characters in an attribute: kept in JSON (escaped), replaced elsewhere.
    let evil = h.join("evil.jobs");
    std::fs::write(
        &evil,
        good.replacen(
            "\"attr\":\"jobs.a\"",
            "\"attr\":\"jobs.a\\u001b[31m\\nPASS\"",
            1,
        ),
    )
    .unwrap();
    for format in ["table", "markdown", "html", "json"] {
        let (code, out, err) = run(&[
            "diff",
            &o,
            &s(&evil),
            "--graph",
            &og,
            "--graph",
            &ng,
            "--format",
            format,
        ]);
        assert_eq!(code, 0, "{format}: {err}");
        assert!(!out.contains('\u{1b}'), "{format}: {out:?}");
        assert!(
            !out.lines().any(|l| l.starts_with("PASS")),
            "{format}: {out}"
        );
    }
    // A nixpkgs-review report that is not JSON: the report named, with its position.
    let review = h.join("review");
    std::fs::create_dir_all(review.join("results")).unwrap();
    std::fs::write(
        review.join("report.json"),
        "{\"result\": {\n  \"x86_64-linux\": [\n",
    )
    .unwrap();
    let (code, _, err) = run(&["diff", &o, &s(&review), "--graph", &og, "--graph", &ng]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("report.json:3:"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// The JSON of a set diff and of a failing set check hold exactly the contract's
/// fields (`tests/common/contract.rs`, written apart from the library).
#[test]
fn set_reports_keep_the_json_contract() {
    use common::contract::{pin, SetDiffReport};
    let d = small_dir();
    let (o, n, og, ng) = (
        s(&d.join("old.jobs")),
        s(&d.join("new.jobs")),
        s(&d.join("old.json")),
        s(&d.join("new.json")),
    );
    let (code, out, err) = run(&[
        "diff", &o, &n, "--graph", &og, "--graph", &ng, "--format", "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let r: SetDiffReport = pin("set diff", &out);
    assert!(r.check.is_none());
    assert!(r
        .roots
        .iter()
        .all(|x| x.new.as_ref().or(x.old.as_ref()).unwrap().attr.is_some()));
    let (code, out, err) = check(
        d,
        &[
            "--max-growth",
            "1%",
            "--max-total-growth",
            "1%",
            "--max-new-root-size",
            "1MiB",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let r: SetDiffReport = pin("set check", &out);
    let c = r.check.expect("check");
    assert!(!c.pass && c.total_failed && c.roots_failed == 1 && c.new_roots_failed == 1);
    let (_, big_dir) = big();
    let (code, out, err) = diff(
        big_dir,
        &["--format", "json", "--top", "5", "--changed-only"],
    );
    assert_eq!(code, 0, "{err}");
    let r: SetDiffReport = pin("set diff --top", &out);
    assert!(r.rest.is_some() && r.changed_only);
}

/// `nix path-info --json` of a binary cache store gives `downloadSize`: the same
/// download sizes as the cache's narinfos; a graph where one path lacks it leaves every
/// closure holding that path unknown (`null`), never summed without it.
#[test]
fn path_info_download_sizes_and_unknown_ones() {
    let w = small();
    let d = dir("download-json");
    let json = |side: &Side, skip: Option<&str>| -> String {
        let entries: Vec<String> = side
            .paths
            .iter()
            .map(|p| {
                let refs: Vec<String> = p
                    .refs
                    .iter()
                    .map(|&r| format!("\"{}\"", side.paths[r].full()))
                    .collect();
                let dl = if skip == Some(p.name.as_str()) {
                    String::new()
                } else {
                    format!(",\"downloadSize\":{}", set_world::file_size(p))
                };
                format!(
                    "{{\"path\":\"{}\",\"narSize\":{}{dl},\"references\":[{}]}}",
                    p.full(),
                    p.size,
                    refs.join(",")
                )
            })
            .collect();
        format!("[{}]\n", entries.join(","))
    };
    std::fs::write(d.join("old.paths"), set_world::store_paths(&w.old)).unwrap();
    std::fs::write(d.join("new.paths"), set_world::store_paths(&w.new)).unwrap();
    std::fs::write(d.join("old.json"), json(&w.old, None)).unwrap();
    std::fs::write(d.join("new.json"), json(&w.new, Some("d-1.1"))).unwrap();
    let r = json_of(diff(&d, &["--format", "json"]));
    let root = |name: &str| {
        r["roots"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name)
            .unwrap()
            .clone()
    };
    let glibc = set_world::file_size(&w.new.paths[0]);
    let c = set_world::file_size(&w.new.paths[4]) + glibc;
    assert_eq!(root("c")["new"]["download_size"].as_u64().unwrap(), c);
    assert!(root("d")["new"]["download_size"].is_null(), "{}", root("d"));
    assert!(root("d")["old"]["download_size"].is_u64());
    assert!(r["new"]["union_download_size"].is_null());
    assert!(r["old"]["union_download_size"].is_u64());
    assert!(r["total"]["download_new"].is_null());
    let (code, table, err) = diff(&d, &[]);
    assert_eq!(code, 0, "{err}");
    // The roots table comes after the causes: its row is the last one naming d.
    let row = table
        .lines()
        .rev()
        .find(|l| l.contains(" d 1.0 → 1.1"))
        .unwrap();
    // The last cell, the download size, is unknown: a dash, not a number.
    let last = row
        .trim_end()
        .trim_end_matches('│')
        .rsplit('┆')
        .next()
        .unwrap();
    assert_eq!(last.trim(), "—", "{row}");
}

/// Under GitHub Actions a new root over `--max-new-root-size` is one `::error`
/// annotation, like a failing root.
#[test]
fn a_new_root_over_its_limit_is_a_github_annotation() {
    let d = small_dir();
    let summary = dir("summary").join("summary.md");
    let (o, n, og, ng) = (
        s(&d.join("old.paths")),
        s(&d.join("new.paths")),
        s(&d.join("old.json")),
        s(&d.join("new.json")),
    );
    let out = common::nixcut()
        .args([
            "check",
            &n,
            "--baseline",
            &o,
            "--graph",
            &og,
            "--graph",
            &ng,
            "--max-new-root-size",
            "1MiB",
        ])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    let (code, stdout, stderr) = common::decode(out);
    assert_eq!(code, 1, "{stderr}");
    let errors: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("::error"))
        .collect();
    assert_eq!(errors.len(), 1, "{stdout}");
    assert!(
        errors[0].contains("--max-new-root-size") && errors[0].contains("c "),
        "{}",
        errors[0]
    );
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(
        md.contains("1 of 1 root only in NEW brings more than 1.0 MiB"),
        "{md}"
    );
}
