//! MIOpen's per-architecture databases (`share/miopen/db/gfx90a68.kdb`, …), known to
//! nixcut only through MIOpen's row of the GPU library table: on `tests/worlds/miopen.nix`
//! (built by real Nix: a real libMIOpen.so, real SQLite databases named as MIOpen ships
//! them, and a program linking the library), `nixcut gpu` counts each architecture's
//! databases, `refs --explain` reaches them through the library's data directory on
//! their architecture only, and `split --gpu-targets` drops the other architectures'
//! databases (what nixpkgs#484006 deletes by hand, 506-711 MB per architecture).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// Every per-architecture file the world's MIOpen holds and the architecture it is for,
/// read off the names here (the processor, then the CU count: decimal after `_`, hex
/// glued on above 64 CUs), independently of nixcut's reader.
const DATABASES: &[(&str, &str)] = &[
    ("gfx90a68.kdb", "gfx90a"),
    ("gfx90a6e.kdb", "gfx90a"),
    ("gfx90a68.db", "gfx90a"),
    ("gfx90a68.HIP.fdb.txt", "gfx90a"),
    ("gfx942130.kdb", "gfx942"),
    ("gfx942130.db", "gfx942"),
    ("gfx942130.HIP.fdb.txt", "gfx942"),
    ("gfx1030_36.kdb", "gfx1030"),
    ("gfx1030_36.db", "gfx1030"),
    ("gfx900_56.kdb", "gfx900"),
    ("gfx908.tn.model", "gfx908"),
];

/// The world's (miopen, miopen-app) store paths, built once per test binary.
fn world(test: &str) -> Option<&'static (String, String)> {
    static W: OnceLock<(String, String)> = OnceLock::new();
    if !common::nix_or_skip(test) {
        return None;
    }
    Some(W.get_or_init(|| {
        let nix = common::repo().join("tests/worlds/miopen.nix");
        let build = |attr: &str| {
            common::nix_stdout(
                "nix-build",
                &[nix.to_str().unwrap(), "-A", attr, "--no-out-link"],
            )
            .trim()
            .to_string()
        };
        (build("miopen"), build("miopen-app"))
    }))
}

/// The size of each database file, by architecture.
fn bytes_by_arch(miopen: &str) -> BTreeMap<&'static str, u64> {
    let mut out = BTreeMap::new();
    for (name, arch) in DATABASES {
        let f = format!("{miopen}/share/miopen/db/{name}");
        let len = std::fs::metadata(&f)
            .unwrap_or_else(|e| panic!("{f}: {e}"))
            .len();
        *out.entry(*arch).or_insert(0) += len;
    }
    out
}

