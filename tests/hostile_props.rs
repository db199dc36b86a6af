//! Property tests through the binary: random bytes, random JSON values, random
//! `nix path-info` entries and structured attrs, random narinfo fields, random
//! registration records, closureInfo directories, random `nix-store --query --graph`
//! output and random snapshots are given to every command, as a file or directory and
//! (files) on standard input.
//! Whatever the input: no panic, exit code 0, 1 or 2, and nothing on stdout or stderr
//! that a terminal would act on (a raw control character other than `\n` and `\t`, or a
//! bidirectional override U+202A–U+202E, U+2066–U+2069).
//!
//! Case counts are small (each case runs the binary about ten times) so the whole
//! suite stays fast; `PROPTEST_CASES` raises them.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use common::serve::{Fault, Server};
use common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError};

const NIX32: &[u8] = b"0123456789abcdfghijklmnpqrsvwxyz";

/// A small pool of valid store paths, so that random references often close.
fn pool(i: usize) -> String {
    let hash: String = (0..32)
        .map(|k| NIX32[(i * 7 + k * 3) % 32] as char)
        .collect();
    format!("/nix/store/{hash}-pkg{i}-1.{i}")
}

const POOL: usize = 5;

fn cases(n: u32) -> Config {
    // Shrinking reruns the binary many times; the first failure is shown as is.
    proptest_config(n, 16)
}

/// Characters that break terminals, Markdown and parsers, and any other.
fn hostile_char() -> impl Strategy<Value = char> {
    prop_oneof![
        3 => prop::sample::select(vec![
            '\u{1b}', '\u{7}', '\r', '\u{0}', '\u{8}', '\u{7f}', '\u{85}', '\u{9b}',
            '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}', '\u{feff}', '`', '|', '<',
            '>', '&', '\n', '\t', '%', ':', ',', '"', '\\', '/', '-', ' ', '#', '[',
            '\u{a0}', '\u{3000}',
        ]),
        3 => prop::sample::select(b"abcdfgz0123456789.-_+".to_vec()).prop_map(char::from),
        1 => any::<char>(),
    ]
}

fn hostile_string() -> impl Strategy<Value = String> {
    prop::collection::vec(hostile_char(), 0..20).prop_map(|v| v.into_iter().collect())
}

/// A store path from the pool, one with a hostile name, or any string.
fn path_like() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0..POOL).prop_map(pool),
        1 => hostile_string().prop_map(|name| format!("/nix/store/{}-{name}", "a".repeat(32))),
        1 => hostile_string(),
    ]
}

fn size_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::json;
    prop_oneof![
        4 => (0u64..1 << 40).prop_map(|n| json!(n)),
        1 => Just(json!(u64::MAX)),
        1 => Just(json!(1u64 << 63)),
        1 => Just(json!(3u64 << 61)),
        1 => Just(json!(-1)),
        1 => Just(json!(1.5)),
        1 => hostile_string().prop_map(|s| json!(s)),
        1 => Just(serde_json::Value::Null),
    ]
}

fn json_leaf() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        hostile_string().prop_map(Value::String),
        path_like().prop_map(Value::String),
    ]
}

/// Any JSON value, with keys that the formats look for among random ones.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let key = prop_oneof![
        prop::sample::select(vec![
            "path",
            "narSize",
            "narHash",
            "references",
            "closureSize",
            "deriver",
            "valid",
            "info",
            "version",
            "storeDir",
            "kind",
            "schema_version",
            "paths",
            "root",
            "roots",
            "closure_size",
            "path_count",
            "nar_size",
            "exportReferencesGraph",
            "store_dir",
        ])
        .prop_map(str::to_string),
        hostile_string(),
        path_like(),
    ];
    json_leaf().prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            prop::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// `nix path-info --json` entries, in the object or the array shape.
