//! Command-line interface: clap types, their conversion into the library's plain
//! options, and the dispatch to analyses and renderers. Only this module and `main.rs`
//! know about clap and anyhow.

mod args;
mod check;
mod diff;
mod snapshot;

pub use args::Cli;

use std::io::{self, IsTerminal, Write};

use anyhow::{Context, Result};

use args::{Command, FormatArg, GlobalArgs, RefsArgs, SortArg, SplitArgs, WhyArgs};
use nixcut::analysis;
use nixcut::evidence::ScanCache;
use nixcut::load::{load, LoadOptions};
use nixcut::render::{render, Format, Report, Style};
use nixcut::source::{self, Files};
use nixcut::store::{Closure, StoreDir};

/// How the process should end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything worked (exit 0).
    Success,
    /// A check ran and failed (exit 1).
    #[allow(dead_code)] // produced by `check` (issue 4)
    CheckFailed,
}

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<Outcome> {
    let g = &cli.global;
    let style = style_for(g);
    let format = match g.format {
        FormatArg::Table => Format::Table,
        FormatArg::Json => Format::Json,
        FormatArg::Markdown => Format::Markdown,
    };
    match &cli.command {
        Command::Why(args) => cmd_why(g, args, format, &style),
        Command::Snapshot(args) => snapshot::run(g, args),
        Command::Diff(args) => diff::run(g, args, format, &style),
        Command::Check(args) => check::run(g, args, format, &style),
        Command::Refs(args) => cmd_refs(g, args, format, &style),
        Command::Split(args) => cmd_split(g, args, format, &style),
    }
}

fn style_for(g: &GlobalArgs) -> Style {
    let tty = io::stdout().is_terminal();
    let color = match g.color.as_str() {
        "always" => true,
        "never" => false,
        _ => tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    // A terminal that reports no usable width (a pseudo-terminal with 0 columns, as
    // the builder of a Nix derivation gets) is treated like a pipe: no wrapping.
    let width = if tty {
        comfy_table::Table::new().width().filter(|&w| w >= 40)
    } else {
        None
    };
    Style {
        width,
        color,
        pretty_json: tty,
    }
}

fn load_options(g: &GlobalArgs) -> LoadOptions {
    LoadOptions {
        store_dir: g.store_dir.as_deref().map(StoreDir::new),
        store_root: g.store_root.clone(),
        ..LoadOptions::default()
    }
}

fn load_input(g: &GlobalArgs, input: &str) -> Result<Closure> {
    let closure =
        load(input, &load_options(g)).with_context(|| format!("cannot load `{input}`"))?;
    Ok(closure)
}

fn print_warnings(warnings: &[String], quiet: bool) {
    if quiet {
        return;
    }
    let mut err = io::stderr().lock();
    for w in warnings {
        let _ = writeln!(err, "warning: {w}");
    }
}

fn emit<'a>(report: impl Into<Report<'a>>, format: Format, style: &Style) -> Result<()> {
    let stdout = io::stdout();
    // Large reports: fewer, bigger writes.
    let mut out = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    render(report, format, style, &mut out)
        .and_then(|()| out.flush())
        .context("cannot write the report to standard output")
}

fn cmd_why(g: &GlobalArgs, a: &WhyArgs, format: Format, style: &Style) -> Result<Outcome> {
    let closure = load_input(g, &a.input)?;
    let evidence = analysis::EvidenceOptions {
        enabled: !a.no_evidence,
        files: if a.no_evidence {
            Files::default()
        } else {
            source::locate(&closure, g.store_root.as_deref())
        },
        cache: scan_cache(a.no_cache),
        max_referrers: a.evidence_referrers,
        ..Default::default()
    };
    let bar = Progress::new(g, 0);
    let tick = |bytes: u64| {
        if let Some(b) = &bar {
            b.tick(bytes);
        }
    };
    match &a.target {
        None => {
            let opts = analysis::WhyOptions {
                root: g.root.clone(),
                top: match (a.top, a.all, format) {
                    (_, true, _) => None,
                    (Some(n), _, _) => Some(n),
                    // Tables default to one screen; JSON has everything.
                    (None, _, Format::Json) => None,
                    (None, _, _) => Some(25),
                },
                sort: match a.sort {
                    SortArg::Added => analysis::SortKey::Added,
                    SortArg::Closure => analysis::SortKey::Closure,
                    SortArg::Nar => analysis::SortKey::Nar,
                },
                evidence,
            };
            let report = analysis::why(&closure, &opts, Some(&tick))?;
            show(g, bar, &report.warnings, &report, format, style)?;
            discard(report);
        }
        Some(target) => {
            let report =
                analysis::why_chains(&closure, g.root.as_deref(), target, &evidence, Some(&tick))?;
            show(g, bar, &report.warnings, &report, format, style)?;
            discard(report);
        }
    }
    discard(closure);
    Ok(Outcome::Success)
}

/// The scan cache: `$XDG_CACHE_HOME/nixcut/scan`, else `$HOME/.cache/nixcut/scan`
/// (`None` with `--no-cache`, or when neither is set). A relative `XDG_CACHE_HOME` is
/// ignored, as the XDG base-directory specification says.
fn scan_cache(no_cache: bool) -> Option<ScanCache> {
    if no_cache {
        return None;
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .filter(|v| v.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(std::path::PathBuf::from)
                .filter(|h| h.is_absolute())
                .map(|h| h.join(".cache"))
        })?;
    Some(ScanCache::at(base.join("nixcut").join("scan")))
}

