//! Evidence for graph edges, for `why`: collect the evidence of referring paths (through
//! the same collector and cache as `refs`) and answer, for one edge `from → to`, how
//! `from` refers to `to`.

use std::collections::{BTreeMap, HashMap};

use crate::classify::ClassRules;
use crate::evidence::{Collector, PathEvidence, Progress, ScanCache, Scanned};
use crate::report::{HopEvidence, VerdictScope, WhyWarning};
use crate::source::Files;
use crate::store::{Closure, StorePath};

use super::consumer::{scan_and_reach, scope_for, ConsumerReach};
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
    /// Where the steps of gathering evidence report their times.
    pub timings: crate::timing::Timings,
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
            timings: crate::timing::Timings::off(),
        }
    }
}

/// Collects referrers once each and answers edge queries.
pub(crate) struct EdgeEvidence<'a> {
    closure: &'a Closure,
    opts: &'a EvidenceOptions,
    /// The consumer's roots, when verdicts judge with them as the consumer.
    roots: Vec<StorePath>,
    /// What the roots reach, and the scans not yet derived (after the first `scan`).
    consumer: Option<(ConsumerReach, HashMap<StorePath, Scanned>)>,
    collected: BTreeMap<StorePath, PathEvidence>,
}

impl<'a> EdgeEvidence<'a> {
    /// `None` when evidence is off or no files are available. Verdicts judge with
    /// `roots` as the consumer where the files allow it ([`EdgeEvidence::scope`]).
    pub(crate) fn new(
        c: &'a Closure,
        opts: &'a EvidenceOptions,
        roots: &[StorePath],
    ) -> Option<EdgeEvidence<'a>> {
        if !opts.enabled || opts.files.source().is_none() {
            return None;
        }
        let consumer = scope_for(opts.files.kind()) == Some(VerdictScope::Consumer);
        Some(EdgeEvidence {
            closure: c,
            opts,
            roots: if consumer { roots.to_vec() } else { Vec::new() },
            consumer: None,
            collected: BTreeMap::new(),
        })
    }

    /// Whom the verdicts judge for.
    pub(crate) fn scope(&self) -> VerdictScope {
        if self.roots.is_empty() {
            VerdictScope::PerPath
        } else {
            VerdictScope::Consumer
        }
    }

    /// Collect these referrers (in parallel; cached ones are cheap). With a consumer,
    /// the first call scans the roots' whole closure and reaches through it.
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
        if self.roots.is_empty() {
            for e in collector.collect(&todo, progress) {
                self.collected.insert(e.path.clone(), e);
            }
            return;
        }
        let (reach, pending) = self.consumer.get_or_insert_with(|| {
            let (reach, scanned) = scan_and_reach(
                self.closure,
                &collector,
                &self.roots,
                self.opts.rules.data_dirs(),
                progress,
                &self.opts.timings,
            );
            let pending = scanned.into_iter().map(|s| (s.path.clone(), s)).collect();
            (reach, pending)
        });
        // A referrer outside the roots' closure (none in `why`) is scanned on its own.
        let mut scans: Vec<Scanned> = Vec::with_capacity(todo.len());
        let mut outside = Vec::new();
        for p in todo {
            match pending.remove(&p) {
                Some(s) => scans.push(s),
                None => outside.push(p),
            }
        }
        scans.extend(collector.scan(&outside, None));
        use rayon::prelude::*;
        let derived: Vec<PathEvidence> = scans
            .into_par_iter()
            .map(|s| reach.derive(&collector, s))
            .collect();
        for e in derived {
            self.collected.insert(e.path.clone(), e);
        }
    }

    /// Every path collected so far.
    pub(crate) fn collected(&self) -> Vec<&PathEvidence> {
        self.collected.values().collect()
    }

    /// Warnings of the collected paths, with the path.
    pub(crate) fn warnings(&self) -> Vec<WhyWarning> {
        let sd = &self.closure.store_dir;
        self.collected
            .values()
            .flat_map(|e| {
                let path = sd.display(&e.path);
                e.warnings.iter().map(move |w| WhyWarning::Evidence {
                    path: path.clone(),
                    warning: w.clone(),
                })
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
