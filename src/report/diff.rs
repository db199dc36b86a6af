//! `nixcut diff OLD NEW` documents: what changed between two closures, by package.
//!
//! ```json
//! {
//!   "schema_version": 1,
//!   "old": { "root": "/nix/store/…-llama-cpp-rocm-0.0.0", "roots": […],
//!            "source": {"kind": "snapshot", "origin": "base.json"},
//!            "closure_size": 5117176, "path_count": 24, "sizes_known": true },
//!   "new": { … "closure_size": 7215736, "path_count": 25 … },
//!   "closure_size_delta": 2098560,
//!   "paths_added": 1, "paths_removed": 0, "paths_changed": 1, "paths_unchanged": 23,
//!   "packages": [
//!     { "package": "llama-cpp-rocm", "change": "rebuilt", … },
//!     { "package": "big-blob", "change": "added", "version_change": "∅ → 1.0",
//!       "old_versions": [], "new_versions": ["1.0"],
//!       "old_size": 0, "new_size": 2097776, "nar_delta": 2097776,
//!       "added_size": 2097776, "removed_size": 0, "impact": 2097776,
//!       "paths": [ { "change": "added", "name": "big-blob-1.0", "version": "1.0",
//!                    "output": "out", "old_path": null, "new_path": "/nix/store/…",
//!                    "old_nar_size": null, "new_nar_size": 2097776,
//!                    "added_size": 2097776, "removed_size": 0 } ] }
//!   ],
//!   "rest": null,
//!   "warnings": []
//! }
//! ```
//!
//! Sizes: `nar_delta` is the change of the package's own NAR sizes (what `nix store
//! diff-closures` prints); the `nar_delta`s of all packages add up to
//! `closure_size_delta`. `added_size` is what the package's new paths bring into NEW
//! beyond what OLD already had (dropping them from NEW would free that much of NEW's
//! new-only part), `removed_size` the same for its old paths in OLD, and `impact` is
//! their difference: a new path that drags in 2 GiB of other new paths has an impact
//! of 2 GiB, although its own NAR is small. Impacts overlap (a package's impact
//! includes what its new dependencies bring), so they do not add up; packages are
//! ranked by the size of their impact.
//!
//! `version_change` and `warnings` are facts ([`VersionChange`], [`DiffWarning`]),
//! worded and serialised as the strings above by `crate::render::words`; so
//! [`DiffReport`] is `Serialize` only.

use serde::{Deserialize, Serialize};

use super::ClosureRef;

/// `nixcut diff OLD NEW`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffReport {
    pub schema_version: u32,
    pub old: DiffSide,
    pub new: DiffSide,
    /// New closure size minus old closure size.
    pub closure_size_delta: i64,
    /// Paths only in NEW whose name (`<pname>-<version>[-<output>]`) OLD does not have.
    pub paths_added: usize,
    /// Paths only in OLD whose name NEW does not have.
    pub paths_removed: usize,
    /// Pairs of paths with the same name but different hashes (rebuilt).
    pub paths_changed: usize,
    /// Of `paths_changed`: rebuilt with the same NAR size (a mass rebuild that changed
    /// hashes, not contents' size).
    pub paths_changed_same_size: usize,
    /// Paths in both closures.
    pub paths_unchanged: usize,
    /// Packages with any change, ranked by the size of their `impact`.
    pub packages: Vec<PackageDiff>,
    /// What `--top` hid, if anything.
    pub rest: Option<DiffRest>,
    /// Warnings from loading either side (JSON: `OLD: …`, `NEW: …`).
    pub warnings: Vec<DiffWarning>,
}

impl DiffReport {
    /// The change of the closure size in percent of OLD's (`None` when OLD is empty).
    pub fn closure_size_change_percent(&self) -> Option<f64> {
        (self.old.closure_size > 0)
            .then(|| self.closure_size_delta as f64 / self.old.closure_size as f64 * 100.0)
    }
}

/// Which input of a diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Old,
    New,
    /// Both: the one graph that two package sets share (its warnings are said once).
    Both,
}

