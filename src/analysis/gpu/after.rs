//! `--gpu-targets`: the closure with only the kept targets ([`after`]): what each path
//! loses ([`cut`]: other architectures' files dropped, other targets' code objects
//! subtracted from fat binaries, an estimate), which edges survive, what stays
//! reachable from the roots, and what each staying path saves, by vendor.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use super::account::{entry_gpu, EntryGpu};
use crate::analysis::split::{fact_sub_path, nar_size_of};
use crate::classify::EntryType;
use crate::evidence::{EntryFact, ScannedPath};
use crate::report::{GpuChange, GpuVendor};
use crate::store::{Closure, StorePath};

/// What [`after`] needs.
pub(super) struct AfterInput<'a> {
    pub(super) closure: &'a Closure,
    pub(super) roots: &'a [StorePath],
    pub(super) size: &'a HashMap<StorePath, u64>,
    pub(super) inventories: &'a HashMap<StorePath, ScannedPath>,
    pub(super) kept: &'a HashSet<&'a str>,
}

/// The closure with only the kept targets.
pub(super) struct After {
    pub(super) size: u64,
    pub(super) count: u64,
    pub(super) removed: Vec<StorePath>,
    pub(super) changed: Vec<GpuChange>,
    /// Per path that stays: the bytes the targets save on its account, by vendor: what
    /// it loses itself, and the paths that leave with it (it referred to them).
    pub(super) saved_by_path: BTreeMap<StorePath, BTreeMap<GpuVendor, u64>>,
}

/// Which entries of one path the targets drop, and its size after.
pub(super) struct PathCut {
    pub(super) dropped: HashSet<Vec<u8>>,
    pub(super) size_after: u64,
    pub(super) files_dropped: u64,
    pub(super) objects_dropped: u64,
    /// Dropped bytes by the vendor of their architecture.
    pub(super) by_vendor: BTreeMap<GpuVendor, u64>,
    pub(super) estimated: bool,
    /// Every entry other than directories is dropped.
    pub(super) whole: bool,
}

/// What the kept targets leave of one path (`nar` bytes): its other architectures'
/// files dropped, other targets' code objects subtracted from its fat binaries.
pub(super) fn cut(entries: &[EntryFact], nar: u64, kept: &HashSet<&str>) -> PathCut {
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
                *by_vendor.entry(GpuVendor::of_base(&a)).or_default() += bytes;
            }
            EntryGpu::Fat { parts, .. } => {
                let mut left = e.size;
                let mut n = 0u64;
                for (a, d) in parts.iter().filter(|(a, _)| !kept.contains(a.as_str())) {
                    let gone = d.stored.min(left);
                    left -= gone;
                    n += 1;
                    *by_vendor.entry(GpuVendor::of_base(a)).or_default() += gone;
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

/// The closure with only the kept targets: what each path loses ([`cut`]), which
/// edges survive ([`edge_survives`], scanning in full the paths whose hits must be
/// looked at), what stays reachable from the roots, and what each staying path saves.
pub(super) fn after(
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
    let seen = reachable(c, input.roots, |p, r| edge_survives(&cuts, &hits, p, r));
    let mut removed: Vec<StorePath> = c
        .paths
        .keys()
        .filter(|p| !seen.contains(p))
        .cloned()
        .collect();
    removed.sort();
    let (size, changed, mut saved) = staying(c, input, &cuts, &seen);
    take_along(c, input, &cuts, &seen, &removed, &mut saved);
    After {
        size,
        count: seen.len() as u64,
        removed,
        changed,
        saved_by_path: saved,
    }
}

/// Whether the edge `p -> r` survives the cuts: not when `r` goes whole; otherwise
/// when some hit of it (from the full scans in `hits`) lies outside `p`'s dropped files
/// and names none of `r`'s, or when nothing says it goes (not scanned, no hit found).
fn edge_survives(
    cuts: &HashMap<&StorePath, PathCut>,
    hits: &HashMap<StorePath, ScannedPath>,
    p: &StorePath,
    r: &StorePath,
) -> bool {
    if cuts.get(r).is_some_and(|k| k.whole) {
        return false;
    }
    let dropped_here = cuts.get(p).map(|k| &k.dropped);
    let dropped_there = cuts.get(r).map(|k| &k.dropped);
    let any_dropped =
        dropped_here.is_some_and(|d| !d.is_empty()) || dropped_there.is_some_and(|d| !d.is_empty());
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
}

/// The paths reachable from `roots` along the edges `keeps` lets through (breadth
/// first; a reference the closure does not describe is not followed: the loader
/// warned about it). O(paths + references).
fn reachable<'c>(
    c: &'c Closure,
    roots: &'c [StorePath],
    keeps: impl Fn(&StorePath, &StorePath) -> bool,
) -> HashSet<&'c StorePath> {
    let mut seen: HashSet<&StorePath> = HashSet::new();
    let mut queue: VecDeque<&StorePath> = VecDeque::new();
    for r in roots {
        if seen.insert(r) {
            queue.push_back(r);
        }
    }
    while let Some(p) = queue.pop_front() {
        let Some(info) = c.paths.get(p) else { continue };
        for r in &info.references {
            if r != p && c.paths.contains_key(r) && !seen.contains(r) && keeps(p, r) {
                seen.insert(r);
                queue.push_back(r);
            }
        }
    }
    seen
}

/// Per path saved bytes, by vendor.
type Saved = BTreeMap<StorePath, BTreeMap<GpuVendor, u64>>;

/// The size of the paths that stay, the ones among them that change (most bytes lost
/// first), and what each of those saves by vendor.
fn staying(
    c: &Closure,
    input: &AfterInput<'_>,
    cuts: &HashMap<&StorePath, PathCut>,
    seen: &HashSet<&StorePath>,
) -> (u64, Vec<GpuChange>, Saved) {
    let mut size = 0u64;
    let mut changed = Vec::new();
    let mut saved: Saved = BTreeMap::new();
    for p in seen {
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
    (size, changed, saved)
}

/// Who took each removed path along: its referrers that stay (the first, in store
/// path order, when several do), found in one pass over the kept paths' references;
/// the removed path's size counts as that referrer's saving, under the vendor of the
/// removed path's code.
fn take_along(
    c: &Closure,
    input: &AfterInput<'_>,
    cuts: &HashMap<&StorePath, PathCut>,
    seen: &HashSet<&StorePath>,
    removed: &[StorePath],
    saved: &mut Saved,
) {
    let gone: HashSet<&StorePath> = removed.iter().collect();
    let mut taker: HashMap<&StorePath, &StorePath> = HashMap::new();
    for p in seen {
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
    for x in removed {
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
}
