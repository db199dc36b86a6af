//! The `refs` report in Markdown: per path, a table of its references with the first
//! piece of evidence of each.

use std::io::{self, Write};

use super::md_cell;
use crate::render::words::refs::{kinds, ref_label};
use crate::report::RefsReport;

pub(super) fn refs(r: &RefsReport, out: &mut dyn Write) -> io::Result<()> {
    for p in &r.paths {
        writeln!(out, "### `{}`\n", md_cell(&p.path))?;
        writeln!(
            out,
            "| reference | verdict | hits | kinds | first evidence |"
        )?;
        writeln!(out, "|---|---|--:|---|---|")?;
        for e in &p.references {
            let first = e
                .evidence
                .first()
                .map(|i| format!("`{}`@{} {}", md_cell(&i.file), i.offset, i.kind))
                .unwrap_or_default();
            writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                md_cell(&ref_label(e)),
                e.verdict,
                e.evidence_count,
                md_cell(&kinds(e)),
                first
            )?;
        }
        writeln!(out)?;
    }
    for w in &r.warnings {
        writeln!(out, "> **warning:** {}", md_cell(w))?;
    }
    Ok(())
}
