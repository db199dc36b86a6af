//! Every reference chain from one path to another, as a tree (what
//! `nix why-depends --all` prints), with the number of distinct chains.
//!
//! The tree holds the sub-graph of paths that lie on some chain: reachable from the
//! start and reaching the target. Each path is expanded once; later occurrences are
//! marked as repeats so the output stays linear in the sub-graph's size even when the
//! number of chains is exponential. O(n + m).

use petgraph::graph::NodeIndex;
use petgraph::Direction;

use super::ClosureGraph;

/// One node of a chain tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainTreeNode {
    /// The path (node index in the graph).
    pub node: u32,
    /// Children, on the way to the target; empty for the target and for repeats.
    pub children: Vec<ChainTreeNode>,
    /// This path was already expanded elsewhere in the tree.
    pub repeat: bool,
}

/// All chains from `start` to `target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainTree {
    /// Number of distinct chains (saturates at `u128::MAX`).
    pub chain_count: u128,
    /// The tree, rooted at `start`; `None` when `target` is not reachable.
    pub tree: Option<ChainTreeNode>,
    /// Number of distinct paths on some chain (start and target included).
    pub paths_on_chains: usize,
}

/// Compute the chain tree from `start` to `target`.
pub fn all_chains(g: &ClosureGraph, start: NodeIndex<u32>, target: NodeIndex<u32>) -> ChainTree {
    let count = g.graph.node_count();
    // Which nodes reach the target (reverse walk).
    let mut reaches = vec![false; count];
    let mut stack = vec![target];
    reaches[target.index()] = true;
    while let Some(v) = stack.pop() {
        for p in g.graph.neighbors_directed(v, Direction::Incoming) {
            if !reaches[p.index()] {
                reaches[p.index()] = true;
                stack.push(p);
            }
        }
    }
    if !reaches[start.index()] {
        return ChainTree {
            chain_count: 0,
            tree: None,
            paths_on_chains: 0,
        };
    }
    // Successors on chains, sorted for deterministic output.
    let succ = |v: NodeIndex<u32>| -> Vec<NodeIndex<u32>> {
        if v == target {
            return Vec::new();
        }
        let mut s: Vec<NodeIndex<u32>> = g
            .graph
            .neighbors(v)
            .filter(|w| reaches[w.index()])
            .collect();
        s.sort_unstable();
        s.dedup();
        s
    };
    // Count chains with a memoised post-order (iterative; reference graphs are DAGs
    // apart from self-references, which the graph already dropped; a cycle in a
    // malformed input is cut where it closes).
    let mut chains: Vec<Option<u128>> = vec![None; count];
    let mut on_stack = vec![false; count];
    let mut work: Vec<(NodeIndex<u32>, bool)> = vec![(start, false)];
    while let Some((v, expanded)) = work.pop() {
        if chains[v.index()].is_some() {
            continue;
        }
        if v == target {
            chains[v.index()] = Some(1);
            continue;
        }
        if expanded {
            on_stack[v.index()] = false;
            let total = succ(v).iter().fold(0u128, |acc, w| {
                acc.saturating_add(chains[w.index()].unwrap_or(0))
            });
            chains[v.index()] = Some(total);
        } else {
            on_stack[v.index()] = true;
            work.push((v, true));
            for w in succ(v) {
                if chains[w.index()].is_none() && !on_stack[w.index()] {
                    work.push((w, false));
                }
            }
        }
    }
    // Build the tree depth-first, expanding each node once.
    let mut expanded = vec![false; count];
    let mut paths_on_chains = 0;
    let tree = build(start, &succ, &mut expanded, &mut paths_on_chains);
    ChainTree {
        chain_count: chains[start.index()].unwrap_or(0),
        tree: Some(tree),
        paths_on_chains,
    }
}

fn build(
    v: NodeIndex<u32>,
    succ: &dyn Fn(NodeIndex<u32>) -> Vec<NodeIndex<u32>>,
    expanded: &mut [bool],
    count: &mut usize,
) -> ChainTreeNode {
    // Explicit stack: deep chains must not overflow the call stack.
    struct Frame {
        node: ChainTreeNode,
        pending: std::vec::IntoIter<NodeIndex<u32>>,
    }
    expanded[v.index()] = true;
    *count += 1;
    let mut stack = vec![Frame {
        node: ChainTreeNode {
            node: v.index() as u32,
            children: Vec::new(),
            repeat: false,
        },
        pending: succ(v).into_iter(),
    }];
    loop {
        let next = stack.last_mut().and_then(|f| f.pending.next());
        match next {
            Some(w) => {
                if expanded[w.index()] {
                    let leaf = ChainTreeNode {
                        node: w.index() as u32,
                        children: Vec::new(),
                        repeat: !succ(w).is_empty(),
                    };
                    if let Some(top) = stack.last_mut() {
                        top.node.children.push(leaf);
                    }
                } else {
                    expanded[w.index()] = true;
                    *count += 1;
                    stack.push(Frame {
                        node: ChainTreeNode {
                            node: w.index() as u32,
                            children: Vec::new(),
                            repeat: false,
                        },
                        pending: succ(w).into_iter(),
                    });
                }
            }
            None => {
                let done = stack.pop().expect("stack is not empty here").node;
                match stack.last_mut() {
                    Some(parent) => parent.node.children.push(done),
                    None => return done,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::closure;
    use super::*;

    #[test]
    fn counts_and_tree() {
        // 0 -> 1 -> 3, 0 -> 2 -> 3, 1 -> 2, 0 -> 4 (not on a chain)
        let c = closure(
            &[1, 1, 1, 1, 1],
            &[vec![1, 2, 4], vec![2, 3], vec![3], vec![], vec![]],
        );
        let g = ClosureGraph::new(&c, &[]);
        let t = all_chains(&g, NodeIndex::new(0), NodeIndex::new(3));
        assert_eq!(t.chain_count, 3); // 0-1-3, 0-1-2-3, 0-2-3
        assert_eq!(t.paths_on_chains, 4);
        let tree = t.tree.unwrap();
        assert_eq!(tree.node, 0);
        assert_eq!(tree.children.len(), 2);
        assert!(tree.children[1].repeat, "{tree:?}"); // 2 expanded under 1 already
        let none = all_chains(&g, NodeIndex::new(4), NodeIndex::new(3));
        assert_eq!(none.chain_count, 0);
        assert!(none.tree.is_none());
    }
}
