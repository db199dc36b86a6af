//! The `split` report as Markdown: outputs table, closure line, per-architecture table,
//! actions list, and the Nix code in a fenced block.

use std::io::{self, Write};

use super::{md_cell, md_code, md_fence};
use crate::render::nix::{split_attributes, split_code};
use crate::render::words::split::{
    action, arch_output, assumption, expression_label, heading, no_split, remedy_groups,
};
use crate::report::SplitReport;
use crate::store::format_size;

pub(super) fn split(r: &SplitReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "### {}\n", md_cell(&heading(r)))?;
    if let Some(n) = &r.no_split {
        writeln!(out, "{}", no_split(n))?;
    } else {
        writeln!(out, "| output | size | files | references |")?;
        writeln!(out, "|---|---:|---:|---|")?;
        for o in &r.outputs {
            let refs: Vec<String> = o
                .references
                .iter()
                .map(|x| match &x.output {
                    Some(name) => md_cell(&format!("(self) {name}")),
                    None => md_code(&crate::render::short_path(&x.path)),
                })
                .collect();
            writeln!(
                out,
                "| {} | {} | {} | {} |",
                md_cell(&o.name),
                format_size(o.size),
                o.files,
                refs.join(", ")
            )?;
        }
        if let Some(f) = &r.for_root {
            writeln!(
                out,
                "\nClosure of {}: {} → {} (predicted).",
                md_code(&f.root),
                format_size(f.closure_size_before),
                format_size(f.closure_size_after)
            )?;
        }
        if !r.archs.is_empty() {
            writeln!(
                out,
                "\n| arch | files | bytes | referenced | output | kept |"
            )?;
            writeln!(out, "|---|---:|---:|---:|---|---|")?;
            for a in &r.archs {
                writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} |",
                    md_cell(&a.arch),
                    a.files,
                    format_size(a.bytes),
                    format_size(a.referenced_bytes),
                    md_cell(&arch_output(a)),
                    if a.kept { "yes" } else { "no" }
                )?;
            }
        }
        writeln!(out, "\nActions:\n")?;
        for a in &r.actions {
            writeln!(out, "- {}", md_cell(&action(a)))?;
        }
        for a in &r.assumptions {
            writeln!(out, "- assumption: {}", md_cell(&assumption(a)))?;
        }
        for (heading, options) in remedy_groups(&r.remedies) {
            writeln!(out, "- {}", md_cell(&heading))?;
            for o in options {
                writeln!(out, "  - {}", md_cell(&o))?;
            }
        }
        let nix = split_code(r);
        let lines: Vec<&str> = nix.lines().collect();
        let fence = md_fence(&lines);
        writeln!(out, "\n{fence}nix\n{nix}{fence}")?;
        if let Some(label) = expression_label(r) {
            let (lang, code) = match &r.expression {
                Some(e) => ("diff", e.diff.clone()),
                None => ("nix", split_attributes(r)),
            };
            let lines: Vec<&str> = code.lines().collect();
            let fence = md_fence(&lines);
            writeln!(out, "\n{}\n\n{fence}{lang}\n{code}{fence}", md_cell(&label))?;
        }
    }
    for w in &r.warnings {
        writeln!(out, "\n> warning: {}", md_cell(&w.to_string()))?;
    }
    Ok(())
}