fn path_info_json() -> impl Strategy<Value = String> {
    let entry = (
        path_like(),
        size_value(),
        prop::collection::vec(path_like(), 0..4),
        prop::option::of(hostile_string()),
        prop::option::of(path_like()),
    );
    (prop::collection::vec(entry, 0..6), any::<bool>()).prop_map(|(entries, array)| {
        use serde_json::{json, Map, Value};
        let objs: Vec<(String, Value)> = entries
            .into_iter()
            .map(|(path, size, refs, hash, deriver)| {
                let mut o = Map::new();
                o.insert("narSize".into(), size);
                o.insert("references".into(), json!(refs));
                if let Some(h) = hash {
                    o.insert("narHash".into(), json!(h));
                }
                if let Some(d) = deriver {
                    o.insert("deriver".into(), json!(d));
                }
                (path, Value::Object(o))
            })
            .collect();
        if array {
            let arr: Vec<Value> = objs
                .into_iter()
                .map(|(p, mut o)| {
                    o["path"] = json!(p);
                    o
                })
                .collect();
            Value::Array(arr).to_string()
        } else {
            Value::Object(objs.into_iter().collect()).to_string()
        }
    })
}

/// A structured-attrs `.attrs.json`: an `exportReferencesGraph` result under a key of
/// its own, beside other attributes.
fn structured_attrs() -> impl Strategy<Value = String> {
    (path_info_json(), hostile_string()).prop_map(|(text, other)| {
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let entries: Vec<serde_json::Value> = match v {
            serde_json::Value::Array(a) => a,
            serde_json::Value::Object(o) => o
                .into_iter()
                .map(|(p, mut e)| {
                    e["path"] = p.into();
                    e
                })
                .collect(),
            _ => Vec::new(),
        };
        serde_json::json!({"builder": other, "closure": entries, "name": "x"}).to_string()
    })
}

/// A narinfo: known and unknown keys with valid and hostile values, in any order.
fn narinfo() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        6 => prop::sample::select(vec![
            "StorePath", "URL", "Compression", "FileHash", "FileSize", "NarHash", "NarSize",
            "References", "Deriver", "Sig", "CA",
        ])
        .prop_map(str::to_string),
        1 => hostile_string(),
    ];
    let value = prop_oneof![
        path_like(),
        (0..POOL).prop_map(|i| pool(i)["/nix/store/".len()..].to_string()),
        prop::collection::vec(
            (0..POOL).prop_map(|i| pool(i)["/nix/store/".len()..].to_string()),
            0..4
        )
        .prop_map(|v| v.join(" ")),
        prop_oneof![
            Just(u64::MAX.to_string()),
            (0u64..1 << 40).prop_map(|n| n.to_string())
        ],
        hostile_string(),
    ];
    (0..POOL, prop::collection::vec((key, value), 0..10)).prop_map(|(i, fields)| {
        let mut text = format!("StorePath: {}\n", pool(i));
        for (k, v) in fields {
            text.push_str(&format!("{k}: {v}\n"));
        }
        text
    })
}

/// Registration records (`nix-store --dump-db`): path, hash, size, deriver, count,
/// references; with any line replaced by a hostile one.
fn registration() -> impl Strategy<Value = String> {
    let record = (
        path_like(),
        prop_oneof![
            Just("sha256:1xga7qa3wjdkhc71mbz9wm36q1nl7z2c95sl9529vindmjnrdn0z".to_string()),
            hostile_string()
        ],
        prop_oneof![
            (0u64..1 << 40).prop_map(|n| n.to_string()),
            Just(u64::MAX.to_string()),
            hostile_string()
        ],
        prop::collection::vec(path_like(), 0..3),
    );
    prop::collection::vec(record, 1..5).prop_map(|records| {
        let mut text = String::new();
        for (p, h, s, refs) in records {
            text.push_str(&format!("{p}\n{h}\n{s}\n\n{}\n", refs.len()));
            for r in refs {
                text.push_str(&r);
                text.push('\n');
            }
        }
        text
    })
}

