//! `nixcut split PATH [--for ROOT] [--gpu-targets …]`: the outputs a package could be
//! split into, from the same evidence a rebuild acts on (`plan`), the actions of SPEC's
//! "Split actions" table, the Nix code rendered from them (`nix`), and what a consumer's
//! closure becomes (`closure_after`).
//!
//! After the split the graph's nodes are (store path, output) pairs: the package becomes
//! one node per output, every other path keeps one. A referrer's edge into the package
//! lands on the output holding the sub-path its hit names; a hit with no sub-path lands
//! on `out`, and the report lists it in `assumptions`.

mod closure;
mod config;
mod nix;
mod plan;

pub use plan::{fact_sub_path, nar_size_of};

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::common::{load_warnings, pick_roots, source_ref};
use super::AnalysisError;
use crate::classify::{ClassRules, EntryType, FileClass};
use crate::evidence::{Collector, PathEvidence, Progress, ScanCache, ScanStatus};
use crate::report::{
    ArchRow, Assumption, Because, CycleEdge, NoSplit, NoSplitReason, OutputReference, OutputUse,
    Remedy, RemedyOption, SplitAction, SplitFor, SplitOutput, SplitReport, SplitWarning,
    SCHEMA_VERSION,
};
use crate::source::Files;
use crate::store::{Closure, StoreDir, StorePath};
use plan::{Place, Plan, Tree, OUT};

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
    /// Where the files are.
    pub files: Files,
    /// The scan cache (`None`: `--no-cache`).
    pub cache: Option<ScanCache>,
    /// The file-class rules in force.
    pub rules: ClassRules,
}

/// Plan the split of one package and, with a consumer, its closure after the split.
pub fn split(
    c: &Closure,
    opts: &SplitOptions,
    progress: Option<Progress<'_>>,
) -> Result<SplitReport, AnalysisError> {
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
    let root = if opts.for_root {
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
        Some((root, closure))
    } else {
        None
    };
    // The package and, with a consumer, every path of its closure that refers to it.
    let mut scan_list = vec![pkg.clone()];
    if let Some((_, closure)) = &root {
        scan_list.extend(
            closure
                .paths
                .values()
                .filter(|i| i.path != pkg && i.references.contains(&pkg))
                .map(|i| i.path.clone()),
        );
    }
    let collector = Collector::new(c, opts.files.source(), opts.cache.as_ref()).rules(&opts.rules);
    let mut evidence: Vec<PathEvidence> = collector
        .scan(&scan_list, progress)
        .into_iter()
        .map(|s| collector.derive(s, None))
        .collect();
    let referrers = evidence.split_off(1);
    let ev = evidence.pop().ok_or_else(|| AnalysisError::NoRoot {
        origin: c.origin.clone(),
    })?;
    let mut warnings: Vec<SplitWarning> = load_warnings(c)
        .into_iter()
        .map(SplitWarning::Input)
        .collect();
    warnings.extend(ev.warnings.iter().map(|w| SplitWarning::Evidence {
        path: sd.display(&ev.path),
        warning: w.clone(),
    }));
    let package_size = c.paths.get(&pkg).and_then(|i| i.nar_size).unwrap_or(0);
    let targets: Vec<String> = opts
        .gpu_targets
        .iter()
        .map(|t| crate::classify::base_arch(t))
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
        nix: String::new(),
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

    let (p, rewrites) = plan_without_cycles(sd, opts, &ev, &targets, &mut report.warnings);
    report.warnings.extend(p.warnings.iter().cloned());
    report.actions = actions(sd, &ev, &p);
    report.actions.extend(rewrites);
    report.outputs = outputs(sd, &p, &report.actions);
    report.archs = archs(c, &ev, &p, &targets);
    report.remedies = remedies(&ev, &p, &targets);
    for a in &p.assumptions {
        report.assumptions.push(Assumption {
            from: sd.display(&ev.path),
            file: rel(&ev.entries[a.file].path),
            offset: Some(a.offset),
            kind: Some(a.kind.to_string()),
            sub_path: a.sub_path.clone(),
            output: p.outputs[a.output].clone(),
            reason: a.reason,
        });
    }
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
        let classes: BTreeSet<String> = ev
            .entries
            .iter()
            .filter(|e| e.entry != EntryType::Directory)
            .map(|e| e.class.to_string())
            .collect();
        report.no_split = Some(NoSplit {
            reason: NoSplitReason::OnlyRuntimeFiles,
            classes: classes.into_iter().collect(),
            references: ev.references.len() as u64,
        });
    } else {
        report.nix = nix::render(sd, &ev.path, &p.outputs, &report.actions, &report.for_root);
    }
    Ok(report)
}

