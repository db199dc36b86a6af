//! The JSON contract: plain serde structs, one module per command, each document
//! carrying `schema_version`. Renderers read these; nothing here computes.
//!
//! Field names follow `SPEC.md` ("Core JSON fields"). Adding a field is compatible;
//! renaming or removing one needs a new `SCHEMA_VERSION` and a deprecation path.
//! The contract is pinned from outside, by `tests/json_contract.rs`, which reads the
//! binary's output into its own mirror structs; the structs here need not refuse
//! unknown fields (and cannot, where they flatten a shared header).
//!
//! Reports hold facts, not prose: where the JSON has a sentence (check failures, every
//! report's warnings, diff version changes), the struct holds an enum or struct
//! of what the sentence says, and `crate::render::words` both words it and serialises
//! it as that sentence. Likewise Nix code (a split's `nix` and `attributes`, a GPU
//! remedy's `nix`): the struct holds what the code says (`NixCode`, `SplitCode`), and
//! `crate::render::nix` writes it. A report read back from JSON keeps sentences and
//! code as they were written. The few derived figures a renderer needs (a hop's hit count,
//! a package's path counts) are methods here, so that every format shows the same.

mod chain;
mod check;
mod diff;
mod gpu;
mod header;
mod nix;
mod refs;
mod rules;
mod set_diff;
mod split;
mod store;
mod why;

pub use header::{ClosureHeader, ClosureRef, EvidenceLevel, VerdictScope, SCHEMA_VERSION};

pub use crate::store::FilesFrom;
pub use crate::store::{
    Snapshot, SnapshotHeader, SnapshotKind, SnapshotPath, SourceRef, SNAPSHOT_KIND,
    SNAPSHOT_SCHEMA_VERSION,
};
pub use chain::{chains_of, Chain, Step};
pub use check::{
    AgainstCheck, AllowedGrowth, BaselineCheck, Blame, CheckFailure, CheckReport, CheckSubject,
    CheckWarning, Contributor, ExtraPaths, MaxSizeCheck, PathGroup,
};
pub use diff::{
    DiffReport, DiffRest, DiffSide, DiffWarning, PackageChange, PackageDiff, PathChange,
    PathCounts, PathDiff, Side, VersionChange,
};
pub use gpu::{
    GpuArch, GpuChange, GpuOption, GpuPath, GpuRemedy, GpuReport, GpuVendor, GpuWarning,
};
pub use nix::{
    is_plain, DataDirJoin, EditAt, ExpressionError, ExpressionFile, ExpressionProblem, GpuRebuild,
    NixCode, StdenvTerms,
};
pub use refs::{
    EvidenceDetail, EvidenceItem, Explanation, ReachStep, ReachVia, RefEntry, RefsPath, RefsReport,
    RefsWarning,
};
pub use rules::{ClassRow, DataDirRow, KindRow, RuleSource, RulesReport, SplitRow, VerdictRow};
pub use set_diff::{
    Cause, CauseChange, FailedNewRoot, FailedRoot, GrowthLimit, OneSidedTotal, RebuildSummary,
    RootCause, RootCounts, RootDiff, RootSide, RootsSum, SetCheck, SetDiffReport, SetRest, SetSide,
    SetTotal,
};
pub use split::{
    ArchRow, Assumption, AssumptionReason, Because, BecauseDetail, BecauseKind, CycleEdge, NoSplit,
    NoSplitReason, OutputReference, OutputUse, Remedy, RemedyOption, SplitAction, SplitAttributes,
    SplitCode, SplitExpr, SplitExpression, SplitFor, SplitNix, SplitOutput, SplitReport,
    SplitTerms, SplitWarning, WhySavings, WhySuggestion,
};
pub use store::{
    PathsBytes, StoreKeep, StoreReport, StoreRest, StoreRoot, StoreWarning, STORE_SCHEMA_VERSION,
};
pub use why::{
    ChainNode, HopEvidence, RestRow, SortKey, WhyChainsReport, WhyGpu, WhyPath, WhyReport,
    WhyWarning,
};

use serde::{Deserialize, Deserializer};

/// Warnings are facts written as sentences (`crate::render::words` serialises them); a
/// sentence cannot be read back into its facts. A report read back (a saved document
/// rendered again) keeps each warning as its sentence, in the variant that holds words
/// made elsewhere (`Input`), so it renders as it did.
macro_rules! read_back_as_words {
    ($($t:ident),* $(,)?) => {$(
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                String::deserialize(d).map($t::Input)
            }
        }
    )*};
}

read_back_as_words!(
    WhyWarning,
    RefsWarning,
    SplitWarning,
    GpuWarning,
    StoreWarning
);
