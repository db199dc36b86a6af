//! ROOT as the consumer: which files of its closure ROOT loads, runs or opens at run
//! time ([`crate::reach`]), computed once per report and shared by every command that
//! has a ROOT (`refs --closure ROOT`, `why ROOT`, `why ROOT TARGET`, the savings line
//! and the pictures drawn from `why`), so that they all give one answer to "does ROOT
//! need this at run time?".
//!
//! The walk needs the inventory of every path of ROOT's closure. From a store tree
//! (`--store-root`, a local store) that is a read of each path (cached); from a binary
//! cache it would be a NAR download per path, so `why` judges each referrer on its own
//! files there and says so ([`VerdictScope::PerPath`]).

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::classify::DataDirRule;
use crate::evidence::{Collector, PathEvidence, Progress, Scanned};
use crate::reach::{reach_with, FileId, Inventory, Reached, Why};
use crate::report::{Explanation, ReachStep, ReachVia, VerdictScope};
use crate::scan::RelPath;
use crate::source::FilesFrom;
use crate::store::{Closure, StoreDir, StorePath};

/// The files reached, per store path.
pub(crate) type ReachedFiles = HashMap<StorePath, HashSet<RelPath>>;

/// The processors a reached file is opened on: those its reaching edges say (a code
/// object a non-lazy master loads for one processor), else the architecture of its
/// class (a `gpu:gfx908` file is of use on a gfx908 only, whatever opened it); `None`
/// when on every processor. `gpu` and `split` count a file for the architecture of its
/// class, so this is the answer they share (tests/agreement.rs).
fn processors_of(reached: &Reached, inv: &Inventory<'_>, f: FileId) -> Option<BTreeSet<String>> {
    if let Some(set) = reached.processors(f) {
        return Some(set.clone());
    }
    match &inv.entry(f).class {
        crate::classify::FileClass::Gpu(arch) => Some(BTreeSet::from([arch.base.clone()])),
        _ => None,
    }
}

/// What ROOT reaches in its closure, from the scans of the closure's paths.
pub(crate) struct ConsumerReach {
    files: ReachedFiles,
}

impl ConsumerReach {
    /// Reach from the run-time files of `roots` through the scanned paths, with these
    /// data-directory rules; with `explain`, also how that file (an absolute logical
    /// path) is reached.
    pub(crate) fn compute(
        sd: &StoreDir,
        scanned: &[Scanned],
        roots: &[StorePath],
        data_dirs: &[DataDirRule],
        explain: Option<&str>,
    ) -> (ConsumerReach, Option<Explanation>) {
        let mut inv = Inventory::new(
            sd,
            scanned.iter().filter_map(|s| {
                s.result
                    .as_ref()
                    .ok()
                    .map(|(sp, _)| (&s.path, sp.entries.as_slice()))
            }),
        );
        for s in scanned {
            if let Ok((sp, _)) = &s.result {
                inv.add_indexes(&s.path, &sp.indexes);
            }
        }
        let entry_points: Vec<FileId> = roots
            .iter()
            .filter_map(|r| inv.path_index(r))
            .flat_map(|pi| inv.files_of(pi).collect::<Vec<_>>())
            .filter(|f| inv.entry(*f).class.is_runtime())
            .collect();
        let reached = reach_with(&inv, entry_points, data_dirs);
        let mut files: ReachedFiles = HashMap::new();
        for s in scanned {
            let Some(pi) = inv.path_index(&s.path) else {
                continue;
            };
            let set = inv
                .files_of(pi)
                .filter(|f| reached.contains(*f))
                .map(|f| inv.entry(f).path.clone())
                .collect();
            files.insert(s.path.clone(), set);
        }
        let explanation = explain.map(|file| explanation(&inv, &reached, file));
        (ConsumerReach { files }, explanation)
    }

    /// Whether ROOT reaches file `rel` of store path `p`.
    pub(crate) fn reaches(&self, p: &StorePath, rel: &RelPath) -> bool {
        self.files.get(p).is_some_and(|set| set.contains(rel))
    }

    /// Phase two of the collector for one scanned path, with ROOT as the consumer.
    pub(crate) fn derive(&self, collector: &Collector<'_>, s: Scanned) -> PathEvidence {
        let p = s.path.clone();
        let f = |rel: &RelPath| self.reaches(&p, rel);
        collector.derive(s, Some(&f))
    }
}

/// Whether a report with file evidence can judge with ROOT as the consumer: the files
/// come from a store tree (reading a path is cheap), not NARs of a binary cache.
pub(crate) fn scope_for(files: FilesFrom) -> Option<VerdictScope> {
    match files {
        FilesFrom::Store => Some(VerdictScope::Consumer),
        FilesFrom::Nar => Some(VerdictScope::PerPath),
        FilesFrom::Unavailable => None,
    }
}

