//! `nix/closure-check.nix` under real Nix (Debian's 2.8): the derivation builds when the
//! closure is within budget and fails, with nixcut's reasons in the log, when it is not.
//!
//! The cargo-built `nixcut` is put into the store (`nix-store --add` of a directory
//! holding `bin/nixcut`, stripped when `strip` is there) and passed in with
//! `builtins.storePath`. It is linked against the host's glibc, which is fine here
//! because these machines build with `sandbox = false` (`common::NIX_CONFIG`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::*;

/// The store path of a directory holding the binary under test as `bin/nixcut`.
fn nixcut_in_store() -> &'static str {
    static P: OnceLock<String> = OnceLock::new();
    P.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("nixcut");
        std::fs::create_dir_all(pkg.join("bin")).unwrap();
        let bin = pkg.join("bin/nixcut");
        let stripped = Command::new("strip")
            .arg("-o")
            .arg(&bin)
            .arg(env!("CARGO_BIN_EXE_nixcut"))
            .status()
            .is_ok_and(|s| s.success());
        if !stripped {
            std::fs::copy(env!("CARGO_BIN_EXE_nixcut"), &bin).unwrap();
        }
        nix_stdout("nix-store", &["--add", pkg.to_str().unwrap()])
            .trim()
            .to_string()
    })
}

/// A Nix file calling closure-check.nix on the ROCm test world.
fn harness(dir: &Path) -> PathBuf {
    let f = dir.join("gate.nix");
    let repo = repo();
    std::fs::write(
        &f,
        format!(
            r#"{{ nixcut, heavy ? false, maxSize ? null, baseline ? null, maxGrowth ? null,
   against ? null, maxRatio ? null }}:
import {repo}/nix/closure-check.nix {{
  nixcut = builtins.storePath nixcut;
  package = (import {repo}/tests/worlds/rocm.nix {{ inherit heavy; }}).llama-cpp-rocm;
  inherit maxSize baseline maxGrowth against maxRatio;
}}
"#,
            repo = repo.display()
        ),
    )
    .unwrap();
    f
}

/// `nix-build` the gate with extra arguments; (success, stdout, stderr).
fn build_gate(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = nix_cmd("nix-build")
        .arg(harness(dir))
        .args(["--argstr", "nixcut", nixcut_in_store(), "--no-out-link"])
        .args(args)
        .output()
        .expect("run nix-build");
    let (code, o, e) = decode(out);
    (code == 0, o, e)
}

#[test]
fn closure_check_nix_passes_within_budget_and_fails_over_it() {
    if !nix_or_skip("closure_check_nix_passes_within_budget_and_fails_over_it") {
        return;
    }
    let w = rocm_world();
    let sizes = nix_closure_sizes(&w.root);
    let size = sizes[&w.root];
    let dir = tempfile::tempdir().unwrap();

    // Pass: a generous budget. The output is the Markdown report.
    let generous = (size * 2).to_string();
    let (ok, out, err) = build_gate(dir.path(), &["--arg", "maxSize", &generous]);
    assert!(ok, "nix-build failed within budget:\n{err}");
    let report_path = out.trim();
    let report = std::fs::read_to_string(report_path).expect("the output is a file");
    assert!(
        report.contains("✅") && report.contains(&format!("in {} paths: pass", sizes.len())),
        "{report}"
    );
    eprintln!("pass: maxSize {generous} ≥ closure {size}: built {report_path}");

    // Fail: a budget below the closure. nix-build fails with nixcut's reasons.
    let tight = (size / 2).to_string();
    let (ok, _, err) = build_gate(dir.path(), &["--arg", "maxSize", &tight]);
    assert!(!ok, "nix-build passed over budget");
    assert!(
        err.contains("FAIL: closure of llama-cpp-rocm-0.0.0"),
        "{err}"
    );
    assert!(err.contains("over the --max-size limit"), "{err}");
    assert!(err.contains("failed with exit code 1"), "{err}");
    let line = err.lines().find(|l| l.contains("FAIL: closure")).unwrap();
    eprintln!("fail: maxSize {tight} < closure {size}:\n  {}", line.trim());
}

