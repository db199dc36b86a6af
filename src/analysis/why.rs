//! `nixcut why`: size ranking by added size with shortest chains, and all chains from
//! a root to a target.

use crate::graph::{
    added_sizes, all_chains_capped, closure_sizes, closure_sizes_of, dominator_tree, ChainTreeNode,
    ClosureGraph,
};
use crate::report::{
    chains_of, Chain, ChainNode, EvidenceLevel, HopEvidence, RestRow, SortKey, Step,
    WhyChainsReport, WhyGpu, WhyPath, WhyReport, WhyWarning, SCHEMA_VERSION,
};
use crate::store::{Bytes, Closure, StorePath};

use std::sync::Arc;

use petgraph::graph::NodeIndex;
use rayon::prelude::*;

use super::common::{graph_for, load_warnings, pick_roots, source_ref};
use super::edges::{EdgeEvidence, EvidenceOptions};
use super::AnalysisError;
use crate::evidence::{Collector, Progress};
use crate::timing::Timings;

/// Options of `nixcut why ROOT`.
#[derive(Debug, Clone, Default)]
pub struct WhyOptions {
    /// `--root`: which root of a multi-root input (all roots when `None`).
    pub root: Option<String>,
    /// `--top N`: show the first N paths, summarise the rest.
    pub top: Option<usize>,
    pub sort: SortKey,
    /// File evidence for the shown paths (what keeps each one in).
    pub evidence: EvidenceOptions,
    /// `--evidence-paths N`: gather file evidence for the first N ranked paths only
    /// (`None`: every shown path). Each one costs up to `max_referrers` scans, and over
    /// HTTP a scan is a NAR download, so a report of every path need not scan them all.
    pub evidence_paths: Option<usize>,
    /// `--max-chain-length N`: each row's chain lists at most N paths, the root and
    /// the last N - 1 (at least 2); `None`: [`DEFAULT_MAX_CHAIN_LENGTH`].
    pub max_chain_length: Option<usize>,
    /// Where the steps report their times.
    pub timings: Timings,
}

/// How many paths a `why` row's chain lists at most unless asked otherwise
/// (`--max-chain-length`): the root and the last 31. The shortest chains of real
/// closures are far shorter and are listed whole; in a deeper graph (a chain of 60,000
/// paths) every row listing its chain from the root made the report quadratic in the
/// graph (95 GB of JSON).
pub const DEFAULT_MAX_CHAIN_LENGTH: usize = 32;

/// `nixcut why ROOT`: every path with NAR, closure and added size, ranked. The three
/// steps a caller may also take one by one: the ranking ([`why_ranking`], pure), the
/// file evidence of its first rows ([`why_evidence`], the only step that reads files,
/// through `opts.evidence.files`), and the report ([`why_report`], pure).
pub fn why(
    c: &Closure,
    opts: &WhyOptions,
    progress: Option<Progress<'_>>,
) -> Result<WhyReport, AnalysisError> {
    let ranking = why_ranking(c, opts)?;
    let evidence = why_evidence(c, &ranking, opts, progress);
    Ok(why_report(c, &ranking, evidence.as_ref(), opts))
}

/// The graph of the closure ranked: every path's added, closure and NAR size, its
/// immediate dominator and its parent on a shortest chain, and the order of the rows.
pub struct WhyRanking {
    g: ClosureGraph,
    added: Vec<Bytes>,
    /// Immediate dominators, by node (the virtual root and unreachable nodes mean none).
    idom: Vec<u32>,
    /// Each node's parent on a shortest chain from the virtual root.
    parents: Vec<Option<NodeIndex<u32>>>,
    /// Closure sizes: exact for every path that can be shown (see [`top_closure_sizes`]).
    closure: Vec<Bytes>,
    /// Node indices, largest first.
    order: Vec<usize>,
    /// How many rows are shown (the rest are summarised).
    shown: usize,
    /// When every row is shown: every path's full name and chain, by node (built
    /// beside the closure sizes, see [`why_ranking`]); else empty, and the rows'
    /// chains are built for the shown rows alone.
    names: Vec<Arc<str>>,
    chains: Vec<Chain>,
}

