//! What is known of one store path: what its scan found ([`ScannedPath`]: each
//! reference's hits, each file's facts), and the same judged ([`PathEvidence`]: hits with
//! kinds and verdicts, the scan's status, warnings).

use crate::classify::SearchTag;
use crate::classify::{EntryType, EvidenceKind, FileClass, RuleId, Verdict};
use crate::elf::DeviceObject;
use crate::scan::HitFact;
use crate::scan::{RelPath, ScanWarning};
use crate::store::StorePath;
use std::collections::BTreeMap;

/// One RUNPATH/RPATH directory of an ELF file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchDir {
    /// The tag it came from.
    pub tag: SearchTag,
    /// The directory with `$ORIGIN` expanded (`None` when it could not be).
    pub dir: Option<String>,
}

/// What the dynamic loader needs to know about one ELF file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ElfLink {
    /// `PT_INTERP`.
    pub interpreter: Option<String>,
    /// `DT_NEEDED`, in order.
    pub needed: Vec<String>,
    /// `DT_SONAME`.
    pub soname: Option<String>,
    /// The search directories the loader uses for this file, in order: its
    /// `DT_RUNPATH` entries when it has them, else its `DT_RPATH` entries.
    pub search: Vec<SearchDir>,
    /// Sonames the file names for `dlopen`.
    pub dlopen: Vec<String>,
    /// Relative data directories and data file patterns its data strings name.
    pub data_paths: Vec<String>,
}

/// One entry of a scanned store path, with the facts reachability and splitting need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryFact {
    /// Path inside the store path (empty for the top level).
    pub path: RelPath,
    /// File, executable, symlink or directory.
    pub entry: EntryType,
    /// Content length for files, target length for symlinks, 0 for directories.
    pub size: u64,
    /// What the file is for, and the rule that said so.
    pub class: FileClass,
    /// The rule behind `class`.
    pub class_rule: RuleId,
    /// A symlink's target, raw.
    pub symlink_target: Option<Vec<u8>>,
    /// Loader facts, for ELF files.
    pub elf: Option<ElfLink>,
    /// The interpreter of a script (`#!/nix/store/…/bin/sh` → that path).
    pub shebang: Option<Vec<u8>>,
    /// Absolute paths into the store that the file names in a script line or an ELF data
    /// string (what it may exec or open by name).
    pub names: Vec<Vec<u8>>,
    /// Device code objects in the file (a fat binary's `.hip_fatbin`/`.nv_fatbin`
    /// entries, a bundle file's entries, or the file itself when it is a code object).
    pub device: Vec<DeviceObject>,
}

#[cfg(test)]
impl EntryFact {
    /// An entry with no ELF, script or device facts, classed by rule `test`: what unit
    /// tests of reachability, GPU accounting and split plans build their trees from.
    pub(crate) fn bare(path: &str, entry: EntryType, size: u64, class: FileClass) -> EntryFact {
        EntryFact {
            path: RelPath::from_bytes(path.as_bytes().to_vec()),
            entry,
            size,
            class,
            class_rule: RuleId::new("test"),
            symlink_target: None,
            elf: None,
            shebang: None,
            names: Vec::new(),
            device: Vec::new(),
        }
    }
}

/// The hits of one candidate reference in one store path's scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedRef {
    /// The referenced store path.
    pub target: StorePath,
    /// Every reported hit, in scan order.
    pub hits: Vec<HitFact>,
    /// Hits dropped by the scanner's per-file cap in files that show this reference.
    pub capped: u64,
}

/// What scanning one store path found: the cached part of the evidence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScannedPath {
    /// Entries serialised (files, directories, symlinks).
    pub files: u64,
    /// Bytes of file contents read.
    pub bytes: u64,
    /// Candidates with at least one hit, in candidate order.
    pub references: Vec<ScannedRef>,
    /// Hits beyond the per-file caps, over all files.
    pub capped_total: u64,
    /// Per-file problems.
    pub warnings: Vec<ScanWarning>,
    /// Every entry, in NAR order.
    pub entries: Vec<EntryFact>,
    /// Whether every entry could be read (else some hashes may not have been seen).
    pub complete: bool,
    /// Tensile index files and manifests among `entries` (by position) and what they
    /// name.
    pub indexes: Vec<(u32, crate::scan::IndexFile)>,
    /// The texts of build-configuration files among `entries` (by position), as the
    /// scan kept them (`crate::scan::is_config_file`, at most
    /// `crate::scan::MAX_CONFIG_TEXT` bytes each).
    pub config_texts: Vec<(u32, Vec<u8>)>,
}

