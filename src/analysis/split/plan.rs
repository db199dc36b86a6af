//! The split plan of one package, from its evidence alone (no consumer, no I/O): which
//! output each entry goes to, which evidence the actions remove, each output's exact
//! NAR size and references.
//!
//! - Each entry goes to the output of its file class (`lib`, `gpu-generic` and `out` stay
//!   in `out`; `bin`, `dev`, `static`, `doc` (with `info`), `man`, `debug` get their own;
//!   with GPU targets, other architectures' files get one output per architecture).
//! - Evidence that is removable whatever the consumer (an unused RUNPATH entry, a
//!   `__FILE__` string, debug info, a manifest, a dangling symlink, a removable-class
//!   file) is acted on: `patchelf --set-rpath` without the entry, `remove-references-to`
//!   (only where every hit of that reference in that file is removable), deletion.
//! - A hit into the package itself lands on the output holding the sub-path it names.
//!
//! Cost: O(entries · depth + hits) with hash lookups.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::classify::{
    split_policy, EntryType, EvidenceKind, FileClass, SplitEffect, SplitFacts, Verdict,
};
use crate::evidence::{EntryFact, HitFact, JudgedHit, PathEvidence};
use crate::report::{AssumptionReason, Because, BecauseDetail, BecauseKind, SplitWarning};
use crate::store::StorePath;

/// The runtime output: every split keeps it.
pub const OUT: &str = "out";

/// Where one entry goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Into this output (index into [`Plan::outputs`]).
    Output(usize),
    /// Deleted by an action.
    Deleted,
    /// A directory that exists wherever something below it goes.
    Implicit,
}

/// One RUNPATH rewrite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpathEdit {
    pub file: usize,
    pub drop: Vec<String>,
    pub kept: Vec<String>,
    pub because: Vec<Because>,
}

/// The evidence-driven part of the plan.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Output names, `out` first, then nixpkgs order, then GPU architectures.
    pub outputs: Vec<String>,
    /// Per entry (index into the evidence's entries).
    pub place: Vec<Place>,
    /// Entries deleted, with the hits that justify it.
    pub deletes: BTreeMap<usize, Vec<Because>>,
    /// Per GPU architecture left out of a rebuild with fewer `gpuTargets` (without
    /// per-target outputs): the entries it does not build (files of that
    /// architecture's class, and directories emptied by them).
    pub gpu_drops: BTreeMap<String, BTreeSet<usize>>,
    /// `remove-references-to`: target → (files, hits).
    pub remove_refs: BTreeMap<StorePath, (BTreeSet<usize>, Vec<Because>)>,
    /// RUNPATH rewrites, by file.
    pub rpaths: Vec<RpathEdit>,
    /// Per output: referenced store path → (landing output inside the package, hits).
    pub references: Vec<BTreeMap<(StorePath, Option<usize>), u64>>,
    /// Per output: exact NAR size.
    pub sizes: Vec<u64>,
    /// Per output: files and symlinks held.
    pub files: Vec<u64>,
    /// Per entry: its content (or symlink target) length once the actions are applied.
    pub entry_sizes: Vec<u64>,
    /// Edges between the package's outputs (referrer, referenced) → the files making
    /// them.
    pub edges: BTreeMap<(usize, usize), BTreeSet<usize>>,
    /// Edges no file of the package makes (stdenv's propagated-build-inputs of dev).
    pub synthetic_edges: Vec<(usize, usize)>,
    /// Per file (not ELF, not a symlink): the sub-paths of the package it names as
    /// `$out/SUB` that now live in another output (→ that output). The build must
    /// write that output's path instead: a rewrite (the sizes already count it).
    pub self_paths: BTreeMap<usize, BTreeMap<Vec<u8>, usize>>,
    /// Per entry: the outputs holding it (a directory: every output with something
    /// below it).
    pub holds: Vec<BTreeSet<usize>>,
    /// Hits into the package itself that landed by default.
    pub assumptions: Vec<SelfLanding>,
    /// Problems worth a warning.
    pub warnings: Vec<SplitWarning>,
}

