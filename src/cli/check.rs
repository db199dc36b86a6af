//! `nixcut check ROOT`: run the gate, report, and speak to CI (a Markdown summary file,
//! GitHub Actions annotations).

use std::io::{self, Write};

use anyhow::{anyhow, Context, Result};

use super::args::CheckArgs;
use super::config::Config;
use super::diff::Loaded;
use super::guard::{refuse_store_object, write_output, WriteMode};
use super::output::{emit, is_broken_pipe, print_warnings, printable};
use super::{load_input, stdin_at_most_once, Outcome};
use nixcut::analysis::{self, CheckOptions, Growth, SetDiffOptions, SetLimits};
use nixcut::load::package_set::PackageSet;
use nixcut::render::{render, Comment, CommentOptions, Format, Style};
use nixcut::report::GrowthLimit;
use nixcut::store::{parse_size, Closure, LoadWarning, SizeParseError};

/// A warning when the baseline's root is another package than ROOT's
/// (`check ./result-cuda --baseline base-rocm.json` passes, but says nothing about the
/// CUDA build's history): no package name of ROOT's roots is one of the baseline's.
fn other_package(c: &Closure, root: Option<&str>, baseline: &Closure) -> Option<LoadWarning> {
    use nixcut::store::parse_package_name;
    let roots_of = |c: &Closure, pick: Option<&str>| -> Vec<String> {
        let roots = match pick.map(|q| c.select_path(q, "root")) {
            Some(Ok(p)) => vec![p],
            Some(Err(_)) => return Vec::new(),
            None if !c.declared_roots.is_empty() => c.declared_roots.clone(),
            None => c.roots(),
        };
        roots
            .iter()
            .map(|p| parse_package_name(p.name()).pname.to_string())
            .collect()
    };
    let ours = roots_of(c, root);
    let theirs = roots_of(baseline, None);
    if ours.is_empty() || theirs.is_empty() || ours.iter().any(|n| theirs.contains(n)) {
        return None;
    }
    Some(LoadWarning::BaselineOfOtherPackage { theirs, ours })
}

/// `--max-growth`: `5%` or a bare number is a percentage, anything with a unit a size.
fn parse_growth(s: &str) -> Result<Growth> {
    let t = s.trim();
    let pct = t.strip_suffix('%').unwrap_or(t).trim();
    if let Ok(p) = pct.parse::<f64>() {
        return if p.is_nan() {
            Err(anyhow!("--max-growth `{s}` is not a percentage (e.g. 5%)"))
        } else if p.is_infinite() {
            Err(anyhow!(
                "--max-growth `{s}` is out of range: a percentage must be a finite number"
            ))
        } else if p < 0.0 {
            Err(anyhow!(
                "--max-growth `{s}` is negative: the growth allowed is zero or more"
            ))
        } else {
            Ok(Growth::Percent(p))
        };
    }
    if t.ends_with('%') {
        return Err(anyhow!("--max-growth `{s}` is not a percentage (e.g. 5%)"));
    }
    parse_size(t).map(Growth::Bytes).map_err(|e| match e {
        SizeParseError::Malformed(_) => {
            anyhow!("--max-growth: {e}; or give a percentage such as 5%")
        }
        _ => anyhow!("--max-growth: {e}"),
    })
}

