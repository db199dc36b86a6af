//! A user's rules file (`--rules FILE`, TOML): class rules that go ahead of the built-in
//! table ([`ClassRules::with_user_rules`]), so a user can override a built-in class.
//!
//! ```toml
//! [[class]]
//! name = "my/keep-tools"      # required, unique; every class it gives names it
//! under = ["share/tools/"]    # and/or name_is, name_ends_with, name_starts_with
//! class = "bin"               # out, bin, lib, dev, static, doc, man, info, debug,
//!                             # gpu:<arch>, gpu-generic, removable
//! ```
//!
//! Data-directory rows (the fallback for libraries whose strings do not name the
//! directories they open; the built-in rows are listed by `nixcut rules`):
//!
//! ```toml
//! [[data_dir]]
//! name = "my/fastblas"         # required, unique
//! library = "libfastblas.so"   # the library's file name (also matches `.so.3` …)
//! base = "loaded-as"           # or "real-path" (default: loaded-as)
//! dirs = ["fastblas/library"]  # relative to the base, in the order tried
//!
//! [[data_dir]]
//! name = "data/rocblas-tensile"  # a built-in row's name replaces that row;
//! dirs = []                      # an empty `dirs` turns it off
//! ```
//!
//! Several match keys in one rule must all hold. Parsing takes the text and the file's
//! name (for messages) and never reads files: the binary does. Every error names the
//! file, line and column and what is wrong (bad TOML, an unknown key, a missing or
//! duplicate name, an unknown class, a rule that matches nothing).

use std::collections::HashMap;
use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use super::{
    builtin_data_dirs, ClassMatcher, ClassOf, ClassRule, ClassRules, DataBase, DataDirRule,
    FileClass, RuleId, CLASS_OUT,
};

/// What is wrong with a rules file, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct RulesFileError {
    /// The file's name as given.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    class: Vec<Spanned<RawClassRule>>,
    #[serde(default)]
    data_dir: Vec<Spanned<RawDataDir>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDataDir {
    name: Option<Spanned<String>>,
    library: Option<Spanned<String>>,
    base: Option<Spanned<String>>,
    dirs: Option<Spanned<Vec<Spanned<String>>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClassRule {
    name: Option<Spanned<String>>,
    under: Option<Spanned<Vec<Spanned<String>>>>,
    name_is: Option<Spanned<Vec<Spanned<String>>>>,
    name_ends_with: Option<Spanned<Vec<Spanned<String>>>>,
    name_starts_with: Option<Spanned<Vec<Spanned<String>>>>,
    class: Option<Spanned<String>>,
}

const CLASSES: &str =
    "out, bin, lib, dev, static, doc, man, info, debug, gpu:<arch>, gpu-generic, removable";

/// How a table's rows are called in messages.
struct Table {
    /// `[[class]] rule`.
    header: &'static str,
    /// `rule`.
    noun: &'static str,
}

const CLASS_TABLE: Table = Table {
    header: "[[class]] rule",
    noun: "rule",
};
const DATA_DIR_TABLE: Table = Table {
    header: "[[data_dir]] row",
    noun: "data_dir row",
};

fn error_at(text: &str, file: &str, span: Range<usize>, message: String) -> RulesFileError {
    let (line, column) = line_column(text, span.start);
    RulesFileError {
        file: file.to_string(),
        line,
        column,
        message,
    }
}

/// The file's TOML, or the error naming where it is wrong.
fn read_raw(text: &str, file: &str) -> Result<RawFile, RulesFileError> {
    toml::from_str(text).map_err(|e| {
        let message = e.message().trim_end().to_string();
        error_at(text, file, e.span().unwrap_or(0..0), message)
    })
}

/// A row's name: present, without spaces or control characters, not used before.
fn checked_name(
    name: Option<Spanned<String>>,
    row: Range<usize>,
    table: &Table,
    seen: &mut HashMap<String, usize>,
    text: &str,
    file: &str,
) -> Result<(String, Range<usize>), RulesFileError> {
    let Some(name) = name else {
        return Err(error_at(
            text,
            file,
            row,
            format!(
                "this {} has no `name` (every {} needs a unique name)",
                table.header, table.noun
            ),
        ));
    };
    let span = name.span();
    let name = name.into_inner();
    if name.trim().is_empty() || name.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(error_at(
            text,
            file,
            span,
            format!(
                "{} name {name:?} is empty or holds spaces or control characters",
                table.noun
            ),
        ));
    }
    // The first use is kept as a byte offset and turned into a line only for the error:
    // a line per row, each found from the start of the text, made loading quadratic.
    if let Some(first) = seen.insert(name.clone(), span.start) {
        let first = line_column(text, first).0;
        return Err(error_at(
            text,
            file,
            span,
            format!(
                "duplicate {} name `{name}` (first used on line {first})",
                table.noun
            ),
        ));
    }
    Ok((name, span))
}

