//! The reference scanner and the walkers (work in progress).

mod scanner;

pub use scanner::{Hit, ReferenceScanner, ScanStream, StreamResult, DEFAULT_MAX_HITS_PER_FILE};
