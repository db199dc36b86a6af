//! The table format: what a terminal shows. One file per report, each writing the
//! report's words (`crate::render::words`) into comfy-table tables with the house
//! style ([`new_table`]) to any `io::Write`.

mod check;
mod diff;
mod gpu;
mod refs;
mod rules;
mod split;
mod why;

use std::io::{self, Write};

use comfy_table::{presets, ContentArrangement, Table};

use super::{Report, Style};

/// Write `report` as tables. Every control character but newline and tab, and every
/// bidirectional embedding, override or isolate, is written as `\u{…}` (names and ids
/// come from the input: a bundle's target id, a NAR entry name), as Markdown, HTML and
/// JSON escape them; only the bold of [`bold`] is written raw, with colour on.
pub(super) fn render(report: Report<'_>, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    let mut buf: Vec<u8> = Vec::new();
    let w = &mut buf;
    match report {
        Report::Why(r) => why::why(r, style, w),
        Report::WhyChains(r) => why::chains(r, style, w),
        Report::Refs(r) => refs::refs(r, style, w),
        Report::Diff(r) => diff::diff(r, style, w),
        Report::Check(r) => check::check(r, style, w),
        Report::Split(r) => split::split(r, style, w),
        Report::Gpu(r) => gpu::gpu(r, style, w),
        Report::Rules(r) => rules::rules(r, style, w),
    }?;
    out.write_all(escape_hazards(&String::from_utf8_lossy(&buf), style.color).as_bytes())
}

const BOLD_ON: &str = "\x1b[1m";
const BOLD_OFF: &str = "\x1b[0m";

/// `text` with every terminal hazard but `\n` and `\t` as `\u{…}`; with `keep_bold`, the
/// two sequences [`bold`] writes stay as they are.
fn escape_hazards(text: &str, keep_bold: bool) -> std::borrow::Cow<'_, str> {
    let hazard = |c: char| c != '\n' && c != '\t' && crate::store::is_terminal_hazard(c);
    if !text.chars().any(hazard) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if keep_bold && c == '\x1b' {
            if let Some(seq) = [BOLD_ON, BOLD_OFF]
                .into_iter()
                .find(|s| rest.starts_with(s))
            {
                out.push_str(seq);
                rest = &rest[seq.len()..];
                continue;
            }
        }
        if hazard(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// A table with the house style: wrapped to `style.width` (never, without one),
/// coloured only when allowed.
fn new_table(style: &Style) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    match style.width {
        Some(w) => {
            t.set_width(w);
            t.set_content_arrangement(ContentArrangement::Dynamic);
        }
        None => {
            t.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    if !style.color {
        t.force_no_tty();
    }
    t
}

/// Bold with ANSI when colour is allowed.
fn bold(s: &str, style: &Style) -> String {
    if style.color {
        format!("{BOLD_ON}{s}{BOLD_OFF}")
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::escape_hazards;

    #[test]
    fn hazards_are_escaped_and_only_bold_is_kept() {
        assert_eq!(escape_hazards("a\tb\nc", false), "a\tb\nc");
        assert_eq!(
            escape_hazards("x\u{1b}[2J\0\r\u{202e}y", false),
            "x\\u{1b}[2J\\u{0}\\u{d}\\u{202e}y"
        );
        assert_eq!(
            escape_hazards("\x1b[1mhead\x1b[0m \x1b[2J", true),
            "\x1b[1mhead\x1b[0m \\u{1b}[2J"
        );
        assert_eq!(escape_hazards("\x1b[1m", false), "\\u{1b}[1m");
    }
}
