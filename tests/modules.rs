//! The module structure of `src/`, checked from the source itself: no two files import
//! each other, directly or in a circle, and the layers `src/lib.rs` draws point one way.
//!
//! Every file is parsed with `syn` (the real Rust grammar, so nested `use` groups,
//! renames, globs, paths inside expressions, types, patterns, attributes and macro
//! arguments are all seen), and every path is resolved the way the compiler would:
//! `crate::`, `self::`, `super::` (also from inline modules), and a bare first segment
//! that names a child module. A path's target is the deepest file module it passes
//! through. A parent that uses its child (`mod detect; … detect::x`, `pub use
//! self::detect::X`) depends on it like any other file, and a child's `super::` is a
//! dependency on its parent: so a parent that re-exports a child while the child reaches
//! back into the parent is a circle too.
//!
//! Test code (items under `#[cfg(test)]`, and files declared that way) is left out:
//! a test may reach anything it checks, and is not part of the layering.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use petgraph::algo::tarjan_scc;
use petgraph::graphmap::DiGraphMap;
use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::visit::Visit;

/// A module's path from the crate root (`["load", "detect"]`); the root is `[]`.
type ModPath = Vec<String>;

/// Why a file depends on another: the first path seen, and its line.
#[derive(Debug, Clone)]
struct Because {
    path: String,
    line: usize,
    /// The other paths that make the same dependency.
    also: Vec<String>,
}

/// Every module of the crate, with the file it lives in (inline modules map to the file
/// holding them), and the dependencies between files.
struct Crate {
    /// File modules, by module path.
    files: BTreeMap<ModPath, PathBuf>,
    /// Every module, file or inline.
    modules: BTreeMap<ModPath, Module>,
    /// Files declared only under `#[cfg(test)]`.
    test_only: BTreeSet<ModPath>,
    /// Dependencies between file modules.
    edges: BTreeMap<ModPath, BTreeMap<ModPath, Because>>,
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let text = a.meta.to_token_stream().to_string();
            // `cfg(test)`, and `cfg(all(test, …))`: compiled only for tests.
            text.contains("test") && !text.contains("not")
        }
    })
}

/// One module-level `use`: the name it binds (`None` for a glob) and the path it names.
#[derive(Debug, Clone)]
struct UseEntry {
    binding: Option<String>,
    target: Vec<String>,
    line: usize,
}

/// The paths one scope (a file or an inline module) uses, before resolution.
#[derive(Default)]
struct Uses {
    /// `(segments, line)`; segments start with `crate`, `self`, `super` or a bare name.
    paths: Vec<(Vec<String>, usize)>,
}

impl Uses {
    fn push(&mut self, segs: Vec<String>, line: usize) {
        if !segs.is_empty() {
            self.paths.push((segs, line));
        }
    }

    /// Paths written inside macro arguments (`format!("{}", crate::x::y())`): any run of
    /// `ident :: ident :: …` in the tokens.
    fn tokens(&mut self, tokens: TokenStream) {
        let flat: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < flat.len() {
            match &flat[i] {
                TokenTree::Group(g) => {
                    self.tokens(g.stream());
                    i += 1;
                }
                TokenTree::Ident(id) => {
                    let line = id.span().start().line;
                    let mut segs = vec![id.to_string()];
                    let mut j = i + 1;
                    while matches!(flat.get(j), Some(TokenTree::Punct(p)) if p.as_char() == ':')
                        && matches!(flat.get(j + 1), Some(TokenTree::Punct(p)) if p.as_char() == ':')
                    {
                        match flat.get(j + 2) {
                            Some(TokenTree::Ident(next)) => {
                                segs.push(next.to_string());
                                j += 3;
                            }
                            _ => break,
                        }
                    }
                    if segs.len() > 1 {
                        self.push(segs, line);
                    }
                    i = j;
                }
                _ => i += 1,
            }
        }
    }
}

