//! `nixcut check ROOT` documents: a CI gate on closure size.
//!
//! ```json
//! {
//!   "schema_version": 1,
//!   "root": "/nix/store/…-llama-cpp-rocm-0.0.0",
//!   "roots": ["/nix/store/…-llama-cpp-rocm-0.0.0"],
//!   "source": { "kind": "live-store", "origin": "/nix/store/…-llama-cpp-rocm-0.0.0" },
//!   "pass": false,
//!   "closure_size": 7215736,
//!   "path_count": 25,
//!   "limit": 5373034,
//!   "baseline": {
//!     "pass": false, "limit": 5373034, "measured": 7215736,
//!     "source": { "kind": "snapshot", "origin": "ci/closure-baseline.json" },
//!     "baseline_root": "/nix/store/…-llama-cpp-rocm-0.0.0",
//!     "baseline_size": 5117176,
//!     "max_growth_percent": 5.0, "max_growth_bytes": null,
//!     "growth": 2098560, "growth_percent": 41.01,
//!     "new_paths": { "count": 2, "size": 2115104, "top": [
//!       { "path": "/nix/store/…-big-blob-1.0", "nar_size": 2097776,
//!         "added_size": 2097776, "chain": [ "…-llama-cpp-rocm-0.0.0", "…-big-blob-1.0" ] }
//!     ], "rest": null }
//!   },
//!   "against": null,
//!   "max_size": null,
//!   "failures": [ "closure of llama-cpp-rocm-0.0.0 is 6.9 MiB and grew by 2.0 MiB (+41.0%) …" ],
//!   "warnings": []
//! }
//! ```
//!
//! Every criterion (`baseline`, `against`, `max_size`; `null` when not asked for) has
//! its own `pass`, `limit` and `measured` in bytes, so a criterion can be judged on its
//! own; the top-level `limit` is the tightest of them and `pass` is true when all pass.
//! `against` adds the `ratio` and its `max_ratio`. Lists of paths are ranked by added
//! size over the part shared with the baseline or OTHER (see
//! `crate::graph::exclusive_added_sizes`), so the first entries are what to cut.
//!
//! `failures` and `warnings` are facts ([`CheckFailure`], [`CheckWarning`]): which
//! criterion failed, with the numbers and paths its message names. The words are the
//! renderers' (`crate::render::words`), which also serialise each as the one sentence
//! the JSON contract has always carried, so the JSON is a list of strings. That is
//! also why [`CheckReport`] is `Serialize` only: a sentence cannot be read back into
//! its facts.

use serde::{Deserialize, Serialize};

use super::{ClosureHeader, RestRow, SourceRef};

/// `nixcut check ROOT`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckReport {
    /// `schema_version`, `root` (with several roots the first), `roots`, `source`.
    #[serde(flatten)]
    pub header: ClosureHeader,
    /// True when every criterion passes.
    pub pass: bool,
    /// Sum of the NAR sizes of every path in ROOT's closure.
    pub closure_size: u64,
    pub path_count: usize,
    /// The tightest limit in bytes among the criteria.
    pub limit: u64,
    /// `--baseline FILE [--max-growth G]`.
    pub baseline: Option<BaselineCheck>,
    /// `--against OTHER --max-ratio R`.
    pub against: Option<AgainstCheck>,
    /// `--max-size SIZE`.
    pub max_size: Option<MaxSizeCheck>,
    /// One per failed criterion, naming the top contributors (JSON: one sentence each).
    pub failures: Vec<CheckFailure>,
    /// JSON: one sentence each.
    pub warnings: Vec<CheckWarning>,
}

/// A failed criterion, with what its message says.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckFailure {
    /// `--baseline`: the closure grew by more than allowed.
    Baseline {
        subject: CheckSubject,
        /// ROOT's closure size.
        measured: u64,
        /// `measured - baseline_size`.
        growth: i64,
        /// As [`BaselineCheck::growth_percent`] (two decimals; `None` for an empty
        /// baseline).
        growth_percent: Option<f64>,
        baseline_size: u64,
        allowed: AllowedGrowth,
        limit: u64,
        /// The paths the baseline lacks.
        new_paths: Blame,
    },
    /// `--against`: the closure is more than `max_ratio` times OTHER's.
    Against {
        subject: CheckSubject,
        measured: u64,
        /// `measured / other_size`, unrounded.
        ratio: f64,
        /// OTHER's root(s), as [`AgainstCheck::other_root`].
        other_root: String,
        other_size: u64,
        max_ratio: f64,
        limit: u64,
        /// The paths OTHER lacks.
        only_in_root: Blame,
    },
    /// `--max-size`: the closure is over the budget.
    MaxSize {
        subject: CheckSubject,
        measured: u64,
        limit: u64,
        /// The largest paths by added size.
        largest: Blame,
    },
}

