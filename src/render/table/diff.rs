//! The `diff` report as a table: header and counts, one row per changed package, and
//! the note on what the sizes mean.

use std::io::{self, Write};

use comfy_table::{Cell, CellAlignment};

use super::{bold, new_table, write_fitted};
use crate::render::text::format_delta;
use crate::render::words::diff::{counts, header, path_counts, versions_short, NOTE};
use crate::render::Style;
use crate::report::DiffReport;

pub(super) fn diff(r: &DiffReport, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", bold(&header(r), style))?;
    writeln!(out, "{}", counts(r))?;
    if r.packages.is_empty() {
        writeln!(out, "no package changed.")?;
        return Ok(());
    }
    let mut t = new_table(style);
    t.set_header(vec!["#", "package", "version", "impact", "NAR Δ", "paths"]);
    for (i, p) in r.packages.iter().enumerate() {
        t.add_row(vec![
            Cell::new(i + 1).set_alignment(CellAlignment::Right),
            Cell::new(&p.package),
            Cell::new(versions_short(p)),
            Cell::new(format_delta(p.impact)).set_alignment(CellAlignment::Right),
            Cell::new(format_delta(p.nar_delta)).set_alignment(CellAlignment::Right),
            Cell::new(path_counts(p)),
        ]);
    }
    if let Some(rest) = &r.rest {
        t.add_row(vec![
            Cell::new(""),
            Cell::new(format!("… {} more packages", rest.count)),
            Cell::new(""),
            Cell::new(""),
            Cell::new(format_delta(rest.nar_delta)).set_alignment(CellAlignment::Right),
            Cell::new(""),
        ]);
    }
    write_fitted(out, &t, style, &[5, 4])?;
    writeln!(out, "{NOTE}")?;
    Ok(())
}
