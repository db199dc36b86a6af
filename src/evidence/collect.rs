//! [`Collector`]: the evidence of store paths, scanned through a file source or read
//! from the scan cache, with verdicts from the rule engine.
//!
//! Candidates are a path's registered references plus itself (or, with discovery,
//! every path of the closure); the scanner looks for their hashes the way Nix does.
//! Paths are collected in parallel (and files within a path, by the scanner).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rayon::prelude::*;

use super::cache::ScanCache;
use super::{Hit, HitFact, PathEvidence, Reference, ScanStatus, ScannedPath, ScannedRef};
use crate::classify::{hit_verdict, reference_verdict, EvidenceKind, HitFacts, Verdict};
use crate::scan::{scan_path_files, FileType, ReferenceScanner, ScanOptions};
use crate::source::{FileSource, SourceError};
use crate::store::{Closure, StorePath};

/// Called after each collected path with its byte count (for progress bars).
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// Collects the evidence of store paths of one closure.
pub struct Collector<'a> {
    closure: &'a Closure,
    source: Option<&'a dyn FileSource>,
    cache: Option<&'a ScanCache>,
    /// Every path of the closure, sorted, when discovering.
    discover: Option<Vec<StorePath>>,
}

impl<'a> Collector<'a> {
    /// A collector reading files from `source` (none: graph-level evidence only) and
    /// caching scans in `cache`.
    pub fn new(
        closure: &'a Closure,
        source: Option<&'a dyn FileSource>,
        cache: Option<&'a ScanCache>,
    ) -> Collector<'a> {
        Collector {
            closure,
            source,
            cache,
            discover: None,
        }
    }

    /// Look for the hash of every path of the closure, not only registered references.
    pub fn discover(mut self, on: bool) -> Collector<'a> {
        self.discover = on.then(|| {
            let mut all: Vec<StorePath> = self.closure.paths.keys().cloned().collect();
            all.sort();
            all
        });
        self
    }

    /// The evidence of every path in `paths`, in that order, in parallel.
    pub fn collect(
        &self,
        paths: &[StorePath],
        progress: Option<Progress<'_>>,
    ) -> Vec<PathEvidence> {
        paths
            .par_iter()
            .map(|p| {
                let e = self.path(p);
                if let Some(f) = progress {
                    f(e.bytes_scanned());
                }
                e
            })
            .collect()
    }

    /// The evidence of one store path.
    pub fn path(&self, p: &StorePath) -> PathEvidence {
        let sd = &self.closure.store_dir;
        let info = self.closure.paths.get(p);
        let registered: BTreeSet<StorePath> = info
            .map(|i| i.references.iter().cloned().collect())
            .unwrap_or_default();
        let unscanned = |warning: String| PathEvidence {
            path: p.clone(),
            status: ScanStatus::NotScanned,
            references: registered.iter().map(|r| no_evidence(p, r)).collect(),
            warnings: vec![warning],
        };
        let Some(source) = self.source else {
            return unscanned("files unavailable: references are from the graph only".to_string());
        };
        let candidates: Vec<StorePath> = match &self.discover {
            Some(all) => all.clone(),
            None => {
                let mut v: Vec<StorePath> = registered.iter().cloned().collect();
                v.push(p.clone());
                v.sort();
                v.dedup();
                v
            }
        };
        let cache_file = self
            .cache
            .and_then(|cache| cache.key(p, info.and_then(|i| i.nar_hash.as_ref()), &candidates));
        let (scanned, cached) = match (self.cache, &cache_file) {
            (Some(cache), Some(file)) => match cache.get(file, p) {
                Some(hit) => (hit, true),
                None => match scan(source, sd.display(p), p, &candidates) {
                    Ok(s) => {
                        // A cache that cannot be written only costs speed next time.
                        let _ = cache.put(file, p, &s);
                        (s, false)
                    }
                    Err(w) => return unscanned(w),
                },
            },
            _ => match scan(source, sd.display(p), p, &candidates) {
                Ok(s) => (s, false),
                Err(w) => return unscanned(w),
            },
        };
        derive(p, &registered, scanned, cached, sd)
    }
}

