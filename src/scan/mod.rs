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
mod nar;
mod scanner;
mod tree;
mod warning;

use std::fmt;
use std::io;
use std::path::Path;

use crate::classify::text::escape_bytes;
use crate::classify::{EvidenceKind, HitDetail, Region, RuleId};
use crate::elf::ElfFacts;
use crate::source::PathFiles;
use crate::store::{StoreDir, StorePath};

pub use nar::{nar_size, scan_nar, scan_nar_file};
pub use scanner::{
    HashMatch, ReferenceScanner, ScanStream, StreamResult, DEFAULT_MAX_HITS_PER_FILE,
};
pub use warning::{EntryProblem, ScanWarning};

/// A path inside a store path as raw bytes, `/`-separated, empty for the top level.
/// Names need not be UTF-8; [`fmt::Display`] escapes them.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath(Vec<u8>);

impl RelPath {
    /// The top level of the store path.
    pub fn root() -> RelPath {
        RelPath(Vec::new())
    }

    /// A relative path from bytes (no leading `/`).
    pub fn from_bytes(b: impl Into<Vec<u8>>) -> RelPath {
        RelPath(b.into())
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Whether this is the top level.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The last component (empty for the top level).
    pub fn name(&self) -> &[u8] {
        self.0.rsplit(|&b| b == b'/').next().unwrap_or(&self.0)
    }

    /// Everything before the last component (empty at the first level).
    pub fn parent(&self) -> &[u8] {
        match self.0.iter().rposition(|&b| b == b'/') {
            Some(i) => &self.0[..i],
            None => &[],
        }
    }

    /// This path with `name` appended.
    pub fn join(&self, name: &[u8]) -> RelPath {
        let mut v = Vec::with_capacity(self.0.len() + 1 + name.len());
        v.extend_from_slice(&self.0);
        if !v.is_empty() {
            v.push(b'/');
        }
        v.extend_from_slice(name);
        RelPath(v)
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&escape_bytes(&self.0))
    }
}

/// A string when the bytes are UTF-8, else the list of byte values (the scan cache's
/// spelling).
impl serde::Serialize for RelPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        crate::classify::text::raw_bytes::serialize(&self.0, s)
    }
}

impl<'de> serde::Deserialize<'de> for RelPath {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RelPath, D::Error> {
        crate::classify::text::raw_bytes::deserialize(d).map(RelPath)
    }
}

impl fmt::Debug for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RelPath({:?})", escape_bytes(&self.0))
    }
}

/// What a serialised entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileType {
    /// A regular file without the executable bit.
    Regular,
    /// A regular file with the executable bit.
    Executable,
    /// A symbolic link.
    Symlink,
    /// A directory.
    Directory,
}

/// Where a hit lies in the serialised store path.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Location {
    /// Byte offset in the file's contents.
    Contents {
        /// Offset of the hash's first byte.
        offset: u64,
    },
    /// Byte offset in the symlink's target.
    SymlinkTarget {
        /// Offset of the hash's first byte.
        offset: u64,
    },
    /// Byte offset in the entry's own name (its last path component).
    FileName {
        /// Offset of the hash's first byte.
        offset: u64,
    },
}

impl Location {
    /// The byte offset, whatever the place.
    pub fn offset(&self) -> u64 {
        match *self {
            Location::Contents { offset }
            | Location::SymlinkTarget { offset }
            | Location::FileName { offset } => offset,
        }
    }

    /// The region, without the offset.
    pub fn region(&self) -> Region {
        match self {
            Location::Contents { .. } => Region::Contents,
            Location::SymlinkTarget { .. } => Region::SymlinkTarget,
            Location::FileName { .. } => Region::FileName,
        }
    }
}

/// A hit placed in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocatedHit {
    /// Where it lies.
    pub location: Location,
    /// Candidate index in the [`ReferenceScanner`].
    pub candidate: u32,
}

/// One serialised entry of a store path and the hits in it.
#[derive(Debug, Clone, PartialEq)]
pub struct FileScan {
    /// Path inside the store path.
    pub path: RelPath,
    /// Entry type.
    pub file_type: FileType,
    /// Content length for files, target length for symlinks, 0 for directories.
    pub size: u64,
    /// The target, for symlinks.
    pub symlink_target: Option<Vec<u8>>,
    /// Whether a regular file starts with the ELF magic.
    pub is_elf: bool,
    /// Hits in the name, then the target or contents, in offset order.
    pub hits: Vec<LocatedHit>,
    /// Content hits beyond the per-file cap: counted, not reported.
    pub capped_hits: u64,
    /// ELF facts, for ELF files that were analysed.
    pub elf: Option<ElfFacts>,
    /// The first bytes of a regular file (up to [`HEAD_LEN`]), for content rules.
    pub head: Vec<u8>,
    /// The device code of a standalone bundle file (`__CLANG_OFFLOAD_BUNDLE__` or
    /// `CCOB` at offset 0); ELF files keep theirs in `elf`.
    pub bundle: Option<crate::elf::GpuCode>,
    /// A Tensile index (`*.dat` in MessagePack): the files it names for loading, as
    /// patterns relative to its directory; a manifest: the file names it lists.
    pub index: Option<IndexFile>,
    /// The whole text of a build-configuration file ([`is_config_file`], at most
    /// [`MAX_CONFIG_TEXT`] bytes), kept while its bytes stream by so that `split` can
    /// check it from any source, a NAR as well as a tree.
    pub config_text: Option<Vec<u8>>,
}

