//! `nixcut gpu ROOT [--gpu-targets …]`: what each GPU architecture costs in ROOT's
//! closure, from the file inventory of every path (`crate::evidence`, headers only: a
//! fat binary's bundle and fatbin headers give its code objects' sizes without reading
//! the code).
//!
//! Each byte of the closure is counted once ([`account`]): a per-architecture file (a
//! bare code object, a single-target bundle, a file the class rules give `gpu:<arch>`)
//! goes to its architecture whole; a fat binary's code objects go to their targets'
//! base architectures (xnack and sramecc variants grouped), the rest of it is host code;
//! a multi-target bundle file's rest and `gpu-generic` files are generic; everything
//! else, NAR framing included, is host.
//!
//! With `--gpu-targets`, [`after`] drops the per-architecture files of other targets,
//! subtracts other targets' code objects from fat binaries (an estimate: what a rebuild
//! with fewer targets would leave), and walks ROOT's closure again without the edges
//! whose every hit lay in a dropped file or named one. A store path holding nothing but
//! other targets' files is dropped with every edge to it: a rebuild for the kept targets
//! would not make it. Cost: O(paths + entries + references) plus a full scan (cached)
//! of the paths that lose files and of the paths that refer to them.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use super::common::{load_warnings, pick_roots, source_ref};
use super::split::{fact_sub_path, nar_size_of, nix_string};
use super::AnalysisError;
use crate::classify::{base_arch, ClassRules, EntryType, FileClass};
use crate::elf::{DeviceContainer, DeviceObject};
use crate::evidence::{Collector, EntryFact, PathWarning, Progress, ScanCache, ScannedPath};
use crate::report::{
    GpuArch, GpuChange, GpuOption, GpuPath, GpuRemedy, GpuReport, GpuVendor, GpuWarning,
    SCHEMA_VERSION,
};
use crate::source::Files;
use crate::store::{parse_package_name, Closure, StorePath};

/// Options of `nixcut gpu`.
#[derive(Debug, Clone, Default)]
pub struct GpuOptions {
    /// `--root`: which root of a multi-root input.
    pub root: Option<String>,
    /// `--gpu-targets`: keep only these (any spelling [`normalise_target`] takes).
    pub gpu_targets: Vec<String>,
    /// Where the files are.
    pub files: Files,
    /// The scan cache; `None` disables it.
    pub cache: Option<ScanCache>,
    /// The file-class rules in force.
    pub rules: ClassRules,
}

/// How one entry's bytes divide among architectures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryGpu<'a> {
    /// Host code or data: no GPU bytes.
    Host,
    /// The whole entry belongs to one base architecture.
    PerArch(String),
    /// Data every architecture needs.
    Generic,
    /// Code objects of several targets inside one file: each part's `stored` bytes go
    /// to its base architecture; the rest of the file is host code (`host_elf`) or
    /// generic (a multi-target bundle file).
    Fat {
        host_elf: bool,
        parts: Vec<(String, &'a DeviceObject)>,
    },
}

/// How [`EntryFact`] `e`'s bytes divide among architectures: its device code first
/// (content), then its class.
pub fn entry_gpu(e: &EntryFact) -> EntryGpu<'_> {
    if matches!(e.entry, EntryType::Regular | EntryType::Executable) && !e.device.is_empty() {
        let parts: Vec<(String, &DeviceObject)> =
            e.device.iter().map(|d| (base_arch(&d.target), d)).collect();
        let whole = e
            .device
            .iter()
            .all(|d| d.container == DeviceContainer::CodeObject);
        let host_elf = e.elf.is_some() && !whole;
        let mut bases: Vec<&str> = parts.iter().map(|(b, _)| b.as_str()).collect();
        bases.sort_unstable();
        bases.dedup();
        if !host_elf && bases.len() == 1 {
            return EntryGpu::PerArch(bases[0].to_string());
        }
        return EntryGpu::Fat { host_elf, parts };
    }
    if e.entry == EntryType::Directory {
        return EntryGpu::Host;
    }
    match &e.class {
        FileClass::Gpu(a) => EntryGpu::PerArch(a.clone()),
        FileClass::GpuGeneric => EntryGpu::Generic,
        _ => EntryGpu::Host,
    }
}

/// One architecture's share of one store path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArchShare {
    pub file_bytes: u64,
    pub elf_bytes: u64,
    pub code_bytes: u64,
    pub files: u64,
    pub links: u64,
    pub targets: BTreeSet<String>,
}