pub(super) fn run(cfg: &Config, a: &CheckArgs) -> Result<Outcome> {
    let (format, style) = (cfg.format, &cfg.style);
    // Where the summary goes is checked before the (possibly long) load, and again
    // when it is written.
    if let Some(file) = &a.summary {
        refuse_store_object(&cfg.load, file, "the summary", &[])?;
    }
    let comment = comment_options(cfg, a)?;
    stdin_at_most_once(
        [Some(&a.input), a.baseline.as_ref(), a.against.as_ref()]
            .into_iter()
            .flatten()
            .map(String::as_str),
    )?;
    let growth = match &a.max_growth {
        Some(s) => parse_growth(s)?,
        None => Growth::default(),
    };
    let max_size = match &a.max_size {
        Some(s) => Some(parse_size(s).map_err(|e| anyhow!("--max-size: {e}"))?),
        None => None,
    };
    let mut closure = match super::diff::load_either(cfg, &a.input)? {
        Loaded::Closure(c) => c,
        Loaded::Set(set) => return check_sets(cfg, a, set, growth, comment.as_ref()),
    };
    if a.max_new_root_size.is_some() || a.changed_only {
        return Err(anyhow!(
            "--max-new-root-size and --changed-only apply to package sets (ROOT and \
             --baseline files of store paths, one a line); `{}` is a single closure",
            printable(&a.input)
        ));
    }
    if a.max_total_growth.is_some() {
        return Err(anyhow!(
            "--max-total-growth applies to package sets (ROOT and --baseline files of store \
             paths, one a line); `{}` is a single closure",
            printable(&a.input)
        ));
    }
    let baseline = match &a.baseline {
        Some(b) => match super::diff::load_either(cfg, b).context("cannot load the baseline")? {
            Loaded::Closure(c) => Some(c),
            Loaded::Set(_) => return Err(super::diff::mixed(b, &a.input)),
        },
        None => None,
    };
    let other = match &a.against {
        Some(o) => Some(load_input(cfg, o).context("cannot load OTHER (--against)")?),
        None => None,
    };
    let root = super::root_query(cfg, &closure)?;
    let diff_root = root.clone();
    if let Some(b) = &baseline {
        if let Some(w) = other_package(&closure, root.as_deref(), b) {
            // Carried as a warning of ROOT, so that every format (the Markdown summary
            // too) says it.
            closure.warnings.push(w);
        }
    }
    if !a.allow_partial {
        require_complete(&closure, root.as_deref(), "ROOT")?;
        if let Some(b) = &baseline {
            require_complete(b, None, "the baseline (--baseline)")?;
        }
        if let Some(o) = &other {
            require_complete(o, None, "OTHER (--against)")?;
        }
    }
    let opts = CheckOptions {
        root,
        baseline: baseline.as_ref().map(|b| (b, growth)),
        against: other.as_ref().zip(a.max_ratio),
        max_size,
        top: a.top,
    };
    let report =
        analysis::check(&closure, &opts).with_context(|| format!("cannot check `{}`", a.input))?;
    if format != Format::Markdown {
        let warnings: Vec<String> = report.warnings.iter().map(ToString::to_string).collect();
        print_warnings(&warnings, cfg.quiet);
    }
    // The verdict is the exit code: a reader that stopped early (`check … | head`)
    // must not turn a failure into a pass, so a closed stdout only ends the output.
    tolerate_closed_stdout(emit(&report, format, style))?;

    // CI integration, after the report so a failure to write the summary still shows it.
    // A comment shows the diff against the baseline under the verdict.
    let diff = match (&comment, &baseline) {
        (Some(_), Some(b)) => {
            let opts = analysis::DiffOptions {
                root: diff_root,
                top: None,
                timings: cfg.timings.clone(),
            };
            match analysis::diff(b, &closure, &opts) {
                Ok(d) => Some(d),
                Err(e) => {
                    print_warnings(
                        &[format!(
                            "the comment shows no diff against the baseline: {e:#}"
                        )],
                        cfg.quiet,
                    );
                    None
                }
            }
        }
        _ => None,
    };
    let summary = || match &comment {
        Some(c) => super::comment::bytes(Comment::Check(&report, diff.as_ref()), c),
        None => markdown(&report),
    };
    let failures: Vec<String> = report.failures.iter().map(ToString::to_string).collect();
    let title = format!(
        "closure size check failed: {}",
        nixcut::render::short_path(&report.header.closure.root)
    );
    speak_to_ci(
        cfg,
        a,
        summary,
        &[&closure.store_dir],
        &title,
        &failures,
        format,
    )?;
    Ok(if report.pass {
        Outcome::Success
    } else {
        Outcome::CheckFailed
    })
}

