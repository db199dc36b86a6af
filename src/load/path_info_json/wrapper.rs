//! The `{version, storeDir, info}` wrapper of `nix path-info --json` formats 2 and 3
//! (Nix 2.33+), keyed by base names; `info` is parsed on every core when large.

use std::borrow::Cow;

use super::convert::{Builder, Converted};
use super::keyed::entry_key;
use super::raw::{entries_store_dir, parts_or_whole, Chunks, EntriesSeed, CHUNK};
use crate::load::json_parts;
use crate::load::{LoadError, LoadOptions};
use crate::store::LoadWarning;

/// Read the wrapper document of `b`'s text; `parallel`: the offset of its `{` when it
/// is parsed on every core.
pub(super) fn read<'p>(
    mut b: Builder<'_, 'p>,
    parallel: Option<usize>,
    opts: &LoadOptions,
) -> Result<Converted<'p>, LoadError> {
    let (text, path) = (b.text, b.path);
    let parts = parallel.and_then(|open| wrapper_parts(text, open));
    let doc: Wrapper = parts_or_whole(text, path, &opts.timings, parts, |de| {
        serde::Deserializer::deserialize_map(de, WrapperVisitor(std::marker::PhantomData))
    })?;
    if !(2..=3).contains(&doc.version) {
        // Version 1 never had the wrapper (it was the bare object or array): it is
        // worded as older, not newer, than what this nixcut knows.
        b.closure.warnings.push(LoadWarning::UnknownFormatVersion {
            file: path.display().to_string(),
            version: doc.version,
        });
    }
    let doc_sd = doc
        .store_dir
        .clone()
        .or_else(|| entries_store_dir(&doc.info));
    b.store_dir = b.choose_store_dir(doc_sd, opts);
    b.add_all(doc.info)
}

/// The `{version, storeDir, info}` document read like [`WrapperVisitor`] does, with
/// `info` parsed on every core. `None` for anything unexpected: the caller then parses
/// the document whole, which reports what is wrong.
pub(super) fn wrapper_parts(text: &str, open: usize) -> Option<Wrapper<'_>> {
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

/// The `{version, storeDir, info}` document of formats 2 and 3.
pub(super) struct Wrapper<'a> {
    pub(super) version: u64,
    pub(super) store_dir: Option<String>,
    /// The entries in document order, duplicates kept (the builder warns about them).
    pub(super) info: Chunks<'a>,
}

/// Reads a [`Wrapper`] in one pass, `info` through [`EntriesVisitor`] (no map is
/// built); other top-level keys are skipped.
pub(super) struct WrapperVisitor<'a>(std::marker::PhantomData<&'a ()>);

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
