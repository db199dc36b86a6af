//! Nix code, written from the facts of `crate::report::nix` (their `Display` impls):
//!
//! - [`SplitNix`]: the code of a split, in nixpkgs' own terms: a function of the package
//!   and every store path the actions name, returning an `overrideAttrs` with `outputs`
//!   and a `postFixup` of `rm`, `remove-references-to -t`, `patchelf --set-rpath` and
//!   `moveToOutput` lines, each commented with its evidence.
//! - [`GpuRebuild`]: the one `override { gpuTargets = [ … ]; }` (or nixpkgs
//!   `config.cudaCapabilities`) that `gpu` and `split` remedies propose.
//! - [`DataDirJoin`]: the `symlinkJoin` a moved data directory's variable points at.
//!
//! Everything interpolated into the indented string is escaped (`''` and `${`), paths
//! are single-quoted for the shell, and comments are reduced to printable text. The
//! analyses fill the contract's strings with these, so every format shows the same code.

use std::collections::BTreeMap;
use std::fmt;

use crate::report::{
    is_plain, Because, DataDirJoin, EditAt, GpuRebuild, NixCode, SplitAction, SplitAttributes,
    SplitCode, SplitFor, SplitNix, SplitReport,
};
use crate::store::{format_size, parse_package_name, StoreDir, StorePath};

/// A Nix string literal.
fn nix_string(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                o.push('\\');
                o.push(c);
            }
            '$' => o.push_str("\\$"),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// Nix string literals separated by spaces, as a list's items.
fn nix_list(items: &[String]) -> String {
    items
        .iter()
        .map(|t| nix_string(t))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `ATTR.override { gpuTargets = [ … ]; }`, or nixpkgs imported with
/// `config.cudaCapabilities`.
impl fmt::Display for GpuRebuild {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuRebuild::GpuTargets { attribute, targets } => write!(
                f,
                "{attribute}.override {{ gpuTargets = [ {} ]; }}",
                nix_list(targets)
            ),
            GpuRebuild::CudaCapabilities { capabilities } => write!(
                f,
                "import <nixpkgs> {{ config = {{ cudaSupport = true; cudaCapabilities = [ {} ]; }}; }}",
                nix_list(capabilities)
            ),
        }
    }
}

/// The code, or the code as read back.
impl<T: fmt::Display> fmt::Display for NixCode<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NixCode::Facts(t) => t.fmt(f),
            NixCode::Read(code) => f.write_str(code),
        }
    }
}

/// JSON carries the code.
impl<T: fmt::Display> serde::Serialize for NixCode<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// `${symlinkJoin { name = "…"; paths = [ "${pkg}/DIR" "${pkg.OUTPUT}/DIR" ]; }}`.
impl fmt::Display for DataDirJoin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let DataDirJoin {
            package: p,
            output: o,
            directory: d,
        } = self;
        write!(
            f,
            "${{symlinkJoin {{ name = \"{p}-{o}-library\"; paths = [ \"${{{p}}}/{d}\" \"${{{p}.{o}}}/{d}\" ]; }}}}"
        )
    }
}

/// A split report's Nix code (its JSON `nix`): the `overrideAttrs` written from its
/// facts, the code as read back, or nothing (`no_split`).
pub(crate) fn split_code(r: &SplitReport) -> String {
    match (&r.code, r.split_nix()) {
        (_, Some(code)) => code.to_string(),
        (SplitCode::Read { nix, .. }, None) => nix.clone(),
        (_, None) => String::new(),
    }
}

/// A split report's attributes for the package's own `mkDerivation` (its JSON
/// `attributes`; see [`split_code`]).
pub(crate) fn split_attributes(r: &SplitReport) -> String {
    match (&r.code, r.split_nix()) {
        (_, Some(code)) => SplitAttributes(code).to_string(),
        (SplitCode::Read { attributes, .. }, None) => attributes.clone(),
        (_, None) => String::new(),
    }
}

/// The split's `overrideAttrs`.
impl fmt::Display for SplitNix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&render(self))
    }
}

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

