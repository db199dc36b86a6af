//! Command-line interface: clap types, their one conversion into plain options
//! ([`Config`](config::Config), with the environment), and the dispatch to analyses and
//! renderers. Only this module and `main.rs` know about clap and anyhow. One file per
//! command (`why`, `refs`, `split`, `gpu`, `snapshot`, `diff`, `check`, `rules`);
//! `output` writes to the terminal, `escape` makes input safe to print there,
//! `progress` draws the bars, `guard` is the one way files are written and refuses
//! the store.

mod args;
mod check;
mod config;
mod diff;
mod escape;
mod explain;
mod formats;
mod gpu;
mod guard;
mod http;
mod inputs;
mod output;
mod progress;
mod refs;
mod rules;
mod snapshot;
mod split;
mod suggest;
mod targets;
mod why;

pub use args::Cli;
pub use escape::printable;
pub use output::is_broken_pipe;
pub use suggest::better_suggestion;

use anyhow::{Context, Result};

use args::Command;
use config::Config;
use nixcut::load::load;
use nixcut::source::{self, Files};
use nixcut::store::Closure;

/// How the process should end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything worked (exit 0).
    Success,
    /// A check ran and failed (exit 1).
    CheckFailed,
}

/// Run a parsed command line: its options and environment are read once, into a
/// [`Config`] every command takes.
pub fn run(cli: Cli) -> Result<Outcome> {
    let cfg = Config::new(&cli.global, &cli.command);
    output::print_warnings(&cfg.warnings, cfg.quiet);
    formats::check(&cli.command, cli.global.format)?;
    // Read and checked before anything else, so a bad rules file fails every command.
    let class_rules = rules::class_rules(&cfg)?;
    match &cli.command {
        Command::Rules(_) => rules::run(&cfg, &class_rules),
        Command::Why(args) => why::run(&cfg, args, class_rules),
        Command::Snapshot(args) => snapshot::run(&cfg, args),
        Command::Diff(args) => diff::run(&cfg, args),
        Command::Check(args) => check::run(&cfg, args),
        Command::Refs(args) => refs::run(&cfg, args, class_rules),
        Command::Split(args) => split::run(&cfg, args),
        Command::Gpu(args) => gpu::run(&cfg, args, class_rules),
    }
}

/// Standard input can be read once: refuse `-` given for two inputs of one command
/// (the second would read nothing and be called an empty file).
pub(super) fn stdin_at_most_once<'a>(inputs: impl IntoIterator<Item = &'a str>) -> Result<()> {
    if inputs.into_iter().filter(|i| *i == "-").count() > 1 {
        return Err(anyhow::anyhow!(
            "`-` (standard input) is given for more than one input, but it can be read only \
             once; save one of them to a file"
        ));
    }
    Ok(())
}

/// Load one input with the run's options (over HTTP when it is read from a cache),
/// naming it in the error.
pub(super) fn load_input(cfg: &Config, input: &str) -> Result<Closure> {
    let mut opts = cfg.load.clone();
    let bar = http::wire(cfg, input, &mut opts);
    let closure = load(input, &opts);
    if let Some(b) = bar {
        b.clear();
    }
    let closure = closure.map_err(|e| match inputs::missing_input_hint(input) {
        Some(hint) => anyhow::anyhow!("cannot load `{input}`: {e}\n  hint: {hint}"),
        None => anyhow::Error::new(e).context(format!("cannot load `{input}`")),
    })?;
    Ok(closure)
}

/// `--root` as the lookup in `c` takes it (a `./result-x` symlink is the store path it
/// names; see `inputs::in_closure`).
pub(super) fn root_query(cfg: &Config, c: &Closure) -> Result<Option<String>> {
    cfg.root
        .as_deref()
        .map(|r| inputs::in_closure(cfg, c, r).context("--root"))
        .transpose()
}

/// Where the files of a loaded closure come from.
pub(super) fn files_for(cfg: &Config, closure: &Closure) -> Files {
    source::locate_with(closure, cfg.store_root.as_deref(), cfg.http.as_ref())
}
