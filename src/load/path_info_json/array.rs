//! The array shape of `nix path-info --json` (Nix ≤ 2.18 and Lix): objects with a
//! `path`, each keyed by it like the other shapes' entries; an entry without one is
//! named by its position.

use std::borrow::Cow;

use super::convert::{Builder, Converted};
use super::raw::{entries_store_dir, parts_or_whole, Chunks, RawEntry, Text, CHUNK};
use crate::load::json_parts;
use crate::load::{LoadError, LoadOptions};

/// Read the array document of `b`'s text; `parallel`: the offset of its `[` when it is
/// parsed on every core.
pub(super) fn read<'p>(
    mut b: Builder<'_, 'p>,
    parallel: Option<usize>,
    opts: &LoadOptions,
) -> Result<Converted<'p>, LoadError> {
    let (text, path) = (b.text, b.path);
    let parts = parallel.and_then(|open| {
        let (chunks, end) = json_parts::parse_array(text, open, CHUNK, path_first, array_entry)?;
        json_parts::only_ws_after(text, end).then_some(chunks)
    });
    let mut chunks: Chunks = parts_or_whole(text, path, &opts.timings, parts, |de| {
        serde::Deserializer::deserialize_seq(de, ArrayVisitor(std::marker::PhantomData))
    })?;
    // Any entry's store dir counts, a pathless invalid one's too.
    let doc_sd = entries_store_dir(&chunks);
    // Entries without a `path`: named by their position if invalid, else an
    // error. (Entries stay where they are: moving 100,000 of them costs.)
    for (i, (key, raw)) in chunks.iter_mut().flatten().enumerate() {
        let Some(r) = raw.as_ref().filter(|r| r.path.is_none()) else {
            continue;
        };
        if r.valid != Some(false) {
            return Err(LoadError::JsonEntry {
                path: path.to_path_buf(),
                entry: format!("[{i}]"),
                message: "it has no `path`".into(),
            });
        }
        // Nothing to name it by but its position; still report it.
        *key = Text(Cow::Owned(format!("[{i}]")));
        *raw = None;
    }
    b.store_dir = b.choose_store_dir(doc_sd, opts);
    b.add_all(chunks)
}

/// Whether an object (its text from the `{` on) starts with a `path`, as every entry
/// of Nix's array shape does: where a part of an array document may start.
pub(super) fn path_first(item: &str) -> bool {
    item.get(json_parts::skip_ws(item, 1)..)
        .is_some_and(|rest| rest.starts_with("\"path\""))
}

/// An array of entries, chunked like [`EntriesVisitor`], each keyed by its `path`
/// ([`array_entry`]).
pub(super) struct ArrayVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de> serde::de::Visitor<'de> for ArrayVisitor<'de> {
    type Value = Chunks<'de>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of path-info objects")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(e) = seq.next_element()? {
            json_parts::push_chunked(&mut out, array_entry(e), CHUNK);
        }
        Ok(out)
    }
}

/// An entry of the array shape keyed by its `path`, like the other shapes' entries;
/// the key is empty when it has none (and `path` stays `None`: the caller names it by
/// its position or refuses it).
pub(super) fn array_entry(raw: RawEntry<'_>) -> (Text<'_>, Option<RawEntry<'_>>) {
    let key = raw.path.as_ref().map_or(Cow::Borrowed(""), |t| t.0.clone());
    (Text(key), Some(raw))
}
