//! `nixcut refs` documents: file-level evidence of every reference.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{EvidenceLevel, SourceRef};
use crate::classify::{EvidenceKind, FileClass, HitDetail, Verdict};
use crate::evidence::PathWarning;

/// `nixcut refs PATH…` / `nixcut refs --closure ROOT`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefsReport {
    pub schema_version: u32,
    pub source: SourceRef,
    /// `files` when files were scanned, `graph` when none were available.
    pub evidence: EvidenceLevel,
    /// Where the files came from: `store` (a directory tree), `nar` (binary cache), or
    /// `unavailable`.
    pub files_from: super::FilesFrom,
    /// Whether candidates were every path of the closure (`--discover`) rather than
    /// each path's registered references.
    pub discover: bool,
    /// `--max-evidence N`: at most N evidence items are listed per reference (absent:
    /// all are listed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_evidence: Option<u64>,
    pub paths: Vec<RefsPath>,
    /// JSON: one sentence each.
    pub warnings: Vec<RefsWarning>,
    /// `--explain FILE`: how the consumer reaches that file (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explanation>,
}

/// How the consumer of `refs --closure ROOT` reaches one file (`--explain FILE`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Explanation {
    /// The file asked about, as given.
    pub file: String,
    /// Whether ROOT loads, runs or opens it at run time.
    pub reached: bool,
    /// The chain of loads from one of ROOT's own files to it (empty when not reached).
    pub chain: Vec<ReachStep>,
    /// What else is known about an unreached file: that only a build manifest lists
    /// it, or that no reached index names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The file's class (`gpu:gfx908`, `gpu-generic`, `lib` …), when it is in the
    /// closure's scanned files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<FileClass>,
    /// When reached: the processors it is opened on, if only on some (`["gfx908"]` for a
    /// code object rocBLAS loads on a gfx908 only); empty when opened on every one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processors: Vec<String>,
}

/// One hop of an [`Explanation`]: the file reached and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReachStep {
    /// The full logical path of the file.
    pub file: String,
    /// How the previous file reached it.
    pub via: ReachVia,
    /// The library name, search directory or rule involved (empty when none).
    pub detail: String,
}

/// How one file reaches the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReachVia {
    /// One of the consumer's own run-time files.
    EntryPoint,
    /// The program interpreter (`PT_INTERP`).
    Interpreter,
    /// A `DT_NEEDED` library, found in a search directory.
    Needed,
    /// A library named for `dlopen`, found in a search directory.
    Dlopen,
    /// A script's `#!` interpreter.
    Shebang,
    /// A store path named in a script line or an ELF data string.
    Named,
    /// A symlink's target.
    Symlink,
    /// An entry below a reached directory.
    Inside,
    /// A data directory a library opens beside itself (a data-directory rule's row).
    DataDir,
    /// A data directory or data file one of the library's strings names (`detail`: the
    /// string, a path relative to the library or a pattern such as
    /// `Library_lazy_%s.dat`).
    DataString,
    /// A file an index file (a Tensile `*.dat`) names for loading
    /// (`detail`: the name or pattern).
    Index,
    /// A file the library opens only on one processor (`detail`: the processor, then
    /// the glob or name that finds it: `gfx1030: *gfx1030*co`).
    Processor,
}

/// The references of one store path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefsPath {
    pub path: String,
    /// Whether its files were scanned.
    pub scanned: bool,
    /// Whether the result came from the scan cache.
    pub cached: bool,
    pub files_scanned: u64,
    pub bytes_scanned: u64,
    pub references: Vec<RefEntry>,
    /// Problems with its files or evidence (JSON: one sentence each).
    pub warnings: Vec<PathWarning>,
}

/// A warning of `refs` about the whole run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefsWarning {
    /// A warning from loading the input.
    Load(crate::store::LoadWarning),
    /// Any warning of a report read back from JSON: its sentence.
    Input(String),
    /// No files to scan: the evidence is graph-level only.
    FilesUnavailable {
        /// The directory looked in (`None`: no store directory was given).
        looked_in: Option<String>,
    },
    /// `--explain FILE` without files: what the consumer reaches is unknown.
    ExplainWithoutFiles {
        /// FILE as given.
        file: String,
    },
}

/// One reference with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefEntry {
    pub path: String,
    /// The strongest verdict among the evidence (`runtime`, `gpu:<arch>`, `unknown`,
    /// `dev`, `doc`, `removable`); `unknown` when there is no evidence.
    pub verdict: Verdict,
    /// The rule that produced the verdict.
    pub rule: String,
    /// Nix registered this reference (false: found only with `--discover`).
    pub registered: bool,
    /// The path refers to itself.
    pub self_reference: bool,
    /// Every hit found (the per-file cap may have cut some: see `capped`).
    pub evidence_count: u64,
    /// Hits dropped by the per-file cap.
    pub capped: u64,
    /// Hits counted but not listed in `evidence` (the per-file cap and
    /// `--max-evidence` together): `evidence_count - evidence.len()`.
    pub omitted: u64,
    /// Hit counts per evidence kind.
    pub kinds: BTreeMap<String, u64>,
    pub evidence: Vec<EvidenceItem>,
}

/// What a hit's surroundings say, as reports show them: JSON `detail`, one string in
/// the notation of `crate::render::words::evidence` (which serialises it). A string
/// read back stays [`EvidenceDetail::Read`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvidenceDetail {
    /// The facts.
    Hit(HitDetail),
    /// In a report read back from JSON: the notation as it was written.
    Read(String),
}

impl<'de> Deserialize<'de> for EvidenceDetail {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(EvidenceDetail::Read)
    }
}

/// Where one occurrence of a hash sits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceItem {
    /// File inside the referring store path (`lib/librocblas.so`; empty for the top).
    pub file: String,
    /// Byte offset of the hash in the file's contents, symlink target or name.
    pub offset: u64,
    pub kind: EvidenceKind,
    /// The string, line or target the hit sits in.
    pub detail: EvidenceDetail,
    pub verdict: Verdict,
    pub rule: String,
    /// The class of the file the hit lies in (`lib`, `dev`, `gpu:gfx90a` …).
    pub file_class: FileClass,
    /// With a consumer (`refs --closure ROOT`): whether ROOT loads, runs or opens the
    /// file at run time. Absent without a consumer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reached: Option<bool>,
}