/// Rank every path of the closure of `opts.root` by `opts.sort` (pure: no file is read).
pub fn why_ranking(c: &Closure, opts: &WhyOptions) -> Result<WhyRanking, AnalysisError> {
    let timings = &opts.timings;
    let g = graph_for(c, opts.root.as_deref(), timings)?;
    let n = g.len();
    let shown = opts.top.unwrap_or(n).min(n);
    let dominators = || {
        let tree = dominator_tree(&g);
        let added = added_sizes(&g, &tree);
        let parents = g.bfs_parents(g.virtual_root());
        timings.step("dominators, added sizes, shortest chains");
        (added, tree.idom, parents)
    };
    let every_closure_size = |g: &ClosureGraph| {
        let sizes = closure_sizes(g);
        timings.step("every path's closure size");
        sizes
    };
    // Every path's closure size costs more than everything else here (it grows with
    // n²/64); a table of the top rows ranked by added or NAR size needs it only for
    // the rows that can be shown.
    let (added, idom, parents, closure, names, chains) =
        match few_closure_sizes(opts.sort, shown, n) {
            Some(cap) => {
                let (added, idom, parents) = dominators();
                let closure = top_closure_sizes(&g, opts.sort, &added, shown, cap)
                    .unwrap_or_else(|| every_closure_size(&g));
                (added, idom, parents, closure, Vec::new(), Vec::new())
            }
            None => {
                // Independent passes over the same graph: run them on both cores. With
                // every row shown, the names and chains (a walk on one core) are built
                // here too rather than after the closure sizes, on the core the
                // dominators leave free.
                let ((added, idom, parents, names, chains), closure) = rayon::join(
                    || {
                        let (added, idom, parents) = dominators();
                        let (names, chains) = if shown == n {
                            every_chain(c, &g, &parents)
                        } else {
                            (Vec::new(), Vec::new())
                        };
                        (added, idom, parents, names, chains)
                    },
                    || every_closure_size(&g),
                );
                (added, idom, parents, closure, names, chains)
            }
        };
    let key = |i: usize| match opts.sort {
        SortKey::Added => (added[i], closure[i], g.nar_sizes[i]),
        SortKey::Closure => (closure[i], added[i], g.nar_sizes[i]),
        SortKey::Nar => (g.nar_sizes[i], added[i], closure[i]),
    };
    // Largest first; ties in store-path order (node order) for stable output. The
    // keys are computed once and sorted on every core (the index breaks every tie, so
    // an unstable sort gives the one order).
    let mut keyed: Vec<((Bytes, Bytes, Bytes), u32)> = (0..n).map(|i| (key(i), i as u32)).collect();
    keyed.par_sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let order: Vec<usize> = keyed.into_iter().map(|(_, i)| i as usize).collect();
    timings.step("ranking");
    Ok(WhyRanking {
        g,
        added,
        idom,
        parents,
        closure,
        order,
        shown,
        names,
        chains,
    })
}

impl WhyRanking {
    /// How many of the first rows get file evidence (`--evidence-paths`, at most the
    /// shown rows).
    fn with_evidence(&self, opts: &WhyOptions) -> usize {
        opts.evidence_paths.unwrap_or(self.shown).min(self.shown)
    }

    /// For each of the first `rows` rows: up to `max` of its direct referrers (the one
    /// on its shortest chain first) and how many it has in all.
    fn referrers(&self, rows: usize, max: usize) -> Vec<(Vec<usize>, usize)> {
        let (g, n) = (&self.g, self.g.len());
        let mut referrers_of = Vec::with_capacity(rows);
        for &i in &self.order[..rows] {
            let mut refs: Vec<usize> = g
                .predecessors(i)
                .iter()
                .map(|&v| v as usize)
                .filter(|&v| v < n)
                .collect();
            refs.dedup();
            if let Some(p) = self.parents[i].filter(|p| p.index() < n) {
                if let Some(pos) = refs.iter().position(|&r| r == p.index()) {
                    refs.remove(pos);
                    refs.insert(0, p.index());
                }
            }
            let total = refs.len();
            refs.truncate(max);
            referrers_of.push((refs, total));
        }
        referrers_of
    }
}

