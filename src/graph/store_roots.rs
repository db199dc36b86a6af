//! What every GC root of a whole store keeps, and what it alone keeps: the figures of
//! `nixcut store`.
//!
//! Definitions, for roots `r_1 … r_k` (GC root links, each naming one store path; two
//! links may name the same path) over a store's liveness graph (references, plus each
//! output's deriver under `keep-derivations`, plus each derivation's outputs under
//! `keep-outputs`, as Nix's garbage collector counts them):
//! - `closure(r)`: the NAR sizes of the paths `r`'s path reaches through references
//!   (what `nix path-info -S` prints), itself included;
//! - `alone(r)`: the NAR sizes of the paths that `r` keeps alive and no other root
//!   does, which is what deleting the link `r` alone would let the collector free;
//! - unreachable: the paths no root keeps (what `nix-store --gc` would delete now);
//!   shared: the paths two roots or more keep.
//!
//! `alone`, shared and unreachable come from one labelling pass: each path's label is
//! "no root", "root i" or "several roots"; roots seed their paths and labels flow along
//! liveness edges in topological order (a label meets another: "several"). O(n + m).
//!
//! Closure sizes ([`root_closures`], asked for the roots a report lists) take the
//! distinct root paths in batches of 64·[`W`]; one batch is a
//! depth-first walk over the union of its closures, then one pass in topological order
//! that ORs each path's bit set (which batch roots reach it) into its references', then
//! one pass adding each path's size to the roots in its set. A word of the set whose
//! roots all reach the path is counted once for the word, not per root, so the shared
//! base of a batch costs O(W) per path, not O(64·W). Cost per batch: O((u + e)·W) for
//! the u paths and e references of its union, plus the partial words' bits; roots are
//! batched in name order (generations of one profile, builds of one package sit side by
//! side, so a batch's closures overlap). Batches run on every core (rayon). The worst
//! case, unrelated roots with disjoint closures, is the sum of the closures: no exact
//! method does better in general. Measured figures: BENCHMARKS.md.
//!
//! A cycle (never in a store Nix wrote: references cannot form one, but `keep-outputs`
//! with `keep-derivations` ties each output to its derivation, and a hand-written file
//! can say anything) is condensed into one unit first (petgraph's Kosaraju), so both
//! passes always run over an acyclic graph.

use std::borrow::Cow;

use petgraph::graph::NodeIndex;
use petgraph::visit::{
    GraphBase, IntoNeighbors, IntoNeighborsDirected, IntoNodeIdentifiers, NodeCount, NodeIndexable,
    Visitable,
};
use petgraph::Direction;
use rayon::prelude::*;

use super::adjacency::Adjacency;
use super::petgraph_view::Visited;
use crate::store::{WholeStore, NO_PATH};

/// Words of bit set per path in a closure-size batch (64·W roots per batch).
const W: usize = 4;

/// What Nix's collector keeps beyond references (its `keep-derivations` and
/// `keep-outputs` settings; Nix's defaults are `true` and `false`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    /// A live output keeps its deriver (the `.drv` file) alive.
    pub derivations: bool,
    /// A live derivation keeps its outputs alive.
    pub outputs: bool,
}

impl Default for Keep {
    fn default() -> Self {
        Keep {
            derivations: true,
            outputs: false,
        }
    }
}

/// A number of paths and their bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub paths: u64,
    pub bytes: u64,
}

impl Tally {
    fn add(&mut self, paths: u64, bytes: u64) {
        self.paths += paths;
        self.bytes = self.bytes.saturating_add(bytes);
    }
}

/// The figures of every root (in the order the roots were given) and of the store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RootFigures {
    /// Each root's closure (references only).
    pub closure: Vec<Tally>,
    /// What each root alone keeps alive.
    pub alone: Vec<Tally>,
    /// Every path.
    pub store: Tally,
    /// Paths some root keeps alive.
    pub live: Tally,
    /// Paths two roots or more keep alive.
    pub shared: Tally,
    /// Paths no root keeps alive.
    pub unreachable: Tally,
}

