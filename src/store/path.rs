//! Store directories, store paths and the metadata Nix records for each path.

use std::fmt;
use std::sync::Arc;

use super::hash::NarHash;
use super::nix32::is_nix32_byte;
use super::text::shown;

/// Length of the hash part of a store path.
pub const HASH_LEN: usize = 32;
const MAX_NAME_LEN: usize = 211;

/// Why a string is not a store path. The messages quote the string through `shown`:
/// it comes from input, and may hold anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StorePathError {
    #[error("`{}` is not inside the store directory `{}`", shown(.0), shown(.1))]
    NotInStore(String, String),
    #[error("`{}` is too short to be a store path (need `<32-char hash>-<name>`)", shown(.0))]
    TooShort(String),
    #[error(
        "`{}` has a character outside Nix's base-32 alphabet at position {pos} of its hash",
        shown(.path)
    )]
    BadHash { path: String, pos: usize },
    #[error("`{}` has no `-` between hash and name", shown(.0))]
    NoDash(String),
    #[error("`{}` has an invalid name: {why}", shown(.path))]
    BadName { path: String, why: &'static str },
}

/// Where the absolute logical path `logical` is on disk: `<store_root>/<logical>` under
/// a store root (a chroot store, a mounted image), else `logical` itself. The one
/// place that maps logical store paths to physical ones (no I/O).
pub fn physical_path(store_root: Option<&std::path::Path>, logical: &str) -> std::path::PathBuf {
    match store_root {
        Some(root) => root.join(logical.trim_start_matches('/')),
        None => std::path::PathBuf::from(logical),
    }
}

/// The logical store directory (`/nix/store` unless configured otherwise), without a
/// trailing slash.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StoreDir(String);

impl Default for StoreDir {
    fn default() -> Self {
        StoreDir("/nix/store".to_string())
    }
}

impl StoreDir {
    /// A store directory from its path; a trailing `/` is dropped.
    pub fn new(dir: impl Into<String>) -> StoreDir {
        let mut d: String = dir.into();
        while d.len() > 1 && d.ends_with('/') {
            d.pop();
        }
        StoreDir(d)
    }

    /// The directory as a string, e.g. `/nix/store`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Parse a full store path (`/nix/store/<hash>-<name>`). A sub-path below a store
    /// path is rejected; use [`StoreDir::split_path`] for those.
    pub fn parse_path(&self, s: &str) -> Result<StorePath, StorePathError> {
        let (p, rest) = self.split_path(s)?;
        if !rest.is_empty() {
            return Err(StorePathError::BadName {
                path: s.to_string(),
                why: "it names a file inside a store path",
            });
        }
        Ok(p)
    }

    /// Split `/nix/store/<hash>-<name>/sub/path` into the store path and the sub-path
    /// (`/sub/path`, empty when there is none).
    pub fn split_path<'a>(&self, s: &'a str) -> Result<(StorePath, &'a str), StorePathError> {
        let rest = s
            .strip_prefix(self.0.as_str())
            .and_then(|r| r.strip_prefix('/'))
            .ok_or_else(|| StorePathError::NotInStore(s.to_string(), self.0.clone()))?;
        let (base, sub) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let p = StorePath::from_base_name(base).map_err(|e| e.with_path(s))?;
        Ok((p, sub))
    }

    /// Parse either a full path in this store or a bare base name `<hash>-<name>`.
    pub fn parse_path_or_base(&self, s: &str) -> Result<StorePath, StorePathError> {
        if s.starts_with('/') {
            self.parse_path(s)
        } else {
            StorePath::from_base_name(s)
        }
    }

    /// The full path of `p` in this store.
    pub fn display(&self, p: &StorePath) -> String {
        // One allocation of the exact size (reports format every path of a closure;
        // `format!` grew the string three times for each).
        let (hash, name) = (p.hash_part(), p.name());
        let mut s = String::with_capacity(self.0.len() + hash.len() + name.len() + 2);
        self.display_into(&mut s, p);
        s
    }

    /// The full path of `p` in this store, appended to `out` (a buffer used again for
    /// every path of a closure costs no allocation of its own).
    pub fn display_into(&self, out: &mut String, p: &StorePath) {
        out.push_str(&self.0);
        out.push('/');
        out.push_str(p.hash_part());
        out.push('-');
        out.push_str(p.name());
    }
}

impl fmt::Display for StoreDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A store path, independent of the store directory: `<hash>-<name>`.
///
/// Ordering is by hash, then name, which is the order Nix sorts full paths in.
/// Hashing reads only the 32 hash bytes and equality compares names only when the
/// hashes agree (and not at all when both share one name allocation): closures look
/// paths up millions of times, and each pointer chase to a name is a cache miss.
#[derive(Clone)]
pub struct StorePath {
    hash: [u8; HASH_LEN],
    // Shared: a closure holds each name once however often it is referenced.
    name: Arc<str>,
}