/// Parse a rules file: its class rules, in file order.
pub fn parse_rules_file(text: &str, file: &str) -> Result<Vec<ClassRule>, RulesFileError> {
    let err = |span: Range<usize>, message: String| error_at(text, file, span, message);
    let raw = read_raw(text, file)?;
    let builtin = ClassRules::builtin();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut rules = Vec::with_capacity(raw.class.len());
    for spanned in raw.class {
        let rule_span = spanned.span();
        let r = spanned.into_inner();
        let (name, name_span) = checked_name(
            r.name,
            rule_span.clone(),
            &CLASS_TABLE,
            &mut seen,
            text,
            file,
        )?;
        if name == CLASS_OUT.as_str() || builtin.rules().iter().any(|b| b.id == name.as_str()) {
            return Err(err(
                name_span,
                format!("rule name `{name}` is the name of a built-in rule; choose another"),
            ));
        }
        let mut all = Vec::new();
        let keys = [
            ("under", r.under),
            ("name_is", r.name_is),
            ("name_ends_with", r.name_ends_with),
            ("name_starts_with", r.name_starts_with),
        ];
        for (key, value) in keys {
            let Some(value) = value else { continue };
            let list_span = value.span();
            let mut items = Vec::new();
            for item in value.into_inner() {
                let item_span = item.span();
                let item = item.into_inner();
                check_item(key, &item).map_err(|m| err(item_span, m))?;
                items.push(if key == "under" && !item.ends_with('/') {
                    format!("{item}/")
                } else {
                    item
                });
            }
            if items.is_empty() {
                return Err(err(list_span, format!("`{key}` is an empty list")));
            }
            all.push(match key {
                "under" => ClassMatcher::UnderDir(items),
                "name_is" => ClassMatcher::NameIs(items),
                "name_ends_with" => ClassMatcher::NameEndsWith(items),
                _ => ClassMatcher::NameStartsWith(items),
            });
        }
        let matcher = match all.len() {
            0 => {
                return Err(err(
                    rule_span,
                    format!(
                        "rule `{name}` matches nothing: give under, name_is, name_ends_with \
                         or name_starts_with"
                    ),
                ))
            }
            1 => all.remove(0),
            _ => ClassMatcher::All(all),
        };
        let Some(class) = r.class else {
            return Err(err(
                rule_span,
                format!("rule `{name}` has no `class` (one of {CLASSES})"),
            ));
        };
        let class_span = class.span();
        let class = class.into_inner();
        let Some(class) = FileClass::parse(&class) else {
            return Err(err(
                class_span,
                format!("unknown class `{class}` (expected one of {CLASSES})"),
            ));
        };
        rules.push(ClassRule {
            id: RuleId::intern(&name),
            matcher,
            class: ClassOf::Class(class),
        });
    }
    Ok(rules)
}

/// The built-in table with the rules of a rules file ahead of it (and its
/// data-directory rows merged into the table).
pub fn class_rules_from_file(text: &str, file: &str) -> Result<ClassRules, RulesFileError> {
    Ok(ClassRules::builtin()
        .with_user_rules(parse_rules_file(text, file)?)
        .with_user_data_dirs(parse_data_dirs(text, file)?))
}

