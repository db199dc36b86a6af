//! The JSON contract, written down a second time, independently of the library's
//! `report` structs: every document nixcut prints, with every field, refusing unknown
//! ones (`deny_unknown_fields`), as ripgrep's `tests/json.rs` pins its wire format.
//!
//! A field renamed or removed in the library fails [`pin`]: the document no longer
//! deserialises into these structs, or reads back into a different JSON value. These
//! structs change only when the contract does (and then `SPEC.md` and
//! `schema_version` with them).

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Deserialise `text` into `T` and check that `T` holds the whole document: written
/// back, it is the same JSON value (no field dropped, none defaulted, no number
/// changed type).
pub fn pin<T: DeserializeOwned + Serialize>(what: &str, text: &str) -> T {
    let doc: serde_json::Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: not JSON: {e}\n{text}"));
    let typed: T = serde_json::from_value(doc.clone())
        .unwrap_or_else(|e| panic!("{what}: does not match the contract: {e}\n{text}"));
    let back = serde_json::to_value(&typed).expect("mirror serialises");
    assert_eq!(
        back, doc,
        "{what}: the mirror does not hold the whole document"
    );
    typed
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// `source`, `created_from`, and the source of a baseline or OTHER.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceRef {
    pub kind: String,
    pub origin: String,
}

/// `evidence`: `graph` or `files`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceLevel {
    Graph,
    Files,
}

/// `nixcut why ROOT`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhyReport {
    pub schema_version: u32,
    pub root: String,
    pub roots: Vec<String>,
    pub source: SourceRef,
    pub closure_size: u64,
    pub path_count: usize,
    pub sizes_known: bool,
    pub sort: String,
    pub paths: Vec<WhyPath>,
    pub rest: Option<RestRow>,
    pub evidence: EvidenceLevel,
    /// Leading entries of `paths` whose referrers were scanned.
    pub evidence_paths: usize,
    /// With file evidence: `consumer` (ROOT judges) or `per-path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict_scope: Option<String>,
    /// With file-level evidence and one root only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub savings: Option<WhySavings>,
    pub warnings: Vec<String>,
}

