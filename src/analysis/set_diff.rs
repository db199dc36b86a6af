//! `nixcut diff OLD NEW` (and `check`) of two package sets: every root's closure size
//! before and after, and the packages whose arrival, departure or change of size
//! explains the growth, summed over roots.
//!
//! Each set's graph is one [`ClosureGraph`] over the union of its roots' closures, and
//! every root's closure size is read off [`closure_sizes`] (every path's closure size
//! at once, no walk per root). Roots are matched by package name and output
//! ([`parse_package_name`] without the version); several roots with one key are paired
//! by exact name first, then in name order.
//!
//! Causes. For a package P (a package name: all its versions and outputs) and a root r
//! in both sets, let o and n be the NAR sizes of P's paths in r's old and new closures.
//! P is `added` to r when only n is there, `removed` when only o is, `grown` or
//! `shrunk` when both are and n ≠ o; the cause (P, change) sums n, −o or n − o over its
//! roots. Summed over every cause that is exactly the change of the matched roots'
//! closure sizes. Computed with bitsets of roots: the matched pairs are taken in blocks
//! of `64·W`; for each block and side a search from the block's roots finds the
//! components they reach that lead to a package not proven unchanged ([`unchanged`]),
//! and one pass over those, predecessors first, ORs each component's set of block roots
//! into its successors; then each package with a reached path gets the OR of its
//! reached paths' sets on each side, and `added`/`removed` bytes are sizes times
//! popcounts. A block costs what its roots reach (O((reached + their edges)·W) words),
//! never the whole graph: N roots over one shared library cost O(N), where a pass over
//! every component per block cost O(N²/1024). Only a package present on both sides in
//! a root with several paths, whose paths do not pair up by name, size and reaching
//! roots, is summed root by root. Blocks run in parallel (rayon); memory per worker: a
//! position per component and W words per reached component per side.
//!
//! The mass rebuild (paths with a new hash and the same name) is counted, not listed:
//! rebuilt paths of unchanged size change no root's size and make no cause.

use std::collections::BTreeMap;
use std::collections::VecDeque;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::graph::{closure_sizes, ClosureGraph};
use crate::report::{
    Cause, CauseChange, DiffWarning, FailedRoot, GrowthLimit, RebuildSummary, RootCause,
    RootCounts, RootDiff, RootSide, SetCheck, SetDiffReport, SetRest, SetSide, SetTotal,
    Side as DiffSideName, SCHEMA_VERSION,
};
use crate::store::{parse_package_name, Bytes, Closure, StorePath};

use super::common::load_warnings;
use super::{AnalysisError, SetSumOutOfRange};

/// Words of root bitset per component per block.
const W: usize = 16;
const BLOCK: usize = 64 * W;

/// One package set to diff: the file it was read from, its roots, and a graph that
/// describes every root's closure (it may hold more: both sets can share one graph).
#[derive(Debug, Clone, Copy)]
pub struct SetInput<'a> {
    pub origin: &'a str,
    pub roots: &'a [StorePath],
    pub graph: &'a Closure,
}

/// Options of a package-set diff or check.
#[derive(Debug, Clone, Default)]
pub struct SetDiffOptions {
    /// Keep the first N matched roots (and N of each one-sided group) and the N
    /// largest growing and N largest shrinking causes; `None`: all.
    pub top: Option<usize>,
    /// Rows the table and Markdown show before collapsing the rest.
    pub show: usize,
    /// `check`: the per-root and total limits (`None`: a plain diff).
    pub check: Option<SetLimits>,
    /// Where the steps report their times.
    pub timings: crate::timing::Timings,
}

/// The limits of `check` on package sets.
#[derive(Debug, Clone, Copy, Default)]
pub struct SetLimits {
    pub max_growth: Option<GrowthLimit>,
    pub max_total_growth: Option<GrowthLimit>,
}

/// One side, prepared.
struct Side<'a> {
    closure: &'a Closure,
    g: ClosureGraph,
    sizes: Vec<Bytes>,
    /// Node of each declared root.
    root_node: Vec<u32>,
    /// Component of each node (numbered successors first: a component's successors
    /// have smaller numbers), and each component's successor components.
    comp_of: Vec<u32>,
    /// Nodes of each component: `members[member_start[c]..member_start[c + 1]]`.
    member_start: Vec<u32>,
    members: Vec<u32>,
    comp_start: Vec<u32>,
    comp_flat: Vec<u32>,
    /// Package id of each node (shared numbering with the other side).
    pkg: Vec<u32>,
}

