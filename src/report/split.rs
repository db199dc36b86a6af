//! `nixcut split` documents: the outputs a package could be split into, what a
//! consumer's closure becomes, the actions that do it and the facts the Nix code is
//! written from (`crate::render::nix` writes it).
//!
//! Paths inside the package (`path`, `files[]`) are relative to its top directory; store
//! paths are full. Every size is an exact NAR size in bytes (framing included).

use serde::{Deserialize, Serialize};

use super::{DataDirJoin, ExpressionFile, GpuRebuild, NixCode, SourceRef, StdenvTerms};
use crate::classify::{EvidenceKind, FileClass, HitDetail};
use crate::store::{StoreDir, StorePath};

/// `nixcut split PATH [--for ROOT] [--gpu-targets …]`. Its JSON (written by
/// `crate::render::json`, which writes the Nix code of [`SplitReport::code`] as `nix`
/// and `attributes`; read back by [`SplitJson`]) has the fields in this order, with
/// `nix` and `attributes` between `actions` and `expression`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "SplitJson")]
pub struct SplitReport {
    pub schema_version: u32,
    pub source: SourceRef,
    /// The package being split (full store path).
    pub package: String,
    /// Its NAR size as it is now.
    pub package_size: u64,
    /// The proposed outputs, `out` first (only `out` when there is nothing to split).
    pub outputs: Vec<SplitOutput>,
    /// `--for ROOT`: the consumer's closure before and after.
    #[serde(rename = "for")]
    pub for_root: Option<SplitFor>,
    /// `--gpu-targets`, as given (base architectures).
    pub gpu_targets: Vec<String>,
    /// Per GPU architecture: what its files weigh and where they go.
    pub archs: Vec<ArchRow>,
    /// What to do, in order (SPEC "Split actions").
    pub actions: Vec<SplitAction>,
    /// What the Nix code is written from, with `actions` (JSON: `nix`, the code, and
    /// `attributes`, the same split as the attributes to add to the package's own
    /// `mkDerivation` attribute set, with the arguments its function gains in a
    /// comment; both empty with `no_split`).
    pub code: SplitCode,
    /// `--expr FILE`: the change to FILE, the package's expression (null without
    /// `--expr`, and with `no_split`).
    pub expression: Option<SplitExpression>,
    /// Every hit that landed on an output by default.
    pub assumptions: Vec<Assumption>,
    /// What moved GPU files need to be found again.
    pub remedies: Vec<Remedy>,
    /// Set when nothing is worth splitting.
    pub no_split: Option<NoSplit>,
    /// JSON: one sentence each.
    pub warnings: Vec<SplitWarning>,
}

/// What a split's Nix code is written from, beside the report's actions and `for`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitCode {
    /// No code (`no_split`).
    None,
    /// The facts `crate::render::nix` writes the code from.
    Facts(SplitTerms),
    /// In a report read back from JSON: the code as it was written (Nix code cannot be
    /// read back into its facts).
    Read { nix: String, attributes: String },
}

/// The facts of a split's Nix code that the report does not show elsewhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitTerms {
    /// The store directory the paths are in.
    pub store_dir: StoreDir,
    /// The package split.
    pub package: StorePath,
    /// Its outputs, `out` first.
    pub outputs: Vec<String>,
    /// What stdenv's hooks do of the actions.
    pub stdenv: StdenvTerms,
    /// `--gpu-targets` (base architectures), when the other architectures are not
    /// rebuilt rather than moved (else empty).
    pub gpu_targets: Vec<String>,
}

impl SplitReport {
    /// The facts of its Nix code, with the report's actions and `for` (none without
    /// facts: `no_split`, or a report read back).
    pub fn split_nix(&self) -> Option<SplitNix<'_>> {
        match &self.code {
            SplitCode::Facts(t) => Some(SplitNix {
                store_dir: &t.store_dir,
                package: &t.package,
                outputs: &t.outputs,
                actions: &self.actions,
                for_root: self.for_root.as_ref(),
                stdenv: &t.stdenv,
                gpu_targets: &t.gpu_targets,
            }),
            SplitCode::None | SplitCode::Read { .. } => None,
        }
    }
}

