//! `nix path-info --json` output of every Nix version, read into a [`Closure`].
//!
//! The shapes (see `docs/nix-formats.md`): an array of objects with `path` (≤ 2.18 and
//! Lix; `sha256:<nix32>` hashes up to 2.3, SRI after; `valid` from 2.15); an object
//! keyed by full store path (2.19+, explicit `null`s from 2.23, per-entry `version` and
//! `storeDir` in 2.33's format 1); and the `{version, storeDir, info}` wrapper of
//! formats 2 and 3 (2.33+), keyed by base names, with base-name references and
//! deriver, `ca` as an object and, in format 3, signatures as `{keyName, sig}`.
//! Invalid paths (`valid: false`, `null`) go to [`Closure::invalid`] with a warning.
//! Unknown fields are ignored.
//!
//! The three shapes are recognised from their first bytes (`[`, a first key starting
//! with `/`, or a first key `info`, `storeDir` or `version`) and parsed once, straight
//! into typed structs. Other documents (and a wrong guess) are parsed twice: once into a
//! `serde_json::Value` to tell the shapes apart, once into typed structs so that a value of
//! the wrong type is reported with serde_json's line and column. Errors found after
//! parsing (a malformed store path) are located by searching the text for the
//! offending string.

use std::borrow::Cow;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::json::{
    classify, json_error, located, parse_value, with_store_dir_hint, JsonShape, PathInfoShape,
};
use super::json_parts;
use super::{LoadError, LoadOptions};
use crate::store::{
    Closure, InvalidPath, NarHash, PathInfo, SourceKind, StoreDir, StorePath, StorePathError,
};
use rayon::prelude::*;

/// The shape of a path-info document guessed from its first bytes: `[` is the array
/// shape, `{` followed by a key starting with `/` the keyed shape. `None` when the start
/// does not tell (the wrapper, structured attrs, snapshots: classified from the parsed
/// value). A wrong guess costs only a second parse: [`parse`] falls back.
pub fn quick_shape(text: &str) -> Option<PathInfoShape> {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('[') {
        return Some(PathInfoShape::Array);
    }
    let rest = t.strip_prefix('{')?.trim_start();
    if rest.starts_with("\"/") {
        return Some(PathInfoShape::Keyed);
    }
    // The wrapper's own keys, in any order (Nix writes them sorted: `info` first).
    ["\"info\"", "\"storeDir\"", "\"version\""]
        .iter()
        .any(|k| rest.starts_with(k))
        .then_some(PathInfoShape::Wrapper)
}

/// Read `nix path-info --json` output of any Nix version. `path` names the input in
/// messages and in [`Closure::origin`].
pub fn parse(text: &str, path: &Path, opts: &LoadOptions) -> Result<Closure, LoadError> {
    parse_converted(text, path, opts).map(Converted::finish)
}

/// [`parse`] of a document the caller gives away: it is freed as soon as its entries
/// are converted, before the path map is built (where the memory peaks: the document
/// was a third of it).
pub fn parse_owned(text: String, path: &Path, opts: &LoadOptions) -> Result<Closure, LoadError> {
    let converted = parse_converted(&text, path, opts)?;
    drop(text);
    Ok(converted.finish())
}

fn parse_converted<'p>(
    text: &str,
    path: &'p Path,
    opts: &LoadOptions,
) -> Result<Converted<'p>, LoadError> {
    // Large documents are nearly always the array or keyed shape: parse them straight
    // into typed structs; anything else (or a wrong guess) goes through the value-based
    // classification, which also gives the better error message.
    let mut tried = None;
    if let Some(shape) = quick_shape(text) {
        match parse_shape(text, path, opts, shape) {
            Ok(c) => return Ok(c),
            Err(e) => tried = Some((shape, e)),
        }
    }
    let value = parse_value(text, path)?;
    let shape = match classify(&value) {
        JsonShape::PathInfo(s) => s,
        JsonShape::StructuredAttrs => {
            return Err(LoadError::Invalid {
                path: path.to_path_buf(),
                message: "this is a structured-attrs .attrs.json, not `nix path-info --json` \
                          output"
                    .into(),
            })
        }
        JsonShape::Snapshot => {
            return Err(LoadError::UnknownFormat {
                path: path.to_path_buf(),
                seen: "a nixcut snapshot, not `nix path-info --json` output".into(),
            })
        }
        JsonShape::Unknown(seen) => {
            return Err(LoadError::UnknownFormat {
                path: path.to_path_buf(),
                seen,
            })
        }
    };
    drop(value);
    match tried {
        // The guess was right: parsing it again would fail the same way.
        Some((guessed, e)) if guessed == shape => Err(e),
        _ => parse_shape(text, path, opts, shape),
    }
}

/// Parse a document of a known shape into converted entries.
fn parse_shape<'p>(
    text: &str,
    path: &'p Path,
    opts: &LoadOptions,
    shape: PathInfoShape,
) -> Result<Converted<'p>, LoadError> {
    parse_shape_split(text, path, opts, shape, PARALLEL_BYTES)
}

/// Documents from this size on are parsed on every core ([`json_parts`]).
const PARALLEL_BYTES: usize = 4 << 20;

