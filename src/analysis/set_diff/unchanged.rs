//! The packages of both sides ([`Packages`]), and which of them provably change no
//! matched root's closure ([`unchanged`]), found without bitsets so that the cause
//! pass never looks at them.

use rustc_hash::FxHashMap;

use crate::store::parse_package_name;

use super::input::Pairs;
use super::side::Side;

/// Packages: their paths on each side, and whether they pair up path for path.
pub(super) struct Packages {
    pub(super) names: Vec<String>,
    pub(super) old_nodes: Vec<Vec<u32>>,
    pub(super) new_nodes: Vec<Vec<u32>>,
    /// `Some(pairs)` when the old and new paths pair up one to one by name and size.
    pub(super) paired: Vec<Option<Vec<(u32, u32)>>>,
    /// Packages that provably change no matched root's closure ([`unchanged`]).
    pub(super) skip: Vec<bool>,
}

pub(super) fn packages(old: &mut Side, new: &mut Side) -> Packages {
    let mut ids: FxHashMap<String, u32> = FxHashMap::default();
    let mut names: Vec<String> = Vec::new();
    let mut id_of = |name: &str| -> u32 {
        let p = parse_package_name(name).pname;
        if let Some(&i) = ids.get(p) {
            return i;
        }
        let i = names.len() as u32;
        ids.insert(p.to_string(), i);
        names.push(p.to_string());
        i
    };
    old.pkg = (0..old.g.len()).map(|v| id_of(old.name(v))).collect();
    new.pkg = (0..new.g.len()).map(|v| id_of(new.name(v))).collect();
    let np = names.len();
    let mut old_nodes = vec![Vec::new(); np];
    let mut new_nodes = vec![Vec::new(); np];
    for (v, &p) in old.pkg.iter().enumerate() {
        old_nodes[p as usize].push(v as u32);
    }
    for (v, &p) in new.pkg.iter().enumerate() {
        new_nodes[p as usize].push(v as u32);
    }
    let paired = (0..np)
        .map(|p| {
            let (os, ns) = (&old_nodes[p], &new_nodes[p]);
            if os.len() != ns.len() || os.len() < 2 {
                return None;
            }
            let mut a: Vec<(&str, u64, u32)> = os
                .iter()
                .map(|&v| (old.name(v as usize), old.g.nar_sizes[v as usize].get(), v))
                .collect();
            let mut b: Vec<(&str, u64, u32)> = ns
                .iter()
                .map(|&v| (new.name(v as usize), new.g.nar_sizes[v as usize].get(), v))
                .collect();
            a.sort_unstable();
            b.sort_unstable();
            a.iter()
                .zip(&b)
                .all(|(x, y)| x.0 == y.0 && x.1 == y.1)
                .then(|| a.iter().zip(&b).map(|(x, y)| (x.2, y.2)).collect())
        })
        .collect();
    Packages {
        names,
        old_nodes,
        new_nodes,
        paired,
        skip: Vec::new(),
    }
}

/// The key a path is matched by between the sides: `(pname, output)` when each side
/// has at most one path with it, else the name without hash when that is unique.
pub(super) fn counterparts(old: &Side, new: &Side) -> (Vec<u32>, Vec<u32>) {
    /// (pname, output) or the whole name, borrowed from the graphs.
    #[derive(Hash, PartialEq, Eq)]
    enum Ident<'s> {
        Key(&'s str, &'s str),
        Name(&'s str),
    }
    pub(super) fn key(name: &str) -> (&str, &str) {
        let p = parse_package_name(name);
        (p.pname, p.output)
    }
    let mut keys: FxHashMap<(&str, &str), (u32, u32)> = FxHashMap::default();
    let mut names: FxHashMap<&str, (u32, u32)> = FxHashMap::default();
    for v in 0..old.g.len() {
        keys.entry(key(old.name(v))).or_default().0 += 1;
        names.entry(old.name(v)).or_default().0 += 1;
    }
    for v in 0..new.g.len() {
        keys.entry(key(new.name(v))).or_default().1 += 1;
        names.entry(new.name(v)).or_default().1 += 1;
    }
    pub(super) fn ident<'s>(
        name: &'s str,
        keys: &FxHashMap<(&str, &str), (u32, u32)>,
        names: &FxHashMap<&str, (u32, u32)>,
    ) -> Option<Ident<'s>> {
        let k = key(name);
        if keys.get(&k).is_some_and(|c| c.0 <= 1 && c.1 <= 1) {
            return Some(Ident::Key(k.0, k.1));
        }
        names
            .get(name)
            .is_some_and(|c| c.0 <= 1 && c.1 <= 1)
            .then_some(Ident::Name(name))
    }
    let old_ids: FxHashMap<Ident, u32> = (0..old.g.len())
        .filter_map(|v| ident(old.name(v), &keys, &names).map(|k| (k, v as u32)))
        .collect();
    let mut new_to_old = vec![u32::MAX; new.g.len()];
    let mut old_to_new = vec![u32::MAX; old.g.len()];
    for (v, slot) in new_to_old.iter_mut().enumerate() {
        if let Some(&o) = ident(new.name(v), &keys, &names).and_then(|k| old_ids.get(&k)) {
            *slot = o;
            old_to_new[o as usize] = v as u32;
        }
    }
    (new_to_old, old_to_new)
}

