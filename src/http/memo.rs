//! What the client remembers of narinfos: those known this run (by hash part), those
//! fetched and not yet written to the narinfo cache (`super::narinfo_db`), the
//! records of closures walked, and the cache each path of a recorded closure comes
//! from, for the file source to find its narinfo.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::{narinfo_url, CachedNarinfo, FetchError, HttpClient, MAX_NARINFO};

impl HttpClient {
    /// The narinfo for `hash` as known this run or recorded in the narinfo cache for the
    /// cache at `base`; `None` when it has to be fetched.
    pub fn known_narinfo(&self, base: &Arc<str>, hash: &str) -> Option<CachedNarinfo> {
        if let Some(hit) = self.memo_get(hash) {
            return Some(hit);
        }
        let db = self.db()?;
        let text = db
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(base, hash)?;
        let hit = CachedNarinfo {
            base: Arc::clone(base),
            text: Arc::from(text),
        };
        self.memo_lock().insert(hash.to_string(), hit.clone());
        Some(hit)
    }

    /// The narinfo for `hash` known this run, from whichever cache.
    pub fn memo_get(&self, hash: &str) -> Option<CachedNarinfo> {
        self.memo_lock().get(hash).cloned()
    }

    /// Fetch `<base>/<hash>.narinfo` from the network (no cache consulted); `Ok(None)`
    /// when the cache does not have it. A text fetched is remembered for [`Self::save`].
    pub fn fetch_narinfo(
        &self,
        base: &Arc<str>,
        hash: &str,
    ) -> Result<Option<CachedNarinfo>, FetchError> {
        let url = narinfo_url(base, hash);
        let Some(text) = self.get_text(&url, MAX_NARINFO)? else {
            return Ok(None);
        };
        Ok(Some(CachedNarinfo {
            base: Arc::clone(base),
            text: Arc::from(text),
        }))
    }

    /// Remember a narinfo that parsed: for this run and, when `fetched` from the network,
    /// for [`Self::save`] to write.
    pub fn remember(&self, hash: &str, n: &CachedNarinfo, fetched: bool) {
        if !fetched {
            return; // known already: in the memo since it was looked up
        }
        self.memo_lock().insert(hash.to_string(), n.clone());
        if self.db().is_some() {
            self.unsaved
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((n.base.clone(), hash.to_string(), n.text.clone()));
        }
    }

    /// Write the narinfos fetched since the last call into the narinfo cache (one
    /// transaction). A cache that cannot be written only costs speed next time; the
    /// problem is returned for a warning.
    pub fn save(&self) -> Result<(), String> {
        let Some(db) = self.db() else {
            return Ok(());
        };
        let mut batch =
            std::mem::take(&mut *self.unsaved.lock().unwrap_or_else(|e| e.into_inner()));
        if batch.is_empty() {
            return Ok(());
        }
        // In key order: the rows go into the table's B-tree in sequence instead of at
        // random places (a package set's 280,000 narinfos were written 3× faster so).
        batch.sort_unstable_by(|a, b| (&*a.0, &a.1).cmp(&(&*b.0, &b.1)));
        db.lock().unwrap_or_else(|e| e.into_inner()).put(&batch)
    }

    /// Forget the narinfos fetched since the last [`Self::save`] (a walk that failed):
    /// none of them reaches the narinfo cache, nor stays known this run.
    pub fn discard_unsaved(&self) {
        let batch = std::mem::take(&mut *self.unsaved.lock().unwrap_or_else(|e| e.into_inner()));
        let mut memo = self.memo_lock();
        for (_, hash, _) in &batch {
            memo.remove(hash.as_str());
        }
    }

    /// `read` of the record of the closure of `root` walked through `bases` (in that
    /// order), as [`Self::save_closure_record`] wrote it; `None` when there is none (or
    /// no cache). The record is read in place, without a copy.
    pub fn with_closure_record<T>(
        &self,
        bases: &[Arc<str>],
        root: &str,
        read: impl FnOnce(&[u8]) -> T,
    ) -> Option<T> {
        let db = self.db()?;
        db.lock()
            .unwrap_or_else(|e| e.into_inner())
            .with_closure(&closure_key(bases), root, read)
    }

    /// Keep `record` for the closure of `root` walked through `bases`. A cache that
    /// cannot be written only costs speed next time; the problem is returned.
    pub fn save_closure_record(
        &self,
        bases: &[Arc<str>],
        root: &str,
        record: &[u8],
    ) -> Result<(), String> {
        let Some(db) = self.db() else {
            return Ok(());
        };
        db.lock()
            .unwrap_or_else(|e| e.into_inner())
            .put_closure(&closure_key(bases), root, record)
    }

