//! Build-configuration integrity of a split: after the moves, every path a CMake or
//! pkg-config file names must resolve where that file lands.
//!
//! - CMake files compute their prefix from their own location: `${_IMPORT_PREFIX}` and
//!   `${PACKAGE_PREFIX_DIR}` are the top of the output holding the file (a move keeps
//!   the path relative to the output), `${CMAKE_CURRENT_LIST_DIR}` its directory.
//! - pkg-config files: `name=value` lines are expanded in order (`${pcfiledir}` is the
//!   file's directory); a value naming the package itself (`prefix=/nix/store/…-pkg`)
//!   stands for the output its sub-path lands on.
//!
//! Each `${VAR}/SUB` whose SUB is not in the output it resolves to becomes a
//! [`Rewrite`] of that literal text to `$OUTPUT/SUB`, OUTPUT being where SUB went. The
//! plan's sizes and references are then updated from the rewritten text itself (every
//! rewrite applied to the file's bytes in order, as `substituteInPlace` does).
//!
//! Cost: O(bytes of the files read).

use std::collections::{BTreeMap, HashMap};

use super::plan::{nar_size_of, Place, Plan, Tree};
use crate::classify::EntryType;
use crate::evidence::PathEvidence;
use crate::report::Because;

/// Files larger than this are not read (a build-configuration file is a few KiB).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// One literal replacement in a file of the split package, after the moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The entry (index into the evidence's entries).
    pub file: usize,
    /// The output holding the file after the moves.
    pub output: usize,
    /// The literal text replaced (every occurrence).
    pub from: String,
    /// The output the new text names, and the path inside it (`/SUB`).
    pub to_output: usize,
    pub to_rest: String,
    pub because: Because,
}

/// Whether `path` is a file this module reads.
pub fn is_config_file(path: &[u8]) -> bool {
    path.ends_with(b".cmake") || path.ends_with(b".pc")
}

/// The rewrites a plan needs, given the contents of the package's configuration files
/// (`read` returns `None` when a file cannot be read).
pub fn rewrites(
    ev: &PathEvidence,
    me: &str,
    plan: &Plan,
    read: &dyn Fn(usize) -> Option<Vec<u8>>,
) -> Vec<Rewrite> {
    let tree = Tree::new(ev);
    let mut v = Vec::new();
    for (f, e) in ev.entries.iter().enumerate() {
        let Place::Output(fo) = plan.place[f] else {
            continue;
        };
        if !matches!(e.entry, EntryType::Regular | EntryType::Executable)
            || e.size > MAX_CONFIG_BYTES
            || !is_config_file(e.path.as_bytes())
        {
            continue;
        }
        let Some(bytes) = read(f) else { continue };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let path = e.path.as_bytes();
        let dir = std::str::from_utf8(e.path.parent()).unwrap_or("");
        let ctx = Ctx {
            ev,
            me,
            plan,
            tree: &tree,
            file: f,
            output: fo,
        };
        let found = if path.ends_with(b".pc") {
            pkg_config(&ctx, &text, dir)
        } else {
            cmake(&ctx, &text, dir)
        };
        // One rewrite per literal text, longest first (a shorter text may be a prefix of
        // a longer one; replacing the longer first leaves the shorter's own uses).
        let mut seen: BTreeMap<String, Rewrite> = BTreeMap::new();
        for r in found {
            seen.entry(r.from.clone()).or_insert(r);
        }
        let mut mine: Vec<Rewrite> = seen.into_values().collect();
        mine.sort_by(|a, b| b.from.len().cmp(&a.from.len()).then(a.from.cmp(&b.from)));
        v.extend(mine);
    }
    v
}

struct Ctx<'a> {
    ev: &'a PathEvidence,
    /// The package's full store path.
    me: &'a str,
    plan: &'a Plan,
    tree: &'a Tree<'a>,
    file: usize,
    output: usize,
}

/// A value that names a place in the split package: an output and a path inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Loc {
    output: usize,
    sub: String,
}

