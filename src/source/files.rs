//! What every file source is and hands out: the [`FileSource`] trait, a store path's
//! files ready to walk ([`PathFiles`]), the errors ([`SourceError`]), a closure's
//! source or the reason it has none ([`Files`]), and where a store directory physically
//! is ([`physical_store_dir`]).

use super::nar::{Compression, OpenError};
use crate::store::FilesFrom;
use crate::store::{StoreDir, StorePath};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The files of one store path, ready to be walked.
pub enum PathFiles {
    /// A directory tree (or a single file or symlink) on disk at `physical`.
    Tree {
        /// Where the store path's top level physically is.
        physical: PathBuf,
    },
    /// A NAR serialisation, already decompressed.
    Nar {
        /// Names the stream in errors (the NAR file, or its URL).
        label: String,
        /// How it was compressed (for error messages).
        compression: Compression,
        /// The uncompressed NAR bytes.
        reader: Box<dyn Read + Send>,
    },
}

impl fmt::Debug for PathFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathFiles::Tree { physical } => {
                f.debug_struct("Tree").field("physical", physical).finish()
            }
            PathFiles::Nar {
                label, compression, ..
            } => f
                .debug_struct("Nar")
                .field("label", label)
                .field("compression", compression)
                .finish(),
        }
    }
}

/// Why a store path's files cannot be had from a source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// The source does not hold this store path (no NAR for it in the cache).
    #[error("no NAR for {path} in the binary cache")]
    Missing {
        /// The full store path.
        path: String,
    },
    /// The NAR file cannot be opened or is not a NAR.
    #[error(transparent)]
    Open(#[from] OpenError),
}

/// A place the files of store paths come from.
pub trait FileSource: fmt::Debug + Send + Sync {
    /// Which kind of source this is.
    fn kind(&self) -> FilesFrom;

    /// The files of `path`.
    fn open(&self, path: &StorePath) -> Result<PathFiles, SourceError>;

    /// Whether the absolute logical path `abs` (bytes, as a symlink target or a RUNPATH
    /// directory joined with a library name spells it) names an existing entry inside
    /// the store, following symlinks only within the store. Paths outside the store
    /// directory do not exist. `None` when this source cannot tell for this path (a
    /// listing cannot name it). Only meaningful when [`FileSource::can_resolve`].
    fn exists(&self, abs: &[u8]) -> Option<bool>;

    /// Whether [`FileSource::exists`] can answer for every store path (a binary cache
    /// without `.ls` listings cannot, so RUNPATH entries stay unchecked).
    fn can_resolve(&self) -> bool;
}

/// The files available for a closure, decided once by the caller.
#[derive(Debug, Clone)]
pub enum Files {
    /// Files come from this source.
    Available(Arc<dyn FileSource>),
    /// No files: the store directory that was looked in (for the report's warning).
    Unavailable {
        /// The physical store directory where no path of the closure was found.
        looked_in: PathBuf,
    },
}

impl Default for Files {
    fn default() -> Self {
        Files::Unavailable {
            looked_in: PathBuf::new(),
        }
    }
}

impl Files {
    /// The source, when there is one.
    pub fn source(&self) -> Option<&dyn FileSource> {
        match self {
            Files::Available(s) => Some(s.as_ref()),
            Files::Unavailable { .. } => None,
        }
    }

    /// Which kind of source (`unavailable` without one).
    pub fn kind(&self) -> FilesFrom {
        self.source().map_or(FilesFrom::Unavailable, |s| s.kind())
    }
}

/// Where the store directory `store_dir` physically is: `<store_root>/<store_dir>`, or
/// the store directory itself without a store root.
pub fn physical_store_dir(store_dir: &StoreDir, store_root: Option<&Path>) -> PathBuf {
    crate::store::physical_path(store_root, store_dir.as_str())
}
