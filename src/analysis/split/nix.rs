//! The Nix code of a split, rendered from its actions in nixpkgs' own terms: a function
//! of the package and every store path the actions name, returning an `overrideAttrs`
//! with `outputs` and a `postFixup` of `rm`, `remove-references-to -t`,
//! `patchelf --set-rpath` and `moveToOutput` lines, each commented with its evidence.
//!
//! Everything interpolated into the indented string is escaped (`''` and `${`), paths
//! are single-quoted for the shell, and comments are reduced to printable text.

use std::collections::BTreeMap;

use crate::report::{Because, SplitAction, SplitFor};
use crate::store::{format_size, parse_package_name, StoreDir, StorePath};

/// Nix identifiers for store paths: the package name, made unique.
struct Names {
    by_path: BTreeMap<String, String>,
    sd: StoreDir,
}

impl Names {
    fn new(sd: &StoreDir) -> Names {
        Names {
            by_path: BTreeMap::new(),
            sd: sd.clone(),
        }
    }

    fn ident(&mut self, full: &str) -> String {
        if let Some(n) = self.by_path.get(full) {
            return n.clone();
        }
        let base = self
            .sd
            .parse_path(full)
            .map(|p| parse_package_name(p.name()).pname.to_string())
            .unwrap_or_else(|_| "dep".to_string());
        let mut id: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if !id.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            id.insert(0, '_');
        }
        if is_keyword(&id) {
            id.push('_');
        }
        let mut unique = id.clone();
        let mut n = 2;
        while self.by_path.values().any(|v| *v == unique) {
            unique = format!("{id}_{n}");
            n += 1;
        }
        self.by_path.insert(full.to_string(), unique.clone());
        unique
    }
}

fn is_keyword(s: &str) -> bool {
    matches!(
        s,
        "if" | "then" | "else" | "assert" | "with" | "let" | "in" | "rec" | "inherit" | "or"
    )
}

/// Escape text for a Nix indented string (`''…''`).
fn indented(s: &str) -> String {
    s.replace("''", "'''").replace("${", "''${")
}

/// Single-quote for the shell.
fn sh(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// One comment line: printable, clipped, store paths shortened to their names.
fn comment(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if out.chars().count() > 140 {
        out = out.chars().take(139).collect::<String>() + "…";
    }
    indented(&out)
}

fn evidence_line(b: &Because) -> String {
    match b.offset {
        Some(off) => format!("{} {}@{}: {}", b.kind, b.file, off, b.detail),
        None => format!(
            "class {} (rule {}): {} file(s), e.g. {}",
            b.kind, b.rule, b.count, b.file
        ),
    }
}

/// A RUNPATH as one double-quoted shell word: store paths become `${ident}` (the
/// package itself `$out`), everything else is escaped for the shell and for Nix.
fn kept_word(kept: &str, sd: &StoreDir, pkg: &StorePath, names: &mut Names) -> String {
    let esc = |t: &str| {
        let mut o = String::new();
        for c in t.chars() {
            if matches!(c, '"' | '\\' | '`' | '$') {
                o.push('\\');
            }
            o.push(c);
        }
        indented(&o)
    };
    let me = sd.display(pkg);
    let prefix = format!("{}/", sd.as_str());
    let mut out = String::from("\"");
    for (i, dir) in kept.split(':').enumerate() {
        if i > 0 {
            out.push(':');
        }
        let Some(tail) = dir.strip_prefix(&prefix) else {
            out.push_str(&esc(dir));
            continue;
        };
        let end = tail.find('/').unwrap_or(tail.len());
        let full = &dir[..prefix.len() + end];
        let rest = &dir[prefix.len() + end..];
        if full == me {
            out.push_str("$out");
        } else if sd.parse_path(full).is_ok() {
            out.push_str(&format!("${{{}}}", names.ident(full)));
        } else {
            out.push_str(&esc(full));
        }
        out.push_str(&esc(rest));
    }
    out.push('"');
    out
}

/// The Nix code for `actions` on package `pkg` with these outputs.
pub fn render(
    sd: &StoreDir,
    pkg: &StorePath,
    outputs: &[String],
    actions: &[SplitAction],
    for_root: &Option<SplitFor>,
) -> String {
    let mut names = Names::new(sd);
    let me = names.ident(&sd.display(pkg));
    let mut body = Vec::new();
    let push_because = |body: &mut Vec<String>, because: &[Because]| {
        for b in because.iter().take(3) {
            body.push(format!("    # {}", comment(&evidence_line(b))));
        }
        if because.len() > 3 {
            body.push(format!("    # … and {} more", because.len() - 3));
        }
    };
    for a in actions {
        match a {
            SplitAction::Delete { path, because } => {
                push_because(&mut body, because);
                body.push(format!("    rm -r \"$out\"/{}", indented(&sh(path))));
            }
            SplitAction::RemoveReferences {
                target,
                files,
                because,
            } => {
                push_because(&mut body, because);
                let t = names.ident(target);
                let fs: Vec<String> = files
                    .iter()
                    .map(|f| format!("\"$out\"/{}", indented(&sh(f))))
                    .collect();
                body.push(format!(
                    "    remove-references-to -t ${{{t}}} {}",
                    fs.join(" ")
                ));
            }
            SplitAction::ShrinkRpath {
                files,
                drop,
                kept,
                because,
            } => {
                push_because(&mut body, because);
                body.push(format!(
                    "    # drops {} (not patchelf --shrink-rpath: it would drop dlopen directories too)",
                    comment(&drop.join(":"))
                ));
                let kept = kept_word(kept, sd, pkg, &mut names);
                for f in files {
                    body.push(format!(
                        "    patchelf --set-rpath {kept} \"$out\"/{}",
                        indented(&sh(f))
                    ));
                }
            }
            SplitAction::Move { path, to, because } => {
                push_because(&mut body, because);
                body.push(format!(
                    "    moveToOutput {} \"${to}\"",
                    indented(&sh(path))
                ));
            }
            SplitAction::DropGpuArch {
                arch,
                paths,
                because,
            } => {
                push_because(&mut body, because);
                body.push(format!(
                    "    # {arch}: rm, or rebuild with fewer gpuTargets"
                ));
                for p in paths {
                    body.push(format!("    rm -r \"$out\"/{}", indented(&sh(p))));
                }
            }
        }
    }
    let mut args: Vec<String> = names.by_path.values().cloned().collect();
    args.sort();
    args.retain(|a| *a != me);
    args.insert(0, me.clone());
    let mut s = String::new();
    s.push_str(&format!("# nixcut split: {}\n", comment(pkg.name())));
    if let Some(f) = for_root {
        let root = sd
            .parse_path(&f.root)
            .map(|p| p.name().to_string())
            .unwrap_or_default();
        s.push_str(&format!(
            "# closure of {}: {} -> {} (predicted)\n",
            comment(&root),
            format_size(f.closure_size_before),
            format_size(f.closure_size_after)
        ));
    }
    s.push_str(&format!("{{ {} }}:\n", args.join(", ")));
    s.push_str(&format!("{me}.overrideAttrs (old: {{\n"));
    let outs: Vec<String> = outputs.iter().map(|o| format!("\"{o}\"")).collect();
    s.push_str(&format!("  outputs = [ {} ];\n", outs.join(" ")));
    s.push_str("  postFixup = (old.postFixup or \"\") + ''\n");
    for line in body {
        s.push_str(&line);
        s.push('\n');
    }
    s.push_str("  '';\n})\n");
    s
}
