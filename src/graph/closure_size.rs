//! Closure size of every path: the NAR sizes of everything it reaches, itself included.
//!
//! Exact for any graph, cycles included. The graph is condensed into components in an
//! order where a component's successors come before it ([`Condensation`]: in an
//! acyclic graph, every closure Nix writes, each path alone with no search). Targets are
//! taken in blocks of `64·W` components; for each block one pass in post-order ORs the
//! successors' reach bitsets (a component can only reach components before it, so the
//! pass starts at the block). Rows that reach none or all of a block are kept as a
//! state, not bits. A row's weighted sum is its first successor's sum (kept with that
//! successor's bits) plus the weight of the bits the row has beyond it, read word by
//! word (an empty or full word at once, a word with few bits set or clear bit by bit,
//! others through per-byte lookup tables); a row equal to its first successor's shares
//! that successor's bits and sum.
//! Blocks are taken last first, and each marks the edges into its targets that another
//! successor already covers (a transitive reduction found on the way), which the lower
//! blocks, the ones that walk most rows, then skip.
//! A row after a block can reach it only if its largest successor lies in the block or
//! after it; components are grouped by the block of their largest successor (O(n + m),
//! by counting), and a block that fewer than one row in four after it can reach visits
//! only its own rows and those k rows (sorted: O(k log k) and their edges), instead of
//! every row after it. On a star of N roots over one library every block but the
//! library's is such a block: the pass was O(n²/2048) there (3.5 s of CPU for one side
//! of a package-set diff of 1,000,000 roots per side), and is now O(n + m) (0.1–0.3 s).
//! The block pass is compiled twice (the `multiversion` crate): for baseline x86-64
//! and for AVX2 with BMI and POPCNT, chosen once per block by what the processor
//! has; the wider ORs and bit scans take 22% fewer instructions on the `layered` shape
//! (2.48 against 3.16 billion, cachegrind), and both versions are the same source.
//! Worst case O((m + n·W) · n / (64·W) / 2) word operations, blocks in parallel
//! (rayon); memory per worker: W words and a sum per row that reaches part of the
//! block, a place and a running total per component; shared: one index per component
//! for the groups by largest successor. Measured figures in BENCHMARKS.md (the
//! yardstick's `layered` shape, where most rows reach part of most blocks, is the
//! costly case: the edge marks cut the pass from 0.43 s to 0.31 s there, the sums
//! taken from the first successor to about 0.24 s).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use rayon::prelude::*;

use super::condense::{Condensation, Csr};
use super::{saturating_sum, ClosureGraph};
use crate::store::Bytes;

/// Words of bitset per component per block.
const W: usize = 16;
const BLOCK: usize = 64 * W;

/// Closure size of each path (index = node index; the virtual root not included).
pub fn closure_sizes(g: &ClosureGraph) -> Vec<Bytes> {
    closure_sizes_in(&Condensation::of(g))
}

/// [`closure_sizes`] over a graph already condensed.
pub fn closure_sizes_in(cond: &Condensation) -> Vec<Bytes> {
    component_sums(cond, &cond.size)
}

/// For every path, `weight` (one number per path, by node index) summed over its
/// closure, the way [`closure_sizes_in`] sums NAR sizes (saturating): a closure's
/// download size, or how many of its paths lack one.
pub fn closure_sums_in(cond: &Condensation, weight: &[u64]) -> Vec<Bytes> {
    let mut comp_weight = vec![0u64; cond.len()];
    for (v, &c) in cond.comp_of.iter().enumerate() {
        let w = weight.get(v).copied().unwrap_or(0);
        comp_weight[c as usize] = comp_weight[c as usize].saturating_add(w);
    }
    component_sums(cond, &comp_weight)
}