#[test]
fn closure_check_nix_gates_on_a_baseline() {
    if !nix_or_skip("closure_check_nix_gates_on_a_baseline") {
        return;
    }
    let w = rocm_world();
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("closure-baseline.json");
    let (code, _, err) = run(&["snapshot", &w.root, "-o", base.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");

    // The same world against its own baseline passes.
    let (ok, _, err) = build_gate(dir.path(), &["--arg", "baseline", base.to_str().unwrap()]);
    assert!(ok, "{err}");
    // The heavier world grows by 41%: fails with the default 5%, naming big-blob …
    let (ok, _, err) = build_gate(
        dir.path(),
        &[
            "--arg",
            "heavy",
            "true",
            "--arg",
            "baseline",
            base.to_str().unwrap(),
        ],
    );
    assert!(!ok, "the heavy world passed the baseline");
    assert!(
        err.contains("new since the baseline") && err.contains("big-blob-1.0"),
        "{err}"
    );
    let line = err.lines().find(|l| l.contains("FAIL: closure")).unwrap();
    eprintln!("heavy vs baseline:\n  {}", line.trim());
    // … and passes with maxGrowth = "50%".
    let (ok, _, err) = build_gate(
        dir.path(),
        &[
            "--arg",
            "heavy",
            "true",
            "--arg",
            "baseline",
            base.to_str().unwrap(),
            "--argstr",
            "maxGrowth",
            "50%",
        ],
    );
    assert!(ok, "{err}");
}

/// The CUDA-baseline recipe inside a Nix build: `against` (a `nix path-info --json -r`
/// file of the CUDA world) with `maxRatio`, failing at 1.5 (the ROCm world is about
/// 2.3 times the CUDA one) and passing at 3.
#[test]
fn closure_check_nix_gates_against_another_closure() {
    if !nix_or_skip("closure_check_nix_gates_against_another_closure") {
        return;
    }
    let cuda = cuda_world();
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("cuda-closure.json");
    let json = nix_stdout("nix", &["path-info", "--json", "-r", &cuda.root]);
    std::fs::write(&other, json).unwrap();
    let other = other.to_str().unwrap();
    let (ok, _, err) = build_gate(
        dir.path(),
        &["--arg", "against", other, "--arg", "maxRatio", "1.5"],
    );
    assert!(!ok, "the ROCm world passed at 1.5 times the CUDA one");
    assert!(err.contains("llama-cpp-cuda-0.0.0"), "{err}");
    let line = err.lines().find(|l| l.contains("FAIL: closure")).unwrap();
    eprintln!("rocm against cuda at 1.5:\n  {}", line.trim());
    let (ok, _, err) = build_gate(
        dir.path(),
        &["--arg", "against", other, "--arg", "maxRatio", "3"],
    );
    assert!(ok, "{err}");
}

/// `flake.nix` cannot be evaluated for real here (no nixpkgs), so evaluate its outputs
/// against a stand-in nixpkgs whose `callPackage` yields the binary under test: this
/// checks the flake's shape, `apps.default`, and that `lib.closureCheck` picks the
/// package's system and builds. Nothing of nixpkgs itself is exercised.
#[test]
fn flake_lib_closure_check_with_a_stand_in_nixpkgs() {
    if !nix_or_skip("flake_lib_closure_check_with_a_stand_in_nixpkgs") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("mock.nix");
    std::fs::write(
        &f,
        format!(
            r#"{{ nixcut, maxSize }}:
let
  flake = import {repo}/flake.nix;
  sys = builtins.currentSystem;
  drv = {{ outPath = builtins.storePath nixcut; name = "nixcut-0.1.0"; system = sys; }};
  pkgs = {{
    callPackage = path: args: drv;
    runCommand = name: env: cmd: {{ inherit name; }};
    rustfmt = null; clippy = null; cargo = null; rustc = null; rust-analyzer = null;
    rustPlatform.rustLibSrc = "/src";
    mkShell = a: {{ }};
  }};
  systems = [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ];
  nixpkgs = {{
    lib.genAttrs = names: f: builtins.listToAttrs (map (n: {{ name = n; value = f n; }}) names);
    legacyPackages = builtins.listToAttrs (map (n: {{ name = n; value = pkgs; }}) systems);
  }};
  self = flake.outputs {{ inherit self nixpkgs; }};
  world = import {repo}/tests/worlds/rocm.nix {{ }};
in
assert self.apps.${{sys}}.default.program == "${{drv}}/bin/nixcut";
self.lib.closureCheck {{ package = world.llama-cpp-rocm; inherit maxSize; }}
"#,
            repo = repo().display()
        ),
    )
    .unwrap();
    let build = |max: &str| {
        decode(
            nix_cmd("nix-build")
                .arg(&f)
                .args([
                    "--argstr",
                    "nixcut",
                    nixcut_in_store(),
                    "--argstr",
                    "maxSize",
                    max,
                ])
                .arg("--no-out-link")
                .output()
                .expect("run nix-build"),
        )
    };
    let (code, _, err) = build("1GiB");
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = build("1MiB");
    assert_ne!(code, 0);
    assert!(err.contains("over the --max-size limit 1.0 MiB"), "{err}");
}
