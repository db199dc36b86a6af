//! Raw entries into [`PathInfo`]s and the [`Closure`]: every entry's own path parsed
//! once into a shared interner, the chunks converted on every core and applied in
//! document order, so that warnings and the first error are those of a sequential read.

use std::borrow::Cow;
use std::path::Path;

use rayon::prelude::*;
use serde_json::Value;

use super::raw::{Chunks, RawEntry, RawHash, RawSig, Text};
use crate::load::json::{located, with_store_dir_hint};
use crate::load::json_parts::Chunk;
use crate::load::{LoadError, LoadOptions};
use crate::store::{
    Closure, InvalidPath, LoadWarning, PathInfo, SourceKind, StoreDir, StorePath, StorePathError,
};
use crate::timing::Timings;

/// Accumulates entries into a closure, with the text at hand to locate errors.
pub(super) struct Builder<'t, 'p> {
    pub(super) text: &'t str,
    pub(super) path: &'p Path,
    pub(super) store_dir: StoreDir,
    pub(super) closure: Closure,
    /// Where the conversion steps report their times.
    pub(super) timings: Timings,
}

impl<'t, 'p> Builder<'t, 'p> {
    pub(super) fn new(text: &'t str, path: &'p Path, timings: &Timings) -> Builder<'t, 'p> {
        Builder {
            text,
            path,
            timings: timings.clone(),
            store_dir: StoreDir::default(),
            closure: Closure::new(
                StoreDir::default(),
                SourceKind::PathInfoJson,
                path.display().to_string(),
            ),
        }
    }

    /// The document's store directory if it names one, else the options', else the
    /// default; warns when the document and the options disagree.
    pub(super) fn choose_store_dir(&mut self, doc: Option<String>, opts: &LoadOptions) -> StoreDir {
        let sd = match (doc.map(StoreDir::new), &opts.store_dir) {
            (Some(d), Some(o)) => {
                if &d != o {
                    self.closure.warnings.push(LoadWarning::StoreDirDiffers {
                        file: self.path.display().to_string(),
                        says: d.to_string(),
                        given: o.to_string(),
                    });
                }
                d
            }
            (Some(d), None) => d,
            (None, o) => o.clone().unwrap_or_default(),
        };
        self.closure.store_dir = sd.clone();
        sd
    }

