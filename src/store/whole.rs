//! [`WholeStore`]: every valid path of a store (or of a `nix path-info --all` file) in a
//! compact form, for `nixcut store`.
//!
//! A [`super::Closure`] keeps a [`super::PathInfo`] per path, with its references as
//! [`super::StorePath`] values: about 1 KiB per path with ten references, so 4.3 million
//! paths and 44 million references would take several GiB before any analysis. Here a
//! path is a number; its base name sits in one byte arena, its references in one array
//! of numbers (compressed lists), its size and deriver in plain vectors: about
//! 4 bytes per reference and 30 bytes plus the name per path (measured figures in
//! BENCHMARKS.md). Nothing else of a path's metadata is kept.

use rayon::prelude::*;

use super::{StoreDir, HASH_LEN};

/// "No path": a deriver that is not a valid path, a reference that could not be read.
pub const NO_PATH: u32 = u32::MAX;

/// Counts of what a whole-store loader met and could not take as given; each becomes a
/// warning (worded by `crate::render::words`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WholeStoreIssues {
    /// Paths described twice (the first description is kept).
    pub duplicates: u64,
    /// A path described under one name but referenced under another (same hash).
    pub renamed_references: u64,
    /// Paths described without a NAR size (counted as 0 bytes).
    pub missing_sizes: u64,
    /// Rows of the reference table naming a path the table of paths lacks.
    pub dangling_references: u64,
    /// Paths listed as invalid (`"valid": false`, or a `null` entry).
    pub invalid: u64,
}

impl WholeStoreIssues {
    /// Whether nothing was met.
    pub fn is_empty(&self) -> bool {
        *self == WholeStoreIssues::default()
    }
}

/// A whole store's paths, sizes and references, each path a number `0..len()`.
#[derive(Debug, Clone, Default)]
pub struct WholeStore {
    /// The logical store directory the paths live in.
    pub store_dir: StoreDir,
    /// Base names (`<hash>-<name>`) back to back.
    names: Vec<u8>,
    /// Where each base name ends in `names`.
    name_end: Vec<u64>,
    /// NAR size of each path (0 when unknown).
    pub nar_size: Vec<u64>,
    /// Whether the input described the path (false: only named by a reference).
    pub described: Vec<bool>,
    /// Where each path's references start in `ref_targets`, plus one entry past the last.
    ref_offsets: Vec<u32>,
    /// Every path's references, self-references left out, each list sorted.
    ref_targets: Vec<u32>,
    /// Each path's deriver when that is a path of this store, else [`NO_PATH`].
    pub deriver: Vec<u32>,
    /// The outputs each derivation has in this store (`drv`, `output`), when the input
    /// records them (a store database's `DerivationOutputs`); `None`: take every path
    /// whose deriver is the derivation.
    pub outputs: Option<Vec<(u32, u32)>>,
    /// What the input said that could not be taken as given.
    pub issues: WholeStoreIssues,
    /// Where the input came from, for messages.
    pub origin: String,
}

/// Builds a [`WholeStore`] path by path: names first (numbers are given out in the
/// order names are added), then each path's references.
#[derive(Debug, Default)]
pub struct WholeStoreBuilder {
    store: WholeStore,
    /// References of each path, in the order they were given, before sorting into lists.
    lists: Vec<(u32, u32, u32)>,
    flat: Vec<u32>,
}

impl WholeStoreBuilder {
    /// An empty store in `store_dir`, with room for `paths` paths.
    pub fn new(store_dir: StoreDir, origin: String, paths: usize) -> WholeStoreBuilder {
        let mut store = WholeStore {
            store_dir,
            origin,
            ..WholeStore::default()
        };
        store.names.reserve(paths * 48);
        store.name_end.reserve(paths);
        store.nar_size.reserve(paths);
        store.described.reserve(paths);
        store.deriver.reserve(paths);
        WholeStoreBuilder {
            store,
            lists: Vec::new(),
            flat: Vec::new(),
        }
    }

    /// Add a path by base name (checked by the caller), not yet described; its number.
    pub fn add_name(&mut self, base: &[u8]) -> u32 {
        let s = &mut self.store;
        let id = s.name_end.len() as u32;
        s.names.extend_from_slice(base);
        s.name_end.push(s.names.len() as u64);
        s.nar_size.push(0);
        s.described.push(false);
        s.deriver.push(NO_PATH);
        id
    }

