//! [`LoadWarning`]: what a loader noticed that did not stop it reading, as facts (the
//! file or URL it read, the paths, the numbers). `crate::render::words::load` words
//! each of them; serde stores them in the narinfo cache's closure records.

use serde::{Deserialize, Serialize};

/// A problem of an input that did not stop loading it. `file` is the file (or URL) read,
/// as given; store paths are full unless said otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "warning", rename_all = "kebab-case")]
pub enum LoadWarning {
    /// A deriver that does not parse as a store path was ignored: at `line` of `file`
    /// (when the format has lines), of `path` (when the record names one).
    DeriverIgnored {
        file: String,
        line: Option<u64>,
        path: Option<String>,
        /// Why it does not parse (the store path error's message).
        error: String,
    },
    /// `path` is described twice in `file`: the last record (or entry) was kept.
    ListedTwice {
        file: String,
        path: String,
        /// A record of a registration (true) or an entry of a JSON document (false).
        record: bool,
    },
    /// An `exportReferencesGraph` file: no NAR sizes at all.
    NoNarSizes { file: String },
    /// A `nix-store --query --graph` file: no NAR sizes, and no self-references.
    GraphWithoutSizes { file: String },
    /// The node `name` has a second node line, at `line` of `file`: read as one node.
    NodeTwice {
        file: String,
        line: u64,
        name: String,
    },
    /// `count` paths of `file` have no NAR size (none: some of them).
    WithoutNarSize { file: String, count: Option<u64> },
    /// `file` says the store directory is `says`, but `given` was given: `says` is used.
    StoreDirDiffers {
        file: String,
        says: String,
        given: String,
    },
    /// A binary cache directory without `.narinfo` files.
    NoNarinfos { dir: String },
    /// A directory entry named like a narinfo that is not a file: skipped.
    NotAFile { file: String, directory: bool },
    /// A narinfo describing `path`, named otherwise than `expected`.
    NarinfoMisnamed {
        file: String,
        path: String,
        expected: String,
    },
    /// A narinfo without `NarSize`: `path`'s size is unknown.
    NarinfoNoSize { file: String, path: String },
    /// A narinfo without `URL`: `path`'s NAR cannot be found.
    NarinfoNoUrl { file: String, path: String },
    /// The narinfo cache on disk cannot be used (the HTTP client's reason).
    NarinfoCacheUnused { problem: String },
    /// The narinfo cache could not be saved (the HTTP client's reason, a sentence).
    NarinfoCacheNotSaved { problem: String },
    /// The narinfo cache's record of the closure of `of` (a root's hash; with `set`, a
    /// package set's file, the closures of its roots) did not read: walked again.
    RecordDamaged {
        of: String,
        set: bool,
        problem: String,
    },
    /// A cache without `nix-cache-info`: the store directory is assumed.
    NoCacheInfo { url: String },
    /// A structured-attributes key describing `path` otherwise than an earlier key:
    /// the earlier was kept.
    KeyDiffers {
        file: String,
        key: String,
        path: String,
    },
    /// `file`, read to cross-check the registration, could not be read.
    CannotCrossCheck { file: String, problem: String },
    /// Line `line` of `file` is not a store path.
    NotAStorePath {
        file: String,
        line: u64,
        error: String,
    },
    /// `file` lists `count` paths the registration does not describe.
    ListsUnregistered {
        file: String,
        count: u64,
        first: String,
    },
    /// `file` omits `count` registered paths.
    OmitsRegistered {
        file: String,
        count: u64,
        first: String,
    },
    /// `file`'s first line is not a number (`found`, shortened and made printable).
    TotalNotANumber { file: String, found: String },
    /// `file` says the closure is `says` bytes, the NAR sizes add up to `sum`.
    TotalDiffers { file: String, says: u64, sum: u64 },
    /// `file` is inside `store_path`: that store path's closure was loaded.
    InsideStorePath { file: String, store_path: String },
    /// `count` references point to paths the input does not describe (the first from
    /// `from` to `to`): closure sizes are lower bounds.
    NotClosed {
        count: u64,
        from: String,
        to: String,
    },
    /// A path-info document of format `version`, which this nixcut does not know: read
    /// as format 3.
    UnknownFormatVersion { file: String, version: u64 },
    /// `nix` reported `key` as invalid (`valid: false`, else `null`).
    NotValid {
        file: String,
        key: String,
        valid_false: bool,
    },
    /// A package set listing `duplicates` store paths more than once, the first
    /// repeated at `line`: each counts once.
    DuplicateRoots {
        file: String,
        duplicates: u64,
        line: u64,
    },
    /// A nix-eval-jobs (Hydra) listing with `count` jobs that have no output paths (an
    /// evaluation error), the first at `line` (`attr`): they are not roots.
    JobsWithoutOutputs {
        file: String,
        count: u64,
        line: u64,
        attr: String,
    },
    /// `nixcut check`'s baseline is of another package (`theirs`: its roots' package
    /// names; `ours`: ROOT's).
    BaselineOfOtherPackage {
        theirs: Vec<String>,
        ours: Vec<String>,
    },
}
