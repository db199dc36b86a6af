//! Why an analysis could not run ([`AnalysisError`]), and the one case with facts of its
//! own ([`SetSumOutOfRange`]).

/// Why an analysis could not run.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error(transparent)]
    Root(#[from] crate::store::RootSelectionError),
    #[error("{origin} has no root: every path is referenced by another (a cycle?); name one with --root")]
    NoRoot { origin: String },
    #[error("{path} is not in the closure of {root}")]
    NotInClosure { path: String, root: String },
    #[error("{origin} is not a complete closure: {count} reference(s) point at paths it does not describe (e.g. {example}); use `nix path-info --json -r` or a store path")]
    Incomplete {
        origin: String,
        count: usize,
        example: String,
    },
    #[error("{origin} has no NAR sizes for some paths, and {what} needs them; use `nix path-info --json -r`, a registration file or a store path")]
    SizesUnknown { origin: String, what: &'static str },
    #[error("the closure of {origin} has size 0, so no ratio can be taken against it")]
    EmptyReference { origin: String },
    #[error("nothing to check: give --baseline, --against with --max-ratio, or --max-size")]
    NoCriterion,
    #[error("--explain needs a consumer: use it with --closure ROOT")]
    ExplainNeedsConsumer,
    #[error(transparent)]
    SetSumOutOfRange(Box<SetSumOutOfRange>),
    /// `split --expr FILE`: FILE cannot take the split (where, and what it lacks).
    #[error(transparent)]
    Expression(#[from] crate::report::ExpressionError),
}

/// A sum over the roots of two package sets left the range a report holds.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot diff the package sets `{old}` and `{new}`: {what} add up to {value} bytes, \
     beyond {limit}; no real closure is that large, so a NAR size is wrong{example}"
)]
pub struct SetSumOutOfRange {
    pub old: String,
    pub new: String,
    /// What was summed (`the closure sizes of the 3 roots in OLD`).
    pub what: String,
    /// The exact sum, in decimal.
    pub value: String,
    /// The range it left (`2^64 - 1 bytes (16 EiB)…`).
    pub limit: &'static str,
    /// ` (the largest NAR size: PATH with N bytes)`, or empty.
    pub example: String,
}
