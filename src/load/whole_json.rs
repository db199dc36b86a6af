//! `nix path-info --json --all` (any version's shape) read straight into a
//! [`WholeStore`], streaming, for `nixcut store`.
//!
//! The closure reader (`super::path_info_json`) holds the file and a [`crate::store::PathInfo`]
//! per path, which is right for one closure and far too much for a whole store
//! (millions of paths, a file of several GiB). This reader never holds the file: serde's
//! streaming deserializer reads it through a buffer, and a hand-written visitor turns
//! each entry into numbers as it goes (the path's hash part is the key of a table of
//! path numbers), keeping only the NAR size, the deriver and the references. Shapes:
//! an array of objects with `path` (Nix up to 2.18, Lix), an object keyed by full path
//! (2.19 to 2.33's format 1), and `{"version":2,"storeDir":…,"info":{…}}` keyed by base
//! name (2.33+ formats 2 and 3); `null` entries and `"valid": false` are invalid paths.

use std::fmt;
use std::io::{BufReader, Read};
use std::path::Path;

use rustc_hash::FxHashMap;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::LoadError;
use crate::store::{StoreDir, StorePath, WholeStore, WholeStoreBuilder, HASH_LEN, NO_PATH};

/// Read `file` (a `nix path-info --json --all` document) into a whole store.
/// `store_dir` is the store directory full paths must be in (`None`: the directory of
/// the first full path). `tick` is called with the bytes read so far.
pub fn read(
    file: &Path,
    input: impl Read,
    store_dir: Option<&StoreDir>,
    tick: &dyn Fn(u64),
) -> Result<WholeStore, LoadError> {
    let counted = Counted {
        inner: input,
        read: 0,
        next_tick: 1 << 24,
        tick,
    };
    let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 20, counted));
    let mut state = State {
        b: WholeStoreBuilder::new(
            store_dir.cloned().unwrap_or_default(),
            file.display().to_string(),
            0,
        ),
        by_hash: FxHashMap::default(),
        dir: store_dir.map(|d| format!("{}/", d.as_str())),
        declared_dir: None,
        refs: Vec::new(),
        derivers: Vec::new(),
    };
    let json_error = |e: serde_json::Error| LoadError::Json {
        path: file.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e
            .to_string()
            .split(" at line ")
            .next()
            .unwrap_or("")
            .to_string(),
    };
    Top(&mut state).deserialize(&mut de).map_err(json_error)?;
    de.end().map_err(json_error)?;
    let dir = state.declared_dir.clone().or_else(|| {
        state
            .dir
            .as_ref()
            .map(|d| d.trim_end_matches('/').to_string())
    });
    for (v, hash) in std::mem::take(&mut state.derivers) {
        if let Some(&d) = state.by_hash.get(&hash) {
            if state.b.is_described(d) {
                state.b.set_deriver(v, d);
            }
        }
    }
    let mut store = state.b.finish();
    if let Some(d) = dir {
        store.store_dir = StoreDir::new(d);
    }
    Ok(store)
}

/// Counts the bytes read, for progress.
struct Counted<'t, R> {
    inner: R,
    read: u64,
    next_tick: u64,
    tick: &'t dyn Fn(u64),
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read >= self.next_tick {
            (self.tick)(self.read);
            self.next_tick = self.read + (1 << 24);
        }
        Ok(n)
    }
}

struct State {
    b: WholeStoreBuilder,
    /// Hash part → path number.
    by_hash: FxHashMap<[u8; HASH_LEN], u32>,
    /// The store directory with a trailing `/`, once known.
    dir: Option<String>,
    /// The `storeDir` a format-2 document declares.
    declared_dir: Option<String>,
    /// The references of the entry being read.
    refs: Vec<u32>,
    /// Each described path's deriver by hash, resolved once every path is read (a
    /// deriver that is not a valid path is no path of the store).
    derivers: Vec<(u32, [u8; HASH_LEN])>,
}

impl State {
    /// The hash part of the path `s` names, checked.
    fn hash_of(&mut self, s: &str, base: bool) -> Result<[u8; HASH_LEN], String> {
        let name = self.base_name_in(s, base)?;
        let mut hash = [0u8; HASH_LEN];
        hash.copy_from_slice(&name.as_bytes()[..HASH_LEN]);
        Ok(hash)
    }