/// Whether the scan keeps the whole text of the file at `path` (relative, bytes): a
/// CMake file or a pkg-config file, which `split` reads to keep the paths they name
/// resolving after its moves.
pub fn is_config_file(path: &[u8]) -> bool {
    path.ends_with(b".cmake") || path.ends_with(b".pc")
}

/// The largest build-configuration file whose text the scan keeps (a real one is a
/// few KiB).
pub const MAX_CONFIG_TEXT: u64 = 1 << 20;

/// What an index file or a manifest names (see `crate::elf::index_loads`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexFile {
    /// An index: files it loads (patterns relative to its directory).
    Loads(Vec<String>),
    /// A build manifest: file names it lists (read by nothing at run time).
    Lists(Vec<String>),
}

/// How many leading bytes of each regular file [`FileScan::head`] keeps.
pub const HEAD_LEN: usize = 64;

/// What the scan found about one hit: facts, before any verdict. The walkers emit it,
/// the scan cache stores it, `crate::evidence` wraps it with a verdict and the reports
/// project it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HitFact {
    /// The file (or directory, or symlink) holding the hit.
    pub file: RelPath,
    /// Where in it.
    pub location: Location,
    /// What kind of place that is.
    pub kind: EvidenceKind,
    /// The rule that gave the kind.
    pub kind_rule: RuleId,
    /// What the hit's surroundings say.
    pub detail: HitDetail,
    /// For a hit in a symlink's absolute target: whether the file source found the
    /// target (`None` when it cannot tell, or was not asked: the walkers never ask).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_exists: Option<bool>,
}

impl HitFact {
    /// The byte offset of the hit in its place.
    pub fn offset(&self) -> u64 {
        self.location.offset()
    }
}

/// Everything found in one store path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PathScan {
    /// Entries in NAR order (directories before their sorted children).
    pub files: Vec<FileScan>,
    /// Every reported hit with the index of its candidate, in the order of `files`.
    pub evidence: Vec<(u32, HitFact)>,
    /// Per-file problems.
    pub warnings: Vec<ScanWarning>,
    /// The NAR serialisation's exact size, when every entry could be serialised.
    pub nar_size: Option<u64>,
}

impl PathScan {
    /// The candidates found at least once (what Nix would register as references),
    /// sorted. Capped hits count: a file whose hits were capped has reported some.
    pub fn referenced(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .files
            .iter()
            .flat_map(|f| f.hits.iter().map(|h| h.candidate))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// Answers "does this absolute logical path exist?" for library resolution (bytes:
/// RUNPATH entries and library names need not be UTF-8).
pub type Resolver<'a> = dyn Fn(&[u8]) -> bool + Sync + 'a;

/// When to read ELF facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ElfFactsWhen {
    /// Only for ELF files with at least one hit.
    #[default]
    WithHits,
    /// For every ELF file (to follow `DT_NEEDED` from files without hits).
    Always,
}

/// Knobs for the walkers.
#[derive(Clone, Copy)]
pub struct ScanOptions<'a> {
    /// Read size for file contents.
    pub read_block: usize,
    /// When to read ELF facts.
    pub elf_facts: ElfFactsWhen,
    /// Checks whether a library path exists, to tell `elf-needed` from
    /// `elf-runpath-unused`. Default for [`scan_store_path`]: the file system under the
    /// store root. Default for NARs: none (runpath hits are `elf-needed`, unchecked).
    pub resolver: Option<&'a Resolver<'a>>,
    /// ELF files in a NAR up to this size are held in memory for analysis; larger ones
    /// go to an anonymous temporary file.
    pub nar_spool_in_memory: u64,
}

impl Default for ScanOptions<'_> {
    fn default() -> Self {
        ScanOptions {
            read_block: 1 << 20,
            elf_facts: ElfFactsWhen::WithHits,
            resolver: None,
            nar_spool_in_memory: 64 << 20,
        }
    }
}

impl fmt::Debug for ScanOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScanOptions")
            .field("read_block", &self.read_block)
            .field("elf_facts", &self.elf_facts)
            .field("resolver", &self.resolver.map(|_| "…"))
            .field("nar_spool_in_memory", &self.nar_spool_in_memory)
            .finish()
    }
}

/// Why a whole store path could not be scanned.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The store path itself cannot be read.
    #[error("cannot read store path `{path}`: {source}")]
    Root {
        /// Its physical location.
        path: String,
        /// The error.
        source: io::Error,
    },
    /// A NAR file cannot be opened or is not a NAR.
    #[error("`{file}`: {message}")]
    Open {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A NAR stream is corrupt or truncated.
    #[error("`{file}`: {message} (entry `{entry}`, NAR offset {offset})")]
    Nar {
        /// The NAR file (or the label given for a stream).
        file: String,
        /// The entry being read (empty for the top level).
        entry: String,
        /// Offset in the uncompressed NAR.
        offset: u64,
        /// What is wrong.
        message: String,
    },
}

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
