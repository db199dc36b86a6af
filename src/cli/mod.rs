//! Command-line interface: clap types, their conversion into the library's plain
//! options, and the dispatch to analyses and renderers. Only this module and `main.rs`
//! know about clap and anyhow.

mod args;
mod check;
mod diff;
mod explain;
mod formats;
mod http;
mod inputs;
mod rules;
mod snapshot;
mod suggest;
mod targets;

pub use args::Cli;
pub use suggest::better_suggestion;

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use args::{
    Command, EvidencePaths, FormatArg, GlobalArgs, GpuArgs, RefsArgs, SortArg, SplitArgs, WhyArgs,
};
use nixcut::analysis;
use nixcut::classify::ClassRules;
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
    CheckFailed,
}

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<Outcome> {
    let g = &cli.global;
    formats::check(&cli.command, g.format)?;
    let style = style_for(g);
    let format = match g.format {
        FormatArg::Table => Format::Table,
        FormatArg::Json => Format::Json,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Html => Format::Html,
        FormatArg::Dot => Format::Dot,
    };
    // Read and checked before anything else, so a bad rules file fails every command.
    let class_rules = rules::class_rules(g)?;
    match &cli.command {
        Command::Rules(_) => rules::run(g, &class_rules, format, &style),
        Command::Why(args) => cmd_why(g, args, class_rules, format, &style),
        Command::Snapshot(args) => snapshot::run(g, args),
        Command::Diff(args) => diff::run(g, args, format, &style),
        Command::Check(args) => check::run(g, args, format, &style),
        Command::Refs(args) => cmd_refs(g, args, class_rules, format, &style),
        Command::Split(args) => cmd_split(g, args, format, &style),
        Command::Gpu(args) => cmd_gpu(g, args, class_rules, format, &style),
    }
}

fn style_for(g: &GlobalArgs) -> Style {
    let tty = io::stdout().is_terminal();
    let color = match g.color.as_str() {
        "always" => true,
        "never" => false,
        _ => tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    // Tables fit the terminal; a pipe, a file, or a terminal that reports no usable
    // width (a pseudo-terminal with 0 columns, as a Nix builder gets) gets 120 columns.
    let width = if tty {
        comfy_table::Table::new().width().filter(|&w| w >= 40)
    } else {
        None
    };
    Style {
        width: Some(width.unwrap_or(120)),
        color,
        pretty_json: tty,
        long: false,
    }
}

/// How inputs are read: the flags, and the environment the local Nix and nixcut read
/// (`NIX_STORE_DIR`, `NIX_STATE_DIR`, `NIXCUT_NO_STORE_DB`), turned into plain options
/// here so that the library never reads the environment.
fn load_options(g: &GlobalArgs) -> LoadOptions {
    let no_store_db = std::env::var_os(nixcut::load::store_db::NO_STORE_DB_ENV)
        .is_some_and(|v| !v.is_empty() && v != "0");
    LoadOptions {
        store_dir: g.store_dir.as_deref().map(StoreDir::new),
        store_root: g.store_root.clone(),
        no_store_db,
        nix_store_dir: std::env::var("NIX_STORE_DIR")
            .ok()
            .filter(|d| !d.is_empty()),
        nix_state_dir: std::env::var_os("NIX_STATE_DIR")
            .filter(|d| !d.is_empty())
            .map(std::path::PathBuf::from),
        ..LoadOptions::default()
    }
}

/// Refuse to write `file` into a store object: a path inside `<store>/<hash>-<name>/`,
/// or an existing `<store>/<hash>-<name>`, of the store directory or of the
/// `--store-root` copy. nixcut only reads stores. A new entry directly in the store
/// directory is allowed: that is a Nix builder writing its own `$out`
/// (`nix/closure-check.nix` passes `--summary $out`). `what` names the file in the
/// message.
///
/// The file is checked where a write would land: every symlink of its last component
/// is followed first (a `LINK` to a store file is that store file), as the parent
/// directories are by `canonicalize`.
fn refuse_store_object(g: &GlobalArgs, file: &Path, what: &str) -> Result<()> {
    let opts = load_options(g);
    let logical = PathBuf::from(opts.store_dir_or_default().as_str());
    let stores = [logical, opts.physical_store_dir()];
    let shown = file;
    let resolved = follow_last_symlinks(file);
    let file = resolved.as_path();
    let Some(name) = file.file_name() else {
        return Ok(());
    };
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(target) = std::fs::canonicalize(parent).map(|p| p.join(name)) else {
        return Ok(()); // the write itself will say what is wrong
    };
    for store in &stores {
        let store = std::fs::canonicalize(store).unwrap_or_else(|_| store.clone());
        let Ok(rest) = target.strip_prefix(&store) else {
            continue;
        };
        if rest.components().count() >= 2 || target.exists() {
            return Err(anyhow::anyhow!(
                "cannot write {what} {}: it is inside the store directory {}, and nixcut \
                 never writes into a store object; write it elsewhere",
                printable(&shown.display().to_string()),
                store.display()
            ));
        }
    }
    Ok(())
}

/// `file` with the symlinks of its last component followed (at most 40, as the kernel
/// does; a loop or a longer chain is left for the write to report). A relative target
/// is taken from the link's directory. A dangling link gives where the write would
/// create the file.
fn follow_last_symlinks(file: &Path) -> PathBuf {
    let mut p = file.to_path_buf();
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&p) else {
            break;
        };
        p = match p.parent() {
            Some(dir) if target.is_relative() => dir.join(target),
            _ => target,
        };
    }
    p
}