impl ArchShare {
    /// Bytes of files and code objects.
    pub fn bytes(&self) -> u64 {
        self.file_bytes.saturating_add(self.elf_bytes)
    }
}

/// What one store path's entries hold for each architecture.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Account {
    pub archs: BTreeMap<String, ArchShare>,
    pub generic_bytes: u64,
    pub generic_files: u64,
    pub fat_binaries: u64,
}

impl Account {
    /// Bytes of every architecture.
    pub fn gpu_bytes(&self) -> u64 {
        self.archs
            .values()
            .fold(0, |acc, s| acc.saturating_add(s.bytes()))
    }
}

/// Account for the entries of one store path. Never more than the entries' sizes:
/// parts of a fat binary that claim more than the file holds are capped at it.
pub fn account(entries: &[EntryFact]) -> Account {
    let mut a = Account::default();
    for e in entries {
        let is_link = e.entry == EntryType::Symlink;
        match entry_gpu(e) {
            EntryGpu::Host => {}
            EntryGpu::PerArch(arch) => {
                let s = a.archs.entry(arch).or_default();
                if is_link {
                    s.links += 1;
                } else {
                    s.file_bytes = s.file_bytes.saturating_add(e.size);
                    s.files += 1;
                    s.targets.extend(e.device.iter().map(|d| d.target.clone()));
                    s.code_bytes = e
                        .device
                        .iter()
                        .fold(s.code_bytes, |acc, d| acc.saturating_add(d.code));
                }
            }
            EntryGpu::Generic => {
                if !is_link {
                    a.generic_bytes = a.generic_bytes.saturating_add(e.size);
                    a.generic_files += 1;
                }
            }
            EntryGpu::Fat { host_elf, parts } => {
                a.fat_binaries += 1;
                let mut left = e.size;
                let mut seen: BTreeSet<&str> = BTreeSet::new();
                for (arch, d) in &parts {
                    let stored = d.stored.min(left);
                    left -= stored;
                    let s = a.archs.entry(arch.clone()).or_default();
                    s.elf_bytes = s.elf_bytes.saturating_add(stored);
                    s.code_bytes = s.code_bytes.saturating_add(d.code);
                    s.targets.insert(d.target.clone());
                    if seen.insert(arch) {
                        s.files += 1;
                    }
                }
                if !host_elf {
                    a.generic_bytes = a.generic_bytes.saturating_add(left);
                    a.generic_files += 1;
                }
            }
        }
    }
    a
}

/// A `--gpu-targets` item as a base architecture: `gfx90a:xnack+` → `gfx90a`,
/// `8.6`, `86`, `sm_86`, `compute_86` → `sm_86`. Lower-cased, trimmed; `None` when empty.
pub fn normalise_target(t: &str) -> Option<String> {
    let t = t.trim().to_ascii_lowercase();
    if t.is_empty() {
        return None;
    }
    let base = base_arch(&t);
    if let Some(n) = base
        .strip_prefix("sm_")
        .or_else(|| base.strip_prefix("compute_"))
    {
        return Some(format!("sm_{n}"));
    }
    if let Some((major, minor)) = base.split_once('.') {
        if !major.is_empty()
            && major.bytes().all(|b| b.is_ascii_digit())
            && minor.bytes().all(|b| b.is_ascii_digit())
        {
            return Some(format!("sm_{major}{minor}"));
        }
    }
    if !base.is_empty() && base.bytes().all(|b| b.is_ascii_digit()) {
        return Some(format!("sm_{base}"));
    }
    Some(base)
}

/// `sm_86` → `8.6` (nixpkgs' `cudaCapabilities` spelling); `sm_100` → `10.0`.
fn capability(arch: &str) -> String {
    let n = arch.strip_prefix("sm_").unwrap_or(arch);
    match n.len() {
        0 | 1 => n.to_string(),
        l => format!("{}.{}", &n[..l - 1], &n[l - 1..]),
    }
}

fn vendor(arch: &str) -> GpuVendor {
    if arch.starts_with("sm_") {
        GpuVendor::Nvidia
    } else {
        GpuVendor::Amd
    }
}

