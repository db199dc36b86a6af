//! `nixcut diff OLD NEW`: what changed between two closures, grouped by package and
//! ranked by effect on closure size.
//!
//! Paths are compared by store path (hash and name). Each side's paths are grouped by
//! package name ([`crate::store::parse_package_name`]: `gcc-12.2.0-lib` is package
//! `gcc`, version `12.2.0`, output `lib`), as `nix store diff-closures` groups them;
//! a package is listed when any of its paths is only on one side. Within a package, an
//! old and a new path with the same name are a *changed* pair (rebuilt), the others
//! are added or removed.
//!
//! Sizes (see `crate::report::DiffReport`): a package's `added_size` is what removing
//! all its NEW-only paths from NEW would free among NEW's NEW-only paths
//! (`crate::graph::group_added_sizes`), and `removed_size` the same in OLD; per path,
//! the dominator-based added size over the shared part
//! (`crate::graph::exclusive_added_sizes`). Cost: two dominator trees, and per changed
//! package with several changed paths one walk over what the package frees
//! (`crate::graph::group_added_sizes` has the bound and a measured case): a mass
//! rebuild of 100,000 paths takes about as long as reading its two files.

use std::collections::{BTreeMap, BTreeSet};

use crate::graph::{
    dominator_tree, exclusive_added_sizes, group_added_sizes, ClosureGraph, DominatorTree,
};
use crate::report::{
    ClosureRef, DiffReport, DiffRest, DiffSide, DiffWarning, PackageChange, PackageDiff,
    PathChange, PathDiff, Side as Which, VersionChange, SCHEMA_VERSION,
};
use crate::store::{parse_package_name, Bytes, Closure, StorePath};

use super::common::{load_warnings, pick_roots, source_ref};
use super::AnalysisError;

/// Options of `nixcut diff`.
#[derive(Debug, Clone, Default)]
pub struct DiffOptions {
    /// `--root`: which root to take in each input that holds several.
    pub root: Option<String>,
    /// `--top N`: show the first N packages, summarise the rest.
    pub top: Option<usize>,
    /// Where the steps report their times (`NIXCUT_TIMINGS`).
    pub timings: crate::timing::Timings,
}

/// One side, prepared: graph, which nodes the other side lacks, their added sizes.
struct Side<'a> {
    closure: &'a Closure,
    g: ClosureGraph,
    tree: Option<DominatorTree>,
    only: Vec<bool>,
    exclusive: Vec<Bytes>,
}