/// Parse the `[[data_dir]]` rows of a rules file, in file order.
pub fn parse_data_dirs(text: &str, file: &str) -> Result<Vec<DataDirRule>, RulesFileError> {
    let err = |span: Range<usize>, message: String| error_at(text, file, span, message);
    let raw = read_raw(text, file)?;
    let builtin = builtin_data_dirs();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for spanned in raw.data_dir {
        let span = spanned.span();
        let r = spanned.into_inner();
        checked_name(
            r.name.clone(),
            span.clone(),
            &DATA_DIR_TABLE,
            &mut seen,
            text,
            file,
        )?;
        let name = r.name.map(Spanned::into_inner).unwrap_or_default();
        let replaces = builtin.iter().find(|b| b.id == name.as_str());
        let library = match (r.library, replaces) {
            (Some(l), _) => {
                let l_span = l.span();
                let l = l.into_inner();
                if l.is_empty() || l.contains('/') || l.chars().any(char::is_control) {
                    return Err(err(
                        l_span,
                        format!("`library` {l:?} must be a file name such as `libfoo.so`"),
                    ));
                }
                l
            }
            (None, Some(b)) => b.library.clone(),
            (None, None) => {
                return Err(err(
                    span,
                    format!("data_dir `{name}` has no `library` (the library's file name, e.g. `libfoo.so`)"),
                ))
            }
        };
        let base = match (r.base, replaces) {
            (Some(b), _) => {
                let b_span = b.span();
                let b = b.into_inner();
                DataBase::parse(&b).ok_or_else(|| {
                    err(
                        b_span,
                        format!("unknown base `{b}` (expected loaded-as or real-path)"),
                    )
                })?
            }
            (None, Some(b)) => b.base,
            (None, None) => DataBase::LoadedAs,
        };
        let Some(dirs) = r.dirs else {
            return Err(err(
                span,
                format!("data_dir `{name}` has no `dirs` (directories relative to the library; `[]` turns a built-in row off)"),
            ));
        };
        let dirs_span = dirs.span();
        let mut list = Vec::new();
        for d in dirs.into_inner() {
            let d_span = d.span();
            let d = d.into_inner();
            if d.is_empty() || d.starts_with('/') || d.chars().any(char::is_control) {
                return Err(err(
                    d_span,
                    format!("data_dir `{name}`: `dirs` entry {d:?} must be a non-empty path relative to the library's directory"),
                ));
            }
            let up = levels_up(&d);
            if up > MAX_DATA_DIR_LEVELS_UP {
                return Err(err(
                    d_span,
                    format!("data_dir `{name}`: `dirs` entry {d:?} leaves the store path it is resolved in (it climbs {up} levels above the library's directory; at most {MAX_DATA_DIR_LEVELS_UP}, to the top of a store path whose library is in `lib/`)"),
                ));
            }
            list.push(d);
        }
        if list.is_empty() && replaces.is_none() {
            return Err(err(
                dirs_span,
                format!("`dirs` is empty, and `{name}` is no built-in row to turn off"),
            ));
        }
        out.push(DataDirRule {
            id: replaces.map_or_else(|| RuleId::intern(&name), |b| b.id),
            library,
            base,
            dirs: list,
        });
    }
    Ok(out)
}

/// How far a data directory may climb above the library's directory: to the top of
/// the store path of a library in `lib/` (`../share/x/db`). Where the library sits
/// higher, `crate::reach` drops a directory that would leave its store path.
const MAX_DATA_DIR_LEVELS_UP: usize = 1;

/// How many levels `rel` (a relative path) climbs above where it starts, at most:
/// `../share` 1, `a/../../..` 2, `a/b` 0.
fn levels_up(rel: &str) -> usize {
    let (mut depth, mut up) = (0usize, 0usize);
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." if depth == 0 => up += 1,
            ".." => depth -= 1,
            _ => depth += 1,
        }
    }
    up
}

