//! The plan as SPEC's split actions, in the order a build runs them (deletions,
//! reference removals, RUNPATH rewrites, then the fewest moves, with a glob per GPU
//! architecture's directory), each with its evidence; and the outputs for the report.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::plan::{Leaf, Place, Plan, Tree};
use super::{is_gpu_output, rel, rel_bytes};
use crate::classify::FileClass;
use crate::evidence::PathEvidence;
use crate::report::{
    is_plain, Because, BecauseDetail, BecauseKind, OutputReference, SplitAction, SplitOutput,
};
use crate::store::StoreDir;

/// The actions in the order a build runs them: deletions, reference removals, RUNPATH
/// rewrites, then moves (fewest: whole directories where everything below goes to one
/// output, a glob where it names exactly one architecture's files).
pub(super) fn actions(sd: &StoreDir, ev: &PathEvidence, p: &Plan) -> Vec<SplitAction> {
    let entries = &ev.entries;
    let mut v = edit_actions(sd, ev, p);
    let tree = Tree::new(ev);
    let moves = top_moves(ev, p, &tree);
    let globbed = globs(ev, p, &tree, &moves);
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

/// The actions that edit or delete files: deletions, reference removals, RUNPATH
/// rewrites, in that order.
fn edit_actions(sd: &StoreDir, ev: &PathEvidence, p: &Plan) -> Vec<SplitAction> {
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
    let by_path: HashMap<&[u8], usize> = if p.gpu_drops.is_empty() {
        HashMap::new()
    } else {
        entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.path.as_bytes(), i))
            .collect()
    };
    for (arch, dropped) in &p.gpu_drops {
        // The top-most entries: those whose parent is not dropped for it too.
        let tops: Vec<usize> = dropped
            .iter()
            .copied()
            .filter(|&i| {
                let parent = entries[i].path.parent();
                !by_path.get(parent).is_some_and(|d| dropped.contains(d))
            })
            .collect();
        let files = dropped
            .iter()
            .copied()
            .filter(|&i| entries[i].entry != crate::classify::EntryType::Directory);
        v.push(SplitAction::DropGpuArch {
            arch: arch.clone(),
            paths: tops.iter().map(|&i| rel(&entries[i].path)).collect(),
            because: class_because(ev, files),
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
    v
}

/// The fewest moves: (entry, output) for each top-most entry whose every leaf goes to
/// one output other than `out`, in NAR order (`nix-support` itself never moves: stdenv
/// and other hooks write into it).
fn top_moves(ev: &PathEvidence, p: &Plan, tree: &Tree<'_>) -> Vec<(usize, usize)> {
    let entries = &ev.entries;
    // The one output every leaf below an entry goes to (None: several, or none).
    let only = tree.uniform_below(entries.len(), |i| match &p.place[i] {
        Place::Output(o) => Leaf::Is(Some(*o)),
        Place::Deleted => Leaf::Nothing,
        Place::Implicit => Leaf::Directory,
    });
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
            Some(Some(_)) if entries[i].path.as_bytes() == b"nix-support" => {
                stack.extend(tree.children[i].iter().rev().copied())
            }
            Some(Some(o)) => moves.push((i, o)),
            Some(None) => stack.extend(tree.children[i].iter().rev().copied()),
        }
    }
    moves
}

/// Globs for moves: where a directory's direct children going to one GPU
/// architecture's output are exactly its children named for it, one glob
/// (`dir/*gfx90a*`) moves them all (entry → glob).
fn globs(
    ev: &PathEvidence,
    p: &Plan,
    tree: &Tree<'_>,
    moves: &[(usize, usize)],
) -> HashMap<usize, String> {
    let entries = &ev.entries;
    let mut groups: BTreeMap<(Vec<u8>, usize), Vec<usize>> = BTreeMap::new();
    for &(i, o) in moves {
        groups
            .entry((entries[i].path.parent().to_vec(), o))
            .or_default()
            .push(i);
    }
    let mut globbed: HashMap<usize, String> = HashMap::new();
    for ((dir, o), members) in &groups {
        let token = &p.outputs[*o];
        // A glob is expanded by the shell: only in a directory whose name it keeps.
        if members.len() < 2 || !is_gpu_output(token) || !is_plain(&rel_bytes(dir)) {
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
    globbed
}

/// Whether `needle` (not empty) occurs in `hay`.
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
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
    class_because(ev, leaves.into_iter())
}

/// One evidence item per (class, rule) among `files`: the first file and the count.
fn class_because(ev: &PathEvidence, files: impl Iterator<Item = usize>) -> Vec<Because> {
    let mut by: BTreeMap<(String, String), (FileClass, String, u64)> = BTreeMap::new();
    for l in files {
        let e = &ev.entries[l];
        // Keyed by the class's name, so the items are in the order of their names.
        by.entry((e.class.to_string(), e.class_rule.to_string()))
            .or_insert((e.class.clone(), rel(&e.path), 0))
            .2 += 1;
    }
    by.into_iter()
        .map(|((_, rule), (class, file, count))| Because {
            file,
            offset: None,
            kind: BecauseKind::Class(class),
            rule,
            detail: BecauseDetail::None,
            count,
        })
        .collect()
}

/// The outputs for the report, with their top-most moved paths and references.
pub(super) fn outputs(sd: &StoreDir, p: &Plan, actions: &[SplitAction]) -> Vec<SplitOutput> {
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
