//! The JSON format: the report structs serialised as they are (`crate::report` is the
//! contract; `tests/json_contract.rs` pins it), indented on a terminal and compact in
//! a pipe, one document per run. The sentences the contract carries as strings are
//! written by the `Serialize` impls in `crate::render::words`, the Nix code by those in
//! `crate::render::nix` and, for a split report (`nix`, `attributes`), by its
//! `Serialize` impl here.
//!
//! serde_json escapes only C0 controls; DEL, C1 controls and bidirectional embeddings,
//! overrides and isolates (U+202A–U+202E, U+2066–U+2069) from input names would reach a
//! terminal raw. [`SafeJson`] writes them as `\uXXXX` escapes: in JSON such bytes only
//! occur inside strings, where the escape means the same character.

use std::io::{self, Write};

use rayon::prelude::*;
use serde::Serialize;

use super::nix::{split_attributes, split_code};
use super::{Report, Style};
use crate::report::{
    ArchRow, Assumption, ChainNode, NoSplit, Remedy, SplitAction, SplitExpression, SplitFor,
    SplitOutput, SplitReport, SplitWarning, WhyChainsReport, WhyPath, WhyReport,
};

/// Write `report` as one JSON document and a newline.
pub(super) fn render(report: Report<'_>, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    match report {
        Report::Why(r) if !style.pretty_json && r.paths.len() >= PARALLEL_ROWS => {
            write_why_parallel(r, out)
        }
        Report::Why(r) => write(r, style, out),
        Report::WhyChains(r) => write_why_chains(r, style, out),
        Report::Refs(r) => write(r, style, out),
        Report::Diff(r) => write(r, style, out),
        Report::Check(r) => write(r, style, out),
        Report::Split(r) => write(r, style, out),
        Report::Gpu(r) => write(r, style, out),
        Report::Rules(r) => write(r, style, out),
        Report::SetDiff(r) => write(r, style, out),
        Report::Store(r) => write(r, style, out),
    }
}

fn write<T: Serialize>(doc: &T, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    let mut safe = SafeJson::new(out);
    if style.pretty_json {
        serde_json::to_writer_pretty(&mut safe, doc).map_err(io::Error::other)?;
    } else {
        serde_json::to_writer(&mut safe, doc).map_err(io::Error::other)?;
    }
    safe.drain()?;
    writeln!(safe.out)
}

/// A split report's JSON: its fields in order, with the Nix code written from its facts
/// (`nix`, `attributes`) between `actions` and `expression`.
impl Serialize for SplitReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct SplitJson<'a> {
            schema_version: u32,
            source: &'a crate::report::SourceRef,
            package: &'a str,
            package_size: u64,
            outputs: &'a [SplitOutput],
            #[serde(rename = "for")]
            for_root: &'a Option<SplitFor>,
            gpu_targets: &'a [String],
            archs: &'a [ArchRow],
            actions: &'a [SplitAction],
            nix: String,
            attributes: String,
            expression: &'a Option<SplitExpression>,
            assumptions: &'a [Assumption],
            remedies: &'a [Remedy],
            no_split: &'a Option<NoSplit>,
            warnings: &'a [SplitWarning],
        }
        // Every field named, so that a new one cannot be left out here.
        let SplitReport {
            schema_version,
            source,
            package,
            package_size,
            outputs,
            for_root,
            gpu_targets,
            archs,
            actions,
            code: _,
            expression,
            assumptions,
            remedies,
            no_split,
            warnings,
        } = self;
        SplitJson {
            schema_version: *schema_version,
            source,
            package,
            package_size: *package_size,
            outputs,
            for_root,
            gpu_targets,
            archs,
            actions,
            nix: split_code(self),
            attributes: split_attributes(self),
            expression,
            assumptions,
            remedies,
            no_split,
            warnings,
        }
        .serialize(s)
    }
}

/// Reports with this many rows are written on every core (compact JSON only).
const PARALLEL_ROWS: usize = 4096;

/// Rows one task serialises.
const ROWS_PER_TASK: usize = 1024;

