//! nixcut only reads stores: every file it writes goes through this module, which
//! refuses a destination inside a store object, also through symlinks.
//!
//! What writes: `snapshot -o` ([`write_output`], replaced atomically or written in
//! place), `check --summary` and `$GITHUB_STEP_SUMMARY` ([`write_output`], appended),
//! the caches under `$XDG_CACHE_HOME/nixcut` ([`cache_dir`]: resolved once, refused
//! in a store, created only when a cache entry is written) and the private copy of a
//! piped input ([`temp_file`], in `$TMPDIR`). Each asks [`store_object_of`] where the
//! write would land: the destination with every symlink resolved, dangling ones
//! included, as the kernel would when creating it.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use anyhow::{anyhow, Context, Result};

use nixcut::load::LoadOptions;
use nixcut::store::StoreDir;

use super::output::printable;

/// How [`write_output`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WriteMode {
    /// Append, creating the file when missing (a CI summary).
    Append,
    /// Replace atomically: a temporary file beside it, synced, renamed over it (a
    /// baseline: a crash or a full disk leaves the old one whole).
    Replace,
    /// Open and write without truncating or renaming (a FIFO or a device).
    InPlace,
}

/// The store directories nixcut never writes into: the configured one
/// (`--store-dir`), `$NIX_STORE_DIR`, `/nix/store`, their copies under `--store-root`,
/// and `extra` (the store directories the inputs turned out to use), each also as its
/// symlinks resolve.
fn stores(opts: &LoadOptions, extra: &[&StoreDir]) -> Vec<PathBuf> {
    let mut logical: Vec<String> = vec![
        opts.store_dir_or_default().as_str().to_string(),
        StoreDir::default().as_str().to_string(),
    ];
    logical.extend(opts.nix_store_dir.iter().cloned());
    logical.extend(extra.iter().map(|d| d.as_str().to_string()));
    let mut out = Vec::new();
    for l in &logical {
        let plain = PathBuf::from(l);
        let physical = nixcut::store::physical_path(opts.store_root.as_deref(), l);
        for p in [plain, physical] {
            let resolved = resolve(&p);
            for q in [p, resolved] {
                if !out.contains(&q) {
                    out.push(q);
                }
            }
        }
    }
    out
}

/// `path` made absolute with every symlink along it resolved (at most 40, as the
/// kernel follows), dangling ones too: where a write to it would land. `..` is taken
/// after the symlinks before it, as the kernel does. A loop stops the resolution
/// where it is (the write itself reports it).
pub(super) fn resolve(path: &Path) -> PathBuf {
    let start = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
    };
    let mut done = start;
    let mut todo: Vec<std::ffi::OsString> = Vec::new();
    // Components are pushed in reverse: `todo.pop()` gives the next one.
    let push = |todo: &mut Vec<std::ffi::OsString>, p: &Path| {
        for c in p.components().rev() {
            match c {
                Component::Normal(n) => todo.push(n.to_os_string()),
                Component::ParentDir => todo.push("..".into()),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
    };
    push(&mut todo, path);
    let mut hops = 0;
    while let Some(c) = todo.pop() {
        if c == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&c);
        match std::fs::read_link(&next) {
            Ok(target) if hops < 40 => {
                hops += 1;
                if target.is_absolute() {
                    done = PathBuf::from("/");
                }
                push(&mut todo, &target);
            }
            _ => done = next,
        }
    }
    done
}

/// Where `file` is a store object or inside one: the store directory, when the
/// resolved destination is two levels or more below a store directory, or is an
/// existing entry of one. A new entry directly in the store directory is allowed:
/// that is a Nix builder writing its own `$out` (`nix/closure-check.nix` passes
/// `--summary $out`).
fn store_object_of(opts: &LoadOptions, file: &Path, extra: &[&StoreDir]) -> Option<PathBuf> {
    let target = resolve(file);
    stores(opts, extra).into_iter().find(|store| {
        target
            .strip_prefix(store)
            .is_ok_and(|rest| rest.components().count() >= 2 || target.exists())
    })
}

/// Refuse to write `file` into a store object (see [`store_object_of`]). `what` names
/// the file in the message.
pub(super) fn refuse_store_object(
    opts: &LoadOptions,
    file: &Path,
    what: &str,
    extra: &[&StoreDir],
) -> Result<()> {
    match store_object_of(opts, file, extra) {
        None => Ok(()),
        Some(store) => Err(anyhow!(
            "cannot write {what} {}: it is inside the store directory {}, and nixcut \
             never writes into a store object; write it elsewhere",
            printable(&file.display().to_string()),
            store.display()
        )),
    }
}

