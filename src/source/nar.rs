//! Opening a NAR file as a stream: the compression is recognised by its magic bytes,
//! not the file name, and undone on the fly (xz, zstd, bzip2 or none; gzip is refused),
//! so a NAR is never unpacked to disk. The walkers in `crate::scan` read the stream.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// A NAR file that cannot be opened, or is not a (compressed) NAR.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{file}`: {message}")]
pub struct OpenError {
    /// The file.
    pub file: String,
    /// What is wrong.
    pub message: String,
}

/// How a NAR file is compressed, from its magic bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// A bare `.nar`.
    None,
    /// `.nar.xz`.
    Xz,
    /// `.nar.zst`.
    Zstd,
    /// `.nar.bz2`.
    Bzip2,
}

impl Compression {
    /// What the decompressed stream is called in errors (`xz stream`, `NAR` …).
    pub fn stream_name(self) -> &'static str {
        match self {
            Compression::None => "NAR",
            Compression::Xz => "xz stream",
            Compression::Zstd => "zstd stream",
            Compression::Bzip2 => "bzip2 stream",
        }
    }
}

/// Open a (possibly compressed) NAR file, recognising the compression by its magic
/// bytes rather than the file name.
pub fn open_nar(path: &Path) -> Result<(Box<dyn Read + Send>, Compression), OpenError> {
    let label = path.display().to_string();
    let file = File::open(path).map_err(|e| OpenError {
        file: label.clone(),
        message: format!("cannot open: {e}"),
    })?;
    open_nar_stream(Box::new(file), &label)
}

/// How many bytes the compression is recognised from.
const MAGIC_LEN: usize = 21;

/// Decompress any stream holding a (possibly compressed) NAR (a file, an HTTP body),
/// recognising the compression by its magic bytes; `label` names it in errors. The
/// stream is read as it goes, never whole.
pub fn open_nar_stream(
    mut stream: Box<dyn Read + Send>,
    label: &str,
) -> Result<(Box<dyn Read + Send>, Compression), OpenError> {
    let open_err = |message: String| OpenError {
        file: label.to_string(),
        message,
    };
    // A network stream may hand out the first bytes in several reads: gather enough to
    // recognise the format before deciding.
    let mut head = Vec::with_capacity(MAGIC_LEN);
    while head.len() < MAGIC_LEN {
        let mut buf = [0u8; MAGIC_LEN];
        match stream.read(&mut buf[..MAGIC_LEN - head.len()]) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(open_err(format!("cannot read: {e}"))),
        }
    }
    let compression = if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Compression::Xz
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Compression::Zstd
    } else if head.starts_with(b"BZh") {
        Compression::Bzip2
    } else if head.starts_with(&[13, 0, 0, 0, 0, 0, 0, 0])
        && head[8..].starts_with(b"nix-archive-1")
    {
        Compression::None
    } else if head.starts_with(&[0x1f, 0x8b]) {
        return Err(open_err(
            "gzip-compressed NARs are not supported (xz, zstd, bzip2 and none are)".into(),
        ));
    } else if head.is_empty() {
        return Err(open_err("empty file, not a NAR".into()));
    } else {
        return Err(open_err(
            "not a NAR, nor an xz-, zstd- or bzip2-compressed one".into(),
        ));
    };
    let r = BufReader::with_capacity(1 << 20, std::io::Cursor::new(head).chain(stream));
    let reader: Box<dyn Read + Send> = match compression {
        Compression::None => Box::new(r),
        Compression::Xz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(r)),
        Compression::Zstd => Box::new(
            zstd::stream::read::Decoder::with_buffer(r)
                .map_err(|e| open_err(format!("cannot start zstd decoding: {e}")))?,
        ),
        Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(r)),
    };
    Ok((reader, compression))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out one byte per read, as a slow network stream may.
    struct Trickle(std::io::Cursor<Vec<u8>>);

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(1);
            self.0.read(&mut buf[..n])
        }
    }

    #[test]
    fn magic_split_over_many_reads_is_recognised() {
        let mut nar = vec![13, 0, 0, 0, 0, 0, 0, 0];
        nar.extend_from_slice(b"nix-archive-1\0\0\0rest");
        let (mut r, c) =
            open_nar_stream(Box::new(Trickle(std::io::Cursor::new(nar.clone()))), "t").unwrap();
        assert_eq!(c, Compression::None);
        let mut back = Vec::new();
        r.read_to_end(&mut back).unwrap();
        assert_eq!(back, nar, "the sniffed head is handed on");
        let mut xz = Vec::new();
        liblzma::read::XzEncoder::new(&nar[..], 6)
            .read_to_end(&mut xz)
            .unwrap();
        let (mut r, c) = open_nar_stream(Box::new(Trickle(std::io::Cursor::new(xz))), "t").unwrap();
        assert_eq!(c, Compression::Xz);
        let mut back = Vec::new();
        r.read_to_end(&mut back).unwrap();
        assert_eq!(back, nar);
        let html = Box::new(std::io::Cursor::new(b"<html>".to_vec()));
        let Err(e) = open_nar_stream(html, "http://x/nar") else {
            panic!("HTML is not a NAR");
        };
        let e = e.to_string();
        assert!(e.starts_with("`http://x/nar`: not a NAR"), "{e}");
    }
}
