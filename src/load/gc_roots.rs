//! GC roots found the way Nix's garbage collector finds them, without running Nix, and
//! root lists in the format `nix-store --gc --print-roots` prints.
//!
//! Nix's collector (`findRoots` in its `gc.cc`) walks `<state>/gcroots` and
//! `<state>/profiles` (state: `/nix/var/nix`):
//! - a directory is walked (a symlink to a directory is not followed);
//! - a symlink whose target is inside the store directory is a root (its store path:
//!   the target's first component below the store directory);
//! - any other symlink is an *indirect* root (`auto/` holds them: `nix-build -o
//!   result` links `auto/<hash>` to `/home/u/result`): its target, if it exists and is
//!   itself a symlink into the store, is the root, and the link is that target
//!   (`/home/u/result`); a target that no longer exists is stale (Nix deletes stale
//!   links under `auto/`; this reader only counts them);
//! - a regular file whose name is a store path's base name is a root too.
//!
//! Under `--store-root DIR` every path is looked up inside `DIR` as if `DIR` were `/`
//! (a mounted image, a chroot store): absolute link targets are taken below `DIR`, `..`
//! stops at `DIR`, and a symlink met on the way is resolved the same way, so no
//! link leads outside `DIR`. Links are read (`readlink`), never opened.

use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::store::{StoreDir, StorePath};

/// One GC root: a link and the store path it keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcRoot {
    /// The link, as a logical path (`/nix/var/nix/gcroots/…`, `/home/u/result`), or
    /// what the user named it by.
    pub link: String,
    /// The store path's base name (`<hash>-<name>`).
    pub target: String,
}

/// What a walk of the GC root directories found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcRootScan {
    /// The roots, in the order found (directories in name order).
    pub roots: Vec<GcRoot>,
    /// Indirect roots whose target no longer exists.
    pub stale: u64,
    /// Links that lead neither into the store nor to a link into it (ignored, as Nix
    /// ignores them).
    pub ignored: u64,
    /// Directories or links that could not be read: the path and the error.
    pub unreadable: Vec<(String, String)>,
}

/// Directories with at least this many entries are walked on every core, in chunks
/// of this many entries.
const PARALLEL_FROM: usize = 4096;

/// How many symlinks one lookup may pass (Linux's limit).
const MAX_LINKS: usize = 40;

/// Walk `<state_dir>/gcroots` and `<state_dir>/profiles` (logical paths) of the
/// filesystem rooted at `root` (`/` for the live system).
pub fn find_roots(root: &Path, state_dir: &str, store_dir: &StoreDir) -> GcRootScan {
    let mut scan = GcRootScan::default();
    let mut walker = Walker {
        root,
        store_dir,
        dirs: HashMap::new(),
    };
    for dir in ["gcroots", "profiles"] {
        let logical = PathBuf::from(state_dir).join(dir);
        match walker.physical(&logical) {
            Some(phys) => walker.walk(&logical, &phys, &mut scan, 0),
            None => scan
                .unreadable
                .push((shown(&logical), "too many levels of symbolic links".into())),
        }
    }
    // A link met twice (`profiles/system` -> `system-400-link` names the link the walk
    // also finds itself) is one root, as Nix counts it.
    let mut seen = std::collections::HashSet::new();
    scan.roots
        .retain(|r| seen.insert((r.link.clone(), r.target.clone())));
    scan
}

struct Walker<'a> {
    root: &'a Path,
    store_dir: &'a StoreDir,
    /// Directories already resolved (the parents of indirect roots' links: a million
    /// `result` links in a few directories cost one resolution per directory).
    dirs: HashMap<PathBuf, Option<PathBuf>>,
}

