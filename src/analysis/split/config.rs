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
//! [`Rewrite`] of that literal text to `$OUTPUT/SUB`, OUTPUT being where SUB went. SUB
//! is read as each syntax writes it (pkg-config's `$$`, CMake's `\${` and `\;`) and may
//! hold `'`, `$`, `:` or `,` when the package has an entry of that name; the new text
//! writes it the same way (see [`Syntax`]). The
//! plan's sizes and references are then updated from the rewritten text itself (every
//! rewrite applied to the file's bytes in order, as `substituteInPlace` does).
//!
//! Cost: O(bytes of the files read).

use std::collections::{BTreeMap, HashMap};

use super::plan::{nar_size_of, Place, Plan, Tree};
use crate::classify::EntryType;
use crate::evidence::PathEvidence;
use crate::report::{Because, BecauseDetail, BecauseKind};

/// Files larger than this are not read (a build-configuration file is a few KiB): the
/// scan keeps no larger text.
const MAX_CONFIG_BYTES: u64 = crate::scan::MAX_CONFIG_TEXT;

/// One literal replacement in a file of the split package, after the moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The entry (index into the evidence's entries).
    pub file: usize,
    /// The output holding the file after the moves.
    pub output: usize,
    /// The literal text replaced (every occurrence).
    pub from: String,
    /// The output the new text names, and the path inside it (`SUB`, decoded).
    pub to_output: usize,
    pub to_sub: String,
    /// The text following the output's path in the new text: `/SUB` as the file's
    /// syntax writes it.
    pub to_rest: String,
    pub because: Because,
}

/// Whether `path` is a file this module reads (the scan keeps the texts of these).
pub fn is_config_file(path: &[u8]) -> bool {
    crate::scan::is_config_file(path)
}

/// The contents of the package's build-configuration files, kept by the scan before
/// the analysis (from a directory tree and a NAR alike): entry → bytes.
#[derive(Debug, Clone, Default)]
pub struct ConfigTexts(pub HashMap<usize, Vec<u8>>);

impl ConfigTexts {
    /// The contents of entry `f`, if kept.
    pub fn get(&self, f: usize) -> Option<Vec<u8>> {
        self.0.get(&f).cloned()
    }
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

/// How a configuration file writes the literal path after `${VAR}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Syntax {
    /// CMake: `\` escapes the next character (`\${`, `\;`, `\"`, `\\`); an unescaped
    /// `${`, `$<` or `$NAME{` starts a reference, an unescaped `;` ends a list item.
    CMake,
    /// freedesktop pkg-config: `$$` is one `$`; `${` starts a variable.
    PkgConfig,
    /// pkgconf (Debian's `pkg-config`): a `$` is itself unless `${` starts a
    /// variable; nothing escapes that.
    PkgConf,
}

/// The syntaxes a `.pc` file may be written for: the one whose reading names an entry
/// of the package is the one its author used.
const PC_SYNTAXES: &[Syntax] = &[Syntax::PkgConfig, Syntax::PkgConf];

impl Syntax {
    /// `sub` written in this syntax, so that the file reads it back as `sub`; `None`
    /// when it cannot be (`${` for pkgconf).
    fn encode(self, sub: &str) -> Option<String> {
        let mut o = String::with_capacity(sub.len() + 1);
        for c in sub.chars() {
            match (self, c) {
                (Syntax::PkgConfig, '$') => o.push_str("$$"),
                (Syntax::CMake, '\\' | '"' | ';' | '$') => {
                    o.push('\\');
                    o.push(c);
                }
                (Syntax::CMake, '\n') => o.push_str("\\n"),
                (Syntax::CMake, '\t') => o.push_str("\\t"),
                (Syntax::CMake, '\r') => o.push_str("\\r"),
                (Syntax::PkgConf, '{') if o.ends_with('$') => return None,
                (_, c) => o.push(c),
            }
        }
        Some(o)
    }
}

