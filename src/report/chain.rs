//! [`Chain`]: the shortest chain of a `why` row, root first, as a parent pointer
//! (the chain of the path's predecessor plus one path), so that the chains of a closure
//! share their prefixes: memory is linear in the number of paths however deep the
//! chains go, where a copied list per path was quadratic (a 20,000-path chain took
//! 6.9 GB). It is written and read as the JSON array of full store paths, without
//! recursion; dropping a long chain does not recurse either.
//!
//! A chain may be cut ([`Chain::cut`]): it then lists the root and the last paths only,
//! and the paths between are left out (the `why` row counts them, `chain_omitted`), so
//! that a report's rows stay linear in the graph however deep it is. A cut chain still
//! shares its links with the whole one: cutting costs nothing, and only the paths it
//! lists are visited.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How many paths from the root end each chain keeps at hand (for the renderers'
/// `a → b → … → y → z`).
const HEAD: usize = 4;

/// A chain of store paths from a root; empty for none.
#[derive(Clone, Default)]
pub struct Chain {
    link: Option<Arc<Link>>,
    /// How many paths right after the root are left out (0: the chain is whole);
    /// fewer than `link.len - 1`, so that the root and the last path stay.
    skip: usize,
}

struct Link {
    path: Arc<str>,
    parent: Chain,
    len: usize,
    /// The first (at most [`HEAD`]) paths, shared along the chain.
    head: Arc<[Arc<str>]>,
}

impl Chain {
    /// The empty chain.
    pub fn new() -> Chain {
        Chain {
            link: None,
            skip: 0,
        }
    }

    /// This chain followed by `path` (the chain itself is shared, not copied). Of a cut
    /// chain, the same paths are left out.
    pub fn then(&self, path: Arc<str>) -> Chain {
        let whole = self.link.as_ref().map_or(0, |l| l.len);
        let head: Arc<[Arc<str>]> = match &self.link {
            Some(l) if l.head.len() >= HEAD => Arc::clone(&l.head),
            Some(l) => l.head.iter().cloned().chain([path.clone()]).collect(),
            None => Arc::from(vec![path.clone()]),
        };
        Chain {
            link: Some(Arc::new(Link {
                path,
                parent: Chain {
                    link: self.link.clone(),
                    skip: 0,
                },
                len: whole + 1,
                head,
            })),
            skip: self.skip,
        }
    }

    /// This chain cut to at most `max` paths (at least two: the root and the last
    /// path): the root, then the last `max - 1` paths. The second value is how many
    /// paths are left out, right after the root (0: the chain is whole). O(1): no
    /// link is visited or copied.
    pub fn cut(mut self, max: usize) -> (Chain, usize) {
        let omitted = self.len().saturating_sub(max.max(2));
        self.skip += omitted;
        (self, omitted)
    }

    /// How many paths are listed (of a cut chain, without those left out).
    pub fn len(&self) -> usize {
        self.link.as_ref().map_or(0, |l| l.len - self.skip)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.link.is_none()
    }

    /// The first paths listed (at most four), root first; of a cut chain, the root alone.
    pub fn head(&self) -> &[Arc<str>] {
        match &self.link {
            None => &[],
            Some(l) if self.skip > 0 => &l.head[..1],
            Some(l) => &l.head,
        }
    }

    /// The paths listed, from the last back to the root (O(1) a step; the paths a cut
    /// chain leaves out are not visited).
    pub fn rev_iter(&self) -> impl Iterator<Item = &Arc<str>> {
        let mut cur = self.link.as_deref();
        // Links to follow before the jump to the root (a whole chain never jumps).
        let mut before_jump = match &self.link {
            Some(l) if self.skip > 0 => l.len - self.skip - 1,
            _ => usize::MAX,
        };
        let root = self.link.as_deref().and_then(|l| l.head.first());
        std::iter::from_fn(move || {
            if before_jump == 0 {
                cur = None;
                before_jump = usize::MAX;
                return root;
            }
            before_jump -= 1;
            let l = cur?;
            cur = l.parent.link.as_deref();
            Some(&l.path)
        })
    }

    /// The paths, root first, borrowed into `out` (cleared first; O(length), no
    /// shared name cloned).
    pub fn paths_into<'c>(&'c self, out: &mut Vec<&'c str>) {
        out.clear();
        out.extend(self.rev_iter().map(|p| &**p));
        out.reverse();
    }

    /// The paths, root first (O(length)).
    pub fn to_vec(&self) -> Vec<Arc<str>> {
        let mut v: Vec<Arc<str>> = self.rev_iter().cloned().collect();
        v.reverse();
        v
    }
}

impl Drop for Chain {
    /// Unlink iteratively: the default drop of a 50,000-link chain recurses once a
    /// link.
    fn drop(&mut self) {
        let mut next = self.link.take();
        while let Some(link) = next {
            match Arc::try_unwrap(link) {
                Ok(mut l) => next = l.parent.link.take(),
                Err(_) => break, // shared: whoever holds it last unlinks the rest
            }
        }
    }
}

impl FromIterator<Arc<str>> for Chain {
    fn from_iter<I: IntoIterator<Item = Arc<str>>>(iter: I) -> Chain {
        iter.into_iter().fold(Chain::new(), |c, p| c.then(p))
    }
}

