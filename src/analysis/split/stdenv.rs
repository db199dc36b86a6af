//! The split in nixpkgs' own terms: what stdenv's hooks already do once `outputs`
//! names more than `out`, so that the proposal writes only the rest.
//!
//! Facts of nixpkgs' `multiple-outputs.sh` (docs/nixpkgs-outputs.md has them in full):
//!
//! - The output variables, each the first of its candidates that is an output:
//!   `outputDev` dev, out; `outputBin` bin, out; `outputInclude` `$outputDev`;
//!   `outputLib` lib, out; `outputDoc` doc, out; `outputDevdoc` devdoc, else REMOVE;
//!   `outputMan` man, `$outputBin`; `outputDevman` devman, devdoc, `$outputMan`;
//!   `outputInfo` info, `$outputBin`. A package may set any of them.
//! - In the fixup phase, before `postFixup` runs (they are `preFixupHooks`):
//!   `_multioutDocs` moves `share/info`, `share/doc`, `share/gtk-doc`,
//!   `share/devhelp/books`, `share/man`, `share/man/man3` to those outputs; with more
//!   than `out`, `_multioutDevs` moves `include` to `outputInclude` and `lib/pkgconfig`,
//!   `share/pkgconfig`, `lib/cmake`, `share/aclocal` to `outputDev`, then sets each
//!   `.pc` file's `includedir=${prefix}…` to `includedir=$outputInclude…`.
//! - After `postFixup`, `_multioutPropagateDev` writes
//!   `$outputDev/nix-support/propagated-build-inputs` naming `propagatedBuildOutputs`
//!   (default: the outputs of `outputBin`, `outputInclude`, `outputLib` whose names do
//!   not contain `outputDev`'s).
//! - With more than `out`, configure flags (`--bindir`, `--includedir`, `--libdir`, …)
//!   and the cmake hook's `CMAKE_INSTALL_BINDIR`, `…INCLUDEDIR`, `…LIBDIR` point the
//!   install at those outputs: a build using them puts `bin` in `outputBin` and `lib`,
//!   `libexec`, `share/locale` in `outputLib` before the fixup phase; one that does not
//!   leaves them in `out`. Which one it is cannot be told from the files, so a file there
//!   is found at run time when the two differ.

use std::collections::BTreeMap;

use super::config::ConfigTexts;
use super::plan::{Leaf, Place, Plan, Tree};
use crate::evidence::PathEvidence;
use crate::report::{is_plain, EditAt, SplitAction, StdenvTerms};

/// The output variables of `multiple-outputs.sh`, resolved for a list of outputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vars {
    pub dev: String,
    pub bin: String,
    pub include: String,
    pub lib: String,
    pub doc: String,
    /// `None`: REMOVE.
    pub devdoc: Option<String>,
    pub man: String,
    pub devman: String,
    pub info: String,
}

impl Vars {
    /// The defaults for `outputs`, with `include` set by the package when given.
    pub fn new(outputs: &[String], include: Option<&str>) -> Vars {
        let has = |n: &str| outputs.iter().any(|o| o == n);
        let first = |c: &[&str]| {
            c.iter()
                .find(|n| has(n))
                .map(|n| n.to_string())
                .unwrap_or_else(|| "out".to_string())
        };
        let dev = first(&["dev"]);
        let bin = first(&["bin"]);
        let man = if has("man") {
            "man".into()
        } else {
            bin.clone()
        };
        let devdoc = has("devdoc").then(|| "devdoc".to_string());
        let devman = if has("devman") {
            "devman".into()
        } else {
            devdoc.clone().unwrap_or_else(|| man.clone())
        };
        Vars {
            include: include.map(str::to_string).unwrap_or_else(|| dev.clone()),
            lib: first(&["lib"]),
            doc: first(&["doc"]),
            info: if has("info") {
                "info".into()
            } else {
                bin.clone()
            },
            dev,
            bin,
            devdoc,
            man,
            devman,
        }
    }