    /// The number of paths added so far.
    pub fn len(&self) -> usize {
        self.store.name_end.len()
    }

    /// Whether no path was added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The base name of path `id`.
    pub fn base_name(&self, id: u32) -> &[u8] {
        self.store.base_name_bytes(id)
    }

    /// Describe path `id`: its size and deriver.
    pub fn describe(&mut self, id: u32, nar_size: u64, deriver: u32) {
        let s = &mut self.store;
        s.nar_size[id as usize] = nar_size;
        s.described[id as usize] = true;
        s.deriver[id as usize] = deriver;
    }

    /// Set the deriver of path `id`.
    pub fn set_deriver(&mut self, id: u32, deriver: u32) {
        self.store.deriver[id as usize] = deriver;
    }

    /// Whether path `id` was described.
    pub fn is_described(&self, id: u32) -> bool {
        self.store.described[id as usize]
    }

    /// The references of path `id` (self-references are dropped here). Each path's
    /// references are given once; a second list for the same path is ignored by
    /// [`WholeStoreBuilder::finish`] (the first wins).
    pub fn references(&mut self, id: u32, refs: impl IntoIterator<Item = u32>) {
        let start = self.flat.len() as u32;
        self.flat.extend(refs.into_iter().filter(|&r| r != id));
        let len = self.flat.len() as u32 - start;
        if len > 0 {
            self.lists.push((id, start, len));
        }
    }

    /// Reference lists read elsewhere: `(path, start, len)` into `flat` (a list's
    /// self-references already dropped), taken as if given one by one with
    /// [`WholeStoreBuilder::references`].
    pub fn append_lists(&mut self, lists: Vec<(u32, u32, u32)>, flat: Vec<u32>) {
        let base = self.flat.len() as u32;
        if self.flat.is_empty() {
            self.flat = flat;
        } else {
            self.flat.extend_from_slice(&flat);
        }
        self.lists.extend(
            lists
                .into_iter()
                .filter(|&(_, _, len)| len > 0)
                .map(|(id, start, len)| (id, base + start, len)),
        );
    }

    /// Total references given so far.
    pub fn reference_count(&self) -> usize {
        self.flat.len()
    }

    /// The issues counted so far, to add to.
    pub fn issues(&mut self) -> &mut WholeStoreIssues {
        &mut self.store.issues
    }

    /// Set the derivation outputs (see [`WholeStore::outputs`]).
    pub fn set_outputs(&mut self, outputs: Vec<(u32, u32)>) {
        self.store.outputs = Some(outputs);
    }

    /// The store: references sorted into one list per path, duplicates within a list
    /// removed. Lists given in path order (a database read by referrer, most files) are
    /// compacted in place; others are sorted by path first. O(n + m log d).
    pub fn finish(self) -> WholeStore {
        let WholeStoreBuilder {
            mut store,
            mut lists,
            mut flat,
        } = self;
        let n = store.name_end.len();
        let in_order = lists.windows(2).all(|w| w[0].0 < w[1].0);
        let mut targets = if in_order {
            std::mem::take(&mut flat)
        } else {
            // The first list given for a path wins (stable sort keeps their order).
            lists.sort_by_key(|&(id, _, _)| id);
            lists.dedup_by_key(|&mut (id, _, _)| id);
            Vec::with_capacity(flat.len())
        };
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0u32);
        let mut w = 0usize;
        let mut next = lists.iter().peekable();
        for id in 0..n as u32 {
            if let Some(&&(lid, start, len)) = next.peek() {
                if lid == id {
                    next.next();
                    let (start, len) = (start as usize, len as usize);
                    let from = w;
                    if in_order {
                        targets.copy_within(start..start + len, w);
                    } else {
                        targets.extend_from_slice(&flat[start..start + len]);
                    }
                    let list = &mut targets[from..from + len];
                    list.sort_unstable();
                    w = from;
                    for r in from..from + len {
                        if w == from || targets[r] != targets[w - 1] {
                            targets[w] = targets[r];
                            w += 1;
                        }
                    }
                    if !in_order {
                        targets.truncate(w);
                    }
                }
            }
            offsets.push(w as u32);
        }
        targets.truncate(w);
        drop(flat);
        targets.shrink_to_fit();
        store.ref_offsets = offsets;
        store.ref_targets = targets;
        store.names.shrink_to_fit();
        store
    }
}

impl WholeStore {
    /// Number of paths.
    pub fn len(&self) -> usize {
        self.name_end.len()
    }