/// Report what each GPU architecture costs in the closure of the root.
pub fn gpu(
    c: &Closure,
    opts: &GpuOptions,
    progress: Option<Progress<'_>>,
) -> Result<GpuReport, AnalysisError> {
    let sd = &c.store_dir;
    let roots = pick_roots(c, opts.root.as_deref())?;
    let sub = c.restrict_to(&roots);
    let mut paths: Vec<StorePath> = sub.paths.keys().cloned().collect();
    paths.sort();
    let mut size = HashMap::new();
    for p in &paths {
        let s = sub.paths[p]
            .nar_size
            .ok_or_else(|| AnalysisError::SizesUnknown {
                origin: c.origin.clone(),
                what: "gpu",
            })?;
        size.insert(p.clone(), s);
    }
    let closure_size: u64 = size.values().sum();
    let mut warnings: Vec<GpuWarning> = load_warnings(c)
        .into_iter()
        .map(GpuWarning::Input)
        .collect();

    let collector = Collector::new(c, opts.files.source(), opts.cache.as_ref())
        .rules(&opts.rules)
        .inventory_only(true);
    let scanned = collector.scan(&paths, progress);
    let mut inventories: HashMap<StorePath, ScannedPath> = HashMap::new();
    let mut unscanned = Vec::new();
    for s in scanned {
        match s.result {
            Ok((sp, _)) => {
                warnings.extend(sp.warnings.iter().filter(|w| w.is_gpu_code()).map(|w| {
                    GpuWarning::Evidence {
                        path: sd.display(&s.path),
                        warning: PathWarning::Scan(w.clone()),
                    }
                }));
                inventories.insert(s.path, sp);
            }
            Err(w) => unscanned.push((s.path, w)),
        }
    }
    // Without any files, the one warning below says so; with some, name what failed.
    if !unscanned.is_empty() && opts.files.source().is_some() {
        let first = &unscanned[0];
        warnings.push(GpuWarning::Unread {
            count: unscanned.len(),
            of: paths.len(),
            example: sd.display(&first.0),
            why: first.1.clone(),
        });
    }
    let accounts: HashMap<&StorePath, Account> = inventories
        .iter()
        .map(|(p, sp)| (p, account(&sp.entries)))
        .collect();

    // Per architecture and per path.
    let mut archs: BTreeMap<String, (ArchShare, Vec<String>)> = BTreeMap::new();
    let mut rows = Vec::new();
    let (mut generic_bytes, mut generic_files, mut host_bytes) = (0u64, 0u64, 0u64);
    let unscanned_bytes: u64 = unscanned.iter().map(|(p, _)| size[p]).sum();
    for p in &paths {
        let Some(a) = accounts.get(p) else { continue };
        let nar = size[p];
        // Never more GPU bytes than the path holds (a fat binary's headers may lie).
        if a.gpu_bytes().saturating_add(a.generic_bytes) > nar {
            warnings.push(GpuWarning::MoreThanNar {
                path: sd.display(p),
                bytes: a.gpu_bytes().saturating_add(a.generic_bytes),
                nar,
            });
        }
        let gpu = a.gpu_bytes().min(nar);
        let generic = a.generic_bytes.min(nar - gpu);
        host_bytes += nar - gpu - generic;
        generic_bytes += generic;
        generic_files += a.generic_files;
        for (arch, s) in &a.archs {
            let (t, ps) = archs.entry(arch.clone()).or_default();
            t.file_bytes = t.file_bytes.saturating_add(s.file_bytes);
            t.elf_bytes = t.elf_bytes.saturating_add(s.elf_bytes);
            t.code_bytes = t.code_bytes.saturating_add(s.code_bytes);
            t.files += s.files;
            t.links += s.links;
            t.targets.extend(s.targets.iter().cloned());
            ps.push(sd.display(p));
        }
        if gpu > 0 || generic > 0 {
            rows.push(GpuPath {
                path: sd.display(p),
                size: nar,
                gpu_bytes: gpu,
                generic_bytes: generic,
                host_bytes: nar - gpu - generic,
                archs: a
                    .archs
                    .iter()
                    .map(|(k, s)| (k.clone(), s.bytes()))
                    .collect(),
                fat_binaries: a.fat_binaries,
            });
        }
    }
    rows.sort_by(|x, y| {
        (y.gpu_bytes, y.generic_bytes)
            .cmp(&(x.gpu_bytes, x.generic_bytes))
            .then_with(|| x.path.cmp(&y.path))
    });
    let mut arch_rows: Vec<GpuArch> = archs
        .into_iter()
        .map(|(arch, (s, paths))| GpuArch {
            vendor: vendor(&arch),
            bytes: s.bytes(),
            file_bytes: s.file_bytes,
            elf_bytes: s.elf_bytes,
            code_bytes: s.code_bytes,
            files: s.files,
            links: s.links,
            targets: s.targets.into_iter().collect(),
            paths,
            arch,
        })
        .collect();
    arch_rows.sort_by(|x, y| y.bytes.cmp(&x.bytes).then_with(|| x.arch.cmp(&y.arch)));
    let gpu_bytes = closure_size - generic_bytes - host_bytes - unscanned_bytes;

    let mut report = GpuReport {
        schema_version: SCHEMA_VERSION,
        source: source_ref(c),
        root: sd.display(&roots[0]),
        closure_size,
        path_count: paths.len() as u64,
        files_from: opts.files.kind(),
        archs: arch_rows,
        gpu_bytes,
        generic_bytes,
        generic_files,
        host_bytes,
        unscanned_bytes,
        paths: rows,
        gpu_targets: Vec::new(),
        kept: Vec::new(),
        dropped: Vec::new(),
        closure_size_after: None,
        path_count_after: None,
        estimated: false,
        removed: Vec::new(),
        changed: Vec::new(),
        remedies: Vec::new(),
        warnings: Vec::new(),
    };
    if opts.files.source().is_none() {
        warnings.push(GpuWarning::FilesUnavailable);
    }

    let mut targets: Vec<String> = opts
        .gpu_targets
        .iter()
        .filter_map(|t| normalise_target(t))
        .collect();
    targets.sort();
    targets.dedup();
    if !targets.is_empty() {
        let present: BTreeSet<&str> = report.archs.iter().map(|a| a.arch.as_str()).collect();
        // Without files nothing is known to be absent: the warning above says so.
        let read_any = report.unscanned_bytes < report.closure_size;
        for t in &targets {
            if read_any && !present.contains(t.as_str()) {
                warnings.push(GpuWarning::TargetAbsent { target: t.clone() });
            }
        }
        report.kept = report
            .archs
            .iter()
            .filter(|a| targets.contains(&a.arch))
            .map(|a| a.arch.clone())
            .collect();
        report.dropped = report
            .archs
            .iter()
            .filter(|a| !targets.contains(&a.arch))
            .map(|a| a.arch.clone())
            .collect();
        let kept: HashSet<&str> = targets.iter().map(String::as_str).collect();
        let input = AfterInput {
            closure: &sub,
            roots: &roots,
            size: &size,
            inventories: &inventories,
            kept: &kept,
        };
        let full = |ps: &[StorePath]| -> HashMap<StorePath, ScannedPath> {
            Collector::new(c, opts.files.source(), opts.cache.as_ref())
                .rules(&opts.rules)
                .scan(ps, None)
                .into_iter()
                .filter_map(|s| Some((s.path, s.result.ok()?.0)))
                .collect()
        };
        let a = after(&input, &full);
        report.closure_size_after = Some(a.size);
        report.path_count_after = Some(a.count);
        report.estimated = a.changed.iter().any(|ch| ch.estimated);
        report.removed = a.removed.iter().map(|p| sd.display(p)).collect();
        report.remedies = remedies(c, &a, &targets);
        warnings.extend(no_remedy_warnings(&a, &targets));
        report.changed = a.changed;
        report.gpu_targets = targets;
    }
    report.warnings = warnings;
    Ok(report)
}

