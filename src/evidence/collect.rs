//! [`Collector`]: the evidence of store paths, scanned through a file source or read
//! from the scan cache, with verdicts from the rule engine.
//!
//! Candidates are a path's registered references plus itself (or, with discovery,
//! every path of the closure); the scanner looks for their hashes the way Nix does.
//! Paths are collected in parallel (and files within a path, by the scanner).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rayon::prelude::*;

use super::cache::ScanCache;
use super::{
    ElfLink, EntryFact, HitFact, HitPlace, JudgedHit, NotScanned, PathEvidence, PathWarning,
    Reference, ScanStatus, ScannedPath, ScannedRef, SearchDir, SearchTag,
};
use crate::classify::{
    hit_verdict, reference_verdict, ClassFacts, ClassRules, EntryType, EvidenceKind, FileClass,
    HitFacts, Verdict,
};
use crate::elf::{ElfFacts, RunpathTag};
use crate::scan::{
    scan_path_files, ElfFactsWhen, FileScan, FileType, ReferenceScanner, RelPath, ScanOptions,
};
use crate::source::{FileSource, SourceError};
use crate::store::{Closure, StoreDir, StorePath};

/// Called after each collected path with its byte count (for progress bars).
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// Collects the evidence of store paths of one closure.
pub struct Collector<'a> {
    closure: &'a Closure,
    source: Option<&'a dyn FileSource>,
    cache: Option<&'a ScanCache>,
    rules: &'a ClassRules,
    /// The rules as the cache key spells them (computed once, not per path).
    rules_key: String,
    /// Every path of the closure, sorted, when discovering.
    discover: Option<Vec<StorePath>>,
    /// Read headers only, look for no references.
    inventory: bool,
}

/// What phase one found for one store path: the scan (fresh or cached), or why there
/// is none.
#[derive(Debug, Clone)]
pub struct Scanned {
    /// The store path.
    pub path: StorePath,
    /// The scan and whether it came from the cache, or why the path was not scanned.
    pub result: Result<(ScannedPath, bool), NotScanned>,
}

/// Answers "does the consumer reach this file of this store path?".
pub type ReachedFn<'a> = &'a (dyn Fn(&RelPath) -> bool + Sync);

