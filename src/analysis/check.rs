//! `nixcut check ROOT`: a CI gate on closure size, with the paths to blame when it fails.
//!
//! Three criteria, combinable; the check passes when every one given passes:
//!
//! - **baseline** (`--baseline FILE [--max-growth G]`): ROOT's closure may exceed the
//!   baseline's by at most G, a percentage ([`DEFAULT_MAX_GROWTH_PERCENT`] when not
//!   given) or a size. The paths ROOT has and the baseline lacks are listed;
//! - **against** (`--against OTHER --max-ratio R`): ROOT's closure may be at most R
//!   times OTHER's; the paths ROOT has and OTHER lacks are listed;
//! - **max size** (`--max-size SIZE`): an absolute budget; the paths with the largest
//!   added size are listed.
//!
//! Listed paths are ranked by added size over the shared part
//! (`crate::graph::exclusive_added_sizes`): for `llama-cpp-rocm` against
//! `llama-cpp-cuda`, `rocblas` with its Tensile kernels comes out on top, because that
//! is what leaving it out would free beyond what the CUDA closure has anyway. The
//! roots themselves are not listed (a root's added size is everything).
//!
//! Limits are whole bytes: a criterion passes when the closure size is at most its
//! `limit` (`floor(baseline · (1 + G/100))`, `floor(OTHER · R)`, SIZE), which is the
//! same as comparing the exact growth or ratio. Closures with unknown NAR sizes are
//! refused: a gate must not pass on a lower bound.

use std::collections::HashSet;

use crate::graph::{
    added_sizes, dominator_tree, exclusive_added_sizes, ClosureGraph, DominatorTree,
};
use crate::report::{
    AgainstCheck, AllowedGrowth, BaselineCheck, Blame, CheckFailure, CheckReport, CheckSubject,
    CheckWarning, ClosureHeader, ClosureRef, Contributor, ExtraPaths, MaxSizeCheck, PathGroup,
    RestRow, SourceRef,
};
use crate::store::{Bytes, Closure, StoreDir};

use super::common::{load_warnings, pick_roots, source_ref};
use super::AnalysisError;

/// `--max-growth` when `--baseline` is given without it: 5 % absorbs the noise of a
/// routine dependency update, while anything that drags in a new library or data set
/// of some size fails.
pub const DEFAULT_MAX_GROWTH_PERCENT: f64 = 5.0;

/// Allowed growth over a baseline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Growth {
    /// Percent of the baseline's closure size.
    Percent(f64),
    /// Bytes.
    Bytes(u64),
}

impl Default for Growth {
    fn default() -> Self {
        Growth::Percent(DEFAULT_MAX_GROWTH_PERCENT)
    }
}

/// What to check ROOT against.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions<'a> {
    /// `--root`: which root of a multi-root ROOT input. The baseline and OTHER use
    /// their own roots (a snapshot's declared root, or the paths nothing references).
    pub root: Option<String>,
    /// `--baseline` with its allowed growth.
    pub baseline: Option<(&'a Closure, Growth)>,
    /// `--against` with `--max-ratio`.
    pub against: Option<(&'a Closure, f64)>,
    /// `--max-size` in bytes.
    pub max_size: Option<u64>,
    /// How many paths to list per criterion (`--top`).
    pub top: usize,
}

/// ROOT's graph, prepared once for every criterion.
struct Measured<'a> {
    closure: &'a Closure,
    g: ClosureGraph,
    tree: DominatorTree,
    parents: Vec<Option<petgraph::graph::NodeIndex<u32>>>,
    /// Which nodes are roots: asked once a path, and a scan of 200,000 roots for each
    /// of 1,000,000 paths made `check` take 68 s where `why` took 6.
    is_root: Vec<bool>,
}