/// [`parse_shape`], with documents of `split_from` bytes or more parsed on every core.
fn parse_shape_split<'p>(
    text: &str,
    path: &'p Path,
    opts: &LoadOptions,
    shape: PathInfoShape,
    split_from: usize,
) -> Result<Converted<'p>, LoadError> {
    // The offset of the document's first `{` or `[` when it is parsed in parts.
    let parallel = |text: &str| {
        (text.len() >= split_from && rayon::current_num_threads() > 1)
            .then(|| json_parts::skip_ws(text, 0))
    };
    let mut b = Builder::new(text, path);
    match shape {
        PathInfoShape::Array => {
            let parts = parallel(text).and_then(|open| {
                let (chunks, end) =
                    json_parts::parse_array(text, open, CHUNK, path_first, array_entry)?;
                json_parts::only_ws_after(text, end).then_some(chunks)
            });
            let mut chunks: Chunks = parts_or_whole(text, path, parts, |de| {
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
        PathInfoShape::Keyed => {
            let parts = parallel(text).and_then(|open| {
                let (chunks, end) = json_parts::parse_map(text, open, CHUNK, entry_key)?;
                json_parts::only_ws_after(text, end).then_some(chunks)
            });
            let entries: Chunks = parts_or_whole(text, path, parts, |de| {
                serde::Deserializer::deserialize_map(de, EntriesVisitor(std::marker::PhantomData))
            })?;
            let doc_sd = entries_store_dir(&entries);
            b.store_dir = b.choose_store_dir(doc_sd, opts);
            b.add_all(entries)
        }
        PathInfoShape::Wrapper => {
            let parts = parallel(text).and_then(|open| wrapper_parts(text, open));
            let doc: Wrapper = parts_or_whole(text, path, parts, |de| {
                serde::Deserializer::deserialize_map(de, WrapperVisitor(std::marker::PhantomData))
            })?;
            if !(2..=3).contains(&doc.version) {
                // Version 1 never had the wrapper (it was the bare object or array):
                // older, not newer, than what this nixcut knows.
                let age = if doc.version < 2 { "older" } else { "newer" };
                b.closure.warnings.push(format!(
                    "{}: path-info JSON format version {} is {age} than those this nixcut \
                     knows (2, 3); read it as format 3",
                    path.display(),
                    doc.version
                ));
            }
            let doc_sd = doc
                .store_dir
                .clone()
                .or_else(|| entries_store_dir(&doc.info));
            b.store_dir = b.choose_store_dir(doc_sd, opts);
            b.add_all(doc.info)
        }
    }
}

/// Whether a key can start an entry of the keyed shape or of `info`: a store path or
/// a base name (`<hash>-<name>`). Only a guess where a part of the document starts
/// ([`json_parts::parse_map`]); every key is still read as any key is.
fn entry_key(k: &str) -> bool {
    let base = k.rsplit('/').next().unwrap_or(k);
    base.len() > crate::store::HASH_LEN && base.as_bytes()[crate::store::HASH_LEN] == b'-'
}

/// The document parsed in parts (`parts`: `None` when it was not split, or the split
/// parse gave up), else whole by `whole`, with serde_json's errors located.
fn parts_or_whole<'d, T>(
    text: &'d str,
    path: &Path,
    parts: Option<T>,
    whole: impl FnOnce(
        &mut serde_json::Deserializer<serde_json::de::StrRead<'d>>,
    ) -> Result<T, serde_json::Error>,
) -> Result<T, LoadError> {
    let value = match parts {
        Some(v) => v,
        None => {
            let typed = |e: serde_json::Error| json_error(path, &e);
            let mut de = serde_json::Deserializer::from_str(text);
            let v = whole(&mut de).map_err(typed)?;
            de.end().map_err(typed)?;
            v
        }
    };
    crate::timing::step("load: JSON parsing");
    Ok(value)
}

/// The store dir the first entry that names one names (format 1 of Nix 2.33 writes it
/// in every entry).
fn entries_store_dir(chunks: &Chunks<'_>) -> Option<String> {
    chunks
        .iter()
        .flatten()
        .find_map(|(_, e)| e.as_ref().and_then(|e| e.store_dir.clone()))
}

/// Whether an object (its text from the `{` on) starts with a `path`, as every entry
/// of Nix's array shape does: where a part of an array document may start.
fn path_first(item: &str) -> bool {
    item.get(json_parts::skip_ws(item, 1)..)
        .is_some_and(|rest| rest.starts_with("\"path\""))
}

/// The `{version, storeDir, info}` document read like [`WrapperVisitor`] does, with
/// `info` parsed on every core. `None` for anything unexpected: the caller then parses
/// the document whole, which reports what is wrong.
fn wrapper_parts(text: &str, open: usize) -> Option<Wrapper<'_>> {
    use json_parts::{key_at, skip_ws, value_at};
    let at = |pos: usize| text.as_bytes().get(pos).copied();
    if at(open) != Some(b'{') {
        return None;
    }
    let (mut version, mut store_dir, mut info) = (None, None, None);
    let mut pos = skip_ws(text, open + 1);
    if at(pos) == Some(b'}') {
        pos += 1;
    } else {
        loop {
            let (key, p) = key_at::<Cow<str>>(text, pos)?;
            let p = match key.as_ref() {
                "version" => value_at::<u64>(text, p).map(|(v, e)| {
                    version = Some(v);
                    e
                })?,
                "storeDir" => value_at::<Option<String>>(text, p).map(|(v, e)| {
                    store_dir = v;
                    e
                })?,
                "info" => json_parts::parse_map(text, p, CHUNK, entry_key).map(|(v, e)| {
                    info = Some(v);
                    e
                })?,
                _ => value_at::<serde::de::IgnoredAny>(text, p)?.1,
            };
            let p = skip_ws(text, p);
            match at(p) {
                Some(b',') => pos = skip_ws(text, p + 1),
                Some(b'}') => {
                    pos = p + 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    json_parts::only_ws_after(text, pos).then_some(())?;
    Some(Wrapper {
        version: version?,
        store_dir,
        info: info?,
    })
}

/// One entry as any Nix version writes it; every field optional, unknown fields ignored.
/// Strings borrow from the document where they have no escapes.
#[derive(Debug, Deserialize)]
struct RawEntry<'a> {
    #[serde(borrow)]
    path: Option<Text<'a>>,
    #[serde(rename = "narHash")]
    #[serde(borrow)]
    nar_hash: Option<RawHash<'a>>,
    #[serde(rename = "narSize")]
    nar_size: Option<u64>,
    #[serde(borrow)]
    references: Option<Vec<Text<'a>>>,
    #[serde(borrow)]
    deriver: Option<Text<'a>>,
    #[serde(rename = "registrationTime")]
    registration_time: Option<i64>,
    ultimate: Option<bool>,
    #[serde(borrow)]
    signatures: Option<Vec<RawSig<'a>>>,
    // Boxed: nearly always absent or `null`, and a `Value` is 72 bytes of every entry.
    ca: Option<Box<Value>>,
    #[serde(rename = "closureSize")]
    closure_size: Option<u64>,
    valid: Option<bool>,
    #[serde(rename = "storeDir")]
    store_dir: Option<String>,
}

/// A string that borrows from the document unless it has escapes. serde's own
/// `Deserialize` for `Cow<str>` always copies, except for a struct field marked
/// `#[serde(borrow)]`; map keys and the items of a list need this instead.
#[derive(Debug)]
struct Text<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

/// A hash as a string in any spelling (borrowed from the document: no allocation per
/// entry), or as the structured object some Nix development versions wrote
/// (`{"algorithm", "format", "hash"}`, boxed: rare). Deserialised by hand: serde's
/// untagged enums buffer every value, which costs a third of the load time on large
/// closures.
#[derive(Debug)]
enum RawHash<'a> {
    Text(Cow<'a, str>),
    Structured(Box<HashObject>),
}

impl RawHash<'_> {
    fn to_nar_hash(&self) -> NarHash {
        match self {
            RawHash::Text(s) => NarHash::parse(s),
            RawHash::Structured(h) => match h.format.as_deref() {
                Some("sri") => NarHash::parse(&h.hash),
                Some("base64") | None => NarHash::parse(&format!("{}-{}", h.algorithm, h.hash)),
                Some(_) => NarHash::parse(&format!("{}:{}", h.algorithm, h.hash)),
            },
        }
    }
}

/// A signature: `key:sig` text (formats ≤ 2, borrowed from the document) or
/// `{keyName, sig}` (format 3).
#[derive(Debug)]
enum RawSig<'a> {
    Text(Cow<'a, str>),
    Object(SigObject),
}

/// Entries in document order, in chunks of [`CHUNK`] (the unit of parallel
/// conversion): no vector of every entry is built, copied into chunks and kept until
/// the end, and each chunk's raw entries are freed as soon as it is converted.
type Chunks<'d> = Vec<Vec<(Text<'d>, Option<RawEntry<'d>>)>>;

/// Entries per chunk.
const CHUNK: usize = 4096;

/// Collects a JSON object's entries in document order, without building a map: the
/// keyed shape has one entry per path, and a B-tree of string keys would compare
/// ~17 long strings per insert.
struct EntriesVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de> serde::de::Visitor<'de> for EntriesVisitor<'de> {
    type Value = Chunks<'de>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object keyed by store path")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(k) = map.next_key::<Text<'de>>()? {
            let v = map.next_value::<Option<RawEntry<'de>>>()?;
            json_parts::push_chunked(&mut out, (k, v), CHUNK);
        }
        Ok(out)
    }
}

/// An array of entries, chunked like [`EntriesVisitor`], each keyed by its `path`
/// ([`array_entry`]).
struct ArrayVisitor<'a>(std::marker::PhantomData<&'a ()>);

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
fn array_entry(raw: RawEntry<'_>) -> (Text<'_>, Option<RawEntry<'_>>) {
    let key = raw.path.as_ref().map_or(Cow::Borrowed(""), |t| t.0.clone());
    (Text(key), Some(raw))
}

