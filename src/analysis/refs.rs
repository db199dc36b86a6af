//! `nixcut refs`: scan the files of store paths and say where each reference sits,
//! with a first verdict from the evidence kinds.
//!
//! Files come from the local store (honouring `--store-root`), or from the NARs of a
//! binary cache the closure was loaded from; without either, the report says that
//! evidence is unavailable. Paths are scanned in parallel (and files within a path,
//! by the scanner); results are cached per store path (`cache.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::cache::ScanCache;
use super::why::{load_warnings, pick_roots, source_ref};
use super::AnalysisError;
use crate::classify::{arch_of_name, kind_verdict, EvidenceKind, Verdict};
use crate::load::binary_cache::{nar_locations, CacheEntry};
use crate::report::{EvidenceItem, EvidenceLevel, RefEntry, RefsPath, RefsReport, SCHEMA_VERSION};
use crate::scan::{
    scan_nar_file, scan_store_path, Evidence, ReferenceScanner, Resolver, ScanOptions,
};
use crate::store::{Closure, SourceKind, StoreDir, StorePath};

/// Where the files of the closure's paths are.
#[derive(Debug, Clone)]
pub enum FileSource {
    /// Directory trees under `<store_root><store_dir>/`.
    Store { physical_dir: PathBuf },
    /// NAR files of a binary cache.
    Cache {
        dir: PathBuf,
        entries: BTreeMap<StorePath, CacheEntry>,
    },
    /// No files: graph-level answers only.
    Unavailable,
}

impl FileSource {
    /// Find the files for `closure`: the binary cache it came from, else the store
    /// directory (under `store_root` when given) if its paths exist there.
    pub fn locate(closure: &Closure, store_root: Option<&Path>) -> FileSource {
        if closure.source == SourceKind::BinaryCache {
            let dir = PathBuf::from(&closure.origin);
            if let Ok(entries) = nar_locations(&dir) {
                if entries
                    .values()
                    .any(|e| e.nar_file(&dir).is_some_and(|f| f.is_file()))
                {
                    return FileSource::Cache { dir, entries };
                }
            }
        }
        let physical_dir = physical(&closure.store_dir, store_root);
        let present = closure
            .paths
            .keys()
            .take(16)
            .any(|p| physical_dir.join(p.to_string()).symlink_metadata().is_ok());
        if present {
            FileSource::Store { physical_dir }
        } else {
            FileSource::Unavailable
        }
    }

    fn label(&self) -> &'static str {
        match self {
            FileSource::Store { .. } => "store",
            FileSource::Cache { .. } => "nar",
            FileSource::Unavailable => "unavailable",
        }
    }
}

fn physical(store_dir: &StoreDir, store_root: Option<&Path>) -> PathBuf {
    match store_root {
        Some(r) => r.join(store_dir.as_str().trim_start_matches('/')),
        None => PathBuf::from(store_dir.as_str()),
    }
}

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
    /// `--store-root`.
    pub store_root: Option<PathBuf>,
    /// The scan cache; `None` disables it (`--no-cache`).
    pub cache: Option<ScanCache>,
}