/// Lists borrowed or owned: list `v` is `targets[offsets[v]..offsets[v + 1]]`.
#[derive(Debug, Clone)]
struct Lists<'a> {
    offsets: Cow<'a, [u32]>,
    targets: Cow<'a, [u32]>,
}

impl Lists<'_> {
    fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    fn of(&self, v: u32) -> &[u32] {
        &self.targets[self.offsets[v as usize] as usize..self.offsets[v as usize + 1] as usize]
    }
}

/// An acyclic graph over units (paths, or the paths of a cycle): its lists, each unit's
/// bytes and paths, the unit of each path, and a topological order (referrers first).
struct Dag<'a> {
    lists: Lists<'a>,
    /// Bytes of each unit.
    size: Cow<'a, [u64]>,
    /// Paths of each unit (`None`: one each).
    paths: Option<Vec<u64>>,
    /// The unit of each path (`None`: the path itself).
    unit_of: Option<Vec<u32>>,
    /// Every unit, referrers before their references.
    order: Vec<u32>,
}

impl Dag<'_> {
    fn unit(&self, path: u32) -> u32 {
        match &self.unit_of {
            Some(u) => u[path as usize],
            None => path,
        }
    }

    fn paths_of(&self, unit: u32) -> u64 {
        self.paths.as_ref().map_or(1, |p| p[unit as usize])
    }
}

/// Kahn's algorithm: every node, referrers first, or fewer nodes when there is a cycle.
fn topological(lists: &Lists<'_>) -> Vec<u32> {
    let n = lists.len();
    let mut indegree = vec![0u32; n];
    for &w in lists.targets.iter() {
        indegree[w as usize] += 1;
    }
    let mut order: Vec<u32> = (0..n as u32)
        .filter(|&v| indegree[v as usize] == 0)
        .collect();
    let mut next = 0;
    while next < order.len() {
        let v = order[next];
        next += 1;
        for &w in lists.of(v) {
            indegree[w as usize] -= 1;
            if indegree[w as usize] == 0 {
                order.push(w);
            }
        }
    }
    order
}

/// `lists` as an acyclic graph: itself when it has no cycle, else its condensation.
fn dag<'a>(lists: Lists<'a>, size: &'a [u64]) -> Dag<'a> {
    let order = topological(&lists);
    if order.len() == lists.len() {
        return Dag {
            lists,
            size: Cow::Borrowed(size),
            paths: None,
            unit_of: None,
            order,
        };
    }
    drop(order);
    let n = lists.len();
    let view = View {
        succ: &lists,
        pred: Adjacency::from_parts(lists.offsets.to_vec(), lists.targets.to_vec()).transpose(),
    };
    let mut unit_of = vec![0u32; n];
    let comps = petgraph::algo::kosaraju_scc(&view);
    drop(view);
    for (c, members) in comps.iter().enumerate() {
        for v in members {
            unit_of[v.index()] = c as u32;
        }
    }
    let units = comps.len();
    drop(comps);
    let mut usize_ = vec![0u64; units];
    let mut upaths = vec![0u64; units];
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); units];
    for v in 0..n {
        let u = unit_of[v] as usize;
        usize_[u] = usize_[u].saturating_add(size[v]);
        upaths[u] += 1;
        members[u].push(v as u32);
    }
    let mut offsets = Vec::with_capacity(units + 1);
    let mut targets = Vec::new();
    offsets.push(0u32);
    for (u, ms) in members.iter().enumerate() {
        let from = targets.len();
        for &v in ms {
            targets.extend(
                lists
                    .of(v)
                    .iter()
                    .map(|&w| unit_of[w as usize])
                    .filter(|&w| w as usize != u),
            );
        }
        sort_dedup_from(&mut targets, from);
        offsets.push(targets.len() as u32);
    }
    let lists = Lists {
        offsets: Cow::Owned(offsets),
        targets: Cow::Owned(targets),
    };
    let order = topological(&lists);
    debug_assert_eq!(order.len(), units, "a condensation is acyclic");
    Dag {
        lists,
        size: Cow::Owned(usize_),
        paths: Some(upaths),
        unit_of: Some(unit_of),
        order,
    }
}

