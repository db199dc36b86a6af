//! `nixcut refs`: the evidence of each reference of the requested store paths (where
//! each hash sits, its kind and verdict), from the typed evidence layer
//! (`crate::evidence`), turned into the `refs` report at the edge (`super::convert`).
//!
//! Files come from the source the caller located (`crate::source`); without one the
//! report says that evidence is unavailable and lists the registered references only.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

use super::common::{load_warnings, pick_roots, source_ref};
use super::convert::refs_path;
use super::AnalysisError;
use crate::classify::ClassRules;
use crate::evidence::{Collector, Progress, ScanCache, Scanned};
use crate::reach::{reach, FileId, Inventory};
use crate::report::{EvidenceLevel, RefsReport, SCHEMA_VERSION};
use crate::scan::RelPath;
use crate::source::{Files, FilesFrom};
use crate::store::{Closure, StoreDir, StorePath};

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
}

/// For each scanned path, the files that the roots reach at run time (their own
/// run-time files are the entry points).
fn reached_files(
    sd: &StoreDir,
    scanned: &[Scanned],
    roots: &[StorePath],
) -> HashMap<StorePath, HashSet<RelPath>> {
    let inv = Inventory::new(
        sd,
        scanned.iter().filter_map(|s| {
            s.result
                .as_ref()
                .ok()
                .map(|(sp, _)| (&s.path, sp.entries.as_slice()))
        }),
    );
    let entry_points: Vec<FileId> = roots
        .iter()
        .filter_map(|r| inv.path_index(r))
        .flat_map(|pi| inv.files_of(pi).collect::<Vec<_>>())
        .filter(|f| inv.entry(*f).class.is_runtime())
        .collect();
    let reached = reach(&inv, entry_points);
    let mut out: HashMap<StorePath, HashSet<RelPath>> = HashMap::new();
    for s in scanned {
        let Some(pi) = inv.path_index(&s.path) else {
            continue;
        };
        let set = inv
            .files_of(pi)
            .filter(|f| reached.contains(*f))
            .map(|f| inv.entry(f).path.clone())
            .collect();
        out.insert(s.path.clone(), set);
    }
    out
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
    let collector = Collector::new(c, opts.files.source(), opts.cache.as_ref())
        .rules(&opts.rules)
        .discover(opts.discover);
    let sd = &c.store_dir;
    let scanned = collector.scan(&targets, progress);
    // With a consumer (`--closure ROOT`), verdicts say what ROOT needs at run time: what
    // it loads, runs or opens. Without one, each path is judged on its own.
    let reached = if opts.closure && opts.files.source().is_some() {
        let roots = pick_roots(c, opts.root.as_deref())?;
        Some(reached_files(sd, &scanned, &roots))
    } else {
        None
    };
    let paths = scanned
        .into_par_iter()
        .map(|s| {
            let e = match &reached {
                Some(r) => {
                    let files = r.get(&s.path);
                    let f = |rel: &RelPath| files.is_some_and(|set| set.contains(rel));
                    collector.derive(s, Some(&f))
                }
                None => collector.derive(s, None),
            };
            refs_path(sd, &e, opts.max_evidence)
        })
        .collect();
    let mut warnings = load_warnings(c);
    if let Files::Unavailable { looked_in } = &opts.files {
        let looked = if looked_in.as_os_str().is_empty() {
            "no store directory was given".to_string()
        } else {
            format!("not in {}", looked_in.display())
        };
        warnings.push(format!(
            "the files of these paths are not available ({looked}, no NARs in the input): evidence is graph-level only; use --store-root or a binary cache with nar/"
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
