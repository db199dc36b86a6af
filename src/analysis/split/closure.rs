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
//!
//! Why not `crate::graph::ClosureGraph`, the one graph the other analyses share: this
//! walk needs what that graph drops on purpose. It keeps references to paths outside the
//! loaded closure (a referrer may name a split package that way), a size per path that
//! may be unknown (an error here, 0 there), and each path's references in the input's
//! order, which sets the order of the assumptions in the report.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use super::plan::{sub_path_in, Plan, Tree, OUT};
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
    let before = ix.plain_closure(root)?;
    let mut after = After::new(ix, splits, scanned);
    let starts = after.start_nodes(root)?;
    after.run(starts)?;
    // In store-path order, as the paths are numbered.
    let removed = (0..ix.paths.len())
        .filter(|&i| before.seen[i] && after.split_of[i].is_none() && !after.seen_path[i])
        .map(|i| ix.paths[i].clone())
        .collect();
    Ok(Walk {
        before: before.size,
        before_count: before.count,
        after: after.size,
        after_count: after.count,
        outputs_needed: after.outputs_needed,
        removed,
        assumptions: after.landing.assumptions,
    })
}

/// The plain closure of a root: which numbered paths it holds, how many, their size.
struct Plain {
    seen: Vec<bool>,
    count: u64,
    size: u64,
}

impl Indexed<'_> {
    /// The NAR size of numbered path `x`, or the error of a closure without sizes.
    fn size(&self, x: u32) -> Result<u64, AnalysisError> {
        self.sizes
            .get(x as usize)
            .copied()
            .flatten()
            .ok_or_else(|| AnalysisError::SizesUnknown {
                origin: self.closure.origin.clone(),
                what: "split --for",
            })
    }

    /// ROOT's closure before any split: one breadth-first walk, O(paths + references).
    fn plain_closure(&self, root: &StorePath) -> Result<Plain, AnalysisError> {
        let n = self.paths.len();
        let mut seen = vec![false; n];
        let mut count = 0u64;
        let mut queue: VecDeque<u32> = VecDeque::new();
        let mut size = 0u64;
        if let Some(&k) = self.index.get(root) {
            seen[k as usize] = true;
            count += 1;
            queue.push_back(k);
        }
        while let Some(x) = queue.pop_front() {
            size += self.size(x)?;
            for &t in self.refs(x) {
                if (t as usize) < n && !std::mem::replace(&mut seen[t as usize], true) {
                    count += 1;
                    queue.push_back(t);
                }
            }
        }
        Ok(Plain { seen, count, size })
    }
}

/// Where references into split packages land, and the assumptions made on the way.
struct Landing<'s> {
    splits: &'s [Split<'s>],
    trees: Vec<Tree<'s>>,
    sd: &'s crate::store::StoreDir,
    assumptions: Vec<Assumption>,
}

