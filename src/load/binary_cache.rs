//! A binary cache directory: `nix-cache-info` (its `StoreDir`) and one `.narinfo` per
//! store path, plus where each path's NAR is ([`nar_locations`]) so that the scanner
//! can read file contents later. `nar/` and `<hash>.ls` listings are not read here.
//!
//! The `.narinfo` format is parsed by `crate::store::narinfo`; [`parse_narinfo`] words
//! its errors and warnings with the file (or URL) it was read from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::read::read_text_file;
use super::{found, LoadError, LoadOptions};
use crate::store::narinfo::{self, NarinfoError, NarinfoWarning};
use crate::store::{Closure, LoadWarning, PathInfo, SourceKind, StoreDir, StorePath};

pub use crate::store::narinfo::CacheEntry;

/// Read a binary cache directory into a closure of every path it holds.
pub fn load_dir(dir: &Path, opts: &LoadOptions) -> Result<Closure, LoadError> {
    read_cache(dir, opts).map(|(c, _)| c)
}

/// Where each path's NAR is in the binary cache at `dir`.
pub fn nar_locations(dir: &Path) -> Result<BTreeMap<StorePath, CacheEntry>, LoadError> {
    read_cache(dir, &LoadOptions::default()).map(|(_, l)| l)
}

/// Read the cache: the closure and the NAR locations.
pub fn read_cache(
    dir: &Path,
    opts: &LoadOptions,
) -> Result<(Closure, BTreeMap<StorePath, CacheEntry>), LoadError> {
    let info_path = dir.join("nix-cache-info");
    let info_text =
        read_text_file(&info_path, opts.max_input()).map_err(|e| LoadError::io(&info_path, e))?;
    let cache_sd = parse_cache_info(&info_text, &info_path)?;
    let mut warnings = Vec::new();
    let sd = match (cache_sd, &opts.store_dir) {
        (Some(c), Some(o)) => {
            if &c != o {
                warnings.push(LoadWarning::StoreDirDiffers {
                    file: info_path.display().to_string(),
                    says: c.to_string(),
                    given: o.to_string(),
                });
            }
            c
        }
        (Some(c), None) => c,
        (None, o) => o.clone().unwrap_or_default(),
    };
    let mut closure = Closure::new(
        sd.clone(),
        SourceKind::BinaryCache,
        dir.display().to_string(),
    );
    closure.warnings = warnings;
    let mut files: Vec<PathBuf> = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| LoadError::io(dir, e))? {
        let p = entry.map_err(|e| LoadError::io(dir, e))?.path();
        if p.extension().is_none_or(|x| x != "narinfo") {
            continue;
        }
        match std::fs::metadata(&p) {
            Ok(m) if m.is_file() => files.push(p),
            Ok(m) => closure.warnings.push(LoadWarning::NotAFile {
                file: p.display().to_string(),
                directory: m.is_dir(),
            }),
            Err(e) => return Err(LoadError::io(&p, e)),
        }
    }
    files.sort();
    let mut locations = BTreeMap::new();
    for f in &files {
        let text = read_text_file(f, opts.max_input()).map_err(|e| LoadError::io(f, e))?;
        let n = parse_narinfo(&text, f, &sd)?;
        closure.warnings.extend(n.warnings);
        let expected_name = format!("{}.narinfo", n.info.path.hash_part());
        if f.file_name()
            .is_some_and(|name| name != expected_name.as_str())
        {
            closure.warnings.push(LoadWarning::NarinfoMisnamed {
                file: f.display().to_string(),
                path: sd.display(&n.info.path),
                expected: expected_name,
            });
        }
        if let Some(entry) = n.entry {
            locations.insert(n.info.path.clone(), entry);
        }
        closure.insert(n.info);
    }
    if files.is_empty() {
        closure.warnings.push(LoadWarning::NoNarinfos {
            dir: dir.display().to_string(),
        });
    }
    Ok((closure, locations))
}

/// The `StoreDir` of a `nix-cache-info` file, if it names one.
pub(crate) fn parse_cache_info(text: &str, path: &Path) -> Result<Option<StoreDir>, LoadError> {
    let mut sd = None;
    for field in narinfo::key_values(text) {
        let field = field.map_err(|bad| LoadError::Text {
            path: path.to_path_buf(),
            line: bad.line,
            expected: "`Key: value`".into(),
            found: found(Some(bad.text)),
        })?;
        if field.key.trim() == "StoreDir" {
            let v = field.value;
            // Store paths are joined to it: `/`, `../../etc` or `/nix/../etc` would
            // put them anywhere.
            let plain = v.starts_with('/')
                && v.len() > 1
                && !v.ends_with('/')
                && v[1..]
                    .split('/')
                    .all(|c| !c.is_empty() && c != "." && c != "..");
            if !plain {
                return Err(LoadError::Text {
                    path: path.to_path_buf(),
                    line: field.line,
                    expected: "a StoreDir that is an absolute directory other than `/`, \
                               without `.` or `..` (such as /nix/store)"
                        .into(),
                    found: found(Some(v)),
                });
            }
            sd = Some(StoreDir::new(v));
        }
    }
    Ok(sd)
}

/// One parsed `.narinfo`, its warnings as [`LoadWarning`]s naming the file.
#[derive(Debug, Clone)]
pub struct NarInfo {
    /// The path and its metadata.
    pub info: PathInfo,
    /// Where its NAR is; `None` when the narinfo has no `URL`.
    pub entry: Option<CacheEntry>,
    /// Problems that did not stop reading.
    pub warnings: Vec<LoadWarning>,
}

