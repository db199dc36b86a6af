//! What every command shares: how the process ends ([`Outcome`]), and reading its
//! inputs once, the same way (standard input at most once, the closure loaded with the
//! configured options, its root, its files).

use anyhow::{Context, Result};

use super::{http, inputs};

use super::config::Config;
use nixcut::load::load;
use nixcut::source::{self, Files};
use nixcut::store::Closure;

/// How the process should end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything worked (exit 0).
    Success,
    /// A check ran and failed (exit 1).
    CheckFailed,
}

/// Standard input can be read once: refuse `-` given for two inputs of one command
/// (the second would read nothing and be called an empty file).
pub(super) fn stdin_at_most_once<'a>(inputs: impl IntoIterator<Item = &'a str>) -> Result<()> {
    if inputs.into_iter().filter(|i| *i == "-").count() > 1 {
        return Err(anyhow::anyhow!(
            "`-` (standard input) is given for more than one input, but it can be read only \
             once; save one of them to a file"
        ));
    }
    Ok(())
}

/// Load one input with the run's options (over HTTP when it is read from a cache),
/// naming it in the error.
pub(super) fn load_input(cfg: &Config, input: &str) -> Result<Closure> {
    let mut opts = cfg.load.clone();
    opts.roots.extend(cfg.root.clone());
    let bar = http::wire(cfg, input, &mut opts);
    let closure = load(input, &opts);
    if let Some(b) = bar {
        b.clear();
    }
    let closure = closure.map_err(|e| match inputs::missing_input_hint(input) {
        Some(hint) => anyhow::anyhow!("cannot load `{input}`: {e}\n  hint: {hint}"),
        None => anyhow::Error::new(e).context(format!("cannot load `{input}`")),
    })?;
    Ok(closure)
}

/// `--root` as the lookup in `c` takes it (a `./result-x` symlink is the store path it
/// names; see `inputs::in_closure`).
pub(super) fn root_query(cfg: &Config, c: &Closure) -> Result<Option<String>> {
    cfg.root
        .as_deref()
        .map(|r| inputs::in_closure(cfg, c, r).context("--root"))
        .transpose()
}

/// Where the files of a loaded closure come from.
pub(super) fn files_for(cfg: &Config, closure: &Closure) -> Files {
    source::locate_with(closure, cfg.store_root.as_deref(), cfg.http.as_ref())
}