/// A hit of the package into itself that landed on an output by default.
#[derive(Debug, Clone)]
pub struct SelfLanding {
    /// The entry holding the hit.
    pub file: usize,
    pub offset: u64,
    pub kind: EvidenceKind,
    /// The sub-path it names (empty: none).
    pub sub_path: String,
    /// Where it landed.
    pub output: usize,
    pub reason: AssumptionReason,
}

impl Plan {
    /// The output a reference to `sub` (a path inside the package) lands on: the
    /// output holding it; for a directory, `out` if it holds something below it, else
    /// the only (or first) output that does. The reason, when that was a default.
    pub fn land(&self, tree: &Tree<'_>, sub: &[u8]) -> (usize, Option<AssumptionReason>) {
        if sub.is_empty() {
            return (0, Some(AssumptionReason::NoSubPath));
        }
        let Some(&i) = tree.by_path.get(sub) else {
            return (0, Some(AssumptionReason::SubPathMissing));
        };
        match &self.place[i] {
            Place::Output(o) => (*o, None),
            Place::Deleted => (0, Some(AssumptionReason::SubPathMissing)),
            Place::Implicit => {
                let h = &self.holds[i];
                match h.iter().next() {
                    _ if h.contains(&0) => (0, None),
                    Some(&o) if h.len() == 1 => (o, None),
                    Some(&o) => (o, Some(AssumptionReason::SeveralOutputs)),
                    None => (0, Some(AssumptionReason::SubPathMissing)),
                }
            }
        }
    }

    /// Entry `f` (a file) now holds `len` bytes: every output holding it changes size.
    pub fn resize(&mut self, f: usize, len: u64) {
        let old = nar_str_len(self.entry_sizes[f]);
        for &o in &self.holds[f] {
            self.sizes[o] = self.sizes[o] - old + nar_str_len(len);
        }
        self.entry_sizes[f] = len;
    }

    /// The output a hit's file is in (a directory: where its name lands); `None` for
    /// a deleted file.
    pub fn output_of_file(&self, tree: &Tree<'_>, ev: &PathEvidence, f: usize) -> Option<usize> {
        match &self.place[f] {
            Place::Output(o) => Some(*o),
            Place::Deleted => None,
            Place::Implicit => Some(self.land(tree, ev.entries[f].path.as_bytes()).0),
        }
    }
}

fn class_output(class: &FileClass, targets: &[String]) -> String {
    match class {
        FileClass::Out | FileClass::Lib | FileClass::GpuGeneric | FileClass::Removable => OUT,
        FileClass::Bin => "bin",
        FileClass::Dev => "dev",
        FileClass::Static => "static",
        FileClass::Doc | FileClass::Info => "doc",
        FileClass::Man => "man",
        FileClass::Debug => "debug",
        FileClass::Gpu(t) => {
            let a = &t.base;
            // An output name must be a shell variable name (`$gfx90a`); a class from a
            // user's rules that is not stays in out.
            let valid = a.starts_with(|c: char| c.is_ascii_lowercase())
                && a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid || targets.is_empty() || targets.iter().any(|t| t == a) {
                OUT
            } else {
                return a.clone();
            }
        }
    }
    .to_string()
}

fn output_rank(name: &str) -> (usize, String) {
    let fixed = [OUT, "bin", "lib", "dev", "static", "doc", "man", "debug"];
    match fixed.iter().position(|n| *n == name) {
        Some(i) => (i, String::new()),
        None => (fixed.len(), name.to_string()),
    }
}

/// The evidence item of a hit.
pub fn because_of(h: &JudgedHit) -> Because {
    Because {
        file: String::from_utf8_lossy(h.fact.file.as_bytes()).into_owned(),
        offset: Some(h.fact.location.offset()),
        kind: BecauseKind::Hit(h.fact.kind),
        rule: h.rule.to_string(),
        detail: BecauseDetail::Hit(h.fact.detail.clone()),
        count: 1,
    }
}

/// The sub-path inside `target` that a hit names: what follows `<hash>-<name>/` in the
/// symlink target or the hit's string; empty for a bare hash or the top directory.
pub fn sub_path(h: &JudgedHit, target: &StorePath) -> Vec<u8> {
    fact_sub_path(&h.fact, target)
}