impl<'a> Side<'a> {
    fn new(closure: &'a Closure, root: Option<&str>) -> Result<Side<'a>, AnalysisError> {
        let roots = pick_roots(closure, root)?;
        let g = ClosureGraph::new(closure, &roots);
        Ok(Side {
            closure,
            g,
            tree: None,
            only: Vec::new(),
            exclusive: Vec::new(),
        })
    }

    /// The dominator tree and the exclusive added sizes over `only` (set first).
    fn dominate(&mut self) {
        let tree = dominator_tree(&self.g);
        self.exclusive = exclusive_added_sizes(&self.g, &tree, &self.only);
        self.tree = Some(tree);
    }

    /// What leaving each group's nodes out frees among this side's own paths.
    fn group_sizes(&self, group_of: &[Option<u32>], groups: usize) -> Vec<Bytes> {
        match &self.tree {
            Some(tree) => {
                group_added_sizes(&self.g, tree, &self.exclusive, &self.only, group_of, groups)
            }
            None => vec![Bytes::ZERO; groups],
        }
    }

    fn report_side(&self) -> DiffSide {
        let sd = &self.closure.store_dir;
        let roots: Vec<String> = self
            .g
            .roots
            .iter()
            .filter_map(|&r| self.g.path(r).map(|p| sd.display(p)))
            .collect();
        DiffSide {
            closure: ClosureRef {
                root: roots.first().cloned().unwrap_or_default(),
                roots,
                source: source_ref(self.closure),
            },
            closure_size: self.g.total_size().get(),
            path_count: self.g.len(),
            sizes_known: self.g.sizes_known,
        }
    }

    fn name(&self, i: usize) -> &str {
        self.g.paths[i].name()
    }
}

/// Which paths of `mine` are not in `theirs`, both in store-path order (a graph's node
/// order): one merge of the two lists, O(n + m) comparisons and no hashing (a hash set
/// of 100,000 paths cost more than the merge).
fn missing_from(mine: &[StorePath], theirs: &[StorePath]) -> Vec<bool> {
    let mut j = 0;
    mine.iter()
        .map(|p| {
            while theirs.get(j).is_some_and(|t| t < p) {
                j += 1;
            }
            theirs.get(j) != Some(p)
        })
        .collect()
}

/// Per package: node indices on each side.
#[derive(Default)]
struct Group {
    old: Vec<usize>,
    new: Vec<usize>,
}
/// Diff two closures.
pub fn diff(old: &Closure, new: &Closure, opts: &DiffOptions) -> Result<DiffReport, AnalysisError> {
    // The two sides are independent until they are compared: each on a core.
    let (o, n) = rayon::join(
        || Side::new(old, opts.root.as_deref()),
        || Side::new(new, opts.root.as_deref()),
    );
    let (mut o, mut n) = (o?, n?);
    o.only = missing_from(&o.g.paths, &n.g.paths);
    n.only = missing_from(&n.g.paths, &o.g.paths);
    rayon::join(|| o.dominate(), || n.dominate());
    opts.timings
        .step("diff: graphs, dominators, exclusive sizes");

    let groups = groups(&o, &n);
    let changed: Vec<(&str, &Group)> = groups
        .iter()
        .filter(|(_, g)| g.old.iter().any(|&i| o.only[i]) || g.new.iter().any(|&i| n.only[i]))
        .map(|(k, g)| (*k, g))
        .collect();
    let (group_of_old, group_of_new) = group_of(&o, &n, &changed);
    let (removed_sizes, added_sizes) = rayon::join(
        || o.group_sizes(&group_of_old, changed.len()),
        || n.group_sizes(&group_of_new, changed.len()),
    );
    opts.timings
        .step("diff: what each changed package adds and removes");

    let mut counts = PathCounts::default();
    let mut packages: Vec<PackageDiff> = Vec::with_capacity(changed.len());
    for (gi, (pname, g)) in changed.iter().enumerate() {
        let exclusive = (added_sizes[gi].get(), removed_sizes[gi].get());
        packages.push(package_diff(&o, &n, pname, g, exclusive, &mut counts));
    }
    packages.sort_by(|a, b| {
        b.impact
            .unsigned_abs()
            .cmp(&a.impact.unsigned_abs())
            .then(b.nar_delta.unsigned_abs().cmp(&a.nar_delta.unsigned_abs()))
            .then_with(|| a.package.cmp(&b.package))
    });
    let rest = match opts.top {
        Some(t) if t < packages.len() => {
            let hidden = packages.split_off(t);
            Some(DiffRest {
                count: hidden.len(),
                nar_delta: hidden.iter().map(|p| p.nar_delta).sum(),
            })
        }
        _ => None,
    };
    let unchanged = o.only.iter().filter(|&&x| !x).count();
    let on = |side: Which, c: &Closure| {
        load_warnings(c)
            .into_iter()
            .map(move |warning| DiffWarning { side, warning })
    };
    let warnings: Vec<DiffWarning> = on(Which::Old, old).chain(on(Which::New, new)).collect();
    let (old_side, new_side) = (o.report_side(), n.report_side());
    Ok(DiffReport {
        schema_version: SCHEMA_VERSION,
        closure_size_delta: signed(new_side.closure_size) - signed(old_side.closure_size),
        old: old_side,
        new: new_side,
        paths_added: counts.added,
        paths_removed: counts.removed,
        paths_changed: counts.changed,
        paths_changed_same_size: counts.same_size,
        paths_unchanged: unchanged,
        packages,
        rest,
        warnings,
    })
}

/// Paths counted over every package.
#[derive(Default)]
struct PathCounts {
    added: usize,
    removed: usize,
    changed: usize,
    /// Changed paths whose NAR size did not change.
    same_size: usize,
}

/// Every path of both sides, grouped by package name.
fn groups<'s>(o: &'s Side<'_>, n: &'s Side<'_>) -> BTreeMap<&'s str, Group> {
    let mut groups: BTreeMap<&str, Group> = BTreeMap::new();
    for (side, is_old) in [(o, true), (n, false)] {
        for i in 0..side.g.len() {
            let g = groups
                .entry(parse_package_name(side.name(i)).pname)
                .or_default();
            if is_old { &mut g.old } else { &mut g.new }.push(i);
        }
    }
    groups
}

/// The changed group of each one-sided path (old side, new side).
fn group_of(
    o: &Side<'_>,
    n: &Side<'_>,
    changed: &[(&str, &Group)],
) -> (Vec<Option<u32>>, Vec<Option<u32>>) {
    let mut group_of_old = vec![None; o.g.len()];
    let mut group_of_new = vec![None; n.g.len()];
    for (gi, (_, g)) in changed.iter().enumerate() {
        for &i in g.old.iter().filter(|&&i| o.only[i]) {
            group_of_old[i] = Some(gi as u32);
        }
        for &i in g.new.iter().filter(|&&i| n.only[i]) {
            group_of_new[i] = Some(gi as u32);
        }
    }
    (group_of_old, group_of_new)
}

/// One changed package: its versions, sizes and paths; `(added_size, removed_size)`
/// are what its new paths bring in and its old paths took. Counts its paths into
/// `counts`.
fn package_diff(
    o: &Side<'_>,
    n: &Side<'_>,
    pname: &str,
    g: &Group,
    (added_size, removed_size): (u64, u64),
    counts: &mut PathCounts,
) -> PackageDiff {
    let old_versions: BTreeSet<&str> = g
        .old
        .iter()
        .map(|&i| parse_package_name(o.name(i)).version)
        .collect();
    let new_versions: BTreeSet<&str> = g
        .new
        .iter()
        .map(|&i| parse_package_name(n.name(i)).version)
        .collect();
    let gone: BTreeSet<&str> = old_versions.difference(&new_versions).copied().collect();
    let came: BTreeSet<&str> = new_versions.difference(&old_versions).copied().collect();
    let change = if g.old.is_empty() {
        PackageChange::Added
    } else if g.new.is_empty() {
        PackageChange::Removed
    } else if !gone.is_empty() || !came.is_empty() {
        PackageChange::Version
    } else {
        PackageChange::Rebuilt
    };
    let version_change = VersionChange {
        gone: gone.iter().map(|s| s.to_string()).collect(),
        came: came.iter().map(|s| s.to_string()).collect(),
    };
    let old_size = g.old.iter().map(|&i| o.g.nar_sizes[i]).sum::<Bytes>().get();
    let new_size = g.new.iter().map(|&i| n.g.nar_sizes[i]).sum::<Bytes>().get();
    let paths = path_diffs(o, n, g, counts);
    PackageDiff {
        package: pname.to_string(),
        change,
        version_change,
        old_versions: old_versions.iter().map(|s| s.to_string()).collect(),
        new_versions: new_versions.iter().map(|s| s.to_string()).collect(),
        old_size,
        new_size,
        nar_delta: signed(new_size) - signed(old_size),
        added_size,
        removed_size,
        impact: signed(added_size) - signed(removed_size),
        paths,
    }
}

/// The one-sided paths of a package, old and new paired by name, largest first.
fn path_diffs(o: &Side<'_>, n: &Side<'_>, g: &Group, counts: &mut PathCounts) -> Vec<PathDiff> {
    let (osd, nsd) = (&o.closure.store_dir, &n.closure.store_dir);
    // Pair old-only and new-only paths by name.
    let mut by_name: BTreeMap<&str, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
    for &i in g.old.iter().filter(|&&i| o.only[i]) {
        by_name.entry(o.name(i)).or_default().0.push(i);
    }
    for &i in g.new.iter().filter(|&&i| n.only[i]) {
        by_name.entry(n.name(i)).or_default().1.push(i);
    }
    let mut paths = Vec::new();
    for (name, (olds, news)) in &by_name {
        let parsed = parse_package_name(name);
        let count = olds.len().max(news.len());
        for k in 0..count {
            let (oi, ni) = (olds.get(k).copied(), news.get(k).copied());
            let kind = match (oi, ni) {
                (Some(a), Some(b)) => {
                    counts.changed += 1;
                    if o.g.nar_sizes[a] == n.g.nar_sizes[b] {
                        counts.same_size += 1;
                    }
                    PathChange::Changed
                }
                (None, _) => {
                    counts.added += 1;
                    PathChange::Added
                }
                (_, None) => {
                    counts.removed += 1;
                    PathChange::Removed
                }
            };
            paths.push(PathDiff {
                change: kind,
                name: name.to_string(),
                version: parsed.version.to_string(),
                output: parsed.output.to_string(),
                old_path: oi.map(|i| osd.display(&o.g.paths[i])),
                new_path: ni.map(|i| nsd.display(&n.g.paths[i])),
                old_nar_size: oi.map(|i| o.g.nar_sizes[i].get()),
                new_nar_size: ni.map(|i| n.g.nar_sizes[i].get()),
                added_size: ni.map_or(0, |i| n.exclusive[i].get()),
                removed_size: oi.map_or(0, |i| o.exclusive[i].get()),
            });
        }
    }
    paths.sort_by(|a, b| {
        let key = |p: &PathDiff| p.added_size.max(p.removed_size);
        key(b).cmp(&key(a)).then_with(|| a.name.cmp(&b.name))
    });
    paths
}

/// Sizes as signed deltas (closures are far below 2^63 bytes).
fn signed(x: u64) -> i64 {
    i64::try_from(x).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{PathInfo, SourceKind, StoreDir, StorePath};

    /// A closure from (hash char, name, size, references by name).
    fn world(spec: &[(char, &str, u64, &[&str])]) -> Closure {
        let sp = |h: char, name: &str| {
            StorePath::from_base_name(&format!("{}-{name}", h.to_string().repeat(32))).unwrap()
        };
        let by_name: BTreeMap<&str, char> = spec.iter().map(|(h, n, _, _)| (*n, *h)).collect();
        let mut c = Closure::new(StoreDir::default(), SourceKind::PathInfoJson, "w.json");
        for (h, name, size, refs) in spec {
            let mut info = PathInfo::new(sp(*h, name));
            info.nar_size = Some(*size);
            info.references = refs.iter().map(|r| sp(by_name[r], r)).collect();
            c.insert(info);
        }
        c
    }

    #[test]
    fn groups_by_package_and_ranks_by_impact() {
        let old = world(&[
            ('a', "app-1.0", 10, &["lib-1.0", "gcc-12.2.0-lib"]),
            ('b', "lib-1.0", 100, &["gcc-12.2.0-lib"]),
            ('c', "gcc-12.2.0-lib", 1000, &[]),
        ]);
        let new = world(&[
            (
                'd',
                "app-1.0",
                12,
                &["lib-2.0", "gcc-12.2.0-lib", "blob-1.0"],
            ),
            ('f', "lib-2.0", 150, &["gcc-12.2.0-lib"]),
            ('c', "gcc-12.2.0-lib", 1000, &[]),
            ('g', "blob-1.0", 5000, &["data-1"]),
            ('h', "data-1", 7, &[]),
        ]);
        let r = diff(&old, &new, &DiffOptions::default()).unwrap();
        assert_eq!(r.closure_size_delta, 6169 - 1110);
        assert_eq!(
            (
                r.paths_added,
                r.paths_removed,
                r.paths_changed,
                r.paths_unchanged
            ),
            (3, 1, 1, 1)
        );
        let names: Vec<&str> = r.packages.iter().map(|p| p.package.as_str()).collect();
        // app is rebuilt and now drags in lib-2.0 and blob: it tops the ranking.
        assert_eq!(names, vec!["app", "blob", "lib", "data"]);
        let app = &r.packages[0];
        assert_eq!(app.change, PackageChange::Rebuilt);
        assert_eq!(app.added_size, 12 + 150 + 5007);
        assert_eq!(app.removed_size, 110);
        assert_eq!(app.impact, 5169 - 110);
        assert_eq!(app.paths[0].change, PathChange::Changed);
        let blob = &r.packages[1];
        let versions = |gone: &[&str], came: &[&str]| VersionChange {
            gone: gone.iter().map(|s| s.to_string()).collect(),
            came: came.iter().map(|s| s.to_string()).collect(),
        };
        assert_eq!(blob.change, PackageChange::Added);
        assert_eq!(blob.version_change, versions(&[], &["1.0"]));
        assert_eq!(blob.added_size, 5007);
        let lib = &r.packages[2];
        assert_eq!(lib.change, PackageChange::Version);
        assert_eq!(lib.version_change, versions(&["1.0"], &["2.0"]));
        assert_eq!(lib.nar_delta, 50);
        let sum: i64 = r.packages.iter().map(|p| p.nar_delta).sum();
        assert_eq!(sum, r.closure_size_delta);
        assert!(!r.packages.iter().any(|p| p.package == "gcc"));

        let top = diff(
            &old,
            &new,
            &DiffOptions {
                top: Some(1),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(top.packages.len(), 1);
        let rest = top.rest.unwrap();
        assert_eq!(rest.count, 3);
        assert_eq!(
            top.packages[0].nar_delta + rest.nar_delta,
            r.closure_size_delta
        );
    }

    #[test]
    fn identical_closures_have_no_changes() {
        let c = world(&[('a', "app-1.0", 10, &["lib-1.0"]), ('b', "lib-1.0", 1, &[])]);
        let r = diff(&c, &c, &DiffOptions::default()).unwrap();
        assert!(r.packages.is_empty());
        assert_eq!(r.closure_size_delta, 0);
        assert_eq!(r.paths_unchanged, 2);
    }

    #[test]
    fn missing_from_matches_a_set_lookup() {
        use crate::graph::testutil::path;
        let mut mine: Vec<StorePath> = (0..40).filter(|i| i % 3 != 0).map(path).collect();
        let mut theirs: Vec<StorePath> = (0..50).filter(|i| i % 2 == 0).map(path).collect();
        mine.sort();
        theirs.sort();
        let set: std::collections::HashSet<&StorePath> = theirs.iter().collect();
        let expect: Vec<bool> = mine.iter().map(|p| !set.contains(p)).collect();
        assert_eq!(missing_from(&mine, &theirs), expect);
        assert_eq!(missing_from(&mine, &[]), vec![true; mine.len()]);
        assert!(missing_from(&[], &theirs).is_empty());
    }
}
