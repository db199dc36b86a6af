//! The live-store loader against a real Nix: build a tiny closure with
//! `builtins.derivation`, load it through `./result`, and check that the registration
//! (`nix-store --dump-db`) and binary cache (`nix copy --to file://…`) shapes of the
//! same closure load identically; and that the store database and the `nix` command
//! give the same closure of the ROCm test world.
//!
//! Skips with a message when `nix` is not installed, unless `NIXCUT_REQUIRE_NIX=1`.
//! Builds run single-user without a sandbox (`NIX_CONFIG` below, unless already set),
//! as on the project's machines.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use nixcut::load::{load, LoadError, LoadOptions};
use nixcut::store::{Closure, NarHash, SourceKind, StorePath};

const NIX_CONFIG: &str =
    "sandbox = false\nbuild-users-group =\nexperimental-features = nix-command";

const CLOSURE_NIX: &str = r#"
let
  mk = name: script: builtins.derivation {
    inherit name;
    system = builtins.currentSystem;
    builder = "/bin/sh";
    PATH = "/usr/bin:/bin";
    args = [ "-c" script ];
  };
  base = mk "nixcut-live-base-1.0" "echo base > $out";
  lib = mk "nixcut-live-lib-2.0" "mkdir -p $out/lib; echo ${base} > $out/lib/l.txt";
  app = mk "nixcut-live-app-3.0" "mkdir -p $out/bin; echo ${lib} $out > $out/bin/app";
in app
"#;

/// Whether to run: `nix` works, or the environment demands it.
fn nix_present() -> bool {
    let ok = Command::new("nix")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        if std::env::var("NIXCUT_REQUIRE_NIX").as_deref() == Ok("1") {
            panic!("NIXCUT_REQUIRE_NIX=1 but `nix --version` does not run");
        }
        eprintln!("SKIP: nix not installed");
    }
    ok
}

fn nix_cmd(program: &str) -> Command {
    let mut c = Command::new(program);
    if std::env::var_os("NIX_CONFIG").is_none() {
        c.env("NIX_CONFIG", NIX_CONFIG);
    }
    c
}