/// [`sub_path`] of a hit as the scan found it (before verdicts).
pub fn fact_sub_path(fact: &HitFact, target: &StorePath) -> Vec<u8> {
    if fact.kind == EvidenceKind::FileName {
        return Vec::new();
    }
    let base = target.to_string();
    let hay: &[u8] = fact.detail.around();
    let Some(at) = find(hay, base.as_bytes()) else {
        return Vec::new();
    };
    let rest = &hay[at + base.len()..];
    let Some(rest) = rest.strip_prefix(b"/") else {
        return Vec::new();
    };
    let is_path = |b: u8| fact.detail.symlink_target().is_some() || is_path_byte(b);
    let end = rest.iter().position(|&b| !is_path(b)).unwrap_or(rest.len());
    let mut s = rest[..end].to_vec();
    while s.last() == Some(&b'/') {
        s.pop();
    }
    s
}

/// [`sub_path`] of a hit into the package `tree` is the tree of: where the bytes after
/// `<hash>-<name>/` go on past a byte that may end a path (`'`, `$`, `` ` ``, `{`, …) up
/// to a space, control character or `"`, the longest of those readings that is an
/// entry of the package (`include/foo'x`, `lib/libfoo$out.a`); else [`sub_path`].
pub fn sub_path_in(h: &JudgedHit, target: &StorePath, tree: &Tree<'_>) -> Vec<u8> {
    let short = sub_path(h, target);
    let fact = &h.fact;
    if fact.kind == EvidenceKind::FileName || fact.detail.symlink_target().is_some() {
        return short;
    }
    let base = target.to_string();
    let hay: &[u8] = fact.detail.around();
    let Some(rest) =
        find(hay, base.as_bytes()).and_then(|at| hay[at + base.len()..].strip_prefix(b"/"))
    else {
        return short;
    };
    let end = rest
        .iter()
        .position(|&b| b.is_ascii_whitespace() || b.is_ascii_control() || b == b'"')
        .unwrap_or(rest.len());
    let rest = &rest[..end];
    // Longest first; a few lookups per hit, however many such bytes the line holds.
    let ends = std::iter::once(rest.len())
        .chain((0..rest.len()).rev().filter(|&i| !is_path_byte(rest[i])))
        .take(MAX_READINGS);
    ends.map(|e| trim_slashes(&rest[..e]))
        .take_while(|s| s.len() > short.len())
        .find(|s| tree.by_path.contains_key(s))
        .map(<[u8]>::to_vec)
        .unwrap_or(short)
}

/// How many readings of a hit's path [`sub_path_in`] looks up.
const MAX_READINGS: usize = 64;

fn trim_slashes(mut s: &[u8]) -> &[u8] {
    while let Some(t) = s.strip_suffix(b"/") {
        s = t;
    }
    s
}

/// Bytes [`sub_path`] reads as part of a path in text (a symlink target is read whole).
fn is_path_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"+._?=/-,@~".contains(&b)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// What one entry says for [`Tree::uniform_below`].
pub enum Leaf<T> {
    /// A directory: what everything below it says.
    Directory,
    /// Nothing (a deleted file).
    Nothing,
    /// A value; `None` agrees with no other leaf's.
    Is(Option<T>),
}

/// The entries of a package indexed by path, with each entry's children.
pub struct Tree<'a> {
    pub by_path: HashMap<&'a [u8], usize>,
    pub children: Vec<Vec<usize>>,
}

impl Tree<'_> {
    /// Per entry, what the leaves below it say together (bottom-up: in NAR order
    /// children follow their parent): `Some(Some(x))` when every leaf that says
    /// something says `x`, `Some(None)` when they differ (or one says `Is(None)`),
    /// `None` when none says anything.
    pub fn uniform_below<T: Clone + PartialEq>(
        &self,
        n: usize,
        leaf: impl Fn(usize) -> Leaf<T>,
    ) -> Vec<Option<Option<T>>> {
        let mut below: Vec<Option<Option<T>>> = vec![None; n];
        for i in (0..n).rev() {
            below[i] = match leaf(i) {
                Leaf::Nothing => None,
                Leaf::Is(x) => Some(x),
                Leaf::Directory => {
                    let mut acc: Option<Option<T>> = None;
                    for &c in &self.children[i] {
                        match (&acc, &below[c]) {
                            (_, None) => {}
                            (None, x) => acc = x.clone(),
                            (Some(a), Some(b)) if a == b => {}
                            _ => acc = Some(None),
                        }
                    }
                    acc
                }
            };
        }
        below
    }
}

