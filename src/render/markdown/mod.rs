//! The Markdown format (GitHub-flavoured: CI step summaries, PR comments). One file per
//! report, each writing the report's words (`crate::render::words`) as headings, pipe
//! tables and quotes to any `io::Write`. Markdown never wraps and has no colour, so it
//! takes no `Style`.

mod check;
mod diff;
mod gpu;
mod refs;
mod rules;
mod set_diff;
mod split;
mod why;

use std::io::{self, Write};

use super::Report;

/// Write `report` as Markdown. No line of it reads as a CI workflow command
/// (`crate::store::neutralise_workflow_commands`): the report is written to a buffer
/// and checked before it goes out.
pub(super) fn render(report: Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    let mut buf: Vec<u8> = Vec::new();
    render_raw(report, &mut buf)?;
    let text = String::from_utf8_lossy(&buf);
    out.write_all(crate::store::neutralise_workflow_commands(&text, "\\:", "\\#").as_bytes())
}

fn render_raw(report: Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    match report {
        Report::Why(r) => why::why(r, out),
        Report::WhyChains(r) => why::chains(r, out),
        Report::Refs(r) => refs::refs(r, out),
        Report::Diff(r) => diff::diff(r, out),
        Report::Check(r) => check::check(r, out),
        Report::Split(r) => split::split(r, out),
        Report::Gpu(r) => gpu::gpu(r, out),
        Report::Rules(r) => rules::rules(r, out),
        Report::SetDiff(r) => set_diff::set_diff(r, out),
    }
}

/// Plain text for a table cell, heading or quote, safe in GitHub-flavoured Markdown:
/// HTML-significant characters as entities (no raw HTML reaches a step summary),
/// Markdown punctuation backslash-escaped, `|` escaped for tables, line breaks as spaces
/// and other control characters spelled out (`\u{1b}`).
fn md_cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\t' => out.push(' '),
            c if is_hazard(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Control characters and bidirectional embeddings, overrides and isolates: never
/// written raw.
fn is_hazard(c: char) -> bool {
    crate::store::is_terminal_hazard(c)
}

/// `s` as an inline code span, shown verbatim: fenced with one backtick more than the
/// longest run of backticks inside it (padded when it starts or ends with one), `|`
/// escaped for tables (GitHub honours `\|` inside code spans in tables), line breaks as
/// spaces, control characters spelled out.
fn md_code(s: &str) -> String {
    let clean: String = s
        .chars()
        .map(|c| match c {
            '\n' | '\r' | '\t' => " ".to_string(),
            '|' => "\\|".to_string(),
            c if is_hazard(c) => format!("\\u{{{:x}}}", c as u32),
            c => c.to_string(),
        })
        .collect();
    if clean.is_empty() {
        return "` `".to_string();
    }
    let fence = "`".repeat(longest_backtick_run(&clean) + 1);
    let pad = if clean.starts_with('`') || clean.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{clean}{pad}{fence}")
}

fn longest_backtick_run(s: &str) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// A fence for a code block around `lines`: at least three backticks, more than any
/// run inside.
fn md_fence<S: AsRef<str>>(lines: &[S]) -> String {
    let inner = lines
        .iter()
        .map(|l| longest_backtick_run(l.as_ref()))
        .max()
        .unwrap_or(0);
    "`".repeat((inner + 1).max(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_escapes_html_pipes_backticks_and_newlines() {
        let hostile =
            "a`b|c<details><summary>x</summary>\nline2 *bold* _i_ [l](u) \u{1b}[2J\u{202e}";
        let cell = md_cell(hostile);
        assert!(!cell.contains('<') && !cell.contains('>'), "{cell}");
        assert!(!cell.contains('\n') && !cell.contains('\u{1b}') && !cell.contains('\u{202e}'));
        assert!(cell.contains("\\|") && cell.contains("\\`") && cell.contains("&lt;details&gt;"));
        let code = md_code("x``y|z");
        assert_eq!(code, "```x``y\\|z```");
        assert_eq!(md_code("`start"), "`` `start ``");
        assert_eq!(md_code(""), "` `");
        let code = md_code("a\nb\u{7}");
        assert_eq!(code, "`a b\\u{7}`");
        assert_eq!(md_fence(&["no ticks"]), "```");
        assert_eq!(md_fence(&["has ``` inside"]), "````");
    }
}
