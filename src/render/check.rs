//! Table and Markdown views of the `check` report. The Markdown view is what
//! `nixcut check` appends to `$GITHUB_STEP_SUMMARY`.

use std::io::{self, Write};

use comfy_table::{Cell, CellAlignment};

use super::text::{bold, format_delta, md_cell, name_of, new_table, short_path, via_chain};
use super::{Render, Style};
use crate::report::{CheckReport, Contributor, ExtraPaths, RestRow};
use crate::store::format_size;

/// One row of the criteria table.
struct Row {
    name: &'static str,
    measured: String,
    limit: String,
    reference: String,
    difference: String,
    pass: bool,
}

fn criteria(r: &CheckReport) -> Vec<Row> {
    let mut rows = Vec::new();
    if let Some(b) = &r.baseline {
        let allowed = match (b.max_growth_percent, b.max_growth_bytes) {
            (Some(p), _) => format!("{p}%"),
            (_, Some(bytes)) => format_size(bytes),
            _ => String::new(),
        };
        rows.push(Row {
            name: "baseline",
            measured: format_size(b.measured),
            limit: format_size(b.limit),
            reference: format!(
                "{} {} + {allowed}",
                name_of(&b.baseline_root),
                format_size(b.baseline_size)
            ),
            difference: match b.growth_percent {
                Some(p) => format!("{} ({p:+.1}%)", format_delta(b.growth)),
                None => format_delta(b.growth),
            },
            pass: b.pass,
        });
    }
    if let Some(a) = &r.against {
        rows.push(Row {
            name: "against",
            measured: format_size(a.measured),
            limit: format_size(a.limit),
            reference: format!(
                "{} {} × {}",
                name_of(&a.other_root),
                format_size(a.other_size),
                a.max_ratio
            ),
            difference: format!("ratio {:.2}×", a.ratio),
            pass: a.pass,
        });
    }
    if let Some(s) = &r.max_size {
        rows.push(Row {
            name: "max-size",
            measured: format_size(s.measured),
            limit: format_size(s.limit),
            reference: String::new(),
            difference: if s.measured > s.limit {
                format!("{} over", format_size(s.measured - s.limit))
            } else {
                format!("{} to spare", format_size(s.limit - s.measured))
            },
            pass: s.pass,
        });
    }
    rows
}

fn verdict(pass: bool) -> &'static str {
    if pass {
        "pass"
    } else {
        "FAIL"
    }
}

fn header(r: &CheckReport) -> String {
    let root = if r.roots.len() > 1 {
        format!("{} roots", r.roots.len())
    } else {
        name_of(&r.root).to_string()
    };
    format!(
        "{root}: closure {} in {} paths: {}",
        format_size(r.closure_size),
        r.path_count,
        if r.pass { "pass" } else { "FAILED" }
    )
}

fn extra<'a>(title: &str, e: &'a ExtraPaths) -> (String, &'a [Contributor], Option<&'a RestRow>) {
    (
        format!(
            "{title} ({} paths, {}), by added size over the shared part",
            e.count,
            format_size(e.size)
        ),
        e.top.as_slice(),
        e.rest.as_ref(),
    )
}

/// The path lists to show: (title, paths, rest).
fn lists(r: &CheckReport) -> Vec<(String, &[Contributor], Option<&RestRow>)> {
    let mut out = Vec::new();
    if let Some(b) = &r.baseline {
        if !b.new_paths.top.is_empty() {
            out.push(extra("New since the baseline", &b.new_paths));
        }
    }
    if let Some(a) = &r.against {
        if !a.only_in_root.top.is_empty() {
            out.push(extra(
                &format!(
                    "Only in {}, not in {}",
                    name_of(&r.root),
                    name_of(&a.other_root)
                ),
                &a.only_in_root,
            ));
        }
    }
    if let Some(s) = &r.max_size {
        if !s.pass && !s.largest.is_empty() {
            out.push((
                "Largest paths by added size".to_string(),
                s.largest.as_slice(),
                None,
            ));
        }
    }
    out
}

