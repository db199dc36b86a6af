//! Which `--format`s each command has, checked before any work: `diff --format dot`
//! used to load both closures and compute the diff before saying it has no picture.
//! The lists are those of the renderers (`nixcut::render`): html draws `why`, `diff`,
//! `split` and `gpu`; dot only `why`.

use anyhow::{bail, Result};

use super::args::{Command, FormatArg};

const TEXT: &[FormatArg] = &[FormatArg::Table, FormatArg::Json, FormatArg::Markdown];
const WITH_HTML: &[FormatArg] = &[
    FormatArg::Table,
    FormatArg::Json,
    FormatArg::Markdown,
    FormatArg::Html,
];
const ALL: &[FormatArg] = &[
    FormatArg::Table,
    FormatArg::Json,
    FormatArg::Markdown,
    FormatArg::Html,
    FormatArg::Dot,
];

/// The command's name and the formats it can write.
pub(super) fn formats_of(command: &Command) -> (&'static str, &'static [FormatArg]) {
    match command {
        Command::Why(_) => ("why", ALL),
        Command::Diff(_) => ("diff", WITH_HTML),
        Command::Split(_) => ("split", WITH_HTML),
        Command::Gpu(_) => ("gpu", WITH_HTML),
        Command::Store(_) => ("store", WITH_HTML),
        Command::Check(_) => ("check", TEXT),
        Command::Refs(_) => ("refs", TEXT),
        Command::Rules(_) => ("rules", TEXT),
        // A terminal UI: --format does not apply.
        Command::Browse(_) => ("browse", &[FormatArg::Table]),
        // The snapshot file is always JSON; --format does not apply to it.
        Command::Snapshot(_) => ("snapshot", ALL),
    }
}

pub(super) fn name(f: FormatArg) -> &'static str {
    match f {
        FormatArg::Table => "table",
        FormatArg::Json => "json",
        FormatArg::Markdown => "markdown",
        FormatArg::Html => "html",
        FormatArg::Dot => "dot",
    }
}

/// An error naming the formats the command has, when `format` is not one of them.
pub(super) fn check(command: &Command, format: FormatArg) -> Result<()> {
    let (cmd, ok) = formats_of(command);
    if ok.contains(&format) {
        return Ok(());
    }
    let names: Vec<&str> = ok.iter().map(|f| name(*f)).collect();
    bail!(
        "`nixcut {cmd}` has no `--format {}`; it writes {}",
        name(format),
        names.join(", ")
    )
}
