//! Hostile input, third probe (issue 31): package sets and caches. Each test is named
//! after what it pins and failed before its fix: a package-set `check` writing
//! `$GITHUB_STEP_SUMMARY` into a real store object, a cache directory linked into a
//! store, workflow commands smuggled in through a file name, `check` on package sets
//! without `::error` annotations, a set's store directory ignored, and unclear errors.

mod common;

use std::path::{Path, PathBuf};

use common::serve::{file_nar, write_cache, Server, APP, LIB};
use common::*;

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// A store path with a readable hash (`c` repeated) and `name`.
fn sp(c: char, name: &str) -> String {
    format!("/nix/store/{}-{name}", c.to_string().repeat(32))
}

/// Two package sets and their graphs: OLD has roots hello and world of 10 bytes
/// each; NEW's hello and world (new hashes) each reference libhuge (1000 bytes).
struct Sets {
    dir: tempfile::TempDir,
    old: PathBuf,
    new: PathBuf,
    old_graph: PathBuf,
    new_graph: PathBuf,
}

impl Sets {
    fn p(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `check NEW --baseline OLD --graph … …` with `extra`.
    fn check<'a>(&'a self, new: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
        let mut v = vec![
            "check",
            s(new),
            "--baseline",
            s(&self.old),
            "--graph",
            s(&self.old_graph),
            "--graph",
            s(&self.new_graph),
        ];
        v.extend_from_slice(extra);
        v
    }
}

fn sets() -> Sets {
    let dir = tempfile::tempdir().unwrap();
    let lib = sp('a', "libhuge-1.0");
    let old = [sp('b', "hello-2.12"), sp('c', "world-1.0")];
    let new = [sp('d', "hello-2.12"), sp('f', "world-1.0")];
    let graph = |roots: &[String], with_lib: bool| {
        let mut m = serde_json::Map::new();
        for r in roots {
            let refs: Vec<&str> = if with_lib { vec![&lib] } else { vec![] };
            m.insert(
                r.clone(),
                serde_json::json!({"narSize": 10, "references": refs}),
            );
        }
        if with_lib {
            m.insert(
                lib.clone(),
                serde_json::json!({"narSize": 1000, "references": []}),
            );
        }
        serde_json::Value::Object(m).to_string()
    };
    let write = |name: &str, text: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let old_graph = write("old.json", graph(&old, false));
    let new_graph = write("new.json", graph(&new, true));
    let old_paths = write("old.paths", format!("{}\n{}\n", old[0], old[1]));
    let new_paths = write("new.paths", format!("{}\n{}\n", new[0], new[1]));
    Sets {
        dir,
        old: old_paths,
        new: new_paths,
        old_graph,
        new_graph,
    }
}

/// No line of `text` reads as a GitHub Actions workflow command except `allowed`
/// ones (the annotations nixcut writes on purpose, which must be well formed).
fn no_smuggled_commands(text: &str, allowed_errors: bool, what: &str) {
    for line in text.split(['\n', '\r']) {
        // As GitHub's runner reads a line: .NET's TrimStart trims every Unicode white
        // space, and its older parser finds `##[` anywhere.
        let t = line.trim_start_matches(char::is_whitespace);
        if allowed_errors && t.starts_with("::error title=") {
            // The title is a property: no `:` or `,` of its own before the `::`.
            let rest = &t["::error title=".len()..];
            let end = rest.find("::").expect("the command's `::`");
            assert!(
                !rest[..end].contains([':', ',']),
                "{what}: unescaped title in {line:?}"
            );
            continue;
        }
        assert!(
            !t.starts_with("::") && !line.contains("##["),
            "{what}: a workflow command in the output: {line:?}\n{text}"
        );
    }
}

// ---- item 1: a package set's step summary into a real store object ----