    /// Convert and add entries, in parallel chunks, then apply them in document order
    /// so warnings and the first error are the same as a sequential read.
    ///
    /// Every entry's own path is parsed first (in parallel) into one shared interner,
    /// so the references, which name the same paths again and again, are lookups that
    /// share the entries' name allocations: one name per path instead of one per
    /// reference and chunk, and equal paths compare by pointer.
    ///
    /// Each chunk's entries are written straight into their slots of one vector of
    /// every entry, the one the path map is built from: gathering them from vectors
    /// of each chunk moved 30 MB on one core (100,000 paths).
    pub(super) fn add_all<'d>(mut self, chunks: Chunks<'d>) -> Result<Converted<'p>, LoadError> {
        let sd = &self.store_dir;
        let shared = SharedPaths::build(sd, &chunks);
        let shared = &shared;
        self.timings.step("load: interning the entries' paths");
        let (text, path, store_dir) = (self.text, self.path, &self.store_dir);
        let total: usize = chunks.iter().map(|c| c.len()).sum();
        // Every slot written once here (on every core: the writes take the page
        // faults of the whole vector), then once more by its entry's worker if the
        // entry is valid (and no earlier entry of its chunk was an error).
        let mut slots: Vec<Slot> = Vec::with_capacity(total);
        slots.par_extend(rayon::iter::repeat_n(None, total));
        let mut parts: Vec<&mut [Slot]> = Vec::with_capacity(chunks.len());
        let mut rest = slots.as_mut_slice();
        for chunk in &chunks {
            let (part, tail) = rest.split_at_mut(chunk.len());
            parts.push(part);
            rest = tail;
        }
        // Each chunk on the thread that read it, where it can: converting a chunk
        // frees its raw entries' lists ([`Chunk`]).
        let work: Vec<_> = chunks.into_iter().zip(parts).collect();
        let summaries: Vec<ChunkSummary> = on_readers(work, |chunk, part| {
            let mut conv = Converter {
                text,
                path,
                store_dir,
                shared,
                interned: rustc_hash::FxHashMap::default(),
                hits: Vec::new(),
                unresolved: 0,
            };
            let mut s = ChunkSummary {
                len: chunk.len(),
                sorted: true,
                ..ChunkSummary::default()
            };
            let mut prev: Option<usize> = None;
            for (k, (Text(key), raw)) in chunk.into_iter().enumerate() {
                let (entry, mut warnings) = match conv.convert(&key, raw) {
                    Ok(converted) => converted,
                    Err(e) => {
                        // Entries after the chunk's first error do not matter: the
                        // read stops there.
                        s.error = Some(e);
                        break;
                    }
                };
                s.warnings.append(&mut warnings);
                match entry {
                    Entry::Invalid(inv) => s.invalid.push(inv),
                    Entry::Valid(info) => {
                        s.without_size += usize::from(info.nar_size.is_none());
                        if let Some(Some((p, _))) = prev.map(|j| &part[j]) {
                            s.sorted &= *p < info.path;
                        }
                        prev = Some(k);
                        s.first.get_or_insert(k);
                        s.last = Some(k);
                        part[k] = Some((info.path.clone(), info));
                    }
                }
            }
            s.unresolved = conv.unresolved;
            s
        });
        self.timings.step("load: converting entries");
        // Whether every reference named one of the entries (then the closure is closed
        // and the loader need not look every reference up again).
        let mut references_resolved = true;
        // Warnings and invalid paths in document order, the first error as a
        // sequential read would report it; each chunk's summary says the rest.
        let mut without_size = 0usize;
        let mut last: Option<&StorePath> = None;
        let mut sorted = true;
        let mut at = 0usize;
        for summary in summaries {
            if let Some(e) = summary.error {
                return Err(e);
            }
            self.closure.warnings.extend(summary.warnings);
            self.closure.invalid.extend(summary.invalid);
            references_resolved &= summary.unresolved == 0;
            without_size += summary.without_size;
            sorted &= summary.sorted;
            if let (Some(f), Some(l)) = (summary.first, summary.last) {
                let path = |k: usize| slots[at + k].as_ref().map(|(p, _)| p);
                sorted &= last.is_none_or(|p| path(f).is_some_and(|f| p < f));
                last = path(l);
            }
            at += summary.len;
        }
        Ok(Converted {
            path: self.path,
            closure: self.closure,
            slots,
            sorted,
            without_size,
            references_resolved,
            timings: self.timings,
        })
    }
}

/// `f` of every chunk and what goes with it, each chunk on the rayon thread that read
/// it while that thread has such chunks left ([`Chunk::reader`]): every thread takes
/// the chunks it read, in order, then those read outside the pool (or in another
/// pool: a reader's number only means something in its own pool, and a wrong one
/// costs speed, not results), then helps with the others'. The results in chunk
/// order.
///
/// A `rayon::broadcast`: it returns once every thread of the current pool has run
/// its part, so no thread of the pool may be blocked outside rayon waiting for the
/// caller (a lock, a channel) when this is called. The loaders run one at a time, or
/// under `rayon::join`, whose waiting threads take broadcast work.
pub(super) fn on_readers<T: Send, W: Send, R: Send>(
    work: Vec<(Chunk<T>, W)>,
    f: impl Fn(Chunk<T>, W) -> R + Sync,
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let threads = rayon::current_num_threads().max(1);
    let n = work.len();
    // A list of chunk numbers per reading thread, and one (the last) for the rest.
    let mut lists: Vec<Vec<usize>> = vec![Vec::new(); threads + 1];
    for (i, (chunk, _)) in work.iter().enumerate() {
        let reader = chunk.reader.filter(|&t| t < threads).unwrap_or(threads);
        lists[reader].push(i);
    }
    let next: Vec<AtomicUsize> = (0..=threads).map(|_| AtomicUsize::new(0)).collect();
    let work: Vec<Mutex<Option<_>>> = work.into_iter().map(|w| Mutex::new(Some(w))).collect();
    let done: Vec<Vec<(usize, R)>> = rayon::broadcast(|ctx| {
        let me = ctx.index().min(threads);
        let order = [me, threads]
            .into_iter()
            .chain((0..threads).filter(|&t| t != me));
        let mut out = Vec::new();
        for list in order {
            loop {
                let k = next[list].fetch_add(1, Ordering::Relaxed);
                let Some(&i) = lists[list].get(k) else { break };
                // (Each number is taken once: the lock is never contended, and no
                // panic can happen while it is held.)
                let item = work[i]
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take();
                if let Some((chunk, with)) = item {
                    out.push((i, f(chunk, with)));
                }
            }
        }
        out
    });
    let mut results: Vec<Option<R>> = (0..n).map(|_| None).collect();
    for (i, r) in done.into_iter().flatten() {
        results[i] = Some(r);
    }
    // Every thread walked every list to its end, and each number was taken once.
    results
        .into_iter()
        .map(|r| r.expect("on_readers: every chunk is converted exactly once"))
        .collect()
}

