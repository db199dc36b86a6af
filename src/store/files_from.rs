//! [`FilesFrom`]: the kind of place a report's files were read from, as the `refs` and
//! `gpu` reports state it (`files_from`). The file sources (`crate::source`) say which
//! kind they are in these words; it lives in the store vocabulary, below both, so
//! that the sources need nothing from the reports.

use serde::{Deserialize, Serialize};

/// Which kind of source the files come from (the `refs` report's `files_from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FilesFrom {
    /// Directory trees of a store directory.
    Store,
    /// NAR files of a binary cache.
    Nar,
    /// No files: graph-level answers only.
    Unavailable,
}
