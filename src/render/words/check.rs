//! The words of the `check` report: its failure and warning sentences (which are also
//! its JSON, through the `Serialize` impls here), the header line, the rows of the
//! criteria table and the titles of its path lists, shared by table and Markdown.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::render::text::{format_delta, name_of};
use crate::report::{
    AllowedGrowth, Blame, CheckFailure, CheckReport, CheckSubject, CheckWarning, Contributor,
    ExtraPaths, PathGroup, RestRow,
};
use crate::store::format_size;

/// How many paths a failure sentence names.
const MESSAGE_NAMES: usize = 5;

impl fmt::Display for CheckSubject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckSubject::Root(p) => f.write_str(name_of(p)),
            CheckSubject::Roots(n) => write!(f, "{n} roots"),
        }
    }
}

impl fmt::Display for AllowedGrowth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllowedGrowth::Percent(p) => write!(f, "{p}%"),
            AllowedGrowth::Bytes(b) => f.write_str(&format_size(*b)),
        }
    }
}

/// `big-blob-1.0 (2.0 MiB), rocblas-5.7.1 (1.2 MiB), … and 3 more`.
fn name_list(b: &Blame) -> String {
    if b.top.is_empty() {
        return "nothing but the root itself".to_string();
    }
    let mut s = b
        .top
        .iter()
        .take(MESSAGE_NAMES)
        .map(|c| format!("{} ({})", name_of(&c.path), format_size(c.added_size)))
        .collect::<Vec<_>>()
        .join(", ");
    let named = b.top.len().min(MESSAGE_NAMES);
    if b.ranked > named {
        s.push_str(&format!(", … and {} more", b.ranked - named));
    }
    s
}

/// ` (3 paths, 2.0 MiB)` for a group, nothing for the whole closure.
fn group(b: &Blame) -> String {
    match b.group {
        Some(PathGroup { count, size }) => format!(
            " ({}, {})",
            crate::render::text::count(count as u64, "path", "paths"),
            format_size(size)
        ),
        None => String::new(),
    }
}

impl fmt::Display for CheckFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckFailure::Baseline {
                subject,
                measured,
                growth,
                growth_percent,
                baseline_size,
                allowed,
                limit,
                new_paths,
            } => write!(
                f,
                "closure of {subject} is {} and grew by {} ({}) over the baseline {}, \
                 more than the allowed {allowed} (limit {}); new since the baseline{}: {}",
                format_size(*measured),
                format_size(growth.unsigned_abs()),
                growth_percent.map_or("+∞%".to_string(), crate::render::text::signed_percent),
                format_size(*baseline_size),
                format_size(*limit),
                group(new_paths),
                name_list(new_paths),
            ),
            CheckFailure::Against {
                subject,
                measured,
                ratio,
                other_root,
                other_size,
                max_ratio,
                limit,
                only_in_root,
            } => write!(
                f,
                "closure of {subject} is {} = {ratio:.2}× that of {} ({}), more than the \
                 allowed {max_ratio}× (limit {}); only in {subject}{}: {}",
                format_size(*measured),
                name_of(other_root),
                format_size(*other_size),
                format_size(*limit),
                group(only_in_root),
                name_list(only_in_root),
            ),
            CheckFailure::MaxSize {
                subject,
                measured,
                limit,
                largest,
            } => write!(
                f,
                "closure of {subject} is {}, over the --max-size limit {} by {}; largest by \
                 added size: {}",
                format_size(*measured),
                format_size(*limit),
                format_size(measured.saturating_sub(*limit)),
                name_list(largest),
            ),
        }
    }
}

impl fmt::Display for CheckWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckWarning::Load(w) => w.fmt(f),
            CheckWarning::Input(w) => f.write_str(w),
            CheckWarning::BaselineShrank { by } => write!(
                f,
                "the closure shrank by {} since the baseline; consider updating it \
                 (`nixcut snapshot`)",
                format_size(*by)
            ),
        }
    }
}

