//! The report's rows from the sums: root pairs and one-sided roots, ranked causes,
//! the `check` verdicts, the mass-rebuild summary and the range checks that turn a sum
//! too large for a report into an error ([`Ranges`]).

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::report::{
    Cause, CauseChange, DiffWarning, FailedNewRoot, FailedRoot, OneSidedTotal, RebuildSummary,
    RootCause, RootCounts, RootDiff, RootSide, RootsSum, SetCheck, SetSide, Side as DiffSideName,
};
use crate::store::parse_package_name;

use super::super::common::load_warnings;
use super::super::{AnalysisError, SetSumOutOfRange};
use super::causes::{Acc, CHANGES};
use super::input::{OneSided, Pairs, SetLimits};
use super::side::{key_name, versions, Side};
use super::unchanged::Packages;

/// Where a sum over roots or causes is checked: the two sets' names, for the error.
pub(super) struct Ranges<'s> {
    pub(super) old: &'s Side<'s>,
    pub(super) new: &'s Side<'s>,
    pub(super) old_origin: &'s str,
    pub(super) new_origin: &'s str,
}

impl Ranges<'_> {
    /// The error for a sum `value` of `what` beyond `limit`, naming the largest NAR
    /// size of either side (the likely wrong one).
    pub(super) fn error(&self, what: String, value: i128, limit: &'static str) -> AnalysisError {
        let largest = [self.old, self.new]
            .into_iter()
            .flat_map(|s| (0..s.g.len()).map(move |v| (s.g.nar_sizes[v].get(), s, v)))
            .max_by_key(|x| x.0);
        AnalysisError::SetSumOutOfRange(Box::new(SetSumOutOfRange {
            old: self.old_origin.to_string(),
            new: self.new_origin.to_string(),
            what,
            value: value.to_string(),
            limit,
            example: largest
                .map(|(size, s, v)| {
                    format!(
                        " (the largest NAR size: {} with {size} bytes)",
                        s.display(v)
                    )
                })
                .unwrap_or_default(),
        }))
    }

    /// A sum of sizes: at most 2^64 - 1.
    pub(super) fn unsigned(
        &self,
        value: u128,
        what: impl FnOnce() -> String,
    ) -> Result<u64, AnalysisError> {
        u64::try_from(value).map_err(|_| self.error(what(), value as i128, U64_LIMIT))
    }

    /// A sum of signed changes: within the i64 range.
    pub(super) fn signed(
        &self,
        value: i128,
        what: impl FnOnce() -> String,
    ) -> Result<i64, AnalysisError> {
        i64::try_from(value).map_err(|_| self.error(what(), value, I64_LIMIT))
    }
}

pub(super) const U64_LIMIT: &str = "2^64 - 1 bytes (16 EiB), the largest size a report holds";
pub(super) const I64_LIMIT: &str =
    "the range of a signed change (-2^63 to 2^63 - 1 bytes, 8 EiB), the largest change a report holds";

pub(super) fn percent(old: u64, delta: i64) -> Option<f64> {
    (old > 0).then(|| delta as f64 / old as f64 * 100.0)
}

/// The causes that change something, as (package, change index, sums), the largest
/// change first whatever its sign (−3 MiB before +1 MiB); ties by roots, then package
/// name, then change.
pub(super) fn ranked_causes(
    acc: Vec<(usize, usize, Acc)>,
    pk: &Packages,
) -> Vec<(usize, usize, Acc)> {
    let mut found: Vec<(usize, usize, Acc)> = acc
        .into_iter()
        .filter(|(_, _, x)| x.roots > 0 && x.bytes != 0)
        .collect();
    found.sort_by(|x, y| {
        y.2.bytes
            .unsigned_abs()
            .cmp(&x.2.bytes.unsigned_abs())
            .then(y.2.bytes.cmp(&x.2.bytes))
            .then(y.2.roots.cmp(&x.2.roots))
            .then_with(|| pk.names[x.0].cmp(&pk.names[y.0]))
            .then(x.1.cmp(&y.1))
    });
    found
}

/// Which ranked causes `--top` keeps: the N largest growing and the N largest
/// shrinking, in rank order.
pub(super) fn kept_by_top(found: &[(usize, usize, Acc)], top: Option<usize>) -> Vec<bool> {
    match top {
        None => vec![true; found.len()],
        Some(t) => {
            let (mut grow, mut shrink) = (0usize, 0usize);
            found
                .iter()
                .map(|c| {
                    let n = if c.2.bytes > 0 {
                        &mut grow
                    } else {
                        &mut shrink
                    };
                    *n += 1;
                    *n <= t
                })
                .collect()
        }
    }
}