/// Write `bytes` to `file` as `mode` says, after checking (again, right before the
/// write) that it lands in no store object; `extra` are store directories the inputs
/// use. The one function through which nixcut writes a file the user named.
pub(super) fn write_output(
    opts: &LoadOptions,
    file: &Path,
    what: &str,
    mode: WriteMode,
    bytes: &[u8],
    extra: &[&StoreDir],
) -> Result<()> {
    refuse_store_object(opts, file, what, extra)?;
    let shown = printable(&file.display().to_string()).into_owned();
    match mode {
        WriteMode::Append => {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file)
                .with_context(|| format!("cannot open {what} {shown}"))?;
            f.write_all(bytes)
                .and_then(|()| f.flush())
                .with_context(|| format!("cannot write {what} {shown}"))
        }
        WriteMode::InPlace => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(file)
                .with_context(|| format!("cannot open {what} {shown}"))?;
            f.write_all(bytes)
                .and_then(|()| f.flush())
                .with_context(|| format!("cannot write {what} {shown}"))
        }
        WriteMode::Replace => {
            replace_atomically(file, bytes).with_context(|| format!("cannot write {what} {shown}"))
        }
    }
}

/// Replace `file` atomically: a temporary file in the same directory, synced, then
/// renamed over `file`. On any error `file` is left as it was and the temporary file
/// is removed (by `tempfile`'s drop).
fn replace_atomically(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".nixcut-snapshot-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.as_file_mut().write_all(bytes)?;
    tmp.as_file().sync_all()?;
    // A baseline is meant to be committed and read by others: not the 0600 of a
    // temporary file. Keep the permissions of the file being replaced, if any.
    let perms = match std::fs::metadata(file) {
        Ok(m) => m.permissions(),
        Err(_) => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::Permissions::from_mode(0o644)
        }
    };
    std::fs::set_permissions(tmp.path(), perms)?;
    tmp.persist(file).map_err(|e| e.error)?;
    Ok(())
}

/// The cache directory `<cache_home>/nixcut`, resolved through its symlinks; `Err`
/// (a warning: the run goes on without caches) when it is in a store directory at any
/// depth. Nothing is created here: each cache makes its directory when it first
/// writes an entry.
pub(super) fn cache_dir(opts: &LoadOptions, cache_home: &Path) -> Result<PathBuf, String> {
    let dir = resolve(&cache_home.join("nixcut"));
    let inside = stores(opts, &[])
        .into_iter()
        .find(|store| dir.starts_with(store));
    match inside {
        None => Ok(dir),
        Some(store) => Err(format!(
            "the cache directory {} is inside the store directory {} (it resolves to {}); \
             nixcut never writes into a store, so this run uses no cache (set \
             XDG_CACHE_HOME elsewhere, or pass --no-cache)",
            printable(&cache_home.join("nixcut").display().to_string()),
            store.display(),
            printable(&dir.display().to_string()),
        )),
    }
}

/// A private temporary file (for a piped input read twice), refused when `$TMPDIR`
/// resolves into a store directory.
pub(super) fn temp_file(opts: &LoadOptions) -> Result<tempfile::NamedTempFile> {
    let dir = std::env::temp_dir();
    let resolved = resolve(&dir);
    if let Some(store) = stores(opts, &[])
        .into_iter()
        .find(|store| resolved.starts_with(store))
    {
        return Err(anyhow!(
            "cannot keep standard input in a temporary file: the temporary directory {} \
             ($TMPDIR) is inside the store directory {}, and nixcut never writes into a \
             store; set TMPDIR elsewhere",
            printable(&dir.display().to_string()),
            store.display()
        ));
    }
    tempfile::NamedTempFile::new_in(&resolved)
        .context("cannot keep standard input in a temporary file")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_follows_every_link_dangling_ones_too() {
        let t = tempfile::tempdir().unwrap();
        let base = resolve(t.path());
        std::fs::create_dir(base.join("real")).unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        std::os::unix::fs::symlink("../elsewhere/x", base.join("real/dangling")).unwrap();
        assert_eq!(
            resolve(&base.join("link/dangling/more")),
            base.join("elsewhere/x/more")
        );
        // `..` after a link is taken from the link's target.
        assert_eq!(resolve(&base.join("link/../real")), base.join("real"));
        // A loop ends the resolution instead of hanging.
        std::os::unix::fs::symlink(base.join("loop"), base.join("loop")).unwrap();
        assert_eq!(resolve(&base.join("loop")), base.join("loop"));
    }

    #[test]
    fn a_cache_directory_resolving_into_a_store_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let base = resolve(t.path());
        let store = base.join("store");
        let obj = store.join("9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-app-1.0");
        std::fs::create_dir_all(&obj).unwrap();
        std::fs::create_dir_all(base.join("xc")).unwrap();
        std::os::unix::fs::symlink(obj.join("nixcut"), base.join("xc/nixcut")).unwrap();
        let opts = LoadOptions {
            store_dir: Some(StoreDir::new(store.to_str().unwrap())),
            ..LoadOptions::default()
        };
        let err = cache_dir(&opts, &base.join("xc")).unwrap_err();
        assert!(err.contains("inside the store directory"), "{err}");
        assert_eq!(
            cache_dir(&opts, &base.join("other")).unwrap(),
            base.join("other/nixcut")
        );
        // Nothing was created by asking.
        assert!(!obj.join("nixcut").exists());
        assert!(!base.join("other").exists());
    }
}
