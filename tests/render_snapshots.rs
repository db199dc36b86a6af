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
use std::collections::HashSet;

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

/// The words of a table (borders and padding removed), to tell a word split across
/// lines: at any width, every word must be one the unwrapped table has too.
fn words(text: &str) -> HashSet<String> {
    // The notes on what a narrow table leaves out exist only when it does.
    let text: String = text
        .lines()
        .filter(|l| !l.contains("wider terminal"))
        .collect::<Vec<_>>()
        .join("\n");
    text.split(|c: char| c.is_whitespace() || "│┆┌┐└┘├┤┬┴┼─═╞╡╪".contains(c))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Issue 23: a report's table at 80 and 120 columns: no line wider, no word or number
/// split across lines (`binarie` / `s`, `407.4` / `KiB`), snapshotted as
/// `NAME-80.table` and `NAME-120.table`.
fn table_widths<'a>(name: &str, report: impl Into<Report<'a>>) {
    let report = report.into();
    let render_at = |width: Option<u16>| {
        let style = Style { width, ..STYLE };
        let mut out = Vec::new();
        render(report, Format::Table, &style, &mut out).expect("render into memory");
        String::from_utf8(out).expect("UTF-8")
    };
    let whole = words(&render_at(None));
    for width in [80u16, 120] {
        let text = render_at(Some(width));
        let mut in_nix = false;
        for line in text.lines() {
            // Commands, remedies and Nix code are meant to be copied whole: never cut.
            in_nix =
                (in_nix || line.starts_with("# nixcut split")) && !line.starts_with("warning:");
            let copyable = in_nix
                || line.starts_with("  nixcut ")
                || line.starts_with("FAIL: ")
                || line.starts_with("  ")
                    && ["override {", "config = {", "${"]
                        .iter()
                        .any(|n| line.contains(n));
            assert!(
                copyable || line.chars().count() <= usize::from(width),
                "{name}: a line wider than {width} columns:\n{line}"
            );
        }
        // A word shortened on purpose is marked with `…` or counts the rest
        // (`gpu:gfx900,+3`); it is not split.
        let shortened = |w: &String| {
            w.contains('…')
                || w.rsplit_once(",+")
                    .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        };
        for w in words(&text).into_iter().filter(|w| !shortened(w)) {
            assert!(
                whole.contains(&w),
                "{name} at {width} columns: `{w}` is a piece of a split word:\n{text}"
            );
        }
        insta::assert_snapshot!(format!("{name}-{width}.table"), text);
    }
}

/// The shipped binary cache of the ROCm test world, with its NARs as the files.
fn world_cache() -> (Closure, nixcut::source::Files) {
    let c = example("rocm-world-cache");
    let files = nixcut::source::locate(&c, None);
    (c, files)
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

/// Every command's table at 80 and 120 columns (issue 23).
#[test]
fn every_table_at_80_and_120_columns() {
    let (cuda, rocm) = (
        example("llama-cpp-cuda.json"),
        example("llama-cpp-rocm.json"),
    );
    table_widths(
        "diff-cuda-rocm",
        &analysis::diff(
            &cuda,
            &rocm,
            &DiffOptions {
                top: Some(8),
                ..Default::default()
            },
        )
        .unwrap(),
    );
    table_widths(
        "check-against-fails",
        &analysis::check(
            &rocm,
            &CheckOptions {
                against: Some((&cuda, 2.0)),
                top: 5,
                ..Default::default()
            },
        )
        .unwrap(),
    );
    table_widths(
        "check-baseline-and-max-size-fail",
        &analysis::check(
            &rocm,
            &CheckOptions {
                baseline: Some((&cuda, Growth::default())),
                max_size: Some(1 << 30),
                top: 5,
                ..Default::default()
            },
        )
        .unwrap(),
    );
    table_widths(
        "refs-world-evidence",
        &fixture::<RefsReport>("world-refs.json"),
    );
    table_widths(
        "why-chains-world-evidence",
        &fixture::<WhyChainsReport>("world-why-chains.json"),
    );
    table_widths(
        "why-world-evidence",
        &fixture::<WhyReport>("world-why.json"),
    );
    table_widths(
        "world-split-gpu-targets",
        &fixture::<SplitReport>("world-split.json"),
    );
    let rules = analysis::rules(&nixcut::classify::ClassRules::default(), None);
    table_widths("rules", &rules);

    let (world, files) = world_cache();
    let gpu = |targets: &[&str]| {
        analysis::gpu(
            &world,
            &analysis::GpuOptions {
                gpu_targets: targets.iter().map(|t| t.to_string()).collect(),
                files: files.clone(),
                ..Default::default()
            },
            None,
        )
        .unwrap()
    };
    table_widths("gpu-world-cache", &gpu(&[]));
    table_widths("gpu-world-cache-gfx1030", &gpu(&["gfx1030"]));
    let why = analysis::why(
        &world,
        &WhyOptions {
            top: Some(12),
            evidence: EvidenceOptions {
                files: files.clone(),
                ..Default::default()
            },
            ..Default::default()
        },
        None,
    )
    .unwrap();
    table_widths("why-world-cache", &why);
    let refs = analysis::refs(
        &world,
        &analysis::RefsOptions {
            paths: vec!["rocblas".to_string()],
            files: files.clone(),
            ..Default::default()
        },
        None,
    )
    .unwrap();
    table_widths("refs-world-cache-rocblas", &refs);
    let split = analysis::split(
        &world,
        &analysis::SplitOptions {
            package: "rocblas".to_string(),
            for_root: true,
            gpu_targets: vec!["gfx1030".to_string()],
            files,
            ..Default::default()
        },
        None,
    )
    .unwrap();
    table_widths("split-world-cache-rocblas", &split);
}
