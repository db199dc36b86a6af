//! The `split` report as HTML: before and after side by side. On the left the package
//! as it is, one block; on the right its proposed outputs stacked, each block's height
//! its exact NAR size, the outputs ROOT still needs in colour and the others grey; with
//! `--for ROOT`, ROOT's closure before and after as two bars on one scale. Below: the
//! outputs with their references, the actions with their evidence, and the Nix code.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::escape::{esc, esc_lines};
use super::page;
use crate::render::nix::split_code;
use crate::render::text::{name_of, short_path};
use crate::render::words::split::{action, heading, no_split};
use crate::report::SplitReport;
use crate::store::format_size;

/// Height of the stacked columns and width of one column (SVG units).
const H: f64 = 420.0;
const COL: f64 = 190.0;
/// Colours of the outputs, by name; others cycle through the palette.
const NEEDED: &[(&str, &str)] = &[
    ("out", "#3b7dd8"),
    ("lib", "#5b9be6"),
    ("bin", "#2f9e8f"),
    ("dev", "#d9a23c"),
    ("static", "#c7833a"),
    ("doc", "#8c7bc8"),
    ("man", "#a38fd6"),
    ("debug", "#9aa3b0"),
];
const DROPPED: &str = "#c9ced6";

fn colour(name: &str, needed: bool) -> &'static str {
    if !needed {
        return DROPPED;
    }
    NEEDED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, c)| *c)
        .unwrap_or("#d65f5f")
}

/// One labelled block of a stacked column.
fn block(svg: &mut String, x: f64, y: f64, h: f64, fill: &str, label: &str, tip: &[String]) {
    let _ = write!(
        svg,
        "<g data-output=\"{}\"><title>{}</title><rect x=\"{x:.1}\" y=\"{y:.2}\" width=\"{COL}\" height=\"{:.2}\" fill=\"{fill}\" stroke=\"#fff\" stroke-width=\"1\"/>",
        esc(label),
        esc_lines(tip),
        h.max(0.5)
    );
    if h >= 14.0 {
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.2}\" font-size=\"12\" fill=\"#fff\">{}</text>",
            x + 6.0,
            y + 14.0,
            esc(label)
        );
    }
    svg.push_str("</g>");
}

/// `nixcut split PATH --format html`.
pub(super) fn split(r: &SplitReport, out: &mut dyn Write) -> io::Result<()> {
    let head = heading(r);
    let svg = picture(r);
    page(out, &format!("nixcut split: {head}"), |out| {
        writeln!(out, "<header><h1>{}</h1>", esc(&head))?;
        if let Some(n) = &r.no_split {
            writeln!(out, "<p class=\"sub\">{}</p></header>", esc(&no_split(n)))?;
            return writeln!(out, "<main></main>");
        }
        writeln!(out, "</header><main><div class=\"map\">{svg}")?;
        outputs_table(r, out)?;
        if !r.actions.is_empty() {
            writeln!(out, "<h2>Actions</h2><ul>")?;
            for a in &r.actions {
                writeln!(out, "<li>{}</li>", esc(&action(a)))?;
            }
            writeln!(out, "</ul>")?;
        }
        // The code's own line breaks are kept (no line of it holds a control character).
        let lines: Vec<String> = split_code(r).lines().map(str::to_string).collect();
        writeln!(out, "<h2>Nix</h2><pre>{}</pre></div>", esc_lines(&lines))?;
        writeln!(
            out,
            "<aside><div id=\"details\" hidden><h2>Selected</h2><pre></pre></div>"
        )?;
        closure_bars(r, out)?;
        super::warnings(out, &r.warnings)?;
        writeln!(out, "</aside></main>")
    })
}

