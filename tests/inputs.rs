//! Inputs and options as people type them (issue 23): `./result` symlinks, store paths,
//! base names, hashes (whole, first characters, or as tables print them) and package
//! names name a path the same way in `split PATH --for`, `why ROOT TARGET` and `--root`;
//! an ambiguous name or a missing file is exit 2 saying what to give instead; a
//! format a command does not have is refused before any work; `--help` reads well.
//!
//! Runs on the shipped binary cache (`examples/rocm-world-cache/`): symlinks to its
//! store paths are made in a temporary directory (nixcut reads only their link text, so
//! the store paths need not exist on this machine), and no Nix is needed.

mod common;

use std::path::Path;

use common::{repo, run};

const ROCBLAS: &str = "/nix/store/wxyrv3j045xhs95yi7khz99xzfzixids-rocblas-5.7.1";
const ROOT: &str = "/nix/store/lk926j0hc6a7rklgf8hc5ihz5pwzl0ha-llama-cpp-rocm-0.0.0";

fn cache() -> String {
    repo()
        .join("examples/rocm-world-cache")
        .to_string_lossy()
        .into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_path_in_the_closure_is_named_the_same_way_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("result-rocblas");
    std::os::unix::fs::symlink(ROCBLAS, &link).unwrap();
    // A link to a link, and a path through the linked directory.
    let link2 = dir.path().join("again");
    std::os::unix::fs::symlink("result-rocblas", &link2).unwrap();
    let inside = format!("{}/lib/librocblas.so", s(&link));
    let c = cache();
    let names = [
        s(&link),
        s(&link2),
        inside.as_str(),
        ROCBLAS,
        "wxyrv3j045xhs95yi7khz99xzfzixids-rocblas-5.7.1",
        "wxyrv3j045xhs95yi7khz99xzfzixids",
        "wxyrv3j",
        "wxyrv3j…-rocblas-5.7.1",
        "rocblas-5.7.1",
        "rocblas",
    ];
    for name in names {
        let (code, out, err) = run(&["split", name, "--for", &c, "--format", "json"]);
        assert_eq!(code, 0, "split {name}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["package"], ROCBLAS, "split {name}");

        let (code, out, err) = run(&["why", &c, name, "--format", "json"]);
        assert_eq!(code, 0, "why ROOT {name}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["target"], ROCBLAS, "why ROOT {name}");

        let (code, out, err) = run(&["why", &c, "--root", name, "--format", "json"]);
        assert_eq!(code, 0, "--root {name}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["root"], ROCBLAS, "--root {name}");

        let (code, _, err) = run(&["check", &c, "--root", name, "--max-size", "1GiB"]);
        assert_eq!(code, 0, "check --root {name}: {err}");
    }
    // `--for` itself may be such a symlink: to the root of a cache it is not.
    let root = dir.path().join("result");
    std::os::unix::fs::symlink(ROOT, &root).unwrap();
    let (code, _, err) = run(&["why", &c, "--root", s(&root), "--top", "1"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn an_ambiguous_name_lists_the_candidates_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("two.json");
    let a = format!("/nix/store/{}-foo-1.0", "a".repeat(32));
    let b = format!("/nix/store/{}-foo-2.0", "b".repeat(32));
    let r = format!("/nix/store/{}-app-1", "c".repeat(32));
    let json = serde_json::json!({
        &a: { "narSize": 8, "references": [] },
        &b: { "narSize": 8, "references": [] },
        &r: { "narSize": 8, "references": [&a, &b] },
    });
    std::fs::write(&f, json.to_string()).unwrap();
    for args in [
        vec!["why", s(&f), "foo"],
        vec!["split", "foo", "--for", s(&f)],
        vec!["why", s(&f), "--root", "foo"],
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(err.contains(&a) && err.contains(&b), "{args:?}: {err}");
    }
    // A name that matches nothing lists the paths whose names contain it.
    let (code, _, err) = run(&["split", "rocblas-tensile", "--for", &cache()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("rocblas-tensile-gfx90-5.7.1") && !err.contains("llama-cpp-rocm"),
        "{err}"
    );
}

#[test]
fn a_missing_file_is_exit_2_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("result-nothing");
    let (code, _, err) = run(&["split", "rocblas"]);
    assert_eq!(code, 2);
    assert!(err.contains("--for ROOT"), "no hint: {err}");
    let (code, _, err) = run(&["split", s(&missing), "--for", &cache()]);
    assert_eq!(code, 2);
    assert!(err.contains("No such file"), "{err}");
    let (code, _, err) = run(&["why", s(&missing)]);
    assert_eq!(code, 2);
    assert!(err.contains("No such file"), "{err}");
    // A file that leads elsewhere than the store says so.
    let (code, _, err) = run(&["why", &cache(), s(dir.path())]);
    assert_eq!(code, 2);
    assert!(err.contains("does not lead into the store"), "{err}");
}

#[test]
fn an_unsupported_format_is_refused_before_any_work_naming_the_formats() {
    for (args, has) in [
        (vec!["diff", "/nonexistent/a", "/nonexistent/b"], "html"),
        (vec!["split", "rocblas", "--for", "/nonexistent"], "html"),
        (vec!["gpu", "/nonexistent"], "html"),
        (
            vec!["check", "/nonexistent", "--max-size", "1G"],
            "markdown",
        ),
        (vec!["refs", "/nonexistent"], "markdown"),
    ] {
        let mut a = args.clone();
        a.extend(["--format", "dot"]);
        let (code, out, err) = run(&a);
        assert_eq!(code, 2, "{a:?}");
        assert!(out.is_empty(), "{out}");
        assert!(
            err.contains("has no `--format dot`") && err.contains(has),
            "{a:?}: {err}"
        );
        assert!(
            !err.contains("nonexistent"),
            "it read the input first: {err}"
        );
    }
    let (code, _, err) = run(&[
        "check",
        "/nonexistent",
        "--max-size",
        "1G",
        "--format",
        "html",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("table, json, markdown"), "{err}");
}

#[test]
fn a_mistyped_option_suggests_the_nearest_option_of_the_command() {
    let (code, _, err) = run(&["why", "x", "--tpo", "5"]);
    assert_eq!(code, 2);
    assert!(err.contains("'--top'"), "{err}");
    assert!(!err.contains("http-connections"), "{err}");
}

#[test]
fn help_sets_shared_options_apart_keeps_examples_verbatim_and_leaks_no_notes() {
    let help = |cmd: &str| {
        let (code, out, _) = run(&[cmd, "--help"]);
        assert_eq!(code, 0);
        out
    };
    for cmd in ["why", "gpu", "split", "check", "snapshot"] {
        let h = help(cmd);
        let own = h.find("Options:").expect("Options");
        let shared = h.find("Options of every command:").expect("a heading");
        let http = h.find("Binary caches over HTTP").expect("an HTTP heading");
        assert!(own < shared && shared < http, "{cmd}");
        // The shared options come after the heading only.
        assert!(h[..shared].find("--http-timeout").is_none(), "{cmd}");
    }
    let rules = help("rules");
    assert!(
        rules.contains("\n  [[class]]\n  name = \"my/keep-tools\""),
        "the TOML example was reflowed:\n{rules}"
    );
    assert!(help("gpu").contains("\n  nixcut gpu ./result --gpu-targets gfx1030"));
    assert!(!help("snapshot").contains("Not named"));
}
