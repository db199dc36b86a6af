//! The keyed shape of `nix path-info --json` (Nix 2.19 – 2.32, 2.33+ format 1): an
//! object keyed by full store path; [`entry_key`] also guesses where the entries of
//! the wrapper's `info` start.

use super::convert::{Builder, Converted};
use super::raw::{entries_store_dir, parts_or_whole, Chunks, EntriesVisitor, CHUNK};
use crate::load::json_parts;
use crate::load::{LoadError, LoadOptions};

/// Read the keyed document of `b`'s text; `parallel`: the offset of its `{` when it is
/// parsed on every core.
pub(super) fn read<'p>(
    mut b: Builder<'_, 'p>,
    parallel: Option<usize>,
    opts: &LoadOptions,
) -> Result<Converted<'p>, LoadError> {
    let (text, path) = (b.text, b.path);
    let parts = parallel.and_then(|open| {
        let (chunks, end) = json_parts::parse_map(text, open, CHUNK, entry_key)?;
        json_parts::only_ws_after(text, end).then_some(chunks)
    });
    let entries: Chunks = parts_or_whole(text, path, &opts.timings, parts, |de| {
        serde::Deserializer::deserialize_map(de, EntriesVisitor(std::marker::PhantomData))
    })?;
    let doc_sd = entries_store_dir(&entries);
    b.store_dir = b.choose_store_dir(doc_sd, opts);
    b.add_all(entries)
}

/// Whether a key can start an entry of the keyed shape or of `info`: a store path or
/// a base name (`<hash>-<name>`). Only a guess where a part of the document starts
/// ([`json_parts::parse_map`]); every key is still read as any key is.
pub(super) fn entry_key(k: &str) -> bool {
    let base = k.rsplit('/').next().unwrap_or(k);
    base.len() > crate::store::HASH_LEN && base.as_bytes()[crate::store::HASH_LEN] == b'-'
}
