//! Command-line interface: clap types, their one conversion into plain options
//! ([`Config`](config::Config), with the environment), and the dispatch to analyses and
//! renderers. Only this module and `main.rs` know about clap and anyhow. One file per
//! command (`why`, `refs`, `split`, `gpu`, `snapshot`, `diff`, `check`, `rules`,
//! `browse`);
//! `output` writes to the terminal, `escape` makes input safe to print there,
//! `progress` draws the bars, `guard` is the one way files are written and refuses
//! the store.

mod args;
mod browse;
mod check;
mod comment;
mod common;
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
mod store;
mod suggest;
mod targets;
mod why;

pub use args::Cli;
pub use common::Outcome;
use common::{files_for, load_input, root_query, stdin_at_most_once};
pub use escape::printable;
pub use output::is_broken_pipe;
pub use suggest::better_suggestion;

use anyhow::Result;

use args::Command;
use config::Config;

/// Run a parsed command line: its options and environment are read once, into a
/// [`Config`] every command takes.
pub fn run(cli: Cli) -> Result<Outcome> {
    let cfg = Config::new(&cli.global, &cli.command);
    output::print_warnings(&cfg.warnings, cfg.quiet);
    formats::check(&cli.command, cli.global.format)?;
    if cfg.roots.len() > 1 && !matches!(cli.command, Command::Store(_)) {
        anyhow::bail!(
            "--root is given {} times; this command takes one root (only `nixcut store` takes several)",
            cfg.roots.len()
        );
    }
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
        Command::Browse(args) => browse::run(&cfg, args, class_rules),
        Command::Store(args) => store::run(&cfg, args),
    }
}
