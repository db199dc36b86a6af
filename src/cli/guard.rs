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

use super::escape::printable;

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

/// The store directory `path` (resolved, see [`resolve`]) lies in, and the part of
/// `path` below it: a known store directory ([`stores`]), matched by its path or by
/// its identity (device and inode: a bind mount of a store is that store), or any
/// directory holding an entry named like a store path (`<32-character hash>-<name>`)
/// that `path` is, or is below. The last catches stores nixcut was not told of (a
/// `/gnu/store` input while the configuration says `/nix/store`).
fn store_of(opts: &LoadOptions, path: &Path, extra: &[&StoreDir]) -> Option<(PathBuf, PathBuf)> {
    use std::os::unix::fs::MetadataExt;
    let known = stores(opts, extra);
    for store in &known {
        if let Ok(rest) = path.strip_prefix(store) {
            return Some((store.clone(), rest.to_path_buf()));
        }
    }
    let ids: Vec<(u64, u64, &PathBuf)> = known
        .iter()
        .filter_map(|s| std::fs::metadata(s).ok().map(|m| (m.dev(), m.ino(), s)))
        .collect();
    for dir in path.ancestors() {
        let Ok(m) = std::fs::metadata(dir) else {
            continue; // not there yet: what is created below it is judged by its parent
        };
        if let Some((_, _, store)) = ids.iter().find(|(d, i, _)| (*d, *i) == (m.dev(), m.ino())) {
            let rest = path.strip_prefix(dir).unwrap_or(path);
            return Some(((*store).clone(), rest.to_path_buf()));
        }
    }
    let mut dir = PathBuf::from("/");
    for (i, c) in path.components().enumerate() {
        if let Component::Normal(name) = c {
            let named_like_a_store_path = name
                .to_str()
                .is_some_and(|n| nixcut::store::StorePath::from_base_name(n).is_ok());
            if named_like_a_store_path && i > 0 {
                return Some((
                    dir.clone(),
                    path.strip_prefix(&dir).unwrap_or(path).to_path_buf(),
                ));
            }
            dir.push(name);
        }
    }
    None
}

/// Where `file` is a store object or inside one: the store directory, when the
/// resolved destination is two levels or more below a store directory, or is an
/// existing entry of one. A new entry directly in the store directory is allowed:
/// that is a Nix builder writing its own `$out` (`nix/closure-check.nix` passes
/// `--summary $out`).
fn store_object_of(opts: &LoadOptions, file: &Path, extra: &[&StoreDir]) -> Option<PathBuf> {
    let target = resolve(file);
    let (store, rest) = store_of(opts, &target, extra)?;
    (rest.components().count() >= 2 || target.exists()).then_some(store)
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
    // What was opened is checked again, by the descriptor: a link swapped in between
    // the check and the open would otherwise send the write elsewhere. (The file
    // checked may be a new entry of a store directory, a builder's `$out`: allowed,
    // and it exists once opened, so only another file than the one checked is judged.)
    let checked = resolve(file);
    let opened = |f: &std::fs::File| -> Result<()> {
        use std::os::fd::AsRawFd;
        match std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())) {
            Ok(real) if real != checked && store_object_of(opts, &real, extra).is_some() => {
                Err(anyhow!(
                    "cannot write {what} {shown}: it opened {}, inside a store, and nixcut never \
                 writes into a store object",
                    printable(&real.display().to_string())
                ))
            }
            _ => Ok(()),
        }
    };
    match mode {
        WriteMode::Append | WriteMode::InPlace => {
            let mut f = std::fs::OpenOptions::new()
                .create(mode == WriteMode::Append)
                .append(mode == WriteMode::Append)
                .write(true)
                .open(file)
                .with_context(|| format!("cannot open {what} {shown}"))?;
            opened(&f)?;
            f.write_all(bytes)
                .and_then(|()| f.flush())
                .with_context(|| format!("cannot write {what} {shown}"))
        }
        // The file that is replaced is the one checked: the destination with its
        // links resolved, its directory the one the temporary file goes in.
        WriteMode::Replace => replace_atomically(&resolve(file), bytes)
            .with_context(|| format!("cannot write {what} {shown}")),
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
    match store_of(opts, &dir, &[]) {
        None => Ok(dir),
        Some((store, _)) => Err(format!(
            "the cache directory {} is inside the store directory {} (it resolves to {}); \
             nixcut never writes into a store, so this run uses no cache (set \
             XDG_CACHE_HOME elsewhere, or pass --no-cache)",
            printable(&cache_home.join("nixcut").display().to_string()),
            store.display(),
            printable(&dir.display().to_string()),
        )),
    }
}

