//! Split policy: what `nixcut split` does with one hit of a reference, by its verdict,
//! evidence kind and file class, as rules with names ([`split_rules`], listed by
//! `nixcut rules`). The first row whose condition holds decides.
//!
//! The plan (`crate::analysis::split`) gathers the facts of a hit ([`SplitFacts`]: two
//! of them, whether the loader searches a RUNPATH entry and whether a source path names
//! something used at run time, it computes from the ELF facts and the hit's sub-path)
//! and acts on the [`SplitEffect`] the rule gives. Pure data and one lookup; no I/O.

use super::{EvidenceKind, FileClass, RuleId};

/// What a split does with one hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitEffect {
    /// The file keeps the reference.
    Keep,
    /// The file keeps the reference, and the plan warns: what it names is used at run
    /// time.
    KeepRunTimeUse,
    /// The entry leaves the file's RUNPATH (`patchelf --set-rpath` without it).
    DropRunpathEntry,
    /// `remove-references-to`, where every hit of the reference in the file allows it.
    RemoveReferences,
    /// The file is deleted.
    Delete,
}

/// When a split rule applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitCondition {
    /// The hit's verdict is not `removable`.
    NotRemovable,
    /// An unused RUNPATH entry the loader searches (the typed ELF facts' active entries).
    SearchedRunpathEntry,
    /// A source path that names what a program may use at run time (a directory, a
    /// script an interpreter runs).
    SourceUsedAtRunTime,
    /// The hit is of one of these kinds.
    Kind(&'static [EvidenceKind]),
    /// The hit is of one of these kinds, in a file outside the `debug` class.
    KindOutsideDebug(&'static [EvidenceKind]),
    /// The file's class is `removable`.
    RemovableClass,
    /// Any hit.
    Any,
}

/// One split rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitRule {
    /// The rule's name.
    pub id: RuleId,
    /// When it applies.
    pub when: SplitCondition,
    /// What the split does then.
    pub gives: SplitEffect,
    /// Why, in a few words.
    pub why: &'static str,
}

/// The facts of one hit a split rule looks at.
#[derive(Debug, Clone, Copy)]
pub struct SplitFacts<'a> {
    /// Whether the hit's verdict is `removable`.
    pub removable: bool,
    /// Its evidence kind.
    pub kind: EvidenceKind,
    /// The class of the file holding it.
    pub class: &'a FileClass,
    /// Whether its RUNPATH entry is one the loader searches.
    pub searched: bool,
    /// Whether the source path it names is used at run time.
    pub used_at_run_time: bool,
}

impl SplitCondition {
    /// Whether the condition holds for a hit.
    pub fn holds(self, f: &SplitFacts<'_>) -> bool {
        use EvidenceKind as K;
        match self {
            SplitCondition::NotRemovable => !f.removable,
            SplitCondition::SearchedRunpathEntry => f.kind == K::ElfRunpathUnused && f.searched,
            SplitCondition::SourceUsedAtRunTime => f.kind == K::ElfSourcePath && f.used_at_run_time,
            SplitCondition::Kind(kinds) => kinds.contains(&f.kind),
            SplitCondition::KindOutsideDebug(kinds) => {
                kinds.contains(&f.kind) && *f.class != FileClass::Debug
            }
            SplitCondition::RemovableClass => *f.class == FileClass::Removable,
            SplitCondition::Any => true,
        }
    }
}

/// The split rules, in the order tried.
pub fn split_rules() -> &'static [SplitRule] {
    use EvidenceKind as K;
    use SplitCondition as C;
    use SplitEffect as E;
    const fn rule(id: &'static str, when: C, gives: E, why: &'static str) -> SplitRule {
        SplitRule {
            id: RuleId::new(id),
            when,
            gives,
            why,
        }
    }
    const RULES: &[SplitRule] = &[
        rule(
            "split/not-removable",
            C::NotRemovable,
            E::Keep,
            "only removable evidence is acted on whatever the consumer",
        ),
        rule(
            "split/runpath-searched",
            C::SearchedRunpathEntry,
            E::DropRunpathEntry,
            "an entry of the search path the loader uses that supplies nothing",
        ),
        rule(
            "split/runpath-shadowed",
            C::Kind(&[K::ElfRunpathUnused]),
            E::RemoveReferences,
            "a DT_RPATH the loader ignores (DT_RUNPATH is present): --set-rpath rewrites only DT_RUNPATH",
        ),
        rule(
            "split/source-run-time",
            C::SourceUsedAtRunTime,
            E::KeepRunTimeUse,
            "a directory a JIT may pass to its compiler (-I), or a script an interpreter runs",
        ),
        rule(
            "split/source-debug",
            C::KindOutsideDebug(&[K::ElfSourcePath, K::ElfDebug]),
            E::RemoveReferences,
            "compiled sources and debug info are not read at run time",
        ),
        rule(
            "split/delete-manifest-symlink",
            C::Kind(&[K::Manifest, K::Symlink]),
            E::Delete,
            "a build inventory or a dangling symlink is deleted whole",
        ),
        rule(
            "split/delete-removable-file",
            C::RemovableClass,
            E::Delete,
            "a file of class removable is deleted whole",
        ),
        rule(
            "split/keep",
            C::Any,
            E::Keep,
            "debug files go to the debug output with their edges; other evidence removable only for some consumer is kept",
        ),
    ];
    RULES
}

/// The first split rule that holds for a hit (the last row holds for any).
pub fn split_policy(f: &SplitFacts<'_>) -> &'static SplitRule {
    let rules = split_rules();
    rules
        .iter()
        .find(|r| r.when.holds(f))
        .unwrap_or(&rules[rules.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effect(removable: bool, kind: EvidenceKind, class: FileClass) -> (SplitEffect, String) {
        let f = SplitFacts {
            removable,
            kind,
            class: &class,
            searched: true,
            used_at_run_time: false,
        };
        let r = split_policy(&f);
        (r.gives, r.id.to_string())
    }

    #[test]
    fn each_kind_gets_its_action() {
        use EvidenceKind as K;
        use SplitEffect as E;
        let lib = FileClass::Lib;
        let rm = true;
        assert_eq!(effect(false, K::Manifest, lib.clone()).0, E::Keep);
        assert_eq!(
            effect(rm, K::ElfRunpathUnused, lib.clone()).0,
            E::DropRunpathEntry
        );
        assert_eq!(effect(rm, K::ElfDebug, lib.clone()).0, E::RemoveReferences);
        assert_eq!(effect(rm, K::ElfDebug, FileClass::Debug).0, E::Keep);
        assert_eq!(effect(rm, K::Symlink, lib.clone()).0, E::Delete);
        assert_eq!(
            effect(rm, K::Text, FileClass::Removable),
            (E::Delete, "split/delete-removable-file".to_string())
        );
        let f = SplitFacts {
            removable: rm,
            kind: K::ElfSourcePath,
            class: &lib,
            searched: false,
            used_at_run_time: true,
        };
        assert_eq!(split_policy(&f).gives, E::KeepRunTimeUse);
        let f = SplitFacts {
            kind: K::ElfRunpathUnused,
            ..f
        };
        assert_eq!(split_policy(&f).gives, E::RemoveReferences);
    }

    #[test]
    fn names_are_unique_and_the_last_row_takes_anything() {
        let mut names: Vec<&str> = split_rules().iter().map(|r| r.id.as_str()).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
        assert_eq!(
            split_rules().last().map(|r| r.when),
            Some(SplitCondition::Any)
        );
    }
}