impl Ctx<'_> {
    /// The rewrite `from` needs, when `loc` (where `from` resolves) does not hold what
    /// it names.
    fn check(&self, from: &str, at: usize, loc: &Loc, kind: &str) -> Option<Rewrite> {
        if loc.sub.is_empty() {
            return None;
        }
        let &i = self.tree.by_path.get(loc.sub.as_bytes())?;
        if self.plan.holds[i].contains(&loc.output) {
            return None;
        }
        let (to, _) = self.plan.land(self.tree, loc.sub.as_bytes());
        if to == loc.output || self.plan.place[i] == Place::Deleted {
            return None;
        }
        let file = String::from_utf8_lossy(self.ev.entries[self.file].path.as_bytes());
        Some(Rewrite {
            file: self.file,
            output: self.output,
            from: from.to_string(),
            to_output: to,
            to_rest: format!("/{}", loc.sub),
            because: Because {
                file: file.into_owned(),
                offset: Some(at as u64),
                kind: kind.to_string(),
                rule: "split/config-path".to_string(),
                detail: format!(
                    "{from} resolves to {} of {}, but that is in {} after the moves",
                    loc.sub, self.plan.outputs[loc.output], self.plan.outputs[to]
                ),
                count: 1,
            },
        })
    }

    /// `base` joined with `rest` (which may hold `..` and `.`), normalised; `None` when
    /// it leaves the output.
    fn join(base: &str, rest: &str) -> Option<String> {
        let mut parts: Vec<&str> = base.split('/').filter(|s| !s.is_empty()).collect();
        for p in rest.split('/') {
            match p {
                "" | "." => {}
                ".." => {
                    parts.pop()?;
                }
                p => parts.push(p),
            }
        }
        Some(parts.join("/"))
    }
}

/// Bytes that may be part of a path right after `${VAR}` (not a quote, separator,
/// space, parenthesis or the start of another variable).
fn path_end(s: &str) -> usize {
    s.find(|c: char| c.is_whitespace() || "\"';)$<>,:=".contains(c))
        .unwrap_or(s.len())
}

/// Every `${name}` in `text` with the path that follows it: (start, name, rest);
/// `rest` is empty or begins with `/`.
fn uses(text: &str) -> Vec<(usize, &str, &str)> {
    let mut v = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find("${") {
        let start = at + i;
        let Some(close) = text[start + 2..].find('}') else {
            break;
        };
        let name = &text[start + 2..start + 2 + close];
        let after = start + 2 + close + 1;
        let tail = &text[after..];
        if !name.contains("${") {
            let rest = if tail.starts_with('/') {
                &tail[..path_end(tail)]
            } else {
                ""
            };
            v.push((start, name, rest));
        }
        at = after;
    }
    v
}

fn cmake(ctx: &Ctx<'_>, text: &str, dir: &str) -> Vec<Rewrite> {
    let mut v = Vec::new();
    for (start, name, rest) in uses(text) {
        let base = match name {
            "_IMPORT_PREFIX" | "PACKAGE_PREFIX_DIR" => "",
            "CMAKE_CURRENT_LIST_DIR" => dir,
            _ => continue,
        };
        let Some(sub) = Ctx::join(base, rest) else {
            continue;
        };
        let from = &text[start..start + name.len() + 3 + rest.len()];
        let loc = Loc {
            output: ctx.output,
            sub,
        };
        v.extend(ctx.check(from, start, &loc, "cmake-config"));
    }
    v
}

fn pkg_config(ctx: &Ctx<'_>, text: &str, dir: &str) -> Vec<Rewrite> {
    let me = ctx.me;
    let mut vars: HashMap<&str, Loc> = HashMap::new();
    vars.insert(
        "pcfiledir",
        Loc {
            output: ctx.output,
            sub: dir.to_string(),
        },
    );
    let mut v = Vec::new();
    for line in text.lines() {
        let line_at = line.as_ptr() as usize - text.as_ptr() as usize;
        let def = line.split_once('=').filter(|(n, _)| {
            !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        });
        // Where each use in this line resolves once this line's rewrites are applied.
        let mut resolved: Vec<(usize, usize, Loc)> = Vec::new();
        for (start, name, rest) in uses(line) {
            let Some(loc) = vars.get(name) else { continue };
            let Some(sub) = Ctx::join(&loc.sub, rest) else {
                continue;
            };
            let len = name.len() + 3 + rest.len();
            let at = Loc {
                output: loc.output,
                sub,
            };
            match ctx.check(
                &line[start..start + len],
                line_at + start,
                &at,
                "pkg-config",
            ) {
                Some(r) => {
                    let moved = Loc {
                        output: r.to_output,
                        sub: r.to_rest[1..].to_string(),
                    };
                    resolved.push((start, len, moved));
                    v.push(r);
                }
                None => resolved.push((start, len, at)),
            }
        }
        let Some((name, value)) = def else { continue };
        let off = name.len() + 1;
        let value = value.trim_end();
        let loc = if let Some(tail) = value
            .strip_prefix(me)
            .filter(|t| t.is_empty() || t.starts_with('/'))
        {
            // The package's own path: where its sub-path lands (a multi-output build
            // writes that output's path).
            let sub = tail.trim_start_matches('/').to_string();
            let output = if sub.is_empty() {
                0
            } else {
                ctx.plan.land(ctx.tree, sub.as_bytes()).0
            };
            Some(Loc { output, sub })
        } else {
            resolved
                .into_iter()
                .find(|(start, len, _)| *start == off && *len == value.len())
                .map(|(_, _, l)| l)
        };
        match loc {
            Some(l) => vars.insert(name, l),
            None => vars.remove(name),
        };
    }
    v
}

