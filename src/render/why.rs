//! Table and Markdown views of the `why` reports.

use std::io::{self, Write};

use comfy_table::{Cell, CellAlignment};

use super::text::{bold, md_cell, name_of, new_table, short_path, tree_prefix, via_chain};
use super::{Render, Style};
use crate::report::{ChainNode, EvidenceLevel, HopEvidence, WhyChainsReport, WhyPath, WhyReport};
use crate::store::format_size;

fn size_or_unknown(bytes: u64, known: bool) -> String {
    if known {
        format_size(bytes)
    } else {
        format!("≥{}", format_size(bytes))
    }
}

/// The chain from the root to the path's parent, as names: `llama-cpp-rocm → rocblas`.
fn via(p: &WhyPath) -> String {
    via_chain(&p.chain)
}

/// `rocblas-5.7.1: 26 symlink → gpu:gfx900,gfx906`
fn hop_summary(h: &HopEvidence) -> String {
    let kinds = h
        .kinds
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect::<Vec<_>>()
        .join(" + ");
    format!("{}: {kinds} → {}", name_of(&h.referrer), h.verdict)
}

/// The "kept in by" cell: each scanned referrer's evidence, and how many were not.
fn kept_by(p: &WhyPath) -> String {
    let mut lines: Vec<String> = p.kept_by.iter().map(hop_summary).collect();
    if p.kept_by_more > 0 {
        lines.push(format!("(+{} more referrers)", p.kept_by_more));
    }
    lines.join("\n")
}

/// One line of hop evidence for the chain tree: the first piece, and the count.
fn hop_line(h: &HopEvidence) -> String {
    let total: u64 = h.kinds.values().sum();
    match h.evidence.first() {
        Some(e) => {
            let more = if total > 1 {
                format!(", +{} more", total - 1)
            } else {
                String::new()
            };
            format!(
                "  ← {} @{} {} ({}{more})",
                e.file, e.offset, e.kind, h.verdict
            )
        }
        None => format!("  ← ({})", h.verdict),
    }
}

fn header(r: &WhyReport) -> String {
    let root = if r.roots.len() > 1 {
        format!("{} roots", r.roots.len())
    } else {
        name_of(&r.root).to_string()
    };
    format!(
        "{root}: closure {} in {} paths",
        size_or_unknown(r.closure_size, r.sizes_known),
        r.path_count
    )
}

fn sort_note(r: &WhyReport) -> &'static str {
    match r.sort.as_str() {
        "closure" => "ranked by closure size",
        "nar" => "ranked by NAR size",
        _ => "ranked by added size (what leaving the path out would free)",
    }
}

impl Render for WhyReport {
    fn table(&self, out: &mut dyn Write, style: &Style) -> io::Result<()> {
        writeln!(out, "{}", bold(&header(self), style))?;
        let mut t = new_table(style);
        let files = self.evidence == EvidenceLevel::Files;
        let mut head = vec!["#", "path", "NAR", "closure", "added", "via"];
        if files {
            head.push("kept in by (evidence → verdict)");
        }
        t.set_header(head);
        for (i, p) in self.paths.iter().enumerate() {
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
        if let Some(rest) = &self.rest {
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
            sort_note(self)
        )?;
        if self.evidence == EvidenceLevel::Graph {
            writeln!(out, "evidence: graph-level only (no files scanned).")?;
        }
        Ok(())
    }

    fn markdown(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "### {}\n", md_cell(&header(self)))?;
        let files = self.evidence == EvidenceLevel::Files;
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
        for (i, p) in self.paths.iter().enumerate() {
            write!(
                out,
                "| {} | `{}` | {} | {} | {} | {} |",
                i + 1,
                md_cell(&short_path(&p.path)),
                format_size(p.nar_size),
                format_size(p.closure_size),
                format_size(p.added_size),
                md_cell(&via(p))
            )?;
            if files {
                write!(out, " {} |", md_cell(&kept_by(p)).replace('\n', "<br>"))?;
            }
            writeln!(out)?;
        }
        if let Some(rest) = &self.rest {
            writeln!(
                out,
                "| | … {} more paths | {} | | | |",
                rest.count,
                format_size(rest.nar_size)
            )?;
        }
        writeln!(out, "\n_{}._", sort_note(self))?;
        for w in &self.warnings {
            writeln!(out, "\n> **warning:** {}", md_cell(w))?;
        }
        Ok(())
    }
}

fn chains_header(r: &WhyChainsReport) -> String {
    if r.tree.is_none() {
        return format!(
            "{} does not depend on {}",
            name_of(&r.root),
            name_of(&r.target)
        );
    }
    let count = if r.chain_count_saturated {
        format!("more than {}", r.chain_count)
    } else {
        r.chain_count.to_string()
    };
    format!(
        "{count} chain(s) from {} to {} through {} paths; {} adds {} to the closure",
        name_of(&r.root),
        name_of(&r.target),
        r.paths_on_chains,
        name_of(&r.target),
        format_size(r.target_added_size)
    )
}

/// Depth-first lines of a chain tree: (prefix, node).
fn tree_lines(root: &ChainNode) -> Vec<(String, &ChainNode)> {
    let mut out = vec![(String::new(), root)];
    // Stack of (node, ancestors' last flags); children pushed in reverse.
    let mut stack: Vec<(&ChainNode, Vec<bool>, bool)> = Vec::new();
    for (i, c) in root.children.iter().enumerate().rev() {
        stack.push((c, Vec::new(), i + 1 == root.children.len()));
    }
    while let Some((n, anc, last)) = stack.pop() {
        out.push((tree_prefix(&anc, last), n));
        let mut child_anc = anc.clone();
        child_anc.push(last);
        for (i, c) in n.children.iter().enumerate().rev() {
            stack.push((c, child_anc.clone(), i + 1 == n.children.len()));
        }
    }
    out
}

fn node_label(n: &ChainNode) -> String {
    let mut s = if n.repeat {
        format!("{} (see above)", n.path)
    } else {
        n.path.clone()
    };
    if let Some(h) = &n.via {
        s.push_str(&hop_line(h));
    }
    s
}

impl Render for WhyChainsReport {
    fn table(&self, out: &mut dyn Write, style: &Style) -> io::Result<()> {
        writeln!(out, "{}", bold(&chains_header(self), style))?;
        if let Some(tree) = &self.tree {
            for (prefix, n) in tree_lines(tree) {
                writeln!(out, "{prefix}{}", node_label(n))?;
            }
        }
        if self.evidence == EvidenceLevel::Graph {
            writeln!(out, "evidence: graph-level only (no files scanned).")?;
        }
        Ok(())
    }

    fn markdown(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "### {}\n", md_cell(&chains_header(self)))?;
        if let Some(tree) = &self.tree {
            writeln!(out, "```")?;
            for (prefix, n) in tree_lines(tree) {
                writeln!(out, "{prefix}{}", node_label(n))?;
            }
            writeln!(out, "```")?;
        }
        for w in &self.warnings {
            writeln!(out, "\n> **warning:** {}", md_cell(w))?;
        }
        Ok(())
    }
}
