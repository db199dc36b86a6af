//! Property tests: mutated, truncated and random versions of every loader fixture are
//! fed to `nixcut::load::load`. Any result is fine except a panic.

use std::path::{Path, PathBuf};

use nixcut::load::{load, LoadOptions};
use proptest::prelude::*;

fn fixture_dir() -> PathBuf {
    PathBuf::from(format!(
        "{}/tests/fixtures/load",
        env!("CARGO_MANIFEST_DIR")
    ))
}

/// Every file a loader reads, as (directory fixture or `None`, file).
fn targets() -> Vec<(Option<&'static str>, String)> {
    let mut t: Vec<(Option<&'static str>, String)> = [
        "path-info-2.3.json",
        "path-info-2.8.json",
        "path-info-2.15.json",
        "path-info-2.19.json",
        "path-info-2.23.json",
        "path-info-2.33-format1.json",
        "path-info-format2.json",
        "path-info-format3.json",
        "dump-db.txt",
        "attrs.json",
        "export-references-graph",
        "nix-store-graph.dot",
    ]
    .iter()
    .map(|f| (None, f.to_string()))
    .collect();
    for f in ["registration", "store-paths", "total-nar-size"] {
        t.push((Some("closure-info"), f.to_string()));
    }
    let mut cache: Vec<String> = std::fs::read_dir(fixture_dir().join("binary-cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".narinfo") || n == "nix-cache-info")
        .collect();
    cache.sort();
    for f in cache {
        t.push((Some("binary-cache"), f));
    }
    t
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Overwrite(Vec<(usize, u8)>),
    Insert(usize, Vec<u8>),
    Duplicate(usize, usize),
    Random(Vec<u8>),
}

/// Bytes that matter to the formats, so mutations reach past the first check.
fn interesting_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        any::<u8>(),
        proptest::sample::select(b"{}[]\":,0123456789-\n /ez\\".to_vec()),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        proptest::collection::vec((any::<usize>(), interesting_byte()), 1..8)
            .prop_map(Mutation::Overwrite),
        (
            any::<usize>(),
            proptest::collection::vec(interesting_byte(), 1..16)
        )
            .prop_map(|(a, b)| Mutation::Insert(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Duplicate(a, b)),
        proptest::collection::vec(interesting_byte(), 0..256).prop_map(Mutation::Random),
    ]
}

fn apply(orig: &[u8], m: &Mutation) -> Vec<u8> {
    let len = orig.len().max(1);
    let mut b = orig.to_vec();
    match m {
        Mutation::Truncate(at) => b.truncate(at % len),
        Mutation::Overwrite(edits) => {
            for (at, byte) in edits {
                if !b.is_empty() {
                    let i = at % b.len();
                    b[i] = *byte;
                }
            }
        }
        Mutation::Insert(at, bytes) => {
            let i = at % (b.len() + 1);
            b.splice(i..i, bytes.iter().copied());
        }
        Mutation::Duplicate(a, c) => {
            let (x, y) = (a % len, c % len);
            let (lo, hi) = (x.min(y), x.max(y).min(b.len()));
            let chunk: Vec<u8> = b.get(lo..hi).unwrap_or_default().to_vec();
            b.splice(hi..hi, chunk);
        }
        Mutation::Random(r) => b = r.clone(),
    }
    b
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn mutated_inputs_never_panic(which in any::<usize>(), m in mutation()) {
        let targets = targets();
        let (dir, file) = &targets[which % targets.len()];
        let tmp = tempfile::tempdir().unwrap();
        let input = match dir {
            Some(d) => {
                let copy = tmp.path().join(d);
                copy_dir(&fixture_dir().join(d), &copy);
                let orig = std::fs::read(copy.join(file)).unwrap();
                std::fs::write(copy.join(file), apply(&orig, &m)).unwrap();
                copy
            }
            None => {
                let orig = std::fs::read(fixture_dir().join(file)).unwrap();
                let p = tmp.path().join("input");
                std::fs::write(&p, apply(&orig, &m)).unwrap();
                p
            }
        };
        // Err is fine; a panic fails the property.
        let _ = load(input.to_str().unwrap(), &LoadOptions::default());
    }
}

fn load_bytes(bytes: &[u8]) -> Result<nixcut::store::Closure, nixcut::load::LoadError> {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("input");
    std::fs::write(&p, bytes).unwrap();
    load(p.to_str().unwrap(), &LoadOptions::default())
}

#[test]
fn deeply_nested_json_is_an_error() {
    let e = load_bytes("[".repeat(100_000).as_bytes()).unwrap_err();
    assert!(e.to_string().contains("recursion limit"), "{e}");
}

#[test]
fn absurd_reference_counts_end_at_end_of_file() {
    let p = "/nix/store/x71ahacbysflg2pf8638mdh69871353b-libfoo-3.2";
    let text = format!("{p}\nabcd\n12\n\n18446744073709551615\n{p}\n");
    let e = load_bytes(text.as_bytes()).unwrap_err().to_string();
    assert!(
        e.contains(":7: expected reference 2 of 18446744073709551615"),
        "{e}"
    );
    assert!(e.contains("found end of file"), "{e}");
}

/// Every cut of the real graph before its closing `}` is an error at a line and column
/// (or, cut inside the header, no format at all): never a smaller closure.
#[test]
fn a_graph_cut_short_is_an_error_with_a_position() {
    let text = std::fs::read_to_string(fixture_dir().join("nix-store-graph.dot")).unwrap();
    let close = text.rfind('}').unwrap();
    for cut in (0..close).filter(|&i| text.is_char_boundary(i)) {
        match load_bytes(&text.as_bytes()[..cut]) {
            Err(nixcut::load::LoadError::Syntax { line, column, .. }) => {
                assert!(line >= 1 && column >= 1, "cut at {cut}");
            }
            Err(nixcut::load::LoadError::UnknownFormat { .. }) => {
                assert!(cut <= "digraph G".len(), "cut at {cut} is not the header");
            }
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
    assert!(load_bytes(&text.as_bytes()[..=close]).is_ok());
}

/// Malformed lines, each an error naming its line and column.
#[test]
fn a_malformed_graph_line_is_located() {
    let text = std::fs::read_to_string(fixture_dir().join("nix-store-graph.dot")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for (damage, want) in [
        (r#"" [label = "x"];"#, "2:1:"),
        (
            r#""x71ahacbysflg2pf8638mdh69871353b-libfoo-3.2" -> ;"#,
            "2:50:",
        ),
        (
            r#""x71ahacbysflg2pf8638mdh69871353b-libfoo-3.2" [label = "libfoo-3.2""#,
            "2:68:",
        ),
        ("node [shape = box];", "2:1:"),
        (r#""../../etc/passwd-x" [label = "x"];"#, "2:1:"),
    ] {
        let mut damaged = lines.clone();
        damaged.insert(1, damage);
        let e = load_bytes(damaged.join("\n").as_bytes()).unwrap_err();
        assert!(
            matches!(e, nixcut::load::LoadError::Syntax { .. }) && e.to_string().contains(want),
            "{damage}: {e}"
        );
    }
}

/// A graph larger than the cap on input size is refused, as a file and as a stream.
#[test]
fn an_oversized_graph_is_refused() {
    let node = r#""x71ahacbysflg2pf8638mdh69871353b-libfoo-3.2" [label = "libfoo-3.2"];"#;
    let mut text = String::from("digraph G {\n");
    while text.len() < 2 << 20 {
        text.push_str(node);
        text.push('\n');
    }
    text.push_str("}\n");
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("big.dot");
    std::fs::write(&p, &text).unwrap();
    let small = LoadOptions {
        max_input_bytes: Some(1 << 20),
        ..LoadOptions::default()
    };
    let e = load(p.to_str().unwrap(), &small).unwrap_err().to_string();
    assert!(e.contains("larger than 1.0 MiB"), "{e}");
    // Under the default cap the same file loads (one node, named many times: a warning
    // per repeat, not an error).
    let c = load(p.to_str().unwrap(), &LoadOptions::default()).unwrap();
    assert_eq!(c.paths.len(), 1);
}
