//! The `why` reports as tables: the ranked paths of `why ROOT`, and the chain tree of
//! `why ROOT TARGET` (plain lines, as `nix why-depends` draws it).

use std::io::{self, Write};

use comfy_table::{Cell, CellAlignment};

use super::{bold, new_table};
use crate::render::text::short_path;
use crate::render::words::why::{
    chains_header, header, kept_by, savings_line, sort_note, tree_lines, via,
};
use crate::render::Style;
use crate::report::{EvidenceLevel, WhyChainsReport, WhyReport};
use crate::store::format_size;

pub(super) fn why(r: &WhyReport, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", bold(&header(r), style))?;
    let mut t = new_table(style);
    let files = r.evidence == EvidenceLevel::Files;
    let mut head = vec!["#", "path", "NAR", "closure", "added", "via"];
    if files {
        head.push("kept in by (evidence → verdict)");
    }
    t.set_header(head);
    for (i, p) in r.paths.iter().enumerate() {
        let mut row = vec![
            Cell::new(i + 1).set_alignment(CellAlignment::Right),
            Cell::new(short_path(&p.path)),
            Cell::new(format_size(p.nar_size)).set_alignment(CellAlignment::Right),
            Cell::new(format_size(p.closure_size)).set_alignment(CellAlignment::Right),
            Cell::new(format_size(p.added_size)).set_alignment(CellAlignment::Right),
            Cell::new(via(p)),
        ];
        if files {
            row.push(Cell::new(kept_by(p)));
        }
        t.add_row(row);
    }
    if let Some(rest) = &r.rest {
        t.add_row(vec![
            Cell::new(""),
            Cell::new(format!("… {} more paths", rest.count)),
            Cell::new(format_size(rest.nar_size)).set_alignment(CellAlignment::Right),
            Cell::new(""),
            Cell::new(""),
            Cell::new(""),
        ]);
    }
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "{}; sizes are NAR sizes in binary units.",
        sort_note(r)
    )?;
    if let Some(s) = &r.savings {
        writeln!(out, "{}", savings_line(s))?;
    }
    if r.evidence == EvidenceLevel::Graph {
        writeln!(out, "evidence: graph-level only (no files scanned).")?;
    }
    Ok(())
}

pub(super) fn chains(r: &WhyChainsReport, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", bold(&chains_header(r), style))?;
    if let Some(tree) = &r.tree {
        for line in tree_lines(tree) {
            writeln!(out, "{line}")?;
        }
    }
    if r.evidence == EvidenceLevel::Graph {
        writeln!(out, "evidence: graph-level only (no files scanned).")?;
    }
    Ok(())
}
