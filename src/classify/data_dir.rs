//! Data-directory rules: the directories (or files) a library opens beside itself at
//! run time, for libraries that build those paths at run time where their strings do
//! not say it (`crate::reach` reads the strings first). Reaching the library reaches
//! these, and everything below them.
//!
//! The built-in rows are the fallback table for ROCm (see `docs/reachability.md`),
//! taken from the one table of GPU libraries (`gpu_libs.rs`, one row per library that
//! opens data); a rules file adds rows
//! with `[[data_dir]]`, and a row named like a built-in one
//! replaces it (`dirs = []` turns it off).

pub use super::gpu_libs::DataBase;
use super::RuleId;

/// One row: a library (file name `library` or `library.<version>`) and the directories,
/// relative to [`DataBase`], it opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDirRule {
    /// The rule's name.
    pub id: RuleId,
    /// The library's unversioned file name.
    pub library: String,
    /// Where `dirs` are counted from.
    pub base: DataBase,
    /// The directories (or files) it opens, relative to the base, in the order tried.
    pub dirs: Vec<String>,
}

impl DataDirRule {
    /// Whether a file named `name` is this library (`librocblas.so`, `librocblas.so.3`).
    pub fn applies_to(&self, name: &[u8]) -> bool {
        let lib = self.library.as_bytes();
        name == lib || (name.starts_with(lib) && name.get(lib.len()) == Some(&b'.'))
    }
}

/// The built-in table: the data each library of [`super::GPU_LIBRARIES`] opens.
pub fn builtin_data_dirs() -> Vec<DataDirRule> {
    super::GPU_LIBRARIES
        .iter()
        .filter_map(|l| l.data)
        .map(|d| DataDirRule {
            id: RuleId::new(d.rule),
            library: d.library.to_string(),
            base: d.base,
            dirs: d.dirs.iter().map(|d| d.to_string()).collect(),
        })
        .collect()
}

/// The built-in table, built once.
pub fn data_dir_rules() -> &'static [DataDirRule] {
    static RULES: std::sync::OnceLock<Vec<DataDirRule>> = std::sync::OnceLock::new();
    RULES.get_or_init(builtin_data_dirs)
}

/// The built-in rows with a user's rows merged in: a user row named like a built-in one
/// takes its place (an empty `dirs` removes it), the others go ahead of the table.
pub fn merge_data_dirs(builtin: Vec<DataDirRule>, user: Vec<DataDirRule>) -> Vec<DataDirRule> {
    let mut out: Vec<DataDirRule> = Vec::new();
    let mut rest = builtin;
    for u in user {
        if let Some(i) = rest.iter().position(|b| b.id == u.id) {
            if u.dirs.is_empty() {
                rest.remove(i);
            } else {
                rest[i] = u;
            }
        } else if !u.dirs.is_empty() {
            out.push(u);
        }
    }
    out.extend(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_names_with_versions() {
        let r = &data_dir_rules()[0];
        assert!(r.applies_to(b"librocblas.so"));
        assert!(r.applies_to(b"librocblas.so.3.1.0"));
        assert!(!r.applies_to(b"librocblas.so3"));
        assert!(!r.applies_to(b"librocblas.a"));
    }

    #[test]
    fn user_rows_replace_remove_and_add() {
        let u = |id: &str, dirs: &[&str]| DataDirRule {
            id: RuleId::intern(id),
            library: "libx.so".into(),
            base: DataBase::LoadedAs,
            dirs: dirs.iter().map(|d| d.to_string()).collect(),
        };
        let builtin = builtin_data_dirs();
        let id = |i: usize| builtin[i].id.to_string();
        let m = merge_data_dirs(
            builtin.clone(),
            vec![
                u(&id(0), &[]),
                u(&id(2), &["db"]),
                u("my/x", &["x/library"]),
            ],
        );
        let ids: Vec<String> = m.iter().map(|r| r.id.to_string()).collect();
        let mut want = vec!["my/x".to_string()];
        want.extend((1..builtin.len()).map(id));
        assert_eq!(ids, want);
        assert_eq!(m[2].dirs, ["db"]);
        assert_eq!(m[1].dirs, builtin[1].dirs);
    }
}