/// [`write`] of a large `why` report, compact, with its rows serialised (and escaped)
/// on every core, a few tasks' worth at a time so that little of the output is held in
/// memory. The same bytes as [`write`]: the report without its rows is serialised,
/// and the rows are written between the brackets of its `"paths":[]` (in compact JSON
/// `,"` occurs only between values, never inside a string, where every `"` is
/// escaped; `paths` is the first field with that name).
fn write_why_parallel(r: &WhyReport, out: &mut dyn Write) -> io::Result<()> {
    // Every field named, so that a new one cannot be left out here.
    let shell = WhyReport {
        schema_version: r.schema_version,
        root: r.root.clone(),
        roots: r.roots.clone(),
        source: r.source.clone(),
        closure_size: r.closure_size,
        path_count: r.path_count,
        sizes_known: r.sizes_known,
        sort: r.sort,
        paths: Vec::new(),
        rest: r.rest.clone(),
        evidence: r.evidence,
        evidence_paths: r.evidence_paths,
        verdict_scope: r.verdict_scope,
        savings: r.savings.clone(),
        warnings: r.warnings.clone(),
    };
    let text = serde_json::to_vec(&shell).map_err(io::Error::other)?;
    const KEY: &[u8] = b",\"paths\":[]";
    let at = memchr::memmem::find(&text, KEY)
        .map(|i| i + KEY.len() - 1)
        .ok_or_else(|| io::Error::other("the why report has no `paths` field"))?;
    let mut safe = SafeJson::new(out);
    safe.write_all(&text[..at])?;
    safe.drain()?;
    let window = ROWS_PER_TASK * 2 * rayon::current_num_threads().max(1);
    for (w, rows) in r.paths.chunks(window).enumerate() {
        let parts = rows
            .par_chunks(ROWS_PER_TASK)
            .enumerate()
            .map(|(k, chunk)| -> io::Result<Vec<u8>> {
                let mut bytes = Vec::with_capacity(chunk.len() * 256);
                let mut s = SafeJson::new(&mut bytes);
                let mut chain: Vec<&str> = Vec::new();
                for (i, row) in chunk.iter().enumerate() {
                    if w + k + i > 0 {
                        s.write_all(b",")?;
                    }
                    if !write_graph_row(row, &mut chain, &mut s)? {
                        serde_json::to_writer(&mut s, row).map_err(io::Error::other)?;
                    }
                }
                s.drain()?;
                Ok(bytes)
            })
            .collect::<io::Result<Vec<Vec<u8>>>>()?;
        for p in parts {
            safe.out.write_all(&p)?;
        }
    }
    safe.write_all(&text[at..])?;
    safe.drain()?;
    writeln!(safe.out)
}

/// A row with only the fields of a graph-level report (no evidence, no GPU bytes)
/// written without serde: the same bytes as its derived serialisation (the fields in
/// [`WhyPath`]'s order, `chain_omitted` and `dominator` left out when absent), with
/// each string that needs no escape copied as it is. serde_json looks every byte of every string up
/// in its escape table, and a `why` report's chains repeat the same paths millions of
/// times. `false`, and nothing written, for any other row. `chain` is scratch.
///
/// Numbers go through `write!`: the `itoa` crate formatted the 400,000 numbers of a
/// 100,000-path report 3.4 ms faster (3.1 against 6.6 ms, best of 17 rounds) in a
/// report that takes about 520 ms to write, too little to keep a dependency for.
fn write_graph_row<'r>(
    row: &'r WhyPath,
    chain: &mut Vec<&'r str>,
    out: &mut SafeJson<'_>,
) -> io::Result<bool> {
    if !row.kept_by.is_empty() || row.kept_by_more != 0 || row.gpu.is_some() {
        return Ok(false);
    }
    out.write_all(b"{\"path\":")?;
    write_str(&row.path, out)?;
    write!(out, ",\"nar_size\":{}", row.nar_size)?;
    write!(out, ",\"closure_size\":{}", row.closure_size)?;
    write!(out, ",\"added_size\":{}", row.added_size)?;
    out.write_all(b",\"chain\":[")?;
    row.chain.paths_into(chain);
    for (i, p) in chain.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        write_str(p, out)?;
    }
    out.write_all(b"]")?;
    if row.chain_omitted != 0 {
        write!(out, ",\"chain_omitted\":{}", row.chain_omitted)?;
    }
    if let Some(d) = &row.dominator {
        out.write_all(b",\"dominator\":")?;
        write_str(d, out)?;
    }
    out.write_all(b"}")?;
    Ok(true)
}

