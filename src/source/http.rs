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
use std::sync::{Arc, Mutex, OnceLock};

use super::nar_dir::{listing_has, parse_listing, Node};
use super::verify::VerifiedNar;
use super::{open_nar_stream, FileSource, FilesFrom, OpenError, PathFiles, SourceError};
use crate::http::{narinfo_url, HttpClient, StreamBound};
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
        let parsed = crate::store::narinfo::parse(&n.text, &self.store_dir)
            .ok()
            .ok_or_else(missing)?;
        let entry = parsed.entry.ok_or_else(missing)?;
        let bad = |message: String| {
            SourceError::Open(OpenError {
                file: info_url.clone(),
                message,
            })
        };
        // Relative to the cache, and staying inside it (as for a cache directory).
        let rel = entry.url.trim_start_matches("./");
        if !stays_inside(rel) {
            return Err(bad(format!(
                "the NAR URL `{}` is not a path inside the cache",
                crate::store::sanitize(&entry.url, 80)
            )));
        }
        let url = format!("{}/{rel}", n.base);
        let nar_size = parsed.info.nar_size;
        let bound = StreamBound {
            max_bytes: entry.file_size.or_else(|| {
                // Compression adds little to data it cannot shrink: an eighth and a
                // MiB of framing is far more than xz, zstd or bzip2 ever add.
                nar_size.map(|s| s.saturating_add(s / 8).saturating_add(1 << 20))
            }),
        };
        let stream = self
            .client
            .stream(&url, bound)
            .map_err(|e| {
                SourceError::Open(OpenError {
                    file: e.url,
                    message: e.message,
                })
            })?
            .ok_or_else(missing)?;
        let (reader, compression) = open_nar_stream(stream, &url)?;
        let reader = Box::new(VerifiedNar::new(
            reader,
            &url,
            nar_size,
            parsed.info.nar_hash.as_ref(),
        ));
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

/// Whether a narinfo's relative NAR URL names a file inside the cache's base path as a
/// URL parser reads it: percent-decoded (`%2e%2e` is `..`), `\` taken as `/` (as
/// WHATWG parsers do for http), no empty, `.` or `..` segment, no scheme, query or
/// fragment trick, no absolute path.
fn stays_inside(rel: &str) -> bool {
    if rel.contains("://") || rel.contains(['?', '#']) {
        return false;
    }
    let Some(decoded) = percent_decode(rel) else {
        return false;
    };
    !decoded.is_empty()
        && !decoded.starts_with(['/', '\\'])
        && decoded
            .split(['/', '\\'])
            .all(|c| !c.is_empty() && c != "." && c != ".." && !c.bytes().any(|b| b < 0x20))
}

/// `%XX` decoded (repeatedly, so that `%252e` is no way around); `None` for a
/// malformed escape.
fn percent_decode(s: &str) -> Option<String> {
    let mut cur = s.as_bytes().to_vec();
    for _ in 0..4 {
        if !cur.contains(&b'%') {
            return String::from_utf8(cur).ok();
        }
        let mut out = Vec::with_capacity(cur.len());
        let mut i = 0;
        while i < cur.len() {
            if cur[i] == b'%' {
                let hex = std::str::from_utf8(cur.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            } else {
                out.push(cur[i]);
                i += 1;
            }
        }
        cur = out;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nar_urls_that_leave_the_cache_are_refused() {
        for ok in ["nar/abc.nar.xz", "nar/a%2Bb.nar", "a.nar"] {
            assert!(stays_inside(ok), "{ok}");
        }
        for bad in [
            "nar/%2e%2e/%2e%2e/outside.nar.xz",
            "nar/%2E%2E/x",
            "nar\\..\\..\\x.nar",
            "nar/%252e%252e/x",
            "nar/%2f%2fhost/x",
            "nar/../x",
            "nar//x",
            "/etc/x",
            "%2fetc/x",
            "nar/x?y=../..",
            "nar/%zz",
            "http://other/x",
            "nar/.",
        ] {
            assert!(!stays_inside(bad), "{bad}");
        }
    }
}