#[derive(Debug, Deserialize)]
struct HashObject {
    algorithm: String,
    format: Option<String>,
    hash: String,
}

#[derive(Debug, Deserialize)]
struct SigObject {
    #[serde(rename = "keyName")]
    key_name: String,
    sig: String,
}

/// A string (borrowed from the document unless it has escapes), or an object
/// deserialised as `T`, without buffering.
fn string_or_object<'de, D, T, R>(
    d: D,
    expecting: &'static str,
    text: fn(Cow<'de, str>) -> R,
    object: fn(T) -> R,
) -> Result<R, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct V<'de, T, R> {
        expecting: &'static str,
        text: fn(Cow<'de, str>) -> R,
        object: fn(T) -> R,
    }
    impl<'de, T: Deserialize<'de>, R> serde::de::Visitor<'de> for V<'de, T, R> {
        type Value = R;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<R, E> {
            Ok((self.text)(Cow::Borrowed(v)))
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<R, E> {
            Ok((self.text)(Cow::Owned(v.to_string())))
        }
        fn visit_string<E: serde::de::Error>(self, v: String) -> Result<R, E> {
            Ok((self.text)(Cow::Owned(v)))
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<R, A::Error> {
            let t = T::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
            Ok((self.object)(t))
        }
    }
    d.deserialize_any(V {
        expecting,
        text,
        object,
    })
}

impl<'de: 'a, 'a> Deserialize<'de> for RawHash<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        string_or_object(
            d,
            "a hash string or an {algorithm, format, hash} object",
            RawHash::Text,
            |h: HashObject| RawHash::Structured(Box::new(h)),
        )
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for RawSig<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        string_or_object(
            d,
            "a signature string or a {keyName, sig} object",
            RawSig::Text,
            RawSig::Object,
        )
    }
}

/// The `{version, storeDir, info}` document of formats 2 and 3.
struct Wrapper<'a> {
    version: u64,
    store_dir: Option<String>,
    /// The entries in document order, duplicates kept (the builder warns about them).
    info: Chunks<'a>,
}

/// Reads a [`Wrapper`] in one pass, `info` through [`EntriesVisitor`] (no map is
/// built); other top-level keys are skipped.
struct WrapperVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de> serde::de::Visitor<'de> for WrapperVisitor<'de> {
    type Value = Wrapper<'de>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a {version, storeDir, info} object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        use serde::de::Error;
        let (mut version, mut store_dir, mut info) = (None, None, None);
        while let Some(k) = map.next_key::<Cow<'de, str>>()? {
            match k.as_ref() {
                "version" => version = Some(map.next_value::<u64>()?),
                "storeDir" => store_dir = map.next_value::<Option<String>>()?,
                "info" => info = Some(map.next_value_seed(EntriesSeed(std::marker::PhantomData))?),
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(Wrapper {
            version: version.ok_or_else(|| A::Error::missing_field("version"))?,
            store_dir,
            info: info.ok_or_else(|| A::Error::missing_field("info"))?,
        })
    }
}

/// [`EntriesVisitor`] as a seed, for a map that is a value inside the document.
struct EntriesSeed<'a>(std::marker::PhantomData<&'a ()>);

impl<'de> serde::de::DeserializeSeed<'de> for EntriesSeed<'de> {
    type Value = Chunks<'de>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(EntriesVisitor(std::marker::PhantomData))
    }
}

/// Accumulates entries into a closure, with the text at hand to locate errors.
struct Builder<'t, 'p> {
    text: &'t str,
    path: &'p Path,
    store_dir: StoreDir,
    closure: Closure,
}

