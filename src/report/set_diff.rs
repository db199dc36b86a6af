//! `nixcut diff OLD NEW` of two package sets (and `check` on them): every root's
//! closure before and after, and the causes, summed over roots.
//!
//! ```json
//! {
//!   "schema_version": 1,
//!   "old": { "origin": "old/store-paths.xz", "roots": 60000, "path_count": 140000,
//!            "union_size": 912345678901, "sizes_known": true },
//!   "new": { … },
//!   "total": { "roots": 59500, "old": 123456789, "new": 125000000, "delta": 1543211,
//!              "percent": 1.25 },
//!   "counts": { "both": 59500, "only_old": 500, "only_new": 500, "grown": 4812,
//!               "shrunk": 12, "unchanged": 54676 },
//!   "roots": [ { "name": "hello", "package": "hello", "output": "out",
//!                "old": { "path": "/nix/store/…-hello-2.12", "closure_size": 31234 },
//!                "new": { "path": "/nix/store/…-hello-2.12.1", "closure_size": 32234 },
//!                "delta": 1000, "percent": 3.2 } ],
//!   "causes": [ { "name": "libhuge", "change": "added", "roots": 4812,
//!                 "bytes": 2018634547200, "old_versions": [], "new_versions": ["1.0"],
//!                 "example_root": "hello",
//!                 "chain": ["/nix/store/…-hello-2.12.1", "/nix/store/…-libfoo-1.2",
//!                           "/nix/store/…-libhuge-1.0"] } ],
//!   "rebuild": { "paths_rebuilt": 40123, "paths_rebuilt_same_size": 40001,
//!                "bytes_rebuilt_same_size": 81234567890, "paths_added": 12,
//!                "paths_removed": 3, "roots_rebuilt_same_size": 51234 },
//!   "rest": { "roots": 59475, "causes": 120 },
//!   "check": null,
//!   "warnings": []
//! }
//! ```
//!
//! A root is matched between the sets by package name and output (`hello`, `openssl.dev`:
//! the store name without hash and version). A cause is one package name (all its
//! versions and outputs) with one kind of change for the roots in both sets: `added`
//! (in the new closure, not in the old), `removed`, `grown` or `shrunk` (in both, with
//! more or fewer bytes). `roots` counts the roots it changes, `bytes` is the change it
//! makes to their closures, summed. The `bytes` of all causes add up exactly to
//! `total.delta`, the change of the matched roots' closure sizes summed. Roots in only
//! one set are reported in `roots[]` (with `old` or `new` null) and counted in `counts`,
//! never in the causes. `chain` runs from `example_root` (in the set where the package
//! is: NEW for `added` and `grown`, OLD otherwise) to one path of the package.

use serde::{Deserialize, Serialize};

/// The report of a diff (or check) of two package sets. `Serialize` only: its warnings
/// are sentences in JSON, which cannot be read back into their facts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SetDiffReport {
    pub schema_version: u32,
    pub old: SetSide,
    pub new: SetSide,
    pub total: SetTotal,
    pub counts: RootCounts,
    /// Matched roots ranked by the size of `delta` (its absolute value: −3 MiB before
    /// +1 MiB), then the roots only in NEW, then those only in OLD (each largest
    /// first). `--top` keeps the first N of
    /// the matched roots and of each one-sided group.
    pub roots: Vec<RootDiff>,
    /// Causes ranked by the size of `bytes` (its absolute value), growing and shrinking
    /// alike.
    pub causes: Vec<Cause>,
    pub rebuild: RebuildSummary,
    /// What `--top` left out.
    pub rest: Option<SetRest>,
    /// The gate, for `check`.
    pub check: Option<SetCheck>,
    /// Problems loading either set (JSON: `OLD: …`, `NEW: …`).
    pub warnings: Vec<super::DiffWarning>,
    /// `--changed-only`: `roots[]` leaves out the matched roots whose closure size did
    /// not change (they are still counted in `counts.unchanged`).
    pub changed_only: bool,
    /// Rows a table or Markdown shows before collapsing the rest (not in the JSON).
    #[serde(skip)]
    pub show: usize,
}

