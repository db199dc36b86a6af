//! What nixcut never does (README, "What nixcut never does"): it never writes into a
//! store, never follows a symlink out of one, never runs what it scans, and never
//! passes a gate on an incomplete closure (that one is pinned in `tests/hostile.rs`).
//!
//! The store here is a tree in a temporary directory, given as `--store-root`, with the
//! closure described by a `nix path-info --json` file: no Nix needed, and nothing
//! outside the temporary directories is touched.

mod common;

use std::path::{Path, PathBuf};

use common::*;

const A: &str = "9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-app-1.0";
const B: &str = "1b6qcr7l9p0yx4mji8c6pbjcybz4fp88-lib-2.0";
const C: &str = "x71ahacbysflg2pf8638mdh69871353b-secret-3.0";
/// A store object that is a file (a baseline copied into the store).
const D: &str = "k0c0d60n2dqnb396hj717yvk0y17kx6h-closure-baseline.json";

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// A store root holding A (which references B and C) and B, the closure file that
/// describes them, and a directory outside the store whose files name C's hash.
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    store: PathBuf,
    outside: PathBuf,
    closure: PathBuf,
    marker: PathBuf,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let store = root.join("nix/store");
    let outside = dir.path().join("outside");
    let marker = dir.path().join("ran");
    std::fs::create_dir_all(store.join(A).join("bin")).unwrap();
    std::fs::create_dir_all(store.join(A).join("lib")).unwrap();
    std::fs::create_dir_all(store.join(B).join("lib")).unwrap();
    std::fs::create_dir_all(store.join(C)).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    // Outside the store: files that name C, which nothing inside the store does.
    std::fs::write(outside.join("secret.txt"), format!("/nix/store/{C}/data\n")).unwrap();
    std::fs::write(outside.join("more.txt"), format!("/nix/store/{C}\n")).unwrap();
    // A refers to B from a script; the script would leave a marker if it ran.
    let script = store.join(A).join("bin/app");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntouch '{}'\nexec /nix/store/{B}/lib/libb.so \"$@\"\n",
            marker.display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(store.join(B).join("lib/libb.so"), "not really a library\n").unwrap();
    std::fs::write(store.join(C).join("data"), "c\n").unwrap();
    std::fs::write(store.join(D), "{}\n").unwrap();
    // Symlinks out of the store: to a file and to a directory that name C.
    std::os::unix::fs::symlink(outside.join("secret.txt"), store.join(A).join("lib/secret"))
        .unwrap();
    std::os::unix::fs::symlink(&outside, store.join(A).join("lib/outside")).unwrap();
    let closure = dir.path().join("closure.json");
    let entry = |p: &str, size: u64, refs: &[&str]| {
        (
            format!("/nix/store/{p}"),
            serde_json::json!({
                "narSize": size,
                "references": refs.iter().map(|r| format!("/nix/store/{r}")).collect::<Vec<_>>(),
            }),
        )
    };
    let doc: serde_json::Map<String, serde_json::Value> = [
        entry(A, 1000, &[B, C]),
        entry(B, 100, &[]),
        entry(C, 10, &[]),
    ]
    .into_iter()
    .collect();
    std::fs::write(&closure, serde_json::Value::Object(doc).to_string()).unwrap();
    World {
        _dir: dir,
        root,
        store,
        outside,
        closure,
        marker,
    }
}

fn run_in(w: &World, args: &[&str], cache: &Path) -> (i32, String, String) {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--store-root", s(&w.root)]);
    decode(
        nixcut()
            .args(&all)
            .env("XDG_CACHE_HOME", cache)
            .output()
            .expect("run nixcut"),
    )
}

/// The evidence of A's reference to `to`, from `refs --format json`.
fn evidence_of(w: &World, to: &str, cache: &Path) -> Vec<serde_json::Value> {
    let (code, out, err) = run_in(w, &["refs", s(&w.closure), "--format", "json"], cache);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["files_from"], "store",
        "the store root's files are scanned: {v}"
    );
    let path = v["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"].as_str().is_some_and(|p| p.ends_with(A)))
        .unwrap_or_else(|| panic!("A is in the report: {v}"));
    path["references"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"].as_str().is_some_and(|p| p.ends_with(to)))
        .and_then(|r| r["evidence"].as_array().cloned())
        .unwrap_or_default()
}