/// Called after each scanned path with its byte count (for progress bars).
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// Scan and report the references of the requested paths.
pub fn refs(
    c: &Closure,
    opts: &RefsOptions,
    progress: Option<Progress<'_>>,
) -> Result<RefsReport, AnalysisError> {
    let targets: Vec<StorePath> = if opts.closure || opts.paths.is_empty() {
        let roots = pick_roots(c, opts.root.as_deref())?;
        c.restrict_to(&roots).paths.keys().cloned().collect()
    } else {
        let mut v = Vec::new();
        for q in &opts.paths {
            v.push(c.select_root(q)?);
        }
        v.dedup();
        v
    };
    let files = FileSource::locate(c, opts.store_root.as_deref());
    let all_paths: Vec<StorePath> = c.paths.keys().cloned().collect();
    let sd = &c.store_dir;
    let paths: Vec<RefsPath> = targets
        .par_iter()
        .map(|p| {
            let r = refs_of_path(c, p, &files, opts, &all_paths);
            if let Some(f) = progress {
                f(r.bytes_scanned);
            }
            r
        })
        .collect();
    let mut warnings = load_warnings(c);
    if matches!(files, FileSource::Unavailable) {
        warnings.push(format!(
            "the files of these paths are not available (not in {}, no NARs in the input): evidence is graph-level only; use --store-root or a binary cache with nar/",
            physical(sd, opts.store_root.as_deref()).display()
        ));
    }
    Ok(RefsReport {
        schema_version: SCHEMA_VERSION,
        source: source_ref(c),
        evidence: if matches!(files, FileSource::Unavailable) {
            EvidenceLevel::Graph
        } else {
            EvidenceLevel::Files
        },
        files_from: files.label().to_string(),
        discover: opts.discover,
        paths,
        warnings,
    })
}