    /// The moves stdenv makes before `postFixup`, in order: (directory, output or
    /// `None` for REMOVE). `_multioutDevs` only with more than `out`.
    pub fn moves(&self, outputs: &[String]) -> Vec<(&'static str, Option<String>)> {
        let mut v = vec![
            ("share/info", Some(self.info.clone())),
            ("share/doc", Some(self.doc.clone())),
            ("share/gtk-doc", self.devdoc.clone()),
            ("share/devhelp/books", self.devdoc.clone()),
            ("share/man", Some(self.man.clone())),
            ("share/man/man3", Some(self.devman.clone())),
        ];
        if outputs.len() > 1 {
            v.push(("include", Some(self.include.clone())));
            for d in [
                "lib/pkgconfig",
                "share/pkgconfig",
                "lib/cmake",
                "share/aclocal",
            ] {
                v.push((d, Some(self.dev.clone())));
            }
        }
        v
    }

    /// `propagatedBuildOutputs`' default: `outputBin`, `outputInclude`, `outputLib`,
    /// sorted, without names containing `outputDev`'s.
    pub fn propagated(&self) -> Vec<String> {
        let mut v = vec![self.bin.clone(), self.include.clone(), self.lib.clone()];
        v.sort();
        v.dedup();
        v.retain(|o| !o.contains(self.dev.as_str()));
        v
    }
}

/// Whether `path` is `dir` or below it.
fn under(path: &[u8], dir: &[u8]) -> bool {
    path.starts_with(dir) && (path.len() == dir.len() || path[dir.len()] == b'/')
}

/// The output the last of stdenv's `moves` that takes `path` puts it in (`Some(None)`:
/// removed); `None` when none takes it.
fn moved_by(moves: &[(&str, Option<String>)], path: &[u8]) -> Option<Option<String>> {
    moves
        .iter()
        .rev()
        .find(|(dir, _)| under(path, dir.as_bytes()))
        .map(|(_, to)| to.clone())
}

/// Where a path is when `postFixup` starts: the output stdenv's last move of a
/// directory holding it put it in (`None`: removed), else `out`, or `Search` where the
/// build's install directories decide (see the module doc).
fn at_post_fixup(path: &[u8], outputs: &[String], vars: &Vars) -> Option<EditAt> {
    match moved_by(&vars.moves(outputs), path) {
        Some(Some(o)) if o == "out" => Some(EditAt::Out),
        Some(Some(o)) => Some(EditAt::Output(o)),
        Some(None) => None,
        None => {
            let install = if ["bin", "sbin"].iter().any(|d| under(path, d.as_bytes())) {
                &vars.bin
            } else if ["lib", "libexec", "share/locale"]
                .iter()
                .any(|d| under(path, d.as_bytes()))
            {
                &vars.lib
            } else {
                "out"
            };
            Some(if install == "out" {
                EditAt::Out
            } else {
                EditAt::Search
            })
        }
    }
}