impl<'a> Tree<'a> {
    pub fn new(ev: &'a PathEvidence) -> Tree<'a> {
        let by_path: HashMap<&[u8], usize> = ev
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.path.as_bytes(), i))
            .collect();
        let mut children = vec![Vec::new(); ev.entries.len()];
        for (i, e) in ev.entries.iter().enumerate() {
            if e.path.is_root() {
                continue;
            }
            if let Some(&p) = by_path.get(e.path.parent()) {
                children[p].push(i);
            }
        }
        Tree { by_path, children }
    }
}

/// Extensions of sources a program itself reads at run time: scripts an interpreter
/// runs, kernels an OpenCL driver compiles.
const RUN_TIME_SOURCES: &[&str] = &["py", "cl"];

/// Whether a source-path hit names what a program may use at run time: a directory of
/// its target (`include`, `lib/gcc/include`: a JIT's `-I`) or a [`RUN_TIME_SOURCES`]
/// file, rather than a compiled source file (`include/x.hpp`, `src/a.c`).
fn used_at_run_time(h: &JudgedHit, target: &StorePath) -> bool {
    let sub = sub_path(h, target);
    let last = sub.rsplit(|&b| b == b'/').next().unwrap_or(&sub);
    let ext = match last.iter().rposition(|&b| b == b'.') {
        Some(dot) if dot > 0 => &last[dot + 1..],
        _ => return true,
    };
    let compiled = crate::classify::SOURCE_EXTENSIONS
        .iter()
        .any(|e| e.as_bytes() == ext);
    !compiled || RUN_TIME_SOURCES.iter().any(|e| e.as_bytes() == ext)
}

/// The search-path directory a hit of file `e` sits in, when the loader searches it
/// (the typed ELF facts: its active entries, not a DT_RPATH that DT_RUNPATH shadows).
fn searched_dir<'a>(e: &EntryFact, h: &'a JudgedHit) -> Option<&'a String> {
    let dir = h.fact.detail.runpath_dir()?;
    let elf = e.elf.as_ref()?;
    elf.search
        .iter()
        .any(|s| s.dir.as_ref() == Some(dir))
        .then_some(dir)
}

/// Plan the split of `ev` (the package's evidence without a consumer).
pub fn plan(ev: &PathEvidence, targets: &[String]) -> Plan {
    plan_with(ev, targets, true, &BTreeMap::new())
}

/// [`plan`], with some files sent to another output than their class's (`forced`:
/// entry → output name), as a split that breaks a cycle between outputs does.
///
/// With `targets` and not `per_target_outputs`, the other architectures' files are
/// what a rebuild with those `gpuTargets` does not build ([`Plan::gpu_drops`]);
/// otherwise each gets an output of its own.
pub fn plan_with(
    ev: &PathEvidence,
    targets: &[String],
    per_target_outputs: bool,
    forced: &BTreeMap<usize, String>,
) -> Plan {
    let tree = Tree::new(ev);
    let mut warnings = Vec::new();
    // 1. Removable evidence, whatever the consumer.
    let mut removals = removable_evidence(ev, &tree, &mut warnings);
    // 2. Each entry's output.
    let gpu_drops = if per_target_outputs {
        BTreeMap::new()
    } else {
        gpu_drops(ev, &tree, &removals.deletes, targets)
    };
    let dropped: BTreeSet<usize> = gpu_drops.values().flatten().copied().collect();
    removals.deletes.retain(|f, _| !dropped.contains(f));
    for (files, _) in removals.remove_refs.values_mut() {
        files.retain(|f| !dropped.contains(f));
    }
    removals
        .remove_refs
        .retain(|_, (files, _)| !files.is_empty());
    removals.rpath_drop.retain(|f, _| !dropped.contains(f));
    let (outputs, place) = places(ev, &tree, &removals.deletes, &dropped, targets, forced);
    // A RUNPATH entry into the package's own store path, in a file that stays in `out`,
    // is no closure edge: dropping it would change no closure, so it is not proposed.
    let own = ev.path.to_string();
    let changes_closure = |f: usize, dir: &str| {
        !(matches!(place[f], Place::Output(0)) && dir.split('/').any(|c| c == own))
    };
    let rpaths = rpath_edits(
        &ev.entries,
        removals.rpath_drop,
        &removals.deletes,
        &changes_closure,
        &mut warnings,
    );
    // 3. Which outputs hold each directory (any leaf below it).
    let holds = holdings(ev, &tree, &place, outputs.len());
    // 4. The plan so far: enough to land sub-paths.
    let mut plan = Plan {
        outputs,
        place,
        deletes: removals.deletes,
        gpu_drops,
        remove_refs: removals.remove_refs,
        rpaths,
        references: Vec::new(),
        sizes: Vec::new(),
        files: Vec::new(),
        entry_sizes: Vec::new(),
        self_paths: BTreeMap::new(),
        edges: BTreeMap::new(),
        synthetic_edges: Vec::new(),
        holds,
        assumptions: Vec::new(),
        warnings,
    };
    // 5. References per output, and how self references grow the files naming them.
    let grow = plan.count_references(ev, &tree);
    // 6. Exact NAR sizes.
    plan.count_sizes(ev, &grow);
    plan
}

