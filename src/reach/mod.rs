//! Runtime reachability: which files of a closure a consumer loads, runs or opens,
//! found the way the dynamic loader and the libraries themselves find them.
//!
//! From the entry points (the consumer's own run-time files), a worklist follows:
//! - ELF files: `PT_INTERP`; each `DT_NEEDED` library through the search directories the
//!   loader uses (the file's `DT_RUNPATH`; without one, its `DT_RPATH` and the `DT_RPATH`
//!   of the objects that loaded it); each soname it names for `dlopen` the same way;
//!   every store path its data strings name; the relative data directories and data
//!   file patterns its data strings name (`rocblas/library`, `../share/x/db`,
//!   `Library_lazy_%s.dat`, `%s.db`; data files by the GPU library table's data
//!   extensions), resolved against the directory the library was loaded from and the
//!   directory of its real path; and, as a fallback for libraries that build those
//!   paths at run time, the data directories of the data-directory rules
//!   ([`DataDirRule`]: the GPU library table's rows that open data, and a rules file's
//!   `[[data_dir]]` rows);
//! - index files (`*.dat`, MessagePack; the table's index names): the placeholder
//!   indexes and code objects they name, in the directory they were opened in; in a
//!   data directory where a reached index names code objects, a library's code object
//!   (the table's code-object names) no reached index or pattern names is not reached
//!   (lazy loading opens only what the indexes name);
//! - scripts: the `#!` interpreter and every store path the script names;
//! - symlinks: their targets (relative or absolute, within the store only);
//! - directories: everything below them (below a data directory, after the files
//!   that strings and patterns name, so that a chain shows the most specific reason).
//!
//! Paths are resolved in the scanned inventories ([`Inventory`]), symlinks followed
//! within the store (at most [`MAX_SYMLINKS`] per lookup); nothing is read from disk.
//! Cost: O(entries + edges) with hash lookups; every file is processed once.

pub use crate::classify::{data_dir_rules, DataBase, DataDirRule};

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use crate::classify::{
    arch_of_name, code_object_extensions, data_extensions, is_index_name, is_lazy_index_name,
    is_library_code_object, EntryType, RuleId,
};
use crate::elf::is_name_fragment;
use crate::evidence::{ElfLink, EntryFact, SearchTag};
use crate::scan::{IndexFile, RelPath};
use crate::store::{StoreDir, StorePath};

/// Most symlinks followed while resolving one path (as Linux' `ELOOP` limit).
pub const MAX_SYMLINKS: usize = 40;

/// One entry of one store path in an [`Inventory`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId {
    /// Index of the store path.
    pub path: u32,
    /// Index of the entry in that path's inventory.
    pub entry: u32,
}

/// Why a file is reached: the edge from the file that reached it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// One of the consumer's own run-time files.
    EntryPoint,
    /// The program interpreter (`PT_INTERP`).
    Interpreter,
    /// A `DT_NEEDED` library, found in this search directory.
    Needed {
        /// The library name.
        name: String,
        /// The RUNPATH/RPATH directory that supplied it.
        dir: String,
    },
    /// A library named for `dlopen`, found in this search directory.
    Dlopen {
        /// The soname.
        name: String,
        /// The RUNPATH/RPATH directory that supplied it.
        dir: String,
    },
    /// A script's `#!` interpreter.
    Shebang,
    /// A store path named in a script line or an ELF data string.
    Named,
    /// The target of a symlink (or a symlink on the way to it).
    Symlink,
    /// An entry below a reached directory.
    Inside,
    /// A data directory a library opens beside itself (the data-directory rule's name).
    DataDir(RuleId),
    /// A relative data directory or data file one of the library's strings names (the
    /// string).
    DataString(String),
    /// A file an index file names for loading (the name or pattern).
    Indexed(String),
    /// A file the library opens only when running on this processor: a code object a
    /// non-lazy master index loads for it (`*gfx1030*co` beside a master `Library.dat`),
    /// or a name the library builds from one of its name pieces and the processor
    /// (`/Library_` + `gfx1030` + `.dat`).
    Processor {
        /// The base architecture (`gfx1030`, `gfx90a` for `gfx90a-xnack+`).
        processor: String,
        /// The glob or name the file was found by.
        pattern: String,
    },
}

/// The scanned entries of the closure's store paths, indexed for path lookups.
pub struct Inventory<'a> {
    store_dir: &'a StoreDir,
    paths: Vec<(&'a StorePath, &'a [EntryFact])>,
    by_base: HashMap<String, u32>,
    files: Vec<HashMap<&'a [u8], u32>>,
    indexes: HashMap<FileId, &'a IndexFile>,
}