/// `nix-store --query --graph` output: node and edge lines of pool paths (as base names
/// or, like Nix before 2.4, full paths), hostile ids and labels, and a closing `}` that
/// may be missing.
fn nix_store_graph() -> impl Strategy<Value = String> {
    let id = path_like().prop_map(|p| {
        let base = p.strip_prefix("/nix/store/").map(str::to_string);
        base.unwrap_or(p)
    });
    let id = prop_oneof![id, path_like()];
    let label = prop_oneof![Just(None), hostile_string().prop_map(Some)];
    let line = prop_oneof![
        (id.clone(), label).prop_map(|(id, label)| {
            let name = id.split_once('-').map_or(id.as_str(), |(_, n)| n);
            let label = label.unwrap_or_else(|| name.to_string());
            format!("\"{id}\" [label = \"{label}\", shape = box];")
        }),
        (id.clone(), id).prop_map(|(a, b)| format!("\"{a}\" -> \"{b}\" [color = \"red\"];")),
        hostile_string(),
    ];
    (prop::collection::vec(line, 0..8), any::<bool>()).prop_map(|(lines, closed)| {
        let mut text = String::from("digraph G {\n");
        for l in lines {
            text.push_str(&l);
            text.push('\n');
        }
        if closed {
            text.push_str("}\n");
        }
        text
    })
}

/// A nixcut snapshot with random paths and random top-level fields.
fn snapshot() -> impl Strategy<Value = String> {
    let p = (
        path_like(),
        size_value(),
        prop::collection::vec(path_like(), 0..3),
        prop::option::of(hostile_string()),
    );
    (
        prop::collection::vec(p, 0..5),
        path_like(),
        size_value(),
        size_value(),
        hostile_string(),
    )
        .prop_map(|(paths, root, closure_size, count, origin)| {
            use serde_json::json;
            let paths: Vec<_> = paths
                .into_iter()
                .map(|(path, nar_size, refs, hash)| {
                    json!({"path": path, "nar_size": nar_size, "nar_hash": hash,
                           "closure_size": nar_size, "references": refs, "deriver": null})
                })
                .collect();
            json!({"kind": "nixcut-snapshot", "schema_version": 1, "nixcut_version": origin,
                   "store_dir": "/nix/store", "root": root, "roots": [root],
                   "created_from": {"kind": "path-info-json", "origin": origin},
                   "closure_size": closure_size, "path_count": count, "paths": paths})
            .to_string()
        })
}

/// Bytes: random, or a valid prefix cut and damaged.
fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..256),
        (path_info_json(), any::<prop::sample::Index>(), any::<u8>()).prop_map(|(t, i, b)| {
            let mut v = t.into_bytes();
            if !v.is_empty() {
                let at = i.index(v.len());
                v[at] = b;
                v.truncate(at + 1 + i.index(8));
            }
            v
        }),
    ]
}

/// Whether `s` holds what a terminal would act on: a control character other than
/// `\n` and `\t` (C0, DEL, C1), or a bidirectional embedding, override or isolate.
fn terminal_hazard(s: &str) -> Option<(usize, char)> {
    s.char_indices().find(|&(_, c)| {
        (c.is_control() && c != '\n' && c != '\t')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    })
}

/// The commands every input goes through (INPUT is replaced by the input).
const COMMANDS: &[&[&str]] = &[
    &["why", "INPUT", "--no-evidence"],
    &["why", "INPUT", "--no-evidence", "--format", "json"],
    &["why", "INPUT", "--no-evidence", "--format", "markdown"],
    &["why", "INPUT", "pkg1", "--no-evidence"],
    &["refs", "INPUT", "--no-cache"],
    &["gpu", "INPUT", "--no-cache", "--gpu-targets", "gfx1030"],
    &["snapshot", "INPUT", "-o", "-"],
    &["diff", "INPUT", "INPUT"],
    &["check", "INPUT", "--max-size", "1GiB"],
    &[
        "check",
        "INPUT",
        "--baseline",
        "INPUT",
        "--format",
        "markdown",
    ],
];

/// Run every command on `input` (and `why` on standard input when `stdin` is given);
/// check exit codes and output.
fn every_command(input: &Path, stdin: Option<&[u8]>) -> Result<(), TestCaseError> {
    run_commands(input, stdin, COMMANDS)
}

