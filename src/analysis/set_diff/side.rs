//! One side of a package-set diff ([`Side`]): its graph, condensation, closure sizes
//! and the package of each path; and how roots are matched between the sides (by
//! package name and output, exact names first).

use std::collections::BTreeMap;
use std::collections::VecDeque;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::graph::{closure_sizes_in, closure_sums_in, ClosureGraph, Condensation};
use crate::store::{parse_package_name, Bytes, Closure, StorePath};

/// One side, prepared.
pub(super) struct Side<'a> {
    pub(super) closure: &'a Closure,
    pub(super) g: ClosureGraph,
    pub(super) sizes: Vec<Bytes>,
    /// Node of each declared root.
    pub(super) root_node: Vec<u32>,
    /// The components (numbered successors first: a component's successors have
    /// smaller numbers), their members and successor components.
    pub(super) cond: Condensation,
    /// Package id of each node (shared numbering with the other side).
    pub(super) pkg: Vec<u32>,
    /// The attribute path of each declared root (empty: the set names none).
    pub(super) attrs: &'a [Option<String>],
    /// Each path's closure download size, `None` when a path of that closure has none;
    /// empty when no path of the side has one.
    pub(super) download: Vec<Option<u64>>,
    /// The union's download size (`None` when some path's is unknown).
    pub(super) union_download: Option<u64>,
}

impl<'a> Side<'a> {
    pub(super) fn new(
        closure: &'a Closure,
        roots: &[StorePath],
        attrs: &'a [Option<String>],
        timings: &crate::timing::Timings,
    ) -> Side<'a> {
        let g = ClosureGraph::new(closure, roots);
        timings.step("set diff: one graph");
        let root_node = roots
            .iter()
            .map(|r| g.node(r).map_or(u32::MAX, |n| n.index() as u32))
            .collect();
        let cond = Condensation::of(&g);
        timings.step("set diff: one side's components");
        let sizes = closure_sizes_in(&cond);
        timings.step("set diff: one side's closure sizes");
        let (download, union_download) = downloads(closure, &g, &cond);
        timings.step("set diff: one side's download sizes");
        Side {
            closure,
            g,
            sizes,
            root_node,
            cond,
            pkg: Vec::new(),
            attrs,
            download,
            union_download,
        }
    }

    /// The attribute path of declared root `i`, when the set names one.
    pub(super) fn attr(&self, i: usize) -> Option<String> {
        self.attrs.get(i).cloned().flatten()
    }

    /// The closure download size of node `v` (`None`: unknown).
    pub(super) fn download_of(&self, v: usize) -> Option<u64> {
        self.download.get(v).copied().flatten()
    }

    pub(super) fn succ(&self, v: usize) -> &[u32] {
        self.g.successors(v)
    }

    pub(super) fn comps(&self) -> usize {
        self.cond.len()
    }

    /// Nodes of component `c`.
    pub(super) fn members(&self, c: u32) -> &[u32] {
        self.cond.members.of(c as usize)
    }

    /// What references node `v` among the store paths (not the virtual root).
    pub(super) fn parents(&self, v: usize) -> impl Iterator<Item = u32> + '_ {
        let n = self.g.len() as u32;
        self.g
            .predecessors(v)
            .iter()
            .copied()
            .filter(move |&p| p < n)
    }

    /// Successor components of component `c`.
    pub(super) fn comp_succ(&self, c: usize) -> &[u32] {
        self.cond.succ.of(c)
    }

    /// Components with predecessors first.
    pub(super) fn order(&self) -> impl Iterator<Item = u32> {
        (0..self.comps() as u32).rev()
    }

    pub(super) fn name(&self, v: usize) -> &str {
        self.g.paths[v].name()
    }

    pub(super) fn display(&self, v: usize) -> String {
        self.closure.store_dir.display(&self.g.paths[v])
    }

    /// The shortest chain from node `from` to any node in `to`, as store paths.
    pub(super) fn chain(&self, from: u32, to: &FxHashSet<u32>) -> Vec<String> {
        let mut parent: FxHashMap<u32, u32> = FxHashMap::default();
        parent.insert(from, u32::MAX);
        let mut queue = VecDeque::from([from]);
        while let Some(v) = queue.pop_front() {
            if to.contains(&v) {
                let mut chain = vec![v];
                let mut x = v;
                while let Some(&p) = parent.get(&x) {
                    if p == u32::MAX {
                        break;
                    }
                    chain.push(p);
                    x = p;
                }
                chain.reverse();
                return chain
                    .into_iter()
                    .map(|v| self.display(v as usize))
                    .collect();
            }
            for &w in self.succ(v as usize) {
                if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(w) {
                    e.insert(v);
                    queue.push_back(w);
                }
            }
        }
        Vec::new()
    }

    /// NAR bytes per package id in the closure of node `root` (one walk).
    pub(super) fn package_bytes(&self, root: u32) -> FxHashMap<u32, u64> {
        let mut seen: FxHashSet<u32> = FxHashSet::default();
        let mut stack = vec![root];
        seen.insert(root);
        let mut out: FxHashMap<u32, u64> = FxHashMap::default();
        while let Some(v) = stack.pop() {
            *out.entry(self.pkg[v as usize]).or_default() += self.g.nar_sizes[v as usize].get();
            for &w in self.succ(v as usize) {
                if seen.insert(w) {
                    stack.push(w);
                }
            }
        }
        out
    }
}

