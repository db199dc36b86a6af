//! [`Closure`]: the one type every loader produces, whatever the input format.

use std::collections::{BTreeMap, BTreeSet};

use super::path::{PathInfo, StoreDir, StorePath};
use super::warning::LoadWarning;

/// Which kind of input a closure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// `nix path-info --json` output, any Nix version.
    PathInfoJson,
    /// A registration file (`nix-store --dump-db`, closureInfo's `registration`).
    Registration,
    /// A closureInfo output directory.
    ClosureInfo,
    /// A non-structured `exportReferencesGraph` file (no sizes).
    ExportReferencesGraph,
    /// A structured-attrs `.attrs.json`.
    StructuredAttrs,
    /// `nix-store --query --graph` output (Graphviz DOT): paths and references only,
    /// no sizes, no hashes, no derivers, and no self-references (Nix leaves them out).
    NixStoreGraph,
    /// A binary cache directory.
    BinaryCache,
    /// A binary cache over HTTP(S) (`--cache URL`); `origin` is the cache's URL.
    HttpCache,
    /// The local store, queried through the installed `nix`.
    LiveStore,
    /// A nixcut snapshot file.
    Snapshot,
    /// A narinfo dataset in Parquet (one file or a directory of them).
    NarinfoDataset,
}

/// A path the source listed but reported as invalid (`valid: false`, or `null`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InvalidPath {
    /// The path as the source spelled it.
    pub path: String,
    /// What the source said.
    pub why: String,
}

/// A set of store paths with their metadata and references, as loaded from one input.
///
/// The set need not be closed under references: references to paths the input does not
/// describe are kept and reported by [`Closure::missing_references`].
#[derive(Debug, Clone)]
pub struct Closure {
    /// The logical store directory the paths live in.
    pub store_dir: StoreDir,
    /// Every valid path, by store path.
    pub paths: BTreeMap<StorePath, PathInfo>,
    /// Roots the input names explicitly (a snapshot's root, the path queried in the
    /// live store). Empty when the input does not say.
    pub declared_roots: Vec<StorePath>,
    /// Paths the input listed as invalid (each also named in a warning).
    pub invalid: Vec<InvalidPath>,
    /// The input format.
    pub source: SourceKind,
    /// Where the input came from (file, directory or store path), for messages.
    pub origin: String,
    /// Problems found while loading that did not stop it, as facts (worded by
    /// `crate::render::words::load`). A loader that records an invalid path, or leaves
    /// a NAR size unknown, says so here: reports carry these warnings and add none of
    /// their own about either.
    pub warnings: Vec<LoadWarning>,
    /// Set by a loader that resolved every reference to one of its own valid entries
    /// while reading them (the `nix path-info --json` reader): the loader's closedness
    /// check, a second pass over every reference, is then skipped. It only vouches
    /// for the closure as loaded; the check takes it back (resets it).
    pub references_resolved: bool,
}

/// Why a query (`--root`, a TARGET) did not pick exactly one path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RootSelectionError {
    #[error("{role} `{query}` is not in the closure of {origin}; candidates: {}", list(.candidates))]
    NotFound {
        /// What the query names (`root`, `TARGET`).
        role: &'static str,
        query: String,
        origin: String,
        candidates: Vec<String>,
    },
    #[error("{role} `{query}` is ambiguous in {origin}; it matches: {}", list(.candidates))]
    Ambiguous {
        /// What the query names (`root`, `TARGET`).
        role: &'static str,
        query: String,
        origin: String,
        candidates: Vec<String>,
    },
    #[error("{origin} holds no store paths")]
    Empty { origin: String },
}

fn list(v: &[String]) -> String {
    const MAX: usize = 12;
    let mut s = v.iter().take(MAX).cloned().collect::<Vec<_>>().join(", ");
    if v.len() > MAX {
        s.push_str(&format!(" … and {} more", v.len() - MAX));
    }
    s
}

impl Closure {
    /// An empty closure for `store_dir`.
    pub fn new(store_dir: StoreDir, source: SourceKind, origin: impl Into<String>) -> Closure {
        Closure {
            store_dir,
            paths: BTreeMap::new(),
            declared_roots: Vec::new(),
            invalid: Vec::new(),
            source,
            origin: origin.into(),
            warnings: Vec::new(),
            references_resolved: false,
        }
    }

    /// Add (or replace) a path, normalising its references.
    pub fn insert(&mut self, mut info: PathInfo) {
        info.normalise();
        self.paths.insert(info.path.clone(), info);
    }

    /// The declared roots, or else every path no other path references.
    pub fn roots(&self) -> Vec<StorePath> {
        if !self.declared_roots.is_empty() {
            return self.declared_roots.clone();
        }
        let referenced: rustc_hash::FxHashSet<&StorePath> = self
            .paths
            .values()
            .flat_map(|i| i.references.iter().filter(move |r| **r != i.path))
            .collect();
        self.paths
            .keys()
            .filter(|p| !referenced.contains(p))
            .cloned()
            .collect()
    }

