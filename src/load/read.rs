//! Reading one input file or stream for detection: the first bytes decide what cannot
//! be an input at all ([`refuse_from_head`]), the rest is read up to the cap on input
//! size, large regular files in parts on every core ([`read_at_parallel`]). Which
//! format the text is, is `super::detect`'s question. The files of a directory input
//! are read under the same cap ([`read_text_file`]).

use rayon::prelude::*;
use std::io::{self, Read};
use std::path::Path;

use super::{sanitize, LoadError};

/// How many bytes are looked at to recognise a format before the rest is read: enough
/// to see binary data, or text that no format starts with.
pub(super) const SNIFF_BYTES: usize = 8 << 10;

/// Whether `path` (following symlinks) is something read as a stream: a FIFO (pipes,
/// `/dev/fd/N` of a process substitution) or a character device.
pub(super) fn is_stream(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| {
        let ft = m.file_type();
        ft.is_fifo() || ft.is_char_device()
    })
}

/// What [`read_sniffed`] found.
pub(super) enum Sniffed {
    /// The whole input, as text (a byte-order mark removed).
    Text(String),
    /// Not any format nixcut reads; what was seen. Only the first bytes were read.
    Unknown(String),
}

/// Read `reader` whole, unless its first bytes already show it is no format nixcut
/// reads (binary data, text that starts like none of them), and never more than `cap`
/// bytes. `size` is the file's size when known (to refuse before reading, and to
/// allocate once).
///
/// `file`: the regular file `reader` reads, when it is one; a large one is read in
/// parts on every core (see [`read_at_parallel`]).
pub(super) fn read_sniffed(
    mut reader: impl Read,
    file: Option<&std::fs::File>,
    path: &Path,
    size: Option<u64>,
    cap: u64,
) -> Result<Sniffed, LoadError> {
    let io_err = |e| LoadError::io(path, e);
    let parallel = size
        .filter(|&n| (PARALLEL_READ_BYTES..=cap).contains(&n))
        .and(file);
    let capacity = match parallel {
        Some(_) => SNIFF_BYTES as u64,
        None => size.map_or(SNIFF_BYTES as u64, |n| n.min(cap).saturating_add(1)),
    };
    let mut buf = Vec::with_capacity(usize::try_from(capacity).unwrap_or(SNIFF_BYTES));
    (&mut reader)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut buf)
        .map_err(io_err)?;
    if let Some(seen) = refuse_from_head(&buf, buf.len() < SNIFF_BYTES) {
        return Ok(Sniffed::Unknown(seen));
    }
    let too_large = || LoadError::Invalid {
        path: path.to_path_buf(),
        message: format!(
            "it is larger than {} ({cap} bytes), the most nixcut reads from one input; \
             no closure description is that big",
            crate::store::format_size(cap)
        ),
    };
    if size.is_some_and(|n| n > cap) {
        return Err(too_large());
    }
    let whole = match (parallel, size) {
        (Some(f), Some(n)) => read_at_parallel(f, &buf, n).map_err(io_err)?,
        _ => None,
    };
    match whole {
        Some(whole) => buf = whole,
        // Not a large file, or one that changed while it was read: read on.
        None => {
            let rest = (cap + 1).saturating_sub(buf.len() as u64);
            reader.take(rest).read_to_end(&mut buf).map_err(io_err)?;
        }
    }
    if buf.len() as u64 > cap {
        return Err(too_large());
    }
    // A byte-order mark (some Windows editors add one) is not part of any format.
    if buf.starts_with(BOM) {
        buf.drain(..BOM.len());
    }
    match String::from_utf8(buf) {
        Ok(text) => Ok(Sniffed::Text(text)),
        Err(e) => Ok(Sniffed::Unknown(format!(
            "binary data (not UTF-8 at byte {})",
            e.utf8_error().valid_up_to()
        ))),
    }
}

const BOM: &[u8] = "\u{feff}".as_bytes();

/// The text of the regular file `path`, for a reader that opens the files of a
/// directory input itself (closureInfo's, a binary cache's): never more than `cap`
/// bytes, and never a FIFO or a device, which could block or never end. Errors are
/// `io::Error`s the caller names the file in.
pub(super) fn read_text_file(path: &Path, cap: u64) -> io::Result<String> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, device or socket is not read)",
        ));
    }
    let too_large = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "it is larger than {} ({cap} bytes), the most nixcut reads from one input",
                crate::store::format_size(cap)
            ),
        )
    };
    if meta.len() > cap {
        return Err(too_large());
    }
    let mut buf = Vec::new();
    std::fs::File::open(path)?
        .take(cap.saturating_add(1))
        .read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(too_large());
    }
    String::from_utf8(buf).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not UTF-8 at byte {}", e.utf8_error().valid_up_to()),
        )
    })
}

/// Files from this size on are read in parts on every core: copying 75 MiB out of the
/// page cache costs a page fault every 4 KiB of the new buffer, and those are taken on
/// both cores at once.
const PARALLEL_READ_BYTES: u64 = 16 << 20;

