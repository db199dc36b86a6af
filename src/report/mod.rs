//! The JSON contract: plain serde structs, one module per command, each document
//! carrying `schema_version`. Renderers read these; nothing here computes.
//!
//! Field names follow `SPEC.md` ("Core JSON fields"). Adding a field is compatible;
//! renaming or removing one needs a new `SCHEMA_VERSION` and a deprecation path.

mod check;
mod diff;
mod refs;
pub mod snapshot;
mod why;

pub use check::{AgainstCheck, BaselineCheck, CheckReport, Contributor, ExtraPaths, MaxSizeCheck};
pub use diff::{DiffReport, DiffRest, DiffSide, PackageChange, PackageDiff, PathChange, PathDiff};
pub use refs::{EvidenceItem, RefEntry, RefsPath, RefsReport};
pub use snapshot::{Snapshot, SnapshotPath, SNAPSHOT_KIND, SNAPSHOT_SCHEMA_VERSION};
pub use why::{ChainNode, HopEvidence, RestRow, SortKey, WhyChainsReport, WhyPath, WhyReport};

use serde::{Deserialize, Serialize};

/// Version of every JSON document nixcut writes.
pub const SCHEMA_VERSION: u32 = 1;

/// Where a report's closure came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceRef {
    /// Input format (`path-info-json`, `registration`, `live-store`, …).
    pub kind: crate::store::SourceKind,
    /// File, directory or store path it was read from.
    pub origin: String,
}

/// How much a report knows about why references exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceLevel {
    /// Only the reference graph: no file was scanned.
    Graph,
    /// Files were scanned; evidence is attached.
    Files,
}