#[test]
fn nixcut_never_writes_into_the_store() {
    let w = world();
    let cache = tempfile::tempdir().unwrap();
    let before = tree_inventory(&w.root);
    for args in [
        vec!["why", s(&w.closure)],
        vec!["why", s(&w.closure), "--format", "json"],
        vec!["refs", s(&w.closure)],
        vec!["refs", "--closure", s(&w.closure), "--discover"],
        vec!["snapshot", s(&w.closure), "-o", "-"],
        vec!["diff", s(&w.closure), s(&w.closure)],
        vec!["check", s(&w.closure), "--max-size", "1MiB"],
    ] {
        let (code, _, err) = run_in(&w, &args, cache.path());
        assert_eq!(code, 0, "{args:?}: {err}");
    }
    assert_eq!(
        tree_inventory(&w.root),
        before,
        "the store root is as it was"
    );

    // Nor when asked to: a snapshot or a summary inside a store object is refused.
    // (A new entry directly in the store directory is how a Nix builder writes its
    // `$out`, as nix/closure-check.nix does; tests/closure_check_nix.rs runs that.)
    let target = w.store.join(A).join("baseline.json");
    let (code, _, err) = run_in(
        &w,
        &["snapshot", s(&w.closure), "-o", s(&target)],
        cache.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("inside the store directory"), "{err}");
    let summary = w.store.join(A).join("summary.md");
    let (code, _, err) = run_in(
        &w,
        &[
            "check",
            s(&w.closure),
            "--max-size",
            "1MiB",
            "--summary",
            s(&summary),
        ],
        cache.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("inside the store directory"), "{err}");
    // An existing store object that is a file is not replaced either.
    let (code, _, err) = run_in(
        &w,
        &["snapshot", s(&w.closure), "-o", s(&w.store.join(D))],
        cache.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("inside the store directory"), "{err}");
    assert_eq!(
        tree_inventory(&w.root),
        before,
        "nothing was created or replaced"
    );
}

/// Issue 19, item 1: a symlink outside the store that points at a store file is that
/// store file. `check --summary LINK` appended its Markdown to the store file (exit 0);
/// now every option that writes (`-o`, `--summary`, `$GITHUB_STEP_SUMMARY`) follows
/// the links (a chain of two, a relative one, a dangling one into a store object)
/// before it checks where the write lands, and the store is as it was.
#[test]
fn nixcut_never_writes_into_the_store_through_a_symlink() {
    let w = world();
    let cache = tempfile::tempdir().unwrap();
    let links = tempfile::tempdir().unwrap();
    let l = links.path();
    let script = w.store.join(A).join("bin/app");
    std::os::unix::fs::symlink(&script, l.join("to-file")).unwrap();
    std::os::unix::fs::symlink(l.join("to-file"), l.join("chain")).unwrap();
    std::os::unix::fs::symlink(w.store.join(D), l.join("to-store-file")).unwrap();
    std::os::unix::fs::symlink(w.store.join(A).join("new.md"), l.join("dangling")).unwrap();
    let rel = pathdiff(&w.store.join(B).join("lib/libb.so"), l);
    std::os::unix::fs::symlink(rel, l.join("relative")).unwrap();
    let before = tree_inventory(&w.root);
    let check = ["check", s(&w.closure), "--max-size", "1MiB"];
    for link in ["to-file", "chain", "to-store-file", "dangling", "relative"] {
        let link = l.join(link);
        let mut summary = check.to_vec();
        summary.extend(["--summary", s(&link)]);
        for args in [summary, vec!["snapshot", s(&w.closure), "-o", s(&link)]] {
            let (code, _, err) = run_in(&w, &args, cache.path());
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(
                err.contains("inside the store directory"),
                "{args:?}: {err}"
            );
        }
        // $GITHUB_STEP_SUMMARY: the check's verdict stands, the summary is refused
        // with a warning.
        let mut all: Vec<&str> = check.to_vec();
        all.extend(["--store-root", s(&w.root)]);
        let (code, _, err) = decode(
            nixcut()
                .args(&all)
                .env("XDG_CACHE_HOME", cache.path())
                .env("GITHUB_STEP_SUMMARY", &link)
                .output()
                .expect("run nixcut"),
        );
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("inside the store directory"), "{err}");
    }
    assert_eq!(
        tree_inventory(&w.root),
        before,
        "nothing in the store changed"
    );
    // A link to a file outside the store is written through, as before.
    let outside = l.join("summary.md");
    std::fs::write(&outside, "").unwrap();
    std::os::unix::fs::symlink(&outside, l.join("to-outside")).unwrap();
    let mut args = check.to_vec();
    let link = l.join("to-outside");
    args.extend(["--summary", s(&link)]);
    let (code, _, err) = run_in(&w, &args, cache.path());
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::metadata(&outside).unwrap().len() > 0);
}

