//! [`HttpSource`]: store paths as the NARs of a binary cache over HTTP(S), streamed and
//! decompressed on the fly through the same decoder as local NAR files
//! ([`open_nar_stream`]), never written to disk and never held whole in memory.
//!
//! A path's NAR is found through its narinfo, which the closure walk
//! (`crate::load::http_cache`) has left in the shared [`HttpClient`] (or, for a
//! closure read from its record, the narinfo cache or the cache it came from); the narinfo's
//! `URL` is relative to the cache that served it. Whether a file exists is answered from
//! the cache's `<hash>.ls` listings, each fetched and parsed at most once for the life
//! of the source, whichever scan asks first. Whether the cache publishes listings is
//! probed once, on the root's.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use super::nar_dir::{listing_has, parse_listing, Node};
use super::{open_nar_stream, FileSource, FilesFrom, OpenError, PathFiles, SourceError};
use crate::http::{narinfo_url, HttpClient};
use crate::load::binary_cache::parse_narinfo;
use crate::store::{Closure, StoreDir, StorePath};

/// The longest `.ls` listing read.
const MAX_LISTING: u64 = 256 << 20;

type ListingCell = Arc<OnceLock<Option<Arc<Node>>>>;

/// The NARs of the HTTP caches a closure was loaded from.
pub struct HttpSource {
    client: Arc<HttpClient>,
    store_dir: StoreDir,
    /// The closure's paths, sorted (the closure's own order): looked up by binary
    /// search, since only fresh scans ask and a set would cost every run its hashing.
    paths: Vec<StorePath>,
    probe: Option<StorePath>,
    listings: Mutex<HashMap<String, ListingCell>>,
    listed: OnceLock<bool>,
}

impl std::fmt::Debug for HttpSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSource")
            .field("store_dir", &self.store_dir)
            .field("paths", &self.paths.len())
            .finish_non_exhaustive()
    }
}

impl HttpSource {
    /// The files of `closure`'s paths, through `client` (which walked its narinfos).
    pub fn new(client: Arc<HttpClient>, closure: &Closure) -> HttpSource {
        HttpSource {
            client,
            store_dir: closure.store_dir.clone(),
            paths: closure.paths.keys().cloned().collect(),
            probe: closure
                .declared_roots
                .first()
                .or_else(|| closure.paths.keys().next())
                .cloned(),
            listings: Mutex::new(HashMap::new()),
            listed: OnceLock::new(),
        }
    }

    /// The parsed listing of the path with this hash part (fetched once).
    fn listing(&self, hash: &str) -> Option<Arc<Node>> {
        let cell = {
            let mut map = self.listings.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(map.entry(hash.to_string()).or_default())
        };
        cell.get_or_init(|| {
            let base = self.client.origin(hash)?;
            let url = format!("{base}/{hash}.ls");
            let bytes = self.client.get_bytes(&url, MAX_LISTING).ok()??;
            parse_listing(&bytes).map(Arc::new)
        })
        .clone()
    }
}

impl FileSource for HttpSource {
    fn kind(&self) -> FilesFrom {
        FilesFrom::Nar
    }

    fn open(&self, path: &StorePath) -> Result<PathFiles, SourceError> {
        let missing = || SourceError::Missing {
            path: self.store_dir.display(path),
        };
        let n = self.client.narinfo(path.hash_part()).ok_or_else(missing)?;
        let info_url = narinfo_url(&n.base, path.hash_part());
        let entry = parse_narinfo(&n.text, Path::new(&info_url), &self.store_dir)
            .ok()
            .and_then(|p| p.entry)
            .ok_or_else(missing)?;
        let bad = |message: String| {
            SourceError::Open(OpenError {
                file: info_url.clone(),
                message,
            })
        };
        // Relative to the cache, and staying inside it (as for a cache directory).
        let rel = entry.url.trim_start_matches("./");
        if rel.contains("://")
            || rel.starts_with('/')
            || rel.split('/').any(|c| c == ".." || c.is_empty())
        {
            return Err(bad(format!(
                "the NAR URL `{}` is not a path inside the cache",
                crate::load::sanitize(&entry.url, 80)
            )));
        }
        let url = format!("{}/{rel}", n.base);
        let stream = self
            .client
            .stream(&url)
            .map_err(|e| {
                SourceError::Open(OpenError {
                    file: e.url,
                    message: e.message,
                })
            })?
            .ok_or_else(missing)?;
        let (reader, compression) = open_nar_stream(stream, &url)?;
        Ok(PathFiles::Nar {
            label: url,
            compression,
            reader,
        })
    }

    /// Whether the path names an entry of a store path of the closure, from its listing.
    /// Paths outside the store and outside the closure: false. A path that is not
    /// UTF-8, or a listing that cannot be had: cannot tell.
    fn exists(&self, abs: &[u8]) -> Option<bool> {
        let abs = std::str::from_utf8(abs).ok()?;
        let Ok((p, sub)) = self.store_dir.split_path(abs) else {
            return Some(false);
        };
        if self.paths.binary_search(&p).is_err() {
            return Some(false);
        }
        let root = self.listing(p.hash_part())?;
        Some(listing_has(&root, sub))
    }

    fn can_resolve(&self) -> bool {
        *self.listed.get_or_init(|| {
            self.probe
                .as_ref()
                .is_some_and(|p| self.listing(p.hash_part()).is_some())
        })
    }
}
