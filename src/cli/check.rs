//! `nixcut check ROOT`: run the gate, report, and speak to CI (a Markdown summary file,
//! GitHub Actions annotations).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};

use super::args::{CheckArgs, GlobalArgs};
use super::{emit, load_input, print_warnings, Outcome};
use nixcut::analysis::{self, CheckOptions, Growth};
use nixcut::render::{render, Format, Style};
use nixcut::report::CheckReport;
use nixcut::store::parse_size;

/// `--max-growth`: `5%` or a bare number is a percentage, anything with a unit a size.
fn parse_growth(s: &str) -> Result<Growth> {
    let t = s.trim();
    let pct = t.strip_suffix('%').unwrap_or(t).trim();
    if let Ok(p) = pct.parse::<f64>() {
        if p.is_finite() && p >= 0.0 {
            return Ok(Growth::Percent(p));
        }
        return Err(anyhow!("--max-growth `{s}` must be zero or more"));
    }
    if t.ends_with('%') {
        return Err(anyhow!("--max-growth `{s}` is not a percentage (e.g. 5%)"));
    }
    parse_size(t)
        .map(Growth::Bytes)
        .map_err(|e| anyhow!("--max-growth: {e}, or a percentage such as 5%"))
}

pub(super) fn run(g: &GlobalArgs, a: &CheckArgs, format: Format, style: &Style) -> Result<Outcome> {
    let growth = match &a.max_growth {
        Some(s) => parse_growth(s)?,
        None => Growth::default(),
    };
    let max_size = match &a.max_size {
        Some(s) => Some(parse_size(s).map_err(|e| anyhow!("--max-size: {e}"))?),
        None => None,
    };
    let closure = load_input(g, &a.input)?;
    let baseline = match &a.baseline {
        Some(b) => Some(load_input(g, b).context("cannot load the baseline")?),
        None => None,
    };
    let other = match &a.against {
        Some(o) => Some(load_input(g, o).context("cannot load OTHER (--against)")?),
        None => None,
    };
    let opts = CheckOptions {
        root: g.root.clone(),
        baseline: baseline.as_ref().map(|b| (b, growth)),
        against: other.as_ref().zip(a.max_ratio),
        max_size,
        top: a.top,
    };
    let report =
        analysis::check(&closure, &opts).with_context(|| format!("cannot check `{}`", a.input))?;
    if format != Format::Markdown {
        let warnings: Vec<String> = report.warnings.iter().map(ToString::to_string).collect();
        print_warnings(&warnings, g.quiet);
    }
    emit(&report, format, style)?;

    // CI integration, after the report so a failure to write the summary still shows it.
    let env_summary = std::env::var_os("GITHUB_STEP_SUMMARY")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    match (&a.summary, env_summary) {
        (Some(file), _) => append_summary(&report, file)?,
        (None, Some(file)) => {
            if let Err(e) = append_summary(&report, &file) {
                print_warnings(&[format!("{e:#}")], g.quiet);
            }
        }
        (None, None) => {}
    }
    if std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true") && !report.pass {
        annotate(&report, format)?;
    }
    Ok(if report.pass {
        Outcome::Success
    } else {
        Outcome::CheckFailed
    })
}

/// Append the Markdown report to `file` (created if missing).
fn append_summary(report: &CheckReport, file: &Path) -> Result<()> {
    let mut buf = Vec::new();
    render(report, Format::Markdown, &Style::default(), &mut buf)?;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .with_context(|| format!("cannot open the summary file {}", file.display()))?;
    f.write_all(&buf)
        .and_then(|()| f.flush())
        .with_context(|| format!("cannot write the summary file {}", file.display()))
}

/// One `::error` workflow command per failure, on standard output (standard error
/// with `--format json`, so the JSON stays parseable; the runner reads both).
fn annotate(report: &CheckReport, format: Format) -> Result<()> {
    let title = escape_property(&format!(
        "closure size check failed: {}",
        nixcut::render::short_path(&report.header.closure.root)
    ));
    let mut lines = String::new();
    for f in &report.failures {
        lines.push_str(&format!(
            "::error title={title}::{}\n",
            escape_data(&f.to_string())
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
        assert!(parse_growth("lots%").is_err());
        assert!(parse_growth("12Q").is_err());
    }

    #[test]
    fn workflow_command_escaping() {
        assert_eq!(escape_data("50% more\nnext"), "50%25 more%0Anext");
        assert_eq!(escape_property("a: b, c"), "a%3A b%2C c");
    }
}