/// Standard input can be read once: refuse `-` given for two inputs of one command
/// (the second would read nothing and be called an empty file).
fn stdin_at_most_once<'a>(inputs: impl IntoIterator<Item = &'a str>) -> Result<()> {
    if inputs.into_iter().filter(|i| *i == "-").count() > 1 {
        return Err(anyhow::anyhow!(
            "`-` (standard input) is given for more than one input, but it can be read only \
             once; save one of them to a file"
        ));
    }
    Ok(())
}

fn load_input(g: &GlobalArgs, input: &str) -> Result<Closure> {
    let mut opts = load_options(g);
    let bar = http::wire(g, input, &mut opts);
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
fn root_query(g: &GlobalArgs, c: &Closure) -> Result<Option<String>> {
    g.root
        .as_deref()
        .map(|r| inputs::in_closure(g, c, r).context("--root"))
        .transpose()
}

/// Where the files of a loaded closure come from.
fn files_for(g: &GlobalArgs, closure: &Closure) -> Files {
    source::locate_with(closure, g.store_root.as_deref(), http::client_in_use())
}

fn print_warnings<W: std::fmt::Display>(warnings: &[W], quiet: bool) {
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

/// `s` with everything a terminal would act on escaped as `\u{…}`: control characters
/// other than newline and tab (C0, DEL, C1: ESC sequences, carriage returns) and the
/// bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069)
/// that make text read differently from what it is. Messages quote input (file names,
/// store paths, lines of a file); this is the last step before they reach stderr.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    // Newlines and tabs lay a message out; everything else that acts is escaped.
    let hazard = |c: char| c != '\n' && c != '\t' && nixcut::store::is_terminal_hazard(c);
    if !s.chars().any(hazard) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if hazard(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

fn emit<'a>(report: impl Into<Report<'a>>, format: Format, style: &Style) -> Result<()> {
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

/// Rows of a `why` table without `--top`, and the paths whose referrers `why` scans
/// without `--evidence-paths`.
const DEFAULT_TOP: usize = 25;

fn cmd_why(
    g: &GlobalArgs,
    a: &WhyArgs,
    rules: ClassRules,
    format: Format,
    style: &Style,
) -> Result<Outcome> {
    let style = &Style {
        long: a.long,
        ..*style
    };
    let closure = load_input(g, &a.input)?;
    let evidence = analysis::EvidenceOptions {
        enabled: !a.no_evidence,
        files: if a.no_evidence {
            Files::default()
        } else {
            files_for(g, &closure)
        },
        cache: scan_cache(g.no_cache),
        max_referrers: a.evidence_referrers,
        rules,
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
                root: root_query(g, &closure)?,
                top: match (a.top, a.all, format) {
                    (_, true, _) => None,
                    (Some(n), _, _) => Some(n),
                    // Tables (and dot) default to one screen; JSON and the HTML
                    // treemap have everything.
                    (None, _, Format::Json | Format::Html) => None,
                    (None, _, _) => Some(DEFAULT_TOP),
                },
                sort: match a.sort {
                    SortArg::Added => analysis::SortKey::Added,
                    SortArg::Closure => analysis::SortKey::Closure,
                    SortArg::Nar => analysis::SortKey::Nar,
                },
                evidence,
                // The same paths in every format: a JSON report lists every path but
                // scans what a table would show, unless asked for more.
                evidence_paths: match (a.evidence_paths, a.top) {
                    (Some(EvidencePaths::All), _) => None,
                    (Some(EvidencePaths::First(n)), _) => Some(n),
                    (None, Some(n)) => Some(n),
                    (None, None) => Some(DEFAULT_TOP),
                },
            };
            let report = analysis::why(&closure, &opts, Some(&tick))?;
            show(g, bar, &report.warnings, &report, format, style)?;
            discard(report);
        }
        Some(target) => {
            // Checked here so that the message names it as the TARGET; the analysis
            // resolves it again (a lookup).
            let target = inputs::in_closure(g, &closure, target).context("TARGET")?;
            closure.select_path(&target, "TARGET")?;
            let root = root_query(g, &closure)?;
            let report = analysis::why_chains_capped(
                &closure,
                root.as_deref(),
                &target,
                &evidence,
                Some(&tick),
                a.max_chains,
            )?;
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
    Some(ScanCache::at(cache_home()?.join("nixcut").join("scan")))
}

/// `$XDG_CACHE_HOME`, else `$HOME/.cache`; relative values are ignored.
fn cache_home() -> Option<std::path::PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .filter(|v| v.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(std::path::PathBuf::from)
                .filter(|h| h.is_absolute())
                .map(|h| h.join(".cache"))
        })
}

/// Clear the progress bar, print warnings on stderr (Markdown carries them itself) and
/// write the report.
fn show<'a>(
    g: &GlobalArgs,
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
        print_warnings(warnings, g.quiet);
    }
    emit(report, format, style)?;
    nixcut::timing::step("output");
    Ok(())
}