/// Every path's closure download size and the union's: one more pass of closure sums
/// when every path has a download size, two (the sizes, and how many paths lack one)
/// when some have; none when no path has one (a `nix path-info` of a local store).
fn downloads(
    closure: &Closure,
    g: &ClosureGraph,
    cond: &Condensation,
) -> (Vec<Option<u64>>, Option<u64>) {
    let own: Vec<Option<u64>> = g
        .paths
        .iter()
        .map(|p| closure.paths.get(p).and_then(|i| i.download_size))
        .collect();
    let unknown = own.iter().filter(|d| d.is_none()).count();
    if unknown == own.len() {
        return (Vec::new(), None);
    }
    let weights: Vec<u64> = own.iter().map(|d| d.unwrap_or(0)).collect();
    let sums = closure_sums_in(cond, &weights);
    let union = (unknown == 0).then(|| weights.iter().fold(0u64, |a, &b| a.saturating_add(b)));
    let lacking = (unknown > 0).then(|| {
        let w: Vec<u64> = own.iter().map(|d| u64::from(d.is_none())).collect();
        closure_sums_in(cond, &w)
    });
    let per_path = sums
        .iter()
        .enumerate()
        .map(|(v, s)| match &lacking {
            Some(l) if l[v].get() > 0 => None,
            _ => Some(s.get()),
        })
        .collect();
    (per_path, union)
}

/// The matching key of a root: package name and output.
pub(super) fn root_key(name: &str) -> (String, String) {
    let p = parse_package_name(name);
    (p.pname.to_string(), p.output.to_string())
}

pub(super) fn key_name(key: &(String, String)) -> String {
    if key.1 == "out" {
        key.0.clone()
    } else {
        format!("{}.{}", key.0, key.1)
    }
}

/// Pairs of (old root index, new root index), one-sided roots, and each pair's key.
pub(super) type Matching = (
    Vec<(usize, usize, (String, String))>,
    Vec<(usize, (String, String))>,
    Vec<(usize, (String, String))>,
);

pub(super) fn match_roots(old: &Side, new: &Side) -> Matching {
    let mut by_key: BTreeMap<(String, String), (Vec<usize>, Vec<usize>)> = BTreeMap::new();
    for (i, &r) in old.root_node.iter().enumerate() {
        by_key
            .entry(root_key(old.name(r as usize)))
            .or_default()
            .0
            .push(i);
    }
    for (i, &r) in new.root_node.iter().enumerate() {
        by_key
            .entry(root_key(new.name(r as usize)))
            .or_default()
            .1
            .push(i);
    }
    let mut pairs = Vec::new();
    let mut only_old = Vec::new();
    let mut only_new = Vec::new();
    for (key, (mut os, mut ns)) in by_key {
        let oname = |i: &usize| old.name(old.root_node[*i] as usize).to_string();
        let nname = |i: &usize| new.name(new.root_node[*i] as usize).to_string();
        os.sort_by_key(oname);
        ns.sort_by_key(nname);
        // Exact names first.
        let mut left_new: Vec<usize> = Vec::new();
        let mut used_old = vec![false; os.len()];
        for j in ns {
            let nm = nname(&j);
            match (0..os.len()).find(|&k| !used_old[k] && oname(&os[k]) == nm) {
                Some(k) => {
                    used_old[k] = true;
                    pairs.push((os[k], j, key.clone()));
                }
                None => left_new.push(j),
            }
        }
        let left_old: Vec<usize> = (0..os.len())
            .filter(|&k| !used_old[k])
            .map(|k| os[k])
            .collect();
        let both = left_old.len().min(left_new.len());
        for k in 0..both {
            pairs.push((left_old[k], left_new[k], key.clone()));
        }
        only_old.extend(left_old[both..].iter().map(|&i| (i, key.clone())));
        only_new.extend(left_new[both..].iter().map(|&i| (i, key.clone())));
    }
    (pairs, only_old, only_new)
}

pub(super) fn versions(side: &Side, nodes: &[u32]) -> Vec<String> {
    let mut v: Vec<String> = nodes
        .iter()
        .map(|&n| {
            parse_package_name(side.name(n as usize))
                .version
                .to_string()
        })
        .collect();
    v.sort();
    v.dedup();
    v
}