/// In JSON a failure is its sentence (the contract's `failures: [string]`).
impl Serialize for CheckFailure {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// In JSON a warning is its sentence.
impl Serialize for CheckWarning {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One row of the criteria table.
pub(crate) struct Row {
    pub name: &'static str,
    pub measured: String,
    pub limit: String,
    pub reference: String,
    pub difference: String,
    pub pass: bool,
}

/// The criteria asked for, one row each.
pub(crate) fn criteria(r: &CheckReport) -> Vec<Row> {
    let mut rows = Vec::new();
    if let Some(b) = &r.baseline {
        let allowed = match (b.max_growth_percent, b.max_growth_bytes) {
            (Some(p), _) => format!("{p}%"),
            (_, Some(bytes)) => format_size(bytes),
            _ => String::new(),
        };
        rows.push(Row {
            name: "baseline",
            measured: format_size(b.measured),
            limit: format_size(b.limit),
            reference: format!(
                "{} {} + {allowed}",
                name_of(&b.baseline_root),
                format_size(b.baseline_size)
            ),
            difference: match b.growth_percent {
                Some(p) => format!(
                    "{} ({})",
                    format_delta(b.growth),
                    crate::render::text::signed_percent(p)
                ),
                None => format_delta(b.growth),
            },
            pass: b.pass,
        });
    }
    if let Some(a) = &r.against {
        rows.push(Row {
            name: "against",
            measured: format_size(a.measured),
            limit: format_size(a.limit),
            reference: format!(
                "{} {} × {}",
                name_of(&a.other_root),
                format_size(a.other_size),
                a.max_ratio
            ),
            difference: format!("ratio {:.2}×", a.ratio),
            pass: a.pass,
        });
    }
    if let Some(s) = &r.max_size {
        rows.push(Row {
            name: "max-size",
            measured: format_size(s.measured),
            limit: format_size(s.limit),
            reference: String::new(),
            difference: if s.over_by() > 0 {
                format!("{} over", format_size(s.over_by()))
            } else {
                format!("{} to spare", format_size(s.to_spare()))
            },
            pass: s.pass,
        });
    }
    rows
}

/// `pass` or `FAIL`, for a table cell.
pub(crate) fn verdict(pass: bool) -> &'static str {
    if pass {
        "pass"
    } else {
        "FAIL"
    }
}

/// `llama-cpp-rocm-0.0.0: closure 6.9 MiB in 25 paths: FAILED`.
pub(crate) fn header(r: &CheckReport) -> String {
    let h = &r.header.closure;
    let root = if h.roots.len() > 1 {
        format!("{} roots", h.roots.len())
    } else {
        name_of(&h.root).to_string()
    };
    format!(
        "{root}: closure {} in {}: {}",
        format_size(r.closure_size),
        crate::render::text::count(r.path_count as u64, "path", "paths"),
        if r.pass { "pass" } else { "FAILED" }
    )
}

/// A list of paths to show under the criteria: its title, the paths, what it hid.
pub(crate) struct PathList<'a> {
    pub title: String,
    pub paths: &'a [Contributor],
    pub rest: Option<&'a RestRow>,
}

fn extra<'a>(title: &str, e: &'a ExtraPaths) -> PathList<'a> {
    // The root (rebuilt, so new too) is counted but never listed: say so, so that the
    // count matches the rows.
    let listed = e.top.len() + e.rest.as_ref().map_or(0, |r| r.count);
    let unlisted = e.count.saturating_sub(listed);
    let roots = match unlisted {
        0 => String::new(),
        1 => "; the root is one of them and is not listed".to_string(),
        n => format!("; the {n} roots are among them and are not listed"),
    };
    PathList {
        title: format!(
            "{title} ({}, {}{roots}), by added size over the shared part",
            crate::render::text::count(e.count as u64, "path", "paths"),
            format_size(e.size)
        ),
        paths: e.top.as_slice(),
        rest: e.rest.as_ref(),
    }
}

