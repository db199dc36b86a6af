//! The words of the `why` reports: header lines, the "via" and "kept in by" cells, the
//! note on the ranking, and the lines of the chain tree; shared by table and Markdown.
//!
//! Verdicts, kinds and the sort key are read through `Display` only, whatever type the
//! report gives them.

use super::refs::kind_sum;
use crate::classify::Verdict;
use crate::render::text::{count, name_of, shorten_end, thousands, tree_prefix, via_chain};
use crate::report::{
    ChainNode, EvidenceLevel, HopEvidence, WhyChainsReport, WhyPath, WhyReport, WhySavings,
};
use crate::store::format_size;

/// A size, marked as a lower bound when some NAR sizes were unknown.
pub(crate) fn size_or_unknown(bytes: u64, known: bool) -> String {
    if known {
        format_size(bytes)
    } else {
        format!("≥{}", format_size(bytes))
    }
}

/// The chain from the root to the path's parent, as names: `llama-cpp-rocm → rocblas`;
/// its middle is `…` when long or cut (`chain_omitted`).
pub(crate) fn via(p: &WhyPath) -> String {
    // Only the ends are read: a chain may be 50,000 paths deep.
    if p.chain.len() <= 4 && p.chain_omitted == 0 {
        return via_chain(&p.chain.to_vec());
    }
    let first = p.chain.head().first().map_or("", |s| name_of(s));
    if p.chain.len() <= 2 {
        // Cut to the root and the path: its referrer is not listed.
        return format!("{first} → …");
    }
    let last_hop = p.chain.rev_iter().nth(1).map_or("", |s| name_of(s));
    format!("{first} → … → {last_hop}")
}

/// `rocblas-5.7.1: 26 symlink → gpu:gfx900,gfx906`
fn hop_summary(h: &HopEvidence) -> String {
    let kinds = kind_sum(h.kinds.iter().map(|(k, n)| (k, *n)));
    format!("{}: {kinds} → {}", name_of(&h.referrer), h.verdict)
}

/// The main reason a path is kept, on one line: the first referrer's evidence (the one
/// on its shortest chain), or the chain itself at graph level, and how many other
/// referrers there are.
///
/// In at most `width` characters: a GPU verdict naming many
/// architectures is shortened first (`gpu:gfx900,+3`), so that the referrer and the
/// evidence count stay on the line; then the end is cut.
pub(crate) fn main_reason_fit(p: &WhyPath, width: usize) -> String {
    let full = main_reason_with(p, false);
    if full.chars().count() <= width {
        return full;
    }
    shorten_end(&main_reason_with(p, true), width)
}

/// `gpu:gfx900,gfx906,gfx908,gfx90a` → `gpu:gfx900,+3`; other verdicts as they are.
fn short_verdict(v: &Verdict) -> String {
    match v {
        Verdict::Gpu(archs) if archs.len() > 2 => {
            let mut archs = archs.iter();
            let first = archs.next().map(ToString::to_string).unwrap_or_default();
            format!("gpu:{first},+{}", archs.len())
        }
        _ => v.to_string(),
    }
}

fn main_reason_with(p: &WhyPath, short: bool) -> String {
    // GPU code first: on a GPU closure it is the point of the line.
    let gpu = p.gpu.as_ref().map(|g| {
        let mut archs: Vec<(&String, &u64)> = g.archs.iter().collect();
        archs.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        let names: Vec<&str> = archs.iter().take(2).map(|(a, _)| a.as_str()).collect();
        let more = archs.len().saturating_sub(2);
        let pct = if p.nar_size > 0 {
            (g.bytes + g.generic_bytes) as f64 * 100.0 / p.nar_size as f64
        } else {
            0.0
        };
        format!(
            "GPU {pct:.0}%{}{} · ",
            if names.is_empty() {
                String::new()
            } else {
                format!(" {}", names.join(","))
            },
            if more > 0 {
                format!(",+{more}")
            } else {
                String::new()
            }
        )
    });
    let reason = main_reason_of(p, short);
    match gpu {
        Some(g) => format!("{g}{reason}"),
        None => reason,
    }
}

