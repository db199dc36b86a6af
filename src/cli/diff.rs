//! `nixcut diff OLD NEW`.

use anyhow::{anyhow, Context, Result};

use super::args::DiffArgs;
use super::config::Config;
use super::output::{discard, emit, print_warnings, printable};
use super::{load_input, stdin_at_most_once, Outcome};
use nixcut::analysis::{self, DiffOptions, SetDiffOptions, SetInput};
use nixcut::load::attr_set;
use nixcut::load::package_set::{self, GraphSource, PackageSet};
use nixcut::render::{Comment, Format};
use nixcut::report::{DiffWarning, SetDiffReport, Side};
use nixcut::store::Closure;

/// The diff reports size changes as signed 64-bit deltas; a closure whose NAR sizes add
/// up past 2^63 - 1 bytes (8 EiB: no real one does, so a size is wrong) could overflow
/// their sums. Refused here, naming the input, before the analysis runs.
fn within_signed_sizes(c: &Closure) -> Result<()> {
    match c.total_nar_size() {
        Some(total) if i64::try_from(total).is_ok() => Ok(()),
        _ => Err(anyhow!(
            "cannot diff `{}`: its NAR sizes add up to more than 2^63 - 1 bytes (8 EiB), \
             beyond the signed sizes a diff reports; a size is wrong",
            printable(&c.origin)
        )),
    }
}

pub(super) fn run(cfg: &Config, a: &DiffArgs) -> Result<Outcome> {
    let (format, style) = (cfg.format, &cfg.style);
    stdin_at_most_once([a.old.as_str(), a.new.as_str()])?;
    let comment = super::comment::options(
        &a.comment,
        format,
        true,
        super::comment::json_command(&["diff", &a.old, &a.new]),
    )?;
    let (old, new) = match (load_either(cfg, &a.old)?, load_either(cfg, &a.new)?) {
        (Loaded::Set(o), Loaded::Set(n)) => {
            let show = match (a.all, a.top) {
                (true, _) => usize::MAX,
                (false, Some(n)) => n,
                (false, None) => 25,
            };
            let opts = SetDiffOptions {
                top: if a.all { None } else { a.top },
                show,
                changed_only: a.changed_only,
                check: None,
                timings: cfg.timings.clone(),
            };
            let report = diff_sets(cfg, &o, &n, &a.graphs, &opts)?;
            match &comment {
                Some(c) => write_stdout(&super::comment::bytes(Comment::SetDiff(&report), c)?)?,
                None => {
                    if format != Format::Markdown {
                        print_warnings(&report.warnings, cfg.quiet);
                    }
                    emit(&report, format, style)?;
                }
            }
            discard(report);
            return Ok(Outcome::Success);
        }
        (Loaded::Closure(o), Loaded::Closure(n)) => (o, n),
        (Loaded::Set(_), Loaded::Closure(_)) => return Err(mixed(&a.old, &a.new)),
        (Loaded::Closure(_), Loaded::Set(_)) => return Err(mixed(&a.new, &a.old)),
    };
    within_signed_sizes(&old)?;
    within_signed_sizes(&new)?;
    let opts = DiffOptions {
        timings: cfg.timings.clone(),
        root: super::root_query(cfg, &old)?,
        top: match (a.top, a.all, format) {
            (_, true, _) => None,
            (Some(n), _, _) => Some(n),
            (None, _, Format::Json) => None,
            // A comment folds what does not fit.
            (None, _, _) if comment.is_some() => None,
            (None, _, _) => Some(25),
        },
    };
    let report = analysis::diff(&old, &new, &opts)
        .with_context(|| format!("cannot diff `{}` and `{}`", a.old, a.new))?;
    match &comment {
        Some(c) => write_stdout(&super::comment::bytes(Comment::Diff(&report), c)?)?,
        None => {
            if format != Format::Markdown {
                let warnings: Vec<String> =
                    report.warnings.iter().map(ToString::to_string).collect();
                print_warnings(&warnings, cfg.quiet);
            }
            emit(&report, format, style)?;
        }
    }
    discard(report);
    discard(old);
    discard(new);
    Ok(Outcome::Success)
}

/// Write `bytes` (a comment) on standard output; a closed pipe is reported as such.
fn write_stdout(bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .context("cannot write the comment to standard output")
}

/// An input of `diff` or `check`: a package set, or one closure.
pub(super) enum Loaded {
    Set(PackageSet),
    Closure(Closure),
}

/// The error for a package set diffed or checked against a single closure.
pub(super) fn mixed(set: &str, closure: &str) -> anyhow::Error {
    anyhow!(
        "`{}` is a package set (store paths, one a line) but `{}` is a single closure; \
         give two package sets, or two closures",
        printable(set),
        printable(closure)
    )
}

