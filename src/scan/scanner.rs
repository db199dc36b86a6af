//! The reference scanner: finds the 32-character hash parts of candidate store paths in
//! bytes, exactly the way Nix does when it registers references, but reporting every
//! occurrence with its byte offset instead of only "found".
//!
//! Nix's loop (`libstore/references.cc`): for each 32-byte window, test the bytes from
//! the right; on the first byte outside the nix32 alphabet at position `j`, jump ahead
//! `j + 1` (no window covering that byte can match); if all 32 are valid, look the window
//! up in the candidate set and move on by one. The jump is lossless, so the hits are
//! exactly the offsets `p` where `data[p..p + 32]` equals a candidate hash, overlapping
//! ones included. Matching is case-sensitive.
//!
//! Two shortcuts change speed, not results: bytes already found valid are not tested
//! again (Nix re-tests up to 32 per window, which is slow on long `[0-9a-z]` runs), and a
//! bitset of the candidates' 4-character prefixes avoids hashing most valid windows.
//!
//! [`ScanStream`] carries the last 31 bytes of each chunk over to the next, so a hash
//! split across chunk boundaries is found once, at its absolute offset, whatever the
//! chunk sizes. The tree and NAR walkers (`super::tree`, `super::nar`) feed it file
//! contents, symlink targets and entry names.

use rustc_hash::FxHashMap;

use crate::store::{is_nix32_byte, StorePath, HASH_LEN, NIX32_ALPHABET};

/// Hits reported per file before the rest are only counted.
pub const DEFAULT_MAX_HITS_PER_FILE: usize = 10_000;

/// Bits of the prefix filter: 5 bits from each of the first 4 characters.
const FILTER_BITS: u32 = 20;

const fn digit_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 32 {
        t[NIX32_ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    t
}

/// Value of each nix32 character (0 for other bytes; only used on valid windows).
static DIGIT: [u8; 256] = digit_table();

#[inline]
fn prefix_key(window: &[u8]) -> usize {
    (usize::from(DIGIT[window[0] as usize]) << 15)
        | (usize::from(DIGIT[window[1] as usize]) << 10)
        | (usize::from(DIGIT[window[2] as usize]) << 5)
        | usize::from(DIGIT[window[3] as usize])
}

/// One occurrence of a candidate hash in a byte stream (before it is placed in a file:
/// see [`super::LocatedHit`], then [`super::HitFact`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HashMatch {
    /// Byte offset of the first hash character, from the start of the scanned stream.
    pub offset: u64,
    /// Index of the candidate in the scanner (see [`ReferenceScanner::candidate`]).
    pub candidate: u32,
}

/// A set of candidate hashes to look for; cheap to share between threads.
#[derive(Debug, Clone)]
pub struct ReferenceScanner {
    hashes: Vec<[u8; HASH_LEN]>,
    index: FxHashMap<[u8; HASH_LEN], u32>,
    /// Which 4-character prefixes candidates have: rejects most all-nix32 windows (long
    /// runs of `[0-9a-z]` text) without hashing them.
    prefixes: Vec<u64>,
    max_hits_per_file: usize,
}

impl ReferenceScanner {
    /// A scanner for the hash parts of `paths`; candidate `i` is `paths[i]` (a duplicate
    /// hash keeps its first index).
    pub fn new(paths: &[StorePath]) -> ReferenceScanner {
        ReferenceScanner::from_hashes(paths.iter().map(|p| *p.hash_bytes()))
    }

