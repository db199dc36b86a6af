//! [`NarDir`]: store paths as the NAR files of a binary cache directory
//! (`nix copy --to file://…`), found through each `.narinfo`'s `URL`, streamed and
//! decompressed, never unpacked.
//!
//! Whether a file exists in a store path is answered from the cache's `<hash>.ls`
//! listings (`write-nar-listing=true`), each read and parsed at most once for the life
//! of the source, whichever store path's scan asks. A cache without a listing for every
//! path cannot answer ([`FileSource::can_resolve`] is false). Each NAR is checked
//! against its narinfo's `NarSize` and `NarHash` as it streams ([`VerifiedNar`]).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Deserialize;

use super::verify::VerifiedNar;
use super::{open_nar, FileSource, FilesFrom, PathFiles, SourceError};
use crate::store::narinfo::{self, CacheEntry};
use crate::store::{Closure, NarHash, StoreDir, StorePath};

/// A binary cache directory with NARs.
#[derive(Debug)]
pub struct NarDir {
    dir: PathBuf,
    store_dir: StoreDir,
    entries: BTreeMap<StorePath, CacheEntry>,
    /// What each NAR must be: its narinfo's NarSize and NarHash.
    expected: BTreeMap<StorePath, (Option<u64>, Option<NarHash>)>,
    all_listed: bool,
    listings: Mutex<HashMap<String, Option<Arc<Node>>>>,
}

/// The NAR file of `entry` under `cache_dir`, if its URL is a relative path that stays
/// inside it and the file exists.
pub(crate) fn nar_file(entry: &CacheEntry, cache_dir: &Path) -> Option<PathBuf> {
    let p = cache_dir.join(entry.relative_path()?);
    p.is_file().then_some(p)
}

/// One node of a `.ls` listing.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(super) enum Node {
    Directory {
        #[serde(default)]
        entries: BTreeMap<String, Node>,
    },
    Regular {},
    Symlink {},
}

#[derive(Debug, Deserialize)]
struct Listing {
    root: Node,
}

impl NarDir {
    /// The cache at `dir`, which `closure` was loaded from, when its narinfos point at
    /// NAR files that are there. Each narinfo is read again for its `URL` (the closure
    /// keeps sizes and hashes, not where the NARs are); one that cannot be read or
    /// parsed leaves its path without files, as the loader has said why already.
    pub fn open(dir: &Path, closure: &Closure) -> Option<NarDir> {
        let mut entries = BTreeMap::new();
        // In name order, as the loader reads them: of two narinfos describing one path,
        // the later one's URL is the one kept, on every file system.
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "narinfo"))
            .collect();
        files.sort();
        for p in files {
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            let Ok(n) = narinfo::parse(&text, &closure.store_dir) else {
                continue;
            };
            if let (Some(entry), true) = (n.entry, closure.paths.contains_key(&n.info.path)) {
                entries.insert(n.info.path, entry);
            }
        }
        let expected = closure
            .paths
            .iter()
            .map(|(p, i)| (p.clone(), (i.nar_size, i.nar_hash.clone())))
            .collect();
        if !entries
            .values()
            .any(|e| nar_file(e, dir).is_some_and(|f| f.is_file()))
        {
            return None;
        }
        let all_listed = entries
            .keys()
            .all(|p| dir.join(format!("{}.ls", p.hash_part())).is_file());
        Some(NarDir {
            dir: dir.to_path_buf(),
            store_dir: closure.store_dir.clone(),
            entries,
            expected,
            all_listed,
            listings: Mutex::new(HashMap::new()),
        })
    }

    /// The parsed listing of the store path with this hash part (read once).
    fn listing(&self, hash: &str) -> Option<Arc<Node>> {
        let mut cache = self.listings.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(hash.to_string())
            .or_insert_with(|| {
                let bytes = std::fs::read(self.dir.join(format!("{hash}.ls"))).ok()?;
                parse_listing(&bytes).map(Arc::new)
            })
            .clone()
    }
}

impl FileSource for NarDir {
    fn kind(&self) -> FilesFrom {
        FilesFrom::Nar
    }

    fn open(&self, path: &StorePath) -> Result<PathFiles, SourceError> {
        let nar = self
            .entries
            .get(path)
            .and_then(|e| nar_file(e, &self.dir))
            .ok_or_else(|| SourceError::Missing {
                path: self.store_dir.display(path),
            })?;
        let (reader, compression) = open_nar(&nar)?;
        let label = nar.display().to_string();
        let (size, hash) = self.expected.get(path).cloned().unwrap_or_default();
        let reader = Box::new(VerifiedNar::new(reader, &label, size, hash.as_ref()));
        Ok(PathFiles::Nar {
            label,
            compression,
            reader,
        })
    }

    /// Whether the path names an entry (file, directory or symlink) of a store path in
    /// the cache. Paths outside the store and store paths the cache does not hold: false.
    /// A path that is not UTF-8, or a listing that cannot be read: cannot tell.
    fn exists(&self, abs: &[u8]) -> Option<bool> {
        let Ok(abs) = std::str::from_utf8(abs) else {
            return None;
        };
        let Ok((p, sub)) = self.store_dir.split_path(abs) else {
            return Some(false);
        };
        if !self.entries.contains_key(&p) {
            return Some(false);
        }
        let root = self.listing(p.hash_part())?;
        Some(listing_has(&root, sub))
    }

    fn can_resolve(&self) -> bool {
        self.all_listed
    }
}

/// The root node of a `.ls` listing's bytes; `None` when they are not a listing.
pub(super) fn parse_listing(bytes: &[u8]) -> Option<Node> {
    // Nix writes names that are not UTF-8 as they are, which is not JSON: read them
    // lossily (such names are never looked up, see `exists`) so that one odd name does
    // not lose the whole listing.
    let text = String::from_utf8_lossy(bytes);
    serde_json::from_str::<Listing>(&text).ok().map(|l| l.root)
}

/// Whether the listing rooted at `root` has an entry at the relative path `sub`
/// (`""` is the top itself).
pub(super) fn listing_has(root: &Node, sub: &str) -> bool {
    let mut node = root;
    for part in sub.split('/').filter(|c| !c.is_empty()) {
        match node {
            Node::Directory { entries } => match entries.get(part) {
                Some(next) => node = next,
                None => return false,
            },
            _ => return false,
        }
    }
    true
}