/// What [`after`] needs.
struct AfterInput<'a> {
    closure: &'a Closure,
    roots: &'a [StorePath],
    size: &'a HashMap<StorePath, u64>,
    inventories: &'a HashMap<StorePath, ScannedPath>,
    kept: &'a HashSet<&'a str>,
}

/// The closure with only the kept targets.
struct After {
    size: u64,
    count: u64,
    removed: Vec<StorePath>,
    changed: Vec<GpuChange>,
    /// Per path that stays: the bytes the targets save on its account, by vendor: what
    /// it loses itself, and the paths that leave with it (it referred to them).
    saved_by_path: BTreeMap<StorePath, BTreeMap<GpuVendor, u64>>,
}

/// Which entries of one path the targets drop, and its size after.
struct PathCut {
    dropped: HashSet<Vec<u8>>,
    size_after: u64,
    files_dropped: u64,
    objects_dropped: u64,
    /// Dropped bytes by the vendor of their architecture.
    by_vendor: BTreeMap<GpuVendor, u64>,
    estimated: bool,
    /// Every entry other than directories is dropped.
    whole: bool,
}

fn cut(entries: &[EntryFact], nar: u64, kept: &HashSet<&str>) -> PathCut {
    let mut dropped = HashSet::new();
    // Per fat binary: the bytes its other targets' code objects take.
    let mut shrunk: HashMap<usize, u64> = HashMap::new();
    let (mut files_dropped, mut objects_dropped) = (0u64, 0u64);
    let mut by_vendor: BTreeMap<GpuVendor, u64> = BTreeMap::new();
    let mut others = 0u64;
    for (i, e) in entries.iter().enumerate() {
        if e.entry == EntryType::Directory {
            continue;
        }
        match entry_gpu(e) {
            EntryGpu::PerArch(a) if !kept.contains(a.as_str()) => {
                dropped.insert(e.path.as_bytes().to_vec());
                files_dropped += 1;
                let bytes = if e.entry == EntryType::Symlink {
                    0
                } else {
                    e.size
                };
                *by_vendor.entry(vendor(&a)).or_default() += bytes;
            }
            EntryGpu::Fat { parts, .. } => {
                let mut left = e.size;
                let mut n = 0u64;
                for (a, d) in parts.iter().filter(|(a, _)| !kept.contains(a.as_str())) {
                    let gone = d.stored.min(left);
                    left -= gone;
                    n += 1;
                    *by_vendor.entry(vendor(a)).or_default() += gone;
                }
                if n > 0 {
                    shrunk.insert(i, e.size - left);
                    objects_dropped += n;
                }
                others += 1;
            }
            _ => others += 1,
        }
    }
    let estimated = !shrunk.is_empty();
    // Dropped files: exact NAR framing. Fat binaries: their other targets' bytes
    // subtracted as they are (an estimate; a rebuilt file's padding is not known).
    let gone: u64 = shrunk.values().sum();
    let size_after = if dropped.is_empty() {
        nar.saturating_sub(gone)
    } else {
        let all = nar_size_of(entries.iter().map(|e| (e.path.as_bytes(), e.entry, e.size)));
        let left = nar_size_of(
            entries
                .iter()
                .filter(|e| !dropped.contains(e.path.as_bytes()))
                .map(|e| (e.path.as_bytes(), e.entry, e.size)),
        );
        nar.saturating_sub(all.saturating_sub(left))
            .saturating_sub(gone)
    };
    PathCut {
        whole: files_dropped > 0 && others == 0,
        dropped,
        size_after,
        files_dropped,
        objects_dropped,
        by_vendor,
        estimated,
    }
}

