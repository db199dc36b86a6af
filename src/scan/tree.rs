//! Walking one store path on disk the way Nix serialises it: `lstat` every entry, never
//! follow a symlink (its target is scanned as a string), list directories in byte order
//! of their names, scan entry names too. Regular files are then scanned in parallel
//! (rayon), read in large blocks and classified through `super::analyse`.
//!
//! The store path lives at `<store root>/<store dir>/<hash>-<name>`; nothing outside it
//! is opened, except that the default library resolver checks whether
//! `<store root>/<absolute path>` exists. FIFOs, sockets and devices are skipped with a
//! warning and never opened (opening a FIFO would block).

use std::ffi::OsString;
use std::fs::{self, File, Metadata};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::classify::text::TEXT_SNIFF_LEN;
use crate::elf::{ByteSource, FileBytes};
use crate::store::{StoreDir, StorePath};

use super::analyse::{self, Contents, Context, Outcome};
use super::nar::nar_size;
use super::{
    EntryProblem, PathScan, ReferenceScanner, RelPath, Resolver, ScanError, ScanOptions,
    ScanWarning,
};

enum Kind {
    Directory,
    File { executable: bool, size: u64 },
    Symlink(Vec<u8>),
}

struct Entry {
    path: RelPath,
    physical: PathBuf,
    kind: Kind,
}

/// Where a logical absolute path is on disk.
pub(crate) fn physical(store_root: Option<&Path>, logical: &str) -> PathBuf {
    crate::store::physical_path(store_root, logical)
}

pub(crate) fn scan_tree(
    store_dir: &StoreDir,
    store_root: Option<&Path>,
    path: &StorePath,
    scanner: &ReferenceScanner,
    opts: &ScanOptions<'_>,
) -> Result<PathScan, ScanError> {
    let logical_root = store_dir.display(path);
    let root = physical(store_root, &logical_root);
    let fs_resolver = |abs: &[u8]| match std::str::from_utf8(abs) {
        Ok(abs) => physical(store_root, abs).exists(),
        Err(_) => false,
    };
    let resolver: &Resolver<'_> = match opts.resolver {
        Some(r) => r,
        None => &fs_resolver,
    };
    scan_tree_at(&root, &logical_root, Some(resolver), scanner, opts)
}

/// Walk the tree at `root` (physically), which serialises the store path
/// `logical_root`; `resolver` answers whether libraries exist (none: RUNPATH entries
/// stay unchecked).
pub(crate) fn scan_tree_at(
    root: &Path,
    logical_root: &str,
    resolver: Option<&Resolver<'_>>,
    scanner: &ReferenceScanner,
    opts: &ScanOptions<'_>,
) -> Result<PathScan, ScanError> {
    let meta = fs::symlink_metadata(root).map_err(|source| ScanError::Root {
        path: root.display().to_string(),
        source,
    })?;
    let mut walk = Walk::default();
    walk.collect(root.to_path_buf(), RelPath::root(), &meta);

    let ctx = Context {
        scanner,
        opts,
        logical_root: Some(logical_root),
        resolver,
    };
    let outcomes: Vec<Outcome> = walk
        .entries
        .into_par_iter()
        .map(|e| analyse_entry(&ctx, e))
        .collect();

    let mut scan = PathScan {
        warnings: walk.warnings,
        ..PathScan::default()
    };
    for o in outcomes {
        scan.files.push(o.file);
        scan.evidence.extend(o.evidence);
        scan.warnings.extend(o.warnings);
    }
    scan.nar_size = walk.complete.then(|| nar_size(&scan.files));
    Ok(scan)
}

struct Walk {
    entries: Vec<Entry>,
    warnings: Vec<ScanWarning>,
    /// Whether every entry could be listed (so the NAR size is exact).
    complete: bool,
}

impl Default for Walk {
    fn default() -> Self {
        Walk {
            entries: Vec::new(),
            warnings: Vec::new(),
            complete: true,
        }
    }
}

