//! A consumer's closure after one or more packages are split: the graph's nodes are
//! (store path, output) pairs, each split package one node per output, every other path
//! one node. An edge into a split package lands on the output holding the sub-path each
//! hit names (the referrer's evidence; a hit without a sub-path lands on `out`, a
//! referrer that was not scanned on every output, each recorded as an assumption);
//! per-architecture outputs (only made with `--gpu-targets`) are dropped with their
//! edges.
//!
//! Cost: one breadth-first walk before and one after, O(paths + references + hits of
//! edges into split packages).

use std::collections::{BTreeSet, HashMap, VecDeque};

use super::plan::{sub_path, Plan, Tree, OUT};
use super::{is_gpu_output, rel};
use crate::analysis::AnalysisError;
use crate::evidence::{PathEvidence, ScanStatus};
use crate::report::{Assumption, AssumptionReason};
use crate::store::{Closure, StorePath};

/// One split package: its evidence and its plan.
pub struct Split<'a> {
    pub ev: &'a PathEvidence,
    pub plan: &'a Plan,
}

/// What the walk found.
pub struct Walk {
    pub before: u64,
    pub before_count: u64,
    pub after: u64,
    pub after_count: u64,
    /// Per split package: the outputs reached.
    pub outputs_needed: Vec<BTreeSet<usize>>,
    /// Store paths (not split) in the closure before but not after.
    pub removed: Vec<StorePath>,
    pub assumptions: Vec<Assumption>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Node<'a> {
    Path(&'a StorePath),
    Output(usize, usize),
}

/// ROOT's closure before and after `splits`; `scanned` holds the evidence of any other
/// paths whose files were scanned (referrers of the split packages).
pub fn walk(
    c: &Closure,
    root: &StorePath,
    splits: &[Split<'_>],
    scanned: &HashMap<&StorePath, &PathEvidence>,
) -> Result<Walk, AnalysisError> {
    let sd = &c.store_dir;
    let size = |x: &StorePath| -> Result<u64, AnalysisError> {
        c.paths
            .get(x)
            .and_then(|i| i.nar_size)
            .ok_or_else(|| AnalysisError::SizesUnknown {
                origin: c.origin.clone(),
                what: "split --for",
            })
    };
    // Before: the plain closure.
    let mut seen_before: BTreeSet<&StorePath> = BTreeSet::new();
    let mut queue: VecDeque<&StorePath> = VecDeque::new();
    let mut before = 0u64;
    if let Some((k, _)) = c.paths.get_key_value(root) {
        seen_before.insert(k);
        queue.push_back(k);
    }
    while let Some(x) = queue.pop_front() {
        before += size(x)?;
        for r in c
            .paths
            .get(x)
            .map(|i| i.references.as_slice())
            .unwrap_or(&[])
        {
            if let Some((k, _)) = c.paths.get_key_value(r) {
                if seen_before.insert(k) {
                    queue.push_back(k);
                }
            }
        }
    }

    let index: HashMap<&StorePath, usize> = splits
        .iter()
        .enumerate()
        .map(|(i, s)| (&s.ev.path, i))
        .collect();
    let trees: Vec<Tree<'_>> = splits.iter().map(|s| Tree::new(s.ev)).collect();
    let mut assumptions = Vec::new();
    // Outputs of split package `s` that `hits` (of a referrer's reference to it) land on.
    let mut land = |from: &StorePath,
                    s: usize,
                    hits: Option<&[crate::evidence::Hit]>,
                    not_scanned: bool|
     -> BTreeSet<usize> {
        let mut set = BTreeSet::new();
        let hits = hits.unwrap_or(&[]);
        if not_scanned {
            // A referrer whose files are unseen may need any output: all of them.
            for (o, name) in splits[s].plan.outputs.iter().enumerate() {
                set.insert(o);
                assumptions.push(Assumption {
                    from: sd.display(from),
                    file: String::new(),
                    offset: None,
                    kind: None,
                    sub_path: String::new(),
                    output: name.clone(),
                    reason: AssumptionReason::NotScanned,
                });
            }
            return set;
        }
        if hits.is_empty() {
            set.insert(0);
            assumptions.push(Assumption {
                from: sd.display(from),
                file: String::new(),
                offset: None,
                kind: None,
                sub_path: String::new(),
                output: OUT.to_string(),
                reason: AssumptionReason::NoSubPath,
            });
        }
        for h in hits {
            let sub = sub_path(h, &splits[s].ev.path);
            let (o, why) = splits[s].plan.land(&trees[s], &sub);
            set.insert(o);
            if let Some(reason) = why {
                assumptions.push(Assumption {
                    from: sd.display(from),
                    file: rel(&h.fact.file),
                    offset: Some(h.fact.location.offset()),
                    kind: Some(h.fact.kind.to_string()),
                    sub_path: String::from_utf8_lossy(&sub).into_owned(),
                    output: splits[s].plan.outputs[o].clone(),
                    reason,
                });
            }
        }
        set
    };

    let start = match index.get(root) {
        Some(&s) => Node::Output(s, 0),
        None => Node::Path(root),
    };
    let mut seen: HashMap<Node<'_>, ()> = HashMap::from([(start, ())]);
    let mut queue = VecDeque::from([start]);
    let mut after = 0u64;
    let mut outputs_needed = vec![BTreeSet::new(); splits.len()];
    let dropped = |s: usize, o: usize| is_gpu_output(&splits[s].plan.outputs[o]);
    while let Some(n) = queue.pop_front() {
        let mut next: Vec<Node<'_>> = Vec::new();
        match n {
            Node::Path(x) => {
                after += size(x)?;
                let ev = scanned.get(x);
                for r in c
                    .paths
                    .get(x)
                    .map(|i| i.references.as_slice())
                    .unwrap_or(&[])
                {
                    match index.get(r) {
                        Some(&s) => {
                            let not_scanned = ev.is_none_or(|e| e.status == ScanStatus::NotScanned);
                            let hits = ev.and_then(|e| e.reference(r)).map(|r| r.hits.as_slice());
                            next.extend(
                                land(x, s, hits, not_scanned)
                                    .into_iter()
                                    .map(|o| Node::Output(s, o)),
                            );
                        }
                        None => {
                            if let Some((k, _)) = c.paths.get_key_value(r) {
                                next.push(Node::Path(k));
                            }
                        }
                    }
                }
            }
            Node::Output(s, o) => {
                let Split { ev, plan } = &splits[s];
                after += plan.sizes[o];
                outputs_needed[s].insert(o);
                for (t, landing) in plan.references[o].keys() {
                    match (landing, index.get(t)) {
                        (Some(l), _) => next.push(Node::Output(s, *l)),
                        (None, Some(&q)) => {
                            // Another split package: land the hits in this output's files.
                            let hits: Vec<crate::evidence::Hit> = ev
                                .reference(t)
                                .map(|r| {
                                    r.hits
                                        .iter()
                                        .filter(|h| {
                                            trees[s].by_path.get(h.fact.file.as_bytes()).and_then(
                                                |&f| plan.output_of_file(&trees[s], ev, f),
                                            ) == Some(o)
                                        })
                                        .cloned()
                                        .collect()
                                })
                                .unwrap_or_default();
                            next.extend(
                                land(&ev.path, q, Some(&hits), false)
                                    .into_iter()
                                    .map(|l| Node::Output(q, l)),
                            );
                        }
                        (None, None) => {
                            if let Some((k, _)) = c.paths.get_key_value(t) {
                                next.push(Node::Path(k));
                            }
                        }
                    }
                }
            }
        }
        for m in next {
            if matches!(m, Node::Output(s, o) if dropped(s, o)) {
                continue;
            }
            if seen.insert(m, ()).is_none() {
                queue.push_back(m);
            }
        }
    }
    let kept: BTreeSet<&StorePath> = seen
        .keys()
        .filter_map(|n| match n {
            Node::Path(x) => Some(*x),
            Node::Output(..) => None,
        })
        .collect();
    let removed = seen_before
        .iter()
        .filter(|x| !index.contains_key(**x) && !kept.contains(**x))
        .map(|x| (*x).clone())
        .collect();
    Ok(Walk {
        before,
        before_count: seen_before.len() as u64,
        after,
        after_count: seen.len() as u64,
        outputs_needed,
        removed,
        assumptions,
    })
}
