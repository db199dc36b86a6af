//! `nixcut split PATH [--for ROOT] [--gpu-targets …]`: the outputs a package could be
//! split into, from the same evidence a rebuild acts on (`plan`), the actions of SPEC's
//! "Split actions" table, the facts the Nix code is written from (`SplitTerms`;
//! `crate::render::nix` writes it), and what a consumer's closure becomes
//! (`closure_after`).
//!
//! After the split the graph's nodes are (store path, output) pairs: the package becomes
//! one node per output, every other path keeps one. A referrer's edge into the package
//! lands on the output holding the sub-path its hit names; a hit with no sub-path lands
//! on `out`, and the report lists it in `assumptions`.
//!
//! Modules: `plan` (where each entry goes), `cycles` (the plan made buildable: no
//! cycle between outputs, build configuration and self paths rewritten), `actions`
//! (the plan as SPEC's actions), `gpu` (per-architecture rows and remedies),
//! `closure` (the consumer's closure after).

mod actions;
mod closure;
mod config;
mod cycles;
mod gpu;
mod plan;
mod rel;
mod stdenv;

pub use plan::{fact_sub_path, nar_size_of};

use std::collections::{BTreeSet, HashMap};

use super::common::{load_warnings, pick_roots, source_ref};
use super::AnalysisError;
pub(crate) use crate::classify::is_gpu_arch_name as is_gpu_output;
use crate::classify::{ClassRules, EntryType, GpuTarget};
use crate::evidence::{Collector, PathEvidence, Progress, ScanCache, ScanStatus};
use crate::report::{
    Assumption, ExpressionFile, NoSplit, NoSplitReason, OutputUse, SplitCode, SplitExpr,
    SplitExpression, SplitFor, SplitReport, SplitTerms, SplitWarning, SCHEMA_VERSION,
};
use crate::source::Files;
use crate::store::{Closure, StoreDir, StorePath};
use actions::{actions, outputs};
use config::ConfigTexts;
use cycles::plan_without_cycles;
use gpu::{archs, remedies};
use plan::{Plan, Tree};
use rel::{rel, rel_bytes};

/// Options of `nixcut split`.
#[derive(Debug, Clone, Default)]
pub struct SplitOptions {
    /// The package to split (store path, base name, hash or package name).
    pub package: String,
    /// `--for ROOT`: the loaded closure is ROOT's; `--root` picks ROOT among several.
    pub for_root: bool,
    /// `--root`.
    pub root: Option<String>,
    /// `--gpu-targets`: base architectures to keep (empty: all).
    pub gpu_targets: Vec<String>,
    /// `--per-target-outputs`: the other architectures get one output each instead of
    /// a rebuild with fewer `gpuTargets`.
    pub per_target_outputs: bool,
    /// Where the files are.
    pub files: Files,
    /// The scan cache (`None`: `--no-cache`).
    pub cache: Option<ScanCache>,
    /// The file-class rules in force.
    pub rules: ClassRules,
    /// `--expr FILE`: the package's expression, to write the split into.
    pub expression: Option<ExpressionFile>,
}

