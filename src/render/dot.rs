//! The dot format (Graphviz), for people who pipe into `dot -Tsvg`.
//!
//! `why ROOT`: one node per path of the report (so `--top N` picks them), labelled
//! with its name and added size and filled by the verdict that keeps it in; an edge
//! from each scanned referrer in the report, labelled with its evidence kinds and
//! verdict; where a path has no such edge, a plain edge from the nearest path of its
//! shortest chain that the report has (dashed, with the number of hops skipped).
//! `why ROOT TARGET`: the chain tree, each edge labelled with its hop's evidence.
//!
//! Names are data, not syntax: every string goes through [`dot_string`], so no store
//! name, file name or evidence detail can end a string, start an attribute or use
//! Graphviz's `\N`-style escapes; node ids are `n0`, `n1`, ….

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, Write};

use super::html::is_invisible_format;
use super::text::name_of;
use super::words::refs::kind_sum;
use super::Report;
use crate::classify::Verdict;
use crate::report::{ChainNode, HopEvidence, WhyChainsReport, WhyReport};
use crate::store::format_size;

/// Write `report` as a dot digraph.
pub(super) fn render(report: Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    match report {
        Report::Why(r) => why(r, out),
        Report::WhyChains(r) => chains(r, out),
        Report::Refs(_) => Err(super::unsupported("dot", "refs")),
        Report::Diff(_) => Err(super::unsupported("dot", "diff")),
        Report::Check(_) => Err(super::unsupported("dot", "check")),
        Report::Split(_) => Err(super::unsupported("dot", "split")),
        Report::Gpu(_) => Err(super::unsupported("dot", "gpu")),
        Report::Rules(_) => Err(super::unsupported("dot", "rules")),
        Report::SetDiff(_) => Err(super::unsupported("dot", "diff")),
        Report::Store(_) => Err(super::unsupported("dot", "store")),
    }
}

/// `s` as a double-quoted dot string: `"` and `\` escaped; newlines, other control
/// characters and invisible formatting characters (bidi overrides) written visibly
/// as `\x0a`, `\u{202e}` (a literal backslash in the label).
pub fn dot_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    let mut prev = '\0';
    for c in s.chars() {
        match c {
            // No `##[` (a CI runner's older workflow-command form): Graphviz reads the
            // entity in a label as `#`.
            '#' if prev == '#' => out.push_str("&#35;"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || ('\u{7f}'..='\u{9f}').contains(&c) => {
                let _ = write!(out, "\\\\x{:02x}", c as u32);
            }
            c if is_invisible_format(c) => {
                let _ = write!(out, "\\\\u{{{:04x}}}", c as u32);
            }
            c => out.push(c),
        }
        prev = c;
    }
    out.push('"');
    out
}

/// Label lines joined with dot's centred line break (each line escaped first).
fn lines(ls: &[String]) -> String {
    let quoted: Vec<String> = ls.iter().map(|l| dot_string(l)).collect();
    // Concatenate the quoted pieces with `\n` between them inside one string.
    let inner: Vec<&str> = quoted.iter().map(|q| &q[1..q.len() - 1]).collect();
    format!("\"{}\"", inner.join("\\n"))
}

fn fill(v: Option<&Verdict>) -> &'static str {
    match v {
        Some(Verdict::Runtime) => "#9db8d6",
        Some(Verdict::Gpu(_)) => "#f4b183",
        Some(Verdict::Unknown) => "#d6cfc8",
        Some(Verdict::Dev) => "#a8d8d4",
        Some(Verdict::Doc) => "#b9dba8",
        Some(Verdict::Removable) => "#f2a3a3",
        None => "#e6e9ee",
    }
}

/// `26 symlink + 1 elf-needed → gpu:gfx90a`.
fn hop_label(h: &HopEvidence) -> Vec<String> {
    let kinds = kind_sum(h.kinds.iter().map(|(k, n)| (k, *n)));
    vec![kinds, h.verdict.to_string()]
}

const HEAD: &str = "  graph [rankdir=LR, fontname=\"Helvetica\", fontsize=11];\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10, color=\"#5a6272\"];\n  edge [fontname=\"Helvetica\", fontsize=9, color=\"#5a6272\", fontcolor=\"#3c4454\"];\n";