/// A warning from loading one side of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffWarning {
    pub side: Side,
    /// The warning.
    pub warning: crate::store::LoadWarning,
}

/// One side of a diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffSide {
    /// `root` (with several roots the first), `roots`, `source`.
    #[serde(flatten)]
    pub closure: ClosureRef,
    pub closure_size: u64,
    pub path_count: usize,
    /// False when some NAR sizes were unknown (counted as 0).
    pub sizes_known: bool,
}

/// How a package changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PackageChange {
    /// Only in NEW.
    Added,
    /// Only in OLD.
    Removed,
    /// In both, with different sets of versions.
    Version,
    /// Same versions, different store paths (rebuilt with other inputs).
    Rebuilt,
}

/// The paths of one package (`pname`, all versions and outputs) that changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageDiff {
    /// The package name (`rocblas`, `gcc`).
    pub package: String,
    pub change: PackageChange,
    /// `nix store diff-closures` notation: versions only in OLD → versions only in
    /// NEW (`5.7.1 → 6.0.0`, `∅ → 1.0`, `ε` for an empty version); empty when the
    /// versions did not change.
    pub version_change: VersionChange,
    /// Every version of the package in OLD (sorted, deduplicated; `""` for none).
    pub old_versions: Vec<String>,
    /// Every version of the package in NEW.
    pub new_versions: Vec<String>,
    /// NAR sizes of the package's paths in OLD, changed or not.
    pub old_size: u64,
    /// NAR sizes of the package's paths in NEW.
    pub new_size: u64,
    /// `new_size - old_size`.
    pub nar_delta: i64,
    /// What the package's NEW-only paths bring into NEW beyond what OLD had.
    pub added_size: u64,
    /// What the package's OLD-only paths brought into OLD beyond what NEW has.
    pub removed_size: u64,
    /// `added_size - removed_size`: the package's effect on the closure size.
    pub impact: i64,
    /// The package's changed paths (changed pairs, added, removed), largest
    /// `added_size` or `removed_size` first.
    pub paths: Vec<PathDiff>,
}

impl PackageDiff {
    /// How many of [`PackageDiff::paths`] were added, removed, changed.
    pub fn path_counts(&self) -> PathCounts {
        let n = |k: PathChange| self.paths.iter().filter(|p| p.change == k).count();
        PathCounts {
            added: n(PathChange::Added),
            removed: n(PathChange::Removed),
            changed: n(PathChange::Changed),
        }
    }
}

/// The versions of a package only in OLD and only in NEW (each sorted, deduplicated;
/// `""` for a path without version). Both empty: the versions did not change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionChange {
    pub gone: Vec<String>,
    pub came: Vec<String>,
}

impl VersionChange {
    /// True when the package's set of versions is the same on both sides.
    pub fn is_empty(&self) -> bool {
        self.gone.is_empty() && self.came.is_empty()
    }
}

/// Paths of one package by how they changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PathCounts {
    pub added: usize,
    pub removed: usize,
    pub changed: usize,
}

/// How one path changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathChange {
    /// Only in NEW.
    Added,
    /// Only in OLD.
    Removed,
    /// Same name in both, different hash.
    Changed,
}

/// One changed path of a [`PackageDiff`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathDiff {
    pub change: PathChange,
    /// The store name without hash (`gcc-12.2.0-lib`).
    pub name: String,
    pub version: String,
    /// The output (`out`, `lib`, `dev`, …).
    pub output: String,
    /// Full store path in OLD (`null` for an added path).
    pub old_path: Option<String>,
    /// Full store path in NEW (`null` for a removed path).
    pub new_path: Option<String>,
    pub old_nar_size: Option<u64>,
    pub new_nar_size: Option<u64>,
    /// The new path's added size over the part NEW shares with OLD (0 if none).
    pub added_size: u64,
    /// The old path's added size over the part OLD shares with NEW (0 if none).
    pub removed_size: u64,
}

/// The packages `--top` hid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffRest {
    /// How many packages are not shown.
    pub count: usize,
    /// Their `nar_delta`s together (shown + rest = `closure_size_delta`).
    pub nar_delta: i64,
}