/// Every binding of a `use` tree, flattened (`use a::{b::{self as c, D}, e::*}`).
fn use_entries(
    prefix: &mut Vec<String>,
    tree: &syn::UseTree,
    line: usize,
    out: &mut Vec<UseEntry>,
) {
    let mut named = |ident: &syn::Ident, binding: &syn::Ident, prefix: &Vec<String>| {
        let mut target = prefix.clone();
        if ident != "self" {
            target.push(ident.to_string());
        }
        let binding = if binding == "self" {
            prefix.last().cloned()
        } else {
            Some(binding.to_string())
        };
        if binding.as_deref().is_some_and(|b| b != "_") {
            out.push(UseEntry {
                binding,
                target,
                line,
            });
        } else {
            // `use x as _;` brings a trait into scope: a dependency all the same.
            out.push(UseEntry {
                binding: Some(String::new()),
                target,
                line,
            });
        }
    };
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_entries(prefix, &p.tree, line, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => named(&n.ident, &n.ident, prefix),
        syn::UseTree::Rename(r) => named(&r.ident, &r.rename, prefix),
        syn::UseTree::Glob(_) => out.push(UseEntry {
            binding: None,
            target: prefix.clone(),
            line,
        }),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_entries(prefix, t, line, out);
            }
        }
    }
}

impl<'ast> Visit<'ast> for Uses {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        let line = p
            .segments
            .first()
            .map(|s| s.ident.span().start().line)
            .unwrap_or(0);
        if segs.len() > 1 || matches!(segs.first().map(String::as_str), Some("super" | "crate")) {
            self.push(segs, line);
        }
        syn::visit::visit_path(self, p);
    }

    /// A `use` inside a function body: its paths are dependencies of the scope.
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut entries = Vec::new();
        use_entries(
            &mut Vec::new(),
            &u.tree,
            u.use_token.span.start().line,
            &mut entries,
        );
        for e in entries {
            self.push(e.target, e.line);
        }
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.tokens(m.tokens.clone());
    }

    /// `pub(super)`, `pub(in crate::x)`: who may see an item, not what it uses.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    // Inline modules and test items are walked by `Crate::scope`.
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !is_cfg_test(item_attrs(item)) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs: &[syn::Attribute] = match item {
            syn::ImplItem::Fn(f) => &f.attrs,
            syn::ImplItem::Const(c) => &c.attrs,
            syn::ImplItem::Type(t) => &t.attrs,
            _ => &[],
        };
        if !is_cfg_test(attrs) {
            syn::visit::visit_impl_item(self, item);
        }
    }

    fn visit_stmt(&mut self, s: &'ast syn::Stmt) {
        if let syn::Stmt::Item(item) = s {
            if is_cfg_test(item_attrs(item)) {
                return;
            }
        }
        syn::visit::visit_stmt(self, s);
    }
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        _ => &[],
    }
}

/// The name an item defines in its module, if any.
fn defined_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Mod(i) => &i.ident,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        syn::Item::Macro(i) => i.ident.as_ref()?,
        _ => return None,
    };
    Some(ident.to_string())
}

/// A module, file or inline: the file it lives in, the names it defines, its `use`s.
#[derive(Default)]
struct Module {
    file: ModPath,
    defined: BTreeSet<String>,
    uses: Vec<UseEntry>,
}

/// One scope's paths, waiting for every module to be known before resolution.
struct Scope {
    file: ModPath,
    module: ModPath,
    uses: Uses,
}

/// How many `use`s one path may be followed through (re-exports of re-exports).
const MAX_HOPS: usize = 16;