/// Each path's closure sum, given each component's own weight.
fn component_sums(cond: &Condensation, comp_size: &[u64]) -> Vec<Bytes> {
    let Condensation {
        comp_of,
        succ: comp_succ,
        ..
    } = cond;
    let (n, nc) = (comp_of.len(), comp_size.len());
    if n == 0 {
        return Vec::new();
    }
    let blocks: Vec<usize> = (0..nc).step_by(BLOCK).collect();
    let reaching = Reaching::new(comp_succ, blocks.len());
    let redundant = Redundant::new(comp_succ.flat.len());
    // Blocks are handed out last first: a block's pass marks the edges into its
    // targets that another successor already covers, and every lower block (all the
    // ones that still walk those edges) then skips them. One scratch buffer and one
    // array of totals per worker, reused across blocks: a fresh bitset or array of
    // sums per block would cost a page fault and kernel zeroing for every page, every
    // block (and the sums of every block, kept until they were added up, were 40 MB on
    // 100,000 paths). Saturating sums of sizes come out the same in any order.
    let next = AtomicUsize::new(0);
    let comp_total = (0..rayon::current_num_threads().max(1))
        .into_par_iter()
        .map(|_| {
            let (mut scratch, mut total) = (Scratch::default(), vec![0u64; nc]);
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&start) = blocks.len().checked_sub(k + 1).map(|i| &blocks[i]) else {
                    break;
                };
                let graph = BlockGraph {
                    succ: comp_succ,
                    size: comp_size,
                    redundant: &redundant,
                    reaching: &reaching,
                };
                block_sums(start, &graph, &mut scratch, &mut total);
            }
            total
        })
        .reduce_with(|mut a, b| {
            for (x, y) in a.iter_mut().zip(b) {
                *x = x.saturating_add(y);
            }
            a
        })
        .unwrap_or_else(|| vec![0u64; nc]);
    (0..n)
        .map(|v| Bytes::new(comp_total[comp_of[v] as usize]))
        .collect()
}

/// Closure size of a few paths (`nodes`, node indices), for the handful of rows a
/// table shows; the same numbers as [`closure_sizes`] (saturating at `u64::MAX` like
/// it). Up to 64 paths in an acyclic graph (every closure Nix writes): one pass in
/// topological order carries a 64-bit mask of the paths that reach each node, O(n + m)
/// for all of them together. Otherwise one walk per path, in parallel: O(k · (n + m)).
pub fn closure_sizes_of(g: &ClosureGraph, nodes: &[usize]) -> Vec<Bytes> {
    let n = g.len();
    let (offsets, targets) = g.path_successors();
    let succ = |v: usize| g.successors(v);
    if nodes.len() <= 64 {
        if let Some(order) = super::topological_order(n, offsets, targets) {
            let mut reached_by = vec![0u64; n];
            for (k, &v) in nodes.iter().enumerate() {
                if let Some(m) = reached_by.get_mut(v) {
                    *m |= 1 << k;
                }
            }
            for &v in &order {
                let m = reached_by[v as usize];
                if m != 0 {
                    for &w in succ(v as usize) {
                        reached_by[w as usize] |= m;
                    }
                }
            }
            let mut sums = vec![Bytes::ZERO; nodes.len()];
            for (v, &m) in reached_by.iter().enumerate() {
                let mut m = m;
                while m != 0 {
                    let k = m.trailing_zeros() as usize;
                    sums[k] = sums[k].saturating_add(g.nar_sizes[v]);
                    m &= m - 1;
                }
            }
            return sums;
        }
    }
    nodes
        .par_iter()
        .map_init(
            || (vec![0u32; n], Vec::<u32>::new(), 0u32),
            |(seen, stack, stamp), &v| {
                if v >= n {
                    return Bytes::ZERO;
                }
                *stamp += 1;
                let mut total = Bytes::ZERO;
                seen[v] = *stamp;
                stack.clear();
                stack.push(v as u32);
                while let Some(x) = stack.pop() {
                    let x = x as usize;
                    total = total.saturating_add(g.nar_sizes[x]);
                    for &w in succ(x) {
                        if seen[w as usize] != *stamp {
                            seen[w as usize] = *stamp;
                            stack.push(w);
                        }
                    }
                }
                total
            },
        )
        .collect()
}

/// The component edges known to be transitively redundant: `c → s` where another
/// successor of `c` reaches `s`, so `s`'s reach is part of that successor's. Found in
/// the pass of the block that holds `s` (there, `s`'s bit is already set in `c`'s row
/// when its turn comes: successors are taken last first, and only a later component
/// can reach `s`); skipping such an edge in any other block leaves every row the same,
/// since the successor that covers it, or the one that covers that, is still walked.
/// Shared by the workers without ordering: a mark seen late only costs the OR it would
/// have saved.
struct Redundant {
    bits: Vec<AtomicU64>,
}

