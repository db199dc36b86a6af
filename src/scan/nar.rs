//! Scanning a store path from its NAR serialisation (a binary cache's `nar/*.nar`,
//! `.nar.xz`, `.nar.zst`, `.nar.bz2`), streamed and decompressed on the fly, never
//! unpacked: the result is identical to walking the same tree on disk (`super::tree`).
//!
//! The NAR reader is written here rather than taken from the `nix-nar` crate (0.6),
//! because that decoder rejects non-UTF-8 entry names and symlink targets (which Nix
//! writes), allocates whatever length a corrupt string header claims, and reports
//! errors without the entry they occurred in. The format is small:
//! `str("nix-archive-1") node`, where a node is `( type regular [executable ""]
//! contents <bytes> )`, `( type symlink target <bytes> )` or `( type directory
//! (entry ( name <bytes> node <node> ))* )`, and `str` is a little-endian u64 length
//! followed by the bytes padded with zeros to a multiple of 8. Like Nix, the reader
//! insists on sorted, unique, well-formed entry names. `nix-nar`'s encoder and
//! `nix-store --dump` serve as independent writers in the tests.
//!
//! ELF files are kept whole while streaming (in memory up to
//! [`ScanOptions::nar_spool_in_memory`], otherwise in an anonymous temporary file) so
//! they can be analysed, and build-configuration files (in memory, up to
//! [`super::MAX_CONFIG_TEXT`]) so that their text is kept as from a tree; other files
//! keep only their head and the windows around hits (`super::capture`).

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

use crate::classify::text::escape_bytes;
use crate::elf::{has_elf_magic, ByteSource, FileBytes};
use crate::source::{open_nar, Compression};

use super::analyse::{self, Contents, Context, Outcome};
use super::capture::Capture;
use super::{
    EntryProblem, FileScan, FileType, PathScan, ReferenceScanner, RelPath, ScanError, ScanOptions,
    ScanWarning,
};

const MAX_TOKEN: u64 = 64;
const MAX_NAME: u64 = 4096;
const MAX_TARGET: u64 = 64 << 10;
const MAX_DEPTH: usize = 1024;

/// Scan a NAR file. `logical_root` is the full store path it serialises (for `$ORIGIN`).
pub fn scan_nar_file(
    path: &Path,
    logical_root: Option<&str>,
    scanner: &ReferenceScanner,
    opts: &ScanOptions<'_>,
) -> Result<PathScan, ScanError> {
    let (reader, compression) = open_nar(path).map_err(|e| ScanError::Open {
        file: e.file,
        message: e.message,
    })?;
    NarWalker::new(
        reader,
        &path.display().to_string(),
        compression,
        logical_root,
        scanner,
        opts,
    )
    .run()
}

/// Scan a decompressed NAR stream that was `compression`-compressed (for errors).
pub(crate) fn scan_nar_stream<R: Read>(
    reader: R,
    label: &str,
    compression: Compression,
    logical_root: Option<&str>,
    scanner: &ReferenceScanner,
    opts: &ScanOptions<'_>,
) -> Result<PathScan, ScanError> {
    NarWalker::new(reader, label, compression, logical_root, scanner, opts).run()
}

/// Scan an uncompressed NAR stream; `label` names it in errors and `logical_root` is the
/// full store path it serialises (for `$ORIGIN`), when known.
pub fn scan_nar<R: Read>(
    reader: R,
    label: &str,
    logical_root: Option<&str>,
    scanner: &ReferenceScanner,
    opts: &ScanOptions<'_>,
) -> Result<PathScan, ScanError> {
    NarWalker::new(
        reader,
        label,
        Compression::None,
        logical_root,
        scanner,
        opts,
    )
    .run()
}

