//! `--comment` (issue 35, part 2): a pull-request comment that starts with its stable
//! marker line, names the largest cause in its first 10 lines and fits GitHub's 65,536
//! characters (and bytes) whatever the size of the change: a generated 60,000-root
//! package-set change with a planted cause, closures, a check, and hostile sets (huge
//! names, many warnings, nothing changed).

mod common;
mod set_world;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::run;
use set_world::{generate, Params};

const LIMIT: usize = 65_536;
const MARKER: &str = "<!-- nixcut:comment id=closure-size -->";
const URL: &str = "https://github.com/o/r/actions/runs/1#artifacts";

/// What every comment must be: within the limit in bytes and characters, the marker
/// first, every `<details>` closed, and `needle` (the largest cause) in the first 10
/// lines.
fn assert_comment(c: &str, marker: &str, needle: &str) {
    assert!(c.len() <= LIMIT, "{} bytes", c.len());
    assert!(
        c.chars().count() <= LIMIT,
        "{} characters",
        c.chars().count()
    );
    assert_eq!(
        c.lines().next(),
        Some(marker),
        "the first line is the marker"
    );
    let head: Vec<&str> = c.lines().take(10).collect();
    assert!(
        head.iter().any(|l| l.contains(needle)),
        "`{needle}` in the first 10 lines:\n{}",
        head.join("\n")
    );
    assert_eq!(
        c.matches("<details>").count(),
        c.matches("</details>").count(),
        "every <details> is closed"
    );
    assert!(
        !c.lines().any(|l| l.trim_start().starts_with("::")),
        "no line reads as a workflow command"
    );
}

/// `8571` → `8,571`.
fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

struct Big {
    dir: PathBuf,
    huge_roots: usize,
}

impl Big {
    fn p(&self, name: &str) -> String {
        self.dir.join(name).to_string_lossy().into_owned()
    }
}

/// 60,000 roots over 2,000 libraries in 12 layers; NEW plants `libhuge-1.0` (400 MiB)
/// below every seventh root (`tests/set_world`). Generated once.
fn big() -> &'static Big {
    static B: OnceLock<Big> = OnceLock::new();
    B.get_or_init(|| {
        let t = std::time::Instant::now();
        let w = generate(Params {
            roots: 60_000,
            libs: 2_000,
            layers: 12,
            seed: 35,
        });
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("comment-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        set_world::write_files(&dir, &w);
        eprintln!(
            "generated {} + {} roots in {:.1} s",
            w.old.roots.len(),
            w.new.roots.len(),
            t.elapsed().as_secs_f64()
        );
        Big {
            dir,
            huge_roots: w.huge_roots,
        }
    })
}

fn big_run(args: &[&str]) -> (i32, String, String) {
    let b = big();
    let (old, new, og, ng) = (
        b.p("old.paths"),
        b.p("new.paths"),
        b.p("old.json"),
        b.p("new.json"),
    );
    let mut all: Vec<&str> = vec![args[0]];
    if args[0] == "diff" {
        all.extend([old.as_str(), new.as_str()]);
    } else {
        all.extend([new.as_str(), "--baseline", old.as_str()]);
    }
    all.extend(["--graph", &og, "--graph", &ng]);
    all.extend_from_slice(&args[1..]);
    let t = std::time::Instant::now();
    let r = run(&all);
    eprintln!("{args:?}: {:.1} s", t.elapsed().as_secs_f64());
    r
}

#[test]
fn a_60000_root_set_change_fits_and_names_the_planted_cause_first() {
    let b = big();
    let (code, c, err) = big_run(&["diff", "--format", "markdown", "--comment"]);
    assert_eq!(code, 0, "{err}");
    assert_comment(&c, MARKER, "libhuge");
    // The cause line has its bytes and its roots.
    let cause = c.lines().find(|l| l.contains("largest cause")).unwrap();
    let roots = thousands(b.huge_roots);
    assert!(
        cause.contains(&format!("added to {roots} closures")),
        "{cause}"
    );
    assert!(cause.contains("+400.0 MiB each"), "{cause}");
    // What did not fit is folded and counted, and where it is is said.
    assert!(c.contains("<details><summary>"), "the rest is folded");
    let counted = c
        .lines()
        .find(|l| l.starts_with("… and ") && l.contains(" more roots"))
        .unwrap_or_else(|| panic!("the roots left out are counted:\n{c}"));
    assert!(counted.contains(','), "counted with thousands: {counted}");
    assert!(counted.contains("--format json"), "{counted}");
    assert!(c.len() > 50_000, "the room is used: {} bytes", c.len());
}

