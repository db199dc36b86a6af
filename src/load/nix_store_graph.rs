//! `nix-store --query --graph PATH…` output: the closure of the given paths as a
//! Graphviz DOT digraph, which Nix writes one statement a line:
//!
//! ```text
//! digraph G {
//! "<hash>-app-1.0" [label = "app-1.0", shape = box, style = filled, fillcolor = "#ff0000"];
//! "<hash>-libfoo-3.2" -> "<hash>-app-1.0" [color = "green"];
//! }
//! ```
//!
//! What it says, and what it cannot:
//! - A node is a store path. Nix 2.4 and later write its base name (`<hash>-<name>`),
//!   older Nix the full path; both are read in the options' store directory (the
//!   default `/nix/store` unless `--store-dir` says otherwise), as the registration and
//!   `exportReferencesGraph` readers do. Its `label` is the name after the hash, and is
//!   checked to be.
//! - An edge `"A" -> "B"` means **B references A**: Nix prints, for each path B, one
//!   edge from each of B's references (`nix-store --query --references B` lists A).
//! - Self-references are never printed (Nix skips them), so the closure cannot know
//!   them: a path's own hash in its files is not among its references here.
//! - No NAR sizes, hashes, derivers or signatures: like an `exportReferencesGraph`
//!   file, the closure gets a warning that sizes are unknown.
//! - Roots are not marked. As for every file format, the roots are the paths nothing in
//!   the graph references ([`Closure::roots`]): `nix-store -q --graph A B` has two
//!   when neither is in the other's closure.
//!
//! Why a parser of its own rather than a DOT crate: the crates that parse DOT
//! (`graphviz-rust` with pest, `graphviz-dot-parser` with nom) parse the whole language
//! into their own graph types and report errors as a bare `String` or nom's error, not
//! a line and column a [`LoadError`] can carry, and neither documents more than a few
//! percent of its items. Nix writes one fixed shape, one statement a line, and this
//! reader accepts that shape and nothing else: the header `digraph G {`, node lines
//! `"ID" [key = value, …];` with a `label`, edge lines `"ID" -> "ID" [key = value,
//! …];`, and the closing `}`; attributes other than `label` (shape, colours, which Nix
//! may change) are read but mean nothing. A value is a word or a quoted string; in a
//! quoted string `\"` is a quote (DOT's one escape; Nix never writes one, and no store
//! path name holds a quote or a backslash, so such an id is refused as no store path).
//! Anything else (a statement over several lines, a subgraph, a missing `;` or `}`, a
//! quote not closed) is a [`LoadError::Syntax`] at its line and column, quoted through
//! `store::sanitize`. Edges may come before the node lines they name; an edge into a
//! path that has no node line is an error, an edge from one is a reference to a path
//! the input does not describe (the closedness warning).

use std::collections::BTreeMap;
use std::path::Path;

use super::json::with_store_dir_hint;
use super::LoadError;
use crate::store::{sanitize, Closure, LoadWarning, PathInfo, SourceKind, StoreDir, StorePath};

/// The graph's header as Nix writes it.
const HEADER: &str = "`digraph G {`";

/// Whether `text` is `nix-store --query --graph` output: its first word is `digraph`
/// and the graph's name Nix's `G`. Cheap and certain (another tool's DOT, `digraph why
/// {`, is not taken for it); a damaged rest is the reader's to locate.
pub fn looks_like_graph(text: &str) -> bool {
    let Some(rest) = text.trim_start().strip_prefix("digraph") else {
        return false;
    };
    let Some(rest) = rest.trim_start().strip_prefix('G') else {
        return false;
    };
    rest.starts_with(|c: char| c.is_whitespace() || c == '{')
}