/// One entry's place in the vector of every entry: its path and what it says, or
/// `None` for an invalid entry (named in [`Closure::invalid`] instead) and for the
/// entries after an error in its chunk (the read then fails).
pub(super) type Slot = Option<(StorePath, PathInfo)>;

/// A document's entries converted, in document order, before they go into the path
/// map: they own everything they hold, so the document can be freed first.
pub(super) struct Converted<'p> {
    pub(super) path: &'p Path,
    /// The closure so far: store dir, warnings, invalid paths; no paths yet.
    pub(super) closure: Closure,
    /// Every entry, in document order (`None` for the invalid ones).
    pub(super) slots: Vec<Slot>,
    /// Whether the valid entries are in strictly ascending path order (as Nix writes
    /// every shape).
    pub(super) sorted: bool,
    pub(super) without_size: usize,
    /// Whether every reference was resolved to one of the entries' own paths.
    pub(super) references_resolved: bool,
    /// Where the path-map step reports its time.
    pub(super) timings: Timings,
}

impl Converted<'_> {
    /// The closure, with every valid entry in its path map.
    pub(super) fn finish(self) -> Closure {
        let Converted {
            path,
            mut closure,
            slots,
            sorted,
            without_size,
            references_resolved,
            timings,
        } = self;
        // (`filter_map`, not `flatten`: the standard library gathers the valid
        // entries in place, in the vector of every entry, only for the former.)
        #[allow(clippy::filter_map_identity)]
        let valid = slots.into_iter().filter_map(|slot| slot);
        if sorted {
            // The map is built in bulk, as is.
            closure.paths = valid.collect();
        } else {
            closure.paths = dedup_sorted(&mut closure, path, valid.collect());
        }
        closure.references_resolved = references_resolved;
        timings.step("load: the path map");
        if without_size > 0 {
            closure.warnings.push(LoadWarning::WithoutNarSize {
                file: path.display().to_string(),
                count: Some(without_size as u64),
            });
        }
        closure
    }
}
/// The entries sorted by path (ties in document order), each path's last entry kept
/// with a warning for the ones before it, as a map built in bulk (inserting one by one
/// shifts large values inside the B-tree nodes). Positions are sorted, not the large
/// entries, and the kept ones move once, into the map.
pub(super) fn dedup_sorted(
    closure: &mut Closure,
    path: &Path,
    infos: Vec<(StorePath, PathInfo)>,
) -> std::collections::BTreeMap<StorePath, PathInfo> {
    let mut order: Vec<u32> = (0..infos.len() as u32).collect();
    order.par_sort_unstable_by(|&a, &b| {
        infos[a as usize]
            .0
            .cmp(&infos[b as usize].0)
            .then(a.cmp(&b))
    });
    // Of each run of equal paths, the last (in document order) stays.
    let at = |k: usize| &infos[order[k] as usize].0;
    let mut kept: Vec<u32> = Vec::with_capacity(order.len());
    for k in 0..order.len() {
        if k + 1 < order.len() && at(k + 1) == at(k) {
            closure.warnings.push(LoadWarning::ListedTwice {
                file: path.display().to_string(),
                path: closure.store_dir.display(at(k)),
                record: false,
            });
        } else {
            kept.push(order[k]);
        }
    }
    drop(order);
    let mut slots: Vec<Slot> = infos.into_iter().map(Some).collect();
    kept.iter()
        .filter_map(|&i| slots[i as usize].take())
        .collect()
}

/// What the serial pass over the converted chunks needs of each, found on the
/// worker that converted it: reading every entry again on one core cost a tenth of
/// the conversion.
#[derive(Default)]
struct ChunkSummary {
    /// How many entries the chunk has.
    len: usize,
    /// The chunk's first error (its entries from there on were not converted).
    error: Option<LoadError>,
    /// Its entries' warnings, in document order.
    warnings: Vec<LoadWarning>,
    /// Its invalid entries, in document order.
    invalid: Vec<InvalidPath>,
    /// References not found among the entries' own paths.
    unresolved: usize,
    /// Valid entries without a NAR size.
    without_size: usize,
    /// Whether the valid entries are in strictly ascending path order.
    sorted: bool,
    /// The positions of the first and last valid entries.
    first: Option<usize>,
    last: Option<usize>,
}