    /// Whether the store has no path.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of references (self-references left out).
    pub fn reference_count(&self) -> usize {
        self.ref_targets.len()
    }

    fn base_name_bytes(&self, id: u32) -> &[u8] {
        let end = self.name_end[id as usize] as usize;
        let start = match id {
            0 => 0,
            _ => self.name_end[id as usize - 1] as usize,
        };
        &self.names[start..end]
    }

    /// The base name (`<hash>-<name>`) of path `id`. Loaders check names against Nix's
    /// grammar (ASCII only), so this is never lossy.
    pub fn base_name(&self, id: u32) -> &str {
        std::str::from_utf8(self.base_name_bytes(id)).unwrap_or("")
    }

    /// The 32-character hash part of path `id`.
    pub fn hash_part(&self, id: u32) -> &[u8] {
        let b = self.base_name_bytes(id);
        &b[..HASH_LEN.min(b.len())]
    }

    /// The full path of `id` in the store directory.
    pub fn path(&self, id: u32) -> String {
        format!("{}/{}", self.store_dir.as_str(), self.base_name(id))
    }

    /// The references of path `id`.
    pub fn references(&self, id: u32) -> &[u32] {
        let (lo, hi) = (
            self.ref_offsets[id as usize] as usize,
            self.ref_offsets[id as usize + 1] as usize,
        );
        &self.ref_targets[lo..hi]
    }

    /// The reference lists as offsets and targets (list `v` is
    /// `targets[offsets[v]..offsets[v + 1]]`).
    pub fn reference_lists(&self) -> (&[u32], &[u32]) {
        (&self.ref_offsets, &self.ref_targets)
    }

    /// An index of the paths by hash part, for [`WholeStore::find`]: each path's first
    /// eight hash characters as one number beside its id, sorted (on every core). Sorting
    /// the ids by their names instead reads the name arena at random, 22 times a path:
    /// 10 s for 4.3 million paths against a fraction of a second.
    pub fn hash_index(&self) -> HashIndex {
        let mut keys: Vec<(u64, u32)> = (0..self.len() as u32)
            .into_par_iter()
            .map(|id| (hash_key(self.hash_part(id)), id))
            .collect();
        keys.par_sort_unstable();
        HashIndex { keys }
    }

    /// The path whose hash part is that of `base` (a base name or just a hash), found
    /// through `index` ([`WholeStore::hash_index`]).
    pub fn find(&self, index: &HashIndex, base: &str) -> Option<u32> {
        let hash = base.as_bytes().get(..HASH_LEN)?;
        let key = hash_key(hash);
        let from = index.keys.partition_point(|&(k, _)| k < key);
        index.keys[from..]
            .iter()
            .take_while(|&&(k, _)| k == key)
            .map(|&(_, id)| id)
            .find(|&id| self.hash_part(id) == hash)
    }
}

/// The paths of a [`WholeStore`] by hash part ([`WholeStore::hash_index`]).
#[derive(Debug, Clone)]
pub struct HashIndex {
    /// (the first eight bytes of the hash part as one number, path id), sorted.
    keys: Vec<(u64, u32)>,
}

/// A hash part's key in a [`HashIndex`]: [`super::hash_prefix`], or 0 for a name too
/// short to have one (never found: [`WholeStore::find`] compares whole hash parts).
fn hash_key(hash: &[u8]) -> u64 {
    if hash.len() >= 8 {
        super::hash_prefix(hash)
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(i: usize) -> Vec<u8> {
        format!("{:0>32}-p{i}", i).replace('0', "a").into_bytes()
    }

    #[test]
    fn lists_are_sorted_deduplicated_and_self_free_in_any_order() {
        let mut b = WholeStoreBuilder::new(StoreDir::default(), "t".into(), 4);
        for i in 0..4 {
            b.add_name(&base(i));
        }
        b.references(2, [3, 0, 2, 0]);
        b.references(0, [1]);
        b.references(2, [1]);
        let s = b.finish();
        assert_eq!(s.references(0), &[1]);
        assert_eq!(s.references(1), &[] as &[u32]);
        assert_eq!(s.references(2), &[0, 3]);
        assert_eq!(s.references(3), &[] as &[u32]);
        assert_eq!(s.reference_count(), 3);
        let idx = s.hash_index();
        assert_eq!(s.find(&idx, s.base_name(3)), Some(3));
        assert_eq!(s.find(&idx, "short"), None);
    }
}
