//! The reference graph of a [`Closure`] and the pure graph computations every report
//! is built from: reachability, shortest chains, the condensation into components,
//! per-path closure sizes, dominators and added size, and all chains to a target.
//!
//! One representation, built once by [`ClosureGraph::new`]: compressed successor and
//! predecessor lists ([`Adjacency`]), which every algorithm here walks directly;
//! none builds an adjacency of its own. Node `i` is the `i`-th path of the closure in
//! store-path order, and each successor list is in that order too; one extra virtual
//! root node (the last) sits above every root, so a closure with several roots has one
//! dominator tree. Self-references are dropped (they never change what is reachable);
//! references to paths the input does not describe are not nodes and are reported by
//! the loader. petgraph works on this graph through its traits (`adjacency.rs`) where
//! it does real work: the strongly connected components of cyclic inputs. Sizes in and
//! out are [`Bytes`]; the hot loops add plain `u64`s inside.

mod adjacency;
mod chains;
mod closure_graph;
mod closure_size;
mod condense;
mod dominators;
mod exclusive;
mod petgraph_view;
mod store_roots;

pub use adjacency::Adjacency;
pub use chains::{all_chains, all_chains_capped, ChainTree, ChainTreeNode};
pub use closure_graph::ClosureGraph;
pub(crate) use closure_graph::{saturating_sum, topological_order};
pub use closure_size::{closure_sizes, closure_sizes_in, closure_sizes_of, closure_sums_in};
pub use condense::{Condensation, Csr};
pub use dominators::{added_sizes, dominator_tree, DominatorTree};
pub use exclusive::{exclusive_added_sizes, group_added_sizes};
pub use petgraph_view::components;
pub use store_roots::{alone_figures, root_closures, root_figures, Keep, RootFigures, Tally};

#[cfg(test)]
pub(crate) mod testutil {
    //! Random closures for the invariant tests of the graph algorithms.
    use crate::store::{Closure, PathInfo, SourceKind, StoreDir, StorePath, NIX32_ALPHABET};

    /// A store path whose hash encodes `i`.
    pub fn path(i: usize) -> StorePath {
        let mut h = [b'0'; 32];
        let mut x = i;
        for c in h.iter_mut().rev() {
            *c = NIX32_ALPHABET[x % 32];
            x /= 32;
        }
        let s = format!("{}-p{i}", std::str::from_utf8(&h).unwrap());
        StorePath::from_base_name(&s).unwrap()
    }

    /// A closure from edge lists: `refs[i]` are the references of path `i`.
    pub fn closure(sizes: &[u64], refs: &[Vec<usize>]) -> Closure {
        let mut c = Closure::new(StoreDir::default(), SourceKind::PathInfoJson, "random");
        for (i, s) in sizes.iter().enumerate() {
            let mut info = PathInfo::new(path(i));
            info.nar_size = Some(*s);
            info.references = refs[i].iter().map(|&j| path(j)).collect();
            c.insert(info);
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;
    use crate::store::{Bytes, Closure, PathInfo, SourceKind, StoreDir, StorePath};
    use petgraph::graph::NodeIndex;

    #[test]
    fn builds_with_virtual_root_and_chains() {
        // 0 -> 1 -> 2, 0 -> 2, 2 -> 2 (self), 3 -> 2 (second root)
        let c = closure(&[1, 2, 4, 8], &[vec![1, 2], vec![2], vec![2], vec![2]]);
        let g = ClosureGraph::new(&c, &[]);
        assert_eq!(g.len(), 4);
        assert_eq!(g.roots.len(), 2);
        assert_eq!(g.total_size(), Bytes::new(15));
        let parents = g.bfs_parents(g.virtual_root());
        let chain = g.chain_to(&parents, NodeIndex::new(2));
        assert_eq!(chain.len(), 2, "{chain:?}");
        let only0 = ClosureGraph::new(&c, &[path(0)]);
        assert_eq!(only0.len(), 3);
        assert_eq!(only0.total_size(), Bytes::new(7));
    }

    /// Paths sharing a hash with other names (an input may say anything), and
    /// references that share no name allocation with the paths they name: each
    /// reference finds its own path, and one naming no path finds none.
    #[test]
    fn references_find_their_path_by_hash_and_name() {
        let h = "0123456789abcdfghijklmnpqrsvwxyz";
        let p = |s: &str| StorePath::from_base_name(s).unwrap();
        let mut c = Closure::new(StoreDir::default(), SourceKind::PathInfoJson, "t");
        let named = |name: &str, refs: &[&str]| {
            let mut info = PathInfo::new(p(name));
            info.nar_size = Some(1);
            info.references = refs.iter().map(|r| p(r)).collect();
            info
        };
        let (a, b, gone) = (format!("{h}-a"), format!("{h}-b"), format!("{h}-c"));
        c.insert(named(&a, &[]));
        c.insert(named(&b, &[]));
        c.insert(named("11111111111111111111111111111111-x", &[&b, &gone]));
        c.insert(named("22222222222222222222222222222222-y", &[&a]));
        let g = ClosureGraph::new(&c, &[]);
        let node = |s: &str| g.node(&p(s)).unwrap().index() as u32;
        assert_eq!(
            g.successors(node("11111111111111111111111111111111-x") as usize),
            [node(&b)]
        );
        assert_eq!(
            g.successors(node("22222222222222222222222222222222-y") as usize),
            [node(&a)]
        );
    }
}
