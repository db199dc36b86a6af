//! What a package-set diff is given (the two sets, the options, `check`'s limits) and
//! the shapes its steps hand each other (matched pairs, one-sided roots).

use crate::report::GrowthLimit;
use crate::store::{Closure, StorePath};

/// One package set to diff: the file it was read from, its roots, and a graph that
/// describes every root's closure (it may hold more: both sets can share one graph).
#[derive(Debug, Clone, Copy)]
pub struct SetInput<'a> {
    pub origin: &'a str,
    pub roots: &'a [StorePath],
    /// The attribute path of each root (same order as `roots`; empty when the set
    /// names none).
    pub attrs: &'a [Option<String>],
    pub graph: &'a Closure,
}

/// Options of a package-set diff or check.
#[derive(Debug, Clone, Default)]
pub struct SetDiffOptions {
    /// Keep the first N matched roots (and N of each one-sided group) and the N
    /// largest growing and N largest shrinking causes; `None`: all.
    pub top: Option<usize>,
    /// Rows the table and Markdown show before collapsing the rest.
    pub show: usize,
    /// `--changed-only`: leave out the matched roots whose closure size is unchanged.
    pub changed_only: bool,
    /// `check`: the per-root and total limits (`None`: a plain diff).
    pub check: Option<SetLimits>,
    /// Where the steps report their times.
    pub timings: crate::timing::Timings,
}

/// The limits of `check` on package sets.
#[derive(Debug, Clone, Copy, Default)]
pub struct SetLimits {
    pub max_growth: Option<GrowthLimit>,
    pub max_total_growth: Option<GrowthLimit>,
    /// `--max-new-root-size`: the most each root only in NEW may bring (its closure).
    pub max_new_root_size: Option<u64>,
}

/// Matched pairs of roots: (old root index, new root index, key).
pub(super) type Pairs = [(usize, usize, (String, String))];
/// Roots in one set only: (root index, key).
pub(super) type OneSided = [(usize, (String, String))];
