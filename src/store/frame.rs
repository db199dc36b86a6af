//! One checksummed framing for the binary files nixcut keeps between runs (the closure
//! records of the narinfo cache, `crate::load::closure_record`, and the scan cache,
//! `crate::evidence::cache`): bytes in, bytes out, no I/O.
//!
//! Layout (integers little-endian):
//!
//! ```text
//! MAGIC (16 bytes)  format u32  writer-length u8  writer (nixcut version)
//! payload-length u64  SHA-256 of the payload (first 16 bytes)  payload
//! ```
//!
//! [`Frame::open`] tells three cases apart: a frame of another kind (another magic),
//! format or nixcut version is [`Opened::Stale`] (replace it, nothing is wrong with it);
//! a frame cut short, of the wrong length or with a checksum that does not match is a
//! [`FrameError`] (replace it, and say so if that matters); otherwise the payload. It
//! never panics on any input.

use sha2::{Digest, Sha256};

/// Bytes of the payload's SHA-256 kept in the header: enough to catch damage, which is
/// all the checksum is for (the files are the user's own, not an adversary's).
const CHECKSUM_LEN: usize = 16;

/// What a framed file is: its magic, the layout version of its payload and the nixcut
/// version that writes it. A frame of any other is stale.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    /// The first 16 bytes of every file of this kind.
    pub magic: &'static [u8; 16],
    /// The payload's layout version: bump it whenever the payload's bytes change.
    pub format: u32,
    /// The writer's version (`CARGO_PKG_VERSION`); at most 255 bytes.
    pub writer: &'static str,
}

/// What [`Frame::open`] found in bytes that are not damaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened<'a> {
    /// A sound frame of this kind, format and writer: its payload.
    Fresh(&'a [u8]),
    /// Another kind, format or writer: to be replaced, nothing wrong with it.
    Stale,
}

/// Why bytes with the right magic, format and writer are not a sound frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The header ends before it is complete.
    #[error("cut short")]
    CutShort,
    /// A payload length that does not fit in memory.
    #[error("an impossible payload length")]
    ImpossibleLength,
    /// The payload is longer or shorter than the header says.
    #[error("{found} payload bytes where the header says {header}")]
    Length {
        /// Bytes after the header.
        found: usize,
        /// The length in the header.
        header: usize,
    },
    /// The payload is not what was checksummed.
    #[error("the checksum does not match")]
    Checksum,
}

impl Frame {
    /// The bytes that follow the magic up to the payload length: format and writer.
    fn header_len(&self) -> usize {
        self.magic.len() + 4 + 1 + self.writer.len()
    }

    /// `payload` with the header in front: magic, format, writer, length, checksum.
    pub fn seal(&self, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.header_len() + 8 + CHECKSUM_LEN + payload.len());
        out.extend_from_slice(self.magic);
        out.extend_from_slice(&self.format.to_le_bytes());
        // The writer is a crate version: far below 256 bytes.
        out.push(u8::try_from(self.writer.len()).unwrap_or(u8::MAX));
        out.extend_from_slice(self.writer.as_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&Sha256::digest(payload)[..CHECKSUM_LEN]);
        out.extend_from_slice(payload);
        out
    }

    /// The payload of `bytes` if they are a sound frame of this kind (see the module
    /// docs for the three outcomes).
    pub fn open<'a>(&self, bytes: &'a [u8]) -> Result<Opened<'a>, FrameError> {
        let Some(rest) = bytes.strip_prefix(&self.magic[..]) else {
            return Ok(Opened::Stale); // another kind of file, or an older layout
        };
        let (format, rest) = split(rest, 4).ok_or(FrameError::CutShort)?;
        let (writer_len, rest) = split(rest, 1).ok_or(FrameError::CutShort)?;
        let (writer, rest) = split(rest, usize::from(writer_len[0])).ok_or(FrameError::CutShort)?;
        if format != self.format.to_le_bytes() || writer != self.writer.as_bytes() {
            return Ok(Opened::Stale);
        }
        let (len, rest) = split(rest, 8).ok_or(FrameError::CutShort)?;
        let mut len_bytes = [0u8; 8];
        len_bytes.copy_from_slice(len);
        let header = usize::try_from(u64::from_le_bytes(len_bytes))
            .map_err(|_| FrameError::ImpossibleLength)?;
        let (sum, payload) = split(rest, CHECKSUM_LEN).ok_or(FrameError::CutShort)?;
        if payload.len() != header {
            return Err(FrameError::Length {
                found: payload.len(),
                header,
            });
        }
        if Sha256::digest(payload)[..CHECKSUM_LEN] != *sum {
            return Err(FrameError::Checksum);
        }
        Ok(Opened::Fresh(payload))
    }
}

/// `bytes` split after `n` bytes, if it has that many.
fn split(bytes: &[u8], n: usize) -> Option<(&[u8], &[u8])> {
    (bytes.len() >= n).then(|| bytes.split_at(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: Frame = Frame {
        magic: b"nixcut-test-fr\n\0",
        format: 3,
        writer: "1.2.3",
    };

    #[test]
    fn a_payload_round_trips() {
        let sealed = F.seal(b"payload");
        assert_eq!(F.open(&sealed), Ok(Opened::Fresh(&b"payload"[..])));
        assert_eq!(F.open(&F.seal(b"")), Ok(Opened::Fresh(&b""[..])));
    }

    #[test]
    fn another_kind_format_or_writer_is_stale() {
        let sealed = F.seal(b"payload");
        for other in [
            Frame {
                magic: b"nixcut-other-f\n\0",
                ..F
            },
            Frame { format: 4, ..F },
            Frame {
                writer: "1.2.4",
                ..F
            },
            Frame {
                writer: "1.2.30",
                ..F
            },
        ] {
            assert_eq!(other.open(&sealed), Ok(Opened::Stale), "{other:?}");
        }
        assert_eq!(F.open(b"nixcut-scan-cache 6 abc\n{}"), Ok(Opened::Stale));
        assert_eq!(F.open(b""), Ok(Opened::Stale));
    }

    #[test]
    fn every_cut_and_flipped_byte_past_the_version_is_an_error() {
        let sealed = F.seal(b"some payload bytes");
        let versioned = F.header_len();
        for cut in versioned..sealed.len() {
            assert!(F.open(&sealed[..cut]).is_err(), "cut at {cut}");
        }
        for i in versioned..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 0x55;
            assert!(F.open(&bad).is_err(), "flipped byte {i}");
        }
        let mut longer = sealed.clone();
        longer.push(0);
        assert_eq!(
            F.open(&longer),
            Err(FrameError::Length {
                found: 19,
                header: 18
            })
        );
    }
}