/// The exact size of the NAR serialisation of `files` (a whole tree in NAR order).
pub fn nar_size(files: &[FileScan]) -> u64 {
    fn str_len(n: u64) -> u64 {
        8u64.saturating_add(n.div_ceil(8).saturating_mul(8))
    }
    let s = |t: &str| str_len(t.len() as u64);
    let mut total = s("nix-archive-1");
    for f in files {
        if !f.path.is_root() {
            total += s("entry") + s("(") + s("name") + str_len(f.path.name().len() as u64);
            total += s("node") + s(")");
        }
        total += s("(") + s("type") + s(")");
        total = total.saturating_add(match f.file_type {
            FileType::Regular => s("regular") + s("contents") + str_len(f.size),
            FileType::Executable => {
                s("regular") + s("executable") + s("") + s("contents") + str_len(f.size)
            }
            FileType::Symlink => s("symlink") + s("target") + str_len(f.size),
            FileType::Directory => s("directory"),
        });
    }
    total
}

/// Where an ELF file's bytes are kept while its NAR entry streams by.
enum Spool {
    Memory(Vec<u8>),
    Disk(File),
}

struct NarWalker<'a, R> {
    r: R,
    pos: u64,
    label: String,
    compression: Compression,
    ctx: Context<'a>,
    block: Vec<u8>,
    entry: RelPath,
    scan: PathScan,
}

impl<'a, R: Read> NarWalker<'a, R> {
    fn new(
        r: R,
        label: &str,
        compression: Compression,
        logical_root: Option<&'a str>,
        scanner: &'a ReferenceScanner,
        opts: &'a ScanOptions<'a>,
    ) -> Self {
        NarWalker {
            r,
            pos: 0,
            label: label.to_string(),
            compression,
            ctx: Context {
                scanner,
                opts,
                logical_root,
                resolver: opts.resolver,
            },
            block: vec![0u8; opts.read_block.max(4096)],
            entry: RelPath::root(),
            scan: PathScan::default(),
        }
    }

    fn err(&self, message: impl Into<String>) -> ScanError {
        ScanError::Nar {
            file: self.label.clone(),
            entry: self.entry.to_string(),
            offset: self.pos,
            message: message.into(),
        }
    }

