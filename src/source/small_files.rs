//! Reading a few small files of a store path whole, for analyses that need their text
//! (`split` checks the package's CMake and pkg-config files): only from a directory
//! tree (a NAR would be streamed again for each), never through a symlink.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{FileSource, PathFiles};
use crate::store::StorePath;

/// The contents of the files `rels` (paths relative to `path`'s top) from `source`,
/// in the same order: `None` for a file that is not (or no longer) a regular file
/// below directories, or cannot be read. `None` altogether when the source has no
/// directory tree for `path` (files from NARs).
pub fn read_small_files(
    source: &dyn FileSource,
    path: &StorePath,
    rels: &[&[u8]],
) -> Option<Vec<Option<Vec<u8>>>> {
    let root = match source.open(path) {
        Ok(PathFiles::Tree { physical }) => physical,
        _ => return None,
    };
    Some(rels.iter().map(|rel| read_below(&root, rel)).collect())
}

/// The regular file `rel` below `root`, read only if the scan's view still holds: every
/// directory between is a directory and the file a regular file (a symlink is never
/// followed, so nothing outside the store is read).
fn read_below(root: &Path, rel: &[u8]) -> Option<Vec<u8>> {
    let file = root.join(OsStr::from_bytes(rel));
    let mut dir = file.parent();
    while let Some(d) = dir.filter(|d| d.starts_with(root) && *d != root) {
        if !std::fs::symlink_metadata(d).ok()?.is_dir() {
            return None;
        }
        dir = d.parent();
    }
    let meta = std::fs::symlink_metadata(&file).ok()?;
    meta.is_file().then(|| std::fs::read(&file).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::StoreTree;
    use crate::store::StoreDir;

    /// A file below a symlinked directory, or a symlink itself, is not read; a NAR
    /// source gives nothing.
    #[test]
    fn small_files_are_read_below_directories_only() {
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("nix/store");
        let name = "0123456789abcdfghijklmnpqrsvwxyz-pkg-1.0";
        let top = store.join(name);
        std::fs::create_dir_all(top.join("lib/pkgconfig")).unwrap();
        std::fs::write(top.join("lib/pkgconfig/a.pc"), "prefix=x\n").unwrap();
        std::fs::write(tmp.path().join("outside.pc"), "secret\n").unwrap();
        std::os::unix::fs::symlink(tmp.path().join("outside.pc"), top.join("lib/link.pc")).unwrap();
        std::os::unix::fs::symlink(tmp.path(), top.join("up")).unwrap();
        let tree = StoreTree::new(StoreDir::new("/nix/store"), Some(tmp.path()));
        let path = StorePath::from_base_name(name).unwrap();
        let got = read_small_files(
            &tree,
            &path,
            &[
                b"lib/pkgconfig/a.pc",
                b"lib/link.pc",
                b"up/outside.pc",
                b"none",
            ],
        )
        .unwrap();
        assert_eq!(got, [Some(b"prefix=x\n".to_vec()), None, None, None]);
    }
}