/// Parse one `.narinfo` (with `crate::store::narinfo`); `path` names it in messages.
pub fn parse_narinfo(text: &str, path: &Path, sd: &StoreDir) -> Result<NarInfo, LoadError> {
    let n = narinfo::parse(text, sd).map_err(|e| narinfo_error(e, path, sd))?;
    let warnings = n
        .warnings
        .iter()
        .map(|w| match w {
            NarinfoWarning::DeriverIgnored { line, error } => LoadWarning::DeriverIgnored {
                file: path.display().to_string(),
                line: Some(*line as u64),
                path: None,
                error: error.to_string(),
            },
            NarinfoWarning::NoNarSize => LoadWarning::NarinfoNoSize {
                file: path.display().to_string(),
                path: n.info.path.to_string(),
            },
            NarinfoWarning::NoUrl => LoadWarning::NarinfoNoUrl {
                file: path.display().to_string(),
                path: n.info.path.to_string(),
            },
        })
        .collect();
    Ok(NarInfo {
        info: n.info,
        entry: n.entry,
        warnings,
    })
}

/// A narinfo's error as a [`LoadError`] naming the file and line.
fn narinfo_error(e: NarinfoError, path: &Path, sd: &StoreDir) -> LoadError {
    let text = |line: usize, expected: String, got: &str| LoadError::Text {
        path: path.to_path_buf(),
        line,
        expected,
        found: found(Some(got)),
    };
    match e {
        NarinfoError::NotKeyValue { line, text: got } => text(line, "`Key: value`".into(), &got),
        NarinfoError::Repeated {
            line,
            key,
            first,
            text: got,
        } => text(
            line,
            format!(
                "no second `{}:` line (line {first} has one)",
                super::sanitize(&key, 40)
            ),
            &got,
        ),
        NarinfoError::StorePath { line, value, error } => {
            let hint = super::json::with_store_dir_hint(&error, sd);
            text(line, format!("a store path ({hint})"), &value)
        }
        NarinfoError::Number { line, key, value } => text(line, format!("a {key} number"), &value),
        NarinfoError::References { line, value, error } => {
            text(line, format!("store path base names ({error})"), &value)
        }
        NarinfoError::NoStorePath => LoadError::Invalid {
            path: path.to_path_buf(),
            message: "the narinfo has no `StorePath:` line".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache() -> PathBuf {
        PathBuf::from(format!(
            "{}/tests/fixtures/load/binary-cache",
            env!("CARGO_MANIFEST_DIR")
        ))
    }

    #[test]
    fn reads_the_cache() {
        let c = load_dir(&cache(), &LoadOptions::default()).unwrap();
        assert_eq!(c.source, SourceKind::BinaryCache);
        assert_eq!(c.paths.len(), 5);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        let app = c
            .paths
            .values()
            .find(|i| i.path.name() == "app-1.0")
            .unwrap();
        assert_eq!(app.references.len(), 4);
        assert_eq!(app.nar_size, Some(664));
        assert_eq!(app.deriver.as_ref().map(|d| d.name()), Some("app-1.0.drv"));
        let base = c
            .paths
            .values()
            .find(|i| i.path.name() == "libbase-1.0")
            .unwrap();
        assert!(base.references.is_empty(), "`References: ` is a leaf");
    }

    #[test]
    fn nar_locations_point_at_files() {
        let locs = nar_locations(&cache()).unwrap();
        assert_eq!(locs.len(), 5);
        for e in locs.values() {
            assert_eq!(e.compression, "xz");
            assert!(e.file_size.is_some());
            let rel = e.relative_path().unwrap_or_else(|| panic!("{e:?}"));
            assert!(cache().join(rel).is_file(), "{e:?}");
        }
        let evil = CacheEntry {
            url: "../../etc/passwd".into(),
            compression: "none".into(),
            file_size: None,
            file_hash: None,
        };
        assert_eq!(evil.relative_path(), None);
    }

    #[test]
    fn narinfo_errors_name_file_and_line() {
        let sd = StoreDir::default();
        let p = Path::new("bad.narinfo");
        let text = "StorePath: /nix/store/x71ahacbysflg2pf8638mdh69871353b-libfoo-3.2\n\
                    NarSize: lots\n";
        let e = parse_narinfo(text, p, &sd).unwrap_err().to_string();
        assert!(
            e.starts_with("bad.narinfo:2: expected a NarSize number"),
            "{e}"
        );
        let e = parse_narinfo("garbage\n", p, &sd).unwrap_err().to_string();
        assert!(e.starts_with("bad.narinfo:1: expected `Key: value`"), "{e}");
        let e = parse_narinfo("URL: x\n", p, &sd).unwrap_err().to_string();
        assert!(e.contains("no `StorePath:`"), "{e}");
        let text = "StorePath: /nix/store/x71ahacbysflg2pf8638mdh69871353b-libfoo-3.2\n\
                    NarSize: 1\nSig: a:1\nSig: b:2\nNarSize: 2\n";
        let e = parse_narinfo(text, p, &sd).unwrap_err().to_string();
        assert!(
            e.starts_with("bad.narinfo:5: expected no second `NarSize:` line (line 2 has one)"),
            "{e}"
        );
    }
}
