//! The `store` report as tables: the heading and totals, then one row per GC root
//! ranked by what it alone keeps, and the roots not listed summed in one line.

use std::io::{self, Write};

use comfy_table::{Cell, CellAlignment};

use super::{bold, new_table, write_fitted};
use crate::render::text::thousands;
use crate::render::words::store::{heading, rest, totals};
use crate::render::{short_path, Style};
use crate::report::StoreReport;
use crate::store::format_size;

fn right(s: impl ToString) -> Cell {
    Cell::new(s.to_string()).set_alignment(CellAlignment::Right)
}

pub(super) fn store(r: &StoreReport, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", bold(&heading(r), style))?;
    writeln!(out, "{}", totals(r))?;
    if !r.roots.is_empty() {
        let mut t = new_table(style);
        t.set_header(vec!["alone frees", "paths", "closure", "root", "link"]);
        for root in &r.roots {
            t.add_row(vec![
                right(format_size(root.alone)),
                right(thousands(root.alone_paths)),
                right(format_size(root.closure_size)),
                Cell::new(short_path(&root.root)),
                Cell::new(&root.link),
            ]);
        }
        write_fitted(out, &t, style, &[1, 2])?;
    }
    if let Some(line) = rest(r) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