/// A split report as JSON has it, read back: the Nix code as it was written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SplitJson {
    schema_version: u32,
    source: SourceRef,
    package: String,
    package_size: u64,
    outputs: Vec<SplitOutput>,
    #[serde(rename = "for")]
    for_root: Option<SplitFor>,
    gpu_targets: Vec<String>,
    archs: Vec<ArchRow>,
    actions: Vec<SplitAction>,
    nix: String,
    attributes: String,
    expression: Option<SplitExpression>,
    assumptions: Vec<Assumption>,
    remedies: Vec<Remedy>,
    no_split: Option<NoSplit>,
    warnings: Vec<SplitWarning>,
}

impl From<SplitJson> for SplitReport {
    fn from(j: SplitJson) -> SplitReport {
        let code = if j.nix.is_empty() && j.attributes.is_empty() {
            SplitCode::None
        } else {
            SplitCode::Read {
                nix: j.nix,
                attributes: j.attributes,
            }
        };
        SplitReport {
            schema_version: j.schema_version,
            source: j.source,
            package: j.package,
            package_size: j.package_size,
            outputs: j.outputs,
            for_root: j.for_root,
            gpu_targets: j.gpu_targets,
            archs: j.archs,
            actions: j.actions,
            code,
            expression: j.expression,
            assumptions: j.assumptions,
            remedies: j.remedies,
            no_split: j.no_split,
            warnings: j.warnings,
        }
    }
}

/// The split written into the package's expression (`--expr FILE`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitExpression {
    /// FILE as given.
    pub file: String,
    /// A unified diff of FILE, headers `a/PATH` and `b/PATH`: PATH is FILE when it is
    /// relative without `..` (apply with `patch -p1` where nixcut ran), else its base
    /// name (apply with `patch -p1` in FILE's directory).
    pub diff: String,
}

/// A warning of `split`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitWarning {
    /// A warning from loading the input.
    Load(crate::store::LoadWarning),
    /// Any warning of a report read back from JSON: its sentence.
    Input(String),
    /// A problem with the evidence of the package (full store path).
    Evidence {
        path: String,
        warning: crate::evidence::PathWarning,
    },
    /// Outputs would refer to each other in a cycle (Nix refuses it), so the files of
    /// one edge move to the output they name instead.
    CycleBroken {
        /// The outputs of the cycle.
        outputs: Vec<String>,
        /// Its edges.
        edges: Vec<CycleEdge>,
        /// The files moved.
        moved: Vec<String>,
        /// Whether stdenv's `nix-support/propagated-build-inputs` is part of the edge
        /// cut too (it stays: stdenv writes it).
        moved_stdenv: bool,
        /// Where to.
        to: String,
    },
    /// A cycle between outputs remains after every round: Nix will refuse the split.
    CycleRemains {
        outputs: Vec<String>,
        edges: Vec<CycleEdge>,
    },
    /// A CMake or pkg-config file of the package whose text the scan did not keep
    /// (larger than `max` bytes, or not readable whole): the paths it names were not
    /// checked after the moves.
    ConfigNotKept {
        /// The package (full store path).
        package: String,
        /// The file, inside the package.
        file: String,
        /// Its size in bytes.
        size: u64,
        /// The most the scan keeps of one file.
        max: u64,
    },
    /// `$out/SUB` in `file` is also the start of another path the file names, so it is
    /// not rewritten to `$OUTPUT`.
    PrefixNotRewritten {
        file: String,
        sub: String,
        output: String,
    },
    /// `file` names `target/sub`, which a program may use at run time (a compiler's
    /// `-I` directory, a script an interpreter runs): the reference is kept.
    KeptForRunTime {
        file: String,
        /// The referenced store path (base name).
        target: String,
        sub: String,
    },
    /// `file` formats library names for dlopen (`patterns`): its RUNPATH is kept whole.
    DlopenPatterns { file: String, patterns: Vec<String> },
    /// A RUNPATH entry of `file` could not be expanded: its RUNPATH is left as it is.
    RunpathUnexpanded { file: String },
    /// The consumer still needs the build-only output `output` of `package`: what its
    /// files use moved there.
    OutputStillNeeded {
        output: String,
        /// The package (full store path).
        package: String,
        /// The first few uses (`referrer file names sub-path`).
        uses: Vec<OutputUse>,
    },
}

