//! `nixcut store` against Nix's own garbage collector, on a real store.
//!
//! The ROCm and CUDA test worlds (built with a tag of their own, so no other test runs
//! their programs while Nix looks for runtime roots) are copied with `nix copy` into a
//! chroot store in a temporary directory, together with the derivations of the ROCm
//! world (so `keep-derivations` has something to keep). GC roots of every kind Nix
//! reads are made there: links in `gcroots/` and below it, a link into a file inside a
//! store path, two links to one path, profile generations. Then, root by root, the
//! link is moved away and `nix-store --gc --print-dead` says what would be deleted:
//! what it adds to the dead set with every root in place is what that root alone
//! keeps, and must equal `nixcut store`'s `alone`. Closure sizes must equal
//! `nix path-info -S`, and the unreachable paths Nix's dead set (its valid paths).
//! The same store read from `nix path-info --json --all` with the roots of
//! `nix-store --gc --print-roots` gives the same figures.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::symlink;
use std::path::Path;

use common::{build_world, nix_cmd, nix_or_skip, nixcut};

/// Run a Nix command against the chroot store `s`; stdout.
fn nix_in(s: &Path, program: &str, args: &[&str]) -> String {
    let url = format!("local?root={}", s.display());
    let out = nix_cmd(program)
        .arg("--store")
        .arg(&url)
        .args(args)
        .output()
        .expect("run nix");
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What `nix-store --gc --print-dead` lists, valid paths only (it also lists leftovers
/// in the store directory that are not valid paths).
fn dead(s: &Path, valid: &BTreeSet<String>, extra: &[&str]) -> BTreeSet<String> {
    let mut args = vec!["--gc", "--print-dead"];
    args.extend_from_slice(extra);
    nix_in(s, "nix-store", &args)
        .lines()
        .filter(|l| valid.contains(*l))
        .map(String::from)
        .collect()
}

struct Store {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    sizes: BTreeMap<String, u64>,
    links: Vec<std::path::PathBuf>,
}

fn make_store() -> Store {
    let rocm = build_world("rocm", &["--argstr", "tag", "store-gc"]);
    let cuda = build_world("cuda", &["--argstr", "tag", "store-gc"]);
    let dir = tempfile::tempdir().expect("tempdir");
    let s = dir.path().join("chroot");
    let drv = common::nix_stdout("nix-store", &["--query", "--deriver", &rocm.root]);
    let paths: Vec<&str> = rocm
        .attrs
        .values()
        .chain(cuda.attrs.values())
        .map(String::as_str)
        .collect();
    let url = format!("local?root={}", s.display());
    // The outputs, then the derivation itself with its inputs (`--derivation`: a
    // `.drv` given alone stands for its outputs).
    for (flags, paths) in [(&[][..], paths), (&["--derivation"][..], vec![drv.trim()])] {
        let out = nix_cmd("nix")
            .args(["copy", "--no-check-sigs", "--to", &url])
            .args(flags)
            .args(&paths)
            .output()
            .expect("nix copy");
        assert!(
            out.status.success(),
            "nix copy: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let info: serde_json::Value =
        serde_json::from_str(&nix_in(&s, "nix", &["path-info", "--json", "--all"])).unwrap();
    let sizes: BTreeMap<String, u64> = info
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["path"].as_str().unwrap().to_string(),
                p["narSize"].as_u64().unwrap(),
            )
        })
        .collect();
    let state = s.join("nix/var/nix");
    let gc = state.join("gcroots");
    std::fs::create_dir_all(gc.join("per-user/root")).unwrap();
    std::fs::create_dir_all(state.join("profiles/per-user/root")).unwrap();
    let lib = rocm.path("rocblas");
    let links = vec![
        (gc.join("app-rocm"), rocm.root.clone()),
        (gc.join("per-user/root/rocblas-lib"), format!("{lib}/lib")),
        (
            gc.join("per-user/root/hipblas-a"),
            rocm.path("hipblas").to_string(),
        ),
        (
            gc.join("per-user/root/hipblas-b"),
            rocm.path("hipblas").to_string(),
        ),
        (
            state.join("profiles/per-user/root/profile-1-link"),
            cuda.root.clone(),
        ),
        (
            state.join("profiles/per-user/root/profile-2-link"),
            cuda.path("libcublas").to_string(),
        ),
    ];
    for (link, target) in &links {
        symlink(target, link).unwrap();
    }
    Store {
        _dir: dir,
        root: s,
        sizes,
        links: links.into_iter().map(|(l, _)| l).collect(),
    }
}

fn store_json(args: &[&str]) -> serde_json::Value {
    let out = nixcut()
        .arg("store")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("run nixcut");
    assert!(
        out.status.success(),
        "nixcut store {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn alone_closure_and_unreachable_equal_what_nix_itself_says() {
    if !nix_or_skip("store::alone_closure_and_unreachable_equal_what_nix_itself_says") {
        return;
    }
    let st = make_store();
    let s = st.root.as_path();
    let valid: BTreeSet<String> = st.sizes.keys().cloned().collect();
    let report = store_json(&["--store-root", s.to_str().unwrap()]);
    let typed: common::contract::StoreReport = common::contract::pin("store", &report.to_string());
    assert_eq!(typed.schema_version, 1);
    assert_eq!(typed.rest, None, "JSON lists every root");
    assert_eq!(
        typed.live.bytes,
        typed.shared.bytes + typed.roots.iter().map(|r| r.alone).sum::<u64>()
    );
    assert_eq!(typed.live.bytes + typed.unreachable.bytes, typed.store_size);
    assert_eq!(report["path_count"].as_u64(), Some(valid.len() as u64));
    assert_eq!(
        report["store_size"].as_u64(),
        Some(st.sizes.values().sum::<u64>())
    );
    let roots = report["roots"].as_array().unwrap();
    assert_eq!(roots.len(), st.links.len(), "{report:#}");

    let base = dead(s, &valid, &[]);
    let size = |set: &BTreeSet<String>| set.iter().map(|p| st.sizes[p]).sum::<u64>();
    assert_eq!(
        report["unreachable"]["paths"].as_u64(),
        Some(base.len() as u64)
    );
    assert_eq!(report["unreachable"]["bytes"].as_u64(), Some(size(&base)));
    assert!(
        !base.iter().any(|p| p.ends_with(".drv")),
        "keep-derivations keeps the world's derivations: {base:?}"
    );

    let mut checked = 0;
    for link in &st.links {
        let logical = format!("/{}", link.strip_prefix(s).unwrap().to_str().unwrap());
        let row = roots
            .iter()
            .find(|r| r["link"] == logical.as_str())
            .unwrap_or_else(|| panic!("no root {logical} in {report:#}"));
        // Nix's answer: move the link away and ask again.
        let away = s.join("aside");
        std::fs::rename(link, &away).unwrap();
        let without = dead(s, &valid, &[]);
        std::fs::rename(&away, link).unwrap();
        let freed: BTreeSet<String> = without.difference(&base).cloned().collect();
        assert_eq!(
            (row["alone_paths"].as_u64(), row["alone"].as_u64()),
            (Some(freed.len() as u64), Some(size(&freed))),
            "{logical}: Nix frees {freed:?}"
        );
        let root = row["root"].as_str().unwrap();
        let info: serde_json::Value =
            serde_json::from_str(&nix_in(s, "nix", &["path-info", "--json", "-S", root])).unwrap();
        assert_eq!(row["closure_size"], info[0]["closureSize"], "{logical}");
        checked += 1;
    }
    assert_eq!(checked, 6);
    // The figures are not all trivial: some root frees something, two links to one
    // path free nothing, and the shared part is real.
    assert!(roots.iter().any(|r| r["alone"].as_u64() > Some(0)));
    assert!(roots
        .iter()
        .filter(|r| r["link"].as_str().unwrap().contains("hipblas-"))
        .all(|r| r["alone"] == 0));
    assert!(report["shared"]["bytes"].as_u64() > Some(0));

    // keep-outputs too, as Nix's own setting.
    let both = store_json(&[
        "--store-root",
        s.to_str().unwrap(),
        "--keep-outputs",
        "true",
    ]);
    let base2 = dead(s, &valid, &["--option", "keep-outputs", "true"]);
    assert_eq!(
        both["unreachable"]["paths"].as_u64(),
        Some(base2.len() as u64)
    );
    // Without keep-derivations, the derivations are unreachable.
    let none = store_json(&[
        "--store-root",
        s.to_str().unwrap(),
        "--keep-derivations",
        "false",
    ]);
    let base3 = dead(s, &valid, &["--option", "keep-derivations", "false"]);
    assert_eq!(
        none["unreachable"]["paths"].as_u64(),
        Some(base3.len() as u64)
    );
    assert!(base3.len() > base.len());
}

#[test]
fn a_path_info_file_with_print_roots_gives_the_same_figures() {
    if !nix_or_skip("store::a_path_info_file_with_print_roots_gives_the_same_figures") {
        return;
    }
    let st = make_store();
    let s = st.root.as_path();
    let dir = tempfile::tempdir().unwrap();
    let all = dir.path().join("all.json");
    std::fs::write(&all, nix_in(s, "nix", &["path-info", "--json", "--all"])).unwrap();
    let roots = dir.path().join("roots.txt");
    std::fs::write(&roots, nix_in(s, "nix-store", &["--gc", "--print-roots"])).unwrap();
    let from_db = store_json(&["--store-root", s.to_str().unwrap()]);
    let from_file = store_json(&[
        all.to_str().unwrap(),
        "--roots-from",
        roots.to_str().unwrap(),
    ]);
    let figures = |v: &serde_json::Value| {
        let mut rows: Vec<(String, u64, u64)> = v["roots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["root"].as_str().unwrap().to_string(),
                    r["alone"].as_u64().unwrap(),
                    r["closure_size"].as_u64().unwrap(),
                )
            })
            .collect();
        rows.sort();
        rows
    };
    assert_eq!(figures(&from_db), figures(&from_file));
    for k in [
        "store_size",
        "path_count",
        "reference_count",
        "unreachable",
        "shared",
        "live",
    ] {
        assert_eq!(from_db[k], from_file[k], "{k}");
    }
    // Nix prints physical link paths; each is kept as written.
    assert!(from_file["roots"][0]["link"]
        .as_str()
        .unwrap()
        .starts_with(s.to_str().unwrap()));
}