fn run_commands(
    input: &Path,
    stdin: Option<&[u8]>,
    commands: &[&[&str]],
) -> Result<(), TestCaseError> {
    let input = input.to_str().expect("UTF-8 temp path");
    let scratch = tempfile::tempdir().unwrap();
    let mut runs: Vec<(Vec<String>, Option<&[u8]>)> = commands
        .iter()
        .map(|c| {
            let args = c
                .iter()
                .map(|a| {
                    if *a == "INPUT" {
                        input.to_string()
                    } else {
                        a.to_string()
                    }
                })
                .collect();
            (args, None)
        })
        .collect();
    if let Some(data) = stdin {
        runs.push((
            vec!["why".into(), "-".into(), "--no-evidence".into()],
            Some(data),
        ));
    }
    for (args, data) in runs {
        let mut cmd = nixcut();
        cmd.args(&args)
            .env("XDG_CACHE_HOME", scratch.path())
            .env("NIXCUT_NO_STORE_DB", "1")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("GITHUB_ACTIONS")
            .stdin(if data.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("run nixcut");
        if let Some(d) = data {
            let mut w = child.stdin.take().unwrap();
            // The binary may refuse early and close its end: not an error here.
            let _ = w.write_all(d);
        }
        let out = child.wait_with_output().expect("wait for nixcut");
        let (code, stdout, stderr) = decode(out);
        prop_assert!(
            matches!(code, 0..=2),
            "{args:?}: exit {code} (a panic is 101, a signal -1)\nstderr: {stderr}"
        );
        prop_assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        for (stream, text) in [("stdout", &stdout), ("stderr", &stderr)] {
            if let Some((at, c)) = terminal_hazard(text) {
                prop_assert!(
                    false,
                    "{args:?}: raw {c:?} on {stream} at byte {at}: {:?}",
                    &text[at.saturating_sub(60)..(at + 20).min(text.len())]
                );
            }
        }
    }
    Ok(())
}

fn file_case(content: &[u8], name: &str) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join(name);
    std::fs::write(&f, content).unwrap();
    every_command(&f, Some(content))
}

/// Input names are input too: a file named with an escape sequence and a
/// right-to-left override, holding a valid closure.
fn hostile_file_name(commands: &[&[&str]]) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("evil\u{1b}[2J\u{202e}nosj.json");
    std::fs::copy(repo().join("examples/llama-cpp-cuda.json"), &f).unwrap();
    let r = run_commands(&f, None, commands);
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn a_hostile_file_name_in_tables_markdown_snapshots_and_messages() {
    hostile_file_name(&[
        &["why", "INPUT", "--no-evidence"],
        &["why", "INPUT", "--no-evidence", "--format", "markdown"],
        &["why", "INPUT", "cudart", "--no-evidence"],
        &["why", "INPUT", "nosuchthing"],
        &["refs", "INPUT", "--no-cache", "--format", "markdown"],
        &["gpu", "INPUT", "--no-cache", "--format", "markdown"],
        &["snapshot", "INPUT", "-o", "-"],
        &["diff", "INPUT", "INPUT", "--format", "markdown"],
        &["check", "INPUT", "--max-size", "1MiB"],
        &[
            "check",
            "INPUT",
            "--baseline",
            "INPUT",
            "--format",
            "markdown",
        ],
    ]);
}

/// Issue 8.5: JSON reports wrote U+202A-U+202E, U+2066-U+2069 and C1 controls raw inside
/// strings (serde_json escapes only C0): `source.origin` showed a file name's U+202E.
#[test]
fn a_hostile_file_name_in_json_reports() {
    hostile_file_name(&[
        &["why", "INPUT", "--no-evidence", "--format", "json"],
        &["refs", "INPUT", "--no-cache", "--format", "json"],
        &["diff", "INPUT", "INPUT", "--format", "json"],
        &["check", "INPUT", "--max-size", "1GiB", "--format", "json"],
    ]);
}

