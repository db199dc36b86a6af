//! Keeping just enough of a streamed file to classify its hits: the first bytes (for the
//! text test and shebang) and a window of [`CONTEXT_WINDOW`] bytes on each side of every
//! reported hit. The NAR walker uses it for non-ELF files so that a 700 MB database
//! streamed out of a `.nar.xz` costs a few kilobytes, not 700 MB; [`Capture`] then
//! serves those bytes as a [`ByteSource`] exactly where the classifier will read.

use std::io;

use crate::classify::file_rules::CONTEXT_WINDOW;
use crate::classify::text::TEXT_SNIFF_LEN;
use crate::elf::ByteSource;
use crate::store::HASH_LEN;

/// A contiguous captured range being filled from `start`.
#[derive(Debug)]
struct Segment {
    start: u64,
    end: u64,
    data: Vec<u8>,
}

impl Segment {
    fn filled_to(&self) -> u64 {
        self.start + self.data.len() as u64
    }
}

/// The captured parts of one file of known length.
#[derive(Debug)]
pub(crate) struct Capture {
    len: u64,
    head: Vec<u8>,
    /// The last bytes before the current chunk (for windows reaching back).
    recent: Vec<u8>,
    recent_start: u64,
    segments: Vec<Segment>,
    first_unfilled: usize,
}

const RECENT: usize = CONTEXT_WINDOW + HASH_LEN;

impl Capture {
    /// A capture for a file of `len` bytes.
    pub(crate) fn new(len: u64) -> Capture {
        Capture {
            len,
            head: Vec::new(),
            recent: Vec::new(),
            recent_start: 0,
            segments: Vec::new(),
            first_unfilled: 0,
        }
    }

    /// The first bytes (up to `TEXT_SNIFF_LEN`).
    pub(crate) fn head(&self) -> &[u8] {
        &self.head
    }

    /// Take in the chunk at `chunk_start`, with the offsets of the hits reported while
    /// scanning it (in increasing order).
    pub(crate) fn feed(&mut self, chunk_start: u64, chunk: &[u8], new_hits: &[u64]) {
        if self.head.len() < TEXT_SNIFF_LEN {
            let take = (TEXT_SNIFF_LEN - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
        }
        for &o in new_hits {
            let a = o.saturating_sub(CONTEXT_WINDOW as u64);
            let b = o
                .saturating_add((HASH_LEN + CONTEXT_WINDOW) as u64)
                .min(self.len);
            let last = self.segments.len().checked_sub(1);
            match last.map(|i| (i, &mut self.segments[i])) {
                Some((i, seg)) if a <= seg.end => {
                    seg.end = seg.end.max(b);
                    // It may have been complete; it is not any more.
                    self.first_unfilled = self.first_unfilled.min(i);
                }
                _ => self.segments.push(Segment {
                    start: a,
                    end: b,
                    data: Vec::new(),
                }),
            }
        }
        let chunk_end = chunk_start + chunk.len() as u64;
        let mut i = self.first_unfilled;
        while i < self.segments.len() {
            let seg = &mut self.segments[i];
            let mut need = seg.filled_to();
            if seg.data.is_empty() && need < self.recent_start {
                // Cannot happen: windows never reach further back than `recent`.
                seg.start = self.recent_start;
                need = seg.start;
            }
            if need < chunk_start {
                let from = (need - self.recent_start) as usize;
                let to = (seg.end.min(chunk_start) - self.recent_start) as usize;
                if let Some(bytes) = self.recent.get(from..to) {
                    seg.data.extend_from_slice(bytes);
                }
                need = seg.filled_to();
            }
            if need >= chunk_start && need < seg.end && need < chunk_end {
                let from = (need - chunk_start) as usize;
                let to = (seg.end.min(chunk_end) - chunk_start) as usize;
                seg.data.extend_from_slice(&chunk[from..to]);
            }
            if seg.filled_to() >= seg.end && i == self.first_unfilled {
                self.first_unfilled += 1;
            }
            i += 1;
        }
        // Remember the last RECENT bytes of everything seen.
        if chunk.len() >= RECENT {
            self.recent.clear();
            self.recent
                .extend_from_slice(&chunk[chunk.len() - RECENT..]);
        } else {
            self.recent.extend_from_slice(chunk);
            let drop = self.recent.len().saturating_sub(RECENT);
            self.recent.drain(..drop);
        }
        self.recent_start = chunk_end - self.recent.len() as u64;
    }
}

impl ByteSource for Capture {
    fn len(&self) -> u64 {
        self.len
    }

    /// Reads what was captured at `offset`; 0 bytes where nothing was.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let from_slice = |data: &[u8], start: u64, buf: &mut [u8]| -> usize {
            let i = (offset - start) as usize;
            let n = data.len().saturating_sub(i).min(buf.len());
            buf[..n].copy_from_slice(&data[i..i + n]);
            n
        };
        if offset < self.head.len() as u64 {
            return Ok(from_slice(&self.head, 0, buf));
        }
        // Segments are sorted by start and disjoint.
        let idx = self.segments.partition_point(|s| s.start <= offset);
        if idx > 0 {
            let s = &self.segments[idx - 1];
            if offset < s.filled_to() {
                return Ok(from_slice(&s.data, s.start, buf));
            }
        }
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Whatever the chunking, every window around a hit reads back as the original.
    fn check_windows_read_back(len: usize, mut hits: Vec<usize>, chunk: usize) {
        let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
        hits.retain(|&h| h + HASH_LEN <= len);
        hits.sort_unstable();
        hits.dedup();
        let mut cap = Capture::new(len as u64);
        let mut start = 0usize;
        for c in data.chunks(chunk) {
            let end = start + c.len();
            // A hit is reported in the chunk where its last byte arrives.
            let new: Vec<u64> = hits
                .iter()
                .filter(|&&h| h + HASH_LEN > start && h + HASH_LEN <= end)
                .map(|&h| h as u64)
                .collect();
            cap.feed(start as u64, c, &new);
            start = end;
        }
        assert_eq!(cap.head(), &data[..len.min(TEXT_SNIFF_LEN)]);
        for &h in &hits {
            let lo = h.saturating_sub(CONTEXT_WINDOW);
            let want = &data[lo..(h + HASH_LEN + CONTEXT_WINDOW).min(len)];
            let got = cap.read_vec(lo as u64, want.len()).unwrap();
            assert_eq!(&got[..], want, "hit at {h}");
            // Reading further gives true bytes (from the head) or nothing.
            let more = cap.read_vec(lo as u64, 2 * want.len()).unwrap();
            assert_eq!(&more[..], &data[lo..lo + more.len()]);
        }
    }

    /// A case proptest once found: a hit at offset 0, fed one byte at a time.
    #[test]
    fn hit_at_zero_byte_by_byte() {
        check_windows_read_back(418, vec![0], 1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn windows_read_back(
            len in 0usize..6000,
            hits in proptest::collection::vec(0usize..6000, 0..12),
            chunk in 1usize..1500,
        ) {
            check_windows_read_back(len, hits, chunk);
        }
    }
}
