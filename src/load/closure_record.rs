//! A walked closure as one compact binary record: what the HTTP loader
//! (`super::http_cache`) keeps in the narinfo cache for each (cache list, root hash),
//! so that a warm run builds the [`Closure`] from one blob instead of finding and
//! parsing every narinfo again. narinfos never change, so neither does the closure of
//! a root; the record needs no expiry.
//!
//! The record is framed by `crate::store::frame` (magic, format, writer, length,
//! checksum).
//!
//! The payload holds the store directory, the origin, the walk's warnings (each
//! [`LoadWarning`] as its JSON), the path
//! table (hash part and name of every path, in store-path order), then per path its
//! metadata, its references as indices into the table and the index of the cache that
//! served its narinfo. [`decode`] checks everything: a record of another format or
//! written by another nixcut version is [`Decoded::Stale`] (walk again, say nothing);
//! a record that is cut short, fails its checksum or does not make sense is an `Err`
//! saying what is wrong (walk again, with a warning). Decoding never panics and never
//! yields a closure that the walk would not have produced.
//!
//! Cost: 20,000 paths with three references each encode to about 3 MB and decode in a
//! few milliseconds (one pass over the bytes, names validated as store paths once).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::store::frame::{Frame, Opened};
use crate::store::{
    Closure, LoadWarning, NarHash, PathInfo, SourceKind, StoreDir, StorePath, HASH_LEN,
};

/// The framing of a record: bump `format` whenever the payload's layout changes.
const FRAME: Frame = Frame {
    magic: b"nixcut-closure\n\0",
    format: 3,
    writer: env!("CARGO_PKG_VERSION"),
};

/// A closure read back from a record.
#[derive(Debug)]
pub struct Recorded {
    /// The closure, as the walk built it (roots, warnings, origin included).
    pub closure: Closure,
    /// For each path (by hash part), the index in the cache list of the cache whose
    /// narinfo it is.
    pub caches: Vec<([u8; HASH_LEN], u32)>,
}

/// What [`decode`] made of a record that is not damaged.
#[derive(Debug)]
pub enum Decoded {
    /// A sound record of this format and nixcut version.
    Fresh(Recorded),
    /// Another format or nixcut version: to be replaced, nothing wrong with it.
    Stale,
}

/// Encode `closure` (one declared root, every reference inside it); `cache_of` gives
/// the cache index of each path. `None` when the closure cannot be recorded (a
/// reference leaves it, or no single root), which only costs speed next time.
pub fn encode(closure: &Closure, cache_of: impl Fn(&StorePath) -> Option<u32>) -> Option<Vec<u8>> {
    let [root] = closure.declared_roots.as_slice() else {
        return None;
    };
    if !closure.invalid.is_empty() || closure.source != SourceKind::HttpCache {
        return None;
    }
    let index: FxHashMap<&StorePath, u32> = closure
        .paths
        .keys()
        .enumerate()
        .map(|(i, p)| (p, i as u32))
        .collect();
    let mut w = Writer::default();
    w.str(closure.store_dir.as_str());
    w.str(&closure.origin);
    w.u32(*index.get(root)?);
    let warnings: Vec<String> = (closure.warnings.iter())
        .map(serde_json::to_string)
        .collect::<Result<_, _>>()
        .ok()?;
    w.strings(&warnings)?;
    w.u32(u32::try_from(closure.paths.len()).ok()?);
    for p in closure.paths.keys() {
        w.bytes_raw(p.hash_bytes());
        w.str(p.name());
    }
    for info in closure.paths.values() {
        w.path_info(info, &index)?;
        w.u32(cache_of(&info.path)?);
    }
    Some(FRAME.seal(&w.0))
}

