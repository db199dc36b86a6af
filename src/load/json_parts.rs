//! The items of a large JSON object or array, parsed on every core.
//!
//! serde_json reads a document from its start to its end on one core; a
//! `nix path-info --json -r` of 100,000 paths is one object or array of 100,000 entries.
//! This module cuts such a container's body into parts at guessed item boundaries and
//! parses each part with serde_json on its own core, one item (key and value) at a
//! time. A guess is checked, not trusted: the part before it must end exactly there,
//! after a `,`. Anything unexpected (a wrong guess, malformed JSON, a value serde
//! rejects) gives `None`, and the caller parses the whole document the ordinary way,
//! which also gives the ordinary error message with line and column. So a document is
//! read here exactly as serde_json reads it whole, with one difference: serde_json's
//! nesting limit (128) counts from each value read on its own (each item here, and
//! each top-level value of the loader's `{version, storeDir, info}` reader) instead of
//! from the document, so a value nested 127 deep inside an entry, which the
//! whole-document read refuses, is read. Nothing deeper than 128 is ever read, so the
//! limit still keeps the stack safe.
//!
//! Written by hand because no crate splits a JSON document: simd-json and others parse
//! faster on one core, but into their own value trees, and without serde_json's
//! borrowing of unescaped strings that the loader relies on.

use rayon::prelude::*;
use serde::Deserialize;

/// A container's items in document order, in chunks, and the offset after its
/// closing bracket.
pub(super) type Items<T> = (Vec<Chunk<T>>, usize);

/// Consecutive items, read on one thread: `reader` is the index of the rayon thread
/// that read them (and so allocated what they own), `None` outside the pool. Memory
/// is freed fastest by the thread that allocated it: glibc's allocator locks the
/// allocating thread's arena to free a block from another thread, and that thread,
/// busy allocating, holds the lock (on 100,000 paths, freeing the entries' reference
/// lists on the other core cost thousands of waits and up to 0.05 s).
#[derive(Debug)]
pub(super) struct Chunk<T> {
    pub(super) items: Vec<T>,
    pub(super) reader: Option<usize>,
}

impl<T> Chunk<T> {
    /// Items read on the current thread.
    pub(super) fn new(items: Vec<T>) -> Chunk<T> {
        Chunk {
            items,
            reader: rayon::current_thread_index(),
        }
    }
}

impl<T> std::ops::Deref for Chunk<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.items
    }
}

impl<T> std::ops::DerefMut for Chunk<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.items
    }
}

impl<T> IntoIterator for Chunk<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a Chunk<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut Chunk<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter_mut()
    }
}

/// Containers smaller than this are not split: parsing them costs less than starting
/// the parts.
const MIN_PART_BYTES: usize = 2 << 20;

/// At most this many parts, whatever the number of cores.
const MAX_PARTS: usize = 16;

/// How far past its target a part boundary is searched for.
const SEARCH_BYTES: usize = 1 << 20;

/// The entries of the object whose `{` is at `open`, in document order, in chunks of
/// up to `chunk` items; and the offset just after its `}`. `None`: see the module doc.
/// Parts start only at keys `key_ok` accepts whose value is an object or `null` (a
/// guess that is a field inside an entry is refused before it costs a part).
pub(super) fn parse_map<'d, K, V>(
    text: &'d str,
    open: usize,
    chunk: usize,
    key_ok: fn(&str) -> bool,
) -> Option<Items<(K, V)>>
where
    K: Deserialize<'d> + Send,
    V: Deserialize<'d> + Send,
{
    let guess = |s: usize| {
        let key = text.get(s + 1..)?;
        let end = memchr::memchr2(b'"', b'\\', key.as_bytes())?;
        if key.as_bytes()[end] != b'"' || !key_ok(&key[..end]) {
            return None;
        }
        let colon = skip_ws(text, s + 1 + end + 1);
        if byte(text, colon) != Some(b':') {
            return None;
        }
        matches!(byte(text, skip_ws(text, colon + 1)), Some(b'{' | b'n')).then_some(())
    };
    let starts = part_starts(text, open + 1, b'"', |s| guess(s).is_some());
    parse_container(text, open, b'{', b'}', chunk, starts, |pos| {
        let (k, pos) = key_at::<K>(text, pos)?;
        let (v, pos) = value_at::<V>(text, pos)?;
        Some(((k, v), pos))
    })
}

/// An object's key starting at `pos` (a string, then blanks, `:` and blanks), and the
/// offset of its value.
pub(super) fn key_at<'d, K: Deserialize<'d>>(text: &'d str, pos: usize) -> Option<(K, usize)> {
    if byte(text, pos) != Some(b'"') {
        return None;
    }
    let (k, pos) = value_at::<K>(text, pos)?;
    let pos = skip_ws(text, pos);
    (byte(text, pos) == Some(b':')).then(|| (k, skip_ws(text, pos + 1)))
}

