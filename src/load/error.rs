//! Why an input could not be loaded ([`LoadError`], each naming the input and the
//! position), and the checks and quotes the loaders share in their errors: a closure
//! whose sizes would wrap ([`refuse_size_overflow`]), a text line quoted ([`found`]).

use std::io;
use std::path::{Path, PathBuf};

use crate::store::{sanitize, Closure};

/// Why an input could not be loaded. Every variant names the input; JSON and DOT errors
/// carry a line and column, line-record errors a line and what was expected there.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The input does not exist or cannot be read.
    #[error("cannot read {}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating-system error.
        source: io::Error,
    },
    /// JSON that does not parse, or a value of the wrong type, at a known position.
    #[error("{}:{line}:{column}: {message}", .path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A JSON value that parses but makes no sense, found by entry rather than by
    /// position (the position could not be recovered).
    #[error("{}: entry {entry}: {message}", .path.display())]
    JsonEntry {
        /// The file.
        path: PathBuf,
        /// The entry: its key, or `[index]` in an array.
        entry: String,
        /// What is wrong.
        message: String,
    },
    /// A text record (registration, `exportReferencesGraph`, `.narinfo`, closureInfo
    /// file) that does not have the expected line.
    #[error("{}:{line}: expected {expected}, found {found}", .path.display())]
    Text {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What the format has at this line.
        expected: String,
        /// What the file has, quoted, or `end of file`.
        found: String,
    },
    /// A text format read token by token (`nix-store --query --graph`'s DOT) that has
    /// something else at a known line and column.
    #[error("{}:{line}:{column}: expected {expected}, found {found}", .path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What the format has at this position.
        expected: String,
        /// What the file has, quoted, or `end of line` or `end of file`.
        found: String,
    },
    /// A narinfo dataset in Parquet that cannot be read: damaged, a column missing or
    /// of the wrong type, a value that is null or no store path.
    #[error("{}: {}{message}", .path.display(), parquet_position(*.row_group, *.row, .column.as_deref()))]
    Parquet {
        /// The Parquet file.
        path: PathBuf,
        /// The row group (counted from 0), when one is concerned.
        row_group: Option<usize>,
        /// The row in the file (counted from 0, as DuckDB's `file_row_number`).
        row: Option<u64>,
        /// The column, by the name nixcut reads it as (`StorePath`, `References`).
        column: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// The input is none of the formats nixcut reads.
    #[error("{}: unknown input format: {seen}; expected {}", .path.display(), EXPECTED_FORMATS)]
    UnknownFormat {
        /// The file or directory.
        path: PathBuf,
        /// A description of what was there.
        seen: String,
    },
    /// A format nixcut recognises but cannot read (yet, or in this configuration).
    #[error("{}: {what} is not supported: {hint}", .path.display())]
    Unsupported {
        /// The file, directory or store path.
        path: PathBuf,
        /// What was recognised.
        what: String,
        /// What to do instead.
        hint: String,
    },
    /// An input whose parts contradict each other or lack something required.
    #[error("{}: {message}", .path.display())]
    Invalid {
        /// The file or directory.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The `nix` binary could not be started.
    #[error("cannot run `{program}` to query the store: {source}; install Nix, or pass the output of `nix path-info --json -r -S PATH` instead")]
    NixMissing {
        /// The program that was run.
        program: String,
        /// The operating-system error.
        source: io::Error,
    },
    /// The local store database could not be read.
    #[error("cannot read the store database {}: {message}", .path.display())]
    StoreDb {
        /// The database file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// Neither the store database nor `nix` could load a store path.
    #[error("{nix}\n(reading the store database did not work either: {store_db})")]
    LiveStore {
        /// Why the store database could not be read.
        store_db: Box<LoadError>,
        /// Why `nix` failed.
        nix: Box<LoadError>,
    },
    /// A binary cache could not be reached, or answered with an error.
    #[error(transparent)]
    Fetch(#[from] crate::http::FetchError),
    /// `nix` ran and failed.
    #[error("`{command}` failed ({status}):\n{stderr}")]
    NixFailed {
        /// The command line.
        command: String,
        /// The exit status.
        status: String,
        /// What `nix` printed on stderr.
        stderr: String,
    },
}

const EXPECTED_FORMATS: &str = "a store path or a symlink to one, `nix path-info --json` \
output, a registration or exportReferencesGraph file, `nix-store --query --graph` output, a \
structured-attrs .attrs.json, a nixcut snapshot, a closureInfo directory, a binary cache \
directory or a narinfo dataset in Parquet (a file or a directory of them)";

/// Where in a Parquet file an error is: `row group 2, row 245760, column `References`: `.
fn parquet_position(row_group: Option<usize>, row: Option<u64>, column: Option<&str>) -> String {
    let mut parts = Vec::new();
    if let Some(g) = row_group {
        parts.push(format!("row group {g}"));
    }
    if let Some(r) = row {
        parts.push(format!("row {r}"));
    }
    if let Some(c) = column {
        parts.push(format!("column `{c}`"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{}: ", parts.join(", "))
    }
}

impl LoadError {
    pub(crate) fn io(path: &Path, source: io::Error) -> LoadError {
        LoadError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Refuse a closure whose NAR sizes add up past `u64::MAX`: every size nixcut computes
/// is a sum of them, and none may wrap (two paths of 2^63 bytes would otherwise weigh 0).
pub(crate) fn refuse_size_overflow(c: &Closure, path: &Path) -> Result<(), LoadError> {
    if c.total_nar_size().is_some() {
        return Ok(());
    }
    let largest = c
        .paths
        .values()
        .filter_map(|i| Some((i.nar_size?, &i.path)))
        .max();
    let example = largest
        .map(|(size, p)| {
            format!(
                " (the largest: {} with {size} bytes)",
                c.store_dir.display(p)
            )
        })
        .unwrap_or_default();
    Err(LoadError::Invalid {
        path: path.to_path_buf(),
        message: format!(
            "the NAR sizes of its {} paths add up to more than {} bytes (2^64 - 1), more \
             than any store holds: a size is wrong{example}",
            c.paths.len(),
            u64::MAX
        ),
    })
}

/// `found` text for a text-format error: the line quoted, or `end of file`.
pub(crate) fn found(line: Option<&str>) -> String {
    match line {
        Some(l) => format!("`{}`", sanitize(l, 80)),
        None => "end of file".to_string(),
    }
}