/// What one entry becomes.
// Valid is the common case by far; boxing it would add an allocation per path.
#[allow(clippy::large_enum_variant)]
pub(super) enum Entry {
    Valid(PathInfo),
    Invalid(InvalidPath),
}

/// The entries' own paths, found by the text of a key or reference. A map keyed by
/// the text compared every hit against the key's text in the document, a cache miss
/// per reference (800,000 in a 100,000-path closure); this one is keyed by the 32 hash
/// characters and compares the rest against the path's own name, which the clone of
/// a hit reads anyway. Equal to a map keyed by the text: a hit is a text that is
/// exactly the entry's key (same form, full path or base name).
pub(super) struct SharedPaths<'a, 'd> {
    pub(super) store_dir: &'a str,
    /// Paths by the first 8 bytes of their hash, and whether the key was a full path
    /// (else a base name), in shards by that prefix ([`shard_of`]): each shard is
    /// built on its own core.
    pub(super) by_hash: Vec<rustc_hash::FxHashMap<u64, (StorePath, bool)>>,
    /// Keys whose hash prefix another key already has, with another path or form
    /// (rare), keyed by their text.
    pub(super) other: rustc_hash::FxHashMap<&'d str, StorePath>,
}

/// The shard of a hash prefix among `n`.
fn shard_of(prefix: u64, n: usize) -> usize {
    // The prefix is eight nix32 characters: mixed, so that every bit counts.
    ((prefix.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize) % n
}

/// A key's or reference's text split as [`SharedPaths`] keys it: whether it is a full
/// path (else a base name), the base name, and its hash prefix; `None` when it is not
/// shaped like a path in `store_dir` (a text that parses as one always is).
fn split_key<'t>(store_dir: &str, text: &'t str) -> Option<(bool, &'t str, u64)> {
    let full = text.starts_with('/');
    let base = if full {
        text.strip_prefix(store_dir)?.strip_prefix('/')?
    } else {
        text
    };
    let b = base.as_bytes();
    const H: usize = crate::store::HASH_LEN;
    (b.len() > H && b[H] == b'-').then(|| (full, base, crate::store::hash_prefix(&b[..H])))
}

impl<'a, 'd> SharedPaths<'a, 'd> {
    /// The valid entries' own paths (those without a store dir of their own, which
    /// are parsed by that one later), each shard parsed and built on its own core from
    /// the keys whose text falls in it, in document order. A key this skips (its text
    /// not shaped like a path) is parsed where it is converted, as any path not here.
    pub(super) fn build(sd: &'a StoreDir, chunks: &Chunks<'d>) -> SharedPaths<'a, 'd> {
        let store_dir = sd.as_str();
        let shards = rayon::current_num_threads().clamp(1, 16);
        let entries: usize = chunks.iter().map(|c| c.len()).sum();
        let built: Vec<_> = (0..shards)
            .into_par_iter()
            .map(|shard| {
                let mut by_hash: rustc_hash::FxHashMap<u64, (StorePath, bool)> =
                    rustc_hash::FxHashMap::default();
                by_hash.reserve(entries / shards + entries / (8 * shards) + 1);
                let mut other = rustc_hash::FxHashMap::default();
                for (Text(key), raw) in chunks.iter().flatten() {
                    let Some(raw) = raw.as_ref().filter(|r| r.valid != Some(false)) else {
                        continue;
                    };
                    let Cow::Borrowed(k) = key else { continue };
                    if raw.store_dir.is_some()
                        || split_key(store_dir, k)
                            .is_none_or(|(_, _, h)| shard_of(h, shards) != shard)
                    {
                        continue;
                    }
                    if let Ok(p) = sd.parse_path_or_base(k) {
                        Self::insert(&mut by_hash, &mut other, k, p);
                    }
                }
                (by_hash, other)
            })
            .collect();
        let mut other = rustc_hash::FxHashMap::default();
        let by_hash = built
            .into_iter()
            .map(|(b, o)| {
                other.extend(o);
                b
            })
            .collect();
        SharedPaths {
            store_dir,
            by_hash,
            other,
        }
    }