impl Walk {
    fn warn(&mut self, path: &RelPath, problem: EntryProblem) {
        self.warnings.push(ScanWarning::entry(path, problem));
        self.complete = false;
    }

    /// Every entry under `physical` in NAR order (pre-order, names sorted by bytes),
    /// with an explicit stack: a tree of any depth is walked without recursion.
    fn collect(&mut self, physical: PathBuf, path: RelPath, meta: &Metadata) {
        let mut stack: Vec<(PathBuf, RelPath, Metadata)> = vec![(physical, path, meta.clone())];
        while let Some((physical, path, meta)) = stack.pop() {
            let ft = meta.file_type();
            if ft.is_symlink() {
                match fs::read_link(&physical) {
                    Ok(t) => self.entries.push(Entry {
                        path,
                        physical,
                        kind: Kind::Symlink(t.into_os_string().into_encoded_bytes()),
                    }),
                    Err(e) => self.warn(&path, EntryProblem::CannotReadSymlink(e.to_string())),
                }
            } else if ft.is_file() {
                // Nix records the owner's execute bit.
                let executable = meta.permissions().mode() & 0o100 != 0;
                self.entries.push(Entry {
                    path,
                    physical,
                    kind: Kind::File {
                        executable,
                        size: meta.len(),
                    },
                });
            } else if ft.is_dir() {
                self.entries.push(Entry {
                    path: path.clone(),
                    physical: physical.clone(),
                    kind: Kind::Directory,
                });
                let mut names: Vec<OsString> = match fs::read_dir(&physical) {
                    Ok(rd) => {
                        let mut names = Vec::new();
                        for e in rd {
                            match e {
                                Ok(e) => names.push(e.file_name()),
                                Err(e) => self.warn(&path, EntryProblem::CannotList(e.to_string())),
                            }
                        }
                        names
                    }
                    Err(e) => {
                        self.warn(&path, EntryProblem::CannotListDirectory(e.to_string()));
                        continue;
                    }
                };
                names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
                let mut children = Vec::with_capacity(names.len());
                for name in names {
                    let child = physical.join(&name);
                    let child_path = path.join(name.as_bytes());
                    match fs::symlink_metadata(&child) {
                        Ok(m) => children.push((child, child_path, m)),
                        Err(e) => self.warn(&child_path, EntryProblem::CannotStat(e.to_string())),
                    }
                }
                // Reversed, so that the first name is walked next.
                stack.extend(children.into_iter().rev());
            } else {
                let what = special_kind(&meta);
                let what = what.to_string();
                self.warn(&path, EntryProblem::Special { what });
            }
        }
    }
}

fn special_kind(meta: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let ft = meta.file_type();
    if ft.is_fifo() {
        "FIFO"
    } else if ft.is_socket() {
        "socket"
    } else if ft.is_block_device() {
        "block device"
    } else if ft.is_char_device() {
        "character device"
    } else {
        "special file"
    }
}