impl Render for CheckReport {
    fn table(&self, out: &mut dyn Write, style: &Style) -> io::Result<()> {
        writeln!(out, "{}", bold(&header(self), style))?;
        let mut t = new_table(style);
        t.set_header(vec![
            "check",
            "measured",
            "limit",
            "reference",
            "difference",
            "result",
        ]);
        for row in criteria(self) {
            t.add_row(vec![
                Cell::new(row.name),
                Cell::new(row.measured).set_alignment(CellAlignment::Right),
                Cell::new(row.limit).set_alignment(CellAlignment::Right),
                Cell::new(row.reference),
                Cell::new(row.difference).set_alignment(CellAlignment::Right),
                Cell::new(verdict(row.pass)),
            ]);
        }
        writeln!(out, "{t}")?;
        for (title, paths, rest) in lists(self) {
            writeln!(out, "\n{title}:")?;
            let mut t = new_table(style);
            t.set_header(vec!["#", "path", "NAR", "added", "via"]);
            for (i, c) in paths.iter().enumerate() {
                t.add_row(vec![
                    Cell::new(i + 1).set_alignment(CellAlignment::Right),
                    Cell::new(short_path(&c.path)),
                    Cell::new(format_size(c.nar_size)).set_alignment(CellAlignment::Right),
                    Cell::new(format_size(c.added_size)).set_alignment(CellAlignment::Right),
                    Cell::new(via_chain(&c.chain)),
                ]);
            }
            if let Some(rest) = rest {
                t.add_row(vec![
                    Cell::new(""),
                    Cell::new(format!("… {} more paths", rest.count)),
                    Cell::new(format_size(rest.nar_size)).set_alignment(CellAlignment::Right),
                    Cell::new(""),
                    Cell::new(""),
                ]);
            }
            writeln!(out, "{t}")?;
        }
        for w in &self.warnings {
            writeln!(out, "warning: {w}")?;
        }
        // Last, so that a build log's tail (`nix-build` shows ten lines) has the reason.
        for f in &self.failures {
            writeln!(out, "FAIL: {f}")?;
        }
        Ok(())
    }

    fn markdown(&self, out: &mut dyn Write) -> io::Result<()> {
        let icon = if self.pass { "✅" } else { "❌" };
        writeln!(out, "### {icon} nixcut check: {}\n", md_cell(&header(self)))?;
        writeln!(
            out,
            "| check | measured | limit | reference | difference | result |"
        )?;
        writeln!(out, "|---|--:|--:|---|--:|---|")?;
        for row in criteria(self) {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                row.name,
                md_cell(&row.measured),
                md_cell(&row.limit),
                md_cell(&row.reference),
                md_cell(&row.difference),
                if row.pass { "✅ pass" } else { "❌ **fail**" }
            )?;
        }
        for f in &self.failures {
            writeln!(out, "\n> **FAIL:** {}", md_cell(f))?;
        }
        for (title, paths, rest) in lists(self) {
            writeln!(out, "\n#### {}\n", md_cell(&title))?;
            writeln!(out, "| # | path | NAR | added | via |")?;
            writeln!(out, "|--:|---|--:|--:|---|")?;
            for (i, c) in paths.iter().enumerate() {
                writeln!(
                    out,
                    "| {} | `{}` | {} | {} | {} |",
                    i + 1,
                    md_cell(&short_path(&c.path)),
                    format_size(c.nar_size),
                    format_size(c.added_size),
                    md_cell(&via_chain(&c.chain))
                )?;
            }
            if let Some(rest) = rest {
                writeln!(
                    out,
                    "| | … {} more paths | {} | | |",
                    rest.count,
                    format_size(rest.nar_size)
                )?;
            }
        }
        for w in &self.warnings {
            writeln!(out, "\n> **warning:** {}", md_cell(w))?;
        }
        writeln!(out)?;
        Ok(())
    }
}