fn after(
    input: &AfterInput<'_>,
    full_scan: &dyn Fn(&[StorePath]) -> HashMap<StorePath, ScannedPath>,
) -> After {
    let c = input.closure;
    let cuts: HashMap<&StorePath, PathCut> = input
        .inventories
        .iter()
        .map(|(p, sp)| (p, cut(&sp.entries, input.size[p], input.kept)))
        .collect();
    let has_drops = |p: &StorePath| cuts.get(p).is_some_and(|k| !k.dropped.is_empty());
    // Which referrers' hits must be looked at: those that lose files, and those that
    // refer to a path that loses files (their hits may name a dropped file).
    let mut need: BTreeSet<StorePath> = BTreeSet::new();
    for (p, info) in &c.paths {
        if has_drops(p) || info.references.iter().any(|r| r != p && has_drops(r)) {
            need.insert(p.clone());
        }
    }
    let need: Vec<StorePath> = need.into_iter().collect();
    let hits = if need.is_empty() {
        HashMap::new()
    } else {
        full_scan(&need)
    };
    // Does the edge p -> r survive?
    let keeps = |p: &StorePath, r: &StorePath| -> bool {
        if cuts.get(r).is_some_and(|k| k.whole) {
            return false;
        }
        let dropped_here = cuts.get(p).map(|k| &k.dropped);
        let dropped_there = cuts.get(r).map(|k| &k.dropped);
        let any_dropped = dropped_here.is_some_and(|d| !d.is_empty())
            || dropped_there.is_some_and(|d| !d.is_empty());
        if !any_dropped {
            return true;
        }
        let Some(sp) = hits.get(p) else {
            // Not scanned: nothing says the edge goes.
            return true;
        };
        let Some(sr) = sp.references.iter().find(|x| &x.target == r) else {
            // Registered but no hit found: kept, as Nix would keep it.
            return true;
        };
        sr.hits.iter().any(|h| {
            let in_dropped = dropped_here.is_some_and(|d| d.contains(h.file.as_bytes()));
            let names_dropped = dropped_there.is_some_and(|d| {
                let sub = fact_sub_path(h, r);
                !sub.is_empty() && d.contains(&sub)
            });
            !in_dropped && !names_dropped
        }) || sr.hits.is_empty()
    };
    let mut seen: HashSet<&StorePath> = HashSet::new();
    let mut queue: VecDeque<&StorePath> = VecDeque::new();
    for r in input.roots {
        if seen.insert(r) {
            queue.push_back(r);
        }
    }
    while let Some(p) = queue.pop_front() {
        let Some(info) = c.paths.get(p) else { continue };
        for r in &info.references {
            // A reference the input does not describe is not followed (the loader
            // warned about it).
            if r != p && c.paths.contains_key(r) && !seen.contains(r) && keeps(p, r) {
                seen.insert(r);
                queue.push_back(r);
            }
        }
    }
    let mut removed: Vec<StorePath> = c
        .paths
        .keys()
        .filter(|p| !seen.contains(p))
        .cloned()
        .collect();
    removed.sort();
    let mut size = 0u64;
    let mut changed = Vec::new();
    let mut saved: BTreeMap<StorePath, BTreeMap<GpuVendor, u64>> = BTreeMap::new();
    for p in &seen {
        let before = input.size[*p];
        match cuts.get(*p) {
            Some(k) if k.files_dropped > 0 || k.objects_dropped > 0 => {
                size += k.size_after;
                changed.push(GpuChange {
                    path: c.store_dir.display(p),
                    size_before: before,
                    size_after: k.size_after,
                    files_dropped: k.files_dropped,
                    objects_dropped: k.objects_dropped,
                    estimated: k.estimated,
                });
                let v = saved.entry((*p).clone()).or_default();
                for (vd, b) in &k.by_vendor {
                    *v.entry(*vd).or_default() += b;
                }
            }
            _ => size += before,
        }
    }
    changed.sort_by(|a, b| {
        (b.size_before - b.size_after)
            .cmp(&(a.size_before - a.size_after))
            .then_with(|| a.path.cmp(&b.path))
    });
    // Who took each removed path along: its referrers that stay (the first, in store
    // path order, when several do), found in one pass over the kept paths' references.
    // The vendor is that of the removed path's code.
    let gone: HashSet<&StorePath> = removed.iter().collect();
    let mut taker: HashMap<&StorePath, &StorePath> = HashMap::new();
    for p in &seen {
        let Some(info) = c.paths.get(*p) else {
            continue;
        };
        for x in &info.references {
            if gone.contains(x) {
                let t = taker.entry(x).or_insert(p);
                if *p < *t {
                    *t = p;
                }
            }
        }
    }
    for x in &removed {
        let Some(p) = taker.get(x) else { continue };
        let vd = cuts
            .get(x)
            .and_then(|k| k.by_vendor.iter().max_by_key(|(_, b)| **b).map(|(v, _)| *v))
            .unwrap_or(GpuVendor::Amd);
        *saved
            .entry((*p).clone())
            .or_default()
            .entry(vd)
            .or_default() += input.size[x];
    }
    After {
        size,
        count: seen.len() as u64,
        removed,
        changed,
        saved_by_path: saved,
    }
}