/// Clear the progress bar, print warnings on stderr (Markdown carries them itself) and
/// write the report.
fn show<'a>(
    g: &GlobalArgs,
    bar: Option<Progress>,
    warnings: &[String],
    report: impl Into<Report<'a>>,
    format: Format,
    style: &Style,
) -> Result<()> {
    if let Some(b) = bar {
        b.finish();
    }
    if format != Format::Markdown {
        print_warnings(warnings, g.quiet);
    }
    emit(report, format, style)
}

/// Drop a large value without freeing it: the process is about to exit and the OS takes
/// the memory back at once, while freeing a 100,000-path closure piece by piece takes a
/// tenth of a second.
fn discard<T>(value: T) {
    std::mem::forget(value);
}

fn cmd_refs(g: &GlobalArgs, a: &RefsArgs, format: Format, style: &Style) -> Result<Outcome> {
    let base = analysis::RefsOptions {
        root: g.root.clone(),
        discover: a.discover,
        max_evidence: a.max_evidence,
        cache: scan_cache(a.no_cache),
        ..Default::default()
    };
    let inputs: Vec<(String, bool)> = match &a.closure {
        Some(root) => vec![(root.clone(), true)],
        None => a.paths.iter().map(|p| (p.clone(), false)).collect(),
    };
    let mut merged: Option<nixcut::report::RefsReport> = None;
    for (input, whole_closure) in inputs {
        let closure = load_input(g, &input)?;
        let mut opts = base.clone();
        opts.files = source::locate(&closure, g.store_root.as_deref());
        if whole_closure {
            opts.closure = true;
        } else if !closure.declared_roots.is_empty() {
            // A store path: explain that path itself.
            opts.paths = closure
                .declared_roots
                .iter()
                .map(|p| closure.store_dir.display(p))
                .collect();
        } else {
            opts.closure = true;
        }
        let bar = Progress::new(g, closure.paths.len() as u64);
        let tick = |bytes: u64| {
            if let Some(b) = &bar {
                b.tick(bytes);
            }
        };
        let report = analysis::refs(&closure, &opts, Some(&tick))?;
        if let Some(b) = bar {
            b.finish();
        }
        match &mut merged {
            None => merged = Some(report),
            Some(m) => {
                m.paths.extend(report.paths);
                m.warnings.extend(report.warnings);
            }
        }
    }
    let report = merged.context("no input given")?;
    show(g, None, &report.warnings, &report, format, style)?;
    Ok(Outcome::Success)
}

fn cmd_split(g: &GlobalArgs, a: &SplitArgs, format: Format, style: &Style) -> Result<Outcome> {
    let input = a.for_root.as_deref().unwrap_or(&a.path);
    let closure = load_input(g, input)?;
    let package = match (&a.for_root, closure.declared_roots.first()) {
        // PATH alone: the store path it was loaded as, else `--root` or the only root
        // of the file it was read from.
        (None, Some(p)) => closure.store_dir.display(p),
        (None, None) => match (&g.root, closure.roots().as_slice()) {
            (Some(r), _) => r.clone(),
            (None, [only]) => closure.store_dir.display(only),
            _ => a.path.clone(),
        },
        (Some(_), _) => a.path.clone(),
    };
    let opts = analysis::SplitOptions {
        package,
        for_root: a.for_root.is_some(),
        root: g.root.clone(),
        gpu_targets: a
            .gpu_targets
            .iter()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect(),
        files: source::locate(&closure, g.store_root.as_deref()),
        cache: scan_cache(a.no_cache),
        ..Default::default()
    };
    let bar = Progress::new(g, 0);
    let tick = |bytes: u64| {
        if let Some(b) = &bar {
            b.tick(bytes);
        }
    };
    let report = analysis::split(&closure, &opts, Some(&tick))?;
    show(g, bar, &report.warnings, &report, format, style)?;
    Ok(Outcome::Success)
}

/// Scanning progress on stderr: only when stderr is a terminal, and only once scanning
/// has taken more than a moment (short runs print nothing).
struct Progress {
    bar: indicatif::ProgressBar,
    start: std::time::Instant,
    shown: std::sync::atomic::AtomicBool,
}

impl Progress {
    /// `len` 0 means the count is not known in advance (a spinner with a counter).
    fn new(g: &GlobalArgs, len: u64) -> Option<Progress> {
        if g.quiet || (len > 0 && len < 4) || !io::stderr().is_terminal() {
            return None;
        }
        let (bar, template) = if len == 0 {
            (
                indicatif::ProgressBar::hidden(),
                "scanning {spinner} {pos} paths {msg}",
            )
        } else {
            let bar = indicatif::ProgressBar::hidden();
            bar.set_length(len);
            (bar, "scanning {bar:30} {pos}/{len} paths {msg}")
        };
        bar.set_style(
            indicatif::ProgressStyle::with_template(template)
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(Progress {
            bar,
            start: std::time::Instant::now(),
            shown: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// One path scanned (`bytes` of files).
    fn tick(&self, bytes: u64) {
        use std::sync::atomic::Ordering;
        self.bar.inc(1);
        self.bar.set_message(nixcut::store::format_size(bytes));
        if self.start.elapsed() > std::time::Duration::from_millis(300)
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar
                .set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
        }
    }

    fn finish(self) {
        self.bar.finish_and_clear();
    }
}