impl<'a> Inventory<'a> {
    /// An inventory of these store paths with their entries (in NAR order).
    pub fn new(
        store_dir: &'a StoreDir,
        paths: impl IntoIterator<Item = (&'a StorePath, &'a [EntryFact])>,
    ) -> Inventory<'a> {
        let paths: Vec<_> = paths.into_iter().collect();
        let by_base = paths
            .iter()
            .enumerate()
            .map(|(i, (p, _))| (p.to_string(), i as u32))
            .collect();
        let files = paths
            .iter()
            .map(|(_, entries)| {
                entries
                    .iter()
                    .enumerate()
                    .map(|(i, e)| (e.path.as_bytes(), i as u32))
                    .collect()
            })
            .collect();
        Inventory {
            store_dir,
            paths,
            by_base,
            files,
            indexes: HashMap::new(),
        }
    }

    /// Add what the index files and manifests of store path `p` name (entry number,
    /// names), as the scan found them.
    pub fn add_indexes(&mut self, p: &StorePath, indexes: &'a [(u32, IndexFile)]) {
        let Some(path) = self.path_index(p) else {
            return;
        };
        let n = self.paths[path as usize].1.len() as u32;
        for (entry, i) in indexes.iter().filter(|(e, _)| *e < n) {
            self.indexes.insert(
                FileId {
                    path,
                    entry: *entry,
                },
                i,
            );
        }
    }

    /// What an index file or manifest names.
    pub fn index(&self, f: FileId) -> Option<&'a IndexFile> {
        self.indexes.get(&f).copied()
    }

    /// The directory part of an absolute logical path.
    pub fn parent_of(abs: &[u8]) -> Vec<u8> {
        let cut = abs.iter().rposition(|&b| b == b'/').unwrap_or(0);
        abs[..cut].to_vec()
    }

    /// The index of a store path.
    pub fn path_index(&self, p: &StorePath) -> Option<u32> {
        self.by_base.get(&p.to_string()).copied()
    }

    /// How many store paths the inventory holds.
    pub fn path_count(&self) -> u32 {
        self.paths.len() as u32
    }

    /// The store path with this index.
    pub fn store_path(&self, i: u32) -> &StorePath {
        self.paths[i as usize].0
    }

    /// The entry behind an id.
    pub fn entry(&self, f: FileId) -> &EntryFact {
        &self.paths[f.path as usize].1[f.entry as usize]
    }

    /// The id of the entry at `rel` in store path `path`.
    pub fn file(&self, path: u32, rel: &RelPath) -> Option<FileId> {
        let entry = *self.files.get(path as usize)?.get(rel.as_bytes())?;
        Some(FileId { path, entry })
    }

    /// Every entry of store path `path`.
    pub fn files_of(&self, path: u32) -> impl Iterator<Item = FileId> + '_ {
        (0..self.paths[path as usize].1.len() as u32).map(move |entry| FileId { path, entry })
    }

    /// The full logical path of an entry.
    pub fn display(&self, f: FileId) -> String {
        let base = self.store_dir.display(self.store_path(f.path));
        let rel = &self.entry(f).path;
        if rel.is_root() {
            base
        } else {
            format!("{base}/{rel}")
        }
    }

    /// The absolute logical path of an entry, as bytes.
    pub fn abs(&self, f: FileId) -> Vec<u8> {
        let mut v = format!("{}/{}", self.store_dir.as_str(), self.store_path(f.path)).into_bytes();
        let rel = self.entry(f).path.as_bytes();
        if !rel.is_empty() {
            v.push(b'/');
            v.extend_from_slice(rel);
        }
        v
    }

    /// Resolve an absolute logical path to the entry it names, following symlinks
    /// within the store; the symlinks passed on the way are returned too. `None` for
    /// paths outside the scanned store paths, missing entries and symlink loops.
    pub fn resolve(&self, abs: &[u8]) -> Option<(FileId, Vec<FileId>)> {
        let mut links = Vec::new();
        let mut todo: Vec<u8> = abs.to_vec();
        for _ in 0..=MAX_SYMLINKS {
            match self.step(&todo, &mut links)? {
                Step::Done(f) => return Some((f, links)),
                Step::Again(next) => todo = next,
            }
        }
        None
    }

    /// Walk `abs` component by component; stop at the first symlink with the path that
    /// replaces it.
    fn step(&self, abs: &[u8], links: &mut Vec<FileId>) -> Option<Step> {
        let rest = abs.strip_prefix(self.store_dir.as_str().as_bytes())?;
        let rest = rest.strip_prefix(b"/")?;
        let mut parts = rest
            .split(|&b| b == b'/')
            .filter(|c| !c.is_empty() && *c != b".");
        let base = std::str::from_utf8(parts.next()?).ok()?;
        let path = *self.by_base.get(base)?;
        let parts: Vec<&[u8]> = parts.collect();
        let mut cur: Vec<&[u8]> = Vec::new();
        let mut i = 0;
        loop {
            let rel = cur.join(&b'/');
            let entry = *self.files[path as usize].get(rel.as_slice())?;
            let id = FileId { path, entry };
            let e = self.entry(id);
            if e.entry == EntryType::Symlink {
                links.push(id);
                let target = e.symlink_target.as_deref()?;
                let mut next = if target.starts_with(b"/") {
                    target.to_vec()
                } else {
                    let mut dir = self.abs(id);
                    let cut = dir.iter().rposition(|&b| b == b'/').unwrap_or(0);
                    dir.truncate(cut);
                    dir.push(b'/');
                    dir.extend_from_slice(target);
                    normalise(&dir)
                };
                for p in &parts[i..] {
                    next.push(b'/');
                    next.extend_from_slice(p);
                }
                return Some(Step::Again(normalise(&next)));
            }
            let Some(&part) = parts.get(i) else {
                return Some(Step::Done(id));
            };
            i += 1;
            if part == b".." {
                cur.pop()?;
            } else {
                cur.push(part);
            }
        }
    }

    /// The entries below a directory (NAR order keeps them right after it).
    pub fn below(&self, dir: FileId) -> impl Iterator<Item = FileId> + '_ {
        let entries = self.paths[dir.path as usize].1;
        let prefix = entries[dir.entry as usize].path.as_bytes();
        let root = prefix.is_empty();
        entries[dir.entry as usize + 1..]
            .iter()
            .take_while(move |e| {
                root || (e.path.as_bytes().starts_with(prefix)
                    && e.path.as_bytes().get(prefix.len()) == Some(&b'/'))
            })
            .enumerate()
            .map(move |(k, _)| FileId {
                path: dir.path,
                entry: dir.entry + 1 + k as u32,
            })
    }
}