/// The report rows of the kept causes, each with its versions and the chain from its
/// example root (one search per row, on every core).
pub(super) fn cause_rows(
    old: &Side,
    new: &Side,
    pk: &Packages,
    pairs: &Pairs,
    pair_name: &[String],
    found: &[(usize, usize, Acc)],
    keep: &[bool],
) -> Vec<Cause> {
    found
        .par_iter()
        .zip(keep.par_iter())
        .filter(|(_, &k)| k)
        .map(|((p, k, a), _)| {
            let change = CHANGES[*k];
            let pair = &pairs[a.example as usize];
            let (side, root, nodes, attr) = match change {
                CauseChange::Added | CauseChange::Grown => (
                    new,
                    new.root_node[pair.1],
                    &pk.new_nodes[*p],
                    new.attr(pair.1),
                ),
                CauseChange::Removed | CauseChange::Shrunk => (
                    old,
                    old.root_node[pair.0],
                    &pk.old_nodes[*p],
                    old.attr(pair.0),
                ),
            };
            let targets: FxHashSet<u32> = nodes.iter().copied().collect();
            Cause {
                name: pk.names[*p].clone(),
                change,
                roots: a.roots,
                // Every cause's bytes were checked against the i64 range.
                bytes: a.bytes as i64,
                old_versions: versions(old, &pk.old_nodes[*p]),
                new_versions: versions(new, &pk.new_nodes[*p]),
                example_root: pair_name[a.example as usize].clone(),
                example_attr: attr,
                chain: side.chain(root, &targets),
            }
        })
        .collect()
}

/// The root rows and their totals.
pub(super) struct RootRows {
    /// Matched, then appeared, then vanished roots, each group cut at `--top`.
    pub(super) roots: Vec<RootDiff>,
    pub(super) hidden_roots: usize,
    pub(super) hidden_delta: i64,
    pub(super) counts: RootCounts,
    /// Closure sizes of the matched roots, summed on each side, and new minus old.
    pub(super) total_old: u64,
    pub(super) total_new: u64,
    pub(super) total_delta: i64,
    /// Matched roots rebuilt (another store path) at the same closure size.
    pub(super) rebuilt_same: usize,
    /// The matched roots' closure download sizes summed (`None`: some unknown).
    pub(super) download_old: Option<u64>,
    pub(super) download_new: Option<u64>,
    /// The roots only in NEW, and only in OLD, summed (every one, not only those
    /// `--top` keeps).
    pub(super) added: OneSidedTotal,
    pub(super) removed: OneSidedTotal,
    /// Every root of each set summed.
    pub(super) all_roots: RootsSum,
}

/// One side of a root row: its store path, closure size, version, attribute and
/// download size.
pub(super) fn root_side(s: &Side, i: usize) -> RootSide {
    let v = s.root_node[i] as usize;
    RootSide {
        path: s.display(v),
        closure_size: s.sizes[v].get(),
        version: parse_package_name(s.name(v)).version.to_string(),
        attr: s.attr(i),
        download_size: s.download_of(v),
    }
}

/// A sum of optional sizes: `None` when any is unknown (or the sum leaves u64).
fn sum_known(sizes: impl IntoIterator<Item = Option<u64>>) -> Option<u64> {
    sizes
        .into_iter()
        .try_fold(0u64, |a, b| b.and_then(|b| a.checked_add(b)))
}

/// The roots of one side only, summed: how many, their closures, their downloads.
fn one_sided_total(
    s: &Side,
    list: &OneSided,
    ranges: &Ranges,
    what: &str,
) -> Result<OneSidedTotal, AnalysisError> {
    let nodes = || list.iter().map(|(i, _)| s.root_node[*i] as usize);
    let sum: u128 = nodes().map(|v| u128::from(s.sizes[v].get())).sum();
    let closure_size = ranges.unsigned(sum, || {
        format!("the closure sizes of the {} roots {what}", list.len())
    })?;
    Ok(OneSidedTotal {
        roots: list.len(),
        closure_size,
        download_size: sum_known(nodes().map(|v| s.download_of(v))),
    })
}

