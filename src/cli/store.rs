//! `nixcut store [INPUT]`: load a whole store and its GC roots, add the roots the user
//! names, and show every root's closure and what it alone keeps.

use std::io::Read;

use anyhow::{Context, Result};

use super::args::StoreArgs;
use super::config::Config;
use super::output::{discard, show};
use super::progress::Progress;
use super::Outcome;
use nixcut::analysis::{store_report, StoreOptions};
use nixcut::graph::Keep;
use nixcut::load::gc_roots::{parse_root_list, GcRoot};
use nixcut::load::whole::load_whole;

/// Roots listed without `--top` or `--all`, in every format.
const DEFAULT_TOP: usize = 25;

pub(super) fn run(cfg: &Config, a: &StoreArgs) -> Result<Outcome> {
    // The root lists first: a typo there fails before a long load.
    let store_dir = cfg.load.store_dir_or_default();
    let mut extra: Vec<GcRoot> = Vec::new();
    for file in &a.roots_from {
        let text = if file.as_os_str() == "-" {
            let mut b = Vec::new();
            std::io::stdin()
                .read_to_end(&mut b)
                .context("cannot read the root list from standard input")?;
            b
        } else {
            std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?
        };
        let roots = parse_root_list(&text, &store_dir)
            .with_context(|| format!("{}: not a root list", file.display()))?;
        extra.extend(roots);
    }
    let given = parse_root_list(cfg.roots.join("\n").as_bytes(), &store_dir)
        .map_err(|e| anyhow::anyhow!("--root {}: {}", cfg.roots[e.line - 1], e.message))?;
    extra.extend(given);

    let what = match &a.input {
        Some(i) => format!("reading {i}"),
        None => "reading the store database".to_string(),
    };
    let bar = Progress::counter(cfg, &what);
    let tick = |n: u64| {
        if let Some(b) = &bar {
            b.at(n);
        }
    };
    let mut input =
        load_whole(a.input.as_deref(), &cfg.load, &tick).with_context(|| match &a.input {
            Some(i) => format!("cannot load `{i}`"),
            None => "cannot load the store database".to_string(),
        })?;
    if let Some(b) = &bar {
        b.clear();
    }
    let mut roots: Vec<GcRoot> = match (&mut input.gc_roots, a.no_gc_roots) {
        (Some(scan), false) => std::mem::take(&mut scan.roots),
        _ => Vec::new(),
    };
    roots.extend(extra);
    let top = match (a.all, a.top) {
        (true, _) => None,
        (_, Some(n)) => Some(n),
        (_, None) => Some(DEFAULT_TOP),
    };
    let opts = StoreOptions {
        keep: Keep {
            derivations: a.keep_derivations,
            outputs: a.keep_outputs,
        },
        top,
        timings: cfg.timings.clone(),
    };
    let scan = if a.no_gc_roots {
        None
    } else {
        input.gc_roots.as_ref()
    };
    let report = store_report(
        &input.store,
        &input.file.display().to_string(),
        &roots,
        scan,
        &opts,
    );
    show(cfg, None, &report.warnings, &report, cfg.format, &cfg.style)?;
    discard(input);
    discard(report);
    Ok(Outcome::Success)
}