impl Measured<'_> {
    fn sd(&self) -> &StoreDir {
        &self.closure.store_dir
    }

    fn is_root(&self, i: usize) -> bool {
        self.is_root.get(i).copied().unwrap_or(false)
    }

    fn contributor(&self, i: usize, added: Bytes) -> Contributor {
        let node = petgraph::graph::NodeIndex::new(i);
        Contributor {
            path: self.sd().display(&self.g.paths[i]),
            nar_size: self.g.nar_sizes[i].get(),
            added_size: added.get(),
            chain: self
                .g
                .chain_to(&self.parents, node)
                .iter()
                .filter_map(|&v| self.g.path(v).map(|p| self.sd().display(p)))
                .collect(),
        }
    }

    /// Non-root nodes ranked by `added` (then NAR size, then store-path order).
    fn ranked(&self, added: &[Bytes], include: impl Fn(usize) -> bool) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.g.len())
            .filter(|&i| include(i) && !self.is_root(i))
            .collect();
        order.sort_by(|&a, &b| {
            (added[b], self.g.nar_sizes[b])
                .cmp(&(added[a], self.g.nar_sizes[a]))
                .then(a.cmp(&b))
        });
        order
    }

    /// The paths of ROOT's closure that `reference` lacks, ranked.
    fn extra_paths(&self, reference: &ClosureGraph, top: usize) -> ExtraPaths {
        let theirs: HashSet<_> = reference.paths.iter().collect();
        let only: Vec<bool> = self.g.paths.iter().map(|p| !theirs.contains(p)).collect();
        let exclusive = exclusive_added_sizes(&self.g, &self.tree, &only);
        let order = self.ranked(&exclusive, |i| only[i]);
        let shown = top.min(order.len());
        let rest = (shown < order.len()).then(|| RestRow {
            count: order.len() - shown,
            nar_size: order[shown..]
                .iter()
                .map(|&i| self.g.nar_sizes[i])
                .sum::<Bytes>()
                .get(),
        });
        ExtraPaths {
            count: only.iter().filter(|&&x| x).count(),
            size: (0..self.g.len())
                .filter(|&i| only[i])
                .map(|i| self.g.nar_sizes[i])
                .sum::<Bytes>()
                .get(),
            top: order[..shown]
                .iter()
                .map(|&i| self.contributor(i, exclusive[i]))
                .collect(),
            rest,
        }
    }
}

/// A reference closure (baseline or OTHER), prepared.
struct Reference<'a> {
    closure: &'a Closure,
    g: ClosureGraph,
}