/// `nix-store --add` makes a real store object; `check` of package sets with
/// `$GITHUB_STEP_SUMMARY` inside it appended its Markdown there, and
/// `nix-store --verify-path` then said the path was modified.
#[test]
fn package_set_check_never_appends_its_step_summary_to_a_store_object() {
    if !nix_or_skip("package_set_check_never_appends_its_step_summary_to_a_store_object") {
        return;
    }
    let t = sets();
    let src = t.p("obj");
    std::fs::create_dir_all(&src).unwrap();
    // Content of its own: each run gets a fresh store object (a broken build of nixcut
    // that wrote into an earlier one does not spoil the next run).
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let content = format!("hi {} {nonce}\n", std::process::id());
    std::fs::write(src.join("f.txt"), &content).unwrap();
    let sp = nix_stdout("nix-store", &["--add", s(&src)])
        .trim()
        .to_string();
    let target = Path::new(&sp).join("f.txt");
    let link = t.p("summary-link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for summary in [&target, &link] {
        let (code, out, err) = decode(
            nixcut()
                .args(t.check(&t.new, &[]))
                .env("GITHUB_ACTIONS", "true")
                .env("GITHUB_STEP_SUMMARY", summary)
                .output()
                .unwrap(),
        );
        assert_eq!(code, 1, "the gate fails as it should: {err}");
        assert!(err.contains("inside the store directory"), "{err}");
        assert!(out.contains("::error"), "{out}");
        // `--summary` into the store is an error before anything is loaded.
        let (code, _, err) = run(&t.check(&t.new, &["--summary", s(summary)]));
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("inside the store directory"), "{err}");
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), content);
    let verify = nix_cmd("nix-store")
        .args(["--verify-path", &sp])
        .output()
        .unwrap();
    let verified = String::from_utf8_lossy(&verify.stderr).into_owned();
    let _ = nix_cmd("nix-store").args(["--delete", &sp]).output();
    assert!(verify.status.success(), "{verified}");
    assert!(!verified.contains("modified"), "{verified}");
}

// ---- item 2: the cache directory through a symlink into a store ----

