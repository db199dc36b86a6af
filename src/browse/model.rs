//! The graph-level view of the closure, ready before any file is read: the reference
//! graph, every path's added size (its subtree in the dominator tree, as `why` computes
//! it), the immediate dominators and a shortest chain from the root to every path.
//! Closure sizes cost a pass over the graph each (up to 64 at a time), so they are
//! computed for the paths on screen only, when first shown, and kept.

use std::collections::HashMap;
use std::sync::Arc;

use petgraph::graph::NodeIndex;

use crate::analysis::{graph_for, AnalysisError};
use crate::graph::{added_sizes, closure_sizes_of, dominator_tree, ClosureGraph};
use crate::render::name_of;
use crate::store::{Bytes, Closure};
use crate::timing::Timings;

/// The closure and its graph, sizes and chains. Node `i < n` is the `i`-th path in
/// store-path order; node `n` is the virtual root above every root (shown as `<N
/// roots>` when the input has several).
pub struct Model {
    pub closure: Arc<Closure>,
    pub graph: Arc<ClosureGraph>,
    /// Added size by node (the virtual root's is the whole closure).
    added: Vec<Bytes>,
    /// Immediate dominator by node (itself or the virtual root: none).
    idom: Vec<u32>,
    /// Parent on a shortest chain from the start.
    parents: Vec<Option<NodeIndex<u32>>>,
    /// Closure sizes computed so far.
    closure_sizes: HashMap<usize, Bytes>,
    /// Where browsing starts: the root, or the virtual root of several.
    pub start: usize,
    /// Every path's name without its hash, made when first searched.
    names: Option<Vec<String>>,
}

impl Model {
    /// The graph of the closure of `root` (every root when `None`), its dominators,
    /// added sizes and shortest chains: the same graph `why` ranks.
    pub fn new(
        closure: Arc<Closure>,
        root: Option<&str>,
        timings: &Timings,
    ) -> Result<Model, AnalysisError> {
        let g = graph_for(&closure, root, timings)?;
        let (added, idom) = {
            let tree = dominator_tree(&g);
            (added_sizes(&g, &tree), tree.idom)
        };
        let start = match g.roots.as_slice() {
            [only] => only.index(),
            _ => g.len(),
        };
        let parents = g.bfs_parents(NodeIndex::new(start));
        timings.step("dominators, added sizes, shortest chains");
        Ok(Model {
            closure,
            graph: Arc::new(g),
            added,
            idom,
            parents,
            closure_sizes: HashMap::new(),
            start,
            names: None,
        })
    }

    /// Paths in the closure (the virtual root not counted).
    pub fn path_count(&self) -> usize {
        self.graph.len()
    }

    /// Whether `i` is the virtual root above several roots.
    pub fn is_virtual(&self, i: usize) -> bool {
        i >= self.path_count()
    }

    /// The full store path of `i` (`<N roots>` for the virtual root).
    pub fn path(&self, i: usize) -> String {
        match self.graph.paths.get(i) {
            Some(p) => self.closure.store_dir.display(p),
            None => format!("<{} roots>", self.graph.roots.len()),
        }
    }

    /// The name of `i` without the hash (`rocblas-6.0.2`).
    pub fn name(&self, i: usize) -> String {
        name_of(&self.path(i)).to_string()
    }

    pub fn nar(&self, i: usize) -> Bytes {
        self.graph.nar_sizes.get(i).copied().unwrap_or(Bytes::ZERO)
    }

    pub fn added(&self, i: usize) -> Bytes {
        self.added.get(i).copied().unwrap_or(Bytes::ZERO)
    }

    /// Whether every path's NAR size is known (else sizes are lower bounds).
    pub fn sizes_known(&self) -> bool {
        self.graph.sizes_known
    }

    /// The closure size of `i`, if [`Model::compute_closure_sizes`] has computed it.
    pub fn closure_size(&self, i: usize) -> Option<Bytes> {
        if self.is_virtual(i) {
            return Some(self.graph.total_size());
        }
        self.closure_sizes.get(&i).copied()
    }

