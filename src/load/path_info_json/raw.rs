//! One path-info entry as any Nix version writes it ([`RawEntry`], every field
//! optional, strings borrowed from the document), and the serde visitors that collect
//! a document's entries in document order, in chunks ([`Chunks`]), without a map.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use std::path::Path;

use crate::load::json::json_error;
use crate::load::{json_parts, LoadError};
use crate::store::NarHash;

/// One entry as any Nix version writes it; every field optional, unknown fields ignored.
/// Strings borrow from the document where they have no escapes.
#[derive(Debug, Deserialize)]
pub(super) struct RawEntry<'a> {
    #[serde(borrow)]
    pub(super) path: Option<Text<'a>>,
    #[serde(rename = "narHash")]
    #[serde(borrow)]
    pub(super) nar_hash: Option<RawHash<'a>>,
    #[serde(rename = "narSize")]
    pub(super) nar_size: Option<u64>,
    #[serde(borrow)]
    pub(super) references: Option<Vec<Text<'a>>>,
    #[serde(borrow)]
    pub(super) deriver: Option<Text<'a>>,
    #[serde(rename = "registrationTime")]
    pub(super) registration_time: Option<i64>,
    pub(super) ultimate: Option<bool>,
    #[serde(borrow)]
    pub(super) signatures: Option<Vec<RawSig<'a>>>,
    // Boxed: nearly always absent or `null`, and a `Value` is 72 bytes of every entry.
    pub(super) ca: Option<Box<Value>>,
    #[serde(rename = "closureSize")]
    pub(super) closure_size: Option<u64>,
    /// A binary cache's path-info: the compressed NAR's size.
    #[serde(rename = "downloadSize")]
    pub(super) download_size: Option<u64>,
    pub(super) valid: Option<bool>,
    #[serde(rename = "storeDir")]
    pub(super) store_dir: Option<String>,
    /// Present in a derivation (`nix show-derivation`, `nix derivation show`), never in
    /// path-info: such an entry is refused rather than read as a path of no size.
    pub(super) builder: Option<serde::de::IgnoredAny>,
}

/// A string that borrows from the document unless it has escapes. serde's own
/// `Deserialize` for `Cow<str>` always copies, except for a struct field marked
/// `#[serde(borrow)]`; map keys and the items of a list need this instead.
#[derive(Debug)]
pub(super) struct Text<'a>(pub(super) Cow<'a, str>);

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
pub(super) enum RawHash<'a> {
    Text(Cow<'a, str>),
    Structured(Box<HashObject>),
}

impl RawHash<'_> {
    pub(super) fn to_nar_hash(&self) -> NarHash {
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
pub(super) enum RawSig<'a> {
    Text(Cow<'a, str>),
    Object(SigObject),
}

/// Entries in document order, in chunks of [`CHUNK`] (the unit of parallel
/// conversion): no vector of every raw entry is built, copied into chunks and kept
/// until the end, and each chunk's raw entries are freed as soon as it is converted.
pub(super) type Chunks<'d> = Vec<json_parts::Chunk<(Text<'d>, Option<RawEntry<'d>>)>>;

/// Entries per chunk.
pub(super) const CHUNK: usize = 4096;

/// Collects a JSON object's entries in document order, without building a map: the
/// keyed shape has one entry per path, and a B-tree of string keys would compare
/// ~17 long strings per insert.
pub(super) struct EntriesVisitor<'a>(pub(super) std::marker::PhantomData<&'a ()>);

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

#[derive(Debug, Deserialize)]
pub(super) struct HashObject {
    pub(super) algorithm: String,
    pub(super) format: Option<String>,
    pub(super) hash: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct SigObject {
    #[serde(rename = "keyName")]
    pub(super) key_name: String,
    pub(super) sig: String,
}

/// A string (borrowed from the document unless it has escapes), or an object
/// deserialised as `T`, without buffering.
pub(super) fn string_or_object<'de, D, T, R>(
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

/// [`EntriesVisitor`] as a seed, for a map that is a value inside the document.
pub(super) struct EntriesSeed<'a>(pub(super) std::marker::PhantomData<&'a ()>);

impl<'de> serde::de::DeserializeSeed<'de> for EntriesSeed<'de> {
    type Value = Chunks<'de>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(EntriesVisitor(std::marker::PhantomData))
    }
}

/// The document parsed in parts (`parts`: `None` when it was not split, or the split
/// parse gave up), else whole by `whole`, with serde_json's errors located.
pub(super) fn parts_or_whole<'d, T>(
    text: &'d str,
    path: &Path,
    timings: &crate::timing::Timings,
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
    timings.step("load: JSON parsing");
    Ok(value)
}

/// The store dir the first entry that names one names (format 1 of Nix 2.33 writes it
/// in every entry).
pub(super) fn entries_store_dir(chunks: &Chunks<'_>) -> Option<String> {
    chunks
        .iter()
        .flatten()
        .find_map(|(_, e)| e.as_ref().and_then(|e| e.store_dir.clone()))
}