/// Whether no matched root reaches each node (`empty`), taken predecessors first, and
/// whether it is in a cycle.
pub(super) fn empty_and_cyclic(s: &Side, pair_of: &[u32]) -> (Vec<bool>, Vec<bool>) {
    let n = s.g.len();
    let cyclic: Vec<bool> = (0..n)
        .map(|v| s.members(s.cond.comp_of[v]).len() > 1)
        .collect();
    let mut empty = vec![false; n];
    for c in s.order() {
        for &v in s.members(c) {
            let v = v as usize;
            empty[v] =
                !cyclic[v] && pair_of[v] == u32::MAX && s.parents(v).all(|p| empty[p as usize]);
        }
    }
    (empty, cyclic)
}

/// Which packages change no matched root's closure, proven without bitsets: every path
/// of the package is reached by no matched root on its side, or has a counterpart of
/// the same NAR size (same package name and output, or same name) reached by exactly the
/// same matched roots. The last is shown top-down: a path and its counterpart are
/// reached by the same roots when they are the same matched root or none, and their
/// parents (those any matched root reaches) are counterparts reached by the same roots.
/// O(n + m) with hashing; a mass rebuild that changed no size is skipped whole.
pub(super) fn unchanged(old: &Side, new: &Side, pk: &Packages, pairs: &Pairs) -> Vec<bool> {
    let (new_to_old, old_to_new) = counterparts(old, new);
    let mut pair_old = vec![u32::MAX; old.g.len()];
    let mut pair_new = vec![u32::MAX; new.g.len()];
    for (i, (o, n, _)) in pairs.iter().enumerate() {
        pair_old[old.root_node[*o] as usize] = i as u32;
        pair_new[new.root_node[*n] as usize] = i as u32;
    }
    let (empty_old, cyc_old) = empty_and_cyclic(old, &pair_old);
    let (empty_new, cyc_new) = empty_and_cyclic(new, &pair_new);
    // eq[v]: new node v and its counterpart are reached by the same matched roots.
    let mut eq = vec![false; new.g.len()];
    let mut a: Vec<u32> = Vec::new();
    let mut b: Vec<u32> = Vec::new();
    for c in new.order() {
        for &v in new.members(c) {
            let v = v as usize;
            let y = new_to_old[v];
            if y == u32::MAX || cyc_new[v] || cyc_old[y as usize] {
                continue;
            }
            let y = y as usize;
            if pair_new[v] != pair_old[y] {
                continue;
            }
            a.clear();
            b.clear();
            let mut ok = true;
            for p in new.parents(v) {
                if empty_new[p as usize] {
                    continue;
                }
                if !eq[p as usize] {
                    ok = false;
                    break;
                }
                a.push(new_to_old[p as usize]);
            }
            if !ok {
                continue;
            }
            b.extend(old.parents(y).filter(|&p| !empty_old[p as usize]));
            a.sort_unstable();
            b.sort_unstable();
            eq[v] = a == b;
        }
    }
    (0..pk.names.len())
        .map(|p| {
            pk.new_nodes[p].iter().all(|&v| {
                let v = v as usize;
                empty_new[v]
                    || (eq[v] && new.g.nar_sizes[v] == old.g.nar_sizes[new_to_old[v] as usize])
            }) && pk.old_nodes[p].iter().all(|&y| {
                let y = y as usize;
                let x = old_to_new[y];
                empty_old[y]
                    || (x != u32::MAX
                        && eq[x as usize]
                        && new.g.nar_sizes[x as usize] == old.g.nar_sizes[y])
            })
        })
        .collect()
}
