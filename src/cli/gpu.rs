//! `nixcut gpu ROOT`: what each GPU architecture costs in the closure.

use anyhow::Result;

use super::args::GpuArgs;
use super::config::Config;
use super::output::{discard, show};
use super::progress::Progress;
use super::{files_for, load_input, root_query, targets, Outcome};
use nixcut::analysis;
use nixcut::classify::ClassRules;

/// Run `nixcut gpu ROOT`.
pub(super) fn run(cfg: &Config, a: &GpuArgs, rules: ClassRules) -> Result<Outcome> {
    let (format, style) = (cfg.format, &cfg.style);
    let gpu_targets = targets::checked(&a.gpu_targets)?;
    let closure = load_input(cfg, &a.input)?;
    let opts = analysis::GpuOptions {
        root: root_query(cfg, &closure)?,
        gpu_targets,
        files: files_for(cfg, &closure),
        cache: cfg.scan_cache(cfg.no_cache),
        rules,
    };
    let bar = Progress::new(cfg, closure.paths.len() as u64);
    let tick = |bytes: u64| {
        if let Some(b) = &bar {
            b.tick(bytes);
        }
    };
    let report = analysis::gpu(&closure, &opts, Some(&tick))?;
    show(cfg, bar, &report.warnings, &report, format, style)?;
    discard(closure);
    Ok(Outcome::Success)
}