/// Why one entry of a match list is unusable, if it is.
fn check_item(key: &str, item: &str) -> Result<(), String> {
    if item.is_empty() {
        return Err(format!("`{key}` holds an empty string"));
    }
    if item.chars().any(char::is_control) {
        return Err(format!("`{key}` entry {item:?} holds control characters"));
    }
    if key == "under" {
        if item.starts_with('/') {
            return Err(format!(
                "`under` entry `{item}` must be relative to the store path (`lib/`, not `/lib/`)"
            ));
        }
        if item.split('/').any(|c| c == "." || c == "..") {
            return Err(format!(
                "`under` entry `{item}` must not hold `.` or `..` components"
            ));
        }
    } else if item.contains('/') {
        return Err(format!(
            "`{key}` entry `{item}` holds a `/`: it matches file names; use `under` for directories"
        ));
    }
    Ok(())
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{ClassFacts, EntryType};

    fn error(text: &str) -> RulesFileError {
        parse_rules_file(text, "rules.toml").expect_err("should be rejected")
    }

    #[test]
    fn a_good_file() {
        let text = r#"
# keep the tools
[[class]]
name = "my/keep-tools"
under = ["share/tools"]
class = "bin"

[[class]]
name = "my/gfx-models"
under = ["share/models/"]
name_ends_with = [".model"]
class = "gpu:gfx90a"
"#;
        let rules = class_rules_from_file(text, "rules.toml").unwrap();
        assert_eq!(rules.user_rules().len(), 2);
        assert_eq!(
            rules.user_rules()[0].matcher,
            ClassMatcher::UnderDir(vec!["share/tools/".into()])
        );
        let c = |p: &str| {
            rules.class_of(&ClassFacts {
                path: p.as_bytes(),
                entry: EntryType::Regular,
                head: b"",
                elf: None,
            })
        };
        assert_eq!(
            c("share/tools/x"),
            (FileClass::Bin, RuleId::intern("my/keep-tools"))
        );
        assert_eq!(c("share/models/a.model").0, FileClass::Gpu("gfx90a".into()));
        assert_eq!(c("share/models/a.txt").0, FileClass::Out);
        assert!(parse_rules_file("", "empty.toml").unwrap().is_empty());
    }

    #[test]
    fn errors_name_file_line_and_problem() {
        let cases: &[(&str, usize, &str)] = &[
            ("[[class]]\nname = \"a\"\nunder = [\"x/\"]\nclass = \"binary\"\n", 4, "unknown class `binary`"),
            ("[[class]]\nunder = [\"x/\"]\nclass = \"bin\"\n", 1, "has no `name`"),
            ("[[class]]\nname = \"a\"\nunder = [\"x/\"]\nclass = \"bin\"\n\n[[class]]\nname = \"a\"\nunder = [\"y/\"]\nclass = \"lib\"\n", 7, "duplicate rule name `a` (first used on line 2)"),
            ("[[class]]\nname = \"a\"\nundr = [\"x/\"]\nclass = \"bin\"\n", 3, "unknown field `undr`"),
            ("[[clas]]\nname = \"a\"\n", 1, "unknown field `clas`"),
            ("[[class]]\nname = \"a\"\nunder = [\"x/\"\nclass = \"bin\"\n", 4, ""),
            ("[[class]]\nname = \"a\"\nclass = \"bin\"\n", 1, "matches nothing"),
            ("[[class]]\nname = \"a\"\nunder = [\"x/\"]\n", 1, "has no `class`"),
            ("[[class]]\nname = \"a\"\nunder = []\nclass = \"bin\"\n", 3, "empty list"),
            ("[[class]]\nname = \"a\"\nunder = [\"/lib/\"]\nclass = \"bin\"\n", 3, "relative"),
            ("[[class]]\nname = \"a\"\nname_is = [\"lib/x\"]\nclass = \"bin\"\n", 3, "use `under`"),
            ("[[class]]\nname = \"class/lib\"\nunder = [\"x/\"]\nclass = \"bin\"\n", 2, "built-in rule"),
            ("[[class]]\nname = \"class/out\"\nunder = [\"x/\"]\nclass = \"bin\"\n", 2, "built-in rule"),
            ("[[class]]\nname = \"a b\"\nunder = [\"x/\"]\nclass = \"bin\"\n", 2, "spaces"),
            ("[[class]]\nname = \"a\"\nunder = \"x/\"\nclass = \"bin\"\n", 3, "invalid type"),
        ];
        for (text, line, what) in cases {
            let e = error(text);
            assert_eq!(e.file, "rules.toml");
            assert_eq!(e.line, *line, "{text:?}: {e}");
            assert!(e.message.contains(what), "{text:?}: {e}");
            assert!(
                e.to_string().starts_with(&format!("rules.toml:{line}:")),
                "{e}"
            );
        }
    }

    #[test]
    fn data_dir_rows() {
        let text = r#"
[[data_dir]]
name = "my/fastblas"
library = "libfastblas.so"
dirs = ["fastblas/library"]

[[data_dir]]
name = "data/rocblas-tensile"
dirs = []
"#;
        let rules = class_rules_from_file(text, "rules.toml").unwrap();
        let ids: Vec<String> = rules.data_dirs().iter().map(|r| r.id.to_string()).collect();
        assert_eq!(ids[0], "my/fastblas");
        assert!(!ids.contains(&"data/rocblas-tensile".to_string()));
        assert!(rules.is_user_data_dir(RuleId::intern("my/fastblas")));
        for (text, line, what) in [
            ("[[data_dir]]\nlibrary = \"libx.so\"\ndirs = [\"a\"]\n", 1, "no `name`"),
            ("[[data_dir]]\nname = \"x\"\ndirs = [\"a\"]\n", 1, "no `library`"),
            ("[[data_dir]]\nname = \"x\"\nlibrary = \"libx.so\"\n", 1, "no `dirs`"),
            ("[[data_dir]]\nname = \"x\"\nlibrary = \"libx.so\"\ndirs = []\n", 4, "no built-in row"),
            ("[[data_dir]]\nname = \"x\"\nlibrary = \"libx.so\"\ndirs = [\"/abs\"]\n", 4, "relative"),
            ("[[data_dir]]\nname = \"x\"\nlibrary = \"libx.so\"\nbase = \"here\"\ndirs = [\"a\"]\n", 4, "unknown base"),
            ("[[data_dir]]\nname = \"x\"\nlibrary = \"lib/x.so\"\ndirs = [\"a\"]\n", 3, "file name"),
            ("[[data_dir]]\nname = \"x\"\nlibrary = \"libx.so\"\ndirs = [\"../share\", \"../../../../etc\"]\n", 4, "data_dir `x`: `dirs` entry \"../../../../etc\" leaves the store path"),
            ("[[data_dir]]\nname = \"x\"\nlibrary = \"libx.so\"\ndirs = [\"a/../../..\"]\n", 4, "climbs 2 levels"),
        ] {
            let e = class_rules_from_file(text, "r.toml").expect_err(text);
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(what), "{text:?}: {e}");
        }
    }

    /// issue 31, item 11: `dirs = ["../../../../etc"]` was accepted; the error names
    /// the file, the entry's position and the rule.
    #[test]
    fn a_data_dir_leaving_its_store_path_is_refused_naming_the_rule() {
        let text = "[[data_dir]]\nname = \"my/etc\"\nlibrary = \"libx.so\"\ndirs = [\"../../../../etc\"]\n";
        let e = class_rules_from_file(text, "rules.toml").expect_err("must be refused");
        assert_eq!((e.line, e.column), (4, 9), "{e}");
        assert!(
            e.to_string().starts_with(
                "rules.toml:4:9: data_dir `my/etc`: `dirs` entry \"../../../../etc\" leaves the store path"
            ),
            "{e}"
        );
        for ok in ["../share/x/db", "a/../../b", "./x/./y"] {
            let text =
                format!("[[data_dir]]\nname = \"x\"\nlibrary = \"libx.so\"\ndirs = [{ok:?}]\n");
            assert!(class_rules_from_file(&text, "r.toml").is_ok(), "{ok}");
        }
        assert_eq!(levels_up("../.."), 2);
        assert_eq!(levels_up("a/b/../../../c"), 1);
    }

    #[test]
    fn positions() {
        assert_eq!(line_column("ab\ncd", 4), (2, 2));
        assert_eq!(line_column("ab\ncd", 0), (1, 1));
        assert_eq!(line_column("é\nx", 1), (1, 1));
        assert_eq!(line_column("x", 99), (1, 2));
    }

    #[test]
    fn hostile_text_does_not_panic() {
        for text in [
            "\u{0}",
            "[[class]]\nname = 5",
            "[[class]]]",
            "class = 1",
            "[class]\nname='a'",
            "\u{feff}[[class]]",
        ] {
            let _ = parse_rules_file(text, "x.toml");
        }
    }
}
