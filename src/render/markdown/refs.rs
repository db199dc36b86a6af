//! The `refs` report in Markdown: per path, a table of its references with the first
//! piece of evidence of each.

use std::io::{self, Write};

use super::{md_cell, md_code};
use crate::render::words::refs::{explain_heading, kinds, reach_step, ref_label};
use crate::report::RefsReport;

pub(super) fn refs(r: &RefsReport, out: &mut dyn Write) -> io::Result<()> {
    // `--explain`: the answer first.
    if let Some(e) = &r.explain {
        writeln!(out, "**{}**\n", md_cell(&explain_heading(e)))?;
        for (i, s) in e.chain.iter().enumerate() {
            writeln!(
                out,
                "{}. {} ← {}",
                i + 1,
                md_code(&s.file),
                md_cell(&reach_step(s))
            )?;
        }
        writeln!(out)?;
    }
    for p in &r.paths {
        writeln!(out, "### {}\n", md_code(&p.path))?;
        writeln!(
            out,
            "| reference | verdict | hits | kinds | first evidence |"
        )?;
        writeln!(out, "|---|---|--:|---|---|")?;
        for e in &p.references {
            let first = e
                .evidence
                .first()
                .map(|i| format!("{}@{} {}", md_code(&i.file), i.offset, i.kind))
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
        writeln!(out, "> **warning:** {}", md_cell(&w.to_string()))?;
    }
    Ok(())
}
