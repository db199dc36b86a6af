//! A consumer's closure after one or more packages are split: the graph's nodes are
//! (store path, output) pairs, each split package one node per output, every other path
//! one node. An edge into a split package lands on the output holding the sub-path each
//! hit names (the referrer's evidence; a hit without a sub-path lands on `out`, a
//! referrer that was not scanned on every output, each recorded as an assumption);
//! per-architecture outputs (only made with `--gpu-targets`) are dropped with their
//! edges.
//!
//! Cost: one breadth-first walk before and one after, O(paths + references + hits of
//! edges into split packages), over the numbered closure of [`Indexed`] (built once,
//! O(paths + references) with one hash lookup per reference).

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

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

/// The closure's paths numbered in store-path order, with NAR sizes and references as
/// numbers: built once (O(paths + references)) and walked once per split considered,
/// so that a walk does no map lookup per reference (`why` on 20,000 paths walked the
/// B-tree of paths twice per suggestion: 45 % of a warm `why --cache` run).
pub struct Indexed<'a> {
    closure: &'a Closure,
    paths: Vec<&'a StorePath>,
    sizes: Vec<Option<u64>>,
    /// References of path `i`: `targets[offsets[i]..offsets[i + 1]]`, in the order of
    /// `PathInfo::references`; a target `t >= paths.len()` is `outside[t - len]`, a
    /// reference to a path the closure does not describe.
    offsets: Vec<u32>,
    targets: Vec<u32>,
    outside: Vec<&'a StorePath>,
    index: rustc_hash::FxHashMap<&'a StorePath, u32>,
}

impl<'a> Indexed<'a> {
    /// Number the paths of `c`.
    pub fn new(c: &'a Closure) -> Indexed<'a> {
        let paths: Vec<&StorePath> = c.paths.keys().collect();
        let index: rustc_hash::FxHashMap<&StorePath, u32> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| (*p, i as u32))
            .collect();
        let n = paths.len() as u32;
        let mut sizes = Vec::with_capacity(paths.len());
        let mut offsets = Vec::with_capacity(paths.len() + 1);
        let mut targets = Vec::new();
        let mut outside = Vec::new();
        offsets.push(0);
        for info in c.paths.values() {
            sizes.push(info.nar_size);
            for r in &info.references {
                match index.get(r) {
                    Some(&j) => targets.push(j),
                    None => {
                        targets.push(n + outside.len() as u32);
                        outside.push(r);
                    }
                }
            }
            offsets.push(targets.len() as u32);
        }
        Indexed {
            closure: c,
            paths,
            sizes,
            offsets,
            targets,
            outside,
            index,
        }
    }

    fn refs(&self, i: u32) -> &[u32] {
        &self.targets[self.offsets[i as usize] as usize..self.offsets[i as usize + 1] as usize]
    }