    /// References to paths this closure does not describe, as (referrer, reference).
    pub fn missing_references(&self) -> Vec<(StorePath, StorePath)> {
        use rayon::prelude::*;
        // A hash map keyed by the first 8 hash bytes (B-tree lookups compare 32-byte
        // keys ~17 times each; hashing a whole path reads its name, a cache miss),
        // probed from both cores: a large closure has close to a million references.
        // Paths whose prefix another path has already taken go to a second set.
        let mut by_prefix: rustc_hash::FxHashMap<u64, &StorePath> =
            rustc_hash::FxHashMap::default();
        by_prefix.reserve(self.paths.len());
        let mut others: rustc_hash::FxHashSet<&StorePath> = rustc_hash::FxHashSet::default();
        for p in self.paths.keys() {
            if let Some(taken) = by_prefix.insert(p.hash_prefix(), p) {
                others.insert(taken);
            }
        }
        let known = |r: &StorePath| {
            by_prefix.get(&r.hash_prefix()).is_some_and(|&p| p == r) || others.contains(r)
        };
        let infos: Vec<&PathInfo> = self.paths.values().collect();
        infos
            .par_iter()
            .flat_map_iter(|info| {
                info.references
                    .iter()
                    .filter(|r| !known(r))
                    .map(|r| (info.path.clone(), r.clone()))
            })
            .collect()
    }

    /// The sum of every known NAR size, or `None` when it exceeds `u64::MAX` (no real
    /// closure is that big: one of the sizes is wrong). Every closure, added or
    /// exclusive size is a sum over a subset of these, so when this is `Some` none of
    /// them can overflow. O(n).
    pub fn total_nar_size(&self) -> Option<u64> {
        self.paths
            .values()
            .filter_map(|i| i.nar_size)
            .try_fold(0u64, |acc, s| acc.checked_add(s))
    }

    /// Whether every path has a NAR size.
    pub fn has_sizes(&self) -> bool {
        self.paths.values().all(|i| i.nar_size.is_some())
    }

    /// Pick one root by full store path, base name, hash part, name (`rocblas-5.7.1`)
    /// or package name without version (`rocblas`), in that order of preference.
    pub fn select_root(&self, query: &str) -> Result<StorePath, RootSelectionError> {
        self.select_path(query, "root")
    }

    /// Pick one path as [`Closure::select_root`] does; `role` says in messages what
    /// the query names (`root`, `TARGET`).
    pub fn select_path(
        &self,
        query: &str,
        role: &'static str,
    ) -> Result<StorePath, RootSelectionError> {
        if self.paths.is_empty() {
            return Err(RootSelectionError::Empty {
                origin: self.origin.clone(),
            });
        }
        let q = query.trim_end_matches('/');
        if let Ok(p) = self.store_dir.parse_path_or_base(q) {
            if self.paths.contains_key(&p) {
                return Ok(p);
            }
        }
        let by = |pred: &dyn Fn(&StorePath) -> bool| -> Vec<StorePath> {
            self.paths.keys().filter(|p| pred(p)).cloned().collect()
        };
        // As tables print a path: `wxyrv3j…-rocblas-5.7.1`, the first hash characters
        // and the name; or the first characters of a hash alone (at least 5).
        let (prefix, name) = match q.split_once("…-") {
            Some((h, n)) => (h, Some(n)),
            None => (q, None),
        };
        let hash_prefix_ok = prefix.len() >= 5 && prefix.bytes().all(|b| b.is_ascii_alphanumeric());
        for matches in [
            by(&|p| p.hash_part() == q),
            by(&|p| p.name() == q),
            by(&|p| package_name(p.name()) == q),
            by(&|p| {
                hash_prefix_ok
                    && p.hash_part().starts_with(prefix)
                    && name.is_none_or(|n| p.name() == n)
            }),
        ] {
            match matches.len() {
                0 => continue,
                1 => return Ok(matches.into_iter().next().expect("one match")),
                _ => {
                    return Err(RootSelectionError::Ambiguous {
                        role,
                        query: query.to_string(),
                        origin: self.origin.clone(),
                        candidates: matches.iter().map(|p| self.store_dir.display(p)).collect(),
                    })
                }
            }
        }
        // Paths whose name contains the query are likely what the user meant; without
        // any, the roots say what the input holds.
        let mut candidates: Vec<String> = self
            .paths
            .keys()
            .filter(|p| p.name().contains(q))
            .take(30)
            .map(|p| self.store_dir.display(p))
            .collect();
        candidates.sort();
        if candidates.is_empty() {
            // A misspelling (`rocblass`): the paths whose package name is nearest, at
            // most 2 edits away (or a third of the query), nearest first.
            let limit = 2.max(q.chars().count() / 3);
            let mut near: Vec<(usize, String)> = self
                .paths
                .keys()
                .filter_map(|p| {
                    // A length further off than the limit cannot be near: no distance
                    // is computed for most of a large closure.
                    let near = |name: &str| {
                        let gap = name.chars().count().abs_diff(q.chars().count());
                        (gap <= limit).then(|| super::edit_distance(q, name))
                    };
                    let d = near(package_name(p.name()))
                        .into_iter()
                        .chain(near(p.name()))
                        .min()?;
                    (d <= limit).then(|| (d, self.store_dir.display(p)))
                })
                .collect();
            near.sort();
            candidates = near.into_iter().take(30).map(|(_, p)| p).collect();
        }
        if candidates.is_empty() {
            candidates = self
                .roots()
                .iter()
                .map(|p| self.store_dir.display(p))
                .collect();
        }
        Err(RootSelectionError::NotFound {
            role,
            query: query.to_string(),
            origin: self.origin.clone(),
            candidates,
        })
    }