/// Push `item` onto the last of `chunks`, starting a new chunk (read on this thread)
/// when that one holds `chunk` items.
pub(super) fn push_chunked<T>(chunks: &mut Vec<Chunk<T>>, item: T, chunk: usize) {
    match chunks.last_mut() {
        Some(last) if last.len() < chunk => last.push(item),
        _ => {
            let mut c = Vec::with_capacity(chunk);
            c.push(item);
            chunks.push(Chunk::new(c));
        }
    }
}

/// The items of the array whose `[` is at `open`, each made into a `T` by `f`, like
/// [`parse_map`]. Parts start only at objects whose text `item_ok` accepts (the
/// text from the `{` on).
pub(super) fn parse_array<'d, V, T>(
    text: &'d str,
    open: usize,
    chunk: usize,
    item_ok: fn(&str) -> bool,
    f: fn(V) -> T,
) -> Option<Items<T>>
where
    V: Deserialize<'d>,
    T: Send,
{
    let starts = part_starts(text, open + 1, b'{', |s| item_ok(&text[s..]));
    parse_container(text, open, b'[', b']', chunk, starts, |pos| {
        value_at::<V>(text, pos).map(|(v, end)| (f(v), end))
    })
}

/// One JSON value starting at `pos` (blanks before it skipped), and the offset after it.
pub(super) fn value_at<'d, T: Deserialize<'d>>(text: &'d str, pos: usize) -> Option<(T, usize)> {
    let rest = text.get(pos..)?;
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<T>();
    let value = values.next()?.ok()?;
    Some((value, pos + values.byte_offset()))
}

/// `pos` moved past JSON blanks.
pub(super) fn skip_ws(text: &str, mut pos: usize) -> usize {
    let b = text.as_bytes();
    while matches!(b.get(pos), Some(b' ' | b'\n' | b'\t' | b'\r')) {
        pos += 1;
    }
    pos
}

/// Whether only JSON blanks follow `pos` (what serde_json's `end` accepts).
pub(super) fn only_ws_after(text: &str, pos: usize) -> bool {
    skip_ws(text, pos) == text.len()
}

fn byte(text: &str, pos: usize) -> Option<u8> {
    text.as_bytes().get(pos).copied()
}

/// How a part ended.
enum End {
    /// At the next part's start, after a `,`.
    AtNext,
    /// At the container's closing bracket; the offset after it.
    Closed(usize),
}

fn parse_container<T: Send>(
    text: &str,
    open: usize,
    open_byte: u8,
    close: u8,
    chunk: usize,
    starts: Vec<usize>,
    item: impl Fn(usize) -> Option<(T, usize)> + Sync,
) -> Option<Items<T>> {
    if byte(text, open) != Some(open_byte) {
        return None;
    }
    let parts: Vec<(Vec<Chunk<T>>, End)> = starts
        .par_iter()
        .enumerate()
        .map(|(i, &start)| {
            let stop = starts.get(i + 1).copied();
            parse_part(text, start, i == 0, stop, close, chunk, &item)
        })
        .collect::<Option<Vec<_>>>()?;
    let mut chunks = Vec::new();
    let mut end = None;
    let last = parts.len() - 1;
    for (i, (part, how)) in parts.into_iter().enumerate() {
        match (how, i == last) {
            (End::AtNext, false) => {}
            (End::Closed(after), true) => end = Some(after),
            // A part that closed the container early, or a last one that did not.
            _ => return None,
        }
        chunks.extend(part);
    }
    Some((chunks, end?))
}

/// The first part starts at `body`; the others at guessed item starts (a `},` and
/// blanks, then `first`, the byte an item starts with: `"` for an object's key, `{`
/// for an array of objects, and `ok` of its offset), spread evenly over the text.
fn part_starts(text: &str, body: usize, first: u8, ok: impl Fn(usize) -> bool) -> Vec<usize> {
    let len = text.len().saturating_sub(body);
    let want = (len / MIN_PART_BYTES)
        .min(rayon::current_num_threads())
        .clamp(1, MAX_PARTS);
    let mut starts = vec![body];
    let finder = memchr::memmem::Finder::new(b"},");
    for i in 1..want {
        let target = (body + len / want * i).max(starts[starts.len() - 1] + 1);
        if target >= text.len() {
            break;
        }
        let window = &text.as_bytes()[target..(target + SEARCH_BYTES).min(text.len())];
        let found = finder.find_iter(window).find_map(|at| {
            let s = skip_ws(text, target + at + 2);
            (byte(text, s) == Some(first) && ok(s)).then_some(s)
        });
        if let Some(s) = found {
            starts.push(s);
        }
    }
    starts
}