/// The picture: the package as one block, its proposed outputs stacked beside it on
/// the same scale, the outputs ROOT still needs in colour.
fn picture(r: &SplitReport) -> String {
    let needed = |name: &str| {
        r.for_root
            .as_ref()
            .is_none_or(|f| f.outputs_needed.iter().any(|o| o == name))
    };
    let total: u64 = r
        .outputs
        .iter()
        .map(|o| o.size)
        .sum::<u64>()
        .max(r.package_size)
        .max(1);
    let scale = |bytes: u64| bytes as f64 / total as f64 * H;
    let mut svg = String::new();
    let w = 60.0 + 2.0 * COL + 80.0;
    let _ = write!(
        svg,
        "<svg class=\"pick\" style=\"max-width:560px\" viewBox=\"0 0 {w} {:.0}\" width=\"{w}\" height=\"{:.0}\" role=\"img\" aria-label=\"the package before and after the split\">",
        H + 50.0,
        H + 50.0
    );
    let _ = write!(
        svg,
        "<text x=\"30\" y=\"16\" font-size=\"12\" fill=\"#5a6272\">now: one output</text><text x=\"{:.1}\" y=\"16\" font-size=\"12\" fill=\"#5a6272\">proposed outputs</text>",
        30.0 + COL + 80.0
    );
    let top = 26.0;
    block(
        &mut svg,
        30.0,
        top + H - scale(r.package_size),
        scale(r.package_size),
        "#3b7dd8",
        &format!("{} ({})", name_of(&r.package), format_size(r.package_size)),
        &[r.package.clone(), format_size(r.package_size)],
    );
    let mut y = top + H;
    let x = 30.0 + COL + 80.0;
    for o in &r.outputs {
        let h = scale(o.size);
        y -= h;
        let mut tip = vec![
            format!("{}: {} in {} files", o.name, format_size(o.size), o.files),
            if needed(&o.name) {
                "needed by ROOT".to_string()
            } else {
                "not needed by ROOT: leaves its closure".to_string()
            },
        ];
        tip.extend(o.references.iter().take(12).map(|x| match &x.output {
            Some(out) => format!("→ (this package) {out}"),
            None => format!("→ {}", short_path(&x.path)),
        }));
        block(
            &mut svg,
            x,
            y,
            h,
            colour(&o.name, needed(&o.name)),
            &format!("{} ({})", o.name, format_size(o.size)),
            &tip,
        );
    }
    svg.push_str("</svg>");
    svg
}

/// The outputs with their sizes, files and references.
fn outputs_table(r: &SplitReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<h2>Outputs</h2><table><tr><th>output</th><th class=\"num\">size</th><th class=\"num\">files</th><th>references</th></tr>")?;
    for o in &r.outputs {
        let refs: Vec<String> = o
            .references
            .iter()
            .map(|x| match &x.output {
                Some(out) => format!("(self) {out}"),
                None => short_path(&x.path),
            })
            .collect();
        writeln!(
            out,
            "<tr><td class=\"name\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            esc(&o.name),
            esc(&format_size(o.size)),
            o.files,
            esc(&refs.join(", "))
        )?;
    }
    writeln!(out, "</table>")
}

/// With `--for ROOT`: ROOT's closure before and after, two bars on one scale.
fn closure_bars(r: &SplitReport, out: &mut dyn Write) -> io::Result<()> {
    let Some(f) = &r.for_root else {
        return Ok(());
    };
    let max = f.closure_size_before.max(f.closure_size_after).max(1) as f64;
    let bar = |bytes: u64, fill: &str| {
        format!(
            "<div style=\"background:{fill};height:18px;width:{:.1}%;border-radius:3px\"></div>",
            bytes as f64 / max * 100.0
        )
    };
    writeln!(
        out,
        "<h2>Closure of {}</h2><p class=\"num\">before {}</p>{}<p class=\"num\">after {}</p>{}",
        esc(name_of(&f.root)),
        esc(&format_size(f.closure_size_before)),
        bar(f.closure_size_before, "#9aa3b0"),
        esc(&format_size(f.closure_size_after)),
        bar(f.closure_size_after, "#3b7dd8")
    )
}