/// Escape literal text for a Nix indented string (`''…''`): `${` becomes `''${`, and a
/// `'` that another `'` or such an escape follows becomes `${"'"}`, so that no `''` (an
/// escape or the end of the string) forms from the text, whatever it holds.
fn indented(s: &str) -> String {
    let c: Vec<char> = s.chars().collect();
    let mut o = String::with_capacity(s.len());
    for (i, &ch) in c.iter().enumerate() {
        let next = c.get(i + 1).copied();
        let dollar_brace = |j: usize| c.get(j) == Some(&'$') && c.get(j + 1) == Some(&'{');
        match ch {
            '$' if next == Some('{') => o.push_str("''$"),
            '\'' if next == Some('\'') || dollar_brace(i + 1) => o.push_str("${\"'\"}"),
            ch => o.push(ch),
        }
    }
    o
}

/// A character no generated line may hold raw: controls (C0, DEL, C1), line and
/// paragraph separators, and the invisible format characters that reorder or hide text
/// (bidi overrides and isolates, zero-width characters, the byte-order mark).
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{061c}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

/// Quote for the shell (bash): `'…'`, or `$'…'` with `\xHH` escapes when the text holds
/// a character [`is_hidden`] keeps out of generated lines.
fn sh(s: &str) -> String {
    if !s.chars().any(is_hidden) {
        return format!("'{}'", s.replace('\'', "'\\''"));
    }
    let mut o = String::from("$'");
    for ch in s.chars() {
        match ch {
            '\'' | '\\' => {
                o.push('\\');
                o.push(ch);
            }
            ch if is_hidden(ch) => {
                let mut buf = [0u8; 4];
                for b in ch.encode_utf8(&mut buf).bytes() {
                    o.push_str(&format!("\\x{b:02x}"));
                }
            }
            ch => o.push(ch),
        }
    }
    o.push('\'');
    o
}

/// Whether `path` is the glob the plan writes for a GPU output's files in one
/// directory (`lib/rocblas/library/*gfx90a*` moving to `gfx90a`): a plain directory and
/// `*<output>*`. `moveToOutput` is meant to expand it; a quoted `mv` would look for a
/// file named `*gfx90a*`.
fn is_output_glob(path: &str, to: &str) -> bool {
    let (dir, last) = path.rsplit_once('/').unwrap_or(("", path));
    is_plain(to)
        && (dir.is_empty() || is_plain(dir))
        && last.strip_prefix('*').and_then(|l| l.strip_suffix('*')) == Some(to)
}

/// One comment line: printable, clipped (the escaping is the caller's).
pub(super) fn comment(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if is_hidden(c) { ' ' } else { c })
        .collect();
    if out.chars().count() > 140 {
        out = out.chars().take(139).collect::<String>() + "…";
    }
    out
}

/// A word for the shell naming a path in an output: `to` is `$OUTPUT` followed by the
/// rest (`$out/lib/libx.so`), the rest single-quoted; any other text (`${VAR}/…`) is
/// single-quoted whole.
fn output_word(to: &str) -> String {
    let Some(v) = to.strip_prefix('$') else {
        return sh(to);
    };
    let end = v
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(v.len());
    let (name, rest) = v.split_at(end);
    if name.is_empty() {
        sh(to)
    } else if rest.is_empty() {
        format!("\"${name}\"")
    } else {
        format!("\"${name}\"{}", sh(rest))
    }
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

/// One line of the indented string: literal shell text (escaped when rendered) and Nix
/// interpolations (`${ident}`, written as they are).
#[derive(Default)]
struct Line(Vec<(bool, String)>);

impl Line {
    fn lit(mut self, s: &str) -> Line {
        match self.0.last_mut() {
            Some((false, t)) => t.push_str(s),
            _ => self.0.push((false, s.to_string())),
        }
        self
    }

    fn raw(mut self, s: &str) -> Line {
        self.0.push((true, s.to_string()));
        self
    }

    fn render(&self) -> String {
        let mut o = String::new();
        for (raw, t) in &self.0 {
            if *raw {
                o.push_str(t);
            } else {
                o.push_str(&indented(t));
            }
        }
        o
    }
}

/// `s` as a POSIX extended regular expression matching itself.
fn ere(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        if ".[]()*+?{}|^$\\".contains(c) {
            o.push('\\');
        }
        o.push(c);
    }
    o
}