impl<'a> Side<'a> {
    fn new(
        closure: &'a Closure,
        roots: &[StorePath],
        timings: &crate::timing::Timings,
    ) -> Side<'a> {
        let g = ClosureGraph::new(closure, roots);
        timings.step("set diff: one graph");
        let sizes = closure_sizes(&g);
        timings.step("set diff: one side's closure sizes");
        let root_node = roots
            .iter()
            .map(|r| g.node(r).map_or(u32::MAX, |n| n.index() as u32))
            .collect();
        let n = g.len();
        // `components` gives successors first; the pass wants predecessors first.
        let mut comp_of = vec![u32::MAX; n];
        let mut nc = 0u32;
        for scc in crate::graph::components(&g) {
            for v in scc {
                comp_of[v as usize] = nc;
            }
            nc += 1;
        }
        let mut member_start = vec![0u32; nc as usize + 1];
        for &c in &comp_of {
            member_start[c as usize + 1] += 1;
        }
        for c in 0..nc as usize {
            member_start[c + 1] += member_start[c];
        }
        let mut fill = member_start.clone();
        let mut members = vec![0u32; n];
        for (v, &c) in comp_of.iter().enumerate() {
            members[fill[c as usize] as usize] = v as u32;
            fill[c as usize] += 1;
        }
        timings.step("set diff: one side's csr and components");
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); nc as usize];
        for v in 0..n {
            let cv = comp_of[v];
            for &w in g.successors(v) {
                let cw = comp_of[w as usize];
                if cw != cv {
                    lists[cv as usize].push(cw);
                }
            }
        }
        let mut comp_start = Vec::with_capacity(nc as usize + 1);
        let mut comp_flat = Vec::new();
        comp_start.push(0u32);
        for mut l in lists {
            l.sort_unstable();
            l.dedup();
            comp_flat.extend_from_slice(&l);
            comp_start.push(comp_flat.len() as u32);
        }
        Side {
            closure,
            g,
            sizes,
            root_node,
            comp_of,
            member_start,
            members,
            comp_start,
            comp_flat,
            pkg: Vec::new(),
        }
    }

    fn succ(&self, v: usize) -> &[u32] {
        self.g.successors(v)
    }

    fn comps(&self) -> usize {
        self.comp_start.len() - 1
    }

    /// Nodes of component `c`.
    fn members(&self, c: u32) -> &[u32] {
        &self.members
            [self.member_start[c as usize] as usize..self.member_start[c as usize + 1] as usize]
    }

    /// What references node `v` among the store paths (not the virtual root).
    fn parents(&self, v: usize) -> impl Iterator<Item = u32> + '_ {
        let n = self.g.len() as u32;
        self.g
            .predecessors(v)
            .iter()
            .copied()
            .filter(move |&p| p < n)
    }

    /// Successor components of component `c`.
    fn comp_succ(&self, c: usize) -> &[u32] {
        &self.comp_flat[self.comp_start[c] as usize..self.comp_start[c + 1] as usize]
    }

    /// Components with predecessors first.
    fn order(&self) -> impl Iterator<Item = u32> {
        (0..self.comps() as u32).rev()
    }

    fn name(&self, v: usize) -> &str {
        self.g.paths[v].name()
    }

    fn display(&self, v: usize) -> String {
        self.closure.store_dir.display(&self.g.paths[v])
    }

    /// The shortest chain from node `from` to any node in `to`, as store paths.
    fn chain(&self, from: u32, to: &FxHashSet<u32>) -> Vec<String> {
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
    fn package_bytes(&self, root: u32) -> FxHashMap<u32, u64> {
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

/// The matching key of a root: package name and output.
fn root_key(name: &str) -> (String, String) {
    let p = parse_package_name(name);
    (p.pname.to_string(), p.output.to_string())
}

fn key_name(key: &(String, String)) -> String {
    if key.1 == "out" {
        key.0.clone()
    } else {
        format!("{}.{}", key.0, key.1)
    }
}

/// Pairs of (old root index, new root index), one-sided roots, and each pair's key.
type Matching = (
    Vec<(usize, usize, (String, String))>,
    Vec<(usize, (String, String))>,
    Vec<(usize, (String, String))>,
);

fn match_roots(old: &Side, new: &Side) -> Matching {
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

/// Per package and change: roots, bytes, the first pair it reaches.
#[derive(Clone, Copy, Default)]
struct Acc {
    roots: usize,
    bytes: i128,
    example: u32,
}

impl Acc {
    fn add(&mut self, roots: usize, bytes: i128, first: u32) {
        if roots == 0 {
            return;
        }
        if self.roots == 0 || first < self.example {
            self.example = first;
        }
        self.roots += roots;
        self.bytes += bytes;
    }

    fn merge(&mut self, other: &Acc) {
        self.add(other.roots, other.bytes, other.example);
    }
}

const CHANGES: [CauseChange; 4] = [
    CauseChange::Added,
    CauseChange::Removed,
    CauseChange::Grown,
    CauseChange::Shrunk,
];

/// Packages: their paths on each side, and whether they pair up path for path.
struct Packages {
    names: Vec<String>,
    old_nodes: Vec<Vec<u32>>,
    new_nodes: Vec<Vec<u32>>,
    /// `Some(pairs)` when the old and new paths pair up one to one by name and size.
    paired: Vec<Option<Vec<(u32, u32)>>>,
    /// Packages that provably change no matched root's closure ([`unchanged`]).
    skip: Vec<bool>,
}

fn packages(old: &mut Side, new: &mut Side) -> Packages {
    let mut ids: FxHashMap<String, u32> = FxHashMap::default();
    let mut names: Vec<String> = Vec::new();
    let mut id_of = |name: &str| -> u32 {
        let p = parse_package_name(name).pname;
        if let Some(&i) = ids.get(p) {
            return i;
        }
        let i = names.len() as u32;
        ids.insert(p.to_string(), i);
        names.push(p.to_string());
        i
    };
    old.pkg = (0..old.g.len()).map(|v| id_of(old.name(v))).collect();
    new.pkg = (0..new.g.len()).map(|v| id_of(new.name(v))).collect();
    let np = names.len();
    let mut old_nodes = vec![Vec::new(); np];
    let mut new_nodes = vec![Vec::new(); np];
    for (v, &p) in old.pkg.iter().enumerate() {
        old_nodes[p as usize].push(v as u32);
    }
    for (v, &p) in new.pkg.iter().enumerate() {
        new_nodes[p as usize].push(v as u32);
    }
    let paired = (0..np)
        .map(|p| {
            let (os, ns) = (&old_nodes[p], &new_nodes[p]);
            if os.len() != ns.len() || os.len() < 2 {
                return None;
            }
            let mut a: Vec<(&str, u64, u32)> = os
                .iter()
                .map(|&v| (old.name(v as usize), old.g.nar_sizes[v as usize].get(), v))
                .collect();
            let mut b: Vec<(&str, u64, u32)> = ns
                .iter()
                .map(|&v| (new.name(v as usize), new.g.nar_sizes[v as usize].get(), v))
                .collect();
            a.sort_unstable();
            b.sort_unstable();
            a.iter()
                .zip(&b)
                .all(|(x, y)| x.0 == y.0 && x.1 == y.1)
                .then(|| a.iter().zip(&b).map(|(x, y)| (x.2, y.2)).collect())
        })
        .collect();
    Packages {
        names,
        old_nodes,
        new_nodes,
        paired,
        skip: Vec::new(),
    }
}

/// The key a path is matched by between the sides: `(pname, output)` when each side
/// has at most one path with it, else the name without hash when that is unique.
fn counterparts(old: &Side, new: &Side) -> (Vec<u32>, Vec<u32>) {
    /// (pname, output) or the whole name, borrowed from the graphs.
    #[derive(Hash, PartialEq, Eq)]
    enum Ident<'s> {
        Key(&'s str, &'s str),
        Name(&'s str),
    }
    fn key(name: &str) -> (&str, &str) {
        let p = parse_package_name(name);
        (p.pname, p.output)
    }
    let mut keys: FxHashMap<(&str, &str), (u32, u32)> = FxHashMap::default();
    let mut names: FxHashMap<&str, (u32, u32)> = FxHashMap::default();
    for v in 0..old.g.len() {
        keys.entry(key(old.name(v))).or_default().0 += 1;
        names.entry(old.name(v)).or_default().0 += 1;
    }
    for v in 0..new.g.len() {
        keys.entry(key(new.name(v))).or_default().1 += 1;
        names.entry(new.name(v)).or_default().1 += 1;
    }
    fn ident<'s>(
        name: &'s str,
        keys: &FxHashMap<(&str, &str), (u32, u32)>,
        names: &FxHashMap<&str, (u32, u32)>,
    ) -> Option<Ident<'s>> {
        let k = key(name);
        if keys.get(&k).is_some_and(|c| c.0 <= 1 && c.1 <= 1) {
            return Some(Ident::Key(k.0, k.1));
        }
        names
            .get(name)
            .is_some_and(|c| c.0 <= 1 && c.1 <= 1)
            .then_some(Ident::Name(name))
    }
    let old_ids: FxHashMap<Ident, u32> = (0..old.g.len())
        .filter_map(|v| ident(old.name(v), &keys, &names).map(|k| (k, v as u32)))
        .collect();
    let mut new_to_old = vec![u32::MAX; new.g.len()];
    let mut old_to_new = vec![u32::MAX; old.g.len()];
    for (v, slot) in new_to_old.iter_mut().enumerate() {
        if let Some(&o) = ident(new.name(v), &keys, &names).and_then(|k| old_ids.get(&k)) {
            *slot = o;
            old_to_new[o as usize] = v as u32;
        }
    }
    (new_to_old, old_to_new)
}

/// Whether no matched root reaches each node (`empty`), taken predecessors first, and
/// whether it is in a cycle.
fn empty_and_cyclic(s: &Side, pair_of: &[u32]) -> (Vec<bool>, Vec<bool>) {
    let n = s.g.len();
    let cyclic: Vec<bool> = (0..n).map(|v| s.members(s.comp_of[v]).len() > 1).collect();
    let mut empty = vec![false; n];
    for c in s.order() {
        for &v in s.members(c) {
            let v = v as usize;
            empty[v] =
                !cyclic[v] && pair_of[v] == u32::MAX && s.parents(v).all(|p| empty[p as usize]);
        }
    }
    (empty, cyclic)
}

/// Which packages change no matched root's closure, proven without bitsets: every path
/// of the package is reached by no matched root on its side, or has a counterpart of
/// the same NAR size (same package name and output, or same name) reached by exactly the
/// same matched roots. The last is shown top-down: a path and its counterpart are
/// reached by the same roots when they are the same matched root or none, and their
/// parents (those any matched root reaches) are counterparts reached by the same roots.
/// O(n + m) with hashing; a mass rebuild that changed no size is skipped whole.
fn unchanged(
    old: &Side,
    new: &Side,
    pk: &Packages,
    pairs: &[(usize, usize, (String, String))],
) -> Vec<bool> {
    let (new_to_old, old_to_new) = counterparts(old, new);
    let mut pair_old = vec![u32::MAX; old.g.len()];
    let mut pair_new = vec![u32::MAX; new.g.len()];
    for (i, (o, n, _)) in pairs.iter().enumerate() {
        pair_old[old.root_node[*o] as usize] = i as u32;
        pair_new[new.root_node[*n] as usize] = i as u32;
    }
    let (empty_old, cyc_old) = empty_and_cyclic(old, &pair_old);
    let (empty_new, cyc_new) = empty_and_cyclic(new, &pair_new);
    // eq[v]: new node v and its counterpart are reached by the same matched roots.
    let mut eq = vec![false; new.g.len()];
    let mut a: Vec<u32> = Vec::new();
    let mut b: Vec<u32> = Vec::new();
    for c in new.order() {
        for &v in new.members(c) {
            let v = v as usize;
            let y = new_to_old[v];
            if y == u32::MAX || cyc_new[v] || cyc_old[y as usize] {
                continue;
            }
            let y = y as usize;
            if pair_new[v] != pair_old[y] {
                continue;
            }
            a.clear();
            b.clear();
            let mut ok = true;
            for p in new.parents(v) {
                if empty_new[p as usize] {
                    continue;
                }
                if !eq[p as usize] {
                    ok = false;
                    break;
                }
                a.push(new_to_old[p as usize]);
            }
            if !ok {
                continue;
            }
            b.extend(old.parents(y).filter(|&p| !empty_old[p as usize]));
            a.sort_unstable();
            b.sort_unstable();
            eq[v] = a == b;
        }
    }
    (0..pk.names.len())
        .map(|p| {
            pk.new_nodes[p].iter().all(|&v| {
                let v = v as usize;
                empty_new[v]
                    || (eq[v] && new.g.nar_sizes[v] == old.g.nar_sizes[new_to_old[v] as usize])
            }) && pk.old_nodes[p].iter().all(|&y| {
                let y = y as usize;
                let x = old_to_new[y];
                empty_old[y]
                    || (x != u32::MAX
                        && eq[x as usize]
                        && new.g.nar_sizes[x as usize] == old.g.nar_sizes[y])
            })
        })
        .collect()
}

fn popcount(words: &[u64]) -> usize {
    words.iter().map(|w| w.count_ones() as usize).sum()
}

fn first_bit(words: &[u64]) -> Option<u32> {
    words
        .iter()
        .enumerate()
        .find(|(_, &w)| w != 0)
        .map(|(i, w)| (i * 64) as u32 + w.trailing_zeros())
}

fn and(a: &[u64], b: &[u64]) -> [u64; W] {
    let mut out = [0u64; W];
    for i in 0..W {
        out[i] = a[i] & b[i];
    }
    out
}

/// What the cause pass needs of one side besides [`Side`]: which components lead to a
/// path of a package that may change something.
struct Reach {
    /// Component `c` reaches (or holds) a path of a package not proven unchanged.
    relevant: Vec<bool>,
}

impl Reach {
    /// One pass over the components, successors first. O(n + m).
    fn new(s: &Side, skip: &[bool]) -> Reach {
        let nc = s.comps();
        let mut relevant = vec![false; nc];
        for c in 0..nc {
            let own = s
                .members(c as u32)
                .iter()
                .any(|&v| !skip[s.pkg[v as usize] as usize]);
            // Successors have smaller numbers: already decided.
            relevant[c] = own || s.comp_succ(c).iter().any(|&d| relevant[d as usize]);
        }
        Reach { relevant }
    }
}

/// One worker's rows for one side: the relevant components a block's roots reach, each
/// with the set of block roots reaching it (`rows[i·W..i·W+W]` for the `i`-th).
struct Rows {
    /// Position of each component in `visited`, `u32::MAX` when the block does not
    /// reach it (reset after every block: the cost is what the block visits).
    local: Vec<u32>,
    visited: Vec<u32>,
    rows: Vec<u64>,
    stack: Vec<u32>,
}

const ZERO_ROW: [u64; W] = [0; W];
const SEEN: u32 = u32::MAX - 1;

impl Rows {
    fn new(s: &Side) -> Rows {
        Rows {
            local: vec![u32::MAX; s.comps()],
            visited: Vec::new(),
            rows: Vec::new(),
            stack: Vec::new(),
        }
    }

    /// Fill the rows of the block roots `roots`: a search from them through relevant
    /// components, then one pass over what it found, predecessors first, ORing each
    /// component's set into its successors. O((visited + their edges)·W).
    fn fill(&mut self, s: &Side, reach: &Reach, roots: &[u32]) {
        for &c in &self.visited {
            self.local[c as usize] = u32::MAX;
        }
        self.visited.clear();
        for &r in roots {
            let c = s.comp_of[r as usize];
            if reach.relevant[c as usize] && self.local[c as usize] == u32::MAX {
                self.local[c as usize] = SEEN;
                self.visited.push(c);
                self.stack.push(c);
            }
        }
        while let Some(c) = self.stack.pop() {
            for &d in s.comp_succ(c as usize) {
                if reach.relevant[d as usize] && self.local[d as usize] == u32::MAX {
                    self.local[d as usize] = SEEN;
                    self.visited.push(d);
                    self.stack.push(d);
                }
            }
        }
        // Predecessors first: successors have smaller numbers.
        self.visited.sort_unstable_by(|a, b| b.cmp(a));
        for (i, &c) in self.visited.iter().enumerate() {
            self.local[c as usize] = i as u32;
        }
        self.rows.clear();
        self.rows.resize(self.visited.len() * W, 0);
        for (bit, &r) in roots.iter().enumerate() {
            let l = self.local[s.comp_of[r as usize] as usize];
            if l != u32::MAX {
                self.rows[l as usize * W + bit / 64] |= 1u64 << (bit % 64);
            }
        }
        for i in 0..self.visited.len() {
            let mut mine = [0u64; W];
            mine.copy_from_slice(&self.rows[i * W..i * W + W]);
            if mine == ZERO_ROW {
                continue;
            }
            for &d in s.comp_succ(self.visited[i] as usize) {
                let l = self.local[d as usize];
                if l == u32::MAX {
                    continue; // not relevant
                }
                let l = l as usize;
                for (a, b) in self.rows[l * W..l * W + W].iter_mut().zip(&mine) {
                    *a |= *b;
                }
            }
        }
    }

    /// The block roots reaching node `v` (none when the block does not reach it).
    fn row(&self, s: &Side, v: u32) -> &[u64] {
        match self.local[s.comp_of[v as usize] as usize] {
            u32::MAX => &ZERO_ROW,
            l => &self.rows[l as usize * W..l as usize * W + W],
        }
    }
}

/// One worker's state: rows of both sides, and the paths a block reaches.
struct Scratch {
    old: Rows,
    new: Rows,
    /// (package, side: 0 old, 1 new, node) of every reached path of a package that may
    /// change something.
    touched: Vec<(u32, u8, u32)>,
}

/// Counterparts of paths of packages whose paths pair up (`Packages::paired`), per side.
struct Partners {
    of_old: Vec<u32>,
    of_new: Vec<u32>,
}

impl Partners {
    fn new(old: &Side, new: &Side, pk: &Packages) -> Partners {
        let mut of_old = vec![u32::MAX; old.g.len()];
        let mut of_new = vec![u32::MAX; new.g.len()];
        for (x, y) in pk.paired.iter().flatten().flatten() {
            of_old[*x as usize] = *y;
            of_new[*y as usize] = *x;
        }
        Partners { of_old, of_new }
    }
}

/// The causes of the pairs `start..start + roots.len()`, as (package, change index,
/// sums), and the components the block visited on both sides (its work). Only the
/// packages whose paths the block reaches are looked at, and only those paths.
fn block_causes(
    (old, new): (&Side, &Side),
    (ro_reach, rn_reach): (&Reach, &Reach),
    (pk, partners): (&Packages, &Partners),
    start: usize,
    (old_roots, new_roots): (&[u32], &[u32]),
    sc: &mut Scratch,
) -> (Vec<(usize, usize, Acc)>, usize) {
    sc.old.fill(old, ro_reach, old_roots);
    sc.new.fill(new, rn_reach, new_roots);
    let (ro, rn) = (&sc.old, &sc.new);
    let work = ro.visited.len() + rn.visited.len();
    sc.touched.clear();
    for (side, s, rows) in [(0u8, old, ro), (1u8, new, rn)] {
        for &c in &rows.visited {
            for &v in s.members(c) {
                let p = s.pkg[v as usize];
                if !pk.skip[p as usize] {
                    sc.touched.push((p, side, v));
                }
            }
        }
    }
    sc.touched.sort_unstable();
    let base = start as u32;
    let mut out = Vec::new();
    let mut os: Vec<u32> = Vec::new();
    let mut ns: Vec<u32> = Vec::new();
    for group in sc.touched.chunk_by(|a, b| a.0 == b.0) {
        let p = group[0].0 as usize;
        os.clear();
        ns.clear();
        for &(_, side, v) in group {
            if side == 0 {
                os.push(v)
            } else {
                ns.push(v)
            }
        }
        let mut a = [Acc::default(); 4];
        package_causes(
            (old, new),
            (ro, rn),
            (pk, partners),
            p,
            (&os, &ns),
            base,
            &mut a,
        );
        out.extend(
            a.iter()
                .enumerate()
                .filter(|(_, x)| x.roots > 0)
                .map(|(k, x)| (p, k, *x)),
        );
    }
    (out, work)
}

/// One package's causes in one block: `os` and `ns` are its paths the block reaches on
/// each side (the others are reached by no root of the block).
#[allow(clippy::too_many_arguments)]
fn package_causes(
    (old, new): (&Side, &Side),
    (ro, rn): (&Rows, &Rows),
    (pk, partners): (&Packages, &Partners),
    p: usize,
    (os, ns): (&[u32], &[u32]),
    base: u32,
    a: &mut [Acc; 4],
) {
    let mut ob = [0u64; W];
    for &v in os {
        for (a, b) in ob.iter_mut().zip(ro.row(old, v)) {
            *a |= *b;
        }
    }
    let mut nb = [0u64; W];
    for &v in ns {
        for (a, b) in nb.iter_mut().zip(rn.row(new, v)) {
            *a |= *b;
        }
    }
    let mut added = [0u64; W];
    let mut removed = [0u64; W];
    let mut both = [0u64; W];
    for i in 0..W {
        added[i] = nb[i] & !ob[i];
        removed[i] = ob[i] & !nb[i];
        both[i] = ob[i] & nb[i];
    }
    if let Some(first) = first_bit(&added) {
        let bytes: i128 = ns
            .iter()
            .map(|&v| {
                new.g.nar_sizes[v as usize].get() as i128
                    * popcount(&and(rn.row(new, v), &added)) as i128
            })
            .sum();
        a[0].add(popcount(&added), bytes, base + first);
    }
    if let Some(first) = first_bit(&removed) {
        let bytes: i128 = os
            .iter()
            .map(|&v| {
                old.g.nar_sizes[v as usize].get() as i128
                    * popcount(&and(ro.row(old, v), &removed)) as i128
            })
            .sum();
        a[1].add(popcount(&removed), -bytes, base + first);
    }
    let Some(first_both) = first_bit(&both) else {
        return;
    };
    let (all_old, all_new) = (&pk.old_nodes[p], &pk.new_nodes[p]);
    if all_old.len() == 1 && all_new.len() == 1 {
        let d = new.g.nar_sizes[all_new[0] as usize].get() as i128
            - old.g.nar_sizes[all_old[0] as usize].get() as i128;
        let first = base + first_both;
        let cnt = popcount(&both);
        match d.cmp(&0) {
            std::cmp::Ordering::Greater => a[2].add(cnt, d * cnt as i128, first),
            std::cmp::Ordering::Less => a[3].add(cnt, d * cnt as i128, first),
            std::cmp::Ordering::Equal => {}
        }
        return;
    }
    if pk.paired[p].is_some() {
        // Every pair with a reached path (the others: no block root on either side).
        let same = os.iter().all(|&x| {
            and(ro.row(old, x), &both) == and(rn.row(new, partners.of_old[x as usize]), &both)
        }) && ns.iter().all(|&y| {
            and(rn.row(new, y), &both) == and(ro.row(old, partners.of_new[y as usize]), &both)
        });
        if same {
            return; // every root in both has the same paths' sizes on each side
        }
    }
    // Root by root.
    for (wi, &word) in both.iter().enumerate() {
        let mut w = word;
        while w != 0 {
            let bit = w.trailing_zeros() as usize;
            w &= w - 1;
            let has = |row: &[u64]| row[wi] >> bit & 1 == 1;
            let o: i128 = os
                .iter()
                .filter(|&&v| has(ro.row(old, v)))
                .map(|&v| old.g.nar_sizes[v as usize].get() as i128)
                .sum();
            let n: i128 = ns
                .iter()
                .filter(|&&v| has(rn.row(new, v)))
                .map(|&v| new.g.nar_sizes[v as usize].get() as i128)
                .sum();
            let first = base + (wi * 64 + bit) as u32;
            match (n - o).cmp(&0) {
                std::cmp::Ordering::Greater => a[2].add(1, n - o, first),
                std::cmp::Ordering::Less => a[3].add(1, n - o, first),
                std::cmp::Ordering::Equal => {}
            }
        }
    }
}

/// Where a sum over roots or causes is checked: the two sets' names, for the error.
struct Ranges<'s> {
    old: &'s Side<'s>,
    new: &'s Side<'s>,
    old_origin: &'s str,
    new_origin: &'s str,
}

