//! `nixcut store`'s figures against a brute-force recount on 1,000 random small stores.
//!
//! Each case is a random store (up to 14 paths, random references, cycles included
//! since a hand-written file may have them, random derivers), written as
//! `nix path-info --json --all` in one of the three shapes Nix prints, read back by the
//! whole-store reader, and analysed with random GC roots (repeats, and roots naming
//! paths the store lacks) and random keep settings. The recount takes the definitions
//! literally: a root's closure is a graph search from its path; what a root alone keeps
//! is what the other roots' searches (over liveness edges) leave unvisited of its own;
//! unreachable is what no search visits.

use std::collections::BTreeSet;

use nixcut::analysis::{store_report, StoreOptions};
use nixcut::graph::{root_figures, Keep};
use nixcut::load::gc_roots::GcRoot;
use nixcut::load::whole_json;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Case {
    sizes: Vec<u64>,
    refs: Vec<Vec<usize>>,
    deriver: Vec<Option<usize>>,
    roots: Vec<usize>,
    keep: Keep,
    shape: u8,
}

fn base(i: usize) -> String {
    // Distinct nix32 hashes: the index in base 32 over Nix's alphabet.
    const A: &[u8] = b"0123456789abcdfghijklmnpqrsvwxyz";
    let mut h = [b'0'; 32];
    let (mut n, mut k) = (i, 31);
    loop {
        h[k] = A[n % 32];
        n /= 32;
        if n == 0 {
            break;
        }
        k -= 1;
    }
    format!("{}-p{i}", String::from_utf8(h.to_vec()).unwrap())
}

fn case() -> impl Strategy<Value = Case> {
    case_of(1..15, 0..6)
}

/// Stores of `paths` paths with `roots` roots.
fn case_of(
    paths: std::ops::Range<usize>,
    roots: std::ops::Range<usize>,
) -> impl Strategy<Value = Case> {
    paths.prop_flat_map(move |n| {
        (
            prop::collection::vec(0u64..1000, n),
            prop::collection::vec(prop::collection::vec(0..n, 0..4), n),
            prop::collection::vec(prop::option::weighted(0.3, 0..n), n),
            // Roots: indices up to n + 1 (n and n + 1 name paths the store lacks).
            prop::collection::vec(0..n + 2, roots.clone()),
            any::<(bool, bool)>(),
            0u8..3,
        )
            .prop_map(|(sizes, refs, deriver, roots, (d, o), shape)| Case {
                sizes,
                refs,
                deriver,
                roots,
                keep: Keep {
                    derivations: d,
                    outputs: o,
                },
                shape,
            })
    })
}

fn json(c: &Case) -> String {
    let full = |i: usize| format!("/nix/store/{}", base(i));
    let entry = |i: usize, name: &dyn Fn(usize) -> String| {
        let refs: Vec<String> = c.refs[i]
            .iter()
            .map(|&r| format!("\"{}\"", name(r)))
            .collect();
        let deriver = match c.deriver[i] {
            Some(d) => format!("\"{}\"", name(d)),
            None => "null".into(),
        };
        format!(
            "\"narSize\":{},\"references\":[{}],\"deriver\":{deriver}",
            c.sizes[i],
            refs.join(",")
        )
    };
    let n = c.sizes.len();
    match c.shape {
        0 => {
            let items: Vec<String> = (0..n)
                .map(|i| format!("{{\"path\":\"{}\",{}}}", full(i), entry(i, &full)))
                .collect();
            format!("[{}]", items.join(","))
        }
        1 => {
            let items: Vec<String> = (0..n)
                .rev()
                .map(|i| format!("\"{}\":{{{}}}", full(i), entry(i, &full)))
                .collect();
            format!("{{{}}}", items.join(","))
        }
        _ => {
            let items: Vec<String> = (0..n)
                .map(|i| format!("\"{}\":{{{}}}", base(i), entry(i, &base)))
                .collect();
            format!(
                "{{\"version\":2,\"info\":{{{}}},\"storeDir\":\"/nix/store\"}}",
                items.join(",")
            )
        }
    }
}

/// Everything `from` reaches along `edges` (itself included).
fn reach(from: usize, edges: &[Vec<usize>]) -> BTreeSet<usize> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from];
    while let Some(v) = todo.pop() {
        if seen.insert(v) {
            todo.extend(edges[v].iter().copied());
        }
    }
    seen
}

struct Expected {
    closure: Vec<Option<(u64, u64)>>,
    alone: Vec<Option<(u64, u64)>>,
    unreachable: (u64, u64),
    shared: (u64, u64),
}