/// Characters where a path after `${VAR}` may end, unless the package has an entry
/// whose name goes on (`foo'x`, `foo$out`): quotes, separators, references.
const SOFT_ENDS: &str = "';)$<>,:=";

/// Paths this module follows are at most this long (PATH_MAX).
const MAX_PATH_TEXT: usize = 4096;

/// How many of a path's longest readings are looked up (with the shortest, the work
/// per `${VAR}` stays linear in its text).
const MAX_READINGS: usize = 64;

/// A path read after `${VAR}`: the length of its text, the path inside the output it
/// names, and the text to write after an output's path to name it (`None`: it cannot
/// be written in the file's syntax).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Read {
    len: usize,
    sub: String,
    to_rest: Option<String>,
}

/// The ways to read the text after `${VAR}` as a path: the path it names if read to
/// its end (decoded), and where it may end, longest first: (length in the text, length
/// of the decoded path).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Readings {
    path: String,
    ends: Vec<(usize, usize)>,
}

/// The readings of `tail` (the text after `${VAR}`): it ends at the first whitespace,
/// control character, `"` or (by `syntax`) reference or list separator, and may end
/// before any of [`SOFT_ENDS`]. The last end is the shortest, at the first character
/// that may end a path. No ends when `tail` does not start with `/`.
fn readings(syntax: Syntax, tail: &str) -> Readings {
    let mut r = Readings {
        path: String::new(),
        ends: Vec::new(),
    };
    if !tail.starts_with('/') {
        return r;
    }
    let mut it = tail.char_indices().peekable();
    let end = loop {
        let Some((i, c)) = it.next() else {
            break tail.len();
        };
        let next = it.peek().map(|&(_, n)| n);
        if c.is_whitespace() || c.is_control() || c == '"' || i >= MAX_PATH_TEXT {
            break i;
        }
        if c == '$' && next == Some('{') {
            break i;
        }
        let literal = match (syntax, c) {
            (Syntax::CMake, ';') => break i,
            (Syntax::CMake, '$') if is_cmake_reference(&tail[i + 1..]) => break i,
            (Syntax::CMake, '\\') => match it.next() {
                Some((_, 'n')) => '\n',
                Some((_, 't')) => '\t',
                Some((_, 'r')) => '\r',
                Some((_, n)) => n,
                None => break i,
            },
            (Syntax::PkgConfig, '$') if next == Some('$') => {
                it.next();
                '$'
            }
            (_, c) => c,
        };
        if SOFT_ENDS.contains(literal) {
            r.ends.push((i, r.path.len()));
        }
        r.path.push(literal);
    };
    r.ends.push((end, r.path.len()));
    r.ends.reverse();
    r
}

/// Whether the text after an unescaped `$` makes it a CMake reference: `$<…>` or
/// `$NAME{…}` (`$ENV{X}`, `$CACHE{X}`).
fn is_cmake_reference(after: &str) -> bool {
    if after.starts_with('<') {
        return true;
    }
    let name = after
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(after.len());
    name > 0 && after[name..].starts_with('{')
}

