//! What every closure report starts with: the schema version, the closure it is about
//! ([`ClosureHeader`], [`ClosureRef`]), whom its verdicts judge for ([`VerdictScope`])
//! and how much it knows of why references exist ([`EvidenceLevel`]).

use crate::store::SourceRef;
use serde::{Deserialize, Serialize};

/// Version of every JSON document nixcut writes.
pub const SCHEMA_VERSION: u32 = 1;

/// The closure a report (or one side of a diff) is about: its root(s) and input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClosureRef {
    /// The root (full store path); with several roots the first, and `roots` has all.
    pub root: String,
    pub roots: Vec<String>,
    pub source: SourceRef,
}

/// The fields every closure report starts with: `schema_version`, then the
/// [`ClosureRef`]. Flattened (`#[serde(flatten)]`) into the reports, so the JSON keys
/// stay where they always were.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClosureHeader {
    pub schema_version: u32,
    #[serde(flatten)]
    pub closure: ClosureRef,
}

impl ClosureHeader {
    /// A header of the current [`SCHEMA_VERSION`].
    pub fn new(closure: ClosureRef) -> ClosureHeader {
        ClosureHeader {
            schema_version: SCHEMA_VERSION,
            closure,
        }
    }
}

/// Whom a report's verdicts judge for (`verdict_scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictScope {
    /// ROOT is the consumer: a hit counts as `runtime` only when ROOT loads, runs or
    /// opens the file holding it, as `refs --closure ROOT` judges.
    Consumer,
    /// Each referrer is judged on its own files (its own programs count): the files of
    /// ROOT's whole closure were not read (NARs of a binary cache would have had to be
    /// downloaded). `refs --closure ROOT` gives the consumer's verdicts.
    PerPath,
}

/// How much a report knows about why references exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceLevel {
    /// Only the reference graph: no file was scanned.
    Graph,
    /// Files were scanned; evidence is attached.
    Files,
}