/// One edge of a cycle between outputs: the files of `from` that name `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleEdge {
    pub files: Vec<String>,
    /// Whether stdenv's `nix-support/propagated-build-inputs` (written by stdenv, for a
    /// `propagatedBuildInputs` of `to`) makes the edge too.
    pub stdenv: bool,
    pub from: String,
    pub to: String,
}

/// A file of a referrer naming a path of the package.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct OutputUse {
    /// The referrer's name (without its hash).
    pub referrer: String,
    /// The file, inside the referrer.
    pub file: String,
    /// The path named, inside the package.
    pub names: String,
}

/// One proposed output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitOutput {
    /// nixpkgs output name (`out`, `bin`, `dev`, `doc`, `man`, `static`, `debug`, or a
    /// GPU architecture such as `gfx90a`).
    pub name: String,
    /// Exact NAR size of the output as the actions leave it.
    pub size: u64,
    /// Entries other than directories (files and symlinks) it holds.
    pub files: u64,
    /// The top-most paths it holds, as moved (`out`: empty, it keeps the rest).
    pub paths: Vec<String>,
    /// What the output refers to once the actions are applied.
    pub references: Vec<OutputReference>,
}

/// One reference of a proposed output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputReference {
    /// The referenced store path (for an output of the split package: the package as it
    /// is now, with `output` naming which of the new outputs).
    pub path: String,
    /// For a reference to an output of the split package (itself included): its name.
    pub output: Option<String>,
    /// Hits in this output's files that make the edge.
    pub hits: u64,
}

/// The consumer's closure before and after the split.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitFor {
    pub root: String,
    pub closure_size_before: u64,
    pub closure_size_after: u64,
    pub path_count_before: u64,
    /// Nodes after: (store path, output) pairs.
    pub path_count_after: u64,
    /// The outputs of the package the consumer still needs.
    pub outputs_needed: Vec<String>,
    /// Store paths that leave the closure.
    pub removed: Vec<String>,
}

/// One GPU architecture's files in the package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchRow {
    pub arch: String,
    /// Files (and symlinks) of this architecture in the package.
    pub files: u64,
    /// Their bytes in the package (file contents, symlink targets).
    pub bytes: u64,
    /// NAR sizes of the store paths only this architecture's files refer to.
    pub referenced_bytes: u64,
    /// The output holding them (`out` when kept there; empty when a rebuild with fewer
    /// `gpuTargets` does not build them).
    pub output: String,
    /// Kept in a consumer's closure with `--gpu-targets` (always true without).
    pub kept: bool,
}

/// One evidence item an action or assumption rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Because {
    /// File inside the package (or the referrer) holding the evidence.
    pub file: String,
    /// Byte offset of the hit (none for a class-based move).
    pub offset: Option<u64>,
    /// Evidence kind of the hit, or the file class for a move.
    pub kind: BecauseKind,
    /// The rule that gave the verdict or the class.
    pub rule: String,
    /// The string, line or target the hit sits in (empty for a move).
    pub detail: BecauseDetail,
    /// How many entries this item stands for: 1 for a hit, the files moved for a move
    /// (`file` is then the first of them).
    pub count: u64,
}

/// What an evidence item is: JSON `kind`, one string (an evidence kind, a file class,
/// or one of the split's own names). `crate::render::words::split` serialises it; a
/// string read back is taken as the split's own name, else an evidence kind, else a
/// file class (`doc` is both an evidence kind and a class: it reads back as the kind,
/// and writes the same string again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BecauseKind {
    /// A hit of this evidence kind.
    Hit(EvidenceKind),
    /// Files of this class (a move).
    Class(FileClass),
    /// `self-reference`: the package's own `$out/SUB`, where SUB moves to another output.
    SelfReference,
    /// `cmake-config`: a path a CMake file of the package names.
    CmakeConfig,
    /// `pkg-config`: a path a pkg-config file of the package names.
    PkgConfig,
}