fn main_reason_of(p: &WhyPath, short: bool) -> String {
    match p.kept_by.first() {
        Some(h) => {
            // The verdict first: it is what a reader scans for, and a narrow terminal
            // cuts the end of the line.
            let kinds = kind_sum(h.kinds.iter().map(|(k, n)| (k, *n)));
            let others = p.kept_by.len() - 1 + p.kept_by_more;
            let more = if others > 0 {
                format!(" (+{others} more)")
            } else {
                String::new()
            };
            let verdict = if short {
                short_verdict(&h.verdict)
            } else {
                h.verdict.to_string()
            };
            format!("{verdict} ← {}: {kinds}{more}", name_of(&h.referrer))
        }
        None if p.chain.len() <= 1 => "(root)".to_string(),
        None => format!("via {}", via(p)),
    }
}

/// Said when some shown paths were listed without evidence (`--evidence-paths`).
pub(crate) fn evidence_note(r: &WhyReport) -> Option<String> {
    let mut notes = Vec::new();
    if r.evidence == EvidenceLevel::Files && r.evidence_paths < r.paths.len() {
        notes.push(format!(
            "Evidence for the first {} only (--evidence-paths N|all for more).",
            count(r.evidence_paths as u64, "path", "paths")
        ));
    }
    if r.verdict_scope == Some(crate::report::VerdictScope::PerPath) {
        notes.push(
            "Verdicts judge each referrer on its own files: what ROOT itself runs would need \
             every NAR of the closure; `refs --closure ROOT` gives ROOT's verdicts."
                .to_string(),
        );
    }
    (!notes.is_empty()).then(|| notes.join(" "))
}

/// The "kept in by" cell: each scanned referrer's evidence, and how many were not.
pub(crate) fn kept_by(p: &WhyPath) -> String {
    let mut lines: Vec<String> = p.kept_by.iter().map(hop_summary).collect();
    if p.kept_by_more > 0 {
        lines.push(format!("(+{} more referrers)", p.kept_by_more));
    }
    lines.join("\n")
}

/// One line of hop evidence for the chain tree: the first piece, and the count.
fn hop_line(h: &HopEvidence) -> String {
    let total = h.hit_count();
    match h.evidence.first() {
        Some(e) => {
            let more = if total > 1 {
                format!(", +{} more", total - 1)
            } else {
                String::new()
            };
            format!(
                "  ← {} @{} {} ({}{more})",
                e.file, e.offset, e.kind, h.verdict
            )
        }
        None => format!("  ← ({})", h.verdict),
    }
}

/// `llama-cpp-rocm-0.0.0: closure 10.6 GiB in 164 paths`.
pub(crate) fn header(r: &WhyReport) -> String {
    let root = if r.roots.len() > 1 {
        format!("{} roots", r.roots.len())
    } else {
        name_of(&r.root).to_string()
    };
    format!(
        "{root}: closure {} in {}",
        size_or_unknown(r.closure_size, r.sizes_known),
        count(r.path_count as u64, "path", "paths")
    )
}

/// What the ranking is by.
pub(crate) fn sort_note(r: &WhyReport) -> &'static str {
    match r.sort.to_string().as_str() {
        "closure" => "ranked by closure size",
        "nar" => "ranked by NAR size",
        _ => "ranked by added size (what leaving the path out would free)",
    }
}

/// `3 chain(s) from a to b through 7 paths; b adds 1.2 MiB to the closure`.
pub(crate) fn chains_header(r: &WhyChainsReport) -> String {
    if r.tree.is_none() {
        return format!(
            "{} does not depend on {}",
            name_of(&r.root),
            name_of(&r.target)
        );
    }
    let chains = if r.chain_count_saturated {
        format!("more than {} chains", thousands(r.chain_count))
    } else {
        count(r.chain_count, "chain", "chains")
    };
    let mut s = format!(
        "{chains} from {} to {} through {}; {} adds {} to the closure",
        name_of(&r.root),
        name_of(&r.target),
        count(r.paths_on_chains as u64, "path", "paths"),
        name_of(&r.target),
        format_size(r.target_added_size)
    );
    if let Some(rest) = r.chains_not_shown.filter(|&n| n > 0) {
        s.push_str(&format!(
            "; {} not shown (--max-chains)",
            count(rest, "chain", "chains")
        ));
    }
    s
}

/// How deep the tree is drawn with bars; a deeper line says its depth instead, so that
/// a chain 50,000 paths deep prints in linear, not quadratic, space.
pub(crate) const DRAWN_DEPTH: usize = 48;

/// The chain tree as lines, depth first, in the style of `nix why-depends`. Lines
/// deeper than [`DRAWN_DEPTH`] start with `[depth N]` after the drawn levels.
pub(crate) fn tree_lines(root: &ChainNode) -> Vec<String> {
    tree_lines_with(root, false)
}