/// What the files say about the first rows of a ranking: how their referrers refer to
/// them, and the GPU share of their own files.
pub struct WhyEvidence<'a> {
    edges: EdgeEvidence<'a>,
    /// How many of the first rows have evidence.
    rows: usize,
    /// For each of those rows: the referrers scanned and how many it has in all.
    referrers_of: Vec<(Vec<usize>, usize)>,
    /// The GPU share of each of those rows' own files (store trees only).
    gpu: Vec<Option<WhyGpu>>,
}

/// Scan up to `max_referrers` direct referrers of each of the first `evidence_paths`
/// rows, and, from a store tree, read the GPU headers of those rows' own files. `None`
/// when evidence is off or no files are available. The only step of `why` that reads
/// files.
pub fn why_evidence<'a>(
    c: &'a Closure,
    ranking: &WhyRanking,
    opts: &'a WhyOptions,
    progress: Option<Progress<'_>>,
) -> Option<WhyEvidence<'a>> {
    let g = &ranking.g;
    let consumer_roots: Vec<StorePath> =
        g.roots.iter().filter_map(|&r| g.path(r)).cloned().collect();
    let mut edges = EdgeEvidence::new(c, &opts.evidence, &consumer_roots)?;
    let rows = ranking.with_evidence(opts);
    let referrers_of = ranking.referrers(rows, opts.evidence.max_referrers);
    let mut wanted: Vec<StorePath> = referrers_of
        .iter()
        .flat_map(|(refs, _)| refs.iter().map(|&r| g.paths[r].clone()))
        .collect();
    wanted.sort();
    wanted.dedup();
    edges.scan(&wanted, progress);
    let own: Vec<StorePath> = ranking.order[..rows]
        .iter()
        .map(|&i| g.paths[i].clone())
        .collect();
    let nar_sizes: Vec<u64> = ranking.order[..rows]
        .iter()
        .map(|&i| g.nar_sizes[i].get())
        .collect();
    let gpu = gpu_shares(c, &opts.evidence, &own, &nar_sizes);
    Some(WhyEvidence {
        edges,
        rows,
        referrers_of,
        gpu,
    })
}

/// The GPU share of each path's own files: an inventory (headers only), from a store
/// tree only (a binary cache would have to send every path's NAR; then none). Only the
/// rows with evidence are read: the JSON of a large closure has every path, and
/// reading every file's headers would cost more than the ranking. `nar_sizes` are the
/// paths' NAR sizes, which bound their shares.
fn gpu_shares(
    c: &Closure,
    ev: &EvidenceOptions,
    paths: &[StorePath],
    nar_sizes: &[u64],
) -> Vec<Option<WhyGpu>> {
    if ev.files.kind() != crate::source::FilesFrom::Store {
        return Vec::new();
    }
    Collector::new(c, ev.files.source(), ev.cache.as_ref())
        .rules(&ev.rules)
        .inventory_only(true)
        .scan(paths, None)
        .into_iter()
        .zip(nar_sizes)
        .map(|(s, &nar)| {
            let (sp, _) = s.result.ok()?;
            let a = super::gpu::account(&sp.entries);
            let bytes = a.gpu_bytes().min(nar);
            (bytes > 0 || a.generic_bytes > 0).then(|| WhyGpu {
                bytes,
                generic_bytes: a.generic_bytes.min(nar - bytes),
                archs: a
                    .archs
                    .iter()
                    .map(|(k, v)| (k.clone(), v.bytes()))
                    .collect(),
            })
        })
        .collect()
}

