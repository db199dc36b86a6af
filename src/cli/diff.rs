//! `nixcut diff OLD NEW`.

use anyhow::{Context, Result};

use super::args::{DiffArgs, GlobalArgs};
use super::{emit, load_input, print_warnings, Outcome};
use nixcut::analysis::{self, DiffOptions};
use nixcut::render::{Format, Style};

pub(super) fn run(g: &GlobalArgs, a: &DiffArgs, format: Format, style: &Style) -> Result<Outcome> {
    let old = load_input(g, &a.old)?;
    let new = load_input(g, &a.new)?;
    let opts = DiffOptions {
        root: g.root.clone(),
        top: match (a.top, a.all, format) {
            (_, true, _) => None,
            (Some(n), _, _) => Some(n),
            (None, _, Format::Json) => None,
            (None, _, _) => Some(25),
        },
    };
    let report = analysis::diff(&old, &new, &opts)
        .with_context(|| format!("cannot diff `{}` and `{}`", a.old, a.new))?;
    if format != Format::Markdown {
        let warnings: Vec<String> = report.warnings.iter().map(ToString::to_string).collect();
        print_warnings(&warnings, g.quiet);
    }
    emit(&report, format, style)?;
    Ok(Outcome::Success)
}
