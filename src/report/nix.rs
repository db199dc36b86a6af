//! The facts behind the Nix code the JSON contract carries as strings (a split's
//! `nix` and `attributes`, a GPU remedy's `nix`, a moved data directory's variable):
//! what to write, not how. Reports hold these facts ([`NixCode`]); only
//! `crate::render::nix` writes Nix from them (their `Display` and `Serialize` impls
//! live there), so no analysis words Nix itself.

use serde::{Deserialize, Deserializer};

/// Nix code in a report: the facts `crate::render::nix` writes it from, or, in a
/// report read back from JSON, the code as it was written (Nix code cannot be read
/// back into its facts, so it renders again as it was read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NixCode<T> {
    /// What to write.
    Facts(T),
    /// Code read back from a report.
    Read(String),
}

impl<'de, T> Deserialize<'de> for NixCode<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(NixCode::Read)
    }
}

/// A rebuild of GPU code for fewer targets, in nixpkgs' terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuRebuild {
    /// One package's `gpuTargets` argument: `rocmPackages.rocblas.override { gpuTargets
    /// = [ "gfx1030" ]; }`.
    GpuTargets {
        /// The package's attribute (`rocmPackages.rocblas`, or its name).
        attribute: String,
        /// The targets to build for (`gfx1030`).
        targets: Vec<String>,
    },
    /// nixpkgs' `config.cudaCapabilities`, for every CUDA package at once.
    CudaCapabilities {
        /// The capabilities to build for (`8.6`).
        capabilities: Vec<String>,
    },
}

/// A package's data directory joined with the same directory of one of its outputs
/// (`symlinkJoin`), for the variable that points the library at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDirJoin {
    /// The package's name (`rocblas`).
    pub package: String,
    /// The output the directory's other files moved to (`gfx90a`).
    pub output: String,
    /// The directory inside both (`lib/rocblas/library`).
    pub directory: String,
}

/// Where a file an action edits is when `postFixup` starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditAt {
    /// In `out`.
    Out,
    /// In this output (stdenv moved it there).
    Output(String),
    /// In `out` or the output the build's install directories name: found then.
    Search,
}

/// The split in nixpkgs' terms: what stdenv's multiple-outputs hooks do of the actions
/// by themselves, and what the package sets so that they do the right thing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StdenvTerms {
    /// Per action of the report: whether stdenv does it (the code leaves it out).
    pub by_stdenv: Vec<bool>,
    /// Attributes the package sets (`outputInclude`, `"out"`).
    pub settings: Vec<(String, String)>,
    /// Paths stdenv moves out of `out` that stay there: moved back.
    pub back_to_out: Vec<String>,
    /// Files edited by an action that are not in `out` when `postFixup` starts.
    pub edit_at: std::collections::BTreeMap<String, EditAt>,
    /// What stdenv does, for comments.
    pub notes: Vec<String>,
}

/// Whether nixpkgs' `moveToOutput` takes `path` as itself: it expands its pattern
/// unquoted, so a space, tab or newline splits it and `*?[` (or a backslash, or an
/// extglob's parenthesis) globs. The plan writes a glob only in such a directory.
pub fn is_plain(path: &str) -> bool {
    !path.is_empty()
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._/+,=:@%~-".contains(&b))
}

/// A package's expression as given to `split --expr FILE`: its name as typed and its
/// text (read by the CLI; the analysis reads no file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpressionFile {
    /// FILE as given on the command line (`pkgs/…/rocblas/default.nix`).
    pub name: String,
    /// Its contents.
    pub text: String,
}

/// Where and why a package's expression cannot take the split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpressionError {
    /// FILE as given.
    pub file: String,
    /// 1-based line and column (in characters) of what was found instead.
    pub line: usize,
    pub column: usize,
    pub problem: ExpressionProblem,
}

/// What a package's expression lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpressionProblem {
    /// Not Nix: the parser's own words.
    Syntax(String),
    /// The file is not a function of a formal-argument set (`{ lib, stdenv, … }:`).
    NotAFunction,
    /// The function does not return a `mkDerivation` call.
    NoMkDerivation,
    /// Several `mkDerivation` calls, none of them what the function returns.
    SeveralMkDerivations(usize),
    /// `mkDerivation`'s argument is neither an attribute set nor `finalAttrs: { … }`.
    NotAnAttrSet,
    /// An attribute the split sets comes from `inherit`.
    Inherited(String),
}
