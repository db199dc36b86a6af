//! The `nixcut` binary: parse the command line, run it, map the result to an exit code.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;
mod cli;

use cli::{is_broken_pipe, printable, run, Cli, Outcome};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => cli::better_suggestion(e).exit(),
    };
    match run(cli) {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::CheckFailed) => ExitCode::from(1),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(io::stderr(), "nixcut: error: {}", printable(&message(&e)));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes on one line, each cause once: library errors often quote
/// their source already, and anyhow's chain would repeat it.
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}
