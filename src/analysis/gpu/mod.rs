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
//!
//! Modules: `account` (how one path's bytes divide among architectures), `after` (the
//! closure with only the kept targets), `remedy` (what to set in nixpkgs).

mod account;
mod after;
mod remedy;

pub use account::{account, entry_gpu, Account, ArchShare, EntryGpu};

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::common::{load_warnings, pick_roots, source_ref};
use super::AnalysisError;
use crate::classify::{ClassRules, GpuTarget};
use crate::evidence::{Collector, PathWarning, Progress, ScanCache, ScannedPath};
use crate::report::{GpuArch, GpuPath, GpuReport, GpuVendor, GpuWarning, SCHEMA_VERSION};
use crate::source::Files;
use crate::store::{Closure, StoreDir, StorePath};
use after::{after, AfterInput};
use remedy::{no_remedy_warnings, remedies};

/// Options of `nixcut gpu`.
#[derive(Debug, Clone, Default)]
pub struct GpuOptions {
    /// `--root`: which root of a multi-root input.
    pub root: Option<String>,
    /// `--gpu-targets`: keep only these (any spelling [`GpuTarget::parse`] takes).
    pub gpu_targets: Vec<String>,
    /// Where the files are.
    pub files: Files,
    /// The scan cache; `None` disables it.
    pub cache: Option<ScanCache>,
    /// The file-class rules in force.
    pub rules: ClassRules,
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
    let size = nar_sizes(c, &sub, &paths)?;
    let mut warnings: Vec<GpuWarning> =
        load_warnings(c).into_iter().map(GpuWarning::Load).collect();
    let (inventories, unscanned) = inventories(c, opts, &paths, progress, &mut warnings);
    let accounts: HashMap<&StorePath, Account> = inventories
        .iter()
        .map(|(p, sp)| (p, account(&sp.entries)))
        .collect();
    let t = tally(sd, &paths, &size, &accounts, &mut warnings);
    let closure_size: u64 = size.values().sum();
    let unscanned_bytes: u64 = unscanned.iter().map(|p| size[p]).sum();
    let mut report = GpuReport {
        schema_version: SCHEMA_VERSION,
        source: source_ref(c),
        root: sd.display(&roots[0]),
        closure_size,
        path_count: paths.len() as u64,
        files_from: opts.files.kind(),
        archs: t.archs,
        gpu_bytes: closure_size - t.generic_bytes - t.host_bytes - unscanned_bytes,
        generic_bytes: t.generic_bytes,
        generic_files: t.generic_files,
        host_bytes: t.host_bytes,
        unscanned_bytes,
        paths: t.paths,
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
        .filter_map(|t| GpuTarget::parse(t))
        .map(|t| t.base)
        .collect();
    targets.sort();
    targets.dedup();
    if !targets.is_empty() {
        let input = AfterInput {
            closure: &sub,
            roots: &roots,
            size: &size,
            inventories: &inventories,
            kept: &targets.iter().map(String::as_str).collect(),
        };
        keep_only(c, opts, &mut report, &input, &targets, &mut warnings);
    }
    report.warnings = warnings;
    Ok(report)
}

/// The NAR size of each path; an error when one is not known.
fn nar_sizes(
    c: &Closure,
    sub: &Closure,
    paths: &[StorePath],
) -> Result<HashMap<StorePath, u64>, AnalysisError> {
    let mut size = HashMap::new();
    for p in paths {
        let s = sub.paths[p]
            .nar_size
            .ok_or_else(|| AnalysisError::SizesUnknown {
                origin: c.origin.clone(),
                what: "gpu",
            })?;
        size.insert(p.clone(), s);
    }
    Ok(size)
}

/// The file inventory of every path (headers only), and the paths that could not be
/// read; their GPU-code warnings, and one naming what failed, go to `warnings`.
fn inventories(
    c: &Closure,
    opts: &GpuOptions,
    paths: &[StorePath],
    progress: Option<Progress<'_>>,
    warnings: &mut Vec<GpuWarning>,
) -> (HashMap<StorePath, ScannedPath>, Vec<StorePath>) {
    let sd = &c.store_dir;
    let collector = Collector::new(c, opts.files.source(), opts.cache.as_ref())
        .rules(&opts.rules)
        .inventory_only(true);
    let mut inventories: HashMap<StorePath, ScannedPath> = HashMap::new();
    let mut unscanned = Vec::new();
    for s in collector.scan(paths, progress) {
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
    // Without any files, the one warning of `gpu` says so; with some, name what failed.
    if !unscanned.is_empty() && opts.files.source().is_some() {
        let first = &unscanned[0];
        warnings.push(GpuWarning::Unread {
            count: unscanned.len(),
            of: paths.len(),
            example: sd.display(&first.0),
            why: first.1.clone(),
        });
    }
    let unscanned = unscanned.into_iter().map(|(p, _)| p).collect();
    (inventories, unscanned)
}

/// The closure's bytes per architecture and per path.
struct Tally {
    /// Per base architecture, largest first.
    archs: Vec<GpuArch>,
    /// Paths with GPU or generic bytes, most GPU bytes first.
    paths: Vec<GpuPath>,
    generic_bytes: u64,
    generic_files: u64,
    host_bytes: u64,
}

/// Add up the accounts of the scanned paths: per architecture (with the paths holding
/// it), per path, and the generic and host bytes. A path whose files claim more GPU
/// bytes than its NAR size is cut to it, with a warning.
fn tally(
    sd: &StoreDir,
    paths: &[StorePath],
    size: &HashMap<StorePath, u64>,
    accounts: &HashMap<&StorePath, Account>,
    warnings: &mut Vec<GpuWarning>,
) -> Tally {
    let mut archs: BTreeMap<String, (ArchShare, Vec<String>)> = BTreeMap::new();
    let mut rows = Vec::new();
    let (mut generic_bytes, mut generic_files, mut host_bytes) = (0u64, 0u64, 0u64);
    for p in paths {
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
            vendor: GpuVendor::of_base(&arch),
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
    Tally {
        archs: arch_rows,
        paths: rows,
        generic_bytes,
        generic_files,
        host_bytes,
    }
}

/// `--gpu-targets`: which architectures the targets keep and drop, the closure with
/// only them ([`after`], scanning in full the paths whose edges may go), and the
/// remedies in nixpkgs' terms.
fn keep_only(
    c: &Closure,
    opts: &GpuOptions,
    report: &mut GpuReport,
    input: &AfterInput<'_>,
    targets: &[String],
    warnings: &mut Vec<GpuWarning>,
) {
    let sd = &c.store_dir;
    let present: BTreeSet<&str> = report.archs.iter().map(|a| a.arch.as_str()).collect();
    // Without files nothing is known to be absent: the warning of `gpu` says so.
    let read_any = report.unscanned_bytes < report.closure_size;
    for t in targets {
        if read_any && !present.contains(t.as_str()) {
            warnings.push(GpuWarning::TargetAbsent { target: t.clone() });
        }
    }
    let (kept, dropped): (Vec<&GpuArch>, Vec<&GpuArch>) =
        report.archs.iter().partition(|a| targets.contains(&a.arch));
    report.kept = kept.iter().map(|a| a.arch.clone()).collect();
    report.dropped = dropped.iter().map(|a| a.arch.clone()).collect();
    let full = |ps: &[StorePath]| -> HashMap<StorePath, ScannedPath> {
        Collector::new(c, opts.files.source(), opts.cache.as_ref())
            .rules(&opts.rules)
            .scan(ps, None)
            .into_iter()
            .filter_map(|s| Some((s.path, s.result.ok()?.0)))
            .collect()
    };
    let a = after(input, &full);
    report.closure_size_after = Some(a.size);
    report.path_count_after = Some(a.count);
    report.estimated = a.changed.iter().any(|ch| ch.estimated);
    report.removed = a.removed.iter().map(|p| sd.display(p)).collect();
    report.remedies = remedies(c, &a, targets);
    warnings.extend(no_remedy_warnings(&a, targets));
    report.changed = a.changed;
    report.gpu_targets = targets.to_vec();
}