enum Step {
    Done(FileId),
    Again(Vec<u8>),
}

/// Lexically normalise `a/./b`, `a//b` and `a/x/../b` in an absolute path.
fn normalise(p: &[u8]) -> Vec<u8> {
    let mut out: Vec<&[u8]> = Vec::new();
    for c in p.split(|&b| b == b'/') {
        match c {
            b"" | b"." => {}
            b".." => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    let mut v = Vec::with_capacity(p.len());
    for c in out {
        v.push(b'/');
        v.extend_from_slice(c);
    }
    v
}

/// What reaching found: for every reached file, the edge it was first reached by.
#[derive(Debug, Default)]
pub struct Reached {
    first: HashMap<FileId, (Option<FileId>, Why)>,
    /// Files opened only on some processors (every edge that reached them was for one
    /// of these processors, or came from a file opened only on them).
    only_on: HashMap<FileId, BTreeSet<String>>,
    /// Files some edge reached for every processor (a `DT_NEEDED` library, a master
    /// index named in full, a symlink's target): never narrowed by `only_on`.
    always: HashSet<FileId>,
}

impl Reached {
    /// Whether the file is reached.
    pub fn contains(&self, f: FileId) -> bool {
        self.first.contains_key(&f)
    }

    /// The processors a reached file is opened on, when it is opened only on some
    /// (`None`: on every one, or not reached).
    pub fn processors(&self, f: FileId) -> Option<&BTreeSet<String>> {
        if self.always.contains(&f) {
            return None;
        }
        self.only_on.get(&f)
    }

    /// Note that `f` was reached by an edge with this condition (`None`: for every
    /// processor). An entry below a reached directory (`Why::Inside`) adds no condition
    /// and lifts none: the directory is a catch-all, the edges that name a file say more.
    /// True when a file opened only on some processors is now opened on every one.
    fn note(&mut self, f: FileId, cond: Option<&BTreeSet<String>>, why: &Why) -> bool {
        if matches!(why, Why::Inside) || self.always.contains(&f) {
            return false;
        }
        match cond {
            Some(set) => {
                self.narrow(f, set);
                false
            }
            None => {
                self.always.insert(f);
                self.only_on.remove(&f).is_some()
            }
        }
    }

    /// Add processors `set` to the ones `f` is opened on.
    fn narrow(&mut self, f: FileId, set: &BTreeSet<String>) {
        self.only_on
            .entry(f)
            .or_default()
            .extend(set.iter().cloned());
    }

    /// How many files are reached.
    pub fn len(&self) -> usize {
        self.first.len()
    }

    /// Whether nothing is reached.
    pub fn is_empty(&self) -> bool {
        self.first.is_empty()
    }

    /// The chain of loads that reaches `f`, from an entry point to `f` itself.
    pub fn chain(&self, f: FileId) -> Vec<(FileId, Why)> {
        let mut out = Vec::new();
        let mut cur = Some(f);
        while let Some(c) = cur {
            let Some((parent, why)) = self.first.get(&c) else {
                break;
            };
            out.push((c, why.clone()));
            if out.len() > self.first.len() {
                break;
            }
            cur = *parent;
        }
        out.reverse();
        out
    }
}

/// An edge to follow: the absolute path it names, why, and what the target inherits
/// (the loader chain's `DT_RPATH`, the directory a library was found in).
type Edge = (Vec<u8>, Why, Vec<String>, Option<Vec<u8>>);

struct Item {
    file: FileId,
    /// A data directory whose contents are reached now (it waited in `later`).
    expand: bool,
    /// `DT_RPATH` directories of the objects that loaded this one (the loader chain).
    inherited: Vec<String>,
    /// The directory the loader found this library in (for data directories).
    loaded_from: Option<Vec<u8>>,
}

/// Reach everything the entry points load, run or open, with the built-in
/// data-directory rules.
pub fn reach(inv: &Inventory<'_>, entry_points: impl IntoIterator<Item = FileId>) -> Reached {
    reach_with(inv, entry_points, data_dir_rules())
}

/// Reach everything the entry points load, run or open, with these data-directory
/// rules (a rules file's rows merged with the built-in ones). A breadth-first walk:
/// each file's edges ([`file_edges`], [`elf_edges`]) are resolved and followed
/// ([`Walk::follow`]); data directories wait until everything else is reached.
pub fn reach_with(
    inv: &Inventory<'_>,
    entry_points: impl IntoIterator<Item = FileId>,
    data_dirs: &[DataDirRule],
) -> Reached {
    let mut w = Walk::default();
    for f in entry_points {
        w.r.first.entry(f).or_insert((None, Why::EntryPoint));
        w.r.note(f, None, &Why::EntryPoint);
        w.push(f, Vec::new(), None);
    }
    while let Some(item) = w.queue.pop_front().or_else(|| w.later.pop_front()) {
        let mut edges: Vec<Edge> = Vec::new();
        let f = item.file;
        let e = inv.entry(f);
        match e.entry {
            EntryType::Symlink => {
                // Resolving the symlink's own path follows it.
                // The target is opened by this name: its directory is this one.
                let own = inv.abs(f);
                let dir = Inventory::parent_of(&own);
                edges.push((own, Why::Symlink, item.inherited.clone(), Some(dir)));
            }
            EntryType::Directory if !item.expand && w.data_targets.contains(&f) => {
                w.later.push_back(Item {
                    expand: true,
                    ..item
                });
                continue;
            }
            EntryType::Directory => w.expand(inv, f, item.expand),
            EntryType::Regular | EntryType::Executable => {
                if let Some(elf) = &e.elf {
                    edges.extend(elf_edges(inv, elf, &item.inherited));
                }
                edges.extend(file_edges(inv, f, &item, data_dirs, &mut w.indexed));
            }
        }
        w.follow(inv, f, edges);
    }
    w.r
}

/// The state of one walk of [`reach_with`].
#[derive(Default)]
struct Walk {
    r: Reached,
    queue: VecDeque<Item>,
    /// Data directories whose contents are reached after everything else queued.
    later: VecDeque<Item>,
    /// What data-directory rules and data strings reached (directories wait in `later`).
    data_targets: HashSet<FileId>,
    /// Directories (absolute, real) in which a reached index named code objects.
    indexed: HashSet<Vec<u8>>,
    /// Files whose own edges are followed (a symlink only passed through is reached but
    /// not followed, unless it is reached again in its own right).
    queued: HashSet<FileId>,
}

impl Walk {
    /// Queue `file` to have its edges followed, once.
    fn push(&mut self, file: FileId, inherited: Vec<String>, loaded_from: Option<Vec<u8>>) {
        if self.queued.insert(file) {
            self.queue.push_back(Item {
                file,
                inherited,
                loaded_from,
                expand: false,
            });
        }
    }

    /// Reach what is inside directory `f`; `expand`: it is a data directory reached
    /// last, whose library code objects an index already named are left to the index.
    fn expand(&mut self, inv: &Inventory<'_>, f: FileId, expand: bool) {
        let lazy = expand && self.indexed.contains(&inv.abs(f));
        // A directory opened only on some processors (rocBLAS' `<dir>/<processor>/`)
        // holds files opened only on those.
        let only_on = self.r.processors(f).cloned();
        for c in inv.below(f) {
            if lazy
                && !self.r.first.contains_key(&c)
                && is_library_code_object(inv.entry(c).path.name())
            {
                continue;
            }
            let first = !self.r.first.contains_key(&c);
            self.r.first.entry(c).or_insert((Some(f), Why::Inside));
            if let (true, Some(set)) = (first, &only_on) {
                self.r.narrow(c, set);
            }
            self.push(c, Vec::new(), None);
        }
    }

    /// Resolve the edges of `f` and reach their targets.
    fn follow(&mut self, inv: &Inventory<'_>, f: FileId, edges: Vec<Edge>) {
        // What `f` opens is opened on the processors `f` is opened on.
        let from = self.r.processors(f).cloned();
        for (abs, why, inherited, loaded_from) in edges {
            let Some((target, links)) = inv.resolve(&abs) else {
                continue;
            };
            let cond = match &why {
                Why::Processor { processor, .. } => Some(BTreeSet::from([processor.clone()])),
                _ => from.clone(),
            };
            for &l in &links {
                if l != f {
                    self.r.note(l, cond.as_ref(), &why);
                }
            }
            if self.r.note(target, cond.as_ref(), &why) {
                // Opened on every processor after all: what it opens is too.
                self.queued.remove(&target);
            }
            // The symlinks on the way are reached (they are opened) but only passed
            // through: a symlinked `lib` directory does not make all of its target
            // reached. The first one is reached for the edge's reason, the next ones and
            // the target as symlink targets. The target is processed.
            if matches!(why, Why::DataDir(_) | Why::DataString(_)) {
                self.data_targets.insert(target);
            }
            let mut parent = f;
            let mut why = Some(why);
            for l in links {
                if l != f {
                    let w = why.take().unwrap_or(Why::Symlink);
                    self.r.first.entry(l).or_insert((Some(parent), w));
                }
                parent = l;
            }
            self.r
                .first
                .entry(target)
                .or_insert((Some(parent), why.unwrap_or(Why::Symlink)));
            self.push(target, inherited, loaded_from);
        }
    }
}

/// What an ELF object loads: its interpreter, and each `DT_NEEDED` and dlopen name
/// found in its search directories (`DT_RUNPATH`, else its `DT_RPATH` and the loader
/// chain's `inherited` ones).
fn elf_edges(inv: &Inventory<'_>, elf: &ElfLink, inherited: &[String]) -> Vec<Edge> {
    let mut edges = Vec::new();
    if let Some(interp) = &elf.interpreter {
        edges.push((
            interp.clone().into_bytes(),
            Why::Interpreter,
            Vec::new(),
            None,
        ));
    }
    let has_runpath = elf.search.iter().any(|s| s.tag == SearchTag::Runpath);
    let own: Vec<String> = elf.search.iter().filter_map(|s| s.dir.clone()).collect();
    let dirs: Vec<String> = if has_runpath {
        own.clone()
    } else {
        own.iter().chain(inherited).cloned().collect()
    };
    // What this object passes on to the objects it loads.
    let pass_on: Vec<String> = if has_runpath {
        inherited.to_vec()
    } else {
        own.iter().chain(inherited).cloned().collect()
    };
    let lookups = elf
        .needed
        .iter()
        .map(|n| (n, false))
        .chain(elf.dlopen.iter().map(|n| (n, true)));
    for (name, dlopen) in lookups {
        if name.contains('/') {
            if name.starts_with('/') {
                let why = Why::Needed {
                    name: name.clone(),
                    dir: String::new(),
                };
                edges.push((name.clone().into_bytes(), why, pass_on.clone(), None));
            }
            continue;
        }
        for dir in &dirs {
            let cand = format!("{}/{name}", dir.trim_end_matches('/'));
            if inv.resolve(cand.as_bytes()).is_some() {
                let why = if dlopen {
                    Why::Dlopen {
                        name: name.clone(),
                        dir: dir.clone(),
                    }
                } else {
                    Why::Needed {
                        name: name.clone(),
                        dir: dir.clone(),
                    }
                };
                edges.push((
                    cand.into_bytes(),
                    why,
                    pass_on.clone(),
                    Some(dir.clone().into_bytes()),
                ));
                break;
            }
        }
    }
    edges
}

/// What a regular file opens or runs besides its ELF loads: the data directories of
/// the rules and of its data strings, the code objects its index names (noting their
/// directories in `indexed`), its shebang interpreter and the paths it names.
fn file_edges(
    inv: &Inventory<'_>,
    f: FileId,
    item: &Item,
    data_dirs: &[DataDirRule],
    indexed: &mut HashSet<Vec<u8>>,
) -> Vec<Edge> {
    let mut edges = Vec::new();
    let e = inv.entry(f);
    // Data directories a library opens beside itself: the rules' table
    // first (its rows are the documented facts), then what its strings say.
    let own_dir = {
        let mut d = inv.abs(f);
        let cut = d.iter().rposition(|&b| b == b'/').unwrap_or(0);
        d.truncate(cut);
        d
    };
    let name = e.path.name();
    for rule in data_dirs {
        if !rule.applies_to(name) {
            continue;
        }
        let base = match rule.base {
            DataBase::LoadedAs => item.loaded_from.clone().unwrap_or_else(|| own_dir.clone()),
            DataBase::RealPath => own_dir.clone(),
        };
        let base_n = normalise(&base);
        let top = store_path_top(inv.store_dir, &base_n);
        for rel in &rule.dirs {
            let p = normalise(&join(&base, rel.as_bytes()));
            // A data directory never leaves the store path it is resolved in.
            if top.is_some_and(|t| within(&p, t)) {
                edges.push((p, Why::DataDir(rule.id), Vec::new(), None));
            }
        }
    }
    // The directory it was loaded from first, then that of its real path.
    let mut bases = vec![own_dir.clone()];
    if let Some(l) = &item.loaded_from {
        bases.insert(0, normalise(l));
    }
    bases.dedup();
    if let Some(elf) = e.elf.as_ref().filter(|l| !l.data_paths.is_empty()) {
        edges.extend(data_string_edges(inv, &bases, &elf.data_paths));
    }
    if let Some(IndexFile::Loads(patterns)) = inv.index(f) {
        for base in &bases {
            let found = index_edges(inv, base, patterns);
            if found.iter().any(|(p, _, _, _)| is_library_code_object(p)) {
                if let Some((d, _)) = inv.resolve(base) {
                    indexed.insert(inv.abs(d));
                }
            }
            edges.extend(found);
        }
    }
    if let Some(interp) = &e.shebang {
        edges.push((interp.clone(), Why::Shebang, Vec::new(), None));
    }
    for n in &e.names {
        edges.push((n.clone(), Why::Named, Vec::new(), None));
    }
    edges
}

/// The top of the store path `abs` is in (`/nix/store/<hash>-<name>`), if it is in one.
fn store_path_top<'p>(sd: &StoreDir, abs: &'p [u8]) -> Option<&'p [u8]> {
    let rest = abs
        .strip_prefix(sd.as_str().as_bytes())?
        .strip_prefix(b"/")?;
    let name = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
    (name > 0).then(|| &abs[..abs.len() - rest.len() + name])
}

