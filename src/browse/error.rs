//! Why a session could not start or ended badly.

use std::io;

use crate::analysis::AnalysisError;

/// A session that could not start (no root, a root not in the closure) or a terminal
/// that failed.
#[derive(Debug, thiserror::Error)]
pub enum BrowseError {
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    #[error("the terminal: {0}")]
    Terminal(#[from] io::Error),
}