fn builtin_rules() -> &'static ClassRules {
    static RULES: std::sync::OnceLock<ClassRules> = std::sync::OnceLock::new();
    RULES.get_or_init(ClassRules::builtin)
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
            rules: builtin_rules(),
            rules_key: format!("{:?}", builtin_rules()),
            discover: None,
            inventory: false,
        }
    }

    /// Take only the inventory of each path: every file's entry, size and class, its
    /// ELF facts and device code, read from headers (a store tree's files are not read
    /// through, so a 1 GB fat binary costs a few reads). No references are looked for.
    /// A full scan in the cache serves as well.
    pub fn inventory_only(mut self, on: bool) -> Collector<'a> {
        self.inventory = on;
        self
    }

    /// Classify files with these rules (default: the built-in table).
    pub fn rules(mut self, rules: &'a ClassRules) -> Collector<'a> {
        self.rules = rules;
        self.rules_key = format!("{rules:?}");
        self
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

    /// The evidence of every path in `paths`, in that order, in parallel, without a
    /// consumer (verdicts from kinds and file classes).
    pub fn collect(
        &self,
        paths: &[StorePath],
        progress: Option<Progress<'_>>,
    ) -> Vec<PathEvidence> {
        self.scan(paths, progress)
            .into_par_iter()
            .map(|s| self.derive(s, None))
            .collect()
    }

    /// The evidence of one store path, without a consumer.
    pub fn path(&self, p: &StorePath) -> PathEvidence {
        let s = self.scan_one(p);
        self.derive(s, None)
    }

    /// Phase one: scan (or read from the cache) every path in `paths`, in parallel.
    pub fn scan(&self, paths: &[StorePath], progress: Option<Progress<'_>>) -> Vec<Scanned> {
        paths
            .par_iter()
            .map(|p| {
                let s = self.scan_one(p);
                if let Some(f) = progress {
                    f(s.result.as_ref().map_or(0, |(s, _)| s.bytes));
                }
                s
            })
            .collect()
    }

    fn registered(&self, p: &StorePath) -> BTreeSet<StorePath> {
        self.closure
            .paths
            .get(p)
            .map(|i| i.references.iter().cloned().collect())
            .unwrap_or_default()
    }

    fn scan_one(&self, p: &StorePath) -> Scanned {
        let sd = &self.closure.store_dir;
        let info = self.closure.paths.get(p);
        let done = |result| Scanned {
            path: p.clone(),
            result,
        };
        let Some(source) = self.source else {
            return done(Err(NotScanned::FilesUnavailable));
        };
        let candidates: Vec<StorePath> = match &self.discover {
            Some(all) => all.clone(),
            None => {
                let mut v: Vec<StorePath> = self.registered(p).into_iter().collect();
                v.push(p.clone());
                v.sort();
                v.dedup();
                v
            }
        };
        let key = |cands: &[StorePath]| {
            self.cache.and_then(|cache| {
                cache.key(
                    p,
                    info.and_then(|i| i.nar_hash.as_ref()),
                    cands,
                    self.rules_key.as_bytes(),
                )
            })
        };
        let cached = |file: &Option<std::path::PathBuf>| {
            let (cache, file) = self.cache.zip(file.as_ref())?;
            cache.get(file, p)
        };
        // A full scan serves an inventory too; an inventory (nothing looked for) has a
        // key of its own, as full scans always look for the path itself.
        let mut cache_file = key(&candidates);
        if let Some(hit) = cached(&cache_file) {
            return done(Ok((hit, true)));
        }
        let candidates = if self.inventory {
            cache_file = key(&[]);
            if let Some(hit) = cached(&cache_file) {
                return done(Ok((hit, true)));
            }
            Vec::new()
        } else {
            candidates
        };
        let result = scan(source, sd, p, &candidates, self.rules);
        if let (Some(cache), Some(file), Ok(s)) = (self.cache, &cache_file, &result) {
            // A cache that cannot be written only costs speed next time.
            let _ = cache.put(file, p, s);
        }
        done(result.map(|s| (s, false)))
    }

    /// Phase two: verdicts for what phase one found; `reached` says which of the
    /// path's files the consumer reaches (none: no consumer).
    pub fn derive(&self, s: Scanned, reached: Option<ReachedFn<'_>>) -> PathEvidence {
        let p = &s.path;
        let registered = self.registered(p);
        match s.result {
            Ok((scanned, cached)) => derive(
                p,
                &registered,
                scanned,
                cached,
                &self.closure.store_dir,
                reached,
            ),
            Err(warning) => PathEvidence {
                path: p.clone(),
                status: ScanStatus::NotScanned,
                references: registered.iter().map(|r| no_evidence(p, r)).collect(),
                warnings: vec![PathWarning::NotScanned(warning)],
                entries: Vec::new(),
            },
        }
    }
}

/// Scan one path through the source; `Err` says why it could not be.
fn scan(
    source: &dyn FileSource,
    sd: &StoreDir,
    p: &StorePath,
    candidates: &[StorePath],
    rules: &ClassRules,
) -> Result<ScannedPath, NotScanned> {
    let full = sd.display(p);
    let files = match source.open(p) {
        Ok(f) => f,
        Err(e @ SourceError::Missing { .. }) => return Err(NotScanned::Missing(e.to_string())),
        Err(e) => return Err(NotScanned::Failed(e.to_string())),
    };
    let scanner = ReferenceScanner::new(candidates);
    // A library the source cannot tell about is taken as absent, as before listings.
    let exists = |abs: &[u8]| source.exists(abs).unwrap_or(false);
    // Without an answer for every path (NARs without listings), RUNPATH entries are
    // kept as needed ("unchecked") and symlink targets are not judged.
    let can_resolve = source.can_resolve();
    let opts = ScanOptions {
        resolver: if can_resolve { Some(&exists) } else { None },
        // Every ELF file, hits or not: reachability follows DT_NEEDED through them all.
        elf_facts: ElfFactsWhen::Always,
        ..ScanOptions::default()
    };
    let scan = scan_path_files(files, &full, &scanner, &opts)
        .map_err(|e| NotScanned::Failed(e.to_string()))?;
    let mut entries: Vec<EntryFact> = scan.files.iter().map(|f| entry_fact(f, rules)).collect();
    let index: HashMap<&[u8], usize> = scan
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_bytes(), i))
        .collect();
    let mut by_ref: BTreeMap<u32, Vec<HitFact>> = BTreeMap::new();
    for (candidate, mut fact) in scan.evidence {
        if matches!(fact.kind, EvidenceKind::Script | EvidenceKind::ElfString) {
            if let (Some(&i), Some(target)) = (
                index.get(fact.file.as_bytes()),
                candidates.get(candidate as usize),
            ) {
                if let Some(name) = named_path(sd, fact.detail.around(), target) {
                    if !entries[i].names.contains(&name) {
                        entries[i].names.push(name);
                    }
                }
            }
        }
        fact.target_exists = match fact.detail.symlink_target() {
            Some(t) if can_resolve && fact.kind == EvidenceKind::Symlink && t.starts_with(b"/") => {
                source.exists(t)
            }
            _ => None,
        };
        by_ref.entry(candidate).or_default().push(fact);
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
        complete: scan.nar_size.is_some(),
        indexes: scan
            .files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| Some((i as u32, f.index.clone()?)))
            .collect(),
        config_texts: scan
            .files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| Some((i as u32, f.config_text.clone()?)))
            .collect(),
        warnings: scan.warnings,
        entries,
    })
}