    /// A scanner for raw 32-byte hash parts, numbered in iteration order. Hashes with a
    /// byte outside the nix32 alphabet can never match and are kept only for numbering.
    pub fn from_hashes(hashes: impl IntoIterator<Item = [u8; HASH_LEN]>) -> ReferenceScanner {
        let hashes: Vec<[u8; HASH_LEN]> = hashes.into_iter().collect();
        let mut index = FxHashMap::default();
        index.reserve(hashes.len());
        let mut prefixes = vec![0u64; (1usize << FILTER_BITS) / 64];
        for (i, h) in hashes.iter().enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            index.entry(*h).or_insert(i);
            let k = prefix_key(h);
            prefixes[k / 64] |= 1 << (k % 64);
        }
        ReferenceScanner {
            hashes,
            index,
            prefixes,
            max_hits_per_file: DEFAULT_MAX_HITS_PER_FILE,
        }
    }

    /// The same scanner with a different per-file cap on reported hits.
    pub fn with_max_hits_per_file(mut self, cap: usize) -> ReferenceScanner {
        self.max_hits_per_file = cap;
        self
    }

    /// The per-file cap on reported hits.
    pub fn max_hits_per_file(&self) -> usize {
        self.max_hits_per_file
    }

    /// Number of candidates.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Whether there are no candidates.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// The hash of candidate `i`.
    pub fn candidate(&self, i: u32) -> Option<&[u8; HASH_LEN]> {
        self.hashes.get(i as usize)
    }

    /// The candidate whose hash is `window`, if any.
    #[inline]
    pub fn lookup(&self, window: &[u8]) -> Option<u32> {
        let key: &[u8; HASH_LEN] = window.try_into().ok()?;
        self.index.get(key).copied()
    }

    /// A streaming scan with this scanner's per-file cap.
    pub fn stream(&self) -> ScanStream<'_> {
        ScanStream::new(self, self.max_hits_per_file)
    }

    /// Scan one buffer; offsets are relative to its start. Capped like a stream; use
    /// [`ReferenceScanner::stream`] to learn how many hits were dropped.
    pub fn scan_slice(&self, data: &[u8]) -> Vec<HashMatch> {
        let mut s = self.stream();
        s.feed(data);
        s.finish().hits
    }

    /// Nix's search over `buf`, for windows starting before `start_limit`; calls `emit`
    /// with the window's position in `buf` and the candidate index.
    #[inline]
    fn search(&self, buf: &[u8], start_limit: usize, mut emit: impl FnMut(usize, u32)) {
        if self.index.is_empty() {
            return;
        }
        let mut i = 0usize;
        // Bytes in `i..valid_to` are known to be in the alphabet, so each window tests only
        // its new bytes: linear even on long runs of `[0-9a-z]`. The windows examined and
        // the jumps are Nix's.
        let mut valid_to = 0usize;
        while i < start_limit && i + HASH_LEN <= buf.len() {
            let from = valid_to.max(i);
            match buf[from..i + HASH_LEN]
                .iter()
                .rposition(|&b| !is_nix32_byte(b))
            {
                Some(j) => {
                    i = from + j + 1;
                    valid_to = i;
                }
                None => {
                    valid_to = i + HASH_LEN;
                    let window = &buf[i..i + HASH_LEN];
                    let k = prefix_key(window);
                    if self.prefixes[k / 64] & (1 << (k % 64)) != 0 {
                        if let Some(c) = self.lookup(window) {
                            emit(i, c);
                        }
                    }
                    i += 1;
                }
            }
        }
    }
}

/// The state of a scan over a stream of chunks: feed any chunk sizes, get the same hits.
#[derive(Debug)]
pub struct ScanStream<'s> {
    scanner: &'s ReferenceScanner,
    /// The last `tail_len` bytes fed (at most `HASH_LEN - 1`).
    tail: [u8; HASH_LEN - 1],
    tail_len: usize,
    /// Absolute offset of the next byte to be fed.
    pos: u64,
    cap: usize,
    hits: Vec<HashMatch>,
    capped: u64,
}

/// What a finished stream found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamResult {
    /// Reported hits, in offset order.
    pub hits: Vec<HashMatch>,
    /// Hits beyond the per-file cap: found, counted, not reported.
    pub capped: u64,
    /// Bytes scanned.
    pub len: u64,
}

