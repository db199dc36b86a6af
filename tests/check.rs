//! `nixcut check`: exit codes, the three criteria, CI output (step summary, GitHub
//! annotations), on the shipped examples and on Nix-built worlds.

mod common;

use std::path::Path;

use common::contract::{pin, CheckReport};
use common::*;

const ROCM: &str = "examples/llama-cpp-rocm.json";
const CUDA: &str = "examples/llama-cpp-cuda.json";

fn ex(p: &str) -> String {
    repo().join(p).to_string_lossy().into_owned()
}

/// Run `check` with extra environment; returns (code, stdout, stderr).
fn check_env(args: &[&str], env: &[(&str, &Path)]) -> (i32, String, String) {
    let mut c = nixcut();
    c.env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_ACTIONS");
    for (k, v) in env {
        c.env(k, v);
    }
    decode(c.arg("check").args(args).output().expect("run nixcut"))
}

fn check_json(args: &[&str]) -> (i32, CheckReport) {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let (code, out, err) = check_env(&all, &[]);
    assert!(code == 0 || code == 1, "check {args:?} errored: {err}");
    let r: CheckReport = pin("check JSON", &out);
    (code, r)
}

#[test]
fn examples_rocm_against_cuda_names_what_rocm_adds() {
    let (code, r) = check_json(&[&ex(ROCM), "--against", &ex(CUDA), "--max-ratio", "2"]);
    assert_eq!(code, 1);
    assert!(!r.pass);
    let a = r.against.as_ref().unwrap();
    assert!(!a.pass);
    assert_eq!(a.measured, 11_382_742_168);
    assert_eq!(a.other_size, 1_033_490_256);
    assert_eq!(a.limit, 2 * 1_033_490_256);
    assert_eq!(r.limit, a.limit);
    assert!((a.ratio - 11.0139).abs() < 0.001, "{}", a.ratio);
    let added: Vec<u64> = a.only_in_root.top.iter().map(|c| c.added_size).collect();
    assert!(added.windows(2).all(|w| w[0] >= w[1]), "{added:?}");
    let names: Vec<&str> = a
        .only_in_root
        .top
        .iter()
        .map(|c| c.path.rsplit_once('-').map_or("", |_| &c.path[44..]))
        .collect();
    assert!(names.contains(&"rocblas-5.7.1"), "{names:?}");
    assert!(names.contains(&"rocblas-tensile-gfx90-5.7.1"), "{names:?}");
    // Nothing listed is in the CUDA closure; the root is not listed.
    let cuda = std::fs::read_to_string(ex(CUDA)).unwrap();
    for c in &a.only_in_root.top {
        assert!(!cuda.contains(&c.path), "{} is shared", c.path);
        assert_ne!(c.path, r.root);
        assert_eq!(c.chain.first(), Some(&r.root));
    }
    assert!(r.failures[0].contains("11.01×"), "{}", r.failures[0]);
    eprintln!(
        "examples: rocm {} / cuda {} = {:.2}× (limit {}×); only in rocm: {} paths, {} bytes; top: {:?}",
        a.measured, a.other_size, a.ratio, a.max_ratio, a.only_in_root.count, a.only_in_root.size,
        names.iter().zip(&added).take(5).collect::<Vec<_>>()
    );

    let (code, r) = check_json(&[&ex(ROCM), "--against", &ex(CUDA), "--max-ratio", "12"]);
    assert_eq!(code, 0);
    assert!(r.pass);
}

#[test]
fn max_size_and_exit_codes() {
    let (code, r) = check_json(&[&ex(ROCM), "--max-size", "11GiB"]);
    assert_eq!(code, 0, "{r:?}");
    let (code, r) = check_json(&[&ex(ROCM), "--max-size", "10G"]);
    assert_eq!(code, 1);
    let s = r.max_size.unwrap();
    assert_eq!(
        (s.limit, s.measured, s.pass),
        (10 << 30, 11_382_742_168, false)
    );
    assert!(!s.largest.is_empty());

    // Errors and usage errors exit 2.
    for args in [
        vec![ex(ROCM)],                                     // no criterion
        vec![ex(ROCM), "--max-size".into(), "huge".into()], // bad size
        vec![ex(ROCM), "--max-growth".into(), "5%".into()], // growth without baseline
        vec![ex(ROCM), "--against".into(), ex(CUDA)],       // ratio missing
        vec!["/does/not/exist".into(), "--max-size".into(), "1G".into()],
    ] {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, _, err) = check_env(&a, &[]);
        assert_eq!(code, 2, "{args:?}: {err}");
    }
    let (code, out, _) = check_env(&["--help"], &[]);
    assert_eq!(code, 0);
    assert!(
        out.contains("--max-growth") && out.contains("Default 5%"),
        "{out}"
    );
}