/// The store path output `o` of the split package gets (`out`: the package's own).
fn output_path(sd: &StoreDir, pkg: &StorePath, outputs: &[String], o: usize) -> String {
    match o {
        0 => sd.display(pkg),
        _ => format!("{}-{}", sd.display(pkg), outputs[o]),
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
                let sub = plan::sub_path(h, &ev.path);
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

/// Rounds of moving files to break cycles between outputs before giving up.
const CYCLE_ROUNDS: usize = 8;

/// The plan with its build-configuration rewrites, and no cycle between its outputs
/// (Nix refuses outputs that refer to each other, naming no file): while one remains,
/// the files making one of its edges (preferably not from `out`, never stdenv's own
/// `nix-support` file) go to the output they name, and a warning names the files on
/// both sides.
fn plan_without_cycles(
    sd: &StoreDir,
    opts: &SplitOptions,
    ev: &PathEvidence,
    targets: &[String],
    warnings: &mut Vec<SplitWarning>,
) -> (Plan, Vec<SplitAction>) {
    let mut forced: BTreeMap<usize, String> = BTreeMap::new();
    for round in 0.. {
        let mut p = plan::plan_with(ev, targets, &forced);
        let mut w = Vec::new();
        let rewrites = check_config(sd, opts, ev, &mut p, &mut w);
        let Some(cycle) = find_cycle(&p) else {
            warnings.extend(w);
            return (p, rewrites);
        };
        let files = |a: usize, b: usize| -> Vec<String> {
            let mut v: Vec<String> = p
                .edges
                .get(&(a, b))
                .into_iter()
                .flatten()
                .map(|&f| rel(&ev.entries[f].path))
                .collect();
            if p.synthetic_edges.contains(&(a, b)) {
                v.push("nix-support/propagated-build-inputs (stdenv)".to_string());
            }
            v
        };
        let edges: Vec<CycleEdge> = cycle
            .iter()
            .map(|&(a, b)| CycleEdge {
                files: files(a, b),
                from: p.outputs[a].clone(),
                to: p.outputs[b].clone(),
            })
            .collect();
        let outputs: Vec<String> = cycle.iter().map(|(a, _)| p.outputs[*a].clone()).collect();
        // The edge to cut: real files, from an output other than out when there is one.
        let cut = cycle
            .iter()
            .filter(|(a, b)| p.edges.get(&(*a, *b)).is_some_and(|f| !f.is_empty()))
            .min_by_key(|(a, _)| *a == 0)
            .copied();
        match cut {
            Some((a, b)) if round < CYCLE_ROUNDS => {
                let moved = files(a, b);
                for &f in &p.edges[&(a, b)] {
                    forced.insert(f, p.outputs[b].clone());
                }
                warnings.push(SplitWarning::CycleBroken {
                    outputs,
                    edges,
                    moved,
                    to: p.outputs[b].clone(),
                });
            }
            _ => {
                warnings.extend(w);
                warnings.push(SplitWarning::CycleRemains { outputs, edges });
                return (p, rewrites);
            }
        }
    }
    unreachable!("the loop returns")
}

/// A cycle among the outputs' references to each other, as its edges.
fn find_cycle(p: &Plan) -> Option<Vec<(usize, usize)>> {
    let n = p.outputs.len();
    let mut next: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for &(a, b) in p.edges.keys().chain(p.synthetic_edges.iter()) {
        if a != b {
            next[a].insert(b);
        }
    }
    // Depth-first search with colours; the path on the stack gives the cycle.
    let mut colour = vec![0u8; n];
    let mut path: Vec<usize> = Vec::new();
    fn visit(
        u: usize,
        next: &[BTreeSet<usize>],
        colour: &mut [u8],
        path: &mut Vec<usize>,
    ) -> Option<Vec<(usize, usize)>> {
        colour[u] = 1;
        path.push(u);
        for &v in &next[u] {
            if colour[v] == 1 {
                let at = path.iter().position(|&x| x == v).unwrap_or(0);
                let mut c: Vec<(usize, usize)> =
                    path[at..].windows(2).map(|w| (w[0], w[1])).collect();
                c.push((u, v));
                return Some(c);
            }
            if colour[v] == 0 {
                if let Some(c) = visit(v, next, colour, path) {
                    return Some(c);
                }
            }
        }
        path.pop();
        colour[u] = 2;
        None
    }
    (0..n).find_map(|u| {
        if colour[u] == 0 {
            visit(u, &next, &mut colour, &mut path)
        } else {
            None
        }
    })
}

/// Build-configuration integrity (`config`): read the package's CMake and pkg-config
/// files, add the rewrites that keep every path they name resolving after the moves,
/// and what stdenv adds to `dev`; returns the rewrite actions.
fn check_config(
    sd: &StoreDir,
    opts: &SplitOptions,
    ev: &PathEvidence,
    p: &mut Plan,
    warnings: &mut Vec<SplitWarning>,
) -> Vec<SplitAction> {
    let physical = match opts.files.source().map(|s| s.open(&ev.path)) {
        Some(Ok(crate::source::PathFiles::Tree { physical })) => Some(physical),
        _ => None,
    };
    let read = |f: usize| -> Option<Vec<u8>> {
        use std::os::unix::ffi::OsStrExt;
        let root = physical.as_ref()?;
        let rel = std::ffi::OsStr::from_bytes(ev.entries[f].path.as_bytes());
        let file = root.join(rel);
        // The scan saw a regular file here below directories: read it only if it still
        // is one, never through a symlink (the tool never follows one out of the store).
        let mut dir = file.parent();
        while let Some(d) = dir.filter(|d| d.starts_with(root) && *d != root.as_path()) {
            if !std::fs::symlink_metadata(d).ok()?.is_dir() {
                return None;
            }
            dir = d.parent();
        }
        let meta = std::fs::symlink_metadata(&file).ok()?;
        meta.is_file().then(|| std::fs::read(&file).ok()).flatten()
    };
    let moved = |f: usize| p.place[f] != plan::Place::Output(0);
    let unread = physical.is_none()
        && ev
            .entries
            .iter()
            .enumerate()
            .any(|(f, e)| config::is_config_file(e.path.as_bytes()) && moved(f));
    if unread {
        warnings.push(SplitWarning::ConfigUnchecked {
            package: sd.display(&ev.path),
        });
    }
    let rewrites = config::rewrites(ev, &sd.display(&ev.path), p, &read);
    let outputs = p.outputs.clone();
    let path_of = |o: usize| output_path(sd, &ev.path, &outputs, o);
    config::apply(p, ev, &rewrites, &read, &path_of);
    let propagated = config::propagate_dev(p, ev, &path_of);
    if let Some(dev) = p.outputs.iter().position(|o| o == "dev") {
        for o in propagated {
            p.synthetic_edges.push((dev, o));
        }
    }
    let mut actions = self_path_rewrites(ev, p, warnings);
    actions.extend(rewrites.into_iter().map(|r| SplitAction::Rewrite {
        output: p.outputs[r.output].clone(),
        file: rel(&ev.entries[r.file].path),
        from: r.from,
        to: format!("${}{}", p.outputs[r.to_output], r.to_rest),
        because: vec![r.because],
    }));
    actions
}

/// The package's own absolute paths (`$out/SUB`) in files, where SUB moved to another
/// output: rewritten to that output (`moveToOutput` rewrites nothing). A path that is
/// a prefix of another path the file names that stays is left, with a warning.
fn self_path_rewrites(
    ev: &PathEvidence,
    p: &Plan,
    warnings: &mut Vec<SplitWarning>,
) -> Vec<SplitAction> {
    let mut v = Vec::new();
    let tree = Tree::new(ev);
    for (&f, subs) in &p.self_paths {
        let Some(o) = p.output_of_file(&tree, ev, f) else {
            continue;
        };
        let file = rel(&ev.entries[f].path);
        let named: BTreeSet<Vec<u8>> = ev
            .references
            .iter()
            .filter(|r| r.target == ev.path)
            .flat_map(|r| r.hits.iter())
            .filter(|h| h.fact.file == ev.entries[f].path)
            .map(|h| plan::sub_path(h, &ev.path))
            .collect();
        let mut order: Vec<(&Vec<u8>, &usize)> = subs.iter().collect();
        order.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(b.0)));
        for (sub, &l) in order {
            let clash = named.iter().any(|t| {
                t.len() > sub.len()
                    && t.starts_with(sub)
                    && t[sub.len()] != b'/'
                    && subs.get(t) != Some(&l)
            });
            let sub_s = rel_bytes(sub);
            if clash {
                warnings.push(SplitWarning::PrefixNotRewritten {
                    file: file.clone(),
                    sub: sub_s,
                    output: p.outputs[l].clone(),
                });
                continue;
            }
            v.push(SplitAction::Rewrite {
                output: p.outputs[o].clone(),
                file: file.clone(),
                from: format!("$out/{sub_s}"),
                to: format!("${}/{sub_s}", p.outputs[l]),
                because: vec![Because {
                    file: file.clone(),
                    offset: None,
                    kind: "self-reference".to_string(),
                    rule: "split/self-path".to_string(),
                    detail: format!("names $out/{sub_s}, which moves to {}", p.outputs[l]),
                    count: 1,
                }],
            });
        }
    }
    v
}

