//! The `diff` report in Markdown: header, counts, one table row per changed package,
//! the note on sizes, and the warnings.

use std::io::{self, Write};

use super::{md_cell, md_code};
use crate::render::text::format_delta;
use crate::render::words::diff::{counts, header, path_counts, versions_short, NOTE};
use crate::report::DiffReport;

pub(super) fn diff(r: &DiffReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "### {}\n", md_cell(&header(r)))?;
    writeln!(out, "{}\n", counts(r))?;
    if r.packages.is_empty() {
        writeln!(out, "No package changed.")?;
    } else {
        writeln!(out, "| # | package | version | impact | NAR Δ | paths |")?;
        writeln!(out, "|--:|---|---|--:|--:|---|")?;
        for (i, p) in r.packages.iter().enumerate() {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                i + 1,
                md_code(&p.package),
                md_cell(&versions_short(p)),
                format_delta(p.impact),
                format_delta(p.nar_delta),
                path_counts(p)
            )?;
        }
        if let Some(rest) = &r.rest {
            writeln!(
                out,
                "| | … {} more packages | | | {} | |",
                rest.count,
                format_delta(rest.nar_delta)
            )?;
        }
        writeln!(out, "\n_{NOTE}_")?;
    }
    for w in &r.warnings {
        writeln!(out, "\n> **warning:** {}", md_cell(&w.to_string()))?;
    }
    Ok(())
}