/// Why `$TMPDIR` may not be used (it resolves into a store): the message for a
/// warning, after which the run uses the system's default (`/tmp`). `None` when it is
/// fine or unset. Temporary files are written there by the scanner (large NAR entries
/// spooled) and for a piped input.
pub(super) fn tmpdir_in_store(opts: &LoadOptions) -> Option<String> {
    let dir = std::env::var_os("TMPDIR").filter(|d| !d.is_empty())?;
    let (store, _) = store_of(opts, &resolve(Path::new(&dir)), &[])?;
    Some(format!(
        "the temporary directory {} ($TMPDIR) is inside the store directory {}; nixcut \
         never writes into a store, so this run keeps its temporary files in /tmp",
        printable(&Path::new(&dir).display().to_string()),
        store.display()
    ))
}

/// A private temporary file (for a piped input read twice), refused when the
/// temporary directory resolves into a store.
pub(super) fn temp_file(opts: &LoadOptions) -> Result<tempfile::NamedTempFile> {
    let dir = std::env::temp_dir();
    let resolved = resolve(&dir);
    if let Some((store, _)) = store_of(opts, &resolved, &[]) {
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

    /// A store nixcut was not told of (a `/gnu/store` input, configuration saying
    /// `/nix/store`) is known by its objects' names: a cache directory, a temporary
    /// directory or an output below `<hash>-<name>` is refused; a new `<hash>-<name>`
    /// entry itself (a builder's `$out`) is not.
    #[test]
    fn a_store_object_is_known_by_its_name_in_any_store() {
        let t = tempfile::tempdir().unwrap();
        let base = resolve(t.path());
        let obj = base.join("gnu/store/9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-app-1.0");
        std::fs::create_dir_all(&obj).unwrap();
        std::os::unix::fs::symlink(&obj, base.join("home")).unwrap();
        let opts = LoadOptions::default();
        assert!(cache_dir(&opts, &base.join("home")).is_err());
        assert!(refuse_store_object(&opts, &base.join("home/out.json"), "x", &[]).is_err());
        let out = base.join("gnu/store/k0c0d60n2dqnb396hj717yvk0y17kx6h-summary");
        assert!(refuse_store_object(&opts, &out, "x", &[]).is_ok());
        std::fs::write(&out, "").unwrap();
        assert!(refuse_store_object(&opts, &out, "x", &[]).is_err());
        assert!(cache_dir(&opts, &base.join("elsewhere")).is_ok());
    }

    /// `Replace` replaces the file the check resolved, not a link in its place.
    #[test]
    fn a_replaced_file_is_the_one_checked() {
        let t = tempfile::tempdir().unwrap();
        let base = resolve(t.path());
        std::fs::write(base.join("real.json"), "old").unwrap();
        std::os::unix::fs::symlink("real.json", base.join("link.json")).unwrap();
        let opts = LoadOptions::default();
        write_output(
            &opts,
            &base.join("link.json"),
            "x",
            WriteMode::Replace,
            b"new",
            &[],
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(base.join("real.json")).unwrap(),
            "new"
        );
        assert!(std::fs::symlink_metadata(base.join("link.json"))
            .unwrap()
            .file_type()
            .is_symlink());
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
