//! `nixcut diff`: on the shipped examples, and on Nix-built worlds against
//! `nix store diff-closures`.

mod common;

use std::collections::BTreeSet;

use common::contract::{pin, DiffReport, PackageChange};
use common::*;

const ROCM: &str = "examples/llama-cpp-rocm.json";
const CUDA: &str = "examples/llama-cpp-cuda.json";

fn ex(p: &str) -> String {
    repo().join(p).to_string_lossy().into_owned()
}

fn diff_json(old: &str, new: &str) -> DiffReport {
    let doc = json(&["diff", old, new, "--format", "json"]);
    pin("diff JSON", &doc.to_string())
}

#[test]
fn examples_diff_adds_up() {
    let r = diff_json(&ex(CUDA), &ex(ROCM));
    assert_eq!(r.old.closure_size, 1_033_490_256);
    assert_eq!(r.new.closure_size, 11_382_742_168);
    assert_eq!(r.closure_size_delta, 11_382_742_168 - 1_033_490_256);
    // Own NAR deltas add up to the closure delta; path counts add up on both sides.
    assert_eq!(
        r.packages.iter().map(|p| p.nar_delta).sum::<i64>(),
        r.closure_size_delta
    );
    assert_eq!(
        r.paths_unchanged + r.paths_changed + r.paths_added,
        r.new.path_count
    );
    assert_eq!(
        r.paths_unchanged + r.paths_changed + r.paths_removed,
        r.old.path_count
    );
    // Ranked by |impact|; the new root drags in everything ROCm-only.
    let impacts: Vec<u64> = r.packages.iter().map(|p| p.impact.unsigned_abs()).collect();
    assert!(impacts.windows(2).all(|w| w[0] >= w[1]), "{impacts:?}");
    assert_eq!(r.packages[0].package, "llama-cpp-rocm");
    let rocblas = r.packages.iter().find(|p| p.package == "rocblas").unwrap();
    assert_eq!(rocblas.change, PackageChange::Added);
    assert_eq!(rocblas.version_change, "∅ → 5.7.1");
    // rocblas alone holds the Tensile groups: its impact is far above its own NAR.
    assert!(rocblas.impact > 10 * rocblas.nar_delta, "{rocblas:?}");
    // Split outputs are grouped under their package with the output named.
    let cudart = r
        .packages
        .iter()
        .find(|p| p.package == "cuda_cudart")
        .unwrap();
    assert_eq!(cudart.change, PackageChange::Removed);
    assert!(cudart.paths.iter().any(|p| p.output == "lib"), "{cudart:?}");
    eprintln!(
        "cuda → rocm: {} → {} bytes, {} packages changed; top: {} {:+}",
        r.old.closure_size,
        r.new.closure_size,
        r.packages.len(),
        r.packages[0].package,
        r.packages[0].impact
    );

    let (code, table, _) = run(&["diff", &ex(CUDA), &ex(ROCM), "--top", "5"]);
    assert_eq!(code, 0);
    assert!(
        table.contains("llama-cpp-cuda-0.0.0 → llama-cpp-rocm-0.0.0"),
        "{table}"
    );
    assert!(table.contains("more packages"), "{table}");
    let (code, md, _) = run(&["diff", &ex(CUDA), &ex(ROCM), "--format", "markdown"]);
    assert_eq!(code, 0);
    assert!(
        md.contains("| # | package | version | impact | NAR Δ | paths |"),
        "{md}"
    );
    assert!(md.contains("∅ → 5.7.1"), "{md}");
}

#[test]
fn a_closure_against_itself_is_empty() {
    let r = diff_json(&ex(ROCM), &ex(ROCM));
    assert!(r.packages.is_empty());
    assert_eq!(r.closure_size_delta, 0);
    assert_eq!(r.paths_unchanged, 84);
}