    /// The store path of target `t` (inside the closure or not).
    fn target(&self, t: u32) -> &'a StorePath {
        let n = self.paths.len();
        match self.paths.get(t as usize) {
            Some(p) => p,
            None => self.outside[t as usize - n],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Node {
    Path(u32),
    Output(usize, usize),
}

/// ROOT's closure before and after `splits`; `scanned` holds the evidence of any other
/// paths whose files were scanned (referrers of the split packages).
pub fn walk(
    ix: &Indexed<'_>,
    root: &StorePath,
    splits: &[Split<'_>],
    scanned: &HashMap<&StorePath, &PathEvidence>,
) -> Result<Walk, AnalysisError> {
    let c = ix.closure;
    let sd = &c.store_dir;
    let n = ix.paths.len();
    let size = |x: u32| -> Result<u64, AnalysisError> {
        ix.sizes
            .get(x as usize)
            .copied()
            .flatten()
            .ok_or_else(|| AnalysisError::SizesUnknown {
                origin: c.origin.clone(),
                what: "split --for",
            })
    };
    // Before: the plain closure.
    let mut seen_before = vec![false; n];
    let mut before_count = 0u64;
    let mut queue: VecDeque<u32> = VecDeque::new();
    let mut before = 0u64;
    if let Some(&k) = ix.index.get(root) {
        seen_before[k as usize] = true;
        before_count += 1;
        queue.push_back(k);
    }
    while let Some(x) = queue.pop_front() {
        before += size(x)?;
        for &t in ix.refs(x) {
            if (t as usize) < n && !std::mem::replace(&mut seen_before[t as usize], true) {
                before_count += 1;
                queue.push_back(t);
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
                    hits: Option<&[crate::evidence::JudgedHit]>,
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

    // Which split package each numbered path is, if any.
    let mut split_of: Vec<Option<usize>> = vec![None; n];
    for (p, &s) in &index {
        if let Some(&k) = ix.index.get(*p) {
            split_of[k as usize] = Some(s);
        }
    }
    let split_at = |t: u32| -> Option<usize> {
        match split_of.get(t as usize) {
            Some(s) => *s,
            // A reference outside the closure may still name a split package.
            None => index.get(ix.target(t)).copied(),
        }
    };
    let start = match index.get(root) {
        Some(&s) => Node::Output(s, 0),
        None => match ix.index.get(root) {
            Some(&k) => Node::Path(k),
            // Not in the closure: its size is unknown, as for any path without one.
            None => {
                return Err(AnalysisError::SizesUnknown {
                    origin: c.origin.clone(),
                    what: "split --for",
                })
            }
        },
    };
    let mut seen_path = vec![false; n];
    let mut seen_outputs: HashSet<(usize, usize)> = HashSet::new();
    let mut after_count = 0u64;
    let mut first_visit = |m: Node| -> bool {
        let fresh = match m {
            Node::Path(k) => !std::mem::replace(&mut seen_path[k as usize], true),
            Node::Output(s, o) => seen_outputs.insert((s, o)),
        };
        after_count += u64::from(fresh);
        fresh
    };
    // A split root needs the outputs holding what it runs (its programs), not only out:
    // `split ROOT --for ROOT` must not predict ROOT without its own program.
    let mut starts = vec![start];
    if let Node::Output(s, _) = start {
        let Split { ev, plan } = &splits[s];
        let runs: BTreeSet<usize> = ev
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.class == crate::classify::FileClass::Bin)
            .filter_map(|(i, _)| match plan.place[i] {
                super::plan::Place::Output(o) if o != 0 => Some(o),
                _ => None,
            })
            .collect();
        starts.extend(runs.into_iter().map(|o| Node::Output(s, o)));
    }
    for &s in &starts {
        first_visit(s);
    }
    let mut queue = VecDeque::from(starts);
    let mut after = 0u64;
    let mut outputs_needed = vec![BTreeSet::new(); splits.len()];
    let dropped = |s: usize, o: usize| is_gpu_output(&splits[s].plan.outputs[o]);
    let mut next: Vec<Node> = Vec::new();
    while let Some(node) = queue.pop_front() {
        next.clear();
        match node {
            Node::Path(x) => {
                after += size(x)?;
                let xp = ix.paths[x as usize];
                for &t in ix.refs(x) {
                    match split_at(t) {
                        Some(s) => {
                            let r = ix.target(t);
                            let ev = scanned.get(xp);
                            let not_scanned = ev.is_none_or(|e| e.status == ScanStatus::NotScanned);
                            let hits = ev.and_then(|e| e.reference(r)).map(|r| r.hits.as_slice());
                            next.extend(
                                land(xp, s, hits, not_scanned)
                                    .into_iter()
                                    .map(|o| Node::Output(s, o)),
                            );
                        }
                        None if (t as usize) < n => next.push(Node::Path(t)),
                        None => {}
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
                            let hits: Vec<crate::evidence::JudgedHit> = ev
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
                            if let Some(&k) = ix.index.get(t) {
                                next.push(Node::Path(k));
                            }
                        }
                    }
                }
            }
        }
        for &m in &next {
            if matches!(m, Node::Output(s, o) if dropped(s, o)) {
                continue;
            }
            if first_visit(m) {
                queue.push_back(m);
            }
        }
    }
    // In store-path order, as the paths are numbered.
    let removed = (0..n)
        .filter(|&i| seen_before[i] && split_of[i].is_none() && !seen_path[i])
        .map(|i| ix.paths[i].clone())
        .collect();
    Ok(Walk {
        before,
        before_count,
        after,
        after_count,
        outputs_needed,
        removed,
        assumptions,
    })
}