/// Whether `p` is `top` or below it.
fn within(p: &[u8], top: &[u8]) -> bool {
    p.strip_prefix(top)
        .is_some_and(|r| r.is_empty() || r.starts_with(b"/"))
}

/// The edges a library's data strings give, resolved against each of `bases` (the
/// directory it was loaded from, the directory of its real path): a relative directory
/// or file (`rocblas/library`, `/rocblas/2.47.0/library`, `../share/x/db`,
/// `rocfft_kernel_cache.db`) as named, and a file name without a directory
/// (`/Library.dat`) in those directories too; a pattern
/// (`Library_lazy_%s.dat`, `%s.db`, `library/%s.co`) every file below the base
/// or below a directory the strings name whose path matches it; and in those
/// directories, the files opened only on one processor ([`processor_edges`]). A
/// directory at or above the library's own is never a data directory (`../lib` would
/// reach everything beside it).
fn data_string_edges(inv: &Inventory<'_>, bases: &[Vec<u8>], strings: &[String]) -> Vec<Edge> {
    let mut out: Vec<Edge> = Vec::new();
    // The data directories found: the entry, the logical path and the string it was
    // found by.
    let mut dirs: Vec<(FileId, Vec<u8>, String)> = Vec::new();
    let above = |target: FileId, base: &[u8]| {
        let t = inv.abs(target);
        base == t.as_slice() || (base.starts_with(&t) && base.get(t.len()) == Some(&b'/'))
    };
    let rel = |s: &str| s.strip_prefix('/').unwrap_or(s).to_string();
    let (fragments, strings): (Vec<&String>, Vec<&String>) =
        strings.iter().partition(|s| is_name_fragment(&rel(s)));
    let (patterns, plain): (Vec<&String>, Vec<&String>) =
        strings.into_iter().partition(|s| s.contains('%'));
    // Reach `name` joined to `base`, for the reason `label`.
    let reach_plain = |out: &mut Vec<Edge>,
                       dirs: &mut Vec<(FileId, Vec<u8>, String)>,
                       base: &[u8],
                       name: &str,
                       label: String| {
        let p = normalise(&join(base, rel(name).as_bytes()));
        let Some((target, _)) = inv.resolve(&p) else {
            return;
        };
        if bases.iter().any(|b| above(target, b)) {
            return;
        }
        if inv.entry(target).entry == EntryType::Directory {
            if dirs.iter().any(|(d, _, _)| *d == target) {
                return;
            }
            dirs.push((target, p.clone(), label.clone()));
        }
        out.push((p, Why::DataString(label), Vec::new(), None));
    };
    for s in &plain {
        for base in bases {
            reach_plain(&mut out, &mut dirs, base, s, (*s).clone());
        }
    }
    // A file name alone (`/Library.dat`) is joined to the data directories too
    // (the reason names both strings: `/rocblas/2.47.0/library + /Library.dat`).
    let found: Vec<(Vec<u8>, String)> = dirs
        .iter()
        .map(|(_, p, s)| (p.clone(), s.clone()))
        .collect();
    for s in plain.iter().filter(|s| !rel(s).contains('/')) {
        for (d, ds) in &found {
            reach_plain(&mut out, &mut dirs, d, s, format!("{ds} + {s}"));
        }
    }
    // Patterns match below the bases' data directories, and below the bases themselves
    // when the pattern names a directory (`library/%s.co`) or a data file.
    for pat in patterns {
        let mut matched: Vec<Vec<u8>> = Vec::new();
        let mut look = |dir_abs: Vec<u8>, dir: Option<FileId>| {
            let Some(d) = dir.or_else(|| inv.resolve(&dir_abs).map(|(f, _)| f)) else {
                return;
            };
            if inv.entry(d).entry != EntryType::Directory {
                return;
            }
            let real = inv.abs(d);
            for c in inv.below(d) {
                let rel = &inv.abs(c)[real.len()..];
                let rel = rel.strip_prefix(b"/").unwrap_or(rel);
                if matches_pattern(pat.as_bytes(), rel) {
                    matched.push(join(&dir_abs, rel));
                }
            }
        };
        for (d, _, _) in &dirs {
            look(inv.abs(*d), Some(*d));
        }
        if data_extensions().iter().any(|e| pat.ends_with(e)) {
            for base in bases {
                look(base.clone(), None);
            }
        }
        matched.sort();
        matched.dedup();
        out.extend(matched.into_iter().map(|p| {
            let dir = Inventory::parent_of(&p);
            (p, Why::DataString(pat.clone()), Vec::new(), Some(dir))
        }));
    }
    let masters: Vec<String> = plain.iter().map(|s| rel(s)).collect();
    for (d, logical, by) in &dirs {
        out.extend(processor_edges(
            inv,
            *d,
            (logical, by),
            &masters,
            &fragments,
        ));
    }
    // Files first: what a pattern or a processor names is more specific than its
    // directory.
    out.sort_by_key(|(_, why, _, _)| match why {
        Why::Processor { .. } => 0,
        Why::DataString(s) if s.contains('%') => 1,
        _ => 2,
    });
    out
}

