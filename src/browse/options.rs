//! What the binary hands `nixcut browse`: the options of the analyses it runs for the
//! selection (the same evidence options `why` takes), whether colour is allowed, and
//! how to load the OTHER closure of a diff (the binary's own input loading, so `d`
//! reads every input `nixcut` reads).

use std::sync::Arc;

use crate::analysis::EvidenceOptions;
use crate::store::Closure;

/// Loads the closure of an input named at the `d` prompt (a path, a file, a store path,
/// a binary cache…); the error is one sentence naming the input.
pub type Loader = Arc<dyn Fn(&str) -> Result<Closure, String> + Send + Sync>;

/// The options of one `nixcut browse` session.
#[derive(Clone)]
pub struct BrowseOptions {
    /// `--root`: which root of a multi-root input (all roots when `None`).
    pub root: Option<String>,
    /// Where files come from, the scan cache and the rules: what `refs`, `why ROOT
    /// TARGET`, `gpu` and `split` are given.
    pub evidence: EvidenceOptions,
    /// Colour allowed (`--color`, `NO_COLOR`): without it the screen uses only bold,
    /// reverse video and the `+`/`-` markers.
    pub color: bool,
    /// Chains shown by `w` at most (`why ROOT TARGET --max-chains`).
    pub max_chains: u64,
    /// Loads OTHER for `d`.
    pub load_other: Loader,
}