    /// The base name `s` (a full path, or a base name when `base`) names, checked.
    fn base_name_in<'t>(&mut self, s: &'t str, base: bool) -> Result<&'t str, String> {
        let name = if base && !s.starts_with('/') {
            s
        } else {
            if self.dir.is_none() {
                let cut = s
                    .rfind('/')
                    .ok_or_else(|| format!("`{s}` is not a store path"))?;
                self.dir = Some(s[..=cut].to_string());
            }
            let dir = self.dir.as_deref().unwrap_or("/nix/store/");
            s.strip_prefix(dir).ok_or_else(|| {
                format!(
                    "`{}` is not in the store directory `{}`",
                    crate::store::sanitize(s, 200),
                    dir.trim_end_matches('/')
                )
            })?
        };
        StorePath::check_base_name(name).map_err(|e| e.to_string())?;
        Ok(name)
    }

    /// The number of the path `s` names (a full path, or a base name when `base`),
    /// added when new.
    fn intern(&mut self, s: &str, base: bool) -> Result<u32, String> {
        let name = self.base_name_in(s, base)?;
        let mut hash = [0u8; HASH_LEN];
        hash.copy_from_slice(&name.as_bytes()[..HASH_LEN]);
        if let Some(&id) = self.by_hash.get(&hash) {
            if self.b.base_name(id) != name.as_bytes() {
                self.b.issues().renamed_references += 1;
            }
            return Ok(id);
        }
        let id = self.b.add_name(name.as_bytes());
        self.by_hash.insert(hash, id);
        Ok(id)
    }
}

/// The whole document.
struct Top<'s>(&'s mut State);

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("`nix path-info --json` output: an array or an object of path infos")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(Entry {
                s: &mut *self.0,
                key: None,
                base: false,
            })?
            .is_some()
        {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<KeyText>()? {
            match key.0.as_str() {
                "version" => {
                    map.next_value::<IgnoredAny>()?;
                }
                "storeDir" => {
                    let dir: String = map.next_value()?;
                    self.0.declared_dir = Some(dir.trim_end_matches('/').to_string());
                }
                "info" => map.next_value_seed(Infos(&mut *self.0))?,
                path => {
                    let id = self.0.intern(path, false).map_err(de::Error::custom)?;
                    map.next_value_seed(Entry {
                        s: &mut *self.0,
                        key: Some(id),
                        base: false,
                    })?;
                }
            }
        }
        Ok(())
    }
}

/// A key, owned (a streaming reader cannot lend it).
struct KeyText(String);

impl<'de> de::Deserialize<'de> for KeyText {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(KeyText)
    }
}

/// Format 2's `info` object, keyed by base name.
struct Infos<'s>(&'s mut State);

impl<'de> DeserializeSeed<'de> for Infos<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Infos<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of path infos keyed by base name")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<KeyText>()? {
            let id = self.0.intern(&key.0, true).map_err(de::Error::custom)?;
            map.next_value_seed(Entry {
                s: &mut *self.0,
                key: Some(id),
                base: true,
            })?;
        }
        Ok(())
    }
}

/// One path's entry: `null` (invalid) or an object.
struct Entry<'s> {
    s: &'s mut State,
    /// The path, when the key named it.
    key: Option<u32>,
    /// Whether references and deriver are base names (format 2).
    base: bool,
}