/// Every root's row: the matched pairs (largest change first, whatever its sign; with
/// `changed_only` those whose closure size changed), the roots only NEW or only OLD
/// has (largest first), the counts and totals, and what `--top` hides. Sums over
/// roots that leave the range a report holds are errors.
pub(super) fn root_rows(
    (old, new): (&Side, &Side),
    ranges: &Ranges,
    pairs: &Pairs,
    (only_old, only_new): (&OneSided, &OneSided),
    (top, changed_only): (Option<usize>, bool),
) -> Result<RootRows, AnalysisError> {
    let mut counts = RootCounts {
        both: pairs.len(),
        only_old: only_old.len(),
        only_new: only_new.len(),
        ..RootCounts::default()
    };
    let mut total_old = 0u128;
    let mut total_new = 0u128;
    let mut rebuilt_same = 0usize;
    let mut matched: Vec<RootDiff> = Vec::with_capacity(pairs.len());
    let (mut download_old, mut download_new) = (Some(0u64), Some(0u64));
    for (o, n, key) in pairs {
        let (so, sn) = (root_side(old, *o), root_side(new, *n));
        download_old = sum_known([download_old, so.download_size]);
        download_new = sum_known([download_new, sn.download_size]);
        let delta = sn.closure_size as i64 - so.closure_size as i64;
        match delta.cmp(&0) {
            std::cmp::Ordering::Greater => counts.grown += 1,
            std::cmp::Ordering::Less => counts.shrunk += 1,
            std::cmp::Ordering::Equal => {
                counts.unchanged += 1;
                if so.path != sn.path {
                    rebuilt_same += 1;
                }
            }
        }
        total_old += u128::from(so.closure_size);
        total_new += u128::from(sn.closure_size);
        if changed_only && delta == 0 {
            continue;
        }
        matched.push(RootDiff {
            name: key_name(key),
            package: key.0.clone(),
            output: key.1.clone(),
            percent: percent(so.closure_size, delta),
            old: Some(so),
            new: Some(sn),
            delta,
        });
    }
    matched.sort_by(|a, b| {
        b.delta
            .unsigned_abs()
            .cmp(&a.delta.unsigned_abs())
            .then(b.delta.cmp(&a.delta))
            .then_with(|| a.name.cmp(&b.name))
    });
    let appeared = one_sided_rows(new, only_new, true);
    let vanished = one_sided_rows(old, only_old, false);
    let (mut roots, mut hidden_roots, mut hidden_delta) = (Vec::new(), 0usize, 0i128);
    for group in [matched, appeared, vanished] {
        let t = top.unwrap_or(usize::MAX);
        for (i, r) in group.into_iter().enumerate() {
            if i < t {
                roots.push(r);
            } else {
                hidden_roots += 1;
                hidden_delta += i128::from(r.delta);
            }
        }
    }
    let n = pairs.len();
    let hidden_delta = ranges.signed(hidden_delta, || {
        format!("the changes of the {hidden_roots} roots not listed")
    })?;
    let total_old = ranges.unsigned(total_old, || {
        format!(
            "the closure sizes of the {n} roots in OLD (`{}`)",
            ranges.old_origin
        )
    })?;
    let total_new = ranges.unsigned(total_new, || {
        format!(
            "the closure sizes of the {n} roots in NEW (`{}`)",
            ranges.new_origin
        )
    })?;
    let total_delta = ranges.signed(i128::from(total_new) - i128::from(total_old), || {
        format!("the changes of the closure sizes of the {n} roots in both sets")
    })?;
    let added = one_sided_total(new, only_new, ranges, "only in NEW")?;
    let removed = one_sided_total(old, only_old, ranges, "only in OLD")?;
    let all_old = ranges.unsigned(
        u128::from(total_old) + u128::from(removed.closure_size),
        || {
            format!(
                "the closure sizes of every root in OLD (`{}`)",
                ranges.old_origin
            )
        },
    )?;
    let all_new = ranges.unsigned(
        u128::from(total_new) + u128::from(added.closure_size),
        || {
            format!(
                "the closure sizes of every root in NEW (`{}`)",
                ranges.new_origin
            )
        },
    )?;
    let all_delta = ranges.signed(i128::from(all_new) - i128::from(all_old), || {
        "the change of the closure sizes of every root of the two sets".to_string()
    })?;
    Ok(RootRows {
        download_old,
        download_new,
        added,
        removed,
        all_roots: RootsSum {
            old: all_old,
            new: all_new,
            delta: all_delta,
            percent: percent(all_old, all_delta),
        },
        roots,
        hidden_roots,
        hidden_delta,
        counts,
        total_old,
        total_new,
        total_delta,
        rebuilt_same,
    })
}

