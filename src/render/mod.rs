//! Renderers: table (comfy-table), JSON and Markdown. They read a report and write to
//! any `io::Write`; they compute nothing, so every format shows the same numbers.

mod check;
mod diff;
mod refs;
mod text;
mod why;

pub use text::{format_delta, short_path, tree_prefix, via_chain};

use std::io::{self, Write};

use serde::Serialize;

/// Output format (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Table,
    Json,
    Markdown,
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
}

/// A report that can be shown in every format.
pub trait Render: Serialize {
    /// Human-readable table for a terminal.
    fn table(&self, out: &mut dyn Write, style: &Style) -> io::Result<()>;
    /// GitHub-flavoured Markdown (CI summaries, PR comments).
    fn markdown(&self, out: &mut dyn Write) -> io::Result<()>;
}

/// Write `report` in `format`.
pub fn render<R: Render>(
    report: &R,
    format: Format,
    style: &Style,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Table => report.table(out, style),
        Format::Markdown => report.markdown(out),
        Format::Json => {
            if style.pretty_json {
                serde_json::to_writer_pretty(&mut *out, report).map_err(io::Error::other)?;
            } else {
                serde_json::to_writer(&mut *out, report).map_err(io::Error::other)?;
            }
            writeln!(out)
        }
    }
}
