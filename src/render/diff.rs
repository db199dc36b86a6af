//! Table and Markdown views of the `diff` report.

use std::io::{self, Write};

use comfy_table::{Cell, CellAlignment};

use super::text::{bold, format_delta, md_cell, name_of, new_table};
use super::{Render, Style};
use crate::report::{DiffReport, PackageChange, PackageDiff, PathChange};
use crate::store::format_size;

fn side_name(roots: &[String], root: &str) -> String {
    if roots.len() > 1 {
        format!("{} roots", roots.len())
    } else {
        name_of(root).to_string()
    }
}

fn header(r: &DiffReport) -> String {
    let pct = if r.old.closure_size > 0 {
        format!(
            ", {:+.1}%",
            r.closure_size_delta as f64 / r.old.closure_size as f64 * 100.0
        )
    } else {
        String::new()
    };
    format!(
        "{} → {}: closure {} → {} ({}{pct})",
        side_name(&r.old.roots, &r.old.root),
        side_name(&r.new.roots, &r.new.root),
        format_size(r.old.closure_size),
        format_size(r.new.closure_size),
        format_delta(r.closure_size_delta),
    )
}

fn counts(r: &DiffReport) -> String {
    format!(
        "paths: {} added, {} removed, {} changed (rebuilt), {} unchanged; {} → {} paths",
        r.paths_added,
        r.paths_removed,
        r.paths_changed,
        r.paths_unchanged,
        r.old.path_count,
        r.new.path_count
    )
}

/// The version column: diff-closures notation, or what else happened.
fn versions(p: &PackageDiff) -> String {
    match p.change {
        PackageChange::Rebuilt => {
            let v = p.new_versions.join(", ");
            if v.is_empty() {
                "rebuilt".to_string()
            } else {
                format!("{v} (rebuilt)")
            }
        }
        _ => p.version_change.clone(),
    }
}

/// `+1 −1 ~2`: paths added, removed, changed within the package.
fn path_counts(p: &PackageDiff) -> String {
    let n = |k: PathChange| p.paths.iter().filter(|x| x.change == k).count();
    let mut parts = Vec::new();
    for (k, sign) in [
        (PathChange::Added, "+"),
        (PathChange::Removed, "−"),
        (PathChange::Changed, "~"),
    ] {
        let c = n(k);
        if c > 0 {
            parts.push(format!("{sign}{c}"));
        }
    }
    parts.join(" ")
}

const NOTE: &str = "impact: what the package's new paths bring into the closure beyond the old \
one, minus what its old paths brought (added size over the shared part; impacts overlap). \
NAR Δ: change of the package's own NAR sizes, as `nix store diff-closures` counts it.";

impl Render for DiffReport {
    fn table(&self, out: &mut dyn Write, style: &Style) -> io::Result<()> {
        writeln!(out, "{}", bold(&header(self), style))?;
        writeln!(out, "{}", counts(self))?;
        if self.packages.is_empty() {
            writeln!(out, "no package changed.")?;
            return Ok(());
        }
        let mut t = new_table(style);
        t.set_header(vec!["#", "package", "version", "impact", "NAR Δ", "paths"]);
        for (i, p) in self.packages.iter().enumerate() {
            t.add_row(vec![
                Cell::new(i + 1).set_alignment(CellAlignment::Right),
                Cell::new(&p.package),
                Cell::new(versions(p)),
                Cell::new(format_delta(p.impact)).set_alignment(CellAlignment::Right),
                Cell::new(format_delta(p.nar_delta)).set_alignment(CellAlignment::Right),
                Cell::new(path_counts(p)),
            ]);
        }
        if let Some(rest) = &self.rest {
            t.add_row(vec![
                Cell::new(""),
                Cell::new(format!("… {} more packages", rest.count)),
                Cell::new(""),
                Cell::new(""),
                Cell::new(format_delta(rest.nar_delta)).set_alignment(CellAlignment::Right),
                Cell::new(""),
            ]);
        }
        writeln!(out, "{t}")?;
        writeln!(out, "{NOTE}")?;
        Ok(())
    }

    fn markdown(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "### {}\n", md_cell(&header(self)))?;
        writeln!(out, "{}\n", counts(self))?;
        if self.packages.is_empty() {
            writeln!(out, "No package changed.")?;
        } else {
            writeln!(out, "| # | package | version | impact | NAR Δ | paths |")?;
            writeln!(out, "|--:|---|---|--:|--:|---|")?;
            for (i, p) in self.packages.iter().enumerate() {
                writeln!(
                    out,
                    "| {} | `{}` | {} | {} | {} | {} |",
                    i + 1,
                    md_cell(&p.package),
                    md_cell(&versions(p)),
                    format_delta(p.impact),
                    format_delta(p.nar_delta),
                    path_counts(p)
                )?;
            }
            if let Some(rest) = &self.rest {
                writeln!(
                    out,
                    "| | … {} more packages | | | {} | |",
                    rest.count,
                    format_delta(rest.nar_delta)
                )?;
            }
            writeln!(out, "\n_{NOTE}_")?;
        }
        for w in &self.warnings {
            writeln!(out, "\n> **warning:** {}", md_cell(w))?;
        }
        Ok(())
    }
}
