//! A binary cache directory: `nix-cache-info` (its `StoreDir`) and one `.narinfo` per
//! store path, plus where each path's NAR is ([`nar_locations`]) so that the scanner
//! can read file contents later. `nar/` and `<hash>.ls` listings are not read here.
//!
//! A `.narinfo` is `Key: value` lines: `StorePath` (full path), `URL` (relative, e.g.
//! `nar/<filehash>.nar.xz`), `Compression` (absent means bzip2), `FileHash`,
//! `FileSize`, `NarHash`, `NarSize`, `References` (space-separated base names, empty for
//! a leaf), `Deriver` (base name or `unknown-deriver`), `Sig` (repeatable), `CA`.
//! Unknown keys are ignored; a line without `:` or a bad value is an error naming the
//! file and line. The parser is our own rather than the `nix-narinfo` crate's: that
//! crate rejects records nixcut should still read (zero `NarSize`, missing `URL`) and
//! speaks `nix_derivation`'s types, not `crate::store`'s.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{found, LoadError, LoadOptions};
use crate::store::{Closure, NarHash, PathInfo, SourceKind, StoreDir, StorePath};

/// Where a path's NAR is in the cache, as its `.narinfo` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheEntry {
    /// `URL`, relative to the cache directory (e.g. `nar/<filehash>.nar.xz`).
    pub url: String,
    /// `Compression` (`bzip2` when the narinfo does not say): `none`, `xz`, `zstd` …
    pub compression: String,
    /// `FileSize`: the compressed file's size, when given.
    pub file_size: Option<u64>,
    /// `FileHash`, when given.
    pub file_hash: Option<String>,
}

impl CacheEntry {
    /// The NAR file under `cache_dir`, if the URL is a relative path that stays inside
    /// it and the file exists.
    pub fn nar_file(&self, cache_dir: &Path) -> Option<PathBuf> {
        let rel = Path::new(&self.url);
        let safe = !self.url.contains("://")
            && rel
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
        let p = cache_dir.join(rel);
        (safe && p.is_file()).then_some(p)
    }
}

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
        std::fs::read_to_string(&info_path).map_err(|e| LoadError::io(&info_path, e))?;
    let cache_sd = parse_cache_info(&info_text, &info_path)?;
    let mut warnings = Vec::new();
    let sd = match (cache_sd, &opts.store_dir) {
        (Some(c), Some(o)) => {
            if &c != o {
                warnings.push(format!(
                    "{} says the store directory is {c}, but {o} was given; using {c}",
                    info_path.display()
                ));
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
            Ok(m) => closure.warnings.push(format!(
                "{} is named like a narinfo but is not a file ({}); skipped",
                p.display(),
                if m.is_dir() {
                    "a directory"
                } else {
                    "not a regular file"
                }
            )),
            Err(e) => return Err(LoadError::io(&p, e)),
        }
    }
    files.sort();
    let mut locations = BTreeMap::new();
    for f in &files {
        let text = std::fs::read_to_string(f).map_err(|e| LoadError::io(f, e))?;
        let n = parse_narinfo(&text, f, &sd)?;
        closure.warnings.extend(n.warnings);
        let expected_name = format!("{}.narinfo", n.info.path.hash_part());
        if f.file_name()
            .is_some_and(|name| name != expected_name.as_str())
        {
            closure.warnings.push(format!(
                "{} describes {}, whose narinfo would be named {expected_name}",
                f.display(),
                sd.display(&n.info.path)
            ));
        }
        if let Some(entry) = n.entry {
            locations.insert(n.info.path.clone(), entry);
        }
        closure.insert(n.info);
    }
    if files.is_empty() {
        closure
            .warnings
            .push(format!("{} holds no .narinfo files", dir.display()));
    }
    Ok((closure, locations))
}