/// The liveness lists: references plus the edges `keep` adds (`None`: references alone).
fn liveness_lists(store: &WholeStore, keep: Keep) -> Option<Lists<'static>> {
    let n = store.len();
    let mut extra: Vec<(u32, u32)> = Vec::new();
    if keep.derivations {
        extra.extend(
            (0..n as u32)
                .filter(|&v| store.deriver[v as usize] != NO_PATH)
                .map(|v| (v, store.deriver[v as usize])),
        );
    }
    if keep.outputs {
        match &store.outputs {
            Some(outs) => extra.extend(outs.iter().copied()),
            None => extra.extend(
                (0..n as u32)
                    .filter(|&v| store.deriver[v as usize] != NO_PATH)
                    .map(|v| (store.deriver[v as usize], v)),
            ),
        }
    }
    extra.retain(|&(a, b)| a != b && (a as usize) < n && (b as usize) < n);
    if extra.is_empty() {
        return None;
    }
    extra.sort_unstable();
    let mut offsets = Vec::with_capacity(n + 1);
    let mut targets = Vec::with_capacity(store.reference_count() + extra.len());
    offsets.push(0u32);
    let mut e = 0;
    for v in 0..n as u32 {
        let from = targets.len();
        targets.extend_from_slice(store.references(v));
        while e < extra.len() && extra[e].0 == v {
            targets.push(extra[e].1);
            e += 1;
        }
        if targets.len() - from > store.references(v).len() {
            sort_dedup_from(&mut targets, from);
        }
        offsets.push(targets.len() as u32);
    }
    Some(Lists {
        offsets: Cow::Owned(offsets),
        targets: Cow::Owned(targets),
    })
}

/// Sort `targets[from..]` (the list being built) and drop its repeats.
fn sort_dedup_from(targets: &mut Vec<u32>, from: usize) {
    let mut tail = targets.split_off(from);
    tail.sort_unstable();
    tail.dedup();
    targets.extend_from_slice(&tail);
}

const NONE: u32 = u32::MAX;
const MANY: u32 = u32::MAX - 1;

fn meet(a: u32, b: u32) -> u32 {
    match (a, b) {
        (NONE, x) | (x, NONE) => x,
        (x, y) if x == y => x,
        _ => MANY,
    }
}

/// The figures of `roots` (store path numbers, one per GC root link; repeats allowed)
/// over `store`: [`alone_figures`] and the [`root_closures`] of every root. Roots beyond
/// `u32::MAX - 2` are not supported (the labels' range).
pub fn root_figures(store: &WholeStore, roots: &[u32], keep: Keep) -> RootFigures {
    let mut fig = alone_figures(store, roots, keep);
    fig.closure = root_closures(store, roots);
    fig
}

/// What each of `roots` alone keeps, and what is live, shared and unreachable, in one
/// pass over the liveness graph: O(n + m) whatever the roots. `closure` is left empty
/// (see [`root_closures`], whose cost grows with the roots asked).
pub fn alone_figures(store: &WholeStore, roots: &[u32], keep: Keep) -> RootFigures {
    let n = store.len();
    let mut fig = RootFigures {
        alone: vec![Tally::default(); roots.len()],
        ..RootFigures::default()
    };
    for &s in &store.nar_size {
        fig.store.add(1, s);
    }
    let live = match liveness_lists(store, keep) {
        Some(l) => dag(l, &store.nar_size),
        None => dag(reference_lists(store), &store.nar_size),
    };
    let units = live.lists.len();
    let mut label = vec![NONE; units];
    for (i, &r) in roots.iter().enumerate() {
        if (r as usize) < n {
            let u = live.unit(r) as usize;
            label[u] = meet(label[u], i as u32);
        }
    }
    for &u in &live.order {
        let l = label[u as usize];
        if l == NONE {
            continue;
        }
        for &w in live.lists.of(u) {
            label[w as usize] = meet(label[w as usize], l);
        }
    }
    for (u, &l) in label.iter().enumerate() {
        let (paths, bytes) = (live.paths_of(u as u32), live.size[u]);
        match l {
            NONE => fig.unreachable.add(paths, bytes),
            MANY => {
                fig.shared.add(paths, bytes);
                fig.live.add(paths, bytes);
            }
            i => {
                fig.alone[i as usize].add(paths, bytes);
                fig.live.add(paths, bytes);
            }
        }
    }
    fig
}

