//! Paths inside a loaded closure as people type them: `split PATH --for ROOT`, `why ROOT
//! TARGET` and `--root` take a `./result-x` symlink or a path inside the store as well
//! as what the library's lookup takes (a store path, a base name, a hash or its first
//! characters, a package name). The library never reads the file system for a name;
//! this module turns a symlink into the store path it names, once, for every command.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};

use super::config::Config;
use nixcut::store::{physical_path, Closure};

/// Hops followed through a chain of symlinks before giving up (as the kernel's 40).
const MAX_HOPS: usize = 40;

/// `q` as the lookup takes it: a path that leads into the store through symlinks
/// becomes the store object it reaches first (`./result-rocblas` →
/// `/nix/store/<hash>-rocblas-5.7.1`; `./result/bin/prog` → the store path of
/// `./result`), and a path inside a store object is cut to the object; a word that is
/// no file system path (`rocblas`, a hash, a base name) is as typed. Only link texts
/// are read, never a file in the store, and no link inside the store is followed.
pub(super) fn in_closure(cfg: &Config, c: &Closure, q: &str) -> Result<String> {
    let logical = c.store_dir.as_str().trim_end_matches('/').to_string();
    let physical = physical_path(cfg.store_root.as_deref(), &logical);
    let in_store = |p: &Path| store_object(p, Path::new(&logical), &physical, &logical);
    if let Some(p) = in_store(Path::new(q)) {
        return Ok(p);
    }
    // Only what looks like a file system path is looked for on disk: `rocblas` is a
    // package name even when a file of that name happens to be here.
    if !(q.contains('/') || q.starts_with('.')) {
        return Ok(q.to_string());
    }
    let mut cur = PathBuf::new();
    let mut hops = 0;
    let mut pending: Vec<std::ffi::OsString> = Path::new(q)
        .components()
        .rev()
        .map(|c| c.as_os_str().to_os_string())
        .collect();
    while let Some(part) = pending.pop() {
        cur.push(&part);
        if let Some(p) = in_store(&cur) {
            return Ok(p);
        }
        let meta = std::fs::symlink_metadata(&cur)
            .map_err(|e| anyhow!("`{q}`: {}: {e}", cur.display()))?;
        if !meta.file_type().is_symlink() {
            continue;
        }
        hops += 1;
        if hops > MAX_HOPS {
            bail!("`{q}`: more than {MAX_HOPS} symlinks on the way");
        }
        let target = std::fs::read_link(&cur)?;
        cur.pop();
        // The link's target replaces it: its components go first, then the rest.
        if target.is_absolute() {
            cur = PathBuf::new();
        }
        pending.extend(
            target
                .components()
                .rev()
                .map(|c| c.as_os_str().to_os_string()),
        );
    }
    bail!(
        "`{q}` does not lead into the store {logical}: give a store path, a `./result` \
         symlink to one, or a name, base name or hash of a path in the closure"
    )
}

/// `<store>/<base>` when `p` lies inside the logical or the physical store directory.
fn store_object(p: &Path, logical: &Path, physical: &Path, shown: &str) -> Option<String> {
    for dir in [logical, physical] {
        if let Ok(rest) = p.strip_prefix(dir) {
            let base = rest.components().next()?.as_os_str().to_str()?;
            return Some(format!("{shown}/{base}"));
        }
    }
    None
}

/// The hint for an input that is no file: what the word may have meant.
pub(super) fn missing_input_hint(input: &str) -> Option<String> {
    if input == "-" || input.contains("://") || Path::new(input).symlink_metadata().is_ok() {
        return None;
    }
    (!input.contains('/')).then(|| {
        format!(
            "`{input}` is no file here; a package inside a closure is named after the \
             closure: `nixcut split {input} --for ROOT`, `nixcut why ROOT {input}`, \
             `--root {input}`; a store path is /nix/store/<hash>-<name>"
        )
    })
}
