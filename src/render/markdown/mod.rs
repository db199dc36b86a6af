//! The Markdown format (GitHub-flavoured: CI step summaries, PR comments). One file per
//! report, each writing the report's words (`crate::render::words`) as headings, pipe
//! tables and quotes to any `io::Write`. Markdown never wraps and has no colour, so it
//! takes no `Style`.

mod check;
mod diff;
mod refs;
mod split;
mod why;

use std::io::{self, Write};

use super::Report;

/// Write `report` as Markdown.
pub(super) fn render(report: Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    match report {
        Report::Why(r) => why::why(r, out),
        Report::WhyChains(r) => why::chains(r, out),
        Report::Refs(r) => refs::refs(r, out),
        Report::Diff(r) => diff::diff(r, out),
        Report::Check(r) => check::check(r, out),
        Report::Split(r) => split::split(r, out),
    }
}

/// Escape `|` for Markdown table cells.
fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}