/// Package names whose derivations take `gpuTargets` in nixpkgs' rocmPackages.
const ROCM_LIBRARIES: &[&str] = &[
    "composable_kernel",
    "hipblas",
    "hipblaslt",
    "hipcub",
    "hipfft",
    "hiprand",
    "hipsolver",
    "hipsparse",
    "migraphx",
    "miopen",
    "rccl",
    "rocblas",
    "rocfft",
    "rocprim",
    "rocrand",
    "rocsolver",
    "rocsparse",
    "rocthrust",
    "rocwmma",
    "tensile",
];

/// What no remedy can say: the targets name no architecture of a vendor whose code the
/// closure holds, so that code would all go, and `gpuTargets = [ ]` or
/// `cudaCapabilities = [ ]` is no setting nixpkgs builds.
fn no_remedy_warnings(a: &After, targets: &[String]) -> Vec<GpuWarning> {
    let mut out = Vec::new();
    for vd in [GpuVendor::Amd, GpuVendor::Nvidia] {
        let bytes: u64 = a.saved_by_path.values().filter_map(|by| by.get(&vd)).sum();
        if bytes > 0 && !targets.iter().any(|t| vendor(t) == vd) {
            out.push(GpuWarning::NoRemedy { vendor: vd, bytes });
        }
    }
    out
}