/// One hit judged: the scan's fact wrapped with where it lies and its verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgedHit {
    /// What the scan found.
    pub fact: HitFact,
    /// The class of its file and whether the consumer reaches it.
    pub place: HitPlace,
    /// What this hit alone says the reference is needed for.
    pub verdict: Verdict,
    /// The rule that said it.
    pub rule: RuleId,
}

/// One reference of a store path, with its evidence and verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The referenced store path.
    pub target: StorePath,
    /// Nix registered this reference (false: found only by discovery).
    pub registered: bool,
    /// The path refers to itself.
    pub self_reference: bool,
    /// The strongest verdict among the hits (`unknown` without hits).
    pub verdict: Verdict,
    /// The rule behind `verdict`.
    pub rule: RuleId,
    /// Hits dropped by the per-file cap (counted in [`Reference::hit_count`]).
    pub capped: u64,
    /// Hit counts per evidence kind.
    pub kinds: BTreeMap<EvidenceKind, u64>,
    /// Every reported hit, in scan order.
    pub hits: Vec<JudgedHit>,
}

/// Where a hit lies, for the verdict: the file's class and, with a consumer, whether the
/// consumer reaches the file at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitPlace {
    /// The class of the file holding the hit.
    pub class: FileClass,
    /// Whether the consumer loads or opens the file (`None` without a consumer).
    pub reached: Option<bool>,
}

impl Reference {
    /// Every hit found, the capped ones included.
    pub fn hit_count(&self) -> u64 {
        self.hits.len() as u64 + self.capped
    }
}

/// Whether and how a store path's files were scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanStatus {
    /// Scanned now, or read from the scan cache.
    Scanned {
        /// Entries serialised.
        files: u64,
        /// Bytes of file contents read.
        bytes: u64,
        /// Whether the result came from the scan cache.
        cached: bool,
    },
    /// Not scanned: references come from the graph only (see the warnings).
    NotScanned,
}

/// The evidence of one store path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathEvidence {
    /// The store path.
    pub path: StorePath,
    /// Whether it was scanned.
    pub status: ScanStatus,
    /// Its references: scanned ones strongest verdict first (then by path), unscanned
    /// ones in store-path order.
    pub references: Vec<Reference>,
    /// Problems with its files or its evidence.
    pub warnings: Vec<PathWarning>,
    /// Every entry with its class (empty when not scanned).
    pub entries: Vec<EntryFact>,
}

/// A problem with the evidence of one store path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathWarning {
    /// A problem the scan got past (one file, or the NAR).
    Scan(ScanWarning),
    /// The path was not scanned: its references come from the graph only.
    NotScanned(NotScanned),
    /// Nix registered a reference to `target` (full store path) that no file shows.
    RegisteredUnseen {
        target: String,
        /// Whether every entry could be read (else the hash may be in one that could
        /// not).
        complete: bool,
    },
    /// Hits beyond the per-file caps: counted, not listed.
    CappedHits {
        /// How many.
        hits: u64,
    },
}

/// A path's evidence warnings are written as sentences (`crate::render::words`
/// serialises them) and have no variant for words made elsewhere: a `refs` report whose
/// paths carry warnings cannot be read back (an empty list reads fine).
impl<'de> serde::Deserialize<'de> for PathWarning {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let sentence = String::deserialize(d)?;
        Err(serde::de::Error::custom(format_args!(
            "the warning `{sentence}` cannot be read back into its facts"
        )))
    }
}

/// Why a store path was not scanned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotScanned {
    /// No file source was given.
    FilesUnavailable,
    /// The source does not hold the path (its message).
    Missing(String),
    /// The source or the scan failed (its message).
    Failed(String),
}

impl PathEvidence {
    /// The reference to `target`, if the path has one.
    pub fn reference(&self, target: &StorePath) -> Option<&Reference> {
        self.references.iter().find(|r| &r.target == target)
    }

    /// Bytes of file contents read (0 when not scanned).
    pub fn bytes_scanned(&self) -> u64 {
        match self.status {
            ScanStatus::Scanned { bytes, .. } => bytes,
            ScanStatus::NotScanned => 0,
        }
    }
}
