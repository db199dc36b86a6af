//! `nixcut rules`: the classification tables in force as a report, every row with its
//! name, a description of what it matches and what it gives (worded by the `Display`
//! impls of the rules' conditions, in `crate::render::words::rules`).

use crate::classify::{
    split_rules, verdict_rules, ClassRules, CLASS_OUT, ELF_HIT_RULES, FILE_RULES,
};
use crate::report::{
    ClassRow, DataDirRow, KindRow, RuleSource, RulesReport, SplitRow, VerdictRow, SCHEMA_VERSION,
};

/// The rule tables in force: the class rules (the user's rows, from `rules_file`, first),
/// the evidence-kind file rules, the verdict rules, the data directories and the split
/// policy.
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
                matches: r.matcher.to_string(),
                kind: r.kind,
            })
            .collect(),
        verdict_rules: verdict_rules()
            .iter()
            .map(|r| VerdictRow {
                name: r.id.to_string(),
                when: r.when.to_string(),
                verdict: r.gives.to_string(),
                why: r.why.to_string(),
            })
            .collect(),
        elf_rules: ELF_HIT_RULES
            .iter()
            .map(|(name, kind, matches)| KindRow {
                name: name.to_string(),
                matches: matches.to_string(),
                kind: *kind,
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
        split_rules: split_rules()
            .iter()
            .map(|r| SplitRow {
                name: r.id.to_string(),
                when: r.when.to_string(),
                action: r.gives.to_string(),
                why: r.why.to_string(),
            })
            .collect(),
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
