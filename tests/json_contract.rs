//! The JSON contract, pinned from outside: the binary's output of every command, on
//! the shipped examples and on the Nix-built test worlds, read into the independent
//! mirror structs of `common::contract` (every field, `deny_unknown_fields`, and a
//! round trip that must give back the same document). Renaming or removing a field in
//! `nixcut::report` fails here even when every library type agrees with itself.

mod common;

use std::path::Path;

use common::contract::*;
use common::*;

const ROCM: &str = "examples/llama-cpp-rocm.json";
const CUDA: &str = "examples/llama-cpp-cuda.json";
const REGISTRATION: &str = "examples/small-registration";

fn ex(p: &str) -> String {
    repo().join(p).to_string_lossy().into_owned()
}

/// Run nixcut with a scan cache in `cache` (`None`: `--no-cache` is up to `args`);
/// returns stdout, which must be there whatever the exit code (`check` fails with 1).
fn stdout_of(args: &[&str], cache: Option<&Path>) -> String {
    let mut c = nixcut();
    c.env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_ACTIONS");
    if let Some(dir) = cache {
        c.env("XDG_CACHE_HOME", dir);
    }
    let (code, out, err) = decode(c.args(args).output().expect("run nixcut"));
    assert!(
        code == 0 || code == 1,
        "nixcut {args:?} exited {code}: {err}"
    );
    out
}

/// `args` with `--format json`, pinned to `T`.
fn doc<T: serde::de::DeserializeOwned + serde::Serialize>(args: &[&str]) -> T {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    pin(&format!("nixcut {args:?}"), &stdout_of(&all, None))
}

/// `snapshot INPUT -o dir/name`, pinned; returns the file too.
fn snapshot(input: &str, dir: &Path, name: &str) -> (Snapshot, String) {
    let f = dir.join(name).to_string_lossy().into_owned();
    let (code, _, err) = run(&["snapshot", input, "-o", &f]);
    assert_eq!(code, 0, "snapshot {input}: {err}");
    let text = std::fs::read_to_string(&f).expect("read the snapshot");
    (pin(&format!("snapshot of {input}"), &text), f)
}

fn rocblas_of(r: &WhyReport) -> String {
    r.paths
        .iter()
        .find(|p| p.path.ends_with("-rocblas-5.7.1"))
        .map(|p| p.path.clone())
        .expect("rocblas is in the ROCm closure")
}

#[test]
fn examples_why() {
    let all: WhyReport = doc(&["why", &ex(ROCM)]);
    assert_eq!(all.schema_version, 1);
    assert_eq!(all.sort, "added");
    assert_eq!(all.evidence, EvidenceLevel::Graph);
    assert!(all.rest.is_none());
    let top: WhyReport = doc(&["why", &ex(CUDA), "--top", "5", "--sort", "closure"]);
    assert_eq!((top.paths.len(), top.sort.as_str()), (5, "closure"));
    assert!(top.rest.is_some());
    let reg: WhyReport = doc(&["why", &ex(REGISTRATION)]);
    assert_eq!(reg.source.kind, "closure-info");
}

#[test]
fn examples_why_root_target() {
    let why: WhyReport = doc(&["why", &ex(ROCM)]);
    let rocblas = rocblas_of(&why);
    let r: WhyChainsReport = doc(&["why", &ex(ROCM), &rocblas]);
    assert!(r.chain_count >= 1);
    let tree = r.tree.expect("ROOT depends on rocblas");
    assert!(tree.via.is_none(), "graph level: no hop evidence");
    assert!(!tree.children.is_empty());
}

#[test]
fn examples_refs() {
    let r: RefsReport = doc(&["refs", &ex(ROCM)]);
    assert_eq!(r.evidence, EvidenceLevel::Graph);
    assert_eq!(r.files_from, "unavailable");
}

#[test]
fn examples_snapshot_and_diff() {
    let dir = tempfile::tempdir().unwrap();
    let (snap, _) = snapshot(&ex(ROCM), dir.path(), "rocm.json");
    assert_eq!(snap.kind, "nixcut-snapshot");
    assert_eq!(snap.path_count, snap.paths.len());
    let d: DiffReport = doc(&["diff", &ex(CUDA), &ex(ROCM)]);
    assert!(d.packages.iter().any(|p| p.version_change == "∅ → 5.7.1"));
    assert!(d
        .packages
        .iter()
        .any(|p| p.change == PackageChange::Removed));
    let d: DiffReport = doc(&["diff", &ex(CUDA), &ex(ROCM), "--top", "3"]);
    assert_eq!(d.packages.len(), 3);
    assert!(d.rest.is_some());
    let same: DiffReport = doc(&["diff", &ex(ROCM), &ex(ROCM)]);
    assert!(same.packages.is_empty());
}

