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

mod files;
mod http;
mod nar;
mod nar_dir;
mod store_tree;
mod verify;

pub use files::{physical_store_dir, FileSource, Files, PathFiles, SourceError};

pub use http::HttpSource;
pub use nar::{open_nar, open_nar_stream, Compression, OpenError};
pub use nar_dir::NarDir;
pub use store_tree::StoreTree;

/// Which kind of source the files come from: the report's word for it.
pub use crate::store::FilesFrom;

use std::path::Path;
use std::sync::Arc;

use crate::store::{Closure, SourceKind};

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
        if let Some(dir) = NarDir::open(Path::new(&closure.origin), closure) {
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