/// Read `nix-store --query --graph` output; ids are base names, or full paths in
/// `store_dir`. `path` names the input in messages and in [`Closure::origin`].
pub fn parse(text: &str, path: &Path, store_dir: &StoreDir) -> Result<Closure, LoadError> {
    let mut closure = Closure::new(
        store_dir.clone(),
        SourceKind::NixStoreGraph,
        path.display().to_string(),
    );
    let mut lines = Lines {
        it: text.lines(),
        line: 0,
    };
    let end_of_file = |lines: &Lines, expected: &str| LoadError::Syntax {
        path: path.to_path_buf(),
        line: lines.line + 1,
        column: 1,
        expected: expected.to_string(),
        found: "end of file".to_string(),
    };

    let Some((n, header)) = lines.next() else {
        return Err(end_of_file(&lines, HEADER));
    };
    let mut c = Cursor::new(header, n, path);
    c.keyword("digraph", HEADER)?;
    c.keyword("G", HEADER)?;
    c.punct("{", HEADER)?;
    c.end()?;

    let mut graph = Graph::default();
    loop {
        let Some((n, line)) = lines.next() else {
            return Err(end_of_file(&lines, "a node line, an edge line or `}`"));
        };
        let mut c = Cursor::new(line, n, path);
        if c.eat("}") {
            c.end()?;
            break;
        }
        statement(&mut c, store_dir, &mut graph)?;
    }
    if let Some((n, line)) = lines.next() {
        let c = Cursor::new(line, n, path);
        return Err(c.error_here("end of file after the graph's `}`"));
    }
    graph.into_closure(&mut closure, path)?;
    if !closure.paths.is_empty() {
        closure.warnings.push(LoadWarning::GraphWithoutSizes {
            file: path.display().to_string(),
        });
    }
    Ok(closure)
}

/// The lines of the input that are not blank, numbered from 1.
struct Lines<'a> {
    it: std::str::Lines<'a>,
    /// The number of the last line read (blank or not).
    line: usize,
}

impl<'a> Lines<'a> {
    fn next(&mut self) -> Option<(usize, &'a str)> {
        for l in self.it.by_ref() {
            self.line += 1;
            if !l.trim().is_empty() {
                return Some((self.line, l));
            }
        }
        None
    }
}

/// The nodes and edges read so far, in file order.
#[derive(Default)]
struct Graph {
    /// Each node with the line of its first node line.
    nodes: BTreeMap<StorePath, usize>,
    /// Node ids given twice, with the line of the second.
    twice: Vec<(StorePath, usize)>,
    /// `(reference, referrer, line, column of the referrer)`.
    edges: Vec<(StorePath, StorePath, usize, usize)>,
}

impl Graph {
    /// Fill `closure` with the nodes, each referencing the sources of its edges.
    fn into_closure(self, closure: &mut Closure, path: &Path) -> Result<(), LoadError> {
        let mut infos: BTreeMap<StorePath, PathInfo> = self
            .nodes
            .into_keys()
            .map(|p| (p.clone(), PathInfo::new(p)))
            .collect();
        for (from, to, line, column) in self.edges {
            let Some(info) = infos.get_mut(&to) else {
                return Err(LoadError::Syntax {
                    path: path.to_path_buf(),
                    line,
                    column,
                    expected: "a path the graph has a node line for (Nix writes one for \
                               every path it draws edges into)"
                        .to_string(),
                    found: format!("`{}`", sanitize(&closure.store_dir.display(&to), 80)),
                });
            };
            info.references.push(from);
        }
        for (p, line) in self.twice {
            closure.warnings.push(LoadWarning::NodeTwice {
                file: path.display().to_string(),
                line: line as u64,
                name: sanitize(p.name(), 80),
            });
        }
        for info in infos.into_values() {
            closure.insert(info);
        }
        Ok(())
    }
}