/// A RUNPATH entry to drop as the build will see it, as a `grep -x` pattern (one shell
/// word): the package's own path is `$out` (a fixed string, `true`), another
/// package's store path matches by the name it carries with any hash (an extended
/// regular expression, `false`: the build's inputs differ from the scanned ones), so
/// the code names no package by a guessed attribute.
fn drop_pattern(dir: &str, sd: &StoreDir, pkg: &StorePath) -> (bool, String) {
    let me = sd.display(pkg);
    if let Some(rest) = dir
        .strip_prefix(&me)
        .filter(|r| r.is_empty() || r.starts_with('/'))
    {
        return (true, output_word(&format!("$out{rest}")));
    }
    let prefix = format!("{}/", sd.as_str());
    if let Some(tail) = dir.strip_prefix(&prefix) {
        let end = tail.find('/').unwrap_or(tail.len());
        if sd.parse_path(&dir[..prefix.len() + end]).is_ok() && end > 33 {
            // `<32-character hash>-<name>`: keep the name, any hash.
            let named = &tail[33..];
            return (
                false,
                sh(&format!("{}[0-9a-z]{{32}}-{}", ere(&prefix), ere(named))),
            );
        }
    }
    (true, sh(dir))
}

/// The shell lines moving `path` to `$to`: `moveToOutput` for a plain path (it looks
/// in every output); otherwise a quoted `mv` from `from` (a shell word naming the path
/// where it is), creating the target's parent and removing parents left empty as
/// `moveToOutput` does, since `moveToOutput` would split or glob the name.
fn move_lines(path: &str, to: &str, from: &str) -> Vec<Line> {
    let dst = format!("\"${to}\"");
    if is_plain(path) || is_output_glob(path, to) {
        return vec![Line::default().lit(&format!("    moveToOutput {} {dst}", sh(path)))];
    }
    let parent = path.rsplit_once('/').map(|(p, _)| p);
    let mut v = Vec::new();
    if let Some(p) = parent {
        v.push(Line::default().lit(&format!("    mkdir -p {dst}/{}", sh(p))));
    }
    v.push(Line::default().lit(&format!("    mv {from} {dst}/{}", sh(path))));
    if parent.is_some() {
        v.push(Line::default().lit(&format!(
            "    rmdir -p --ignore-fail-on-non-empty \"$(dirname {from})\" 2>/dev/null || true"
        )));
    }
    v
}

/// The shell word naming `path` where it is when `postFixup` starts (stdenv's hooks
/// moved it, or the build's install directories decide: found by `nixcutFind`).
fn file_word(code: &SplitNix<'_>, path: &str) -> String {
    match code.stdenv.edit_at.get(path) {
        Some(EditAt::Output(o)) => format!("\"${o}\"/{}", sh(path)),
        Some(EditAt::Search) => format!("\"$(nixcutFind {})\"", sh(path)),
        Some(EditAt::Out) | None => format!("\"$out\"/{}", sh(path)),
    }
}

/// The shell function that finds a path in whichever output holds it.
const FIND_FUNCTION: &str = "    nixcutFind() { for o in $(getAllOutputNames); do if [ -e \"${!o}/$1\" ] || [ -L \"${!o}/$1\" ]; then echo \"${!o}/$1\"; return; fi; done; echo \"$out/$1\"; }";

/// Up to three evidence comments for an action, and how many more there are.
fn because_lines(body: &mut Vec<Line>, because: &[Because]) {
    for b in because.iter().take(3) {
        body.push(comment_line(&evidence_line(b)));
    }
    if because.len() > 3 {
        body.push(comment_line(&format!("… and {} more", because.len() - 3)));
    }
}

/// `    # TEXT`, printable and clipped.
fn comment_line(s: &str) -> Line {
    Line::default().lit(&format!("    # {}", comment(s)))
}

