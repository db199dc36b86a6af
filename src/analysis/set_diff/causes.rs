//! The cause pass: per block of matched pairs and per side, the bitsets of block roots
//! reaching each relevant component ([`Rows`]), and from them each package's added,
//! removed, grown and shrunk bytes over the block's roots ([`cause_sums`]).

use rayon::prelude::*;

use crate::report::CauseChange;

use super::input::Pairs;
use super::side::Side;
use super::unchanged::Packages;

/// Words of root bitset per component per block.
pub(super) const W: usize = 16;
pub(super) const BLOCK: usize = 64 * W;

/// Per package and change: roots, bytes, the first pair it reaches.
#[derive(Clone, Copy, Default)]
pub(super) struct Acc {
    pub(super) roots: usize,
    pub(super) bytes: i128,
    pub(super) example: u32,
}

impl Acc {
    pub(super) fn add(&mut self, roots: usize, bytes: i128, first: u32) {
        if roots == 0 {
            return;
        }
        if self.roots == 0 || first < self.example {
            self.example = first;
        }
        self.roots += roots;
        self.bytes += bytes;
    }

    pub(super) fn merge(&mut self, other: &Acc) {
        self.add(other.roots, other.bytes, other.example);
    }
}

pub(super) const CHANGES: [CauseChange; 4] = [
    CauseChange::Added,
    CauseChange::Removed,
    CauseChange::Grown,
    CauseChange::Shrunk,
];

pub(super) fn popcount(words: &[u64]) -> usize {
    words.iter().map(|w| w.count_ones() as usize).sum()
}

pub(super) fn first_bit(words: &[u64]) -> Option<u32> {
    words
        .iter()
        .enumerate()
        .find(|(_, &w)| w != 0)
        .map(|(i, w)| (i * 64) as u32 + w.trailing_zeros())
}

pub(super) fn and(a: &[u64], b: &[u64]) -> [u64; W] {
    let mut out = [0u64; W];
    for i in 0..W {
        out[i] = a[i] & b[i];
    }
    out
}

/// What the cause pass needs of one side besides [`Side`]: which components lead to a
/// path of a package that may change something.
pub(super) struct Reach {
    /// Component `c` reaches (or holds) a path of a package not proven unchanged.
    pub(super) relevant: Vec<bool>,
}

impl Reach {
    /// One pass over the components, successors first. O(n + m).
    pub(super) fn new(s: &Side, skip: &[bool]) -> Reach {
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
pub(super) struct Rows {
    /// Position of each component in `visited`, `u32::MAX` when the block does not
    /// reach it (reset after every block: the cost is what the block visits).
    pub(super) local: Vec<u32>,
    pub(super) visited: Vec<u32>,
    pub(super) rows: Vec<u64>,
    pub(super) stack: Vec<u32>,
}

pub(super) const ZERO_ROW: [u64; W] = [0; W];
pub(super) const SEEN: u32 = u32::MAX - 1;

impl Rows {
    pub(super) fn new(s: &Side) -> Rows {
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
    pub(super) fn fill(&mut self, s: &Side, reach: &Reach, roots: &[u32]) {
        for &c in &self.visited {
            self.local[c as usize] = u32::MAX;
        }
        self.visited.clear();
        for &r in roots {
            let c = s.cond.comp_of[r as usize];
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
            let l = self.local[s.cond.comp_of[r as usize] as usize];
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
    pub(super) fn row(&self, s: &Side, v: u32) -> &[u64] {
        match self.local[s.cond.comp_of[v as usize] as usize] {
            u32::MAX => &ZERO_ROW,
            l => &self.rows[l as usize * W..l as usize * W + W],
        }
    }
}

/// One worker's state: rows of both sides, and the paths a block reaches.
pub(super) struct Scratch {
    pub(super) old: Rows,
    pub(super) new: Rows,
    /// (package, side: 0 old, 1 new, node) of every reached path of a package that may
    /// change something.
    pub(super) touched: Vec<(u32, u8, u32)>,
}

/// Counterparts of paths of packages whose paths pair up (`Packages::paired`), per side.
pub(super) struct Partners {
    pub(super) of_old: Vec<u32>,
    pub(super) of_new: Vec<u32>,
}

impl Partners {
    pub(super) fn new(old: &Side, new: &Side, pk: &Packages) -> Partners {
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
pub(super) fn block_causes(
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
pub(super) fn package_causes(
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

/// Sums of causes: (package, change index, sums).
type CauseSums = Vec<(usize, usize, Acc)>;

/// Per package and change, the roots and bytes of every cause over the matched pairs
/// (only those with roots), in blocks of `BLOCK` pairs on every core
/// ([`block_causes`]), and the components visited in all (the work done).
pub(super) fn cause_sums(
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