/// Decode a record written by [`encode`] for a walk through `caches` caches; `sd` is
/// the store directory the caches declare now (a record of another one is damage: the
/// key says it is for these caches). See the module docs for what is checked.
pub fn decode(bytes: &[u8], caches: usize, sd: &StoreDir) -> Result<Decoded, String> {
    let payload = match FRAME.open(bytes).map_err(|e| e.to_string())? {
        Opened::Fresh(payload) => payload,
        Opened::Stale => return Ok(Decoded::Stale),
    };
    let mut r = Reader(payload);
    let store_dir = r.str()?;
    if store_dir != sd.as_str() {
        return Err(format!(
            "recorded for the store directory {store_dir}, the caches say {sd}"
        ));
    }
    let origin = r.str()?.to_string();
    let root = r.u32()? as usize;
    let warnings = (r.strings()?.iter())
        .map(|w| serde_json::from_str::<LoadWarning>(w))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("a warning does not read: {e}"))?;
    let table = r.path_table()?;
    let root = table
        .get(root)
        .ok_or("the root is not in the path table")?
        .clone();
    let mut paths: Vec<(StorePath, PathInfo)> = Vec::with_capacity(table.len());
    let mut cache_of = Vec::with_capacity(table.len());
    for p in &table {
        let info = r.path_info(p, &table)?;
        let cache = r.u32()?;
        if cache as usize >= caches {
            return Err(format!("cache index {cache} of {caches} caches"));
        }
        cache_of.push((*p.hash_bytes(), cache));
        paths.push((p.clone(), info));
    }
    if !r.0.is_empty() {
        return Err(format!("{} bytes after the last path", r.0.len()));
    }
    let mut closure = Closure::new(sd.clone(), SourceKind::HttpCache, origin);
    // In order and without duplicates (checked above): the map is built in one pass.
    closure.paths = paths.into_iter().collect::<BTreeMap<_, _>>();
    closure.declared_roots = vec![root];
    closure.warnings = warnings;
    Ok(Decoded::Fresh(Recorded {
        closure,
        caches: cache_of,
    }))
}

/// The record's parts, read in the order [`encode`] writes them.
impl Reader<'_> {
    /// A counted list of strings.
    fn strings(&mut self) -> Result<Vec<String>, String> {
        (0..self.count()?)
            .map(|_| self.str().map(str::to_string))
            .collect()
    }

    /// The path table: hash part and name of every path, in strictly ascending order.
    fn path_table(&mut self) -> Result<Vec<StorePath>, String> {
        let n = self.count()?;
        let mut table: Vec<StorePath> = Vec::with_capacity(n);
        let mut base = String::new();
        for _ in 0..n {
            let hash = self.take(HASH_LEN)?;
            let name = self.str()?;
            base.clear();
            base.push_str(std::str::from_utf8(hash).map_err(|_| "a hash part is not text")?);
            base.push('-');
            base.push_str(name);
            let p = StorePath::from_base_name(&base).map_err(|e| e.to_string())?;
            if table.last().is_some_and(|last| *last >= p) {
                return Err("the path table is out of order".into());
            }
            table.push(p);
        }
        Ok(table)
    }

    /// The metadata of path `p`, its references as indices into `table`.
    fn path_info(&mut self, p: &StorePath, table: &[StorePath]) -> Result<PathInfo, String> {
        let mut info = PathInfo::new(p.clone());
        info.nar_hash = match self.u8()? {
            0 => None,
            1 => {
                let mut d = [0u8; 32];
                d.copy_from_slice(self.take(32)?);
                Some(NarHash::Sha256(d))
            }
            2 => Some(NarHash::Other(self.str()?.to_string())),
            t => return Err(format!("unknown NAR hash tag {t}")),
        };
        info.nar_size = self.opt_u64()?;
        info.references = self.references(table)?;
        info.deriver = match self.u8()? {
            0 => None,
            1 => Some(StorePath::from_base_name(self.str()?).map_err(|e| e.to_string())?),
            t => return Err(format!("unknown deriver tag {t}")),
        };
        info.registration_time = self.opt_u64()?;
        info.ultimate = match self.u8()? {
            0 => None,
            1 => Some(false),
            2 => Some(true),
            t => return Err(format!("unknown `ultimate` tag {t}")),
        };
        info.signatures = self.strings()?;
        info.ca = match self.u8()? {
            0 => None,
            1 => Some(self.str()?.to_string()),
            t => return Err(format!("unknown CA tag {t}")),
        };
        info.reported_closure_size = self.opt_u64()?;
        info.download_size = self.opt_u64()?;
        Ok(info)
    }

    /// A counted list of strictly ascending indices into `table`.
    fn references(&mut self, table: &[StorePath]) -> Result<Vec<StorePath>, String> {
        let refs = self.count()?;
        let mut out = Vec::with_capacity(refs);
        let mut last = None;
        for _ in 0..refs {
            let i = self.u32()? as usize;
            if last.is_some_and(|l| l >= i) {
                return Err("references out of order".into());
            }
            last = Some(i);
            out.push(
                table
                    .get(i)
                    .ok_or("a reference outside the path table")?
                    .clone(),
            );
        }
        Ok(out)
    }
}