/// Package names with a version change in `nix store diff-closures` output. Lines look
/// like `rocblas: 5.7.1 → 6.0.0, +12.3 KiB` (colour codes even in a pipe); size-only
/// lines have no arrow.
fn diff_closures_version_changes(old: &str, new: &str) -> BTreeSet<String> {
    let out = nix_stdout("nix", &["store", "diff-closures", old, new]);
    let mut set = BTreeSet::new();
    for line in out.lines() {
        let clean = strip_ansi(line);
        if let Some((name, rest)) = clean.split_once(": ") {
            if rest.contains('→') {
                set.insert(name.trim().to_string());
            }
        }
    }
    set
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `diff` names the same packages with version changes as `nix store diff-closures`,
/// on two Nix-built closures that differ in versions (default vs 6.0.0), read from
/// the live store on one side and a snapshot on the other.
#[test]
fn world_version_changes_agree_with_nix_diff_closures() {
    if !nix_or_skip("world_version_changes_agree_with_nix_diff_closures") {
        return;
    }
    let old = rocm_world();
    let new = build_world("rocm", &["--argstr", "version", "6.0.0"]);
    let expect = diff_closures_version_changes(&old.root, &new.root);
    assert!(expect.contains("rocblas"), "{expect:?}");

    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("old.json");
    let (code, _, err) = run(&["snapshot", &old.root, "-o", snap.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    for old_input in [old.root.clone(), snap.display().to_string()] {
        let r = diff_json(&old_input, &new.root);
        let got: BTreeSet<String> = r
            .packages
            .iter()
            .filter(|p| !p.version_change.is_empty())
            .map(|p| p.package.clone())
            .collect();
        assert_eq!(got, expect, "from {old_input}");
        for p in r.packages.iter().filter(|p| !p.version_change.is_empty()) {
            assert!(matches!(
                p.change,
                PackageChange::Version | PackageChange::Added | PackageChange::Removed
            ));
        }
        assert_eq!(
            r.packages.iter().map(|p| p.nar_delta).sum::<i64>(),
            r.closure_size_delta
        );
        let rocblas = r.packages.iter().find(|p| p.package == "rocblas").unwrap();
        assert_eq!(rocblas.version_change, "5.7.1 → 6.0.0");
        eprintln!(
            "diff {} → 6.0.0: {} → {} bytes ({:+}); version changes ({}): {:?}",
            if old_input.ends_with(".json") {
                "snapshot"
            } else {
                "store path"
            },
            r.old.closure_size,
            r.new.closure_size,
            r.closure_size_delta,
            got.len(),
            got
        );
    }
    eprintln!(
        "nix store diff-closures version changes ({}): {expect:?}",
        expect.len()
    );
}

/// The heavier rebuild: diff-closures sees big-blob appear; so does `diff`, and ranks
/// the package that brings it (the rebuilt root) and big-blob itself first.
#[test]
fn world_heavy_rebuild_is_ranked_by_impact() {
    if !nix_or_skip("world_heavy_rebuild_is_ranked_by_impact") {
        return;
    }
    let old = rocm_world();
    let new = build_world("rocm", &["--arg", "heavy", "true"]);
    let expect = diff_closures_version_changes(&old.root, &new.root);
    let r = diff_json(&old.root, &new.root);
    let got: BTreeSet<String> = r
        .packages
        .iter()
        .filter(|p| !p.version_change.is_empty())
        .map(|p| p.package.clone())
        .collect();
    assert_eq!(got, expect);
    let names: Vec<&str> = r.packages.iter().map(|p| p.package.as_str()).collect();
    assert_eq!(names, vec!["llama-cpp-rocm", "big-blob"], "{r:?}");
    let blob = &r.packages[1];
    assert_eq!(blob.version_change, "∅ → 1.0");
    assert!(blob.impact > 2_000_000, "{blob:?}");
    assert_eq!(r.paths_changed, 1, "the root is rebuilt");
    eprintln!(
        "heavy rebuild: {:+} bytes; llama-cpp-rocm impact {:+}, big-blob impact {:+}",
        r.closure_size_delta, r.packages[0].impact, blob.impact
    );
}

/// Issue 14: a mass rebuild (every hash changed, every size the same) is named as such,
/// not only as churn.
#[test]
fn a_mass_rebuild_says_how_many_paths_kept_their_size() {
    if !nix_or_skip("a_mass_rebuild_says_how_many_paths_kept_their_size") {
        return;
    }
    let old = rocm_world();
    let new = build_world("rocm", &["--argstr", "tag", "mass-rebuild"]);
    let d = json(&["diff", &old.root, &new.root, "--format", "json"]);
    let n = d["new"]["path_count"].as_u64().unwrap();
    assert_eq!(d["paths_changed"].as_u64().unwrap(), n, "{d:#}");
    assert_eq!(d["paths_changed_same_size"].as_u64().unwrap(), n);
    assert_eq!(d["paths_added"], 0);
    let (code, table, err) = run(&["diff", &old.root, &new.root]);
    assert_eq!(code, 0, "{err}");
    assert!(
        table.contains(&format!("{n} rebuilt ({n} with the same size)")),
        "{table}"
    );
}
