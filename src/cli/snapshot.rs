//! `nixcut snapshot ROOT -o FILE`: load, build the snapshot, write it atomically.

use std::io::{self, Write};

use anyhow::{Context, Result};

use super::args::{GlobalArgs, SnapshotArgs};
use super::{load_input, print_warnings, Outcome};
use nixcut::analysis::{self, SnapshotOptions};
use nixcut::render::short_path;
use nixcut::store::format_size;

pub(super) fn run(g: &GlobalArgs, a: &SnapshotArgs) -> Result<Outcome> {
    let closure = load_input(g, &a.input)?;
    let snap = analysis::snapshot(
        &closure,
        &SnapshotOptions {
            root: g.root.clone(),
        },
    )
    .with_context(|| format!("cannot snapshot `{}`", a.input))?;
    print_warnings(&closure.warnings, g.quiet);
    if a.output == "-" {
        let stdout = io::stdout();
        let mut out = io::BufWriter::new(stdout.lock());
        analysis::write_snapshot_to(&snap, &mut out)
            .and_then(|()| out.flush())
            .context("cannot write the snapshot to standard output")?;
    } else {
        analysis::write_snapshot(&snap, a.output.as_ref())?;
        if !g.quiet {
            let _ = writeln!(
                io::stderr(),
                "nixcut: wrote {}: {} ({} paths, closure {})",
                a.output,
                short_path(&snap.root),
                snap.path_count,
                format_size(snap.closure_size)
            );
        }
    }
    Ok(Outcome::Success)
}
