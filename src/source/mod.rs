//! Where the files of store paths come from, behind one trait ([`FileSource`]): a store
//! directory on disk (the local store or a `--store-root`, [`StoreTree`]), or the NARs of
//! a binary cache directory with its `.ls` listings ([`NarDir`]), or those of a binary
//! cache over HTTP ([`HttpSource`]); nothing above this layer touches the file system
//! or the network.
//!
//! A source hands out a store path's files ready to walk ([`PathFiles`]: a directory
//! tree, or a decompressed NAR stream) and answers whether an absolute logical path
//! exists ([`FileSource::exists`]), which the scan needs to tell a RUNPATH entry that
//! supplies a library from one that does not, and the evidence layer to tell a live
//! symlink from a dangling one. [`locate`] picks the source for a loaded closure. (The
//! texts `split` reads, of build-configuration files, are kept by the scan as the files
//! stream by, from any source: `crate::scan::is_config_file`.)

mod http;
mod nar;
mod nar_dir;
mod store_tree;
mod verify;

pub use http::HttpSource;
pub use nar::{open_nar, open_nar_stream, Compression, OpenError};
pub use nar_dir::NarDir;
pub use store_tree::StoreTree;

/// Which kind of source the files come from: the report's word for it.
pub use crate::store::FilesFrom;

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::store::{Closure, SourceKind, StoreDir, StorePath};

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

/// Find the files for `closure`: the NARs of the binary cache it was loaded from, else
/// the store directory (under `store_root` when given) if its paths are there.
pub fn locate(closure: &Closure, store_root: Option<&Path>) -> Files {
    locate_with(closure, store_root, None)
}

/// [`locate`], and for a closure loaded from an HTTP cache, its NARs through `http` (the
/// client that loaded it).
pub fn locate_with(
    closure: &Closure,
    store_root: Option<&Path>,
    http: Option<&Arc<crate::http::HttpClient>>,
) -> Files {
    if let (SourceKind::HttpCache, Some(client)) = (closure.source, http) {
        return Files::Available(Arc::new(HttpSource::new(Arc::clone(client), closure)));
    }
    if closure.source == SourceKind::BinaryCache {
        if let Some(dir) = NarDir::open(Path::new(&closure.origin), &closure.store_dir) {
            return Files::Available(Arc::new(dir));
        }
    }
    let tree = StoreTree::new(closure.store_dir.clone(), store_root);
    let present = closure.paths.keys().take(16).any(|p| tree.holds(p));
    if present {
        Files::Available(Arc::new(tree))
    } else {
        Files::Unavailable {
            looked_in: tree.physical_dir().to_path_buf(),
        }
    }
}