/// The lines that set a RUNPATH without the entries `drop`, for each of `files`.
fn rpath_lines(body: &mut Vec<Line>, code: &SplitNix<'_>, files: &[String], drop: &[String]) {
    body.push(comment_line(&format!(
        "drops {} (not patchelf --shrink-rpath: it would drop dlopen directories too)",
        drop.join(":")
    )));
    let (fixed, named): (Vec<_>, Vec<_>) = drop
        .iter()
        .map(|d| drop_pattern(d, code.store_dir, code.package))
        .partition(|p| p.0);
    let mut filters = String::new();
    for (flag, list) in [("-F", fixed), ("-E", named)] {
        if !list.is_empty() {
            let es: Vec<String> = list.iter().map(|p| format!("-e {}", p.1)).collect();
            filters.push_str(&format!(" | grep -v -x {flag} {}", es.join(" ")));
        }
    }
    for f in files {
        let file = file_word(code, f);
        body.push(Line::default().lit(&format!(
            "    rpath=$(patchelf --print-rpath {file} | tr ':' '\\n'{filters} | paste -s -d ':' || true)"
        )));
        body.push(Line::default().lit(&format!("    patchelf --set-rpath \"$rpath\" {file}")));
    }
}

/// The commented shell lines of one action; `names` gets the identifiers of the store
/// paths it names.
fn action_lines(body: &mut Vec<Line>, names: &mut Names, code: &SplitNix<'_>, a: &SplitAction) {
    match a {
        SplitAction::Delete { path, because } => {
            // A deleted path is a file or a symlink (the one holding the evidence).
            because_lines(body, because);
            body.push(Line::default().lit(&format!("    rm {}", file_word(code, path))));
        }
        SplitAction::RemoveReferences {
            target,
            files,
            because,
        } => {
            because_lines(body, because);
            let t = names.ident(target);
            let fs: Vec<String> = files.iter().map(|f| file_word(code, f)).collect();
            body.push(
                Line::default()
                    .lit("    remove-references-to -t ")
                    .raw(&format!("${{{t}}}"))
                    .lit(&format!(" {}", fs.join(" "))),
            );
        }
        SplitAction::ShrinkRpath {
            files,
            drop,
            because,
            ..
        } => {
            because_lines(body, because);
            rpath_lines(body, code, files, drop);
        }
        SplitAction::Move { path, to, because } => {
            because_lines(body, because);
            body.extend(move_lines(path, to, &file_word(code, path)));
        }
        SplitAction::Rewrite {
            output,
            file,
            from,
            to,
            because,
        } => {
            because_lines(body, because);
            // Quiet: a build that used the hook's install directories already names
            // the right output, and the text is not there.
            body.push(Line::default().lit(&format!(
                "    substituteInPlace \"${output}\"/{} --replace-quiet {} {}",
                sh(file),
                output_word(from),
                output_word(to)
            )));
        }
        SplitAction::DropGpuArch {
            arch,
            paths,
            because,
        } => {
            because_lines(body, because);
            body.push(comment_line(&format!(
                "{arch}: rm, or rebuild with fewer gpuTargets"
            )));
            for p in paths {
                body.push(Line::default().lit(&format!("    rm -r {}", file_word(code, p))));
            }
        }
    }
}

/// The header comments: the package, and the consumer's closure before and after.
fn header(s: &mut String, sd: &StoreDir, pkg: &StorePath, for_root: Option<&SplitFor>) {
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
}

/// The split as attributes of the package's derivation: what the overlay's
/// `overrideAttrs` returns, and what a change to the package's expression adds to its
/// `mkDerivation` attribute set (`crate::render::expr`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitAttrs {
    /// The package's identifier (the overlay's first argument).
    pub package: String,
    /// The other function arguments the code names (store paths by package name, then
    /// `removeReferencesTo`), sorted.
    pub args: Vec<String>,
    /// `outputs = [ … ];`, `out` first.
    pub outputs: Vec<String>,
    /// Further attributes, name and Nix value as written (`outputInclude`, `"out"`).
    pub settings: Vec<(String, String)>,
    /// What `nativeBuildInputs` gains (`removeReferencesTo`).
    pub native_build_inputs: Vec<String>,
    /// Comment lines (without `#`) explaining what stdenv does by itself.
    pub notes: Vec<String>,
    /// The `postFixup` lines as they appear inside the indented string (escaped,
    /// indented by four spaces, evidence comments included). Empty: no `postFixup`.
    pub post_fixup: Vec<String>,
    /// The package's `gpuTargets` argument to build with (an `override`, not an
    /// attribute of the derivation), empty: as it is.
    pub gpu_targets: Vec<String>,
}

