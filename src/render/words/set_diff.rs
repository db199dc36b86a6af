//! The words of a package-set diff or check: the header, the cause sentences
//! ("libhuge 1.0 added to 4,812 closures, +400 MiB each, +1.9 TiB in all"), the
//! mass-rebuild summary and the verdict, shared by the table, Markdown and HTML.

use crate::render::text::{
    count, format_delta, name_of, one_line, signed_percent, thousands, version_list,
};
use crate::report::{
    Cause, CauseChange, FailedNewRoot, GrowthLimit, OneSidedTotal, RootDiff, RootSide,
    SetDiffReport,
};
use crate::store::format_size;

fn pct(p: Option<f64>) -> String {
    p.map_or_else(|| "n/a".to_string(), signed_percent)
}

/// A percentage for a table cell (empty for a root in one set).
pub(crate) fn percent(p: Option<f64>) -> String {
    p.map(signed_percent).unwrap_or_default()
}

/// `1 root added (+2.0 MiB)`, `no root removed`.
fn one_sided(t: &OneSidedTotal, verb: &str, sign: i64) -> String {
    if t.roots == 0 {
        return format!("no root {verb}");
    }
    let bytes = i64::try_from(t.closure_size).unwrap_or(i64::MAX) * sign;
    format!(
        "{} {verb} ({})",
        count(t.roots as u64, "root", "roots"),
        format_delta(bytes)
    )
}

/// A change of size with its sign: `5.0 MiB → 7.0 MiB (+2.0 MiB)`.
fn from_to(old: u64, new: u64) -> String {
    let delta = i128::from(new) - i128::from(old);
    let delta = i64::try_from(delta).unwrap_or(if delta > 0 { i64::MAX } else { i64::MIN });
    format!(
        "{} → {} ({})",
        format_size(old),
        format_size(new),
        format_delta(delta)
    )
}

/// One line on the whole diff: the graphs, the matched roots' closures summed, and the
/// roots added and removed.
pub(crate) fn header(r: &SetDiffReport) -> String {
    format!(
        "package sets {} → {}: the graphs {}; {}, their closures summed {} → {} ({}, {}); \
         {}; {}",
        one_line(&r.old.origin),
        one_line(&r.new.origin),
        from_to(r.old.union_size, r.new.union_size),
        count(r.counts.both as u64, "root in both", "roots in both"),
        format_size(r.total.old),
        format_size(r.total.new),
        format_delta(r.total.delta),
        pct(r.total.percent),
        one_sided(&r.total.added, "added", 1),
        one_sided(&r.total.removed, "removed", -1),
    )
}

/// How many roots grew, shrank, stayed; the graphs' paths; every root summed; the
/// download sizes, where the inputs give them.
pub(crate) fn counts(r: &SetDiffReport) -> String {
    let c = &r.counts;
    let mut s = format!(
        "{} grew, {} shrank, {} kept {} closure size; every root's closure summed {}; the \
         graphs: {} ({}) → {} ({})",
        count(c.grown as u64, "root", "roots"),
        thousands(c.shrunk as u64),
        thousands(c.unchanged as u64),
        if c.unchanged == 1 { "its" } else { "their" },
        from_to(r.total.all_roots.old, r.total.all_roots.new),
        count(r.old.path_count as u64, "path", "paths"),
        format_size(r.old.union_size),
        count(r.new.path_count as u64, "path", "paths"),
        format_size(r.new.union_size)
    );
    if let (Some(o), Some(n)) = (r.old.union_download_size, r.new.union_download_size) {
        s.push_str(&format!("; download size of the graphs {}", from_to(o, n)));
        if let (Some(o), Some(n)) = (r.total.download_old, r.total.download_new) {
            s.push_str(&format!(", of the roots in both summed {}", from_to(o, n)));
        }
    }
    if r.changed_only {
        s.push_str("; roots whose closure size did not change are not listed (--changed-only)");
    }
    s
}