/// `check` of a package set against a baseline package set: `--max-growth` per root,
/// `--max-total-growth` of the closures summed.
fn check_sets(
    cfg: &Config,
    a: &CheckArgs,
    set: PackageSet,
    growth: Growth,
    comment: Option<&CommentOptions>,
) -> Result<Outcome> {
    let (format, style) = (cfg.format, &cfg.style);
    let Some(b) = &a.baseline else {
        return Err(anyhow!(
            "`{}` is a package set: check it against a baseline package set (--baseline OLD \
             with --max-growth and/or --max-total-growth)",
            printable(&a.input)
        ));
    };
    if a.against.is_some() || a.max_size.is_some() {
        return Err(anyhow!(
            "--against and --max-size check one closure; for package sets use --baseline with \
             --max-growth and --max-total-growth"
        ));
    }
    let base = match super::diff::load_either(cfg, b).context("cannot load the baseline")? {
        Loaded::Set(s) => s,
        Loaded::Closure(_) => return Err(super::diff::mixed(&a.input, b)),
    };
    let limit = |gr: Growth| match gr {
        Growth::Percent(p) => GrowthLimit::Percent(p),
        Growth::Bytes(b) => GrowthLimit::Bytes(b),
    };
    let total = match &a.max_total_growth {
        Some(s) => Some(limit(parse_growth(s).map_err(|e| {
            anyhow!(
                "{}",
                e.to_string().replace("--max-growth", "--max-total-growth")
            )
        })?)),
        None => None,
    };
    let new_root = match &a.max_new_root_size {
        Some(s) => Some(parse_size(s).map_err(|e| anyhow!("--max-new-root-size: {e}"))?),
        None => None,
    };
    // Without --max-total-growth and --max-new-root-size the per-root limit applies
    // (default 5%); with either alone, only what it names is checked.
    let per_root =
        (a.max_growth.is_some() || (total.is_none() && new_root.is_none())).then(|| limit(growth));
    let opts = SetDiffOptions {
        top: None,
        show: a.top,
        changed_only: a.changed_only,
        check: Some(SetLimits {
            max_growth: per_root,
            max_total_growth: total,
            max_new_root_size: new_root,
        }),
        timings: cfg.timings.clone(),
    };
    let mut report = super::diff::diff_sets(cfg, &base, &set, &a.graphs, &opts)?;
    if let Some(c) = &mut report.check {
        c.failed.truncate(a.top);
    }
    if format != Format::Markdown {
        print_warnings(&report.warnings, cfg.quiet);
    }
    tolerate_closed_stdout(emit(&report, format, style))?;
    let pass = report.check.as_ref().is_some_and(|c| c.pass);
    let summary = || match comment {
        Some(c) => super::comment::bytes(Comment::SetDiff(&report), c),
        None => markdown(&report),
    };
    let title = format!(
        "closure size check failed: package set {}",
        nixcut::render::one_line(&report.new.origin)
    );
    let failures = nixcut::render::set_check_failures(&report);
    speak_to_ci(
        cfg,
        a,
        summary,
        &[&set.store_dir, &base.store_dir],
        &title,
        &failures,
        format,
    )?;
    Ok(if pass {
        Outcome::Success
    } else {
        Outcome::CheckFailed
    })
}

fn tolerate_closed_stdout(r: Result<()>) -> Result<()> {
    match r {
        Err(e) if is_broken_pipe(&e) => Ok(()),
        other => other,
    }
}

/// A gate measured on an incomplete closure passes too easily: refuse an input whose
/// references leave the loaded set (`nix path-info --json X` without `-r`). With
/// `--root`, only that root's part of the input counts; a `--root` that matches
/// nothing is left for the analysis to report.
fn require_complete(c: &Closure, root: Option<&str>, what: &str) -> Result<()> {
    let part;
    let c = match root.map(|q| c.select_root(q)) {
        Some(Ok(r)) => {
            part = c.restrict_to(&[r]);
            &part
        }
        _ => c,
    };
    let missing = c.missing_references();
    let Some((from, to)) = missing.first() else {
        return Ok(());
    };
    Err(anyhow!(
        "{what} `{}` is not a complete closure: {} reference(s) point to paths it does not \
         describe (first: {} -> {}), so its size would be too small to gate on; give the \
         whole closure (`nix path-info --json -r`), or pass --allow-partial to check it anyway",
        c.origin,
        missing.len(),
        c.store_dir.display(from),
        c.store_dir.display(to)
    ))
}

