//! Verdicts: what a reference or a file is needed for, and the rules that decide it.
//!
//! A reference's verdict is the strongest among its evidence
//! (runtime > gpu > unknown > dev > doc > removable), and every verdict names the rule
//! that produced it. This module holds the first, kind-only rules: one row per
//! evidence kind, so the table is the documentation.

use std::cmp::Ordering;
use std::fmt;

use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{arch_of_name, EvidenceKind, FileClass, GpuTarget, GpuTargets, RuleId};

/// What a reference (or a file) is needed for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Needed to run: keep.
    Runtime,
    /// Needed only on GPUs of these architectures (`gfx90a`, `sm_80`): written
    /// `gpu:gfx900,gfx906`.
    Gpu(GpuTargets),
    /// The tool cannot tell: keep, and say so.
    Unknown,
    /// Needed only to build against the package: move to the dev output.
    Dev,
    /// Only documentation refers to it: move to the doc output.
    Doc,
    /// Nothing needs it: remove-references-to, patchelf --shrink-rpath, strip, delete.
    Removable,
}

impl Verdict {
    /// Rank for "strongest wins": higher is stronger.
    pub fn strength(&self) -> u8 {
        match self {
            Verdict::Runtime => 5,
            Verdict::Gpu(_) => 4,
            Verdict::Unknown => 3,
            Verdict::Dev => 2,
            Verdict::Doc => 1,
            Verdict::Removable => 0,
        }
    }

    /// Parse the JSON spelling (`runtime`, `gpu:gfx90a`, …).
    pub fn parse(s: &str) -> Option<Verdict> {
        Some(match s {
            "runtime" => Verdict::Runtime,
            "unknown" => Verdict::Unknown,
            "dev" => Verdict::Dev,
            "doc" => Verdict::Doc,
            "removable" => Verdict::Removable,
            _ => Verdict::Gpu(GpuTargets::parse_ids(s.strip_prefix("gpu:")?)?),
        })
    }
}

impl Ord for Verdict {
    fn cmp(&self, other: &Self) -> Ordering {
        self.strength()
            .cmp(&other.strength())
            .then_with(|| match (self, other) {
                (Verdict::Gpu(a), Verdict::Gpu(b)) => b.cmp(a),
                _ => Ordering::Equal,
            })
    }
}

impl PartialOrd for Verdict {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Runtime => f.write_str("runtime"),
            Verdict::Gpu(a) => write!(f, "gpu:{a}"),
            Verdict::Unknown => f.write_str("unknown"),
            Verdict::Dev => f.write_str("dev"),
            Verdict::Doc => f.write_str("doc"),
            Verdict::Removable => f.write_str("removable"),
        }
    }
}

impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Verdict::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown verdict `{s}`")))
    }
}

/// When a verdict rule applies to one hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitCondition {
    /// A symlink whose absolute target does not exist in the store.
    DanglingSymlink,
    /// A symlink whose own name carries a GPU architecture token (`…_gfx90a.co`).
    SymlinkNamedForArch,
    /// Any hit of this kind.
    Kind(EvidenceKind),
    /// A hit in a file of one of these classes.
    ClassIn(&'static [FileClassName]),
    /// A hit in a per-architecture file (`gpu:<arch>` class).
    GpuClass,
    /// A hit of a kind whose own row says `runtime` (interpreter, needed library,
    /// dlopen directory, symlink, script), in a file the consumer does not reach.
    UnreachedRuntimeKind,
}

/// File classes a verdict rule can name (the arch-free part of [`FileClass`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileClassName {
    /// `dev`.
    Dev,
    /// `static`.
    Static,
    /// `doc`.
    Doc,
    /// `man`.
    Man,
    /// `info`.
    Info,
    /// `debug`.
    Debug,
    /// `removable`.
    Removable,
}

impl FileClassName {
    fn is(self, c: &FileClass) -> bool {
        matches!(
            (self, c),
            (FileClassName::Dev, FileClass::Dev)
                | (FileClassName::Static, FileClass::Static)
                | (FileClassName::Doc, FileClass::Doc)
                | (FileClassName::Man, FileClass::Man)
                | (FileClassName::Info, FileClass::Info)
                | (FileClassName::Debug, FileClass::Debug)
                | (FileClassName::Removable, FileClass::Removable)
        )
    }
}

