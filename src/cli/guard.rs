//! nixcut only reads stores: the files it writes (`snapshot -o`, `check --summary`)
//! are refused inside a store object.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::config::Config;
use super::output::printable;

/// Refuse to write `file` into a store object: a path inside `<store>/<hash>-<name>/`,
/// or an existing `<store>/<hash>-<name>`, of the store directory or of the
/// `--store-root` copy. nixcut only reads stores. A new entry directly in the store
/// directory is allowed: that is a Nix builder writing its own `$out`
/// (`nix/closure-check.nix` passes `--summary $out`). `what` names the file in the
/// message.
///
/// The file is checked where a write would land: every symlink of its last component
/// is followed first (a `LINK` to a store file is that store file), as the parent
/// directories are by `canonicalize`.
pub(super) fn refuse_store_object(cfg: &Config, file: &Path, what: &str) -> Result<()> {
    let opts = &cfg.load;
    let logical = PathBuf::from(opts.store_dir_or_default().as_str());
    let stores = [logical, opts.physical_store_dir()];
    let shown = file;
    let resolved = follow_last_symlinks(file);
    let file = resolved.as_path();
    let Some(name) = file.file_name() else {
        return Ok(());
    };
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(target) = std::fs::canonicalize(parent).map(|p| p.join(name)) else {
        return Ok(()); // the write itself will say what is wrong
    };
    for store in &stores {
        let store = std::fs::canonicalize(store).unwrap_or_else(|_| store.clone());
        let Ok(rest) = target.strip_prefix(&store) else {
            continue;
        };
        if rest.components().count() >= 2 || target.exists() {
            return Err(anyhow::anyhow!(
                "cannot write {what} {}: it is inside the store directory {}, and nixcut \
                 never writes into a store object; write it elsewhere",
                printable(&shown.display().to_string()),
                store.display()
            ));
        }
    }
    Ok(())
}

/// `file` with the symlinks of its last component followed (at most 40, as the kernel
/// does; a loop or a longer chain is left for the write to report). A relative target
/// is taken from the link's directory. A dangling link gives where the write would
/// create the file.
fn follow_last_symlinks(file: &Path) -> PathBuf {
    let mut p = file.to_path_buf();
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&p) else {
            break;
        };
        p = match p.parent() {
            Some(dir) if target.is_relative() => dir.join(target),
            _ => target,
        };
    }
    p
}
