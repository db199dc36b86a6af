//! The package-set diff's own tests: small sets against a root-by-root brute force.

use std::collections::BTreeMap;

use rustc_hash::FxHashSet;

use super::side::root_key;
use super::*;
use crate::report::CauseChange;
use crate::store::parse_package_name;
use crate::store::{Closure, PathInfo, SourceKind, StoreDir, StorePath, NIX32_ALPHABET};
use proptest::prelude::*;

fn sp(id: usize, salt: u64, name: &str) -> StorePath {
    let mut h = [b'0'; 32];
    let mut x = (id as u64) * 64 + salt;
    for c in h.iter_mut().rev() {
        *c = NIX32_ALPHABET[(x % 32) as usize];
        x /= 32;
    }
    StorePath::from_base_name(&format!("{}-{name}", std::str::from_utf8(&h).unwrap())).unwrap()
}

/// A random side: names from a small pool (so packages have several paths and
/// roots collide on keys), references in any direction (cycles).
struct Gen {
    names: Vec<String>,
    sizes: Vec<u64>,
    refs: Vec<Vec<usize>>,
    salt: Vec<u64>,
    roots: Vec<usize>,
}

fn closure_of(g: &Gen) -> Closure {
    let mut c = Closure::new(StoreDir::default(), SourceKind::PathInfoJson, "gen");
    let path = |i: usize| sp(i, g.salt[i], &g.names[i]);
    for i in 0..g.names.len() {
        let mut info = PathInfo::new(path(i));
        info.nar_size = Some(g.sizes[i]);
        info.references = g.refs[i].iter().map(|&j| path(j)).collect();
        c.insert(info);
    }
    c.declared_roots = g.roots.iter().map(|&r| path(r)).collect();
    c.declared_roots.dedup();
    c
}

fn walk(c: &Closure, root: &StorePath) -> BTreeMap<String, u64> {
    let mut seen = FxHashSet::default();
    let mut stack = vec![root.clone()];
    let mut out = BTreeMap::new();
    while let Some(p) = stack.pop() {
        if !seen.insert(p.clone()) {
            continue;
        }
        let info = &c.paths[&p];
        *out.entry(parse_package_name(p.name()).pname.to_string())
            .or_insert(0) += info.nar_size.unwrap();
        stack.extend(info.references.iter().cloned());
    }
    out
}

/// The components the cause pass visits on both sides, as `set_diff` prepares it.
fn cause_work(co: &Closure, cn: &Closure) -> usize {
    let timings = crate::timing::Timings::default();
    let mut old = Side::new(co, &co.declared_roots, &[], &timings);
    let mut new = Side::new(cn, &cn.declared_roots, &[], &timings);
    let (pairs, _, _) = match_roots(&old, &new);
    let mut pk = packages(&mut old, &mut new);
    pk.skip = unchanged(&old, &new, &pk, &pairs);
    cause_sums(&old, &new, &pk, &pairs).1
}

/// A side of `roots` roots `app<i>-1.0` (64 KiB each; NEW: a new hash, and every
/// 101st grown by a version bump) above a shared part: `shape` gives the shared
/// paths (name, size, references among them by index) and each root's references
/// into them. NEW changes the size of shared path 0, so everything above it is
/// rebuilt.
fn shaped(
    roots: usize,
    shared: &[(String, u64, Vec<usize>)],
    refs: impl Fn(usize) -> Vec<usize>,
    new: bool,
) -> Closure {
    let salt = u64::from(new);
    let mut c = Closure::new(StoreDir::default(), SourceKind::PathInfoJson, "gen");
    let shared_path = |k: usize| sp(k, salt, &shared[k].0);
    for (k, (_, size, r)) in shared.iter().enumerate() {
        let mut info = PathInfo::new(shared_path(k));
        info.nar_size = Some(if new && k == 0 { size + 4096 } else { *size });
        info.references = r.iter().map(|&j| shared_path(j)).collect();
        c.insert(info);
    }
    for i in 0..roots {
        let own = new && i % 101 == 0;
        let name = format!("app{i}-{}", if own { "1.1" } else { "1.0" });
        let mut info = PathInfo::new(sp(shared.len() + i, salt, &name));
        info.nar_size = Some(if own { 65 << 10 } else { 64 << 10 });
        info.references = refs(i).into_iter().map(shared_path).collect();
        c.declared_roots.push(info.path.clone());
        c.insert(info);
    }
    c
}

