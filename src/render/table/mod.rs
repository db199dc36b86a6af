//! The table format: what a terminal shows. One file per report, each writing the
//! report's words (`crate::render::words`) into comfy-table tables with the house
//! style ([`new_table`]) to any `io::Write`.

mod check;
mod diff;
mod gpu;
mod refs;
mod rules;
mod set_diff;
mod split;
mod why;

use std::io::{self, Write};

use comfy_table::{presets, ContentArrangement, Table};

use super::{Report, Style};

/// Write `report` as tables.
pub(super) fn render(report: Report<'_>, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    match report {
        Report::Why(r) => why::why(r, style, out),
        Report::WhyChains(r) => why::chains(r, style, out),
        Report::Refs(r) => refs::refs(r, style, out),
        Report::Diff(r) => diff::diff(r, style, out),
        Report::Check(r) => check::check(r, style, out),
        Report::Split(r) => split::split(r, style, out),
        Report::Gpu(r) => gpu::gpu(r, style, out),
        Report::Rules(r) => rules::rules(r, style, out),
        Report::SetDiff(r) => set_diff::set_diff(r, style, out),
    }
}

/// A table with the house style: wrapped to `style.width` (never, without one),
/// coloured only when allowed.
fn new_table(style: &Style) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    match style.width {
        Some(w) => {
            t.set_width(w);
            t.set_content_arrangement(ContentArrangement::Dynamic);
        }
        None => {
            t.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    if !style.color {
        t.force_no_tty();
    }
    t
}

/// Bold with ANSI when colour is allowed.
fn bold(s: &str, style: &Style) -> String {
    if style.color {
        format!("\x1b[1m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}
