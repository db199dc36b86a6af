//! `nixcut gpu` documents: what each GPU architecture costs in a closure, in
//! per-architecture files and in code objects inside fat binaries, what every
//! architecture needs, and (with `--gpu-targets`) what the closure would weigh with only
//! the given targets.
//!
//! Sizes are bytes. `closure_size` = the sum of every architecture's `bytes` +
//! `generic_bytes` + `host_bytes` + `unscanned_bytes`: each byte of the closure's NAR
//! serialisations is counted once.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{FilesFrom, GpuRebuild, NixCode, SourceRef};
pub use crate::classify::{GpuOption, GpuVendor};

/// `nixcut gpu ROOT [--gpu-targets …]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuReport {
    pub schema_version: u32,
    pub source: SourceRef,
    /// The root (full store path).
    pub root: String,
    /// Sum of the NAR sizes of the root's closure.
    pub closure_size: u64,
    pub path_count: u64,
    /// Where the files were read from.
    pub files_from: FilesFrom,
    /// Per base architecture (`gfx90a`, `sm_80`), largest first.
    pub archs: Vec<GpuArch>,
    /// Sum of `archs[].bytes`.
    pub gpu_bytes: u64,
    /// GPU data every architecture needs (arch-generic Tensile files, fallbacks, the
    /// headers and host entries of multi-target bundle files).
    pub generic_bytes: u64,
    /// Files holding `generic_bytes` (whole or in part).
    pub generic_files: u64,
    /// Everything else: host code and data, and NAR framing.
    pub host_bytes: u64,
    /// Bytes of store paths whose files could not be read (not split up).
    pub unscanned_bytes: u64,
    /// Store paths with GPU or generic bytes, most GPU bytes first.
    pub paths: Vec<GpuPath>,
    /// `--gpu-targets` as given, as base architectures (empty without).
    pub gpu_targets: Vec<String>,
    /// Architectures of the closure that the targets keep.
    pub kept: Vec<String>,
    /// Architectures of the closure that the targets drop.
    pub dropped: Vec<String>,
    /// With `--gpu-targets`: the closure with only those targets.
    pub closure_size_after: Option<u64>,
    pub path_count_after: Option<u64>,
    /// Whether `closure_size_after` assumes fat binaries rebuilt with fewer targets
    /// (their other targets' code objects subtracted) rather than files dropped.
    pub estimated: bool,
    /// Store paths that leave the closure (nothing kept refers to them).
    pub removed: Vec<String>,
    /// Store paths that stay but lose files or code objects.
    pub changed: Vec<GpuChange>,
    /// What to do in nixpkgs' terms.
    pub remedies: Vec<GpuRemedy>,
    /// JSON: one sentence each.
    pub warnings: Vec<GpuWarning>,
}

/// A warning of `gpu`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuWarning {
    /// A warning from loading the input.
    Load(crate::store::LoadWarning),
    /// Any warning of a report read back from JSON: its sentence.
    Input(String),
    /// A problem reading the GPU code of a path's files.
    Evidence {
        /// The path (full store path).
        path: String,
        warning: crate::evidence::PathWarning,
    },
    /// `count` of `of` paths could not be read, so their bytes are not split up.
    Unread {
        count: usize,
        of: usize,
        /// The first of them (full store path) and why.
        example: String,
        why: crate::evidence::NotScanned,
    },
    /// The files of `path` hold more GPU bytes than its NAR size: cut to it.
    MoreThanNar { path: String, bytes: u64, nar: u64 },
    /// No files at all: nothing could be split up by architecture.
    FilesUnavailable,
    /// `--gpu-targets T`: the closure holds nothing for T.
    TargetAbsent { target: String },
    /// The targets name no architecture of `vendor`, whose `bytes` of code would all
    /// go: no remedy is proposed.
    NoRemedy { vendor: GpuVendor, bytes: u64 },
}

/// One base architecture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuArch {
    /// Base architecture (`gfx90a`, `sm_80`); xnack and sramecc variants are grouped.
    pub arch: String,
    /// `amd` or `nvidia`.
    pub vendor: GpuVendor,
    /// `file_bytes` + `elf_bytes`.
    pub bytes: u64,
    /// Bytes of per-architecture files (Tensile and hipBLASLt files, bare code objects,
    /// single-target bundles, per-architecture databases, cubins).
    pub file_bytes: u64,
    /// Bytes of this architecture's code objects inside fat binaries (`.hip_fatbin`,
    /// `.nv_fatbin`, multi-target bundle files), as stored (compressed bundles: the
    /// entry's share of the compressed bytes).
    pub elf_bytes: u64,
    /// The same code objects' uncompressed sizes.
    pub code_bytes: u64,
    /// Files holding code or data of this architecture (per-architecture files and fat
    /// binaries).
    pub files: u64,
    /// Symlinks named for this architecture (no bytes of their own).
    pub links: u64,
    /// Target ids seen (`gfx90a:xnack+`, `gfx90a:xnack-`, `sm_90`).
    pub targets: Vec<String>,
    /// Store paths holding it.
    pub paths: Vec<String>,
}

/// One store path's breakdown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuPath {
    pub path: String,
    /// NAR size.
    pub size: u64,
    /// Sum of `archs`.
    pub gpu_bytes: u64,
    pub generic_bytes: u64,
    pub host_bytes: u64,
    /// Base architecture -> bytes (files and code objects).
    pub archs: BTreeMap<String, u64>,
    /// Fat binaries in it (files holding code objects of several targets).
    pub fat_binaries: u64,
}

/// A store path that stays in the closure with less in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuChange {
    pub path: String,
    pub size_before: u64,
    /// Exact when only files are dropped; an estimate when code objects are
    /// subtracted from fat binaries.
    pub size_after: u64,
    /// Files and symlinks dropped.
    pub files_dropped: u64,
    /// Code objects subtracted from fat binaries.
    pub objects_dropped: u64,
    pub estimated: bool,
}

/// One remedy in nixpkgs' terms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuRemedy {
    /// `gpuTargets` (an argument of rocmPackages' libraries) or `cudaCapabilities`
    /// (nixpkgs' `config`).
    pub option: GpuOption,
    /// Package names (`rocblas`) it applies to.
    pub packages: Vec<String>,
    /// Their store paths.
    pub paths: Vec<String>,
    /// The option's value (`gfx1030`; `8.6`).
    pub value: Vec<String>,
    /// The rebuild, in nixpkgs' terms (JSON `nix`: its Nix code).
    #[serde(rename = "nix")]
    pub rebuild: NixCode<GpuRebuild>,
    /// Bytes of the closure these packages' dropped architectures account for.
    pub saves: u64,
}