/// [`tree_lines`], with store paths as `<7 hash chars>…-<name>` when `short` (a
/// narrow terminal).
pub(crate) fn tree_lines_with(root: &ChainNode, short: bool) -> Vec<String> {
    let node_label = |n: &ChainNode| node_label(n, short);
    let mut out = vec![node_label(root)];
    // The ancestors' "last child" flags, as deep as the node being drawn.
    let mut anc: Vec<bool> = Vec::new();
    // Stack of (node, depth, last); children pushed in reverse.
    let mut stack: Vec<(&ChainNode, usize, bool)> = Vec::new();
    for (i, c) in root.children.iter().enumerate().rev() {
        stack.push((c, 0, i + 1 == root.children.len()));
    }
    while let Some((n, depth, last)) = stack.pop() {
        anc.truncate(depth);
        let drawn = &anc[..depth.min(DRAWN_DEPTH)];
        let prefix = tree_prefix(drawn, last);
        if depth > DRAWN_DEPTH {
            out.push(format!("{prefix}[depth {}] {}", depth + 1, node_label(n)));
        } else {
            out.push(format!("{prefix}{}", node_label(n)));
        }
        anc.push(last);
        for (i, c) in n.children.iter().enumerate().rev() {
            stack.push((c, depth + 1, i + 1 == n.children.len()));
        }
    }
    out
}

fn node_label(n: &ChainNode, short: bool) -> String {
    let path = if short {
        crate::render::text::short_path(&n.path)
    } else {
        n.path.clone()
    };
    let mut s = if n.repeat {
        format!("{path} (see above)")
    } else {
        path
    };
    if let Some(h) = &n.via {
        s.push_str(&hop_line(h));
    }
    s
}

/// The savings lines: the closure after every safe split suggestion, then each of the
/// three largest as a command that runs as written (the full base name, which no other
/// path shares, and `--for` the input the report was read from) with what it saves
/// alone. Suggestions that save nothing are left out.
///
/// The suggestions come from the referrers scanned, those of the first `scanned` paths
/// (`--evidence-paths`), and the line says so: another `--top` scans others.
pub(crate) fn savings_lines(s: &WhySavings, origin: &str, scanned: usize) -> Vec<String> {
    let mut lines = vec![format!(
        "after every safe split suggestion among the referrers of the first {} \
         (--evidence-paths N|all for more): {} → {}{}",
        count(scanned as u64, "path", "paths"),
        format_size(s.closure_size_before),
        format_size(s.closure_size_after),
        if s.suggestions.iter().any(|x| x.saved > 0) {
            "; the largest alone:"
        } else {
            ""
        }
    )];
    for x in s.suggestions.iter().filter(|x| x.saved > 0).take(3) {
        let base = x
            .package
            .rsplit_once('/')
            .map_or(x.package.as_str(), |(_, b)| b);
        lines.push(format!(
            "  nixcut split {} --for {}   # saves {}",
            shell_word(base),
            shell_word(origin),
            format_size(x.saved)
        ));
    }
    lines
}

/// `s` as one shell word: as it is when it holds only characters no shell treats
/// specially, else in single quotes.
pub(crate) fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '/' | '.' | '-' | '_' | '+' | ':' | '=' | ',' | '@')
        });
    if plain {
        s.to_string()
    } else if s.chars().any(crate::store::is_terminal_hazard) {
        // Bash's $'…' with every control and bidirectional character as \u escapes, so
        // that none reaches a terminal raw and the word still means the same.
        let mut w = String::from("$'");
        for c in s.chars() {
            match c {
                '\'' | '\\' => {
                    w.push('\\');
                    w.push(c);
                }
                c if crate::store::is_terminal_hazard(c) => {
                    w.push_str(&format!("\\U{:08x}", u32::from(c)))
                }
                c => w.push(c),
            }
        }
        w.push('\'');
        w
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `/nix/store/…-x: lib/libx.so: cannot read: …`.
impl std::fmt::Display for crate::report::WhyWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::report::WhyWarning as W;
        match self {
            W::Load(w) => w.fmt(f),
            W::Input(w) => f.write_str(w),
            W::Evidence { path, warning } => write!(f, "{path}: {warning}"),
        }
    }
}

/// In JSON a warning is its sentence.
impl serde::Serialize for crate::report::WhyWarning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
