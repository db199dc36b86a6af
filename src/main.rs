//! The `nixcut` binary: parse the command line, run it, map the result to an exit code.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;
mod cli;

use cli::{run, Cli, Outcome};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::CheckFailed) => ExitCode::from(1),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(io::stderr(), "nixcut: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// A closed stdout (`nixcut … | head`) is not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}