#[test]
fn a_60000_root_set_check_puts_the_verdict_then_the_cause_first() {
    let f = tempfile::NamedTempFile::new().unwrap();
    let summary = f.path().to_str().unwrap();
    std::fs::write(summary, "old content of the file\n").unwrap();
    let (code, out, err) = big_run(&[
        "check",
        "--max-growth",
        "5%",
        "--summary",
        summary,
        "--comment",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "over budget: {err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("standard output is JSON");
    assert_eq!(json["check"]["pass"], false);
    let c = std::fs::read_to_string(summary).unwrap();
    assert_comment(&c, MARKER, "libhuge");
    assert!(!c.contains("old content"), "the comment replaces the file");
    let title = c.lines().nth(1).unwrap();
    assert!(
        title.contains("failed"),
        "the verdict is the title: {title}"
    );
}

fn examples(name: &str) -> String {
    common::repo()
        .join("examples")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_closure_diff_and_check_name_the_largest_package_not_the_root() {
    let (cuda, rocm) = (
        examples("llama-cpp-cuda.json"),
        examples("llama-cpp-rocm.json"),
    );
    let (code, c, err) = run(&["diff", &cuda, &rocm, "--format", "markdown", "--comment"]);
    assert_eq!(code, 0, "{err}");
    // clr brings 4.3 GiB, the most of any package but the root itself.
    assert_comment(&c, MARKER, "clr");
    let cause = c.lines().find(|l| l.contains("largest cause")).unwrap();
    assert!(
        cause.contains("clr") && cause.contains("+4.3 GiB"),
        "{cause}"
    );
    // Every row asked for, it stays a comment; --all in a plain diff too.
    let (code, c2, _) = run(&["diff", &cuda, &rocm, "--comment", "--all"]);
    assert_eq!(code, 0);
    assert_eq!(
        c, c2,
        "--comment alone is Markdown, and folds what --all lists"
    );

    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("comment.md");
    let (code, _, err) = run(&[
        "check",
        &rocm,
        "--baseline",
        &cuda,
        "--summary",
        summary.to_str().unwrap(),
        "--comment",
    ]);
    assert_eq!(code, 1, "{err}");
    let c = std::fs::read_to_string(&summary).unwrap();
    assert_comment(&c, MARKER, "clr");
    let lines: Vec<&str> = c.lines().collect();
    assert!(
        lines[1].contains("❌") && lines[1].contains("failed"),
        "{}",
        lines[1]
    );
    // The verdict, then the diff.
    let verdict = c.find("nixcut check:").expect("the check's table");
    let diff = c.find("| # | package |").expect("the diff's table");
    assert!(verdict < diff);

    // Against another build (no baseline, no diff): the first path only ROOT has.
    let (code, _, err) = run(&[
        "check",
        &rocm,
        "--against",
        &cuda,
        "--max-ratio",
        "2",
        "--summary",
        summary.to_str().unwrap(),
        "--comment",
    ]);
    assert_eq!(code, 1, "{err}");
    let c = std::fs::read_to_string(&summary).unwrap();
    assert_comment(&c, MARKER, "not in llama-cpp-cuda-0.0.0");
    assert!(!c.contains("| # | package |"), "no diff without a baseline");
}

/// A package set of `n` roots with names `len` characters long, each root its own
/// package; NEW adds a library `grow` below every root and lists each root `dups` times
/// (a warning per duplicate).
fn hostile_sets(dir: &Path, n: usize, len: usize, grow: bool, dups: usize) -> [String; 3] {
    let hash = |i: usize, salt: char| {
        let s = format!("{salt}{i:031}");
        s.chars()
            .map(|c| match c {
                '0' => 'a',
                'e' | 'o' | 'u' | 't' => 'b',
                c => c,
            })
            .collect::<String>()
    };
    let name = |i: usize| {
        let base = format!("r{i}-");
        format!(
            "{base}{}-1.0",
            "x".repeat(len.saturating_sub(base.len() + 4))
        )
    };
    let mut graph = serde_json::Map::new();
    let lib = format!("/nix/store/{}-libgrow-2.0", hash(0, 'l'));
    graph.insert(
        lib.clone(),
        serde_json::json!({ "narSize": 3 << 20, "references": [] }),
    );
    let (mut old, mut new) = (String::new(), String::new());
    for i in 0..n {
        let o = format!("/nix/store/{}-{}", hash(i, 'c'), name(i));
        let nw = format!("/nix/store/{}-{}", hash(i, 'd'), name(i));
        graph.insert(
            o.clone(),
            serde_json::json!({ "narSize": 1000 + i, "references": [] }),
        );
        let refs = if grow { vec![lib.clone()] } else { vec![] };
        graph.insert(
            nw.clone(),
            serde_json::json!({ "narSize": 1000 + i, "references": refs }),
        );
        old.push_str(&o);
        old.push('\n');
        for _ in 0..=dups {
            new.push_str(&nw);
            new.push('\n');
        }
    }
    let p = |f: &str| dir.join(f).to_string_lossy().into_owned();
    std::fs::write(p("old.paths"), old).unwrap();
    std::fs::write(p("new.paths"), new).unwrap();
    std::fs::write(
        p("graph.json"),
        serde_json::Value::Object(graph).to_string(),
    )
    .unwrap();
    [p("old.paths"), p("new.paths"), p("graph.json")]
}

#[test]
fn hostile_sets_still_fit() {
    // (roots, name length, a library grows, duplicate lines per root)
    for (n, len, grow, dups) in [
        (1, 200, false, 0),
        (3_000, 200, true, 0),
        (2_000, 60, true, 3),
        (500, 200, false, 20),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let [old, new, graph] = hostile_sets(dir.path(), n, len, grow, dups);
        for cmd in ["diff", "check"] {
            let summary = dir.path().join("comment.md");
            let s = summary.to_str().unwrap();
            let args: Vec<&str> = if cmd == "diff" {
                vec![
                    "diff",
                    &old,
                    &new,
                    "--graph",
                    &graph,
                    "--comment",
                    "--all",
                    "--comment-id",
                    "sets.x86_64-linux",
                    "--artifact-url",
                    URL,
                ]
            } else {
                vec![
                    "check",
                    &new,
                    "--baseline",
                    &old,
                    "--graph",
                    &graph,
                    "--summary",
                    s,
                    "--comment",
                    "--format",
                    "json",
                ]
            };
            let (code, out, err) = run(&args);
            let case = format!("{cmd} n={n} len={len} grow={grow} dups={dups}");
            let c = if cmd == "diff" {
                assert_eq!(code, 0, "{case}: {err}");
                out
            } else {
                assert_eq!(code, if grow { 1 } else { 0 }, "{case}: {err}");
                std::fs::read_to_string(&summary).unwrap()
            };
            let needle = if grow {
                "libgrow"
            } else {
                "no package changed"
            };
            if cmd == "diff" {
                let marker = "<!-- nixcut:comment id=sets.x86_64-linux -->";
                assert_comment(&c, marker, needle);
                let link = format!("[JSON report]({URL})");
                assert!(
                    c.lines().take(10).any(|l| l.contains(&link)),
                    "{case}: linked"
                );
                if let Some(left) = c.lines().find(|l| l.starts_with("… and ")) {
                    assert!(left.contains(&link), "{case}: {left}");
                }
            } else {
                assert_comment(&c, MARKER, needle);
            }
            if dups > 0 {
                assert!(c.contains("warning"), "{case}: the warnings are said");
            }
        }
    }
}

#[test]
fn bad_comment_flags_are_errors_before_any_work() {
    let (cuda, rocm) = (
        examples("llama-cpp-cuda.json"),
        examples("llama-cpp-rocm.json"),
    );
    for (args, says) in [
        (
            vec!["--comment-id", "a b"],
            "--comment-id `a b`: the comment id has ' ' at character 2",
        ),
        (vec!["--comment-id", ""], "the comment id is empty"),
        (vec!["--comment-id", "x-->"], "'>' at character 4"),
        (
            vec!["--artifact-url", "ftp://x"],
            "not an http:// or https:// URL",
        ),
        (
            vec!["--format", "json"],
            "drop --format or give --format markdown",
        ),
    ] {
        let mut all = vec!["diff", cuda.as_str(), rocm.as_str(), "--comment"];
        all.extend(args);
        let (code, out, err) = run(&all);
        assert_eq!(code, 2, "{all:?}");
        assert!(out.is_empty());
        assert!(err.contains(says), "{all:?}: {err}");
    }
    // --comment-id without --comment is a usage error.
    let (code, _, _) = run(&["diff", &cuda, &rocm, "--comment-id", "x"]);
    assert_eq!(code, 2);
    // check writes the comment to --summary FILE.
    let (code, _, err) = run(&["check", &rocm, "--baseline", &cuda, "--comment"]);
    assert_eq!(code, 2);
    assert!(err.contains("--summary FILE"), "{err}");
}
