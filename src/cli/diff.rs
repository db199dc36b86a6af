//! `nixcut diff OLD NEW`.

use anyhow::{anyhow, Context, Result};

use super::args::{DiffArgs, GlobalArgs};
use super::{discard, emit, load_input, print_warnings, printable, stdin_at_most_once, Outcome};
use nixcut::analysis::{self, DiffOptions};
use nixcut::render::{Format, Style};
use nixcut::store::Closure;

/// The diff reports size changes as signed 64-bit deltas; a closure whose NAR sizes add
/// up past 2^63 - 1 bytes (8 EiB: no real one does, so a size is wrong) could overflow
/// their sums. Refused here, naming the input, before the analysis runs.
fn within_signed_sizes(c: &Closure) -> Result<()> {
    match c.total_nar_size() {
        Some(total) if i64::try_from(total).is_ok() => Ok(()),
        _ => Err(anyhow!(
            "cannot diff `{}`: its NAR sizes add up to more than 2^63 - 1 bytes (8 EiB), \
             beyond the signed sizes a diff reports; a size is wrong",
            printable(&c.origin)
        )),
    }
}

pub(super) fn run(g: &GlobalArgs, a: &DiffArgs, format: Format, style: &Style) -> Result<Outcome> {
    stdin_at_most_once([a.old.as_str(), a.new.as_str()])?;
    let old = load_input(g, &a.old)?;
    let new = load_input(g, &a.new)?;
    within_signed_sizes(&old)?;
    within_signed_sizes(&new)?;
    let opts = DiffOptions {
        root: super::root_query(g, &old)?,
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
    discard(report);
    discard(old);
    discard(new);
    Ok(Outcome::Success)
}
