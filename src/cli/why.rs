//! `nixcut why ROOT [TARGET]`: the ranking of a closure, or every chain to TARGET.

use anyhow::{Context, Result};

use super::args::{EvidencePaths, SortArg, WhyArgs};
use super::config::Config;
use super::output::{discard, show};
use super::progress::Progress;
use super::{files_for, inputs, load_input, root_query, Outcome};
use nixcut::analysis;
use nixcut::classify::ClassRules;
use nixcut::render::{Format, Style};
use nixcut::source::Files;

/// Rows of a `why` table without `--top`, and the paths whose referrers `why` scans
/// without `--evidence-paths`.
const DEFAULT_TOP: usize = 25;

/// Run `nixcut why ROOT [TARGET]`.
pub(super) fn run(cfg: &Config, a: &WhyArgs, rules: ClassRules) -> Result<Outcome> {
    let (format, style) = (cfg.format, &cfg.style);
    let style = &Style {
        long: a.long,
        ..*style
    };
    let closure = load_input(cfg, &a.input)?;
    let evidence = analysis::EvidenceOptions {
        enabled: !a.no_evidence,
        files: if a.no_evidence {
            Files::default()
        } else {
            files_for(cfg, &closure)
        },
        cache: cfg.scan_cache(cfg.no_cache),
        max_referrers: a.evidence_referrers,
        rules,
        timings: cfg.timings.clone(),
        ..Default::default()
    };
    let bar = Progress::new(cfg, 0);
    let tick = |bytes: u64| {
        if let Some(b) = &bar {
            b.tick(bytes);
        }
    };
    match &a.target {
        None => {
            let opts = analysis::WhyOptions {
                root: root_query(cfg, &closure)?,
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
                max_chain_length: a
                    .max_chain_length
                    .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
                timings: cfg.timings.clone(),
            };
            // Rank (pure), gather the files' evidence for the first rows, report.
            let ranking = analysis::why_ranking(&closure, &opts)?;
            let evidence = analysis::why_evidence(&closure, &ranking, &opts, Some(&tick));
            let report = analysis::why_report(&closure, &ranking, evidence.as_ref(), &opts);
            show(cfg, bar, &report.warnings, &report, format, style)?;
            discard(report);
            discard(evidence);
            discard(ranking);
        }
        Some(target) => {
            // Checked here so that the message names it as the TARGET; the analysis
            // resolves it again (a lookup).
            let target = inputs::in_closure(cfg, &closure, target).context("TARGET")?;
            closure.select_path(&target, "TARGET")?;
            let root = root_query(cfg, &closure)?;
            let report = analysis::why_chains_capped(
                &closure,
                root.as_deref(),
                &target,
                &evidence,
                Some(&tick),
                a.max_chains,
            )?;
            show(cfg, bar, &report.warnings, &report, format, style)?;
            discard(report);
        }
    }
    discard(closure);
    Ok(Outcome::Success)
}