    /// Which cache each path's narinfo comes from (hash part, index into `bases`), for a
    /// closure read from its record: [`Self::narinfo`] finds the narinfos there when a
    /// NAR is wanted, without a walk having put them in memory.
    pub fn set_origins(&self, bases: &[Arc<str>], origins: &[([u8; 32], u32)]) {
        let mut v = self.origins.lock().unwrap_or_else(|e| e.into_inner());
        v.reserve(origins.len());
        v.extend(
            origins
                .iter()
                .filter_map(|(h, i)| Some((*h, Arc::clone(bases.get(*i as usize)?)))),
        );
        // Usually one record, already in hash order: the sort only checks that. A hash
        // recorded twice (two closures) keeps its first cache.
        v.sort_by_key(|e| e.0);
        v.dedup_by(|later, first| later.0 == first.0);
    }

    /// The cache the narinfo of `hash` comes from: known this run, or from a record.
    pub fn origin(&self, hash: &str) -> Option<Arc<str>> {
        if let Some(n) = self.memo_get(hash) {
            return Some(n.base);
        }
        let key: [u8; 32] = hash.as_bytes().try_into().ok()?;
        let v = self.origins.lock().unwrap_or_else(|e| e.into_inner());
        let i = v.binary_search_by(|e| e.0.cmp(&key)).ok()?;
        Some(Arc::clone(&v[i].1))
    }

    /// The narinfo of `hash` for the file source: known this run, else from the cache
    /// it came from ([`Self::origin`]): the narinfo cache, else that cache over the
    /// network. `None` when the path is unknown or its narinfo cannot be had.
    pub fn narinfo(&self, hash: &str) -> Option<CachedNarinfo> {
        if let Some(n) = self.memo_get(hash) {
            return Some(n);
        }
        let base = self.origin(hash)?;
        let known = self.known_narinfo(&base, hash);
        self.end_lookups();
        if let Some(n) = known {
            return Some(n);
        }
        let n = self.fetch_narinfo(&base, hash).ok()??;
        self.memo_lock().insert(hash.to_string(), n.clone());
        Some(n)
    }

    /// Done looking narinfos up for now: let other processes write the cache.
    pub fn end_lookups(&self) {
        if let Some(Some(db)) = self.db.get() {
            db.lock().unwrap_or_else(|e| e.into_inner()).end_read();
        }
    }

    fn memo_lock(&self) -> std::sync::MutexGuard<'_, FxHashMap<String, CachedNarinfo>> {
        self.memo.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The key of a closure record: the cache list, in order.
fn closure_key(bases: &[Arc<str>]) -> String {
    bases.iter().map(|b| &**b).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::super::HttpConfig;
    use super::*;

    #[test]
    fn closure_records_are_kept_by_cache_list_and_root() {
        let dir = tempfile::tempdir().unwrap();
        let bases: Vec<Arc<str>> = vec![Arc::from("http://a"), Arc::from("http://b")];
        let config = HttpConfig {
            narinfo_cache: Some(dir.path().to_path_buf()),
            ..HttpConfig::default()
        };
        let c = HttpClient::new(config.clone());
        c.save_closure_record(&bases, "h1", b"record").unwrap();
        let again = HttpClient::new(config);
        let read = |c: &HttpClient, bases: &[Arc<str>], root: &str| {
            c.with_closure_record(bases, root, <[u8]>::to_vec)
        };
        assert_eq!(read(&again, &bases[..1], "h1"), None, "another list");
        assert_eq!(read(&again, &bases, "h2"), None, "another root");
        assert_eq!(read(&again, &bases, "h1").as_deref(), Some(&b"record"[..]));
        let no_cache = HttpClient::new(HttpConfig::default());
        assert_eq!(read(&no_cache, &bases, "h1"), None);
    }

    #[test]
    fn the_source_finds_narinfos_through_recorded_origins() {
        let dir = tempfile::tempdir().unwrap();
        let bases: Vec<Arc<str>> = vec![Arc::from("http://a"), Arc::from("http://b")];
        let config = HttpConfig {
            narinfo_cache: Some(dir.path().to_path_buf()),
            ..HttpConfig::default()
        };
        let h = "x71ahacbysflg2pf8638mdh69871353b";
        let c = HttpClient::new(config.clone());
        let n = CachedNarinfo {
            base: Arc::clone(&bases[1]),
            text: Arc::from("StorePath: x\n"),
        };
        c.remember(h, &n, true);
        c.save().unwrap();
        let again = HttpClient::new(config);
        assert!(again.origin(h).is_none());
        let key: [u8; 32] = h.as_bytes().try_into().unwrap();
        again.set_origins(&bases, &[(key, 1), ([b'0'; 32], 7)]);
        assert_eq!(again.origin(h).as_deref(), Some("http://b"));
        let got = again.narinfo(h).unwrap();
        assert_eq!((&*got.base, &*got.text), ("http://b", "StorePath: x\n"));
    }
}