/// The files of data directory `dir` (found by the logical path and string `found`)
/// that a library opens only when running on one processor, as its loader builds their
/// names:
/// - beside a non-lazy master index (one the library names in full, `Library.dat`,
///   or with the processor, `Library_gfx1030.dat`; see [`is_eager_master`]),
///   every code object (by the GPU library table's code-object extensions, `*.co`)
///   whose name carries a processor is loaded on that processor: rocBLAS globs
///   `<dir>/*<processor>*co` when the master is not lazy;
/// - any file whose name is one of the library's name pieces, a processor, then `.`,
///   `-` or `_` (`/Library_lazy_` + `gfx908` + `.dat`);
/// - a sub-directory named for a processor, and everything below it (rocBLAS descends
///   into `<dir>/<processor>` when it exists).
///
/// The processor is the base architecture (`gfx90a` for `…-gfx90a-xnack+.hsaco`), the
/// name the loader asks the runtime for.
fn processor_edges(
    inv: &Inventory<'_>,
    dir: FileId,
    found: (&[u8], &str),
    masters: &[String],
    fragments: &[&String],
) -> Vec<Edge> {
    let (logical, by) = found;
    let real = inv.abs(dir);
    let children: Vec<(FileId, Vec<u8>)> = inv
        .below(dir)
        .filter_map(|c| {
            let rel = inv.abs(c)[real.len()..].strip_prefix(b"/")?.to_vec();
            (!rel.contains(&b'/')).then_some((c, rel))
        })
        .collect();
    // The processors whose code objects a non-lazy master here loads (`None`: every one).
    let mut eager: Option<Option<BTreeSet<String>>> = None;
    let mut master = String::new();
    for (c, name) in &children {
        let name_s = String::from_utf8_lossy(name);
        let named_in_full = masters.iter().any(|m| m.as_bytes() == name.as_slice());
        let named_with = piece_and_processor(&name_s, fragments)
            .filter(|(_, _, rest)| rest.starts_with('.'))
            .map(|(_, arch, _)| arch);
        if !(named_in_full || named_with.is_some()) || !is_eager_master(inv, *c) {
            continue;
        }
        if master.is_empty() {
            master = name_s.into_owned();
        }
        match (named_with, &mut eager) {
            (None, e) => *e = Some(None),
            (Some(a), Some(Some(set))) => {
                set.insert(a);
            }
            (Some(a), e @ None) => *e = Some(Some(BTreeSet::from([a]))),
            (Some(_), Some(None)) => {}
        }
    }
    let mut out = Vec::new();
    for (c, name) in &children {
        let Some(arch) = arch_of_name(name) else {
            continue;
        };
        let name_s = String::from_utf8_lossy(name).into_owned();
        // `<dir>/<processor>/`: rocBLAS descends into it on that processor.
        if inv.entry(*c).entry == EntryType::Directory {
            if name_s == arch {
                let p = join(logical, name);
                let pattern = format!("{by} + /{arch}, the directory of one processor");
                let why = Why::Processor {
                    processor: arch,
                    pattern,
                };
                out.push((p.clone(), why, Vec::new(), Some(p)));
            }
            continue;
        }
        let code_object = code_object_extensions().iter().any(|e| name_s.ends_with(e));
        let by_master = code_object
            && match &eager {
                Some(None) => true,
                Some(Some(set)) => set.contains(&arch),
                None => false,
            };
        let pattern = if by_master {
            Some(format!(
                "{by} + /*{arch}*co, the code objects non-lazy {master} loads"
            ))
        } else {
            piece_and_processor(&name_s, fragments)
                .filter(|(_, a, _)| *a == arch)
                .map(|(f, a, rest)| format!("{by} + {f} + {a} + {rest}"))
        };
        if let Some(pattern) = pattern {
            out.push((
                join(logical, name),
                Why::Processor {
                    processor: arch,
                    pattern,
                },
                Vec::new(),
                Some(logical.to_vec()),
            ));
        }
    }
    out
}

