//! What every renderer is given: the report ([`Report`], one variant per command), the
//! format asked for ([`Format`]) and the terminal's style ([`Style`]), and the error for
//! a report a format has no picture of ([`unsupported`]).

use std::io::{self};

use crate::report::{
    CheckReport, DiffReport, GpuReport, RefsReport, RulesReport, SetDiffReport, SplitReport,
    StoreReport, WhyChainsReport, WhyReport,
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
    /// `nixcut store`.
    Store(&'a StoreReport),
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
    StoreReport => Store,
}

/// The error for a report that has no picture in `format` (`refs` as dot, …).
pub(crate) fn unsupported(format: &str, command: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("`--format {format}` is not available for `nixcut {command}`"),
    )
}
