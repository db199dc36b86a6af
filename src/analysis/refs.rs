//! `nixcut refs`: the evidence of each reference of the requested store paths (where
//! each hash sits, its kind and verdict), from the typed evidence layer
//! (`crate::evidence`), turned into the `refs` report at the edge (`super::convert`).
//!
//! Files come from the source the caller located (`crate::source`); without one the
//! report says that evidence is unavailable and lists the registered references only.

use rayon::prelude::*;

use super::common::{load_warnings, pick_roots, source_ref};
use super::convert::refs_path;
use super::AnalysisError;
use crate::evidence::{Collector, Progress, ScanCache};
use crate::report::{EvidenceLevel, RefsReport, SCHEMA_VERSION};
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
}

/// The store paths a `refs` run reports on.
fn targets(c: &Closure, opts: &RefsOptions) -> Result<Vec<StorePath>, AnalysisError> {
    if opts.closure || opts.paths.is_empty() {
        let roots = pick_roots(c, opts.root.as_deref())?;
        return Ok(c.restrict_to(&roots).paths.keys().cloned().collect());
    }
    let mut v = Vec::new();
    for q in &opts.paths {
        v.push(c.select_root(q)?);
    }
    v.dedup();
    Ok(v)
}

/// Scan and report the references of the requested paths.
pub fn refs(
    c: &Closure,
    opts: &RefsOptions,
    progress: Option<Progress<'_>>,
) -> Result<RefsReport, AnalysisError> {
    let targets = targets(c, opts)?;
    let collector =
        Collector::new(c, opts.files.source(), opts.cache.as_ref()).discover(opts.discover);
    let sd = &c.store_dir;
    let paths = collector
        .collect(&targets, progress)
        .par_iter()
        .map(|e| refs_path(sd, e, opts.max_evidence))
        .collect();
    let mut warnings = load_warnings(c);
    if let Files::Unavailable { looked_in } = &opts.files {
        warnings.push(format!(
            "the files of these paths are not available (not in {}, no NARs in the input): evidence is graph-level only; use --store-root or a binary cache with nar/",
            looked_in.display()
        ));
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
        paths,
        warnings,
    })
}
