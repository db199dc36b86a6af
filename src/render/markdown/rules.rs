//! The `rules` report in Markdown: one table per rule kind, names and classes as code
//! spans.

use std::io::{self, Write};

use super::{md_cell, md_code};
use crate::render::words::rules::{
    class_heading, DATA_DIR_HEADING, ELF_HEADING, KIND_HEADING, SPLIT_HEADING, VERDICT_HEADING,
};
use crate::report::{KindRow, RulesReport};

fn kind_table(out: &mut dyn Write, heading: &str, rows: &[KindRow]) -> io::Result<()> {
    writeln!(out, "\n### {}\n", md_cell(heading))?;
    writeln!(out, "| rule | matches | kind |\n|---|---|---|")?;
    for k in rows {
        writeln!(
            out,
            "| {} | {} | {} |",
            md_code(&k.name),
            md_cell(&k.matches),
            md_code(k.kind.as_str())
        )?;
    }
    Ok(())
}

pub(super) fn rules(r: &RulesReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "### {}\n", md_cell(&class_heading(r)))?;
    writeln!(
        out,
        "| rule | source | matches | class |\n|---|---|---|---|"
    )?;
    for c in &r.class_rules {
        writeln!(
            out,
            "| {} | {} | {} | {} |",
            md_code(&c.name),
            c.source.as_str(),
            md_cell(&c.matches),
            md_code(&c.class)
        )?;
    }
    kind_table(out, KIND_HEADING, &r.kind_rules)?;
    kind_table(out, ELF_HEADING, &r.elf_rules)?;
    writeln!(out, "\n### {}\n", md_cell(DATA_DIR_HEADING))?;
    writeln!(
        out,
        "| rule | source | library | base | opens |\n|---|---|---|---|---|"
    )?;
    for d in &r.data_dir_rules {
        writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            md_code(&d.name),
            d.source.as_str(),
            md_code(&d.library),
            d.base,
            md_cell(&d.dirs.join(" "))
        )?;
    }
    writeln!(out, "\n### {}\n", md_cell(VERDICT_HEADING))?;
    writeln!(out, "| rule | when | verdict | why |\n|---|---|---|---|")?;
    for v in &r.verdict_rules {
        writeln!(
            out,
            "| {} | {} | {} | {} |",
            md_code(&v.name),
            md_cell(&v.when),
            md_code(&v.verdict),
            md_cell(&v.why)
        )?;
    }
    writeln!(out, "\n### {}\n", md_cell(SPLIT_HEADING))?;
    writeln!(out, "| rule | when | action | why |\n|---|---|---|---|")?;
    for v in &r.split_rules {
        writeln!(
            out,
            "| {} | {} | {} | {} |",
            md_code(&v.name),
            md_cell(&v.when),
            md_cell(&v.action),
            md_cell(&v.why)
        )?;
    }
    Ok(())
}