/// The `StoreDir` of a `nix-cache-info` file, if it names one.
pub(crate) fn parse_cache_info(text: &str, path: &Path) -> Result<Option<StoreDir>, LoadError> {
    let mut sd = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Some((k, v)) = line.split_once(':') else {
            return Err(LoadError::Text {
                path: path.to_path_buf(),
                line: i + 1,
                expected: "`Key: value`".into(),
                found: found(Some(line)),
            });
        };
        if k.trim() == "StoreDir" {
            let v = v.trim();
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
                    line: i + 1,
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

/// One parsed `.narinfo`.
#[derive(Debug, Clone)]
pub struct NarInfo {
    /// The path and its metadata.
    pub info: PathInfo,
    /// Where its NAR is; `None` when the narinfo has no `URL`.
    pub entry: Option<CacheEntry>,
    /// Problems that did not stop reading.
    pub warnings: Vec<String>,
}

/// Parse one `.narinfo`; `path` names it in messages.
pub fn parse_narinfo(text: &str, path: &Path, sd: &StoreDir) -> Result<NarInfo, LoadError> {
    let err = |line: usize, expected: &str, got: &str| LoadError::Text {
        path: path.to_path_buf(),
        line,
        expected: expected.to_string(),
        found: found(Some(got)),
    };
    let mut store_path = None;
    let mut url = None;
    let mut compression = None;
    let mut file_hash = None;
    let mut file_size = None;
    let mut nar_hash = None;
    let mut nar_size = None;
    let mut references = Vec::new();
    let mut deriver = None;
    let mut sigs = Vec::new();
    let mut ca = None;
    let mut warnings = Vec::new();
    // Line of each field seen: a second `NarSize:` is an edit or a concatenation, and
    // taking either value silently could be wrong. Only `Sig` repeats.
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(err(n, "`Key: value`", line));
        };
        if key != "Sig" {
            if let Some(first) = seen.insert(key, n) {
                return Err(err(
                    n,
                    &format!(
                        "no second `{}:` line (line {first} has one)",
                        super::sanitize(key, 40)
                    ),
                    line,
                ));
            }
        }
        let value = value.trim();
        match key {
            "StorePath" => {
                let sp = sd.parse_path(value).map_err(|e| {
                    let hint = super::json::with_store_dir_hint(&e, sd);
                    err(n, &format!("a store path ({hint})"), value)
                })?;
                store_path = Some(sp);
            }
            "URL" => url = Some(value.to_string()),
            "Compression" => compression = Some(value.to_string()),
            "FileHash" => file_hash = Some(value.to_string()),
            "FileSize" => {
                file_size = Some(
                    value
                        .parse()
                        .map_err(|_| err(n, "a FileSize number", value))?,
                )
            }
            "NarHash" => nar_hash = Some(NarHash::parse(value)),
            "NarSize" => {
                nar_size = Some(
                    value
                        .parse()
                        .map_err(|_| err(n, "a NarSize number", value))?,
                )
            }
            "References" => {
                references = value
                    .split_whitespace()
                    .map(|r| {
                        StorePath::from_base_name(r)
                            .map_err(|e| err(n, &format!("store path base names ({e})"), value))
                    })
                    .collect::<Result<_, _>>()?;
            }
            "Deriver" if value == "unknown-deriver" || value.is_empty() => deriver = None,
            "Deriver" => match sd.parse_path_or_base(value) {
                Ok(d) => deriver = Some(d),
                Err(e) => {
                    warnings.push(format!("{}:{n}: ignored the deriver: {e}", path.display()))
                }
            },
            "Sig" => sigs.push(value.to_string()),
            "CA" if !value.is_empty() => ca = Some(value.to_string()),
            _ => {} // unknown keys are ignored, as Nix does
        }
    }
    let Some(sp) = store_path else {
        return Err(LoadError::Invalid {
            path: path.to_path_buf(),
            message: "the narinfo has no `StorePath:` line".into(),
        });
    };
    let mut info = PathInfo::new(sp);
    info.nar_hash = nar_hash;
    info.nar_size = nar_size;
    info.references = references;
    info.deriver = deriver;
    info.signatures = sigs;
    info.ca = ca;
    info.normalise();
    if info.nar_size.is_none() {
        warnings.push(format!(
            "{}: no NarSize; the size of {} is unknown",
            path.display(),
            info.path
        ));
    }
    let entry = match url {
        Some(url) => Some(CacheEntry {
            url,
            compression: compression.unwrap_or_else(|| "bzip2".to_string()),
            file_size,
            file_hash,
        }),
        None => {
            warnings.push(format!(
                "{}: no URL; the NAR of {} cannot be found",
                path.display(),
                info.path
            ));
            None
        }
    };
    Ok(NarInfo {
        info,
        entry,
        warnings,
    })
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
            assert!(e.nar_file(&cache()).is_some(), "{e:?}");
        }
        let evil = CacheEntry {
            url: "../../etc/passwd".into(),
            compression: "none".into(),
            file_size: None,
            file_hash: None,
        };
        assert_eq!(evil.nar_file(&cache()), None);
    }

    #[test]
    fn narinfo_details() {
        let text = "StorePath: /nix/store/x71ahacbysflg2pf8638mdh69871353b-libfoo-3.2\n\
                    URL: nar/abc.nar\nNarHash: sha256:1xga7qa3wjdkhc71mbz9wm36q1nl7z2c95sl9529vindmjnrdn0z\n\
                    NarSize: 0\nReferences:\nDeriver: unknown-deriver\nSig: a:1\nSig: b:2\n\
                    FancyNewKey: whatever\n";
        let n = parse_narinfo(text, Path::new("x.narinfo"), &StoreDir::default()).unwrap();
        assert_eq!(n.info.nar_size, Some(0));
        assert_eq!(n.info.deriver, None);
        assert_eq!(n.info.signatures, vec!["a:1", "b:2"]);
        assert!(matches!(n.info.nar_hash, Some(NarHash::Sha256(_))));
        assert_eq!(n.entry.unwrap().compression, "bzip2");
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
