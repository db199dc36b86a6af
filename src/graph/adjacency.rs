//! Compressed adjacency lists (CSR: one offset array, one target array), the one
//! representation of a closure's edges that every graph algorithm here reads.

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
