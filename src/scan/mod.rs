//! Scanning one store path for references, with file-level evidence.
//!
//! [`ReferenceScanner`] finds candidate hashes in bytes the way Nix does. The walkers
//! serialise a store path the way Nix does before scanning it, file contents, symlink
//! targets and entry names in NAR order, either from disk ([`scan_store_path`]) or from
//! a NAR stream ([`scan_nar`], [`scan_nar_file`]), and give identical [`PathScan`]s for
//! the same tree. Each hit becomes a [`HitFact`] with a kind: ELF files with hits are
//! analysed by `crate::elf`, everything else by the rules of `crate::classify::file_rules`.
//!
//! Problems with single files (unreadable, special, malformed ELF) are warnings in the
//! [`PathScan`]; only an unreadable top level or a corrupt NAR is a [`ScanError`].

mod analyse;
mod capture;
mod facts;
mod nar;
mod rel_path;
mod scanner;
mod tree;
mod warning;

pub use rel_path::RelPath;

pub use facts::{
    is_config_file, ElfFactsWhen, FileScan, FileType, HitFact, IndexFile, LocatedHit, Location,
    PathScan, Resolver, ScanError, ScanOptions, HEAD_LEN, MAX_CONFIG_TEXT,
};

use std::path::Path;

use crate::source::PathFiles;
use crate::store::{StoreDir, StorePath};

pub use nar::{nar_size, scan_nar, scan_nar_file};
pub use scanner::{
    HashMatch, ReferenceScanner, ScanStream, StreamResult, DEFAULT_MAX_HITS_PER_FILE,
};
pub use warning::{EntryProblem, ScanWarning};

/// Scan the files a [`crate::source::FileSource`] handed out for the store path whose
/// full logical path is `logical_root`. Trees use `opts.resolver` (none: RUNPATH entries
/// stay unchecked), NAR streams likewise.
pub fn scan_path_files(
    files: PathFiles,
    logical_root: &str,
    scanner: &ReferenceScanner,
    opts: &ScanOptions<'_>,
) -> Result<PathScan, ScanError> {
    match files {
        PathFiles::Tree { physical } => {
            tree::scan_tree_at(&physical, logical_root, opts.resolver, scanner, opts)
        }
        PathFiles::Nar {
            label,
            compression,
            reader,
        } => nar::scan_nar_stream(
            reader,
            &label,
            compression,
            Some(logical_root),
            scanner,
            opts,
        ),
    }
}

/// Scan the store path `path` of `store_dir`, whose files are at
/// `<store_root>/<store_dir>/<hash>-<name>` (no store root: the real store directory).
/// Symlinks are never followed; FIFOs, sockets and devices are skipped with a warning.
pub fn scan_store_path(
    store_dir: &StoreDir,
    store_root: Option<&Path>,
    path: &StorePath,
    scanner: &ReferenceScanner,
    opts: &ScanOptions<'_>,
) -> Result<PathScan, ScanError> {
    tree::scan_tree(store_dir, store_root, path, scanner, opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::os::unix::ffi::OsStrExt;
    use std::process::Command;

    /// (path, narSize, references) of every valid path, from `nix-store --dump-db`.
    fn local_db() -> Option<Vec<(String, u64, Vec<String>)>> {
        let out = Command::new("nix-store").arg("--dump-db").output().ok()?;
        if !out.status.success() {
            return None;
        }
        let text = String::from_utf8(out.stdout).ok()?;
        let mut lines = text.lines();
        let mut db = Vec::new();
        while let Some(path) = lines.next() {
            let _hash = lines.next()?;
            let size = lines.next()?.parse().ok()?;
            let _deriver = lines.next()?;
            let n: usize = lines.next()?.parse().ok()?;
            let refs = (0..n)
                .map(|_| lines.next().map(str::to_string))
                .collect::<Option<_>>()?;
            db.push((path.to_string(), size, refs));
        }
        Some(db)
    }

    /// Ground truth: for every built path in the local store, the scan finds every
    /// reference Nix registered, the NAR size equals Nix's, and the NAR path (through
    /// `nix-store --dump`) gives the same scan as the directory. Run with
    /// `cargo test --lib agrees_with_local_nix -- --ignored`.
    #[test]
    #[ignore = "needs a local Nix store"]
    fn agrees_with_local_nix_store() {
        let Some(db) = local_db() else {
            eprintln!("skipping: no `nix-store --dump-db`");
            return;
        };
        let sd = StoreDir::default();
        let all: Vec<StorePath> = db
            .iter()
            .filter_map(|(p, _, _)| sd.parse_path(p).ok())
            .collect();
        let scanner = ReferenceScanner::new(&all);
        let opts = ScanOptions::default();
        // The same resolver for both walkers, so that runpath kinds can be compared.
        let on_disk = |abs: &[u8]| Path::new(std::ffi::OsStr::from_bytes(abs)).exists();
        let fs_opts = ScanOptions {
            resolver: Some(&on_disk),
            ..ScanOptions::default()
        };
        let mut kinds = std::collections::BTreeMap::new();
        let mut checked = 0;
        let mut extra = Vec::new();
        for (p, size, refs) in &db {
            if p.ends_with(".drv") {
                continue;
            }
            let sp = sd.parse_path(p).unwrap();
            let scan = scan_store_path(&sd, None, &sp, &scanner, &opts).unwrap();
            let found: BTreeSet<String> = scan
                .referenced()
                .into_iter()
                .map(|c| sd.display(&all[c as usize]))
                .collect();
            let registered: BTreeSet<String> = refs.iter().cloned().collect();
            let missing: Vec<_> = registered.difference(&found).collect();
            assert!(
                missing.is_empty(),
                "{p}: Nix registered {missing:?}, not found"
            );
            extra.extend(found.difference(&registered).map(|e| format!("{p} -> {e}")));
            assert_eq!(scan.nar_size, Some(*size), "{p}: NAR size");
            let dump = Command::new("nix-store")
                .arg("--dump")
                .arg(p)
                .output()
                .unwrap();
            let from_nar = scan_nar(&dump.stdout[..], p, Some(p), &scanner, &fs_opts).unwrap();
            let from_dir = scan_store_path(&sd, None, &sp, &scanner, &fs_opts).unwrap();
            assert_eq!(from_nar.files, from_dir.files, "{p}");
            assert_eq!(from_nar.evidence, from_dir.evidence, "{p}");
            for (_, e) in &from_dir.evidence {
                *kinds.entry(e.kind.as_str()).or_insert(0usize) += 1;
            }
            checked += 1;
        }
        eprintln!("checked {checked} store paths; found but not registered: {extra:#?}");
        eprintln!("evidence kinds: {kinds:?}");
        assert!(checked > 0);
    }
}
