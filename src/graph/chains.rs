//! Every reference chain from one path to another, as a tree (what
//! `nix why-depends --all` prints), with the number of distinct chains.
//!
//! The tree holds the sub-graph of paths that lie on some chain: reachable from the
//! start and reaching the target. Each path is expanded once; later occurrences are
//! marked as repeats so the output stays linear in the sub-graph's size even when the
//! number of chains is exponential. O(n + m).
//!
//! [`all_chains_capped`] stops the tree once it shows a given number of chains (a leaf
//! that repeats a path stands for every chain through it), and says how many it
//! shows: `nixcut why ROOT TARGET --max-chains N`.

use petgraph::graph::NodeIndex;

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
    /// How many of the chains the tree shows (all of them, unless capped).
    pub chains_shown: u128,
}

/// Compute the chain tree from `start` to `target`.
pub fn all_chains(g: &ClosureGraph, start: NodeIndex<u32>, target: NodeIndex<u32>) -> ChainTree {
    all_chains_capped(g, start, target, None)
}

/// [`all_chains`], the tree cut once it shows `max` chains (depth first; `None`: all).
/// O(n + m) either way.
pub fn all_chains_capped(
    g: &ClosureGraph,
    start: NodeIndex<u32>,
    target: NodeIndex<u32>,
    max: Option<u128>,
) -> ChainTree {
    let count = g.node_count();
    // Which nodes reach the target (reverse walk).
    let mut reaches = vec![false; count];
    let mut stack = vec![target];
    reaches[target.index()] = true;
    while let Some(v) = stack.pop() {
        for &p in g.predecessors(v.index()) {
            if !reaches[p as usize] {
                reaches[p as usize] = true;
                stack.push(NodeIndex::new(p as usize));
            }
        }
    }
    if !reaches[start.index()] {
        return ChainTree {
            chain_count: 0,
            tree: None,
            paths_on_chains: 0,
            chains_shown: 0,
        };
    }
    // Successors on chains, sorted for deterministic output.
    let succ = |v: NodeIndex<u32>| -> Vec<NodeIndex<u32>> {
        if v == target {
            return Vec::new();
        }
        // Successor lists are sorted: deterministic output.
        let mut s: Vec<NodeIndex<u32>> = g
            .successors(v.index())
            .iter()
            .filter(|&&w| reaches[w as usize])
            .map(|&w| NodeIndex::new(w as usize))
            .collect();
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
    let chain_count = chains[start.index()].unwrap_or(0);
    let mut cap = Cap {
        max: max.unwrap_or(u128::MAX),
        shown: 0,
        stopped: false,
        target,
        chains: &chains,
    };
    let tree = build(start, &succ, &mut expanded, &mut paths_on_chains, &mut cap);
    if cap.full() && max.is_some() {
        // The tree stopped early: count the paths on chains apart.
        paths_on_chains = 0;
        let mut seen = vec![false; count];
        let mut stack = vec![start];
        seen[start.index()] = true;
        while let Some(v) = stack.pop() {
            paths_on_chains += 1;
            for w in succ(v) {
                if !seen[w.index()] {
                    seen[w.index()] = true;
                    stack.push(w);
                }
            }
        }
    }
    ChainTree {
        chain_count,
        tree: Some(tree),
        paths_on_chains,
        chains_shown: if start == target {
            1
        } else {
            cap.shown.min(chain_count)
        },
    }
}

/// How many chains the tree shows so far, and where it stops.
struct Cap<'a> {
    max: u128,
    shown: u128,
    /// A leaf did not fit: the tree is done.
    stopped: bool,
    target: NodeIndex<u32>,
    chains: &'a [Option<u128>],
}

impl Cap<'_> {
    /// Take a leaf if its chains fit (the target is one chain, a repeated path every
    /// chain through it); one that does not fit ends the tree.
    fn take(&mut self, w: NodeIndex<u32>) -> bool {
        let n = if w == self.target {
            1
        } else {
            self.chains[w.index()].unwrap_or(0)
        };
        match self.shown.checked_add(n).filter(|&s| s <= self.max) {
            Some(s) => {
                self.shown = s;
                true
            }
            None => {
                self.stopped = true;
                false
            }
        }
    }

    fn full(&self) -> bool {
        self.stopped || self.shown >= self.max
    }
}

fn build(
    v: NodeIndex<u32>,
    succ: &dyn Fn(NodeIndex<u32>) -> Vec<NodeIndex<u32>>,
    expanded: &mut [bool],
    count: &mut usize,
    cap: &mut Cap<'_>,
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
        let next = if cap.full() {
            None
        } else {
            stack.last_mut().and_then(|f| f.pending.next())
        };
        match next {
            Some(w) => {
                if expanded[w.index()] {
                    if !cap.take(w) {
                        continue;
                    }
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
                    if w == cap.target && !cap.take(w) {
                        continue;
                    }
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
                // A path the cap left without a way on is not drawn as a dead end.
                let cut = cap.full()
                    && done.children.is_empty()
                    && done.node as usize != cap.target.index();
                match stack.last_mut() {
                    Some(_) if cut => {}
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
        assert_eq!(t.chains_shown, 3);
        // Capped at one chain: 0-1-2-3 (the first, depth first) only, the rest counted.
        let one = all_chains_capped(&g, NodeIndex::new(0), NodeIndex::new(3), Some(1));
        assert_eq!((one.chain_count, one.chains_shown), (3, 1));
        assert_eq!(one.paths_on_chains, 4);
        let top = one.tree.unwrap();
        assert_eq!(top.children.len(), 1);
        let one_1 = &top.children[0];
        assert_eq!((one_1.node, one_1.children.len()), (1, 1));
        let one_2 = &one_1.children[0];
        assert_eq!((one_2.node, one_2.children.len()), (2, 1));
        assert_eq!(one_2.children[0].node, 3);
        let none = all_chains(&g, NodeIndex::new(4), NodeIndex::new(3));
        assert_eq!(none.chain_count, 0);
        assert!(none.tree.is_none());
    }
}
