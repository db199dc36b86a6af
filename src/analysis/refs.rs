//! `nixcut refs`: the evidence of each reference of the requested store paths (where
//! each hash sits, its kind and verdict), from the typed evidence layer
//! (`crate::evidence`), turned into the `refs` report at the edge (`super::convert`).
//!
//! Files come from the source the caller located (`crate::source`); without one the
//! report says that evidence is unavailable and lists the registered references only.

use rayon::prelude::*;

use super::common::{load_warnings, pick_roots, source_ref};
use super::consumer::ConsumerReach;
use super::convert::refs_path;
use super::AnalysisError;
use crate::classify::ClassRules;
use crate::evidence::{Collector, Progress, ScanCache};
use crate::report::{EvidenceLevel, RefsReport, RefsWarning, SCHEMA_VERSION};
use crate::source::{Files, FilesFrom};
use crate::store::{Closure, StorePath};

/// Options of `nixcut refs`.
#[derive(Debug, Clone, Default)]
pub struct RefsOptions {
    /// Paths to report (store paths, base names, hashes or package names); empty with
    /// `closure` means every path of the closure.
    pub paths: Vec<String>,
    /// `--closure ROOT`: every path in the closure of this root (or of all roots).
    pub closure: bool,
    /// `--root`: which root of a multi-root input.
    pub root: Option<String>,
    /// Look for every hash of the loaded closure, not only registered references.
    pub discover: bool,
    /// Keep at most this many evidence items per reference in the report (all hits
    /// are still counted).
    pub max_evidence: Option<usize>,
    /// Where the files are (decided by the caller; see `crate::source::locate`).
    pub files: Files,
    /// The scan cache; `None` disables it (`--no-cache`).
    pub cache: Option<ScanCache>,
    /// The file-class rules in force (built-in plus `--rules FILE`).
    pub rules: ClassRules,
    /// `--explain FILE`: say how the consumer reaches this file (an absolute logical
    /// path); needs `closure`.
    pub explain: Option<String>,
}

/// The store paths a `refs` run reports on.
fn targets(c: &Closure, opts: &RefsOptions) -> Result<Vec<StorePath>, AnalysisError> {
    if opts.closure || opts.paths.is_empty() {
        let roots = pick_roots(c, opts.root.as_deref())?;
        return Ok(c.restrict_to(&roots).paths.keys().cloned().collect());
    }
    let mut v: Vec<StorePath> = Vec::new();
    for q in &opts.paths {
        let p = c.select_root(q)?;
        // Each path once, in the order first named.
        if !v.contains(&p) {
            v.push(p);
        }
    }
    Ok(v)
}

/// Scan and report the references of the requested paths.
pub fn refs(
    c: &Closure,
    opts: &RefsOptions,
    progress: Option<Progress<'_>>,
) -> Result<RefsReport, AnalysisError> {
    let targets = targets(c, opts)?;
    let collector = Collector::new(c, opts.files.source(), opts.cache.as_ref())
        .rules(&opts.rules)
        .discover(opts.discover);
    let sd = &c.store_dir;
    let scanned = collector.scan(&targets, progress);
    // With a consumer (`--closure ROOT`), verdicts say what ROOT needs at run time: what
    // it loads, runs or opens. Without one, each path is judged on its own.
    if opts.explain.is_some() && !opts.closure {
        return Err(AnalysisError::ExplainNeedsConsumer);
    }
    let mut explain = None;
    let reached = if opts.closure && opts.files.source().is_some() {
        let roots = pick_roots(c, opts.root.as_deref())?;
        let (files, e) = ConsumerReach::compute(
            sd,
            &scanned,
            &roots,
            opts.rules.data_dirs(),
            opts.explain.as_deref(),
        );
        explain = e;
        Some(files)
    } else {
        None
    };
    let paths = scanned
        .into_par_iter()
        .map(|s| {
            let e = match &reached {
                Some(r) => r.derive(&collector, s),
                None => collector.derive(s, None),
            };
            refs_path(sd, &e, opts.max_evidence)
        })
        .collect();
    let mut warnings: Vec<RefsWarning> = load_warnings(c)
        .into_iter()
        .map(RefsWarning::Load)
        .collect();
    if let Files::Unavailable { looked_in } = &opts.files {
        let looked_in =
            (!looked_in.as_os_str().is_empty()).then(|| looked_in.display().to_string());
        warnings.push(RefsWarning::FilesUnavailable { looked_in });
    }
    if let (Some(file), None) = (&opts.explain, &reached) {
        warnings.push(RefsWarning::ExplainWithoutFiles { file: file.clone() });
    }
    let files_from = opts.files.kind();
    Ok(RefsReport {
        schema_version: SCHEMA_VERSION,
        source: source_ref(c),
        evidence: if files_from == FilesFrom::Unavailable {
            EvidenceLevel::Graph
        } else {
            EvidenceLevel::Files
        },
        files_from,
        discover: opts.discover,
        max_evidence: opts.max_evidence.map(|m| m as u64),
        paths,
        warnings,
        explain,
    })
}
