//! `refs --closure ROOT --explain FILE`: FILE as users type it, made the absolute
//! logical path the analysis explains. Accepted: a path in the store
//! (`/nix/store/…-rocblas-5.7.1/lib/…`, a store path itself), a path through a symlink
//! into the store (`./result/bin/llama-server`), and a path relative to ROOT
//! (`bin/llama-server`, one of ROOT's own files). A file that exists nowhere is an
//! error, not "the consumer does not load it". Only what `--explain` needs: the other
//! inputs are resolved by the loader.

use std::path::{Component, Path, PathBuf};

use anyhow::{bail, Result};

use nixcut::store::{Closure, StoreDir};

/// Most symlinks followed outside the store (as Linux' `ELOOP` limit).
const MAX_LINKS: usize = 40;

/// The absolute logical path `--explain` asks about. `physical` is where the store
/// directory's files are (`--store-root`); `root` the store path of ROOT.
pub(super) fn explain_target(
    raw: &str,
    closure: &Closure,
    physical: &Path,
    root: Option<&str>,
) -> Result<String> {
    let sd = &closure.store_dir;
    let exists = |logical: &str| -> bool {
        let rest = logical
            .strip_prefix(sd.as_str())
            .unwrap_or("")
            .trim_start_matches('/');
        physical.join(rest).symlink_metadata().is_ok()
    };
    // Already a store path: as given.
    if in_store(sd, raw) {
        if exists(raw) {
            return Ok(raw.trim_end_matches('/').to_string());
        }
        bail!(
            "--explain {raw}: no such file in the store ({})",
            physical.display()
        );
    }
    let here = Path::new(raw);
    if here.symlink_metadata().is_ok() {
        let abs = std::env::current_dir()
            .map(|d| d.join(here))
            .unwrap_or_else(|_| here.to_path_buf());
        return into_store(sd, physical, &abs).ok_or_else(|| {
            anyhow::anyhow!(
                "--explain {raw}: it is not in the store {} (nor a symlink into it), so no file of ROOT's closure is meant",
                sd.as_str()
            )
        });
    }
    if here.is_relative() {
        if let Some(root) = root {
            let candidate = format!("{root}/{}", raw.trim_start_matches("./"));
            if exists(&candidate) {
                return Ok(candidate);
            }
        }
    }
    bail!(
        "--explain {raw}: no such file (looked in the current directory{})",
        root.map(|r| format!(" and in ROOT {r}"))
            .unwrap_or_default()
    )
}

fn in_store(sd: &StoreDir, p: &str) -> bool {
    p.strip_prefix(sd.as_str())
        .is_some_and(|rest| rest.starts_with('/') && rest.len() > 1)
}

/// One step of a path being followed.
enum Part {
    Root,
    Up,
    Name(std::ffi::OsString),
}

fn parts_of(p: &Path) -> Vec<Part> {
    p.components()
        .filter_map(|c| match c {
            Component::RootDir | Component::Prefix(_) => Some(Part::Root),
            Component::ParentDir => Some(Part::Up),
            Component::CurDir => None,
            Component::Normal(s) => Some(Part::Name(s.to_os_string())),
        })
        .collect()
}

/// Follow symlinks outside the store, component by component, until the path is in the
/// store (logical, or the physical copy of `--store-root`); the rest is kept as written.
fn into_store(sd: &StoreDir, physical: &Path, abs: &Path) -> Option<String> {
    let logical = Path::new(sd.as_str());
    let mut todo: Vec<Part> = parts_of(abs);
    todo.reverse();
    let mut cur = PathBuf::from("/");
    let mut links = 0;
    while let Some(part) = todo.pop() {
        match part {
            Part::Root => cur = PathBuf::from("/"),
            Part::Up => {
                cur.pop();
            }
            Part::Name(n) => cur.push(n),
        }
        for store in [logical, physical] {
            let Ok(rest) = cur.strip_prefix(store) else {
                continue;
            };
            if rest.as_os_str().is_empty() {
                continue;
            }
            let mut out = PathBuf::from(sd.as_str()).join(rest);
            while let Some(part) = todo.pop() {
                match part {
                    Part::Root => return None,
                    Part::Up => {
                        out.pop();
                    }
                    Part::Name(n) => out.push(n),
                }
            }
            return Some(out.to_string_lossy().into_owned());
        }
        if cur
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
        {
            links += 1;
            if links > MAX_LINKS {
                return None;
            }
            let target = std::fs::read_link(&cur).ok()?;
            cur.pop();
            let mut next = parts_of(&target);
            next.reverse();
            todo.extend(next);
        }
    }
    None
}
