//! insta snapshots of the table and Markdown output of every command, rendered through
//! the library at a fixed width (100 columns) without colour, so that a change to the
//! words or the layout shows up as a reviewed diff of `tests/snapshots/`.
//!
//! Inputs are deterministic and need no Nix: the shipped examples (graph level), and
//! for file-level evidence the reports in `tests/fixtures/render/` (real output on the
//! ROCm test world; their README says how they were made). Update with
//! `INSTA_UPDATE=always cargo test --test render_snapshots` and review the `.snap` diff.

use std::path::PathBuf;

use nixcut::analysis::{self, CheckOptions, DiffOptions, EvidenceOptions, Growth, WhyOptions};
use nixcut::load::{load, LoadOptions};
use nixcut::render::{render, Format, Report, Style};
use nixcut::report::{RefsReport, SplitReport, WhyChainsReport, WhyReport};
use nixcut::store::Closure;

const STYLE: Style = Style {
    width: Some(100),
    color: false,
    pretty_json: false,
    long: false,
};

/// `why` tables at a terminal width, compact or `--long`.
fn why_at(name: &str, r: &WhyReport, width: u16, long: bool) {
    let style = Style {
        width: Some(width),
        long,
        ..STYLE
    };
    let mut out = Vec::new();
    render(r, Format::Table, &style, &mut out).expect("render into memory");
    let text = String::from_utf8(out).expect("UTF-8");
    for line in text.lines() {
        assert!(
            line.chars().count() <= usize::from(width),
            "{name}: a line wider than {width} columns:\n{line}"
        );
    }
    insta::assert_snapshot!(format!("{name}.table"), text);
}

fn repo_file(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn example(name: &str) -> Closure {
    let p = repo_file(&format!("examples/{name}"));
    load(&p.to_string_lossy(), &LoadOptions::default()).expect("load the example")
}

/// A report read back from a fixture.
fn fixture<T: serde::de::DeserializeOwned>(name: &str) -> T {
    let p = repo_file(&format!("tests/fixtures/render/{name}"));
    let text = std::fs::read_to_string(&p).expect("read the fixture");
    serde_json::from_str(&text).expect("the fixture is a report")
}

fn text<'a>(report: impl Into<Report<'a>>, format: Format) -> String {
    let mut out = Vec::new();
    render(report, format, &STYLE, &mut out).expect("render into memory");
    String::from_utf8(out).expect("renderers write UTF-8")
}

/// Snapshot `report` as `NAME.table` and `NAME.md`.
fn both<'a>(name: &str, report: impl Into<Report<'a>>) {
    let report = report.into();
    insta::assert_snapshot!(format!("{name}.table"), text(report, Format::Table));
    insta::assert_snapshot!(format!("{name}.md"), text(report, Format::Markdown));
}

/// Graph-level evidence: the examples have no files.
fn no_evidence() -> EvidenceOptions {
    EvidenceOptions {
        enabled: false,
        ..Default::default()
    }
}

#[test]
fn why() {
    let rocm = example("llama-cpp-rocm.json");
    let opts = WhyOptions {
        top: Some(15),
        evidence: no_evidence(),
        ..Default::default()
    };
    both("why-rocm", &analysis::why(&rocm, &opts, None).unwrap());
    let cuda = example("llama-cpp-cuda.json");
    let opts = WhyOptions {
        top: Some(5),
        sort: analysis::SortKey::Closure,
        evidence: no_evidence(),
        ..Default::default()
    };
    both(
        "why-cuda-by-closure",
        &analysis::why(&cuda, &opts, None).unwrap(),
    );
    let reg = example("small-registration");
    let opts = WhyOptions {
        evidence: no_evidence(),
        ..Default::default()
    };
    both(
        "why-registration",
        &analysis::why(&reg, &opts, None).unwrap(),
    );
    both(
        "why-world-evidence",
        &fixture::<WhyReport>("world-why.json"),
    );
    // Issue 14: one line per path at 80 and 120 columns; --long keeps the full table.
    let world = fixture::<WhyReport>("world-why.json");
    why_at("why-world-80-columns", &world, 80, false);
    why_at("why-world-120-columns", &world, 120, false);
    why_at("why-world-long-120-columns", &world, 120, true);
    let rocm = example("llama-cpp-rocm.json");
    let opts = WhyOptions {
        top: Some(15),
        evidence: no_evidence(),
        ..Default::default()
    };
    why_at(
        "why-rocm-80-columns",
        &analysis::why(&rocm, &opts, None).unwrap(),
        80,
        false,
    );
}

#[test]
fn why_root_target() {
    let rocm = example("llama-cpp-rocm.json");
    let r = analysis::why_chains(&rocm, None, "rocblas-5.7.1", &no_evidence(), None).unwrap();
    both("why-chains-rocblas", &r);
    both(
        "why-chains-world-evidence",
        &fixture::<WhyChainsReport>("world-why-chains.json"),
    );
}

#[test]
fn refs() {
    let rocm = example("llama-cpp-rocm.json");
    let opts = analysis::RefsOptions {
        paths: vec!["rocblas-5.7.1".to_string(), "llama-cpp-rocm".to_string()],
        ..Default::default()
    };
    both(
        "refs-graph-level",
        &analysis::refs(&rocm, &opts, None).unwrap(),
    );
    both(
        "refs-world-evidence",
        &fixture::<RefsReport>("world-refs.json"),
    );
}

#[test]
fn diff() {
    let (cuda, rocm) = (
        example("llama-cpp-cuda.json"),
        example("llama-cpp-rocm.json"),
    );
    let top = DiffOptions {
        top: Some(12),
        ..Default::default()
    };
    both(
        "diff-cuda-rocm",
        &analysis::diff(&cuda, &rocm, &top).unwrap(),
    );
    both(
        "diff-rocm-cuda",
        &analysis::diff(&rocm, &cuda, &top).unwrap(),
    );
    both(
        "diff-unchanged",
        &analysis::diff(&rocm, &rocm, &DiffOptions::default()).unwrap(),
    );
}

#[test]
fn check() {
    let (cuda, rocm) = (
        example("llama-cpp-cuda.json"),
        example("llama-cpp-rocm.json"),
    );
    let run = |c: &Closure, opts: CheckOptions| analysis::check(c, &opts).unwrap();
    both(
        "check-against-fails",
        &run(
            &rocm,
            CheckOptions {
                against: Some((&cuda, 2.0)),
                top: 8,
                ..Default::default()
            },
        ),
    );
    both(
        "check-baseline-and-max-size-fail",
        &run(
            &rocm,
            CheckOptions {
                baseline: Some((&cuda, Growth::default())),
                max_size: Some(1 << 30),
                top: 6,
                ..Default::default()
            },
        ),
    );
    both(
        "check-passes-and-shrank",
        &run(
            &cuda,
            CheckOptions {
                baseline: Some((&rocm, Growth::Bytes(1 << 20))),
                max_size: Some(20 << 30),
                top: 5,
                ..Default::default()
            },
        ),
    );
}

#[test]
fn split() {
    both(
        "world-split-gpu-targets",
        &fixture::<SplitReport>("world-split.json"),
    );
    both(
        "world-split-none",
        &fixture::<SplitReport>("world-split-none.json"),
    );
}
