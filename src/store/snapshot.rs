//! `nixcut snapshot` files: a closure frozen as a versioned JSON baseline for CI.
//!
//! ```json
//! {
//!   "kind": "nixcut-snapshot",
//!   "schema_version": 1,
//!   "nixcut_version": "0.1.0",
//!   "store_dir": "/nix/store",
//!   "root": "/nix/store/…-llama-cpp-rocm-0.0.0",
//!   "roots": ["/nix/store/…-llama-cpp-rocm-0.0.0"],
//!   "created_from": { "kind": "live-store", "origin": "./result" },
//!   "closure_size": 5117176,
//!   "path_count": 24,
//!   "paths": [
//!     { "path": "/nix/store/…-glibc-2.36", "nar_size": 2141952,
//!       "nar_hash": "sha256-…", "closure_size": 2141952, "references": [],
//!       "deriver": "/nix/store/…-glibc-2.36.drv" }
//!   ]
//! }
//! ```
//!
//! `kind` is always the first key, so a file cut short is still recognised as a
//! snapshot (and refused as truncated) rather than as some unknown JSON. `paths` is in
//! store-path order and holds exactly the closure of `roots`; `path_count` and
//! `closure_size` let a reader check that nothing is missing. There is no creation
//! time: a snapshot of the same closure is byte-for-byte the same file, so committed
//! baselines only change when the closure does.
//!
//! These structs are the one definition of the format: `nixcut snapshot` serialises
//! them (through `crate::report`, which re-exports them) and the loader
//! (`crate::load::snapshot`) deserialises them; they live here, below both, so that
//! the loader needs nothing from the reports. The loader reads
//! the [`SnapshotHeader`] first and refuses a `schema_version` above
//! [`SNAPSHOT_SCHEMA_VERSION`]; the structs ignore keys they do not know, so adding a
//! field is compatible; renaming or removing one needs a new schema version.

use serde::{Deserialize, Serialize};

use super::SourceKind;

/// Where a report's closure came from (a report's `source`, a snapshot's
/// `created_from`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceRef {
    /// Input format (`path-info-json`, `registration`, `live-store`, …).
    pub kind: SourceKind,
    /// File, directory or store path it was read from.
    pub origin: String,
}

/// The value of `kind` in every snapshot file.
pub const SNAPSHOT_KIND: &str = "nixcut-snapshot";

/// What a snapshot file says it is: `kind`, always [`SNAPSHOT_KIND`] (a file saying
/// anything else is refused when its header is read).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum SnapshotKind {
    /// `nixcut-snapshot`.
    #[default]
    #[serde(rename = "nixcut-snapshot")]
    NixcutSnapshot,
}

/// The snapshot schema this nixcut writes, and the newest it can read.
pub const SNAPSHOT_SCHEMA_VERSION: u32 = 1;

/// The keys every snapshot schema version has, read loosely (any JSON value) before
/// the rest: a file of a newer version is refused by its version, not by a field this
/// nixcut does not know, and a damaged `kind` or version is named as such.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SnapshotHeader {
    /// [`SNAPSHOT_KIND`] in a snapshot.
    pub kind: Option<serde_json::Value>,
    /// The schema version, a positive integer in a snapshot.
    pub schema_version: Option<serde_json::Value>,
    /// The version of nixcut that wrote the file.
    pub nixcut_version: Option<serde_json::Value>,
}

/// A snapshot file. Unknown keys are ignored when it is read (a newer nixcut may add
/// fields); `tests/common/contract.rs` pins the exact keys from outside.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Always [`SNAPSHOT_KIND`].
    pub kind: SnapshotKind,
    /// [`SNAPSHOT_SCHEMA_VERSION`] when written by this nixcut.
    pub schema_version: u32,
    /// The version of nixcut that wrote the file (empty when a file does not say).
    #[serde(default)]
    pub nixcut_version: String,
    /// The logical store directory every path is in.
    pub store_dir: String,
    /// The root (full store path); with several roots the first, `roots` has all.
    pub root: String,
    /// Every root (full store paths); a reader takes `[root]` when it is absent.
    #[serde(default)]
    pub roots: Vec<String>,
    /// The input the snapshot was taken from.
    pub created_from: SourceRef,
    /// Sum of the NAR sizes of `paths`.
    pub closure_size: u64,
    /// Number of entries in `paths`.
    pub path_count: usize,
    /// Every path of the closure, in store-path order.
    pub paths: Vec<SnapshotPath>,
}

/// One path of a [`Snapshot`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotPath {
    /// Full store path.
    pub path: String,
    pub nar_size: u64,
    /// SRI (`sha256-<base64>`) when the source had a NAR hash.
    pub nar_hash: Option<String>,
    /// NAR sizes of everything this path reaches, itself included.
    pub closure_size: u64,
    /// Full store paths, sorted; may include the path itself.
    #[serde(default)]
    pub references: Vec<String>,
    /// The `.drv` that built the path, when the source said.
    pub deriver: Option<String>,
}