/// The report of a ranking and the evidence gathered for it (pure).
pub fn why_report(
    c: &Closure,
    ranking: &WhyRanking,
    evidence: Option<&WhyEvidence<'_>>,
    opts: &WhyOptions,
) -> WhyReport {
    let WhyRanking {
        g, order, shown, ..
    } = ranking;
    let (n, shown) = (g.len(), *shown);
    let sd = &c.store_dir;
    let max_chain = opts.max_chain_length.unwrap_or(DEFAULT_MAX_CHAIN_LENGTH);
    let mut paths = rows(c, ranking, max_chain);
    opts.timings.step("rows with their chains");
    let mut warnings: Vec<WhyWarning> =
        load_warnings(c).into_iter().map(WhyWarning::Load).collect();
    let mut level = EvidenceLevel::Graph;
    let mut savings = None;
    if let Some(ev) = evidence {
        level = EvidenceLevel::Files;
        // The savings line: every scanned referrer split as `nixcut split` proposes.
        if let [root] = g.roots.as_slice() {
            if let Some(root) = g.path(*root) {
                savings = super::split::savings(c, root, &ev.edges.collected()).ok();
            }
        }
        // `referrers_of` covers the first `ev.rows` rows; the others keep none.
        for (k, (row, (refs, total))) in paths.iter_mut().zip(&ev.referrers_of).enumerate() {
            let target = &g.paths[order[k]];
            row.kept_by = refs
                .iter()
                .filter_map(|&r| ev.edges.edge(&g.paths[r], target))
                .collect();
            row.kept_by_more = total - refs.len();
        }
        warnings.extend(ev.edges.warnings());
        for (row, gpu) in paths.iter_mut().zip(&ev.gpu) {
            row.gpu.clone_from(gpu);
        }
    }
    let rest = (shown < n).then(|| RestRow {
        count: n - shown,
        nar_size: order[shown..]
            .iter()
            .map(|&i| g.nar_sizes[i])
            .sum::<Bytes>()
            .get(),
    });
    let root_strings: Vec<String> = g
        .roots
        .iter()
        .filter_map(|&r| g.path(r).map(|p| sd.display(p)))
        .collect();
    WhyReport {
        schema_version: SCHEMA_VERSION,
        root: root_strings.first().cloned().unwrap_or_default(),
        roots: root_strings,
        source: source_ref(c),
        closure_size: g.total_size().get(),
        path_count: n,
        sizes_known: g.sizes_known,
        sort: opts.sort,
        paths,
        rest,
        evidence: level,
        evidence_paths: evidence.map_or(0, |e| e.rows),
        verdict_scope: evidence.map(|e| e.edges.scope()),
        savings,
        warnings,
    }
}

/// The shown rows, each with its sizes, shortest chain (cut to `max_chain` paths) and
/// dominator (no evidence yet). O(shown): a cut chain shares the whole one's links.
fn rows(c: &Closure, ranking: &WhyRanking, max_chain: usize) -> Vec<WhyPath> {
    let (g, order, parents, idom) = (&ranking.g, &ranking.order, &ranking.parents, &ranking.idom);
    let (n, shown) = (g.len(), ranking.shown);
    let sd = &c.store_dir;
    // With every row shown, the names and chains were built with the ranking.
    let full = &ranking.names;
    let name = |i: usize| -> Arc<str> {
        full.get(i)
            .cloned()
            .unwrap_or_else(|| sd.display(&g.paths[i]).into())
    };
    let chains: Vec<Chain> = if ranking.chains.len() == n {
        order[..shown]
            .iter()
            .map(|&i| ranking.chains[i].clone())
            .collect()
    } else {
        chains_of(n, &order[..shown], |v| chain_step(g, parents, v), name)
    };
    order[..shown]
        .par_iter()
        .zip(chains)
        .map(|(&i, chain)| {
            let (chain, chain_omitted) = chain.cut(max_chain);
            WhyPath {
                path: name(i).to_string(),
                nar_size: g.nar_sizes[i].get(),
                closure_size: ranking.closure[i].get(),
                added_size: ranking.added[i].get(),
                chain,
                chain_omitted,
                // The virtual root (index n) and unreachable nodes (themselves) mean none.
                dominator: idom
                    .get(i)
                    .map(|&d| d as usize)
                    .filter(|&d| d < n && d != i)
                    .map(name),
                kept_by: Vec::new(),
                kept_by_more: 0,
                gpu: None,
            }
        })
        .collect()
}

/// Where node `v`'s shortest chain goes on: its BFS parent, or its start at a root.
fn chain_step(g: &ClosureGraph, parents: &[Option<NodeIndex<u32>>], v: usize) -> Step {
    match parents[v] {
        Some(p) if p == g.virtual_root() => Step::Root,
        Some(p) => Step::Parent(p.index()),
        None if g.roots.iter().any(|r| r.index() == v) => Step::Root,
        None => Step::Unreachable,
    }
}

