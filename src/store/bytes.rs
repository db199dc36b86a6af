//! [`Bytes`]: a size in bytes (a NAR size, or a sum of them), as a type of its own so
//! that a size is never mixed up with a count or an index. Sums saturate at
//! `u64::MAX` rather than wrap (loaders refuse inputs whose sizes overflow, so
//! saturation only guards closures built by other means), or say that they would
//! overflow ([`Bytes::checked_add`]). No `Display`: words and units are the
//! renderers' (`crate::render`), through [`crate::store::format_size`].

use serde::{Deserialize, Serialize};

/// A number of bytes. Serialised as the plain number (`serde(transparent)`), so JSON
/// holding it is the same as with a `u64`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Bytes(u64);

impl Bytes {
    /// No bytes.
    pub const ZERO: Bytes = Bytes(0);
    /// The largest size, where saturating sums stop.
    pub const MAX: Bytes = Bytes(u64::MAX);

    /// `n` bytes.
    pub const fn new(n: u64) -> Bytes {
        Bytes(n)
    }

    /// The number of bytes.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The sum, or `u64::MAX` bytes when it would not fit.
    #[must_use]
    pub const fn saturating_add(self, other: Bytes) -> Bytes {
        Bytes(self.0.saturating_add(other.0))
    }

    /// The sum, or `None` when it would not fit.
    pub const fn checked_add(self, other: Bytes) -> Option<Bytes> {
        match self.0.checked_add(other.0) {
            Some(n) => Some(Bytes(n)),
            None => None,
        }
    }

    /// The difference, or zero when `other` is larger.
    #[must_use]
    pub const fn saturating_sub(self, other: Bytes) -> Bytes {
        Bytes(self.0.saturating_sub(other.0))
    }
}

impl From<u64> for Bytes {
    fn from(n: u64) -> Bytes {
        Bytes(n)
    }
}

impl From<Bytes> for u64 {
    fn from(b: Bytes) -> u64 {
        b.0
    }
}

/// A saturating sum: the total, or `u64::MAX` bytes when it would not fit.
impl std::iter::Sum for Bytes {
    fn sum<I: Iterator<Item = Bytes>>(iter: I) -> Bytes {
        iter.fold(Bytes::ZERO, Bytes::saturating_add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_saturate_and_checked_sums_say_so() {
        let big = Bytes::new(u64::MAX - 1);
        assert_eq!(big.saturating_add(Bytes::new(5)), Bytes::MAX);
        assert_eq!(big.checked_add(Bytes::new(5)), None);
        assert_eq!(big.checked_add(Bytes::new(1)), Some(Bytes::MAX));
        assert_eq!([big, Bytes::new(7)].into_iter().sum::<Bytes>(), Bytes::MAX);
        assert_eq!(Bytes::new(3).saturating_sub(Bytes::new(5)), Bytes::ZERO);
    }

    #[test]
    fn serialises_as_the_plain_number() {
        let json = serde_json::to_string(&Bytes::new(1234)).unwrap();
        assert_eq!(json, "1234");
        assert_eq!(
            serde_json::from_str::<Bytes>("1234").unwrap(),
            Bytes::new(1234)
        );
    }
}