impl Ranges<'_> {
    /// The error for a sum `value` of `what` beyond `limit`, naming the largest NAR
    /// size of either side (the likely wrong one).
    fn error(&self, what: String, value: i128, limit: &'static str) -> AnalysisError {
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
    fn unsigned(&self, value: u128, what: impl FnOnce() -> String) -> Result<u64, AnalysisError> {
        u64::try_from(value).map_err(|_| self.error(what(), value as i128, U64_LIMIT))
    }

    /// A sum of signed changes: within the i64 range.
    fn signed(&self, value: i128, what: impl FnOnce() -> String) -> Result<i64, AnalysisError> {
        i64::try_from(value).map_err(|_| self.error(what(), value, I64_LIMIT))
    }
}

const U64_LIMIT: &str = "2^64 - 1 bytes (16 EiB), the largest size a report holds";
const I64_LIMIT: &str =
    "the range of a signed change (-2^63 to 2^63 - 1 bytes, 8 EiB), the largest change a report holds";

fn percent(old: u64, delta: i64) -> Option<f64> {
    (old > 0).then(|| delta as f64 / old as f64 * 100.0)
}

fn versions(side: &Side, nodes: &[u32]) -> Vec<String> {
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

/// Diff two package sets (see the module docs).
pub fn set_diff(
    old_in: SetInput<'_>,
    new_in: SetInput<'_>,
    opts: &SetDiffOptions,
) -> Result<SetDiffReport, AnalysisError> {
    let (mut old, mut new) = rayon::join(
        || Side::new(old_in.graph, old_in.roots, &opts.timings),
        || Side::new(new_in.graph, new_in.roots, &opts.timings),
    );
    opts.timings.step("set diff: graphs and closure sizes");
    // Every size of one side (a closure, a root's change, a package's bytes in one
    // closure) is a sum over part of its union: when the union fits the i64 range, none
    // of them leaves it. Only sums over several roots are checked one by one below.
    for (s, origin) in [(&old, old_in.origin), (&new, new_in.origin)] {
        let union: u128 = s.g.nar_sizes.iter().map(|b| u128::from(b.get())).sum();
        if i64::try_from(union).is_err() {
            let r = Ranges {
                old: &old,
                new: &new,
                old_origin: old_in.origin,
                new_origin: new_in.origin,
            };
            return Err(r.error(
                format!("the NAR sizes of the closures of `{origin}`"),
                union as i128,
                I64_LIMIT,
            ));
        }
    }
    let (pairs, only_old, only_new) = match_roots(&old, &new);
    opts.timings.step("set diff: roots matched");
    let mut pk = packages(&mut old, &mut new);
    opts.timings.step("set diff: packages");
    pk.skip = unchanged(&old, &new, &pk, &pairs);
    opts.timings.step("set diff: packages that change nothing");
    let (old, new) = (&old, &new);
    let ranges = Ranges {
        old,
        new,
        old_origin: old_in.origin,
        new_origin: new_in.origin,
    };
    let (acc, _work) = cause_sums(old, new, &pk, &pairs);
    opts.timings.step("set diff: causes");
    let pair_name: Vec<String> = pairs.iter().map(|p| key_name(&p.2)).collect();
    // Totals first: a root total out of range is the plainer message.
    let rr = root_rows(
        (old, new),
        &ranges,
        &pairs,
        (&only_old, &only_new),
        opts.top,
    )?;
    let found = ranked_causes(acc, &pk);
    for (p, k, a) in &found {
        ranges.signed(a.bytes, || {
            format!(
                "the bytes of the cause `{}` ({}) over its {} roots",
                pk.names[*p],
                CHANGES[*k].as_str(),
                a.roots
            )
        })?;
    }
    let cause_total: i128 = found.iter().map(|c| c.2.bytes).sum();
    let keep = kept_by_top(&found, opts.top);
    let causes = cause_rows(old, new, &pk, &pairs, &pair_name, &found, &keep);
    let shown_bytes: i128 = causes.iter().map(|c| c.bytes as i128).sum();
    let causes_hidden = found.len() - causes.len();
    let total_delta = rr.total_delta;
    let hidden_causes_bytes = ranges.signed(cause_total - shown_bytes, || {
        format!("the bytes of the {causes_hidden} causes not listed")
    })?;
    debug_assert_eq!(
        cause_total, total_delta as i128,
        "causes must add up to the total"
    );
    let rebuild = rebuild_summary(old, new, rr.rebuilt_same);
    let check = opts.check.map(|limits| {
        set_check(
            limits,
            (old, new),
            &pk,
            (&pairs, &pair_name),
            &rr,
            opts.show,
        )
    });
    Ok(SetDiffReport {
        schema_version: SCHEMA_VERSION,
        old: set_side(old, old_in.origin),
        new: set_side(new, new_in.origin),
        total: SetTotal {
            roots: pairs.len(),
            old: rr.total_old,
            new: rr.total_new,
            delta: total_delta,
            percent: percent(rr.total_old, total_delta),
        },
        counts: rr.counts,
        roots: rr.roots,
        causes,
        rebuild,
        rest: (rr.hidden_roots > 0 || causes_hidden > 0).then_some(SetRest {
            roots: rr.hidden_roots,
            roots_delta: rr.hidden_delta,
            causes: causes_hidden,
            causes_bytes: hidden_causes_bytes,
        }),
        check,
        warnings: set_warnings(old, new),
        show: opts.show,
    })
}

/// Matched pairs of roots: (old root index, new root index, key).
type Pairs = [(usize, usize, (String, String))];
/// Roots in one set only: (root index, key).
type OneSided = [(usize, (String, String))];
/// Sums of causes: (package, change index, sums).
type CauseSums = Vec<(usize, usize, Acc)>;

/// Per package and change, the roots and bytes of every cause over the matched pairs
/// (only those with roots), in blocks of `BLOCK` pairs on every core
/// ([`block_causes`]), and the components visited in all (the work done).
fn cause_sums(
    old: &Side,
    new: &Side,
    pk: &Packages,
    pairs: &Pairs,
) -> (Vec<(usize, usize, Acc)>, usize) {
    let old_roots: Vec<u32> = pairs.iter().map(|p| old.root_node[p.0]).collect();
    let new_roots: Vec<u32> = pairs.iter().map(|p| new.root_node[p.1]).collect();
    let (ro_reach, rn_reach) =
        rayon::join(|| Reach::new(old, &pk.skip), || Reach::new(new, &pk.skip));
    let partners = Partners::new(old, new, pk);
    let blocks: Vec<usize> = (0..pairs.len()).step_by(BLOCK).collect();
    let per_block: Vec<(CauseSums, usize)> = blocks
        .par_iter()
        .map_init(
            || Scratch {
                old: Rows::new(old),
                new: Rows::new(new),
                touched: Vec::new(),
            },
            |sc, &start| {
                let end = (start + BLOCK).min(pairs.len());
                block_causes(
                    (old, new),
                    (&ro_reach, &rn_reach),
                    (pk, &partners),
                    start,
                    (&old_roots[start..end], &new_roots[start..end]),
                    sc,
                )
            },
        )
        .collect();
    let work = per_block.iter().map(|b| b.1).sum();
    let mut all: Vec<(usize, usize, Acc)> = per_block.into_iter().flat_map(|b| b.0).collect();
    all.sort_unstable_by_key(|x| (x.0, x.1));
    let mut merged: Vec<(usize, usize, Acc)> = Vec::new();
    for (p, k, a) in all {
        match merged.last_mut() {
            Some(last) if last.0 == p && last.1 == k => last.2.merge(&a),
            _ => merged.push((p, k, a)),
        }
    }
    (merged, work)
}

/// The causes that change something, as (package, change index, sums), largest bytes
/// first; ties by roots, then package name, then change.
fn ranked_causes(acc: Vec<(usize, usize, Acc)>, pk: &Packages) -> Vec<(usize, usize, Acc)> {
    let mut found: Vec<(usize, usize, Acc)> = acc
        .into_iter()
        .filter(|(_, _, x)| x.roots > 0 && x.bytes != 0)
        .collect();
    found.sort_by(|x, y| {
        y.2.bytes
            .cmp(&x.2.bytes)
            .then(y.2.roots.cmp(&x.2.roots))
            .then_with(|| pk.names[x.0].cmp(&pk.names[y.0]))
            .then(x.1.cmp(&y.1))
    });
    found
}

/// Which ranked causes `--top` keeps: the largest growing and the largest shrinking.
fn kept_by_top(found: &[(usize, usize, Acc)], top: Option<usize>) -> Vec<bool> {
    match top {
        None => vec![true; found.len()],
        Some(t) => {
            let grow = found.iter().filter(|c| c.2.bytes > 0).count();
            (0..found.len())
                .map(|i| {
                    if i < grow {
                        i < t
                    } else {
                        found.len() - i <= t
                    }
                })
                .collect()
        }
    }
}

/// The report rows of the kept causes, each with its versions and the chain from its
/// example root (one search per row, on every core).
fn cause_rows(
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
            let (side, root, nodes) = match change {
                CauseChange::Added | CauseChange::Grown => {
                    (new, new.root_node[pair.1], &pk.new_nodes[*p])
                }
                CauseChange::Removed | CauseChange::Shrunk => {
                    (old, old.root_node[pair.0], &pk.old_nodes[*p])
                }
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
                chain: side.chain(root, &targets),
            }
        })
        .collect()
}

