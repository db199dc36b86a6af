//! `--rules FILE` and `nixcut rules`: the binary reads the user's rules file (the
//! library only parses text, `nixcut::classify::class_rules_from_file`) and lists the
//! rule tables in force: class rules (user rows first, marked), the evidence-kind file
//! rules and the verdict rules, each with its name, what it matches and what it gives.
//!
//! The report is built by `nixcut::analysis::rules` and rendered like every other
//! report (`nixcut::render`).

use std::path::Path;

use anyhow::{Context, Result};

use super::config::Config;
use super::Outcome;
use nixcut::classify::{class_rules_from_file, ClassRules};

/// The class rules in force: the built-in table, with the rows of `--rules FILE` ahead
/// of it when given. Errors name the file (and, for its contents, line and column).
pub fn class_rules(cfg: &Config) -> Result<ClassRules> {
    match &cfg.rules_file {
        None => Ok(ClassRules::builtin()),
        Some(path) => load(path),
    }
}

/// A rules file larger than this is refused (`--rules /dev/zero` must not eat memory).
const MAX_RULES_FILE: u64 = 16 << 20;

fn load(path: &Path) -> Result<ClassRules> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_RULES_FILE + 1).read_to_end(&mut bytes))
        .with_context(|| format!("cannot read rules file `{}`", path.display()))?;
    if bytes.len() as u64 > MAX_RULES_FILE {
        anyhow::bail!(
            "rules file `{}` is larger than {} MiB",
            path.display(),
            MAX_RULES_FILE >> 20
        );
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| anyhow::anyhow!("rules file `{}` is not UTF-8 text: {e}", path.display()))?;
    Ok(class_rules_from_file(&text, &path.display().to_string())?)
}

/// `nixcut rules`: print the tables in force.
pub fn run(cfg: &Config, rules: &ClassRules) -> Result<Outcome> {
    let r = nixcut::analysis::rules(
        rules,
        cfg.rules_file.as_ref().map(|p| p.display().to_string()),
    );
    super::output::emit(&r, cfg.format, &cfg.style)?;
    Ok(Outcome::Success)
}