impl Redundant {
    fn new(edges: usize) -> Redundant {
        Redundant {
            bits: (0..edges.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn is_marked(&self, e: usize) -> bool {
        self.bits[e / 64].load(Ordering::Relaxed) & (1 << (e % 64)) != 0
    }

    fn mark(&self, e: usize) {
        self.bits[e / 64].fetch_or(1 << (e % 64), Ordering::Relaxed);
    }
}

/// What every block's pass reads: the condensed graph, the components' sizes and the
/// redundant edges found so far.
struct BlockGraph<'a> {
    succ: &'a Csr,
    size: &'a [u64],
    redundant: &'a Redundant,
    reaching: &'a Reaching,
}

/// The components grouped by the block of their largest successor (a component without
/// successors in none). A component after a block can reach it only through a
/// successor in it or after it, and successor lists are sorted: only if its largest
/// successor lies in that block or a later one, in [`Reaching::from`] of the block.
/// O(n + m) to build, by counting; increasing index within a group.
struct Reaching {
    /// Group `b` is `comps[start[b]..start[b + 1]]`.
    start: Vec<u32>,
    comps: Vec<u32>,
}

impl Reaching {
    fn new(succ: &Csr, blocks: usize) -> Reaching {
        let nc = succ.start.len() - 1;
        let group = |c: usize| succ.of(c).last().map(|&s| s as usize / BLOCK);
        let mut start = vec![0u32; blocks + 1];
        for c in 0..nc {
            if let Some(b) = group(c) {
                start[b + 1] += 1;
            }
        }
        for b in 0..blocks {
            start[b + 1] += start[b];
        }
        let mut fill = start.clone();
        let mut comps = vec![0u32; start[blocks] as usize];
        for c in 0..nc {
            if let Some(b) = group(c) {
                comps[fill[b] as usize] = c as u32;
                fill[b] += 1;
            }
        }
        Reaching { start, comps }
    }

    /// The components whose largest successor lies in block `b` or after it (grouped
    /// by that block, so not in index order).
    fn from(&self, b: usize) -> &[u32] {
        &self.comps[self.start[b] as usize..]
    }
}

/// What a component's row holds within one block.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Row {
    /// Reaches nothing in the block (the bits are not even written).
    Zero,
    /// Reaches every target of the block (the bits are not written).
    Full,
    /// Anything else: the bits are in `reach`, at the slot its place names.
    Mixed,
}

/// A row's place in [`Scratch::place`] when it reaches nothing of the block.
const ZERO: u32 = u32::MAX;
/// A row's place when it reaches the whole block.
const FULL: u32 = u32::MAX - 1;

/// Buffers [`block_sums`] reuses from block to block.
#[derive(Default)]
struct Scratch {
    /// The bits of the rows that reach part of the block, `W` words a slot.
    reach: Vec<u64>,
    /// The weighted sum of each slot's bits.
    slot_sum: Vec<u64>,
    /// Each row's slot in `reach`, or [`ZERO`] or [`FULL`] (one array, so that a
    /// successor's state and slot are one load).
    place: Vec<u32>,
    table: Vec<u64>,
    /// The rows a sparse block visits, in increasing order.
    visit: Vec<u32>,
    /// Whether every entry of `place` is [`ZERO`] (a sparse block leaves it so).
    place_clear: bool,
}

/// One block's targets: what [`weighted_sum`] reads the weight of a row's bits from.
struct BlockWeights<'a> {
    /// The targets' sizes (`size[start..end]`).
    size: &'a [u64],
    /// The bit pattern of a full row (the last block may be partial).
    full: [u64; W],
    /// The total size of the targets of each word of the bitset.
    word_total: [u64; W],
    /// The total size of the block's targets (saturated at `u64::MAX`).
    block_total: u64,
    /// Per-byte tables: `table[k * 256 + b]` is the total size of the targets selected
    /// by byte value `b` at byte position `k` of the bitset.
    table: &'a [u64],
}

