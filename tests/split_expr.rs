//! `nixcut split … --expr FILE` (issue 33): the split written into the package's own
//! expression as a unified diff. The rocm world's rocblas is split for llama-cpp-rocm
//! with `--expr` pointing at a copy of `tests/fixtures/split/rocblas/default.nix`; the
//! diff is applied with the real `patch -p1`, the result parsed by Nix and evaluated
//! with stand-ins for every argument, and compared with the overlay of the same report.

mod common;

use std::path::Path;
use std::process::Command;

use common::{json, nix_cmd, nix_or_skip, nixcut, repo, rocm_world, run};
use serde_json::Value;

/// Every formal without a default bound to a stand-in: `lib` with the functions the
/// fixtures call, `mkDerivation` returning its attribute set (through `finalAttrs:`),
/// anything else a set with an `outPath` that can be called, overridden
/// (`overrideAttrs` applies the overlay's function to no old attributes) and has a
/// `mkDerivation`.
const STAND_INS: &str = r#"
  lib = {
    optionals = c: l: if c then l else [ ];
    optional = c: x: if c then [ x ] else [ ];
    concatStringsSep = builtins.concatStringsSep;
  };
  mkDerivation = f: let a = if builtins.isFunction f then f a else f; in a;
  standIn = n: {
    name = n;
    outPath = "/stand-in/${n}";
    sitePackages = "lib/python3/site-packages";
    inherit mkDerivation;
    overrideAttrs = g: g { };
    __functor = self: _: self;
  };
  bind = n: if n == "lib" then lib else if n == "mkDerivation" then mkDerivation else standIn n;
  call = f:
    let fa = builtins.functionArgs f;
    in f (builtins.listToAttrs (map (n: { name = n; value = bind n; })
      (builtins.filter (n: !fa.${n}) (builtins.attrNames fa))));
  names = map (x: x.name or x);
"#;

/// `nix-instantiate --eval --strict --json` of `body` with [`STAND_INS`] in scope, in
/// `dir`.
fn eval(dir: &Path, body: &str) -> Value {
    let expr = format!("let {STAND_INS} in {body}");
    let out = nix_cmd("nix-instantiate")
        .args(["--eval", "--strict", "--json", "-E", &expr])
        .current_dir(dir)
        .output()
        .expect("run nix-instantiate");
    assert!(
        out.status.success(),
        "nix-instantiate --eval failed: {}\n{expr}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON from nix-instantiate")
}

/// What the checks compare of a package expression's derivation attributes.
fn derivation(dir: &Path, file: &str) -> Value {
    eval(
        dir,
        &format!(
            "let d = call (import {file}); in {{ inherit (d) pname version cmakeFlags; \
             outputs = d.outputs or [ \"out\" ]; postFixup = d.postFixup or \"\"; \
             nativeBuildInputs = names d.nativeBuildInputs; buildInputs = names d.buildInputs; }}"
        ),
    )
}

