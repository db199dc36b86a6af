//! One analysis per command. Each takes loaded data, the typed evidence
//! (`crate::evidence`) where it needs files, and plain options, and returns a report
//! (`crate::report`); none prints, exits, reads the environment or touches the file
//! system.
//!
//! `common.rs` holds what every analysis shares (roots, graph, input warnings);
//! `convert.rs` turns evidence into report entries; `edges.rs` answers "how does A
//! refer to B" for `why`.

mod check;
mod common;
mod consumer;
mod convert;
mod diff;
mod edges;
mod error;
mod gpu;
mod refs;
mod rules;
mod set_diff;
mod snapshot;
mod split;
mod store;
mod why;

pub use crate::report::SortKey;
pub use check::{check, CheckOptions, Growth, DEFAULT_MAX_GROWTH_PERCENT};
pub use common::graph_for;
pub use diff::{diff, DiffOptions};
pub use edges::EvidenceOptions;
pub use error::{AnalysisError, SetSumOutOfRange};
pub use gpu::{account, entry_gpu, gpu, Account, ArchShare, EntryGpu, GpuOptions};
pub use refs::{refs, RefsOptions};
pub use rules::rules;
pub use set_diff::{set_diff, SetDiffOptions, SetInput, SetLimits};
pub use snapshot::{snapshot, SnapshotOptions};
pub use split::{nar_size_of, savings, split, SplitOptions};
pub use store::{store_report, StoreOptions};
pub use why::{
    why, why_chains, why_chains_capped, why_evidence, why_ranking, why_report, WhyEvidence,
    WhyOptions, WhyRanking, DEFAULT_MAX_CHAIN_LENGTH,
};
