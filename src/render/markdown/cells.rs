//! Text made safe for GitHub-flavoured Markdown: a table cell ([`md_cell`]), inline code
//! ([`md_code`]) and a fenced block ([`md_fence`]), whatever the input holds.

/// Plain text for a table cell, heading or quote, safe in GitHub-flavoured Markdown:
/// HTML-significant characters as entities (no raw HTML reaches a step summary),
/// Markdown punctuation backslash-escaped, `|` escaped for tables, line breaks as spaces
/// and other control characters spelled out (`\u{1b}`).
pub(super) fn md_cell(s: &str) -> String {
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
pub(super) fn is_hazard(c: char) -> bool {
    crate::store::is_terminal_hazard(c)
}

/// `s` as an inline code span, shown verbatim: fenced with one backtick more than the
/// longest run of backticks inside it (padded when it starts or ends with one), `|`
/// escaped for tables (GitHub honours `\|` inside code spans in tables), line breaks as
/// spaces, control characters spelled out.
pub(super) fn md_code(s: &str) -> String {
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

pub(super) fn longest_backtick_run(s: &str) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// A fence for a code block around `lines`: at least three backticks, more than any
/// run inside.
pub(super) fn md_fence<S: AsRef<str>>(lines: &[S]) -> String {
    let inner = lines
        .iter()
        .map(|l| longest_backtick_run(l.as_ref()))
        .max()
        .unwrap_or(0);
    "`".repeat((inner + 1).max(3))
}