/// Step 2a: per architecture not among `targets`, the entries a rebuild for `targets`
/// does not make: files of its GPU class (not deleted anyway), then directories left
/// with nothing else below them.
fn gpu_drops(
    ev: &PathEvidence,
    tree: &Tree<'_>,
    deletes: &BTreeMap<usize, Vec<Because>>,
    targets: &[String],
) -> BTreeMap<String, BTreeSet<usize>> {
    let mut drops: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    if targets.is_empty() {
        return drops;
    }
    let entries = &ev.entries;
    // The architecture of what lies below each entry: Some(Some(a)) all of it dropped
    // for `a`, Some(None) something kept (or several), None nothing (deleted, empty).
    let below = tree.uniform_below(entries.len(), |i| {
        let e = &entries[i];
        if e.entry == EntryType::Directory {
            Leaf::Directory
        } else if deletes.contains_key(&i) {
            Leaf::Nothing
        } else {
            match &e.class {
                FileClass::Gpu(a) if !targets.contains(&a.base) => Leaf::Is(Some(a.base.clone())),
                _ => Leaf::Is(None),
            }
        }
    });
    for (i, b) in below.into_iter().enumerate() {
        if let Some(Some(a)) = b {
            if !entries[i].path.is_root() {
                drops.entry(a).or_default().insert(i);
            }
        }
    }
    drops
}

/// What removable evidence the split acts on.
struct Removals {
    /// Entries deleted, with the hits that justify it.
    deletes: BTreeMap<usize, Vec<Because>>,
    /// `remove-references-to`: target → (files, hits).
    remove_refs: BTreeMap<StorePath, (BTreeSet<usize>, Vec<Because>)>,
    /// Per file: the searched RUNPATH entries to drop, and the hits.
    rpath_drop: BTreeMap<usize, (Vec<String>, Vec<Because>)>,
}