/// The name piece `name` starts with (as the library's string, `/Library_`), the
/// processor right after it, and the rest, which starts with `.`, `-` or `_`:
/// `Library_lazy_gfx908.dat` is `/Library_lazy_` + `gfx908` + `.dat`.
fn piece_and_processor<'n>(
    name: &'n str,
    fragments: &[&String],
) -> Option<(String, String, &'n str)> {
    fragments.iter().find_map(|f| {
        let rest = name.strip_prefix(f.strip_prefix('/').unwrap_or(f))?;
        let arch = arch_of_name(rest.as_bytes())?;
        let after = rest.strip_prefix(arch.as_str())?;
        after
            .starts_with(['.', '-', '_'])
            .then(|| (f.to_string(), arch, after))
    })
}

/// `dir/name`.
fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(dir.len() + 1 + name.len());
    p.extend_from_slice(dir);
    p.push(b'/');
    p.extend_from_slice(name);
    p
}

/// Whether an index file is a non-lazy master: one that loads its processor's code
/// objects up front rather than naming placeholders to load on first use. Decoded
/// indexes say it by content (no placeholder index among what they name); one too
/// large to decode (rocBLAS' master index is 117 MB) by name, as rocBLAS decides it:
/// lazy only when the name holds the table's lazy marker (`Library_lazy_gfx90a.dat`).
fn is_eager_master(inv: &Inventory<'_>, f: FileId) -> bool {
    let e = inv.entry(f);
    if !matches!(e.entry, EntryType::Regular | EntryType::Executable) {
        return false;
    }
    match inv.index(f) {
        Some(IndexFile::Loads(loads)) => !loads.iter().any(|l| is_index_name(l.as_bytes())),
        Some(IndexFile::Lists(_)) => false,
        None => {
            let name = e.path.name();
            is_index_name(name) && e.size > crate::elf::MAX_INDEX && !is_lazy_index_name(name)
        }
    }
}

