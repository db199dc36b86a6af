//! The words of a package-set diff or check: the header, the cause sentences
//! ("libhuge 1.0 added to 4,812 closures, +400 MiB each, +1.9 TiB in all"), the
//! mass-rebuild summary and the verdict, shared by the table, Markdown and HTML.

use crate::render::text::{format_delta, name_of, one_line, thousands, version_list};
use crate::report::{Cause, CauseChange, GrowthLimit, SetDiffReport};
use crate::store::format_size;

fn pct(p: Option<f64>) -> String {
    match p {
        Some(p) => format!("{p:+.1}%"),
        None => "n/a".to_string(),
    }
}

/// A percentage for a table cell (empty for a root in one set).
pub(crate) fn percent(p: Option<f64>) -> String {
    p.map(|p| format!("{p:+.1}%")).unwrap_or_default()
}

/// One line on the whole diff.
pub(crate) fn header(r: &SetDiffReport) -> String {
    format!(
        "package sets {} → {}: {} roots in both, {} only in OLD, {} only in NEW; their closures \
         summed {} → {} ({}, {})",
        one_line(&r.old.origin),
        one_line(&r.new.origin),
        thousands(r.counts.both as u64),
        thousands(r.counts.only_old as u64),
        thousands(r.counts.only_new as u64),
        format_size(r.total.old),
        format_size(r.total.new),
        format_delta(r.total.delta),
        pct(r.total.percent)
    )
}

/// How many roots grew, shrank, stayed.
pub(crate) fn counts(r: &SetDiffReport) -> String {
    format!(
        "{} roots grew, {} shrank, {} kept their closure size; the graphs: {} paths ({}) → {} \
         paths ({})",
        thousands(r.counts.grown as u64),
        thousands(r.counts.shrunk as u64),
        thousands(r.counts.unchanged as u64),
        thousands(r.old.path_count as u64),
        format_size(r.old.union_size),
        thousands(r.new.path_count as u64),
        format_size(r.new.union_size)
    )
}

/// The mass rebuild, in one sentence.
pub(crate) fn rebuild(r: &SetDiffReport) -> String {
    let b = &r.rebuild;
    format!(
        "rebuilt: {} paths with a new hash and the same name ({} of them the same size, {}); {} \
         roots rebuilt with an unchanged closure size; {} paths with new names, {} names gone",
        thousands(b.paths_rebuilt as u64),
        thousands(b.paths_rebuilt_same_size as u64),
        format_size(b.bytes_rebuilt_same_size),
        thousands(b.roots_rebuilt_same_size as u64),
        thousands(b.paths_added as u64),
        thousands(b.paths_removed as u64)
    )
}

/// The versions of a cause: `1.0`, `3.0.12 → 3.0.13`.
pub(crate) fn versions(c: &Cause) -> String {
    match c.change {
        CauseChange::Added => version_list(&c.new_versions),
        CauseChange::Removed => version_list(&c.old_versions),
        _ if c.old_versions == c.new_versions => version_list(&c.new_versions),
        _ => format!(
            "{} → {}",
            version_list(&c.old_versions),
            version_list(&c.new_versions)
        ),
    }
}

/// "libhuge 1.0 added to 4,812 closures, +400 MiB each, +1.9 TiB in all".
pub(crate) fn cause(c: &Cause) -> String {
    let verb = match c.change {
        CauseChange::Added => "added to",
        CauseChange::Removed => "removed from",
        CauseChange::Grown => "grew in",
        CauseChange::Shrunk => "shrank in",
    };
    let n = c.roots.max(1) as i64;
    let each = if c.bytes % n == 0 {
        format!("{} each", format_delta(c.bytes / n))
    } else {
        format!("{} per root on average", format_delta(c.bytes / n))
    };
    format!(
        "{} {} {verb} {} closure{}, {each}, {} in all",
        c.name,
        versions(c),
        thousands(c.roots as u64),
        if c.roots == 1 { "" } else { "s" },
        format_delta(c.bytes)
    )
}

/// The example chain, by names: `hello → libfoo-1.2 → libhuge-1.0`.
pub(crate) fn chain(c: &Cause) -> String {
    c.chain
        .iter()
        .map(|p| name_of(p))
        .collect::<Vec<_>>()
        .join(" → ")
}

fn limit(l: GrowthLimit) -> String {
    match l {
        GrowthLimit::Percent(p) => format!("{p}%"),
        GrowthLimit::Bytes(b) => format_size(b),
    }
}

/// The verdict of `check` on package sets (empty for a plain diff).
pub(crate) fn verdict(r: &SetDiffReport) -> Vec<String> {
    let Some(c) = &r.check else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    if c.pass {
        lines.push("PASS: no root and no total grew beyond the limits".to_string());
    } else {
        lines.push("FAIL".to_string());
    }
    if let Some(l) = c.max_growth {
        lines.push(format!(
            "{} of {} roots grew by more than {} (--max-growth)",
            thousands(c.roots_failed as u64),
            thousands(r.counts.both as u64),
            limit(l)
        ));
    }
    if let Some(l) = c.max_total_growth {
        lines.push(format!(
            "the roots' closures summed grew {} ({}); the limit is {} (--max-total-growth): {}",
            format_delta(r.total.delta),
            pct(r.total.percent),
            limit(l),
            if c.total_failed { "exceeded" } else { "within" }
        ));
    }
    lines
}

/// What failed, one sentence each: the total (`--max-total-growth`), then each failing
/// root shown (`--top`) and a count of the rest. Empty when the check passed.
pub(crate) fn failures(r: &SetDiffReport) -> Vec<String> {
    let Some(c) = &r.check else {
        return Vec::new();
    };
    if c.pass {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let (Some(l), true) = (c.max_total_growth, c.total_failed) {
        out.push(format!(
            "the roots' closures summed grew {} ({}), beyond the limit of {} (--max-total-growth)",
            format_delta(r.total.delta),
            pct(r.total.percent),
            limit(l)
        ));
    }
    if let Some(l) = c.max_growth {
        for f in &c.failed {
            out.push(format!(
                "grew beyond {} (--max-growth): {}",
                limit(l),
                failed_root(f)
            ));
        }
        let rest = c.roots_failed.saturating_sub(c.failed.len());
        if rest > 0 {
            out.push(format!(
                "… and {} more root(s) grew beyond {} (--max-growth)",
                thousands(rest as u64),
                limit(l)
            ));
        }
    }
    out
}

/// One failing root: `hello +12.0 MiB (+30.0%): libhuge added +10.0 MiB, …`.
pub(crate) fn failed_root(f: &crate::report::FailedRoot) -> String {
    let causes: Vec<String> = f
        .causes
        .iter()
        .map(|c| format!("{} {} {}", c.name, c.change.as_str(), format_delta(c.bytes)))
        .collect();
    format!(
        "{} {} → {} ({}, {}): {}",
        one_line(&f.name),
        format_size(f.old),
        format_size(f.new),
        format_delta(f.delta),
        pct(f.percent),
        causes.join(", ")
    )
}

/// What the numbers mean.
pub(crate) const NOTE: &str = "Roots are matched by package name and output. A cause is a \
package (all versions and outputs) entering (added), leaving (removed) or changing size in \
(grown, shrunk) the closures of roots in both sets; its bytes are summed over those roots, \
and all causes add up to the change of the closures summed. Rebuilt paths of the same size \
change nothing and are only counted.";