fn run(mut c: Command) -> String {
    let out = c.output().expect("spawn");
    assert!(
        out.status.success(),
        "{c:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
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

fn build(dir: &Path) -> std::path::PathBuf {
    let expr = dir.join("closure.nix");
    std::fs::write(&expr, CLOSURE_NIX).unwrap();
    let result = dir.join("result");
    let mut c = nix_cmd("nix-build");
    c.arg(&expr).arg("-o").arg(&result);
    run(c);
    result
}

#[test]
fn live_store_matches_dump_db_and_binary_cache() {
    if !nix_present() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let result = build(tmp.path());
    let opts = LoadOptions::default();

    let live = load(result.to_str().unwrap(), &opts).unwrap();
    assert_eq!(live.source, SourceKind::LiveStore);
    assert_eq!(live.paths.len(), 3, "{:?}", live.paths.keys());
    let root = live.declared_roots.first().expect("declared root").clone();
    assert_eq!(root.name(), "nixcut-live-app-3.0");
    assert_eq!(live.roots(), vec![root.clone()]);
    assert!(live.has_sizes());
    assert!(live.warnings.is_empty(), "{:?}", live.warnings);
    let want = facts(&live);
    assert!(want[&root].2.contains(&root), "app refers to itself");

    // The registration shape, as `nix-store --dump-db` writes it.
    let mut q = nix_cmd("nix-store");
    q.arg("-qR").arg(&result);
    let paths: Vec<String> = run(q).lines().map(String::from).collect();
    let mut d = nix_cmd("nix-store");
    d.arg("--dump-db").args(&paths);
    let db = tmp.path().join("db");
    std::fs::write(&db, run(d)).unwrap();
    let reg = load(db.to_str().unwrap(), &opts).unwrap();
    assert_eq!(reg.source, SourceKind::Registration);
    assert_eq!(facts(&reg), want);

    // A binary cache made by `nix copy`.
    let cache = tmp.path().join("cache");
    let mut cp = nix_cmd("nix");
    cp.args(["--extra-experimental-features", "nix-command", "copy"])
        .arg("--to")
        .arg(format!("file://{}", cache.display()))
        .arg(&result);
    run(cp);
    let bc = load(cache.to_str().unwrap(), &opts).unwrap();
    assert_eq!(bc.source, SourceKind::BinaryCache);
    assert_eq!(facts(&bc), want);
    let locations = nixcut::load::binary_cache::nar_locations(&cache).unwrap();
    assert_eq!(locations.len(), 3);
    assert!(locations
        .values()
        .all(|e| e.relative_path().is_some_and(|r| cache.join(r).is_file())));

    // A file inside a store path that is no format of ours: its store path's closure.
    let inner = result.join("bin/app");
    let c = load(inner.to_str().unwrap(), &opts).unwrap();
    assert_eq!(c.declared_roots, vec![root]);
    assert!(c
        .warnings
        .iter()
        .any(|w| w.to_string().contains("inside store path")));
}

#[test]
fn invalid_store_paths_and_broken_nix_are_clear_errors() {
    if !nix_present() {
        return;
    }
    // Not in the store: reported before nix is asked.
    let e = load(
        "/nix/store/0000000000000000000000000000000g-nixcut-absent-1.0",
        &LoadOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, LoadError::Io { .. }), "{e}");
    assert!(e.to_string().contains("nixcut-absent-1.0"), "{e}");

    // A nix that cannot be run: the store database answers without it.
    let tmp = tempfile::tempdir().unwrap();
    let result = build(tmp.path());
    let opts = LoadOptions {
        nix: nixcut::load::NixCommand::new("/nonexistent/nix"),
        ..LoadOptions::default()
    };
    let c = load(result.to_str().unwrap(), &opts).unwrap();
    assert_eq!(c.paths.len(), 3);
    // Unless it is turned off.
    let opts = LoadOptions {
        no_store_db: true,
        ..opts
    };
    let e = load(result.to_str().unwrap(), &opts).unwrap_err();
    assert!(matches!(e, LoadError::NixMissing { .. }), "{e}");
}

/// Everything both loaders know about a path.
type FullFacts = BTreeMap<
    StorePath,
    (
        Option<u64>,
        Option<NarHash>,
        Vec<StorePath>,
        Option<StorePath>,
        Option<u64>,
        Vec<String>,
        Option<String>,
    ),
>;

fn full_facts(c: &Closure) -> FullFacts {
    c.paths
        .iter()
        .map(|(p, i)| {
            (
                p.clone(),
                (
                    i.nar_size,
                    i.nar_hash.clone(),
                    i.references.clone(),
                    i.deriver.clone(),
                    i.registration_time,
                    i.signatures.clone(),
                    i.ca.clone(),
                ),
            )
        })
        .collect()
}

/// The store database and `nix path-info` describe the ROCm world identically.
#[test]
fn store_database_and_nix_agree_on_the_world() {
    if !common::nix_or_skip("store_database_and_nix_agree_on_the_world") {
        return;
    }
    let w = common::rocm_world();
    // Through the database only: a nix that cannot run would fail the load.
    let db_opts = LoadOptions {
        nix: nixcut::load::NixCommand::new("/nonexistent/nix"),
        ..LoadOptions::default()
    };
    let db = load(&w.root, &db_opts).unwrap();
    let cli = load(
        &w.root,
        &LoadOptions {
            no_store_db: true,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    assert!(
        db.paths.len() > 10,
        "world too small: {:?}",
        db.paths.keys()
    );
    assert_eq!(full_facts(&db), full_facts(&cli));
    assert_eq!(
        (db.source, cli.source),
        (SourceKind::LiveStore, SourceKind::LiveStore)
    );
    assert_eq!(db.declared_roots, cli.declared_roots);
    assert_eq!(db.origin, cli.origin);
    assert_eq!(db.warnings, cli.warnings);
    assert!(db.paths.values().any(|i| i.deriver.is_some()));
    // Locally built: Nix says so where it says anything.
    for (p, i) in &cli.paths {
        if let Some(u) = i.ultimate {
            assert_eq!(db.paths[p].ultimate, Some(u), "{p}");
        }
        assert!(i.reported_closure_size.is_some(), "nix -S");
        assert_eq!(db.paths[p].reported_closure_size, None);
    }
}