/// Parse the items from `start` until the container closes or, after a `,`, `stop` is
/// reached. The first part may find the container empty.
fn parse_part<T>(
    text: &str,
    start: usize,
    first: bool,
    stop: Option<usize>,
    close: u8,
    chunk: usize,
    item: &impl Fn(usize) -> Option<(T, usize)>,
) -> Option<(Vec<Chunk<T>>, End)> {
    let mut chunks: Vec<Chunk<T>> = Vec::new();
    let mut pos = skip_ws(text, start);
    if first && byte(text, pos) == Some(close) {
        return Some((chunks, End::Closed(pos + 1)));
    }
    loop {
        let (value, after) = item(pos)?;
        push_chunked(&mut chunks, value, chunk);
        pos = skip_ws(text, after);
        match byte(text, pos)? {
            b',' => {
                pos = skip_ws(text, pos + 1);
                match stop {
                    Some(s) if pos == s => return Some((chunks, End::AtNext)),
                    // Past the next part's start: that guess was inside an item.
                    Some(s) if pos > s => return None,
                    _ => {}
                }
            }
            b if b == close => return Some((chunks, End::Closed(pos + 1))),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn starts_with_path(item: &str) -> bool {
        item[1..].starts_with("\"path\"")
    }

    fn store_key(k: &str) -> bool {
        k.starts_with("/nix/store/")
    }

    /// A large object of small entries, pretty or compact.
    fn doc(n: usize, pretty: bool) -> (String, BTreeMap<String, serde_json::Value>) {
        let mut m = BTreeMap::new();
        for i in 0..n {
            m.insert(
                format!("/nix/store/{i:032}-p{i}"),
                serde_json::json!({
                    "ca": {"x": {"y": "},\"z"}}, "deriver": {"a": 1}, "narSize": i,
                    "references": [format!("r{i}")],
                }),
            );
        }
        let text = if pretty {
            serde_json::to_string_pretty(&m).unwrap()
        } else {
            serde_json::to_string(&m).unwrap()
        };
        (text, m)
    }

    #[test]
    fn a_split_map_reads_like_the_whole() {
        for pretty in [false, true] {
            let (text, want) = doc(60_000, pretty);
            assert!(text.len() > 2 * MIN_PART_BYTES);
            let starts = part_starts(&text, 1, b'"', |_| true);
            let (chunks, end) =
                parse_map::<String, serde_json::Value>(&text, 0, 1000, store_key).expect("parsed");
            assert_eq!(end, text.len());
            let got: Vec<(String, serde_json::Value)> = chunks.into_iter().flatten().collect();
            assert_eq!(got.len(), want.len());
            assert!(got.into_iter().eq(want.into_iter()), "pretty {pretty}");
            assert!(starts.len() > 1 || rayon::current_num_threads() == 1);
        }
    }

    #[test]
    fn a_split_array_reads_like_the_whole() {
        let items: Vec<serde_json::Value> = (0..60_000)
            .map(|i| serde_json::json!({"path": format!("/nix/store/{i:032}-p"), "sigs": [{"k": 1}, {"k": 2}]}))
            .collect();
        let text = serde_json::to_string(&items).unwrap();
        let (chunks, end) =
            parse_array::<serde_json::Value, _>(&text, 0, 777, starts_with_path, |v| v)
                .expect("parsed");
        assert_eq!(end, text.len());
        assert_eq!(chunks.into_iter().flatten().collect::<Vec<_>>(), items);
    }

    #[test]
    fn anything_malformed_gives_none() {
        let (text, _) = doc(30_000, false);
        let mid = text.len() / 2;
        for bad in [
            format!("{},", &text[..text.len() - 1]) + "}", // trailing comma
            text[..text.len() - 1].to_string(),            // not closed
            format!("{}x{}", &text[..mid], &text[mid..]),  // garbage in the middle
            text.replacen("\"narSize\":7,", "\"narSize\":7,\"narSize\":8,", 1), // stays a Value
        ] {
            let r = parse_map::<String, serde_json::Value>(&bad, 0, 100, store_key);
            let whole: Result<BTreeMap<String, serde_json::Value>, _> = serde_json::from_str(&bad);
            assert_eq!(r.is_some(), whole.is_ok(), "{}", &bad[..40]);
        }
        assert!(
            parse_map::<String, serde_json::Value>("{}", 0, 10, store_key)
                .is_some_and(|(c, e)| c.is_empty() && e == 2)
        );
        assert!(parse_map::<String, serde_json::Value>("[]", 0, 10, store_key).is_none());
    }
}
