//! The `gpu` report as tables: the totals line, one row per architecture (bytes in
//! per-architecture files and in fat binaries), the store paths with the most GPU
//! bytes, then what `--gpu-targets` leaves and the remedies.

use std::io::{self, Write};

use comfy_table::{Cell, CellAlignment};

use super::{bold, new_table, write_fitted, WHOLE};
use crate::render::words::gpu::{after, heading, path_archs, percent, targets, totals};
use crate::render::{short_path, Style};
use crate::report::GpuReport;
use crate::store::format_size;

/// Paths shown in the table (JSON has them all).
const TOP_PATHS: usize = 15;

fn right(s: impl ToString) -> Cell {
    Cell::new(s.to_string()).set_alignment(CellAlignment::Right)
}

pub(super) fn gpu(r: &GpuReport, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", bold(&heading(r), style))?;
    writeln!(out, "{}", totals(r))?;
    if !r.archs.is_empty() {
        let mut t = new_table(style);
        t.set_header(vec![
            "arch",
            "bytes",
            "of closure",
            "in files",
            "in fat binaries",
            "files",
            "paths",
            "targets",
        ]);
        for a in &r.archs {
            let mark = if r.dropped.contains(&a.arch) {
                " (dropped)"
            } else {
                ""
            };
            t.add_row(vec![
                Cell::new(format!("{}{mark}", a.arch)),
                right(format_size(a.bytes)),
                right(percent(a.bytes, r.closure_size)),
                right(format_size(a.file_bytes)),
                right(format_size(a.elf_bytes)),
                right(a.files),
                right(a.paths.len()),
                Cell::new(targets(&a.targets, 3)),
            ]);
        }
        write_fitted(out, &t, style, &[7, 4, 3, 6, 5, 2])?;
    }
    if !r.paths.is_empty() {
        let mut t = new_table(style);
        t.set_header(vec![
            "path",
            "size",
            "GPU",
            "generic",
            "largest architectures",
        ]);
        for p in r.paths.iter().take(TOP_PATHS) {
            t.add_row(vec![
                Cell::new(short_path(&p.path)),
                right(format_size(p.size)),
                right(format_size(p.gpu_bytes)),
                right(format_size(p.generic_bytes)),
                Cell::new(path_archs(p, 3)),
            ]);
        }
        write_fitted(out, &t, style, &[3, 1, 4])?;
        if r.paths.len() > TOP_PATHS {
            writeln!(
                out,
                "… and {} more paths with GPU code (--format json lists them all)",
                r.paths.len() - TOP_PATHS
            )?;
        }
    }
    if let Some(line) = after(r) {
        writeln!(out, "{line}")?;
        for p in &r.removed {
            writeln!(out, "  leaves the closure: {}", short_path(p))?;
        }
        for c in &r.changed {
            writeln!(
                out,
                "  shrinks: {} {} → {}{}",
                short_path(&c.path),
                format_size(c.size_before),
                format_size(c.size_after),
                if c.estimated { " (estimated)" } else { "" }
            )?;
        }
        for m in &r.remedies {
            writeln!(
                out,
                "remedy ({}, saves {}):\n{WHOLE}  {}",
                m.option.as_str(),
                format_size(m.saves),
                m.rebuild
            )?;
        }
    }
    Ok(())
}