/// The whole of `file`, `size` bytes, of which `head` (the first bytes, already read)
/// is copied: the rest is read with positioned reads (`pread`, which leave the file's
/// offset alone) in one part per core. `None` when the file is no longer `size` bytes
/// long (it changed since it was measured): the caller reads on sequentially.
fn read_at_parallel(file: &std::fs::File, head: &[u8], size: u64) -> io::Result<Option<Vec<u8>>> {
    use std::os::unix::fs::FileExt;
    let Ok(n) = usize::try_from(size) else {
        return Ok(None);
    };
    if head.len() > n {
        return Ok(None);
    }
    // Zeroed by the allocator (fresh pages), so nothing is touched before the reads.
    let mut whole = vec![0u8; n];
    whole[..head.len()].copy_from_slice(head);
    let parts = rayon::current_num_threads().clamp(1, 8);
    let part_len = (n - head.len()).div_ceil(parts).max(1);
    let complete = whole[head.len()..]
        .par_chunks_mut(part_len)
        .enumerate()
        .map(|(i, part)| -> io::Result<bool> {
            let mut at = head.len() + i * part_len;
            let mut part = part;
            while !part.is_empty() {
                match file.read_at(part, at as u64) {
                    Ok(0) => return Ok(false),
                    Ok(k) => {
                        part = &mut part[k..];
                        at += k;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(true)
        })
        .collect::<io::Result<Vec<bool>>>()?
        .into_iter()
        .all(|c| c);
    // Nothing past the end either.
    let grew = file.read_at(&mut [0u8; 1], size)? > 0;
    Ok((complete && !grew).then_some(whole))
}

/// Judge an input by its first bytes (`complete`: they are all of it). `Some(seen)`
/// when it cannot be any format nixcut reads: every format is UTF-8 text without NUL
/// bytes, starting (after blanks) with `{` or `[` (JSON), `/` (a store path: the
/// registration and `exportReferencesGraph` records) or the word `digraph`
/// (`nix-store --query --graph`).
fn refuse_from_head(head: &[u8], complete: bool) -> Option<String> {
    const GRAPH: &str = "digraph";
    // Only a regular file reaches the Parquet reader (it seeks to the index at the end).
    if head.starts_with(super::narinfo_parquet::MAGIC) {
        return Some(
            "a Parquet file, which nixcut reads only from a regular file (its index is at \
             its end, out of reach of a stream): save it to a file first"
                .into(),
        );
    }
    if let Some(i) = memchr::memchr(0, head) {
        return Some(format!("binary data (a NUL byte at byte {i})"));
    }
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // A character cut at the end of the head is not an error.
        Err(e) if e.error_len().is_none() && !complete => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(e) => {
            return Some(format!(
                "binary data (not UTF-8 at byte {})",
                e.valid_up_to()
            ))
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let start = text.trim_start();
    // `digraph` may be cut by the end of the head only when there is more to read.
    let graph = start.starts_with(GRAPH) || (!complete && GRAPH.starts_with(start));
    match start.chars().next() {
        None | Some('{' | '[' | '/') => None,
        Some(_) if graph => None,
        Some(_) => Some(format!(
            "text starting with `{}`",
            sanitize(start.lines().next().unwrap_or_default(), 60)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bytes_decide_what_cannot_be_an_input() {
        let refuse = |b: &[u8], complete| refuse_from_head(b, complete);
        assert!(refuse(b"{\"a\": 1}", true).is_none());
        assert!(refuse(b"  \n[", false).is_none());
        assert!(refuse(b"\xef\xbb\xbf/nix/store/x", false).is_none(), "BOM");
        assert!(refuse(b"", true).is_none(), "the empty file is named later");
        let seen = refuse(b"[\x00", false).unwrap();
        assert_eq!(seen, "binary data (a NUL byte at byte 1)");
        let seen = refuse(b"[\xff", false).unwrap();
        assert_eq!(seen, "binary data (not UTF-8 at byte 1)");
        // A character cut by the end of the head is only an error at the end of input.
        assert!(refuse("[é".as_bytes().split_at(2).0, false).is_none());
        assert!(refuse("[é".as_bytes().split_at(2).0, true).is_some());
        let seen = refuse(b"hello\x1b[2J world\nmore", false).unwrap();
        assert_eq!(seen, "text starting with `hello?[2J world`");
        assert!(refuse(b"digraph G {", true).is_none());
        assert!(
            refuse(b"  digr", false).is_none(),
            "cut by the end of the head"
        );
        assert!(refuse(b"digr", true).is_some());
        assert!(refuse(b"dig it", false).is_some());
    }

    #[test]
    fn directory_files_are_read_under_the_cap_and_only_when_regular() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, "12345").unwrap();
        assert_eq!(read_text_file(&f, 5).unwrap(), "12345");
        let e = read_text_file(&f, 4).unwrap_err().to_string();
        assert!(e.contains("larger than 4 B"), "{e}");
        std::fs::write(&f, b"ab\xff").unwrap();
        let e = read_text_file(&f, 5).unwrap_err().to_string();
        assert!(e.contains("not UTF-8 at byte 2"), "{e}");
        let e = read_text_file(dir.path(), 5).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = read_text_file(Path::new("/dev/zero"), 5)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }
}