#[test]
fn github_summary_and_annotations() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "previous step\n").unwrap();
    let (code, out, _) = check_env(
        &[&ex(ROCM), "--against", &ex(CUDA), "--max-ratio", "2"],
        &[
            ("GITHUB_STEP_SUMMARY", &summary),
            ("GITHUB_ACTIONS", Path::new("true")),
        ],
    );
    assert_eq!(code, 1);
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(
        md.starts_with("previous step\n### ❌ nixcut check: llama-cpp-rocm-0.0.0"),
        "appended: {md}"
    );
    assert!(md.contains("in 84 paths: FAILED"), "{md}");
    assert!(md.contains("rocblas-5.7.1"), "{md}");
    let annotation = out
        .lines()
        .find(|l| l.starts_with("::error "))
        .expect("annotation");
    assert!(
        annotation.starts_with("::error title=closure size check failed%3A "),
        "{annotation}"
    );
    assert!(
        annotation.contains("::closure of llama-cpp-rocm-0.0.0 is 10.6 GiB"),
        "{annotation}"
    );

    // With --format json the annotation goes to stderr and stdout stays JSON.
    let (code, out, err) = check_env(
        &[&ex(ROCM), "--max-size", "1G", "--format", "json"],
        &[("GITHUB_ACTIONS", Path::new("true"))],
    );
    assert_eq!(code, 1);
    pin::<CheckReport>("check JSON with annotations on stderr", &out);
    assert!(err.contains("::error title="), "{err}");

    // No annotation on success, nor outside GitHub Actions.
    let (_, out, _) = check_env(
        &[&ex(ROCM), "--max-size", "20G"],
        &[("GITHUB_ACTIONS", Path::new("true"))],
    );
    assert!(!out.contains("::error"), "{out}");
    let (_, out, _) = check_env(&[&ex(ROCM), "--max-size", "1G"], &[]);
    assert!(!out.contains("::error"), "{out}");
}