/// Remedies in nixpkgs' terms for what the targets drop: `gpuTargets` for each
/// package whose AMD code shrinks (itself, or store paths that leave with it), one
/// `cudaCapabilities` setting for every package whose CUDA code does.
fn remedies(c: &Closure, a: &After, targets: &[String]) -> Vec<GpuRemedy> {
    let sd = &c.store_dir;
    let amd: Vec<String> = targets
        .iter()
        .filter(|t| vendor(t) == GpuVendor::Amd)
        .cloned()
        .collect();
    let cuda: Vec<String> = targets
        .iter()
        .filter(|t| vendor(t) == GpuVendor::Nvidia)
        .map(|t| capability(t))
        .collect();
    let list = |v: &[String]| {
        v.iter()
            .map(|t| nix_string(t))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = Vec::new();
    let mut nvidia = GpuRemedy {
        option: GpuOption::CudaCapabilities,
        packages: Vec::new(),
        paths: Vec::new(),
        value: cuda.clone(),
        nix: format!(
            "import <nixpkgs> {{ config = {{ cudaSupport = true; cudaCapabilities = [ {} ]; }}; }}",
            list(&cuda)
        ),
        saves: 0,
    };
    for (p, by_vendor) in &a.saved_by_path {
        let pname = parse_package_name(p.name()).pname.to_string();
        for (vd, &bytes) in by_vendor {
            if bytes == 0 {
                continue;
            }
            match vd {
                // No target of that vendor: no setting to propose (see
                // `no_remedy_warnings`).
                GpuVendor::Amd if amd.is_empty() => {}
                GpuVendor::Nvidia if cuda.is_empty() => {}
                GpuVendor::Amd => {
                    let attr = if ROCM_LIBRARIES.contains(&pname.as_str()) {
                        format!("rocmPackages.{pname}")
                    } else {
                        pname.clone()
                    };
                    out.push(GpuRemedy {
                        option: GpuOption::GpuTargets,
                        packages: vec![pname.clone()],
                        paths: vec![sd.display(p)],
                        value: amd.clone(),
                        nix: format!("{attr}.override {{ gpuTargets = [ {} ]; }}", list(&amd)),
                        saves: bytes,
                    });
                }
                GpuVendor::Nvidia => {
                    nvidia.packages.push(pname.clone());
                    nvidia.paths.push(sd.display(p));
                    nvidia.saves += bytes;
                }
            }
        }
    }
    // A package's per-architecture sub-derivations (`rocblas-tensile-gfx10`, as
    // nixpkgs' rocblas builds them) are rebuilt by the package's own gpuTargets.
    out.sort_by_key(|m| m.packages[0].len());
    let names: Vec<String> = out.iter().map(|m| m.packages[0].clone()).collect();
    let mut merged: Vec<GpuRemedy> = Vec::new();
    for m in out {
        let owner = names
            .iter()
            .filter(|n| m.packages[0].starts_with(&format!("{n}-")))
            .min_by_key(|n| n.len());
        match owner.and_then(|o| merged.iter_mut().find(|x| &x.packages[0] == o)) {
            Some(x) => {
                x.paths.extend(m.paths);
                x.saves += m.saves;
            }
            None => merged.push(m),
        }
    }
    let mut out = merged;
    if !nvidia.packages.is_empty() {
        nvidia.packages.sort();
        nvidia.packages.dedup();
        out.push(nvidia);
    }
    out.sort_by(|x, y| {
        y.saves
            .cmp(&x.saves)
            .then_with(|| x.packages.cmp(&y.packages))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::RuleId;
    use crate::scan::RelPath;

    fn e(path: &str, entry: EntryType, size: u64, class: FileClass) -> EntryFact {
        EntryFact {
            path: RelPath::from_bytes(path.as_bytes().to_vec()),
            entry,
            size,
            class,
            class_rule: RuleId::new("test"),
            symlink_target: None,
            elf: None,
            shebang: None,
            names: Vec::new(),
            device: Vec::new(),
        }
    }

    fn obj(target: &str, container: DeviceContainer, stored: u64, code: u64) -> DeviceObject {
        DeviceObject {
            target: target.into(),
            container,
            stored,
            code,
        }
    }

    #[test]
    fn targets_in_every_spelling() {
        for (given, want) in [
            ("gfx90a:xnack+", "gfx90a"),
            (" GFX1030 ", "gfx1030"),
            ("sm_90", "sm_90"),
            ("8.6", "sm_86"),
            ("10.0", "sm_100"),
            ("compute_80", "sm_80"),
            ("86", "sm_86"),
        ] {
            assert_eq!(normalise_target(given).as_deref(), Some(want), "{given}");
        }
        assert_eq!(normalise_target("  "), None);
        assert_eq!(capability("sm_86"), "8.6");
        assert_eq!(capability("sm_100"), "10.0");
        assert_eq!(capability("sm_121"), "12.1");
    }

    #[test]
    fn every_byte_is_counted_once() {
        let mut fat = e("lib/libk.so", EntryType::Regular, 10_000, FileClass::Lib);
        fat.elf = Some(Default::default());
        fat.device = vec![
            obj("gfx90a:xnack+", DeviceContainer::Offload, 3000, 3000),
            obj("gfx90a:xnack-", DeviceContainer::Offload, 2000, 2000),
            obj("gfx1030", DeviceContainer::Offload, 1000, 1000),
        ];
        let mut bundle2 = e("lib/k.co", EntryType::Regular, 500, FileClass::GpuGeneric);
        bundle2.device = vec![
            obj("gfx900", DeviceContainer::Compressed, 200, 800),
            obj("gfx1030", DeviceContainer::Compressed, 100, 400),
        ];
        let mut bare = e("lib/k-gfx906.co", EntryType::Regular, 77, FileClass::Lib);
        bare.device = vec![obj("gfx906:xnack-", DeviceContainer::CodeObject, 77, 77)];
        let entries = vec![
            e("", EntryType::Directory, 0, FileClass::Out),
            fat,
            bundle2,
            bare,
            e(
                "lib/x_gfx942.dat",
                EntryType::Regular,
                40,
                FileClass::Gpu("gfx942".into()),
            ),
            e(
                "lib/link_gfx942",
                EntryType::Symlink,
                9,
                FileClass::Gpu("gfx942".into()),
            ),
            e(
                "lib/TensileLibrary.dat",
                EntryType::Regular,
                60,
                FileClass::GpuGeneric,
            ),
            e("bin/tool", EntryType::Executable, 1234, FileClass::Bin),
        ];
        let a = account(&entries);
        assert_eq!(a.archs["gfx90a"].elf_bytes, 5000);
        assert_eq!(a.archs["gfx90a"].files, 1);
        assert_eq!(
            a.archs["gfx90a"].targets.iter().collect::<Vec<_>>(),
            ["gfx90a:xnack+", "gfx90a:xnack-"]
        );
        assert_eq!(a.archs["gfx1030"].elf_bytes, 1100);
        assert_eq!(a.archs["gfx1030"].code_bytes, 1400);
        assert_eq!(a.archs["gfx900"].elf_bytes, 200);
        assert_eq!(a.archs["gfx906"].file_bytes, 77);
        assert_eq!(a.archs["gfx942"].file_bytes, 40);
        assert_eq!(a.archs["gfx942"].links, 1);
        // The bundle's header and the generic Tensile file.
        assert_eq!(a.generic_bytes, 200 + 60);
        assert_eq!(a.fat_binaries, 2);
        assert_eq!(a.gpu_bytes(), 5000 + 1100 + 200 + 77 + 40);

        let kept: HashSet<&str> = ["gfx1030"].into_iter().collect();
        let k = cut(&entries, 99_999, &kept);
        assert!(k.estimated);
        assert_eq!(k.files_dropped, 3); // bare, x_gfx942.dat, the link
        assert_eq!(k.objects_dropped, 3); // two gfx90a, one gfx900
        assert!(!k.whole);
        assert!(k.size_after < 99_999 - 5000 - 200 - 77 - 40 + 64);
    }

    #[test]
    fn lying_headers_never_count_more_than_the_file() {
        let mut fat = e("lib/libk.so", EntryType::Regular, 100, FileClass::Lib);
        fat.elf = Some(Default::default());
        fat.device = vec![
            obj("gfx90a", DeviceContainer::Offload, u64::MAX, 5),
            obj("gfx1030", DeviceContainer::Offload, 70, 70),
        ];
        let a = account(&[fat]);
        assert_eq!(a.gpu_bytes(), 100);
    }
}