impl Crate {
    /// The crate whose root is `root` (`src/lib.rs`, `src/main.rs`), its files found
    /// the way the compiler finds them: from the `mod` declarations.
    fn read(root: &Path) -> Crate {
        let mut krate = Crate {
            modules: BTreeMap::new(),
            files: BTreeMap::new(),
            test_only: BTreeSet::new(),
            edges: BTreeMap::new(),
        };
        let mut scopes = Vec::new();
        let mut todo = vec![(ModPath::new(), root.to_path_buf())];
        while let Some((m, p)) = todo.pop() {
            let text = fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let file = syn::parse_file(&text).unwrap_or_else(|e| {
                panic!("{}: {e} (line {})", p.display(), e.span().start().line)
            });
            krate.files.insert(m.clone(), p.clone());
            krate.scope(&m, &m, &file.items, &mut scopes);
            // The directory a file's child modules live in.
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            let dir = if matches!(stem.as_str(), "mod" | "lib" | "main") {
                p.parent().unwrap().to_path_buf()
            } else {
                p.with_extension("")
            };
            for item in &file.items {
                if let syn::Item::Mod(decl) = item {
                    if decl.content.is_none() && !is_cfg_test(&decl.attrs) {
                        let name = decl.ident.to_string();
                        let flat = dir.join(format!("{name}.rs"));
                        let nested = dir.join(&name).join("mod.rs");
                        let kid_file = if flat.exists() { flat } else { nested };
                        let mut kid = m.clone();
                        kid.push(name);
                        todo.push((kid, kid_file));
                    }
                }
            }
        }
        let mut found: Vec<(ModPath, ModPath, String, usize)> = Vec::new();
        for s in &scopes {
            for (segs, line) in &s.uses.paths {
                if let Some(target) = krate.resolve(&s.module, segs) {
                    found.push((s.file.clone(), target, segs.join("::"), *line));
                }
            }
        }
        for (module, info) in &krate.modules {
            for u in &info.uses {
                let target = match &u.binding {
                    // A glob depends on the module it empties.
                    None => krate
                        .absolute(module, &u.target, 0)
                        .and_then(|a| krate.locate(&a, 0)),
                    Some(_) => krate.absolute(module, &u.target, 0).and_then(|a| {
                        // Naming a module is no dependency yet: its paths say what is used.
                        if krate.modules.contains_key(&a) {
                            None
                        } else {
                            krate.locate(&a, 0)
                        }
                    }),
                };
                if let Some(target) = target {
                    found.push((
                        info.file.clone(),
                        target,
                        format!("use {}", u.target.join("::")),
                        u.line,
                    ));
                }
            }
        }
        for (from, to, path, line) in found {
            if to != from && !krate.is_test_only(&from) && !krate.is_test_only(&to) {
                krate
                    .edges
                    .entry(from)
                    .or_default()
                    .entry(to)
                    .and_modify(|b| b.also.push(path.clone()))
                    .or_insert(Because {
                        path,
                        line,
                        also: Vec::new(),
                    });
            }
        }
        krate
    }

    fn is_test_only(&self, file: &ModPath) -> bool {
        (1..=file.len()).any(|k| self.test_only.contains(&file[..k]))
    }

    /// Records the modules a scope declares, the names it defines and the paths it uses.
    fn scope(
        &mut self,
        file: &ModPath,
        module: &ModPath,
        items: &[syn::Item],
        out: &mut Vec<Scope>,
    ) {
        let mut uses = Uses::default();
        let mut info = Module {
            file: file.clone(),
            ..Module::default()
        };
        for item in items {
            if is_cfg_test(item_attrs(item)) {
                if let syn::Item::Mod(m) = item {
                    let mut kid = module.clone();
                    kid.push(m.ident.to_string());
                    self.test_only.insert(kid);
                }
                continue;
            }
            if let Some(name) = defined_name(item) {
                info.defined.insert(name);
            }
            match item {
                syn::Item::Mod(m) => {
                    let mut kid = module.clone();
                    kid.push(m.ident.to_string());
                    if let Some((_, inner)) = &m.content {
                        self.scope(file, &kid, inner, out);
                    }
                }
                syn::Item::Use(u) => {
                    use_entries(
                        &mut Vec::new(),
                        &u.tree,
                        u.use_token.span.start().line,
                        &mut info.uses,
                    );
                }
                _ => uses.visit_item(item),
            }
        }
        self.modules.insert(module.clone(), info);
        out.push(Scope {
            file: file.clone(),
            module: module.clone(),
            uses,
        });
    }