fn brute_force(c: &Case) -> Expected {
    let n = c.sizes.len();
    let mut live: Vec<Vec<usize>> = c.refs.clone();
    for v in 0..n {
        if let Some(d) = c.deriver[v] {
            if c.keep.derivations {
                live[v].push(d);
            }
            if c.keep.outputs {
                live[d].push(v);
            }
        }
    }
    let tally = |set: &BTreeSet<usize>| {
        (
            set.len() as u64,
            set.iter().map(|&v| c.sizes[v]).sum::<u64>(),
        )
    };
    let kept: Vec<Option<BTreeSet<usize>>> = c
        .roots
        .iter()
        .map(|&r| (r < n).then(|| reach(r, &live)))
        .collect();
    let mut closure = Vec::new();
    let mut alone = Vec::new();
    for (i, &r) in c.roots.iter().enumerate() {
        if r >= n {
            closure.push(None);
            alone.push(None);
            continue;
        }
        closure.push(Some(tally(&reach(r, &c.refs))));
        let mut own = kept[i].clone().unwrap();
        for (j, other) in kept.iter().enumerate() {
            if j != i {
                if let Some(o) = other {
                    own.retain(|v| !o.contains(v));
                }
            }
        }
        alone.push(Some(tally(&own)));
    }
    let mut count = vec![0usize; n];
    for s in kept.iter().flatten() {
        for &v in s {
            count[v] += 1;
        }
    }
    let pick = |f: &dyn Fn(usize) -> bool| {
        let set: BTreeSet<usize> = (0..n).filter(|&v| f(count[v])).collect();
        tally(&set)
    };
    Expected {
        closure,
        alone,
        unreachable: pick(&|k| k == 0),
        shared: pick(&|k| k >= 2),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn figures_equal_a_brute_force_recount(c in case()) {
        check(&c)?;
    }
}

proptest! {
    // Several closure-size batches (64·4 roots each), words whose roots all reach a
    // path, and roots repeated across batches.
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn figures_hold_over_many_batches(c in case_of(40..300, 300..700)) {
        check(&c)?;
    }
}

fn check(c: &Case) -> Result<(), TestCaseError> {
    let text = json(c);
    let store = whole_json::read(
        std::path::Path::new("case.json"),
        text.as_bytes(),
        None,
        &|_| {},
    )
    .expect("the generated document loads");
    prop_assert_eq!(store.len(), c.sizes.len());
    // Path numbers follow first mention; map the case's indices through names.
    let index = store.hash_index();
    let id = |i: usize| store.find(&index, &base(i));
    let targets: Vec<u32> = c.roots.iter().map(|&r| id(r).unwrap_or(u32::MAX)).collect();
    let fig = root_figures(&store, &targets, c.keep);
    let want = brute_force(c);
    for (i, &r) in c.roots.iter().enumerate() {
        if r >= c.sizes.len() {
            continue;
        }
        prop_assert_eq!(
            (fig.closure[i].paths, fig.closure[i].bytes),
            want.closure[i].unwrap(),
            "closure of root {} ({})",
            i,
            r
        );
        prop_assert_eq!(
            (fig.alone[i].paths, fig.alone[i].bytes),
            want.alone[i].unwrap(),
            "alone of root {} ({})",
            i,
            r
        );
    }
    prop_assert_eq!(
        (fig.unreachable.paths, fig.unreachable.bytes),
        want.unreachable
    );
    prop_assert_eq!((fig.shared.paths, fig.shared.bytes), want.shared);
    prop_assert_eq!(fig.store.bytes, c.sizes.iter().sum::<u64>());
    prop_assert_eq!(fig.live.bytes + fig.unreachable.bytes, fig.store.bytes);

    // The report ranks what the figures say, and its sums hold.
    let roots: Vec<GcRoot> = c
        .roots
        .iter()
        .enumerate()
        .map(|(i, &r)| GcRoot {
            link: format!("/l/{i}"),
            target: base(r),
        })
        .collect();
    let report = store_report(
        &store,
        "case.json",
        &roots,
        None,
        &StoreOptions {
            keep: c.keep,
            top: Some(2),
            ..StoreOptions::default()
        },
    );
    let known = c.roots.iter().filter(|&&r| r < c.sizes.len()).count() as u64;
    prop_assert_eq!(report.root_count, known);
    prop_assert!(report.roots.windows(2).all(|w| w[0].alone >= w[1].alone));
    // The listed roots' closures (computed for those alone) are the recount's.
    for r in &report.roots {
        let i: usize = r.link["/l/".len()..].parse().unwrap();
        prop_assert_eq!(
            (r.closure_paths, r.closure_size),
            want.closure[i].unwrap(),
            "listed closure of {}",
            &r.link
        );
    }
    let listed: u64 = report.roots.iter().map(|r| r.alone).sum();
    let rest = report.rest.map_or(0, |r| r.alone);
    prop_assert_eq!(listed + rest + report.shared.bytes, report.live.bytes);
    Ok(())
}
