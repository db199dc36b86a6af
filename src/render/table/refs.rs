//! The `refs` report as tables: per path, a summary table of its references (verdict,
//! hit count, kinds, rule), then the first evidence lines of each.

use std::io::{self, Write};

use comfy_table::{Cell, CellAlignment};

use super::{bold, new_table, write_fitted};
use crate::render::text::shorten_middle;
use crate::render::words::refs::{
    clip, explain_heading, kinds, path_heading, reach_step, ref_label, SHOWN,
};
use crate::render::Style;
use crate::report::{EvidenceLevel, RefsReport};

pub(super) fn refs(r: &RefsReport, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    // `--explain`: the answer first, then the table it comes from.
    if let Some(e) = &r.explain {
        writeln!(out, "{}", bold(&explain_heading(e), style))?;
        for (i, s) in e.chain.iter().enumerate() {
            writeln!(out, "  {}. {}  ← {}", i + 1, s.file, reach_step(s))?;
        }
        writeln!(out)?;
    }
    for p in &r.paths {
        writeln!(out, "{}", bold(&path_heading(p), style))?;
        if p.references.is_empty() {
            writeln!(out, "  no references")?;
        } else {
            let mut t = new_table(style);
            t.set_header(vec!["reference", "verdict", "hits", "kinds", "rule"]);
            for e in &p.references {
                t.add_row(vec![
                    Cell::new(ref_label(e)),
                    Cell::new(e.verdict.to_string()),
                    Cell::new(e.evidence_count).set_alignment(CellAlignment::Right),
                    Cell::new(kinds(e)),
                    Cell::new(&e.rule),
                ]);
            }
            write_fitted(out, &t, style, &[4, 3])?;
        }
        for e in p.references.iter().filter(|e| !e.evidence.is_empty()) {
            writeln!(out, "  {} ({}):", ref_label(e), e.verdict)?;
            // With --max-evidence the user chose how many: show what the report lists.
            let shown = match r.max_evidence {
                Some(_) => e.evidence.len(),
                None => e.evidence.len().min(SHOWN),
            };
            let width = style.width.map_or(120, usize::from);
            for item in e.evidence.iter().take(shown) {
                // `file@offset kind detail` on one line of the width: the detail is
                // cut at its end, a long file name in its middle (its start and end
                // stay), each keeping a readable part.
                let tail = format!("@{} {}", item.offset, item.kind);
                let file = if item.file.is_empty() {
                    "."
                } else {
                    item.file.as_str()
                };
                // The file first (it tells the items apart); the detail gets what is
                // left, and is left out when that is too little to read.
                let fixed = 4 + tail.chars().count();
                let file = shorten_middle(file, width.saturating_sub(fixed).max(24));
                let room = width.saturating_sub(fixed + file.chars().count() + 1);
                let detail = item.detail.to_string();
                let line = if detail.is_empty() || room < 12 {
                    format!("    {file}{tail}")
                } else {
                    format!("    {file}{tail} {}", clip(&detail, room))
                };
                writeln!(out, "{line}")?;
            }
            let more = e.evidence_count.saturating_sub(shown as u64);
            if more > 0 {
                writeln!(out, "    … {more} more (--format json lists them)")?;
            }
        }
        for w in &p.warnings {
            writeln!(out, "  warning: {w}")?;
        }
        writeln!(out)?;
    }
    if r.evidence == EvidenceLevel::Graph {
        writeln!(out, "evidence: graph-level only (files unavailable).")?;
    }
    Ok(())
}