/// `to` relative to the directory `from` (both absolute, `from` not inside `to`).
fn pathdiff(to: &Path, from: &Path) -> PathBuf {
    let (to, from): (Vec<_>, Vec<_>) = (to.components().collect(), from.components().collect());
    let common = to.iter().zip(&from).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to[common..] {
        out.push(c);
    }
    out
}

#[test]
fn nixcut_never_follows_a_symlink_out_of_the_store() {
    let w = world();
    let cache = tempfile::tempdir().unwrap();
    // Only the files outside name C: a scanner that followed `lib/secret` or
    // `lib/outside` would find C's hash there.
    let evidence = evidence_of(&w, C, cache.path());
    assert!(
        evidence.is_empty(),
        "nothing inside the store names C, so nothing may be found: {evidence:?}"
    );
    // The symlinks themselves were seen (their targets are evidence of nothing here),
    // and the reference to B is found where it is, in the script.
    let b = evidence_of(&w, B, cache.path());
    assert!(
        b.iter().any(|e| e["file"].as_str() == Some("bin/app")),
        "{b:?}"
    );
    assert!(w.outside.join("secret.txt").exists());
}

#[test]
fn nixcut_never_runs_what_it_scans() {
    let w = world();
    let cache = tempfile::tempdir().unwrap();
    for args in [
        vec!["refs", s(&w.closure)],
        vec!["refs", "--closure", s(&w.closure), "--discover"],
        vec!["why", s(&w.closure), B],
    ] {
        let (code, _, err) = run_in(&w, &args, cache.path());
        assert_eq!(code, 0, "{args:?}: {err}");
    }
    let b = evidence_of(&w, B, cache.path());
    assert!(
        b.iter().any(|e| e["kind"] == "script"),
        "the script was read and classified: {b:?}"
    );
    assert!(
        !w.marker.exists(),
        "the script was not run (it would have created {})",
        w.marker.display()
    );
}

/// Where a test aims an output: inside a store object, directly or through a link.
struct Aim {
    what: &'static str,
    /// The file (or, for the cache and temporary directories, the directory) to name.
    path: PathBuf,
}

/// Every way an output can be aimed into a store object of `w`: a path inside one; a
/// symlink to a file in one; a dangling symlink into one; a path under a symlinked
/// directory that resolves into one; a chain of two links.
fn aims(w: &World, links: &Path, leaf: &str) -> Vec<Aim> {
    let obj = w.store.join(A);
    let link = |name: &str, to: &Path| {
        let p = links.join(name);
        if std::fs::symlink_metadata(&p).is_err() {
            std::os::unix::fs::symlink(to, &p).unwrap();
        }
        p
    };
    let dir_link = link("dir-into-store", &obj.join("lib"));
    let file_link = link("file-into-store", &obj.join("bin/app"));
    let dangling = link(
        &format!("dangling-{leaf}"),
        &obj.join(format!("new-{leaf}")),
    );
    let chain = link(&format!("chain-{leaf}"), &dangling);
    vec![
        Aim {
            what: "directly",
            path: obj.join(leaf),
        },
        Aim {
            what: "under a linked directory",
            path: dir_link.join(leaf),
        },
        Aim {
            what: "a link to a store file",
            path: file_link,
        },
        Aim {
            what: "a dangling link",
            path: dangling,
        },
        Aim {
            what: "a chain of links",
            path: chain,
        },
    ]
}

