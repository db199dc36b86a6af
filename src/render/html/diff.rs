//! The `diff` report as HTML: the two closure sizes, and one bar per changed package
//! on a shared axis, growth to the right in red, shrinkage to the left in green, its
//! length the package's impact; the table of the same rows below.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::escape::{esc, esc_lines};
use super::page;
use crate::render::text::format_delta;
use crate::render::words::diff::{counts, header, path_counts, versions_short as versions, NOTE};
use crate::report::{DiffReport, PackageDiff, PathChange};
use crate::store::format_size;

/// Width of the chart and of the name column, height of a row (SVG units).
const W: f64 = 1000.0;
const NAMES: f64 = 260.0;
const ROW: f64 = 22.0;
/// Bars drawn; the table lists every package of the report.
const MAX_BARS: usize = 60;

const GROW: &str = "#d64541";
const SHRINK: &str = "#2e9e5b";

/// The hover text of a package: its numbers and its changed paths.
fn tooltip(p: &PackageDiff) -> Vec<String> {
    let mut lines = vec![
        format!("{} {}", p.package, versions(p)),
        format!(
            "impact {} · NAR Δ {} ({} → {})",
            format_delta(p.impact),
            format_delta(p.nar_delta),
            format_size(p.old_size),
            format_size(p.new_size)
        ),
    ];
    for path in p.paths.iter().take(12) {
        let (sign, which, size) = match path.change {
            PathChange::Added => ("+", &path.new_path, path.added_size),
            PathChange::Removed => ("−", &path.old_path, path.removed_size),
            PathChange::Changed => ("~", &path.new_path, path.added_size),
        };
        lines.push(format!(
            "{sign} {} ({})",
            which.as_deref().unwrap_or(&path.name),
            format_size(size)
        ));
    }
    if p.paths.len() > 12 {
        lines.push(format!("… {} more paths", p.paths.len() - 12));
    }
    lines
}

/// `nixcut diff OLD NEW --format html`.
pub(super) fn diff(r: &DiffReport, out: &mut dyn Write) -> io::Result<()> {
    let bars: Vec<&PackageDiff> = r.packages.iter().take(MAX_BARS).collect();
    let max = bars
        .iter()
        .map(|p| p.impact.unsigned_abs())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let half = (W - NAMES) / 2.0 - 70.0;
    let axis = NAMES + 70.0 + half;
    let h = ROW * bars.len() as f64 + 30.0;
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg class=\"pick\" viewBox=\"0 0 {W} {h}\" width=\"{W}\" height=\"{h}\" role=\"img\" aria-label=\"impact of each changed package\">"
    );
    let _ = write!(
        svg,
        "<text x=\"{:.1}\" y=\"14\" font-size=\"11\" fill=\"{SHRINK}\" text-anchor=\"end\">← shrinks</text><text x=\"{:.1}\" y=\"14\" font-size=\"11\" fill=\"{GROW}\">grows →</text>",
        axis - 6.0,
        axis + 6.0
    );
    for (k, p) in bars.iter().enumerate() {
        let y = 22.0 + ROW * k as f64;
        let len = (p.impact.unsigned_abs() as f64 / max * half).max(1.0);
        let (x, fill) = if p.impact >= 0 {
            (axis, GROW)
        } else {
            (axis - len, SHRINK)
        };
        let value_x = if p.impact >= 0 {
            format!("x=\"{:.2}\"", axis + len + 4.0)
        } else {
            format!("x=\"{:.2}\" text-anchor=\"end\"", axis - len - 4.0)
        };
        let name: String = if p.package.chars().count() > 38 {
            p.package.chars().take(37).chain(['…']).collect()
        } else {
            p.package.clone()
        };
        let _ = write!(
            svg,
            "<g data-package=\"{}\" data-impact=\"{}\"><title>{}</title><rect x=\"0\" y=\"{:.1}\" width=\"{W}\" height=\"{ROW}\" fill=\"{}\"/><text x=\"6\" y=\"{:.1}\" font-size=\"12\" fill=\"#1d2330\">{}</text><rect class=\"bar\" x=\"{x:.2}\" y=\"{:.1}\" width=\"{len:.2}\" height=\"{:.1}\" fill=\"{fill}\"/><text {value_x} y=\"{:.1}\" font-size=\"11\" fill=\"#3c4454\">{}</text></g>",
            esc(&p.package),
            p.impact,
            esc_lines(&tooltip(p)),
            y,
            if k % 2 == 0 { "#fff" } else { "#f4f6f8" },
            y + 15.0,
            esc(&name),
            y + 4.0,
            ROW - 8.0,
            y + 15.0,
            esc(&format_delta(p.impact))
        );
    }
    let _ = write!(
        svg,
        "<line x1=\"{axis}\" y1=\"18\" x2=\"{axis}\" y2=\"{h}\" stroke=\"#5a6272\" stroke-width=\"1\"/></svg>"
    );
    let head = header(r);
    page(out, &format!("nixcut diff: {head}"), |out| {
        writeln!(out, "<header><h1>{}</h1>", esc(&head))?;
        writeln!(out, "<p class=\"sub\">{}</p></header>", esc(&counts(r)))?;
        writeln!(out, "<main><div class=\"map\">")?;
        if r.packages.is_empty() {
            writeln!(out, "<p>No package changed.</p>")?;
        } else {
            writeln!(out, "{svg}")?;
            writeln!(out, "<h2>Packages</h2><table><tr><th>#</th><th>package</th><th>version</th><th class=\"num\">impact</th><th class=\"num\">NAR Δ</th><th>paths</th></tr>")?;
            for (i, p) in r.packages.iter().enumerate() {
                let colour = match p.impact {
                    i if i > 0 => GROW,
                    i if i < 0 => SHRINK,
                    _ => "inherit",
                };
                writeln!(
                    out,
                    "<tr><td class=\"num\">{}</td><td class=\"name\">{}</td><td>{}</td><td class=\"num\" style=\"color:{colour}\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                    i + 1,
                    esc(&p.package),
                    esc(&versions(p)),
                    esc(&format_delta(p.impact)),
                    esc(&format_delta(p.nar_delta)),
                    esc(&path_counts(p))
                )?;
            }
            if let Some(rest) = &r.rest {
                writeln!(
                    out,
                    "<tr><td></td><td>… {} more packages</td><td></td><td></td><td class=\"num\">{}</td><td></td></tr>",
                    rest.count,
                    esc(&format_delta(rest.nar_delta))
                )?;
            }
            writeln!(out, "</table><p class=\"sub\">{}</p>", esc(NOTE))?;
        }
        writeln!(
            out,
            "</div><aside><div id=\"details\" hidden><h2>Selected</h2><pre></pre></div>"
        )?;
        writeln!(out, "<h2>Closure</h2><p class=\"num\">{} → {}</p><p class=\"num\" style=\"font-size:22px;margin:0;color:{}\">{}</p>",
            esc(&format_size(r.old.closure_size)),
            esc(&format_size(r.new.closure_size)),
            if r.closure_size_delta > 0 { GROW } else if r.closure_size_delta < 0 { SHRINK } else { "inherit" },
            esc(&format_delta(r.closure_size_delta)))?;
        super::warnings(out, &r.warnings)?;
        writeln!(out, "</aside></main>")
    })
}
