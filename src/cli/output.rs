//! What reaches the terminal: warnings on stderr (escaped, at most
//! [`MAX_WARNINGS`]), the rendered report on stdout (a closed pipe is no failure), and
//! the end of the run.

use std::io::{self, Write};

use anyhow::{Context, Result};

use nixcut::render::{render, Format, Report, Style};

pub use super::escape::printable;

use super::config::Config;
use super::progress::Progress;

/// Print warnings on stderr, escaped, at most [`MAX_WARNINGS`] of them (none when
/// `quiet`).
pub(super) fn print_warnings<W: std::fmt::Display>(warnings: &[W], quiet: bool) {
    if quiet {
        return;
    }
    let mut err = io::stderr().lock();
    for w in warnings.iter().take(MAX_WARNINGS) {
        let _ = writeln!(err, "warning: {}", printable(&w.to_string()));
    }
    // Thousands of lines (a path whose 5,000 references no file shows) would bury the
    // report: the rest are counted, and the JSON report holds every one.
    if let Some(rest) = warnings.len().checked_sub(MAX_WARNINGS).filter(|&n| n > 0) {
        let _ = writeln!(
            err,
            "warning: … and {rest} more warning(s) ({} in all; `--format json` lists \
             every one)",
            warnings.len()
        );
    }
}

/// How many warnings are printed on standard error before the rest are counted.
const MAX_WARNINGS: usize = 20;

/// Render the report on stdout; a closed stdout is reported as a broken pipe.
pub(super) fn emit<'a>(report: impl Into<Report<'a>>, format: Format, style: &Style) -> Result<()> {
    let stdout = io::stdout();
    // Large reports: fewer, bigger writes.
    let mut out = io::BufWriter::with_capacity(1 << 20, PipeWatch::new(stdout.lock()));
    let res = render(report, format, style, &mut out).and_then(|()| out.flush());
    match res {
        // A renderer may wrap the write error (serde_json does) and lose its kind; the
        // watch saw it, so a closed stdout is reported as what it is.
        Err(_) if out.get_ref().broken => Err(io::Error::from(io::ErrorKind::BrokenPipe)),
        other => other,
    }
    .context("cannot write the report to standard output")
}

/// A writer that remembers whether a write failed because the reader went away.
struct PipeWatch<W> {
    inner: W,
    broken: bool,
}

impl<W> PipeWatch<W> {
    fn new(inner: W) -> Self {
        PipeWatch {
            inner,
            broken: false,
        }
    }

    fn note<T>(&mut self, r: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &r {
            self.broken |= e.kind() == io::ErrorKind::BrokenPipe;
        }
        r
    }
}

impl<W: Write> Write for PipeWatch<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let r = self.inner.write(buf);
        self.note(r)
    }

    fn flush(&mut self) -> io::Result<()> {
        let r = self.inner.flush();
        self.note(r)
    }
}

/// Whether an error is a closed standard output (`nixcut … | head`), which is not a
/// failure of the command.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Clear the progress bar, print warnings on stderr (Markdown carries them itself) and
/// write the report.
pub(super) fn show<'a>(
    cfg: &Config,
    bar: Option<Progress>,
    warnings: &[impl std::fmt::Display],
    report: impl Into<Report<'a>>,
    format: Format,
    style: &Style,
) -> Result<()> {
    if let Some(b) = bar {
        b.finish();
    }
    if format != Format::Markdown {
        print_warnings(warnings, cfg.quiet);
    }
    emit(report, format, style)?;
    cfg.timings.step("output");
    Ok(())
}

/// Drop a large value without freeing it: the process is about to exit and the OS takes
/// the memory back at once, while freeing a 100,000-path closure piece by piece takes a
/// tenth of a second.
pub(super) fn discard<T>(value: T) {
    std::mem::forget(value);
}