    fn run(mut self) -> Result<PathScan, ScanError> {
        self.expect("nix-archive-1")?;
        self.node(RelPath::root(), 0)?;
        let size = self.pos;
        // Read to the end: decompressors verify their checksums there.
        let mut trailing = 0u64;
        let mut buf = [0u8; 4096];
        loop {
            match self.r.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => trailing += n as u64,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(self.err(format!(
                        "cannot read the {} after the end of the NAR: {e}",
                        self.compression.stream_name()
                    )))
                }
            }
        }
        if trailing > 0 {
            self.scan.warnings.push(ScanWarning::TrailingBytes {
                nar: self.label.clone(),
                bytes: trailing,
            });
        }
        self.scan.nar_size = Some(size);
        Ok(self.scan)
    }

    fn read_exact(&mut self, buf: &mut [u8], what: &str) -> Result<(), ScanError> {
        let mut done = 0;
        while done < buf.len() {
            match self.r.read(&mut buf[done..]) {
                Ok(0) => {
                    return Err(
                        self.err(format!("truncated NAR: the data ends while reading {what}"))
                    )
                }
                Ok(n) => {
                    done += n;
                    self.pos += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(self.err(format!(
                        "cannot read the {} while reading {what}: {e}",
                        self.compression.stream_name()
                    )))
                }
            }
        }
        Ok(())
    }

    fn read_u64(&mut self, what: &str) -> Result<u64, ScanError> {
        let mut b = [0u8; 8];
        self.read_exact(&mut b, what)?;
        Ok(u64::from_le_bytes(b))
    }

    fn padding(&mut self, len: u64) -> Result<(), ScanError> {
        let pad = (8 - len % 8) % 8;
        let mut b = [0u8; 8];
        let b = &mut b[..pad as usize];
        self.read_exact(b, "padding")?;
        if b.iter().any(|&x| x != 0) {
            return Err(self.err("corrupt NAR: non-zero padding"));
        }
        Ok(())
    }

    fn read_string(&mut self, max: u64, what: &str) -> Result<Vec<u8>, ScanError> {
        let len = self.read_u64(what)?;
        if len > max {
            return Err(self.err(format!(
                "corrupt NAR: {what} claims {len} bytes (at most {max} expected)"
            )));
        }
        let mut v = vec![0u8; len as usize];
        self.read_exact(&mut v, what)?;
        self.padding(len)?;
        Ok(v)
    }

    fn expect(&mut self, token: &str) -> Result<(), ScanError> {
        let what = format!("`{token}`");
        let len = self.read_u64(&what)?;
        if len > MAX_TOKEN {
            return Err(self.err(format!(
                "corrupt NAR: expected `{token}`, found a string of {len} bytes"
            )));
        }
        let mut v = vec![0u8; len as usize];
        self.read_exact(&mut v, &what)?;
        self.padding(len)?;
        if v != token.as_bytes() {
            return Err(self.err(format!(
                "corrupt NAR: expected `{token}`, found `{}`",
                escape_bytes(&v)
            )));
        }
        Ok(())
    }

    fn push(&mut self, o: Outcome) {
        self.scan.files.push(o.file);
        self.scan.evidence.extend(o.evidence);
        self.scan.warnings.extend(o.warnings);
    }

    fn node(&mut self, path: RelPath, depth: usize) -> Result<(), ScanError> {
        self.entry = path.clone();
        self.expect("(")?;
        self.expect("type")?;
        let t = self.read_string(MAX_TOKEN, "the entry type")?;
        match t.as_slice() {
            b"regular" => {
                let s = self.read_string(MAX_TOKEN, "`executable` or `contents`")?;
                let executable = match s.as_slice() {
                    b"executable" => {
                        self.expect("")?;
                        self.expect("contents")?;
                        true
                    }
                    b"contents" => false,
                    other => {
                        return Err(self.err(format!(
                            "corrupt NAR: expected `executable` or `contents`, found `{}`",
                            escape_bytes(other)
                        )))
                    }
                };
                let size = self.read_u64("the file size")?;
                self.regular(path, executable, size)?;
                self.expect(")")
            }
            b"symlink" => {
                self.expect("target")?;
                let target = self.read_string(MAX_TARGET, "the symlink target")?;
                self.expect(")")?;
                let o = analyse::symlink(&self.ctx, path, target);
                self.push(o);
                Ok(())
            }
            b"directory" => {
                let o = analyse::directory(&self.ctx, path.clone());
                self.push(o);
                if depth >= MAX_DEPTH {
                    // Not corrupt, but deeper than this reader follows (a directory tree
                    // walked from disk has no such limit): say so, and where.
                    return Err(self.err(format!(
                        "directories nested deeper than {MAX_DEPTH} levels; the NAR is not read past this entry"
                    )));
                }
                let mut prev: Option<Vec<u8>> = None;
                loop {
                    self.entry = path.clone();
                    let s = self.read_string(MAX_TOKEN, "`entry` or `)`")?;
                    match s.as_slice() {
                        b")" => return Ok(()),
                        b"entry" => {}
                        other => {
                            return Err(self.err(format!(
                                "corrupt NAR: expected `entry` or `)`, found `{}`",
                                escape_bytes(other)
                            )))
                        }
                    }
                    self.expect("(")?;
                    self.expect("name")?;
                    let name = self.read_string(MAX_NAME, "an entry name")?;
                    self.check_name(&name, prev.as_deref())?;
                    self.expect("node")?;
                    self.node(path.join(&name), depth + 1)?;
                    self.entry = path.clone();
                    self.expect(")")?;
                    prev = Some(name);
                }
            }
            other => Err(self.err(format!(
                "corrupt NAR: unknown entry type `{}`",
                escape_bytes(other)
            ))),
        }
    }

    fn check_name(&self, name: &[u8], prev: Option<&[u8]>) -> Result<(), ScanError> {
        if name.is_empty()
            || name == b"."
            || name == b".."
            || name.contains(&b'/')
            || name.contains(&0)
        {
            return Err(self.err(format!(
                "corrupt NAR: invalid entry name `{}`",
                escape_bytes(name)
            )));
        }
        if let Some(p) = prev {
            if name <= p {
                return Err(self.err(format!(
                    "corrupt NAR: entry `{}` is not sorted after `{}`",
                    escape_bytes(name),
                    escape_bytes(p)
                )));
            }
        }
        Ok(())
    }

    fn regular(&mut self, path: RelPath, executable: bool, size: u64) -> Result<(), ScanError> {
        let mut warnings = Vec::new();
        let mut stream = self.ctx.scanner.stream();
        let mut capture = Capture::new(size);
        let mut spool: Option<Spool> = None;
        let mut block = std::mem::take(&mut self.block);
        let mut new_hits = Vec::new();
        let mut off = 0u64;
        let result = (|| {
            while off < size {
                let want = (size - off).min(block.len() as u64) as usize;
                self.read_exact(&mut block[..want], "file contents")?;
                let chunk = &block[..want];
                if off == 0 && analyse::keeps_text(&path, size) {
                    // A build-configuration file: kept whole for its text.
                    spool = Some(Spool::Memory(Vec::with_capacity(size as usize)));
                } else if off == 0 && has_elf_magic(chunk) {
                    spool = if size <= self.ctx.opts.nar_spool_in_memory {
                        Some(Spool::Memory(Vec::with_capacity(size as usize)))
                    } else {
                        match tempfile::tempfile() {
                            Ok(f) => Some(Spool::Disk(f)),
                            Err(e) => {
                                let problem = EntryProblem::NoSpoolFile(e.to_string());
                                warnings.push(ScanWarning::entry(&path, problem));
                                None
                            }
                        }
                    };
                }
                let before = stream.hits().len();
                stream.feed(chunk);
                new_hits.clear();
                new_hits.extend(stream.hits()[before..].iter().map(|h| h.offset));
                capture.feed(off, chunk, &new_hits);
                match &mut spool {
                    Some(Spool::Memory(v)) => v.extend_from_slice(chunk),
                    Some(Spool::Disk(f)) => {
                        if let Err(e) = f.write_all(chunk) {
                            let problem = EntryProblem::CannotSpool(e.to_string());
                            warnings.push(ScanWarning::entry(&path, problem));
                            spool = None;
                        }
                    }
                    None => {}
                }
                off += want as u64;
            }
            self.padding(size)
        })();
        self.block = block;
        result?;

        let disk;
        let source: &dyn ByteSource = match spool {
            Some(Spool::Memory(ref v)) => v,
            Some(Spool::Disk(f)) => match FileBytes::new(f) {
                Ok(s) => {
                    disk = s;
                    &disk
                }
                Err(e) => {
                    let problem = EntryProblem::CannotRereadSpool(e.to_string());
                    warnings.push(ScanWarning::entry(&path, problem));
                    &capture
                }
            },
            None => &capture,
        };
        let contents = Contents {
            head: capture.head(),
            scan: stream.finish(),
            source: Some(source),
        };
        let o = analyse::regular(&self.ctx, path, executable, size, contents, warnings);
        self.push(o);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::EvidenceKind;
    use crate::scan::tree::tests::{fixture, scanner, H1, H2, SELF};
    use crate::scan::{scan_store_path, Resolver};
    use crate::store::{StoreDir, StorePath};
    use proptest::prelude::*;
    use std::os::unix::ffi::OsStrExt;
    use std::path::PathBuf;
    use std::process::Command;

    fn resolver() -> &'static Resolver<'static> {
        &|p: &[u8]| {
            let p = String::from_utf8_lossy(p);
            p.ends_with("/lib/libfoo.so") && p.contains(H1)
        }
    }

    /// Add a large text file with hashes around block boundaries and, when a C
    /// compiler exists, an ELF program with a RUNPATH, to the fixture.
    fn extend_fixture(root: &Path) {
        let mut big = vec![b'x'; 3 << 20];
        for (i, at) in [(1usize << 20) - 10, (2 << 20) - 32, (2 << 20) + 100, 5]
            .into_iter()
            .enumerate()
        {
            big[at - 1] = b'\n';
            big[at..at + 32].copy_from_slice(if i % 2 == 0 { H1 } else { H2 }.as_bytes());
        }
        std::fs::write(root.join("share/big.txt"), big).unwrap();
        // Building this crate needs a C compiler (rusqlite compiles SQLite): no skip.
        let src = root.join("prog.c");
        std::fs::write(
            &src,
            format!(
                "const char *s = \"/nix/store/{H2}-data/x\";\nint main(void) {{ return s[0]; }}\n"
            ),
        )
        .unwrap();
        let status = Command::new("cc")
            .arg("-o")
            .arg(root.join("bin/prog"))
            .arg(&src)
            .arg(format!(
                "-Wl,-rpath,/nix/store/{H1}-foo/lib:/nix/store/{SELF}-pkg/lib"
            ))
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        std::fs::remove_file(src).unwrap();
        assert!(status, "cc failed");
    }

    fn dir_scan(tmp: &Path, p: &StorePath, opts: &ScanOptions<'_>) -> PathScan {
        scan_store_path(&StoreDir::default(), Some(tmp), p, &scanner(), opts).unwrap()
    }

    fn assert_same(a: &PathScan, b: &PathScan) {
        assert_eq!(a.files.len(), b.files.len());
        for (x, y) in a.files.iter().zip(&b.files) {
            assert_eq!(x, y);
        }
        assert_eq!(a.evidence, b.evidence);
        assert_eq!(a.nar_size, b.nar_size);
    }

    /// The fixture without its non-UTF-8 name (nix-nar's encoder cannot write one), and
    /// its store path's directory.
    fn utf8_fixture() -> (tempfile::TempDir, StorePath, std::path::PathBuf) {
        let (tmp, p) = fixture();
        let root = tmp.path().join("nix/store").join(p.to_string());
        std::fs::remove_file(
            root.join("share")
                .join(std::ffi::OsStr::from_bytes(b"caf\xe9")),
        )
        .unwrap();
        (tmp, p, root)
    }

    /// The texts of build-configuration files are kept alike from a tree and a NAR:
    /// whole, up to the cap; never for a larger file, a symlink, or another file.
    #[test]
    fn config_texts_are_kept_alike_from_tree_and_nar_up_to_the_cap() {
        let (tmp, p, root) = utf8_fixture();
        let cmake = root.join("lib/cmake/pkg");
        std::fs::create_dir_all(&cmake).unwrap();
        let small = format!("set(_IMPORT_PREFIX /nix/store/{SELF}-pkg)\n");
        std::fs::write(cmake.join("pkgConfig.cmake"), &small).unwrap();
        std::fs::write(cmake.join("empty.cmake"), "").unwrap();
        let huge = vec![b'#'; crate::scan::MAX_CONFIG_TEXT as usize + 1];
        std::fs::write(cmake.join("huge.cmake"), &huge).unwrap();
        std::os::unix::fs::symlink("../../pkgconfig/pkg.pc", cmake.join("link.pc")).unwrap();
        let mut nar = Vec::new();
        let mut enc = nix_nar::Encoder::new(&root).unwrap();
        io::copy(&mut enc, &mut nar).unwrap();
        let opts = ScanOptions::default();
        let from_dir = dir_scan(tmp.path(), &p, &opts);
        let from_nar = scan_nar(&nar[..], "test.nar", None, &scanner(), &opts).unwrap();
        assert_same(&from_dir, &from_nar);
        let kept: Vec<(String, Vec<u8>)> = from_nar
            .files
            .iter()
            .filter_map(|f| Some((f.path.to_string(), f.config_text.clone()?)))
            .collect();
        assert_eq!(
            kept,
            [
                ("lib/cmake/pkg/empty.cmake".to_string(), Vec::new()),
                (
                    "lib/cmake/pkg/pkgConfig.cmake".to_string(),
                    small.into_bytes()
                ),
                (
                    "lib/pkgconfig/pkg.pc".to_string(),
                    format!("prefix=/nix/store/{SELF}-pkg\n").into_bytes()
                ),
            ]
        );
    }

    #[test]
    fn nar_from_nix_nar_encoder_matches_directory() {
        let (tmp, p, root) = utf8_fixture();
        extend_fixture(&root);
        let mut nar = Vec::new();
        let mut enc = nix_nar::Encoder::new(&root).unwrap();
        io::copy(&mut enc, &mut nar).unwrap();

        let opts = ScanOptions {
            resolver: Some(resolver()),
            ..ScanOptions::default()
        };
        let logical = format!("/nix/store/{p}");
        let from_dir = dir_scan(tmp.path(), &p, &opts);
        let from_nar = scan_nar(&nar[..], "test.nar", Some(&logical), &scanner(), &opts).unwrap();
        assert_same(&from_dir, &from_nar);
        assert_eq!(from_nar.nar_size, Some(nar.len() as u64));
        assert!(from_dir.warnings.is_empty(), "{:?}", from_dir.warnings);

        // The big file: hits across 1 MiB blocks, details read back through the capture.
        let big: Vec<_> = from_nar
            .evidence
            .iter()
            .map(|(_, e)| e)
            .filter(|e| e.file.as_bytes() == b"share/big.txt")
            .collect();
        assert_eq!(big.len(), 4);
        assert!(big.iter().all(|e| e.kind == EvidenceKind::Text));
        let around = big[1].detail.around();
        assert!(around.starts_with(H1.as_bytes()), "{}", big[1].detail);

        // The ELF file, if built: RUNPATH entries resolved the same way.
        if let Some((_, e)) = from_nar
            .evidence
            .iter()
            .find(|(_, e)| e.file.as_bytes() == b"bin/prog")
        {
            let kinds: Vec<_> = from_nar
                .evidence
                .iter()
                .filter(|(_, x)| x.file.as_bytes() == b"bin/prog")
                .map(|(candidate, x)| (x.kind, *candidate))
                .collect();
            assert!(
                kinds.contains(&(EvidenceKind::ElfRunpathUnused, 0)),
                "{kinds:?}"
            );
            assert!(
                kinds.contains(&(EvidenceKind::ElfRunpathUnused, 2)),
                "{kinds:?}"
            );
            assert!(kinds.contains(&(EvidenceKind::ElfString, 1)), "{kinds:?}");
            assert_eq!(e.file.as_bytes(), b"bin/prog");
        }

        // ELF spooled to disk instead of memory: same answer.
        let disk = ScanOptions {
            nar_spool_in_memory: 0,
            read_block: 4096,
            ..opts
        };
        let from_disk = scan_nar(&nar[..], "t", Some(&logical), &scanner(), &disk).unwrap();
        assert_same(&from_dir, &from_disk);
    }

    fn small_nar() -> (tempfile::TempDir, Vec<u8>) {
        let (tmp, p) = fixture();
        let root = tmp.path().join("nix/store").join(p.to_string());
        std::fs::remove_file(
            root.join("share")
                .join(std::ffi::OsStr::from_bytes(b"caf\xe9")),
        )
        .unwrap();
        let mut nar = Vec::new();
        io::copy(&mut nix_nar::Encoder::new(&root).unwrap(), &mut nar).unwrap();
        (tmp, nar)
    }

    fn write(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, data).unwrap();
        p
    }

    #[test]
    fn compressed_nars_give_the_same_scan() {
        let (tmp, nar) = small_nar();
        let opts = ScanOptions::default();
        let raw = scan_nar(&nar[..], "raw", None, &scanner(), &opts).unwrap();
        let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 1);
        xz.write_all(&nar).unwrap();
        let xz = xz.finish().unwrap();
        let zst = zstd::encode_all(&nar[..], 1).unwrap();
        let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
        bz.write_all(&nar).unwrap();
        let bz = bz.finish().unwrap();
        for (name, data, c) in [
            ("a.nar", &nar, Compression::None),
            ("a.nar.xz", &xz, Compression::Xz),
            ("a.nar.zst", &zst, Compression::Zstd),
            ("a.nar.bz2", &bz, Compression::Bzip2),
        ] {
            let f = write(tmp.path(), name, data);
            assert_eq!(open_nar(&f).unwrap().1, c);
            let s = scan_nar_file(&f, None, &scanner(), &opts).unwrap();
            assert_same(&raw, &s);
        }
    }

    #[test]
    fn truncated_nar_is_an_error_naming_the_entry() {
        let (_tmp, nar) = small_nar();
        let opts = ScanOptions::default();
        for cut in (0..nar.len()).step_by(3) {
            let e = scan_nar(&nar[..cut], "cut.nar", None, &scanner(), &opts).unwrap_err();
            let msg = e.to_string();
            assert!(msg.starts_with("`cut.nar`: truncated NAR"), "{msg}");
        }
        // A cut inside the manifest's contents names that file.
        let at = memchr::memmem::find(&nar, b"/build/").unwrap() + 3;
        let e = scan_nar(&nar[..at], "cut.nar", None, &scanner(), &opts).unwrap_err();
        assert!(
            e.to_string()
                .contains("entry `lib/rocblas/library/TensileManifest.txt`"),
            "{e}"
        );
    }

    #[test]
    fn truncated_or_corrupt_compressed_streams_are_errors() {
        let (tmp, nar) = small_nar();
        let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 1);
        xz.write_all(&nar).unwrap();
        let xz = xz.finish().unwrap();
        let zst = zstd::encode_all(&nar[..], 1).unwrap();
        let opts = ScanOptions::default();
        for (name, data) in [("t.nar.xz", &xz), ("t.nar.zst", &zst)] {
            for cut in [data.len() / 2, data.len() - 4, 12] {
                let f = write(tmp.path(), name, &data[..cut]);
                let e = scan_nar_file(&f, None, &scanner(), &opts).unwrap_err();
                assert!(e.to_string().contains(name), "{e}");
            }
            let mut bad = data.clone();
            let mid = bad.len() / 2;
            for b in &mut bad[mid..mid + 16] {
                *b ^= 0x5a;
            }
            let f = write(tmp.path(), name, &bad);
            let e = scan_nar_file(&f, None, &scanner(), &opts).unwrap_err();
            assert!(e.to_string().contains(name), "{e}");
        }
        let f = write(tmp.path(), "x.nar.gz", &[0x1f, 0x8b, 8, 0]);
        assert!(open_nar(&f).is_err());
        let f = write(tmp.path(), "empty.nar", b"");
        assert!(open_nar(&f).is_err());
    }

    #[test]
    fn unsorted_or_bad_names_are_rejected() {
        fn s(v: &mut Vec<u8>, t: &[u8]) {
            v.extend_from_slice(&(t.len() as u64).to_le_bytes());
            v.extend_from_slice(t);
            v.resize(v.len().div_ceil(8) * 8, 0);
        }
        let nar_with = |names: &[&[u8]]| {
            let mut v = Vec::new();
            for t in [&b"nix-archive-1"[..], b"(", b"type", b"directory"] {
                s(&mut v, t);
            }
            for n in names {
                for t in [
                    &b"entry"[..],
                    b"(",
                    b"name",
                    n,
                    b"node",
                    b"(",
                    b"type",
                    b"symlink",
                ] {
                    s(&mut v, t);
                }
                for t in [&b"target"[..], b"x", b")", b")"] {
                    s(&mut v, t);
                }
            }
            s(&mut v, b")");
            v
        };
        let opts = ScanOptions::default();
        let ok = scan_nar(&nar_with(&[b"a", b"b"])[..], "n", None, &scanner(), &opts).unwrap();
        assert_eq!(ok.files.len(), 3);
        assert_eq!(ok.nar_size, Some(nar_size(&ok.files)));
        for bad in [
            &[&b"b"[..], b"a"][..],
            &[b"a", b"a"],
            &[b".."],
            &[b"a/b"],
            &[b""],
        ] {
            let e = scan_nar(&nar_with(bad)[..], "n", None, &scanner(), &opts).unwrap_err();
            assert!(e.to_string().contains("corrupt NAR"), "{e}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn mutated_nar_never_panics(
            muts in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        ) {
            static NAR: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
            let nar = NAR.get_or_init(|| small_nar().1);
            let mut b = nar.clone();
            for (i, v) in muts {
                let i = i.index(b.len());
                b[i] = v;
            }
            let _ = scan_nar(&b[..], "m", None, &scanner(), &ScanOptions::default());
        }
    }
}