/// Plan the split of one package and, with a consumer, its closure after the split.
pub fn split(
    c: &Closure,
    opts: &SplitOptions,
    progress: Option<Progress<'_>>,
) -> Result<SplitReport, AnalysisError> {
    let sd = &c.store_dir;
    let (pkg, root) = package_and_root(c, opts)?;
    let (ev, referrers, kept) = scan_evidence(c, opts, &pkg, root.as_ref(), progress)?;
    let mut warnings: Vec<SplitWarning> = load_warnings(c)
        .into_iter()
        .map(SplitWarning::Load)
        .collect();
    warnings.extend(ev.warnings.iter().map(|w| SplitWarning::Evidence {
        path: sd.display(&ev.path),
        warning: w.clone(),
    }));
    let package_size = c.paths.get(&pkg).and_then(|i| i.nar_size).unwrap_or(0);
    let targets: Vec<String> = opts
        .gpu_targets
        .iter()
        .filter_map(|t| GpuTarget::parse(t))
        .map(|t| t.base)
        .collect();

    let mut report = SplitReport {
        schema_version: SCHEMA_VERSION,
        source: source_ref(c),
        package: sd.display(&pkg),
        package_size,
        outputs: Vec::new(),
        for_root: None,
        gpu_targets: targets.clone(),
        archs: Vec::new(),
        actions: Vec::new(),
        code: SplitCode::None,
        expression: None,
        assumptions: Vec::new(),
        remedies: Vec::new(),
        no_split: None,
        warnings,
    };
    if ev.status == ScanStatus::NotScanned {
        report.no_split = Some(NoSplit {
            reason: NoSplitReason::FilesUnavailable,
            classes: Vec::new(),
            references: ev.references.len() as u64,
        });
        return Ok(report);
    }

    let texts = config_texts(sd, &ev, kept, &mut report.warnings);
    let (p, rewrites) = plan_without_cycles(
        sd,
        &texts,
        &ev,
        &targets,
        opts.per_target_outputs,
        &mut report.warnings,
    );
    report.warnings.extend(p.warnings.iter().cloned());
    report.actions = actions(sd, &ev, &p);
    report.actions.extend(rewrites);
    report.outputs = outputs(sd, &p, &report.actions);
    report.archs = archs(c, &ev, &p, &targets);
    report.remedies = remedies(&ev, &p, &targets);
    report.assumptions = self_assumptions(sd, &ev, &p);
    if let Some((root, closure)) = &root {
        let (f, assumed) = closure_after(closure, &ev, &p, root, &referrers)?;
        report.warnings.extend(build_outputs_needed(
            sd,
            &ev,
            &p,
            &referrers,
            &f.outputs_needed,
        ));
        report.for_root = Some(f);
        report.assumptions.extend(assumed);
    }
    if p.outputs.len() == 1 && report.actions.is_empty() {
        report.no_split = Some(only_runtime_files(&ev));
    } else {
        report.code = SplitCode::Facts(SplitTerms {
            store_dir: sd.clone(),
            package: ev.path.clone(),
            outputs: p.outputs.clone(),
            stdenv: stdenv::terms(&ev, &p, &report.actions, &texts),
            gpu_targets: if opts.per_target_outputs {
                Vec::new()
            } else {
                targets
            },
        });
        report.expression = match (&opts.expression, report.split_nix()) {
            (Some(file), Some(code)) => Some(SplitExpression {
                file: file.name.clone(),
                diff: SplitExpr { code, file }.diff()?,
            }),
            _ => None,
        };
    }
    Ok(report)
}

/// The package to split and, with `--for`, the consumer with its closure (which must
/// hold the package).
fn package_and_root(
    c: &Closure,
    opts: &SplitOptions,
) -> Result<(StorePath, Option<(StorePath, Closure)>), AnalysisError> {
    let sd = &c.store_dir;
    let pkg = c.select_root(&opts.package).map_err(|e| match e {
        crate::store::RootSelectionError::NotFound { .. } if opts.for_root => {
            AnalysisError::NotInClosure {
                path: opts.package.clone(),
                root: c.origin.clone(),
            }
        }
        e => e.into(),
    })?;
    if !opts.for_root {
        return Ok((pkg, None));
    }
    let roots = pick_roots(c, opts.root.as_deref())?;
    let root = roots
        .into_iter()
        .next()
        .ok_or_else(|| AnalysisError::NoRoot {
            origin: c.origin.clone(),
        })?;
    let closure = c.restrict_to(std::slice::from_ref(&root));
    if !closure.paths.contains_key(&pkg) {
        return Err(AnalysisError::NotInClosure {
            path: sd.display(&pkg),
            root: sd.display(&root),
        });
    }
    Ok((pkg, Some((root, closure))))
}

/// The texts of build-configuration files the scan kept, by entry position.
type KeptTexts = Vec<(u32, Vec<u8>)>;