/// Scan one path through the source; `Err` is the warning of an unscanned path.
fn scan(
    source: &dyn FileSource,
    full: String,
    p: &StorePath,
    candidates: &[StorePath],
) -> Result<ScannedPath, String> {
    let files = match source.open(p) {
        Ok(f) => f,
        Err(e @ SourceError::Missing { .. }) => return Err(e.to_string()),
        Err(e) => return Err(format!("cannot scan: {e}")),
    };
    let scanner = ReferenceScanner::new(candidates);
    // A library the source cannot tell about is taken as absent, as before listings.
    let exists = |abs: &[u8]| source.exists(abs).unwrap_or(false);
    // Without an answer for every path (NARs without listings), RUNPATH entries are
    // kept as needed ("unchecked") and symlink targets are not judged.
    let can_resolve = source.can_resolve();
    let opts = ScanOptions {
        resolver: if can_resolve { Some(&exists) } else { None },
        ..ScanOptions::default()
    };
    let scan =
        scan_path_files(files, &full, &scanner, &opts).map_err(|e| format!("cannot scan: {e}"))?;
    let targets: HashMap<&[u8], &[u8]> = scan
        .files
        .iter()
        .filter(|f| f.file_type == FileType::Symlink && !f.hits.is_empty())
        .filter_map(|f| Some((f.path.as_bytes(), f.symlink_target.as_deref()?)))
        .collect();
    let mut by_ref: BTreeMap<u32, Vec<HitFact>> = BTreeMap::new();
    for e in &scan.evidence {
        let symlink_target = (e.kind == EvidenceKind::Symlink)
            .then(|| targets.get(e.file.as_bytes()).map(|t| t.to_vec()))
            .flatten();
        let target_exists = match &symlink_target {
            Some(t) if can_resolve && t.starts_with(b"/") => source.exists(t),
            _ => None,
        };
        by_ref.entry(e.candidate).or_default().push(HitFact {
            file: e.file.clone(),
            location: e.location,
            kind: e.kind,
            kind_rule: e.rule,
            detail: e.detail.clone(),
            symlink_target,
            target_exists,
        });
    }
    let references = by_ref
        .into_iter()
        .filter_map(|(cand, hits)| {
            let target = candidates.get(cand as usize)?.clone();
            let capped = scan
                .files
                .iter()
                .filter(|f| f.capped_hits > 0 && f.hits.iter().any(|h| h.candidate == cand))
                .map(|f| f.capped_hits)
                .sum();
            Some(ScannedRef {
                target,
                hits,
                capped,
            })
        })
        .collect();
    Ok(ScannedPath {
        files: scan.files.len() as u64,
        bytes: scan.files.iter().map(|f| f.size).sum(),
        references,
        capped_total: scan.files.iter().map(|f| f.capped_hits).sum(),
        warnings: scan.warnings,
    })
}

/// Verdicts for what a scan found, and the registered references it did not find.
fn derive(
    p: &StorePath,
    registered: &BTreeSet<StorePath>,
    scanned: ScannedPath,
    cached: bool,
    sd: &crate::store::StoreDir,
) -> PathEvidence {
    let mut seen = BTreeSet::new();
    let mut references: Vec<Reference> = Vec::with_capacity(scanned.references.len());
    for r in scanned.references {
        seen.insert(r.target.clone());
        let hits: Vec<Hit> = r
            .hits
            .into_iter()
            .map(|fact| {
                let (verdict, rule) = hit_verdict(&HitFacts {
                    kind: fact.kind,
                    file_name: fact.file.name(),
                    target_exists: fact.target_exists,
                });
                Hit {
                    fact,
                    verdict,
                    rule,
                }
            })
            .collect();
        let (verdict, rule) = reference_verdict(hits.iter().map(|h| (&h.verdict, h.rule)));
        let mut kinds = BTreeMap::new();
        for h in &hits {
            *kinds.entry(h.fact.kind).or_default() += 1;
        }
        references.push(Reference {
            registered: registered.contains(&r.target),
            self_reference: &r.target == p,
            target: r.target,
            verdict,
            rule,
            capped: r.capped,
            kinds,
            hits,
        });
    }
    let mut warnings = scanned.warnings;
    for r in registered {
        if !seen.contains(r) {
            warnings.push(format!(
                "Nix registered a reference to {} but no file shows its hash",
                sd.display(r)
            ));
            references.push(no_evidence(p, r));
        }
    }
    if scanned.capped_total > 0 {
        warnings.push(format!(
            "{} hit(s) beyond the per-file cap were counted but not listed",
            scanned.capped_total
        ));
    }
    references.sort_by(|a, b| {
        b.verdict
            .cmp(&a.verdict)
            .then_with(|| a.target.to_string().cmp(&b.target.to_string()))
    });
    PathEvidence {
        path: p.clone(),
        status: ScanStatus::Scanned {
            files: scanned.files,
            bytes: scanned.bytes,
            cached,
        },
        references,
        warnings,
    }
}

fn no_evidence(from: &StorePath, target: &StorePath) -> Reference {
    let (verdict, rule) = reference_verdict(std::iter::empty::<(&Verdict, _)>());
    Reference {
        target: target.clone(),
        registered: true,
        self_reference: target == from,
        verdict,
        rule,
        capped: 0,
        kinds: BTreeMap::new(),
        hits: Vec::new(),
    }
}