/// Every path's full name, formatted once and shared by the chains, and every path's
/// shortest chain (shared prefixes: each chain is its parent's plus one path), by node.
fn every_chain(
    c: &Closure,
    g: &ClosureGraph,
    parents: &[Option<NodeIndex<u32>>],
) -> (Vec<Arc<str>>, Vec<Chain>) {
    let sd = &c.store_dir;
    // Each name formatted in a buffer of the thread's and copied once into its
    // shared allocation (a `String` of its own first was a second allocation).
    let names: Vec<Arc<str>> = g
        .paths
        .par_iter()
        .map_init(String::new, |buf, p| {
            buf.clear();
            sd.display_into(buf, p);
            Arc::from(buf.as_str())
        })
        .collect();
    let all: Vec<usize> = (0..g.len()).collect();
    let chains = chains_of(
        g.len(),
        &all,
        |v| chain_step(g, parents, v),
        |i| names[i].clone(),
    );
    (names, chains)
}

/// When only the top `shown` of `n` rows are shown and the ranking is not by closure
/// size: how many candidate rows may get their closure sizes computed alone
/// ([`closure_sizes_of`]) instead of every path's. `None`: compute every path's.
fn few_closure_sizes(sort: SortKey, shown: usize, n: usize) -> Option<usize> {
    // Up to 64 rows cost one pass over the graph (`closure_sizes_of`); every path's
    // closure size is about n/1024 passes.
    (sort != SortKey::Closure && shown < n && shown <= 48 && n >= 4096).then_some(64)
}

/// Closure sizes exact for every path that can rank among the first `shown` (0 for
/// the rest, which rank below them whatever their closure size): the paths whose
/// primary key (added or NAR size) is at least the `shown`-th largest, ties included,
/// since closure size breaks them. `None` when more than `cap` paths tie in.
fn top_closure_sizes(
    g: &ClosureGraph,
    sort: SortKey,
    added: &[Bytes],
    shown: usize,
    cap: usize,
) -> Option<Vec<Bytes>> {
    let n = g.len();
    let primary = |i: usize| match sort {
        SortKey::Nar => g.nar_sizes[i],
        _ => added[i],
    };
    let mut keys: Vec<Bytes> = (0..n).map(primary).collect();
    let threshold = match shown {
        0 => return Some(vec![Bytes::ZERO; n]),
        k => *keys.select_nth_unstable_by(k - 1, |a, b| b.cmp(a)).1,
    };
    let candidates: Vec<usize> = (0..n).filter(|&i| primary(i) >= threshold).collect();
    if candidates.len() > cap {
        return None;
    }
    let mut closure = vec![Bytes::ZERO; n];
    for (&i, size) in candidates.iter().zip(closure_sizes_of(g, &candidates)) {
        closure[i] = size;
    }
    Some(closure)
}

/// `nixcut why ROOT TARGET`: every chain from the root to the target.
pub fn why_chains(
    c: &Closure,
    root: Option<&str>,
    target: &str,
    evidence: &EvidenceOptions,
    progress: Option<Progress<'_>>,
) -> Result<WhyChainsReport, AnalysisError> {
    why_chains_capped(c, root, target, evidence, progress, None)
}

