//! The shipped examples as a new user runs them: the README's quick start on the binary
//! cache directory of the ROCm test world (`examples/rocm-world-cache/`), with no Nix
//! needed, and the follow-up commands it names.

mod common;

use common::{nixcut, repo};

/// The quick start's console block of README.md: the command after `$ ` and the lines
/// it shows (up to a line `…`).
fn quick_start() -> (String, Vec<String>) {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let start = readme
        .find("## Quick start")
        .expect("a Quick start section");
    let block = &readme[start..];
    let block = &block[block.find("```console").expect("a console block") + 10..];
    let block = &block[..block.find("```").expect("the end of the block")];
    let mut lines = block.lines().filter(|l| !l.is_empty());
    let cmd = lines
        .next()
        .and_then(|l| l.strip_prefix("$ "))
        .expect("the block starts with `$ nixcut …`")
        .to_string();
    let shown = lines
        .take_while(|l| l.trim() != "…")
        .map(str::to_string)
        .collect();
    (cmd, shown)
}

/// Run a README command line as written (words split on spaces, no quoting in it), from
/// the repository root.
fn run_as_written(cmd: &str) -> (i32, String, String) {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    assert_eq!(words[0], "nixcut", "{cmd}");
    let out = nixcut()
        .current_dir(repo())
        .args(&words[1..])
        .env_remove("NIX_STATE_DIR")
        .output()
        .expect("run nixcut");
    common::decode(out)
}

#[test]
fn the_quick_start_prints_file_level_evidence_as_the_readme_shows() {
    let (cmd, shown) = quick_start();
    assert!(cmd.contains("examples/rocm-world-cache"), "{cmd}");
    let (code, out, err) = run_as_written(&cmd);
    assert_eq!(code, 0, "{cmd}: {err}");
    // The headline: a Tensile group held in by rocblas' symlinks, per GPU architecture.
    let line = out
        .lines()
        .find(|l| l.contains("rocblas-tensile-gfx90-5.7.1"))
        .unwrap_or_else(|| panic!("no rocblas-tensile-gfx90 row:\n{out}"));
    let evidence = line
        .split("gpu:gfx")
        .nth(1)
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        evidence.contains("← rocblas-5.7.1: 26 symlink"),
        "not file-level evidence: {line}"
    );
    assert!(!out.contains("graph-level only"), "{out}");
    // Every line the README shows is what the command prints (the README is not stale).
    for l in &shown {
        assert!(
            out.lines().any(|o| o == l),
            "README shows a line the command does not print:\n{l}\n--- printed:\n{out}"
        );
    }
}

#[test]
fn gpu_on_the_shipped_cache_reads_files_and_proposes_the_kept_target() {
    let (code, out, err) =
        run_as_written("nixcut gpu examples/rocm-world-cache --gpu-targets gfx1030 --format json");
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert!(v["gpu_bytes"].as_u64().unwrap() > 1_000_000, "{v}");
    assert_eq!(v["unscanned_bytes"], 0, "{v}");
    let remedies = v["remedies"].as_array().expect("remedies");
    assert!(!remedies.is_empty(), "{v}");
    for r in remedies {
        assert_eq!(r["value"], serde_json::json!(["gfx1030"]), "{r}");
    }
    assert!(
        v["closure_size_after"].as_u64().unwrap() < v["closure_size"].as_u64().unwrap(),
        "{v}"
    );
}

#[test]
fn split_on_the_shipped_cache_proposes_outputs() {
    let (code, out, err) =
        run_as_written("nixcut split rocblas --for examples/rocm-world-cache --format json");
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let outputs: Vec<&str> = v["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .filter_map(|o| o["name"].as_str())
        .collect();
    assert!(outputs.contains(&"out") && outputs.contains(&"dev"), "{v}");
}

#[test]
fn every_quick_start_follow_up_command_runs() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let start = readme
        .find("## Quick start")
        .expect("a Quick start section");
    let end = start
        + readme[start..]
            .find("## Commands")
            .expect("Commands after it");
    let section = &readme[start..end];
    let mut n = 0;
    for line in section.lines().filter(|l| l.starts_with("nixcut ")) {
        let cmd = line.split('#').next().unwrap().trim();
        let (code, _, err) = run_as_written(cmd);
        assert_eq!(code, 0, "{cmd}: {err}");
        n += 1;
    }
    assert!(n >= 3, "the quick start names its follow-up commands");
}
