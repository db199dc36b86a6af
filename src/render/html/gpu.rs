//! The `gpu` report as HTML: one horizontal bar per architecture on one scale, split
//! into bytes in per-architecture files and bytes inside fat binaries (kept
//! architectures in colour, dropped ones grey with `--gpu-targets`), then generic and
//! host bytes on the same scale, and the paths with the most GPU bytes.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::escape::{esc, esc_lines};
use super::page;
use crate::render::text::short_path;
use crate::render::words::gpu::{after, heading, path_archs, percent, totals};
use crate::report::GpuReport;
use crate::store::format_size;

const W: f64 = 640.0;
const LABEL: f64 = 120.0;
const ROW: f64 = 22.0;
const FILES: &str = "#3b7dd8";
const FAT: &str = "#d9a23c";
const DROPPED: &str = "#c9ced6";
const OTHER: &str = "#8c95a3";

#[allow(clippy::too_many_arguments)]
fn bar(
    svg: &mut String,
    y: f64,
    x: f64,
    w: f64,
    fill: &str,
    kind: &str,
    arch: &str,
    tip: &[String],
) {
    if w <= 0.0 {
        return;
    }
    let _ = write!(
        svg,
        "<g data-arch=\"{}\" data-kind=\"{kind}\"><title>{}</title><rect x=\"{x:.2}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"{:.1}\" fill=\"{fill}\"/></g>",
        esc(arch),
        esc_lines(tip),
        ROW - 4.0
    );
}

/// `nixcut gpu ROOT --format html`.
pub(super) fn gpu(r: &GpuReport, out: &mut dyn Write) -> io::Result<()> {
    let head = heading(r);
    let max = r
        .archs
        .iter()
        .map(|a| a.bytes)
        .chain([r.generic_bytes, r.host_bytes])
        .max()
        .unwrap_or(0)
        .max(1);
    let scale = |b: u64| b as f64 / max as f64 * W;
    let rows = r.archs.len() + 2;
    let height = rows as f64 * ROW + 10.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {:.0} {height:.0}\" font-family=\"sans-serif\" font-size=\"12\">",
        LABEL + W + 110.0,
        LABEL + W + 110.0
    );
    let mut y = 4.0;
    let label = |svg: &mut String, y: f64, text: &str, bytes: u64, x_end: f64| {
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            LABEL - 6.0,
            y + 13.0,
            esc(text),
            LABEL + x_end + 6.0,
            y + 13.0,
            esc(&format!("{} ({})", format_size(bytes), percent(bytes, r.closure_size)))
        );
    };
    for a in &r.archs {
        let dropped = r.dropped.contains(&a.arch);
        let (f_fill, e_fill) = if dropped {
            (DROPPED, DROPPED)
        } else {
            (FILES, FAT)
        };
        let tip = vec![
            format!("{}: {}", a.arch, format_size(a.bytes)),
            format!("in per-architecture files: {}", format_size(a.file_bytes)),
            format!("in fat binaries: {}", format_size(a.elf_bytes)),
            format!("{} files, {} store paths", a.files, a.paths.len()),
            a.targets.join(", "),
        ];
        let wf = scale(a.file_bytes);
        let we = scale(a.elf_bytes);
        bar(&mut svg, y, LABEL, wf, f_fill, "files", &a.arch, &tip);
        bar(&mut svg, y, LABEL + wf, we, e_fill, "fat", &a.arch, &tip);
        label(&mut svg, y, &a.arch, a.bytes, wf + we);
        y += ROW;
    }
    for (name, bytes) in [("generic", r.generic_bytes), ("host", r.host_bytes)] {
        let w = scale(bytes);
        bar(
            &mut svg,
            y,
            LABEL,
            w,
            OTHER,
            name,
            name,
            &[format!("{name}: {}", format_size(bytes))],
        );
        label(&mut svg, y, name, bytes, w);
        y += ROW;
    }
    svg.push_str("</svg>");
    page(out, &format!("nixcut gpu: {head}"), |out| {
        writeln!(out, "<header><h1>{}</h1>", esc(&head))?;
        writeln!(out, "<p class=\"sub\">{}</p>", esc(&totals(r)))?;
        if let Some(line) = after(r) {
            writeln!(out, "<p class=\"sub\">{}</p>", esc(&line))?;
        }
        writeln!(
            out,
            "<p class=\"sub\"><span style=\"color:{FILES}\">■</span> per-architecture files <span style=\"color:{FAT}\">■</span> inside fat binaries</p></header>"
        )?;
        // One column: the bars, then the paths, the remedies and the warnings.
        writeln!(out, "<main><div class=\"map\">{svg}")?;
        if !r.paths.is_empty() {
            writeln!(out, "<h2>Store paths with the most GPU bytes</h2>")?;
            writeln!(out, "<table><tr><th>path</th><th class=\"num\">size</th><th class=\"num\">GPU</th><th>largest architectures</th></tr>")?;
            for p in r.paths.iter().take(50) {
                writeln!(
                    out,
                    "<tr><td title=\"{}\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                    esc(&p.path),
                    esc(&short_path(&p.path)),
                    esc(&format_size(p.size)),
                    esc(&format_size(p.gpu_bytes)),
                    esc(&path_archs(p, 4))
                )?;
            }
            writeln!(out, "</table>")?;
        }
        if !r.remedies.is_empty() {
            writeln!(out, "<h2>Remedies</h2>")?;
        }
        for m in &r.remedies {
            writeln!(
                out,
                "<p>{} (saves {})</p><pre class=\"tree\">{}</pre>",
                m.option.as_str(),
                esc(&format_size(m.saves)),
                esc(&m.rebuild.to_string())
            )?;
        }
        super::warnings(out, &r.warnings)?;
        writeln!(out, "</div></main>")
    })
}
