//! One analysis per command. Each takes loaded data and options and returns a report
//! (`crate::report`); none prints or exits.

mod cache;
mod evidence;
mod refs;
mod why;

pub use cache::ScanCache;
pub use evidence::EvidenceOptions;
pub use refs::{evidence_verdict, refs, refs_of_path, FileSource, Progress, RefsOptions};
pub use why::{why, why_chains, SortKey, WhyOptions};

/// Why an analysis could not run.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error(transparent)]
    Root(#[from] crate::store::RootSelectionError),
    #[error("{origin} has no root: every path is referenced by another (a cycle?); name one with --root")]
    NoRoot { origin: String },
    #[error("{path} is not in the closure of {root}")]
    NotInClosure { path: String, root: String },
}