fn rel_bytes(p: &[u8]) -> String {
    String::from_utf8_lossy(p).into_owned()
}

fn rel(p: &crate::scan::RelPath) -> String {
    String::from_utf8_lossy(p.as_bytes()).into_owned()
}

/// The actions in the order a build runs them: deletions, reference removals, RUNPATH
/// rewrites, then moves (fewest: whole directories where everything below goes to one
/// output, a glob where it names exactly one architecture's files).
fn actions(sd: &StoreDir, ev: &PathEvidence, p: &Plan) -> Vec<SplitAction> {
    let entries = &ev.entries;
    let mut v = Vec::new();
    for (f, because) in &p.deletes {
        v.push(SplitAction::Delete {
            path: rel(&entries[*f].path),
            because: because.clone(),
        });
    }
    for (target, (files, because)) in &p.remove_refs {
        v.push(SplitAction::RemoveReferences {
            target: sd.display(target),
            files: files.iter().map(|f| rel(&entries[*f].path)).collect(),
            because: because.clone(),
        });
    }
    for r in &p.rpaths {
        v.push(SplitAction::ShrinkRpath {
            files: vec![rel(&entries[r.file].path)],
            drop: r.drop.clone(),
            kept: r.kept.join(":"),
            because: r.because.clone(),
        });
    }
    let tree = Tree::new(ev);
    // The one output every leaf below an entry goes to (None: several, or none).
    let n = entries.len();
    let mut only: Vec<Option<Option<usize>>> = vec![None; n];
    // NAR order puts children after parents: fold bottom-up.
    for i in (0..n).rev() {
        let mine: Option<Option<usize>> = match &p.place[i] {
            Place::Output(o) => Some(Some(*o)),
            Place::Deleted => None,
            Place::Implicit => {
                let mut acc: Option<Option<usize>> = None;
                for &c in &tree.children[i] {
                    match (&acc, &only[c]) {
                        (_, None) => {}
                        (None, x) => acc = *x,
                        (Some(a), Some(b)) if a == b => {}
                        _ => acc = Some(None),
                    }
                }
                acc
            }
        };
        only[i] = mine;
    }
    let mut moves: Vec<(usize, usize)> = Vec::new();
    let mut stack: Vec<usize> = entries
        .iter()
        .position(|e| e.path.is_root())
        .map(|r| tree.children[r].iter().rev().copied().collect())
        .unwrap_or_default();
    while let Some(i) = stack.pop() {
        match only[i] {
            None => {}
            Some(Some(0)) => {}
            // stdenv and other hooks write into nix-support: its files move, never it.
            Some(Some(_)) if entries[i].path.as_bytes() == b"nix-support" => {
                stack.extend(tree.children[i].iter().rev().copied())
            }
            Some(Some(o)) => moves.push((i, o)),
            Some(None) => stack.extend(tree.children[i].iter().rev().copied()),
        }
    }
    // Globs: a directory's direct children going to one architecture's output.
    let mut groups: BTreeMap<(Vec<u8>, usize), Vec<usize>> = BTreeMap::new();
    for &(i, o) in &moves {
        groups
            .entry((entries[i].path.parent().to_vec(), o))
            .or_default()
            .push(i);
    }
    let mut globbed: HashMap<usize, String> = HashMap::new();
    for ((dir, o), members) in &groups {
        let token = &p.outputs[*o];
        // A glob is expanded by the shell: only in a directory whose name it keeps.
        if members.len() < 2 || !is_gpu_output(token) || !nix::is_plain(&rel_bytes(dir)) {
            continue;
        }
        let Some(&d) = tree.by_path.get(dir.as_slice()) else {
            continue;
        };
        let matched: BTreeSet<usize> = tree.children[d]
            .iter()
            .copied()
            .filter(|&c| p.place[c] != Place::Deleted)
            .filter(|&c| {
                let name = entries[c].path.name();
                !name.starts_with(b".") && contains(name, token.as_bytes())
            })
            .collect();
        let want: BTreeSet<usize> = members.iter().copied().collect();
        if matched == want {
            let glob = if dir.is_empty() {
                format!("*{token}*")
            } else {
                format!("{}/*{token}*", String::from_utf8_lossy(dir))
            };
            for m in members {
                globbed.insert(*m, glob.clone());
            }
        }
    }
    let mut done_globs = BTreeSet::new();
    for (i, o) in moves {
        let path = match globbed.get(&i) {
            Some(g) => {
                if !done_globs.insert(g.clone()) {
                    continue;
                }
                g.clone()
            }
            None => rel(&entries[i].path),
        };
        let because = move_because(ev, p, &tree, i, globbed.get(&i).map(|g| (g, o)));
        v.push(SplitAction::Move {
            path,
            to: p.outputs[o].clone(),
            because,
        });
    }
    v
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

fn is_gpu_output(name: &str) -> bool {
    name.starts_with("gfx") || name.starts_with("sm_")
}

/// Why entries move: one item per (class, rule) among the moved files.
fn move_because(
    ev: &PathEvidence,
    p: &Plan,
    tree: &Tree<'_>,
    i: usize,
    glob: Option<(&String, usize)>,
) -> Vec<Because> {
    let entries = &ev.entries;
    let mut leaves = Vec::new();
    match glob {
        Some((_, o)) => {
            let dir = entries[i].path.parent();
            if let Some(&d) = tree.by_path.get(dir) {
                leaves.extend(
                    tree.children[d]
                        .iter()
                        .copied()
                        .filter(|&c| p.place[c] == Place::Output(o)),
                );
            }
        }
        None => {
            let mut stack = vec![i];
            while let Some(x) = stack.pop() {
                if matches!(p.place[x], Place::Output(_)) {
                    leaves.push(x);
                }
                stack.extend(tree.children[x].iter().copied());
            }
        }
    }
    let mut by: BTreeMap<(String, String), (String, u64)> = BTreeMap::new();
    for l in leaves {
        let e = &entries[l];
        let k = by
            .entry((e.class.to_string(), e.class_rule.to_string()))
            .or_insert((rel(&e.path), 0));
        k.1 += 1;
    }
    by.into_iter()
        .map(|((class, rule), (file, count))| Because {
            file,
            offset: None,
            kind: class,
            rule,
            detail: String::new(),
            count,
        })
        .collect()
}

/// The outputs for the report, with their top-most moved paths and references.
fn outputs(sd: &StoreDir, p: &Plan, actions: &[SplitAction]) -> Vec<SplitOutput> {
    p.outputs
        .iter()
        .enumerate()
        .map(|(o, name)| {
            let paths = actions
                .iter()
                .filter_map(|a| match a {
                    SplitAction::Move { path, to, .. } if to == name => Some(path.clone()),
                    _ => None,
                })
                .collect();
            let references = p.references[o]
                .iter()
                .map(|((t, landing), hits)| OutputReference {
                    path: sd.display(t),
                    output: landing.map(|l| p.outputs[l].clone()),
                    hits: *hits,
                })
                .collect();
            SplitOutput {
                name: name.clone(),
                size: p.sizes[o],
                files: p.files[o],
                paths,
                references,
            }
        })
        .collect()
}

/// Per GPU architecture: its files, their bytes, what only they refer to.
fn archs(c: &Closure, ev: &PathEvidence, p: &Plan, targets: &[String]) -> Vec<ArchRow> {
    let entries = &ev.entries;
    let mut rows: BTreeMap<String, ArchRow> = BTreeMap::new();
    let mut file_arch: HashMap<&[u8], &str> = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        let FileClass::Gpu(a) = &e.class else {
            continue;
        };
        if e.entry == EntryType::Directory || p.place[i] == Place::Deleted {
            continue;
        }
        file_arch.insert(e.path.as_bytes(), a);
        let output = match p.place[i] {
            Place::Output(o) => p.outputs[o].clone(),
            _ => OUT.to_string(),
        };
        let r = rows.entry(a.clone()).or_insert_with(|| ArchRow {
            arch: a.clone(),
            files: 0,
            bytes: 0,
            referenced_bytes: 0,
            output,
            kept: targets.is_empty() || targets.contains(a),
        });
        r.files += 1;
        r.bytes += e.size;
    }
    for r in &ev.references {
        if r.target == ev.path {
            continue;
        }
        let mut only: Option<&str> = None;
        let mut single = true;
        for h in &r.hits {
            match file_arch.get(h.fact.file.as_bytes()) {
                Some(a) if only.is_none_or(|o| o == *a) => only = Some(a),
                _ => single = false,
            }
        }
        if let (true, Some(a)) = (single, only) {
            if let Some(row) = rows.get_mut(a) {
                row.referenced_bytes +=
                    c.paths.get(&r.target).and_then(|i| i.nar_size).unwrap_or(0);
            }
        }
    }
    rows.into_values().collect()
}