/// Issue 31, item 7: the cause pass walked every component of each side once per
/// block of 1,024 pairs (20 blocks here: 20 times the graph), so N roots over one
/// shared library took O(N²/1024). It visits only what each block's roots reach
/// towards a changed package: at most a few times the paths, for a star, a deep
/// shared chain and wide private closures alike.
#[test]
fn the_cause_pass_visits_each_path_a_bounded_number_of_times() {
    let n = 20_000;
    let star = vec![("libshared-1.0".to_string(), 1 << 20, vec![])];
    let chain: Vec<(String, u64, Vec<usize>)> = (0..500)
        .map(|k| {
            (
                format!("core{k}-1.0"),
                10 << 10,
                if k == 0 { vec![] } else { vec![k - 1] },
            )
        })
        .collect();
    let wide: Vec<(String, u64, Vec<usize>)> = (0..1000)
        .map(|k| (format!("shared{k}-1.0"), 100 << 10, vec![]))
        .collect();
    type Refs = Box<dyn Fn(usize) -> Vec<usize>>;
    type Shared = [(String, u64, Vec<usize>)];
    let shapes: [(&str, &Shared, Refs); 3] = [
        ("star", &star, Box::new(|_| vec![0])),
        ("chain", &chain, Box::new(|i| vec![i % 500])),
        (
            "wide",
            &wide,
            Box::new(|i| (0..5).map(|j| (i * 7 + j * 131) % 1000).collect()),
        ),
    ];
    for (name, shared, refs) in shapes {
        let (co, cn) = (
            shaped(n, shared, &refs, false),
            shaped(n, shared, &refs, true),
        );
        let paths = co.paths.len() + cn.paths.len();
        let work = cause_work(&co, &cn);
        assert!(
            work <= 4 * paths,
            "{name}: {work} components visited for {paths} paths"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn causes_and_sizes_equal_plain_walks(n in 2usize..120, seed in any::<u64>(), deg in 0usize..4) {
        let mut x = seed | 1;
        let mut rnd = move || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x };
        let pool = ["a", "b", "c", "d", "e", "f"];
        let outs = ["", "-dev", "-bin"];
        let mut old = Gen { names: vec![], sizes: vec![], refs: vec![], salt: vec![0; n], roots: vec![] };
        for _ in 0..n {
            let r = rnd();
            old.names.push(format!("{}-{}{}", pool[(r % 6) as usize], 1 + (r >> 8) % 2, outs[((r >> 16) % 3) as usize]));
            old.sizes.push(rnd() % 100);
            old.refs.push((0..deg).map(|_| (rnd() as usize) % n).collect());
        }
        old.roots = (0..n).filter(|_| rnd() % 3 == 0).collect();
        // NEW: some sizes, references, versions and roots change; changed paths
        // get new hashes.
        let mut new = Gen { names: old.names.clone(), sizes: old.sizes.clone(), refs: old.refs.clone(), salt: vec![0; n], roots: vec![] };
        for i in 0..n {
            match rnd() % 8 {
                0 => { new.sizes[i] = rnd() % 100; new.salt[i] = 1; }
                1 => { new.refs[i].push((rnd() as usize) % n); new.salt[i] = 2; }
                2 => { new.refs[i].clear(); new.salt[i] = 3; }
                3 => { new.names[i] = new.names[i].replacen("-1", "-3", 1); new.salt[i] = 4; }
                _ => {}
            }
        }
        new.roots = (0..n).filter(|_| rnd() % 3 == 0).collect();
        let (co, cn) = (closure_of(&old), closure_of(&new));
        let r = set_diff(
            SetInput { origin: "old", roots: &co.declared_roots, attrs: &[], graph: &co },
            SetInput { origin: "new", roots: &cn.declared_roots, attrs: &[], graph: &cn },
            &SetDiffOptions::default(),
        ).unwrap();
        let mut want: BTreeMap<(String, CauseChange), (usize, i64)> = BTreeMap::new();
        let mut total = 0i64;
        let parse = |c: &Closure, s: &str| c.store_dir.parse_path(s).unwrap();
        for root in r.roots.iter() {
            let (Some(o), Some(nw)) = (&root.old, &root.new) else { continue };
            let (po, pn) = (parse(&co, &o.path), parse(&cn, &nw.path));
            prop_assert_eq!(root_key(po.name()), root_key(pn.name()));
            let (bo, bn) = (walk(&co, &po), walk(&cn, &pn));
            prop_assert_eq!(o.closure_size, bo.values().sum::<u64>());
            prop_assert_eq!(nw.closure_size, bn.values().sum::<u64>());
            total += nw.closure_size as i64 - o.closure_size as i64;
            for (p, &b) in &bn {
                let (k, d) = match bo.get(p) {
                    None => (CauseChange::Added, b as i64),
                    Some(&a) if b > a => (CauseChange::Grown, b as i64 - a as i64),
                    Some(&a) if b < a => (CauseChange::Shrunk, b as i64 - a as i64),
                    Some(_) => continue,
                };
                let e = want.entry((p.clone(), k)).or_default();
                e.0 += 1;
                e.1 += d;
            }
            for (p, &a) in &bo {
                if !bn.contains_key(p) {
                    let e = want.entry((p.clone(), CauseChange::Removed)).or_default();
                    e.0 += 1;
                    e.1 -= a as i64;
                }
            }
        }
        want.retain(|_, v| v.1 != 0);
        let got: BTreeMap<(String, CauseChange), (usize, i64)> =
            r.causes.iter().map(|c| ((c.name.clone(), c.change), (c.roots, c.bytes))).collect();
        prop_assert_eq!(got, want);
        prop_assert_eq!(r.total.delta, total);
        prop_assert_eq!(r.counts.both + r.counts.only_old, co.declared_roots.len());
        prop_assert_eq!(r.counts.both + r.counts.only_new, cn.declared_roots.len());
        // Every chain starts at its example root and ends in the package.
        for c in &r.causes {
            let last = c.chain.last().unwrap();
            let name = last.rsplit('/').next().unwrap().split_once('-').unwrap().1;
            prop_assert_eq!(parse_package_name(name).pname, c.name.as_str());
        }
    }
}