/// One node or edge line.
fn statement(c: &mut Cursor, store_dir: &StoreDir, graph: &mut Graph) -> Result<(), LoadError> {
    let first = c.store_path(store_dir)?;
    if c.eat("->") {
        let column = c.column_of_next();
        let second = c.store_path(store_dir)?;
        c.attributes()?;
        c.punct(";", "`;`")?;
        c.end()?;
        graph.edges.push((first, second, c.line, column));
        return Ok(());
    }
    let open = c.column_of_next();
    let attrs = c.attributes()?;
    c.punct(";", "`;`")?;
    c.end()?;
    match attrs.iter().find(|a| a.key == "label") {
        Some(a) if a.value == first.name() => {}
        Some(a) => {
            return Err(c.error_at(
                a.column,
                &format!(
                    "the label `{}` (the name in its id)",
                    sanitize(first.name(), 80)
                ),
                &format!("`{}`", sanitize(&a.value, 80)),
            ))
        }
        None => {
            return Err(c.error_at(
                open,
                "a node's attributes with its `label` (or `->` and an edge)",
                "none",
            ))
        }
    }
    match graph.nodes.entry(first) {
        std::collections::btree_map::Entry::Occupied(e) => {
            graph.twice.push((e.key().clone(), c.line));
        }
        std::collections::btree_map::Entry::Vacant(e) => {
            e.insert(c.line);
        }
    }
    Ok(())
}

/// `key = value` in a statement's `[…]`, with the column of the value.
struct Attribute {
    key: String,
    value: String,
    column: usize,
}