/// One package set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetSide {
    /// The package-set file.
    pub origin: String,
    /// Where the graph came from (a cache URL, a file, the local store).
    pub graph: String,
    /// How many roots the set lists.
    pub roots: usize,
    /// Paths in the union of the roots' closures.
    pub path_count: usize,
    /// NAR sizes of that union, each path once.
    pub union_size: u64,
    /// False when some NAR sizes were unknown (counted as 0).
    pub sizes_known: bool,
    /// What fetching that union from a binary cache downloads (`FileSize` or
    /// `downloadSize` summed); `null` when some path's is unknown.
    pub union_download_size: Option<u64>,
}

/// The closure sizes of the roots in both sets, summed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetTotal {
    /// Roots in both sets.
    pub roots: usize,
    pub old: u64,
    pub new: u64,
    pub delta: i64,
    /// `delta` in percent of `old` (`null` when `old` is 0).
    pub percent: Option<f64>,
    /// The matched roots' closures' download sizes summed on each side (`null` when
    /// some root's is unknown).
    pub download_old: Option<u64>,
    pub download_new: Option<u64>,
    /// The roots only in NEW: how many, their closure sizes summed.
    pub added: OneSidedTotal,
    /// The roots only in OLD.
    pub removed: OneSidedTotal,
    /// The closures of every root of each set summed (matched and one-sided): `old` is
    /// `total.old` plus the removed roots', `new` is `total.new` plus the added roots'.
    /// What `check --max-total-growth` gates.
    pub all_roots: RootsSum,
}

/// Roots in one set only, summed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OneSidedTotal {
    pub roots: usize,
    /// Their closure sizes, summed (each root's whole closure, shared paths counted
    /// once per root, as for matched roots).
    pub closure_size: u64,
    /// Their closures' download sizes, summed (`null` when some root's is unknown).
    pub download_size: Option<u64>,
}

/// Closure sizes of a set of roots summed, before and after.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RootsSum {
    pub old: u64,
    pub new: u64,
    pub delta: i64,
    /// `delta` in percent of `old` (`null` when `old` is 0).
    pub percent: Option<f64>,
}

/// How many roots changed how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RootCounts {
    pub both: usize,
    pub only_old: usize,
    pub only_new: usize,
    pub grown: usize,
    pub shrunk: usize,
    pub unchanged: usize,
}

/// One root of either set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RootDiff {
    /// Package name and output, without hash and version (`hello`, `openssl.dev`).
    pub name: String,
    pub package: String,
    pub output: String,
    pub old: Option<RootSide>,
    pub new: Option<RootSide>,
    /// New closure size minus old (a root in one set only: its size, or minus it).
    pub delta: i64,
    /// `delta` in percent of the old closure size (`null` for a root in one set, or an
    /// old size of 0).
    pub percent: Option<f64>,
}

/// A root in one set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootSide {
    pub path: String,
    pub closure_size: u64,
    /// The version in its store name (`2.12.1`; `""` when it has none).
    #[serde(default)]
    pub version: String,
    /// The attribute path the set names it by (a nix-eval-jobs or Hydra job, a
    /// nixpkgs-review result); `null` for a plain list of store paths.
    #[serde(default)]
    pub attr: Option<String>,
    /// Its closure's download size (`FileSize`/`downloadSize` summed; `null` when
    /// some path's is unknown).
    #[serde(default)]
    pub download_size: Option<u64>,
}

/// How a cause changes the closures it reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CauseChange {
    /// In the new closure of a root, not in its old one.
    Added,
    /// In the old closure, not in the new one.
    Removed,
    /// In both, with more bytes in the new.
    Grown,
    /// In both, with fewer bytes in the new.
    Shrunk,
}

impl CauseChange {
    /// The word used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            CauseChange::Added => "added",
            CauseChange::Removed => "removed",
            CauseChange::Grown => "grown",
            CauseChange::Shrunk => "shrunk",
        }
    }
}