/// [`why_chains`] showing at most `max_chains` chains (`--max-chains`); the report
/// counts the rest (`chains_not_shown`).
pub fn why_chains_capped(
    c: &Closure,
    root: Option<&str>,
    target: &str,
    evidence: &EvidenceOptions,
    progress: Option<Progress<'_>>,
    max_chains: Option<u64>,
) -> Result<WhyChainsReport, AnalysisError> {
    let roots = pick_roots(c, root)?;
    let target_path = c.select_root(target)?;
    let g = ClosureGraph::new(c, &roots);
    let sd = &c.store_dir;
    let root_display = roots
        .iter()
        .map(|r| sd.display(r))
        .collect::<Vec<_>>()
        .join(", ");
    let Some(t) = g.node(&target_path) else {
        return Err(AnalysisError::NotInClosure {
            path: sd.display(&target_path),
            root: root_display,
        });
    };
    let start = if roots.len() == 1 {
        g.node(&roots[0]).unwrap_or_else(|| g.virtual_root())
    } else {
        g.virtual_root()
    };
    let chains = all_chains_capped(&g, start, t, max_chains.map(u128::from));
    let tree = dominator_tree(&g);
    let added = added_sizes(&g, &tree);
    // Evidence of every hop: scan every path on a chain that refers onwards.
    let mut edges = EdgeEvidence::new(c, evidence, &roots);
    if let (Some(ev), Some(tree)) = (edges.as_mut(), chains.tree.as_ref()) {
        ev.scan(&referring_on_chains(&g, tree), progress);
    }
    let via = |from: u32, to: u32| -> Option<HopEvidence> {
        let ev = edges.as_ref()?;
        ev.edge(g.paths.get(from as usize)?, g.paths.get(to as usize)?)
    };
    let to_node = |n: &ChainTreeNode| convert(&g, sd, n, &via);
    let tree_out = chains.tree.as_ref().map(|n| {
        if start == g.virtual_root() {
            // Hide the virtual root: one synthetic node listing the roots.
            ChainNode {
                path: format!("<{} roots>", roots.len()),
                nar_size: 0,
                repeat: false,
                via: None,
                children: n.children.iter().map(to_node).collect(),
            }
        } else {
            to_node(n)
        }
    });
    Ok(WhyChainsReport {
        schema_version: SCHEMA_VERSION,
        root: root_display,
        target: sd.display(&target_path),
        source: source_ref(c),
        chain_count: u64::try_from(chains.chain_count).unwrap_or(u64::MAX),
        chain_count_saturated: chains.chain_count >= u64::MAX as u128,
        paths_on_chains: chains
            .paths_on_chains
            .saturating_sub(usize::from(start == g.virtual_root())),
        chains_not_shown: max_chains
            .map(|_| u64::try_from(chains.chain_count - chains.chains_shown).unwrap_or(u64::MAX)),
        target_added_size: added[t.index()].get(),
        tree: tree_out,
        evidence: if edges.is_some() {
            EvidenceLevel::Files
        } else {
            EvidenceLevel::Graph
        },
        verdict_scope: edges.as_ref().map(|e| e.scope()),
        warnings: {
            let mut w: Vec<WhyWarning> =
                load_warnings(c).into_iter().map(WhyWarning::Load).collect();
            if let Some(ev) = &edges {
                w.extend(ev.warnings());
            }
            w
        },
    })
}

/// The paths of a chain tree that refer onwards (every node with children): the
/// referrers whose files say how each hop is made.
fn referring_on_chains(g: &ClosureGraph, tree: &ChainTreeNode) -> Vec<StorePath> {
    let mut on_chain = Vec::new();
    let mut stack = vec![tree];
    while let Some(n) = stack.pop() {
        if !n.children.is_empty() {
            if let Some(p) = g.paths.get(n.node as usize) {
                on_chain.push(p.clone());
            }
        }
        stack.extend(n.children.iter());
    }
    on_chain
}