fn analyse_entry(ctx: &Context<'_>, e: Entry) -> Outcome {
    match e.kind {
        Kind::Directory => analyse::directory(ctx, e.path),
        Kind::Symlink(target) => analyse::symlink(ctx, e.path, target),
        Kind::File { executable, size } => {
            let mut warnings = Vec::new();
            let opened = File::open(&e.physical).and_then(FileBytes::new);
            let src = match opened {
                Ok(s) => Some(s),
                Err(err) => {
                    let problem = EntryProblem::CannotOpen(err.to_string());
                    warnings.push(ScanWarning::entry(&e.path, problem));
                    None
                }
            };
            let mut head = Vec::new();
            let mut stream = ctx.scanner.stream();
            if let (Some(src), true) = (&src, ctx.scanner.is_empty()) {
                // Nothing to look for (an inventory): the first bytes are all the class
                // rules read; ELF facts and bundle headers are read where they lie.
                match src.read_vec(0, TEXT_SNIFF_LEN) {
                    Ok(h) => head = h,
                    Err(err) => warnings.push(ScanWarning::entry(
                        &e.path,
                        EntryProblem::ReadError {
                            offset: 0,
                            error: err.to_string(),
                        },
                    )),
                }
            } else if let Some(src) = &src {
                // Small files get small buffers: no 1 MiB allocation per tiny file.
                let want = usize::try_from(size)
                    .unwrap_or(usize::MAX)
                    .saturating_add(1);
                let mut buf = vec![0u8; want.clamp(4096, ctx.opts.read_block.max(4096))];
                let mut off = 0u64;
                loop {
                    match src.read_at(off, &mut buf) {
                        Ok(0) => break,
                        Ok(n) => {
                            let chunk = &buf[..n];
                            if head.len() < TEXT_SNIFF_LEN {
                                let take = (TEXT_SNIFF_LEN - head.len()).min(n);
                                head.extend_from_slice(&chunk[..take]);
                            }
                            stream.feed(chunk);
                            off += n as u64;
                        }
                        Err(err) => {
                            warnings.push(ScanWarning::entry(
                                &e.path,
                                EntryProblem::ReadError {
                                    offset: off,
                                    error: err.to_string(),
                                },
                            ));
                            break;
                        }
                    }
                }
            }
            let contents = Contents {
                head: &head,
                scan: stream.finish(),
                source: src.as_ref().map(|s| s as &dyn ByteSource),
            };
            analyse::regular(ctx, e.path, executable, size, contents, warnings)
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::classify::{EvidenceKind, RuleId};
    use crate::scan::{FileType, Location};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::symlink;

    pub(crate) const H1: &str = "9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq";
    pub(crate) const H2: &str = "rkz1zgkx4k4bqgaikd33db8p6pd7q5np";
    pub(crate) const SELF: &str = "w85x1bxgbd6zb0k2rmawr4cs5mlgrkaq";

    pub(crate) fn scanner() -> ReferenceScanner {
        ReferenceScanner::from_hashes([H1, H2, SELF].map(|h| {
            let mut a = [0u8; 32];
            a.copy_from_slice(h.as_bytes());
            a
        }))
    }

    /// A store `<tmp>/nix/store/<SELF>-pkg` with one of each kind of entry; returns the
    /// temp dir (the store root) and the store path.
    pub(crate) fn fixture() -> (tempfile::TempDir, StorePath) {
        let tmp = tempfile::tempdir().unwrap();
        let base = format!("{SELF}-pkg");
        let root = tmp.path().join("nix/store").join(&base);
        let w = |rel: &str, data: &[u8]| {
            let p = root.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, data).unwrap();
        };
        w(
            "bin/run",
            format!("#!/nix/store/{H1}-bash/bin/sh\nexec /nix/store/{H2}-x/bin/y\n").as_bytes(),
        );
        fs::set_permissions(root.join("bin/run"), fs::Permissions::from_mode(0o755)).unwrap();
        w(
            "share/doc/pkg/README",
            format!("see /nix/store/{H2}-docs\n").as_bytes(),
        );
        w(
            "lib/pkgconfig/pkg.pc",
            format!("prefix=/nix/store/{SELF}-pkg\n").as_bytes(),
        );
        let mut bin = vec![0u8, 1, 2, 3];
        bin.extend_from_slice(H1.as_bytes());
        bin.extend_from_slice(&[0xff; 40]);
        w("lib/data.bin", &bin);
        w(&format!("share/{H2}-named"), b"plain");
        w(
            "lib/rocblas/library/TensileManifest.txt",
            format!("/build/{H1}\n").as_bytes(),
        );
        symlink(
            format!("/nix/store/{H1}-other/lib/libz.so"),
            root.join("lib/libz.so"),
        )
        .unwrap();
        symlink("nowhere", root.join("lib/dangling")).unwrap();
        symlink("loop", root.join("lib/loop")).unwrap();
        let bad = std::ffi::OsStr::from_bytes(b"caf\xe9");
        fs::write(root.join("share").join(bad), format!("x {H1}").as_bytes()).unwrap();
        (tmp, StorePath::from_base_name(&base).unwrap())
    }

    fn scan(tmp: &Path, p: &StorePath) -> PathScan {
        scan_tree(
            &StoreDir::default(),
            Some(tmp),
            p,
            &scanner(),
            &ScanOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn walks_in_nar_order_with_every_kind() {
        let (tmp, p) = fixture();
        let s = scan(tmp.path(), &p);
        let paths: Vec<String> = s.files.iter().map(|f| f.path.to_string()).collect();
        assert_eq!(paths[0], "");
        // NAR order: pre-order, siblings in byte order of their names.
        let components = |f: &crate::scan::FileScan| -> Vec<Vec<u8>> {
            f.path
                .as_bytes()
                .split(|&b| b == b'/')
                .map(<[u8]>::to_vec)
                .collect()
        };
        for w in s.files.windows(2) {
            assert!(
                components(&w[0]) < components(&w[1]),
                "{:?} {:?}",
                w[0].path,
                w[1].path
            );
        }
        assert!(paths.contains(&"share/caf\\xe9".to_string()), "{paths:?}");
        let kind_of = |file: &str| -> Vec<(EvidenceKind, &str)> {
            s.evidence
                .iter()
                .map(|(_, e)| e)
                .filter(|e| e.file.to_string() == file)
                .map(|e| (e.kind, e.kind_rule.as_str()))
                .collect()
        };
        use EvidenceKind as K;
        assert_eq!(
            kind_of("bin/run"),
            vec![(K::Script, "shebang"), (K::Script, "shebang")]
        );
        assert_eq!(
            kind_of("share/doc/pkg/README"),
            vec![(K::Doc, "doc-directory")]
        );
        assert_eq!(
            kind_of("lib/pkgconfig/pkg.pc"),
            vec![(K::BuildConfig, "pkg-config")]
        );
        assert_eq!(kind_of("lib/data.bin"), vec![(K::Binary, "binary")]);
        assert_eq!(
            kind_of(&format!("share/{H2}-named")),
            vec![(K::FileName, "entry-name")]
        );
        assert_eq!(
            kind_of("lib/rocblas/library/TensileManifest.txt"),
            vec![(K::Manifest, "manifest-file")]
        );
        assert_eq!(kind_of("lib/libz.so"), vec![(K::Symlink, "symlink-target")]);
        assert_eq!(kind_of("share/caf\\xe9"), vec![(K::Text, "text")]);
        let run = s
            .files
            .iter()
            .find(|f| f.path.as_bytes() == b"bin/run")
            .unwrap();
        assert_eq!(run.file_type, FileType::Executable);
        let facts: Vec<&crate::scan::HitFact> = s.evidence.iter().map(|(_, e)| e).collect();
        let script = facts
            .iter()
            .find(|e| e.file.as_bytes() == b"bin/run")
            .unwrap();
        assert_eq!(
            script.detail.to_string(),
            format!("#!/nix/store/{H1}-bash/bin/sh")
        );
        assert_eq!(script.location, Location::Contents { offset: 13 });
        let bin = facts.iter().find(|e| e.kind == K::Binary).unwrap();
        assert_eq!(bin.location, Location::Contents { offset: 4 });
        assert!(
            bin.detail.around().starts_with(b"\x00\x01\x02\x03"),
            "{}",
            bin.detail
        );
        let named = facts.iter().find(|e| e.kind == K::FileName).unwrap();
        assert_eq!(named.location, Location::FileName { offset: 0 });
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert_eq!(s.referenced(), vec![0, 1, 2]);
        assert!(s.nar_size.is_some());
        // Dangling and looping symlinks are plain entries.
        for l in ["lib/dangling", "lib/loop"] {
            let f = s.files.iter().find(|f| f.path.to_string() == l).unwrap();
            assert_eq!(f.file_type, FileType::Symlink);
        }
    }

    #[test]
    fn fifo_is_skipped_without_opening() {
        let (tmp, p) = fixture();
        let fifo = tmp
            .path()
            .join("nix/store")
            .join(p.to_string())
            .join("lib/pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(made, "mkfifo (coreutils) failed");
        let s = scan(tmp.path(), &p);
        assert!(
            s.warnings.iter().any(
                |w| matches!(w, ScanWarning::Entry { file, problem: EntryProblem::Special { what } }
                    if file.as_bytes() == b"lib/pipe" && what == "FIFO")
            ),
            "{:?}",
            s.warnings
        );
        assert!(s.files.iter().all(|f| f.path.to_string() != "lib/pipe"));
        assert_eq!(s.nar_size, None);
    }

    #[test]
    fn unreadable_file_is_a_warning() {
        let (tmp, p) = fixture();
        let f = tmp
            .path()
            .join("nix/store")
            .join(p.to_string())
            .join("lib/secret");
        fs::write(&f, H1).unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o000)).unwrap();
        let s = scan(tmp.path(), &p);
        // As root the read succeeds; otherwise it is a warning. Either way, no abort.
        let file = s
            .files
            .iter()
            .find(|x| x.path.to_string() == "lib/secret")
            .unwrap();
        if file.hits.is_empty() {
            assert!(s.warnings.iter().any(
                |w| matches!(w, ScanWarning::Entry { file, problem: EntryProblem::CannotOpen(_) }
                    if file.as_bytes() == b"lib/secret")
            ));
        }
        // The error path itself: a file that vanished between listing and reading.
        let e = Entry {
            path: RelPath::from_bytes("gone"),
            physical: tmp.path().join("does-not-exist"),
            kind: Kind::File {
                executable: false,
                size: 3,
            },
        };
        let sc = scanner();
        let opts = ScanOptions::default();
        let ctx = Context {
            scanner: &sc,
            opts: &opts,
            logical_root: None,
            resolver: None,
        };
        let o = analyse_entry(&ctx, e);
        assert!(
            matches!(&o.warnings[0], ScanWarning::Entry { file, problem: EntryProblem::CannotOpen(_) }
                if file.as_bytes() == b"gone"),
            "{:?}",
            o.warnings
        );
        assert!(o.file.hits.is_empty());
    }

    #[test]
    fn malformed_elf_falls_back_to_binary_with_a_warning() {
        let (tmp, p) = fixture();
        let root = tmp.path().join("nix/store").join(p.to_string());
        let mut bytes = b"\x7fELF\x09\x09\x01\0\0\0".to_vec();
        bytes.extend_from_slice(H1.as_bytes());
        fs::write(root.join("lib/broken.so"), bytes).unwrap();
        let s = scan(tmp.path(), &p);
        let (_, e) = s
            .evidence
            .iter()
            .find(|(_, e)| e.file.as_bytes() == b"lib/broken.so")
            .unwrap();
        assert_eq!(
            (e.kind, e.kind_rule),
            (EvidenceKind::Binary, RuleId::new("binary"))
        );
        assert!(
            s.warnings.iter().any(
                |w| matches!(w, ScanWarning::Entry { file, problem: EntryProblem::NotElf(_) }
                    if file.as_bytes() == b"lib/broken.so")
            ),
            "{:?}",
            s.warnings
        );
        let f = s
            .files
            .iter()
            .find(|f| f.path.as_bytes() == b"lib/broken.so")
            .unwrap();
        assert!(f.is_elf && f.elf.is_none());
    }

    #[test]
    fn elf_facts_always_reads_files_without_hits() {
        let (tmp, p) = fixture();
        let root = tmp.path().join("nix/store").join(p.to_string());
        // Any ELF file without candidate hashes will do (not the test binary: it holds
        // the hashes as constants).
        fs::copy("/bin/true", root.join("bin/tool")).expect("copy /bin/true (coreutils)");
        let sc = scanner();
        let run = |when| {
            let opts = ScanOptions {
                elf_facts: when,
                ..ScanOptions::default()
            };
            scan_tree(&StoreDir::default(), Some(tmp.path()), &p, &sc, &opts).unwrap()
        };
        let find = |s: &PathScan| {
            s.files
                .iter()
                .find(|f| f.path.as_bytes() == b"bin/tool")
                .map(|f| (f.is_elf, f.elf.is_some()))
        };
        assert_eq!(
            find(&run(crate::scan::ElfFactsWhen::WithHits)),
            Some((true, false))
        );
        assert_eq!(
            find(&run(crate::scan::ElfFactsWhen::Always)),
            Some((true, true))
        );
    }

    #[test]
    fn missing_store_path_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let p = StorePath::from_base_name(&format!("{SELF}-nothing")).unwrap();
        let e = scan_tree(
            &StoreDir::default(),
            Some(tmp.path()),
            &p,
            &scanner(),
            &ScanOptions::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("-nothing"), "{e}");
    }

    #[test]
    fn single_file_and_symlink_store_paths() {
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("nix/store");
        fs::create_dir_all(&store).unwrap();
        fs::write(store.join(format!("{SELF}-file")), H2).unwrap();
        symlink(
            format!("/nix/store/{H1}-x"),
            store.join(format!("{SELF}-link")),
        )
        .unwrap();
        let f = StorePath::from_base_name(&format!("{SELF}-file")).unwrap();
        let s = scan(tmp.path(), &f);
        assert_eq!(s.files.len(), 1);
        assert_eq!(s.evidence[0].1.location, Location::Contents { offset: 0 });
        let l = StorePath::from_base_name(&format!("{SELF}-link")).unwrap();
        let s = scan(tmp.path(), &l);
        assert_eq!(s.evidence[0].1.kind, EvidenceKind::Symlink);
        assert_eq!(
            s.evidence[0].1.location,
            Location::SymlinkTarget { offset: 11 }
        );
    }
}

#[cfg(test)]
mod deep_tests {
    use super::tests::{scanner, H1};
    use super::*;
    use crate::scan::scan_store_path;

    /// Issue 8.17: a 2,000-level directory stopped at about 1,024 levels with a
    /// 2,106-character warning, and the hash at the bottom went unseen. The walk is
    /// iterative now: every level is serialised, the hit is found, nothing is warned.
    #[test]
    fn a_two_thousand_level_directory_is_walked_to_the_bottom() {
        let tmp = tempfile::tempdir().unwrap();
        let base = format!("{}-deep", super::tests::SELF);
        let top = tmp.path().join("nix/store").join(&base);
        let mut dir = top.clone();
        for _ in 0..2000 {
            dir.push("d");
        }
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("f"), format!("/nix/store/{H1}-x\n")).unwrap();
        let p = StorePath::from_base_name(&base).unwrap();
        let s = scan_store_path(
            &StoreDir::default(),
            Some(tmp.path()),
            &p,
            &scanner(),
            &ScanOptions::default(),
        )
        .unwrap();
        assert!(
            s.warnings.is_empty(),
            "{:?}",
            &s.warnings[..1.min(s.warnings.len())]
        );
        assert_eq!(
            s.files.len(),
            1 + 2000 + 1,
            "the top, 2,000 directories and the file"
        );
        assert_eq!(s.evidence.len(), 1);
        assert!(s.evidence[0].1.file.as_bytes().ends_with(b"/d/f"));
        assert!(s.nar_size.is_some(), "the walk is complete");
    }
}
