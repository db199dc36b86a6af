//! `nixcut snapshot`: files that round-trip through every command, refuse what they
//! cannot vouch for (a future schema, a truncated file), and match Nix on a real store.

mod common;

use common::contract::{pin, Snapshot, WhyReport};
use common::*;

const ROCM: &str = "examples/llama-cpp-rocm.json";

fn ex(p: &str) -> String {
    repo().join(p).to_string_lossy().into_owned()
}

fn snapshot_of(input: &str, dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let f = dir.join(name);
    let (code, out, err) = run(&["snapshot", input, "-o", f.to_str().unwrap()]);
    assert_eq!(code, 0, "snapshot failed: {err}");
    assert!(
        out.is_empty(),
        "snapshot -o prints nothing on stdout: {out}"
    );
    assert!(err.contains("wrote") && err.contains(name), "{err}");
    f
}

#[test]
fn snapshot_is_an_input_like_any_other() {
    let dir = tempfile::tempdir().unwrap();
    let f = snapshot_of(&ex(ROCM), dir.path(), "base.json");
    let snap: Snapshot = pin("snapshot", &std::fs::read_to_string(&f).unwrap());
    assert_eq!(snap.kind, "nixcut-snapshot");
    assert_eq!(snap.schema_version, 1);
    assert_eq!(snap.path_count, 84);
    assert_eq!(snap.closure_size, 11_382_742_168);
    assert_eq!(snap.created_from.kind, "path-info-json");
    assert!(snap.root.ends_with("-llama-cpp-rocm-0.0.0"));
    assert_eq!(
        snap.paths.iter().map(|p| p.nar_size).sum::<u64>(),
        snap.closure_size
    );

    // `why` on the snapshot equals `why` on the JSON it was taken from.
    let from_json: WhyReport = pin(
        "why on the JSON",
        &json(&["why", &ex(ROCM), "--format", "json"]).to_string(),
    );
    let from_snap: WhyReport = pin(
        "why on the snapshot",
        &json(&["why", f.to_str().unwrap(), "--format", "json"]).to_string(),
    );
    assert_eq!(from_snap.source.kind, "snapshot");
    assert_eq!(from_snap.paths, from_json.paths);
    assert_eq!(from_snap.closure_size, from_json.closure_size);

    // `-o -` writes the same document to standard output.
    let (code, out, _) = run(&["snapshot", &ex(ROCM), "-o", "-"]);
    assert_eq!(code, 0);
    assert_eq!(out, std::fs::read_to_string(&f).unwrap());

    // A snapshot of a snapshot is the same closure (only `created_from` differs).
    let again = snapshot_of(f.to_str().unwrap(), dir.path(), "again.json");
    let again: Snapshot = pin("snapshot", &std::fs::read_to_string(again).unwrap());
    assert_eq!(again.paths, snap.paths);
    assert_eq!(again.created_from.kind, "snapshot");
}

/// Regression: a snapshot from a newer nixcut must not be half-understood.
#[test]
fn future_schema_version_is_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let f = snapshot_of(&ex(ROCM), dir.path(), "base.json");
    let text = std::fs::read_to_string(&f).unwrap();
    let future = dir.path().join("future.json");
    std::fs::write(
        &future,
        text.replacen("\"schema_version\": 1", "\"schema_version\": 2", 1)
            .replacen(
                "\"nixcut_version\": \"0.1.0\"",
                "\"nixcut_version\": \"7.0.0\"",
                1,
            ),
    )
    .unwrap();
    for args in [
        vec!["why", future.to_str().unwrap()],
        vec!["check", &ex(ROCM), "--baseline", future.to_str().unwrap()],
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("future.json")
                && err.contains("snapshot schema version 2")
                && err.contains("nixcut 7.0.0")
                && err.contains("upgrade nixcut"),
            "{err}"
        );
        eprintln!("{args:?} → {}", err.trim());
    }
}

/// Regression: a truncated baseline must be an error, never an empty (tiny) baseline
/// that every closure fails, or worse, a partial one that hides growth.
#[test]
fn truncated_snapshot_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = snapshot_of(&ex(ROCM), dir.path(), "base.json");
    let text = std::fs::read_to_string(&f).unwrap();
    for (i, cut) in [40, text.len() / 3, text.len() - 2].into_iter().enumerate() {
        let t = dir.path().join(format!("cut{i}.json"));
        std::fs::write(&t, &text[..cut]).unwrap();
        let (code, _, err) = run(&["check", &ex(ROCM), "--baseline", t.to_str().unwrap()]);
        assert_eq!(code, 2, "cut at {cut}: {err}");
        assert!(
            err.contains("truncated") && err.contains(&format!("cut{i}.json")),
            "{err}"
        );
        eprintln!("cut at {cut} of {} → {}", text.len(), err.trim());
    }
    // Cut at an entry boundary and re-closed: valid JSON, but paths are missing.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["paths"].as_array_mut().unwrap().truncate(10);
    let t = dir.path().join("short.json");
    std::fs::write(&t, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let (code, _, err) = run(&["why", t.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("84 paths but lists 10"), "{err}");
}

#[test]
fn failed_write_names_the_file_and_keeps_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&["snapshot", &ex(ROCM), "-o", "/nonexistent-dir/base.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent-dir/base.json"), "{err}");
    // Replacing an existing snapshot: the old one stays until the new one is complete,
    // and no temporary file is left behind.
    let f = snapshot_of(&ex(ROCM), dir.path(), "base.json");
    let cuda = ex("examples/llama-cpp-cuda.json");
    let (code, _, err) = run(&["snapshot", &cuda, "-o", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let snap: Snapshot = pin("snapshot", &std::fs::read_to_string(&f).unwrap());
    assert!(snap.root.ends_with("llama-cpp-cuda-0.0.0"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// On the Nix-built world: a snapshot of the live store path has Nix's sizes.
#[test]
fn world_snapshot_matches_nix() {
    if !nix_or_skip("world_snapshot_matches_nix") {
        return;
    }
    let w = rocm_world();
    let dir = tempfile::tempdir().unwrap();
    let f = snapshot_of(&w.root, dir.path(), "world.json");
    let snap: Snapshot = pin("snapshot", &std::fs::read_to_string(&f).unwrap());
    let expect = nix_closure_sizes(&w.root);
    assert_eq!(snap.path_count, expect.len());
    assert_eq!(snap.closure_size, expect[&w.root]);
    for p in &snap.paths {
        assert_eq!(p.closure_size, expect[&p.path], "{}", p.path);
        assert!(p
            .nar_hash
            .as_deref()
            .is_some_and(|h| h.starts_with("sha256-")));
    }
    eprintln!(
        "snapshot of {}: {} paths, closure {} bytes (nix path-info -S: {})",
        w.root, snap.path_count, snap.closure_size, expect[&w.root]
    );
}