impl Walker<'_> {
    /// [`Walker::physical`] of `logical`'s directory, remembered, joined with its name.
    fn physical_cached(&mut self, logical: &Path) -> Option<PathBuf> {
        let (Some(parent), Some(name)) = (logical.parent(), logical.file_name()) else {
            return self.physical(logical);
        };
        if let Some(p) = self.dirs.get(parent) {
            return p.as_ref().map(|p| p.join(name));
        }
        let p = self.physical(parent);
        self.dirs.insert(parent.to_path_buf(), p.clone());
        p.map(|p| p.join(name))
    }

    /// `logical`'s place on disk: below `root`, intermediate symlinks resolved inside
    /// `root`, the last component not followed. `None` when a symlink loop or too many
    /// links stand in the way.
    fn physical(&self, logical: &Path) -> Option<PathBuf> {
        if self.root == Path::new("/") {
            // The live system: the kernel resolves inside `/` exactly so.
            return Some(logical.to_path_buf());
        }
        let mut parts: Vec<PathBuf> = Vec::new();
        let mut todo: Vec<PathBuf> = components_rev(logical);
        let mut links = 0;
        while let Some(c) = todo.pop() {
            if c.as_os_str() == ".." {
                parts.pop();
                continue;
            }
            let last = todo.is_empty();
            let mut here = self.root.to_path_buf();
            here.extend(&parts);
            here.push(&c);
            if !last {
                if let Ok(m) = std::fs::symlink_metadata(&here) {
                    if m.file_type().is_symlink() {
                        links += 1;
                        if links > MAX_LINKS {
                            return None;
                        }
                        let t = std::fs::read_link(&here).ok()?;
                        if t.is_absolute() {
                            parts.clear();
                        }
                        todo.extend(components_rev(&t));
                        continue;
                    }
                }
            }
            parts.push(c);
        }
        let mut here = self.root.to_path_buf();
        here.extend(&parts);
        Some(here)
    }

    /// Walk `logical`, found on disk at `phys`.
    fn walk(&mut self, logical: &Path, phys: &Path, scan: &mut GcRootScan, depth: usize) {
        let meta = match std::fs::symlink_metadata(phys) {
            Ok(m) => m,
            Err(e) if depth == 0 && e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                scan.unreadable.push((shown(logical), e.to_string()));
                return;
            }
        };
        self.walk_typed(logical, phys, meta.file_type(), scan, depth);
    }

    /// Walk `logical`, found on disk at `phys`, of type `ft` (as `lstat` or the
    /// directory entry says).
    fn walk_typed(
        &mut self,
        logical: &Path,
        phys: &Path,
        ft: std::fs::FileType,
        scan: &mut GcRootScan,
        depth: usize,
    ) {
        if ft.is_dir() {
            if depth > 64 {
                scan.unreadable
                    .push((shown(logical), "directories nested too deep".into()));
                return;
            }
            let entries = match std::fs::read_dir(phys) {
                Ok(e) => e,
                Err(e) => {
                    scan.unreadable.push((shown(logical), e.to_string()));
                    return;
                }
            };
            // The entry's type from the directory itself where the filesystem gives it
            // (no `lstat` per root link).
            let mut names: Vec<(std::ffi::OsString, Option<std::fs::FileType>)> = entries
                .filter_map(|e| e.ok())
                .map(|e| {
                    let ft = e.file_type().ok();
                    (e.file_name(), ft)
                })
                .collect();
            names.sort_by(|a, b| a.0.cmp(&b.0));
            let one = |w: &mut Walker<'_>, name: &std::ffi::OsStr, ft, scan: &mut GcRootScan| {
                let (l, p) = (logical.join(name), phys.join(name));
                match ft {
                    Some(ft) => w.walk_typed(&l, &p, ft, scan, depth + 1),
                    None => w.walk(&l, &p, scan, depth + 1),
                }
            };
            if names.len() < PARALLEL_FROM {
                for (name, ft) in &names {
                    one(self, name, *ft, scan);
                }
                return;
            }
            // A directory of many links (`auto/`, a CI's roots): its entries on every
            // core, each worker with its own directory memo, merged in name order.
            use rayon::prelude::*;
            let (root, store_dir) = (self.root, self.store_dir);
            let parts: Vec<GcRootScan> = names
                .par_chunks(PARALLEL_FROM)
                .map_init(
                    || Walker {
                        root,
                        store_dir,
                        dirs: HashMap::new(),
                    },
                    |w, chunk| {
                        let mut part = GcRootScan::default();
                        for (name, ft) in chunk {
                            one(w, name, *ft, &mut part);
                        }
                        part
                    },
                )
                .collect();
            for part in parts {
                scan.roots.extend(part.roots);
                scan.stale += part.stale;
                scan.ignored += part.ignored;
                scan.unreadable.extend(part.unreadable);
            }
        } else if ft.is_symlink() {
            let target = match std::fs::read_link(phys) {
                Ok(t) => t,
                Err(e) => {
                    scan.unreadable.push((shown(logical), e.to_string()));
                    return;
                }
            };
            if let Some(base) = self.store_path(&target) {
                scan.roots.push(GcRoot {
                    link: shown(logical),
                    target: base,
                });
                return;
            }
            // An indirect root: the link it names must be a link into the store.
            let indirect = match target.is_absolute() {
                true => target,
                false => logical.parent().unwrap_or(Path::new("/")).join(target),
            };
            let indirect = normalise(&indirect);
            let Some(phys2) = self.physical_cached(&indirect) else {
                scan.stale += 1;
                return;
            };
            // `readlink` alone says all three cases: missing (stale), not a link
            // (EINVAL: ignored, as Nix ignores it), or a link to read.
            match std::fs::read_link(&phys2) {
                Ok(t2) => match self.store_path(&t2) {
                    Some(base) => scan.roots.push(GcRoot {
                        link: shown(&indirect),
                        target: base,
                    }),
                    None => scan.ignored += 1,
                },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => scan.stale += 1,
                Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => scan.ignored += 1,
                Err(e) if e.raw_os_error() == Some(20) => scan.stale += 1, // ENOTDIR
                Err(e) => scan.unreadable.push((shown(&indirect), e.to_string())),
            }
        } else if ft.is_file() {
            let name = logical.file_name().unwrap_or_default();
            match name
                .to_str()
                .filter(|n| StorePath::check_base_name(n).is_ok())
            {
                Some(n) => scan.roots.push(GcRoot {
                    link: shown(logical),
                    target: n.to_string(),
                }),
                None => scan.ignored += 1,
            }
        } else {
            scan.ignored += 1;
        }
    }

    /// The base name of the store path `target` lies in, if it is in the store.
    fn store_path(&self, target: &Path) -> Option<String> {
        let rest = target
            .as_os_str()
            .as_bytes()
            .strip_prefix(self.store_dir.as_str().as_bytes())?
            .strip_prefix(b"/")?;
        let base = rest.split(|&b| b == b'/').next()?;
        let base = std::str::from_utf8(base).ok()?;
        StorePath::check_base_name(base).ok()?;
        Some(base.to_string())
    }
}