/// Rows of the roots only one side has (`is_new`: NEW's), largest change first.
pub(super) fn one_sided_rows(
    s: &Side,
    list: &[(usize, (String, String))],
    is_new: bool,
) -> Vec<RootDiff> {
    let mut v: Vec<RootDiff> = list
        .iter()
        .map(|(i, key)| {
            let side = root_side(s, *i);
            let size = side.closure_size as i64;
            RootDiff {
                name: key_name(key),
                package: key.0.clone(),
                output: key.1.clone(),
                delta: if is_new { size } else { -size },
                percent: None,
                old: (!is_new).then(|| side.clone()),
                new: is_new.then_some(side),
            }
        })
        .collect();
    v.sort_by(|a, b| {
        b.delta
            .abs()
            .cmp(&a.delta.abs())
            .then_with(|| a.name.cmp(&b.name))
    });
    v
}

/// `check`: the shown roots over `--max-growth` (the first `show` with their causes,
/// one walk of each side each), every failing pair counted, and the total against
/// `--max-total-growth`.
pub(super) fn set_check(
    limits: SetLimits,
    (old, new): (&Side, &Side),
    pk: &Packages,
    (pairs, pair_name, only_new): (&Pairs, &[String], &OneSided),
    rr: &RootRows,
    show: usize,
) -> SetCheck {
    let failing: Vec<&RootDiff> = rr
        .roots
        .iter()
        .filter(|r| r.old.is_some() && r.new.is_some())
        .filter(|r| {
            limits
                .max_growth
                .is_some_and(|l| l.exceeded(r.old.as_ref().map_or(0, |s| s.closure_size), r.delta))
        })
        .collect();
    // Failing roots beyond `--top` are counted from every pair.
    let roots_failed = match limits.max_growth {
        Some(l) => pairs
            .iter()
            .filter(|(o, n, _)| {
                let so = old.sizes[old.root_node[*o] as usize].get();
                let sn = new.sizes[new.root_node[*n] as usize].get();
                l.exceeded(so, sn as i64 - so as i64)
            })
            .count(),
        None => 0,
    };
    let by_name: FxHashMap<&str, &(usize, usize, (String, String))> = pairs
        .iter()
        .zip(pair_name)
        .map(|(p, n)| (n.as_str(), p))
        .collect();
    // One walk of each side per listed root: only the first `show`.
    let failed: Vec<FailedRoot> = failing[..failing.len().min(show.max(1))]
        .par_iter()
        .map(|r| {
            let causes = by_name
                .get(r.name.as_str())
                .map(|p| root_causes(old, new, pk, old.root_node[p.0], new.root_node[p.1]))
                .unwrap_or_default();
            let (o, n) = (
                r.old.as_ref().map_or(0, |s| s.closure_size),
                r.new.as_ref().map_or(0, |s| s.closure_size),
            );
            FailedRoot {
                name: r.name.clone(),
                attr: r.new.as_ref().and_then(|s| s.attr.clone()),
                old: o,
                new: n,
                delta: r.delta,
                percent: r.percent,
                causes,
            }
        })
        .collect();
    // Every root of each set: an added root's closure is growth, a removed one's
    // shrinkage.
    let all = rr.all_roots;
    let total_failed = limits
        .max_total_growth
        .is_some_and(|l| l.exceeded(all.old, all.delta));
    // Every root only in NEW is checked, not only those `--top` keeps.
    let mut failed_new: Vec<FailedNewRoot> = match limits.max_new_root_size {
        Some(max) => only_new
            .iter()
            .filter(|(i, _)| new.sizes[new.root_node[*i] as usize].get() > max)
            .map(|(i, key)| {
                let side = root_side(new, *i);
                FailedNewRoot {
                    name: key_name(key),
                    attr: side.attr,
                    path: side.path,
                    closure_size: side.closure_size,
                }
            })
            .collect(),
        None => Vec::new(),
    };
    failed_new.sort_by(|a, b| {
        b.closure_size
            .cmp(&a.closure_size)
            .then_with(|| a.name.cmp(&b.name))
    });
    let new_roots_failed = failed_new.len();
    failed_new.truncate(show.max(1));
    SetCheck {
        pass: roots_failed == 0 && !total_failed && new_roots_failed == 0,
        max_growth: limits.max_growth,
        max_total_growth: limits.max_total_growth,
        roots_failed,
        failed,
        total_failed,
        max_new_root_size: limits.max_new_root_size,
        new_roots_failed,
        failed_new,
    }
}

