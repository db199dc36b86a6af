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

mod dot;
mod expr;
mod html;
mod json;
mod markdown;
mod nix;
mod table;
mod text;
mod words;

pub use dot::dot_string;
pub use expr::check_expression;
pub use html::esc as html_escape;
pub use text::{format_delta, one_line, short_path, tree_prefix, via_chain};

/// The failures of `check` on package sets, one sentence each (the total, then each
/// failing root), for CI annotations; empty when it passed.
pub fn set_check_failures(r: &SetDiffReport) -> Vec<String> {
    words::set_diff::failures(r)
}

use std::io::{self, Write};

use crate::report::{
    CheckReport, DiffReport, GpuReport, RefsReport, RulesReport, SetDiffReport, SplitReport,
    WhyChainsReport, WhyReport,
};

/// Output format (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Table,
    Json,
    Markdown,
    /// One self-contained HTML page with inline SVG.
    Html,
    /// A Graphviz digraph.
    Dot,
}

/// How tables look: width and colour are decided once by the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    /// Wrap tables to this width (None: never wrap, for pipes and files).
    pub width: Option<u16>,
    /// Whether ANSI colour is allowed (a terminal, and `NO_COLOR` unset).
    pub color: bool,
    /// Indent JSON (on a terminal, as Nix does); compact otherwise.
    pub pretty_json: bool,
    /// Tables in full (`--long`): `why` shows every chain and every referrer's evidence
    /// instead of one line per path.
    pub long: bool,
}

/// Any report a command shows.
#[derive(Debug, Clone, Copy)]
pub enum Report<'a> {
    /// `nixcut why ROOT`.
    Why(&'a WhyReport),
    /// `nixcut why ROOT TARGET`.
    WhyChains(&'a WhyChainsReport),
    /// `nixcut refs`.
    Refs(&'a RefsReport),
    /// `nixcut diff OLD NEW`.
    Diff(&'a DiffReport),
    /// `nixcut check ROOT`.
    Check(&'a CheckReport),
    /// `nixcut split PATH`.
    Split(&'a SplitReport),
    /// `nixcut rules`.
    Rules(&'a RulesReport),
    /// `nixcut gpu ROOT`.
    Gpu(&'a GpuReport),
    /// `nixcut diff` or `check` of two package sets.
    SetDiff(&'a SetDiffReport),
}

/// `&XReport` converts into [`Report`], so `render(&report, …)` takes any report.
macro_rules! report_from {
    ($($t:ty => $variant:ident),* $(,)?) => {
        $(impl<'a> From<&'a $t> for Report<'a> {
            fn from(r: &'a $t) -> Self {
                Report::$variant(r)
            }
        })*
    };
}

report_from! {
    WhyReport => Why,
    WhyChainsReport => WhyChains,
    RefsReport => Refs,
    DiffReport => Diff,
    CheckReport => Check,
    SplitReport => Split,
    RulesReport => Rules,
    GpuReport => Gpu,
    SetDiffReport => SetDiff,
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
    }
}

/// The error for a report that has no picture in `format` (`refs` as dot, …).
pub(crate) fn unsupported(format: &str, command: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("`--format {format}` is not available for `nixcut {command}`"),
    )
}
