//! Store vocabulary: store directories, store paths, NAR hashes, path metadata and the
//! [`Closure`] that every loader produces.
//!
//! This module does no I/O. Loaders (`crate::load`) fill a [`Closure`]; the graph layer
//! (`crate::graph`) turns it into one compressed graph; analysis and reports read both.

mod bytes;
mod closure;
mod files_from;
pub mod frame;
mod hash;
mod name;
pub mod narinfo;
mod nix32;
mod path;
mod size;
mod snapshot;
mod text;
mod warning;
mod whole;

pub use bytes::Bytes;
pub use closure::{package_name, Closure, InvalidPath, RootSelectionError, SourceKind};
pub use files_from::FilesFrom;
pub use hash::NarHash;
pub use name::{parse_package_name, PackageName};
pub use nix32::{decode_nix32, encode_nix32, is_nix32_byte, NIX32_ALPHABET};
pub use path::{
    hash_prefix, physical_path, PathInfo, StoreDir, StorePath, StorePathError, HASH_LEN,
};
pub use size::{format_size, parse_size, SizeParseError};
pub use snapshot::{
    Snapshot, SnapshotHeader, SnapshotKind, SnapshotPath, SourceRef, SNAPSHOT_KIND,
    SNAPSHOT_SCHEMA_VERSION,
};
pub use text::{
    edit_distance, has_workflow_command, is_terminal_hazard, neutralise_workflow_commands, sanitize,
};
pub use warning::LoadWarning;
pub use whole::{HashIndex, WholeStore, WholeStoreBuilder, WholeStoreIssues, NO_PATH};