/// What a verdict rule gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gives {
    /// This verdict.
    Verdict(Verdict),
    /// `gpu:<arch>` for the architecture named in the file name.
    GpuArchOfName,
    /// `gpu:<arch>` for the architecture of the file's class.
    GpuArchOfClass,
}

/// One row of the verdict table: hits matching `when` get `gives`, named `id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerdictRule {
    /// The rule's name, carried by every verdict it gives.
    pub id: RuleId,
    /// Which hits it applies to.
    pub when: HitCondition,
    /// The verdict.
    pub gives: Gives,
    /// Why, in one sentence (for `nixcut rules` and the documentation).
    pub why: &'static str,
}

/// What the verdict rules look at for one hit: facts gathered by the scan and by the
/// file source, never the file system itself.
#[derive(Debug, Clone, Copy)]
pub struct HitFacts<'a> {
    /// The hit's evidence kind.
    pub kind: EvidenceKind,
    /// The name (last component) of the file holding the hit.
    pub file_name: &'a [u8],
    /// For a symlink with an absolute target: whether the target exists (`None` when
    /// that cannot be known, or for any other hit).
    pub target_exists: Option<bool>,
    /// The class of the file holding the hit, when classes were decided.
    pub class: Option<&'a FileClass>,
    /// With a consumer: whether it loads or opens the file at run time.
    pub reached: Option<bool>,
}

/// No evidence at all for a reference Nix registered.
pub const NO_EVIDENCE: RuleId = RuleId::new("no-evidence");

/// The verdict table, in priority order (the first matching row wins): the symlink
/// refinements, then one row per evidence kind, so that the table is the documentation.
pub fn verdict_rules() -> &'static [VerdictRule] {
    static RULES: OnceLock<Vec<VerdictRule>> = OnceLock::new();
    RULES.get_or_init(|| {
        use EvidenceKind as K;
        use Gives::Verdict as V;
        let r = |id, when, gives, why| VerdictRule {
            id: RuleId::new(id),
            when,
            gives,
            why,
        };
        let k = |kind, verdict, id, why| r(id, HitCondition::Kind(kind), V(verdict), why);
        use FileClassName as N;
        let removable_kind = |kind, id, why| k(kind, Verdict::Removable, id, why);
        vec![
            r("symlink/dangling", HitCondition::DanglingSymlink, V(Verdict::Removable), "a symlink whose target does not exist is never followed successfully"),
            removable_kind(K::ElfRunpathUnused, "kind/elf-runpath-unused", "no DT_NEEDED library and no library named for dlopen resolves here: patchelf --set-rpath without it"),
            removable_kind(K::ElfSourcePath, "kind/elf-source-path", "a source-file or include path (__FILE__, assert message) is never opened at run time"),
            removable_kind(K::ElfDebug, "kind/elf-debug", "debug info is not loaded at run time: strip or separateDebugInfo"),
            removable_kind(K::Manifest, "kind/manifest", "build inventories such as TensileManifest.txt are not read at run time"),
            r("class/dev-file", HitCondition::ClassIn(&[N::Dev, N::Static]), V(Verdict::Dev), "headers, cmake, pkg-config files and static archives are used only to build against the package"),
            r("class/doc-file", HitCondition::ClassIn(&[N::Doc, N::Man, N::Info]), V(Verdict::Doc), "documentation is not read to run the program"),
            r("class/removable-file", HitCondition::ClassIn(&[N::Debug, N::Removable]), V(Verdict::Removable), "debug info and build inventories are not read at run time"),
            r("reach/not-reached", HitCondition::UnreachedRuntimeKind, V(Verdict::Removable), "the consumer never loads, runs or opens this file, so what it points at is not needed at run time for that consumer"),
            r("class/gpu-arch-file", HitCondition::GpuClass, Gives::GpuArchOfClass, "a file for one GPU architecture is opened only on that GPU"),
            r("name/gpu-arch", HitCondition::SymlinkNamedForArch, Gives::GpuArchOfName, "a symlink to a file named for one GPU architecture is opened only on that GPU"),
            k(K::ElfInterpreter, Verdict::Runtime, "kind/elf-interpreter", "the kernel loads PT_INTERP to start the program"),
            k(K::ElfNeeded, Verdict::Runtime, "kind/elf-needed", "the dynamic loader finds a DT_NEEDED library in this RUNPATH directory"),
            k(K::ElfRunpathDlopen, Verdict::Runtime, "kind/elf-runpath-dlopen", "dlopen searches the caller's RUNPATH: this directory supplies a library the file names for dlopen (errs towards runtime: patchelf --shrink-rpath would break it)"),
            k(K::ElfString, Verdict::Unknown, "kind/elf-string", "a string in a data section may be opened at run time"),
            k(K::ElfOther, Verdict::Unknown, "kind/elf-other", "bytes outside known sections: cannot tell"),
            k(K::Symlink, Verdict::Runtime, "kind/symlink", "a symlink is followed when its name is opened"),
            k(K::FileName, Verdict::Unknown, "kind/file-name", "a hash in a file name: cannot tell who reads it"),
            k(K::Script, Verdict::Runtime, "kind/script", "an executable script runs its interpreter and commands"),
            k(K::BuildConfig, Verdict::Dev, "kind/build-config", "cmake, pkg-config, libtool and nix-support files are read only when building against the package"),
            k(K::Doc, Verdict::Doc, "kind/doc", "documentation"),
            k(K::Text, Verdict::Unknown, "kind/text", "a text file: cannot tell who reads it"),
            k(K::Binary, Verdict::Unknown, "kind/binary", "a data file: cannot tell who reads it"),
        ]
    })
}