impl<'a> Reference<'a> {
    fn new(closure: &'a Closure, what: &'static str) -> Result<Reference<'a>, AnalysisError> {
        let roots = pick_roots(closure, None)?;
        let g = ClosureGraph::new(closure, &roots);
        if !g.sizes_known {
            return Err(AnalysisError::SizesUnknown {
                origin: closure.origin.clone(),
                what,
            });
        }
        Ok(Reference { closure, g })
    }

    fn root_display(&self) -> String {
        self.g
            .roots
            .iter()
            .filter_map(|&r| self.g.path(r).map(|p| self.closure.store_dir.display(p)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn source(&self) -> SourceRef {
        source_ref(self.closure)
    }
}

/// What a failure says of an [`ExtraPaths`]: the group, and its ranked paths (the
/// roots are never ranked).
fn blame(e: &ExtraPaths) -> Blame {
    Blame {
        group: Some(PathGroup {
            count: e.count,
            size: e.size,
        }),
        top: e.top.clone(),
        ranked: e.top.len() + e.rest.as_ref().map_or(0, |r| r.count),
    }
}

fn signed(x: u64) -> i64 {
    i64::try_from(x).unwrap_or(i64::MAX)
}

/// Run the check.
pub fn check(c: &Closure, opts: &CheckOptions) -> Result<CheckReport, AnalysisError> {
    if opts.baseline.is_none() && opts.against.is_none() && opts.max_size.is_none() {
        return Err(AnalysisError::NoCriterion);
    }
    let roots = pick_roots(c, opts.root.as_deref())?;
    let g = ClosureGraph::new(c, &roots);
    if !g.sizes_known {
        return Err(AnalysisError::SizesUnknown {
            origin: c.origin.clone(),
            what: "a size check",
        });
    }
    let m = measured(c, g);
    let size = m.g.total_size().get();
    let root_names: Vec<String> =
        m.g.roots
            .iter()
            .filter_map(|&r| m.g.path(r).map(|p| m.sd().display(p)))
            .collect();
    let subject = match root_names.as_slice() {
        [one] => CheckSubject::Root(one.clone()),
        many => CheckSubject::Roots(many.len()),
    };
    let mut failures = Vec::new();
    let mut warnings: Vec<CheckWarning> = load_warnings(c)
        .into_iter()
        .map(CheckWarning::Load)
        .collect();

    let criteria = Criteria {
        m: &m,
        size,
        subject: &subject,
        top: opts.top,
    };
    let baseline = opts
        .baseline
        .map(|(bc, growth)| criteria.baseline(bc, growth, &mut failures, &mut warnings))
        .transpose()?;
    let against = opts
        .against
        .map(|(oc, max_ratio)| criteria.against(oc, max_ratio, &mut failures))
        .transpose()?;
    let max_size = opts
        .max_size
        .map(|limit| criteria.max_size(limit, &mut failures));

    let limit = [
        baseline.as_ref().map(|b| b.limit),
        against.as_ref().map(|a| a.limit),
        max_size.as_ref().map(|s| s.limit),
    ]
    .into_iter()
    .flatten()
    .min()
    .unwrap_or(u64::MAX);
    Ok(CheckReport {
        header: ClosureHeader::new(ClosureRef {
            root: root_names.first().cloned().unwrap_or_default(),
            roots: root_names,
            source: source_ref(c),
        }),
        pass: failures.is_empty(),
        closure_size: size,
        path_count: m.g.len(),
        limit,
        baseline,
        against,
        max_size,
        failures,
        warnings,
    })
}

/// The criteria of one check, measured against ROOT's graph.
struct Criteria<'a> {
    m: &'a Measured<'a>,
    /// ROOT's closure size.
    size: u64,
    subject: &'a CheckSubject,
    /// Paths listed per criterion.
    top: usize,
}

impl Criteria<'_> {
    /// `--baseline`: the growth over the baseline's closure, within `growth`.
    fn baseline(
        &self,
        bc: &Closure,
        growth: Growth,
        failures: &mut Vec<CheckFailure>,
        warnings: &mut Vec<CheckWarning>,
    ) -> Result<BaselineCheck, AnalysisError> {
        let r = Reference::new(bc, "a baseline")?;
        let baseline_size = r.g.total_size().get();
        let (limit, pct, bytes) = match growth {
            Growth::Percent(p) => {
                let extra = (baseline_size as f64 * p / 100.0).floor() as u64;
                (baseline_size.saturating_add(extra), Some(p), None)
            }
            Growth::Bytes(b) => (baseline_size.saturating_add(b), None, Some(b)),
        };
        let growth_bytes = signed(self.size) - signed(baseline_size);
        let growth_percent = (baseline_size > 0)
            .then(|| (growth_bytes as f64 / baseline_size as f64 * 100.0 * 100.0).round() / 100.0);
        let pass = self.size <= limit;
        let new_paths = self.m.extra_paths(&r.g, self.top);
        if !pass {
            failures.push(CheckFailure::Baseline {
                subject: self.subject.clone(),
                measured: self.size,
                growth: growth_bytes,
                growth_percent,
                baseline_size,
                allowed: match growth {
                    Growth::Percent(p) => AllowedGrowth::Percent(p),
                    Growth::Bytes(b) => AllowedGrowth::Bytes(b),
                },
                limit,
                new_paths: blame(&new_paths),
            });
        } else if growth_bytes < 0 {
            warnings.push(CheckWarning::BaselineShrank {
                by: growth_bytes.unsigned_abs(),
            });
        }
        Ok(BaselineCheck {
            pass,
            limit,
            measured: self.size,
            source: r.source(),
            baseline_root: r.root_display(),
            baseline_size,
            max_growth_percent: pct,
            max_growth_bytes: bytes,
            growth: growth_bytes,
            growth_percent,
            new_paths,
        })
    }

    /// `--against OTHER --max-ratio R`: the closure at most R times OTHER's.
    fn against(
        &self,
        oc: &Closure,
        max_ratio: f64,
        failures: &mut Vec<CheckFailure>,
    ) -> Result<AgainstCheck, AnalysisError> {
        let r = Reference::new(oc, "--against")?;
        let other_size = r.g.total_size().get();
        if other_size == 0 {
            return Err(AnalysisError::EmptyReference {
                origin: oc.origin.clone(),
            });
        }
        let limit_f = (other_size as f64 * max_ratio).floor();
        let limit = if limit_f >= u64::MAX as f64 {
            u64::MAX
        } else {
            limit_f as u64
        };
        let ratio = self.size as f64 / other_size as f64;
        let pass = self.size <= limit;
        let only_in_root = self.m.extra_paths(&r.g, self.top);
        if !pass {
            failures.push(CheckFailure::Against {
                subject: self.subject.clone(),
                measured: self.size,
                ratio,
                other_root: r.root_display(),
                other_size,
                max_ratio,
                limit,
                only_in_root: blame(&only_in_root),
            });
        }
        Ok(AgainstCheck {
            pass,
            limit,
            measured: self.size,
            source: r.source(),
            other_root: r.root_display(),
            other_size,
            max_ratio,
            ratio: (ratio * 10_000.0).round() / 10_000.0,
            only_in_root,
        })
    }

    /// `--max-size`: an absolute budget, and the largest paths by added size.
    fn max_size(&self, limit: u64, failures: &mut Vec<CheckFailure>) -> MaxSizeCheck {
        let added = added_sizes(&self.m.g, &self.m.tree);
        let order = self.m.ranked(&added, |_| true);
        let largest: Vec<Contributor> = order
            .iter()
            .take(self.top)
            .map(|&i| self.m.contributor(i, added[i]))
            .collect();
        let pass = self.size <= limit;
        if !pass {
            failures.push(CheckFailure::MaxSize {
                subject: self.subject.clone(),
                measured: self.size,
                limit,
                largest: Blame {
                    group: None,
                    top: largest.clone(),
                    ranked: order.len(),
                },
            });
        }
        MaxSizeCheck {
            pass,
            limit,
            measured: self.size,
            largest,
        }
    }
}