/// Both sides' load warnings, each marked with its side; when both sides are read
/// from one graph (as the binary loads them), its warnings once, marked as both.
pub(super) fn set_warnings(old: &Side, new: &Side) -> Vec<DiffWarning> {
    let mut warnings = Vec::new();
    let sides: &[(DiffSideName, &Side)] = if std::ptr::eq(old.closure, new.closure) {
        &[(DiffSideName::Both, old)]
    } else {
        &[(DiffSideName::Old, old), (DiffSideName::New, new)]
    };
    for &(side, s) in sides {
        warnings.extend(
            load_warnings(s.closure)
                .into_iter()
                .map(|warning| DiffWarning { side, warning }),
        );
    }
    warnings
}

/// What the report says of one set: its origin, graph file, roots and union.
pub(super) fn set_side(s: &Side, origin: &str) -> SetSide {
    SetSide {
        origin: origin.to_string(),
        graph: s.closure.origin.clone(),
        roots: s.root_node.len(),
        path_count: s.g.len(),
        union_size: s.g.total_size().get(),
        sizes_known: s.g.sizes_known,
        union_download_size: s.union_download,
    }
}

/// The largest package changes in one root's closure: one walk of each side.
pub(super) fn root_causes(old: &Side, new: &Side, pk: &Packages, o: u32, n: u32) -> Vec<RootCause> {
    let (bo, bn) = (old.package_bytes(o), new.package_bytes(n));
    let mut out: Vec<RootCause> = Vec::new();
    for (&p, &nb) in &bn {
        let (change, bytes) = match bo.get(&p) {
            None => (CauseChange::Added, nb as i64),
            Some(&ob) if nb > ob => (CauseChange::Grown, nb as i64 - ob as i64),
            Some(&ob) if nb < ob => (CauseChange::Shrunk, nb as i64 - ob as i64),
            Some(_) => continue,
        };
        out.push(RootCause {
            name: pk.names[p as usize].clone(),
            change,
            bytes,
        });
    }
    for (&p, &ob) in &bo {
        if !bn.contains_key(&p) {
            out.push(RootCause {
                name: pk.names[p as usize].clone(),
                change: CauseChange::Removed,
                bytes: -(ob as i64),
            });
        }
    }
    out.sort_by(|a, b| {
        b.bytes
            .unsigned_abs()
            .cmp(&a.bytes.unsigned_abs())
            .then(b.bytes.cmp(&a.bytes))
            .then_with(|| a.name.cmp(&b.name))
    });
    out.truncate(5);
    out
}

/// Rebuilt, added and removed paths between the two unions, by name.
pub(super) fn rebuild_summary(
    old: &Side,
    new: &Side,
    roots_rebuilt_same_size: usize,
) -> RebuildSummary {
    let old_set: FxHashSet<&crate::store::StorePath> = old.g.paths.iter().collect();
    let new_set: FxHashSet<&crate::store::StorePath> = new.g.paths.iter().collect();
    let mut old_only: FxHashMap<&str, Vec<u64>> = FxHashMap::default();
    for (v, p) in old.g.paths.iter().enumerate() {
        if !new_set.contains(p) {
            old_only
                .entry(p.name())
                .or_default()
                .push(old.g.nar_sizes[v].get());
        }
    }
    let mut s = RebuildSummary {
        roots_rebuilt_same_size,
        ..RebuildSummary::default()
    };
    let mut new_only_names: FxHashSet<&str> = FxHashSet::default();
    for (v, p) in new.g.paths.iter().enumerate() {
        if old_set.contains(p) {
            continue;
        }
        new_only_names.insert(p.name());
        match old_only.get(p.name()) {
            Some(sizes) => {
                s.paths_rebuilt += 1;
                if sizes.contains(&new.g.nar_sizes[v].get()) {
                    s.paths_rebuilt_same_size += 1;
                    s.bytes_rebuilt_same_size += new.g.nar_sizes[v].get();
                }
            }
            None => s.paths_added += 1,
        }
    }
    s.paths_removed = old_only
        .iter()
        .filter(|(n, _)| !new_only_names.contains(*n))
        .map(|(_, v)| v.len())
        .sum();
    s
}