/// Step 1: each hit's action by the split rules (`crate::classify::split_rules`):
/// deletions, `remove-references-to` (only where every hit of that reference in that
/// file allows it) and RUNPATH entries to drop.
fn removable_evidence(
    ev: &PathEvidence,
    tree: &Tree<'_>,
    warnings: &mut Vec<SplitWarning>,
) -> Removals {
    let entries = &ev.entries;
    let mut deletes: BTreeMap<usize, Vec<Because>> = BTreeMap::new();
    let mut remove_refs: BTreeMap<StorePath, (BTreeSet<usize>, Vec<Because>)> = BTreeMap::new();
    let mut rpath_drop: BTreeMap<usize, (Vec<String>, Vec<Because>)> = BTreeMap::new();
    for r in &ev.references {
        // Files where every hit of this reference is removable by remove-references-to.
        let mut per_file: BTreeMap<usize, (bool, Vec<Because>)> = BTreeMap::new();
        for h in &r.hits {
            let Some(&f) = tree.by_path.get(h.fact.file.as_bytes()) else {
                continue;
            };
            let searched = searched_dir(&entries[f], h);
            let facts = SplitFacts {
                removable: h.verdict == Verdict::Removable,
                kind: h.fact.kind,
                class: &entries[f].class,
                searched: searched.is_some(),
                used_at_run_time: h.fact.kind == EvidenceKind::ElfSourcePath
                    && used_at_run_time(h, &r.target),
            };
            match split_policy(&facts).gives {
                SplitEffect::Keep => {
                    per_file.entry(f).or_insert((true, Vec::new())).0 = false;
                }
                SplitEffect::DropRunpathEntry => {
                    let d = rpath_drop.entry(f).or_default();
                    if let Some(dir) = searched.filter(|dir| !d.0.contains(dir)) {
                        d.0.push(dir.clone());
                    }
                    d.1.push(because_of(h));
                }
                SplitEffect::RemoveReferences => {
                    per_file
                        .entry(f)
                        .or_insert((true, Vec::new()))
                        .1
                        .push(because_of(h));
                }
                SplitEffect::KeepRunTimeUse => {
                    per_file.entry(f).or_insert((true, Vec::new())).0 = false;
                    let msg = SplitWarning::KeptForRunTime {
                        file: String::from_utf8_lossy(entries[f].path.as_bytes()).into_owned(),
                        target: r.target.to_string(),
                        sub: String::from_utf8_lossy(&sub_path(h, &r.target)).into_owned(),
                    };
                    if !warnings.contains(&msg) {
                        warnings.push(msg);
                    }
                }
                SplitEffect::Delete => {
                    deletes.entry(f).or_default().push(because_of(h));
                }
            }
        }
        for (f, (all_removable, because)) in per_file {
            if all_removable && !because.is_empty() && entries[f].entry != EntryType::Symlink {
                let e = remove_refs.entry(r.target.clone()).or_default();
                e.0.insert(f);
                e.1.extend(because);
            }
        }
    }
    // A deleted file needs no other edit.
    for (files, _) in remove_refs.values_mut() {
        files.retain(|f| !deletes.contains_key(f));
    }
    remove_refs.retain(|_, (files, _)| !files.is_empty());
    Removals {
        deletes,
        remove_refs,
        rpath_drop,
    }
}

/// The RUNPATH rewrites of the files not deleted, of the entries whose drop
/// `changes_closure`: each keeps its other entries; a file that formats dlopen names, or
/// whose RUNPATH does not expand, keeps it whole (and says so in `warnings`).
fn rpath_edits(
    entries: &[EntryFact],
    rpath_drop: BTreeMap<usize, (Vec<String>, Vec<Because>)>,
    deletes: &BTreeMap<usize, Vec<Because>>,
    changes_closure: &dyn Fn(usize, &str) -> bool,
    warnings: &mut Vec<SplitWarning>,
) -> Vec<RpathEdit> {
    let mut rpaths = Vec::new();
    for (f, (mut drop, because)) in rpath_drop {
        drop.retain(|d| changes_closure(f, d));
        if deletes.contains_key(&f) || drop.is_empty() {
            continue;
        }
        let Some(elf) = &entries[f].elf else { continue };
        let patterns: Vec<&str> = elf
            .dlopen
            .iter()
            .filter(|n| n.contains('%'))
            .map(String::as_str)
            .collect();
        if !patterns.is_empty() {
            warnings.push(SplitWarning::DlopenPatterns {
                file: String::from_utf8_lossy(entries[f].path.as_bytes()).into_owned(),
                patterns: patterns.iter().map(|p| p.to_string()).collect(),
            });
            continue;
        }
        let mut kept = Vec::new();
        let mut ok = true;
        for s in &elf.search {
            match &s.dir {
                Some(d) if drop.contains(d) => {}
                Some(d) => kept.push(d.clone()),
                None => ok = false,
            }
        }
        if !ok {
            warnings.push(SplitWarning::RunpathUnexpanded {
                file: String::from_utf8_lossy(entries[f].path.as_bytes()).into_owned(),
            });
            continue;
        }
        rpaths.push(RpathEdit {
            file: f,
            drop,
            kept,
            because,
        });
    }
    rpaths
}

