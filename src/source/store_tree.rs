//! [`StoreTree`]: store paths as directory trees of a store directory on disk, the local
//! store or one under `--store-root` (a chroot store, a mounted image). The logical store
//! directory `D` is found at `<store root>/D`; nothing outside it is looked at.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::{physical_store_dir, FileSource, FilesFrom, PathFiles, SourceError};
use crate::store::{StoreDir, StorePath};

/// A store directory on disk.
#[derive(Debug, Clone)]
pub struct StoreTree {
    store_dir: StoreDir,
    physical_dir: PathBuf,
}

impl StoreTree {
    /// The store directory `store_dir`, physically under `store_root` when given.
    pub fn new(store_dir: StoreDir, store_root: Option<&Path>) -> StoreTree {
        let physical_dir = physical_store_dir(&store_dir, store_root);
        StoreTree {
            store_dir,
            physical_dir,
        }
    }

    /// Where the store directory physically is.
    pub fn physical_dir(&self) -> &Path {
        &self.physical_dir
    }

    /// Whether the store path is present (as any kind of entry; symlinks not followed).
    pub fn holds(&self, path: &StorePath) -> bool {
        self.physical_dir
            .join(path.to_string())
            .symlink_metadata()
            .is_ok()
    }

    /// The physical location of an absolute logical path inside the store directory,
    /// `None` for paths outside it.
    fn physical(&self, abs: &[u8]) -> Option<PathBuf> {
        let rest = abs.strip_prefix(self.store_dir.as_str().as_bytes())?;
        if !rest.starts_with(b"/") {
            return None;
        }
        let rest = trim_leading_slashes(rest);
        Some(self.physical_dir.join(OsStr::from_bytes(rest)))
    }
}

fn trim_leading_slashes(mut b: &[u8]) -> &[u8] {
    while let Some(r) = b.strip_prefix(b"/") {
        b = r;
    }
    b
}

impl FileSource for StoreTree {
    fn kind(&self) -> FilesFrom {
        FilesFrom::Store
    }

    fn open(&self, path: &StorePath) -> Result<PathFiles, SourceError> {
        Ok(PathFiles::Tree {
            physical: self.physical_dir.join(path.to_string()),
        })
    }

    fn exists(&self, abs: &[u8]) -> Option<bool> {
        Some(
            self.physical(abs)
                .is_some_and(|p| std::fs::metadata(p).is_ok()),
        )
    }

    fn can_resolve(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl StoreTree {
        fn exists_(&self, abs: &[u8]) -> bool {
            self.exists(abs).expect("a store tree always knows")
        }
    }

    #[test]
    fn only_paths_inside_the_store_exist() {
        let root = tempfile::tempdir().unwrap();
        let sd = StoreDir::new("/nix/store");
        let base = "9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-rocblas-5.7.1";
        let dir = root.path().join("nix/store").join(base);
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::fs::write(dir.join("lib/librocblas.so"), b"x").unwrap();
        std::os::unix::fs::symlink("librocblas.so", dir.join("lib/link")).unwrap();
        std::os::unix::fs::symlink("nowhere", dir.join("lib/dangling")).unwrap();
        let t = StoreTree::new(sd, Some(root.path()));
        let abs = |rest: &str| format!("/nix/store/{base}{rest}").into_bytes();
        assert!(t.exists_(&abs("/lib/librocblas.so")));
        assert!(t.exists_(&abs("//lib/link")), "symlinks are resolved");
        assert!(!t.exists_(&abs("/lib/dangling")));
        assert!(!t.exists_(&abs("/lib/nothing")));
        assert!(!t.exists_(b"/etc/passwd"), "outside the store");
        assert!(
            !t.exists_(b"/nix/storefoo"),
            "not below the store directory"
        );
        assert!(t.holds(&StorePath::from_base_name(base).unwrap()));
        let mut odd = abs("/lib/");
        odd.extend_from_slice(b"\xff\\name");
        assert!(!t.exists_(&odd), "non-UTF-8 names are looked up as bytes");
        std::fs::write(dir.join(OsStr::from_bytes(b"lib/\xff\\name")), b"y").unwrap();
        assert!(t.exists_(&odd));
    }
}
