//! Opening a NAR file as a stream: the compression is recognised by its magic bytes,
//! not the file name, and undone on the fly (xz, zstd, bzip2 or none; gzip is refused),
//! so a NAR is never unpacked to disk. The walkers in `crate::scan` read the stream.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
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
    let open_err = |message: String| OpenError {
        file: path.display().to_string(),
        message,
    };
    let file = File::open(path).map_err(|e| open_err(format!("cannot open: {e}")))?;
    let mut r = BufReader::with_capacity(1 << 20, file);
    let head = r
        .fill_buf()
        .map_err(|e| open_err(format!("cannot read: {e}")))?;
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
    let reader: Box<dyn Read + Send> = match compression {
        Compression::None => Box::new(r),
        Compression::Xz => Box::new(xz2::read::XzDecoder::new_multi_decoder(r)),
        Compression::Zstd => Box::new(
            zstd::stream::read::Decoder::with_buffer(r)
                .map_err(|e| open_err(format!("cannot start zstd decoding: {e}")))?,
        ),
        Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(r)),
    };
    Ok((reader, compression))
}