    fn insert(
        by_hash: &mut rustc_hash::FxHashMap<u64, (StorePath, bool)>,
        other: &mut rustc_hash::FxHashMap<&'d str, StorePath>,
        k: &'d str,
        p: StorePath,
    ) {
        let full = k.starts_with('/');
        match by_hash.entry(p.hash_prefix()) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert((p, full));
            }
            // The same text again: the last one wins, as in a map keyed by text.
            std::collections::hash_map::Entry::Occupied(mut o)
                if o.get().1 == full && o.get().0 == p =>
            {
                o.insert((p, full));
            }
            std::collections::hash_map::Entry::Occupied(_) => {
                other.insert(k, p);
            }
        }
    }

    /// The path whose key is exactly `text`.
    pub(super) fn get(&self, text: &str) -> Option<&StorePath> {
        self.confirm(text, self.probe(text))
    }

    /// The first half of [`get`](Self::get): the path whose key has `text`'s hash and
    /// form (full path or base name), with the name `text` gives it. Its name is not
    /// read yet: [`confirm`](Self::confirm) does that, so that a caller looking up many
    /// texts can take every probe's cache miss, then every name's, each batch at once.
    pub(super) fn probe<'t>(&self, text: &'t str) -> Option<(&StorePath, &'t str)> {
        const H: usize = crate::store::HASH_LEN;
        let (full, base, prefix) = split_key(self.store_dir, text)?;
        let shard = &self.by_hash[shard_of(prefix, self.by_hash.len())];
        let (p, f) = shard.get(&prefix)?;
        (*f == full && p.hash_bytes()[..] == base.as_bytes()[..H]).then(|| (p, &base[H + 1..]))
    }

    /// The second half of [`get`](Self::get): `probe` (of `text`) if the names agree,
    /// else a key of the rare other kind.
    pub(super) fn confirm<'s>(
        &'s self,
        text: &str,
        probe: Option<(&'s StorePath, &str)>,
    ) -> Option<&'s StorePath> {
        match probe {
            Some((p, name)) if p.name() == name => Some(p),
            _ if self.other.is_empty() => None,
            _ => self.other.get(text),
        }
    }
}

/// Turns raw entries into [`PathInfo`]s; one per thread, each with its own interner.
pub(super) struct Converter<'a, 'd> {
    pub(super) text: &'a str,
    pub(super) path: &'a Path,
    pub(super) store_dir: &'a StoreDir,
    /// The entries' own paths, keyed by their text in the document (shared by all
    /// threads, read only).
    pub(super) shared: &'a SharedPaths<'a, 'd>,
    /// Other paths already parsed by this thread (references to paths the document
    /// does not describe), keyed the same way: a closure names each path many times.
    /// Strings with escapes are not interned.
    pub(super) interned: rustc_hash::FxHashMap<&'d str, StorePath>,
    /// Scratch: an entry's references probed among the entries' own paths
    /// ([`SharedPaths::probe`]).
    pub(super) hits: Vec<Option<(&'a StorePath, &'d str)>>,
    /// How many references were not found among the entries' own paths.
    pub(super) unresolved: usize,
}

impl<'a, 'd> Converter<'a, 'd> {
    /// Error at the first occurrence of `needle` as a JSON string, else by entry.
    pub(super) fn located(&self, needle: &str, entry: &str, message: String) -> LoadError {
        located(self.text, self.path, needle, entry, message)
    }

    /// Parse a path, through the interner unless the entry has its own store dir.
    // `&Cow`, not `&str`: whether the text borrows from the document decides interning.
    #[allow(clippy::ptr_arg)]
    pub(super) fn store_path(
        &mut self,
        s: &Cow<'d, str>,
        sd: &StoreDir,
        own_store_dir: bool,
    ) -> Result<StorePath, StorePathError> {
        if let (Cow::Borrowed(b), false) = (s, own_store_dir) {
            if let Some(p) = self.shared.get(b) {
                return Ok(p.clone());
            }
        }
        self.parse_interned(s, sd, own_store_dir)
    }

    /// [`store_path`](Self::store_path) of a text already looked for among the
    /// entries' own paths and not found there: this thread's other paths, else parsed.
    #[allow(clippy::ptr_arg)] // see store_path
    fn parse_interned(
        &mut self,
        s: &Cow<'d, str>,
        sd: &StoreDir,
        own_store_dir: bool,
    ) -> Result<StorePath, StorePathError> {
        let borrowed = match s {
            Cow::Borrowed(b) if !own_store_dir => Some(*b),
            _ => None,
        };
        if let Some(p) = borrowed.and_then(|b| self.interned.get(b)) {
            return Ok(p.clone());
        }
        let p = sd.parse_path_or_base(s)?;
        if let Some(b) = borrowed {
            self.interned.insert(b, p.clone());
        }
        Ok(p)
    }