impl BecauseKind {
    /// The JSON name (`elf-needed`, `lib`, `self-reference`, …).
    pub fn name(&self) -> std::borrow::Cow<'static, str> {
        match self {
            BecauseKind::Hit(k) => k.as_str().into(),
            BecauseKind::Class(c) => c.to_string().into(),
            BecauseKind::SelfReference => "self-reference".into(),
            BecauseKind::CmakeConfig => "cmake-config".into(),
            BecauseKind::PkgConfig => "pkg-config".into(),
        }
    }

    /// The kind a JSON name stands for (see the type's documentation).
    pub fn parse(s: &str) -> Option<BecauseKind> {
        Some(match s {
            "self-reference" => BecauseKind::SelfReference,
            "cmake-config" => BecauseKind::CmakeConfig,
            "pkg-config" => BecauseKind::PkgConfig,
            _ => match s.parse::<EvidenceKind>() {
                Ok(k) => BecauseKind::Hit(k),
                Err(_) => BecauseKind::Class(FileClass::parse(s)?),
            },
        })
    }
}

impl Serialize for BecauseKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for BecauseKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        BecauseKind::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format_args!("`{s}` is no evidence kind or file class"))
        })
    }
}

/// What an evidence item says of its place: JSON `detail`, one string, worded by
/// `crate::render::words::split` (a string read back stays [`BecauseDetail::Text`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BecauseDetail {
    /// Nothing (a move: the class says it).
    None,
    /// The string, line or target the hit sits in (`refs`' `detail`).
    Hit(HitDetail),
    /// Any detail of a report read back from JSON: as it was written.
    Text(String),
    /// The file names `$out/SUB`, which moves to `output`.
    MovesTo { sub: String, output: String },
    /// `from` in a build-configuration file resolves to `sub` of `output`, but `sub` is
    /// in `now_in` after the moves.
    MovedAway {
        from: String,
        sub: String,
        output: String,
        now_in: String,
    },
}

impl<'de> Deserialize<'de> for BecauseDetail {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(if s.is_empty() {
            BecauseDetail::None
        } else {
            BecauseDetail::Text(s)
        })
    }
}

/// One action of SPEC's "Split actions" table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SplitAction {
    /// `moveToOutput PATH "$to"`.
    Move {
        path: String,
        to: String,
        because: Vec<Because>,
    },
    /// `rm "$out/PATH"`: a file or symlink (the one holding the evidence).
    Delete { path: String, because: Vec<Because> },
    /// `remove-references-to -t TARGET FILES`.
    RemoveReferences {
        target: String,
        files: Vec<String>,
        because: Vec<Because>,
    },
    /// `patchelf --set-rpath KEPT FILE`.
    ShrinkRpath {
        files: Vec<String>,
        drop: Vec<String>,
        /// The RUNPATH left (`:`-separated, store paths as they are now).
        kept: String,
        because: Vec<Because>,
    },
    /// Literal text replaced in a file of `output` after the moves (`file` relative to
    /// that output), every occurrence: `substituteInPlace "$output/FILE" --replace-fail
    /// FROM TO`. `to` names outputs as shell variables (`$out/lib/libx.so`).
    Rewrite {
        output: String,
        file: String,
        from: String,
        to: String,
        because: Vec<Because>,
    },
    /// `rm` of one architecture's files (or a rebuild with fewer targets).
    DropGpuArch {
        arch: String,
        paths: Vec<String>,
        because: Vec<Because>,
    },
}

/// Why a hit landed where it did without the evidence saying so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AssumptionReason {
    /// The hit is a bare hash or the top directory: no sub-path.
    NoSubPath,
    /// The sub-path is a directory present in several outputs.
    SeveralOutputs,
    /// The sub-path does not exist in the package (or is deleted by an action).
    SubPathMissing,
    /// The referrer's files were not scanned.
    NotScanned,
}

/// A hit that landed on an output by default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assumption {
    /// The store path holding the hit (the package itself, or a referrer).
    pub from: String,
    /// Its file (empty when not scanned).
    pub file: String,
    pub offset: Option<u64>,
    pub kind: Option<String>,
    /// The sub-path the hit names (empty: none).
    pub sub_path: String,
    /// The output it landed on.
    pub output: String,
    pub reason: AssumptionReason,
}

