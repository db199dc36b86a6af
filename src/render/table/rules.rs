//! The `rules` report as tables: class rules, evidence-kind file rules, ELF hit rules,
//! data directories, verdict rules and split rules.

use std::io::{self, Write};

use super::{fit, new_table, whole};
use crate::render::words::rules::{
    class_heading, DATA_DIR_HEADING, ELF_HEADING, KIND_HEADING, SPLIT_HEADING, VERDICT_HEADING,
};
use crate::render::Style;
use crate::report::{KindRow, RulesReport};

fn kind_table(
    style: &Style,
    out: &mut dyn Write,
    heading: &str,
    rows: &[KindRow],
) -> io::Result<()> {
    let mut t = new_table(style);
    t.set_header(vec!["rule", "matches", "kind"]);
    for k in rows {
        t.add_row(vec![k.name.as_str(), k.matches.as_str(), k.kind.as_str()]);
    }
    writeln!(out, "{heading}\n{}\n", whole(&fit(&t, style, &[]).0))
}

pub(super) fn rules(r: &RulesReport, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    let mut t = new_table(style);
    t.set_header(vec!["rule", "source", "matches", "class"]);
    for c in &r.class_rules {
        t.add_row(vec![
            c.name.as_str(),
            c.source.as_str(),
            &c.matches,
            &c.class,
        ]);
    }
    writeln!(
        out,
        "{}\n{}\n",
        class_heading(r),
        whole(&fit(&t, style, &[1]).0)
    )?;
    kind_table(style, out, KIND_HEADING, &r.kind_rules)?;
    kind_table(style, out, ELF_HEADING, &r.elf_rules)?;
    let mut t = new_table(style);
    t.set_header(vec!["rule", "source", "library", "base", "opens"]);
    for d in &r.data_dir_rules {
        t.add_row(vec![
            d.name.clone(),
            d.source.as_str().to_string(),
            d.library.clone(),
            d.base.clone(),
            d.dirs.join(" "),
        ]);
    }
    writeln!(
        out,
        "{DATA_DIR_HEADING}\n{}\n",
        whole(&fit(&t, style, &[2, 3]).0)
    )?;
    let mut t = new_table(style);
    t.set_header(vec!["rule", "when", "verdict", "why"]);
    for v in &r.verdict_rules {
        t.add_row(vec![&v.name, &v.when, &v.verdict, &v.why]);
    }
    writeln!(
        out,
        "{VERDICT_HEADING}\n{}\n",
        whole(&fit(&t, style, &[]).0)
    )?;
    let mut t = new_table(style);
    t.set_header(vec!["rule", "when", "action", "why"]);
    for v in &r.split_rules {
        t.add_row(vec![&v.name, &v.when, &v.action, &v.why]);
    }
    writeln!(out, "{SPLIT_HEADING}\n{}", whole(&fit(&t, style, &[]).0))
}
