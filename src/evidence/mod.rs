//! The typed evidence layer between the scan and the analyses: for one store path, each
//! reference with the hits that show it, as enums and raw bytes ([`PathEvidence`]).
//!
//! [`Collector`] turns a store path into evidence: it asks the file source
//! (`crate::source`) for the files, scans them (`crate::scan`, which gives every hit its
//! kind), asks the source whether each absolute symlink target exists, and applies the
//! verdict rules (`crate::classify`). What the scan found ([`ScannedPath`], facts only)
//! is cached per store path in its own versioned format ([`ScanCache`]); verdicts are
//! derived again on every run, so a change of rules never needs a cache flush.
//!
//! The `refs` report is made from this at the edge (`crate::analysis`); reachability,
//! split planning and GPU accounting consume it directly.

mod cache;
mod collect;
mod path;

pub use path::{
    ElfLink, EntryFact, HitPlace, JudgedHit, NotScanned, PathEvidence, PathWarning, Reference,
    ScanStatus, ScannedPath, ScannedRef, SearchDir,
};

pub use cache::{ScanCache, CACHE_FORMAT};
pub use collect::{Collector, Progress, ReachedFn, Scanned};

pub use crate::classify::SearchTag;
pub use crate::scan::HitFact;