/// The split in stdenv's terms, for `actions` of plan `p`.
pub fn terms(
    ev: &PathEvidence,
    p: &Plan,
    actions: &[SplitAction],
    texts: &ConfigTexts,
) -> StdenvTerms {
    let outputs = &p.outputs;
    let tree = Tree::new(ev);
    let entries = &ev.entries;
    // Where each leaf ends up (None: deleted or a directory).
    let landing = |i: usize| match p.place[i] {
        Place::Output(o) => Some(o),
        _ => None,
    };
    let leaves_below = |dir: &[u8]| -> Vec<usize> {
        let Some(&d) = tree.by_path.get(dir) else {
            return Vec::new();
        };
        let mut v = Vec::new();
        let mut stack = vec![d];
        while let Some(x) = stack.pop() {
            if landing(x).is_some() {
                v.push(x);
            }
            stack.extend(tree.children[x].iter().copied());
        }
        v
    };
    let mut settings = Vec::new();
    // `include` wholly in one output other than the default: say so (the cmake hook and
    // the configure flags then install it there too).
    let default = Vars::new(outputs, None);
    let include_leaves = leaves_below(b"include");
    let mut include = None;
    if outputs.len() > 1 {
        let mut outs: Vec<usize> = include_leaves.iter().filter_map(|&i| landing(i)).collect();
        outs.sort();
        outs.dedup();
        if let [o] = outs[..] {
            if outputs[o] != default.include {
                include = Some(outputs[o].clone());
                settings.push(("outputInclude".to_string(), format!("\"{}\"", outputs[o])));
            }
        }
    }
    let vars = Vars::new(outputs, include.as_deref());
    let moves = vars.moves(outputs);

    // Moves stdenv makes: a plan move at or below a directory stdenv moves to the same
    // output, where stdenv's move is the last that touches it.
    let mut by_stdenv = vec![false; actions.len()];
    for (k, a) in actions.iter().enumerate() {
        by_stdenv[k] = match a {
            SplitAction::Move { path, to, .. } => {
                moved_by(&moves, path.as_bytes()) == Some(Some(to.clone()))
            }
            SplitAction::Rewrite {
                output,
                file,
                from,
                to,
                ..
            } => pkg_config_includedir(&tree, texts, output, file, from, to, &vars),
            _ => false,
        };
    }

    // What stdenv moves away from where the plan keeps it in `out`: moved back, by the
    // top-most paths below which everything stays in `out`.
    // Per entry: whether what lies below it stays in `out` (Some(None): some of it).
    let in_out = tree.uniform_below(entries.len(), |i| match p.place[i] {
        Place::Output(o) => Leaf::Is(Some(o == 0)),
        Place::Deleted => Leaf::Nothing,
        Place::Implicit => Leaf::Directory,
    });
    let mut back = Vec::new();
    for (dir, to) in &moves {
        if to.as_deref().is_some_and(|t| t != "out") {
            back.extend(back_to_out(&tree, &in_out, entries, dir.as_bytes()));
        }
    }
    back.sort();
    back.dedup();

    // Where the edited files are when postFixup starts.
    let mut edit_at = BTreeMap::new();
    for a in actions {
        let files: Vec<&String> = match a {
            SplitAction::Delete { path, .. } => vec![path],
            SplitAction::Move { path, .. } if !is_plain(path) => vec![path],
            SplitAction::RemoveReferences { files, .. } => files.iter().collect(),
            SplitAction::ShrinkRpath { files, .. } => files.iter().collect(),
            SplitAction::DropGpuArch { paths, .. } => paths.iter().collect(),
            _ => Vec::new(),
        };
        for f in files {
            match at_post_fixup(f.as_bytes(), outputs, &vars) {
                Some(EditAt::Out) | None => {}
                Some(at) => {
                    edit_at.insert(f.clone(), at);
                }
            }
        }
    }

    for b in &back {
        if let Some(at) = at_post_fixup(b.as_bytes(), outputs, &vars) {
            edit_at.insert(b.clone(), at);
        }
    }

    let mut notes = Vec::new();
    if outputs.len() > 1 {
        let done: Vec<String> = moves
            .iter()
            .filter(|(d, to)| {
                to.as_deref() != Some("out") && tree.by_path.contains_key(d.as_bytes())
            })
            .map(|(d, to)| format!("{d} to {}", to.as_deref().unwrap_or("nowhere (removed)")))
            .collect();
        if !done.is_empty() {
            notes.push(format!("stdenv moves {} before postFixup", done.join(", ")));
        }
        if by_stdenv
            .iter()
            .zip(actions)
            .any(|(s, a)| *s && matches!(a, SplitAction::Rewrite { .. }))
        {
            notes.push(format!(
                "stdenv sets includedir=${{prefix}} in .pc files to ${}",
                vars.include
            ));
        }
        let prop = vars.propagated();
        if prop.is_empty() {
            // Nothing to propagate: stdenv writes no file.
        } else if outputs.iter().any(|o| o == "dev") {
            notes.push(format!(
                "stdenv writes ${}/nix-support/propagated-build-inputs ({})",
                vars.dev,
                prop.join(" ")
            ));
        } else {
            // With no dev output the propagating output is `out`: its
            // propagated-build-inputs would name (and so keep at run time) what the
            // split takes out of it.
            settings.push(("propagatedBuildOutputs".to_string(), "[ ]".to_string()));
            notes.push(format!(
                "no dev output: stdenv would write $out/nix-support/propagated-build-inputs naming {}, a run-time reference from out",
                prop.join(" ")
            ));
        }
    }
    StdenvTerms {
        by_stdenv,
        settings,
        back_to_out: back,
        edit_at,
        notes,
    }
}

