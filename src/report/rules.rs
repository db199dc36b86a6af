//! `nixcut rules` documents: the classification tables in force, each row with its
//! name, what it matches and what it gives. Built by `crate::analysis::rules`.

use serde::{Deserialize, Serialize};

use crate::classify::EvidenceKind;

/// `nixcut rules [--rules FILE]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RulesReport {
    pub schema_version: u32,
    /// The user's rules file, when one was given.
    pub rules_file: Option<String>,
    /// File classes: the first matching row wins; user rows come first.
    pub class_rules: Vec<ClassRow>,
    /// Evidence kinds of hits outside analysed ELF files: the first matching row wins.
    pub kind_rules: Vec<KindRow>,
    /// Verdicts of single hits: the first matching row wins.
    pub verdict_rules: Vec<VerdictRow>,
    /// Evidence kinds of hits inside analysed ELF files, in the order tried.
    #[serde(default)]
    pub elf_rules: Vec<KindRow>,
    /// The data directories a library opens beside itself where its strings do not say
    /// (the fallback of reachability; user rows first).
    #[serde(default)]
    pub data_dir_rules: Vec<DataDirRow>,
    /// What `split` does with one hit of a reference: the first matching row wins.
    #[serde(default)]
    pub split_rules: Vec<SplitRow>,
}

/// One split rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitRow {
    pub name: String,
    /// The hits it applies to.
    pub when: String,
    /// What the split does with them (`remove-references-to`, `delete the file`, …).
    pub action: String,
    pub why: String,
}

/// One data-directory rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataDirRow {
    pub name: String,
    /// `user` (from the rules file) or `builtin`.
    pub source: RuleSource,
    /// The library's file name (`libfoo.so`, also `libfoo.so.N`).
    pub library: String,
    /// `loaded-as` (the directory the loader found it in) or `real-path`.
    pub base: String,
    /// The directories (or files) it opens, relative to the base.
    pub dirs: Vec<String>,
}

/// One file-class rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassRow {
    pub name: String,
    /// `user` (from the rules file) or `builtin`.
    pub source: RuleSource,
    pub matches: String,
    pub class: String,
}

/// Where a rule comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleSource {
    /// The user's `--rules FILE`.
    User,
    /// nixcut's own table.
    Builtin,
}

impl RuleSource {
    /// `user` or `builtin`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleSource::User => "user",
            RuleSource::Builtin => "builtin",
        }
    }
}

/// One evidence-kind file rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindRow {
    pub name: String,
    pub matches: String,
    pub kind: EvidenceKind,
}

/// One verdict rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerdictRow {
    pub name: String,
    pub when: String,
    pub verdict: String,
    pub why: String,
}