/// A hash as four big-endian words: compared (for order or equality) in four inlined
/// word compares, in the order of its bytes (comparing the arrays themselves is a
/// memcmp call).
fn hash_words(h: &[u8; HASH_LEN]) -> [u64; 4] {
    std::array::from_fn(|i| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&h[i * 8..i * 8 + 8]);
        u64::from_be_bytes(w)
    })
}

impl Ord for StorePath {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // The hash bytes in order (every path's references are sorted when loaded),
        // then the names.
        hash_words(&self.hash)
            .cmp(&hash_words(&other.hash))
            .then_with(|| self.name.cmp(&other.name))
    }
}

impl PartialOrd for StorePath {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for StorePath {
    fn eq(&self, other: &Self) -> bool {
        hash_words(&self.hash) == hash_words(&other.hash)
            && (Arc::ptr_eq(&self.name, &other.name) || self.name == other.name)
    }
}

impl Eq for StorePath {}

impl std::hash::Hash for StorePath {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Equal paths have equal hashes, so this agrees with `Eq`.
        state.write(&self.hash);
    }
}

impl StorePath {
    /// Check `<32 nix32 chars>-<name>` against Nix's grammar without building a path
    /// (readers of whole stores check millions of names and keep them as bytes).
    pub fn check_base_name(base: &str) -> Result<(), StorePathError> {
        let b = base.as_bytes();
        if b.len() < HASH_LEN + 2 {
            return Err(StorePathError::TooShort(base.to_string()));
        }
        if let Some(pos) = b[..HASH_LEN].iter().position(|&c| !is_nix32_byte(c)) {
            return Err(StorePathError::BadHash {
                path: base.to_string(),
                pos,
            });
        }
        if b[HASH_LEN] != b'-' {
            return Err(StorePathError::NoDash(base.to_string()));
        }
        if let Some(why) = name_problem(&base[HASH_LEN + 1..]) {
            return Err(StorePathError::BadName {
                path: base.to_string(),
                why,
            });
        }
        Ok(())
    }

    /// Parse `<32 nix32 chars>-<name>`.
    pub fn from_base_name(base: &str) -> Result<StorePath, StorePathError> {
        StorePath::check_base_name(base)?;
        let b = base.as_bytes();
        let name = &base[HASH_LEN + 1..];
        let mut hash = [0u8; HASH_LEN];
        hash.copy_from_slice(&b[..HASH_LEN]);
        Ok(StorePath {
            hash,
            name: name.into(),
        })
    }

    /// The 32-character hash part.
    pub fn hash_part(&self) -> &str {
        // The bytes were checked to be nix32, hence ASCII.
        std::str::from_utf8(&self.hash).unwrap_or_default()
    }

    /// The hash part as bytes (what the reference scanner looks for).
    pub fn hash_bytes(&self) -> &[u8; HASH_LEN] {
        &self.hash
    }

    /// The first 8 hash characters as one word: a cheap key for hash maps of paths
    /// (different paths may share it; compare the paths themselves on a hit).
    pub fn hash_prefix(&self) -> u64 {
        hash_prefix(&self.hash)
    }

    /// The name after the hash, e.g. `rocblas-5.7.1`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The address of the shared name: paths with equal ones hold the same name
    /// allocation (so the same name), which tells without reading the name.
    pub(crate) fn name_id(&self) -> usize {
        Arc::as_ptr(&self.name) as *const u8 as usize
    }
}

fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("the name is empty");
    }
    if name.len() > MAX_NAME_LEN {
        return Some("the name is longer than 211 characters");
    }
    if !name
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || b"+-._?=".contains(&c))
    {
        return Some("the name has a character outside [0-9a-zA-Z+._?=-]");
    }
    if name == "." || name == ".." || name.starts_with(".-") || name.starts_with("..-") {
        return Some("the name must not be `.` or `..` or start with `.-` or `..-`");
    }
    None
}

impl StorePathError {
    fn with_path(self, full: &str) -> StorePathError {
        let full = full.to_string();
        match self {
            StorePathError::TooShort(_) => StorePathError::TooShort(full),
            StorePathError::NoDash(_) => StorePathError::NoDash(full),
            StorePathError::BadHash { pos, .. } => StorePathError::BadHash { path: full, pos },
            StorePathError::BadName { why, .. } => StorePathError::BadName { path: full, why },
            e @ StorePathError::NotInStore(..) => e,
        }
    }
}

impl fmt::Display for StorePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.hash_part(), self.name)
    }
}

impl fmt::Debug for StorePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StorePath({self})")
    }
}