fn reference_lists(store: &WholeStore) -> Lists<'_> {
    let (offsets, targets) = store.reference_lists();
    Lists {
        offsets: Cow::Borrowed(offsets),
        targets: Cow::Borrowed(targets),
    }
}

/// The closure (references only: what `nix path-info -S` sums) of each of `roots`, in
/// their order; a root that is not a path of `store` gets zero. One pass in topological
/// order over the whole store, then batches of 64·[`W`] distinct roots, each walking
/// the union of its closures: a few roots (the listed ones) cost one walk, every root
/// of a store costs up to the sum of their closures over 64·W.
pub fn root_closures(store: &WholeStore, roots: &[u32]) -> Vec<Tally> {
    let n = store.len();
    let roots: Vec<u32> = roots
        .iter()
        .map(|&r| if (r as usize) < n { r } else { NO_PATH })
        .collect();
    let mut closure = vec![Tally::default(); roots.len()];
    if roots.iter().all(|&r| r == NO_PATH) {
        return closure;
    }
    let refs = dag(reference_lists(store), &store.nar_size);
    let mut distinct: Vec<u32> = roots
        .iter()
        .filter(|&&r| r != NO_PATH)
        .map(|&r| refs.unit(r))
        .collect();
    distinct.sort_unstable();
    distinct.dedup();
    // Name order of a representative path of each unit: related roots side by side.
    let mut rep: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    for &r in roots.iter().filter(|&&r| r != NO_PATH) {
        rep.entry(refs.unit(r)).or_insert(r);
    }
    let name_of = |u: u32| {
        let b = store.base_name(rep[&u]);
        b.get(33..).unwrap_or(b)
    };
    distinct.par_sort_unstable_by(|&a, &b| name_of(a).cmp(name_of(b)).then(a.cmp(&b)));
    drop(rep);
    let sums: Vec<(u32, Tally)> = distinct
        .par_chunks(64 * W)
        .map_init(
            || Scratch::new(refs.lists.len()),
            |scratch, batch| closure_batch(&refs, batch, scratch),
        )
        .flatten_iter()
        .collect();
    let by_unit: std::collections::HashMap<u32, Tally> = sums.into_iter().collect();
    for (i, &r) in roots.iter().enumerate() {
        if r != NO_PATH {
            closure[i] = by_unit[&refs.unit(r)];
        }
    }
    closure
}

/// A worker's marks, kept from batch to batch: the batch that last saw each unit and
/// the unit's place in that batch's walk.
struct Scratch {
    epoch: u32,
    seen: Vec<u32>,
    place: Vec<u32>,
    post: Vec<u32>,
    stack: Vec<(u32, u32)>,
    sets: Vec<[u64; W]>,
}

impl Scratch {
    fn new(units: usize) -> Scratch {
        Scratch {
            epoch: 0,
            seen: vec![0; units],
            place: vec![0; units],
            post: Vec::new(),
            stack: Vec::new(),
            sets: Vec::new(),
        }
    }
}