/// Step 2: the outputs (`out` first, in nixpkgs order) and each entry's place: its
/// class's output (or the one `forced` names), deleted, or implicit (a directory that
/// exists wherever something below it goes).
fn places(
    ev: &PathEvidence,
    tree: &Tree<'_>,
    deletes: &BTreeMap<usize, Vec<Because>>,
    dropped: &BTreeSet<usize>,
    targets: &[String],
    forced: &BTreeMap<usize, String>,
) -> (Vec<String>, Vec<Place>) {
    let entries = &ev.entries;
    let mut names: Vec<String> = vec![OUT.to_string()];
    let mut place = vec![Place::Implicit; entries.len()];
    let mut want: Vec<Option<String>> = vec![None; entries.len()];
    for (i, e) in entries.iter().enumerate() {
        if e.path.is_root() {
            continue;
        }
        if deletes.contains_key(&i) || dropped.contains(&i) {
            place[i] = Place::Deleted;
            continue;
        }
        if e.entry == EntryType::Directory {
            let alive = tree.children[i]
                .iter()
                .any(|c| !deletes.contains_key(c) && !dropped.contains(c));
            if alive {
                continue;
            }
            // Empty, or emptied by deletions: an emptied one stays where it is.
            if !tree.children[i].is_empty() {
                want[i] = Some(OUT.to_string());
                continue;
            }
        }
        want[i] = Some(match forced.get(&i) {
            Some(o) => o.clone(),
            None => class_output(&e.class, targets),
        });
    }
    for w in want.iter().flatten() {
        if !names.contains(w) {
            names.push(w.clone());
        }
    }
    names.sort_by_key(|n| output_rank(n));
    let index: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    for (i, w) in want.iter().enumerate() {
        if let Some(w) = w {
            place[i] = Place::Output(index[w.as_str()]);
        }
    }
    (names, place)
}

/// Step 3: per entry, the outputs holding it (a directory: every output with a leaf
/// below it; the top directory: all of them).
fn holdings(
    ev: &PathEvidence,
    tree: &Tree<'_>,
    place: &[Place],
    n_out: usize,
) -> Vec<BTreeSet<usize>> {
    let entries = &ev.entries;
    let mut holds: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); entries.len()];
    for (i, e) in entries.iter().enumerate() {
        let Place::Output(o) = place[i] else { continue };
        holds[i].insert(o);
        let mut p: &[u8] = e.path.as_bytes();
        while !p.is_empty() {
            p = parent(p);
            match tree.by_path.get(p) {
                Some(&d) => {
                    holds[d].insert(o);
                }
                None => break,
            }
        }
    }
    if let Some(root) = entries.iter().position(|e| e.path.is_root()) {
        holds[root] = (0..n_out).collect();
    }
    holds
}

impl Plan {
    /// Step 5: the references of each output (hits the actions remove left out), the
    /// edges between outputs, the self references that now name another output (the
    /// build writes `$dev/…` where it wrote `$out/…`) and the hits that landed by
    /// default. Returns how many bytes each entry grows by.
    fn count_references(&mut self, ev: &PathEvidence, tree: &Tree<'_>) -> Vec<u64> {
        let entries = &ev.entries;
        let removed_rpath: HashMap<usize, Vec<String>> = self
            .rpaths
            .iter()
            .map(|r| (r.file, r.drop.clone()))
            .collect();
        let mut references: Vec<BTreeMap<(StorePath, Option<usize>), u64>> =
            vec![BTreeMap::new(); self.outputs.len()];
        let mut grow = vec![0u64; entries.len()];
        for r in &ev.references {
            let is_self = r.target == ev.path;
            if r.hits.is_empty() {
                // Registered, no file shows it: kept on the runtime output.
                references[0]
                    .entry((r.target.clone(), is_self.then_some(0)))
                    .or_default();
                continue;
            }
            for h in &r.hits {
                let Some(&f) = tree.by_path.get(h.fact.file.as_bytes()) else {
                    continue;
                };
                if self
                    .remove_refs
                    .get(&r.target)
                    .is_some_and(|(fs, _)| fs.contains(&f))
                {
                    continue;
                }
                if h.fact.kind == EvidenceKind::ElfRunpathUnused
                    && removed_rpath
                        .get(&f)
                        .zip(h.fact.detail.runpath_dir())
                        .is_some_and(|(d, dir)| d.contains(dir))
                {
                    continue;
                }
                let Some(o) = self.output_of_file(tree, ev, f) else {
                    continue;
                };
                let landing = is_self.then(|| self.land_self_hit(ev, tree, h, f, o, &mut grow));
                *references[o]
                    .entry((r.target.clone(), landing))
                    .or_default() += 1;
            }
        }
        self.references = references;
        grow
    }