    /// The sub-closure reachable from `roots` (references to missing paths are kept).
    pub fn restrict_to(&self, roots: &[StorePath]) -> Closure {
        let mut keep = BTreeSet::new();
        let mut stack: Vec<&StorePath> = roots.iter().collect();
        while let Some(p) = stack.pop() {
            if !keep.insert(p.clone()) {
                continue;
            }
            if let Some(info) = self.paths.get(p) {
                stack.extend(info.references.iter());
            }
        }
        let mut out = Closure {
            store_dir: self.store_dir.clone(),
            paths: BTreeMap::new(),
            declared_roots: roots.to_vec(),
            invalid: self.invalid.clone(),
            source: self.source,
            origin: self.origin.clone(),
            warnings: self.warnings.clone(),
            references_resolved: false,
        };
        for p in keep {
            if let Some(info) = self.paths.get(&p) {
                out.paths.insert(p, info.clone());
            }
        }
        out
    }
}

/// The package name of a store-path name (`rocblas-5.7.1` → `rocblas`,
/// `rocm-llvm-clang-5.7.1` → `rocm-llvm-clang`, `gcc-12.2.0-lib` → `gcc`): the `pname`
/// of [`super::parse_package_name`], the one parser of store-path names.
pub fn package_name(name: &str) -> &str {
    super::parse_package_name(name).pname
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sp(name: &str, h: char) -> StorePath {
        StorePath::from_base_name(&format!("{}-{name}", h.to_string().repeat(32))).unwrap()
    }

    fn sample() -> Closure {
        let mut c = Closure::new(StoreDir::default(), SourceKind::PathInfoJson, "test.json");
        let (a, b, d) = (sp("app-1.0", 'a'), sp("lib-2.0", 'b'), sp("lib-3.0", 'd'));
        let mut ia = PathInfo::new(a.clone());
        ia.references = vec![b.clone(), a.clone(), d.clone()];
        c.insert(ia);
        c.insert(PathInfo::new(b));
        c.insert(PathInfo::new(d));
        c
    }

    #[test]
    fn roots_ignore_self_references() {
        let c = sample();
        assert_eq!(c.roots(), vec![sp("app-1.0", 'a')]);
    }

    #[test]
    fn root_selection() {
        let c = sample();
        assert_eq!(c.select_root("app").unwrap(), sp("app-1.0", 'a'));
        assert_eq!(c.select_root("lib-2.0").unwrap(), sp("lib-2.0", 'b'));
        assert_eq!(c.select_root(&"b".repeat(32)).unwrap(), sp("lib-2.0", 'b'));
        let e = c.select_root("lib").unwrap_err();
        assert!(matches!(e, RootSelectionError::Ambiguous { .. }), "{e}");
        let e = c.select_root("nope").unwrap_err().to_string();
        assert!(e.contains("candidates") && e.contains("app-1.0"), "{e}");
        assert!(e.contains("root `nope` is not in the closure"), "{e}");
        let e = c.select_path("nope", "TARGET").unwrap_err().to_string();
        assert!(e.contains("TARGET `nope` is not in the closure"), "{e}");
        let e = c.select_path("lib", "TARGET").unwrap_err().to_string();
        assert!(e.starts_with("TARGET `lib` is ambiguous"), "{e}");
    }

    #[test]
    fn total_nar_size_is_checked() {
        let mut c = sample();
        assert_eq!(c.total_nar_size(), Some(0));
        for (info, size) in c.paths.values_mut().zip([1u64 << 63, 1 << 62, 1 << 62]) {
            info.nar_size = Some(size);
        }
        assert_eq!(c.total_nar_size(), None, "2^63 + 2^62 + 2^62 = 2^64");
        c.paths.values_mut().last().unwrap().nar_size = Some((1 << 62) - 1);
        assert_eq!(c.total_nar_size(), Some(u64::MAX));
    }

    #[test]
    fn package_names() {
        assert_eq!(package_name("rocblas-5.7.1"), "rocblas");
        assert_eq!(package_name("rocm-llvm-clang-5.7.1"), "rocm-llvm-clang");
        assert_eq!(package_name("source"), "source");
        assert_eq!(
            package_name("rocblas-tensile-gfx90-5.7.1"),
            "rocblas-tensile-gfx90"
        );
    }
}
