//! What a scan is told and what it finds: each entry's type and where a hit sits
//! ([`Location`]), a hit's facts ([`HitFact`]), one file's and one store path's results
//! ([`FileScan`], [`PathScan`]), the options of a walk ([`ScanOptions`]) and its
//! errors ([`ScanError`]), and which configuration files keep their text
//! ([`is_config_file`]).

use super::rel_path::RelPath;
use super::warning::ScanWarning;
use crate::classify::{EvidenceKind, HitDetail, Region, RuleId};
use crate::elf::ElfFacts;
use std::fmt;
use std::io;

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