/// Issue 31, item 1 (and 2): every command in every format it has, with every
/// option that writes aimed into a store object (`-o`, `--summary`,
/// `$GITHUB_STEP_SUMMARY`, `$XDG_CACHE_HOME`, `$TMPDIR`), directly and through
/// symlinks: the store is exactly as it was, an explicit option is refused (exit 2)
/// and an environment variable is warned about while the command still answers.
/// Package sets are among the inputs: `check` of package sets appended
/// `$GITHUB_STEP_SUMMARY` to a store file.
#[test]
fn every_command_and_format_refuses_every_output_into_a_store() {
    let w = world();
    let links = tempfile::tempdir().unwrap();
    let sets = tempfile::tempdir().unwrap();
    let set = sets.path().join("set.paths");
    std::fs::write(&set, format!("/nix/store/{A}\n")).unwrap();
    let (closure, set) = (s(&w.closure), s(&set));
    let both = ["--graph", closure];
    let commands: Vec<(Vec<&str>, &[&str])> = vec![
        (
            vec!["why", closure],
            &["table", "json", "markdown", "html", "dot"],
        ),
        (vec!["refs", closure], &["table", "json", "markdown"]),
        (
            vec!["split", B, "--for", closure],
            &["table", "json", "markdown", "html"],
        ),
        (vec!["gpu", closure], &["table", "json", "markdown", "html"]),
        (
            vec!["diff", closure, closure],
            &["table", "json", "markdown", "html"],
        ),
        (
            [vec!["diff", set, set], both.to_vec()].concat(),
            &["table", "json", "markdown", "html"],
        ),
        (
            vec!["check", closure, "--max-size", "1MiB"],
            &["table", "json", "markdown"],
        ),
        (
            [vec!["check", set, "--baseline", set], both.to_vec()].concat(),
            &["table", "json", "markdown"],
        ),
        (vec!["snapshot", closure, "-o", "-"], &["table"]),
        (vec!["rules"], &["table", "json", "markdown"]),
    ];
    let before = tree_inventory(&w.root);
    let mut runs = 0;
    for (args, formats) in &commands {
        for format in *formats {
            let mut base: Vec<&str> = args.clone();
            base.extend(["--format", format, "--store-root", s(&w.root)]);
            // The environment: each variable aimed into the store on its own.
            for (var, leaf) in [
                ("GITHUB_STEP_SUMMARY", "summary.md"),
                ("XDG_CACHE_HOME", "cache"),
                ("TMPDIR", "tmp"),
            ] {
                for aim in aims(&w, links.path(), leaf) {
                    let (code, _, err) = decode(
                        nixcut()
                            .args(&base)
                            .env(var, &aim.path)
                            .env("GITHUB_ACTIONS", "true")
                            .output()
                            .expect("run nixcut"),
                    );
                    runs += 1;
                    let warned = match var {
                        "XDG_CACHE_HOME" => err.contains("this run uses no cache"),
                        "TMPDIR" => err.contains("($TMPDIR) is inside the store directory"),
                        // Only `check` writes a summary.
                        _ => args[0] != "check" || err.contains("inside the store directory"),
                    };
                    assert!(warned, "{var} {}: {base:?}: no warning: {err}", aim.what);
                    assert!(
                        code == 0 || code == 1,
                        "{var} {} ({}): {base:?}: {err}",
                        aim.what,
                        aim.path.display()
                    );
                    assert_eq!(
                        tree_inventory(&w.root),
                        before,
                        "{var} {} ({}): {base:?} changed the store",
                        aim.what,
                        aim.path.display()
                    );
                }
            }
            // The explicit options of the commands that write.
            let option = match args[0] {
                "check" => Some("--summary"),
                "snapshot" => Some("-o"),
                _ => None,
            };
            let Some(option) = option else { continue };
            for aim in aims(&w, links.path(), "out.json") {
                let mut all = base.clone();
                if option == "-o" {
                    let i = all.iter().position(|a| *a == "-o").unwrap();
                    all.drain(i..i + 2);
                }
                all.extend([option, s(&aim.path)]);
                let (code, _, err) = decode(nixcut().args(&all).output().expect("run nixcut"));
                runs += 1;
                assert_eq!(code, 2, "{option} {}: {all:?}: {err}", aim.what);
                assert!(err.contains("inside the store directory"), "{all:?}: {err}");
                assert_eq!(
                    tree_inventory(&w.root),
                    before,
                    "{option} {}: {all:?}",
                    aim.what
                );
            }
        }
    }
    assert!(runs > 200, "{runs} runs");

    // A piped input that is not a package set is kept in a temporary file: never in
    // a store, whatever $TMPDIR says (a warning, and /tmp is used).
    for aim in aims(&w, links.path(), "tmp") {
        let mut child = nixcut()
            .args(["diff", "-", closure, "--store-root", s(&w.root)])
            .env("TMPDIR", &aim.path)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run nixcut");
        let text = std::fs::read(&w.closure).unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), &text).unwrap();
        let (code, _, err) = decode(child.wait_with_output().unwrap());
        assert_eq!(code, 0, "TMPDIR {}: {err}", aim.what);
        assert!(
            err.contains("($TMPDIR) is inside the store directory"),
            "TMPDIR {}: {err}",
            aim.what
        );
        assert_eq!(tree_inventory(&w.root), before, "TMPDIR {}", aim.what);
    }
}
