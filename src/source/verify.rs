//! [`VerifiedNar`]: a decompressed NAR stream checked against what its narinfo says,
//! `NarSize` and `NarHash` (SHA-256), while it streams by. A NAR longer than its
//! `NarSize` fails at the first byte past it; at its end, a shorter one or one whose
//! digest differs fails with both values. The NAR walker reads every stream to its
//! end, so a scan of a NAR that does not match never completes: the evidence layer
//! then keeps no cache entry and uses no evidence from it.

use std::io::{self, Read};

use sha2::{Digest, Sha256};

use crate::store::NarHash;

/// A decompressed NAR and what it must be.
pub struct VerifiedNar<R> {
    inner: R,
    label: String,
    size: Option<u64>,
    digest: Option<[u8; 32]>,
    read: u64,
    hasher: Sha256,
    checked: bool,
}

impl<R: Read> VerifiedNar<R> {
    /// `inner` must be `size` bytes long (when known) with SHA-256 `hash` (when it is
    /// one); `label` names the stream in errors.
    pub fn new(inner: R, label: &str, size: Option<u64>, hash: Option<&NarHash>) -> Self {
        VerifiedNar {
            inner,
            label: label.to_string(),
            size,
            digest: match hash {
                Some(NarHash::Sha256(d)) => Some(*d),
                _ => None,
            },
            read: 0,
            hasher: Sha256::new(),
            checked: false,
        }
    }

    fn mismatch(&self, what: String) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: the NAR does not match its narinfo ({what}); nothing from it is used",
                self.label
            ),
        )
    }

    /// At the end of the stream: the length and the digest.
    fn check_end(&mut self) -> io::Result<()> {
        self.checked = true;
        if let Some(size) = self.size.filter(|&s| s != self.read) {
            return Err(self.mismatch(format!("{} bytes, NarSize {size}", self.read)));
        }
        if let Some(want) = self.digest {
            let got: [u8; 32] = std::mem::take(&mut self.hasher).finalize().into();
            if got != want {
                return Err(self.mismatch(format!(
                    "its SHA-256 is {}, NarHash {}",
                    NarHash::Sha256(got).to_nix32(),
                    NarHash::Sha256(want).to_nix32()
                )));
            }
        }
        Ok(())
    }
}

impl<R: Read> Read for VerifiedNar<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        if n == 0 {
            if !self.checked {
                self.check_end()?;
            }
            return Ok(0);
        }
        self.read += n as u64;
        if let Some(size) = self.size.filter(|&s| self.read > s) {
            return Err(self.mismatch(format!("longer than its NarSize of {size} bytes")));
        }
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(r: &mut impl Read) -> io::Result<Vec<u8>> {
        let mut v = Vec::new();
        r.read_to_end(&mut v).map(|_| v)
    }

    #[test]
    fn a_matching_stream_reads_through() {
        let data = b"nix-archive-1 and more".to_vec();
        let h = NarHash::Sha256(Sha256::digest(&data).into());
        let mut r = VerifiedNar::new(&data[..], "x", Some(data.len() as u64), Some(&h));
        assert_eq!(read_all(&mut r).unwrap(), data);
    }

    #[test]
    fn size_and_hash_mismatches_fail() {
        let data = b"0123456789".to_vec();
        let h = NarHash::Sha256(Sha256::digest(&data).into());
        let long = read_all(&mut VerifiedNar::new(&data[..], "x", Some(4), Some(&h)));
        assert!(long
            .unwrap_err()
            .to_string()
            .contains("longer than its NarSize of 4"));
        let short = read_all(&mut VerifiedNar::new(&data[..], "x", Some(11), Some(&h)));
        assert!(short
            .unwrap_err()
            .to_string()
            .contains("10 bytes, NarSize 11"));
        let other = NarHash::Sha256([7; 32]);
        let wrong = read_all(&mut VerifiedNar::new(
            &data[..],
            "x",
            Some(10),
            Some(&other),
        ));
        assert!(wrong.unwrap_err().to_string().contains("its SHA-256 is"));
        // Not a SHA-256: only the size is checked.
        let odd = NarHash::Other("md5:abc".into());
        assert!(read_all(&mut VerifiedNar::new(&data[..], "x", None, Some(&odd))).is_ok());
    }
}
