//! Evidence for graph edges, for `why`: scan the referring paths (through the same
//! code and cache as `refs`) and summarise, for one edge `from → to`, how `from`
//! refers to `to`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rayon::prelude::*;

use super::cache::ScanCache;
use super::refs::{refs_of_path, FileSource, Progress, RefsOptions};
use crate::report::{HopEvidence, RefsPath};
use crate::store::{Closure, StorePath};

/// Whether and how `why` scans files for evidence.
#[derive(Debug, Clone)]
pub struct EvidenceOptions {
    /// Scan files when they are available (`--no-evidence` turns it off).
    pub enabled: bool,
    /// `--store-root`.
    pub store_root: Option<PathBuf>,
    /// The scan cache (`None`: `--no-cache`).
    pub cache: Option<ScanCache>,
    /// Referrers scanned per shown path in `why ROOT`.
    pub max_referrers: usize,
    /// Evidence items kept per edge.
    pub max_items: usize,
}

impl Default for EvidenceOptions {
    fn default() -> Self {
        EvidenceOptions {
            enabled: false,
            store_root: None,
            cache: None,
            max_referrers: 4,
            max_items: 3,
        }
    }
}

/// Scans referrers once each and answers edge queries.
pub(crate) struct EdgeEvidence<'a> {
    closure: &'a Closure,
    files: FileSource,
    refs_opts: RefsOptions,
    all_paths: Vec<StorePath>,
    scanned: BTreeMap<StorePath, RefsPath>,
    max_items: usize,
}

impl<'a> EdgeEvidence<'a> {
    /// `None` when evidence is off or no files are available.
    pub(crate) fn new(c: &'a Closure, opts: &EvidenceOptions) -> Option<EdgeEvidence<'a>> {
        if !opts.enabled {
            return None;
        }
        let files = FileSource::locate(c, opts.store_root.as_deref());
        if matches!(files, FileSource::Unavailable) {
            return None;
        }
        Some(EdgeEvidence {
            closure: c,
            files,
            refs_opts: RefsOptions {
                store_root: opts.store_root.clone(),
                cache: opts.cache.clone(),
                ..RefsOptions::default()
            },
            all_paths: c.paths.keys().cloned().collect(),
            scanned: BTreeMap::new(),
            max_items: opts.max_items,
        })
    }

    /// Scan these referrers (in parallel; cached ones are cheap).
    pub(crate) fn scan(&mut self, referrers: &[StorePath], progress: Option<Progress<'_>>) {
        let todo: Vec<&StorePath> = referrers
            .iter()
            .filter(|p| !self.scanned.contains_key(*p))
            .collect();
        let done: Vec<(StorePath, RefsPath)> = todo
            .par_iter()
            .map(|p| {
                let r = refs_of_path(
                    self.closure,
                    p,
                    &self.files,
                    &self.refs_opts,
                    &self.all_paths,
                );
                if let Some(f) = progress {
                    f(r.bytes_scanned);
                }
                ((*p).clone(), r)
            })
            .collect();
        self.scanned.extend(done);
    }

    /// Warnings of the scanned paths, prefixed with the path.
    pub(crate) fn warnings(&self) -> Vec<String> {
        self.scanned
            .values()
            .flat_map(|r| r.warnings.iter().map(move |w| format!("{}: {w}", r.path)))
            .collect()
    }

    /// How `from` refers to `to` (after `from` was scanned).
    pub(crate) fn edge(&self, from: &StorePath, to: &StorePath) -> Option<HopEvidence> {
        let r = self.scanned.get(from)?;
        let target = self.closure.store_dir.display(to);
        let e = r.references.iter().find(|e| e.path == target)?;
        Some(HopEvidence {
            referrer: r.path.clone(),
            verdict: e.verdict.clone(),
            rule: e.rule.clone(),
            kinds: e.kinds.clone(),
            evidence: e.evidence.iter().take(self.max_items).cloned().collect(),
        })
    }
}
