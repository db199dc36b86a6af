//! The headline of a pull-request comment, in at most three sentences a reviewer reads
//! before anything else: the verdict (the title), the total change, and the largest
//! cause with its bytes and the roots it reaches. The numbers are the report's; the
//! largest cause is the one whose change is largest in size, whatever its sign.

use crate::render::text::{count, format_delta, name_of, signed_percent, thousands};
use crate::render::words;
use crate::report::{CheckReport, DiffReport, PackageChange, PackageDiff, SetDiffReport};
use crate::store::format_size;

/// The headline: a title and the lines under it (plain text; the format escapes it).
pub(crate) struct Headline {
    pub title: String,
    /// `(label, sentence)` pairs: `total`, `largest cause`, …
    pub lines: Vec<(&'static str, String)>,
}

fn percent(p: Option<f64>) -> String {
    p.map_or_else(|| "n/a".to_string(), signed_percent)
}

fn verdict(pass: bool, what: &str) -> String {
    if pass {
        format!("✅ nixcut: the {what} check passed")
    } else {
        format!("❌ nixcut: the {what} check failed")
    }
}

/// The package whose impact is largest in size (grown or shrunk), other than the
/// roots' own packages (a root's impact is its whole closure's change: no cause) unless
/// nothing else changed.
fn largest_package(r: &DiffReport) -> Option<&PackageDiff> {
    let roots: Vec<&str> = [&r.old.closure, &r.new.closure]
        .iter()
        .flat_map(|c| c.roots.iter().chain(std::iter::once(&c.root)))
        .map(|p| crate::store::parse_package_name(name_of(p)).pname)
        .collect();
    r.packages
        .iter()
        .filter(|p| !roots.contains(&p.package.as_str()))
        .max_by_key(|p| p.impact.unsigned_abs())
        .or_else(|| r.packages.iter().max_by_key(|p| p.impact.unsigned_abs()))
}

fn change_word(p: &PackageDiff) -> &'static str {
    match p.change {
        PackageChange::Added => "added",
        PackageChange::Removed => "removed",
        PackageChange::Version => "changed version",
        PackageChange::Rebuilt => "rebuilt",
    }
}

/// `libhuge 1.0 added: +400.0 MiB in the closure of hello (NAR Δ +400.0 MiB, +1 path)`.
fn package_cause(r: &DiffReport, p: &PackageDiff) -> String {
    let versions = words::diff::versions_short(p);
    let roots = &r.new.closure.roots;
    let of = if roots.len() > 1 {
        format!("the closure of {} roots", thousands(roots.len() as u64))
    } else {
        format!("the closure of {}", name_of(&r.new.closure.root))
    };
    let paths = words::diff::path_counts(p);
    format!(
        "{}{} {}: {} in {of} (NAR Δ {}{})",
        p.package,
        if versions.is_empty() {
            String::new()
        } else {
            format!(" {versions}")
        },
        change_word(p),
        format_delta(p.impact),
        format_delta(p.nar_delta),
        if paths.is_empty() {
            String::new()
        } else {
            format!(", paths {paths}")
        }
    )
}

/// The headline of a closure diff.
pub(crate) fn diff(r: &DiffReport) -> Headline {
    let cause = match largest_package(r) {
        Some(p) => package_cause(r, p),
        None => "no package changed".to_string(),
    };
    Headline {
        title: "nixcut: closure size".to_string(),
        lines: vec![("total", words::diff::header(r)), ("largest cause", cause)],
    }
}

/// The headline of a package-set diff or check.
pub(crate) fn set_diff(r: &SetDiffReport) -> Headline {
    let title = match &r.check {
        Some(c) => verdict(c.pass, "package-set size"),
        None => "nixcut: package-set closure sizes".to_string(),
    };
    let c = &r.counts;
    let total = format!(
        "the closures of {} summed {} → {} ({}, {}); {} only in NEW, {} only in OLD; \
         the graphs {} → {}",
        count(c.both as u64, "root in both sets", "roots in both sets"),
        format_size(r.total.old),
        format_size(r.total.new),
        format_delta(r.total.delta),
        percent(r.total.percent),
        count(c.only_new as u64, "root", "roots"),
        thousands(c.only_old as u64),
        format_size(r.old.union_size),
        format_size(r.new.union_size),
    );
    let cause = match r.causes.iter().max_by_key(|c| c.bytes.unsigned_abs()) {
        Some(c) => {
            let chain = words::set_diff::chain(c);
            if chain.is_empty() {
                words::set_diff::cause(c)
            } else {
                format!("{} (e.g. {chain})", words::set_diff::cause(c))
            }
        }
        None => "no package changed a root's closure size".to_string(),
    };
    let mut lines = Vec::new();
    if let Some(ch) = &r.check {
        if !ch.pass {
            let failed = words::set_diff::failures(r);
            if let Some(first) = failed.first() {
                lines.push(("failed", first.clone()));
            }
        }
    }
    lines.push(("total", total));
    lines.push(("largest cause", cause));
    Headline { title, lines }
}

/// The headline of a closure check, with the diff against its baseline when given.
pub(crate) fn check(r: &CheckReport, diff: Option<&DiffReport>) -> Headline {
    let mut lines = Vec::new();
    if let Some(first) = r.failures.first() {
        lines.push(("failed", first.to_string()));
    }
    let total = match &r.baseline {
        Some(b) => format!(
            "closure {} → {} ({}, {}) over the baseline; the limit is {}",
            format_size(b.baseline_size),
            format_size(b.measured),
            format_delta(b.growth),
            percent(b.growth_percent),
            format_size(b.limit)
        ),
        None => format!(
            "closure {} in {}; the limit is {}",
            format_size(r.closure_size),
            count(r.path_count as u64, "path", "paths"),
            format_size(r.limit)
        ),
    };
    lines.push(("total", total));
    // The diff's largest package; else the first path the criteria rank (by added
    // size): new since the baseline, only in ROOT against OTHER, the largest in ROOT.
    let path = |c: &crate::report::Contributor, what: &str| {
        format!(
            "{} ({what}): +{} in the closure, via {}",
            name_of(&c.path),
            format_size(c.added_size),
            crate::render::text::via_chain(&c.chain)
        )
    };
    let ranked = r
        .baseline
        .as_ref()
        .and_then(|b| {
            b.new_paths
                .top
                .first()
                .map(|c| path(c, "new since the baseline"))
        })
        .or_else(|| {
            r.against.as_ref().and_then(|a| {
                let other = format!("not in {}", name_of(&a.other_root));
                a.only_in_root.top.first().map(|c| path(c, &other))
            })
        })
        .or_else(|| {
            r.max_size
                .as_ref()
                .and_then(|m| m.largest.first().map(|c| path(c, "the largest")))
        });
    let cause = match diff.and_then(|d| largest_package(d).map(|p| (d, p))) {
        Some((d, p)) => package_cause(d, p),
        None => ranked.unwrap_or_else(|| "no path is new".to_string()),
    };
    lines.push(("largest cause", cause));
    Headline {
        title: verdict(r.pass, "closure size"),
        lines,
    }
}