#[test]
fn gpu_counts_each_architectures_databases() {
    let Some((miopen, app)) = world("gpu_counts_each_architectures_databases") else {
        return;
    };
    let v = common::json(&["gpu", app, "--format", "json", "--no-cache"]);
    let want = bytes_by_arch(miopen);
    let got: BTreeMap<&str, u64> = v["archs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["arch"].as_str().unwrap(), a["bytes"].as_u64().unwrap()))
        .collect();
    // Every database under its base architecture, the CU count dropped (gfx90a68 and
    // gfx90a6e are both gfx90a), and nothing else is GPU code.
    assert_eq!(got, want, "{v}");
    assert_eq!(v["gpu_bytes"].as_u64(), Some(want.values().sum()));
    let files: u64 = v["archs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["files"].as_u64().unwrap())
        .sum();
    assert_eq!(files, DATABASES.len() as u64);

    // With gfx90a only, MIOpen shrinks by at least the other architectures' databases.
    let after = common::json(&[
        "gpu",
        app,
        "--gpu-targets",
        "gfx90a",
        "--format",
        "json",
        "--no-cache",
    ]);
    let changed = after["changed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == miopen.as_str())
        .unwrap_or_else(|| panic!("miopen shrinks: {after}"));
    assert_eq!(changed["estimated"], false);
    let dropped: u64 = want
        .iter()
        .filter(|(a, _)| **a != "gfx90a")
        .map(|(_, b)| b)
        .sum();
    let shrank = changed["size_before"].as_u64().unwrap() - changed["size_after"].as_u64().unwrap();
    // NAR framing: a few hundred bytes per file entry on top of the contents.
    assert!(
        shrank >= dropped && shrank < dropped + 512 * DATABASES.len() as u64,
        "shrank {shrank}, dropped files {dropped}"
    );
    let remedy = after["remedies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["packages"] == serde_json::json!(["miopen"]))
        .unwrap_or_else(|| panic!("a miopen remedy: {after}"));
    assert_eq!(
        remedy["nix"],
        "rocmPackages.miopen.override { gpuTargets = [ \"gfx90a\" ]; }"
    );
}

#[test]
fn the_databases_are_opened_at_run_time_on_their_architecture_only() {
    let Some((miopen, app)) =
        world("the_databases_are_opened_at_run_time_on_their_architecture_only")
    else {
        return;
    };
    // The program needs the library: a run-time reference.
    let refs = common::json(&["refs", app, "--format", "json", "--no-cache"]);
    let to_miopen = refs["paths"][0]["references"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == miopen.as_str())
        .unwrap_or_else(|| panic!("app refers to miopen: {refs}"));
    assert_eq!(to_miopen["verdict"], "runtime");

    let explain = |rel: &str| {
        let file = format!("{miopen}/{rel}");
        let v = common::json(&[
            "refs",
            "--closure",
            app,
            "--explain",
            &file,
            "--format",
            "json",
            "--no-cache",
        ]);
        v["explain"].clone()
    };
    for (name, arch) in DATABASES {
        let e = explain(&format!("share/miopen/db/{name}"));
        assert_eq!(e["reached"], true, "{name}: {e}");
        assert_eq!(e["class"], format!("gpu:{arch}"), "{name}: {e}");
        assert_eq!(e["processors"], serde_json::json!([arch]), "{name}: {e}");
        // Through the library's data directory (its real path's ../share/miopen/db),
        // which the library's strings do not name: the table's row does.
        let chain = e["chain"].as_array().unwrap();
        assert!(
            chain
                .iter()
                .any(|c| c["via"] == "data-dir" && c["detail"] == "data/miopen-db"),
            "{name}: {e}"
        );
        assert_eq!(chain[0]["via"], "entry-point", "{name}: {e}");
    }
    // What is not in the data directory is not opened.
    assert_eq!(explain("share/doc/miopen/README")["reached"], false);
}

#[test]
fn split_with_gpu_targets_drops_the_other_architectures_databases() {
    let Some((miopen, app)) =
        world("split_with_gpu_targets_drops_the_other_architectures_databases")
    else {
        return;
    };
    let r = common::json(&[
        "split",
        miopen,
        "--for",
        app,
        "--gpu-targets",
        "gfx90a",
        "--format",
        "json",
        "--no-cache",
    ]);
    let archs = r["archs"].as_array().unwrap();
    let kept: Vec<&str> = archs
        .iter()
        .filter(|a| a["kept"] == true)
        .filter_map(|a| a["arch"].as_str())
        .collect();
    assert_eq!(kept, ["gfx90a"], "{r}");
    let by_arch = bytes_by_arch(miopen);
    for a in archs {
        let name = a["arch"].as_str().unwrap();
        assert_eq!(a["bytes"].as_u64(), by_arch.get(name).copied(), "{a}");
    }
    // Exactly the other architectures' files go, each under its architecture.
    let mut dropped: BTreeSet<(String, String)> = BTreeSet::new();
    for a in r["actions"].as_array().unwrap() {
        if a["action"] != "drop-gpu-arch" {
            continue;
        }
        for p in a["paths"].as_array().unwrap() {
            dropped.insert((
                a["arch"].as_str().unwrap().to_string(),
                p.as_str().unwrap().to_string(),
            ));
        }
        for b in a["because"].as_array().unwrap() {
            assert_eq!(b["rule"], "class/miopen-db", "{a}");
        }
    }
    let want: BTreeSet<(String, String)> = DATABASES
        .iter()
        .filter(|(_, arch)| *arch != "gfx90a")
        .map(|(name, arch)| (arch.to_string(), format!("share/miopen/db/{name}")))
        .collect();
    assert_eq!(dropped, want);
    let code = r["nix"].as_str().unwrap();
    assert!(
        code.contains("(miopen.override { gpuTargets = [ \"gfx90a\" ]; })"),
        "{code}"
    );
    // The consumer's closure loses at least those bytes.
    let gone: u64 = by_arch
        .iter()
        .filter(|(a, _)| **a != "gfx90a")
        .map(|(_, b)| b)
        .sum();
    let before = r["for"]["closure_size_before"].as_u64().unwrap();
    let after = r["for"]["closure_size_after"].as_u64().unwrap();
    assert!(
        before - after >= gone,
        "{before} -> {after}, dropped {gone}"
    );
}