    /// A path used in `module`, from the crate root; `None` when it leaves the crate
    /// (std, another crate) or names a local item.
    fn absolute(&self, module: &ModPath, segs: &[String], hops: usize) -> Option<ModPath> {
        if hops > MAX_HOPS {
            return None;
        }
        let mut base: ModPath = module.clone();
        let mut rest = segs;
        match segs.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &segs[1..];
            }
            Some("self") => rest = &segs[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                let mut kid = module.clone();
                kid.push(first.to_string());
                if !self.modules.contains_key(&kid) {
                    // A name a `use` of this module binds (`use crate::load; load::x`).
                    let bound = self
                        .modules
                        .get(module)?
                        .uses
                        .iter()
                        .find(|u| u.binding.as_deref() == Some(first))?;
                    let mut target = self.absolute(module, &bound.target, hops + 1)?;
                    target.extend(segs[1..].iter().cloned());
                    return Some(target);
                }
            }
            None => return None,
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The file that defines what an absolute path names: the deepest module on the
    /// path, followed through that module's `use`s when it only re-exports the name.
    fn locate(&self, abs: &[String], hops: usize) -> Option<ModPath> {
        let k = (0..=abs.len())
            .rev()
            .find(|&k| self.modules.contains_key(&abs[..k]))?;
        let m = abs[..k].to_vec();
        let info = &self.modules[&m];
        let Some(next) = abs.get(k) else {
            return Some(info.file.clone());
        };
        if info.defined.contains(next) || hops > MAX_HOPS {
            return Some(info.file.clone());
        }
        let through = |target: &[String]| -> Option<ModPath> {
            let mut a = self.absolute(&m, target, hops + 1)?;
            a.extend(abs[k + 1..].iter().cloned());
            self.locate(&a, hops + 1)
        };
        if let Some(u) = info
            .uses
            .iter()
            .find(|u| u.binding.as_deref() == Some(next))
        {
            return Some(through(&u.target).unwrap_or_else(|| info.file.clone()));
        }
        for g in info.uses.iter().filter(|u| u.binding.is_none()) {
            let Some(ga) = self.absolute(&m, &g.target, hops + 1) else {
                continue;
            };
            let Some(gm) = self.modules.get(&ga) else {
                continue;
            };
            if gm.defined.contains(next)
                || gm.uses.iter().any(|u| u.binding.as_deref() == Some(next))
            {
                let mut a = ga.clone();
                a.extend(abs[k..].iter().cloned());
                if let Some(f) = self.locate(&a, hops + 1) {
                    return Some(f);
                }
            }
        }
        Some(info.file.clone())
    }

    /// The file module a path used in `module` leads into, if it leads into this crate.
    fn resolve(&self, module: &ModPath, segs: &[String]) -> Option<ModPath> {
        let abs = self.absolute(module, segs, 0)?;
        self.locate(&abs, 0)
    }