    /// Where a hit of file `f` (in output `o`) into the package itself lands, with the
    /// assumption, edge, growth and rewrite that landing makes.
    fn land_self_hit(
        &mut self,
        ev: &PathEvidence,
        tree: &Tree<'_>,
        h: &JudgedHit,
        f: usize,
        o: usize,
        grow: &mut [u64],
    ) -> usize {
        let sub = sub_path_in(h, &ev.path, tree);
        let (l, why) = self.land(tree, &sub);
        if let Some(why) = why {
            self.assumptions.push(SelfLanding {
                file: f,
                offset: h.fact.location.offset(),
                kind: h.fact.kind,
                sub_path: String::from_utf8_lossy(&sub).into_owned(),
                output: l,
                reason: why,
            });
        }
        let e = &ev.entries[f];
        if l != 0 && e.elf.is_none() && h.fact.kind != EvidenceKind::FileName {
            grow[f] += 1 + self.outputs[l].len() as u64;
            if e.entry != EntryType::Symlink {
                self.self_paths.entry(f).or_default().insert(sub, l);
            }
        }
        if l != o {
            self.edges.entry((o, l)).or_default().insert(f);
        }
        l
    }

    /// Step 6: each output's exact NAR size and file count, and each entry's size once
    /// it grew by `grow`.
    fn count_sizes(&mut self, ev: &PathEvidence, grow: &[u64]) {
        let entries = &ev.entries;
        let n_out = self.outputs.len();
        let mut sizes = vec![0u64; n_out];
        let mut files = vec![0u64; n_out];
        for (o, size) in sizes.iter_mut().enumerate() {
            *size = nar_size_of(
                entries
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| self.holds[*i].contains(&o))
                    .map(|(i, e)| (e.path.as_bytes(), e.entry, e.size + grow[i])),
            );
            files[o] = entries
                .iter()
                .enumerate()
                .filter(|(i, e)| {
                    e.entry != EntryType::Directory && self.place[*i] == Place::Output(o)
                })
                .count() as u64;
        }
        self.entry_sizes = entries
            .iter()
            .enumerate()
            .map(|(i, e)| e.size + grow[i])
            .collect();
        self.sizes = sizes;
        self.files = files;
    }
}

/// Everything before the last `/` of a relative path (empty at the first level).
fn parent(p: &[u8]) -> &[u8] {
    match p.iter().rposition(|&b| b == b'/') {
        Some(i) => &p[..i],
        None => &[],
    }
}

/// The NAR framing of a string of `n` bytes: its length and the bytes padded to 8.
pub fn nar_str_len(n: u64) -> u64 {
    8u64.saturating_add(n.div_ceil(8).saturating_mul(8))
}

/// The exact NAR size of a tree given as (path, type, size) in NAR order: the same
/// framing as `crate::scan::nar_size`, over any subset of a package's entries that
/// forms a tree (every entry's parent directory included).
pub fn nar_size_of<'a>(entries: impl Iterator<Item = (&'a [u8], EntryType, u64)>) -> u64 {
    let str_len = nar_str_len;
    let s = |t: &str| str_len(t.len() as u64);
    let mut total = s("nix-archive-1");
    for (path, entry, size) in entries {
        if !path.is_empty() {
            let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
            total += s("entry") + s("(") + s("name") + str_len(name.len() as u64);
            total += s("node") + s(")");
        }
        total += s("(") + s("type") + s(")");
        total = total.saturating_add(match entry {
            EntryType::Regular => s("regular") + s("contents") + str_len(size),
            EntryType::Executable => {
                s("regular") + s("executable") + s("") + s("contents") + str_len(size)
            }
            EntryType::Symlink => s("symlink") + s("target") + str_len(size),
            EntryType::Directory => s("directory"),
        });
    }
    total
}

#[cfg(test)]
mod tests;
