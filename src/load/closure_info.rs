//! A closureInfo output directory (nixpkgs' `closureInfo`): `registration` (read by
//! `super::registration`), `store-paths` (one path per line) and `total-nar-size`.
//!
//! The registration file is the source of truth; the other two are cross-checked
//! against it and any disagreement becomes a warning on the [`Closure`].

use std::collections::BTreeSet;
use std::path::Path;

use super::read::read_text_file;
use super::registration::{self, RecordKind};
use super::{LoadError, LoadOptions};
use crate::store::{Closure, LoadWarning, SourceKind, StorePath};

/// Read a closureInfo directory.
pub fn load_dir(dir: &Path, opts: &LoadOptions) -> Result<Closure, LoadError> {
    let reg_path = dir.join("registration");
    let cap = opts.max_input();
    let text = read_text_file(&reg_path, cap).map_err(|e| LoadError::io(&reg_path, e))?;
    let kind = registration::sniff(&text).unwrap_or(RecordKind::Registration);
    let store_dir = opts.store_dir_or_default();
    let mut c = registration::parse(&text, kind, &reg_path, &store_dir)?;
    c.source = SourceKind::ClosureInfo;
    c.origin = dir.display().to_string();
    check_store_paths(dir, cap, &mut c);
    check_total_size(dir, cap, &mut c);
    Ok(c)
}

fn check_store_paths(dir: &Path, cap: u64, c: &mut Closure) {
    let p = dir.join("store-paths");
    let text = match read_text_file(&p, cap) {
        Ok(t) => t,
        Err(e) => {
            c.warnings.push(LoadWarning::CannotCrossCheck {
                file: p.display().to_string(),
                problem: e.to_string(),
            });
            return;
        }
    };
    let mut listed = BTreeSet::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if l.is_empty() {
            continue;
        }
        match c.store_dir.parse_path(l) {
            Ok(sp) => {
                listed.insert(sp);
            }
            Err(e) => c.warnings.push(LoadWarning::NotAStorePath {
                file: p.display().to_string(),
                line: i as u64 + 1,
                error: e.to_string(),
            }),
        }
    }
    let registered: BTreeSet<StorePath> = c.paths.keys().cloned().collect();
    let only_listed: Vec<_> = listed.difference(&registered).collect();
    let only_registered: Vec<_> = registered.difference(&listed).collect();
    if let Some(first) = only_listed.first() {
        c.warnings.push(LoadWarning::ListsUnregistered {
            file: p.display().to_string(),
            count: only_listed.len() as u64,
            first: first.to_string(),
        });
    }
    if let Some(first) = only_registered.first() {
        c.warnings.push(LoadWarning::OmitsRegistered {
            file: p.display().to_string(),
            count: only_registered.len() as u64,
            first: first.to_string(),
        });
    }
}

fn check_total_size(dir: &Path, cap: u64, c: &mut Closure) {
    let p = dir.join("total-nar-size");
    let text = match read_text_file(&p, cap) {
        Ok(t) => t,
        Err(e) => {
            c.warnings.push(LoadWarning::CannotCrossCheck {
                file: p.display().to_string(),
                problem: e.to_string(),
            });
            return;
        }
    };
    let Ok(total) = text.trim().parse::<u64>() else {
        c.warnings.push(LoadWarning::TotalNotANumber {
            file: p.display().to_string(),
            found: super::sanitize(text.trim(), 40),
        });
        return;
    };
    let sum = c
        .paths
        .values()
        .filter_map(|i| i.nar_size)
        .fold(0u64, u64::saturating_add);
    if sum != total {
        c.warnings.push(LoadWarning::TotalDiffers {
            file: p.display().to_string(),
            says: total,
            sum,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy_fixture() -> tempfile::TempDir {
        let src = format!(
            "{}/tests/fixtures/load/closure-info",
            env!("CARGO_MANIFEST_DIR")
        );
        let dir = tempfile::tempdir().unwrap();
        for f in ["registration", "store-paths", "total-nar-size"] {
            std::fs::copy(format!("{src}/{f}"), dir.path().join(f)).unwrap();
        }
        dir
    }

    #[test]
    fn reads_and_cross_checks() {
        let dir = copy_fixture();
        let c = load_dir(dir.path(), &LoadOptions::default()).unwrap();
        assert_eq!(c.source, SourceKind::ClosureInfo);
        assert_eq!(c.paths.len(), 5);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        let total: u64 = c.paths.values().filter_map(|i| i.nar_size).sum();
        assert_eq!(total, 2248);
    }

    #[test]
    fn warns_on_mismatch() {
        let dir = copy_fixture();
        std::fs::write(dir.path().join("total-nar-size"), "9999\n").unwrap();
        let sp = std::fs::read_to_string(dir.path().join("store-paths")).unwrap();
        let fewer: Vec<&str> = sp.lines().skip(1).collect();
        std::fs::write(dir.path().join("store-paths"), fewer.join("\n")).unwrap();
        let c = load_dir(dir.path(), &LoadOptions::default()).unwrap();
        assert!(
            c.warnings.iter().any(|w| w.to_string().contains("9999")),
            "{:?}",
            c.warnings
        );
        assert!(
            c.warnings.iter().any(|w| w.to_string().contains("omits 1")),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn missing_registration_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let e = load_dir(dir.path(), &LoadOptions::default()).unwrap_err();
        assert!(e.to_string().contains("registration"), "{e}");
    }
}
