//! One closure, every input shape: each fixture in `tests/fixtures/load/` describes the
//! same five store paths, and each must load through `nixcut::load::load` (format
//! detected from content) into the same paths, NAR sizes, NAR hashes and references.
//! The sizeless formats (`exportReferencesGraph`, `nix-store --query --graph`) agree on
//! paths and references; the graph also against `nix path-info` on a test world built
//! by the real Nix.

mod common;

use std::collections::BTreeMap;

use nixcut::load::{load, LoadOptions};
use nixcut::store::{Closure, NarHash, SourceKind, StorePath};

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/load/{name}", env!("CARGO_MANIFEST_DIR"))
}

type Facts = BTreeMap<StorePath, (Option<u64>, Option<NarHash>, Vec<StorePath>)>;

fn facts(c: &Closure) -> Facts {
    c.paths
        .iter()
        .map(|(p, i)| {
            (
                p.clone(),
                (i.nar_size, i.nar_hash.clone(), i.references.clone()),
            )
        })
        .collect()
}

fn load_fixture(name: &str) -> Closure {
    load(&fixture(name), &LoadOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_shape_loads_the_same_closure() {
    let reference = load_fixture("path-info-2.8.json");
    assert_eq!(reference.paths.len(), 5);
    assert!(reference.has_sizes());
    let want = facts(&reference);
    let shapes = [
        ("path-info-2.3.json", SourceKind::PathInfoJson),
        ("path-info-2.8.json", SourceKind::PathInfoJson),
        ("path-info-2.15.json", SourceKind::PathInfoJson),
        ("path-info-2.19.json", SourceKind::PathInfoJson),
        ("path-info-2.23.json", SourceKind::PathInfoJson),
        ("path-info-2.33-format1.json", SourceKind::PathInfoJson),
        ("path-info-format2.json", SourceKind::PathInfoJson),
        ("path-info-format3.json", SourceKind::PathInfoJson),
        ("dump-db.txt", SourceKind::Registration),
        ("closure-info/registration", SourceKind::Registration),
        ("closure-info", SourceKind::ClosureInfo),
        ("attrs.json", SourceKind::StructuredAttrs),
        ("binary-cache", SourceKind::BinaryCache),
    ];
    for (name, source) in shapes {
        let c = load_fixture(name);
        assert_eq!(c.source, source, "{name}");
        assert_eq!(c.store_dir.as_str(), "/nix/store", "{name}");
        let got = facts(&c);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "{name}: paths"
        );
        for (p, w) in &want {
            assert_eq!(&got[p], w, "{name}: {p}");
        }
        assert_eq!(c.roots(), reference.roots(), "{name}: roots");
        assert!(c.missing_references().is_empty(), "{name}");
    }
}

#[test]
fn export_references_graph_agrees_on_paths_and_references() {
    let reference = load_fixture("path-info-2.8.json");
    let c = load_fixture("export-references-graph");
    assert_eq!(c.source, SourceKind::ExportReferencesGraph);
    assert!(!c.has_sizes());
    assert!(c
        .warnings
        .iter()
        .any(|w| w.to_string().contains("sizes unknown")));
    let got: BTreeMap<_, _> = c.paths.iter().map(|(p, i)| (p, &i.references)).collect();
    let want: BTreeMap<_, _> = reference
        .paths
        .iter()
        .map(|(p, i)| (p, &i.references))
        .collect();
    assert_eq!(got, want);
}

/// `c`'s references by path, self-references left out (`nix-store --query --graph`
/// never shows them).
fn references_without_self(c: &Closure) -> BTreeMap<StorePath, Vec<StorePath>> {
    c.paths
        .iter()
        .map(|(p, i)| {
            let refs = i.references.iter().filter(|r| *r != p).cloned().collect();
            (p.clone(), refs)
        })
        .collect()
}

#[test]
fn nix_store_graph_agrees_on_paths_and_references_but_self_references() {
    let reference = load_fixture("path-info-2.8.json");
    let c = load_fixture("nix-store-graph.dot");
    assert_eq!(c.source, SourceKind::NixStoreGraph);
    assert_eq!(c.store_dir.as_str(), "/nix/store");
    assert!(!c.has_sizes());
    assert!(c
        .warnings
        .iter()
        .any(|w| w.to_string().contains("sizes unknown")));
    assert!(c.paths.values().all(|i| i.nar_hash.is_none()));
    assert_eq!(
        references_without_self(&c),
        references_without_self(&reference)
    );
    // app-1.0 references itself; the graph cannot say so.
    let app = reference.roots();
    assert!(reference.paths[&app[0]].references.contains(&app[0]));
    assert_eq!(c.roots(), app);
    assert!(c.missing_references().is_empty());
}

/// The graph of two roots (the ROCm test world's application, and the fixtures' own
/// `closure.nix`), against `nix path-info --json -r` of the same two.
#[test]
fn nix_store_graph_of_a_built_world_agrees_with_path_info() {
    if !common::nix_or_skip("nix_store_graph_of_a_built_world_agrees_with_path_info") {
        return;
    }
    let world = common::rocm_world();
    let fixture_nix = fixture("closure.nix");
    let app = common::nix_stdout("nix-build", &[&fixture_nix, "--no-out-link"]);
    let roots = [world.root.as_str(), app.trim()];
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["--query", "--graph"];
    args.extend(roots);
    let dot = dir.path().join("graph");
    std::fs::write(&dot, common::nix_stdout("nix-store", &args)).unwrap();
    let mut args = vec!["path-info", "--json", "-r"];
    args.extend(roots);
    let json = dir.path().join("closure.json");
    std::fs::write(&json, common::nix_stdout("nix", &args)).unwrap();

    let graph = load(dot.to_str().unwrap(), &LoadOptions::default()).unwrap();
    let info = load(json.to_str().unwrap(), &LoadOptions::default()).unwrap();
    assert_eq!(graph.source, SourceKind::NixStoreGraph);
    assert!(graph.paths.len() > 10, "{}", graph.paths.len());
    assert_eq!(
        references_without_self(&graph),
        references_without_self(&info)
    );
    let selfish = info
        .paths
        .iter()
        .filter(|(p, i)| i.references.contains(p))
        .count();
    assert!(
        selfish > 0,
        "the world has self-references for the graph to lose"
    );
    let mut want: Vec<String> = roots.iter().map(|r| r.to_string()).collect();
    want.sort();
    let got: Vec<String> = graph
        .roots()
        .iter()
        .map(|p| graph.store_dir.display(p))
        .collect();
    assert_eq!(got, want);
    assert_eq!(graph.roots(), info.roots());
}

#[test]
fn invalid_paths_are_reported_not_dropped() {
    for name in [
        "path-info-2.3.json",
        "path-info-2.15.json",
        "path-info-2.19.json",
        "path-info-2.23.json",
        "path-info-2.33-format1.json",
        "path-info-format2.json",
        "path-info-format3.json",
    ] {
        let c = load_fixture(name);
        assert_eq!(c.invalid.len(), 1, "{name}");
        assert!(c.invalid[0].path.contains("gone-1.0"), "{name}");
        assert!(
            c.warnings
                .iter()
                .any(|w| w.to_string().contains("gone-1.0")),
            "{name}: {:?}",
            c.warnings
        );
    }
}

#[test]
fn a_partial_closure_is_flagged() {
    // `nix path-info --json` without `-r`: only the root, its references dangling.
    let text = std::fs::read_to_string(fixture("path-info-2.8.json")).unwrap();
    let all: serde_json::Value = serde_json::from_str(&text).unwrap();
    let root: Vec<_> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["path"].as_str().unwrap().ends_with("-app-1.0"))
        .cloned()
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("one.json");
    std::fs::write(&p, serde_json::to_string(&root).unwrap()).unwrap();
    let c = load(p.to_str().unwrap(), &LoadOptions::default()).unwrap();
    assert_eq!(c.paths.len(), 1);
    assert!(
        c.warnings.iter().any(|w| w.to_string().contains("-r")),
        "{:?}",
        c.warnings
    );
}
