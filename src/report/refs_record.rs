//! `nixcut refs --paths-from FILE --format jsonl`: one [`RefsRecord`] per store path, one
//! JSON object a line, for cache-wide studies (docs/cache-study.md has the contract).
//!
//! A record is what `nixcut refs PATH` says of one path, flattened: the narinfo's NAR
//! hash and sizes, every reference with its verdict, rule and hit counts per evidence
//! kind (the evidence items themselves are left out: a study counts, it does not quote),
//! and the path's GPU bytes per base architecture as `nixcut gpu` counts them. A path
//! that cannot be studied (its narinfo or a reference's is missing, its NAR is corrupt)
//! is still one record, with `error` saying at which stage and why.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::classify::Verdict;
use crate::evidence::PathWarning;

/// One line of `refs --format jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefsRecord {
    pub schema_version: u32,
    /// The list entry as given (a store path, base name, hash or narinfo URL): what a
    /// resumed run matches to skip the entries already written.
    pub input: String,
    /// The release label of the list entry (`release<TAB>path`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
    /// The full store path (`None` when its narinfo could not be read from a hash).
    pub path: Option<String>,
    /// The narinfo's `NarHash` (SRI notation).
    pub nar_hash: Option<String>,
    /// The narinfo's `NarSize`.
    pub nar_size: Option<u64>,
    /// The narinfo's `FileSize` (the compressed NAR's size).
    pub file_size: Option<u64>,
    /// Whether the NAR was read and scanned (false with `error`).
    pub scanned: bool,
    /// Bytes of file contents scanned (for a result from the scan cache, those its
    /// scan read).
    pub bytes_scanned: u64,
    /// Every reference, with what the evidence says of it.
    pub references: Vec<RecordRef>,
    /// GPU bytes per base architecture (`gfx90a`, `sm_80`): per-architecture files
    /// whole, and code objects inside fat binaries (as `nixcut gpu`'s `paths[].archs`).
    pub gpu: BTreeMap<String, u64>,
    /// GPU data every architecture needs (`gpu-generic` files, a bundle's rest).
    pub gpu_generic_bytes: u64,
    /// Problems with the path's files that did not stop the scan (one sentence each).
    pub warnings: Vec<PathWarning>,
    /// Why the path could not be studied; absent when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RecordError>,
}

/// One reference of a [`RefsRecord`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordRef {
    /// The referenced store path.
    pub path: String,
    /// Its NAR size, from its narinfo (`None` when not known).
    pub nar_size: Option<u64>,
    /// The strongest verdict among the evidence (`runtime`, `gpu:<arch>`, `unknown`,
    /// `dev`, `doc`, `removable`).
    pub verdict: Verdict,
    /// The rule that produced the verdict.
    pub rule: String,
    /// Nix registered the reference (false: found only with `--discover`).
    pub registered: bool,
    /// The path refers to itself.
    pub self_reference: bool,
    /// Hits found.
    pub evidence_count: u64,
    /// Hits per evidence kind (`elf-needed`, `elf-runpath-unused`, `doc` …).
    pub kinds: BTreeMap<String, u64>,
}

/// Why a path could not be studied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordError {
    /// Where it failed.
    pub stage: RecordStage,
    /// What went wrong (the loader's or the scanner's message).
    pub message: String,
}

/// The stage at which a path could not be studied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecordStage {
    /// Reading the narinfos of the path and its closure (a 404, a malformed narinfo).
    Load,
    /// Reading the path's NAR (missing, truncated, a hash mismatch, not a NAR).
    Nar,
}

impl RefsRecord {
    /// The record of a list entry that failed at `stage`.
    pub fn failed(
        input: String,
        release: Option<String>,
        path: Option<String>,
        stage: RecordStage,
        message: String,
    ) -> RefsRecord {
        RefsRecord {
            schema_version: super::SCHEMA_VERSION,
            input,
            release,
            path,
            nar_hash: None,
            nar_size: None,
            file_size: None,
            scanned: false,
            bytes_scanned: 0,
            references: Vec::new(),
            gpu: BTreeMap::new(),
            gpu_generic_bytes: 0,
            warnings: Vec::new(),
            error: Some(RecordError { stage, message }),
        }
    }
}