/// The evidence of the package and, with a consumer, of every path of its closure
/// that refers to the package (the referrers); and the texts of the package's
/// build-configuration files the scan kept, by entry.
fn scan_evidence(
    c: &Closure,
    opts: &SplitOptions,
    pkg: &StorePath,
    root: Option<&(StorePath, Closure)>,
    progress: Option<Progress<'_>>,
) -> Result<(PathEvidence, Vec<PathEvidence>, KeptTexts), AnalysisError> {
    let mut scan_list = vec![pkg.clone()];
    if let Some((_, closure)) = root {
        scan_list.extend(
            closure
                .paths
                .values()
                .filter(|i| i.path != *pkg && i.references.contains(pkg))
                .map(|i| i.path.clone()),
        );
    }
    let collector = Collector::new(c, opts.files.source(), opts.cache.as_ref()).rules(&opts.rules);
    let mut scanned = collector.scan(&scan_list, progress);
    let kept = match scanned.first_mut().map(|s| &mut s.result) {
        Some(Ok((s, _))) => std::mem::take(&mut s.config_texts),
        _ => Vec::new(),
    };
    let mut evidence: Vec<PathEvidence> = scanned
        .into_iter()
        .map(|s| collector.derive(s, None))
        .collect();
    let referrers = evidence.split_off(1);
    let ev = evidence.pop().ok_or_else(|| AnalysisError::NoRoot {
        origin: c.origin.clone(),
    })?;
    Ok((ev, referrers, kept))
}

/// The texts of the package's build-configuration files, as the scan kept them while
/// the files streamed by (from a directory tree, a cache directory's NARs or an HTTP
/// cache's alike; the analysis reads no file). A configuration file too large for the
/// scan to keep is named in a warning: the paths it names go unchecked.
fn config_texts(
    sd: &StoreDir,
    ev: &PathEvidence,
    kept: KeptTexts,
    warnings: &mut Vec<SplitWarning>,
) -> ConfigTexts {
    let mut kept: HashMap<usize, Vec<u8>> =
        kept.into_iter().map(|(f, t)| (f as usize, t)).collect();
    let mut texts = HashMap::new();
    for (f, e) in ev.entries.iter().enumerate() {
        let regular = matches!(e.entry, EntryType::Regular | EntryType::Executable);
        if !regular || !config::is_config_file(e.path.as_bytes()) {
            continue;
        }
        match kept.remove(&f) {
            Some(t) => {
                texts.insert(f, t);
            }
            None => warnings.push(SplitWarning::ConfigNotKept {
                package: sd.display(&ev.path),
                file: rel(&e.path),
                size: e.size,
                max: crate::scan::MAX_CONFIG_TEXT,
            }),
        }
    }
    ConfigTexts(texts)
}

/// The hits of the package into itself that landed on an output by default.
fn self_assumptions(sd: &StoreDir, ev: &PathEvidence, p: &Plan) -> Vec<Assumption> {
    p.assumptions
        .iter()
        .map(|a| Assumption {
            from: sd.display(&ev.path),
            file: rel(&ev.entries[a.file].path),
            offset: Some(a.offset),
            kind: Some(a.kind.to_string()),
            sub_path: a.sub_path.clone(),
            output: p.outputs[a.output].clone(),
            reason: a.reason,
        })
        .collect()
}

/// Why there is nothing to split: only run-time files, of these classes.
fn only_runtime_files(ev: &PathEvidence) -> NoSplit {
    let classes: BTreeSet<String> = ev
        .entries
        .iter()
        .filter(|e| e.entry != EntryType::Directory)
        .map(|e| e.class.to_string())
        .collect();
    NoSplit {
        reason: NoSplitReason::OnlyRuntimeFiles,
        classes: classes.into_iter().collect(),
        references: ev.references.len() as u64,
    }
}

/// Outputs that hold what builds use (`dev`, `static`) or nobody runs (`doc`, `man`,
/// `debug`): a consumer that still needs one gets a warning naming what it uses there.
const BUILD_OUTPUTS: &[&str] = &["dev", "static", "doc", "man", "debug"];

/// Warnings for the build-only outputs the consumer's own files reach: which file of
/// which referrer names which path that moved there (what it loads, runs or opens must stay
/// where it reaches it, or the split takes nothing out of its closure).
fn build_outputs_needed(
    sd: &StoreDir,
    ev: &PathEvidence,
    p: &Plan,
    referrers: &[PathEvidence],
    needed: &[String],
) -> Vec<SplitWarning> {
    let tree = Tree::new(ev);
    let mut v = Vec::new();
    for name in needed
        .iter()
        .filter(|n| BUILD_OUTPUTS.contains(&n.as_str()))
    {
        let mut uses = BTreeSet::new();
        for r in referrers {
            for h in r
                .reference(&ev.path)
                .map(|x| x.hits.as_slice())
                .unwrap_or(&[])
            {
                let sub = plan::sub_path_in(h, &ev.path, &tree);
                if sub.is_empty() {
                    continue;
                }
                let (l, _) = p.land(&tree, &sub);
                if p.outputs[l] == *name {
                    uses.insert(OutputUse {
                        referrer: r.path.name().to_string(),
                        file: rel(&h.fact.file),
                        names: rel_bytes(&sub),
                    });
                }
            }
        }
        // An output reached only through another one (dev names static) is said there.
        if uses.is_empty() {
            continue;
        }
        let uses: Vec<OutputUse> = uses.into_iter().take(3).collect();
        v.push(SplitWarning::OutputStillNeeded {
            output: name.clone(),
            package: sd.display(&ev.path),
            uses,
        });
    }
    v
}

