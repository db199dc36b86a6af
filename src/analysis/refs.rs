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
use crate::reach::{reach, FileId, Inventory, Why};
use crate::report::{EvidenceLevel, Explanation, ReachStep, ReachVia, RefsReport, SCHEMA_VERSION};
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
    /// `--explain FILE`: say how the consumer reaches this file (an absolute logical
    /// path); needs `closure`.
    pub explain: Option<String>,
}

/// The files reached, per store path.
type ReachedFiles = HashMap<StorePath, HashSet<RelPath>>;

/// For each scanned path, the files that the roots reach at run time (their own
/// run-time files are the entry points); with `explain`, how that file is reached.
fn reached_files(
    sd: &StoreDir,
    scanned: &[Scanned],
    roots: &[StorePath],
    explain: Option<&str>,
) -> (ReachedFiles, Option<Explanation>) {
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
    let explanation = explain.map(|file| {
        let target = inv.resolve(file.as_bytes()).map(|(f, _)| f);
        let chain: Vec<ReachStep> = target
            .filter(|f| reached.contains(*f))
            .map(|f| reached.chain(f))
            .unwrap_or_default()
            .into_iter()
            .map(|(f, why)| step(&inv, f, why))
            .collect();
        Explanation {
            file: file.to_string(),
            reached: !chain.is_empty(),
            chain,
        }
    });
    (out, explanation)
}

fn step(inv: &Inventory<'_>, f: FileId, why: Why) -> ReachStep {
    let (via, detail) = match why {
        Why::EntryPoint => (ReachVia::EntryPoint, String::new()),
        Why::Interpreter => (ReachVia::Interpreter, String::new()),
        Why::Needed { name, dir } => (ReachVia::Needed, format!("{name} in {dir}")),
        Why::Dlopen { name, dir } => (ReachVia::Dlopen, format!("{name} in {dir}")),
        Why::Shebang => (ReachVia::Shebang, String::new()),
        Why::Named => (ReachVia::Named, String::new()),
        Why::Symlink => (ReachVia::Symlink, String::new()),
        Why::Inside => (ReachVia::Inside, String::new()),
        Why::DataDir(rule) => (ReachVia::DataDir, rule.to_string()),
    };
    ReachStep {
        file: inv.display(f),
        via,
        detail,
    }
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
        let (files, e) = reached_files(sd, &scanned, &roots, opts.explain.as_deref());
        explain = e;
        Some(files)
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
    if let (Some(file), None) = (&opts.explain, &reached) {
        warnings.push(format!(
            "--explain {file}: the files are not available, so what the consumer reaches cannot be worked out"
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
        max_evidence: opts.max_evidence.map(|m| m as u64),
        paths,
        warnings,
        explain,
    })
}