    #[allow(clippy::ptr_arg)] // see store_path
    pub(super) fn convert(
        &mut self,
        key: &Cow<'d, str>,
        raw: Option<RawEntry<'d>>,
    ) -> Result<(Entry, Vec<LoadWarning>), LoadError> {
        let mut warnings = Vec::new();
        let raw = match raw {
            Some(r) if r.valid != Some(false) => r,
            other => {
                let why = if other.is_some() {
                    "nix reported it as invalid (`valid: false`)"
                } else {
                    "nix reported it as invalid (`null`)"
                };
                warnings.push(LoadWarning::NotValid {
                    file: self.path.display().to_string(),
                    key: key.to_string(),
                    valid_false: other.is_some(),
                });
                let inv = InvalidPath {
                    path: key.to_string(),
                    why: why.to_string(),
                };
                return Ok((Entry::Invalid(inv), warnings));
            }
        };
        if raw.builder.is_some() && raw.nar_size.is_none() && raw.nar_hash.is_none() {
            return Err(self.located(
                key,
                key,
                "this is a derivation (`nix show-derivation` or `nix derivation show` \
                 output: a `builder` and no narHash or narSize), not the path-info of a \
                 built path; give `nix path-info --json -r` of what it builds (e.g. of \
                 ./result)"
                    .to_string(),
            ));
        }
        let own = raw.store_dir.as_deref().map(StoreDir::new);
        let sd = own.clone().unwrap_or_else(|| self.store_dir.clone());
        let own_store_dir = own.is_some();
        let path = self
            .store_path(key, &sd, own_store_dir)
            .map_err(|e| self.located(key, key, with_store_dir_hint(&e, &sd)))?;
        let mut info = PathInfo::new(path);
        info.nar_hash = raw.nar_hash.as_ref().map(RawHash::to_nar_hash);
        info.nar_size = raw.nar_size;
        let refs = raw.references.unwrap_or_default();
        info.references.reserve(refs.len());
        // Every reference is looked up among the entries' own paths first: the
        // lookups do not depend on each other, so their cache misses (one per
        // reference, in a table of 100,000 paths) overlap instead of coming one by one.
        // Their names are compared in a second pass, for the same reason: each is a
        // cache miss of its own, behind the probe's.
        let shared = self.shared;
        let mut hits = std::mem::take(&mut self.hits);
        hits.clear();
        hits.extend(refs.iter().map(|Text(r)| match r {
            Cow::Borrowed(b) if !own_store_dir => shared.probe(b),
            _ => None,
        }));
        for (Text(r), hit) in refs.iter().zip(hits.drain(..)) {
            let found = match r {
                Cow::Borrowed(b) if !own_store_dir => shared.confirm(b, hit),
                _ => None,
            };
            let rp = match found {
                Some(p) => p.clone(),
                None => {
                    self.unresolved += 1;
                    // (Not found among the entries' own paths just above.)
                    self.parse_interned(r, &sd, own_store_dir).map_err(|e| {
                        self.located(
                            r,
                            key,
                            format!("reference: {}", with_store_dir_hint(&e, &sd)),
                        )
                    })?
                }
            };
            info.references.push(rp);
        }
        self.hits = hits;
        if let Some(d) = raw.deriver.as_ref().map(|t| t.0.as_ref()) {
            match sd.parse_path_or_base(d) {
                Ok(dp) => info.deriver = Some(dp),
                Err(e) => warnings.push(LoadWarning::DeriverIgnored {
                    file: self.path.display().to_string(),
                    line: None,
                    path: Some(key.to_string()),
                    error: e.to_string(),
                }),
            }
        }
        info.registration_time = raw.registration_time.and_then(|t| u64::try_from(t).ok());
        info.ultimate = raw.ultimate;
        info.signatures = raw
            .signatures
            .unwrap_or_default()
            .into_iter()
            .map(|s| match s {
                RawSig::Text(t) => t.into_owned(),
                RawSig::Object(o) => format!("{}:{}", o.key_name, o.sig),
            })
            .collect();
        info.ca = raw.ca.map(|v| match *v {
            Value::String(s) => s,
            other => other.to_string(),
        });
        info.reported_closure_size = raw.closure_size;
        info.download_size = raw.download_size;
        info.normalise();
        Ok((Entry::Valid(info), warnings))
    }
}