impl<'t, 'p> Builder<'t, 'p> {
    fn new(text: &'t str, path: &'p Path) -> Builder<'t, 'p> {
        Builder {
            text,
            path,
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
    fn choose_store_dir(&mut self, doc: Option<String>, opts: &LoadOptions) -> StoreDir {
        let sd = match (doc.map(StoreDir::new), &opts.store_dir) {
            (Some(d), Some(o)) => {
                if &d != o {
                    self.closure.warnings.push(format!(
                        "{} says the store directory is {d}, but {o} was given; using {d}",
                        self.path.display()
                    ));
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
    fn add_all<'d>(mut self, chunks: Chunks<'d>) -> Result<Converted<'p>, LoadError> {
        let sd = &self.store_dir;
        let keys: Vec<(&'d str, StorePath)> = chunks
            .par_iter()
            .flat_map_iter(|chunk| {
                chunk.iter().filter_map(|(Text(key), raw)| {
                    let raw = raw.as_ref().filter(|r| r.valid != Some(false))?;
                    match key {
                        // Entries with their own store dir are parsed by that one, later.
                        Cow::Borrowed(k) if raw.store_dir.is_none() => {
                            sd.parse_path_or_base(k).ok().map(|p| (*k, p))
                        }
                        _ => None,
                    }
                })
            })
            .collect();
        let shared = SharedPaths::new(sd.as_str(), keys);
        let shared = &shared;
        crate::timing::step("load: interning the entries' paths");
        let (text, path, store_dir) = (self.text, self.path, &self.store_dir);
        let converted: Vec<ConvertedChunk> = chunks
            .into_par_iter()
            .map(|chunk| {
                let mut conv = Converter {
                    text,
                    path,
                    store_dir,
                    shared,
                    interned: rustc_hash::FxHashMap::default(),
                    hits: Vec::new(),
                };
                chunk
                    .into_iter()
                    .map(|(Text(key), raw)| conv.convert(&key, raw))
                    .collect()
            })
            .collect();
        crate::timing::step("load: converting entries");
        // The first error in document order, as a sequential read would report it.
        let mut entries = converted
            .into_iter()
            .collect::<Result<Vec<Vec<(Entry, Vec<String>)>>, LoadError>>()?;
        // Warnings and invalid paths in document order; the valid entries stay where
        // they are until they move into the map (each move of 100,000 entries costs).
        let mut without_size = 0usize;
        let mut last: Option<&StorePath> = None;
        let mut sorted = true;
        for (c, warnings) in entries.iter_mut().flatten() {
            self.closure.warnings.append(warnings);
            match c {
                Entry::Invalid(inv) => self.closure.invalid.push(std::mem::take(inv)),
                Entry::Valid(info) => {
                    without_size += usize::from(info.nar_size.is_none());
                    sorted &= last.is_none_or(|l| *l < info.path);
                    last = Some(&info.path);
                }
            }
        }
        Ok(Converted {
            path: self.path,
            closure: self.closure,
            entries,
            sorted,
            without_size,
        })
    }
}

/// A document's entries converted, in document order, before they go into the path
/// map: they own everything they hold, so the document can be freed first.
struct Converted<'p> {
    path: &'p Path,
    /// The closure so far: store dir, warnings, invalid paths; no paths yet.
    closure: Closure,
    entries: Vec<Vec<(Entry, Vec<String>)>>,
    /// Whether the valid entries are in strictly ascending path order (as Nix writes
    /// every shape).
    sorted: bool,
    without_size: usize,
}

impl Converted<'_> {
    /// The closure, with every valid entry in its path map.
    fn finish(self) -> Closure {
        let Converted {
            path,
            mut closure,
            entries,
            sorted,
            without_size,
        } = self;
        let infos = entries.into_iter().flatten().filter_map(|(c, _)| match c {
            Entry::Valid(info) => Some(info),
            Entry::Invalid(_) => None,
        });
        if sorted {
            // The map is built in bulk, as is.
            closure.paths = infos.map(|i| (i.path.clone(), i)).collect();
        } else {
            closure.paths = dedup_sorted(&mut closure, path, infos.collect());
        }
        crate::timing::step("load: the path map");
        if without_size > 0 {
            closure.warnings.push(format!(
                "{}: {} path(s) have no narSize; their sizes are unknown",
                path.display(),
                without_size
            ));
        }
        closure
    }
}
/// The entries sorted by path (ties in document order), each path's last entry kept
/// with a warning for the ones before it, as a map built in bulk (inserting one by one
/// shifts large values inside the B-tree nodes). Positions are sorted, not the large
/// entries, and the kept ones move once, into the map.
fn dedup_sorted(
    closure: &mut Closure,
    path: &Path,
    infos: Vec<PathInfo>,
) -> std::collections::BTreeMap<StorePath, PathInfo> {
    let mut order: Vec<u32> = (0..infos.len() as u32).collect();
    order.par_sort_unstable_by(|&a, &b| {
        infos[a as usize]
            .path
            .cmp(&infos[b as usize].path)
            .then(a.cmp(&b))
    });
    // Of each run of equal paths, the last (in document order) stays.
    let at = |k: usize| &infos[order[k] as usize].path;
    let mut kept: Vec<u32> = Vec::with_capacity(order.len());
    for k in 0..order.len() {
        if k + 1 < order.len() && at(k + 1) == at(k) {
            closure.warnings.push(format!(
                "{}: {} is listed twice; kept the last entry",
                path.display(),
                closure.store_dir.display(at(k))
            ));
        } else {
            kept.push(order[k]);
        }
    }
    drop(order);
    let mut slots: Vec<Option<PathInfo>> = infos.into_iter().map(Some).collect();
    kept.iter()
        .filter_map(|&i| slots[i as usize].take())
        .map(|i| (i.path.clone(), i))
        .collect()
}

/// What one chunk of entries becomes: each entry with the warnings it raised.
type ConvertedChunk = Result<Vec<(Entry, Vec<String>)>, LoadError>;

/// What one entry becomes.
// Valid is the common case by far; boxing it would add an allocation per path.
#[allow(clippy::large_enum_variant)]
enum Entry {
    Valid(PathInfo),
    Invalid(InvalidPath),
}

/// The entries' own paths, found by the text of a key or reference. A map keyed by
/// the text compared every hit against the key's text in the document, a cache miss
/// per reference (800,000 in a 100,000-path closure); this one is keyed by the 32 hash
/// characters and compares the rest against the path's own name, which the clone of
/// a hit reads anyway. Equal to a map keyed by the text: a hit is a text that is
/// exactly the entry's key (same form, full path or base name).
struct SharedPaths<'a, 'd> {
    store_dir: &'a str,
    /// Paths by the first 8 bytes of their hash, and whether the key was a full path
    /// (else a base name).
    by_hash: rustc_hash::FxHashMap<u64, (StorePath, bool)>,
    /// Keys whose hash prefix another key already has, with another path or form
    /// (rare), keyed by their text.
    other: rustc_hash::FxHashMap<&'d str, StorePath>,
}

impl<'a, 'd> SharedPaths<'a, 'd> {
    fn new(store_dir: &'a str, keys: Vec<(&'d str, StorePath)>) -> SharedPaths<'a, 'd> {
        let mut by_hash: rustc_hash::FxHashMap<_, (StorePath, bool)> =
            rustc_hash::FxHashMap::default();
        by_hash.reserve(keys.len());
        let mut other = rustc_hash::FxHashMap::default();
        for (k, p) in keys {
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
        SharedPaths {
            store_dir,
            by_hash,
            other,
        }
    }

    /// The path whose key is exactly `text`.
    fn get(&self, text: &str) -> Option<&StorePath> {
        let full = text.starts_with('/');
        let base = if full {
            text.strip_prefix(self.store_dir)?.strip_prefix('/')?
        } else {
            text
        };
        let b = base.as_bytes();
        const H: usize = crate::store::HASH_LEN;
        if b.len() > H && b[H] == b'-' {
            if let Some((p, f)) = self.by_hash.get(&crate::store::hash_prefix(&b[..H])) {
                if *f == full && p.hash_bytes()[..] == b[..H] && p.name() == &base[H + 1..] {
                    return Some(p);
                }
            }
        }
        if self.other.is_empty() {
            None
        } else {
            self.other.get(text)
        }
    }
}

/// Turns raw entries into [`PathInfo`]s; one per thread, each with its own interner.
struct Converter<'a, 'd> {
    text: &'a str,
    path: &'a Path,
    store_dir: &'a StoreDir,
    /// The entries' own paths, keyed by their text in the document (shared by all
    /// threads, read only).
    shared: &'a SharedPaths<'a, 'd>,
    /// Other paths already parsed by this thread (references to paths the document
    /// does not describe), keyed the same way: a closure names each path many times.
    /// Strings with escapes are not interned.
    interned: rustc_hash::FxHashMap<&'d str, StorePath>,
    /// Scratch: an entry's references found among the entries' own paths.
    hits: Vec<Option<&'a StorePath>>,
}

impl<'a, 'd> Converter<'a, 'd> {
    /// Error at the first occurrence of `needle` as a JSON string, else by entry.
    fn located(&self, needle: &str, entry: &str, message: String) -> LoadError {
        located(self.text, self.path, needle, entry, message)
    }

    /// Parse a path, through the interner unless the entry has its own store dir.
    // `&Cow`, not `&str`: whether the text borrows from the document decides interning.
    #[allow(clippy::ptr_arg)]
    fn store_path(
        &mut self,
        s: &Cow<'d, str>,
        sd: &StoreDir,
        own_store_dir: bool,
    ) -> Result<StorePath, StorePathError> {
        let borrowed = match s {
            Cow::Borrowed(b) if !own_store_dir => Some(*b),
            _ => None,
        };
        if let Some(b) = borrowed {
            if let Some(p) = self.shared.get(b).or_else(|| self.interned.get(b)) {
                return Ok(p.clone());
            }
        }
        let p = sd.parse_path_or_base(s)?;
        if let Some(b) = borrowed {
            self.interned.insert(b, p.clone());
        }
        Ok(p)
    }

    #[allow(clippy::ptr_arg)] // see store_path
    fn convert(
        &mut self,
        key: &Cow<'d, str>,
        raw: Option<RawEntry<'d>>,
    ) -> Result<(Entry, Vec<String>), LoadError> {
        let mut warnings = Vec::new();
        let raw = match raw {
            Some(r) if r.valid != Some(false) => r,
            other => {
                let why = if other.is_some() {
                    "nix reported it as invalid (`valid: false`)"
                } else {
                    "nix reported it as invalid (`null`)"
                };
                warnings.push(format!(
                    "{}: {key} is not a valid path: {why}",
                    self.path.display()
                ));
                let inv = InvalidPath {
                    path: key.to_string(),
                    why: why.to_string(),
                };
                return Ok((Entry::Invalid(inv), warnings));
            }
        };
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
        let shared = self.shared;
        let mut hits = std::mem::take(&mut self.hits);
        hits.clear();
        hits.extend(refs.iter().map(|Text(r)| match r {
            Cow::Borrowed(b) if !own_store_dir => shared.get(b),
            _ => None,
        }));
        for (Text(r), hit) in refs.iter().zip(hits.drain(..)) {
            let rp = match hit {
                Some(p) => p.clone(),
                None => self.store_path(r, &sd, own_store_dir).map_err(|e| {
                    self.located(
                        r,
                        key,
                        format!("reference: {}", with_store_dir_hint(&e, &sd)),
                    )
                })?,
            };
            info.references.push(rp);
        }
        self.hits = hits;
        if let Some(d) = raw.deriver.as_ref().map(|t| t.0.as_ref()) {
            match sd.parse_path_or_base(d) {
                Ok(dp) => info.deriver = Some(dp),
                Err(e) => warnings.push(format!(
                    "{}: {key}: ignored its deriver: {e}",
                    self.path.display()
                )),
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
        info.normalise();
        Ok((Entry::Valid(info), warnings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const APP: &str = "cb57q9mwx8761wyzrb6ypijgajriigag-app-1.0";
    const FOO: &str = "x71ahacbysflg2pf8638mdh69871353b-libfoo-3.2";

    fn load_str(text: &str) -> Result<Closure, LoadError> {
        parse(text, Path::new("test.json"), &LoadOptions::default())
    }

    fn fixture(name: &str) -> Closure {
        let p = format!("{}/tests/fixtures/load/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&p).unwrap();
        parse(&text, Path::new(&p), &LoadOptions::default()).unwrap()
    }

    fn get<'c>(c: &'c Closure, base: &str) -> &'c PathInfo {
        c.paths
            .get(&crate::store::StorePath::from_base_name(base).unwrap())
            .unwrap()
    }

    #[test]
    fn nix_2_8_record() {
        let c = fixture("path-info-2.8.json");
        assert_eq!(c.paths.len(), 5);
        assert!(c.invalid.is_empty() && c.warnings.is_empty(), "{c:?}");
        let app = get(&c, APP);
        assert_eq!(app.nar_size, Some(664));
        assert_eq!(app.reported_closure_size, Some(2248));
        assert_eq!(app.references.len(), 4);
        assert!(app.references.contains(&app.path), "self reference kept");
        assert_eq!(
            app.nar_hash.as_ref().unwrap().to_sri(),
            "sha256-W7rwo1QpAHct59ExSj3QANi4iT2r6WPx7ay3JlTv0pM="
        );
        assert_eq!(
            app.deriver.as_ref().unwrap().to_string(),
            "2zl23q18sdi6niv97kjkw43is5zjzy0n-app-1.0.drv"
        );
        assert_eq!(app.registration_time, Some(1796034524));
        assert_eq!(app.ultimate, Some(true));
    }

    #[test]
    fn every_shape_reads_the_same_closure() {
        let want = fixture("path-info-2.8.json");
        for name in [
            "path-info-2.3.json",
            "path-info-2.15.json",
            "path-info-2.19.json",
            "path-info-2.23.json",
            "path-info-2.33-format1.json",
            "path-info-format2.json",
            "path-info-format3.json",
        ] {
            let c = fixture(name);
            assert_eq!(c.paths.len(), 5, "{name}");
            for (p, w) in &want.paths {
                let g = &c.paths[p];
                assert_eq!(g.nar_hash, w.nar_hash, "{name} {p}");
                assert_eq!(g.nar_size, w.nar_size, "{name} {p}");
                assert_eq!(g.references, w.references, "{name} {p}");
                assert_eq!(g.reported_closure_size, w.reported_closure_size, "{name}");
            }
            assert_eq!(c.invalid.len(), 1, "{name}");
            assert!(c.invalid[0].path.contains("gone-1.0"), "{name}");
            assert!(
                c.warnings.iter().any(|w| w.contains("gone-1.0")),
                "{name}: {:?}",
                c.warnings
            );
        }
    }

    #[test]
    fn nulls_and_signatures() {
        let c = fixture("path-info-2.23.json");
        let data = get(&c, "ap98wcl04q5cxhfmpi4222jir16qbcrl-data-2.1");
        assert_eq!(data.deriver, None);
        assert_eq!(data.registration_time, None);
        assert_eq!(data.ca, None);
        for name in ["path-info-format2.json", "path-info-format3.json"] {
            let c = fixture(name);
            let app = get(&c, APP);
            assert_eq!(app.signatures.len(), 1, "{name}");
            assert!(
                app.signatures[0].starts_with("cache.example.org-1:AAAA"),
                "{name}: {:?}",
                app.signatures
            );
            assert_eq!(
                app.deriver.as_ref().unwrap().name(),
                "app-1.0.drv",
                "{name}"
            );
        }
    }

    #[test]
    fn format_2_ca_object_and_store_dir() {
        let text = format!(
            r#"{{"version":2,"storeDir":"/gnu/store","info":{{"{FOO}":{{
                "narHash":"sha256-W7rwo1QpAHct59ExSj3QANi4iT2r6WPx7ay3JlTv0pM=",
                "narSize":10,"references":["{FOO}"],
                "ca":{{"method":"nar","hash":"sha256-EMIJ+giQ/gLIWoxmPKjno3zHZrxbGymgzGGyZvZBIdM="}},
                "deriver":null,"somethingNew":[1,2,3]}}}}}}"#
        );
        let c = load_str(&text).unwrap();
        assert_eq!(c.store_dir.as_str(), "/gnu/store");
        let foo = get(&c, FOO);
        assert!(foo.ca.as_deref().unwrap().contains("\"method\":\"nar\""));
        assert_eq!(foo.references, vec![foo.path.clone()]);
    }

    #[test]
    fn wrapper_in_any_key_order_with_duplicates_and_unknown_keys() {
        let entry = r#"{"narSize":10,"references":[]}"#;
        let text = format!(
            r#"{{"info":{{"{FOO}":{entry},"{APP}":{entry},"{FOO}":{{"narSize":11}}}},
                "later":[1,{{"x":2}}],"storeDir":"/nix/store","version":2}}"#
        );
        assert_eq!(quick_shape(&text), Some(PathInfoShape::Wrapper));
        let c = load_str(&text).unwrap();
        assert_eq!(c.paths.len(), 2);
        assert_eq!(get(&c, FOO).nar_size, Some(11), "the last duplicate wins");
        assert!(
            c.warnings.iter().any(|w| w.contains("listed twice")),
            "{:?}",
            c.warnings
        );
        // Without `version` it is no wrapper: the message says what was seen.
        let e = load_str(&format!(r#"{{"info":{{"{FOO}":{entry}}}}}"#)).unwrap_err();
        assert!(e.to_string().contains("keys [info]"), "{e}");
        // A wrong value in the wrapper still has its position.
        let text = format!("{{\"version\":2,\n\"info\":{{\"{FOO}\":{{\"narSize\":\"x\"}}}}}}");
        match load_str(&text).unwrap_err() {
            LoadError::Json { line, .. } => assert_eq!(line, 2),
            other => panic!("{other}"),
        }
    }

    /// A base name whose hash encodes `i`.
    fn base(i: usize) -> String {
        let h: String = (0..32)
            .map(|k| crate::store::NIX32_ALPHABET[(i >> (5 * (k % 4))) % 32] as char)
            .collect();
        format!("{h}-p{i}")
    }

    #[test]
    fn references_share_the_name_of_the_entry_they_name() {
        let keyed = format!(
            r#"{{"/nix/store/{APP}":{{"narSize":1,"references":["/nix/store/{FOO}"]}},
                "/nix/store/{FOO}":{{"narSize":2,"references":["/nix/store/{FOO}"]}}}}"#
        );
        let array = format!(
            r#"[{{"path":"/nix/store/{APP}","narSize":1,"references":["/nix/store/{FOO}"]}},
                {{"path":"/nix/store/{FOO}","narSize":2,"references":["/nix/store/{FOO}"]}}]"#
        );
        let wrapper = format!(
            r#"{{"version":2,"info":{{"{APP}":{{"narSize":1,"references":["{FOO}"]}},
                "{FOO}":{{"narSize":2,"references":["{FOO}"]}}}}}}"#
        );
        for text in [keyed, array, wrapper] {
            shares_names(&text);
        }
    }

    fn shares_names(text: &str) {
        let c = load_str(text).unwrap();
        let foo = &get(&c, FOO).path;
        let (key, _) = c.paths.get_key_value(foo).unwrap();
        for r in get(&c, APP)
            .references
            .iter()
            .chain(&get(&c, FOO).references)
        {
            assert_eq!(r, foo);
            assert!(std::ptr::eq(r.name(), foo.name()), "one allocation");
            assert!(std::ptr::eq(key.name(), foo.name()));
        }
    }

    #[test]
    fn hashes_sharing_a_prefix_and_keys_in_both_forms() {
        // Three paths whose hashes agree in their first 8 characters, one of them
        // keyed by its base name; references in both forms.
        let a = "x71ahacbysflg2pf8638mdh69871353b-a-1";
        let b = "x71ahacbaaaaaaaaaaaaaaaaaaaaaaaa-b-1";
        let c = "x71ahacbysflg2pf8638mdh69871353b-c-1";
        let text = format!(
            r#"{{"/nix/store/{a}":{{"narSize":1,"references":["/nix/store/{b}","{c}","/nix/store/{c}"]}},
                "/nix/store/{b}":{{"narSize":2,"references":["{a}"]}},
                "{c}":{{"narSize":3,"references":["/nix/store/{a}"]}}}}"#
        );
        let cl = load_str(&text).unwrap();
        assert_eq!(cl.paths.len(), 3);
        let refs = |x: &str| -> Vec<String> {
            get(&cl, x)
                .references
                .iter()
                .map(|r| r.to_string())
                .collect()
        };
        assert_eq!(refs(a), vec![b.to_string(), c.to_string()]);
        assert_eq!(refs(b), vec![a.to_string()]);
        assert_eq!(refs(c), vec![a.to_string()]);
        assert!(cl.missing_references().is_empty());
    }

    #[test]
    fn empty_documents_are_empty_closures() {
        for text in ["[]", "{}", r#"{"version":2,"info":{}}"#, " \n{ } "] {
            let c = load_str(text).unwrap();
            assert!(c.paths.is_empty() && c.invalid.is_empty(), "{text}");
        }
    }

    #[test]
    fn many_entries_across_chunks_duplicates_unsorted_and_escaped() {
        // More entries than one conversion chunk; the first path is listed again at
        // the end (the last entry wins, with a warning); one key and one reference are
        // spelled with a JSON escape (not interned, same path); out of order.
        let n = 2 * CHUNK + 5;
        let mut entries: Vec<String> = (0..n)
            .rev()
            .map(|i| {
                let r = if i + 1 < n {
                    format!(r#""/nix/store/{}""#, base(i + 1))
                } else {
                    String::new()
                };
                format!(
                    r#""/nix/store/{}":{{"narSize":{i},"references":[{r}]}}"#,
                    base(i)
                )
            })
            .collect();
        entries.push(format!(
            r#""/nix/store/{}":{{"narSize":77,"references":[]}}"#,
            base(0)
        ));
        let escaped = base(7).replacen("-p", "-\\u0070", 1);
        entries[1] = entries[1].replace(&base(n - 1), &base(n - 1).replacen("-p", "-\\u0070", 1));
        entries.push(format!(
            r#""/nix/store/{escaped}":{{"narSize":7,"references":["/nix/store/{}"]}}"#,
            base(8)
        ));
        let text = format!("{{{}}}", entries.join(","));
        let c = load_str(&text).unwrap();
        assert_eq!(c.paths.len(), n);
        assert_eq!(get(&c, &base(0)).nar_size, Some(77));
        let twice: Vec<&String> = c
            .warnings
            .iter()
            .filter(|w| w.contains("listed twice"))
            .collect();
        assert_eq!(twice.len(), 2, "{:?}", c.warnings);
        let p = get(&c, &base(n - 2));
        assert_eq!(p.references, vec![get(&c, &base(n - 1)).path.clone()]);
        assert!(c.missing_references().is_empty());
        let g = crate::graph::ClosureGraph::new(&c, &[]);
        assert_eq!(g.roots.len(), 2, "p0 (replaced by an entry without references) and p1 (its only referrer was that entry)");
    }

    #[test]
    fn structured_hash_objects() {
        let text = format!(
            r#"{{"version":2,"storeDir":"/nix/store","info":{{"{FOO}":{{
                "narHash":{{"algorithm":"sha256","format":"base64",
                            "hash":"W7rwo1QpAHct59ExSj3QANi4iT2r6WPx7ay3JlTv0pM="}},
                "narSize":10,"references":[]}}}}}}"#
        );
        let c = load_str(&text).unwrap();
        assert_eq!(
            get(&c, FOO).nar_hash.as_ref().unwrap().to_sri(),
            "sha256-W7rwo1QpAHct59ExSj3QANi4iT2r6WPx7ay3JlTv0pM="
        );
    }

    #[test]
    fn store_dir_from_options_and_document() {
        let text = format!(r#"[{{"path":"/gnu/store/{FOO}","narSize":1,"references":[]}}]"#);
        let e = load_str(&text).unwrap_err();
        assert!(e.to_string().contains("--store-dir"), "{e}");
        let opts = LoadOptions {
            store_dir: Some(StoreDir::new("/gnu/store")),
            ..LoadOptions::default()
        };
        let c = parse(&text, Path::new("t.json"), &opts).unwrap();
        assert_eq!(c.store_dir.as_str(), "/gnu/store");
        // A document's storeDir wins over the options, with a warning.
        let text = format!(
            r#"{{"/nix/store/{FOO}":{{"version":1,"storeDir":"/nix/store","narSize":1,"references":[]}}}}"#
        );
        let c = parse(&text, Path::new("t.json"), &opts).unwrap();
        assert_eq!(c.store_dir.as_str(), "/nix/store");
        assert!(c.warnings.iter().any(|w| w.contains("/gnu/store")));
    }

    #[test]
    fn type_errors_have_positions() {
        let text = format!("[\n {{\"path\": \"/nix/store/{FOO}\",\n  \"narSize\": \"big\"}}\n]");
        match load_str(&text).unwrap_err() {
            LoadError::Json { line, message, .. } => {
                assert_eq!(line, 3, "{message}");
                assert!(message.contains("string"), "{message}");
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn bad_store_paths_are_located() {
        let text = format!(
            "{{\n\"/nix/store/{FOO}\": {{\n  \"narSize\": 1,\n  \"references\": [\"/nix/store/not-a-path\"]\n}}}}"
        );
        match load_str(&text).unwrap_err() {
            LoadError::Json {
                line,
                column,
                message,
                ..
            } => {
                assert_eq!((line, column), (4, 18), "{message}");
                assert!(message.contains("not-a-path"), "{message}");
            }
            other => panic!("{other}"),
        }
        let e = load_str(r#"[{"narSize": 1}]"#).unwrap_err();
        assert!(
            matches!(e, LoadError::JsonEntry { ref entry, .. } if entry == "[0]"),
            "{e}"
        );
    }

    #[test]
    fn missing_sizes_warn_and_bad_derivers_are_ignored() {
        let text = format!(r#"[{{"path":"/nix/store/{FOO}","deriver":"???"}}]"#);
        let c = load_str(&text).unwrap();
        assert_eq!(get(&c, FOO).nar_size, None);
        assert!(c.warnings.iter().any(|w| w.contains("no narSize")));
        assert!(c.warnings.iter().any(|w| w.contains("deriver")));
    }

    #[test]
    fn invalid_entries_without_a_path_are_still_reported() {
        let c = load_str(r#"[{"valid": false}]"#).unwrap();
        assert_eq!(c.invalid.len(), 1);
        assert_eq!(c.invalid[0].path, "[0]");
    }

    #[test]
    fn classification() {
        let shape = |s: &str| classify(&serde_json::from_str(s).unwrap());
        assert_eq!(shape("[]"), JsonShape::PathInfo(PathInfoShape::Array));
        assert_eq!(shape("{}"), JsonShape::PathInfo(PathInfoShape::Keyed));
        assert_eq!(
            shape(r#"{"version":2,"storeDir":"/x","info":{}}"#),
            JsonShape::PathInfo(PathInfoShape::Wrapper)
        );
        assert_eq!(
            shape(r#"{"closure":[{"path":"/nix/store/x","narSize":1}]}"#),
            JsonShape::StructuredAttrs
        );
        assert_eq!(shape(r#"{"kind":"nixcut-snapshot"}"#), JsonShape::Snapshot);
        assert!(matches!(shape("[1]"), JsonShape::Unknown(_)));
        assert!(matches!(shape("\"x\""), JsonShape::Unknown(_)));
    }

    /// A document of every shape, over 4 MiB, with what makes entries differ: invalid
    /// entries, a duplicate, escapes, an entry with its own store dir, structured hashes
    /// and `ca` objects (whose `},"` look like an entry's end), missing references.
    fn varied(shape: &str, n: usize) -> String {
        let h = |i: usize| {
            format!(
                "{:0>32}",
                crate::store::encode_nix32(&(i as u64).to_le_bytes())
            )
            .chars()
            .rev()
            .take(32)
            .collect::<String>()
        };
        let mut entries = Vec::new();
        for i in 0..n {
            let base = format!("{}-p{i}", h(i));
            let refs: Vec<String> = (1..4)
                .map(|k| format!("{}-p{}", h((i * 7 + k) % (n + 3)), (i * 7 + k) % (n + 3)))
                .collect();
            let full = |b: &str| format!("/nix/store/{b}");
            let mut e = serde_json::json!({
                "narHash": if i % 5 == 0 {
                    serde_json::json!({"algorithm": "sha256", "format": "base64",
                        "hash": "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="})
                } else {
                    serde_json::json!("sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
                },
                "narSize": i * 13,
                "ca": if i % 3 == 0 { serde_json::json!({"method": "nar", "hash": "x"}) } else { serde_json::Value::Null },
                "signatures": [format!("k:{i}")],
                "valid": i % 97 != 5,
            });
            let key = if shape == "versioned" {
                base.clone()
            } else {
                full(&base)
            };
            let refs: Vec<String> = if shape == "versioned" {
                refs
            } else {
                refs.iter().map(|r| full(r)).collect()
            };
            e["references"] = serde_json::json!(refs);
            if i % 1000 == 7 {
                e["storeDir"] = serde_json::json!("/nix/store");
            }
            entries.push((key, e));
        }
        // A duplicate (the last one kept).
        let dup = entries[10].clone();
        entries.insert(20, dup);
        let mut text = match shape {
            "array" => {
                let items: Vec<String> = entries
                    .iter()
                    .map(|(k, e)| {
                        let body = serde_json::to_string(e).unwrap();
                        format!(
                            "{{\"path\":{},{}",
                            serde_json::to_string(k).unwrap(),
                            &body[1..]
                        )
                    })
                    .collect();
                format!("[{}]", items.join(",\n"))
            }
            _ => {
                let items: Vec<String> = entries
                    .iter()
                    .enumerate()
                    .map(|(i, (k, e))| {
                        let v = if i % 89 == 3 {
                            "null".to_string()
                        } else {
                            e.to_string()
                        };
                        format!("{}: {v}", serde_json::to_string(k).unwrap())
                    })
                    .collect();
                let body = format!("{{{}}}", items.join(", "));
                if shape == "versioned" {
                    format!(
                        "{{\"version\":2,\"storeDir\":\"/nix/store\",\"info\":{body},\"x\":[1]}}\n"
                    )
                } else {
                    body
                }
            }
        };
        // An escaped character in one key and one reference.
        text = text.replacen("-p1234\"", "\\u002dp1234\"", 2);
        text
    }

    #[test]
    fn a_pathless_invalid_entry_still_names_the_store_dir() {
        let text = format!(
            r#"[{{"valid":false,"storeDir":"/gnu/store"}},{{"path":"/gnu/store/{APP}","narSize":1,"references":[]}}]"#
        );
        let c = load_str(&text).unwrap();
        assert_eq!(c.store_dir.as_str(), "/gnu/store");
        assert_eq!(c.paths.len(), 1);
        assert_eq!(c.invalid.len(), 1);
        assert_eq!(c.invalid[0].path, "[0]");
    }

    #[test]
    fn a_document_parsed_on_every_core_reads_like_a_whole_one() {
        let opts = LoadOptions::default();
        for (shape, kind) in [
            ("array", PathInfoShape::Array),
            ("object", PathInfoShape::Keyed),
            ("versioned", PathInfoShape::Wrapper),
        ] {
            let text = varied(shape, 22_000);
            assert!(text.len() > PARALLEL_BYTES, "{shape}: {}", text.len());
            let p = Path::new("big.json");
            // Split indeed (a wrong guess would fall back to the whole-document read).
            let open = json_parts::skip_ws(&text, 0);
            let parts = match kind {
                PathInfoShape::Array => json_parts::parse_array::<RawEntry, _>(
                    &text,
                    open,
                    CHUNK,
                    path_first,
                    array_entry,
                )
                .map(|(c, _)| c.len()),
                PathInfoShape::Keyed => {
                    json_parts::parse_map::<Text, Option<RawEntry>>(&text, open, CHUNK, entry_key)
                        .map(|(c, _)| c.len())
                }
                PathInfoShape::Wrapper => wrapper_parts(&text, open).map(|w| w.info.len()),
            };
            assert!(parts.is_some_and(|n| n > 1), "{shape}");
            let split = parse_shape_split(&text, p, &opts, kind, 0)
                .unwrap()
                .finish();
            let whole = parse_shape_split(&text, p, &opts, kind, usize::MAX)
                .unwrap()
                .finish();
            assert!(split.paths.len() > 20_000, "{shape}");
            assert!(split.paths.iter().eq(whole.paths.iter()), "{shape}");
            assert_eq!(split.invalid, whole.invalid, "{shape}");
            assert_eq!(split.warnings, whole.warnings, "{shape}");
            assert!(
                split.warnings.iter().any(|w| w.contains("listed twice")),
                "{shape}"
            );
            // Broken documents: the same error either way.
            for cut in [text.len() / 2, text.len() - 2] {
                let broken = format!("{}]}}x", &text[..cut]);
                let a = parse_shape_split(&broken, p, &opts, kind, 0).err().unwrap();
                let b = parse_shape_split(&broken, p, &opts, kind, usize::MAX)
                    .err()
                    .unwrap();
                assert_eq!(a.to_string(), b.to_string(), "{shape}");
            }
        }
    }
}
