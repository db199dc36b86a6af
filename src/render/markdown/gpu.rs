//! The `gpu` report as Markdown: totals, the per-architecture table, the paths with the
//! most GPU bytes, what `--gpu-targets` leaves, the remedies in a Nix block, warnings.

use std::io::{self, Write};

use super::{md_cell, md_code, md_fence};
use crate::render::short_path;
use crate::render::words::gpu::{after, heading, path_archs, percent, targets, totals};
use crate::report::GpuReport;
use crate::store::format_size;

const TOP_PATHS: usize = 25;

pub(super) fn gpu(r: &GpuReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "### {}\n", md_cell(&heading(r)))?;
    writeln!(out, "{}\n", md_cell(&totals(r)))?;
    if !r.archs.is_empty() {
        writeln!(
            out,
            "| arch | bytes | of closure | in files | in fat binaries | files | paths | targets |"
        )?;
        writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---|")?;
        for a in &r.archs {
            let mark = if r.dropped.contains(&a.arch) {
                " (dropped)"
            } else {
                ""
            };
            writeln!(
                out,
                "| {}{mark} | {} | {} | {} | {} | {} | {} | {} |",
                md_cell(&a.arch),
                format_size(a.bytes),
                percent(a.bytes, r.closure_size),
                format_size(a.file_bytes),
                format_size(a.elf_bytes),
                a.files,
                a.paths.len(),
                md_cell(&targets(&a.targets, 3)),
            )?;
        }
        writeln!(out)?;
    }
    if !r.paths.is_empty() {
        writeln!(
            out,
            "| path | size | GPU | generic | largest architectures |"
        )?;
        writeln!(out, "|---|---:|---:|---:|---|")?;
        for p in r.paths.iter().take(TOP_PATHS) {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                md_code(&short_path(&p.path)),
                format_size(p.size),
                format_size(p.gpu_bytes),
                format_size(p.generic_bytes),
                md_cell(&path_archs(p, 3)),
            )?;
        }
        if r.paths.len() > TOP_PATHS {
            writeln!(
                out,
                "\n… and {} more paths with GPU code.",
                r.paths.len() - TOP_PATHS
            )?;
        }
        writeln!(out)?;
    }
    if let Some(line) = after(r) {
        writeln!(out, "{}\n", md_cell(&line))?;
        for p in &r.removed {
            writeln!(out, "- leaves the closure: {}", md_code(&short_path(p)))?;
        }
        for c in &r.changed {
            writeln!(
                out,
                "- shrinks: {} {} → {}{}",
                md_code(&short_path(&c.path)),
                format_size(c.size_before),
                format_size(c.size_after),
                if c.estimated { " (estimated)" } else { "" }
            )?;
        }
        if !r.remedies.is_empty() {
            let code: Vec<String> = r
                .remedies
                .iter()
                .map(|m| {
                    format!(
                        "# {} (saves {})\n{}",
                        m.option.as_str(),
                        format_size(m.saves),
                        m.rebuild
                    )
                })
                .collect();
            let code = code.join("\n");
            let lines: Vec<&str> = code.lines().collect();
            let fence = md_fence(&lines);
            writeln!(out, "\n{fence}nix\n{code}\n{fence}")?;
        }
    }
    for w in &r.warnings {
        writeln!(out, "\n> warning: {}", md_cell(&w.to_string()))?;
    }
    Ok(())
}