/// A path's normal components, last first (for a stack), `..` kept.
fn components_rev(p: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(PathBuf::from(n)),
            Component::ParentDir => Some(PathBuf::from("..")),
            _ => None,
        })
        .collect();
    v.reverse();
    v
}

/// `p` with `.` and `..` resolved by name (`..` stops at `/`).
fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

/// A path for messages and reports (lossy where it is not UTF-8).
fn shown(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Why a line of a root list could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct RootListError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Roots listed one a line: `LINK -> STOREPATH` (what `nix-store --gc --print-roots`
/// prints; `{censored}` and `{temp:…}` links are kept as written) or a bare store path
/// (its own link). Blank lines and `#` comments are skipped.
pub fn parse_root_list(text: &[u8], store_dir: &StoreDir) -> Result<Vec<GcRoot>, RootListError> {
    let mut roots = Vec::new();
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        let line = String::from_utf8_lossy(line);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (link, path) = match line.rsplit_once(" -> ") {
            Some((l, p)) => (l.trim(), p.trim()),
            None => (line, line),
        };
        let err = |message: String| RootListError {
            line: i + 1,
            message,
        };
        let (p, _) = store_dir
            .split_path(path)
            .or_else(|_| StorePath::from_base_name(path).map(|p| (p, "")))
            .map_err(|e| err(e.to_string()))?;
        roots.push(GcRoot {
            link: link.to_string(),
            target: format!("{}-{}", p.hash_part(), p.name()),
        });
    }
    Ok(roots)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    const P: &str = "/nix/store/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-app";
    const Q: &str = "/nix/store/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-lib";

    #[test]
    fn direct_indirect_stale_and_escaping_links() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let gc = r.join("nix/var/nix/gcroots");
        std::fs::create_dir_all(gc.join("auto")).unwrap();
        std::fs::create_dir_all(r.join("nix/var/nix/profiles")).unwrap();
        std::fs::create_dir_all(r.join("home/u")).unwrap();
        symlink(P, gc.join("direct")).unwrap();
        symlink(format!("{Q}/bin/x"), gc.join("sub")).unwrap();
        symlink("/home/u/result", gc.join("auto/h1")).unwrap();
        symlink(Q, r.join("home/u/result")).unwrap();
        symlink("/home/u/gone", gc.join("auto/h2")).unwrap();
        // Out of DIR by `..`: clamped at DIR, so it names DIR/etc/x, which is absent.
        symlink("../../../../../../../etc/x", gc.join("auto/h3")).unwrap();
        symlink("/nix/var/nix/profiles", gc.join("profiles")).unwrap();
        symlink(P, r.join("nix/var/nix/profiles/system-1-link")).unwrap();
        let scan = find_roots(r, "/nix/var/nix", &StoreDir::default());
        let got: Vec<(&str, &str)> = scan
            .roots
            .iter()
            .map(|g| (g.link.as_str(), &g.target[..32]))
            .collect();
        assert_eq!(
            got,
            vec![
                ("/home/u/result", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"),
                (
                    "/nix/var/nix/gcroots/direct",
                    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                ),
                (
                    "/nix/var/nix/gcroots/sub",
                    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
                ),
                (
                    "/nix/var/nix/profiles/system-1-link",
                    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                ),
            ]
        );
        assert_eq!(scan.stale, 2);
        assert_eq!(scan.ignored, 1, "the profiles directory link");
    }

    #[test]
    fn a_large_directory_walked_on_every_core_says_what_one_core_says() {
        // More entries than PARALLEL_FROM, of every kind, in one `auto/`: the roots come
        // out in name order with the counts of a sequential walk.
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let auto = r.join("nix/var/nix/gcroots/auto");
        std::fs::create_dir_all(&auto).unwrap();
        std::fs::create_dir_all(r.join("home/u")).unwrap();
        std::fs::write(r.join("home/u/file"), "").unwrap();
        let n = PARALLEL_FROM * 2 + 17;
        let mut want = Vec::new();
        let (mut stale, mut ignored) = (0, 0);
        for i in 0..n {
            let name = format!("h{i:05}");
            match i % 4 {
                0 => {
                    symlink(P, auto.join(&name)).unwrap();
                    want.push(format!("/nix/var/nix/gcroots/auto/{name}"));
                }
                1 => {
                    symlink(format!("/home/u/r{i}"), auto.join(&name)).unwrap();
                    symlink(Q, r.join(format!("home/u/r{i}"))).unwrap();
                    want.push(format!("/home/u/r{i}"));
                }
                2 => {
                    symlink(format!("/home/u/gone{i}"), auto.join(&name)).unwrap();
                    stale += 1;
                }
                _ => {
                    symlink("/home/u/file", auto.join(&name)).unwrap();
                    ignored += 1;
                }
            }
        }
        let scan = find_roots(r, "/nix/var/nix", &StoreDir::default());
        let got: Vec<&str> = scan.roots.iter().map(|g| g.link.as_str()).collect();
        assert_eq!(got, want);
        assert_eq!((scan.stale, scan.ignored), (stale, ignored));
        assert!(scan.unreadable.is_empty());
    }

    #[test]
    fn a_link_loop_is_reported_not_followed_forever() {
        let d = tempfile::tempdir().unwrap();
        let gc = d.path().join("nix/var/nix/gcroots");
        std::fs::create_dir_all(&gc).unwrap();
        symlink("/loop/x", gc.join("l")).unwrap();
        symlink("/loop", d.path().join("loop")).unwrap();
        let scan = find_roots(d.path(), "/nix/var/nix", &StoreDir::default());
        assert!(scan.roots.is_empty());
        assert_eq!(scan.stale, 1);
    }

    #[test]
    fn print_roots_lines_and_bare_paths() {
        let text = format!("/home/u/result -> {P}\n\n# c\n{Q}\n{{censored}} -> {Q}\n");
        let r = parse_root_list(text.as_bytes(), &StoreDir::default()).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].link, "/home/u/result");
        assert_eq!(r[1].link, Q);
        assert_eq!(r[2].link, "{censored}");
        let e = parse_root_list(b"x -> /etc/passwd\n", &StoreDir::default()).unwrap_err();
        assert_eq!(e.line, 1);
    }
}