/// The verdict of a kind's own row.
fn kind_row_verdict(kind: EvidenceKind) -> Option<&'static Verdict> {
    verdict_rules()
        .iter()
        .find_map(|r| match (&r.when, &r.gives) {
            (HitCondition::Kind(k), Gives::Verdict(v)) if *k == kind => Some(v),
            _ => None,
        })
}

impl HitCondition {
    fn matches(self, h: &HitFacts<'_>) -> bool {
        match self {
            HitCondition::ClassIn(names) => h.class.is_some_and(|c| names.iter().any(|n| n.is(c))),
            HitCondition::GpuClass => matches!(h.class, Some(FileClass::Gpu(_))),
            HitCondition::UnreachedRuntimeKind => {
                h.reached == Some(false) && kind_row_verdict(h.kind) == Some(&Verdict::Runtime)
            }
            HitCondition::DanglingSymlink => {
                h.kind == EvidenceKind::Symlink && h.target_exists == Some(false)
            }
            HitCondition::SymlinkNamedForArch => {
                h.kind == EvidenceKind::Symlink && arch_of_name(h.file_name).is_some()
            }
            HitCondition::Kind(k) => h.kind == k,
        }
    }
}

/// The verdict of one hit and the rule that gave it: the first row of
/// [`verdict_rules`] that matches.
pub fn hit_verdict(h: &HitFacts<'_>) -> (Verdict, RuleId) {
    for rule in verdict_rules() {
        if rule.when.matches(h) {
            let v = match &rule.gives {
                Gives::Verdict(v) => v.clone(),
                Gives::GpuArchOfName => match arch_of_name(h.file_name) {
                    Some(arch) => Verdict::Gpu(GpuTargets::one(GpuTarget::from_id(&arch))),
                    None => continue,
                },
                Gives::GpuArchOfClass => match h.class {
                    Some(FileClass::Gpu(arch)) => Verdict::Gpu(GpuTargets::one(arch.clone())),
                    _ => continue,
                },
            };
            return (v, rule.id);
        }
    }
    (Verdict::Unknown, RuleId::new("kind/unlisted"))
}

