//! Renderers, one module per output format, ripgrep-style: `table` for a
//! terminal, `markdown` for CI summaries, `json` for the contract; `words` holds what
//! each report's facts say in English, shared by the formats. Every format reads a
//! [`Report`] and writes to any `io::Write`; none computes (totals a format needs are
//! in the report), so every format shows the same numbers.
//!
//! `html` is one self-contained page (the `why` treemap, the `diff` bars) and `dot` a
//! Graphviz digraph; a report that has no picture in a format is an error of kind
//! `Unsupported` ([`unsupported`]).
//!
//! A new format is a new module with a `render(Report, …)` function and a [`Format`]
//! variant; the report types do not change.

mod comment;
mod dot;
mod expr;
mod html;
mod json;
pub mod jsonl;
mod markdown;
mod nix;
mod report;
mod table;
mod text;
mod words;

pub use comment::{
    check_comment_id, marker as comment_marker, Comment, CommentOptions, COMMENT_LIMIT,
    DEFAULT_COMMENT_ID,
};
pub use dot::dot_string;
pub use expr::check_expression;
pub use html::esc as html_escape;
pub use text::{format_delta, name_of, one_line, short_path, thousands, tree_prefix, via_chain};

/// The failures of `check` on package sets, one sentence each (the total, then each
/// failing root), for CI annotations; empty when it passed.
pub fn set_check_failures(r: &SetDiffReport) -> Vec<String> {
    words::set_diff::failures(r)
}

use std::io::{self, Write};

use crate::report::SetDiffReport;
pub(crate) use report::unsupported;
pub use report::{Format, Report, Style};

/// Write a report as a pull-request comment (`--comment`): Markdown that starts with
/// [`comment_marker`] and holds at most [`COMMENT_LIMIT`] bytes.
pub fn comment(c: Comment<'_>, opts: &CommentOptions, out: &mut dyn Write) -> io::Result<()> {
    markdown::comment(c, opts, out)
}

/// Write `report` in `format` (`style` is for tables and JSON; Markdown ignores it).
pub fn render<'a>(
    report: impl Into<Report<'a>>,
    format: Format,
    style: &Style,
    out: &mut dyn Write,
) -> io::Result<()> {
    let report = report.into();
    match format {
        Format::Table => table::render(report, style, out),
        Format::Markdown => markdown::render(report, out),
        Format::Json => json::render(report, style, out),
        Format::Html => html::render(report, out),
        Format::Dot => dot::render(report, out),
        Format::Jsonl => jsonl::render(report, out),
    }
}
