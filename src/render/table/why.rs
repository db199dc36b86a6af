//! The `why` reports as tables: the ranked paths of `why ROOT`, and the chain tree of
//! `why ROOT TARGET` (plain lines, as `nix why-depends` draws it).

use std::io::{self, Write};

use comfy_table::{Cell, CellAlignment};

use super::{bold, new_table, write_fitted, WHOLE};
use crate::render::text::{name_of, short_path, shorten_end, shorten_middle};
use crate::render::words::why::{
    chains_header, evidence_note, header, kept_by, main_reason_fit, savings_lines, sort_note,
    tree_lines, tree_lines_with, via,
};
use crate::render::Style;
use crate::report::{EvidenceLevel, WhyChainsReport, WhyReport};
use crate::store::format_size;

/// Widest table when the output is not a terminal.
const PIPE_WIDTH: usize = 120;

pub(super) fn why(r: &WhyReport, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    if style.long {
        why_long(r, style, out)
    } else {
        why_compact(r, style, out)
    }
}

/// One line per path: rank, sizes, the package name and the main reason it is kept, cut
/// to the width (the terminal's, else 120 columns). Narrow terminals lose the closure
/// column first, then the NAR column, then name width, so that the reason keeps at
/// least 42 columns.
fn why_compact(r: &WhyReport, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", bold(&header(r), style))?;
    let width = style.width.map_or(PIPE_WIDTH, usize::from);
    let files = r.evidence == EvidenceLevel::Files;
    let last = if files {
        "kept by: verdict ← referrer: evidence"
    } else {
        "via"
    };
    let mut rows: Vec<Vec<String>> = vec![["#", "added", "closure", "NAR", "path"]
        .iter()
        .map(|s| s.to_string())
        .collect()];
    let mut reasons: Vec<Option<&crate::report::WhyPath>> = vec![None];
    for (i, p) in r.paths.iter().enumerate() {
        rows.push(vec![
            (i + 1).to_string(),
            format_size(p.added_size),
            format_size(p.closure_size),
            format_size(p.nar_size),
            name_of(&p.path).to_string(),
        ]);
        reasons.push(Some(p));
    }
    if let Some(rest) = &r.rest {
        rows.push(vec![
            String::new(),
            String::new(),
            String::new(),
            format_size(rest.nar_size),
            crate::render::text::more_paths(rest.count as u64),
        ]);
        reasons.push(None);
    }
    let chars = |s: &String| s.chars().count();
    let col = |k: usize| rows.iter().map(|row| chars(&row[k])).max().unwrap_or(0);
    let mut widths: Vec<usize> = (0..5).map(col).collect();
    widths[4] = widths[4].min(40);
    let mut shown = vec![true; 5];
    // Room for a verdict, a referrer and its evidence count
    // (`gpu:gfx900,+3 ← rocblas-5.7.1: 26 symlink`), or for a chain at graph level.
    let min_reason: usize = if files { 42 } else { 30 };
    let used = |w: &[usize], shown: &[bool]| -> usize {
        w.iter()
            .zip(shown)
            .filter(|(_, s)| **s)
            .map(|(w, _)| w + 2)
            .sum()
    };
    // Narrow terminals lose the closure size, then the NAR size (--long has both).
    for k in [2, 3] {
        if width.saturating_sub(used(&widths, &shown)) < min_reason {
            shown[k] = false;
        }
    }
    let spare = width.saturating_sub(used(&widths, &shown));
    if spare < min_reason {
        widths[4] = widths[4].saturating_sub(min_reason - spare).max(16);
    }
    let reason_w = width.saturating_sub(used(&widths, &shown)).max(12);
    for (i, (row, reason)) in rows.iter().zip(&reasons).enumerate() {
        let mut line = String::new();
        for k in (0..5).filter(|&k| shown[k]) {
            let cell = if k == 4 {
                shorten_middle(&row[k], widths[k])
            } else {
                row[k].clone()
            };
            let pad = widths[k].saturating_sub(cell.chars().count());
            if k == 4 {
                line.push_str(&cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(&cell);
            }
            line.push_str("  ");
        }
        let reason = match reason {
            Some(p) => main_reason_fit(p, reason_w),
            None if i == 0 => shorten_end(last, reason_w),
            None => String::new(),
        };
        line.push_str(&reason);
        writeln!(out, "{}", line.trim_end())?;
    }
    let mut notes = vec![
        format!("{}.", sort_note(r)),
        "Sizes are NAR sizes in binary units.".to_string(),
    ];
    match (shown[2], shown[3]) {
        (true, _) => {}
        (false, true) => notes.push("(closure sizes: --long or a wider terminal)".to_string()),
        (false, false) => {
            notes.push("(closure and NAR sizes: --long or a wider terminal)".to_string())
        }
    }
    if r.evidence == EvidenceLevel::Graph {
        notes.push("Evidence: graph-level only (no files scanned).".to_string());
    }
    notes.extend(evidence_note(r));
    notes.push("--long shows every chain and every referrer's evidence.".to_string());
    for line in fill(&notes, width) {
        writeln!(out, "{line}")?;
    }
    savings(r, out)
}

/// The savings lines, one command a line; commands are never wrapped (they are meant
/// to be copied).
fn savings(r: &WhyReport, out: &mut dyn Write) -> io::Result<()> {
    let Some(s) = &r.savings else {
        return Ok(());
    };
    for line in savings_lines(s, &r.source.origin, r.evidence_paths) {
        let whole = if line.starts_with("  nixcut ") {
            WHOLE.to_string()
        } else {
            String::new()
        };
        writeln!(out, "{whole}{line}")?;
    }
    Ok(())
}

/// Sentences joined into lines of at most `width` characters (a sentence longer than the
/// width gets a line of its own).
fn fill(sentences: &[String], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for s in sentences {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + s.chars().count() <= width => {
                l.push(' ');
                l.push_str(s);
            }
            _ => lines.push(s.clone()),
        }
    }
    lines
}

