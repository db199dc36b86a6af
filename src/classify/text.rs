//! Byte-level helpers for evidence details: printable escaping of untrusted bytes
//! (file names, file contents), the text/binary test, and cutting the line or the
//! NUL-terminated string around a hit. Used by the file rules (`super::kinds`), the ELF
//! classifier (`crate::elf`) and the walkers (`crate::scan`).

use std::fmt::Write as _;

/// Bytes examined to decide whether a file is text.
pub const TEXT_SNIFF_LEN: usize = 8 << 10;

/// Escape bytes for display: valid UTF-8 passes through except control characters and
/// `\`, which become `\n`, `\t`, `\\` or `\xNN`; invalid bytes become `\xNN`.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        let _ = write!(out, "\\x{b:02x}");
                    }
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// Whether `head` (the first bytes of a file) looks like text: no NUL and at least 95%
/// printable ASCII, whitespace or bytes of multi-byte characters. Empty counts as text.
pub fn looks_like_text(head: &[u8]) -> bool {
    let head = &head[..head.len().min(TEXT_SNIFF_LEN)];
    if head.contains(&0) {
        return false;
    }
    let odd = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x0b | 0x1b))
        .count()
        + head.iter().filter(|&&b| b == 0x7f).count();
    odd * 20 <= head.len()
}

/// A piece of a buffer around a hit, and whether it was cut short on either side (by the
/// cap, not by a delimiter or the buffer's edge).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Excerpt<'a> {
    /// The bytes.
    pub bytes: &'a [u8],
    /// Offset of `bytes` in the buffer.
    pub start: usize,
    /// Cut on the left by the cap.
    pub cut_left: bool,
    /// Cut on the right by the cap.
    pub cut_right: bool,
}

/// The line of `buf` holding the hit at `pos` (`hash_len` bytes), at most `cap` bytes on
/// each side of the hit.
pub fn line_around(buf: &[u8], pos: usize, hash_len: usize, cap: usize) -> Excerpt<'_> {
    let mut e = bounded_around(buf, pos, hash_len, cap, |b| b == b'\n');
    if !e.cut_right {
        e.bytes = e.bytes.strip_suffix(b"\r").unwrap_or(e.bytes);
    }
    e
}

/// The NUL-terminated string of `buf` holding the hit at `pos`, at most `cap` bytes on
/// each side of the hit.
pub fn cstr_around(buf: &[u8], pos: usize, hash_len: usize, cap: usize) -> Excerpt<'_> {
    bounded_around(buf, pos, hash_len, cap, |b| b == 0)
}

fn bounded_around(
    buf: &[u8],
    pos: usize,
    hash_len: usize,
    cap: usize,
    is_end: impl Fn(u8) -> bool,
) -> Excerpt<'_> {
    let pos = pos.min(buf.len());
    let lo = pos.saturating_sub(cap);
    let start = buf[lo..pos]
        .iter()
        .rposition(|&b| is_end(b))
        .map(|i| lo + i + 1);
    let after = (pos + hash_len).min(buf.len());
    let hi = (after + cap).min(buf.len());
    let end = buf[after..hi]
        .iter()
        .position(|&b| is_end(b))
        .map(|i| after + i);
    let cut_left = start.is_none() && lo > 0;
    let cut_right = end.is_none() && hi < buf.len();
    let start = start.unwrap_or(lo);
    let end = end.unwrap_or(hi).max(start);
    Excerpt {
        bytes: &buf[start..end],
        start,
        cut_left,
        cut_right,
    }
}

/// `len` bytes on each side of the hit (and the hit), for binary evidence.
pub fn binary_context(buf: &[u8], pos: usize, hash_len: usize, len: usize) -> &[u8] {
    let pos = pos.min(buf.len());
    let start = pos.saturating_sub(len);
    let end = (pos + hash_len + len).min(buf.len());
    &buf[start..end]
}

/// Escape a slice with `…` markers where it was cut.
pub fn escaped_excerpt(bytes: &[u8], cut_left: bool, cut_right: bool) -> String {
    let mut s = String::new();
    if cut_left {
        s.push('…');
    }
    s.push_str(&escape_bytes(bytes));
    if cut_right {
        s.push('…');
    }
    s
}

/// Serde for raw bytes (`#[serde(with = "raw_bytes")]`): a string when they are
/// UTF-8, else the list of byte values, so that stored text stays readable.
pub mod raw_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Write `b` as a string, or as its byte values when it is not UTF-8.
    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(b) {
            Ok(text) => s.serialize_str(text),
            Err(_) => s.collect_seq(b),
        }
    }

    /// Read what [`serialize`] wrote.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Spelled {
            Text(String),
            Raw(Vec<u8>),
        }
        Ok(match Spelled::deserialize(d)? {
            Spelled::Text(t) => t.into_bytes(),
            Spelled::Raw(b) => b,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape_bytes(b"lib/a b.so"), "lib/a b.so");
        assert_eq!(escape_bytes(b"a\xffb\n\\"), "a\\xffb\\n\\\\");
        assert_eq!(escape_bytes("é\u{1b}".as_bytes()), "é\\x1b");
    }

    #[test]
    fn text_or_binary() {
        assert!(looks_like_text(b"#!/bin/sh\necho hi\n"));
        assert!(looks_like_text("ünïcödé\n".as_bytes()));
        assert!(looks_like_text(b""));
        assert!(!looks_like_text(b"\x7fELF\x02\x01\x01\0\0\0"));
        assert!(!looks_like_text(&[1u8, 2, 3, 4, 5, b'a']));
    }

    #[test]
    fn lines_and_strings() {
        let buf = b"first\nexport PATH=/nix/store/x:$PATH\r\nlast";
        let pos = buf.windows(3).position(|w| w == b"/ni").unwrap();
        let e = line_around(buf, pos, 1, 100);
        assert_eq!(e.bytes, b"export PATH=/nix/store/x:$PATH");
        assert!(!e.cut_left && !e.cut_right);
        let e = line_around(buf, pos, 1, 3);
        assert_eq!(e.bytes, b"TH=/nix");
        assert!(e.cut_left && e.cut_right);
        let s = b"\0abc\0Error in /nix/store/h/x.hpp\0z";
        let pos = 15;
        assert_eq!(
            cstr_around(s, pos, 3, 4096).bytes,
            b"Error in /nix/store/h/x.hpp"
        );
        assert_eq!(cstr_around(b"abc", 1, 1, 10).bytes, b"abc");
        assert_eq!(cstr_around(b"", 0, 32, 10).bytes, b"");
        assert_eq!(cstr_around(b"ab", 1, 32, 10).bytes, b"ab");
    }
}