/// Scan one path (or take it from the cache) and build its entry.
pub fn refs_of_path(
    c: &Closure,
    p: &StorePath,
    files: &FileSource,
    opts: &RefsOptions,
    all_paths: &[StorePath],
) -> RefsPath {
    let sd = &c.store_dir;
    let info = c.paths.get(p);
    let registered: BTreeSet<StorePath> = info
        .map(|i| i.references.iter().cloned().collect())
        .unwrap_or_default();
    let mut candidates: Vec<StorePath> = if opts.discover {
        all_paths.to_vec()
    } else {
        let mut v: Vec<StorePath> = registered.iter().cloned().collect();
        v.push(p.clone());
        v
    };
    candidates.sort();
    candidates.dedup();
    let full = sd.display(p);
    let unscanned = |warning: String| RefsPath {
        path: full.clone(),
        scanned: false,
        cached: false,
        files_scanned: 0,
        bytes_scanned: 0,
        references: registered
            .iter()
            .map(|r| no_evidence_entry(sd, p, r))
            .collect(),
        warnings: vec![warning],
    };
    if matches!(files, FileSource::Unavailable) {
        return unscanned("files unavailable: references are from the graph only".to_string());
    }
    let cache_file = opts.cache.as_ref().and_then(|cache| {
        cache.key(
            p,
            info.and_then(|i| i.nar_hash.as_ref()),
            &candidates,
            &format!("max_evidence={:?}", opts.max_evidence),
        )
    });
    if let (Some(cache), Some(file)) = (&opts.cache, &cache_file) {
        if let Some(mut hit) = cache.get(file, &full) {
            hit.cached = true;
            return hit;
        }
    }
    let scanner = ReferenceScanner::new(&candidates);
    let physical_dir = match files {
        FileSource::Store { physical_dir } => Some(physical_dir.clone()),
        _ => None,
    };
    let listings = match files {
        FileSource::Cache { dir, .. } => Some(NarListings::new(dir, sd)),
        _ => None,
    };
    let resolver = move |abs: &str| -> bool {
        // A DT_NEEDED library resolves if the file exists in the store: only paths
        // inside the store directory are looked at, through its physical location,
        // or through the binary cache's NAR listings.
        match (&physical_dir, &listings, abs.strip_prefix(sd.as_str())) {
            (Some(dir), _, Some(rest)) if rest.starts_with('/') => {
                std::fs::metadata(dir.join(rest.trim_start_matches('/'))).is_ok()
            }
            (None, Some(l), _) => l.exists(abs),
            _ => false,
        }
    };
    // With NARs and no listings nothing can tell whether a library exists elsewhere:
    // the scanner then keeps RUNPATH entries as needed ("unchecked").
    let can_resolve = match files {
        FileSource::Cache { dir, entries } => entries
            .keys()
            .all(|p| dir.join(format!("{}.ls", p.hash_part())).is_file()),
        _ => true,
    };
    let scan_opts = ScanOptions {
        resolver: if can_resolve { Some(&resolver) } else { None },
        ..ScanOptions::default()
    };
    let result = match files {
        FileSource::Store { .. } => {
            scan_store_path(sd, opts.store_root.as_deref(), p, &scanner, &scan_opts)
        }
        FileSource::Cache { dir, entries } => match entries.get(p).and_then(|e| e.nar_file(dir)) {
            Some(nar) => scan_nar_file(&nar, Some(&full), &scanner, &scan_opts),
            None => return unscanned(format!("no NAR for {full} in the binary cache")),
        },
        FileSource::Unavailable => unreachable!("handled above"),
    };
    let scan = match result {
        Ok(s) => s,
        Err(e) => return unscanned(format!("cannot scan: {e}")),
    };
    let mut by_ref: BTreeMap<u32, Vec<&Evidence>> = BTreeMap::new();
    for e in &scan.evidence {
        by_ref.entry(e.candidate).or_default().push(e);
    }
    let mut capped_total = 0;
    for f in &scan.files {
        capped_total += f.capped_hits;
    }
    let mut references: Vec<RefEntry> = Vec::new();
    let mut seen = BTreeSet::new();
    for (cand, evs) in &by_ref {
        let Some(target) = candidates.get(*cand as usize) else {
            continue;
        };
        seen.insert(target.clone());
        let capped: u64 = scan
            .files
            .iter()
            .filter(|f| f.capped_hits > 0 && f.hits.iter().any(|h| h.candidate == *cand))
            .map(|f| f.capped_hits)
            .sum();
        references.push(entry_from_evidence(
            sd,
            p,
            target,
            evs,
            registered.contains(target),
            capped,
            opts.max_evidence,
            scan_opts.resolver,
        ));
    }
    let mut warnings = scan.warnings.clone();
    for r in &registered {
        if !seen.contains(r) {
            warnings.push(format!(
                "Nix registered a reference to {} but no file shows its hash",
                sd.display(r)
            ));
            references.push(no_evidence_entry(sd, p, r));
        }
    }
    if capped_total > 0 {
        warnings.push(format!(
            "{capped_total} hit(s) beyond the per-file cap were counted but not listed"
        ));
    }
    references.sort_by(|a, b| {
        let va = Verdict::parse(&a.verdict).unwrap_or(Verdict::Unknown);
        let vb = Verdict::parse(&b.verdict).unwrap_or(Verdict::Unknown);
        vb.cmp(&va).then(a.path.cmp(&b.path))
    });
    let out = RefsPath {
        path: full.clone(),
        scanned: true,
        cached: false,
        files_scanned: scan.files.len() as u64,
        bytes_scanned: scan.files.iter().map(|f| f.size).sum(),
        references,
        warnings,
    };
    if let (Some(cache), Some(file)) = (&opts.cache, &cache_file) {
        // A cache that cannot be written only costs speed next time.
        let _ = cache.put(file, &out);
    }
    out
}

/// The `<hash>.ls` file listings of a binary cache, read on demand, answering whether
/// a file exists in a store path without its NAR.
struct NarListings {
    dir: PathBuf,
    store_dir: StoreDir,
    parsed: std::sync::Mutex<BTreeMap<String, Option<serde_json::Value>>>,
}

impl NarListings {
    fn new(dir: &Path, store_dir: &StoreDir) -> NarListings {
        NarListings {
            dir: dir.to_path_buf(),
            store_dir: store_dir.clone(),
            parsed: std::sync::Mutex::new(BTreeMap::new()),
        }
    }