/// What a consumer needs so that GPU files moved to another output are found again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Remedy {
    /// The output the files moved to.
    pub output: String,
    /// The directory they came from (where the library looks).
    pub directory: String,
    /// The library that opens them (`rocBLAS`, `hipBLASLt`), if known.
    pub library: Option<String>,
    /// The ways to find them again, best first.
    pub options: Vec<RemedyOption>,
}

/// One way to find moved GPU files again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum RemedyOption {
    /// Rebuild with only the wanted targets (JSON `nix`: its Nix code).
    Rebuild {
        #[serde(rename = "nix")]
        rebuild: NixCode<GpuRebuild>,
    },
    /// Point the library at a directory holding the files (a wrapper sets it; JSON
    /// `value`: the Nix interpolation of the joined directory).
    EnvVar {
        name: String,
        value: NixCode<DataDirJoin>,
    },
    /// Symlink the files back into the runtime output: the closure edge comes back.
    SymlinkBack,
}

/// Why a package gets no split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoSplitReason {
    /// Every file belongs to the runtime output and no reference can be cut.
    OnlyRuntimeFiles,
    /// The package's files were not available to scan.
    FilesUnavailable,
}

/// The answer when nothing is worth splitting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoSplit {
    pub reason: NoSplitReason,
    /// The file classes present (`lib`, `out`, …).
    pub classes: Vec<String>,
    /// References the package has (all kept).
    pub references: u64,
}

/// `why ROOT`'s savings line: ROOT's closure once every safe split suggestion (`nixcut
/// split P --for ROOT` without GPU targets, for each scanned referrer P) is applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhySavings {
    pub closure_size_before: u64,
    pub closure_size_after: u64,
    /// Each suggestion's saving alone, largest first.
    pub suggestions: Vec<WhySuggestion>,
}

/// One split suggestion and what it saves alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhySuggestion {
    /// The package to split (full store path).
    pub package: String,
    /// Bytes ROOT's closure loses with this split alone.
    pub saved: u64,
    /// Its proposed outputs.
    pub outputs: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_kinds_read_back_as_they_were_written() {
        for name in [
            "self-reference",
            "cmake-config",
            "pkg-config",
            "elf-needed",
            "lib",
            "gpu:gfx90a",
            "gpu-generic",
            "doc",
        ] {
            let json = format!("\"{name}\"");
            let k: BecauseKind = serde_json::from_str(&json).unwrap();
            assert_eq!(serde_json::to_string(&k).unwrap(), json);
        }
        let doc: BecauseKind = serde_json::from_str("\"doc\"").unwrap();
        assert_eq!(doc, BecauseKind::Hit(EvidenceKind::Doc));
        assert!(serde_json::from_str::<BecauseKind>("\"no-such-kind\"").is_err());
    }
}

/// The `overrideAttrs` of a split: the package, its outputs and the actions of the
/// report, in build order.
#[derive(Debug, Clone, Copy)]
pub struct SplitNix<'a> {
    /// The store directory the paths are in.
    pub store_dir: &'a StoreDir,
    /// The package split.
    pub package: &'a StorePath,
    /// Its outputs, `out` first.
    pub outputs: &'a [String],
    /// What the build does, in order.
    pub actions: &'a [SplitAction],
    /// The consumer's closure before and after, for the header comment.
    pub for_root: Option<&'a SplitFor>,
    /// What stdenv's hooks do of it.
    pub stdenv: &'a StdenvTerms,
    /// `--gpu-targets` (base architectures), when the other architectures are not
    /// rebuilt rather than moved.
    pub gpu_targets: &'a [String],
}

/// The split as the attributes to add to the package's `mkDerivation` attribute set
/// (what a reviewer merges when no expression was given).
#[derive(Debug, Clone, Copy)]
pub struct SplitAttributes<'a>(pub SplitNix<'a>);

/// The split written into a package's expression: a unified diff of FILE.
#[derive(Debug, Clone, Copy)]
pub struct SplitExpr<'a> {
    pub code: SplitNix<'a>,
    pub file: &'a ExpressionFile,
}