/// What moved GPU files need to be found again (rocm-runtime.md, "Rules", point 5).
fn remedies(ev: &PathEvidence, p: &Plan, targets: &[String]) -> Vec<Remedy> {
    let pname = crate::store::parse_package_name(ev.path.name()).pname;
    let mut v = Vec::new();
    for (o, name) in p.outputs.iter().enumerate() {
        if !is_gpu_output(name) {
            continue;
        }
        let mut dirs: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        for (i, e) in ev.entries.iter().enumerate() {
            if p.place[i] == Place::Output(o) {
                *dirs.entry(e.path.parent().to_vec()).or_default() += 1;
            }
        }
        let Some((dir, _)) = dirs.into_iter().max_by_key(|(_, n)| *n) else {
            continue;
        };
        let dir = String::from_utf8_lossy(&dir).into_owned();
        let known = [
            ("lib/rocblas/library", "rocBLAS", "ROCBLAS_TENSILE_LIBPATH"),
            (
                "hipblaslt/library",
                "hipBLASLt",
                "HIPBLASLT_TENSILE_LIBPATH",
            ),
            ("share/miopen/db", "MIOpen", "MIOPEN_SYSTEM_DB_PATH"),
        ];
        let lib = known.iter().find(|(d, _, _)| dir.ends_with(d));
        let list = targets
            .iter()
            .map(|t| nix_string(t))
            .collect::<Vec<_>>()
            .join(" ");
        let mut options = vec![RemedyOption::Rebuild {
            nix: format!("{pname}.override {{ gpuTargets = [ {list} ]; }}"),
        }];
        if let Some((_, _, var)) = lib {
            options.push(RemedyOption::EnvVar {
                name: var.to_string(),
                value: format!(
                    "${{symlinkJoin {{ name = \"{pname}-{name}-library\"; paths = [ \"${{{pname}}}/{dir}\" \"${{{pname}.{name}}}/{dir}\" ]; }}}}"
                ),
            });
        }
        options.push(RemedyOption::SymlinkBack);
        v.push(Remedy {
            output: name.clone(),
            directory: dir,
            library: lib.map(|(_, l, _)| l.to_string()),
            options,
        });
    }
    v
}

/// A Nix string literal.
pub(crate) fn nix_string(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                o.push('\\');
                o.push(c);
            }
            '$' => o.push_str("\\$"),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o.push('"');
    o
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