impl Landing<'_> {
    /// Record that a reference from `from` was assumed to need output `output`.
    fn assume(&mut self, from: &StorePath, output: String, reason: AssumptionReason) {
        self.assumptions.push(Assumption {
            from: self.sd.display(from),
            file: String::new(),
            offset: None,
            kind: None,
            sub_path: String::new(),
            output,
            reason,
        });
    }

    /// Outputs of split package `s` that `hits` (of a referrer's reference to it) land on.
    fn land(
        &mut self,
        from: &StorePath,
        s: usize,
        hits: Option<&[crate::evidence::JudgedHit]>,
        not_scanned: bool,
    ) -> BTreeSet<usize> {
        let mut set = BTreeSet::new();
        let hits = hits.unwrap_or(&[]);
        let splits = self.splits;
        if not_scanned {
            // A referrer whose files are unseen may need any output: all of them.
            for (o, name) in splits[s].plan.outputs.iter().enumerate() {
                set.insert(o);
                self.assume(from, name.clone(), AssumptionReason::NotScanned);
            }
            return set;
        }
        if hits.is_empty() {
            set.insert(0);
            self.assume(from, OUT.to_string(), AssumptionReason::NoSubPath);
        }
        for h in hits {
            let sub = sub_path_in(h, &splits[s].ev.path, &self.trees[s]);
            let (o, why) = splits[s].plan.land(&self.trees[s], &sub);
            set.insert(o);
            if let Some(reason) = why {
                self.assumptions.push(Assumption {
                    from: self.sd.display(from),
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
    }
}

/// The walk after the splits: nodes are numbered paths and outputs of split packages.
struct After<'a> {
    ix: &'a Indexed<'a>,
    splits: &'a [Split<'a>],
    scanned: &'a HashMap<&'a StorePath, &'a PathEvidence>,
    /// Split package of each store path that is one.
    index: HashMap<&'a StorePath, usize>,
    /// Which split package each numbered path is, if any.
    split_of: Vec<Option<usize>>,
    landing: Landing<'a>,
    seen_path: Vec<bool>,
    seen_outputs: HashSet<(usize, usize)>,
    count: u64,
    size: u64,
    /// Per split package: the outputs reached.
    outputs_needed: Vec<BTreeSet<usize>>,
}

impl<'a> After<'a> {
    fn new(
        ix: &'a Indexed<'a>,
        splits: &'a [Split<'a>],
        scanned: &'a HashMap<&'a StorePath, &'a PathEvidence>,
    ) -> After<'a> {
        let n = ix.paths.len();
        let index: HashMap<&StorePath, usize> = splits
            .iter()
            .enumerate()
            .map(|(i, s)| (&s.ev.path, i))
            .collect();
        let mut split_of: Vec<Option<usize>> = vec![None; n];
        for (p, &s) in &index {
            if let Some(&k) = ix.index.get(*p) {
                split_of[k as usize] = Some(s);
            }
        }
        After {
            ix,
            splits,
            scanned,
            index,
            split_of,
            landing: Landing {
                splits,
                trees: splits.iter().map(|s| Tree::new(s.ev)).collect(),
                sd: &ix.closure.store_dir,
                assumptions: Vec::new(),
            },
            seen_path: vec![false; n],
            seen_outputs: HashSet::new(),
            count: 0,
            size: 0,
            outputs_needed: vec![BTreeSet::new(); splits.len()],
        }
    }

    /// The split package target `t` is, if any; a reference outside the closure may
    /// still name one.
    fn split_at(&self, t: u32) -> Option<usize> {
        match self.split_of.get(t as usize) {
            Some(s) => *s,
            None => self.index.get(self.ix.target(t)).copied(),
        }
    }

    /// Whether `m` is new to the walk (and count it if so).
    fn first_visit(&mut self, m: Node) -> bool {
        let fresh = match m {
            Node::Path(k) => !std::mem::replace(&mut self.seen_path[k as usize], true),
            Node::Output(s, o) => self.seen_outputs.insert((s, o)),
        };
        self.count += u64::from(fresh);
        fresh
    }

    /// Where the walk starts: the root, and a split root's outputs holding what it runs
    /// (its programs), not only out: `split ROOT --for ROOT` must not predict ROOT
    /// without its own program.
    fn start_nodes(&self, root: &StorePath) -> Result<Vec<Node>, AnalysisError> {
        let start = match self.index.get(root) {
            Some(&s) => Node::Output(s, 0),
            None => match self.ix.index.get(root) {
                Some(&k) => Node::Path(k),
                // Not in the closure: its size is unknown, as for any path without one.
                None => {
                    return Err(AnalysisError::SizesUnknown {
                        origin: self.ix.closure.origin.clone(),
                        what: "split --for",
                    })
                }
            },
        };
        let mut starts = vec![start];
        if let Node::Output(s, _) = start {
            let Split { ev, plan } = &self.splits[s];
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
        Ok(starts)
    }

    /// Breadth-first from `starts`, per-architecture outputs dropped with their edges.
    fn run(&mut self, starts: Vec<Node>) -> Result<(), AnalysisError> {
        for &s in &starts {
            self.first_visit(s);
        }
        let mut queue = VecDeque::from(starts);
        let mut next: Vec<Node> = Vec::new();
        while let Some(node) = queue.pop_front() {
            next.clear();
            match node {
                Node::Path(x) => self.visit_path(x, &mut next)?,
                Node::Output(s, o) => self.visit_output(s, o, &mut next),
            }
            for &m in &next {
                if let Node::Output(s, o) = m {
                    if is_gpu_output(&self.splits[s].plan.outputs[o]) {
                        continue;
                    }
                }
                if self.first_visit(m) {
                    queue.push_back(m);
                }
            }
        }
        Ok(())
    }

    /// Count numbered path `x` and put what it references into `next`.
    fn visit_path(&mut self, x: u32, next: &mut Vec<Node>) -> Result<(), AnalysisError> {
        let ix = self.ix;
        let n = ix.paths.len();
        self.size += ix.size(x)?;
        let xp = ix.paths[x as usize];
        for &t in ix.refs(x) {
            match self.split_at(t) {
                Some(s) => {
                    let r = ix.target(t);
                    let ev = self.scanned.get(xp);
                    let not_scanned = ev.is_none_or(|e| e.status == ScanStatus::NotScanned);
                    let hits = ev.and_then(|e| e.reference(r)).map(|r| r.hits.as_slice());
                    next.extend(
                        self.landing
                            .land(xp, s, hits, not_scanned)
                            .into_iter()
                            .map(|o| Node::Output(s, o)),
                    );
                }
                None if (t as usize) < n => next.push(Node::Path(t)),
                None => {}
            }
        }
        Ok(())
    }

    /// Count output `o` of split package `s` and put what its files reference into
    /// `next`: its own outputs, other split packages' outputs (landing the hits in
    /// this output's files), and plain paths.
    fn visit_output(&mut self, s: usize, o: usize, next: &mut Vec<Node>) {
        let Split { ev, plan } = &self.splits[s];
        self.size += plan.sizes[o];
        self.outputs_needed[s].insert(o);
        for (t, landing) in plan.references[o].keys() {
            match (landing, self.index.get(t)) {
                (Some(l), _) => next.push(Node::Output(s, *l)),
                (None, Some(&q)) => {
                    let tree = &self.landing.trees[s];
                    let hits: Vec<crate::evidence::JudgedHit> = ev
                        .reference(t)
                        .map(|r| {
                            r.hits
                                .iter()
                                .filter(|h| {
                                    tree.by_path
                                        .get(h.fact.file.as_bytes())
                                        .and_then(|&f| plan.output_of_file(tree, ev, f))
                                        == Some(o)
                                })
                                .cloned()
                                .collect()
                        })
                        .unwrap_or_default();
                    next.extend(
                        self.landing
                            .land(&ev.path, q, Some(&hits), false)
                            .into_iter()
                            .map(|l| Node::Output(q, l)),
                    );
                }
                (None, None) => {
                    if let Some(&k) = self.ix.index.get(t) {
                        next.push(Node::Path(k));
                    }
                }
            }
        }
    }
}