/// The verdict of a reference from the verdicts of its hits: the strongest wins (the
/// first of equals keeps its rule); a `gpu:` verdict names every architecture among the
/// hits (`gpu:gfx900,gfx906`). No hits: `unknown`, rule [`NO_EVIDENCE`].
pub fn reference_verdict<'a>(
    hits: impl IntoIterator<Item = (&'a Verdict, RuleId)>,
) -> (Verdict, RuleId) {
    let mut best: Option<(&Verdict, RuleId)> = None;
    let mut archs = GpuTargets::default();
    for (v, rule) in hits {
        if let Verdict::Gpu(a) = v {
            archs.extend(a.iter().cloned());
        }
        if best.is_none_or(|(b, _)| v > b) {
            best = Some((v, rule));
        }
    }
    match best {
        None => (Verdict::Unknown, NO_EVIDENCE),
        Some((Verdict::Gpu(_), rule)) => (Verdict::Gpu(archs), rule),
        Some((v, rule)) => (v.clone(), rule),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_spelling() {
        let mut v = [
            Verdict::Removable,
            Verdict::Dev,
            Verdict::Gpu(GpuTarget::from("gfx90a").into()),
            Verdict::Runtime,
            Verdict::Unknown,
            Verdict::Doc,
        ];
        v.sort();
        let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            s,
            [
                "removable",
                "doc",
                "dev",
                "unknown",
                "gpu:gfx90a",
                "runtime"
            ]
        );
        for x in &v {
            assert_eq!(Verdict::parse(&x.to_string()).as_ref(), Some(x));
        }
        assert_eq!(Verdict::parse("gpu"), None);
        assert_eq!(Verdict::parse("gpu:"), None);
        // JSON spells a GPU verdict as its sorted architectures joined by commas.
        let two = Verdict::parse("gpu:sm_80,gfx906").unwrap();
        assert_eq!(serde_json::to_string(&two).unwrap(), "\"gpu:gfx906,sm_80\"");
        assert_eq!(
            serde_json::from_str::<Verdict>("\"gpu:gfx906,sm_80\"").unwrap(),
            two
        );
    }

    #[test]
    fn every_kind_has_one_row() {
        let rules = verdict_rules();
        for k in EvidenceKind::ALL {
            let rows = rules
                .iter()
                .filter(|r| r.when == HitCondition::Kind(k))
                .count();
            assert_eq!(rows, 1, "{k:?}");
        }
        let mut ids: Vec<_> = rules.iter().map(|r| r.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), rules.len(), "rule names are unique");
    }

    fn hit(kind: EvidenceKind, name: &str, target_exists: Option<bool>) -> (Verdict, RuleId) {
        hit_verdict(&HitFacts {
            kind,
            file_name: name.as_bytes(),
            target_exists,
            class: None,
            reached: None,
        })
    }

    #[test]
    fn symlink_refinements_come_first() {
        use EvidenceKind as K;
        let gpu = "Kernels_Type_HH_Contraction_l_Ailk_Bjlk_Cijk_Dijk_gfx90a.co";
        assert_eq!(hit(K::Symlink, "libfoo.so", Some(true)).0, Verdict::Runtime);
        assert_eq!(hit(K::Symlink, "libfoo.so", None).0, Verdict::Runtime);
        assert_eq!(
            hit(K::Symlink, gpu, Some(true)),
            (
                Verdict::Gpu(GpuTarget::from("gfx90a").into()),
                RuleId::new("name/gpu-arch")
            )
        );
        assert_eq!(
            hit(K::Symlink, gpu, Some(false)),
            (Verdict::Removable, RuleId::new("symlink/dangling"))
        );
        // Only symlinks are refined: a manifest named for an arch stays a manifest.
        assert_eq!(hit(K::Manifest, gpu, Some(false)).0, Verdict::Removable);
        assert_eq!(hit(K::Text, gpu, None).0, Verdict::Unknown);
        assert_eq!(
            hit(K::ElfNeeded, "x", None).1,
            RuleId::new("kind/elf-needed")
        );
    }

    #[test]
    fn strongest_wins_and_gpu_archs_merge() {
        let r = |s| RuleId::new(s);
        let dev = Verdict::Dev;
        let run = Verdict::Runtime;
        let doc = Verdict::Doc;
        assert_eq!(
            reference_verdict([(&dev, r("a")), (&run, r("b")), (&doc, r("c"))]),
            (Verdict::Runtime, r("b"))
        );
        let g1 = Verdict::Gpu(GpuTarget::from("gfx906").into());
        let g2 = Verdict::Gpu(GpuTarget::from("gfx900").into());
        let (v, _) =
            reference_verdict([(&g1, r("x")), (&dev, r("y")), (&g2, r("x")), (&g1, r("x"))]);
        assert_eq!(
            v,
            Verdict::Gpu(
                ["gfx900", "gfx906"]
                    .map(GpuTarget::from)
                    .into_iter()
                    .collect()
            )
        );
        assert_eq!(reference_verdict([]), (Verdict::Unknown, NO_EVIDENCE));
        // Equal verdicts: the first keeps its rule.
        assert_eq!(
            reference_verdict([(&run, r("first")), (&run, r("second"))]).1,
            r("first")
        );
    }
}