    /// Strongly connected components of more than one file (petgraph's Tarjan).
    fn circles(edges: &BTreeMap<ModPath, BTreeMap<ModPath, Because>>) -> Vec<Vec<ModPath>> {
        let mut g: DiGraphMap<&ModPath, ()> = DiGraphMap::new();
        for (a, bs) in edges {
            g.add_node(a);
            for b in bs.keys() {
                g.add_edge(a, b, ());
            }
        }
        tarjan_scc(&g)
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let mut c: Vec<ModPath> = c.into_iter().cloned().collect();
                c.sort();
                c
            })
            .collect()
    }

    fn name(&self, m: &ModPath) -> String {
        let f = &self.files[m];
        f.strip_prefix(src_dir()).unwrap_or(f).display().to_string()
    }

    /// A circle as the files and the path that makes each step.
    fn describe(&self, comp: &[ModPath]) -> String {
        let set: BTreeSet<&ModPath> = comp.iter().collect();
        let mut lines = Vec::new();
        for a in comp {
            for (b, why) in self.edges.get(a).into_iter().flatten() {
                if set.contains(b) {
                    let mut also: Vec<&str> = why.also.iter().map(String::as_str).collect();
                    also.sort_unstable();
                    also.dedup();
                    lines.push(format!(
                        "  {} -> {}  (line {}: {}{}{})",
                        self.name(a),
                        self.name(b),
                        why.line,
                        why.path,
                        if also.is_empty() { "" } else { "; also " },
                        also.join(", ")
                    ));
                }
            }
        }
        lines.join("\n")
    }

    /// The graph between the top-level modules (`store`, `load`, …; files at the top
    /// stand for themselves), with the lib root left out: it only declares them.
    fn layers(&self) -> BTreeMap<ModPath, BTreeMap<ModPath, Because>> {
        let mut out: BTreeMap<ModPath, BTreeMap<ModPath, Because>> = BTreeMap::new();
        for (a, bs) in &self.edges {
            let Some(la) = a.first() else { continue };
            for (b, why) in bs {
                let Some(lb) = b.first() else { continue };
                if la != lb {
                    out.entry(vec![la.clone()])
                        .or_default()
                        .entry(vec![lb.clone()])
                        .or_insert_with(|| Because {
                            path: format!("{}: {}", self.name(a), why.path),
                            line: why.line,
                            also: Vec::new(),
                        });
                }
            }
        }
        out
    }
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The library crate and the binary crate (`main.rs` with `cli/`).
fn crates() -> [Crate; 2] {
    [
        Crate::read(&src_dir().join("lib.rs")),
        Crate::read(&src_dir().join("main.rs")),
    ]
}

fn deps_of(krate: &Crate, layer: &str) -> BTreeSet<String> {
    krate
        .edges
        .iter()
        .filter(|(a, _)| a.first().is_some_and(|l| l == layer))
        .flat_map(|(_, bs)| bs.keys())
        .filter_map(|b| b.first().cloned())
        .filter(|l| l != layer)
        .collect()
}

#[test]
fn no_two_files_import_each_other() {
    let mut text = Vec::new();
    for krate in crates() {
        text.extend(
            Crate::circles(&krate.edges)
                .iter()
                .map(|c| krate.describe(c)),
        );
    }
    assert!(
        text.is_empty(),
        "{} circle(s) between files of src/:\n{}",
        text.len(),
        text.join("\n\n")
    );
}