    /// Compute the closure sizes of `nodes` not yet known (one pass over the graph for
    /// up to 64 of them).
    pub fn compute_closure_sizes(&mut self, nodes: &[usize]) {
        let mut todo: Vec<usize> = nodes
            .iter()
            .copied()
            .filter(|&i| !self.is_virtual(i) && !self.closure_sizes.contains_key(&i))
            .collect();
        todo.sort_unstable();
        todo.dedup();
        for part in todo.chunks(64) {
            let sizes = closure_sizes_of(&self.graph, part);
            self.closure_sizes.extend(part.iter().copied().zip(sizes));
        }
    }

    /// The immediate dominator of `i`: the one path every chain from the root to `i`
    /// passes (none for a root).
    pub fn dominator(&self, i: usize) -> Option<usize> {
        let d = *self.idom.get(i)? as usize;
        (d != i && d < self.path_count()).then_some(d)
    }

    /// The references of `i`, largest added size first (ties by name).
    pub fn references(&self, i: usize) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .graph
            .successors(i)
            .iter()
            .map(|&w| w as usize)
            .collect();
        self.rank(&mut v);
        v
    }

    /// The paths referring to `i`, largest added size first (the virtual root is none).
    pub fn referrers(&self, i: usize) -> Vec<usize> {
        if self.is_virtual(i) {
            return Vec::new();
        }
        let n = self.path_count();
        let mut v: Vec<usize> = self
            .graph
            .predecessors(i)
            .iter()
            .map(|&w| w as usize)
            .filter(|&w| w < n)
            .collect();
        v.dedup();
        self.rank(&mut v);
        v
    }

    fn rank(&self, v: &mut [usize]) {
        v.sort_by(|&a, &b| {
            self.added(b)
                .cmp(&self.added(a))
                .then(self.nar(b).cmp(&self.nar(a)))
                .then(a.cmp(&b))
        });
    }

    /// A shortest chain from the start to `i`, start first, `i` last (just `i` when it
    /// is the start; empty when unreachable).
    pub fn chain(&self, i: usize) -> Vec<usize> {
        let mut chain = vec![i];
        let mut v = i;
        while v != self.start {
            match self.parents.get(v).copied().flatten() {
                Some(p) => {
                    v = p.index();
                    chain.push(v);
                }
                None => return Vec::new(),
            }
        }
        chain.reverse();
        chain
    }

    /// The paths whose name contains `query` (case-insensitive), largest added size
    /// first.
    pub fn search(&mut self, query: &str) -> Vec<usize> {
        if query.is_empty() {
            return Vec::new();
        }
        if self.names.is_none() {
            let names = (0..self.path_count())
                .map(|i| self.name(i).to_lowercase())
                .collect();
            self.names = Some(names);
        }
        let q = query.to_lowercase();
        let mut hits: Vec<usize> = self
            .names
            .iter()
            .flatten()
            .enumerate()
            .filter(|(_, n)| n.contains(&q))
            .map(|(i, _)| i)
            .collect();
        self.rank(&mut hits);
        hits
    }

    /// The node of a full store path, if it is in the closure.
    pub fn node_of(&self, path: &str) -> Option<usize> {
        let p = self.closure.store_dir.parse_path(path).ok()?;
        self.graph.node(&p).map(|n| n.index())
    }

    /// Every path that refers to another, largest added size first: the order in
    /// which the background worker gathers file evidence.
    pub fn sweep_order(graph: &ClosureGraph, added: &[Bytes]) -> Vec<usize> {
        let mut v: Vec<usize> = (0..graph.len())
            .filter(|&i| !graph.successors(i).is_empty())
            .collect();
        v.sort_by(|&a, &b| added[b].cmp(&added[a]).then(a.cmp(&b)));
        v
    }

    /// Every added size, by node (for the worker's order).
    pub fn added_sizes(&self) -> &[Bytes] {
        &self.added
    }
}
