//! The `store` report as Markdown: heading, totals, the ranked roots, warnings.

use std::io::{self, Write};

use super::{md_cell, md_code};
use crate::render::short_path;
use crate::render::text::thousands;
use crate::render::words::store::{heading, rest, totals};
use crate::report::StoreReport;
use crate::store::format_size;

pub(super) fn store(r: &StoreReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "### {}\n", md_cell(&heading(r)))?;
    writeln!(out, "{}\n", md_cell(&totals(r)))?;
    if !r.roots.is_empty() {
        writeln!(out, "| alone frees | paths | closure | root | link |")?;
        writeln!(out, "|---:|---:|---:|---|---|")?;
        for root in &r.roots {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                format_size(root.alone),
                thousands(root.alone_paths),
                format_size(root.closure_size),
                md_code(&short_path(&root.root)),
                md_code(&root.link),
            )?;
        }
        writeln!(out)?;
    }
    if let Some(line) = rest(r) {
        writeln!(out, "{}\n", md_cell(&line))?;
    }
    for w in &r.warnings {
        writeln!(out, "> warning: {}\n", md_cell(&w.to_string()))?;
    }
    Ok(())
}
