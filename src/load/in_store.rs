//! Inputs that are in a store directory: which store path a file, directory or symlink
//! is (or leads to), with `--store-root` mapping logical store paths to where they
//! physically are. `super::load` reads such a path as a file when it is a format of
//! ours, else asks the live store about its store path.

use std::path::{Path, PathBuf};

use super::{LoadError, LoadOptions};
use crate::store::StorePath;

/// With `--store-root`, a logical store path (`/nix/store/…`, as users and symlinks
/// name it) is found under the root: `<root>/nix/store/…`.
fn to_physical(p: PathBuf, opts: &LoadOptions) -> PathBuf {
    if opts.store_root.is_none() {
        return p;
    }
    let logical = opts.store_dir_or_default();
    match p.strip_prefix(logical.as_str()) {
        Ok(rest) => opts.physical_store_dir().join(rest),
        Err(_) => p,
    }
}

/// If `path` (or what its symlinks lead to) lies in the store directory: the store path
/// it is in, the sub-path below that store path, and where it physically is.
pub(super) fn store_path_of(
    path: &Path,
    opts: &LoadOptions,
) -> Result<Option<(StorePath, String, PathBuf)>, LoadError> {
    let store = opts.physical_store_dir();
    let mut cur = to_physical(absolute(path), opts);
    for _ in 0..40 {
        if let Some((sp, sub)) = in_store(&cur, &store, opts)? {
            return Ok(Some((sp, sub, cur)));
        }
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&cur).map_err(|e| LoadError::io(&cur, e))?;
                let parent = cur.parent().map(Path::to_path_buf).unwrap_or_default();
                cur = to_physical(normalize(&parent.join(target)), opts);
            }
            Ok(_) => break,
            Err(e) => return Err(LoadError::io(&cur, e)),
        }
    }
    // Directories on the way may be symlinks too (`/tmp` → `/private/tmp`, a store
    // mounted elsewhere); look at the fully resolved path once more.
    match std::fs::canonicalize(&cur) {
        Ok(c) => Ok(in_store(&c, &store, opts)?.map(|(sp, sub)| (sp, sub, c))),
        Err(e) => Err(LoadError::io(&cur, e)),
    }
}

fn in_store(
    p: &Path,
    store: &Path,
    opts: &LoadOptions,
) -> Result<Option<(StorePath, String)>, LoadError> {
    let Ok(rest) = p.strip_prefix(store) else {
        return Ok(None);
    };
    let mut comps = rest.components();
    let Some(first) = comps.next() else {
        return Ok(None); // the store directory itself
    };
    let base = first.as_os_str().to_string_lossy();
    match StorePath::from_base_name(&base) {
        Ok(sp) => Ok(Some((sp, comps.as_path().to_string_lossy().into_owned()))),
        Err(e) => Err(LoadError::Invalid {
            path: p.to_path_buf(),
            message: format!(
                "it is inside the store directory {} but not a store path: {e}",
                opts.store_dir_or_default()
            ),
        }),
    }
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        normalize(p)
    } else {
        match std::env::current_dir() {
            Ok(cwd) => normalize(&cwd.join(p)),
            Err(_) => p.to_path_buf(),
        }
    }
}

/// Remove `.` and `..` lexically (symlinks are followed separately, one at a time).
fn normalize(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::load;
    use super::*;

    #[test]
    fn store_root_maps_store_paths() {
        let root = tempfile::tempdir().unwrap();
        let store = root.path().join("nix/store");
        let sp = "9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-rocblas-5.7.1";
        std::fs::create_dir_all(store.join(sp).join("lib")).unwrap();
        let opts = LoadOptions {
            store_root: Some(root.path().to_path_buf()),
            ..LoadOptions::default()
        };
        let link = root.path().join("result");
        std::os::unix::fs::symlink(store.join(sp), &link).unwrap();
        let (p, sub, phys) = store_path_of(&link, &opts).unwrap().unwrap();
        assert_eq!(p.to_string(), sp);
        assert_eq!(sub, "");
        assert_eq!(phys, store.join(sp));
        let (_, sub, _) = store_path_of(&store.join(sp).join("lib"), &opts)
            .unwrap()
            .unwrap();
        assert_eq!(sub, "lib");
        // Logical paths, as users and symlinks inside the image name them, are found
        // under the root.
        let logical = format!("/nix/store/{sp}/lib");
        let (_, sub, phys) = store_path_of(Path::new(&logical), &opts).unwrap().unwrap();
        assert_eq!((sub.as_str(), phys), ("lib", store.join(sp).join("lib")));
        let abs_link = root.path().join("abs");
        std::os::unix::fs::symlink(format!("/nix/store/{sp}"), &abs_link).unwrap();
        let (p, _, phys) = store_path_of(&abs_link, &opts).unwrap().unwrap();
        assert_eq!((p.to_string().as_str(), phys), (sp, store.join(sp)));
        assert!(store_path_of(root.path(), &opts).unwrap().is_none());
        let rel = root.path().join("rel");
        std::os::unix::fs::symlink(format!("nix/store/{sp}/lib"), &rel).unwrap();
        let (p, sub, _) = store_path_of(&rel, &opts).unwrap().unwrap();
        assert_eq!((p.to_string().as_str(), sub.as_str()), (sp, "lib"));
        // The live store under a store root is not queried (Nix would open its database).
        let e = load(link.to_str().unwrap(), &opts).unwrap_err();
        assert!(matches!(e, LoadError::Unsupported { .. }), "{e}");
    }
}