proptest! {
    #![proptest_config(cases(16))]

    #[test]
    fn random_bytes_through_every_command(b in bytes()) {
        file_case(&b, "input")?;
    }

    #[test]
    fn random_json_values_through_every_command(v in json_value()) {
        file_case(v.to_string().as_bytes(), "input.json")?;
    }

    #[test]
    fn random_path_info_through_every_command(text in path_info_json()) {
        file_case(text.as_bytes(), "closure.json")?;
    }

    #[test]
    fn random_structured_attrs_through_every_command(text in structured_attrs()) {
        file_case(text.as_bytes(), ".attrs.json")?;
    }

    #[test]
    fn random_registration_through_every_command(text in registration()) {
        file_case(text.as_bytes(), "registration")?;
    }

    #[test]
    fn random_nix_store_graphs_through_every_command(text in nix_store_graph()) {
        file_case(text.as_bytes(), "graph.dot")?;
    }

    #[test]
    fn random_snapshots_through_every_command(text in snapshot()) {
        file_case(text.as_bytes(), "base.json")?;
    }

    #[test]
    fn random_narinfo_fields_through_every_command(
        infos in prop::collection::vec(narinfo(), 1..4),
        cache_info in prop_oneof![Just("StoreDir: /nix/store\n".to_string()), hostile_string()],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        std::fs::create_dir(&cache).unwrap();
        std::fs::write(cache.join("nix-cache-info"), cache_info).unwrap();
        for (i, text) in infos.iter().enumerate() {
            let hash = &pool(i)["/nix/store/".len()..][..32];
            std::fs::write(cache.join(format!("{hash}.narinfo")), text).unwrap();
        }
        every_command(&cache, None)?;
    }

    #[test]
    fn random_closure_info_through_every_command(text in registration(), total in size_value()) {
        let dir = tempfile::tempdir().unwrap();
        let ci = dir.path().join("closure-info");
        std::fs::create_dir(&ci).unwrap();
        std::fs::write(ci.join("registration"), &text).unwrap();
        std::fs::write(ci.join("total-nar-size"), total.to_string()).unwrap();
        std::fs::write(ci.join("store-paths"), pool(0)).unwrap();
        every_command(&ci, None)?;
    }
}

// ---- Issue 19: hostile HTTP caches ----

/// File names that broke generated Nix code or shell (antiquotations, quotes, spaces,
/// globs, control and bidi characters), and plain ones.
fn hostile_entry_name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("${builtins.trace \"pwned\" \"\"}".to_string()),
        Just("'${x}".to_string()),
        Just("'''${x}".to_string()),
        Just("libfoo.so .a".to_string()),
        Just("a*?[b".to_string()),
        Just("x\ry".to_string()),
        Just("e\u{1b}[2J\u{202e}vil".to_string()),
        Just("libz.so".to_string()),
        hostile_string(),
    ]
    // NAR names hold no `/` or NUL and are not `.` or `..`.
    .prop_map(|n| n.replace(['/', '\0'], "_"))
    .prop_filter("a NAR entry name", |n| {
        !n.is_empty() && n != "." && n != ".."
    })
}

/// How the server answers one of the cache's files.
fn http_fault() -> impl Strategy<Value = Option<Fault>> {
    prop_oneof![
        4 => Just(None),
        1 => prop::sample::select(vec![
            "file:///etc/passwd", "data:text/plain,x", "mailto:a@b.c", "/nix-cache-info",
            "//", "http://[::1", "\u{1b}[2J",
        ])
        .prop_map(|t| Some(Fault::Redirect(t.to_string()))),
        1 => Just(Some(Fault::Endless(Vec::new()))),
        1 => bytes().prop_map(|b| Some(Fault::Body(b))),
        1 => Just(Some(Fault::Status(500))),
        1 => Just(Some(Fault::NotFound)),
        1 => Just(Some(Fault::DropMidBody)),
        1 => Just(Some(Fault::Drip(std::time::Duration::from_millis(2)))),
    ]
}