/// A chain tree of graph nodes as the report's tree of paths, each hop with the
/// evidence `via` gives for it.
fn convert(
    g: &ClosureGraph,
    sd: &crate::store::StoreDir,
    n: &ChainTreeNode,
    via: &dyn Fn(u32, u32) -> Option<HopEvidence>,
) -> ChainNode {
    // Iterative conversion: chain trees can be deep.
    fn shallow(
        g: &ClosureGraph,
        sd: &crate::store::StoreDir,
        n: &ChainTreeNode,
        via: Option<HopEvidence>,
    ) -> ChainNode {
        let i = n.node as usize;
        ChainNode {
            path: g.paths.get(i).map(|p| sd.display(p)).unwrap_or_default(),
            nar_size: g.nar_sizes.get(i).map_or(0, |s| s.get()),
            repeat: n.repeat,
            via,
            children: Vec::new(),
        }
    }
    struct Frame<'a> {
        src: &'a ChainTreeNode,
        out: ChainNode,
        next: usize,
    }
    let mut stack = vec![Frame {
        src: n,
        out: shallow(g, sd, n, None),
        next: 0,
    }];
    loop {
        let top = stack.last_mut().expect("non-empty");
        if top.next < top.src.children.len() {
            let child = &top.src.children[top.next];
            top.next += 1;
            let hop = via(top.src.node, child.node);
            stack.push(Frame {
                src: child,
                out: shallow(g, sd, child, hop),
                next: 0,
            });
        } else {
            let done = stack.pop().expect("non-empty").out;
            match stack.last_mut() {
                Some(parent) => parent.out.children.push(done),
                None => return done,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::testutil::{closure, path};

    #[test]
    fn ranks_and_summarises_rest() {
        // root 0 -> 1 (big, exclusive) and 0 -> 2 -> 3; 1 -> 3
        let c = closure(&[10, 1000, 50, 7], &[vec![1, 2], vec![3], vec![3], vec![]]);
        let r = why(
            &c,
            &WhyOptions {
                top: Some(2),
                ..Default::default()
            },
            None,
        )
        .unwrap();
        assert_eq!(r.closure_size, 1067);
        assert_eq!(r.path_count, 4);
        assert_eq!(r.paths[0].path, format!("/nix/store/{}", path(0)));
        assert_eq!(r.paths[0].added_size, 1067);
        assert_eq!(r.paths[1].added_size, 1000);
        assert_eq!(r.paths[1].chain.len(), 2);
        // The root has no dominator; 1 is dominated by the root.
        assert_eq!(r.paths[0].dominator, None);
        assert_eq!(
            r.paths[1].dominator.as_deref(),
            Some(r.paths[0].path.as_str())
        );
        let rest = r.rest.unwrap();
        assert_eq!(rest.count, 2);
        assert_eq!(rest.nar_size, 57);
        let shown: u64 = r.paths.iter().map(|p| p.nar_size).sum();
        assert_eq!(shown + rest.nar_size, r.closure_size);
    }

    #[test]
    fn top_rows_get_their_closure_sizes_alone_and_agree_with_the_full_ranking() {
        // Large enough that a top-N table computes only the candidates instead of
        // every closure size; many equal sizes, so ties on the primary key are common.
        let n = 5000;
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let sizes: Vec<u64> = (0..n).map(|_| rnd() % 4).collect();
        let refs: Vec<Vec<usize>> = (0..n)
            .map(|i| {
                (0..3)
                    .filter(|_| i + 1 < n)
                    .map(|_| i + 1 + (rnd() as usize) % (n - i - 1))
                    .collect()
            })
            .collect();
        let c = closure(&sizes, &refs);
        for sort in [SortKey::Added, SortKey::Nar, SortKey::Closure] {
            let all = why(
                &c,
                &WhyOptions {
                    sort,
                    ..Default::default()
                },
                None,
            )
            .unwrap();
            for top in [0, 1, 3, 25] {
                let r = why(
                    &c,
                    &WhyOptions {
                        sort,
                        top: Some(top),
                        ..Default::default()
                    },
                    None,
                )
                .unwrap();
                assert_eq!(r.paths.len(), top);
                for (got, want) in r.paths.iter().zip(&all.paths) {
                    assert_eq!(got.path, want.path, "{sort:?} top {top}");
                    assert_eq!(got.closure_size, want.closure_size, "{sort:?} top {top}");
                    assert_eq!(got.added_size, want.added_size);
                }
                assert_eq!(r.rest.as_ref().map(|r| r.count), Some(n - top));
            }
        }
    }

    #[test]
    fn chains_report() {
        let c = closure(&[1, 1, 1, 1], &[vec![1, 2], vec![3], vec![3], vec![]]);
        let r = why_chains(
            &c,
            None,
            &path(3).to_string(),
            &EvidenceOptions::default(),
            None,
        )
        .unwrap();
        assert_eq!(r.chain_count, 2);
        assert_eq!(r.paths_on_chains, 4);
        assert!(r.tree.is_some());
        let e = why_chains(
            &c,
            Some(&path(1).to_string()),
            &path(2).to_string(),
            &EvidenceOptions::default(),
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("not in the closure"), "{e}");
    }
}
