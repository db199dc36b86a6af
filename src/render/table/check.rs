//! The `check` report as tables: the header, one row per criterion, the path lists,
//! then the failure sentences (last, so that the tail of a build log has the reason).
//! Warnings are not part of the table: the binary prints them on stderr.

use std::io::{self, Write};

use comfy_table::{Cell, CellAlignment};

use super::{bold, new_table, write_fitted, WHOLE};
use crate::render::text::{short_path, via_chain};
use crate::render::words::check::{criteria, header, lists, verdict};
use crate::render::Style;
use crate::report::CheckReport;
use crate::store::format_size;

pub(super) fn check(r: &CheckReport, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", bold(&header(r), style))?;
    let mut t = new_table(style);
    t.set_header(vec![
        "check",
        "measured",
        "limit",
        "reference",
        "difference",
        "result",
    ]);
    for row in criteria(r) {
        t.add_row(vec![
            Cell::new(row.name),
            Cell::new(row.measured).set_alignment(CellAlignment::Right),
            Cell::new(row.limit).set_alignment(CellAlignment::Right),
            Cell::new(row.reference),
            Cell::new(row.difference).set_alignment(CellAlignment::Right),
            Cell::new(verdict(row.pass)),
        ]);
    }
    write_fitted(out, &t, style, &[3, 2])?;
    for list in lists(r) {
        writeln!(out, "\n{}:", list.title)?;
        let mut t = new_table(style);
        t.set_header(vec!["#", "path", "NAR", "added", "via"]);
        for (i, c) in list.paths.iter().enumerate() {
            t.add_row(vec![
                Cell::new(i + 1).set_alignment(CellAlignment::Right),
                Cell::new(short_path(&c.path)),
                Cell::new(format_size(c.nar_size)).set_alignment(CellAlignment::Right),
                Cell::new(format_size(c.added_size)).set_alignment(CellAlignment::Right),
                Cell::new(via_chain(&c.chain)),
            ]);
        }
        if let Some(rest) = list.rest {
            t.add_row(vec![
                Cell::new(""),
                Cell::new(crate::render::text::more_paths(rest.count as u64)),
                Cell::new(format_size(rest.nar_size)).set_alignment(CellAlignment::Right),
                Cell::new(""),
                Cell::new(""),
            ]);
        }
        write_fitted(out, &t, style, &[4, 2])?;
    }
    // Warnings go to stderr (from the binary, silenced by -q), as for every other
    // command: printing them here too showed each one twice.
    // Last, so that a build log's tail (`nix-build` shows ten lines) has the reason.
    for f in &r.failures {
        // One line per failure, whatever the width, so that `grep FAIL` in a CI log
        // finds it whole.
        writeln!(out, "{WHOLE}FAIL: {f}")?;
    }
    Ok(())
}
