//! `nixcut refs` documents: file-level evidence of every reference.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{EvidenceLevel, SourceRef};
use crate::classify::{EvidenceKind, FileClass, Verdict};

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
    pub files_from: crate::source::FilesFrom,
    /// Whether candidates were every path of the closure (`--discover`) rather than
    /// each path's registered references.
    pub discover: bool,
    pub paths: Vec<RefsPath>,
    pub warnings: Vec<String>,
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
    pub warnings: Vec<String>,
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
    /// Hit counts per evidence kind.
    pub kinds: BTreeMap<String, u64>,
    pub evidence: Vec<EvidenceItem>,
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
    pub detail: String,
    pub verdict: Verdict,
    pub rule: String,
    /// The class of the file the hit lies in (`lib`, `dev`, `gpu:gfx90a` …).
    pub file_class: FileClass,
    /// With a consumer (`refs --closure ROOT`): whether ROOT loads, runs or opens the
    /// file at run time. Absent without a consumer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reached: Option<bool>,
}
