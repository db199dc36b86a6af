//! `nixcut store`: what every GC root of a whole store alone keeps
//! ([`crate::graph::alone_figures`], one linear pass), ranked into a [`StoreReport`];
//! the closures of the listed roots only ([`crate::graph::root_closures`]: its cost
//! grows with the roots asked, so `--top N` keeps the whole run linear); what the input
//! and the root walk could not take as given, as warnings.

use rayon::prelude::*;

use crate::graph::{alone_figures, root_closures, Keep, Tally};
use crate::load::gc_roots::{GcRoot, GcRootScan};
use crate::report::{
    PathsBytes, StoreKeep, StoreReport, StoreRest, StoreRoot, StoreWarning, STORE_SCHEMA_VERSION,
};
use crate::store::{WholeStore, NO_PATH};

/// What `nixcut store` was asked.
#[derive(Debug, Clone, Default)]
pub struct StoreOptions {
    /// What the collector keeps beyond references.
    pub keep: Keep,
    /// List only the first N roots (`None`: all).
    pub top: Option<usize>,
    /// Where the steps report their times (`NIXCUT_TIMINGS`).
    pub timings: crate::timing::Timings,
}

/// The report for `store` with `roots` (found in its GC root directories, `scan`, and
/// given by the user).
pub fn store_report(
    store: &WholeStore,
    source: &str,
    roots: &[GcRoot],
    scan: Option<&GcRootScan>,
    opts: &StoreOptions,
) -> StoreReport {
    let mut warnings = Vec::new();
    let index = store.hash_index();
    let targets: Vec<u32> = roots
        .par_iter()
        .map(|r| match store.find(&index, &r.target) {
            Some(id) if store.base_name(id) == r.target && store.described[id as usize] => id,
            _ => NO_PATH,
        })
        .collect();
    drop(index);
    opts.timings.step("store: the roots' paths");
    let unknown = targets.iter().filter(|&&t| t == NO_PATH).count() as u64;
    if unknown > 0 {
        let i = targets.iter().position(|&t| t == NO_PATH).unwrap_or(0);
        warnings.push(StoreWarning::UnknownRoots {
            count: unknown,
            example: format!(
                "{} -> {}/{}",
                roots[i].link, store.store_dir, roots[i].target
            ),
        });
    }
    let fig = alone_figures(store, &targets, opts.keep);
    opts.timings
        .step("store: what each root alone keeps (liveness graph, labels)");
    let mut order: Vec<u32> = (0..roots.len() as u32)
        .filter(|&i| targets[i as usize] != NO_PATH)
        .collect();
    // By what each alone keeps, then by link: no closure is needed to rank.
    order.par_sort_unstable_by(|&a, &b| {
        let (a, b) = (a as usize, b as usize);
        fig.alone[b]
            .bytes
            .cmp(&fig.alone[a].bytes)
            .then_with(|| roots[a].link.cmp(&roots[b].link))
    });
    let shown = opts.top.unwrap_or(order.len()).min(order.len());
    let shown_targets: Vec<u32> = order[..shown]
        .iter()
        .map(|&i| targets[i as usize])
        .collect();
    opts.timings.step("store: ranking");
    let closure = root_closures(store, &shown_targets);
    opts.timings.step("store: the listed roots' closures");
    let listed: Vec<StoreRoot> = order[..shown]
        .par_iter()
        .zip(closure.par_iter())
        .map(|(&i, c)| {
            let i = i as usize;
            StoreRoot {
                root: store.path(targets[i]),
                link: roots[i].link.clone(),
                closure_size: c.bytes,
                closure_paths: c.paths,
                alone: fig.alone[i].bytes,
                alone_paths: fig.alone[i].paths,
            }
        })
        .collect();
    let rest = (shown < order.len()).then(|| {
        let mut t = Tally::default();
        for &i in &order[shown..] {
            let a = fig.alone[i as usize];
            t.paths += a.paths;
            t.bytes = t.bytes.saturating_add(a.bytes);
        }
        StoreRest {
            roots: (order.len() - shown) as u64,
            alone: t.bytes,
            alone_paths: t.paths,
        }
    });
    if order.is_empty() {
        warnings.push(StoreWarning::NoRoots);
    }
    if let Some(scan) = scan {
        if scan.stale > 0 {
            warnings.push(StoreWarning::StaleRoots { count: scan.stale });
        }
        for (path, why) in &scan.unreadable {
            warnings.push(StoreWarning::Unreadable {
                path: path.clone(),
                why: why.clone(),
            });
        }
    }
    let issues = &store.issues;
    for (count, w) in [
        (
            issues.duplicates,
            StoreWarning::Duplicates {
                count: issues.duplicates,
            },
        ),
        (
            issues.renamed_references,
            StoreWarning::RenamedReferences {
                count: issues.renamed_references,
            },
        ),
        (
            issues.missing_sizes,
            StoreWarning::MissingSizes {
                count: issues.missing_sizes,
            },
        ),
        (
            issues.dangling_references,
            StoreWarning::DanglingReferences {
                count: issues.dangling_references,
            },
        ),
        (
            issues.invalid,
            StoreWarning::InvalidPaths {
                count: issues.invalid,
            },
        ),
    ] {
        if count > 0 {
            warnings.push(w);
        }
    }
    let undescribed = store.described.iter().filter(|&&d| !d).count() as u64;
    if undescribed > 0 {
        let i = store.described.iter().position(|&d| !d).unwrap_or(0) as u32;
        warnings.push(StoreWarning::Undescribed {
            count: undescribed,
            example: store.path(i),
        });
    }
    let pb = |t: Tally| PathsBytes {
        paths: t.paths,
        bytes: t.bytes,
    };
    StoreReport {
        schema_version: STORE_SCHEMA_VERSION,
        source: source.to_string(),
        store_dir: store.store_dir.as_str().to_string(),
        store_size: fig.store.bytes,
        path_count: store.len() as u64,
        reference_count: store.reference_count() as u64,
        keep: StoreKeep {
            derivations: opts.keep.derivations,
            outputs: opts.keep.outputs,
        },
        root_count: order.len() as u64,
        roots: listed,
        rest,
        live: pb(fig.live),
        shared: pb(fig.shared),
        unreachable: pb(fig.unreachable),
        warnings,
    }
}