impl Ctx<'_> {
    /// The reading of `tail` that names an entry of the package from `base` in one of
    /// `syntaxes`, the longest (among the [`MAX_READINGS`] longest); else the shortest
    /// (as if every character of [`SOFT_ENDS`] ended the path), which names nothing to
    /// rewrite unless it is an entry. `None` when it leaves the output.
    fn read_path(&self, syntaxes: &[Syntax], base: &str, tail: &str) -> Option<Read> {
        let all: Vec<(Syntax, Readings)> =
            syntaxes.iter().map(|&s| (s, readings(s, tail))).collect();
        // (length in the text, syntax, length of the decoded path), longest first.
        let mut ends: Vec<(usize, usize, usize)> = all
            .iter()
            .enumerate()
            .flat_map(|(k, (_, r))| r.ends.iter().map(move |&(len, p)| (len, k, p)))
            .collect();
        ends.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let read = |&(len, k, p): &(usize, usize, usize)| -> Option<Read> {
            let (syntax, r) = &all[k];
            let path = &r.path[..p];
            let sub = Ctx::join(base, path)?;
            // The text as the file wrote it where it is the path itself; else written
            // anew (`..` followed, or the variable's own path in front).
            let to_rest = if base.is_empty() && path.strip_prefix('/') == Some(sub.as_str()) {
                Some(tail[..len].to_string())
            } else {
                syntax.encode(&sub).map(|e| format!("/{e}"))
            };
            Some(Read { len, sub, to_rest })
        };
        let Some(shortest) = ends.iter().min_by_key(|e| (e.0, e.1)) else {
            // No path follows: the variable's own.
            let to_rest = syntaxes
                .first()
                .and_then(|s| s.encode(base))
                .map(|e| format!("/{e}"));
            return Some(Read {
                len: 0,
                sub: base.to_string(),
                to_rest,
            });
        };
        ends.iter()
            .take(MAX_READINGS)
            .filter_map(read)
            .find(|r| self.tree.by_path.contains_key(r.sub.as_bytes()))
            .or_else(|| read(shortest))
    }

    /// The rewrite `from` needs, when `loc` (where `from` resolves) does not hold what
    /// it names.
    /// `to_rest` is how the file writes `/SUB` after an output's path.
    fn check(
        &self,
        from: &str,
        at: usize,
        loc: &Loc,
        to_rest: Option<&str>,
        kind: BecauseKind,
    ) -> Option<Rewrite> {
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
            to_sub: loc.sub.clone(),
            to_rest: to_rest?.to_string(),
            because: Because {
                file: file.into_owned(),
                offset: Some(at as u64),
                kind,
                rule: "split/config-path".to_string(),
                detail: BecauseDetail::MovedAway {
                    from: from.to_string(),
                    sub: loc.sub.clone(),
                    output: self.plan.outputs[loc.output].clone(),
                    now_in: self.plan.outputs[to].clone(),
                },
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

/// Whether the character after `before` is escaped: `before` ends in an odd number of
/// `escape` characters (`\\\${` in CMake, `$$${` in pkg-config are references).
fn escaped(before: &str, escape: char) -> bool {
    before.chars().rev().take_while(|&c| c == escape).count() % 2 == 1
}

/// Every `${name}` in `text` with the text after it: (start, name, tail).
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
        if !name.contains("${") {
            v.push((start, name, &text[after..]));
        }
        at = after;
    }
    v
}