fn why(r: &WhyReport, out: &mut dyn Write) -> io::Result<()> {
    let index: HashMap<&str, usize> = r
        .paths
        .iter()
        .enumerate()
        .map(|(i, p)| (p.path.as_str(), i))
        .collect();
    let mut s = String::new();
    let _ = writeln!(s, "digraph why {{");
    s.push_str(HEAD);
    let _ = writeln!(
        s,
        "  label={};\n  labelloc=t;",
        dot_string(&crate::render::words::why::header(r))
    );
    for (i, p) in r.paths.iter().enumerate() {
        let verdict = p.kept_by.iter().map(|h| &h.verdict).max();
        let _ = writeln!(
            s,
            "  n{i} [label={}, tooltip={}, fillcolor=\"{}\"];",
            lines(&[
                name_of(&p.path).to_string(),
                format!("added {}", format_size(p.added_size)),
            ]),
            dot_string(&p.path),
            fill(verdict)
        );
    }
    for (i, p) in r.paths.iter().enumerate() {
        let mut linked = false;
        for h in &p.kept_by {
            if let Some(&from) = index.get(h.referrer.as_str()) {
                let _ = writeln!(s, "  n{from} -> n{i} [label={}];", lines(&hop_label(h)));
                linked = true;
            }
        }
        if linked || p.chain.len() < 2 {
            continue;
        }
        // The nearest path on the shortest chain that the report has (past the root,
        // the paths a cut chain leaves out count too).
        let root_at = p.chain.len() - 2;
        let hops = p
            .chain
            .rev_iter()
            .skip(1)
            .enumerate()
            .find_map(|(k, c)| index.get(c.as_ref()).map(|&f| (f, k)))
            .map(|(f, k)| (f, if k == root_at { k + p.chain_omitted } else { k }));
        match hops {
            Some((from, 0)) => {
                let _ = writeln!(s, "  n{from} -> n{i};");
            }
            Some((from, k)) => {
                let _ = writeln!(
                    s,
                    "  n{from} -> n{i} [style=dashed, label={}];",
                    dot_string(&format!("via {k} more"))
                );
            }
            None => {}
        }
    }
    s.push_str("}\n");
    out.write_all(s.as_bytes())
}

fn chains(r: &WhyChainsReport, out: &mut dyn Write) -> io::Result<()> {
    let mut s = String::new();
    let _ = writeln!(s, "digraph chains {{");
    s.push_str(HEAD);
    let _ = writeln!(
        s,
        "  label={};\n  labelloc=t;",
        dot_string(&crate::render::words::why::chains_header(r))
    );
    if let Some(tree) = &r.tree {
        // One node per distinct path; the tree's repeats point at the same node.
        let mut ids: HashMap<&str, usize> = HashMap::new();
        let mut stack: Vec<(&ChainNode, Option<usize>)> = vec![(tree, None)];
        while let Some((n, parent)) = stack.pop() {
            let next = ids.len();
            let id = *ids.entry(n.path.as_str()).or_insert_with(|| {
                let _ = writeln!(
                    s,
                    "  n{next} [label={}, tooltip={}, fillcolor=\"{}\"];",
                    lines(&[
                        name_of(&n.path).to_string(),
                        format!("NAR {}", format_size(n.nar_size)),
                    ]),
                    dot_string(&n.path),
                    fill(n.via.as_ref().map(|h| &h.verdict))
                );
                next
            });
            if let Some(p) = parent {
                match &n.via {
                    Some(h) => {
                        let _ = writeln!(s, "  n{p} -> n{id} [label={}];", lines(&hop_label(h)));
                    }
                    None => {
                        let _ = writeln!(s, "  n{p} -> n{id};");
                    }
                }
            }
            for c in n.children.iter().rev() {
                stack.push((c, Some(id)));
            }
        }
    }
    s.push_str("}\n");
    out.write_all(s.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_cannot_break_out() {
        assert_eq!(dot_string("a\"b"), "\"a\\\"b\"");
        assert_eq!(dot_string("\\N\\G"), "\"\\\\N\\\\G\"");
        assert_eq!(dot_string("x\ny\u{202e}z"), "\"x\\\\x0ay\\\\u{202e}z\"");
        assert_eq!(dot_string("<script>&</svg>"), "\"<script>&</svg>\"");
        assert_eq!(
            lines(&["a\"".to_string(), "b".to_string()]),
            "\"a\\\"\\nb\""
        );
    }
}