/// Scan every path of the closure of `roots` (phase one, cached scans are cheap) and
/// reach through it. The scans are returned for phase two.
pub(crate) fn scan_and_reach(
    c: &Closure,
    collector: &Collector<'_>,
    roots: &[StorePath],
    data_dirs: &[DataDirRule],
    progress: Option<Progress<'_>>,
    timings: &crate::timing::Timings,
) -> (ConsumerReach, Vec<Scanned>) {
    let paths: Vec<StorePath> = c.restrict_to(roots).paths.keys().cloned().collect();
    let scanned = collector.scan(&paths, progress);
    let (reach, _) = ConsumerReach::compute(&c.store_dir, &scanned, roots, data_dirs, None);
    timings.step("reachability from the root");
    (reach, scanned)
}

fn explanation(inv: &Inventory<'_>, reached: &Reached, file: &str) -> Explanation {
    let target = inv.resolve(file.as_bytes()).map(|(f, _)| f);
    // A directory (a store path itself) is needed when something below it is: explain
    // the first file below it that ROOT reaches.
    if let Some(d) = target.filter(|&d| {
        !reached.contains(d) && inv.entry(d).entry == crate::classify::EntryType::Directory
    }) {
        let below: Vec<FileId> = inv.below(d).collect();
        let hit: Vec<FileId> = below
            .iter()
            .copied()
            .filter(|&c| reached.contains(c))
            .collect();
        let first = hit
            .iter()
            .copied()
            .find(|&c| inv.entry(c).entry != crate::classify::EntryType::Directory)
            .or_else(|| hit.first().copied());
        if let Some(c) = first {
            let chain = reached
                .chain(c)
                .into_iter()
                .map(|(f, why)| step(inv, f, why))
                .collect();
            return Explanation {
                file: file.to_string(),
                reached: true,
                chain,
                class: Some(inv.entry(d).class.clone()),
                processors: Vec::new(),
                note: Some(format!(
                    "a directory: ROOT reaches {} of the {} entries below it; the chain is to the first, {}",
                    hit.len(),
                    below.len(),
                    inv.display(c)
                )),
            };
        }
    }
    let chain: Vec<ReachStep> = target
        .filter(|f| reached.contains(*f))
        .map(|f| reached.chain(f))
        .unwrap_or_default()
        .into_iter()
        .map(|(f, why)| step(inv, f, why))
        .collect();
    let note = match (chain.is_empty(), target) {
        (true, Some(f)) => unreached_note(inv, reached, file.as_bytes(), f),
        _ => None,
    };
    let processors = target
        .filter(|f| reached.contains(*f))
        .and_then(|f| processors_of(reached, inv, f))
        .map(|s| s.into_iter().collect())
        .unwrap_or_default();
    Explanation {
        file: file.to_string(),
        reached: !chain.is_empty(),
        chain,
        note,
        class: target.map(|f| inv.entry(f).class.clone()),
        processors,
    }
}

/// Why an unreached file is there at all: a build manifest beside it (in the directory
/// it was asked by, or its real one) lists it; or reached index files in that directory
/// name other code objects, not this one.
fn unreached_note(
    inv: &Inventory<'_>,
    reached: &Reached,
    asked: &[u8],
    f: FileId,
) -> Option<String> {
    let name = inv.entry(f).path.name().to_vec();
    let name = String::from_utf8_lossy(&name).into_owned();
    let mut dirs = vec![
        Inventory::parent_of(asked),
        Inventory::parent_of(&inv.abs(f)),
    ];
    // And every directory holding a symlink to it (`ln -s $group/lib/…/* $out/lib/…`).
    for p in 0..inv.path_count() {
        for l in inv.files_of(p) {
            if inv.entry(l).entry == crate::classify::EntryType::Symlink
                && inv.resolve(&inv.abs(l)).is_some_and(|(t, _)| t == f)
            {
                dirs.push(Inventory::parent_of(&inv.abs(l)));
            }
        }
    }
    dirs.sort();
    dirs.dedup();
    let mut manifest = None;
    let mut indexed = false;
    for d in &dirs {
        let Some((dir, _)) = inv.resolve(d) else {
            continue;
        };
        for c in inv.below(dir) {
            let Some(index) = inv.index(c) else { continue };
            let here = Inventory::parent_of(&inv.abs(c)) == inv.abs(dir);
            match index {
                crate::scan::IndexFile::Lists(names) if here && names.contains(&name) => {
                    manifest = Some(String::from_utf8_lossy(inv.entry(c).path.name()).into_owned());
                }
                crate::scan::IndexFile::Loads(l)
                    if here && !l.is_empty() && reached.contains(c) =>
                {
                    indexed = true;
                }
                _ => {}
            }
        }
    }
    match (manifest, indexed) {
        (Some(m), _) => Some(format!(
            "listed only in {m} (a build inventory nothing reads at run time); no reached index or pattern names it"
        )),
        (None, true) => Some("no reached index file names it, so it is not opened".to_string()),
        (None, false) => None,
    }
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
        Why::DataString(s) => (ReachVia::DataString, s),
        Why::Indexed(s) => (ReachVia::Index, s),
        Why::Processor { processor, pattern } => {
            (ReachVia::Processor, format!("{processor}: {pattern}"))
        }
    };
    ReachStep {
        file: inv.display(f),
        via,
        detail,
    }
}
