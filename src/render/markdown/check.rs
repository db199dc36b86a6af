//! The `check` report in Markdown: what `nixcut check` appends to
//! `$GITHUB_STEP_SUMMARY`. Failures come right under the criteria, where a reviewer
//! looks first.

use std::io::{self, Write};

use super::{md_cell, md_code};
use crate::render::text::{short_path, via_chain};
use crate::render::words::check::{criteria, header, lists};
use crate::report::CheckReport;
use crate::store::format_size;

pub(super) fn check(r: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
    let icon = if r.pass { "✅" } else { "❌" };
    writeln!(out, "### {icon} nixcut check: {}\n", md_cell(&header(r)))?;
    writeln!(
        out,
        "| check | measured | limit | reference | difference | result |"
    )?;
    writeln!(out, "|---|--:|--:|---|--:|---|")?;
    for row in criteria(r) {
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
    for f in &r.failures {
        writeln!(out, "\n> **FAIL:** {}", md_cell(&f.to_string()))?;
    }
    for list in lists(r) {
        writeln!(out, "\n#### {}\n", md_cell(&list.title))?;
        writeln!(out, "| # | path | NAR | added | via |")?;
        writeln!(out, "|--:|---|--:|--:|---|")?;
        for (i, c) in list.paths.iter().enumerate() {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                i + 1,
                md_code(&short_path(&c.path)),
                format_size(c.nar_size),
                format_size(c.added_size),
                md_cell(&via_chain(&c.chain))
            )?;
        }
        if let Some(rest) = list.rest {
            writeln!(
                out,
                "| | {} | {} | | |",
                crate::render::text::more_paths(rest.count as u64),
                format_size(rest.nar_size)
            )?;
        }
    }
    for w in &r.warnings {
        writeln!(out, "\n> **warning:** {}", md_cell(&w.to_string()))?;
    }
    writeln!(out)?;
    Ok(())
}