impl<'de> DeserializeSeed<'de> for Entry<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Entry<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a path info object or null")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.s.b.issues().invalid += 1;
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let s = self.s;
        s.refs.clear();
        let mut path = self.key;
        let (mut size, mut deriver, mut valid) = (None, None, true);
        while let Some(key) = map.next_key::<KeyText>()? {
            match key.0.as_str() {
                "path" => {
                    let p: String = map.next_value()?;
                    path = Some(s.intern(&p, self.base).map_err(de::Error::custom)?);
                }
                "valid" => valid = map.next_value::<Option<bool>>()?.unwrap_or(true),
                "narSize" => size = map.next_value::<Option<u64>>()?,
                "deriver" => {
                    if let Some(d) = map.next_value::<Option<String>>()? {
                        deriver = Some(s.hash_of(&d, self.base).map_err(de::Error::custom)?);
                    }
                }
                "references" => map.next_value_seed(Refs {
                    s: &mut *s,
                    base: self.base,
                })?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let Some(id) = path else {
            return Err(de::Error::custom("a path info without `path`"));
        };
        if !valid {
            s.b.issues().invalid += 1;
            return Ok(());
        }
        if s.b.is_described(id) {
            s.b.issues().duplicates += 1;
            return Ok(());
        }
        if size.is_none() {
            s.b.issues().missing_sizes += 1;
        }
        s.b.describe(id, size.unwrap_or(0), NO_PATH);
        if let Some(hash) = deriver {
            s.derivers.push((id, hash));
        }
        let refs = std::mem::take(&mut s.refs);
        if s.b.reference_count() + refs.len() >= u32::MAX as usize {
            return Err(de::Error::custom("more than 4,294,967,294 references"));
        }
        s.b.references(id, refs.iter().copied());
        s.refs = refs;
        Ok(())
    }
}

/// A `references` array.
struct Refs<'s> {
    s: &'s mut State,
    base: bool,
}

impl<'de> DeserializeSeed<'de> for Refs<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Refs<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of store paths")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(r) = seq.next_element::<KeyText>()? {
            let id = self.s.intern(&r.0, self.base).map_err(de::Error::custom)?;
            self.s.refs.push(id);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "/nix/store/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-a";
    const B: &str = "/nix/store/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-b";

    fn load(text: &str) -> Result<WholeStore, LoadError> {
        read(Path::new("t.json"), text.as_bytes(), None, &|_| {})
    }

    #[test]
    fn every_shape_gives_the_same_store() {
        let array = format!(
            r#"[{{"path":"{A}","narSize":10,"references":["{A}","{B}"]}},{{"path":"{B}","narSize":5,"references":[]}}]"#
        );
        let object = format!(
            r#"{{"{A}":{{"narSize":10,"references":["{B}","{A}"],"deriver":null}},"{B}":{{"narSize":5,"references":[]}}}}"#
        );
        let v2 = r#"{"info":{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-a":{"narSize":10,"references":["bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-b"]},"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-b":{"narSize":5,"references":[]}},"storeDir":"/nix/store","version":2}"#;
        for text in [array.as_str(), object.as_str(), v2] {
            let s = load(text).unwrap();
            assert_eq!(s.len(), 2, "{text}");
            assert_eq!(s.nar_size, vec![10, 5]);
            assert_eq!(s.references(0), &[1]);
            assert_eq!(s.path(1), B);
            assert!(s.issues.is_empty(), "{:?}", s.issues);
        }
    }

    #[test]
    fn errors_name_the_position() {
        let e = load(&format!(r#"[{{"path":"{A}","narSize":"big"}}]"#)).unwrap_err();
        assert!(e.to_string().starts_with("t.json:1:"), "{e}");
        let e = load(r#"{"/etc/passwd": {}}"#).unwrap_err();
        assert!(e.to_string().contains("passwd"), "{e}");
        let e = load(&format!(
            r#"[{{"path":"{A}","references":["/nix/store/x"]}}]"#
        ))
        .unwrap_err();
        assert!(e.to_string().contains("too short"), "{e}");
        let e = load(&format!(r#"[{{"path":"{A}"}}] trailing"#)).unwrap_err();
        assert!(e.to_string().contains("t.json:1:"), "{e}");
    }

    #[test]
    fn invalid_duplicate_and_undescribed_paths_are_counted() {
        let text = format!(
            r#"[{{"path":"{A}","narSize":1,"references":["{B}"]}},{{"path":"{A}","narSize":2}},{{"path":"/nix/store/cccccccccccccccccccccccccccccccc-c","valid":false}}]"#
        );
        let s = load(&text).unwrap();
        assert_eq!(s.issues.duplicates, 1);
        assert_eq!(s.issues.invalid, 1);
        assert_eq!(s.nar_size[0], 1);
        assert!(!s.described[1]);
    }
}
