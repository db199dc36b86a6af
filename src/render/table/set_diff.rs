//! A package-set diff (or check) as tables: the summary, the causes, the roots (first
//! `show` rows of each, with a line for the rest), the rebuild summary and the verdict.

use std::io::{self, Write};

use comfy_table::{Cell, CellAlignment};

use super::{bold, new_table};
use crate::render::text::format_delta;
use crate::render::words::set_diff as words;
use crate::render::Style;
use crate::report::SetDiffReport;

pub(super) fn set_diff(r: &SetDiffReport, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", bold(&words::header(r), style))?;
    writeln!(out, "{}", words::counts(r))?;
    writeln!(out, "{}", words::rebuild(r))?;
    for line in words::verdict(r) {
        writeln!(out, "{}", bold(&line, style))?;
    }
    if let Some(c) = &r.check {
        for f in &c.failed {
            writeln!(out, "  {}", words::failed_root(f))?;
        }
        for f in &c.failed_new {
            writeln!(out, "  {}", words::failed_new_root(f))?;
        }
    }
    let show = r.show.max(1);
    if !r.causes.is_empty() {
        let mut t = new_table(style);
        t.set_header(vec![
            "#",
            "cause",
            "change",
            "roots",
            "bytes",
            "example chain",
        ]);
        for (i, c) in r.causes.iter().take(show).enumerate() {
            t.add_row(vec![
                Cell::new(i + 1).set_alignment(CellAlignment::Right),
                Cell::new(format!("{} {}", c.name, words::versions(c))),
                Cell::new(c.change.as_str()),
                Cell::new(c.roots).set_alignment(CellAlignment::Right),
                Cell::new(format_delta(c.bytes)).set_alignment(CellAlignment::Right),
                Cell::new(words::chain(c)),
            ]);
        }
        let hidden = r.causes.len().saturating_sub(show) + r.rest.map_or(0, |x| x.causes);
        if hidden > 0 {
            t.add_row(vec![
                Cell::new(""),
                Cell::new(words::more(hidden, "cause", "causes")),
            ]);
        }
        writeln!(out, "{t}")?;
    } else {
        writeln!(out, "no package changed a root's closure size.")?;
    }
    let mut t = new_table(style);
    let downloads = words::has_downloads(r);
    let mut head = vec!["#", "root", "old", "new", "Δ", "%"];
    if downloads {
        head.push("download");
    }
    t.set_header(head);
    let mut shown = 0;
    for (i, root) in r.roots.iter().take(show).enumerate() {
        shown += 1;
        let mut row = vec![
            Cell::new(i + 1).set_alignment(CellAlignment::Right),
            Cell::new(words::root_name(root)),
            Cell::new(words::size(&root.old)).set_alignment(CellAlignment::Right),
            Cell::new(words::size(&root.new)).set_alignment(CellAlignment::Right),
            Cell::new(format_delta(root.delta)).set_alignment(CellAlignment::Right),
            Cell::new(words::percent(root.percent)).set_alignment(CellAlignment::Right),
        ];
        if downloads {
            row.push(Cell::new(words::download(root)).set_alignment(CellAlignment::Right));
        }
        t.add_row(row);
    }
    let hidden = r.roots.len() - shown + r.rest.map_or(0, |x| x.roots);
    if hidden > 0 {
        t.add_row(vec![
            Cell::new(""),
            Cell::new(format!(
                "{} (--all, or --format json)",
                words::more(hidden, "root", "roots")
            )),
        ]);
    }
    writeln!(out, "{t}")?;
    writeln!(out, "{}", words::NOTE)?;
    Ok(())
}