#[test]
fn examples_check_every_criterion() {
    let dir = tempfile::tempdir().unwrap();
    let (_, rocm) = snapshot(&ex(ROCM), dir.path(), "rocm.json");
    let (_, cuda) = snapshot(&ex(CUDA), dir.path(), "cuda.json");

    // Everything fails: three sentences.
    let r: CheckReport = doc(&[
        "check",
        &ex(ROCM),
        "--baseline",
        &cuda,
        "--against",
        &ex(CUDA),
        "--max-ratio",
        "2",
        "--max-size",
        "1GiB",
        "--top",
        "3",
    ]);
    assert!(!r.pass);
    assert!(r.baseline.is_some() && r.against.is_some() && r.max_size.is_some());
    assert_eq!(r.failures.len(), 3, "{:?}", r.failures);
    assert!(r.baseline.unwrap().new_paths.rest.is_some());

    // Passing, with a byte allowance, and a warning that the closure shrank.
    let r: CheckReport = doc(&[
        "check",
        &ex(CUDA),
        "--baseline",
        &rocm,
        "--max-growth",
        "1MiB",
    ]);
    assert!(r.pass && r.failures.is_empty());
    let b = r.baseline.expect("baseline criterion");
    assert_eq!(
        (b.max_growth_percent, b.max_growth_bytes),
        (None, Some(1 << 20))
    );
    assert!(
        r.warnings.iter().any(|w| w.contains("shrank")),
        "{:?}",
        r.warnings
    );

    let r: CheckReport = doc(&["check", &ex(ROCM), "--max-size", "20GiB"]);
    assert!(r.pass && r.baseline.is_none() && r.against.is_none());
}

#[test]
fn world_documents_match_the_contract() {
    if !nix_or_skip("world_documents_match_the_contract") {
        return;
    }
    let rocm = rocm_world();
    let cuda = cuda_world();
    let cache = tempfile::tempdir().unwrap();
    let cached = Some(cache.path());
    let pinned = |args: &[&str], cache: Option<&Path>| {
        let mut all = args.to_vec();
        all.extend(["--format", "json"]);
        (format!("nixcut {args:?}"), stdout_of(&all, cache))
    };

    // why with file-level evidence: `kept_by` present.
    let (what, out) = pinned(&["why", &rocm.root], cached);
    let why: WhyReport = pin(&what, &out);
    assert_eq!(why.evidence, EvidenceLevel::Files);
    assert!(why.paths.iter().any(|p| !p.kept_by.is_empty()));
    let (what, out) = pinned(&["why", &rocm.root, "--evidence-referrers", "1"], cached);
    let _: WhyReport = pin(&what, &out);

    // why ROOT TARGET for every path of the world: hops carry `via`.
    for path in rocm.attrs.values() {
        let (what, out) = pinned(&["why", &rocm.root, path], cached);
        let r: WhyChainsReport = pin(&what, &out);
        if path != &rocm.root {
            let tree = r
                .tree
                .as_ref()
                .expect("the root depends on every attribute");
            assert!(tree.children.iter().all(|c| c.via.is_some()), "{what}");
        }
    }

    // refs: cold and warm cache, --discover, single paths.
    for args in [
        vec!["refs", "--closure", rocm.root.as_str()],
        vec!["refs", "--closure", rocm.root.as_str()],
        vec!["refs", "--closure", rocm.root.as_str(), "--discover"],
    ] {
        let (what, out) = pinned(&args, cached);
        let r: RefsReport = pin(&what, &out);
        assert_eq!(r.evidence, EvidenceLevel::Files);
    }
    for path in rocm.attrs.values() {
        let (what, out) = pinned(&["refs", path, "--no-cache"], None);
        let _: RefsReport = pin(&what, &out);
    }
    // refs --explain: the chain of loads to rocblas' own library.
    let lib = format!("{}/lib/librocblas.so", rocm.path("rocblas"));
    let (what, out) = pinned(
        &["refs", "--closure", rocm.root.as_str(), "--explain", &lib],
        cached,
    );
    let r: RefsReport = pin(&what, &out);
    let e = r.explain.expect("an explanation");
    assert!(e.reached && e.chain.len() >= 2, "{what}");

    // split: with a consumer, with GPU targets, and a package on its own.
    for args in [
        vec!["split", "rocblas", "--for", rocm.root.as_str()],
        vec![
            "split",
            "rocblas",
            "--for",
            rocm.root.as_str(),
            "--gpu-targets",
            "gfx90a,gfx1100",
        ],
        vec!["split", "rocm-runtime", "--for", rocm.root.as_str()],
        vec!["split", rocm.path("glibc")],
    ] {
        let (what, out) = pinned(&args, cached);
        let r: SplitReport = pin(&what, &out);
        assert!(r.outputs.iter().any(|o| o.name == "out"), "{what}");
    }

    // gpu: the ROCm world, with and without targets.
    for args in [
        vec!["gpu", rocm.root.as_str()],
        vec!["gpu", rocm.root.as_str(), "--gpu-targets", "gfx1030,sm_90"],
    ] {
        let (what, out) = pinned(&args, cached);
        let r: GpuReport = pin(&what, &out);
        assert_eq!(
            r.gpu_bytes + r.generic_bytes + r.host_bytes + r.unscanned_bytes,
            r.closure_size,
            "{what}"
        );
        assert!(!r.archs.is_empty(), "{what}");
    }

    // snapshot of a store path, diff and check between the worlds.
    let dir = tempfile::tempdir().unwrap();
    let (snap, file) = snapshot(&rocm.root, dir.path(), "world.json");
    assert!(snap.paths.iter().all(|p| p.nar_hash.is_some()));
    let d: DiffReport = doc(&["diff", &cuda.root, &rocm.root]);
    assert!(!d.packages.is_empty());
    let r: CheckReport = doc(&[
        "check",
        &rocm.root,
        "--baseline",
        &file,
        "--against",
        &cuda.root,
        "--max-ratio",
        "1.01",
    ]);
    assert!(r.baseline.as_ref().is_some_and(|b| b.pass));
}