#[test]
fn table_markdown_and_html_say_the_same_ranking() {
    if !nix_or_skip("store::table_markdown_and_html_say_the_same_ranking") {
        return;
    }
    let st = make_store();
    let s = st.root.to_str().unwrap();
    let run = |extra: &[&str]| {
        let out = nixcut()
            .args(["store", "--store-root", s])
            .args(extra)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let json = store_json(&["--store-root", s]);
    let first = json["roots"][0]["link"].as_str().unwrap().to_string();
    let table = run(&["--top", "2"]);
    assert!(table.contains("alone frees"), "{table}");
    assert!(table.contains(&first), "{table}");
    assert!(table.contains("… and 4 more roots"), "{table}");
    // JSON lists as many as asked, and the rest sums the others; --all lists them all
    // with the closures of the default run.
    let two = store_json(&["--store-root", s, "--top", "2"]);
    assert_eq!(two["roots"].as_array().unwrap().len(), 2);
    assert_eq!(two["rest"]["roots"], 4);
    assert_eq!(two["roots"][0], json["roots"][0]);
    let all = store_json(&["--store-root", s, "--all"]);
    assert_eq!(
        all["roots"], json["roots"],
        "6 roots: the default 25 lists them all"
    );
    assert!(all["rest"].is_null());
    assert!(!table.contains('\u{1b}'), "no colour in a pipe");
    let md = run(&["--format", "markdown"]);
    assert!(
        md.contains("| alone frees | paths | closure | root | link |"),
        "{md}"
    );
    assert!(md.contains(&format!("`{first}`")), "{md}");
    let html = run(&["--format", "html"]);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        html.contains("unreachable") && html.contains("<svg"),
        "{html}"
    );
    // dot has no picture of a store.
    let out = nixcut()
        .args(["store", "--store-root", s, "--format", "dot"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bad_inputs_say_what_and_where() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("all.json");
    std::fs::write(
        &bad,
        "[{\"path\": \"/nix/store/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-a\", \"narSize\": -1}]",
    )
    .unwrap();
    let out = nixcut()
        .args(["store", bad.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("all.json:1:"), "{err}");
    let roots = dir.path().join("roots.txt");
    std::fs::write(&roots, "/home/u/result -> /etc/passwd\n").unwrap();
    std::fs::write(&bad, "[]").unwrap();
    let out = nixcut()
        .args([
            "store",
            bad.to_str().unwrap(),
            "--roots-from",
            roots.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("roots.txt") && err.contains("line 1"), "{err}");
    // A directory that is no store.
    let out = nixcut()
        .args(["store", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("db.sqlite"), "{err}");
    // A database that is not Nix's.
    let db = dir.path().join("other.sqlite");
    let conn = foreign_sqlite(&db);
    assert!(conn, "made an SQLite file");
    let out = nixcut()
        .args(["store", db.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not a Nix store database"), "{err}");
    // --root twice is for `store` only.
    let out = nixcut()
        .args(["why", "x", "--root", "a", "--root", "b"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("only `nixcut store` takes several"));
}

/// An SQLite database of another program (python3's sqlite3 module writes it).
fn foreign_sqlite(path: &Path) -> bool {
    std::process::Command::new("python3")
        .arg("-c")
        .arg(format!(
            "import sqlite3; c = sqlite3.connect({:?}); c.execute('create table t (x)'); c.commit()",
            path.to_str().unwrap()
        ))
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}
