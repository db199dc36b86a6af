//! The petgraph traits that let petgraph's own algorithms run on a [`ClosureGraph`]
//! without a copy.
//!
//! petgraph does real work in one place: the strongly connected components of inputs
//! with a reference cycle ([`components`], Kosaraju's algorithm, iterative). Everything
//! else (dominators, reachability, closure sizes) walks the adjacency arrays directly.

use petgraph::graph::NodeIndex;
use petgraph::visit::{
    GraphBase, IntoNeighbors, IntoNeighborsDirected, IntoNodeIdentifiers, NodeCount, NodeIndexable,
    VisitMap, Visitable,
};
use petgraph::Direction;

use super::closure_graph::ClosureGraph;

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

impl Visited {
    /// Nothing visited among `n` nodes.
    pub(crate) fn with_nodes(n: usize) -> Visited {
        Visited(vec![0; n.div_ceil(64)])
    }
}

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
