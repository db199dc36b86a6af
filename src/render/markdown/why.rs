//! The `why` reports in Markdown: the ranked paths as a table, the chain tree in a
//! code block.

use std::io::{self, Write};

use super::{md_cell, md_code, md_fence};
use crate::render::text::short_path;
use crate::render::words::why::{
    chains_header, evidence_note, header, kept_by, savings_lines, sort_note, tree_lines, via,
};
use crate::report::{EvidenceLevel, WhyChainsReport, WhyReport};
use crate::store::format_size;

pub(super) fn why(r: &WhyReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "### {}\n", md_cell(&header(r)))?;
    let files = r.evidence == EvidenceLevel::Files;
    if files {
        writeln!(
            out,
            "| # | path | NAR | closure | added | via | kept in by |"
        )?;
        writeln!(out, "|--:|---|--:|--:|--:|---|---|")?;
    } else {
        writeln!(out, "| # | path | NAR | closure | added | via |")?;
        writeln!(out, "|--:|---|--:|--:|--:|---|")?;
    }
    for (i, p) in r.paths.iter().enumerate() {
        write!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            i + 1,
            md_code(&short_path(&p.path)),
            format_size(p.nar_size),
            format_size(p.closure_size),
            format_size(p.added_size),
            md_cell(&via(p))
        )?;
        if files {
            let lines: Vec<String> = kept_by(p).lines().map(md_cell).collect();
            write!(out, " {} |", lines.join("<br>"))?;
        }
        writeln!(out)?;
    }
    if let Some(rest) = &r.rest {
        writeln!(
            out,
            "| | {} | {} | | | |",
            crate::render::text::more_paths(rest.count as u64),
            format_size(rest.nar_size)
        )?;
    }
    writeln!(out, "\n_{}._", sort_note(r))?;
    if let Some(note) = evidence_note(r) {
        writeln!(out, "\n_{}_", md_cell(&note))?;
    }
    if let Some(s) = &r.savings {
        let lines = savings_lines(s, &r.source.origin, r.evidence_paths);
        writeln!(out, "\n{}", md_cell(&lines[0]))?;
        if lines.len() > 1 {
            // The commands as a code block, to be copied as they are.
            writeln!(out)?;
            for l in &lines[1..] {
                writeln!(out, "    {}", l.trim_start())?;
            }
        }
    }
    for w in &r.warnings {
        writeln!(out, "\n> **warning:** {}", md_cell(&w.to_string()))?;
    }
    Ok(())
}

pub(super) fn chains(r: &WhyChainsReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "### {}\n", md_cell(&chains_header(r)))?;
    if let Some(tree) = &r.tree {
        let lines = tree_lines(tree);
        let fence = md_fence(&lines);
        writeln!(out, "{fence}")?;
        for line in &lines {
            writeln!(out, "{line}")?;
        }
        writeln!(out, "{fence}")?;
    }
    for w in &r.warnings {
        writeln!(out, "\n> **warning:** {}", md_cell(&w.to_string()))?;
    }
    Ok(())
}
