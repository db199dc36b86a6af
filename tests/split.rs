//! `nixcut split`: the prediction is checked by applying it. The proposed actions are
//! applied to the rocm world's rocblas in a real Nix rebuild (`tests/worlds/split/`:
//! a plain derivation with `outputs = [ … ]` whose builder runs the actions as the
//! nixpkgs verbs would), the consumer chain is rebuilt against the new outputs (copies
//! with the old hashes rewritten), and the real sizes and references are compared with
//! the report's.

mod common;

use std::collections::BTreeSet;

use common::{
    build_split_applied, closure_size, json, nix_cmd, nix_or_skip, nix_stdout, repo, rocm_world,
};
use serde_json::Value;

/// Build `attr` of the split world for the plan in `plan_file`.
fn build_applied(plan_file: &std::path::Path, attr: &str) -> String {
    build_split_applied(plan_file, &[], attr)
}

fn nar_size(path: &str) -> u64 {
    nix_stdout("nix-store", &["-q", "--size", path])
        .trim()
        .parse()
        .expect("nix-store -q --size prints a number")
}

fn references(path: &str) -> BTreeSet<String> {
    nix_stdout("nix-store", &["-q", "--references", path])
        .lines()
        .map(str::to_string)
        .collect()
}

/// The generated Nix code parses.
fn assert_nix_parses(report: &Value) {
    let code = report["nix"].as_str().expect("nix is a string");
    assert!(!code.is_empty(), "no Nix code in {report}");
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("split.nix");
    std::fs::write(&file, code).expect("write the Nix code");
    let out = nix_cmd("nix-instantiate")
        .arg("--parse")
        .arg(&file)
        .output()
        .expect("run nix-instantiate");
    assert!(
        out.status.success(),
        "the generated Nix code does not parse: {}\n{code}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Apply the plan, rebuild, compare: closure size within 1%, every output's NAR size
/// exactly, every output's references exactly.
fn check_by_rebuild(report: &Value) {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = dir.path().join("plan.json");
    std::fs::write(&plan, report.to_string()).expect("write the plan");
    check_outputs(report, &|name| {
        build_applied(&plan, &format!("rocblas.{name}"))
    });
    let consumer = build_applied(&plan, "llama-cpp-rocm");
    let real = closure_size(&consumer);
    let predicted = report["for"]["closure_size_after"].as_u64().expect("after");
    let diff = real.abs_diff(predicted) as f64 / real as f64;
    eprintln!("closure after: predicted {predicted} B, rebuilt {real} B");
    assert!(
        diff <= 0.01,
        "predicted {predicted} B, rebuilt consumer {consumer} has {real} B"
    );
    // The generated code itself under the stdenv model (issue 33): the same outputs,
    // the consumer's closure exactly the predicted one.
    let code = |attr: &str| common::build_split_code(dir.path(), report, &[], attr);
    check_outputs(report, &|name| code(&format!("rocblas.{name}")));
    let consumer = code("llama-cpp-rocm");
    let real = closure_size(&consumer);
    eprintln!("under the stdenv model: predicted {predicted} B, rebuilt {real} B");
    assert_eq!(real, predicted, "rebuilt consumer {consumer}");
    run_ok(&format!("{consumer}/bin/llama-server"), &[]);
}

/// `nixcut split rocblas --for <llama-cpp-rocm> EXTRA… --format json` in the rocm world.
fn rocblas_split(extra: &[&str]) -> Value {
    let w = rocm_world();
    let mut args = vec!["split", "rocblas", "--for", &w.root];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--format", "json"]);
    json(&args)
}

#[test]
fn rocblas_split_for_llama_matches_the_rebuild() {
    if !nix_or_skip("rocblas_split_for_llama_matches_the_rebuild") {
        return;
    }
    let w = rocm_world();
    let r = json(&["split", "rocblas", "--for", &w.root, "--format", "json"]);
    assert!(r["no_split"].is_null(), "{r}");
    let names: Vec<&str> = r["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["name"].as_str())
        .collect();
    assert_eq!(names, ["out", "bin", "dev", "doc"]);
    let actions = r["actions"].as_array().unwrap();
    let has = |kind: &str, field: &str, value: &str| {
        actions
            .iter()
            .any(|a| a["action"] == kind && a[field].as_str() == Some(value))
    };
    assert!(has(
        "delete",
        "path",
        "lib/rocblas/library/TensileManifest.txt"
    ));
    assert!(has("delete", "path", "share/rocblas/tensile-dangling"));
    assert!(has("remove-references", "target", w.path("tensile")));
    assert!(has("move", "path", "lib/cmake"));
    assert!(has("move", "path", "include"));
    // Its files move, never the whole nix-support directory (issue 21, point 5).
    assert!(!has("move", "path", "nix-support"));
    assert!(has("move", "path", "nix-support/propagated-build-inputs"));
    assert!(r["nix"].as_str().unwrap().contains("removeReferencesTo ]"));
    // The overlay leaves to stdenv what stdenv does (issue 33): no moveToOutput of a
    // directory its hooks move to the same output, no --replace-fail.
    let code = r["nix"].as_str().unwrap();
    for done in ["'include'", "'lib/cmake'", "'lib/pkgconfig'", "'share/doc'"] {
        assert!(
            !code.contains(&format!("moveToOutput {done}")),
            "{done}: {code}"
        );
    }
    assert!(!code.contains("--replace-fail"), "{code}");
    assert!(actions
        .iter()
        .all(|a| !a["because"].as_array().unwrap().is_empty()));
    let before = r["for"]["closure_size_before"].as_u64().unwrap();
    let after = r["for"]["closure_size_after"].as_u64().unwrap();
    assert!(after < before, "{before} -> {after}");
    assert_eq!(before, closure_size(&w.root));
    // pkg-config's `prefix=<rocblas>` names no sub-path: an assumption.
    assert!(r["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["file"] == "lib/pkgconfig/rocblas.pc" && a["output"] == "out"));
    assert_nix_parses(&r);
    check_by_rebuild(&r);
}

#[test]
fn rocblas_split_with_gpu_targets_matches_the_rebuild() {
    if !nix_or_skip("rocblas_split_with_gpu_targets_matches_the_rebuild") {
        return;
    }
    let w = rocm_world();
    let r = rocblas_split(&["--gpu-targets", "gfx1030"]);
    let archs = r["archs"].as_array().unwrap();
    let kept: Vec<&str> = archs
        .iter()
        .filter(|a| a["kept"] == true)
        .filter_map(|a| a["arch"].as_str())
        .collect();
    assert_eq!(kept, ["gfx1030"]);
    // The change a reviewer merges: rocblas built for gfx1030 (issue 33), the other
    // architectures not built (no output of their own, no rm in postFixup).
    assert!(archs
        .iter()
        .filter(|a| a["kept"] == false)
        .all(|a| a["output"] == ""));
    assert!(r["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|o| !o["name"].as_str().unwrap().starts_with("gfx")));
    let code = r["nix"].as_str().unwrap();
    assert!(
        code.contains("(rocblas.override { gpuTargets = [ \"gfx1030\" ]; }).overrideAttrs"),
        "{code}"
    );
    assert!(!code.contains("rm -r"), "{code}");
    assert!(r["actions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["action"] == "drop-gpu-arch" && a["arch"] == "gfx90a"));
    let all = json(&["split", "rocblas", "--for", &w.root, "--format", "json"]);
    assert!(
        r["for"]["closure_size_after"].as_u64() < all["for"]["closure_size_after"].as_u64(),
        "dropping architectures must shrink the closure"
    );
    assert_nix_parses(&r);
    check_by_rebuild(&r);
}

/// `--per-target-outputs`: the other architectures' files move to one output each
/// (nixpkgs' per-target packages), with remedies to find them again.
#[test]
fn rocblas_split_with_per_target_outputs_matches_the_rebuild() {
    if !nix_or_skip("rocblas_split_with_per_target_outputs_matches_the_rebuild") {
        return;
    }
    let r = rocblas_split(&["--gpu-targets", "gfx1030", "--per-target-outputs"]);
    let archs = r["archs"].as_array().unwrap();
    assert!(archs
        .iter()
        .filter(|a| a["kept"] == false)
        .all(|a| a["output"] == a["arch"]));
    assert!(r["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o["name"] == "gfx90a"));
    let remedies = r["remedies"].as_array().unwrap();
    assert!(!remedies.is_empty());
    assert!(remedies.iter().all(|m| m["options"][0]["nix"]
        .as_str()
        .is_some_and(|n| n.contains("gpuTargets = [ \"gfx1030\" ]"))));
    assert_nix_parses(&r);
    check_by_rebuild(&r);
}

#[test]
fn leaf_with_one_library_and_no_references_gets_no_split() {
    if !nix_or_skip("leaf_with_one_library_and_no_references_gets_no_split") {
        return;
    }
    let leaf = repo().join("tests/worlds/split/leaf.nix");
    let path = nix_stdout("nix-build", &[leaf.to_str().unwrap(), "--no-out-link"]);
    let r = json(&["split", path.trim(), "--format", "json"]);
    assert_eq!(r["no_split"]["reason"], "only-runtime-files", "{r}");
    assert_eq!(r["actions"].as_array().unwrap().len(), 0);
    assert_eq!(r["nix"], "");
    let outputs = r["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0]["size"].as_u64(), Some(nar_size(path.trim())));
}

#[test]
fn unused_runpath_is_set_without_it_and_dlopen_directories_stay() {
    if !nix_or_skip("unused_runpath_is_set_without_it_and_dlopen_directories_stay") {
        return;
    }
    let w = rocm_world();
    let r = json(&[
        "split",
        "rocm-runtime",
        "--for",
        &w.root,
        "--format",
        "json",
    ]);
    let shrink: Vec<&Value> = r["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["action"] == "shrink-rpath")
        .collect();
    assert_eq!(shrink.len(), 1, "{r}");
    let llvm = format!("{}/lib", w.path("rocm-llvm"));
    assert_eq!(shrink[0]["drop"], serde_json::json!([llvm]));
    assert!(!shrink[0]["kept"].as_str().unwrap().contains(&llvm));
    assert!(shrink[0]["kept"]
        .as_str()
        .unwrap()
        .contains(w.path("gcc-lib")));
    assert!(r["nix"].as_str().unwrap().contains("patchelf --set-rpath"));
    assert_nix_parses(&r);
    // Applied: patchelf rewrites the RUNPATH in place (same NAR size) and rocm-llvm is
    // no longer referenced.
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    std::fs::write(&plan, r.to_string()).unwrap();
    let expr = format!(
        "import {}/tests/worlds/split/split-package.nix {{ plan = {:?}; orig = (import {}/tests/worlds/rocm.nix {{ }}).rocm-runtime; }}",
        repo().display(),
        plan.display(),
        repo().display()
    );
    let built = nix_stdout("nix-build", &["-E", &expr, "--no-out-link"]);
    let built = built.trim();
    let out = &r["outputs"][0];
    assert_eq!(nar_size(built), out["size"].as_u64().unwrap());
    let predicted: BTreeSet<String> = out["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(references(built), predicted);
    assert!(!references(built).contains(w.path("rocm-llvm")));
    // clr's comgr directory supplies a library named for dlopen: never dropped.
    let r = json(&["split", "clr", "--for", &w.root, "--format", "json"]);
    let comgr = format!("{}/lib", w.path("rocm-comgr"));
    assert!(r["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["action"] == "shrink-rpath")
        .all(|a| !a["drop"].to_string().contains(&comgr)));
}

#[test]
fn every_format_renders_the_split() {
    if !nix_or_skip("every_format_renders_the_split") {
        return;
    }
    let w = rocm_world();
    for format in ["table", "markdown"] {
        let (code, out, err) =
            common::run(&["split", "rocblas", "--for", &w.root, "--format", format]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("moveToOutput 'bin' \"$bin\""),
            "{format}: {out}"
        );
        assert!(
            out.contains("stdenv moves share/doc to doc, include to dev"),
            "{format}: {out}"
        );
        assert!(
            out.contains("remove-references-to -t ${tensile}"),
            "{format}: {out}"
        );
    }
}

/// A real Debian ROCm library with its `-dev` package in one output, as nixpkgs had it
/// before splitting: `split` proposes `dev` with `lib/cmake` and `include`, and the
/// rebuild gives exactly the predicted sizes and references.
#[test]
fn debian_hipsparse_with_its_dev_package_gets_a_dev_output() {
    let test = "debian_hipsparse_with_its_dev_package_gets_a_dev_output";
    if !nix_or_skip(test) {
        return;
    }
    let Some(debs) = common::debian_debs(test, &["libhipsparse0", "libhipsparse-dev"]) else {
        return;
    };
    let world = repo().join("tests/worlds/split/hipsparse.nix");
    let world = world.to_str().unwrap();
    let debs = debs.to_str().unwrap();
    let path = nix_stdout(
        "nix-build",
        &[
            world,
            "--arg",
            "debs",
            debs,
            "-A",
            "hipsparse",
            "--no-out-link",
        ],
    );
    let r = json(&["split", path.trim(), "--format", "json"]);
    let dev = r["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "dev")
        .unwrap_or_else(|| panic!("no dev output: {r}"));
    let moved: Vec<&str> = dev["paths"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    assert!(
        moved.contains(&"lib/cmake") && moved.contains(&"include"),
        "{moved:?}"
    );
    assert_nix_parses(&r);
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    std::fs::write(&plan, r.to_string()).unwrap();
    let plan = plan.to_str().unwrap();
    check_outputs(&r, &|name| {
        let attr = format!("split.{name}");
        nix_stdout(
            "nix-build",
            &[
                world,
                "--arg",
                "debs",
                debs,
                "--argstr",
                "plan",
                plan,
                "-A",
                &attr,
                "--no-out-link",
            ],
        )
        .trim()
        .to_string()
    });
}

#[test]
fn a_package_outside_the_consumers_closure_is_an_error() {
    if !nix_or_skip("a_package_outside_the_consumers_closure_is_an_error") {
        return;
    }
    let w = rocm_world();
    let (code, _, err) =
        common::run(&["split", w.path("llama-cpp-rocm"), "--for", w.path("glibc")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not in the closure"), "{err}");
}

#[test]
fn a_closure_file_without_files_gets_no_split_for_lack_of_evidence() {
    // The shipped example is graph-level only: no files, so no evidence to split by.
    let ex = repo().join("examples/llama-cpp-rocm.json");
    let r = json(&[
        "split",
        "rocblas",
        "--for",
        ex.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(r["no_split"]["reason"], "files-unavailable", "{r}");
}

/// `why ROOT` gains a savings line: each suggestion's saving is what `split P --for
/// ROOT` predicts, and all of them together save at least as much as the largest.
#[test]
fn why_shows_what_every_safe_split_saves() {
    if !nix_or_skip("why_shows_what_every_safe_split_saves") {
        return;
    }
    let w = rocm_world();
    let why = json(&["why", &w.root, "--format", "json"]);
    let s = &why["savings"];
    let before = s["closure_size_before"].as_u64().unwrap();
    assert_eq!(before, why["closure_size"].as_u64().unwrap());
    let suggestions = s["suggestions"].as_array().unwrap();
    let rocblas = suggestions
        .iter()
        .find(|x| x["package"] == w.path("rocblas"))
        .unwrap_or_else(|| panic!("no rocblas suggestion: {s}"));
    let split = json(&[
        "split",
        w.path("rocblas"),
        "--for",
        &w.root,
        "--format",
        "json",
    ]);
    let f = &split["for"];
    assert_eq!(
        rocblas["saved"].as_u64().unwrap(),
        f["closure_size_before"].as_u64().unwrap() - f["closure_size_after"].as_u64().unwrap()
    );
    let largest = suggestions[0]["saved"].as_u64().unwrap();
    assert!(
        before - s["closure_size_after"].as_u64().unwrap() >= largest,
        "{s}"
    );
    let (code, table, err) = common::run(&["why", &w.root, "--top", "5"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        table.contains("after every safe split suggestion"),
        "{table}"
    );
}

/// `nix-build tests/worlds/cmake.nix ARGS… -A ATTR`: the store path, or the build log
/// when it fails.
fn build_cmake_world(plan: Option<&std::path::Path>, attr: &str) -> Result<String, String> {
    build_cmake_variant(false, plan, attr)
}

/// [`build_cmake_world`] for ember built with the cmake hook's install directories
/// (`fixed` false: the world's default) or without them (`fixed` true: ember-fixed).
fn build_cmake_variant(
    fixed: bool,
    plan: Option<&std::path::Path>,
    attr: &str,
) -> Result<String, String> {
    let world = repo().join("tests/worlds/cmake.nix");
    let mut c = nix_cmd("nix-build");
    c.arg(&world);
    if fixed {
        c.args(["--arg", "fixed", "true"]);
    }
    if let Some(p) = plan {
        c.arg("--argstr").arg("plan").arg(p);
    }
    let out = c
        .args(["-A", attr, "--no-out-link"])
        .output()
        .expect("run nix-build");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn cmake_or_skip(test: &str) -> bool {
    nix_or_skip(test)
        && common::tool_or_skip(test, "cmake", "cmake")
        && common::tool_or_skip(test, "pkg-config", "pkg-config")
}

/// Every output of an applied split has exactly the predicted NAR size and references;
/// returns output name → built path.
fn check_outputs(
    report: &Value,
    build: &dyn Fn(&str) -> String,
) -> std::collections::BTreeMap<String, String> {
    check_outputs_within(report, build, &[])
}

/// [`check_outputs`], where the outputs `loose` (build-only ones whose text the build
/// system writes differently once its install directories differ) may differ in size by
/// 1 %; their references are still exact.
fn check_outputs_within(
    report: &Value,
    build: &dyn Fn(&str) -> String,
    loose: &[&str],
) -> std::collections::BTreeMap<String, String> {
    let mut built = std::collections::BTreeMap::new();
    for o in report["outputs"].as_array().expect("outputs") {
        let name = o["name"].as_str().expect("output name");
        built.insert(name.to_string(), build(name));
    }
    for o in report["outputs"].as_array().expect("outputs") {
        let name = o["name"].as_str().expect("output name");
        let path = &built[name];
        let (real, predicted) = (nar_size(path), o["size"].as_u64().expect("size"));
        if loose.contains(&name) {
            eprintln!("output {name}: NAR size {real} B, predicted {predicted} B");
            assert!(
                real.abs_diff(predicted) as f64 / real as f64 <= 0.01,
                "NAR size of output {name} ({path}): {real} B, predicted {predicted} B"
            );
        } else {
            assert_eq!(real, predicted, "NAR size of output {name} ({path})");
        }
        let predicted: BTreeSet<String> = o["references"]
            .as_array()
            .expect("references")
            .iter()
            .map(|r| match r["output"].as_str() {
                Some(out) => built[out].clone(),
                None => r["path"].as_str().expect("path").to_string(),
            })
            .collect();
        assert_eq!(references(path), predicted, "references of output {name}");
    }
    built
}

/// The report's output names as a Nix list (`[ "out" "dev" ]`).
fn nix_output_list(report: &Value) -> String {
    let names: Vec<String> = report["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .map(|o| format!("\"{}\"", o["name"].as_str().expect("output name")))
        .collect();
    format!("[ {} ]", names.join(" "))
}

fn run_ok(program: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} exited {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Split the cmake world's ember for its consumer (with `extra` arguments; `fixed`:
/// ember built without the cmake hook's install directories), and rebuild it twice
/// with real Nix, checking everything that uses it each time:
///
/// - the report's actions applied to a copy (split/split-package.nix): exact sizes and
///   references, the consumer runs each of `variants` and its closure is the predicted
///   one within 1 %, the CMake and pkg-config users build against dev alone and run;
/// - the generated code applied to ember built with the stdenv model (stdenv/: nixpkgs'
///   phases, multiple-outputs hooks and cmake hook): the same, the consumer's closure
///   exactly the predicted one. With the hook's directories, CMake writes dev's
///   emberConfig.cmake with an absolute include directory where the single-output build
///   had one relative to its prefix: dev's size may differ (1 %), nothing else.
///
/// Returns the report.
fn check_cmake_split(extra: &[&str], variants: &[&str], fixed: bool) -> Value {
    let build = |plan: Option<&std::path::Path>, attr: &str| build_cmake_variant(fixed, plan, attr);
    let ember = build(None, "ember").expect("build ember");
    let app = build(None, "ember-app").expect("build ember-app");
    let mut args = vec!["split", &ember, "--for", &app, "--format", "json"];
    args.extend_from_slice(extra);
    let r = json(&args);
    assert!(r["no_split"].is_null(), "{r}");
    // libember.so's RUNPATH names its own lib/ (CMAKE_INSTALL_RPATH): it stays in `out`,
    // so dropping that entry would change no closure and is not proposed (issue 33).
    assert!(
        r["actions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["action"] != "shrink-rpath"),
        "{r}"
    );
    let rewrites: Vec<(String, String, String)> = r["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["action"] == "rewrite")
        .map(|a| {
            (
                a["file"].as_str().unwrap().to_string(),
                a["from"].as_str().unwrap().to_string(),
                a["to"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let release = "lib/cmake/ember/emberTargets-release.cmake";
    let wanted: Vec<(&str, &str, &str)> = if fixed {
        vec![
            (
                release,
                "${_IMPORT_PREFIX}/lib/libember.so.2.1.0",
                "$out/lib/libember.so.2.1.0",
            ),
            (
                release,
                "${_IMPORT_PREFIX}/lib/libember.a",
                "$static/lib/libember.a",
            ),
            (
                release,
                "${_IMPORT_PREFIX}/bin/ember-tool",
                "$bin/bin/ember-tool",
            ),
        ]
    } else {
        // Absolute paths (the hook's directories): the package's own paths moved.
        vec![
            (release, "$out/lib/libember.a", "$static/lib/libember.a"),
            (release, "$out/bin/ember-tool", "$bin/bin/ember-tool"),
            (
                "lib/cmake/ember/emberTargets.cmake",
                "$out/include",
                "$dev/include",
            ),
        ]
    };
    for (file, from, to) in wanted {
        assert!(
            rewrites.contains(&(file.into(), from.into(), to.into())),
            "no rewrite {from} -> {to}: {rewrites:?}"
        );
    }
    assert!(rewrites.contains(&(
        "lib/pkgconfig/ember.pc".into(),
        "${prefix}/include".into(),
        "$dev/include".into()
    )));
    // Headers stay beside the CMake files: no rewrite names them.
    assert!(!rewrites
        .iter()
        .any(|(_, f, _)| f.ends_with("/include") && f.starts_with("${_IMPORT_PREFIX}")));
    // The code leaves to stdenv what stdenv does (issue 33): the moves of include,
    // lib/cmake and lib/pkgconfig to dev and the .pc file's includedir; it replaces
    // quietly (a build that used the hook's directories already names the outputs).
    let code = r["nix"].as_str().unwrap();
    for done in ["'include'", "'lib/cmake'", "'lib/pkgconfig'", "ember.pc'"] {
        assert!(!code.contains(done), "{done} in {code}");
    }
    assert!(!code.contains("--replace-fail"), "{code}");
    assert!(code.contains("stdenv moves include to dev"), "{code}");
    assert_eq!(
        code.contains("remove-references-to"),
        code.contains("removeReferencesTo ]"),
        "{code}"
    );
    assert_nix_parses(&r);

    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    std::fs::write(&plan, r.to_string()).unwrap();
    let built = check_outputs(&r, &|name| {
        build(Some(&plan), &format!("split.{name}")).unwrap_or_else(|e| panic!("{e}"))
    });
    let dev = &built["dev"];
    let propagated = std::fs::read_to_string(format!("{dev}/nix-support/propagated-build-inputs"))
        .expect("dev propagates the outputs it needs");
    assert!(propagated.contains(&built["out"]), "{propagated}");

    let consumer = build(Some(&plan), "app").unwrap_or_else(|e| panic!("{e}"));
    for v in variants {
        let out = run_ok(&format!("{consumer}/bin/ember-app"), &[v]);
        assert!(out.starts_with(v), "{out}");
    }
    let real = closure_size(&consumer);
    let predicted = r["for"]["closure_size_after"].as_u64().unwrap();
    eprintln!("ember split {extra:?}: closure predicted {predicted} B, rebuilt {real} B");
    assert!(
        real.abs_diff(predicted) as f64 / real as f64 <= 0.01,
        "predicted {predicted} B, rebuilt consumer {consumer} has {real} B"
    );
    for user in ["cmake", "pkgconfig"] {
        let p = build(Some(&plan), &format!("users.{user}"))
            .unwrap_or_else(|e| panic!("the {user} user does not build against dev: {e}"));
        let out = run_ok(&format!("{p}/bin/user"), &[]);
        assert_eq!(out.trim(), "ember user ok");
    }
    // The generated Nix code itself, applied to ember built with the stdenv model.
    let code_file = dir.path().join("split.nix");
    std::fs::write(&code_file, code).unwrap();
    let build_code = |attr: &str| -> String {
        let world = repo().join("tests/worlds/cmake.nix");
        let mut args = vec![world.to_str().unwrap().to_string()];
        if fixed {
            args.extend(["--arg", "fixed", "true"].map(String::from));
        }
        args.extend(
            [
                "--arg",
                "code",
                code_file.to_str().unwrap(),
                "-A",
                attr,
                "--no-out-link",
            ]
            .map(String::from),
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        nix_stdout("nix-build", &args).trim().to_string()
    };
    let loose: &[&str] = if fixed { &[] } else { &["dev"] };
    let built = check_outputs_within(&r, &|name| build_code(&format!("code.{name}")), loose);
    let propagated = std::fs::read_to_string(format!(
        "{}/nix-support/propagated-build-inputs",
        built["dev"]
    ))
    .expect("stdenv's _multioutPropagateDev wrote dev's propagated-build-inputs");
    assert!(propagated.contains(&built["out"]), "{propagated}");
    for user in ["cmake", "pkgconfig"] {
        let p = build_code(&format!("code-users.{user}"));
        assert_eq!(
            run_ok(&format!("{p}/bin/user"), &[]).trim(),
            "ember user ok"
        );
    }
    let consumer = build_code("code-app");
    for v in variants {
        let out = run_ok(&format!("{consumer}/bin/ember-app"), &[v]);
        assert!(out.starts_with(v), "{out}");
    }
    let real = closure_size(&consumer);
    eprintln!("ember split {extra:?} under the stdenv model: closure predicted {predicted} B, rebuilt {real} B");
    assert_eq!(real, predicted, "rebuilt consumer {consumer}");
    r
}

/// issue 21: a CMake library split into out/bin/dev/static keeps its CMake and
/// pkg-config users building, its consumer running, and the predicted closure.
#[test]
fn cmake_library_split_keeps_every_user_building_and_running() {
    let test = "cmake_library_split_keeps_every_user_building_and_running";
    if !cmake_or_skip(test) {
        return;
    }
    let r = check_cmake_split(&[], &["gfx1030", "gfx90a"], false);
    let names: Vec<&str> = r["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["name"].as_str())
        .collect();
    assert_eq!(names, ["out", "bin", "dev", "static"]);
    // The HTML page shows the code with its line breaks, not `\x0a`.
    let ember = build_cmake_world(None, "ember").unwrap();
    let (code, html, err) = common::run(&["split", &ember, "--format", "html"]);
    assert_eq!(code, 0, "{err}");
    let pre = html
        .split("<h2>Nix</h2><pre>")
        .nth(1)
        .expect("a Nix section");
    let pre = pre.split("</pre>").next().unwrap();
    assert!(!pre.contains("\\x0a"), "{pre}");
    assert!(pre.contains("\n    moveToOutput"), "{pre}");
}

#[test]
fn cmake_library_split_with_gpu_targets_keeps_every_user_building() {
    let test = "cmake_library_split_with_gpu_targets_keeps_every_user_building";
    if !cmake_or_skip(test) {
        return;
    }
    let r = check_cmake_split(&["--gpu-targets", "gfx1030"], &["gfx1030"], false);
    assert!(r["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|o| o["name"] != "gfx90a"));
    let code = r["nix"].as_str().unwrap();
    assert!(
        code.contains("(ember.override { gpuTargets = [ \"gfx1030\" ]; }).overrideAttrs"),
        "{code}"
    );
}

/// ember built without the cmake hook's install directories (relative DESTINATIONs:
/// CMake's `${_IMPORT_PREFIX}` paths) splits the same way under the stdenv model, its
/// rewrites done by the code since the build did not name the outputs itself.
#[test]
fn cmake_library_built_without_the_hook_directories_splits_too() {
    let test = "cmake_library_built_without_the_hook_directories_splits_too";
    if !cmake_or_skip(test) {
        return;
    }
    check_cmake_split(&[], &["gfx1030", "gfx90a"], true);
}

/// The check can fail: the same split without its rewrites breaks the CMake user (the
/// imported targets name `${_IMPORT_PREFIX}/lib/libember.so.2.1.0`, and `_IMPORT_PREFIX`
/// is now the dev output) and the pkg-config user (`includedir=${prefix}/include`).
#[test]
fn cmake_library_split_without_the_rewrites_breaks_its_users() {
    let test = "cmake_library_split_without_the_rewrites_breaks_its_users";
    if !cmake_or_skip(test) {
        return;
    }
    let ember = build_cmake_variant(true, None, "ember").expect("build ember");
    let mut r = json(&["split", &ember, "--format", "json"]);
    let actions = r["actions"].as_array_mut().unwrap();
    let before = actions.len();
    actions.retain(|a| a["action"] != "rewrite");
    assert!(actions.len() < before, "the split has rewrites to drop");
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    std::fs::write(&plan, r.to_string()).unwrap();
    let err = build_cmake_variant(true, Some(&plan), "users.cmake")
        .expect_err("the CMake user must not build without the rewrites");
    assert!(err.contains("libember.so.2.1.0"), "{err}");
    let err = build_cmake_variant(true, Some(&plan), "users.pkgconfig")
        .expect_err("the pkg-config user must not build without the rewrites");
    assert!(err.contains("ember.h"), "{err}");
}

/// The hostile-names world (tests/worlds/split/hostile-names.nix): its package, the
/// split report and the generated code written to `dir`.
fn hostile_split(dir: &std::path::Path) -> (String, Value, String) {
    let world = repo().join("tests/worlds/split/hostile-names.nix");
    let world = world.to_str().unwrap().to_string();
    let pkg = nix_stdout("nix-build", &[&world, "-A", "pkg", "--no-out-link"]);
    let r = json(&["split", pkg.trim(), "--format", "json"]);
    let file = dir.join("split.nix");
    std::fs::write(&file, r["nix"].as_str().unwrap()).unwrap();
    (world, r, file.to_str().unwrap().to_string())
}

/// issue 19, item 5: file names holding antiquotations (`${builtins.trace …}`, also
/// after a quote, and three quotes) are text in the generated code: evaluating it
/// (`nix-instantiate --eval`) fires no `builtins.trace`.
#[test]
fn hostile_file_names_evaluate_to_nothing_attacker_controlled() {
    let test = "hostile_file_names_evaluate_to_nothing_attacker_controlled";
    if !nix_or_skip(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (world, r, file) = hostile_split(dir.path());
    assert_nix_parses(&r);
    let eval = nix_cmd("nix-instantiate")
        .args([
            "--eval",
            "--strict",
            "--json",
            &world,
            "--arg",
            "code",
            &file,
            "-A",
            "postFixup",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&eval.stderr);
    assert!(eval.status.success(), "{err}");
    assert!(!err.contains("trace"), "a file name was evaluated: {err}");
    // What the shell gets names every hostile file literally.
    let script: String = serde_json::from_slice(&eval.stdout).expect("a Nix string");
    assert!(
        script.contains(r#"'lib/${builtins.trace "antiquotation in a name" "x"}.a'"#),
        "{script}"
    );
}

/// issue 19, item 6 (and item 5's shell half): applied with bash and nixpkgs' verbs
/// (whose `moveToOutput` word-splits and globs its pattern), the code runs no command
/// from a name and gives exactly the predicted outputs: `libfoo.so .a` moves alone,
/// the runtime `libfoo.so` stays in out, `star*.a` does not take `starry.a` along.
#[test]
fn hostile_file_names_move_exactly_the_predicted_files() {
    let test = "hostile_file_names_move_exactly_the_predicted_files";
    if !nix_or_skip(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (world, r, file) = hostile_split(dir.path());
    assert_eq!(nix_output_list(&r), r#"[ "out" "static" ]"#);
    let built = check_outputs(&r, &|name| {
        nix_stdout(
            "nix-build",
            &[
                &world,
                "--arg",
                "code",
                &file,
                "-A",
                &format!("applied.{name}"),
                "--no-out-link",
            ],
        )
        .trim()
        .to_string()
    });
    let out = std::path::Path::new(&built["out"]);
    assert!(out.join("lib/libfoo.so").exists(), "libfoo.so left out");
    let statics = std::path::Path::new(&built["static"]);
    let moved = r["outputs"][1]["paths"].as_array().unwrap();
    assert_eq!(moved.len(), 19, "{moved:?}");
    for m in moved {
        let p = m.as_str().unwrap();
        assert!(
            statics.join(p).symlink_metadata().is_ok(),
            "{p:?} is not in static"
        );
        assert!(
            out.join(p).symlink_metadata().is_err(),
            "{p:?} is still in out"
        );
    }
}

/// issue 19, item 13 (split's part): no generated line holds a CR, another control
/// character, a bidi override or isolate, or a zero-width character, whatever the file
/// names hold.
#[test]
fn hostile_file_names_put_no_hidden_character_in_a_generated_line() {
    let test = "hostile_file_names_put_no_hidden_character_in_a_generated_line";
    if !nix_or_skip(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_, r, _) = hostile_split(dir.path());
    let code = r["nix"].as_str().unwrap();
    for (n, line) in code.lines().enumerate() {
        let bad: Vec<char> = line
            .chars()
            .filter(|c| {
                c.is_control()
                    || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
            })
            .collect();
        assert!(bad.is_empty(), "line {} holds {bad:?}: {line:?}", n + 1);
    }
    assert!(code.contains(r"$'lib/bidi\xe2\x80\xaeevil.a'"), "{code}");
}

/// A small world of tests/worlds/split/ (`world`: its file name): build `attr`, split
/// it, apply the report's actions (the world's `split` attribute) and check every
/// output's size and references. Returns the report and the built outputs.
fn split_small_world(
    world: &str,
    attr: &str,
) -> (Value, std::collections::BTreeMap<String, String>) {
    let world = repo().join("tests/worlds/split").join(world);
    let world = world.to_str().unwrap();
    let orig = nix_stdout("nix-build", &[world, "-A", attr, "--no-out-link"]);
    let r = json(&["split", orig.trim(), "--format", "json"]);
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    std::fs::write(&plan, r.to_string()).unwrap();
    let plan = plan.to_str().unwrap();
    let built = check_outputs(&r, &|name| {
        nix_stdout(
            "nix-build",
            &[
                world,
                "--argstr",
                "plan",
                plan,
                "-A",
                &format!("split.{name}"),
                "--no-out-link",
            ],
        )
        .trim()
        .to_string()
    });
    // The generated code applied under the stdenv model (issue 33): the same outputs.
    let code = dir.path().join("split.nix");
    std::fs::write(&code, r["nix"].as_str().unwrap()).unwrap();
    let paths = dir.path().join("paths.json");
    std::fs::write(&paths, common::code_paths(&r)).unwrap();
    let apply = repo().join("tests/worlds/split/apply-code.nix");
    check_outputs(&r, &|name| {
        let expr = format!(
            "(import {} {{ code = {}; orig = (import {world} {{ }}).{attr}; paths = builtins.readFile {}; }}).applied.{name}",
            apply.display(),
            code.display(),
            paths.display(),
        );
        nix_stdout("nix-build", &["-E", &expr, "--no-out-link"])
            .trim()
            .to_string()
    });
    (r, built)
}

/// issue 20, point 1: a library with both DT_RPATH and DT_RUNPATH. The DT_RPATH the
/// loader ignores is cut with remove-references-to (`patchelf --set-rpath` rewrites
/// only the DT_RUNPATH, and the edit used to drop the hit's detail text, which names no
/// directory); the rebuilt library has exactly the predicted size and references and
/// still loads.
#[test]
fn a_shadowed_rpath_is_cut_as_predicted() {
    let test = "a_shadowed_rpath_is_cut_as_predicted";
    if !nix_or_skip(test) {
        return;
    }
    let (r, built) = split_small_world("shadowed.nix", "shadowed");
    let because = r["actions"][0]["because"][0]["detail"].as_str().unwrap();
    assert!(
        because.ends_with("(DT_RPATH, ignored because DT_RUNPATH is present)"),
        "the JSON detail text is unchanged: {because}"
    );
    let so = format!("{}/lib/libshadowed.so", built["out"]);
    run_ok(
        "python3",
        &["-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", &so],
    );
    assert!(
        !references(&built["out"])
            .iter()
            .any(|p| p.ends_with("-gcc-12.2.0-lib")),
        "the shadowed DT_RPATH's reference is gone"
    );
}

/// issue 21, point 2: a package whose bin program names dev (`cyc-config` prints its
/// include directory) and whose dev CMake file names bin gets no cyclic proposal: the
/// report names both files, the proposed outputs' references form no cycle, and real
/// Nix (which refuses cycles between outputs) builds every output as predicted.
#[test]
fn a_split_that_would_make_a_cycle_between_outputs_is_not_proposed() {
    let test = "a_split_that_would_make_a_cycle_between_outputs_is_not_proposed";
    if !nix_or_skip(test) {
        return;
    }
    let (r, built) = split_small_world("cyclic.nix", "cyclic");
    let warning = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .find(|w| w.contains("cycle"))
        .unwrap_or_else(|| panic!("no cycle named: {r}"));
    assert!(
        warning.contains("bin/cyc-config") && warning.contains("lib/cmake/cyc/cycTargets.cmake"),
        "{warning}"
    );
    // The outputs' references to each other form no cycle.
    let edges: Vec<(String, String)> = r["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|o| {
            let from = o["name"].as_str().unwrap().to_string();
            o["references"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(move |x| x["output"].as_str().map(|t| (from.clone(), t.to_string())))
        })
        .filter(|(a, b)| a != b)
        .collect();
    for (a, b) in &edges {
        assert!(
            !edges.iter().any(|(c, d)| c == b && d == a),
            "{a} and {b} refer to each other: {edges:?}"
        );
    }
    assert_nix_parses(&r);
    let config = run_ok(&format!("{}/bin/cyc-config", built["dev"]), &[]);
    assert_eq!(config.trim(), format!("-I{}/include", built["dev"]));
}

/// issue 19, item 7: a RUNPATH directory a program needs for `dlopen("%s_dri.so")`
/// supplies no DT_NEEDED library, yet it is kept (the report says why), and the
/// rebuilt program still loads its driver.
#[test]
fn a_runpath_directory_used_through_a_dlopen_pattern_is_kept() {
    let test = "a_runpath_directory_used_through_a_dlopen_pattern_is_kept";
    if !nix_or_skip(test) {
        return;
    }
    let (r, built) = split_small_world("dri.nix", "loader");
    let drivers = nix_stdout(
        "nix-build",
        &[
            repo().join("tests/worlds/split/dri.nix").to_str().unwrap(),
            "-A",
            "drivers",
            "--no-out-link",
        ],
    );
    assert!(
        !r["actions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["action"] == "shrink-rpath"),
        "{r}"
    );
    assert!(r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("%s_dri.so")));
    assert!(references(&built["bin"]).contains(drivers.trim()));
    let out = run_ok(&format!("{}/bin/dri-loader", built["bin"]), &[]);
    assert_eq!(out.trim(), "driver loaded");
}

/// issue 19, item 7: a wrapper that execs its package's own helper by absolute path
/// (`$out/libexec/greet-helper`) names the bin output after both move there (a
/// rewrite), and the rebuilt wrapper runs the helper.
#[test]
fn a_wrapper_naming_its_own_helper_follows_it_to_the_bin_output() {
    let test = "a_wrapper_naming_its_own_helper_follows_it_to_the_bin_output";
    if !nix_or_skip(test) {
        return;
    }
    let (r, built) = split_small_world("wrapper.nix", "wrapper");
    assert!(
        r["actions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["action"] == "rewrite"
                && a["file"] == "bin/greet"
                && a["from"] == "$out/libexec/greet-helper"
                && a["to"] == "$bin/libexec/greet-helper"),
        "{r}"
    );
    let out = run_ok(&format!("{}/bin/greet", built["bin"]), &[]);
    assert_eq!(out.trim(), "hello from the helper");
}

/// issue 21, point 6: `split ROOT --for ROOT` keeps the output holding what ROOT runs
/// in the prediction (it predicted a 96-byte closure by moving ROOT's program away).
#[test]
fn a_root_split_for_itself_still_needs_its_program() {
    let test = "a_root_split_for_itself_still_needs_its_program";
    if !cmake_or_skip(test) {
        return;
    }
    let app = build_cmake_world(None, "ember-app").expect("build ember-app");
    let r = json(&["split", &app, "--for", &app, "--format", "json"]);
    let needed = &r["for"]["outputs_needed"];
    assert_eq!(needed, &serde_json::json!(["out", "bin"]), "{r}");
    let after = r["for"]["closure_size_after"].as_u64().unwrap();
    assert!(after > nar_size(&app), "{after} B cannot hold the program");
}

/// issue 21, point 4: a consumer that opens what moved to a build-only output (a JIT
/// handing `<ember>/include` to its compiler) is told so: the warning names its file
/// and the path, and the prediction keeps dev in its closure.
#[test]
fn a_consumer_reaching_into_dev_is_named() {
    let test = "a_consumer_reaching_into_dev_is_named";
    if !cmake_or_skip(test) {
        return;
    }
    let ember = build_cmake_world(None, "ember").expect("build ember");
    let jit = build_cmake_world(None, "ember-jit").expect("build ember-jit");
    let r = json(&["split", &ember, "--for", &jit, "--format", "json"]);
    assert!(r["for"]["outputs_needed"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("dev")));
    let warnings: Vec<&str> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.contains("still needs output"))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("output dev") && warnings[0].contains("bin/ember-jit names include"),
        "{warnings:?}"
    );
    // The consumer of the other tests reaches nothing there: no such warning.
    let app = build_cmake_world(None, "ember-app").expect("build ember-app");
    let r = json(&["split", &ember, "--for", &app, "--format", "json"]);
    assert!(!r.to_string().contains("still needs output"), "{r}");
}

/// The names of tests/worlds/split/quoted_names.py: (name, as its `.pc` files write it,
/// as its CMake file writes it).
const QUOTED_NAMES: [(&str, &str, &str); 4] = [
    ("foo'x", "foo'x", "foo'x"),
    ("foo$out", "foo$out", "foo$out"),
    ("foo${x}", "foo$${x}", "foo\\${x}"),
    ("foo`x", "foo`x", "foo`x"),
];

/// issue 31, item 9: include directories and archives named `foo'x`, `foo$out`,
/// `foo${x}` and ``foo`x`` got no pkg-config, CMake or `bin/q-config` rewrite (the path
/// was read only up to the quote, `$` or backtick, which names nothing), so after the
/// moves the dev files named files that were gone. Every rewrite is made; the generated
/// code evaluates to inert text; applied with real Nix it gives the predicted outputs,
/// and pkg-config, CMake and the script all name files that exist.
#[test]
fn quoted_names_in_dev_files_are_rewritten_and_resolve_after_the_split() {
    let test = "quoted_names_in_dev_files_are_rewritten_and_resolve_after_the_split";
    if !cmake_or_skip(test) {
        return;
    }
    let world = repo().join("tests/worlds/split/quoted-names.nix");
    let world = world.to_str().unwrap();
    let pkg = nix_stdout("nix-build", &[world, "-A", "pkg", "--no-out-link"]);
    let r = json(&["split", pkg.trim(), "--format", "json"]);
    assert!(r["no_split"].is_null(), "{r}");
    let rewrites: BTreeSet<(String, String, String)> = r["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["action"] == "rewrite")
        .map(|a| {
            let s = |k: &str| a[k].as_str().unwrap().to_string();
            (s("file"), s("from"), s("to"))
        })
        .collect();
    for (i, (name, pc, cmake)) in QUOTED_NAMES.iter().enumerate() {
        for want in [
            (
                format!("lib/pkgconfig/q{i}.pc"),
                format!("${{prefix}}/include/{pc}"),
                format!("$dev/include/{pc}"),
            ),
            (
                "lib/cmake/q/qTargets.cmake".to_string(),
                format!("${{_IMPORT_PREFIX}}/lib/lib{cmake}.a"),
                format!("$static/lib/lib{cmake}.a"),
            ),
            (
                "bin/q-config".to_string(),
                format!("$out/include/{name}"),
                format!("$dev/include/{name}"),
            ),
        ] {
            assert!(
                rewrites.contains(&want),
                "no rewrite {want:?}: {rewrites:?}"
            );
        }
    }
    assert_nix_parses(&r);
    let dir = tempfile::tempdir().unwrap();
    let code = dir.path().join("split.nix");
    std::fs::write(&code, r["nix"].as_str().unwrap()).unwrap();
    let code = code.to_str().unwrap();
    // Evaluated, the code is the shell text that names each file literally.
    let script: String = serde_json::from_str(&nix_stdout(
        "nix-instantiate",
        &[
            "--eval",
            "--strict",
            "--json",
            world,
            "--arg",
            "code",
            code,
            "-A",
            "postFixup",
        ],
    ))
    .expect("a Nix string");
    for line in [
        r#"--replace-quiet '${_IMPORT_PREFIX}/lib/libfoo\${x}.a' "$static"'/lib/libfoo\${x}.a'"#,
        r#"--replace-quiet "$out"'/include/foo'\''x' "$dev"'/include/foo'\''x'"#,
        r#"--replace-quiet "$out"'/include/foo`x' "$dev"'/include/foo`x'"#,
    ] {
        assert!(script.contains(line), "{line} not in {script}");
    }
    // The .pc files' includedir=${prefix}… is stdenv's own patch (_multioutDevs).
    assert!(!script.contains("lib/pkgconfig/"), "{script}");
    let built = check_outputs(&r, &|name| {
        nix_stdout(
            "nix-build",
            &[
                world,
                "--arg",
                "code",
                code,
                "-A",
                &format!("applied.{name}"),
                "--no-out-link",
            ],
        )
        .trim()
        .to_string()
    });
    let dev = std::path::Path::new(&built["dev"]);
    let header_in = |d: &str| {
        let h = std::path::Path::new(d.trim()).join("q.h");
        assert!(
            h.starts_with(dev) && h.is_file(),
            "{} is not a header in dev",
            h.display()
        );
    };
    // The script prints each include directory.
    let config = built
        .values()
        .map(|o| std::path::Path::new(o).join("bin/q-config"))
        .find(|p| p.is_file())
        .expect("bin/q-config in an output");
    let printed = run_ok(config.to_str().unwrap(), &[]);
    assert_eq!(printed.lines().count(), 4, "{printed}");
    printed.lines().for_each(header_in);
    // pkg-config reads each includedir (pkgconf cannot write `${` in a value: that
    // file's new text is checked instead).
    for i in [0, 1, 3] {
        let out = std::process::Command::new("pkg-config")
            .args(["--variable=includedir", &format!("q{i}")])
            .env("PKG_CONFIG_PATH", dev.join("lib/pkgconfig"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        header_in(&String::from_utf8_lossy(&out.stdout));
    }
    let q2 = std::fs::read_to_string(dev.join("lib/pkgconfig/q2.pc")).unwrap();
    assert!(
        q2.contains(&format!(
            "includedir={}/include/foo$${{x}}\n",
            dev.display()
        )),
        "{q2}"
    );
    // CMake, computing its prefix from the file's place in dev, finds every archive in
    // static and every include directory.
    let check = dir.path().join("check.cmake");
    std::fs::write(
        &check,
        r#"include("${F}")
foreach(v Q_LIB_0 Q_LIB_1 Q_LIB_2 Q_LIB_3)
  if(NOT EXISTS "${${v}}")
    message(FATAL_ERROR "${v}: ${${v}} does not exist")
  endif()
  message(STATUS "${${v}}")
endforeach()
foreach(d IN LISTS Q_INCLUDE_DIRS)
  if(NOT EXISTS "${d}/q.h")
    message(FATAL_ERROR "no ${d}/q.h")
  endif()
endforeach()
"#,
    )
    .unwrap();
    let targets = dev.join("lib/cmake/q/qTargets.cmake");
    let out = std::process::Command::new("cmake")
        .arg(format!("-DF={}", targets.display()))
        .arg("-P")
        .arg(&check)
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert_eq!(said.matches(built["static"].as_str()).count(), 4, "{said}");
}

/// issue 33: the autotools-like world (tests/worlds/split/autotools.nix: a configure
/// script and a Makefile that write the configured directories, absolute, into the .pc
/// file and spark-config), built with the stdenv model, so the split build gets stdenv's
/// configure flags. The generated code gives exactly the predicted outputs; stdenv's
/// moves are not written; the rewrites are quiet (the configure flags already name dev);
/// builds against dev alone through pkg-config and spark-config run; the consumer's
/// closure is exactly the predicted one.
#[test]
fn an_autotools_library_split_builds_under_stdenvs_configure_flags() {
    let test = "an_autotools_library_split_builds_under_stdenvs_configure_flags";
    if !nix_or_skip(test) || !common::tool_or_skip(test, "pkg-config", "pkg-config") {
        return;
    }
    let world = repo().join("tests/worlds/split/autotools.nix");
    let world = world.to_str().unwrap();
    let spark = nix_stdout("nix-build", &[world, "-A", "spark", "--no-out-link"]);
    let app = nix_stdout("nix-build", &[world, "-A", "spark-app", "--no-out-link"]);
    let r = json(&[
        "split",
        spark.trim(),
        "--for",
        app.trim(),
        "--format",
        "json",
    ]);
    assert!(r["no_split"].is_null(), "{r}");
    let code = r["nix"].as_str().unwrap();
    for done in ["'include'", "'lib/pkgconfig'", "'share/doc'", "'share/man'"] {
        assert!(
            !code.contains(&format!("moveToOutput {done}")),
            "{done}: {code}"
        );
    }
    assert!(!code.contains("--replace-fail"), "{code}");
    assert!(
        code.contains("substituteInPlace \"$dev\"/'lib/pkgconfig/spark.pc' --replace-quiet"),
        "{code}"
    );
    assert_nix_parses(&r);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("split.nix");
    std::fs::write(&file, code).unwrap();
    let file = file.to_str().unwrap();
    let build = |attr: &str| {
        nix_stdout(
            "nix-build",
            &[world, "--arg", "code", file, "-A", attr, "--no-out-link"],
        )
        .trim()
        .to_string()
    };
    check_outputs(&r, &|name| build(&format!("code.{name}")));
    let user = build("code-user");
    for program in ["user-pc", "user-config"] {
        assert_eq!(
            run_ok(&format!("{user}/bin/{program}"), &[]).trim(),
            "spark 42"
        );
    }
    let consumer = build("code-app");
    assert_eq!(
        run_ok(&format!("{consumer}/bin/spark-app"), &[]).trim(),
        "spark 42"
    );
    let predicted = r["for"]["closure_size_after"].as_u64().unwrap();
    assert_eq!(
        closure_size(&consumer),
        predicted,
        "rebuilt consumer {consumer}"
    );
}