/// The files of directory `base` (absolute, logical) that an index's patterns name:
/// each reached by its name in `base`, so that what it loads in turn is looked for
/// there too.
fn index_edges(inv: &Inventory<'_>, base: &[u8], patterns: &[String]) -> Vec<Edge> {
    let Some((d, _)) = inv.resolve(base) else {
        return Vec::new();
    };
    if inv.entry(d).entry != EntryType::Directory {
        return Vec::new();
    }
    let real = inv.abs(d);
    let mut out = Vec::new();
    for c in inv.below(d) {
        let rel = &inv.abs(c)[real.len()..];
        let rel = rel.strip_prefix(b"/").unwrap_or(rel);
        if rel.contains(&b'/') {
            continue;
        }
        if let Some(p) = patterns.iter().find(|p| matches_pattern(p.as_bytes(), rel)) {
            out.push((
                join(base, rel),
                Why::Indexed(p.clone()),
                Vec::new(),
                Some(base.to_vec()),
            ));
        }
    }
    out
}

/// Whether `path` (relative, `/`-separated) matches a printf-style pattern whose `%s`,
/// `%d`, `%u` and `%x` stand for one or more bytes other than `/`. A pattern without
/// `/` matches the last component anywhere below.
fn matches_pattern(pat: &[u8], path: &[u8]) -> bool {
    let path = if pat.contains(&b'/') {
        path
    } else {
        path.rsplit(|&b| b == b'/').next().unwrap_or(path)
    };
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p {
            [] => s.is_empty(),
            [b'%', _, rest @ ..] => (1..=s.len())
                .take_while(|&n| s[n - 1] != b'/')
                .any(|n| go(rest, &s[n..])),
            [c, rest @ ..] => s.first() == Some(c) && go(rest, &s[1..]),
        }
    }
    go(pat, path)
}

#[cfg(test)]
mod tests;