/// Whether the other architectures of `code` are left to a rebuild with fewer
/// `gpuTargets` (AMD targets: rocmPackages take the argument) rather than removed.
fn rebuilds_gpu_targets(code: &SplitNix<'_>) -> bool {
    !code.gpu_targets.is_empty()
        && code.gpu_targets.iter().all(|t| t.starts_with("gfx"))
        && code
            .actions
            .iter()
            .any(|a| matches!(a, SplitAction::DropGpuArch { .. }))
}

/// The attributes of a split (see [`SplitAttrs`]).
pub fn split_attrs(code: &SplitNix<'_>) -> SplitAttrs {
    let (sd, pkg, outputs) = (code.store_dir, code.package, code.outputs);
    let mut names = Names::new(sd);
    let me = names.ident(&sd.display(pkg));
    let mut body: Vec<Line> = Vec::new();
    if code.stdenv.edit_at.values().any(|a| *a == EditAt::Search) {
        body.push(comment_line(
            "the output holding a path: the build's install directories (bin, lib) decide",
        ));
        body.push(Line::default().lit(FIND_FUNCTION));
    }
    let rebuild = rebuilds_gpu_targets(code);
    let written = |k: usize| {
        let by_stdenv = code.stdenv.by_stdenv.get(k).copied().unwrap_or(false);
        let by_rebuild = rebuild && matches!(code.actions[k], SplitAction::DropGpuArch { .. });
        !by_stdenv && !by_rebuild
    };
    // The edits (on the files where stdenv left them), the paths stdenv took out of
    // `out` moved back, then the moves and rewrites.
    let is_edit =
        |a: &SplitAction| !matches!(a, SplitAction::Move { .. } | SplitAction::Rewrite { .. });
    for edits in [true, false] {
        for (k, a) in code.actions.iter().enumerate() {
            if is_edit(a) == edits && written(k) {
                action_lines(&mut body, &mut names, code, a);
            }
        }
        if edits {
            back_lines(&mut body, code);
        }
    }
    let uses_remove_references = code
        .actions
        .iter()
        .enumerate()
        .any(|(k, a)| written(k) && matches!(a, SplitAction::RemoveReferences { .. }));
    let mut args: Vec<String> = names.by_path.values().cloned().collect();
    args.sort();
    args.retain(|a| *a != me);
    let mut native_build_inputs = Vec::new();
    if uses_remove_references {
        args.push("removeReferencesTo".to_string());
        native_build_inputs.push("removeReferencesTo".to_string());
    }
    let mut notes = code.stdenv.notes.clone();
    if rebuild {
        notes.push(format!(
            "built for {} only: the package's argument, set by its user ({})",
            code.gpu_targets.join(" "),
            GpuRebuild::GpuTargets {
                attribute: me.clone(),
                targets: code.gpu_targets.to_vec(),
            }
        ));
    }
    SplitAttrs {
        package: me,
        args,
        outputs: outputs.to_vec(),
        settings: code.stdenv.settings.clone(),
        native_build_inputs,
        notes,
        post_fixup: body.iter().map(Line::render).collect(),
        gpu_targets: if rebuild {
            code.gpu_targets.to_vec()
        } else {
            Vec::new()
        },
    }
}

/// The moves that put back into `out` what stdenv's hooks moved away from it.
fn back_lines(body: &mut Vec<Line>, code: &SplitNix<'_>) {
    if code.stdenv.back_to_out.is_empty() {
        return;
    }
    body.push(comment_line(
        "stdenv moved these out of $out; nothing here is only for building",
    ));
    for p in &code.stdenv.back_to_out {
        body.extend(move_lines(p, "out", &file_word(code, p)));
    }
}