#[test]
fn the_layers_point_one_way() {
    let [krate, _] = crates();
    let layers = krate.layers();
    let circles = Crate::circles(&layers);
    let text: Vec<String> = circles
        .iter()
        .map(|c| {
            let set: BTreeSet<&ModPath> = c.iter().collect();
            c.iter()
                .flat_map(|a| {
                    layers[a]
                        .iter()
                        .filter(|(b, _)| set.contains(b))
                        .map(move |(b, why)| {
                            format!(
                                "  {} -> {}  (line {} of {})",
                                a[0], b[0], why.line, why.path
                            )
                        })
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    assert!(
        circles.is_empty(),
        "circles between layers:\n{}",
        text.join("\n\n")
    );
}

/// The layers in the order `src/lib.rs` names them: each imports only layers before it.
const LAYERS: &[&str] = &[
    "store", "timing", "http", "load", "source", "elf", "classify", "scan", "evidence", "reach",
    "graph", "report", "analysis", "render", "browse",
];

#[test]
fn each_layer_imports_only_those_before_it() {
    let [krate, _] = crates();
    let rank = |l: &str| LAYERS.iter().position(|x| *x == l);
    let mut wrong = Vec::new();
    for (a, bs) in krate.layers() {
        let Some(ra) = rank(&a[0]) else {
            wrong.push(format!(
                "{} is not in LAYERS (nor in src/lib.rs's list)",
                a[0]
            ));
            continue;
        };
        for (b, why) in bs {
            if rank(&b[0]).is_none_or(|rb| rb >= ra) {
                wrong.push(format!(
                    "{} imports {} (line {} of {})",
                    a[0], b[0], why.line, why.path
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "layers out of order:\n{}",
        wrong.join("\n")
    );
}

/// Where file contents come from does not depend on how closures are loaded or on the
/// report types; the vocabulary layer depends on nothing.
#[test]
fn lower_layers_import_nothing_above_them() {
    let [krate, _] = crates();
    let source = deps_of(&krate, "source");
    for above in ["load", "report", "scan", "evidence", "analysis", "render"] {
        assert!(
            !source.contains(above),
            "source/ imports {above}/: {source:?}"
        );
    }
    let store = deps_of(&krate, "store");
    assert!(store.is_empty(), "store/ imports {store:?}");
}

/// The check itself sees every form a dependency can be written in.
#[test]
fn the_check_sees_every_path_form() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |rel: &str, text: &str| {
        let p = src.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    write(
        "lib.rs",
        "pub mod a; pub mod b; pub mod c; pub mod d; pub mod e; pub mod f; pub mod h; pub mod i;",
    );
    write("a/mod.rs", "mod kid;\npub fn x() { kid::y(); }");
    write("a/kid.rs", "pub fn y() { super::x(); }");
    // A nested group, a rename and a glob.
    write("b.rs", "use crate::{c::{self as cc, Z}, d::*};");
    // A path inside a macro's arguments.
    write(
        "c.rs",
        "pub struct Z; pub fn f() { println!(\"{}\", crate::b::N); }",
    );
    write("d.rs", "pub fn g() {}");
    // An inline module's super::, and a type path.
    write("e.rs", "mod inner { pub fn h(_: super::super::f::T) {} }");
    write(
        "f.rs",
        "pub struct T; #[cfg(test)] mod tests { use crate::e; }",
    );
    // A re-export leads to the file that defines the item.
    write("h/mod.rs", "mod kid; pub use kid::K;");
    write("h/kid.rs", "pub struct K;");
    write("i.rs", "use crate::h; pub fn k(_: h::K) {}");
    let krate = Crate::read(&src.join("lib.rs"));
    let has = |a: &[&str], b: &[&str]| {
        let a: ModPath = a.iter().map(|s| s.to_string()).collect();
        let b: ModPath = b.iter().map(|s| s.to_string()).collect();
        krate.edges.get(&a).is_some_and(|bs| bs.contains_key(&b))
    };
    assert!(has(&["a"], &["a", "kid"]), "parent to child");
    assert!(has(&["a", "kid"], &["a"]), "super::");
    assert!(
        has(&["b"], &["c"]) && has(&["b"], &["d"]),
        "nested group, glob"
    );
    assert!(has(&["c"], &["b"]), "path inside a macro");
    assert!(has(&["e"], &["f"]), "inline module's super::super");
    assert!(!has(&["f"], &["e"]), "test code is left out");
    assert!(
        has(&["i"], &["h", "kid"]) && !has(&["i"], &["h"]),
        "through a re-export"
    );
    let circles = Crate::circles(&krate.edges);
    assert_eq!(circles.len(), 2, "{circles:?}");
}

/// `NIXCUT_MODULES=FILE cargo test --test modules dump -- --ignored --nocapture` prints
/// what one file depends on, and why.
#[test]
#[ignore]
fn dump() {
    let want = std::env::var("NIXCUT_MODULES").unwrap_or_default();
    for krate in crates() {
        for (a, bs) in &krate.edges {
            if krate.name(a) == want || want.is_empty() {
                for (b, why) in bs {
                    println!(
                        "{} -> {} (line {}: {}; {})",
                        krate.name(a),
                        krate.name(b),
                        why.line,
                        why.path,
                        why.also.join(", ")
                    );
                }
            }
        }
    }
}
