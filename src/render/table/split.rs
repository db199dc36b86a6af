//! The `split` report as tables: the outputs with sizes and references, the consumer's
//! closure before and after, the per-architecture table, the actions, then the Nix code.

use std::io::{self, Write};

use comfy_table::{Cell, CellAlignment};

use super::{bold, new_table, write_fitted, WHOLE};
use crate::render::nix::{split_attributes, split_code};
use crate::render::words::split::{
    action, arch_output, assumption, expression_label, heading, no_split, remedy_groups,
};
use crate::render::Style;
use crate::report::SplitReport;
use crate::store::format_size;

pub(super) fn split(r: &SplitReport, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", bold(&heading(r), style))?;
    if let Some(n) = &r.no_split {
        writeln!(out, "{}", no_split(n))?;
        return warnings(r, out);
    }
    let mut t = new_table(style);
    t.set_header(vec!["output", "size", "files", "references"]);
    for o in &r.outputs {
        let refs: Vec<String> = o
            .references
            .iter()
            .map(|x| match &x.output {
                Some(name) => format!("(self) {name}"),
                None => crate::render::short_path(&x.path).to_string(),
            })
            .collect();
        t.add_row(vec![
            Cell::new(&o.name),
            Cell::new(format_size(o.size)).set_alignment(CellAlignment::Right),
            Cell::new(o.files).set_alignment(CellAlignment::Right),
            Cell::new(refs.join("\n")),
        ]);
    }
    write_fitted(out, &t, style, &[2])?;
    if let Some(f) = &r.for_root {
        writeln!(
            out,
            "closure of {}: {} → {} (predicted; {} → {}; needs {})",
            f.root,
            format_size(f.closure_size_before),
            format_size(f.closure_size_after),
            crate::render::text::thousands(f.path_count_before),
            crate::render::text::count(f.path_count_after, "path", "paths"),
            f.outputs_needed.join(", ")
        )?;
    }
    if !r.archs.is_empty() {
        let mut t = new_table(style);
        t.set_header(vec![
            "arch",
            "files",
            "bytes",
            "referenced",
            "output",
            "kept",
        ]);
        for a in &r.archs {
            t.add_row(vec![
                Cell::new(&a.arch),
                Cell::new(a.files).set_alignment(CellAlignment::Right),
                Cell::new(format_size(a.bytes)).set_alignment(CellAlignment::Right),
                Cell::new(format_size(a.referenced_bytes)).set_alignment(CellAlignment::Right),
                Cell::new(arch_output(a)),
                Cell::new(if a.kept { "yes" } else { "no" }),
            ]);
        }
        write_fitted(out, &t, style, &[3, 2])?;
    }
    writeln!(out, "actions:")?;
    for a in &r.actions {
        writeln!(out, "  {}", action(a))?;
    }
    for a in &r.assumptions {
        writeln!(out, "assumption: {}", assumption(a))?;
    }
    for (heading, options) in remedy_groups(&r.remedies) {
        writeln!(out, "{heading}")?;
        for o in options {
            writeln!(out, "{WHOLE}  {o}")?;
        }
    }
    writeln!(out)?;
    // The Nix code is meant to be copied: never wrapped.
    for line in split_code(r).lines() {
        writeln!(out, "{WHOLE}{line}")?;
    }
    if let Some(label) = expression_label(r) {
        writeln!(out, "\n{label}")?;
        let code = r
            .expression
            .as_ref()
            .map_or_else(|| split_attributes(r), |e| e.diff.clone());
        for line in code.lines() {
            writeln!(out, "{WHOLE}{line}")?;
        }
    }
    warnings(r, out)
}

fn warnings(r: &SplitReport, out: &mut dyn Write) -> io::Result<()> {
    for w in &r.warnings {
        writeln!(out, "warning: {w}")?;
    }
    Ok(())
}