/// The inventory entry of one scanned file.
fn entry_fact(f: &FileScan, rules: &ClassRules) -> EntryFact {
    let entry = match f.file_type {
        FileType::Regular => EntryType::Regular,
        FileType::Executable => EntryType::Executable,
        FileType::Symlink => EntryType::Symlink,
        FileType::Directory => EntryType::Directory,
    };
    let (class, class_rule) = rules.class_of(&ClassFacts {
        path: f.path.as_bytes(),
        entry,
        head: &f.head,
        elf: f.elf.as_ref(),
    });
    let shebang = f.head.strip_prefix(b"#!").and_then(|rest| {
        let line = rest.split(|&b| b == b'\n').next()?;
        let interp = line
            .split(|b| b.is_ascii_whitespace())
            .find(|t| !t.is_empty())?;
        Some(interp.to_vec())
    });
    EntryFact {
        path: f.path.clone(),
        entry,
        size: f.size,
        class,
        class_rule,
        symlink_target: f.symlink_target.clone(),
        elf: f.elf.as_ref().map(elf_link),
        shebang,
        names: Vec::new(),
        device: match (&f.elf, &f.bundle) {
            (Some(e), _) => e.gpu.objects.clone(),
            (None, Some(b)) => b.objects.clone(),
            (None, None) => Vec::new(),
        },
    }
}

/// The loader's view of an ELF file: `DT_RUNPATH` entries when there are any (the
/// loader then ignores `DT_RPATH`), else `DT_RPATH` entries.
fn elf_link(e: &ElfFacts) -> ElfLink {
    let has_runpath = e.runpath.iter().any(|r| r.tag == RunpathTag::Runpath);
    ElfLink {
        interpreter: e.interpreter.as_ref().map(|i| i.value.clone()),
        needed: e.needed.iter().map(|n| n.value.clone()).collect(),
        soname: e.soname.as_ref().map(|s| s.value.clone()),
        search: e
            .runpath
            .iter()
            .filter(|r| (r.tag == RunpathTag::Runpath) == has_runpath)
            .map(|r| SearchDir {
                tag: match r.tag {
                    RunpathTag::Runpath => SearchTag::Runpath,
                    RunpathTag::Rpath => SearchTag::Rpath,
                },
                dir: r.dir.clone(),
            })
            .collect(),
        dlopen: e.dlopen.clone(),
        data_paths: e.data_paths.clone(),
    }
}

/// The absolute path into the store that the bytes around a hit name around
/// `target`'s hash: from the store directory prefix to the first byte that cannot be in
/// a path. `None` for a bare hash.
fn named_path(sd: &StoreDir, around: &[u8], target: &StorePath) -> Option<Vec<u8>> {
    let at = memchr::memmem::find(around, target.hash_part().as_bytes())?;
    let prefix = format!("{}/", sd.as_str());
    let start = at.checked_sub(prefix.len())?;
    if &around[start..at] != prefix.as_bytes() {
        return None;
    }
    let is_path = |b: u8| b.is_ascii_alphanumeric() || b"+._?=/-".contains(&b);
    let end = around[at..]
        .iter()
        .position(|&b| !is_path(b))
        .map_or(around.len(), |i| at + i);
    Some(around[start..end].to_vec())
}

/// Verdicts for what a scan found, and the registered references it did not find.
fn derive(
    p: &StorePath,
    registered: &BTreeSet<StorePath>,
    scanned: ScannedPath,
    cached: bool,
    sd: &StoreDir,
    reached: Option<ReachedFn<'_>>,
) -> PathEvidence {
    let classes: HashMap<&[u8], &FileClass> = scanned
        .entries
        .iter()
        .map(|e| (e.path.as_bytes(), &e.class))
        .collect();
    let mut seen = BTreeSet::new();
    let mut references: Vec<Reference> = Vec::with_capacity(scanned.references.len());
    for r in scanned.references {
        seen.insert(r.target.clone());
        let hits: Vec<JudgedHit> = r
            .hits
            .into_iter()
            .map(|fact| {
                let class = classes.get(fact.file.as_bytes()).copied();
                let place = HitPlace {
                    class: class.cloned().unwrap_or(FileClass::Out),
                    reached: reached.map(|f| f(&fact.file)),
                };
                let (verdict, rule) = hit_verdict(&HitFacts {
                    kind: fact.kind,
                    file_name: fact.file.name(),
                    target_exists: fact.target_exists,
                    class,
                    reached: place.reached,
                });
                JudgedHit {
                    fact,
                    place,
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
    let mut warnings: Vec<PathWarning> = scanned
        .warnings
        .into_iter()
        .map(PathWarning::Scan)
        .collect();
    for r in registered {
        if !seen.contains(r) {
            warnings.push(PathWarning::RegisteredUnseen {
                target: sd.display(r),
                complete: scanned.complete,
            });
            references.push(no_evidence(p, r));
        }
    }
    if scanned.capped_total > 0 {
        warnings.push(PathWarning::CappedHits {
            hits: scanned.capped_total,
        });
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
        entries: scanned.entries,
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