/// ROOT's closure before and after the split of one package.
fn closure_after(
    c: &Closure,
    ev: &PathEvidence,
    p: &Plan,
    root: &StorePath,
    referrers: &[PathEvidence],
) -> Result<(SplitFor, Vec<Assumption>), AnalysisError> {
    let sd = &c.store_dir;
    let scanned: HashMap<&StorePath, &PathEvidence> =
        referrers.iter().map(|e| (&e.path, e)).collect();
    let ix = closure::Indexed::new(c);
    let w = closure::walk(&ix, root, &[closure::Split { ev, plan: p }], &scanned)?;
    Ok((
        SplitFor {
            root: sd.display(root),
            closure_size_before: w.before,
            closure_size_after: w.after,
            path_count_before: w.before_count,
            path_count_after: w.after_count,
            outputs_needed: w.outputs_needed[0]
                .iter()
                .map(|&o| p.outputs[o].clone())
                .collect(),
            removed: w.removed.iter().map(|x| sd.display(x)).collect(),
        },
        w.assumptions,
    ))
}

/// What every safe split suggestion saves on ROOT's closure, for `why`: each scanned
/// path with something to split (no GPU targets: nothing a consumer may need is
/// dropped) is planned from its evidence; the result holds ROOT's closure with all of
/// them applied at once and each one's saving alone, largest first.
pub fn savings(
    c: &Closure,
    root: &StorePath,
    evidence: &[&PathEvidence],
) -> Result<crate::report::WhySavings, AnalysisError> {
    let sd = &c.store_dir;
    let scanned: HashMap<&StorePath, &PathEvidence> =
        evidence.iter().map(|e| (&e.path, *e)).collect();
    let plans: Vec<(&PathEvidence, Plan)> = evidence
        .iter()
        .filter(|e| e.status != ScanStatus::NotScanned && &e.path != root)
        .map(|e| (*e, plan::plan(e, &[])))
        .filter(|(e, p)| p.outputs.len() > 1 || !actions(sd, e, p).is_empty())
        .collect();
    let ix = closure::Indexed::new(c);
    let mut suggestions = Vec::new();
    let mut before = None;
    for (e, p) in &plans {
        let w = closure::walk(&ix, root, &[closure::Split { ev: e, plan: p }], &scanned)?;
        before = Some(w.before);
        if w.after < w.before {
            suggestions.push(crate::report::WhySuggestion {
                package: sd.display(&e.path),
                saved: w.before - w.after,
                outputs: p.outputs.clone(),
            });
        }
    }
    suggestions.sort_by(|a, b| b.saved.cmp(&a.saved).then(a.package.cmp(&b.package)));
    let splits: Vec<closure::Split<'_>> = plans
        .iter()
        .filter(|(e, _)| suggestions.iter().any(|s| s.package == sd.display(&e.path)))
        .map(|(ev, plan)| closure::Split { ev, plan })
        .collect();
    let all = closure::walk(&ix, root, &splits, &scanned)?;
    Ok(crate::report::WhySavings {
        closure_size_before: before.unwrap_or(all.before),
        closure_size_after: all.after,
        suggestions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nar_size_of_an_empty_tree_is_the_framing_of_one_directory() {
        // nix-archive-1 ( type directory ): 5 strings of 8 + padded contents.
        let n = nar_size_of(std::iter::once((&b""[..], EntryType::Directory, 0)));
        assert_eq!(n, 8 + 16 + 8 + 8 + 8 + 8 + 8 + 16 + 8 + 8);
    }
}