impl<'s> ScanStream<'s> {
    fn new(scanner: &'s ReferenceScanner, cap: usize) -> ScanStream<'s> {
        ScanStream {
            scanner,
            tail: [0; HASH_LEN - 1],
            tail_len: 0,
            pos: 0,
            cap,
            hits: Vec::new(),
            capped: 0,
        }
    }

    /// Scan the next chunk of the stream.
    pub fn feed(&mut self, chunk: &[u8]) {
        self.feed_with(chunk, |_| {});
    }

    /// Scan the next chunk, also calling `on_hit` for each hit found in it (reported or
    /// capped), in offset order; used to capture context while the bytes are at hand.
    pub fn feed_with(&mut self, chunk: &[u8], mut on_hit: impl FnMut(HashMatch)) {
        if chunk.is_empty() {
            return;
        }
        let scanner = self.scanner;
        let start = self.pos;
        // Windows that start in the carried-over tail and end inside this chunk.
        if self.tail_len > 0 {
            let mut joint = [0u8; 2 * (HASH_LEN - 1)];
            let take = chunk.len().min(HASH_LEN - 1);
            joint[..self.tail_len].copy_from_slice(&self.tail[..self.tail_len]);
            joint[self.tail_len..self.tail_len + take].copy_from_slice(&chunk[..take]);
            let tail_start = start - self.tail_len as u64;
            let joint_len = self.tail_len + take;
            let tail_len = self.tail_len;
            scanner.search(&joint[..joint_len], tail_len, |i, c| {
                let hit = HashMatch {
                    offset: tail_start + i as u64,
                    candidate: c,
                };
                self.record(hit);
                on_hit(hit);
            });
        }
        // Windows that start in this chunk and end inside it.
        scanner.search(chunk, chunk.len(), |i, c| {
            let hit = HashMatch {
                offset: start + i as u64,
                candidate: c,
            };
            self.record(hit);
            on_hit(hit);
        });
        // Keep the last HASH_LEN - 1 bytes of (tail ++ chunk).
        let keep = HASH_LEN - 1;
        if chunk.len() >= keep {
            self.tail.copy_from_slice(&chunk[chunk.len() - keep..]);
            self.tail_len = keep;
        } else {
            let total = self.tail_len + chunk.len();
            let drop = total.saturating_sub(keep);
            self.tail.copy_within(drop..self.tail_len, 0);
            let kept_old = self.tail_len - drop;
            self.tail[kept_old..kept_old + chunk.len()].copy_from_slice(chunk);
            self.tail_len = kept_old + chunk.len();
        }
        self.pos += chunk.len() as u64;
    }

    #[inline]
    fn record(&mut self, hit: HashMatch) {
        if self.hits.len() < self.cap {
            self.hits.push(hit);
        } else {
            self.capped += 1;
        }
    }

    /// Absolute offset of the next byte to be fed (bytes fed so far).
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Hits reported so far.
    pub fn hits(&self) -> &[HashMatch] {
        &self.hits
    }

    /// End the stream.
    pub fn finish(self) -> StreamResult {
        StreamResult {
            hits: self.hits,
            capped: self.capped,
            len: self.pos,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::NIX32_ALPHABET;
    use proptest::prelude::*;

    const H1: &[u8; 32] = b"9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq";
    const H2: &[u8; 32] = b"rkz1zgkx4k4bqgaikd33db8p6pd7q5np";
    const AAA: &[u8; 32] = b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    fn scanner() -> ReferenceScanner {
        ReferenceScanner::from_hashes([*H1, *H2, *AAA])
    }

    /// The definition, without Nix's skipping: every window that is a candidate.
    fn naive(s: &ReferenceScanner, data: &[u8]) -> Vec<HashMatch> {
        (0..data.len().saturating_sub(HASH_LEN - 1))
            .filter_map(|p| {
                s.lookup(&data[p..p + HASH_LEN]).map(|c| HashMatch {
                    offset: p as u64,
                    candidate: c,
                })
            })
            .collect()
    }

    fn chunked(s: &ReferenceScanner, data: &[u8], size: usize) -> StreamResult {
        let mut st = s.stream();
        for c in data.chunks(size.max(1)) {
            st.feed(c);
        }
        st.finish()
    }

    #[test]
    fn finds_bare_hash_and_full_path() {
        let s = scanner();
        let mut data = b"/nix/store/".to_vec();
        data.extend_from_slice(H1);
        data.extend_from_slice(b"-rocblas/lib\0");
        data.extend_from_slice(H2);
        let hits = s.scan_slice(&data);
        assert_eq!(
            hits,
            vec![
                HashMatch {
                    offset: 11,
                    candidate: 0
                },
                HashMatch {
                    offset: 11 + 32 + 13,
                    candidate: 1
                }
            ]
        );
    }

    #[test]
    fn upper_case_and_removed_hashes_do_not_match() {
        let s = scanner();
        let upper = H1.to_ascii_uppercase();
        assert!(s.scan_slice(&upper).is_empty());
        // `remove-references-to` writes 32 `e`s.
        assert!(s.scan_slice(&[b'e'; 32]).is_empty());
        // One wrong byte anywhere.
        for i in 0..32 {
            let mut d = *H1;
            d[i] = b'E';
            assert!(s.scan_slice(&d).is_empty(), "{i}");
        }
    }

    #[test]
    fn overlapping_occurrences_are_all_reported() {
        let s = scanner();
        let data = [b'a'; 40];
        let hits = s.scan_slice(&data);
        assert_eq!(hits.len(), 9);
        assert_eq!(hits, naive(&s, &data));
    }

    #[test]
    fn short_and_empty_inputs() {
        let s = scanner();
        assert!(s.scan_slice(b"").is_empty());
        assert!(s.scan_slice(&H1[..31]).is_empty());
        assert_eq!(s.scan_slice(H1).len(), 1);
        let empty = ReferenceScanner::from_hashes([]);
        assert!(empty.scan_slice(H1).is_empty());
        assert!(empty.is_empty());
    }

    #[test]
    fn hash_split_across_every_boundary() {
        let s = scanner();
        let mut data = vec![b'-'; 7];
        data.extend_from_slice(H2);
        data.extend_from_slice(b"xyz");
        for split in 0..=data.len() {
            let mut st = s.stream();
            st.feed(&data[..split]);
            st.feed(&data[split..]);
            let r = st.finish();
            assert_eq!(
                r.hits,
                vec![HashMatch {
                    offset: 7,
                    candidate: 1
                }],
                "split at {split}"
            );
            assert_eq!(r.len, data.len() as u64);
        }
    }

    #[test]
    fn cap_counts_the_rest() {
        let s = scanner().with_max_hits_per_file(3);
        let data = [b'a'; 40];
        let r = chunked(&s, &data, 5);
        assert_eq!(r.hits.len(), 3);
        assert_eq!(r.capped, 6);
        assert_eq!(r.hits[2].offset, 2);
    }

    #[test]
    fn candidates_from_store_paths() {
        let p = StorePath::from_base_name(&format!(
            "{}-x",
            std::str::from_utf8(H2).unwrap_or_default()
        ))
        .unwrap();
        let s = ReferenceScanner::new(&[p.clone(), p]);
        assert_eq!(s.len(), 2);
        assert_eq!(s.scan_slice(H2)[0].candidate, 0);
        assert_eq!(s.candidate(1), Some(H2));
    }

    #[test]
    fn planted_across_4k_and_1m_boundaries() {
        let s = scanner();
        // Alphabet runs broken by a non-alphabet byte every 97 bytes.
        let mut data: Vec<u8> = (0..(1usize << 20) + 4096)
            .map(|i| {
                if i % 97 == 0 {
                    b'-'
                } else {
                    NIX32_ALPHABET[i % 32]
                }
            })
            .collect();
        let mut plant = |at: usize, h: &[u8]| data[at..at + 32].copy_from_slice(h);
        for (n, k) in [1usize, 16, 31, 32].into_iter().enumerate() {
            plant(4096 * (n + 2) - k, H1);
            plant((1 << 20) - 4096 * (n + 1) - k, H2);
        }
        // Adjacent hashes straddling the 1 MiB boundary, and an upper-cased decoy.
        plant((1 << 20) - 40, H1);
        plant((1 << 20) - 8, H2);
        plant((1 << 20) + 100, &H1.to_ascii_uppercase());
        let expect = naive(&s, &data);
        assert!(expect.len() >= 10, "{expect:?}");
        assert!(expect.contains(&HashMatch {
            offset: (1 << 20) - 8,
            candidate: 1
        }));
        for size in [1usize, 31, 32, 33, 4096, 1 << 20] {
            assert_eq!(chunked(&s, &data, size).hits, expect, "chunk size {size}");
        }
    }

    /// Random bytes drawn mostly from the alphabet (long valid runs) with planted hashes
    /// and upper-cased decoys.
    fn planted() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            4 => proptest::collection::vec(
                prop_oneof![
                    8 => proptest::sample::select(NIX32_ALPHABET.to_vec()),
                    1 => any::<u8>(),
                ],
                0..80,
            ),
            2 => Just(H1.to_vec()),
            2 => Just(H2.to_vec()),
            1 => Just(AAA.to_vec()),
            1 => Just(H1.to_ascii_uppercase()),
            1 => (0usize..32).prop_map(|k| H2[k..].to_vec()),
            1 => (0usize..32).prop_map(|k| H1[..k].to_vec()),
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn chunk_size_never_changes_hits(data in planted(), odd in 1usize..100) {
            let s = scanner();
            let expect = naive(&s, &data);
            prop_assert_eq!(&s.scan_slice(&data), &expect);
            for size in [1usize, 31, 32, 33, 4096, 1 << 20, odd] {
                let r = chunked(&s, &data, size);
                prop_assert_eq!(&r.hits, &expect, "chunk size {}", size);
                prop_assert_eq!(r.capped, 0);
                prop_assert_eq!(r.len, data.len() as u64);
            }
        }

        #[test]
        fn irregular_chunks_never_change_hits(
            data in planted(),
            cuts in proptest::collection::vec(0usize..70, 0..30),
        ) {
            let s = scanner();
            let expect = naive(&s, &data);
            let mut st = s.stream();
            let mut rest: &[u8] = &data;
            for c in cuts {
                let c = c.min(rest.len());
                st.feed(&rest[..c]);
                rest = &rest[c..];
            }
            st.feed(rest);
            prop_assert_eq!(st.finish().hits, expect);
        }
    }
}
