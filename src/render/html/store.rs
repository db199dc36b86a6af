//! The `store` report as HTML: one treemap of the whole store, each GC root a rectangle
//! sized by what it alone keeps, then the bytes several roots share, the bytes no root
//! keeps and the roots not drawn, each one rectangle; the ranked roots below.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::escape::{esc, esc_lines};
use super::page;
use super::treemap::{squarify, Rect};
use crate::render::text::{short_path, thousands};
use crate::render::words::store::{heading, rest, totals};
use crate::report::StoreReport;
use crate::store::format_size;

const W: f64 = 960.0;
const H: f64 = 560.0;
/// Roots drawn one by one; the rest share a rectangle.
const DRAWN: usize = 300;
const ROOT: &str = "#3b7dd8";
const SHARED: &str = "#d9a23c";
const UNREACHABLE: &str = "#c0392b";
const OTHER: &str = "#8c95a3";

/// `nixcut store --format html`.
pub(super) fn store(r: &StoreReport, out: &mut dyn Write) -> io::Result<()> {
    let head = heading(r);
    // (size, fill, label, tooltip lines)
    let mut items: Vec<(u64, &str, String, Vec<String>)> = Vec::new();
    for root in r.roots.iter().take(DRAWN).filter(|x| x.alone > 0) {
        items.push((
            root.alone,
            ROOT,
            short_path(&root.root),
            vec![
                format!(
                    "{} alone frees {} ({} paths)",
                    root.link,
                    format_size(root.alone),
                    thousands(root.alone_paths)
                ),
                format!("root {}", root.root),
                format!(
                    "closure {} ({} paths)",
                    format_size(root.closure_size),
                    thousands(root.closure_paths)
                ),
            ],
        ));
    }
    let undrawn: u64 = r
        .roots
        .iter()
        .skip(DRAWN)
        .map(|x| x.alone)
        .sum::<u64>()
        .saturating_add(r.rest.map_or(0, |x| x.alone));
    if undrawn > 0 {
        items.push((
            undrawn,
            OTHER,
            "other roots".into(),
            vec![format!(
                "roots not drawn one by one alone keep {}",
                format_size(undrawn)
            )],
        ));
    }
    items.push((
        r.shared.bytes,
        SHARED,
        "shared".into(),
        vec![format!(
            "kept by several roots: {} in {} paths (no single deletion frees them)",
            format_size(r.shared.bytes),
            thousands(r.shared.paths)
        )],
    ));
    items.push((
        r.unreachable.bytes,
        UNREACHABLE,
        "unreachable".into(),
        vec![format!(
            "kept by no root: {} in {} paths (nix-store --gc deletes them)",
            format_size(r.unreachable.bytes),
            thousands(r.unreachable.paths)
        )],
    ));
    let sizes: Vec<f64> = items.iter().map(|i| i.0 as f64).collect();
    let rects = squarify(
        &sizes,
        Rect {
            x: 0.0,
            y: 0.0,
            w: W,
            h: H,
        },
    );
    let mut svg = format!(
        "<svg class=\"pick\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{W:.0}\" height=\"{H:.0}\" viewBox=\"0 0 {W:.0} {H:.0}\" font-size=\"11\">"
    );
    for ((_, fill, label, tip), rect) in items.iter().zip(&rects) {
        if rect.w <= 0.0 || rect.h <= 0.0 {
            continue;
        }
        let _ = write!(
            svg,
            "<g data-path=\"{}\"><title>{}</title><rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\" fill=\"{fill}\" stroke=\"#fff\" stroke-width=\"1\"/>",
            esc(label),
            esc_lines(tip),
            rect.x,
            rect.y,
            rect.w,
            rect.h
        );
        if rect.w > 60.0 && rect.h > 16.0 {
            let chars = ((rect.w - 8.0) / 6.5) as usize;
            let text: String = label.chars().take(chars).collect();
            let _ = write!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#fff\">{}</text>",
                rect.x + 4.0,
                rect.y + 13.0,
                esc(&text)
            );
        }
        svg.push_str("</g>");
    }
    svg.push_str("</svg>");
    page(out, &format!("nixcut store: {head}"), |out| {
        writeln!(out, "<header><h1>{}</h1>", esc(&head))?;
        writeln!(out, "<p class=\"sub\">{}</p>", esc(&totals(r)))?;
        writeln!(
            out,
            "<p class=\"sub\"><span style=\"color:{ROOT}\">■</span> what one GC root alone keeps <span style=\"color:{SHARED}\">■</span> shared by several roots <span style=\"color:{UNREACHABLE}\">■</span> unreachable <span style=\"color:{OTHER}\">■</span> other roots</p></header>"
        )?;
        writeln!(out, "<main><div class=\"map\">{svg}")?;
        writeln!(out, "<h2>GC roots by what they alone keep</h2>")?;
        writeln!(out, "<table><tr><th class=\"num\">alone frees</th><th class=\"num\">paths</th><th class=\"num\">closure</th><th>root</th><th>link</th></tr>")?;
        for root in r.roots.iter().take(DRAWN) {
            writeln!(
                out,
                "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td title=\"{}\">{}</td><td>{}</td></tr>",
                esc(&format_size(root.alone)),
                esc(&thousands(root.alone_paths)),
                esc(&format_size(root.closure_size)),
                esc(&root.root),
                esc(&short_path(&root.root)),
                esc(&root.link)
            )?;
        }
        writeln!(out, "</table>")?;
        if let Some(line) = rest(r) {
            writeln!(out, "<p class=\"sub\">{}</p>", esc(&line))?;
        }
        super::warnings(out, &r.warnings)?;
        writeln!(
            out,
            "</div><aside id=\"details\" hidden><h2>Selected</h2><pre></pre></aside></main>"
        )
    })
}
