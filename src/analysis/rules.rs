//! `nixcut rules`: the classification tables in force as a report, every row with its
//! name, a description of what it matches and what it gives.

use crate::classify::{
    verdict_rules, ClassRules, FileClassName, Gives, HitCondition, Matcher, Region, CLASS_OUT,
    ELF_HIT_RULES, FILE_RULES,
};
use crate::report::{
    ClassRow, DataDirRow, KindRow, RuleSource, RulesReport, VerdictRow, SCHEMA_VERSION,
};

/// The rule tables in force: the class rules (the user's rows, from `rules_file`, first),
/// the evidence-kind file rules and the verdict rules.
pub fn rules(rules: &ClassRules, rules_file: Option<String>) -> RulesReport {
    let mut class_rules: Vec<ClassRow> = rules
        .rules()
        .iter()
        .enumerate()
        .map(|(i, r)| ClassRow {
            name: r.id.to_string(),
            source: if rules.is_user_rule(i) {
                RuleSource::User
            } else {
                RuleSource::Builtin
            },
            matches: r.matcher.to_string(),
            class: r.class.to_string(),
        })
        .collect();
    class_rules.push(ClassRow {
        name: CLASS_OUT.to_string(),
        source: RuleSource::Builtin,
        matches: "anything no row above matches".into(),
        class: "out".into(),
    });
    RulesReport {
        schema_version: SCHEMA_VERSION,
        rules_file,
        class_rules,
        kind_rules: FILE_RULES
            .iter()
            .map(|r| KindRow {
                name: r.name.to_string(),
                matches: describe_matcher(&r.matcher),
                kind: r.kind.to_string(),
            })
            .collect(),
        verdict_rules: verdict_rules()
            .iter()
            .map(|r| VerdictRow {
                name: r.id.to_string(),
                when: describe_condition(r.when),
                verdict: match &r.gives {
                    Gives::Verdict(v) => v.to_string(),
                    Gives::GpuArchOfName => "gpu:<arch of the name>".into(),
                    Gives::GpuArchOfClass => "gpu:<arch of the file's class>".into(),
                },
                why: r.why.to_string(),
            })
            .collect(),
        elf_rules: ELF_HIT_RULES
            .iter()
            .map(|(name, kind, matches)| KindRow {
                name: name.to_string(),
                matches: matches.to_string(),
                kind: kind.to_string(),
            })
            .collect(),
        data_dir_rules: rules
            .data_dirs()
            .iter()
            .map(|d| DataDirRow {
                name: d.id.to_string(),
                source: if rules.is_user_data_dir(d.id) {
                    RuleSource::User
                } else {
                    RuleSource::Builtin
                },
                library: d.library.clone(),
                base: d.base.as_str().to_string(),
                dirs: d.dirs.clone(),
            })
            .collect(),
    }
}

fn describe_matcher(m: &Matcher) -> String {
    let list = |v: &[&str]| v.join(" ");
    match *m {
        Matcher::In(Region::Contents) => "a hit in file contents".into(),
        Matcher::In(Region::SymlinkTarget) => "a hit in a symlink target".into(),
        Matcher::In(Region::FileName) => "a hit in a directory entry name".into(),
        Matcher::UnderDir(d) => format!("under {}", list(d)),
        Matcher::NameEndsWith(s) => format!("name ends with {}", list(s)),
        Matcher::NameEndsWithIgnoreCase(s) => {
            format!("name ends with {} (any case)", list(s))
        }
        Matcher::NameIs(s) => format!("name is {}", list(s)),
        Matcher::NameStartsWith(s) => format!("name starts with {}", list(s)),
        Matcher::Shebang => "starts with #!".into(),
        Matcher::ExecutableText => "executable text file".into(),
        Matcher::Text => "text file".into(),
        Matcher::Any => "any other file".into(),
    }
}

fn describe_condition(c: HitCondition) -> String {
    match c {
        HitCondition::DanglingSymlink => "a symlink whose target does not exist".into(),
        HitCondition::SymlinkNamedForArch => {
            "a symlink whose name carries a GPU architecture".into()
        }
        HitCondition::Kind(k) => format!("kind {k}"),
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
            format!("a hit in a file of class {}", names.join(" "))
        }
        HitCondition::GpuClass => "a hit in a gpu:<arch> file".into(),
        HitCondition::UnreachedRuntimeKind => {
            "a runtime kind of hit in a file the consumer does not reach".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_elf_hit_rule_and_data_dir_row_is_listed() {
        let r = rules(&ClassRules::builtin(), None);
        // Every rule name classify_hit gives is in the listing.
        let src = include_str!("../classify/elf.rs");
        let body = &src[src.find("pub fn classify_hit").unwrap()..];
        for name in body.split('"').skip(1).step_by(2) {
            if name.starts_with("elf-") && !name.contains(' ') {
                assert!(
                    r.elf_rules.iter().any(|k| k.name == name),
                    "{name} is not listed"
                );
            }
        }
        let names: Vec<&str> = r.data_dir_rules.iter().map(|d| d.name.as_str()).collect();
        assert!(names.contains(&"data/rocblas-tensile"), "{names:?}");
        let user = ClassRules::builtin().with_user_data_dirs(vec![crate::classify::DataDirRule {
            id: crate::classify::RuleId::intern("my/x"),
            library: "libx.so".into(),
            base: crate::classify::DataBase::RealPath,
            dirs: vec!["x/db".into()],
        }]);
        let r = rules(&user, Some("r.toml".into()));
        assert_eq!(r.data_dir_rules[0].name, "my/x");
        assert_eq!(r.data_dir_rules[0].source, RuleSource::User);
        assert_eq!(r.data_dir_rules[0].base, "real-path");
    }
}