/// `XDG_CACHE_HOME=xc` with `xc/nixcut -> <store object>/nixcut`: `why` over an HTTP
/// cache created `narinfo/narinfo-v1.sqlite` inside the store object, and a run that
/// failed too. Now the directory is resolved, refused with a warning, and the run
/// goes on without a cache.
#[test]
fn a_cache_directory_linked_into_a_store_is_refused_and_nothing_is_created() {
    let t = sets();
    // A store of its own (`--store-dir`), with one object that has a `nixcut` directory.
    let store = t.p("store");
    let obj = store.join(APP);
    std::fs::create_dir_all(obj.join("nixcut")).unwrap();
    let cache = t.p("cache");
    write_cache(
        &cache,
        &[(APP, file_nar(b"app"), LIB), (LIB, file_nar(b"lib"), "")],
    );
    std::fs::write(
        cache.join("nix-cache-info"),
        format!("StoreDir: {}\n", s(&store)),
    )
    .unwrap();
    for f in std::fs::read_dir(&cache).unwrap() {
        let f = f.unwrap().path();
        if f.extension().is_some_and(|e| e == "narinfo") {
            let text = std::fs::read_to_string(&f).unwrap();
            std::fs::write(&f, text.replace("/nix/store", s(&store))).unwrap();
        }
    }
    let srv = Server::start(&cache);
    let xc = t.p("xc");
    std::fs::create_dir_all(&xc).unwrap();
    std::os::unix::fs::symlink(obj.join("nixcut"), xc.join("nixcut")).unwrap();
    let url = format!("{}/{}.narinfo", srv.url, &APP[..32]);
    let before: Vec<_> = std::fs::read_dir(obj.join("nixcut")).unwrap().collect();
    assert!(before.is_empty());
    for args in [
        vec!["why", url.as_str()],
        vec!["why", "/no/such/input", "--cache", &srv.url],
    ] {
        let mut all = args.clone();
        all.extend(["--store-dir", s(&store)]);
        let (code, _, err) = decode(
            nixcut()
                .args(&all)
                .env("XDG_CACHE_HOME", &xc)
                .output()
                .unwrap(),
        );
        assert!(code == 0 || code == 2, "{all:?}: {err}");
        assert!(
            err.contains("is inside the store directory") && err.contains("uses no cache"),
            "{all:?}: {err}"
        );
        let after: Vec<_> = std::fs::read_dir(obj.join("nixcut"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(after.is_empty(), "{all:?} wrote into the store: {after:?}");
    }
}

/// A run that fails before it needs a cache creates no cache directory.
#[test]
fn a_run_that_fails_early_creates_no_cache_directory() {
    let t = sets();
    let home = t.p("fresh-cache-home");
    // With --cache the HTTP client is made at the start: it opened (and created) the
    // narinfo cache then.
    for args in [
        vec!["why", "/no/such/input", "--cache", "http://127.0.0.1:9"],
        vec![
            "diff",
            "/no/such/old",
            "/no/such/new",
            "--cache",
            "http://127.0.0.1:9",
        ],
        vec![
            "check",
            "/no/such/input",
            "--max-size",
            "1GiB",
            "--cache",
            "http://127.0.0.1:9",
        ],
    ] {
        let (code, _, err) = decode(
            nixcut()
                .args(&args)
                .env("XDG_CACHE_HOME", &home)
                .output()
                .unwrap(),
        );
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(!home.exists(), "{args:?} created {}", home.display());
    }
}

// ---- item 4: workflow commands and terminal input through a file name ----

/// A package-set file named `e\n::error::pwn.paths` put a raw LF in the header of
/// `diff` and `check`, and GitHub Actions read `::error::pwn.paths` as a command.
#[test]
fn a_file_name_cannot_smuggle_a_workflow_command_into_any_format() {
    let t = sets();
    let hostile = t.p("e\n::error::pwn.paths");
    std::fs::copy(&t.new, &hostile).unwrap();
    let cr = t.p("e\r::warning::cr\u{1b}[2J.paths");
    std::fs::copy(&t.new, &cr).unwrap();
    let old_form = t.p("e ##[error]pwn.paths");
    std::fs::copy(&t.new, &old_form).unwrap();
    let nbsp = t.p("e\n\u{a0}\u{3000}::error::pwn.paths");
    std::fs::copy(&t.new, &nbsp).unwrap();
    for new in [&hostile, &cr, &old_form, &nbsp] {
        for format in ["table", "markdown", "json", "html"] {
            let mut args = vec![
                "diff",
                s(&t.old),
                s(new),
                "--graph",
                s(&t.old_graph),
                "--graph",
                s(&t.new_graph),
                "--format",
                format,
            ];
            let (code, out, err) = run(&args);
            assert_eq!(code, 0, "{err}");
            no_smuggled_commands(&out, false, &format!("diff --format {format}"));
            no_smuggled_commands(&err, false, "diff's stderr");
            assert!(!out.contains('\u{1b}'), "{out}");
            if format == "html" {
                continue;
            }
            args[0] = "check";
            args.insert(2, "--baseline");
            args.swap(1, 3); // check NEW --baseline OLD
            let (code, out, err) = decode(
                nixcut()
                    .args(&args)
                    .env("GITHUB_ACTIONS", "true")
                    .output()
                    .unwrap(),
            );
            assert_eq!(code, 1, "{args:?}: {err}");
            no_smuggled_commands(&out, true, &format!("check --format {format}"));
            no_smuggled_commands(&err, true, "check's stderr");
            assert!(
                out.contains("::error title=") || err.contains("::error title="),
                "{out}{err}"
            );
        }
    }
    // A file name in an error message, too.
    let (code, _, err) = run(&["why", s(&t.p("x\n::error::gone"))]);
    assert_eq!(code, 2);
    no_smuggled_commands(&err, false, "an error message");
}

// ---- item 5: annotations for package sets ----

/// The README promises `::error` annotations for `check`; on package sets there were
/// none. One per failure (the total, each failing root), with `%`, CR, LF escaped.
#[test]
fn package_set_check_annotates_each_failure_under_github_actions() {
    let t = sets();
    let (code, out, err) = decode(
        nixcut()
            .args(t.check(&t.new, &["--max-total-growth", "1%", "--max-growth", "5%"]))
            .env("GITHUB_ACTIONS", "true")
            .output()
            .unwrap(),
    );
    assert_eq!(code, 1, "{err}");
    let notes: Vec<&str> = out.lines().filter(|l| l.starts_with("::error ")).collect();
    assert_eq!(notes.len(), 3, "the total and two roots: {out}");
    assert!(notes[0].contains("--max-total-growth"), "{notes:?}");
    assert!(
        notes
            .iter()
            .all(|n| !n[2..].contains('%') || n.contains("%25")),
        "{notes:?}"
    );
    assert!(
        notes[1].contains("hello") && notes[2].contains("world"),
        "{notes:?}"
    );
    // With JSON on stdout they go to stderr, and the JSON stays whole.
    let (code, out, err) = decode(
        nixcut()
            .args(t.check(&t.new, &["--format", "json"]))
            .env("GITHUB_ACTIONS", "true")
            .output()
            .unwrap(),
    );
    assert_eq!(code, 1);
    serde_json::from_str::<serde_json::Value>(&out).expect("JSON alone on stdout");
    assert_eq!(
        err.lines().filter(|l| l.starts_with("::error ")).count(),
        2,
        "{err}"
    );
    // Without GitHub Actions, none; and a passing check, none.
    let (_, out, _) = run(&t.check(&t.new, &[]));
    assert!(!out.contains("::error"), "{out}");
    let (code, out, err) = decode(
        nixcut()
            .args(t.check(&t.new, &["--max-growth", "100000%"]))
            .env("GITHUB_ACTIONS", "true")
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.contains("::error") && !err.contains("::error"),
        "{out}{err}"
    );
}

// ---- item 6: a set's store directory ----

/// `/other/store/<hash>-hello-2.12` and `/nix/store/../../etc/<hash>-hello-2.12` were
/// read as `/nix/store/<hash>-hello-2.12` against a graph of `/nix/store`, and the
/// check passed.
#[test]
fn a_package_set_of_another_store_or_in_no_canonical_form_is_refused() {
    let t = sets();
    let new = std::fs::read_to_string(&t.new).unwrap();
    let other = t.p("other.paths");
    std::fs::write(&other, new.replace("/nix/store", "/other/store")).unwrap();
    let (code, _, err) = run(&t.check(&other, &["--max-growth", "100000%"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("/other/store") && err.contains("/nix/store"),
        "{err}"
    );
    // Both sets of /other/store, the graphs of /nix/store.
    let other_old = t.p("other-old.paths");
    let old = std::fs::read_to_string(&t.old).unwrap();
    std::fs::write(&other_old, old.replace("/nix/store", "/other/store")).unwrap();
    let (code, _, err) = run(&[
        "diff",
        s(&other_old),
        s(&other),
        "--graph",
        s(&t.old_graph),
        "--graph",
        s(&t.new_graph),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("old.json") && err.contains("of the store /nix/store"),
        "{err}"
    );
    for (bad, why) in [
        ("/nix/store/../../etc/", "`..`"),
        ("/nix/store/./", "`.`"),
        ("/nix//store/", "`//`"),
    ] {
        let f = t.p("bad.paths");
        let lines: Vec<String> = new.lines().map(String::from).collect();
        std::fs::write(
            &f,
            format!(
                "{}\n{}\n",
                lines[0],
                lines[1].replacen("/nix/store/", bad, 1)
            ),
        )
        .unwrap();
        let (code, _, err) = run(&t.check(&f, &["--max-growth", "100000%"]));
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(
            err.contains("bad.paths:2") && err.contains("canonical"),
            "{bad}: {err}"
        );
        assert!(err.contains(why), "{bad}: {err}");
    }
}

// ---- item 10: clear errors ----

/// `/nix/store/notahash` and a file inside a store path were read as a registration
/// ("expected the number of references"): each is named as the line that is not a
/// store path.
#[test]
fn a_package_set_line_that_is_not_a_store_path_is_named_as_such() {
    let t = sets();
    let sub = format!("{}-extra/bin/x", sp('b', "hello-2.12"));
    for (line, reason) in [
        ("/nix/store/notahash", "too short"),
        (sub.as_str(), "inside a store path"),
    ] {
        let f = t.p("bad.paths");
        std::fs::write(&f, format!("{line}\n")).unwrap();
        let (code, _, err) = run(&["diff", s(&f), s(&t.old)]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("bad.paths:1") && err.contains("not a store path") && err.contains(reason),
            "{line}: {err}"
        );
        assert!(!err.contains("number of references"), "{err}");
    }
}

/// A path listed twice in OLD was reported twice, once as NEW.
#[test]
fn a_duplicate_line_is_reported_once_with_its_side() {
    let t = sets();
    let old = std::fs::read_to_string(&t.old).unwrap();
    let dup = t.p("dup.paths");
    std::fs::write(&dup, format!("{old}{}", old.lines().next().unwrap())).unwrap();
    let (code, out, err) = run(&[
        "diff",
        s(&dup),
        s(&t.new),
        "--graph",
        s(&t.old_graph),
        "--graph",
        s(&t.new_graph),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let dups: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.contains("more than once"))
        .collect();
    assert_eq!(dups.len(), 1, "{dups:?}");
    assert!(
        dups[0].starts_with("OLD: ") && dups[0].contains("dup.paths"),
        "{dups:?}"
    );
}

/// `nixcut why drv.json` (`nix show-derivation` output) exited 0 with "closure ≥0 B in
/// 1 path"; every command now refuses a derivation, naming it.
#[test]
fn derivation_json_is_refused_by_every_command() {
    let t = sets();
    let drv = t.p("drv.json");
    std::fs::write(
        &drv,
        serde_json::json!({
            format!("{}.drv", sp('a', "hello-2.12")): {
                "args": ["-e", "x"], "builder": "/bin/sh", "env": {},
                "inputDrvs": {}, "inputSrcs": [],
                "outputs": {"out": {"path": sp('b', "hello-2.12")}},
                "platform": "x86_64-linux"
            }
        })
        .to_string(),
    )
    .unwrap();
    for args in [
        vec!["why", s(&drv)],
        vec!["refs", s(&drv)],
        vec!["snapshot", s(&drv), "-o", "-"],
        vec!["check", s(&drv), "--max-size", "1GiB"],
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("derivation") && err.contains("drv.json"),
            "{args:?}: {err}"
        );
    }
}

/// `split rocblass` suggested the root, not `rocblas`; `nixcut wyh` suggested nothing.
#[test]
fn misspelled_names_and_commands_suggest_the_nearest() {
    let cache = repo().join("examples/rocm-world-cache");
    let (code, _, err) = run(&["split", "rocblass", "--for", s(&cache)]);
    assert_eq!(code, 2);
    let candidates = err.split("candidates:").nth(1).unwrap_or("");
    assert!(candidates.contains("-rocblas-5.7.1"), "{err}");
    assert!(!candidates.contains("llama-cpp-rocm"), "{err}");
    let (code, _, err) = run(&["wyh", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("'why'"), "{err}");
    let (_, _, err) = run(&["chekc", "x"]);
    assert!(err.contains("'check'"), "{err}");
}

/// `nixcut why DIR` on a directory that is no input listed its entries inside the
/// error; it counts them instead.
#[test]
fn a_directory_that_is_no_input_is_not_listed_in_the_error() {
    let t = sets();
    let d = t.p("private");
    std::fs::create_dir_all(d.join("secret-name")).unwrap();
    std::fs::write(d.join("id_rsa"), "x").unwrap();
    let (code, _, err) = run(&["why", s(&d)]);
    assert_eq!(code, 2);
    assert!(
        !err.contains("secret-name") && !err.contains("id_rsa"),
        "{err}"
    );
    assert!(err.contains("2 entries"), "{err}");
}
