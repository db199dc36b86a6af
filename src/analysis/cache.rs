//! The scan cache: one file per scanned store path under `$XDG_CACHE_HOME/nixcut/`
//! (else `~/.cache/nixcut/`).
//!
//! Store paths never change, so a scan result is valid forever for the same path, NAR
//! hash, candidate set and tool version; all four make the key. A cache entry that
//! does not parse, or that describes another path, is ignored and rewritten: it is
//! never trusted. Entries are written atomically (temporary file, then rename), so a
//! crash leaves no half-written entry.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::report::RefsPath;
use crate::store::{NarHash, StorePath};

const VERSION: &str = concat!("nixcut-scan-cache-1-", env!("CARGO_PKG_VERSION"));

/// A directory of cached scan results.
#[derive(Debug, Clone)]
pub struct ScanCache {
    dir: PathBuf,
}

impl ScanCache {
    /// The default location: `$XDG_CACHE_HOME/nixcut/scan`, else `$HOME/.cache/nixcut/scan`.
    pub fn default_location() -> Option<ScanCache> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(ScanCache::at(base.join("nixcut").join("scan")))
    }

    /// A cache in `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> ScanCache {
        ScanCache { dir: dir.into() }
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The entry file for a path, NAR hash and candidate set; `None` without a NAR hash
    /// (nothing would tell a changed path apart).
    pub fn key(
        &self,
        path: &StorePath,
        nar_hash: Option<&NarHash>,
        candidates: &[StorePath],
        detail: &str,
    ) -> Option<PathBuf> {
        let nar_hash = nar_hash?;
        let mut h = Sha256::new();
        h.update(VERSION.as_bytes());
        h.update(path.to_string().as_bytes());
        h.update(nar_hash.to_sri().as_bytes());
        h.update(detail.as_bytes());
        for c in candidates {
            h.update(c.hash_bytes());
        }
        let digest: String = h.finalize()[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Some(self.dir.join(format!("{}-{digest}.json", path.hash_part())))
    }

    /// Read an entry; anything unreadable or inconsistent is a miss.
    pub fn get(&self, file: &Path, expect_path: &str) -> Option<RefsPath> {
        let text = std::fs::read(file).ok()?;
        let entry: RefsPath = serde_json::from_slice(&text).ok()?;
        (entry.path == expect_path).then_some(entry)
    }

    /// Write an entry atomically; failures are returned for a warning, never fatal.
    pub fn put(&self, file: &Path, entry: &RefsPath) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)?;
        serde_json::to_writer(&mut tmp, entry).map_err(std::io::Error::other)?;
        tmp.persist(file).map_err(|e| e.error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str) -> RefsPath {
        RefsPath {
            path: path.into(),
            scanned: true,
            cached: false,
            files_scanned: 3,
            bytes_scanned: 99,
            references: Vec::new(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn roundtrip_and_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ScanCache::at(dir.path().join("c"));
        let p =
            StorePath::from_base_name("9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-rocblas-5.7.1").unwrap();
        let h = NarHash::parse("sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
        assert!(cache.key(&p, None, &[], "").is_none());
        let k = cache
            .key(&p, Some(&h), std::slice::from_ref(&p), "")
            .unwrap();
        assert_ne!(
            Some(&k),
            cache.key(&p, Some(&h), &[], "").as_ref(),
            "candidates are part of the key"
        );
        assert!(cache.get(&k, "/nix/store/x").is_none());
        cache.put(&k, &entry("/nix/store/x")).unwrap();
        assert_eq!(cache.get(&k, "/nix/store/x"), Some(entry("/nix/store/x")));
        assert!(
            cache.get(&k, "/nix/store/y").is_none(),
            "an entry for another path is not trusted"
        );
        std::fs::write(&k, b"{\"path\": \"/nix/store/x\", \"scanned\": tr").unwrap();
        assert!(
            cache.get(&k, "/nix/store/x").is_none(),
            "corrupt entry is a miss"
        );
        cache.put(&k, &entry("/nix/store/x")).unwrap();
        assert!(cache.get(&k, "/nix/store/x").is_some(), "and is rewritten");
    }
}