/// A position in one line.
#[derive(Clone, Copy)]
struct Cursor<'a> {
    text: &'a str,
    /// Byte offset into `text`.
    pos: usize,
    /// 1-based line number.
    line: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str, line: usize, path: &'a Path) -> Cursor<'a> {
        Cursor {
            text,
            pos: 0,
            line,
            path,
        }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn skip_blanks(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    /// 1-based column of byte offset `at`, in characters.
    fn column_at(&self, at: usize) -> usize {
        self.text[..at].chars().count() + 1
    }

    /// The column where the next token starts.
    fn column_of_next(&mut self) -> usize {
        self.skip_blanks();
        self.column_at(self.pos)
    }

    fn error_at(&self, column: usize, expected: &str, found: &str) -> LoadError {
        LoadError::Syntax {
            path: self.path.to_path_buf(),
            line: self.line,
            column,
            expected: expected.to_string(),
            found: found.to_string(),
        }
    }

    /// `expected` was due at the next token; what is there is quoted.
    fn error_here(mut self, expected: &str) -> LoadError {
        let column = self.column_of_next();
        let rest = self.rest();
        let found = if rest.is_empty() {
            "end of line".to_string()
        } else {
            format!("`{}`", sanitize(rest, 40))
        };
        self.error_at(column, expected, &found)
    }

    /// Take `p` if it comes next.
    fn eat(&mut self, p: &str) -> bool {
        self.skip_blanks();
        if self.rest().starts_with(p) {
            self.pos += p.len();
            true
        } else {
            false
        }
    }

    fn punct(&mut self, p: &str, expected: &str) -> Result<(), LoadError> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.clone_here().error_here(expected))
        }
    }

    /// A copy at the same position (errors consume their cursor).
    fn clone_here(&self) -> Cursor<'a> {
        *self
    }

    /// The end of the line: nothing but blanks.
    fn end(&mut self) -> Result<(), LoadError> {
        self.skip_blanks();
        if self.rest().is_empty() {
            Ok(())
        } else {
            Err(self.clone_here().error_here("the end of the line"))
        }
    }

    /// A bare word: letters, digits, `_`, `.`, `-`, `#`.
    fn word(&mut self) -> Option<&'a str> {
        self.skip_blanks();
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || "_.-#".contains(c)))
            .unwrap_or(rest.len());
        (len > 0).then(|| {
            self.pos += len;
            &rest[..len]
        })
    }

    /// The word `w`, else an error expecting `expected`.
    fn keyword(&mut self, w: &str, expected: &str) -> Result<(), LoadError> {
        let start = self.clone_here();
        match self.word() {
            Some(got) if got == w => Ok(()),
            _ => Err(start.error_here(expected)),
        }
    }

    /// A quoted string, unescaped (`\"` is a quote).
    fn quoted(&mut self, expected: &str) -> Result<String, LoadError> {
        self.skip_blanks();
        if !self.rest().starts_with('"') {
            return Err(self.clone_here().error_here(expected));
        }
        let open = self.column_at(self.pos);
        let mut out = String::new();
        let mut chars = self.rest()[1..].char_indices();
        while let Some((i, ch)) = chars.next() {
            match ch {
                '"' => {
                    self.pos += 1 + i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, '"')) => out.push('"'),
                    Some((_, other)) => {
                        out.push('\\');
                        out.push(other);
                    }
                    None => break,
                },
                _ => out.push(ch),
            }
        }
        Err(self.error_at(
            open,
            "a quoted string closed on its line by `\"`",
            &format!("`{}` and the end of the line", sanitize(self.rest(), 40)),
        ))
    }

    /// A quoted store path: a base name, or a full path in `store_dir`.
    fn store_path(&mut self, store_dir: &StoreDir) -> Result<StorePath, LoadError> {
        let column = self.column_of_next();
        let id = self.quoted("a quoted store path base name (`\"<hash>-<name>\"`)")?;
        store_dir.parse_path_or_base(&id).map_err(|e| {
            self.error_at(
                column,
                &format!(
                    "a store path base name, `<hash>-<name>` ({})",
                    with_store_dir_hint(&e, store_dir)
                ),
                &format!("`{}`", sanitize(&id, 80)),
            )
        })
    }

    /// `[key = value, …]`: at least one attribute.
    fn attributes(&mut self) -> Result<Vec<Attribute>, LoadError> {
        self.punct("[", "`[` and the attributes")?;
        let mut attrs = Vec::new();
        loop {
            let start = self.clone_here();
            let Some(key) = self.word() else {
                return Err(start.error_here("an attribute name"));
            };
            self.punct("=", "`=`")?;
            let column = self.column_of_next();
            let value = if self.rest().starts_with('"') {
                self.quoted("a value")?
            } else {
                let start = self.clone_here();
                match self.word() {
                    Some(w) => w.to_string(),
                    None => return Err(start.error_here("a value (a word or a quoted string)")),
                }
            };
            attrs.push(Attribute {
                key: key.to_string(),
                value,
                column,
            });
            if self.eat("]") {
                return Ok(attrs);
            }
            self.punct(",", "`,` or `]`")?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> String {
        let p = format!(
            "{}/tests/fixtures/load/nix-store-graph.dot",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(p).unwrap()
    }

    fn read(text: &str) -> Result<Closure, LoadError> {
        parse(text, Path::new("g.dot"), &StoreDir::default())
    }

    /// `(line, column, expected)` of a syntax error.
    fn syntax(text: &str) -> (usize, usize, String, String) {
        match read(text).unwrap_err() {
            LoadError::Syntax {
                line,
                column,
                expected,
                found,
                ..
            } => (line, column, expected, found),
            other => panic!("{text:?}: {other}"),
        }
    }

    const A: &str = "x71ahacbysflg2pf8638mdh69871353b-libfoo-3.2";
    const B: &str = "cb57q9mwx8761wyzrb6ypijgajriigag-app-1.0";

    fn node(id: &str, label: &str) -> String {
        format!("\"{id}\" [label = \"{label}\", shape = box, style = filled, fillcolor = \"#ff0000\"];\n")
    }

    #[test]
    fn the_real_graph_reads_with_edges_reversed() {
        let c = read(&fixture()).unwrap();
        assert_eq!(c.source, SourceKind::NixStoreGraph);
        assert_eq!(c.paths.len(), 5);
        let app = StorePath::from_base_name(B).unwrap();
        let foo = StorePath::from_base_name(A).unwrap();
        // `"libfoo" -> "app"`: app references libfoo.
        assert!(c.paths[&app].references.contains(&foo));
        assert!(!c.paths[&foo].references.contains(&app));
        assert_eq!(c.paths[&app].references.len(), 3, "no self-reference");
        assert!(c.paths.values().all(|i| i.nar_size.is_none()));
        assert_eq!(c.roots(), vec![app]);
        assert!(c
            .warnings
            .iter()
            .any(|w| w.to_string().contains("sizes unknown")));
        assert!(looks_like_graph(&fixture()));
    }

    #[test]
    fn full_paths_of_older_nix_and_two_roots() {
        let text = format!(
            "digraph G {{\n{}{}}}\n",
            node(&format!("/nix/store/{A}"), "libfoo-3.2"),
            node(B, "app-1.0")
        );
        let c = read(&text).unwrap();
        assert_eq!(c.roots().len(), 2);
    }

    #[test]
    fn sniffing_wants_nix_s_graph_name() {
        assert!(looks_like_graph("\n digraph G{\n"));
        assert!(!looks_like_graph("digraph why {\n"));
        assert!(!looks_like_graph("digraph Gx {\n"));
        assert!(!looks_like_graph("graph G {\n"));
    }

    #[test]
    fn errors_have_line_and_column() {
        let n = node(A, "libfoo-3.2");
        let cases: Vec<(String, usize, usize, &str)> = vec![
            (String::new(), 1, 1, "digraph G"),
            ("digraph H {\n".into(), 1, 9, "digraph G"),
            ("digraph G {\n".into(), 2, 1, "`}`"),
            (format!("digraph G {{\n{n}"), 3, 1, "`}`"),
            (
                format!("digraph G {{\n\"{A} [label = x];\n}}\n"),
                2,
                1,
                "closed",
            ),
            (
                format!("digraph G {{\n{}}}\n", node("not-a-path", "x")),
                2,
                1,
                "base name",
            ),
            (
                format!("digraph G {{\n{}}}\n", node(A, "libbar")),
                2,
                56,
                "the label",
            ),
            (
                format!("digraph G {{\n\"{A}\" [shape = box];\n}}\n"),
                2,
                47,
                "label",
            ),
            (
                format!("digraph G {{\n\"{A}\" [label = \"libfoo-3.2\"]\n}}\n"),
                2,
                69,
                "`;`",
            ),
            (
                format!("digraph G {{\n{n}\"{A}\" -> \"{B}\" [color = \"red\"];\n}}\n"),
                3,
                50,
                "node line",
            ),
            (
                format!("digraph G {{\n{n}\"{A}\" -> {B};\n}}\n"),
                3,
                50,
                "quoted",
            ),
            (
                format!("digraph G {{\n{n}subgraph x {{\n}}\n"),
                3,
                1,
                "quoted",
            ),
            (format!("digraph G {{\n{n}}}\n{n}"), 4, 1, "end of file"),
            (format!("digraph G {{\n{n}}} x\n"), 3, 3, "end of the line"),
            (
                format!("digraph G {{\n\"{A}\" [label = ];\n}}\n"),
                2,
                56,
                "a value",
            ),
        ];
        for (text, line, column, want) in cases {
            let (l, col, expected, _) = syntax(&text);
            assert_eq!((l, col), (line, column), "{text:?}: {expected}");
            assert!(expected.contains(want), "{text:?}: {expected}");
        }
    }

    #[test]
    fn quotes_escape_and_control_characters_are_shown_inert() {
        // `\"` is a quote inside the id: no store path has one.
        let text = format!("digraph G {{\n\"{A}\\\"x\" [label = \"a\"];\n}}\n");
        let (_, _, expected, found) = syntax(&text);
        assert!(expected.contains("base name"), "{expected}");
        assert!(found.contains("libfoo-3.2\"x"), "{found}");
        let text = format!("digraph G {{\n\"{A}\x1b[2J\" [label = \"a\"];\n}}\n");
        let e = read(&text).unwrap_err().to_string();
        assert!(!e.contains('\x1b'), "{e:?}");
    }

    #[test]
    fn duplicates_warn_and_edges_from_outside_are_kept() {
        let n = node(A, "libfoo-3.2");
        let gone = "0000000000000000000000000000000g-gone-1.0";
        let text = format!("digraph G {{\n{n}{n}\"{gone}\" -> \"{A}\" [color = \"red\"];\n}}\n");
        let c = read(&text).unwrap();
        assert_eq!(c.paths.len(), 1);
        assert!(
            c.warnings.iter().any(|w| w.to_string().contains(":3:")),
            "{:?}",
            c.warnings
        );
        assert_eq!(c.missing_references().len(), 1);
        // An empty graph is no error (and no warning about sizes).
        let c = read("digraph G {\n}\n").unwrap();
        assert!(c.paths.is_empty() && c.warnings.is_empty());
    }
}