/// The acceptance scenario: snapshot, rebuild with a heavier dependency, gate.
#[test]
fn world_baseline_catches_a_heavier_rebuild() {
    if !nix_or_skip("world_baseline_catches_a_heavier_rebuild") {
        return;
    }
    let w = rocm_world();
    let heavy = build_world("rocm", &["--arg", "heavy", "true"]);
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("closure-baseline.json");
    let (code, _, err) = run(&["snapshot", &w.root, "-o", base.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let summary = dir.path().join("step-summary.md");

    // Default --max-growth (5%): +2 MiB on 4.9 MiB fails, naming big-blob.
    let (code, out, err) = check_env(
        &[&heavy.root, "--baseline", base.to_str().unwrap()],
        &[("GITHUB_STEP_SUMMARY", &summary)],
    );
    assert_eq!(code, 1, "{out}\n{err}");
    let fail_line = out
        .lines()
        .find(|l| l.starts_with("FAIL: "))
        .expect("FAIL line");
    assert!(fail_line.contains("big-blob-1.0"), "{out}");
    let md = std::fs::read_to_string(&summary).expect("summary written");
    assert!(md.contains("❌") && md.contains("big-blob-1.0"), "{md}");
    eprintln!("baseline, default 5%: exit {code}\n  {fail_line}");
    eprintln!("  step summary: {} bytes of Markdown", md.len());

    let (code, r) = check_json(&[&heavy.root, "--baseline", base.to_str().unwrap()]);
    assert_eq!(code, 1);
    let b = r.baseline.as_ref().unwrap();
    assert_eq!(b.baseline_size, nix_closure_sizes(&w.root)[&w.root]);
    assert_eq!(b.measured, nix_closure_sizes(&heavy.root)[&heavy.root]);
    assert_eq!(b.new_paths.count, 2, "the rebuilt root and big-blob");
    assert!(
        b.new_paths.top[0].path.ends_with("-big-blob-1.0"),
        "{:?}",
        b.new_paths.top
    );
    assert_eq!(b.new_paths.top.len(), 1, "roots are not listed");
    eprintln!(
        "  baseline {} → {} bytes, growth {:+} ({:+.2}%), limit {}",
        b.baseline_size,
        b.measured,
        b.growth,
        b.growth_percent.unwrap(),
        b.limit
    );

    // A generous --max-growth passes; so does a size budget above the growth.
    for g in ["50%", "45", "3MiB"] {
        let (code, out, err) = check_env(
            &[
                &heavy.root,
                "--baseline",
                base.to_str().unwrap(),
                "--max-growth",
                g,
            ],
            &[],
        );
        assert_eq!(code, 0, "--max-growth {g}: {out}{err}");
    }
    let (code, _, _) = check_env(
        &[
            &heavy.root,
            "--baseline",
            base.to_str().unwrap(),
            "--max-growth",
            "40%",
        ],
        &[],
    );
    assert_eq!(code, 1, "41% growth is more than 40%");
}

#[test]
fn world_rocm_against_cuda() {
    if !nix_or_skip("world_rocm_against_cuda") {
        return;
    }
    let (rocm, cuda) = (rocm_world(), cuda_world());
    let (code, out, _) = check_env(
        &[&rocm.root, "--against", &cuda.root, "--max-ratio", "2"],
        &[],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("Only in llama-cpp-rocm-0.0.0, not in llama-cpp-cuda-0.0.0"),
        "{out}"
    );
    let (code, r) = check_json(&[&rocm.root, "--against", &cuda.root, "--max-ratio", "2"]);
    assert_eq!(code, 1);
    let a = r.against.unwrap();
    let cuda_paths = nix_closure_sizes(&cuda.root);
    assert_eq!(a.other_size, cuda_paths[&cuda.root]);
    let listed: Vec<(String, u64)> = a
        .only_in_root
        .top
        .iter()
        .map(|c| (c.path[44..].to_string(), c.added_size))
        .collect();
    assert!(listed.windows(2).all(|w| w[0].1 >= w[1].1), "{listed:?}");
    assert_eq!(listed[0].0, "rocblas-5.7.1", "{listed:?}");
    for c in &a.only_in_root.top {
        assert!(
            !cuda_paths.contains_key(&c.path),
            "{} is in the CUDA closure",
            c.path
        );
    }
    eprintln!(
        "world: rocm {} / cuda {} = {:.4}× > 2; {} rocm-only paths ({} bytes), ranked: {listed:?}",
        a.measured, a.other_size, a.ratio, a.only_in_root.count, a.only_in_root.size
    );
}

/// Issue 8.14: check's warnings were printed twice in table mode (stderr and stdout),
/// and `-q` kept the stdout copy.
#[test]
fn check_warnings_are_printed_once_and_q_silences_them() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.json");
    let (code, _, err) = run(&[
        "snapshot",
        &ex("examples/llama-cpp-rocm.json"),
        "-o",
        base.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    // The CUDA closure against the ROCm baseline: it shrank, which is a warning.
    let args = [
        "check",
        &ex("examples/llama-cpp-cuda.json"),
        "--baseline",
        base.to_str().unwrap(),
    ];
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let n = |s: &str| s.matches("shrank by").count();
    assert_eq!((n(&out), n(&err)), (0, 1), "stdout:\n{out}\nstderr:\n{err}");
    let mut quiet = args.to_vec();
    quiet.push("-q");
    let (code, out, err) = run(&quiet);
    assert_eq!(code, 0);
    assert_eq!(
        (n(&out), n(&err)),
        (0, 0),
        "-q: stdout:\n{out}\nstderr:\n{err}"
    );
}
