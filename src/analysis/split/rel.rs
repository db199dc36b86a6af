//! Paths inside a store path as the split's plan spells them (text, not bytes).

/// A relative path as text.
pub(super) fn rel_bytes(p: &[u8]) -> String {
    String::from_utf8_lossy(p).into_owned()
}

/// An entry's path as text.
pub(super) fn rel(p: &crate::scan::RelPath) -> String {
    String::from_utf8_lossy(p.as_bytes()).into_owned()
}