proptest! {
    #![proptest_config(cases(12))]

    /// A cache over HTTP whose files redirect (to other schemes, in loops), never end,
    /// mismatch their narinfo, fail or drip, with hostile file names in its NARs:
    /// every command, through `--cache`, exits 0, 1 or 2, never panics, and puts nothing
    /// on a terminal that would act on it.
    #[test]
    fn hostile_http_caches_through_every_command(
        names in prop::collection::vec(hostile_entry_name(), 1..6),
        faults in prop::collection::vec(http_fault(), 6),
        forged in any::<bool>(),
    ) {
        use common::serve::{dir_nar, file_nar, write_cache, APP, LIB};
        let dir = tempfile::tempdir().unwrap();
        let refer = format!("/nix/store/{LIB}/lib/libz.so\n").into_bytes();
        let entries: Vec<(String, Vec<u8>)> =
            names.iter().map(|n| (n.clone(), refer.clone())).collect();
        let files = write_cache(
            dir.path(),
            &[
                (APP, dir_nar(&entries), LIB),
                (LIB, file_nar(b"\x7fELF not really"), ""),
            ],
        );
        if forged {
            // The NAR the narinfo describes, but another one served in its place.
            let other = dir_nar(&[("x".to_string(), refer.clone())]);
            std::fs::write(dir.path().join(&files[0]), other).unwrap();
        }
        let targets = [
            "/nix-cache-info".to_string(),
            format!("/{}.narinfo", &APP[..32]),
            format!("/{}.narinfo", &LIB[..32]),
            format!("/{}", files[0]),
            format!("/{}", files[1]),
            format!("/{}.ls", &APP[..32]),
        ];
        let srv = Server::start(dir.path());
        let rules: Vec<(String, Fault)> = targets
            .iter()
            .zip(&faults)
            .filter_map(|(t, f)| Some((t.clone(), f.clone()?)))
            .collect();
        // An endless body is served once (a client that resumed it for ever would
        // otherwise never end this test); asked again, 404.
        srv.set_rule(move |p, nth| {
            rules.iter().find(|(t, _)| t == p).map(|(_, f)| match f {
                Fault::Endless(_) if nth > 0 => Fault::NotFound,
                f => f.clone(),
            })
        });
        let root = format!("/nix/store/{APP}");
        let bounded = ["--cache", srv.url.as_str(), "--http-timeout", "1", "--http-retries", "1"];
        let commands: Vec<Vec<&str>> = [
            &["why", "INPUT"][..],
            &["why", "INPUT", "--format", "json"],
            &["why", "INPUT", "lib", "--max-chains", "1"],
            &["refs", "INPUT", "--format", "markdown"],
            &["split", "INPUT"],
            &["gpu", "INPUT"],
            &["snapshot", "INPUT", "-o", "-"],
            &["diff", "INPUT", "INPUT"],
            &["check", "INPUT", "--max-size", "1GiB"],
        ]
        .iter()
        .map(|c| c.iter().copied().chain(bounded).collect())
        .collect();
        let commands: Vec<&[&str]> = commands.iter().map(Vec::as_slice).collect();
        run_commands(Path::new(&root), None, &commands)?;
    }
}

// ---- Issue 31: hostile package sets, servers and outputs into a store ----

/// One line of a package set: a pool path, a hostile name, a path of another store,
/// a non-canonical spelling, a file inside a store path, or any string.
fn set_line() -> impl Strategy<Value = String> {
    prop_oneof![
        // Mostly good lines, so that many sets get past loading to the report.
        18 => (0..POOL).prop_map(pool),
        1 => hostile_string().prop_map(|name| format!("/nix/store/{}-{name}", "b".repeat(32))),
        1 => (0..POOL).prop_map(|i| pool(i).replace("/nix/store", "/other/store")),
        1 => (0..POOL).prop_map(|i| pool(i).replace("/nix/store/", "/nix/store/../../etc/")),
        1 => (0..POOL).prop_map(|i| pool(i).replace("/nix/store/", "/nix//store/")),
        1 => (0..POOL).prop_map(|i| format!("{}/bin/x", pool(i))),
        1 => hostile_string(),
    ]
}