/// ROOT's graph prepared for every criterion: dominators, shortest chains, roots.
fn measured(c: &Closure, g: ClosureGraph) -> Measured<'_> {
    let tree = dominator_tree(&g);
    let parents = g.bfs_parents(g.virtual_root());
    let mut is_root = vec![false; g.len()];
    for r in &g.roots {
        if let Some(x) = is_root.get_mut(r.index()) {
            *x = true;
        }
    }
    Measured {
        closure: c,
        g,
        tree,
        parents,
        is_root,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::testutil::{closure, path};

    use crate::store::{PathInfo, SourceKind, StoreDir};

    /// A closure over `testutil::path(i)` from (i, size, references).
    fn closure_of(spec: &[(usize, u64, &[usize])]) -> Closure {
        let mut c = Closure::new(StoreDir::default(), SourceKind::PathInfoJson, "x.json");
        for &(i, size, refs) in spec {
            let mut info = PathInfo::new(path(i));
            info.nar_size = Some(size);
            info.references = refs.iter().map(|&r| path(r)).collect();
            c.insert(info);
        }
        c
    }

    // 0 -> {1, 2}; 1 -> 3; 2 -> 3. Sizes 10, 100, 1000, 5.
    fn base_closure() -> Closure {
        closure(&[10, 100, 1000, 5], &[vec![1, 2], vec![3], vec![3], vec![]])
    }

    #[test]
    fn baseline_growth_fails_and_names_the_new_paths() {
        // The baseline had the same root, without path 2 (1000 bytes).
        let old = closure_of(&[(0, 10, &[1]), (1, 100, &[3]), (3, 5, &[])]);
        let new = base_closure();
        let opts = CheckOptions {
            baseline: Some((&old, Growth::default())),
            top: 10,
            ..Default::default()
        };
        let r = check(&new, &opts).unwrap();
        assert!(!r.pass);
        let b = r.baseline.as_ref().unwrap();
        assert_eq!((b.baseline_size, b.measured, b.limit), (115, 1115, 120));
        assert_eq!(b.growth, 1000);
        assert_eq!(b.new_paths.count, 1);
        assert_eq!(b.new_paths.top[0].path, format!("/nix/store/{}", path(2)));
        assert_eq!(b.new_paths.top[0].chain.len(), 2);
        match &r.failures[..] {
            [CheckFailure::Baseline {
                subject,
                growth: 1000,
                baseline_size: 115,
                limit: 120,
                new_paths,
                ..
            }] => {
                assert_eq!(subject, &CheckSubject::Root(r.header.closure.root.clone()));
                assert_eq!(
                    new_paths.group,
                    Some(PathGroup {
                        count: 1,
                        size: 1000
                    })
                );
                assert_eq!(new_paths.top, b.new_paths.top);
                assert_eq!(new_paths.ranked, 1);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(r.limit, 120);

        let generous = CheckOptions {
            baseline: Some((&old, Growth::Percent(900.0))),
            top: 10,
            ..Default::default()
        };
        assert!(check(&new, &generous).unwrap().pass);
        let bytes = CheckOptions {
            baseline: Some((&old, Growth::Bytes(1000))),
            top: 10,
            ..Default::default()
        };
        assert!(
            check(&new, &bytes).unwrap().pass,
            "exactly at the limit passes"
        );

        // The other way round the check passes, and says the baseline could shrink.
        let shrunk = check(
            &old,
            &CheckOptions {
                baseline: Some((&new, Growth::default())),
                top: 10,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(shrunk.pass && shrunk.failures.is_empty());
        assert_eq!(
            shrunk.warnings,
            vec![CheckWarning::BaselineShrank { by: 1000 }]
        );
    }

    #[test]
    fn against_ranks_root_only_paths_over_the_shared_part() {
        // OTHER (9 -> 3) shares path 3 only. ROOT-only: 1, 2 and the root 0 (not listed).
        let other = closure_of(&[(9, 7, &[3]), (3, 5, &[])]);
        let root = base_closure();
        let opts = CheckOptions {
            against: Some((&other, 2.0)),
            max_size: Some(2000),
            top: 10,
            ..Default::default()
        };
        let r = check(&root, &opts).unwrap();
        let a = r.against.as_ref().unwrap();
        assert_eq!(a.other_size, 12);
        assert_eq!(a.limit, 24);
        assert!(!a.pass && !r.pass);
        let listed: Vec<u64> = a.only_in_root.top.iter().map(|c| c.added_size).collect();
        assert_eq!(listed, vec![1000, 100]);
        assert_eq!(a.only_in_root.count, 3);
        assert_eq!(a.only_in_root.size, 1110);
        assert!(r.max_size.as_ref().unwrap().pass);
        match &r.failures[..] {
            [CheckFailure::Against {
                other_size: 12,
                limit: 24,
                ratio,
                only_in_root,
                ..
            }] => {
                assert_eq!(*ratio, 1115.0 / 12.0, "unrounded, for the sentence");
                assert_eq!(
                    only_in_root.group,
                    Some(PathGroup {
                        count: 3,
                        size: 1110
                    })
                );
                assert_eq!(only_in_root.top, a.only_in_root.top);
                assert_eq!(only_in_root.ranked, 2, "the root is never ranked");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(r.limit, 24);
    }

    #[test]
    fn max_size_lists_the_largest() {
        let r = check(
            &base_closure(),
            &CheckOptions {
                max_size: Some(100),
                top: 2,
                ..Default::default()
            },
        )
        .unwrap();
        let s = r.max_size.as_ref().unwrap();
        assert!(!s.pass);
        assert_eq!((s.over_by(), s.to_spare()), (1015, 0));
        assert_eq!(s.largest.len(), 2);
        assert_eq!(s.largest[0].added_size, 1000);
        match &r.failures[..] {
            [CheckFailure::MaxSize {
                measured: 1115,
                limit: 100,
                largest,
                ..
            }] => {
                assert_eq!(largest.group, None);
                assert_eq!(largest.top, s.largest);
                assert_eq!(largest.ranked, 3, "every path but the root");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_lone_root_is_named_as_such() {
        let r = check(
            &closure(&[5000], &[vec![]]),
            &CheckOptions {
                max_size: Some(100),
                top: 10,
                ..Default::default()
            },
        )
        .unwrap();
        match &r.failures[..] {
            [CheckFailure::MaxSize { largest, .. }] => {
                assert!(largest.top.is_empty() && largest.ranked == 0, "{largest:?}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn needs_a_criterion_and_sizes() {
        let e = check(&base_closure(), &CheckOptions::default()).unwrap_err();
        assert!(matches!(e, AnalysisError::NoCriterion));
        let mut c = base_closure();
        c.paths.get_mut(&path(3)).unwrap().nar_size = None;
        let e = check(
            &c,
            &CheckOptions {
                max_size: Some(1),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("NAR sizes"), "{e}");
    }
}
