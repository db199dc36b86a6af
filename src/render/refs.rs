//! Table and Markdown views of the `refs` report: per path, a summary table of its
//! references (verdict, hit count, kinds), then the first evidence lines of each.

use std::io::{self, Write};

use comfy_table::{Cell, CellAlignment};

use super::text::{bold, md_cell, name_of, new_table};
use super::{Render, Style};
use crate::report::{EvidenceLevel, RefEntry, RefsReport};
use crate::store::format_size;

/// Evidence lines shown per reference in tables (JSON has them all).
const SHOWN: usize = 4;

fn kinds(r: &RefEntry) -> String {
    r.kinds
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn ref_label(r: &RefEntry) -> String {
    let mut s = name_of(&r.path).to_string();
    if r.self_reference {
        s.push_str(" (self)");
    }
    if !r.registered {
        s.push_str(" (not registered)");
    }
    s
}

impl Render for RefsReport {
    fn table(&self, out: &mut dyn Write, style: &Style) -> io::Result<()> {
        for p in &self.paths {
            let head = if p.scanned {
                format!(
                    "{}: {} reference{}; {} files, {} scanned{}",
                    p.path,
                    p.references.len(),
                    if p.references.len() == 1 { "" } else { "s" },
                    p.files_scanned,
                    format_size(p.bytes_scanned),
                    if p.cached { " (cached)" } else { "" }
                )
            } else {
                format!(
                    "{}: {} references (not scanned)",
                    p.path,
                    p.references.len()
                )
            };
            writeln!(out, "{}", bold(&head, style))?;
            if p.references.is_empty() {
                writeln!(out, "  no references")?;
            } else {
                let mut t = new_table(style);
                t.set_header(vec!["reference", "verdict", "hits", "kinds", "rule"]);
                for r in &p.references {
                    t.add_row(vec![
                        Cell::new(ref_label(r)),
                        Cell::new(&r.verdict),
                        Cell::new(r.evidence_count).set_alignment(CellAlignment::Right),
                        Cell::new(kinds(r)),
                        Cell::new(&r.rule),
                    ]);
                }
                writeln!(out, "{t}")?;
            }
            for r in p.references.iter().filter(|r| !r.evidence.is_empty()) {
                writeln!(out, "  {} ({}):", ref_label(r), r.verdict)?;
                for e in r.evidence.iter().take(SHOWN) {
                    writeln!(
                        out,
                        "    {}@{} {} {}",
                        if e.file.is_empty() { "." } else { &e.file },
                        e.offset,
                        e.kind,
                        clip(&e.detail, 120)
                    )?;
                }
                let more = r.evidence_count.saturating_sub(SHOWN as u64);
                if more > 0 {
                    writeln!(out, "    … {more} more (--format json lists them)")?;
                }
            }
            for w in &p.warnings {
                writeln!(out, "  warning: {w}")?;
            }
            writeln!(out)?;
        }
        if self.evidence == EvidenceLevel::Graph {
            writeln!(out, "evidence: graph-level only (files unavailable).")?;
        }
        Ok(())
    }

    fn markdown(&self, out: &mut dyn Write) -> io::Result<()> {
        for p in &self.paths {
            writeln!(out, "### `{}`\n", md_cell(&p.path))?;
            writeln!(
                out,
                "| reference | verdict | hits | kinds | first evidence |"
            )?;
            writeln!(out, "|---|---|--:|---|---|")?;
            for r in &p.references {
                let first = r
                    .evidence
                    .first()
                    .map(|e| format!("`{}`@{} {}", md_cell(&e.file), e.offset, e.kind))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    md_cell(&ref_label(r)),
                    r.verdict,
                    r.evidence_count,
                    md_cell(&kinds(r)),
                    first
                )?;
            }
            writeln!(out)?;
        }
        for w in &self.warnings {
            writeln!(out, "> **warning:** {}", md_cell(w))?;
        }
        Ok(())
    }
}
