//! The words of the `rules` report: its headings, and what each rule's condition and
//! result say (the `Display` impls of `crate::classify`'s matchers, conditions and
//! results, which `crate::analysis::rules` puts in the report's rows).

use std::fmt::{self, Write as _};

use crate::classify::{
    EvidenceKind, FileClassName, Gives, HitCondition, Matcher, Region, SplitCondition, SplitEffect,
};
use crate::report::RulesReport;

pub(crate) fn class_heading(r: &RulesReport) -> String {
    let mut s = String::from("File classes (first match wins");
    match &r.rules_file {
        Some(f) => {
            let _ = write!(s, "; rules from {f} come first");
        }
        None => s.push_str("; no --rules file"),
    }
    s.push(')');
    s
}

pub(crate) const ELF_HEADING: &str =
    "Evidence kinds of hits inside analysed ELF files (first match wins)";
pub(crate) const DATA_DIR_HEADING: &str = "Data directories a library opens beside itself, where its strings do not name them (reaching the library reaches them)";
pub(crate) const KIND_HEADING: &str =
    "Evidence kinds of hits outside analysed ELF files (first match wins)";
pub(crate) const VERDICT_HEADING: &str = "Verdicts of single hits (first match wins; a reference takes the strongest: runtime > gpu > unknown > dev > doc > removable)";
pub(crate) const SPLIT_HEADING: &str = "What split does with one hit of a reference (first match wins; remove-references-to only where every hit of the reference in the file allows it)";

/// What an evidence-kind file rule matches (`under share/doc/`, `name ends with .pc`).
impl fmt::Display for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |v: &[&str]| v.join(" ");
        match *self {
            Matcher::In(Region::Contents) => f.write_str("a hit in file contents"),
            Matcher::In(Region::SymlinkTarget) => f.write_str("a hit in a symlink target"),
            Matcher::In(Region::FileName) => f.write_str("a hit in a directory entry name"),
            Matcher::UnderDir(d) => write!(f, "under {}", list(d)),
            Matcher::NameEndsWith(s) => write!(f, "name ends with {}", list(s)),
            Matcher::NameEndsWithIgnoreCase(s) => {
                write!(f, "name ends with {} (any case)", list(s))
            }
            Matcher::NameIs(s) => write!(f, "name is {}", list(s)),
            Matcher::NameStartsWith(s) => write!(f, "name starts with {}", list(s)),
            Matcher::Shebang => f.write_str("starts with #!"),
            Matcher::ExecutableText => f.write_str("executable text file"),
            Matcher::Text => f.write_str("text file"),
            Matcher::Any => f.write_str("any other file"),
        }
    }
}

/// When a verdict rule applies.
impl fmt::Display for HitCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HitCondition::DanglingSymlink => f.write_str("a symlink whose target does not exist"),
            HitCondition::SymlinkNamedForArch => {
                f.write_str("a symlink whose name carries a GPU architecture")
            }
            HitCondition::Kind(k) => write!(f, "kind {k}"),
            HitCondition::ClassIn(classes) => {
                let names: Vec<&str> = classes
                    .iter()
                    .map(|c| match c {
                        FileClassName::Dev => "dev",
                        FileClassName::Static => "static",
                        FileClassName::Doc => "doc",
                        FileClassName::Man => "man",
                        FileClassName::Info => "info",
                        FileClassName::Debug => "debug",
                        FileClassName::Removable => "removable",
                    })
                    .collect();
                write!(f, "a hit in a file of class {}", names.join(" "))
            }
            HitCondition::GpuClass => f.write_str("a hit in a gpu:<arch> file"),
            HitCondition::UnreachedRuntimeKind => {
                f.write_str("a runtime kind of hit in a file the consumer does not reach")
            }
        }
    }
}

/// The verdict a verdict rule gives.
impl fmt::Display for Gives {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Gives::Verdict(v) => write!(f, "{v}"),
            Gives::GpuArchOfName => f.write_str("gpu:<arch of the name>"),
            Gives::GpuArchOfClass => f.write_str("gpu:<arch of the file's class>"),
        }
    }
}

/// When a split rule applies.
impl fmt::Display for SplitCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kinds = |f: &mut fmt::Formatter<'_>, ks: &[EvidenceKind]| {
            let names: Vec<String> = ks.iter().map(|k| k.to_string()).collect();
            write!(f, "a removable hit of kind {}", names.join(" "))
        };
        match self {
            SplitCondition::NotRemovable => f.write_str("a hit whose verdict is not removable"),
            SplitCondition::SearchedRunpathEntry => write!(
                f,
                "a removable hit of kind {} in an entry the loader searches",
                EvidenceKind::ElfRunpathUnused
            ),
            SplitCondition::SourceUsedAtRunTime => write!(
                f,
                "a removable hit of kind {} naming a directory or a file a program reads at run time (.py, .cl)",
                EvidenceKind::ElfSourcePath
            ),
            SplitCondition::Kind(ks) => kinds(f, ks),
            SplitCondition::KindOutsideDebug(ks) => {
                kinds(f, ks)?;
                f.write_str(" in a file not of class debug")
            }
            SplitCondition::RemovableClass => {
                f.write_str("a removable hit in a file of class removable")
            }
            SplitCondition::Any => f.write_str("any other removable hit"),
        }
    }
}

/// What a split rule does.
impl fmt::Display for SplitEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SplitEffect::Keep => "keep",
            SplitEffect::KeepRunTimeUse => "keep and warn",
            SplitEffect::DropRunpathEntry => "drop from RUNPATH",
            SplitEffect::RemoveReferences => "remove-references-to",
            SplitEffect::Delete => "delete the file",
        })
    }
}
