//! The `diff` report in Markdown: header, counts, one table row per changed package,
//! the note on sizes, and the warnings; and the same within a budget of bytes for a
//! pull-request comment ([`diff_within`]: the first rows open, the rest folded and
//! counted).

use std::fmt::Write as _;
use std::io::{self, Write};

use super::{md_cell, md_code};
use crate::render::text::{count, format_delta, thousands};
use crate::render::words::diff::{counts, header, path_counts, versions_short, NOTE};
use crate::report::{DiffReport, PackageDiff};

const TABLE_HEAD: &str =
    "| # | package | version | impact | NAR Δ | paths |\n|--:|---|---|--:|--:|---|\n";

fn package_row(i: usize, p: &PackageDiff) -> String {
    format!(
        "| {} | {} | {} | {} | {} | {} |\n",
        i + 1,
        md_code(&p.package),
        md_cell(&versions_short(p)),
        format_delta(p.impact),
        format_delta(p.nar_delta),
        path_counts(p)
    )
}

pub(super) fn diff(r: &DiffReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "### {}\n", md_cell(&header(r)))?;
    writeln!(out, "{}\n", counts(r))?;
    if r.packages.is_empty() {
        writeln!(out, "No package changed.")?;
    } else {
        out.write_all(TABLE_HEAD.as_bytes())?;
        for (i, p) in r.packages.iter().enumerate() {
            out.write_all(package_row(i, p).as_bytes())?;
        }
        if let Some(rest) = &r.rest {
            writeln!(
                out,
                "| | … {} more packages | | | {} | |",
                rest.count,
                format_delta(rest.nar_delta)
            )?;
        }
        writeln!(out, "\n_{NOTE}_")?;
    }
    for w in &r.warnings {
        writeln!(out, "\n> **warning:** {}", md_cell(&w.to_string()))?;
    }
    Ok(())
}

/// How many packages a comment shows open; the rest are folded in `<details>`.
const OPEN_ROWS: usize = 25;

/// The most bytes of warnings a comment holds; the rest are counted.
const WARNING_BYTES: usize = 4096;

/// The report in at most `budget` bytes when `budget` leaves room for its header (a
/// few hundred bytes; the caller cuts what still overflows): the first
/// [`OPEN_ROWS`] packages, then as many more as fit folded in `<details>`, then a count
/// of the rest and `more` (where they are: `see `--format json``, the JSON artifact).
pub(super) fn diff_within(r: &DiffReport, budget: usize, more: &str) -> String {
    let mut head = String::new();
    let _ = writeln!(head, "### {}\n", md_cell(&header(r)));
    let _ = writeln!(head, "{}\n", counts(r));
    let mut tail = String::new();
    if !r.packages.is_empty() {
        let _ = writeln!(tail, "\n_{NOTE}_");
    }
    let mut warned = 0;
    for w in &r.warnings {
        let line = format!("\n> **warning:** {}\n", md_cell(&w.to_string()));
        if tail.len() + line.len() > WARNING_BYTES {
            break;
        }
        tail.push_str(&line);
        warned += 1;
    }
    if warned < r.warnings.len() {
        let rest = (r.warnings.len() - warned) as u64;
        let _ = writeln!(
            tail,
            "\n> … and {} ({more})",
            count(rest, "more warning", "more warnings")
        );
    }
    if r.packages.is_empty() {
        return head + "No package changed.\n" + &tail;
    }
    // The wrappers of the folded rows and the count of the rest.
    let reserve = 512 + 2 * more.len();
    let mut room = budget.saturating_sub(head.len() + tail.len() + reserve);
    let mut body = head;
    body.push_str(TABLE_HEAD);
    room = room.saturating_sub(TABLE_HEAD.len());
    let mut shown = 0;
    for (i, p) in r.packages.iter().enumerate().take(OPEN_ROWS) {
        let row = package_row(i, p);
        if row.len() > room {
            break;
        }
        room -= row.len();
        body.push_str(&row);
        shown += 1;
    }
    let hidden = r.rest.as_ref().map_or(0, |x| x.count);
    let folded_from = shown;
    if shown == OPEN_ROWS.min(r.packages.len()) && r.packages.len() > shown {
        let mut rows = String::new();
        for (i, p) in r.packages.iter().enumerate().skip(shown) {
            let row = package_row(i, p);
            if row.len() > room {
                break;
            }
            room -= row.len();
            rows.push_str(&row);
            shown += 1;
        }
        let _ = write!(
            body,
            "\n<details><summary>{}</summary>\n\n{TABLE_HEAD}{rows}\n</details>\n",
            count(
                (r.packages.len() - folded_from + hidden) as u64,
                "more package",
                "more packages"
            )
        );
    }
    let left = r.packages.len() - shown + hidden;
    if left > 0 {
        let _ = writeln!(
            body,
            "\n… and {} more {} ({more})",
            thousands(left as u64),
            if left == 1 { "package" } else { "packages" }
        );
    }
    body.push_str(&tail);
    body
}