/// `why`'s savings line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhySavings {
    pub closure_size_before: u64,
    pub closure_size_after: u64,
    pub suggestions: Vec<WhySuggestion>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhySuggestion {
    pub package: String,
    pub saved: u64,
    pub outputs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhyPath {
    pub path: String,
    pub nar_size: u64,
    pub closure_size: u64,
    pub added_size: u64,
    /// Root first, this path last; cut to `--max-chain-length` paths (the root and the
    /// last ones) when longer.
    pub chain: Vec<String>,
    /// The paths the cut chain leaves out right after the root; absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub chain_omitted: usize,
    /// The immediate dominator; absent for a root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dominator: Option<String>,
    /// Absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept_by: Vec<HopEvidence>,
    /// Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kept_by_more: usize,
    /// Absent when the path's files hold no GPU code or were not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<WhyGpu>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhyGpu {
    pub bytes: u64,
    pub generic_bytes: u64,
    pub archs: std::collections::BTreeMap<String, u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HopEvidence {
    pub referrer: String,
    pub verdict: String,
    pub rule: String,
    pub kinds: BTreeMap<String, u64>,
    pub evidence: Vec<EvidenceItem>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestRow {
    pub count: usize,
    pub nar_size: u64,
}

/// `nixcut why ROOT TARGET`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhyChainsReport {
    pub schema_version: u32,
    pub root: String,
    pub target: String,
    pub source: SourceRef,
    pub chain_count: u64,
    pub chain_count_saturated: bool,
    pub paths_on_chains: usize,
    /// With `--max-chains`: the chains the tree leaves out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chains_not_shown: Option<u64>,
    pub target_added_size: u64,
    pub tree: Option<ChainNode>,
    pub evidence: EvidenceLevel,
    /// With file evidence: `consumer` (ROOT judges) or `per-path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict_scope: Option<String>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainNode {
    pub path: String,
    pub nar_size: u64,
    pub repeat: bool,
    /// Absent for the root and at graph level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<HopEvidence>,
    pub children: Vec<ChainNode>,
}

/// `nixcut refs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefsReport {
    pub schema_version: u32,
    pub source: SourceRef,
    pub evidence: EvidenceLevel,
    pub files_from: String,
    pub discover: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_evidence: Option<u64>,
    pub paths: Vec<RefsPath>,
    pub warnings: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explanation>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefsPath {
    pub path: String,
    pub scanned: bool,
    pub cached: bool,
    pub files_scanned: u64,
    pub bytes_scanned: u64,
    pub references: Vec<RefEntry>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefEntry {
    pub path: String,
    pub verdict: String,
    pub rule: String,
    pub registered: bool,
    pub self_reference: bool,
    pub evidence_count: u64,
    pub capped: u64,
    pub omitted: u64,
    pub kinds: BTreeMap<String, u64>,
    pub evidence: Vec<EvidenceItem>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceItem {
    pub file: String,
    pub offset: u64,
    pub kind: String,
    pub detail: String,
    pub verdict: String,
    pub rule: String,
    pub file_class: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reached: Option<bool>,
}

/// `refs --explain FILE`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Explanation {
    pub file: String,
    pub reached: bool,
    pub chain: Vec<ReachStep>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReachStep {
    pub file: String,
    pub via: String,
    pub detail: String,
}

/// A `nixcut snapshot` file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    pub kind: String,
    pub schema_version: u32,
    pub nixcut_version: String,
    pub store_dir: String,
    pub root: String,
    pub roots: Vec<String>,
    pub created_from: SourceRef,
    pub closure_size: u64,
    pub path_count: usize,
    pub paths: Vec<SnapshotPath>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotPath {
    pub path: String,
    pub nar_size: u64,
    pub nar_hash: Option<String>,
    pub closure_size: u64,
    pub references: Vec<String>,
    pub deriver: Option<String>,
}

/// `nixcut diff OLD NEW`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffReport {
    pub schema_version: u32,
    pub old: DiffSide,
    pub new: DiffSide,
    pub closure_size_delta: i64,
    pub paths_added: usize,
    pub paths_removed: usize,
    pub paths_changed: usize,
    pub paths_changed_same_size: usize,
    pub paths_unchanged: usize,
    pub packages: Vec<PackageDiff>,
    pub rest: Option<DiffRest>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffSide {
    pub root: String,
    pub roots: Vec<String>,
    pub source: SourceRef,
    pub closure_size: u64,
    pub path_count: usize,
    pub sizes_known: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PackageChange {
    Added,
    Removed,
    Version,
    Rebuilt,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackageDiff {
    pub package: String,
    pub change: PackageChange,
    pub version_change: String,
    pub old_versions: Vec<String>,
    pub new_versions: Vec<String>,
    pub old_size: u64,
    pub new_size: u64,
    pub nar_delta: i64,
    pub added_size: u64,
    pub removed_size: u64,
    pub impact: i64,
    pub paths: Vec<PathDiff>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathChange {
    Added,
    Removed,
    Changed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathDiff {
    pub change: PathChange,
    pub name: String,
    pub version: String,
    pub output: String,
    pub old_path: Option<String>,
    pub new_path: Option<String>,
    pub old_nar_size: Option<u64>,
    pub new_nar_size: Option<u64>,
    pub added_size: u64,
    pub removed_size: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffRest {
    pub count: usize,
    pub nar_delta: i64,
}

/// `nixcut check ROOT`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckReport {
    pub schema_version: u32,
    pub root: String,
    pub roots: Vec<String>,
    pub source: SourceRef,
    pub pass: bool,
    pub closure_size: u64,
    pub path_count: usize,
    pub limit: u64,
    pub baseline: Option<BaselineCheck>,
    pub against: Option<AgainstCheck>,
    pub max_size: Option<MaxSizeCheck>,
    pub failures: Vec<String>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineCheck {
    pub pass: bool,
    pub limit: u64,
    pub measured: u64,
    pub source: SourceRef,
    pub baseline_root: String,
    pub baseline_size: u64,
    pub max_growth_percent: Option<f64>,
    pub max_growth_bytes: Option<u64>,
    pub growth: i64,
    pub growth_percent: Option<f64>,
    pub new_paths: ExtraPaths,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgainstCheck {
    pub pass: bool,
    pub limit: u64,
    pub measured: u64,
    pub source: SourceRef,
    pub other_root: String,
    pub other_size: u64,
    pub max_ratio: f64,
    pub ratio: f64,
    pub only_in_root: ExtraPaths,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaxSizeCheck {
    pub pass: bool,
    pub limit: u64,
    pub measured: u64,
    pub largest: Vec<Contributor>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtraPaths {
    pub count: usize,
    pub size: u64,
    pub top: Vec<Contributor>,
    pub rest: Option<RestRow>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contributor {
    pub path: String,
    pub nar_size: u64,
    pub added_size: u64,
    pub chain: Vec<String>,
}

/// `nixcut split PATH [--for ROOT] [--gpu-targets …]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitReport {
    pub schema_version: u32,
    pub source: SourceRef,
    pub package: String,
    pub package_size: u64,
    pub outputs: Vec<SplitOutput>,
    #[serde(rename = "for")]
    pub for_root: Option<SplitFor>,
    pub gpu_targets: Vec<String>,
    pub archs: Vec<SplitArch>,
    pub actions: Vec<SplitAction>,
    pub nix: String,
    pub attributes: String,
    pub expression: Option<SplitExpression>,
    pub assumptions: Vec<SplitAssumption>,
    pub remedies: Vec<SplitRemedy>,
    pub no_split: Option<NoSplit>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitExpression {
    pub file: String,
    pub diff: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitOutput {
    pub name: String,
    pub size: u64,
    pub files: u64,
    pub paths: Vec<String>,
    pub references: Vec<SplitOutputReference>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitOutputReference {
    pub path: String,
    pub output: Option<String>,
    pub hits: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitFor {
    pub root: String,
    pub closure_size_before: u64,
    pub closure_size_after: u64,
    pub path_count_before: u64,
    pub path_count_after: u64,
    pub outputs_needed: Vec<String>,
    pub removed: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitArch {
    pub arch: String,
    pub files: u64,
    pub bytes: u64,
    pub referenced_bytes: u64,
    pub output: String,
    pub kept: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitBecause {
    pub file: String,
    pub offset: Option<u64>,
    pub kind: String,
    pub rule: String,
    pub detail: String,
    pub count: u64,
}

/// SPEC's "Split actions" table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SplitAction {
    Move {
        path: String,
        to: String,
        because: Vec<SplitBecause>,
    },
    Delete {
        path: String,
        because: Vec<SplitBecause>,
    },
    RemoveReferences {
        target: String,
        files: Vec<String>,
        because: Vec<SplitBecause>,
    },
    ShrinkRpath {
        files: Vec<String>,
        drop: Vec<String>,
        kept: String,
        because: Vec<SplitBecause>,
    },
    DropGpuArch {
        arch: String,
        paths: Vec<String>,
        because: Vec<SplitBecause>,
    },
    Rewrite {
        output: String,
        file: String,
        from: String,
        to: String,
        because: Vec<SplitBecause>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitAssumption {
    pub from: String,
    pub file: String,
    pub offset: Option<u64>,
    pub kind: Option<String>,
    pub sub_path: String,
    pub output: String,
    /// `no-sub-path`, `several-outputs`, `sub-path-missing`, `not-scanned`.
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitRemedy {
    pub output: String,
    pub directory: String,
    pub library: Option<String>,
    pub options: Vec<SplitRemedyOption>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SplitRemedyOption {
    Rebuild { nix: String },
    EnvVar { name: String, value: String },
    SymlinkBack,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoSplit {
    /// `only-runtime-files`, `files-unavailable`.
    pub reason: String,
    pub classes: Vec<String>,
    pub references: u64,
}

/// `nixcut gpu ROOT [--gpu-targets …]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuReport {
    pub schema_version: u32,
    pub source: SourceRef,
    pub root: String,
    pub closure_size: u64,
    pub path_count: u64,
    pub files_from: String,
    pub archs: Vec<GpuArch>,
    pub gpu_bytes: u64,
    pub generic_bytes: u64,
    pub generic_files: u64,
    pub host_bytes: u64,
    pub unscanned_bytes: u64,
    pub paths: Vec<GpuPath>,
    pub gpu_targets: Vec<String>,
    pub kept: Vec<String>,
    pub dropped: Vec<String>,
    pub closure_size_after: Option<u64>,
    pub path_count_after: Option<u64>,
    pub estimated: bool,
    pub removed: Vec<String>,
    pub changed: Vec<GpuChange>,
    pub remedies: Vec<GpuRemedy>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuArch {
    pub arch: String,
    pub vendor: String,
    pub bytes: u64,
    pub file_bytes: u64,
    pub elf_bytes: u64,
    pub code_bytes: u64,
    pub files: u64,
    pub links: u64,
    pub targets: Vec<String>,
    pub paths: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuPath {
    pub path: String,
    pub size: u64,
    pub gpu_bytes: u64,
    pub generic_bytes: u64,
    pub host_bytes: u64,
    pub archs: std::collections::BTreeMap<String, u64>,
    pub fat_binaries: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuChange {
    pub path: String,
    pub size_before: u64,
    pub size_after: u64,
    pub files_dropped: u64,
    pub objects_dropped: u64,
    pub estimated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuRemedy {
    pub option: String,
    pub packages: Vec<String>,
    pub paths: Vec<String>,
    pub value: Vec<String>,
    pub nix: String,
    pub saves: u64,
}

/// `nixcut diff OLD NEW` of two package sets (and `check` on them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetDiffReport {
    pub schema_version: u32,
    pub old: SetSide,
    pub new: SetSide,
    pub total: SetTotal,
    pub counts: SetCounts,
    pub roots: Vec<SetRoot>,
    pub causes: Vec<SetCause>,
    pub rebuild: SetRebuild,
    pub rest: Option<SetRest>,
    pub check: Option<SetCheck>,
    pub warnings: Vec<String>,
    pub changed_only: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetSide {
    pub origin: String,
    pub graph: String,
    pub roots: usize,
    pub path_count: usize,
    pub union_size: u64,
    pub sizes_known: bool,
    pub union_download_size: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetTotal {
    pub roots: usize,
    pub old: u64,
    pub new: u64,
    pub delta: i64,
    pub percent: Option<f64>,
    pub download_old: Option<u64>,
    pub download_new: Option<u64>,
    pub added: SetOneSided,
    pub removed: SetOneSided,
    pub all_roots: SetRootsSum,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetOneSided {
    pub roots: usize,
    pub closure_size: u64,
    pub download_size: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetRootsSum {
    pub old: u64,
    pub new: u64,
    pub delta: i64,
    pub percent: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetCounts {
    pub both: usize,
    pub only_old: usize,
    pub only_new: usize,
    pub grown: usize,
    pub shrunk: usize,
    pub unchanged: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetRoot {
    pub name: String,
    pub package: String,
    pub output: String,
    pub old: Option<SetRootSide>,
    pub new: Option<SetRootSide>,
    pub delta: i64,
    pub percent: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetRootSide {
    pub path: String,
    pub closure_size: u64,
    pub version: String,
    pub attr: Option<String>,
    pub download_size: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SetChange {
    Added,
    Removed,
    Grown,
    Shrunk,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetCause {
    pub name: String,
    pub change: SetChange,
    pub roots: usize,
    pub bytes: i64,
    pub old_versions: Vec<String>,
    pub new_versions: Vec<String>,
    pub example_root: String,
    pub example_attr: Option<String>,
    pub chain: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetRebuild {
    pub paths_rebuilt: usize,
    pub paths_rebuilt_same_size: usize,
    pub bytes_rebuilt_same_size: u64,
    pub paths_added: usize,
    pub paths_removed: usize,
    pub roots_rebuilt_same_size: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetRest {
    pub roots: usize,
    pub roots_delta: i64,
    pub causes: usize,
    pub causes_bytes: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    tag = "unit",
    content = "value",
    rename_all = "kebab-case"
)]
pub enum SetLimit {
    Percent(f64),
    Bytes(u64),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetCheck {
    pub pass: bool,
    pub max_growth: Option<SetLimit>,
    pub max_total_growth: Option<SetLimit>,
    pub roots_failed: usize,
    pub failed: Vec<SetFailedRoot>,
    pub total_failed: bool,
    pub max_new_root_size: Option<u64>,
    pub new_roots_failed: usize,
    pub failed_new: Vec<SetFailedNewRoot>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetFailedRoot {
    pub name: String,
    pub attr: Option<String>,
    pub old: u64,
    pub new: u64,
    pub delta: i64,
    pub percent: Option<f64>,
    pub causes: Vec<SetRootCause>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetRootCause {
    pub name: String,
    pub change: SetChange,
    pub bytes: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetFailedNewRoot {
    pub name: String,
    pub attr: Option<String>,
    pub path: String,
    pub closure_size: u64,
}

/// `nixcut store --format json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreReport {
    pub schema_version: u32,
    pub source: String,
    pub store_dir: String,
    pub store_size: u64,
    pub path_count: u64,
    pub reference_count: u64,
    pub keep: StoreKeep,
    pub root_count: u64,
    pub roots: Vec<StoreRoot>,
    pub rest: Option<StoreRest>,
    pub live: PathsBytes,
    pub shared: PathsBytes,
    pub unreachable: PathsBytes,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreKeep {
    pub derivations: bool,
    pub outputs: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreRoot {
    pub root: String,
    pub link: String,
    pub closure_size: u64,
    pub closure_paths: u64,
    pub alone: u64,
    pub alone_paths: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreRest {
    pub roots: u64,
    pub alone: u64,
    pub alone_paths: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathsBytes {
    pub paths: u64,
    pub bytes: u64,
}

/// One line of `refs --paths-from FILE --format jsonl` (docs/cache-study.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefsRecord {
    pub schema_version: u32,
    pub input: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
    pub path: Option<String>,
    pub nar_hash: Option<String>,
    pub nar_size: Option<u64>,
    pub file_size: Option<u64>,
    pub scanned: bool,
    pub bytes_scanned: u64,
    pub references: Vec<RecordRef>,
    pub gpu: BTreeMap<String, u64>,
    pub gpu_generic_bytes: u64,
    pub warnings: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RecordError>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordRef {
    pub path: String,
    pub nar_size: Option<u64>,
    pub verdict: String,
    pub rule: String,
    pub registered: bool,
    pub self_reference: bool,
    pub evidence_count: u64,
    pub kinds: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordError {
    /// `load` (narinfos) or `nar` (the NAR).
    pub stage: String,
    pub message: String,
}