    /// Whether the absolute path names an entry (file, directory or symlink) of a
    /// store path in the cache. Unknown store paths and unreadable listings: false.
    fn exists(&self, abs: &str) -> bool {
        let Ok((p, sub)) = self.store_dir.split_path(abs) else {
            return false;
        };
        let hash = p.hash_part().to_string();
        let mut cache = self.parsed.lock().unwrap_or_else(|e| e.into_inner());
        let listing = cache.entry(hash.clone()).or_insert_with(|| {
            let text = std::fs::read(self.dir.join(format!("{hash}.ls"))).ok()?;
            serde_json::from_slice::<serde_json::Value>(&text).ok()
        });
        let Some(root) = listing.as_ref().map(|l| &l["root"]) else {
            return false;
        };
        let mut node = root;
        for part in sub.split('/').filter(|c| !c.is_empty()) {
            match node.get("entries").and_then(|e| e.get(part)) {
                Some(next) => node = next,
                None => return false,
            }
        }
        node.get("type").is_some()
    }
}

/// The verdict of one piece of evidence: kind rules, refined by the GPU architecture
/// of a symlink's name (a per-architecture kernel file is needed only on that GPU).
/// `exists` answers whether an absolute store path exists, when that can be known.
pub fn evidence_verdict(e: &Evidence, exists: Option<&Resolver<'_>>) -> (Verdict, &'static str) {
    let (v, rule) = kind_verdict(e.kind);
    if e.kind == EvidenceKind::Symlink {
        if let Some(exists) = exists {
            if e.detail.starts_with('/') && !exists(&e.detail) {
                return (Verdict::Removable, "symlink/dangling");
            }
        }
        if let Some(arch) = arch_of_name(e.file.name()) {
            return (Verdict::Gpu(arch), "name/gpu-arch");
        }
    }
    (v, rule)
}

#[allow(clippy::too_many_arguments)]
fn entry_from_evidence(
    sd: &StoreDir,
    from: &StorePath,
    target: &StorePath,
    evs: &[&Evidence],
    registered: bool,
    capped: u64,
    max_evidence: Option<usize>,
    exists: Option<&Resolver<'_>>,
) -> RefEntry {
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    let mut items = Vec::with_capacity(evs.len());
    let mut best: Option<(Verdict, &'static str)> = None;
    let mut gpu_archs: BTreeSet<String> = BTreeSet::new();
    for e in evs {
        *kinds.entry(e.kind.as_str().to_string()).or_default() += 1;
        let (v, rule) = evidence_verdict(e, exists);
        if let Verdict::Gpu(a) = &v {
            gpu_archs.insert(a.clone());
        }
        if best.as_ref().is_none_or(|(b, _)| v > *b) {
            best = Some((v.clone(), rule));
        }
        if max_evidence.is_none_or(|m| items.len() < m) {
            items.push(EvidenceItem {
                file: e.file.to_string(),
                offset: e.offset(),
                kind: e.kind.as_str().to_string(),
                detail: e.detail.clone(),
                verdict: v.to_string(),
                rule: if e.rule.is_empty() {
                    rule.to_string()
                } else {
                    format!("{rule} ({})", e.rule)
                },
            });
        }
    }
    let (mut verdict, rule) = best.unwrap_or((Verdict::Unknown, "no-evidence"));
    if let Verdict::Gpu(_) = verdict {
        // Needed on several architectures: name them all.
        verdict = Verdict::Gpu(gpu_archs.into_iter().collect::<Vec<_>>().join(","));
    }
    RefEntry {
        path: sd.display(target),
        verdict: verdict.to_string(),
        rule: rule.to_string(),
        registered,
        self_reference: target == from,
        evidence_count: evs.len() as u64 + capped,
        capped,
        kinds,
        evidence: items,
    }
}

fn no_evidence_entry(sd: &StoreDir, from: &StorePath, target: &StorePath) -> RefEntry {
    RefEntry {
        path: sd.display(target),
        verdict: Verdict::Unknown.to_string(),
        rule: "no-evidence".to_string(),
        registered: true,
        self_reference: target == from,
        evidence_count: 0,
        capped: 0,
        kinds: BTreeMap::new(),
        evidence: Vec::new(),
    }
}