/// The closures of the units `batch` (at most 64·W): each with its paths and bytes.
fn closure_batch(dag: &Dag<'_>, batch: &[u32], s: &mut Scratch) -> Vec<(u32, Tally)> {
    s.epoch += 1;
    let epoch = s.epoch;
    s.post.clear();
    // Depth first from every root of the batch: the union, in post-order.
    for &r in batch {
        if s.seen[r as usize] == epoch {
            continue;
        }
        s.seen[r as usize] = epoch;
        s.stack.push((r, 0));
        while let Some(top) = s.stack.last_mut() {
            let (v, i) = *top;
            let list = dag.lists.of(v);
            if let Some(&w) = list.get(i as usize) {
                top.1 += 1;
                if s.seen[w as usize] != epoch {
                    s.seen[w as usize] = epoch;
                    s.stack.push((w, 0));
                }
            } else {
                s.stack.pop();
                s.place[v as usize] = s.post.len() as u32;
                s.post.push(v);
            }
        }
    }
    s.sets.clear();
    s.sets.resize(s.post.len(), [0u64; W]);
    for (j, &r) in batch.iter().enumerate() {
        s.sets[s.place[r as usize] as usize][j / 64] |= 1u64 << (j % 64);
    }
    // Reverse post-order is topological: referrers first.
    for k in (0..s.post.len()).rev() {
        let set = s.sets[k];
        for &w in dag.lists.of(s.post[k]) {
            let t = &mut s.sets[s.place[w as usize] as usize];
            for (a, b) in t.iter_mut().zip(set) {
                *a |= b;
            }
        }
    }
    let full: [u64; W] = std::array::from_fn(|k| {
        let bits = batch.len().saturating_sub(k * 64).min(64);
        if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        }
    });
    let mut whole = [Tally::default(); W];
    let mut each = vec![Tally::default(); batch.len()];
    for (k, &u) in s.post.iter().enumerate() {
        let (paths, bytes) = (dag.paths_of(u), dag.size[u as usize]);
        for (word, (&set, &all)) in s.sets[k].iter().zip(&full).enumerate() {
            if set == 0 {
                continue;
            }
            if set == all {
                whole[word].add(paths, bytes);
                continue;
            }
            let mut bits = set;
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                each[word * 64 + b].add(paths, bytes);
            }
        }
    }
    batch
        .iter()
        .enumerate()
        .map(|(j, &u)| {
            let mut t = each[j];
            let w = whole[j / 64];
            t.add(w.paths, w.bytes);
            (u, t)
        })
        .collect()
}

/// Successor lists and their transpose, as petgraph sees a graph (for Kosaraju).
struct View<'a, 'b> {
    succ: &'b Lists<'a>,
    pred: Adjacency,
}

impl GraphBase for View<'_, '_> {
    type NodeId = NodeIndex<u32>;
    type EdgeId = ();
}

impl Visitable for View<'_, '_> {
    type Map = Visited;

    fn visit_map(&self) -> Visited {
        Visited::with_nodes(self.succ.len())
    }

    fn reset_map(&self, map: &mut Visited) {
        *map = Visited::with_nodes(self.succ.len());
    }
}

impl NodeCount for View<'_, '_> {
    fn node_count(&self) -> usize {
        self.succ.len()
    }
}

impl NodeIndexable for View<'_, '_> {
    fn node_bound(&self) -> usize {
        self.succ.len()
    }

    fn to_index(&self, a: NodeIndex<u32>) -> usize {
        a.index()
    }

    fn from_index(&self, i: usize) -> NodeIndex<u32> {
        NodeIndex::new(i)
    }
}

type Neighbors<'c> = std::iter::Map<std::slice::Iter<'c, u32>, fn(&u32) -> NodeIndex<u32>>;

fn to_node(v: &u32) -> NodeIndex<u32> {
    NodeIndex::new(*v as usize)
}

fn index_node(v: u32) -> NodeIndex<u32> {
    NodeIndex::new(v as usize)
}

impl<'c> IntoNeighbors for &'c View<'_, '_> {
    type Neighbors = Neighbors<'c>;

    fn neighbors(self, a: NodeIndex<u32>) -> Neighbors<'c> {
        self.succ
            .of(a.index() as u32)
            .iter()
            .map(to_node as fn(&u32) -> _)
    }
}

impl<'c> IntoNeighborsDirected for &'c View<'_, '_> {
    type NeighborsDirected = Neighbors<'c>;

    fn neighbors_directed(self, a: NodeIndex<u32>, d: Direction) -> Neighbors<'c> {
        let list = match d {
            Direction::Outgoing => self.succ.of(a.index() as u32),
            Direction::Incoming => self.pred.of(a.index()),
        };
        list.iter().map(to_node as fn(&u32) -> _)
    }
}

impl IntoNodeIdentifiers for &View<'_, '_> {
    type NodeIdentifiers = std::iter::Map<std::ops::Range<u32>, fn(u32) -> NodeIndex<u32>>;

    fn node_identifiers(self) -> Self::NodeIdentifiers {
        (0..self.succ.len() as u32).map(index_node as fn(u32) -> _)
    }
}