/// Drop a large value without freeing it: the process is about to exit and the OS takes
/// the memory back at once, while freeing a 100,000-path closure piece by piece takes a
/// tenth of a second.
fn discard<T>(value: T) {
    std::mem::forget(value);
}

fn cmd_refs(
    g: &GlobalArgs,
    a: &RefsArgs,
    rules: ClassRules,
    format: Format,
    style: &Style,
) -> Result<Outcome> {
    let base = analysis::RefsOptions {
        root: g.root.clone(),
        discover: a.discover,
        max_evidence: a.max_evidence,
        cache: scan_cache(g.no_cache),
        rules,
        explain: a.explain.clone(),
        ..Default::default()
    };
    let inputs: Vec<(String, bool)> = match &a.closure {
        Some(root) => vec![(root.clone(), true)],
        None => a.paths.iter().map(|p| (p.clone(), false)).collect(),
    };
    stdin_at_most_once(inputs.iter().map(|(i, _)| i.as_str()))?;
    let mut merged: Option<nixcut::report::RefsReport> = None;
    for (input, whole_closure) in inputs {
        let closure = load_input(g, &input)?;
        let mut opts = base.clone();
        opts.root = root_query(g, &closure)?;
        opts.files = files_for(g, &closure);
        if let (Some(raw), true) = (&a.explain, whole_closure) {
            let root = closure
                .declared_roots
                .first()
                .map(|r| closure.store_dir.display(r));
            let physical = load_options(g).physical_store_dir();
            opts.explain = Some(explain::explain_target(
                raw,
                &closure,
                &physical,
                root.as_deref(),
            )?);
        }
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
                // The same path named twice (`refs X X`, or through two inputs) is
                // reported once.
                let seen: std::collections::HashSet<String> =
                    m.paths.iter().map(|p| p.path.clone()).collect();
                m.paths
                    .extend(report.paths.into_iter().filter(|p| !seen.contains(&p.path)));
                m.warnings.extend(report.warnings);
            }
        }
    }
    let report = merged.context("no input given")?;
    show(g, None, &report.warnings, &report, format, style)?;
    Ok(Outcome::Success)
}