/// For target components `start..start+BLOCK`, the weighted reach of every component
/// from `start` on (earlier ones cannot reach the block), added to `total` (indexed
/// by component).
///
/// Rows that reach nothing or everything of the block are kept as a state instead of
/// bits, so on dense closures (where most paths reach most of what lies below them)
/// the work per component stops at its first successor that reaches the whole block.
/// A row that comes out equal to its first successor's (the later successors added
/// nothing in this block) shares that successor's slot and sum instead of a copy: on
/// the yardstick's `layered` shape, about a third of the rows that hold bits.
///
/// When few rows after the block can reach it (fewer than one in [`SPARSE`]; see
/// [`Reaching`]), only the block's rows and those are visited, in increasing order, and
/// only their `place` entries are reset afterwards: on a star of roots over one
/// library, every block but the library's reaches no row beyond its own.
///
/// Compiled twice (`multiversion`) because a benchmark says so: on the yardstick's
/// `layered` shape the AVX2 version takes 2.48e9 instructions against 3.16e9, and the
/// median run went from 0.262 s to 0.241 s (BENCHMARKS.md, "After the AVX2 block pass").
#[multiversion::multiversion(targets("x86_64+avx2+bmi1+bmi2+popcnt+lzcnt"))]
fn block_sums<'g>(start: usize, graph: &BlockGraph<'g>, scratch: &mut Scratch, total: &mut [u64]) {
    let (succ, size, redundant) = (graph.succ, graph.size, graph.redundant);
    let nc = size.len();
    let end = (start + BLOCK).min(nc);
    let rows = nc - start;
    let reaching = graph.reaching.from(start / BLOCK);
    let sparse = reaching.len().saturating_mul(SPARSE) < rows;
    let Scratch {
        reach,
        slot_sum,
        place,
        table,
        visit,
        place_clear,
    } = scratch;
    // Only rows that reach part of the block hold bits: `place[row]` is their slot in
    // `reach` (most rows reach all or none of a block, and a bitset for every row cost
    // 12.8 MB per worker and its cache misses).
    reach.clear();
    slot_sum.clear();
    if sparse {
        // Rows not visited must read as reaching nothing: every entry is ZERO when
        // `place_clear` holds, and the visited ones are put back after the pass.
        if !*place_clear {
            place.clear();
        }
        if place.len() < rows {
            place.resize(rows, ZERO);
        }
        visit.clear();
        visit.extend(start as u32..end as u32);
        let after = visit.len();
        visit.extend(reaching.iter().filter(|&&c| c as usize >= end));
        visit[after..].sort_unstable();
    } else {
        place.clear();
        place.resize(rows, ZERO);
    }
    let weights = block_weights(&size[start..end], table);
    // The row's bits, meaningful once it holds any (`st` is `Mixed`): set from the
    // row's own bit or its first successor's bits, so rows that hold none (most)
    // never clear it.
    let mut mine = [0u64; W];
    // One loop for both kinds of block: a sparse block's rows are `visit`, a dense
    // block's every component from `start`. (On `layered`, where nearly every block
    // is dense, this loop takes 1% more instructions than the dense loop alone did;
    // a row function shared by two loops took 11% more. Cachegrind.)
    let count = if sparse { visit.len() } else { rows };
    #[allow(clippy::needless_range_loop)]
    for i in 0..count {
        let c = if sparse { visit[i] as usize } else { start + i };
        let c_succ = succ.of(c);
        let row = c - start;
        let mut st = Row::Zero;
        // The first successor that holds bits (its slot).
        let mut base: Option<u32> = None;
        if c < end {
            let bit = c - start;
            mine = [0u64; W];
            mine[bit / 64] |= 1u64 << (bit % 64);
            st = Row::Mixed;
        }
        // Successor lists are sorted, and taken last first, down to the block's
        // start (those before it cannot reach it): the later a component, the more
        // it reaches, and the first successor that reaches the whole block ends the
        // row (nine rows in ten on 100,000 paths end that way).
        let first_edge = succ.start[c] as usize;
        for (k, &s) in c_succ.iter().enumerate().rev() {
            let s = s as usize;
            if s < start {
                break;
            }
            let edge = first_edge + k;
            if redundant.is_marked(edge) {
                continue;
            }
            // `s` is a target of this block, already reached through a later
            // successor: the edge is redundant here and in every other block.
            if s < end && st != Row::Zero && mine[(s - start) / 64] & (1 << ((s - start) % 64)) != 0
            {
                redundant.mark(edge);
                continue;
            }
            match place[s - start] {
                ZERO => {}
                FULL => {
                    st = Row::Full;
                    break;
                }
                theirs => {
                    let at = theirs as usize * W;
                    let other = &reach[at..at + W];
                    if st == Row::Zero {
                        mine.copy_from_slice(other);
                    } else {
                        for (a, b) in mine.iter_mut().zip(other) {
                            *a |= *b;
                        }
                    }
                    base = base.or(Some(theirs));
                    st = Row::Mixed;
                }
            }
        }
        let sum = match st {
            Row::Zero => 0,
            Row::Full => {
                place[row] = FULL;
                weights.block_total
            }
            Row::Mixed => mixed_row(&mine, base, &weights, reach, slot_sum, &mut place[row]),
        };
        total[c] = total[c].saturating_add(sum);
    }
    if sparse {
        for &c in visit.iter() {
            place[c as usize - start] = ZERO;
        }
    }
    *place_clear = sparse;
}

