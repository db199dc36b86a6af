//! [`ByteSource`]: positional reads from a file's contents, so that ELF analysis and hit
//! classification read only the bytes they need (headers, a string around a hit) instead
//! of holding whole files in memory. Implemented for byte slices (tests, NAR entries
//! spooled to memory) and for open files (tree walks, NAR entries spooled to disk).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Random-access, read-only bytes of one file.
pub trait ByteSource: Sync {
    /// Length in bytes.
    fn len(&self) -> u64;

    /// Read into `buf` from `offset`; returns the bytes read, 0 at or past the end.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;

    /// Whether the source is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Read up to `len` bytes from `offset` (fewer at the end of the source).
    fn read_vec(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let avail = self.len().saturating_sub(offset);
        let len = len.min(usize::try_from(avail).unwrap_or(usize::MAX));
        let mut buf = vec![0u8; len];
        let mut done = 0;
        while done < len {
            let n = self.read_at(offset + done as u64, &mut buf[done..])?;
            if n == 0 {
                break;
            }
            done += n;
        }
        buf.truncate(done);
        Ok(buf)
    }
}

impl ByteSource for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let Ok(start) = usize::try_from(offset) else {
            return Ok(0);
        };
        let Some(rest) = self.get(start..) else {
            return Ok(0);
        };
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        Ok(n)
    }
}

impl ByteSource for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.as_slice().read_at(offset, buf)
    }
}

/// An open file with its length taken once.
#[derive(Debug)]
pub struct FileBytes {
    file: File,
    len: u64,
}

impl FileBytes {
    /// Wrap an open file; its length is read now.
    pub fn new(file: File) -> io::Result<FileBytes> {
        let len = file.metadata()?.len();
        Ok(FileBytes { file, len })
    }
}

impl ByteSource for FileBytes {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        if offset >= self.len {
            return Ok(0);
        }
        loop {
            match self.file.read_at(buf, offset) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => return r,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_and_files_read_alike() {
        let data: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
        let mut tmp = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut tmp, &data).unwrap();
        let f = FileBytes::new(tmp).unwrap();
        for (off, len) in [(0u64, 10usize), (4990, 100), (5000, 1), (9999, 4), (17, 0)] {
            assert_eq!(
                data.read_vec(off, len).unwrap(),
                f.read_vec(off, len).unwrap()
            );
        }
        assert_eq!(data.read_vec(4990, 100).unwrap().len(), 10);
        assert_eq!(ByteSource::len(&f), 5000);
    }
}
