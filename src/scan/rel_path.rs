//! [`RelPath`]: a path inside a store path as raw bytes, not necessarily UTF-8.

use crate::classify::text::escape_bytes;
use std::fmt;

/// A path inside a store path as raw bytes, `/`-separated, empty for the top level.
/// Names need not be UTF-8; [`fmt::Display`] escapes them.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath(Vec<u8>);

impl RelPath {
    /// The top level of the store path.
    pub fn root() -> RelPath {
        RelPath(Vec::new())
    }

    /// A relative path from bytes (no leading `/`).
    pub fn from_bytes(b: impl Into<Vec<u8>>) -> RelPath {
        RelPath(b.into())
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Whether this is the top level.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The last component (empty for the top level).
    pub fn name(&self) -> &[u8] {
        self.0.rsplit(|&b| b == b'/').next().unwrap_or(&self.0)
    }

    /// Everything before the last component (empty at the first level).
    pub fn parent(&self) -> &[u8] {
        match self.0.iter().rposition(|&b| b == b'/') {
            Some(i) => &self.0[..i],
            None => &[],
        }
    }

    /// This path with `name` appended.
    pub fn join(&self, name: &[u8]) -> RelPath {
        let mut v = Vec::with_capacity(self.0.len() + 1 + name.len());
        v.extend_from_slice(&self.0);
        if !v.is_empty() {
            v.push(b'/');
        }
        v.extend_from_slice(name);
        RelPath(v)
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&escape_bytes(&self.0))
    }
}

/// A string when the bytes are UTF-8, else the list of byte values (the scan cache's
/// spelling).
impl serde::Serialize for RelPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        crate::classify::text::raw_bytes::serialize(&self.0, s)
    }
}

impl<'de> serde::Deserialize<'de> for RelPath {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RelPath, D::Error> {
        crate::classify::text::raw_bytes::deserialize(d).map(RelPath)
    }
}

impl fmt::Debug for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RelPath({:?})", escape_bytes(&self.0))
    }
}