fn cmd_split(g: &GlobalArgs, a: &SplitArgs, format: Format, style: &Style) -> Result<Outcome> {
    let gpu_targets = targets::checked(&a.gpu_targets)?;
    let input = a.for_root.as_deref().unwrap_or(&a.path);
    let closure = load_input(g, input)?;
    let package = match (&a.for_root, closure.declared_roots.first()) {
        // PATH alone: the store path it was loaded as, else `--root` or the only root
        // of the file it was read from.
        (None, Some(p)) => closure.store_dir.display(p),
        (None, None) => match (root_query(g, &closure)?, closure.roots().as_slice()) {
            (Some(r), _) => r,
            (None, [only]) => closure.store_dir.display(only),
            _ => a.path.clone(),
        },
        // PATH in ROOT's closure, as typed (`./result-rocblas`, a name, a hash): looked
        // up here, so that an ambiguous or unknown name lists the candidates.
        (Some(_), _) => {
            let q = inputs::in_closure(g, &closure, &a.path).context("PATH")?;
            let p = match closure.select_path(&q, "PATH") {
                Ok(p) => p,
                // A store path itself needs no candidates: it is simply not there.
                Err(_) if closure.store_dir.parse_path(&q).is_ok() => {
                    anyhow::bail!(
                        "{} is not in the closure of {}",
                        printable(&q),
                        printable(&closure.origin)
                    )
                }
                Err(e) => return Err(e.into()),
            };
            closure.store_dir.display(&p)
        }
    };
    let opts = analysis::SplitOptions {
        package,
        for_root: a.for_root.is_some(),
        root: root_query(g, &closure)?,
        gpu_targets,
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

fn cmd_gpu(
    g: &GlobalArgs,
    a: &GpuArgs,
    rules: ClassRules,
    format: Format,
    style: &Style,
) -> Result<Outcome> {
    let gpu_targets = targets::checked(&a.gpu_targets)?;
    let closure = load_input(g, &a.input)?;
    let opts = analysis::GpuOptions {
        root: root_query(g, &closure)?,
        gpu_targets,
        files: files_for(g, &closure),
        cache: scan_cache(g.no_cache),
        rules,
    };
    let bar = Progress::new(g, closure.paths.len() as u64);
    let tick = |bytes: u64| {
        if let Some(b) = &bar {
            b.tick(bytes);
        }
    };
    let report = analysis::gpu(&closure, &opts, Some(&tick))?;
    show(g, bar, &report.warnings, &report, format, style)?;
    discard(closure);
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

    /// A bar for a walk whose length grows as it goes ("fetching narinfos").
    fn walk(g: &GlobalArgs, what: &str) -> Option<Progress> {
        let p = Progress::new(g, 0)?;
        let template = format!("{what} {{bar:30}} {{pos}}/{{len}}");
        p.bar.set_style(
            indicatif::ProgressStyle::with_template(&template)
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(p)
    }

    /// `done` of `known` so far.
    fn set(&self, done: u64, known: u64) {
        self.bar.set_length(known);
        self.bar.set_position(done);
        self.tick_shown();
    }

    /// Show the bar once the work has taken more than a moment.
    fn tick_shown(&self) {
        use std::sync::atomic::Ordering;
        if self.start.elapsed() > std::time::Duration::from_millis(300)
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar
                .set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
        }
    }

    /// Remove the bar.
    fn clear(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn printable_escapes_what_a_terminal_would_act_on() {
        assert_eq!(printable("plain\ttext\nnext"), "plain\ttext\nnext");
        assert_eq!(printable("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(printable("\r\u{7f}\u{85}"), "\\u{d}\\u{7f}\\u{85}");
        assert_eq!(
            printable("x\u{202e}y\u{2066}z\u{2069}"),
            "x\\u{202e}y\\u{2066}z\\u{2069}"
        );
        // Other non-ASCII text is left alone.
        assert_eq!(printable("rocblas → 6.0 é"), "rocblas → 6.0 é");
    }
}