impl PartialEq for Chain {
    fn eq(&self, other: &Chain) -> bool {
        match (&self.link, &other.link) {
            (Some(a), Some(b)) if Arc::ptr_eq(a, b) && self.skip == other.skip => true,
            _ => self.len() == other.len() && self.rev_iter().eq(other.rev_iter()),
        }
    }
}

impl Eq for Chain {}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.to_vec()).finish()
    }
}

impl Serialize for Chain {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Borrowed, not cloned: every chain of a report starts at the same root, and
        // a clone and a drop of its shared name for each row, on every core at once,
        // fought over one counter.
        let mut paths = Vec::with_capacity(self.len());
        self.paths_into(&mut paths);
        s.collect_seq(paths)
    }
}

impl<'de> Deserialize<'de> for Chain {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Chain, D::Error> {
        let v: Vec<String> = Vec::deserialize(d)?;
        Ok(v.into_iter().map(Arc::from).collect())
    }
}

/// Where a node's chain goes on, for [`chains_of`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The chain starts at this node.
    Root,
    /// It goes on through this predecessor.
    Parent(usize),
    /// The node is on no chain (its chain is empty).
    Unreachable,
}

/// The chains of the nodes `wanted` of a parent-pointer forest over nodes `0..n`:
/// `step` says where each node's chain goes on, `name` names a node. Each node's chain
/// is built once and shared by those below it: O(n) in all, whatever the depth.
pub fn chains_of(
    n: usize,
    wanted: &[usize],
    step: impl Fn(usize) -> Step,
    name: impl Fn(usize) -> Arc<str>,
) -> Vec<Chain> {
    let mut memo: Vec<Option<Chain>> = vec![None; n];
    let mut up: Vec<usize> = Vec::new();
    for &w in wanted {
        // Up to a node whose chain is known, or to the start of the chain.
        let mut v = w;
        let mut base = loop {
            if let Some(c) = &memo[v] {
                break Some(c.clone());
            }
            up.push(v);
            match step(v) {
                Step::Parent(p) if p < n && up.len() <= n => v = p,
                Step::Root => break Some(Chain::new()),
                _ => break None,
            }
        };
        while let Some(u) = up.pop() {
            let c = base.as_ref().map_or_else(Chain::new, |b| b.then(name(u)));
            memo[u] = Some(c.clone());
            if base.is_some() {
                base = Some(c);
            }
        }
    }
    if wanted.len() == n && wanted.iter().enumerate().all(|(i, &w)| i == w) {
        // Every node, in order (`why` with every row): the memo is the answer, and
        // neither a clone nor a drop of 100,000 shared chains is needed.
        return memo.into_iter().map(Option::unwrap_or_default).collect();
    }
    wanted
        .iter()
        .map(|&w| memo[w].clone().unwrap_or_default())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_share_prefixes_and_read_back() {
        let a: Chain = ["r", "a"].into_iter().map(Arc::from).collect();
        let b = a.then(Arc::from("b"));
        let c = a.then(Arc::from("c"));
        assert_eq!(b.len(), 3);
        assert_eq!(c.head().len(), 3);
        let json = serde_json::to_string(&b).unwrap();
        assert_eq!(json, r#"["r","a","b"]"#);
        let back: Chain = serde_json::from_str(&json).unwrap();
        assert_eq!(back, b);
        assert_ne!(back, c);
        assert!(Chain::new().is_empty());
    }

    #[test]
    fn a_cut_chain_lists_the_root_and_the_last_paths() {
        let whole: Chain = (0..10).map(|i| Arc::from(format!("p{i}"))).collect();
        let (cut, omitted) = whole.clone().cut(4);
        assert_eq!((cut.len(), omitted), (4, 6));
        let names = |c: &Chain| c.to_vec().iter().map(|p| p.to_string()).collect::<Vec<_>>();
        assert_eq!(names(&cut), ["p0", "p7", "p8", "p9"]);
        assert_eq!(cut.head().len(), 1, "only the root leads a cut chain");
        assert_eq!(
            serde_json::to_string(&cut).unwrap(),
            r#"["p0","p7","p8","p9"]"#
        );
        // Read back, it lists the same paths.
        let back: Chain = serde_json::from_str(r#"["p0","p7","p8","p9"]"#).unwrap();
        assert_eq!(back, cut);
        assert_ne!(cut, whole);
        // Cut again, and extended: the same paths stay left out.
        let (twice, more) = cut.clone().cut(2);
        assert_eq!(
            (names(&twice), more),
            (vec!["p0".to_string(), "p9".into()], 2)
        );
        let longer = cut.then(Arc::from("p10"));
        assert_eq!(names(&longer), ["p0", "p7", "p8", "p9", "p10"]);
        // A chain no longer than the cap, and a cap below two, keep root and last.
        assert_eq!(whole.clone().cut(10), (whole.clone(), 0));
        assert_eq!(names(&whole.cut(0).0), ["p0", "p9"]);
        assert_eq!(Chain::new().cut(3), (Chain::new(), 0));
    }

    #[test]
    fn a_deep_chain_is_built_written_and_dropped_without_recursion() {
        let mut c = Chain::new();
        for i in 0..200_000 {
            c = c.then(Arc::from(format!("p{i}")));
        }
        assert_eq!(c.head().len(), HEAD);
        assert_eq!(&*c.head()[3], "p3");
        assert_eq!(c.rev_iter().next().map(|p| &**p), Some("p199999"));
        let json = serde_json::to_vec(&c).unwrap();
        assert!(json.len() > 1_000_000);
        drop(c);
    }
}