/// A package whose arrival, departure or change of size changes root closures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cause {
    /// Package name without version (`libhuge`).
    pub name: String,
    pub change: CauseChange,
    /// Roots in both sets whose closure it enters, leaves or changes in.
    pub roots: usize,
    /// What it adds to (or, negative, removes from) those closures, summed.
    pub bytes: i64,
    /// The package's versions in the old and new graphs (sorted; `""` for none).
    pub old_versions: Vec<String>,
    pub new_versions: Vec<String>,
    /// The root of `chain` (its `name`).
    pub example_root: String,
    /// That root's attribute path, when the set names one.
    #[serde(default)]
    pub example_attr: Option<String>,
    /// Store paths from that root to a path of the package.
    pub chain: Vec<String>,
}

/// Paths rebuilt with the same name: a mass rebuild, summarised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RebuildSummary {
    /// Paths only in NEW (by store path) whose name (without hash) OLD has on a path
    /// only in OLD.
    pub paths_rebuilt: usize,
    /// Of those, rebuilt with the same NAR size.
    pub paths_rebuilt_same_size: usize,
    /// Their NAR sizes, summed.
    pub bytes_rebuilt_same_size: u64,
    /// Paths only in NEW whose name OLD does not have.
    pub paths_added: usize,
    /// Paths only in OLD whose name NEW does not have.
    pub paths_removed: usize,
    /// Matched roots with a new store path and the same closure size.
    pub roots_rebuilt_same_size: usize,
}

/// What `--top` left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetRest {
    /// Roots not listed.
    pub roots: usize,
    /// Their deltas, summed.
    pub roots_delta: i64,
    /// Causes not listed.
    pub causes: usize,
    /// Their bytes, summed.
    pub causes_bytes: i64,
}

/// A growth limit: percent of the old size, or bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "unit", content = "value")]
pub enum GrowthLimit {
    Percent(f64),
    Bytes(u64),
}

impl GrowthLimit {
    /// Whether growing from `old` by `delta` bytes exceeds the limit.
    pub fn exceeded(self, old: u64, delta: i64) -> bool {
        match self {
            GrowthLimit::Percent(p) => delta > 0 && delta as f64 > old as f64 * p / 100.0,
            GrowthLimit::Bytes(b) => delta > 0 && delta as u64 > b,
        }
    }
}

/// `check` on package sets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetCheck {
    pub pass: bool,
    /// `--max-growth`, per root.
    pub max_growth: Option<GrowthLimit>,
    /// `--max-total-growth`, of the closure sizes of every root summed
    /// (`total.all_roots`: added roots' closures count as growth, removed roots' as
    /// shrinkage).
    pub max_total_growth: Option<GrowthLimit>,
    /// How many roots exceed `max_growth`.
    pub roots_failed: usize,
    /// Those roots, largest growth first (at most `--top`), each with what grew in it.
    pub failed: Vec<FailedRoot>,
    /// Whether the total exceeds `max_total_growth`.
    pub total_failed: bool,
    /// `--max-new-root-size`: the most a root only in NEW may bring (its closure).
    #[serde(default)]
    pub max_new_root_size: Option<u64>,
    /// How many roots only in NEW exceed it.
    #[serde(default)]
    pub new_roots_failed: usize,
    /// Those roots, largest first (at most `--top`).
    #[serde(default)]
    pub failed_new: Vec<FailedNewRoot>,
}

/// A root only in NEW whose closure is larger than `--max-new-root-size`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedNewRoot {
    pub name: String,
    pub attr: Option<String>,
    pub path: String,
    pub closure_size: u64,
}

/// A root that grew more than allowed, and the packages that changed its closure most.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedRoot {
    pub name: String,
    /// Its attribute path, when the set names one.
    #[serde(default)]
    pub attr: Option<String>,
    pub old: u64,
    pub new: u64,
    pub delta: i64,
    pub percent: Option<f64>,
    /// The largest changes in this root's closure, by package.
    pub causes: Vec<RootCause>,
}

/// One package's change in one root's closure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootCause {
    pub name: String,
    pub change: CauseChange,
    pub bytes: i64,
}