/// Whose closure a message speaks of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckSubject {
    /// One root (full store path).
    Root(String),
    /// Several roots, by count.
    Roots(usize),
}

/// The growth a baseline criterion allows, as it was given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AllowedGrowth {
    /// `--max-growth 5%`.
    Percent(f64),
    /// `--max-growth 10MiB`.
    Bytes(u64),
}

/// The paths a failure names: the group they come from (`None` when it is the whole
/// closure), and its first ranked paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blame {
    /// The paths ROOT has and the reference lacks (`None` for `--max-size`, where the
    /// group is the whole closure).
    pub group: Option<PathGroup>,
    /// The first ranked paths (`--top` of them), most to blame first.
    pub top: Vec<Contributor>,
    /// How many paths were ranked in all (the roots never are).
    pub ranked: usize,
}

/// A set of paths, by count and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathGroup {
    pub count: usize,
    /// Their NAR sizes together.
    pub size: u64,
}

/// A warning the check adds to those of loading its inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckWarning {
    /// A warning from loading ROOT.
    Load(crate::store::LoadWarning),
    /// Any warning of a report read back from JSON: its sentence.
    Input(String),
    /// The check passed and the closure is smaller than the baseline's by this many
    /// bytes: the baseline could be updated.
    BaselineShrank { by: u64 },
}

/// Growth against a baseline (a snapshot, or any other input).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineCheck {
    pub pass: bool,
    /// Largest allowed closure size: the baseline plus the allowed growth.
    pub limit: u64,
    /// ROOT's closure size.
    pub measured: u64,
    /// Where the baseline came from.
    pub source: SourceRef,
    pub baseline_root: String,
    pub baseline_size: u64,
    /// Allowed growth in percent of the baseline (`--max-growth 5%`), if given so.
    pub max_growth_percent: Option<f64>,
    /// Allowed growth in bytes (`--max-growth 10MiB`), if given so.
    pub max_growth_bytes: Option<u64>,
    /// `measured - baseline_size` (negative when the closure shrank).
    pub growth: i64,
    /// Growth in percent of the baseline (`null` when the baseline is empty).
    pub growth_percent: Option<f64>,
    /// Paths in ROOT's closure that the baseline does not have.
    pub new_paths: ExtraPaths,
}

/// ROOT compared with another closure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgainstCheck {
    pub pass: bool,
    /// Largest allowed closure size: `max_ratio` times OTHER's closure size.
    pub limit: u64,
    /// ROOT's closure size.
    pub measured: u64,
    /// Where OTHER came from.
    pub source: SourceRef,
    pub other_root: String,
    pub other_size: u64,
    pub max_ratio: f64,
    /// ROOT's closure size divided by OTHER's.
    pub ratio: f64,
    /// Paths in ROOT's closure that OTHER's does not have.
    pub only_in_root: ExtraPaths,
}

/// An absolute budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaxSizeCheck {
    pub pass: bool,
    pub limit: u64,
    pub measured: u64,
    /// The paths with the largest added size in ROOT's closure.
    pub largest: Vec<Contributor>,
}

impl MaxSizeCheck {
    /// Bytes over the limit (0 when within it).
    pub fn over_by(&self) -> u64 {
        self.measured.saturating_sub(self.limit)
    }

    /// Bytes left under the limit (0 when over it).
    pub fn to_spare(&self) -> u64 {
        self.limit.saturating_sub(self.measured)
    }
}

/// Paths of ROOT's closure that a reference closure lacks, ranked by added size over
/// the shared part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtraPaths {
    /// How many such paths there are.
    pub count: usize,
    /// Their NAR sizes together.
    pub size: u64,
    /// The first `--top` of them.
    pub top: Vec<Contributor>,
    /// The others, if any.
    pub rest: Option<RestRow>,
}

/// One path that contributes to the size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contributor {
    pub path: String,
    pub nar_size: u64,
    /// What leaving the path out would free (for paths the reference lacks: only what
    /// the reference lacks too).
    pub added_size: u64,
    /// The shortest chain from the root: full store paths, root first, this path last.
    pub chain: Vec<String>,
}
