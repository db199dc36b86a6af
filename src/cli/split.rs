//! `nixcut split PATH [--for ROOT]`: PATH looked up as typed, then the split plan.

use std::path::Path;

use anyhow::{Context, Result};

use super::args::SplitArgs;
use super::config::Config;
use super::output::{printable, show};
use super::progress::Progress;
use super::{files_for, inputs, load_input, root_query, targets, Outcome};
use nixcut::analysis;
use nixcut::render;
use nixcut::report::ExpressionFile;

/// Run `nixcut split PATH [--for ROOT]`.
pub(super) fn run(cfg: &Config, a: &SplitArgs) -> Result<Outcome> {
    let (format, style) = (cfg.format, &cfg.style);
    let gpu_targets = targets::checked(&a.gpu_targets)?;
    let expression = a.expr.as_deref().map(expression).transpose()?;
    let input = a.for_root.as_deref().unwrap_or(&a.path);
    let closure = load_input(cfg, input)?;
    let package = match (&a.for_root, closure.declared_roots.first()) {
        // PATH alone: the store path it was loaded as, else `--root` or the only root
        // of the file it was read from.
        (None, Some(p)) => closure.store_dir.display(p),
        (None, None) => match (root_query(cfg, &closure)?, closure.roots().as_slice()) {
            (Some(r), _) => r,
            (None, [only]) => closure.store_dir.display(only),
            _ => a.path.clone(),
        },
        // PATH in ROOT's closure, as typed (`./result-rocblas`, a name, a hash): looked
        // up here, so that an ambiguous or unknown name lists the candidates.
        (Some(_), _) => {
            let q = inputs::in_closure(cfg, &closure, &a.path).context("PATH")?;
            let p = match closure.select_path(&q, "PATH") {
                Ok(p) => p,
                // A store path itself needs no candidates: it is simply not there.
                Err(_) if closure.store_dir.parse_path(&q).is_ok() => {
                    anyhow::bail!(
                        "{} is not in the closure of {}",
                        printable(&q),
                        printable(&closure.origin)
                    )
                }
                Err(e) => return Err(e.into()),
            };
            closure.store_dir.display(&p)
        }
    };
    let opts = analysis::SplitOptions {
        package,
        for_root: a.for_root.is_some(),
        root: root_query(cfg, &closure)?,
        gpu_targets,
        per_target_outputs: a.per_target_outputs,
        files: files_for(cfg, &closure),
        cache: cfg.scan_cache(a.no_cache),
        expression,
        ..Default::default()
    };
    let bar = Progress::new(cfg, 0);
    let tick = |bytes: u64| {
        if let Some(b) = &bar {
            b.tick(bytes);
        }
    };
    let report = analysis::split(&closure, &opts, Some(&tick))?;
    show(cfg, bar, &report.warnings, &report, format, style)?;
    Ok(Outcome::Success)
}

/// `--expr FILE`, read and checked before any scanning: a function returning a
/// `mkDerivation` call on an attribute set.
fn expression(path: &Path) -> Result<ExpressionFile> {
    let name = path.to_string_lossy().into_owned();
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--expr: cannot read {}", printable(&name)))?;
    let file = ExpressionFile { name, text };
    render::check_expression(&file).context("--expr")?;
    Ok(file)
}