/// The path lists to show, in order.
pub(crate) fn lists(r: &CheckReport) -> Vec<PathList<'_>> {
    let mut out = Vec::new();
    if let Some(b) = &r.baseline {
        if !b.new_paths.top.is_empty() {
            out.push(extra("New since the baseline", &b.new_paths));
        }
    }
    if let Some(a) = &r.against {
        if !a.only_in_root.top.is_empty() {
            out.push(extra(
                &format!(
                    "Only in {}, not in {}",
                    name_of(&r.header.closure.root),
                    name_of(&a.other_root)
                ),
                &a.only_in_root,
            ));
        }
    }
    if let Some(s) = &r.max_size {
        if !s.pass && !s.largest.is_empty() {
            out.push(PathList {
                title: "Largest paths by added size".to_string(),
                paths: s.largest.as_slice(),
                rest: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(i: usize) -> String {
        format!("/nix/store/{}-p{i}-1.0", "a".repeat(32))
    }

    fn contributor(i: usize, added_size: u64) -> Contributor {
        Contributor {
            path: path(i),
            nar_size: added_size,
            added_size,
            chain: vec![path(0), path(i)],
        }
    }

    #[test]
    fn a_baseline_failure_names_five_paths_and_counts_the_rest() {
        let f = CheckFailure::Baseline {
            subject: CheckSubject::Root(path(0)),
            measured: 3 << 20,
            growth: 1 << 20,
            growth_percent: Some(50.0),
            baseline_size: 2 << 20,
            allowed: AllowedGrowth::Percent(5.0),
            limit: 2_202_009,
            new_paths: Blame {
                group: Some(PathGroup {
                    count: 9,
                    size: 1 << 20,
                }),
                top: (1..=7).map(|i| contributor(i, 1000 - i as u64)).collect(),
                ranked: 9,
            },
        };
        assert_eq!(
            f.to_string(),
            "closure of p0-1.0 is 3.0 MiB and grew by 1.0 MiB (+50.0%) over the baseline \
             2.0 MiB, more than the allowed 5% (limit 2.1 MiB); new since the baseline \
             (9 paths, 1.0 MiB): p1-1.0 (999 B), p2-1.0 (998 B), p3-1.0 (997 B), \
             p4-1.0 (996 B), p5-1.0 (995 B), … and 4 more"
        );
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            serde_json::Value::String(f.to_string()),
            "JSON carries the same sentence"
        );
    }

    #[test]
    fn an_empty_baseline_grows_infinitely_and_several_roots_are_counted() {
        let f = CheckFailure::Baseline {
            subject: CheckSubject::Roots(2),
            measured: 10,
            growth: 10,
            growth_percent: None,
            baseline_size: 0,
            allowed: AllowedGrowth::Bytes(4),
            limit: 4,
            new_paths: Blame {
                group: Some(PathGroup { count: 1, size: 10 }),
                top: vec![contributor(1, 10)],
                ranked: 1,
            },
        };
        let s = f.to_string();
        assert!(
            s.starts_with("closure of 2 roots is 10 B and grew by 10 B (+∞%)"),
            "{s}"
        );
        assert!(s.contains("more than the allowed 4 B (limit 4 B)"), "{s}");
        assert!(s.ends_with(": p1-1.0 (10 B)"), "{s}");
        assert!(s.contains("(1 path, 10 B)"), "{s}");
    }

    #[test]
    fn against_and_max_size_sentences() {
        let against = CheckFailure::Against {
            subject: CheckSubject::Root(path(0)),
            measured: 1115,
            ratio: 1115.0 / 12.0,
            other_root: path(9),
            other_size: 12,
            max_ratio: 2.0,
            limit: 24,
            only_in_root: Blame {
                group: Some(PathGroup {
                    count: 3,
                    size: 1110,
                }),
                top: vec![contributor(2, 1000), contributor(1, 100)],
                ranked: 2,
            },
        };
        assert_eq!(
            against.to_string(),
            "closure of p0-1.0 is 1.1 KiB = 92.92× that of p9-1.0 (12 B), more than the \
             allowed 2× (limit 24 B); only in p0-1.0 (3 paths, 1.1 KiB): p2-1.0 (1000 B), \
             p1-1.0 (100 B)"
        );
        let max = CheckFailure::MaxSize {
            subject: CheckSubject::Root(path(0)),
            measured: 5000,
            limit: 100,
            largest: Blame {
                group: None,
                top: Vec::new(),
                ranked: 0,
            },
        };
        assert_eq!(
            max.to_string(),
            "closure of p0-1.0 is 4.9 KiB, over the --max-size limit 100 B by 4.8 KiB; \
             largest by added size: nothing but the root itself"
        );
    }

    #[test]
    fn warnings() {
        assert_eq!(
            CheckWarning::BaselineShrank { by: 2048 }.to_string(),
            "the closure shrank by 2.0 KiB since the baseline; consider updating it \
             (`nixcut snapshot`)"
        );
        assert_eq!(CheckWarning::Input("as is".into()).to_string(), "as is");
    }
}
