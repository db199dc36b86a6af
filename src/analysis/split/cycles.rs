//! The plan made buildable: no cycle between its outputs (Nix refuses them), the
//! package's CMake and pkg-config files rewritten so every path they name resolves
//! after the moves (`config`), and its own `$out/SUB` paths rewritten where SUB moved.

use std::collections::{BTreeMap, BTreeSet};

use super::config::{self, ConfigTexts};
use super::plan::{self, Plan, Tree};
use super::{rel, rel_bytes};
use crate::evidence::PathEvidence;
use crate::report::{Because, BecauseDetail, BecauseKind, CycleEdge, SplitAction, SplitWarning};
use crate::store::{StoreDir, StorePath};

/// The store path output `o` of the split package gets (`out`: the package's own).
fn output_path(sd: &StoreDir, pkg: &StorePath, outputs: &[String], o: usize) -> String {
    match o {
        0 => sd.display(pkg),
        _ => format!("{}-{}", sd.display(pkg), outputs[o]),
    }
}

/// Rounds of moving files to break cycles between outputs before giving up.
const CYCLE_ROUNDS: usize = 8;

/// The plan with its build-configuration rewrites, and no cycle between its outputs
/// (Nix refuses outputs that refer to each other, naming no file): while one remains,
/// the files making one of its edges (preferably not from `out`, never stdenv's own
/// `nix-support` file) go to the output they name, and a warning names the files on
/// both sides.
pub(super) fn plan_without_cycles(
    sd: &StoreDir,
    texts: &ConfigTexts,
    ev: &PathEvidence,
    targets: &[String],
    per_target_outputs: bool,
    warnings: &mut Vec<SplitWarning>,
) -> (Plan, Vec<SplitAction>) {
    let mut forced: BTreeMap<usize, String> = BTreeMap::new();
    for round in 0.. {
        let mut p = plan::plan_with(ev, targets, per_target_outputs, &forced);
        let mut w = Vec::new();
        let rewrites = check_config(sd, texts, ev, &mut p, &mut w);
        let Some(cycle) = find_cycle(&p) else {
            warnings.extend(w);
            return (p, rewrites);
        };
        let files = |a: usize, b: usize| -> Vec<String> {
            (p.edges.get(&(a, b)).into_iter().flatten())
                .map(|&f| rel(&ev.entries[f].path))
                .collect()
        };
        let by_stdenv = |a: usize, b: usize| p.synthetic_edges.contains(&(a, b));
        let edges: Vec<CycleEdge> = cycle
            .iter()
            .map(|&(a, b)| CycleEdge {
                files: files(a, b),
                stdenv: by_stdenv(a, b),
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
                let (moved, moved_stdenv) = (files(a, b), by_stdenv(a, b));
                for &f in &p.edges[&(a, b)] {
                    forced.insert(f, p.outputs[b].clone());
                }
                warnings.push(SplitWarning::CycleBroken {
                    outputs,
                    edges,
                    moved,
                    moved_stdenv,
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

/// Build-configuration integrity (`config`): from the texts of the package's CMake and
/// pkg-config files (gathered before the analysis), add the rewrites that keep every
/// path they name resolving after the moves, and what stdenv adds to `dev`; returns the
/// rewrite actions.
fn check_config(
    sd: &StoreDir,
    texts: &ConfigTexts,
    ev: &PathEvidence,
    p: &mut Plan,
    warnings: &mut Vec<SplitWarning>,
) -> Vec<SplitAction> {
    let read = |f: usize| texts.get(f);
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
            .map(|h| plan::sub_path_in(h, &ev.path, &tree))
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
                    kind: BecauseKind::SelfReference,
                    rule: "split/self-path".to_string(),
                    detail: BecauseDetail::MovesTo {
                        sub: sub_s,
                        output: p.outputs[l].clone(),
                    },
                    count: 1,
                }],
            });
        }
    }
    v
}
