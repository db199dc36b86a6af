//! Evidence for graph edges, for `why`: collect the evidence of referring paths (through
//! the same collector and cache as `refs`) and answer, for one edge `from → to`, how
//! `from` refers to `to`.

use std::collections::BTreeMap;

use crate::classify::ClassRules;
use crate::evidence::{Collector, PathEvidence, Progress, ScanCache};
use crate::report::HopEvidence;
use crate::source::Files;
use crate::store::{Closure, StorePath};

use super::convert::hop;

/// Whether and how `why` looks at files for evidence.
#[derive(Debug, Clone)]
pub struct EvidenceOptions {
    /// Scan files when they are available (`--no-evidence` turns it off).
    pub enabled: bool,
    /// Where the files are (decided by the caller; see `crate::source::locate`).
    pub files: Files,
    /// The scan cache (`None`: `--no-cache`).
    pub cache: Option<ScanCache>,
    /// Referrers scanned per shown path in `why ROOT`.
    pub max_referrers: usize,
    /// Evidence items kept per edge.
    pub max_items: usize,
    /// The file-class rules in force (built-in plus `--rules FILE`).
    pub rules: ClassRules,
}

impl Default for EvidenceOptions {
    fn default() -> Self {
        EvidenceOptions {
            enabled: false,
            files: Files::default(),
            cache: None,
            max_referrers: 4,
            max_items: 3,
            rules: ClassRules::builtin(),
        }
    }
}

/// Collects referrers once each and answers edge queries.
pub(crate) struct EdgeEvidence<'a> {
    closure: &'a Closure,
    opts: &'a EvidenceOptions,
    collected: BTreeMap<StorePath, PathEvidence>,
}

impl<'a> EdgeEvidence<'a> {
    /// `None` when evidence is off or no files are available.
    pub(crate) fn new(c: &'a Closure, opts: &'a EvidenceOptions) -> Option<EdgeEvidence<'a>> {
        if !opts.enabled || opts.files.source().is_none() {
            return None;
        }
        Some(EdgeEvidence {
            closure: c,
            opts,
            collected: BTreeMap::new(),
        })
    }

    /// Collect these referrers (in parallel; cached ones are cheap).
    pub(crate) fn scan(&mut self, referrers: &[StorePath], progress: Option<Progress<'_>>) {
        let todo: Vec<StorePath> = referrers
            .iter()
            .filter(|p| !self.collected.contains_key(*p))
            .cloned()
            .collect();
        let collector = Collector::new(
            self.closure,
            self.opts.files.source(),
            self.opts.cache.as_ref(),
        )
        .rules(&self.opts.rules);
        for e in collector.collect(&todo, progress) {
            self.collected.insert(e.path.clone(), e);
        }
    }

    /// Every path collected so far.
    pub(crate) fn collected(&self) -> Vec<&PathEvidence> {
        self.collected.values().collect()
    }

    /// Warnings of the collected paths, prefixed with the path.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let sd = &self.closure.store_dir;
        self.collected
            .values()
            .flat_map(|e| {
                let path = sd.display(&e.path);
                e.warnings.iter().map(move |w| format!("{path}: {w}"))
            })
            .collect()
    }

    /// How `from` refers to `to` (after `from` was collected).
    pub(crate) fn edge(&self, from: &StorePath, to: &StorePath) -> Option<HopEvidence> {
        let e = self.collected.get(from)?;
        let r = e.reference(to)?;
        Some(hop(&self.closure.store_dir, e, r, self.opts.max_items))
    }
}