/// What Nix records about one valid store path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathInfo {
    /// The path itself.
    pub path: StorePath,
    /// NAR hash, when the source has one.
    pub nar_hash: Option<NarHash>,
    /// NAR size in bytes; `None` when the source has no sizes (exportReferencesGraph).
    pub nar_size: Option<u64>,
    /// References, sorted and deduplicated; may contain the path itself.
    pub references: Vec<StorePath>,
    /// The deriver, when known (a `.drv` store path).
    pub deriver: Option<StorePath>,
    /// Registration time (seconds since the epoch), when known.
    pub registration_time: Option<u64>,
    /// Whether the path was built locally (`ultimate`), when known.
    pub ultimate: Option<bool>,
    /// Signatures as `key:sig` strings.
    pub signatures: Vec<String>,
    /// Content address, as the source printed it.
    pub ca: Option<String>,
    /// The closure size the source reported (`-S`), used only for cross-checks.
    pub reported_closure_size: Option<u64>,
    /// What fetching the path from a binary cache downloads: the compressed NAR's
    /// size (a narinfo's `FileSize`, path-info JSON's `downloadSize`), when known.
    pub download_size: Option<u64>,
}

impl PathInfo {
    /// A path with no metadata but its name.
    pub fn new(path: StorePath) -> PathInfo {
        PathInfo {
            path,
            nar_hash: None,
            nar_size: None,
            references: Vec::new(),
            deriver: None,
            registration_time: None,
            ultimate: None,
            signatures: Vec::new(),
            ca: None,
            reported_closure_size: None,
            download_size: None,
        }
    }

    /// Sort and deduplicate the references.
    pub fn normalise(&mut self) {
        // Nix lists references sorted already.
        if !self.references.is_sorted() {
            self.references.sort();
        }
        self.references.dedup();
    }
}

/// The first 8 bytes of a hash (of at least 8) as one word: see
/// [`StorePath::hash_prefix`].
pub fn hash_prefix(hash: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&hash[..8]);
    u64::from_le_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "/nix/store/9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-rocblas-5.7.1";

    #[test]
    fn parses_full_and_sub_paths() {
        let sd = StoreDir::default();
        let p = sd.parse_path(P).unwrap();
        assert_eq!(p.name(), "rocblas-5.7.1");
        assert_eq!(p.hash_part(), "9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq");
        assert_eq!(sd.display(&p), P);
        let full = format!("{P}/lib/librocblas.so");
        let (q, sub) = sd.split_path(&full).unwrap();
        assert_eq!(q, p);
        assert_eq!(sub, "/lib/librocblas.so");
        assert!(sd.parse_path(&format!("{P}/lib")).is_err());
    }

    #[test]
    fn paths_order_as_their_text_and_references_come_out_sorted() {
        // Hashes that differ in every word (first, last, and only in the name), and
        // names that are prefixes of each other: the order is the base names' bytes.
        let texts = [
            "00000000000000000000000000000001-b",
            "00000000000000000000000000000001-a-dev",
            "00000000000000000000000000000001-a",
            "0000000000000000000000000000000z-a",
            "10000000000000000000000000000000-a",
            "0000000z000000000000000000000000-a",
            "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz-0",
            "00000000000000000000000000000000-zz",
        ];
        let paths: Vec<StorePath> = texts
            .iter()
            .map(|t| StorePath::from_base_name(t).unwrap())
            .collect();
        for a in &paths {
            for b in &paths {
                let (ta, tb) = (a.to_string(), b.to_string());
                assert_eq!(a.cmp(b), ta.cmp(&tb), "{ta} against {tb}");
                assert_eq!(a == b, ta == tb);
            }
        }
        let mut info = PathInfo::new(paths[0].clone());
        info.references = paths.iter().rev().chain(&paths).cloned().collect();
        info.normalise();
        let mut want: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        want.sort();
        let got: Vec<String> = info.references.iter().map(|p| p.to_string()).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn custom_store_dir() {
        let sd = StoreDir::new("/gnu/store/");
        assert_eq!(sd.as_str(), "/gnu/store");
        assert!(matches!(
            sd.parse_path(P),
            Err(StorePathError::NotInStore(..))
        ));
        assert!(sd
            .parse_path("/gnu/store/9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-x")
            .is_ok());
    }

    #[test]
    fn rejects_bad_paths() {
        let sd = StoreDir::default();
        for bad in [
            "/nix/store/short",
            "/nix/store/9fm8cfjwd9nhpc06bz4fdgmc4gwdi2de-x",
            "/nix/store/9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq_x",
            "/nix/store/9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-a b",
            "/nix/store/9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-..",
            "/etc/passwd",
        ] {
            assert!(sd.parse_path(bad).is_err(), "{bad}");
        }
        let e = sd
            .parse_path("/nix/store/9fm8cfjwd9nhpc06bz4fdgmc4gwdi2de-x")
            .unwrap_err();
        assert!(e.to_string().contains("position 31"), "{e}");
    }
}