/// Apply the rewrites to the plan: each rewritten file's new size (from its bytes with
/// every rewrite of it applied in order) and the references the new text adds.
/// `output_path(o)` is output `o`'s store path as the build names it.
pub fn apply(
    plan: &mut Plan,
    ev: &PathEvidence,
    rewrites: &[Rewrite],
    read: &dyn Fn(usize) -> Option<Vec<u8>>,
    output_path: &dyn Fn(usize) -> String,
) {
    let mut by_file: BTreeMap<usize, Vec<&Rewrite>> = BTreeMap::new();
    for r in rewrites {
        by_file.entry(r.file).or_default().push(r);
    }
    for (f, rs) in by_file {
        let Some(bytes) = read(f) else { continue };
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        for r in rs {
            let n = text.matches(r.from.as_str()).count() as u64;
            let to = format!("{}{}", output_path(r.to_output), r.to_rest);
            text = text.replace(r.from.as_str(), &to);
            *plan.references[r.output]
                .entry((ev.path.clone(), Some(r.to_output)))
                .or_default() += n;
            if r.output != r.to_output {
                plan.edges
                    .entry((r.output, r.to_output))
                    .or_default()
                    .insert(f);
            }
        }
        plan.resize(f, text.len() as u64);
    }
}

/// What stdenv's `_multioutPropagateDev` writes when the outputs include `dev`:
/// `$dev/nix-support/propagated-build-inputs` naming the outputs of `$outputBin` and
/// `$outputLib` (`bin`/`lib` when split off, else `out`), so that a build given only
/// `dev` gets them too. The plan gains that file (size, one reference per output named);
/// returns the outputs named.
pub fn propagate_dev(
    plan: &mut Plan,
    ev: &PathEvidence,
    output_path: &dyn Fn(usize) -> String,
) -> Vec<usize> {
    let pos = |n: &str| plan.outputs.iter().position(|o| o == n);
    let Some(dev) = pos("dev") else {
        return Vec::new();
    };
    let mut named: Vec<usize> = [pos("bin").unwrap_or(0), pos("lib").unwrap_or(0)].to_vec();
    // `sort -u` by name, then `grep -v -F "dev"`.
    named.sort_by(|a, b| plan.outputs[*a].cmp(&plan.outputs[*b]));
    named.dedup();
    named.retain(|o| !plan.outputs[*o].contains("dev"));
    if named.is_empty() {
        return named;
    }
    let text: String = named
        .iter()
        .map(|o| format!(" {}", output_path(*o)))
        .collect();
    let tree = Tree::new(ev);
    let file = tree
        .by_path
        .get(&b"nix-support/propagated-build-inputs"[..])
        .copied();
    match file {
        Some(f) if plan.holds[f].contains(&dev) => {
            let len = plan.entry_sizes[f] + text.len() as u64;
            plan.resize(f, len);
        }
        _ => {
            let has_dir = tree
                .by_path
                .get(&b"nix-support"[..])
                .is_some_and(|&d| plan.holds[d].contains(&dev));
            let root = (&b""[..], EntryType::Directory, 0);
            let mut added = vec![root];
            if !has_dir {
                added.push((&b"nix-support"[..], EntryType::Directory, 0));
            }
            added.push((
                &b"nix-support/propagated-build-inputs"[..],
                EntryType::Regular,
                text.len() as u64,
            ));
            let grow = nar_size_of(added.into_iter()) - nar_size_of(std::iter::once(root));
            plan.sizes[dev] += grow;
            plan.files[dev] += 1;
        }
    }
    for &o in &named {
        *plan.references[dev]
            .entry((ev.path.clone(), Some(o)))
            .or_default() += 1;
    }
    named
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uses_stop_at_the_first_byte_that_ends_a_path() {
        let t = r#"IMPORTED_LOCATION "${_IMPORT_PREFIX}/lib/libx.so.1" ${A}x ${B}/y;z"#;
        let u = uses(t);
        assert_eq!(u.len(), 3);
        assert_eq!((u[0].1, u[0].2), ("_IMPORT_PREFIX", "/lib/libx.so.1"));
        assert_eq!((u[1].1, u[1].2), ("A", ""));
        assert_eq!((u[2].1, u[2].2), ("B", "/y"));
    }

    #[test]
    fn joins_stay_inside_the_output() {
        assert_eq!(
            Ctx::join("lib/cmake/x", "/../../../include").as_deref(),
            Some("include")
        );
        assert_eq!(Ctx::join("lib", "/../../etc"), None);
        assert_eq!(Ctx::join("", "/./lib//a").as_deref(), Some("lib/a"));
    }
}