/// The top-most paths below `dir` whose every leaf stays in `out` (`dir` itself when
/// all of it does), from `in_out` ([`Tree::uniform_below`] of "stays in out").
fn back_to_out(
    tree: &Tree<'_>,
    in_out: &[Option<Option<bool>>],
    entries: &[crate::evidence::EntryFact],
    dir: &[u8],
) -> Vec<String> {
    let Some(&d) = tree.by_path.get(dir) else {
        return Vec::new();
    };
    let mut v = Vec::new();
    let mut stack = vec![d];
    while let Some(i) = stack.pop() {
        match in_out[i] {
            Some(Some(true)) => {
                v.push(String::from_utf8_lossy(entries[i].path.as_bytes()).into_owned())
            }
            Some(None) => stack.extend(tree.children[i].iter().copied()),
            _ => {}
        }
    }
    v
}

/// Whether a rewrite is the one `_multioutDevs` makes itself: in a `.pc` file of
/// `{lib,share}/pkgconfig` in `outputDev`, `${prefix}…` becoming `$outputInclude…`, and
/// every occurrence right after `includedir=` at the start of a line.
fn pkg_config_includedir(
    tree: &Tree<'_>,
    texts: &ConfigTexts,
    output: &str,
    file: &str,
    from: &str,
    to: &str,
    vars: &Vars,
) -> bool {
    let in_dir = ["lib/pkgconfig/", "share/pkgconfig/"].iter().any(|d| {
        file.strip_prefix(d)
            .is_some_and(|n| !n.contains('/') && n.ends_with(".pc"))
    });
    let Some(rest) = from.strip_prefix("${prefix}") else {
        return false;
    };
    if !in_dir || output != vars.dev || to != format!("${}{rest}", vars.include) {
        return false;
    }
    let Some(text) = tree
        .by_path
        .get(file.as_bytes())
        .and_then(|&f| texts.get(f))
    else {
        return false;
    };
    let text = String::from_utf8_lossy(&text);
    let all = text.matches(from).count();
    let patched = text
        .lines()
        .filter(|l| {
            l.strip_prefix("includedir=")
                .is_some_and(|v| v.starts_with(from))
        })
        .count();
    all > 0 && all == patched
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn variables_follow_the_candidates() {
        let v = Vars::new(&outs(&["out", "bin", "dev", "static"]), None);
        assert_eq!(
            (v.dev.as_str(), v.bin.as_str(), v.include.as_str()),
            ("dev", "bin", "dev")
        );
        assert_eq!(
            (v.lib.as_str(), v.doc.as_str(), v.man.as_str()),
            ("out", "out", "bin")
        );
        assert_eq!(
            (v.devdoc.clone(), v.devman.as_str(), v.info.as_str()),
            (None, "bin", "bin")
        );
        assert_eq!(v.propagated(), ["bin", "out"]);
        let v = Vars::new(&outs(&["out", "dev"]), Some("out"));
        assert_eq!(v.include, "out");
        assert_eq!(v.propagated(), ["out"]);
        let one = Vars::new(&outs(&["out"]), None);
        assert!(one
            .moves(&outs(&["out"]))
            .iter()
            .all(|(d, _)| d.starts_with("share/")));
    }

    #[test]
    fn files_under_install_directories_are_searched_when_they_may_differ() {
        let o = outs(&["out", "bin", "dev"]);
        let v = Vars::new(&o, None);
        assert_eq!(at_post_fixup(b"bin/tool", &o, &v), Some(EditAt::Search));
        assert_eq!(at_post_fixup(b"lib/libx.so", &o, &v), Some(EditAt::Out));
        assert_eq!(
            at_post_fixup(b"lib/cmake/x/y.cmake", &o, &v),
            Some(EditAt::Output("dev".into()))
        );
        assert_eq!(at_post_fixup(b"share/gtk-doc/a", &o, &v), None);
        assert_eq!(
            at_post_fixup(b"share/man/man1/x.1", &o, &v),
            Some(EditAt::Output("bin".into()))
        );
    }
}