/// The root rows and their totals.
struct RootRows {
    /// Matched, then appeared, then vanished roots, each group cut at `--top`.
    roots: Vec<RootDiff>,
    hidden_roots: usize,
    hidden_delta: i64,
    counts: RootCounts,
    /// Closure sizes of the matched roots, summed on each side, and new minus old.
    total_old: u64,
    total_new: u64,
    total_delta: i64,
    /// Matched roots rebuilt (another store path) at the same closure size.
    rebuilt_same: usize,
}

/// One side of a root row: its store path and closure size.
fn root_side(s: &Side, i: usize) -> RootSide {
    let v = s.root_node[i] as usize;
    RootSide {
        path: s.display(v),
        closure_size: s.sizes[v].get(),
    }
}

/// Every root's row: the matched pairs (largest growth first), the roots only NEW or
/// only OLD has (largest first), the counts and totals, and what `--top` hides.
/// Sums over roots that leave the range a report holds are errors.
fn root_rows(
    (old, new): (&Side, &Side),
    ranges: &Ranges,
    pairs: &Pairs,
    (only_old, only_new): (&OneSided, &OneSided),
    top: Option<usize>,
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
    for (o, n, key) in pairs {
        let (so, sn) = (root_side(old, *o), root_side(new, *n));
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
    matched.sort_by(|a, b| b.delta.cmp(&a.delta).then_with(|| a.name.cmp(&b.name)));
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
    Ok(RootRows {
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
fn one_sided_rows(s: &Side, list: &[(usize, (String, String))], is_new: bool) -> Vec<RootDiff> {
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
fn set_check(
    limits: SetLimits,
    (old, new): (&Side, &Side),
    pk: &Packages,
    (pairs, pair_name): (&Pairs, &[String]),
    rr: &RootRows,
    show: usize,
) -> SetCheck {
    let total_delta = rr.total_delta;
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
                old: o,
                new: n,
                delta: r.delta,
                percent: r.percent,
                causes,
            }
        })
        .collect();
    let total_failed = limits
        .max_total_growth
        .is_some_and(|l| l.exceeded(rr.total_old, total_delta));
    SetCheck {
        pass: roots_failed == 0 && !total_failed,
        max_growth: limits.max_growth,
        max_total_growth: limits.max_total_growth,
        roots_failed,
        failed,
        total_failed,
    }
}

/// Both sides' load warnings, each marked with its side; when both sides are read
/// from one graph (as the binary loads them), its warnings once, marked as both.
fn set_warnings(old: &Side, new: &Side) -> Vec<DiffWarning> {
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
fn set_side(s: &Side, origin: &str) -> SetSide {
    SetSide {
        origin: origin.to_string(),
        graph: s.closure.origin.clone(),
        roots: s.root_node.len(),
        path_count: s.g.len(),
        union_size: s.g.total_size().get(),
        sizes_known: s.g.sizes_known,
    }
}

/// The largest package changes in one root's closure: one walk of each side.
fn root_causes(old: &Side, new: &Side, pk: &Packages, o: u32, n: u32) -> Vec<RootCause> {
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
    out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
    out.truncate(5);
    out
}

/// Rebuilt, added and removed paths between the two unions, by name.
fn rebuild_summary(old: &Side, new: &Side, roots_rebuilt_same_size: usize) -> RebuildSummary {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{PathInfo, SourceKind, StoreDir, NIX32_ALPHABET};
    use proptest::prelude::*;

    fn sp(id: usize, salt: u64, name: &str) -> StorePath {
        let mut h = [b'0'; 32];
        let mut x = (id as u64) * 64 + salt;
        for c in h.iter_mut().rev() {
            *c = NIX32_ALPHABET[(x % 32) as usize];
            x /= 32;
        }
        StorePath::from_base_name(&format!("{}-{name}", std::str::from_utf8(&h).unwrap())).unwrap()
    }

    /// A random side: names from a small pool (so packages have several paths and
    /// roots collide on keys), references in any direction (cycles).
    struct Gen {
        names: Vec<String>,
        sizes: Vec<u64>,
        refs: Vec<Vec<usize>>,
        salt: Vec<u64>,
        roots: Vec<usize>,
    }

    fn closure_of(g: &Gen) -> Closure {
        let mut c = Closure::new(StoreDir::default(), SourceKind::PathInfoJson, "gen");
        let path = |i: usize| sp(i, g.salt[i], &g.names[i]);
        for i in 0..g.names.len() {
            let mut info = PathInfo::new(path(i));
            info.nar_size = Some(g.sizes[i]);
            info.references = g.refs[i].iter().map(|&j| path(j)).collect();
            c.insert(info);
        }
        c.declared_roots = g.roots.iter().map(|&r| path(r)).collect();
        c.declared_roots.dedup();
        c
    }

    fn walk(c: &Closure, root: &StorePath) -> BTreeMap<String, u64> {
        let mut seen = FxHashSet::default();
        let mut stack = vec![root.clone()];
        let mut out = BTreeMap::new();
        while let Some(p) = stack.pop() {
            if !seen.insert(p.clone()) {
                continue;
            }
            let info = &c.paths[&p];
            *out.entry(parse_package_name(p.name()).pname.to_string())
                .or_insert(0) += info.nar_size.unwrap();
            stack.extend(info.references.iter().cloned());
        }
        out
    }

    /// The components the cause pass visits on both sides, as `set_diff` prepares it.
    fn cause_work(co: &Closure, cn: &Closure) -> usize {
        let timings = crate::timing::Timings::default();
        let mut old = Side::new(co, &co.declared_roots, &timings);
        let mut new = Side::new(cn, &cn.declared_roots, &timings);
        let (pairs, _, _) = match_roots(&old, &new);
        let mut pk = packages(&mut old, &mut new);
        pk.skip = unchanged(&old, &new, &pk, &pairs);
        cause_sums(&old, &new, &pk, &pairs).1
    }

    /// A side of `roots` roots `app<i>-1.0` (64 KiB each; NEW: a new hash, and every
    /// 101st grown by a version bump) above a shared part: `shape` gives the shared
    /// paths (name, size, references among them by index) and each root's references
    /// into them. NEW changes the size of shared path 0, so everything above it is
    /// rebuilt.
    fn shaped(
        roots: usize,
        shared: &[(String, u64, Vec<usize>)],
        refs: impl Fn(usize) -> Vec<usize>,
        new: bool,
    ) -> Closure {
        let salt = u64::from(new);
        let mut c = Closure::new(StoreDir::default(), SourceKind::PathInfoJson, "gen");
        let shared_path = |k: usize| sp(k, salt, &shared[k].0);
        for (k, (_, size, r)) in shared.iter().enumerate() {
            let mut info = PathInfo::new(shared_path(k));
            info.nar_size = Some(if new && k == 0 { size + 4096 } else { *size });
            info.references = r.iter().map(|&j| shared_path(j)).collect();
            c.insert(info);
        }
        for i in 0..roots {
            let own = new && i % 101 == 0;
            let name = format!("app{i}-{}", if own { "1.1" } else { "1.0" });
            let mut info = PathInfo::new(sp(shared.len() + i, salt, &name));
            info.nar_size = Some(if own { 65 << 10 } else { 64 << 10 });
            info.references = refs(i).into_iter().map(shared_path).collect();
            c.declared_roots.push(info.path.clone());
            c.insert(info);
        }
        c
    }

    /// Issue 31, item 7: the cause pass walked every component of each side once per
    /// block of 1,024 pairs (20 blocks here: 20 times the graph), so N roots over one
    /// shared library took O(N²/1024). It visits only what each block's roots reach
    /// towards a changed package: at most a few times the paths, for a star, a deep
    /// shared chain and wide private closures alike.
    #[test]
    fn the_cause_pass_visits_each_path_a_bounded_number_of_times() {
        let n = 20_000;
        let star = vec![("libshared-1.0".to_string(), 1 << 20, vec![])];
        let chain: Vec<(String, u64, Vec<usize>)> = (0..500)
            .map(|k| {
                (
                    format!("core{k}-1.0"),
                    10 << 10,
                    if k == 0 { vec![] } else { vec![k - 1] },
                )
            })
            .collect();
        let wide: Vec<(String, u64, Vec<usize>)> = (0..1000)
            .map(|k| (format!("shared{k}-1.0"), 100 << 10, vec![]))
            .collect();
        type Refs = Box<dyn Fn(usize) -> Vec<usize>>;
        type Shared = [(String, u64, Vec<usize>)];
        let shapes: [(&str, &Shared, Refs); 3] = [
            ("star", &star, Box::new(|_| vec![0])),
            ("chain", &chain, Box::new(|i| vec![i % 500])),
            (
                "wide",
                &wide,
                Box::new(|i| (0..5).map(|j| (i * 7 + j * 131) % 1000).collect()),
            ),
        ];
        for (name, shared, refs) in shapes {
            let (co, cn) = (
                shaped(n, shared, &refs, false),
                shaped(n, shared, &refs, true),
            );
            let paths = co.paths.len() + cn.paths.len();
            let work = cause_work(&co, &cn);
            assert!(
                work <= 4 * paths,
                "{name}: {work} components visited for {paths} paths"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn causes_and_sizes_equal_plain_walks(n in 2usize..120, seed in any::<u64>(), deg in 0usize..4) {
            let mut x = seed | 1;
            let mut rnd = move || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x };
            let pool = ["a", "b", "c", "d", "e", "f"];
            let outs = ["", "-dev", "-bin"];
            let mut old = Gen { names: vec![], sizes: vec![], refs: vec![], salt: vec![0; n], roots: vec![] };
            for _ in 0..n {
                let r = rnd();
                old.names.push(format!("{}-{}{}", pool[(r % 6) as usize], 1 + (r >> 8) % 2, outs[((r >> 16) % 3) as usize]));
                old.sizes.push(rnd() % 100);
                old.refs.push((0..deg).map(|_| (rnd() as usize) % n).collect());
            }
            old.roots = (0..n).filter(|_| rnd() % 3 == 0).collect();
            // NEW: some sizes, references, versions and roots change; changed paths
            // get new hashes.
            let mut new = Gen { names: old.names.clone(), sizes: old.sizes.clone(), refs: old.refs.clone(), salt: vec![0; n], roots: vec![] };
            for i in 0..n {
                match rnd() % 8 {
                    0 => { new.sizes[i] = rnd() % 100; new.salt[i] = 1; }
                    1 => { new.refs[i].push((rnd() as usize) % n); new.salt[i] = 2; }
                    2 => { new.refs[i].clear(); new.salt[i] = 3; }
                    3 => { new.names[i] = new.names[i].replacen("-1", "-3", 1); new.salt[i] = 4; }
                    _ => {}
                }
            }
            new.roots = (0..n).filter(|_| rnd() % 3 == 0).collect();
            let (co, cn) = (closure_of(&old), closure_of(&new));
            let r = set_diff(
                SetInput { origin: "old", roots: &co.declared_roots, graph: &co },
                SetInput { origin: "new", roots: &cn.declared_roots, graph: &cn },
                &SetDiffOptions::default(),
            ).unwrap();
            let mut want: BTreeMap<(String, CauseChange), (usize, i64)> = BTreeMap::new();
            let mut total = 0i64;
            let parse = |c: &Closure, s: &str| c.store_dir.parse_path(s).unwrap();
            for root in r.roots.iter() {
                let (Some(o), Some(nw)) = (&root.old, &root.new) else { continue };
                let (po, pn) = (parse(&co, &o.path), parse(&cn, &nw.path));
                prop_assert_eq!(root_key(po.name()), root_key(pn.name()));
                let (bo, bn) = (walk(&co, &po), walk(&cn, &pn));
                prop_assert_eq!(o.closure_size, bo.values().sum::<u64>());
                prop_assert_eq!(nw.closure_size, bn.values().sum::<u64>());
                total += nw.closure_size as i64 - o.closure_size as i64;
                for (p, &b) in &bn {
                    let (k, d) = match bo.get(p) {
                        None => (CauseChange::Added, b as i64),
                        Some(&a) if b > a => (CauseChange::Grown, b as i64 - a as i64),
                        Some(&a) if b < a => (CauseChange::Shrunk, b as i64 - a as i64),
                        Some(_) => continue,
                    };
                    let e = want.entry((p.clone(), k)).or_default();
                    e.0 += 1;
                    e.1 += d;
                }
                for (p, &a) in &bo {
                    if !bn.contains_key(p) {
                        let e = want.entry((p.clone(), CauseChange::Removed)).or_default();
                        e.0 += 1;
                        e.1 -= a as i64;
                    }
                }
            }
            want.retain(|_, v| v.1 != 0);
            let got: BTreeMap<(String, CauseChange), (usize, i64)> =
                r.causes.iter().map(|c| ((c.name.clone(), c.change), (c.roots, c.bytes))).collect();
            prop_assert_eq!(got, want);
            prop_assert_eq!(r.total.delta, total);
            prop_assert_eq!(r.counts.both + r.counts.only_old, co.declared_roots.len());
            prop_assert_eq!(r.counts.both + r.counts.only_new, cn.declared_roots.len());
            // Every chain starts at its example root and ends in the package.
            for c in &r.causes {
                let last = c.chain.last().unwrap();
                let name = last.rsplit('/').next().unwrap().split_once('-').unwrap().1;
                prop_assert_eq!(parse_package_name(name).pname, c.name.as_str());
            }
        }
    }
}