/// Rows after a block are visited one by one (see [`block_sums`]) when fewer than one
/// in `SPARSE` of them can reach it; otherwise all of them, in one sequential walk.
const SPARSE: usize = 4;

/// The sum of a row that holds bits (`mine`; `base`: its first successor's slot), and
/// its `place`: its bits kept (in `reach`, with the sum) at a new slot, or [`FULL`],
/// or its first successor's slot when equal to that successor's row.
#[inline(always)]
fn mixed_row(
    mine: &[u64; W],
    base: Option<u32>,
    weights: &BlockWeights<'_>,
    reach: &mut Vec<u64>,
    slot_sum: &mut Vec<u64>,
    place: &mut u32,
) -> u64 {
    // The bits the row has beyond its first successor's: its own, and what the later
    // successors added (no successor reaches the row's own bit: components are
    // acyclic).
    let mut extra = *mine;
    if let Some(b) = base {
        let at = b as usize * W;
        for (e, f) in extra.iter_mut().zip(&reach[at..at + W]) {
            *e &= !*f;
        }
        // (Folds, not `==`: an array comparison is a call to memcmp.)
        if extra.iter().fold(0, |a, &w| a | w) == 0 {
            *place = b;
            return slot_sum[b as usize];
        }
    }
    // (A row equal to a slot's is not full: that slot's row would be.)
    if mine
        .iter()
        .zip(&weights.full)
        .fold(0, |a, (m, f)| a | (m ^ f))
        == 0
    {
        *place = FULL;
        return weights.block_total;
    }
    // The first successor's sum and the weight of the bits beyond it.
    let from = base.map_or(0, |b| slot_sum[b as usize]);
    let sum = weighted_sum(&extra, weights).saturating_add(from);
    *place = slot_sum.len() as u32;
    slot_sum.push(sum);
    reach.extend_from_slice(mine);
    sum
}

/// The weights of a block's targets (`size`, at most `BLOCK` of them), with the
/// per-byte tables built in `table`.
fn block_weights<'a>(size: &'a [u64], table: &'a mut Vec<u64>) -> BlockWeights<'a> {
    let width = size.len();
    let mut full = [0u64; W];
    for bit in 0..width {
        full[bit / 64] |= 1u64 << (bit % 64);
    }
    let mut word_total = [0u64; W];
    for (wi, chunk) in size.chunks(64).enumerate() {
        word_total[wi] = saturating_sum(chunk.iter().copied());
    }
    let block_total = saturating_sum(word_total.iter().copied());
    // Every byte position, even past a partial block's end (their entries are 0): a
    // word's eight lookups need no bounds of their own.
    let nbytes = BLOCK / 8;
    table.clear();
    table.resize(nbytes * 256, 0);
    for k in 0..nbytes {
        for b in 1..256usize {
            let low = b & (b - 1);
            let bit = (b ^ low).trailing_zeros() as usize;
            let add = size.get(k * 8 + bit).copied().unwrap_or(0);
            table[k * 256 + b] = table[k * 256 + low].saturating_add(add);
        }
    }
    BlockWeights {
        size,
        full,
        word_total,
        block_total,
        table,
    }
}

/// Whether `x` has at most four bits set (no popcount: in the baseline x86-64 version
/// of the block pass `count_ones` is a long bit-twiddling sequence, and in the AVX2
/// one a popcount test, even with the bound raised to 8 bits, measured no faster).
#[inline(always)]
fn few_bits(x: u64) -> bool {
    let x = x & x.wrapping_sub(1);
    let x = x & x.wrapping_sub(1);
    let x = x & x.wrapping_sub(1);
    let x = x & x.wrapping_sub(1);
    x == 0
}