fn lines(s: &str) -> Vec<String> {
    s.lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Copy `tests/fixtures/split/NAME` into `dir/NAME`.
fn copy_fixture(dir: &Path, name: &str) {
    let to = dir.join(name);
    std::fs::create_dir_all(&to).expect("create the fixture copy");
    let from = repo().join("tests/fixtures/split").join(name);
    for e in std::fs::read_dir(&from).expect("read the fixture") {
        let e = e.expect("an entry");
        std::fs::copy(e.path(), to.join(e.file_name())).expect("copy the fixture");
    }
}

#[test]
fn rocblas_split_for_llama_patches_its_expression() {
    if !nix_or_skip("rocblas_split_for_llama_patches_its_expression") {
        return;
    }
    let w = rocm_world();
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    copy_fixture(dir, "rocblas");
    let out = nixcut()
        .args(["split", "rocblas", "--for", &w.root])
        .args(["--expr", "rocblas/default.nix", "--format", "json"])
        .current_dir(dir)
        .output()
        .expect("run nixcut");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(r["no_split"].is_null(), "{r}");
    assert_eq!(r["expression"]["file"], "rocblas/default.nix");
    let diff = r["expression"]["diff"].as_str().expect("a diff");
    assert!(
        diff.starts_with("--- a/rocblas/default.nix\n+++ b/rocblas/default.nix\n"),
        "{diff}"
    );
    let attributes = r["attributes"].as_str().expect("attributes");
    assert!(attributes.contains("outputs = [ "), "{attributes}");

    // The real patch(1), as a reviewer would apply it.
    std::fs::write(dir.join("split.patch"), diff).expect("write the diff");
    let patch = Command::new("patch")
        .args(["-p1", "--forward", "-i", "split.patch"])
        .current_dir(dir)
        .output()
        .expect("run patch");
    assert!(
        patch.status.success(),
        "patch -p1 failed: {}{}\n{diff}",
        String::from_utf8_lossy(&patch.stdout),
        String::from_utf8_lossy(&patch.stderr)
    );
    let parse = nix_cmd("nix-instantiate")
        .args(["--parse", "rocblas/default.nix"])
        .current_dir(dir)
        .output()
        .expect("run nix-instantiate");
    assert!(
        parse.status.success(),
        "the patched expression does not parse: {}",
        String::from_utf8_lossy(&parse.stderr)
    );

    // The overlay of the same report, evaluated with the same stand-ins.
    std::fs::write(dir.join("overlay.nix"), r["nix"].as_str().unwrap()).expect("write");
    let overlay = eval(
        dir,
        "let d = call (import ./overlay.nix); in { inherit (d) outputs postFixup; \
         nativeBuildInputs = names d.nativeBuildInputs; }",
    );
    copy_fixture(&dir.join("original"), "rocblas");
    let before = derivation(dir, "./original/rocblas/default.nix");
    let after = derivation(dir, "./rocblas/default.nix");

    let outputs: Vec<Value> = r["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].clone())
        .collect();
    assert_eq!(after["outputs"], Value::Array(outputs));
    assert_eq!(after["outputs"], overlay["outputs"]);
    let fixup = lines(after["postFixup"].as_str().unwrap());
    let wanted = lines(overlay["postFixup"].as_str().unwrap());
    assert!(!wanted.is_empty(), "{overlay}");
    for l in &wanted {
        assert!(fixup.contains(l), "postFixup lacks {l:?}:\n{fixup:#?}");
    }
    // nativeBuildInputs: the original list, then what the overlay adds.
    let mut natives = before["nativeBuildInputs"].as_array().unwrap().clone();
    natives.extend(
        overlay["nativeBuildInputs"]
            .as_array()
            .unwrap()
            .iter()
            .cloned(),
    );
    assert_eq!(after["nativeBuildInputs"], Value::Array(natives));
    for unchanged in ["pname", "version", "cmakeFlags", "buildInputs"] {
        assert_eq!(after[unchanged], before[unchanged], "{unchanged}");
    }
    assert_eq!(before["outputs"], serde_json::json!(["out"]));
}

/// Without `--expr` the table says which attributes to add; a file that is no package
/// expression is an error naming it and where, before any scanning.
#[test]
fn attributes_without_expr_and_errors_with_a_bad_file() {
    if !nix_or_skip("attributes_without_expr_and_errors_with_a_bad_file") {
        return;
    }
    let w = rocm_world();
    let (code, out, err) = run(&["split", "rocblas", "--for", &w.root]);
    assert_eq!(code, 0, "{err}");
    let label = "Attributes to add to the package's mkDerivation (no --expr given):";
    let at = out.find(label).unwrap_or_else(|| panic!("{out}"));
    let r = json(&["split", "rocblas", "--for", &w.root, "--format", "json"]);
    assert!(r["expression"].is_null(), "{r}");
    let attributes = r["attributes"].as_str().unwrap();
    assert!(out[at..].contains(attributes.lines().last().unwrap()));
    assert!(out[at..].contains("outputs = [ "), "{out}");

    let tmp = tempfile::tempdir().expect("temp dir");
    let bad = tmp.path().join("default.nix");
    std::fs::write(&bad, "{ lib }:\n\nlib.fix (self: { })\n").unwrap();
    let (code, _, err) = run(&[
        "split",
        "rocblas",
        "--for",
        &w.root,
        "--expr",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{}:3:1: no mkDerivation call", bad.display())),
        "{err}"
    );
    let (code, _, err) = run(&["split", "rocblas", "--expr", "/nonexistent/default.nix"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("cannot read /nonexistent/default.nix"),
        "{err}"
    );
}
