//! The table format: what a terminal shows. One file per report, each writing the
//! report's words (`crate::render::words`) into comfy-table tables with the house
//! style ([`new_table`]) to any `io::Write`.

mod cells;
mod check;
mod diff;
mod gpu;
mod refs;
mod rules;
mod set_diff;
mod split;
mod store;
mod why;

use cells::{bold, escape_hazards, fit, new_table, whole, wrap_lines, write_fitted, GLUE, WHOLE};

use std::io::{self, Write};

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
        Report::SetDiff(r) => set_diff::set_diff(r, style, w),
        Report::Store(r) => store::store(r, style, w),
    }?;
    let text =
        wrap_lines(&String::from_utf8_lossy(&buf), style.width.map(usize::from)).replace(GLUE, " ");
    let text = escape_hazards(&text, style.color);
    // A name that starts a line (after a line break it carried, or wrapped onto a line
    // of its own) must not read as a CI workflow command.
    out.write_all(
        crate::store::neutralise_workflow_commands(&text, "\\u{3a}", "\\u{23}").as_bytes(),
    )
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
