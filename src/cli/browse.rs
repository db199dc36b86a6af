//! `nixcut browse ROOT`: the closure loaded as every command loads it, then the terminal
//! UI (`nixcut::browse`), or one screen printed with `--dump-screen`.

use std::io::{self, IsTerminal, Write};
use std::sync::Arc;

use anyhow::{anyhow, bail, Result};

use super::args::BrowseArgs;
use super::config::Config;
use super::output::discard;
use super::{files_for, load_input, root_query, Outcome};
use nixcut::analysis::EvidenceOptions;
use nixcut::browse::{self, BrowseOptions, Loader};
use nixcut::classify::ClassRules;
use nixcut::source::Files;

/// Run `nixcut browse ROOT`.
pub(super) fn run(cfg: &Config, a: &BrowseArgs, rules: ClassRules) -> Result<Outcome> {
    let dump = a
        .dump_screen
        .as_deref()
        .map(browse::parse_dump)
        .transpose()
        .map_err(|e| anyhow!("--dump-screen: {e}"))?;
    // Checked before loading: a pipe gets the error at once.
    if dump.is_none() && !(io::stdout().is_terminal() && io::stdin().is_terminal()) {
        bail!(
            "`nixcut browse` draws on a terminal, and standard {} is not one; \
             `--dump-screen 80x24` prints a screen as text instead, and `nixcut why` \
             writes the same sizes as a table",
            if io::stdout().is_terminal() {
                "input"
            } else {
                "output"
            }
        );
    }
    let closure = Arc::new(load_input(cfg, &a.input)?);
    // OTHER (`d`) is loaded as every input is, with no progress bar over the screen.
    let quiet = Config {
        quiet: true,
        ..cfg.clone()
    };
    let load_other: Loader = Arc::new(move |input: &str| {
        load_input(&quiet, input).map_err(|e| {
            e.chain()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(": ")
        })
    });
    let opts = BrowseOptions {
        root: root_query(cfg, &closure)?,
        evidence: EvidenceOptions {
            enabled: !a.no_evidence,
            files: if a.no_evidence {
                Files::default()
            } else {
                files_for(cfg, &closure)
            },
            cache: cfg.scan_cache(cfg.no_cache),
            rules,
            timings: cfg.timings.clone(),
            ..Default::default()
        },
        color: cfg.style.color,
        max_chains: a.max_chains,
        load_other,
    };
    let mut session = browse::open(closure, &opts)?;
    match dump {
        Some(spec) => {
            let mut out = io::stdout().lock();
            browse::dump_screen(&mut session, &spec, &mut out)?;
            out.flush()?;
            cfg.timings.step("frame drawn and printed");
        }
        None => browse::run(&mut session)?,
    }
    discard(session);
    Ok(Outcome::Success)
}
