//! `nixcut refs PATH…` and `refs --closure ROOT [--explain FILE]`: the evidence of each
//! reference, for one or several inputs merged into one report; `--paths-from` is
//! `refs_list`.

use anyhow::{Context, Result};

use super::args::RefsArgs;
use super::config::Config;
use super::output::show;
use super::progress::Progress;
use super::{explain, files_for, load_input, root_query, stdin_at_most_once, Outcome};
use nixcut::analysis;
use nixcut::classify::ClassRules;

/// Run `nixcut refs`: every input's report, merged.
pub(super) fn run(cfg: &Config, a: &RefsArgs, rules: ClassRules) -> Result<Outcome> {
    if let Some(list) = &a.paths_from {
        return super::refs_list::run(cfg, a, list, rules);
    }
    let (format, style) = (cfg.format, &cfg.style);
    if format == nixcut::render::Format::Jsonl {
        anyhow::bail!(
            "`--format jsonl` is written by `refs --paths-from FILE` (one record per listed              path); for PATH… or --closure use --format json"
        );
    }
    let base = analysis::RefsOptions {
        root: cfg.root.clone(),
        discover: a.discover,
        max_evidence: a.max_evidence,
        cache: cfg.scan_cache(cfg.no_cache),
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
        let closure = load_input(cfg, &input)?;
        let mut opts = base.clone();
        opts.root = root_query(cfg, &closure)?;
        opts.files = files_for(cfg, &closure);
        if let (Some(raw), true) = (&a.explain, whole_closure) {
            let root = closure
                .declared_roots
                .first()
                .map(|r| closure.store_dir.display(r));
            let physical = cfg.load.physical_store_dir();
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
        let bar = Progress::new(cfg, closure.paths.len() as u64);
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
    show(cfg, None, &report.warnings, &report, format, style)?;
    Ok(Outcome::Success)
}
