//! `nixcut store` documents: every GC root of a whole store with its closure and what it
//! alone keeps alive, and what no root keeps.
//!
//! Sizes are bytes (sums of NAR sizes). `store_size` = `live.bytes` +
//! `unreachable.bytes`; `live.bytes` = `shared.bytes` + the `alone` of every root
//! (all of them, listed or not: `rest` sums those left out of `roots`).

use serde::{Deserialize, Serialize};

/// Version of the `store` document.
pub const STORE_SCHEMA_VERSION: u32 = 1;

/// `nixcut store`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreReport {
    pub schema_version: u32,
    /// The database or file read.
    pub source: String,
    /// The logical store directory.
    pub store_dir: String,
    /// Sum of the NAR sizes of every path.
    pub store_size: u64,
    pub path_count: u64,
    /// References between paths (self-references not counted).
    pub reference_count: u64,
    /// What the collector keeps beyond references, as assumed.
    pub keep: StoreKeep,
    /// GC roots (links) counted, listed or not.
    pub root_count: u64,
    /// Roots, ranked by `alone` (then link).
    pub roots: Vec<StoreRoot>,
    /// The roots beyond `roots` (`--top`), summed; `null` when every root is listed.
    pub rest: Option<StoreRest>,
    /// Paths some root keeps alive.
    pub live: PathsBytes,
    /// Paths two roots or more keep alive (no single deletion frees them).
    pub shared: PathsBytes,
    /// Paths no root keeps alive (what `nix-store --gc` would delete).
    pub unreachable: PathsBytes,
    pub warnings: Vec<StoreWarning>,
}

/// Nix's `keep-derivations` and `keep-outputs`, as assumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreKeep {
    pub derivations: bool,
    pub outputs: bool,
}

/// A number of paths and their bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathsBytes {
    pub paths: u64,
    pub bytes: u64,
}

/// One GC root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreRoot {
    /// The store path it keeps (full path).
    pub root: String,
    /// The link (`/nix/var/nix/gcroots/auto/…` resolved to `/home/u/result`, a
    /// profile generation, or the path itself for `--root`).
    pub link: String,
    /// Closure size of `root` (references only, as `nix path-info -S`).
    pub closure_size: u64,
    pub closure_paths: u64,
    /// What deleting this link alone would let the collector free.
    pub alone: u64,
    pub alone_paths: u64,
}

/// Roots not listed, summed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreRest {
    pub roots: u64,
    pub alone: u64,
    pub alone_paths: u64,
}

/// A warning of `store`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreWarning {
    /// Any warning of a report read back from JSON: its sentence.
    Input(String),
    /// Indirect roots whose link no longer exists.
    StaleRoots { count: u64 },
    /// A GC root directory or link that could not be read.
    Unreadable { path: String, why: String },
    /// Roots naming paths the store does not have (not valid: Nix ignores them).
    UnknownRoots { count: u64, example: String },
    /// Paths described twice (the first description kept).
    Duplicates { count: u64 },
    /// References naming a described path's hash with another name.
    RenamedReferences { count: u64 },
    /// Paths without a NAR size (counted as 0 bytes).
    MissingSizes { count: u64 },
    /// Paths only referenced, never described (counted as 0 bytes).
    Undescribed { count: u64, example: String },
    /// Reference rows naming no valid path.
    DanglingReferences { count: u64 },
    /// Paths the input lists as invalid.
    InvalidPaths { count: u64 },
    /// No root at all: everything is unreachable.
    NoRoots,
}
