//! Compressed adjacency lists (CSR: one offset array, one target array), the one
//! representation of a closure's edges that every graph algorithm here reads, and the
//! petgraph traits that let petgraph's own algorithms run on a [`ClosureGraph`]
//! without a copy.
//!
//! petgraph does real work in one place: the strongly connected components of inputs
//! with a reference cycle ([`components`], Kosaraju's algorithm, iterative). Everything
//! else (dominators, reachability, closure sizes) walks the arrays directly.

use petgraph::graph::NodeIndex;
use petgraph::visit::{
    GraphBase, IntoNeighbors, IntoNeighborsDirected, IntoNodeIdentifiers, NodeCount, NodeIndexable,
    VisitMap, Visitable,
};
use petgraph::Direction;

use super::ClosureGraph;

/// Adjacency lists of `node_count()` nodes: list `v` is `targets[offsets[v]..offsets[v + 1]]`.
#[derive(Debug, Clone, Default)]
pub struct Adjacency {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl Adjacency {
    /// Lists from their parts; `offsets` starts at 0, never decreases and ends at
    /// `targets.len()`, which the constructors of this module guarantee.
    pub(crate) fn from_parts(offsets: Vec<u32>, targets: Vec<u32>) -> Adjacency {
        debug_assert_eq!(offsets.first(), Some(&0));
        debug_assert_eq!(offsets.last().map(|&e| e as usize), Some(targets.len()));
        Adjacency { offsets, targets }
    }

    /// The offsets and targets, to be extended (see [`Adjacency::from_parts`]).
    pub(crate) fn into_parts(self) -> (Vec<u32>, Vec<u32>) {
        (self.offsets, self.targets)
    }

    /// The list of node `v` (empty for a node out of range).
    pub fn of(&self, v: usize) -> &[u32] {
        match (self.offsets.get(v), self.offsets.get(v + 1)) {
            (Some(&lo), Some(&hi)) => &self.targets[lo as usize..hi as usize],
            _ => &[],
        }
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Number of edges (parallel edges counted each).
    pub fn edge_count(&self) -> usize {
        self.targets.len()
    }

    /// The offsets of the first `k` lists (`k + 1` entries) and their targets: the
    /// lists of nodes `0..k` alone, for algorithms that leave out the last nodes.
    pub fn prefix(&self, k: usize) -> (&[u32], &[u32]) {
        let k = k.min(self.node_count());
        let offsets = &self.offsets[..=k];
        (offsets, &self.targets[..offsets[k] as usize])
    }

    /// The reversed lists (predecessors from successors), each sorted by source.
    /// Counting sort, O(n + m).
    pub fn transpose(&self) -> Adjacency {
        let n = self.node_count();
        let mut offsets = vec![0u32; n + 1];
        for &w in &self.targets {
            offsets[w as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill: Vec<u32> = offsets[..n].to_vec();
        let mut targets = vec![0u32; self.targets.len()];
        for v in 0..n {
            for &w in self.of(v) {
                targets[fill[w as usize] as usize] = v as u32;
                fill[w as usize] += 1;
            }
        }
        Adjacency { offsets, targets }
    }
}

/// The strongly connected components of a graph's real paths (the virtual root left
/// out), successors first: every component comes after those it references. Each
/// component's members are node indices. Kosaraju's algorithm from petgraph
/// (iterative: a 100,000-path chain cannot overflow the stack), O(n + m).
pub fn components(g: &ClosureGraph) -> Vec<Vec<u32>> {
    let n = g.len();
    petgraph::algo::kosaraju_scc(g)
        .into_iter()
        .map(|scc| {
            scc.into_iter()
                .map(|v| v.index() as u32)
                .filter(|&v| (v as usize) < n)
                .collect::<Vec<u32>>()
        })
        .filter(|c| !c.is_empty())
        .collect()
}

/// A visited set for petgraph's traversals: one bit per node.
#[derive(Debug, Clone)]
pub struct Visited(Vec<u64>);

impl VisitMap<NodeIndex<u32>> for Visited {
    fn visit(&mut self, a: NodeIndex<u32>) -> bool {
        let (word, bit) = (a.index() / 64, 1u64 << (a.index() % 64));
        let first = self.0[word] & bit == 0;
        self.0[word] |= bit;
        first
    }

    fn is_visited(&self, a: &NodeIndex<u32>) -> bool {
        self.0[a.index() / 64] & (1u64 << (a.index() % 64)) != 0
    }

    fn unvisit(&mut self, a: NodeIndex<u32>) -> bool {
        let was = self.is_visited(&a);
        self.0[a.index() / 64] &= !(1u64 << (a.index() % 64));
        was
    }
}

impl GraphBase for ClosureGraph {
    type NodeId = NodeIndex<u32>;
    type EdgeId = ();
}

impl Visitable for ClosureGraph {
    type Map = Visited;

    fn visit_map(&self) -> Visited {
        Visited(vec![0; self.node_count().div_ceil(64)])
    }

    fn reset_map(&self, map: &mut Visited) {
        map.0.clear();
        map.0.resize(self.node_count().div_ceil(64), 0);
    }
}

impl NodeCount for ClosureGraph {
    fn node_count(&self) -> usize {
        ClosureGraph::node_count(self)
    }
}

impl NodeIndexable for ClosureGraph {
    fn node_bound(&self) -> usize {
        ClosureGraph::node_count(self)
    }

    fn to_index(&self, a: NodeIndex<u32>) -> usize {
        a.index()
    }

    fn from_index(&self, i: usize) -> NodeIndex<u32> {
        NodeIndex::new(i)
    }
}

/// Neighbours of one node as petgraph node indices.
pub type Neighbors<'a> = std::iter::Map<std::slice::Iter<'a, u32>, fn(&u32) -> NodeIndex<u32>>;

fn to_node(v: &u32) -> NodeIndex<u32> {
    NodeIndex::new(*v as usize)
}

fn index_node(v: u32) -> NodeIndex<u32> {
    NodeIndex::new(v as usize)
}

impl<'a> IntoNeighbors for &'a ClosureGraph {
    type Neighbors = Neighbors<'a>;

    fn neighbors(self, a: NodeIndex<u32>) -> Neighbors<'a> {
        self.successors(a.index())
            .iter()
            .map(to_node as fn(&u32) -> _)
    }
}

impl<'a> IntoNeighborsDirected for &'a ClosureGraph {
    type NeighborsDirected = Neighbors<'a>;

    fn neighbors_directed(self, a: NodeIndex<u32>, d: Direction) -> Neighbors<'a> {
        let list = match d {
            Direction::Outgoing => self.successors(a.index()),
            Direction::Incoming => self.predecessors(a.index()),
        };
        list.iter().map(to_node as fn(&u32) -> _)
    }
}

impl IntoNodeIdentifiers for &ClosureGraph {
    type NodeIdentifiers = std::iter::Map<std::ops::Range<u32>, fn(u32) -> NodeIndex<u32>>;

    fn node_identifiers(self) -> Self::NodeIdentifiers {
        (0..ClosureGraph::node_count(self) as u32).map(index_node as fn(u32) -> _)
    }
}
