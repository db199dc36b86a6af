//! `nixcut why` documents: the ranked size report and the chains to one target.

use serde::{Deserialize, Serialize};

use super::{EvidenceLevel, SourceRef};
use crate::evidence::PathWarning;

/// What `why` ranks by (JSON `sort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SortKey {
    /// Added size (what dropping the path frees).
    #[default]
    Added,
    /// Closure size.
    Closure,
    /// NAR size.
    Nar,
}

impl SortKey {
    /// The JSON spelling: `added`, `closure` or `nar`.
    pub fn as_str(self) -> &'static str {
        match self {
            SortKey::Added => "added",
            SortKey::Closure => "closure",
            SortKey::Nar => "nar",
        }
    }
}

impl std::fmt::Display for SortKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `nixcut why ROOT`: what makes the closure big.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhyReport {
    pub schema_version: u32,
    /// The root (full store path); with several roots, the first, and `roots` has all.
    pub root: String,
    pub roots: Vec<String>,
    pub source: SourceRef,
    /// Sum of the NAR sizes of every path in the closure.
    pub closure_size: u64,
    pub path_count: usize,
    /// False when some NAR sizes were unknown (counted as 0).
    pub sizes_known: bool,
    /// The key `paths` is ranked by: `added`, `closure` or `nar`.
    pub sort: SortKey,
    /// The ranked paths (all, or the first `--top`).
    pub paths: Vec<WhyPath>,
    /// What `--top` hid, if anything.
    pub rest: Option<RestRow>,
    pub evidence: EvidenceLevel,
    /// How many of the first entries of `paths` carry file evidence (`kept_by`,
    /// `kept_by_more`): their referrers were scanned (`--evidence-paths`, by default
    /// the first 25 or `--top`). Later entries were not scanned, so an empty `kept_by`
    /// there says nothing. 0 at graph level.
    pub evidence_paths: usize,
    /// With file evidence: whom the verdicts of `kept_by` judge for (`consumer`: ROOT,
    /// as `refs --closure ROOT`; `per-path`: each referrer on its own files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict_scope: Option<super::VerdictScope>,
    /// With file-level evidence and one root: the closure after every safe split
    /// suggestion (`nixcut split`), and each suggestion's saving.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub savings: Option<super::WhySavings>,
    /// JSON: one sentence each.
    pub warnings: Vec<WhyWarning>,
}

/// A warning of `why` (both documents).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WhyWarning {
    /// A warning from loading the input.
    Load(crate::store::LoadWarning),
    /// Any warning of a report read back from JSON: its sentence.
    Input(String),
    /// A problem with the evidence of one scanned path.
    Evidence {
        /// The path (full store path).
        path: String,
        warning: PathWarning,
    },
}

/// One path of a [`WhyReport`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhyPath {
    pub path: String,
    pub nar_size: u64,
    /// NAR sizes of everything this path reaches, itself included.
    pub closure_size: u64,
    /// What leaving this path out would free: its dominator-tree subtree.
    pub added_size: u64,
    /// The shortest chain from the root: full store paths, root first, this path last.
    /// (A parent pointer: a closure's chains share their prefixes.) A chain longer than
    /// `--max-chain-length` (default 32) is cut: it lists the
    /// root and then the last `max - 1` paths, and `chain_omitted` counts the paths left
    /// out between the root and the second path listed.
    pub chain: super::Chain,
    /// How many paths of the chain are not listed, right after the root (absent: none,
    /// the chain is whole). The chain's full length is `chain.len() + chain_omitted`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub chain_omitted: usize,
    /// The path's immediate dominator (full store path): the nearest path on every
    /// chain from the root(s) to it, whose added size includes this one's. Absent for a
    /// root and for a path shared by several roots (dominated by none of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dominator: Option<std::sync::Arc<str>>,
    /// What keeps this path in: the evidence of its direct referrers (files scanned;
    /// empty at graph level). At most `--evidence-referrers` referrers are scanned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept_by: Vec<HopEvidence>,
    /// Referrers not scanned because of that cap.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kept_by_more: usize,
    /// The GPU code and data in this path's own files (as `nixcut gpu` counts them),
    /// when its files were read and it has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<WhyGpu>,
}

/// GPU bytes of one path's own NAR.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhyGpu {
    /// Bytes of per-architecture files and code objects in fat binaries.
    pub bytes: u64,
    /// GPU data every architecture needs.
    pub generic_bytes: u64,
    /// Base architecture -> bytes.
    pub archs: std::collections::BTreeMap<String, u64>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The evidence of one reference (an edge of the graph): who refers, how, and the
/// verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HopEvidence {
    /// The referring path.
    pub referrer: String,
    /// Strongest verdict among the evidence, as in `refs`.
    pub verdict: crate::classify::Verdict,
    pub rule: String,
    /// Hits per evidence kind.
    pub kinds: std::collections::BTreeMap<String, u64>,
    /// The first few pieces of evidence (`refs` lists them all).
    pub evidence: Vec<super::EvidenceItem>,
}

impl HopEvidence {
    /// Every hit of the reference: the sum of [`HopEvidence::kinds`] (`evidence` holds
    /// only the first few).
    pub fn hit_count(&self) -> u64 {
        self.kinds.values().sum()
    }
}

/// The paths `--top` hid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestRow {
    /// How many paths are not shown.
    pub count: usize,
    /// Their NAR sizes together (shown + rest = closure size).
    pub nar_size: u64,
}

/// `nixcut why ROOT TARGET`: every chain from ROOT to TARGET.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhyChainsReport {
    pub schema_version: u32,
    pub root: String,
    pub target: String,
    pub source: SourceRef,
    /// Number of distinct chains (saturates at u64::MAX; see `chain_count_saturated`).
    pub chain_count: u64,
    pub chain_count_saturated: bool,
    /// Distinct paths on some chain, root and target included.
    pub paths_on_chains: usize,
    /// With `--max-chains`: how many chains the tree leaves out (absent: none left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chains_not_shown: Option<u64>,
    /// What TARGET alone adds to ROOT's closure (its dominator subtree).
    pub target_added_size: u64,
    /// The tree of chains; `None` when ROOT does not depend on TARGET.
    pub tree: Option<ChainNode>,
    pub evidence: EvidenceLevel,
    /// With file evidence: whom the hops' verdicts judge for (as in `why ROOT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict_scope: Option<super::VerdictScope>,
    /// JSON: one sentence each.
    pub warnings: Vec<WhyWarning>,
}

/// A node of the chain tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainNode {
    pub path: String,
    pub nar_size: u64,
    /// Already expanded earlier in the tree; its children are not repeated.
    pub repeat: bool,
    /// The evidence of the reference from the parent node to this one (absent for the
    /// root, and at graph level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<HopEvidence>,
    pub children: Vec<ChainNode>,
}

impl Drop for ChainNode {
    /// Children are dropped from a list, not by recursion: a chain 50,000 paths deep
    /// would overflow the stack.
    fn drop(&mut self) {
        let mut pending = std::mem::take(&mut self.children);
        while let Some(mut n) = pending.pop() {
            pending.append(&mut n.children);
        }
    }
}