/// Load `input` as a package set when it is one (a file of store paths, plain, xz or
/// zstd, or such a stream; nix-eval-jobs or Hydra job lines; a nixpkgs-review
/// directory), else as a closure. A regular file is judged by its first
/// bytes; standard input and pipes are read once, and what is not a package set is
/// handed to the closure loaders from a private temporary copy.
pub(super) fn load_either(cfg: &Config, input: &str) -> Result<Loaded> {
    let opts = &cfg.load;
    let path = std::path::Path::new(input);
    let stream = input == "-"
        || std::fs::metadata(path).is_ok_and(|m| {
            use std::os::unix::fs::FileTypeExt;
            m.file_type().is_fifo() || m.file_type().is_char_device()
        });
    if stream {
        let read =
            package_set::read(input, opts).with_context(|| format!("cannot load `{input}`"))?;
        return match read {
            Ok(set) => Ok(Loaded::Set(set)),
            Err((bytes, name)) if attr_set::looks_like_eval_jobs(&bytes) => {
                let set = attr_set::parse_eval_jobs(&bytes, &name, opts)
                    .with_context(|| format!("cannot load the job listing `{input}`"))?;
                Ok(Loaded::Set(set))
            }
            Err((bytes, name)) => {
                let mut tmp = super::guard::temp_file(opts)?;
                std::io::Write::write_all(&mut tmp, &bytes)
                    .context("cannot keep standard input in a temporary file")?;
                let tmp_path = tmp.path().to_string_lossy().into_owned();
                let mut c = load_input(cfg, &tmp_path)
                    .map_err(|e| anyhow!("{}", format!("{e:#}").replace(&tmp_path, &name)))?;
                c.origin = name;
                Ok(Loaded::Closure(c))
            }
        };
    }
    if path.is_dir() && attr_set::is_nixpkgs_review(path) {
        let set = attr_set::read_nixpkgs_review(path, opts)
            .with_context(|| format!("cannot load the nixpkgs-review results `{input}`"))?;
        return Ok(Loaded::Set(set));
    }
    let head = path.is_file().then(|| package_set::head(path)).flatten();
    if let Some(head) = head {
        if package_set::looks_like_package_set(&head) {
            let (bytes, name) = package_set::read_bytes(input, opts)
                .with_context(|| format!("cannot load `{input}`"))?;
            let set = package_set::parse(&bytes, &name, opts)
                .with_context(|| format!("cannot load the package set `{input}`"))?;
            return Ok(Loaded::Set(set));
        }
        if attr_set::looks_like_eval_jobs(&head) {
            let (bytes, name) = package_set::read_bytes(input, opts)
                .with_context(|| format!("cannot load `{input}`"))?;
            let set = attr_set::parse_eval_jobs(&bytes, &name, opts)
                .with_context(|| format!("cannot load the job listing `{input}`"))?;
            return Ok(Loaded::Set(set));
        }
    }
    load_input(cfg, input).map(Loaded::Closure)
}

/// The one graph of both package sets: the union walked in the caches once
/// (`--cache`), the `--graph` inputs, or the local store.
fn sets_graph(cfg: &Config, sets: &[&PackageSet], pool: &[Closure]) -> Result<Closure> {
    let mut opts = cfg.load.clone();
    let names: Vec<&str> = sets.iter().map(|s| s.origin.as_str()).collect();
    let bar = super::http::wire(cfg, &names.join(", "), &mut opts);
    let source = if !pool.is_empty() {
        GraphSource::Inputs(pool)
    } else if !cfg.caches.is_empty() {
        GraphSource::Caches
    } else {
        GraphSource::LocalStore
    };
    let c = package_set::load_graph(sets, source, &opts);
    cfg.timings.step("package sets: one graph of both sets");
    if let Some(b) = bar {
        b.clear();
    }
    let c = c.with_context(|| {
        format!(
            "cannot load the closures of the package sets `{}`",
            names.join("`, `")
        )
    })?;
    // Only what the roots reach counts (a --graph input may describe more).
    let missing = missing_below_roots(&c);
    cfg.timings.step("package sets: completeness of the graph");
    if let Some((from, to)) = missing.first() {
        return Err(anyhow!(
            "the graph of the package sets ({}) is not complete: {} reference(s) point to \
             paths it does not describe (first: {} -> {}), so closure sizes would be too small; \
             give `nix path-info --json -r` of every root",
            printable(&c.origin),
            missing.len(),
            c.store_dir.display(from),
            c.store_dir.display(to)
        ));
    }
    within_signed_sizes(&c)?;
    Ok(c)
}

/// The references that leave `c` among the paths its declared roots reach, as
/// (referrer, missing path). One walk, no copy of the closure.
fn missing_below_roots(c: &Closure) -> Vec<(nixcut::store::StorePath, nixcut::store::StorePath)> {
    let mut seen: std::collections::HashSet<&nixcut::store::StorePath> = Default::default();
    let mut stack: Vec<&nixcut::store::StorePath> = c.declared_roots.iter().collect();
    let mut missing = Vec::new();
    while let Some(p) = stack.pop() {
        if !seen.insert(p) {
            continue;
        }
        if let Some(info) = c.paths.get(p) {
            for r in &info.references {
                if !c.paths.contains_key(r) {
                    missing.push((p.clone(), r.clone()));
                } else if !seen.contains(r) {
                    stack.push(r);
                }
            }
        }
    }
    missing
}

/// Diff (or, with limits in `opts`, check) two package sets.
pub(super) fn diff_sets(
    cfg: &Config,
    old: &PackageSet,
    new: &PackageSet,
    graphs: &[String],
    opts: &SetDiffOptions,
) -> Result<SetDiffReport> {
    stdin_at_most_once(graphs.iter().map(String::as_str))?;
    let pool: Vec<Closure> = graphs
        .iter()
        .map(|i| load_input(cfg, i))
        .collect::<Result<_>>()?;
    let graph = sets_graph(cfg, &[old, new], &pool)?;
    discard(pool);
    let report = analysis::set_diff(
        SetInput {
            origin: &old.origin,
            roots: &old.roots,
            attrs: &old.attrs,
            graph: &graph,
        },
        SetInput {
            origin: &new.origin,
            roots: &new.roots,
            attrs: &new.attrs,
            graph: &graph,
        },
        opts,
    )?;
    discard(graph);
    let mut report = report;
    // Each set's own warnings (duplicate lines) once, with its side, first.
    let own: Vec<DiffWarning> = [(Side::Old, old), (Side::New, new)]
        .into_iter()
        .flat_map(|(side, set)| {
            set.warnings.iter().map(move |w| DiffWarning {
                side,
                warning: w.clone(),
            })
        })
        .collect();
    report.warnings.splice(0..0, own);
    Ok(report)
}