/// The mass rebuild, in one sentence.
pub(crate) fn rebuild(r: &SetDiffReport) -> String {
    let b = &r.rebuild;
    format!(
        "rebuilt: {} with a new hash and the same name ({} of them the same size, {}); {} \
         with an unchanged closure size; {} with new names, {} gone",
        count(b.paths_rebuilt as u64, "path", "paths"),
        thousands(b.paths_rebuilt_same_size as u64),
        format_size(b.bytes_rebuilt_same_size),
        count(
            b.roots_rebuilt_same_size as u64,
            "root rebuilt",
            "roots rebuilt"
        ),
        count(b.paths_added as u64, "path", "paths"),
        count(b.paths_removed as u64, "name", "names")
    )
}

/// The versions of a cause: `1.0`, `3.0.12 → 3.0.13` (whenever the package's versions
/// differ between the graphs, whatever the change).
pub(crate) fn versions(c: &Cause) -> String {
    match c.change {
        _ if !c.old_versions.is_empty()
            && !c.new_versions.is_empty()
            && c.old_versions != c.new_versions =>
        {
            format!(
                "{} → {}",
                version_list(&c.old_versions),
                version_list(&c.new_versions)
            )
        }
        CauseChange::Added => version_list(&c.new_versions),
        CauseChange::Removed => version_list(&c.old_versions),
        _ => version_list(&c.new_versions),
    }
}

/// A root's name for a row: its name, its version or change of version, and the
/// attribute path the set names it by: `hello 2.12 → 2.12.1 (hello)`.
pub(crate) fn root_name(r: &RootDiff) -> String {
    let mut s = r.name.clone();
    fn v(x: &Option<RootSide>) -> &str {
        x.as_ref().map_or("", |x| x.version.as_str())
    }
    match (v(&r.old), v(&r.new)) {
        ("", "") => {}
        (o, n) if o == n || o.is_empty() => s = format!("{s} {n}"),
        (o, "") => s = format!("{s} {o}"),
        (o, n) => s = format!("{s} {o} → {n}"),
    }
    if let Some(a) = attr_of(r) {
        s = format!("{s} ({})", attr(a));
    }
    s
}

/// An attribute path as reports print it: what the set said, with every character
/// that would act on a terminal replaced (a job listing is untrusted input).
fn attr(a: &str) -> String {
    crate::store::sanitize(a, 200)
}

/// The attribute path of a root: NEW's, else OLD's.
fn attr_of(r: &RootDiff) -> Option<&str> {
    [&r.new, &r.old]
        .into_iter()
        .flatten()
        .find_map(|x| x.attr.as_deref())
}

/// A root's closure size cell (`—` for the side it is not in).
pub(crate) fn size(s: &Option<RootSide>) -> String {
    s.as_ref()
        .map_or("—".to_string(), |s| format_size(s.closure_size))
}

/// Whether any listed root has a download size: the column is shown then.
pub(crate) fn has_downloads(r: &SetDiffReport) -> bool {
    r.roots
        .iter()
        .flat_map(|x| [&x.old, &x.new])
        .flatten()
        .any(|x| x.download_size.is_some())
}

/// A root's download cell: its closure's download size in NEW (in OLD for a removed
/// root), `old → new` when it changed; `—` when unknown.
pub(crate) fn download(r: &RootDiff) -> String {
    let d = |x: &Option<RootSide>| x.as_ref().and_then(|x| x.download_size);
    match (d(&r.old), d(&r.new), r.new.is_some()) {
        (Some(o), Some(n), _) if o != n => format!("{} → {}", format_size(o), format_size(n)),
        (_, Some(n), true) => format_size(n),
        (Some(o), None, false) => format_size(o),
        _ => "—".to_string(),
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
        "{} {} {verb} {}, {each}, {} in all",
        c.name,
        versions(c),
        count(c.roots as u64, "closure", "closures"),
        format_delta(c.bytes)
    )
}

/// The example chain, by names, after the example root's attribute path when the set
/// names one: `hello: hello-2.12.1 → libfoo-1.2 → libhuge-1.0`.
pub(crate) fn chain(c: &Cause) -> String {
    let names = c
        .chain
        .iter()
        .map(|p| name_of(p))
        .collect::<Vec<_>>()
        .join(" → ");
    match &c.example_attr {
        Some(a) => format!("{}: {names}", attr(a)),
        None => names,
    }
}