/// The full table: chains and every scanned referrer's evidence, wrapped to the width.
fn why_long(r: &WhyReport, style: &Style, out: &mut dyn Write) -> io::Result<()> {
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
            Cell::new(crate::render::text::more_paths(rest.count as u64)),
            Cell::new(format_size(rest.nar_size)).set_alignment(CellAlignment::Right),
            Cell::new(""),
            Cell::new(""),
            Cell::new(""),
        ]);
    }
    write_fitted(out, &t, style, &[3, 2, 5])?;
    writeln!(
        out,
        "{}; sizes are NAR sizes in binary units.",
        sort_note(r)
    )?;
    savings(r, out)?;
    if r.evidence == EvidenceLevel::Graph {
        writeln!(out, "evidence: graph-level only (no files scanned).")?;
    }
    if let Some(note) = evidence_note(r) {
        writeln!(out, "{note}")?;
    }
    Ok(())
}

pub(super) fn chains(r: &WhyChainsReport, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", bold(&chains_header(r), style))?;
    if let Some(tree) = &r.tree {
        // Full store paths when they fit, else short ones.
        let width = style.width.map_or(usize::MAX, usize::from);
        let mut lines = tree_lines(tree);
        // The prefix and the path, before the evidence (which may wrap).
        let longest_path = |lines: &[String]| {
            lines
                .iter()
                .map(|l| l.split("  ← ").next().unwrap_or(l).chars().count())
                .max()
                .unwrap_or(0)
        };
        if longest_path(&lines) > width {
            lines = tree_lines_with(tree, true);
        }
        for line in lines {
            // A line whose bars and path alone pass the width (a deep tree) is written
            // whole: wrapping it would repeat its indentation on every piece.
            let path_part = line.split("  ← ").next().unwrap_or(&line).chars().count();
            if path_part > width {
                writeln!(out, "{WHOLE}{line}")?;
            } else {
                writeln!(out, "{line}")?;
            }
        }
    }
    if r.evidence == EvidenceLevel::Graph {
        writeln!(out, "evidence: graph-level only (no files scanned).")?;
    }
    Ok(())
}