fn cmake(ctx: &Ctx<'_>, text: &str, dir: &str) -> Vec<Rewrite> {
    let mut v = Vec::new();
    for (start, name, tail) in uses(text) {
        // An escaped `\${` is text, not a reference.
        if escaped(&text[..start], '\\') {
            continue;
        }
        let base = match name {
            "_IMPORT_PREFIX" | "PACKAGE_PREFIX_DIR" => "",
            "CMAKE_CURRENT_LIST_DIR" => dir,
            _ => continue,
        };
        let Some(read) = ctx.read_path(&[Syntax::CMake], base, tail) else {
            continue;
        };
        let from = &text[start..start + name.len() + 3 + read.len];
        let loc = Loc {
            output: ctx.output,
            sub: read.sub,
        };
        let to_rest = read.to_rest.as_deref();
        v.extend(ctx.check(from, start, &loc, to_rest, BecauseKind::CmakeConfig));
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
        for (start, name, tail) in uses(line) {
            // `$${` is a `$` followed by text.
            if escaped(&line[..start], '$') {
                continue;
            }
            let Some(loc) = vars.get(name) else { continue };
            let Some(read) = ctx.read_path(PC_SYNTAXES, &loc.sub, tail) else {
                continue;
            };
            let len = name.len() + 3 + read.len;
            let at = Loc {
                output: loc.output,
                sub: read.sub,
            };
            match ctx.check(
                &line[start..start + len],
                line_at + start,
                &at,
                read.to_rest.as_deref(),
                BecauseKind::PkgConfig,
            ) {
                Some(r) => {
                    let moved = Loc {
                        output: r.to_output,
                        sub: r.to_sub.clone(),
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
            let raw = tail.trim_start_matches('/');
            let sub = if raw.contains("$$") && !ctx.tree.by_path.contains_key(raw.as_bytes()) {
                raw.replace("$$", "$")
            } else {
                raw.to_string()
            };
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
    fn uses_give_the_text_after_each_variable() {
        let t = r#"IMPORTED_LOCATION "${_IMPORT_PREFIX}/lib/libx.so.1" ${A}x ${B}/y;z"#;
        let u = uses(t);
        assert_eq!(u.len(), 3);
        assert_eq!(
            (u[0].1, u[0].2),
            ("_IMPORT_PREFIX", "/lib/libx.so.1\" ${A}x ${B}/y;z")
        );
        assert_eq!((u[1].1, u[1].2), ("A", "x ${B}/y;z"));
        assert_eq!((u[2].1, u[2].2), ("B", "/y;z"));
    }

    /// The ends of each reading, longest first, with the path read to that end.
    fn read(syntax: Syntax, tail: &str) -> Vec<(&str, String)> {
        let r = readings(syntax, tail);
        r.ends
            .iter()
            .map(|&(len, p)| (&tail[..len], r.path[..p].to_string()))
            .collect()
    }

    /// issue 31, item 9: a path goes on past `'`, `$` (not `${`) and an escaped `\${`,
    /// read as each syntax writes it; the shortest reading is the old one.
    #[test]
    fn quoted_names_are_read_past_the_quote_and_dollar() {
        assert_eq!(
            read(Syntax::CMake, "/lib/libfoo'x.a\" next"),
            [
                ("/lib/libfoo'x.a", "/lib/libfoo'x.a".to_string()),
                ("/lib/libfoo", "/lib/libfoo".to_string())
            ]
        );
        let cmake = read(Syntax::CMake, r"/lib/libfoo\${x}.a;${_IMPORT_PREFIX}/b");
        assert_eq!(
            cmake[0],
            (r"/lib/libfoo\${x}.a", "/lib/libfoo${x}.a".to_string())
        );
        assert_eq!(read(Syntax::CMake, "/a$<TARGET:x>")[0].0, "/a");
        assert_eq!(read(Syntax::CMake, "/a$ENV{X}")[0].0, "/a");
        assert_eq!(read(Syntax::CMake, "/a$out")[0].1, "/a$out");
        let pc = read(Syntax::PkgConfig, "/include/foo$${x}\n");
        assert_eq!(pc[0], ("/include/foo$${x}", "/include/foo${x}".to_string()));
        let pc = read(Syntax::PkgConf, "/include/foo$$out ${x}");
        assert_eq!(
            pc[0],
            ("/include/foo$$out", "/include/foo$$out".to_string())
        );
        assert_eq!(read(Syntax::PkgConf, "/a${x}"), [("/a", "/a".to_string())]);
        assert!(read(Syntax::PkgConf, "x/a").is_empty());
    }

    /// What a rewrite writes reads back as the path in the same syntax.
    #[test]
    fn encoded_paths_read_back_as_themselves() {
        let cmake_only = "a;b\\c\"d";
        for name in ["foo'x", "foo$out", "foo${x}", "foo`x", cmake_only] {
            let path = format!("/include/{name}");
            for syntax in [Syntax::CMake, Syntax::PkgConfig] {
                if name == cmake_only && syntax != Syntax::CMake {
                    continue;
                }
                let text = format!("/{}", syntax.encode(&path[1..]).unwrap());
                assert_eq!(read(syntax, &text)[0], (text.as_str(), path.clone()));
            }
        }
        assert_eq!(
            Syntax::PkgConf.encode("foo$out").as_deref(),
            Some("foo$out")
        );
        assert_eq!(Syntax::PkgConf.encode("foo${x}"), None);
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