/// The Nix code for the actions of a split: an overlay-style function of the package
/// returning its `overrideAttrs`.
fn render(code: &SplitNix<'_>) -> String {
    let a = split_attrs(code);
    let mut s = String::new();
    header(&mut s, code.store_dir, code.package, code.for_root);
    let mut args = vec![a.package.clone()];
    args.extend(a.args.iter().cloned());
    s.push_str(&format!("{{ {} }}:\n", args.join(", ")));
    let base = if a.gpu_targets.is_empty() {
        a.package.clone()
    } else {
        for d in code.actions.iter() {
            if let SplitAction::DropGpuArch { arch, paths, .. } = d {
                s.push_str(&format!(
                    "# not built for {}: {} path(s), e.g. {}\n",
                    comment(arch),
                    paths.len(),
                    comment(paths.first().map(String::as_str).unwrap_or(""))
                ));
            }
        }
        let o = GpuRebuild::GpuTargets {
            attribute: a.package.clone(),
            targets: a.gpu_targets.clone(),
        }
        .to_string();
        if a.outputs.len() == 1 && a.post_fixup.is_empty() && a.settings.is_empty() {
            s.push_str(&o);
            s.push('\n');
            return s;
        }
        format!("({o})")
    };
    s.push_str(&format!("{base}.overrideAttrs (old: {{\n"));
    let outs: Vec<String> = a.outputs.iter().map(|o| format!("\"{o}\"")).collect();
    s.push_str(&format!("  outputs = [ {} ];\n", outs.join(" ")));
    for (name, value) in &a.settings {
        s.push_str(&format!("  {name} = {value};\n"));
    }
    if !a.native_build_inputs.is_empty() {
        s.push_str(&format!(
            "  nativeBuildInputs = (old.nativeBuildInputs or [ ]) ++ [ {} ];\n",
            a.native_build_inputs.join(" ")
        ));
    }
    for n in &a.notes {
        s.push_str(&format!("  # {}\n", comment(n)));
    }
    if !a.post_fixup.is_empty() {
        s.push_str("  postFixup = (old.postFixup or \"\") + ''\n");
        for line in &a.post_fixup {
            s.push_str(line);
            s.push('\n');
        }
        s.push_str("  '';\n");
    }
    s.push_str("})\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(path: &str, to: &str) -> String {
        move_lines(path, to, &format!("\"$out\"/{}", sh(path)))
            .iter()
            .map(|l| l.0.iter().map(|(_, t)| t.as_str()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// `gpu` and `split` remedies share one override text; values are Nix strings.
    #[test]
    fn one_override_text_for_every_remedy() {
        let amd = GpuRebuild::GpuTargets {
            attribute: "rocmPackages.rocblas".into(),
            targets: vec!["gfx1030".into(), "gfx90a".into()],
        };
        assert_eq!(
            amd.to_string(),
            "rocmPackages.rocblas.override { gpuTargets = [ \"gfx1030\" \"gfx90a\" ]; }"
        );
        let cuda = GpuRebuild::CudaCapabilities {
            capabilities: vec!["8.6".into()],
        };
        assert_eq!(
            cuda.to_string(),
            "import <nixpkgs> { config = { cudaSupport = true; cudaCapabilities = [ \"8.6\" ]; }; }"
        );
        let odd = GpuRebuild::GpuTargets {
            attribute: "x".into(),
            targets: vec!["a\"${b}".into()],
        };
        assert!(odd.to_string().contains(r#"[ "a\"\${b}" ]"#), "{odd}");
        let join = DataDirJoin {
            package: "rocblas".into(),
            output: "gfx90a".into(),
            directory: "lib/rocblas/library".into(),
        };
        assert_eq!(
            join.to_string(),
            "${symlinkJoin { name = \"rocblas-gfx90a-library\"; paths = [ \"${rocblas}/lib/rocblas/library\" \"${rocblas.gfx90a}/lib/rocblas/library\" ]; }}"
        );
    }

    /// The plan's GPU globs were written as a quoted `mv` of a file named `*gfx1010*`,
    /// which fails in a rebuild; they are `moveToOutput` globs again. Hostile names
    /// stay quoted.
    #[test]
    fn gpu_output_globs_stay_globs_and_hostile_names_are_quoted() {
        let glob = text("lib/rocblas/library/*gfx1010*", "gfx1010");
        assert!(
            glob.contains("moveToOutput 'lib/rocblas/library/*gfx1010*' \"$gfx1010\"")
                && !glob.contains("mv "),
            "{glob}"
        );
        let name = text("lib/a*b", "gfx1010");
        assert!(
            name.contains("mv ") && !name.contains("moveToOutput"),
            "{name}"
        );
        let odd = text("lib/my dir/*gfx1010*", "gfx1010");
        assert!(
            odd.contains("mv ") && !odd.contains("moveToOutput"),
            "{odd}"
        );
        let other = text("lib/x/*gfx1010*", "gfx90a");
        assert!(other.contains("mv "), "{other}");
    }
}