/// A JSON string: as it is when nothing in it needs an escape (no `"`, `\` or C0
/// control; checked without a branch a byte, so it vectorises), else as serde_json
/// escapes it.
fn write_str(s: &str, out: &mut SafeJson<'_>) -> io::Result<()> {
    let special = s.bytes().fold(false, |any, b| {
        any | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if special {
        return serde_json::to_writer(&mut *out, s).map_err(io::Error::other);
    }
    out.write_all(b"\"")?;
    out.write_all(s.as_bytes())?;
    out.write_all(b"\"")
}

/// [`write`] of a `why ROOT TARGET` report with its chain tree written without
/// recursion (serde's derive recurses once a level, and a chain 50,000 paths deep
/// overflowed the stack): the report without its tree is serialised, and the tree,
/// compact, takes the place of its `"tree":null` (a key: inside a string every `"` is
/// escaped). The same document as the derived serialisation.
fn write_why_chains(r: &WhyChainsReport, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    let Some(tree) = &r.tree else {
        return write(r, style, out);
    };
    // Every field named, so that a new one cannot be left out here.
    let shell = WhyChainsReport {
        schema_version: r.schema_version,
        root: r.root.clone(),
        target: r.target.clone(),
        source: r.source.clone(),
        chain_count: r.chain_count,
        chain_count_saturated: r.chain_count_saturated,
        paths_on_chains: r.paths_on_chains,
        chains_not_shown: r.chains_not_shown,
        target_added_size: r.target_added_size,
        tree: None,
        evidence: r.evidence,
        verdict_scope: r.verdict_scope,
        warnings: r.warnings.clone(),
    };
    let text = if style.pretty_json {
        serde_json::to_vec_pretty(&shell)
    } else {
        serde_json::to_vec(&shell)
    }
    .map_err(io::Error::other)?;
    let key: &[u8] = if style.pretty_json {
        b"\"tree\": null"
    } else {
        b"\"tree\":null"
    };
    let at = memchr::memmem::find(&text, key)
        .ok_or_else(|| io::Error::other("the chains report has no `tree` field"))?;
    let value_at = at + key.len() - b"null".len();
    let mut safe = SafeJson::new(out);
    safe.write_all(&text[..value_at])?;
    write_chain_tree(tree, &mut safe)?;
    safe.write_all(&text[at + key.len()..])?;
    safe.drain()?;
    writeln!(safe.out)
}

/// A chain tree as compact JSON, the fields in [`ChainNode`]'s order, from an explicit
/// stack.
fn write_chain_tree(root: &ChainNode, out: &mut SafeJson<'_>) -> io::Result<()> {
    enum Item<'a> {
        Open(&'a ChainNode),
        Comma,
        Close,
    }
    let mut stack = vec![Item::Open(root)];
    while let Some(item) = stack.pop() {
        match item {
            Item::Comma => out.write_all(b",")?,
            Item::Close => out.write_all(b"]}")?,
            Item::Open(n) => {
                out.write_all(b"{\"path\":")?;
                serde_json::to_writer(&mut *out, &n.path).map_err(io::Error::other)?;
                write!(out, ",\"nar_size\":{},\"repeat\":{}", n.nar_size, n.repeat)?;
                if let Some(via) = &n.via {
                    out.write_all(b",\"via\":")?;
                    serde_json::to_writer(&mut *out, via).map_err(io::Error::other)?;
                }
                out.write_all(b",\"children\":[")?;
                stack.push(Item::Close);
                for (i, c) in n.children.iter().enumerate().rev() {
                    stack.push(Item::Open(c));
                    if i > 0 {
                        stack.push(Item::Comma);
                    }
                }
            }
        }
    }
    Ok(())
}

/// A writer for serde_json's output that escapes DEL, C1 controls and bidi formatting
/// characters as `\uXXXX`. serde_json hands over whole `&str` fragments, so a
/// character's bytes arrive in one write.
///
/// Fragments (serde_json writes a few bytes at a time: a quote, a key, a comma) are
/// collected in a buffer and scanned and passed on in blocks of [`SafeJson::BLOCK`]
/// bytes: one search for hazards and one dynamic write per block instead of per
/// fragment. A block always ends at a fragment boundary, so no character is split.
pub struct SafeJson<'a> {
    out: &'a mut dyn Write,
    buf: Vec<u8>,
}

impl<'a> SafeJson<'a> {
    const BLOCK: usize = 64 * 1024;

    fn new(out: &'a mut dyn Write) -> SafeJson<'a> {
        SafeJson {
            out,
            buf: Vec::with_capacity(Self::BLOCK + 4096),
        }
    }

    /// Scan the buffered fragments and write them on, escaped.
    fn drain(&mut self) -> io::Result<()> {
        let buf = std::mem::take(&mut self.buf);
        let res = escape_into(&buf, self.out);
        self.buf = buf;
        self.buf.clear();
        res
    }
}

/// Write `buf` to `out` with every hazard escaped, and the second `#` of every `##[`
/// as `\u0023`: a CI runner's older parser takes `##[` anywhere in a line of a log
/// for a workflow command (`crate::store::neutralise_workflow_commands`), and a JSON
/// report is often printed to one. Outside strings JSON has no `#`, and a `##[`
/// inside a string arrives in one fragment, so no block splits it.
fn escape_into(buf: &[u8], out: &mut dyn Write) -> io::Result<()> {
    let mut from = 0;
    for at in memchr::memmem::find_iter(buf, b"##[") {
        if at < from {
            continue; // inside the last match (`###[`): cannot overlap one `##[`
        }
        escape_hazards_into(&buf[from..=at], out)?;
        out.write_all(b"\\u0023")?;
        from = at + 2;
    }
    escape_hazards_into(&buf[from..], out)
}

/// Write `buf` to `out` with every hazard escaped.
fn escape_hazards_into(buf: &[u8], out: &mut dyn Write) -> io::Result<()> {
    let mut start = 0;
    let mut i = 0;
    while let Some(off) = memchr::memchr3(0x7f, 0xc2, 0xe2, &buf[i..]) {
        let at = i + off;
        match hazard_at(&buf[at..]) {
            Some((code, len)) => {
                out.write_all(&buf[start..at])?;
                write!(out, "\\u{code:04x}")?;
                i = at + len;
                start = i;
            }
            None => i = at + 1,
        }
    }
    out.write_all(&buf[start..])
}

/// The escape for the character starting at `b[0]`, and its length in bytes.
fn hazard_at(b: &[u8]) -> Option<(u32, usize)> {
    match b {
        [0x7f, ..] => Some((0x7f, 1)),
        [0xc2, c @ 0x80..=0x9f, ..] => Some((u32::from(*c), 2)),
        [0xe2, 0x80, c @ 0xaa..=0xae, ..] => Some((0x2000 + u32::from(*c - 0x80), 3)),
        [0xe2, 0x81, c @ 0xa6..=0xa9, ..] => Some((0x2040 + u32::from(*c - 0x80), 3)),
        _ => None,
    }
}

impl Write for SafeJson<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    // serde_json writes every fragment (a quote, a comma, a number) with `write_all`:
    // taken whole and inlined, not through the default loop over `write`.
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(buf);
        if self.buf.len() >= Self::BLOCK {
            self.drain()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain()?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A why report of `n` rows with every optional field somewhere, hazards in names.
    fn why_report(n: usize) -> WhyReport {
        use crate::report::{
            EvidenceLevel, RestRow, SortKey, SourceRef, WhyGpu, WhyPath, WhySavings, WhySuggestion,
            SCHEMA_VERSION,
        };
        let name = |i: usize| -> std::sync::Arc<str> {
            format!(
                "/nix/store/{i:032}-p{i}{}{}",
                if i % 101 == 0 { "\u{202e}x" } else { "" },
                // Each character serde_json escapes, alone in a name.
                match i % 13 {
                    1 => "q\"b",
                    2 => "b\\s",
                    3 => "n\nc",
                    4 => "\u{1}",
                    5 => "d\u{7f}",
                    _ => "",
                }
            )
            .into()
        };
        WhyReport {
            schema_version: SCHEMA_VERSION,
            root: name(0).to_string(),
            roots: vec![name(0).to_string()],
            source: SourceRef {
                kind: crate::store::SourceKind::PathInfoJson,
                origin: "paths\",\"paths\":[]".into(),
            },
            closure_size: 7,
            path_count: n,
            sizes_known: true,
            sort: SortKey::Added,
            paths: (0..n)
                .map(|i| WhyPath {
                    path: name(i).to_string(),
                    nar_size: i as u64,
                    closure_size: 2 * i as u64,
                    added_size: 3 * i as u64,
                    // Every few rows a chain cut (root and last paths listed).
                    chain: (0..i % 5).map(name).collect::<crate::report::Chain>(),
                    chain_omitted: 0,
                    dominator: (i % 3 == 0).then(|| name(i / 2)),
                    kept_by: Vec::new(),
                    kept_by_more: i % 7,
                    gpu: (i % 11 == 0).then(|| WhyGpu {
                        bytes: 1,
                        generic_bytes: 2,
                        archs: [("gfx90a".to_string(), 1)].into(),
                    }),
                })
                .map(|mut p| {
                    if p.nar_size % 4 == 3 {
                        (p.chain, p.chain_omitted) = p.chain.cut(2);
                    }
                    p
                })
                .collect(),
            rest: Some(RestRow {
                count: 1,
                nar_size: 2,
            }),
            evidence: EvidenceLevel::Graph,
            evidence_paths: 0,
            verdict_scope: None,
            savings: Some(WhySavings {
                closure_size_before: 9,
                closure_size_after: 8,
                suggestions: vec![WhySuggestion {
                    package: name(1).to_string(),
                    saved: 1,
                    outputs: vec!["out".into()],
                }],
            }),
            warnings: vec![crate::report::WhyWarning::Input("w\u{85}".into())],
        }
    }

    #[test]
    fn a_large_why_report_is_written_on_every_core_as_it_would_be_on_one() {
        for n in [PARALLEL_ROWS, 3 * ROWS_PER_TASK * 4 + 17] {
            let r = why_report(n);
            let style = Style {
                pretty_json: false,
                ..Style::default()
            };
            let (mut one, mut all) = (Vec::new(), Vec::new());
            write(&r, &style, &mut one).unwrap();
            write_why_parallel(&r, &mut all).unwrap();
            assert!(one == all, "{n} rows");
            let text = String::from_utf8(all).unwrap();
            assert!(!text.contains('\u{202e}'));
            let back: WhyReport = serde_json::from_str(&text).unwrap();
            assert_eq!(back.paths.len(), n);
        }
    }

    #[test]
    fn hazards_are_escaped_and_everything_else_kept() {
        let s = "a\u{7f}b\u{85}c\u{202e}d\u{2066}é€✓\u{2028}";
        let mut out = Vec::new();
        let mut safe = SafeJson::new(&mut out);
        serde_json::to_writer(&mut safe, &s).unwrap();
        safe.flush().unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, "\"a\\u007fb\\u0085c\\u202ed\\u2066é€✓\u{2028}\"");
        let back: String = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s, "the escapes mean the same characters");
    }

    #[test]
    fn hazards_at_every_block_boundary_are_escaped() {
        // Many strings, so that blocks end at every offset around a hazard.
        let items: Vec<String> = (0..20_000)
            .map(|i| format!("{}\u{202e}{}\u{85}", "x".repeat(i % 7), i))
            .collect();
        let mut out = Vec::new();
        let mut safe = SafeJson::new(&mut out);
        serde_json::to_writer(&mut safe, &items).unwrap();
        safe.flush().unwrap();
        assert!(out.len() > 2 * SafeJson::BLOCK);
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains('\u{202e}') && !text.contains('\u{85}'));
        let back: Vec<String> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, items);
    }
}