#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn opt_u64(&mut self, v: Option<u64>) {
        match v {
            None => self.u8(0),
            Some(v) => {
                self.u8(1);
                self.u64(v);
            }
        }
    }
    fn bytes_raw(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        // Strings longer than 4 GiB do not occur in a narinfo (16 MiB at most).
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
    }

    /// A counted list of strings; `None` past 2^32 - 1 of them.
    fn strings(&mut self, items: &[String]) -> Option<()> {
        self.u32(u32::try_from(items.len()).ok()?);
        for s in items {
            self.str(s);
        }
        Some(())
    }

    /// The metadata of one path, its references as indices (`index`) into the path
    /// table; `None` when a reference is not in it.
    fn path_info(&mut self, info: &PathInfo, index: &FxHashMap<&StorePath, u32>) -> Option<()> {
        match &info.nar_hash {
            None => self.u8(0),
            Some(NarHash::Sha256(d)) => {
                self.u8(1);
                self.bytes_raw(d);
            }
            Some(NarHash::Other(s)) => {
                self.u8(2);
                self.str(s);
            }
        }
        self.opt_u64(info.nar_size);
        self.u32(u32::try_from(info.references.len()).ok()?);
        for r in &info.references {
            self.u32(*index.get(r)?);
        }
        match &info.deriver {
            None => self.u8(0),
            Some(d) => {
                self.u8(1);
                self.str(&d.to_string());
            }
        }
        self.opt_u64(info.registration_time);
        self.u8(match info.ultimate {
            None => 0,
            Some(false) => 1,
            Some(true) => 2,
        });
        self.strings(&info.signatures)?;
        match &info.ca {
            None => self.u8(0),
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
        }
        self.opt_u64(info.reported_closure_size);
        self.opt_u64(info.download_size);
        Some(())
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("cut short".into());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, String> {
        let mut a = [0u8; 4];
        a.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(a))
    }
    fn u64(&mut self) -> Result<u64, String> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }
    fn opt_u64(&mut self) -> Result<Option<u64>, String> {
        match self.u8()? {
            0 => Ok(None),
            1 => self.u64().map(Some),
            t => Err(format!("unknown number tag {t}")),
        }
    }
    /// A count of items that take at least one byte each: never more than remain (a
    /// damaged count cannot make the reader reserve gigabytes).
    fn count(&mut self) -> Result<usize, String> {
        let n = self.u32()? as usize;
        if n > self.0.len() {
            return Err(format!("a count of {n} with {} bytes left", self.0.len()));
        }
        Ok(n)
    }
    fn str(&mut self) -> Result<&'a str, String> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?).map_err(|_| "a string is not UTF-8".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Closure {
        let sd = StoreDir::default();
        let p = |h: char, name: &str| {
            StorePath::from_base_name(&format!("{}-{name}", h.to_string().repeat(32))).unwrap()
        };
        let (a, b, c) = (p('a', "app-1.0"), p('b', "lib-2"), p('c', "data"));
        let mut closure = Closure::new(sd, SourceKind::HttpCache, "http://cache");
        let mut ia = PathInfo::new(a.clone());
        ia.nar_hash = Some(NarHash::Sha256([7; 32]));
        ia.nar_size = Some(1000);
        ia.references = vec![a.clone(), b.clone(), c.clone()];
        ia.deriver = Some(p('d', "app-1.0.drv"));
        ia.signatures = vec!["key:sig".into(), "other:sig2".into()];
        let mut ib = PathInfo::new(b.clone());
        ib.nar_hash = Some(NarHash::Other("md5:xyz".into()));
        ib.nar_size = Some(20);
        ib.references = vec![c.clone()];
        ib.ca = Some("fixed:r:sha256:abc".into());
        ib.ultimate = Some(true);
        let ic = PathInfo::new(c.clone());
        for i in [ia, ib, ic] {
            closure.insert(i);
        }
        closure.declared_roots = vec![a];
        closure.warnings = vec![LoadWarning::DeriverIgnored {
            file: "http://cache/x.narinfo".into(),
            line: Some(3),
            path: None,
            error: "not a store path".into(),
        }];
        closure
    }

    fn fresh(bytes: &[u8]) -> Recorded {
        match decode(bytes, 2, &StoreDir::default()) {
            Ok(Decoded::Fresh(r)) => r,
            other => panic!("not fresh: {other:?}"),
        }
    }

    #[test]
    fn a_closure_round_trips() {
        let c = sample();
        let bytes = encode(&c, |p| Some(u32::from(p.name() == "lib-2"))).unwrap();
        let r = fresh(&bytes);
        assert_eq!(r.closure.paths, c.paths);
        assert_eq!(r.closure.declared_roots, c.declared_roots);
        assert_eq!(r.closure.warnings, c.warnings);
        assert_eq!(r.closure.origin, c.origin);
        assert_eq!(r.closure.store_dir, c.store_dir);
        assert_eq!(r.closure.source, SourceKind::HttpCache);
        let b = c.paths.keys().nth(1).unwrap();
        assert!(r.caches.contains(&(*b.hash_bytes(), 1)));
        assert_eq!(r.caches.iter().filter(|(_, i)| *i == 0).count(), 2);
    }

    #[test]
    fn every_damage_is_an_error_never_a_panic() {
        let bytes = encode(&sample(), |_| Some(0)).unwrap();
        // Past the magic, format and writer: the length, the checksum, the payload.
        let length_at = FRAME.magic.len() + 4 + 1 + FRAME.writer.len();
        // Every truncation and every flipped byte from there on.
        for cut in length_at..bytes.len() {
            assert!(
                decode(&bytes[..cut], 2, &StoreDir::default()).is_err(),
                "cut at {cut}"
            );
        }
        for i in length_at..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x55;
            assert!(
                decode(&bad, 2, &StoreDir::default()).is_err(),
                "flipped byte {i}"
            );
        }
    }

    #[test]
    fn damage_behind_a_valid_checksum_is_still_caught() {
        // A payload that checks out but lies (a writer bug, not a disk error): each
        // inconsistency is refused by name.
        let c = sample();
        let mut w = Writer::default();
        w.str("/nix/store");
        w.str("o");
        w.u32(9); // no such root
        w.u32(0);
        w.u32(0);
        let e = decode(&FRAME.seal(&w.0), 2, &StoreDir::default()).unwrap_err();
        assert!(e.contains("root"), "{e}");
        let bytes = encode(&c, |_| Some(1)).unwrap();
        let e = decode(&bytes, 1, &StoreDir::default()).unwrap_err();
        assert!(e.contains("cache index 1 of 1"), "{e}");
        let e = decode(&bytes, 2, &StoreDir::new("/other")).unwrap_err();
        assert!(e.contains("/other"), "{e}");
    }

    #[test]
    fn other_versions_are_stale_not_damaged() {
        let bytes = encode(&sample(), |_| Some(0)).unwrap();
        let mut other = bytes.clone();
        other[FRAME.magic.len()] ^= 1; // the format number
        assert!(matches!(
            decode(&other, 2, &StoreDir::default()),
            Ok(Decoded::Stale)
        ));
        let mut other = bytes.clone();
        other[FRAME.magic.len() + 5] ^= 1; // the writer's version
        assert!(matches!(
            decode(&other, 2, &StoreDir::default()),
            Ok(Decoded::Stale)
        ));
        // The packed narinfo texts that earlier versions kept in the same table.
        assert!(matches!(
            decode(b"0 abc 4\ntext", 2, &StoreDir::default()),
            Ok(Decoded::Stale)
        ));
    }

    #[test]
    fn a_closure_with_a_dangling_reference_is_not_recorded() {
        let mut c = sample();
        let gone = StorePath::from_base_name(&format!("{}-gone", "z".repeat(32))).unwrap();
        let root = c.declared_roots[0].clone();
        c.paths.get_mut(&root).unwrap().references.push(gone);
        assert!(encode(&c, |_| Some(0)).is_none());
    }
}