/// What `check` tells CI, after the report: the Markdown `summary` appended to
/// `--summary FILE` (an error when it cannot be) or else to `$GITHUB_STEP_SUMMARY` (a
/// warning when it cannot be: the verdict stands), both through the store guard
/// (`stores`: the inputs' store directories); and under GitHub Actions one `::error`
/// annotation per failure.
fn speak_to_ci(
    cfg: &Config,
    a: &CheckArgs,
    summary: impl Fn() -> Result<Vec<u8>>,
    stores: &[&nixcut::store::StoreDir],
    title: &str,
    failures: &[String],
    format: Format,
) -> Result<()> {
    match (&a.summary, &cfg.step_summary) {
        (Some(file), _) => write_output(
            &cfg.load,
            file,
            if a.comment.comment {
                "the comment (--summary)"
            } else {
                "the summary"
            },
            summary_mode(file, a.comment.comment),
            &summary()?,
            stores,
        )?,
        (None, Some(file)) => {
            let written = summary().and_then(|bytes| {
                write_output(
                    &cfg.load,
                    file,
                    "the summary ($GITHUB_STEP_SUMMARY)",
                    WriteMode::Append,
                    &bytes,
                    stores,
                )
            });
            if let Err(e) = written {
                print_warnings(&[format!("{e:#}")], cfg.quiet);
            }
        }
        (None, None) => {}
    }
    if cfg.github_actions && !failures.is_empty() {
        tolerate_closed_stdout(annotate(title, failures, format))?;
    }
    Ok(())
}

/// `--comment`'s options, checked before any work: the comment goes to `--summary FILE`.
fn comment_options(cfg: &Config, a: &CheckArgs) -> Result<Option<CommentOptions>> {
    if a.comment.comment && a.summary.is_none() {
        return Err(anyhow!(
            "--comment writes the pull-request comment to --summary FILE; give --summary FILE \
             (standard output keeps the --format report, e.g. JSON for an artifact)"
        ));
    }
    let mut words = vec!["check", a.input.as_str()];
    if let Some(b) = &a.baseline {
        words.extend(["--baseline", b.as_str()]);
    }
    if let Some(o) = &a.against {
        words.extend(["--against", o.as_str()]);
    }
    super::comment::options(
        &a.comment,
        cfg.format,
        false,
        super::comment::json_command(&words),
    )
}

/// How `--summary FILE` is written: appended (a CI summary gathers every step's), or,
/// for a comment (one document, its first line the marker), replaced; a FIFO or device
/// is written in place.
fn summary_mode(file: &std::path::Path, comment: bool) -> WriteMode {
    if !comment {
        return WriteMode::Append;
    }
    match std::fs::metadata(file) {
        Ok(m) if !m.is_file() => WriteMode::InPlace,
        _ => WriteMode::Replace,
    }
}

/// A report as the Markdown of a CI summary.
fn markdown<'a>(report: impl Into<nixcut::render::Report<'a>>) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    render(report, Format::Markdown, &Style::default(), &mut buf)?;
    Ok(buf)
}

/// One `::error` workflow command per failure, on standard output (standard error
/// with `--format json`, so the JSON stays parseable; the runner reads both). The
/// title is a property (`%`, CR, LF, `:` and `,` escaped), each message data (`%`, CR,
/// LF escaped), as GitHub's workflow commands define; what a terminal would act on is
/// spelled out first.
fn annotate(title: &str, failures: &[String], format: Format) -> Result<()> {
    let title = escape_property(&printable(title));
    let mut lines = String::new();
    for f in failures {
        lines.push_str(&format!(
            "::error title={title}::{}\n",
            escape_data(&printable(f))
        ));
    }
    let res = if format == Format::Json {
        io::stderr().write_all(lines.as_bytes())
    } else {
        let mut out = io::stdout().lock();
        out.write_all(lines.as_bytes()).and_then(|()| out.flush())
    };
    res.context("cannot write the GitHub annotation")
}

/// Workflow-command message escaping (`%`, CR, LF).
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Workflow-command property escaping (also `:` and `,`).
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_forms() {
        assert_eq!(parse_growth("5%").unwrap(), Growth::Percent(5.0));
        assert_eq!(parse_growth("2.5").unwrap(), Growth::Percent(2.5));
        assert_eq!(parse_growth("10MiB").unwrap(), Growth::Bytes(10 << 20));
        assert!(parse_growth("-1%").is_err());
        assert!(parse_growth("1e999%")
            .unwrap_err()
            .to_string()
            .contains("out of range"));
        assert!(parse_growth("NaN%").is_err());
        assert!(parse_growth("lots%").is_err());
        assert!(parse_growth("12Q").is_err());
    }

    #[test]
    fn workflow_command_escaping() {
        assert_eq!(escape_data("50% more\nnext"), "50%25 more%0Anext");
        assert_eq!(escape_property("a: b, c"), "a%3A b%2C c");
    }
}
