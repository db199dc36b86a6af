//! The condensation of a [`ClosureGraph`]: its paths grouped into components numbered
//! successors first (a component's successors have smaller numbers), each component's
//! NAR size, members and successor components. Closure sizes (`closure_size.rs`) and
//! the package-set diff (`crate::analysis::set_diff`) both walk components, not paths.
//!
//! An acyclic graph (every closure Nix writes) needs no search: each path is its own
//! component, numbered in reverse topological order (O(n + m)); otherwise petgraph's
//! strongly connected components ([`super::components`]). Lists are flat arrays
//! ([`Csr`]): walks over 100,000 separate vectors made a cache miss per component.

use super::{saturating_sum, ClosureGraph};

/// Lists in one array: list `c` is `flat[start[c]..start[c + 1]]`; an edge's position in
/// `flat` numbers it.
#[derive(Debug, Clone)]
pub struct Csr {
    /// Where each list starts in `flat`, and one entry past the last list.
    pub start: Vec<u32>,
    /// Every list, one after the other.
    pub flat: Vec<u32>,
}

impl Csr {
    /// List `c`.
    pub fn of(&self, c: usize) -> &[u32] {
        &self.flat[self.start[c] as usize..self.start[c + 1] as usize]
    }

    /// The number of lists.
    pub fn len(&self) -> usize {
        self.start.len() - 1
    }

    /// Whether there are no lists.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A graph's components, numbered successors first.
#[derive(Debug, Clone)]
pub struct Condensation {
    /// The component of each path.
    pub comp_of: Vec<u32>,
    /// The NAR size of each component (saturating).
    pub size: Vec<u64>,
    /// The paths of each component, in node order.
    pub members: Csr,
    /// The successor components of each component, sorted, without repeats and without
    /// the component itself.
    pub succ: Csr,
}

impl Condensation {
    /// The condensation of `g` (its paths; the virtual root is not in it).
    pub fn of(g: &ClosureGraph) -> Condensation {
        let (offsets, targets) = g.path_successors();
        let (comp_of, size) = components(g, offsets, targets);
        let members = group(&comp_of, size.len());
        let succ = successors(&comp_of, size.len(), offsets, targets);
        Condensation {
            comp_of,
            size,
            members,
            succ,
        }
    }

    /// The number of components.
    pub fn len(&self) -> usize {
        self.size.len()
    }

    /// Whether there are no components (no paths).
    pub fn is_empty(&self) -> bool {
        self.size.is_empty()
    }
}

/// The component of every path and each component's NAR size.
fn components(g: &ClosureGraph, offsets: &[u32], targets: &[u32]) -> (Vec<u32>, Vec<u64>) {
    let n = g.len();
    if let Some(order) = super::topological_order(n, offsets, targets) {
        let mut comp_of = vec![0u32; n];
        let mut size = vec![0u64; n];
        for (c, &v) in order.iter().rev().enumerate() {
            comp_of[v as usize] = c as u32;
            size[c] = g.nar_sizes[v as usize].get();
        }
        return (comp_of, size);
    }
    let mut comp_of = vec![u32::MAX; n];
    let mut size: Vec<u64> = Vec::new();
    for members in super::components(g) {
        let c = size.len() as u32;
        size.push(saturating_sum(
            members.iter().map(|&v| g.nar_sizes[v as usize].get()),
        ));
        for v in members {
            comp_of[v as usize] = c;
        }
    }
    (comp_of, size)
}

/// The paths of each of `nc` components, by counting (O(n)).
fn group(comp_of: &[u32], nc: usize) -> Csr {
    let mut start = vec![0u32; nc + 1];
    for &c in comp_of {
        start[c as usize + 1] += 1;
    }
    for c in 0..nc {
        start[c + 1] += start[c];
    }
    let mut fill: Vec<u32> = start[..nc].to_vec();
    let mut flat = vec![0u32; comp_of.len()];
    for (v, &c) in comp_of.iter().enumerate() {
        flat[fill[c as usize] as usize] = v as u32;
        fill[c as usize] += 1;
    }
    Csr { start, flat }
}

/// The successor components of each component (sorted, deduplicated), by counting
/// the edges between components, then sorting each list in place (O(n + m log m)).
fn successors(comp_of: &[u32], nc: usize, offsets: &[u32], targets: &[u32]) -> Csr {
    let n = comp_of.len();
    let out_edges = |v: usize| &targets[offsets[v] as usize..offsets[v + 1] as usize];
    let mut start = vec![0u32; nc + 1];
    for v in 0..n {
        let cv = comp_of[v];
        for &w in out_edges(v) {
            if comp_of[w as usize] != cv {
                start[cv as usize + 1] += 1;
            }
        }
    }
    for c in 0..nc {
        start[c + 1] += start[c];
    }
    let mut fill: Vec<u32> = start[..nc].to_vec();
    let mut flat = vec![0u32; start[nc] as usize];
    for v in 0..n {
        let cv = comp_of[v];
        for &w in out_edges(v) {
            let cw = comp_of[w as usize];
            if cw != cv {
                flat[fill[cv as usize] as usize] = cw;
                fill[cv as usize] += 1;
            }
        }
    }
    drop(fill);
    // Sort and deduplicate each list, compacting them towards the front.
    let mut write = 0usize;
    for c in 0..nc {
        let (lo, hi) = (start[c] as usize, start[c + 1] as usize);
        flat[lo..hi].sort_unstable();
        start[c] = write as u32;
        let mut last = None;
        for i in lo..hi {
            let x = flat[i];
            if last != Some(x) {
                flat[write] = x;
                write += 1;
                last = Some(x);
            }
        }
    }
    start[nc] = write as u32;
    flat.truncate(write);
    Csr { start, flat }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::closure;
    use super::*;

    #[test]
    fn a_cycle_is_one_component_after_its_successors() {
        // 0 -> 1 <-> 2 -> 3: {1, 2} is one component, numbered after 3, before 0.
        let c = closure(&[1, 10, 100, 1000], &[vec![1], vec![2], vec![1, 3], vec![]]);
        let g = ClosureGraph::new(&c, &[]);
        let cond = Condensation::of(&g);
        assert_eq!(cond.len(), 3);
        let [a, b, b2, d] = [0, 1, 2, 3].map(|v| cond.comp_of[v]);
        assert_eq!(b, b2);
        assert!(d < b && b < a, "{:?}", cond.comp_of);
        assert_eq!(cond.size[b as usize], 110);
        assert_eq!(cond.members.of(b as usize), &[1, 2]);
        assert_eq!(cond.succ.of(a as usize), &[b]);
        assert_eq!(cond.succ.of(b as usize), &[d]);
        assert!(cond.succ.of(d as usize).is_empty());
    }

    #[test]
    fn an_acyclic_graph_keeps_every_path_alone_successors_first() {
        let c = closure(&[1, 2, 3], &[vec![1, 2], vec![2], vec![]]);
        let g = ClosureGraph::new(&c, &[]);
        let cond = Condensation::of(&g);
        assert_eq!(cond.len(), 3);
        for v in 0..3 {
            let cv = cond.comp_of[v] as usize;
            assert_eq!(cond.members.of(cv), &[v as u32]);
            assert!(cond.succ.of(cv).iter().all(|&s| (s as usize) < cv));
        }
    }
}