/// `… 1 more cause`, `… 3 more roots`.
pub(crate) fn more(n: usize, one: &str, many: &str) -> String {
    format!("… {} more", count(n as u64, one, many))
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
        lines.push("PASS: no root, no new root and no total beyond the limits".to_string());
    } else {
        lines.push("FAIL".to_string());
    }
    if let Some(l) = c.max_growth {
        lines.push(format!(
            "{} of {} grew by more than {} (--max-growth)",
            thousands(c.roots_failed as u64),
            count(r.counts.both as u64, "root in both", "roots in both"),
            limit(l)
        ));
    }
    if let Some(l) = c.max_total_growth {
        lines.push(format!(
            "{}; the limit is {} (--max-total-growth): {}",
            total_growth(r),
            limit(l),
            if c.total_failed { "exceeded" } else { "within" }
        ));
    }
    if let Some(max) = c.max_new_root_size {
        lines.push(format!(
            "{} of {} only in NEW {} more than {} (--max-new-root-size)",
            thousands(c.new_roots_failed as u64),
            count(r.counts.only_new as u64, "root", "roots"),
            if c.new_roots_failed == 1 {
                "brings"
            } else {
                "bring"
            },
            format_size(max)
        ));
    }
    lines
}

/// What `--max-total-growth` gates, with its parts: `every root's closure summed grew
/// +1.9 MiB (+6.8%): −118.4 KiB in the roots in both, +2.0 MiB added, 0 B removed`.
fn total_growth(r: &SetDiffReport) -> String {
    let t = &r.total;
    let signed = |b: u64, sign: i64| i64::try_from(b).unwrap_or(i64::MAX) * sign;
    format!(
        "every root's closure summed changed {} ({}): {} in the roots in both, {} added, {} \
         removed",
        format_delta(t.all_roots.delta),
        pct(t.all_roots.percent),
        format_delta(t.delta),
        format_delta(signed(t.added.closure_size, 1)),
        format_delta(signed(t.removed.closure_size, -1)),
    )
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
            "{}, beyond the limit of {} (--max-total-growth)",
            total_growth(r),
            limit(l)
        ));
    }
    if let Some(max) = c.max_new_root_size {
        for f in &c.failed_new {
            out.push(format!(
                "a root only in NEW brings more than {} (--max-new-root-size): {}",
                format_size(max),
                failed_new_root(f)
            ));
        }
        let rest = c.new_roots_failed.saturating_sub(c.failed_new.len());
        if rest > 0 {
            out.push(format!(
                "{} only in NEW bring more than {} (--max-new-root-size)",
                more(rest, "root", "roots"),
                format_size(max)
            ));
        }
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
                "{} grew beyond {} (--max-growth)",
                more(rest, "root", "roots"),
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
    let name = match &f.attr {
        Some(a) => format!("{} ({})", one_line(&f.name), attr(a)),
        None => one_line(&f.name).into_owned(),
    };
    format!(
        "{} {} → {} ({}, {}): {}",
        name,
        format_size(f.old),
        format_size(f.new),
        format_delta(f.delta),
        pct(f.percent),
        causes.join(", ")
    )
}

/// A root only in NEW over `--max-new-root-size`: `cuda-samples (cudaPackages.cuda-samples)
/// 2.0 GiB, /nix/store/…`.
pub(crate) fn failed_new_root(f: &FailedNewRoot) -> String {
    let name = match &f.attr {
        Some(a) => format!("{} ({})", one_line(&f.name), attr(a)),
        None => one_line(&f.name).into_owned(),
    };
    format!(
        "{name} {} ({})",
        format_size(f.closure_size),
        one_line(&f.path)
    )
}

/// What the numbers mean.
pub(crate) const NOTE: &str = "Roots are matched by package name and output. A cause is a \
package (all versions and outputs) entering (added), leaving (removed) or changing size in \
(grown, shrunk) the closures of roots in both sets; its bytes are summed over those roots, \
and all causes add up to the change of the closures summed. Roots in one set only make no \
cause: they are counted and summed apart (added, removed). Rows are ranked by the size of \
the change, growth and shrinkage alike. Rebuilt paths of the same size change nothing and are \
only counted.";
