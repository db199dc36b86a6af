//! The Markdown format (GitHub-flavoured: CI step summaries, PR comments). One file per
//! report, each writing the report's words (`crate::render::words`) as headings, pipe
//! tables and quotes to any `io::Write`. Markdown never wraps and has no colour, so it
//! takes no `Style`.

mod cells;
mod check;
mod comment;
mod diff;
mod gpu;
mod refs;
mod rules;
mod set_diff;
mod split;
mod store;
mod why;

use cells::{md_cell, md_code, md_fence};
pub(super) use comment::comment;

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
        Report::Store(r) => store::store(r, out),
    }
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