/// The total size of the targets `bits` select, word by word: nothing for an
/// empty word, the word's total for a full one, the few targets set (or missed) for
/// a word with at most four bits set (or clear), and eight per-byte table lookups
/// otherwise (independent loads, no data-dependent loop). Exact with plain additions
/// when the block's total does not saturate (every partial sum is at most it);
/// otherwise every addition saturates.
#[inline(always)]
fn weighted_sum(bits: &[u64; W], w: &BlockWeights<'_>) -> u64 {
    // The sizes of the targets `word` selects; saturating only where the block's
    // total does.
    let bits_total = |mut word: u64, base: usize| -> u64 {
        let mut sum = 0u64;
        while word != 0 {
            sum += w.size[base + word.trailing_zeros() as usize];
            word &= word - 1;
        }
        sum
    };
    if w.block_total == u64::MAX {
        let mut sum = 0u64;
        for (wi, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                sum = sum.saturating_add(w.size[wi * 64 + word.trailing_zeros() as usize]);
                word &= word - 1;
            }
        }
        return sum;
    }
    let mut sum = 0u64;
    for (wi, (&word, &full)) in bits.iter().zip(&w.full).enumerate() {
        let missed = full & !word;
        if word == 0 {
        } else if missed == 0 {
            sum += w.word_total[wi];
        } else if few_bits(word) {
            sum += bits_total(word, wi * 64);
        } else if few_bits(missed) {
            sum += w.word_total[wi] - bits_total(missed, wi * 64);
        } else {
            let t = &w.table[wi * 8 * 256..(wi + 1) * 8 * 256];
            for k in 0..8 {
                sum += t[k * 256 + ((word >> (8 * k)) & 0xff) as usize];
            }
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::super::testutil::closure;
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    fn brute(sizes: &[u64], refs: &[Vec<usize>], v: usize) -> u64 {
        let mut seen = HashSet::new();
        let mut stack = vec![v];
        while let Some(x) = stack.pop() {
            if seen.insert(x) {
                stack.extend(refs[x].iter().copied());
            }
        }
        seen.iter().map(|&x| sizes[x]).fold(0, u64::saturating_add)
    }

    // Issue 31, item 7: N roots over one shared library, where every block but the
    // library's is reached by no row after it (the pass visits the block alone).
    #[test]
    fn star_of_roots_over_one_library() {
        let n = 5000;
        let sizes: Vec<u64> = (0..=n as u64).map(|i| 10 + i).collect();
        let refs: Vec<Vec<usize>> = (0..=n)
            .map(|i| if i < n { vec![n] } else { vec![] })
            .collect();
        let c = closure(&sizes, &refs);
        let g = ClosureGraph::new(&c, &[]);
        let got = closure_sizes(&g);
        for (v, size) in got.iter().enumerate() {
            assert_eq!(size.get(), brute(&sizes, &refs, v), "node {v}");
        }
    }

    proptest! {
        // Acyclic graphs (references point forward), where closure_sizes_of takes the
        // masked pass.
        #[test]
        fn few_in_acyclic_graphs(n in 1usize..400, seed in any::<u64>(), deg in 0usize..5) {
            let mut x = seed | 1;
            let mut rnd = move || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x };
            let sizes: Vec<u64> = (0..n).map(|_| rnd() % 1000).collect();
            let refs: Vec<Vec<usize>> = (0..n)
                .map(|i| (0..deg).filter(|_| i + 1 < n).map(|_| i + 1 + (rnd() as usize) % (n - i - 1)).collect())
                .collect();
            let c = closure(&sizes, &refs);
            let all: Vec<_> = c.paths.keys().cloned().collect();
            let g = ClosureGraph::new(&c, &all);
            let some: Vec<usize> = (0..n).step_by(n / 60 + 1).collect();
            let few = closure_sizes_of(&g, &some);
            for (k, &v) in some.iter().enumerate() {
                prop_assert_eq!(few[k].get(), brute(&sizes, &refs, v), "node {}", v);
            }
        }

        // Deep acyclic graphs spanning several blocks (references point forward, a
        // chain through every path or not): most rows reach all or all but a few
        // targets of a block, read as the block's total minus what they miss; with
        // `big` sizes, sums of a few hundred paths saturate.
        #[test]
        fn deep_acyclic_graphs_equal_brute_force(
            n in 1usize..2500,
            seed in any::<u64>(),
            deg in 1usize..6,
            chain in any::<bool>(),
            big in any::<bool>(),
        ) {
            let mut x = seed | 1;
            let mut rnd = move || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x };
            let cap = if big { u64::MAX / 200 } else { 1000 };
            let sizes: Vec<u64> = (0..n).map(|_| rnd() % cap).collect();
            let refs: Vec<Vec<usize>> = (0..n)
                .map(|i| {
                    let mut r: Vec<usize> = (0..deg)
                        .filter(|_| i + 1 < n)
                        .map(|_| i + 1 + (rnd() as usize) % (n - i - 1))
                        .collect();
                    if chain && i + 1 < n {
                        r.push(i + 1);
                    }
                    r
                })
                .collect();
            let c = closure(&sizes, &refs);
            let g = ClosureGraph::new(&c, &[]);
            prop_assert_eq!(g.len(), n);
            let got = closure_sizes(&g);
            for v in (0..n).step_by(n / 100 + 1) {
                prop_assert_eq!(got[v].get(), brute(&sizes, &refs, v), "node {}", v);
            }
        }

        // Acyclic graphs where some stretches reference only a few paths ahead and
        // others anywhere: blocks that few rows after them reach (visited sparsely)
        // mixed with blocks most rows reach, taken by the same workers in any order;
        // with `hub`, every path also references the last one (a star's library).
        #[test]
        fn local_and_far_references_equal_brute_force(
            n in 1usize..5000,
            seed in any::<u64>(),
            far_stretches in any::<u8>(),
            hub in any::<bool>(),
        ) {
            let mut x = seed | 1;
            let mut rnd = move || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x };
            let sizes: Vec<u64> = (0..n).map(|_| rnd() % 1000).collect();
            let refs: Vec<Vec<usize>> = (0..n)
                .map(|i| {
                    let ahead = n - i - 1;
                    if ahead == 0 {
                        return Vec::new();
                    }
                    let far = far_stretches & (1 << (i / 700 % 8)) != 0;
                    let window = if far { ahead } else { ahead.min(1 + (rnd() as usize) % 40) };
                    let mut r: Vec<usize> = (0..1 + rnd() % 3)
                        .map(|_| i + 1 + (rnd() as usize) % window)
                        .collect();
                    if hub {
                        r.push(n - 1);
                    }
                    r
                })
                .collect();
            let c = closure(&sizes, &refs);
            let g = ClosureGraph::new(&c, &[]);
            prop_assert_eq!(g.len(), n);
            let got = closure_sizes(&g);
            for v in (0..n).step_by(n / 150 + 1) {
                prop_assert_eq!(got[v].get(), brute(&sizes, &refs, v), "node {}", v);
            }
        }

        // Arbitrary graphs, cycles included, large enough to span several blocks.
        #[test]
        fn equals_brute_force(n in 1usize..2500, seed in any::<u64>(), deg in 0usize..4) {
            let mut x = seed | 1;
            let mut rnd = move || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x };
            let sizes: Vec<u64> = (0..n).map(|_| rnd() % 1000).collect();
            let refs: Vec<Vec<usize>> = (0..n)
                .map(|_| (0..deg).map(|_| (rnd() as usize) % n).collect())
                .collect();
            let c = closure(&sizes, &refs);
            // Cycles can leave no unreferenced root: declare every path a root.
            let all: Vec<_> = c.paths.keys().cloned().collect();
            let g = ClosureGraph::new(&c, &all);
            prop_assert_eq!(g.len(), n);
            let got = closure_sizes(&g);
            // 50 paths: one masked pass when acyclic; 70: one walk each.
            for step in [n / 50 + 1, n / 70 + 1] {
                let some: Vec<usize> = (0..n).step_by(step).collect();
                let few = closure_sizes_of(&g, &some);
                for (k, &v) in some.iter().enumerate() {
                    prop_assert_eq!(got[v].get(), brute(&sizes, &refs, v), "node {}", v);
                    prop_assert_eq!(few[k], got[v], "few, node {}", v);
                }
            }
        }
    }
}