/// The graph of a package set over the pool: every pool path, its size (huge ones
/// among them) and references to later pool paths, as `nix path-info --json`.
fn pool_graph() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(size_value(), POOL),
        prop::collection::vec(prop::collection::vec(0..POOL, 0..3), POOL),
    )
        .prop_map(|(sizes, refs)| {
            let mut m = serde_json::Map::new();
            for (i, (size, r)) in sizes.into_iter().zip(refs).enumerate() {
                let r: Vec<String> = r.into_iter().filter(|&j| j > i).map(pool).collect();
                m.insert(
                    pool(i),
                    serde_json::json!({"narSize": size, "references": r}),
                );
            }
            serde_json::Value::Object(m).to_string()
        })
}

/// A file name for a package set: hostile characters, no `/` or NUL.
fn set_file_name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("e\n::error::pwn.paths".to_string()),
        Just("e\r##[error]pwn".to_string()),
        Just("plain.paths".to_string()),
        hostile_string().prop_map(|n| format!("{}.paths", n.replace(['/', '\0'], "_"))),
    ]
}

proptest! {
    #![proptest_config(cases(12))]

    /// Package sets with hostile lines and file names, graphs with huge sizes, read
    /// from `--graph` files or from a cache over HTTP whose server misbehaves, under
    /// GitHub Actions, with every output (`--summary`, `$GITHUB_STEP_SUMMARY`, the
    /// cache directory) aimed into a store object directly or through a link: exit 0,
    /// 1 or 2, no panic, nothing a terminal would act on, no line that a CI runner
    /// would take for a workflow command but nixcut's own annotations, and the store
    /// exactly as it was.
    #[test]
    fn hostile_package_sets_through_diff_and_check(
        old_lines in prop::collection::vec(set_line(), 1..5),
        new_lines in prop::collection::vec(set_line(), 1..5),
        names in (set_file_name(), set_file_name()),
        graphs in (pool_graph(), pool_graph()),
        over_http in any::<bool>(),
        fault in http_fault(),
        aim in 0..3usize,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // A store root with one object; outputs are aimed into it.
        let root = d.join("root");
        let obj = root.join("nix/store").join(format!("{}-obj-1.0", "c".repeat(32)));
        std::fs::create_dir_all(obj.join("sub")).unwrap();
        std::fs::write(obj.join("f.txt"), "x").unwrap();
        let links = d.join("links");
        std::fs::create_dir_all(&links).unwrap();
        let target = match aim {
            0 => obj.join("summary.md"),
            1 => {
                std::os::unix::fs::symlink(obj.join("f.txt"), links.join("to-file")).unwrap();
                links.join("to-file")
            }
            _ => {
                std::os::unix::fs::symlink(obj.join("sub"), links.join("to-dir")).unwrap();
                links.join("to-dir").join("summary.md")
            }
        };
        let cache_home = d.join("xc");
        std::fs::create_dir_all(&cache_home).unwrap();
        std::os::unix::fs::symlink(obj.join("sub"), cache_home.join("nixcut")).unwrap();
        let (old_name, new_name) = if names.0 == names.1 {
            (format!("old-{}", names.0), names.1)
        } else {
            names
        };
        let old = d.join(&old_name);
        let new = d.join(&new_name);
        std::fs::write(&old, old_lines.join("\n")).unwrap();
        std::fs::write(&new, new_lines.join("\n")).unwrap();
        let old_graph = d.join("old.json");
        let new_graph = d.join("new.json");
        std::fs::write(&old_graph, &graphs.0).unwrap();
        std::fs::write(&new_graph, &graphs.1).unwrap();
        // The same graph as a binary cache served over HTTP (one server misbehaving).
        let srv = if over_http {
            let cache = d.join("cache");
            std::fs::create_dir_all(&cache).unwrap();
            std::fs::write(cache.join("nix-cache-info"), "StoreDir: /nix/store\n").unwrap();
            let g: serde_json::Value = serde_json::from_str(&graphs.1).unwrap();
            for (path, info) in g.as_object().unwrap() {
                let base = path.rsplit('/').next().unwrap();
                let refs: Vec<&str> = info["references"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|r| r.as_str()?.rsplit('/').next())
                    .collect();
                std::fs::write(
                    cache.join(format!("{}.narinfo", &base[..32])),
                    format!(
                        "StorePath: {path}\nURL: nar/x.nar\nCompression: none\nNarHash: \
                         sha256:{}\nNarSize: {}\nReferences: {}\n",
                        "0".repeat(52),
                        info["narSize"],
                        refs.join(" ")
                    ),
                )
                .unwrap();
            }
            let srv = Server::start(&cache);
            if let Some(f) = fault {
                let first = format!("/{}.narinfo", &pool(0).rsplit('/').next().unwrap()[..32]);
                srv.set_rule(move |p, nth| (p == first && nth == 0).then(|| match &f {
                    Fault::Endless(_) => Fault::NotFound,
                    f => f.clone(),
                }));
            }
            Some(srv)
        } else {
            None
        };
        let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
        let graph_args: Vec<String> = match &srv {
            Some(s) => vec![
                "--cache".into(), s.url.clone(), "--http-timeout".into(), "1".into(),
                "--http-retries".into(), "1".into(),
            ],
            None => vec![
                "--graph".into(), old_graph.to_str().unwrap().into(),
                "--graph".into(), new_graph.to_str().unwrap().into(),
            ],
        };
        let target_s = target.to_str().unwrap().to_string();
        let before = tree_inventory(&root);
        let runs: Vec<(Vec<&str>, bool)> = vec![
            (vec!["diff", old, new], false),
            (vec!["diff", old, new, "--format", "json"], false),
            (vec!["diff", old, new, "--format", "markdown"], false),
            (vec!["diff", old, new, "--format", "html"], false),
            (vec!["check", new, "--baseline", old, "--max-total-growth", "1%"], true),
            (vec!["check", new, "--baseline", old, "--format", "json"], true),
            (vec!["check", new, "--baseline", old, "--summary", &target_s], true),
        ];
        for (args, annotated) in runs {
            let mut cmd = nixcut();
            cmd.args(&args)
                .args(&graph_args)
                .args(["--store-root", root.to_str().unwrap()])
                .env("XDG_CACHE_HOME", &cache_home)
                .env("GITHUB_ACTIONS", "true")
                .env("GITHUB_STEP_SUMMARY", &target)
                .env("NIXCUT_NO_STORE_DB", "1")
                .stdin(Stdio::null());
            let (code, stdout, stderr) = decode(cmd.output().expect("run nixcut"));
            prop_assert!(
                matches!(code, 0..=2),
                "{args:?}: exit {code}\nstderr: {stderr}"
            );
            prop_assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
            for (stream, text) in [("stdout", &stdout), ("stderr", &stderr)] {
                if let Some((at, c)) = terminal_hazard(text) {
                    prop_assert!(false, "{args:?}: raw {c:?} on {stream} at byte {at}");
                }
                for line in text.split(['\n', '\r']) {
                    // As GitHub's runner reads a line (see tests/hostile_sets.rs).
                    let t = line.trim_start_matches(char::is_whitespace);
                    let ours = annotated && t.starts_with("::error title=");
                    prop_assert!(
                        !line.contains("##["),
                        "{args:?}: an old-form workflow command on {stream}: {line:?}"
                    );
                    prop_assert!(
                        ours || !t.starts_with("::"),
                        "{args:?}: a workflow command on {stream}: {line:?}"
                    );
                }
            }
            if args.contains(&"--summary") {
                prop_assert_eq!(code, 2, "--summary into the store: {}", stderr);
            }
            prop_assert_eq!(&tree_inventory(&root), &before, "{:?} changed the store", args);
        }
    }
}
