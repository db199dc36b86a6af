//! Markdown output is safe to paste into a GitHub step summary whatever the input names
//! hold (issue 8, item 6): a backtick in a file name cannot close a code span, `|`
//! cannot split a table cell, raw HTML (`<details>`) never reaches the page outside a
//! code span, and a newline cannot end a table row.

mod common;

use common::*;

/// `s` with every inline code span removed (GitHub's rule: a run of n backticks opens a
/// span that the next run of exactly n backticks closes).
fn outside_code_spans(s: &str) -> String {
    let b: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == '`' {
            let n = b[i..].iter().take_while(|&&c| c == '`').count();
            let mut j = i + n;
            let mut close = None;
            while j < b.len() {
                if b[j] == '`' {
                    let m = b[j..].iter().take_while(|&&c| c == '`').count();
                    if m == n {
                        close = Some(j + m);
                        break;
                    }
                    j += m;
                } else {
                    j += 1;
                }
            }
            match close {
                Some(end) => i = end,
                None => {
                    out.extend(&b[i..i + n]);
                    i += n;
                }
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn markdown_escapes_backticks_pipes_html_and_newlines_from_file_names() {
    let dir = tempfile::tempdir().unwrap();
    let hash = "1b9p07z77phvv2hf6gm9f28syp39f039";
    let logical = format!("/nix/store/{hash}-pkg");
    let root = dir.path().join("root");
    let pkg = root.join(logical.trim_start_matches('/'));
    std::fs::create_dir_all(&pkg).unwrap();
    // A file name holding a backtick, a pipe, HTML and a newline, whose contents refer
    // to the package itself (so the evidence names the file).
    let name = "a`b|c<details><summary>x\nd";
    std::fs::write(pkg.join(name), format!("see {logical}/x\n")).unwrap();
    let input = dir.path().join("closure.json");
    std::fs::write(
        &input,
        format!(
            r#"[{{"path":"{logical}","narHash":"sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=","narSize":100,"references":["{logical}"]}}]"#
        ),
    )
    .unwrap();
    let args = [
        "refs",
        input.to_str().unwrap(),
        "--store-root",
        root.to_str().unwrap(),
        "--no-cache",
        "--format",
        "markdown",
    ];
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("text 1"), "the file was scanned:\n{out}");
    let prose = outside_code_spans(&out);
    assert!(!prose.contains('<'), "raw HTML outside a code span:\n{out}");
    let mut header: Option<usize> = None;
    for line in out.lines() {
        if !line.starts_with('|') {
            header = None;
            continue;
        }
        assert!(line.ends_with('|'), "a table row was cut:\n{line}");
        let cells = line.replace("\\|", "").matches('|').count();
        match header {
            None => header = Some(cells),
            Some(h) => assert_eq!(cells, h, "a pipe split a cell:\n{line}"),
        }
    }
    assert!(
        !out.lines().any(|l| l.starts_with('d')),
        "a newline started a line:\n{out}"
    );
}

#[test]
fn code_span_stripping_follows_github() {
    assert_eq!(outside_code_spans("a `b` c"), "a  c");
    assert_eq!(outside_code_spans("``a`b`` <x>"), " <x>");
    assert_eq!(outside_code_spans("`a`b<x>`"), "b<x>`");
}
