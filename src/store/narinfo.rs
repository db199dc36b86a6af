//! The `.narinfo` format, parsed: text in, a [`Narinfo`] or a [`NarinfoError`] out, no
//! I/O. The binary cache loaders (`crate::load::binary_cache`, `crate::load::http_cache`)
//! word its errors and warnings with the file or URL they read; the HTTP file source
//! (`crate::source`) finds NARs through it.
//!
//! A `.narinfo` is `Key: value` lines: `StorePath` (full path), `URL` (relative, e.g.
//! `nar/<filehash>.nar.xz`), `Compression` (absent means bzip2), `FileHash`,
//! `FileSize`, `NarHash`, `NarSize`, `References` (space-separated base names, empty for
//! a leaf), `Deriver` (base name or `unknown-deriver`), `Sig` (repeatable), `CA`.
//! Unknown keys are ignored, as Nix does; a line without `:`, a repeated key other than
//! `Sig`, or a bad value is an error naming the line. The parser is our own rather than
//! the `nix-narinfo` crate's: that crate rejects records nixcut should still read (zero
//! `NarSize`, missing `URL`) and speaks `nix_derivation`'s types, not this module's.
//! [`key_values`] is the `Key: value` framing alone, which `nix-cache-info` shares.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use super::{NarHash, PathInfo, StoreDir, StorePath, StorePathError};

/// Where a path's NAR is in the cache, as its `.narinfo` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheEntry {
    /// `URL`, relative to the cache (e.g. `nar/<filehash>.nar.xz`).
    pub url: String,
    /// `Compression` (`bzip2` when the narinfo does not say): `none`, `xz`, `zstd` …
    pub compression: String,
    /// `FileSize`: the compressed file's size, when given.
    pub file_size: Option<u64>,
    /// `FileHash`, when given.
    pub file_hash: Option<String>,
}

impl CacheEntry {
    /// The URL as a relative path that stays inside the cache directory; `None` for a
    /// URL with a scheme, an absolute path, `.` or `..`.
    pub fn relative_path(&self) -> Option<&Path> {
        let rel = Path::new(&self.url);
        let safe = !self.url.contains("://")
            && rel.components().all(|c| matches!(c, Component::Normal(_)));
        safe.then_some(rel)
    }
}

/// One parsed `.narinfo`.
#[derive(Debug, Clone)]
pub struct Narinfo {
    /// The path and its metadata.
    pub info: PathInfo,
    /// Where its NAR is; `None` when the narinfo has no `URL`.
    pub entry: Option<CacheEntry>,
    /// Problems that did not stop reading.
    pub warnings: Vec<NarinfoWarning>,
}

/// A problem in a narinfo that does not stop reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NarinfoWarning {
    /// The `Deriver` is not a store path; it is left out.
    DeriverIgnored {
        /// 1-based line.
        line: usize,
        /// Why it is not a store path.
        error: StorePathError,
    },
    /// No `NarSize`: the path's size is unknown.
    NoNarSize,
    /// No `URL`: the path's NAR cannot be found.
    NoUrl,
}

/// Why a narinfo cannot be read. Every variant but [`NarinfoError::NoStorePath`] names
/// the 1-based line and holds the offending text as found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NarinfoError {
    /// A line that is not `Key: value`.
    #[error("line {line}: not `Key: value`")]
    NotKeyValue {
        /// 1-based line.
        line: usize,
        /// The line.
        text: String,
    },
    /// A key other than `Sig` given a second time.
    #[error("line {line}: a second `{key}:` line (line {first} has one)")]
    Repeated {
        /// 1-based line.
        line: usize,
        /// The key.
        key: String,
        /// The line of its first occurrence.
        first: usize,
        /// The line.
        text: String,
    },
    /// `StorePath` is not a store path of the store directory.
    #[error("line {line}: {error}")]
    StorePath {
        /// 1-based line.
        line: usize,
        /// The value.
        value: String,
        /// Why it is not a store path.
        error: StorePathError,
    },
    /// `FileSize` or `NarSize` is not a number.
    #[error("line {line}: {key} is not a number")]
    Number {
        /// 1-based line.
        line: usize,
        /// `FileSize` or `NarSize`.
        key: &'static str,
        /// The value.
        value: String,
    },
    /// A `References` entry is not a store path base name.
    #[error("line {line}: {error}")]
    References {
        /// 1-based line.
        line: usize,
        /// The whole value.
        value: String,
        /// Why an entry is not a base name.
        error: StorePathError,
    },
    /// No `StorePath` line at all.
    #[error("no `StorePath:` line")]
    NoStorePath,
}

/// The fields of a narinfo as read, before they are checked for completeness.
#[derive(Default)]
struct Fields {
    store_path: Option<StorePath>,
    url: Option<String>,
    compression: Option<String>,
    file_hash: Option<String>,
    file_size: Option<u64>,
    nar_hash: Option<NarHash>,
    nar_size: Option<u64>,
    references: Vec<StorePath>,
    deriver: Option<StorePath>,
    sigs: Vec<String>,
    ca: Option<String>,
    warnings: Vec<NarinfoWarning>,
}

/// One `Key: value` line of a narinfo or a `nix-cache-info`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyValue<'a> {
    /// 1-based line.
    pub line: usize,
    /// What stands before the first `:`, as written.
    pub key: &'a str,
    /// What stands after it, trimmed.
    pub value: &'a str,
    /// The whole line.
    pub text: &'a str,
}

/// A non-blank line without a `:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotKeyValue<'a> {
    /// 1-based line.
    pub line: usize,
    /// The line.
    pub text: &'a str,
}

/// The `Key: value` lines of `text` in order, blank lines skipped: the framing that
/// `.narinfo` and `nix-cache-info` files share.
pub fn key_values(text: &str) -> impl Iterator<Item = Result<KeyValue<'_>, NotKeyValue<'_>>> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| match line.split_once(':') {
            Some((key, value)) => Ok(KeyValue {
                line: i + 1,
                key,
                value: value.trim(),
                text: line,
            }),
            None => Err(NotKeyValue {
                line: i + 1,
                text: line,
            }),
        })
}

/// Parse one `.narinfo` whose store paths are in `sd`.
pub fn parse(text: &str, sd: &StoreDir) -> Result<Narinfo, NarinfoError> {
    let mut f = Fields::default();
    // Line of each field seen: a second `NarSize:` is an edit or a concatenation, and
    // taking either value silently could be wrong. Only `Sig` repeats.
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for field in key_values(text) {
        let KeyValue {
            line: n,
            key,
            value,
            text: line,
        } = field.map_err(|NotKeyValue { line, text }| NarinfoError::NotKeyValue {
            line,
            text: text.to_string(),
        })?;
        if key != "Sig" {
            if let Some(first) = seen.insert(key, n) {
                return Err(NarinfoError::Repeated {
                    line: n,
                    key: key.to_string(),
                    first,
                    text: line.to_string(),
                });
            }
        }
        f.read(n, key, value, sd)?;
    }
    f.finish()
}

impl Fields {
    /// Take in the field `key` with `value` from line `n`.
    fn read(
        &mut self,
        n: usize,
        key: &str,
        value: &str,
        sd: &StoreDir,
    ) -> Result<(), NarinfoError> {
        let number = |key: &'static str| {
            value.parse().map_err(|_| NarinfoError::Number {
                line: n,
                key,
                value: value.to_string(),
            })
        };
        match key {
            "StorePath" => {
                let sp = sd
                    .parse_path(value)
                    .map_err(|error| NarinfoError::StorePath {
                        line: n,
                        value: value.to_string(),
                        error,
                    })?;
                self.store_path = Some(sp);
            }
            "URL" => self.url = Some(value.to_string()),
            "Compression" => self.compression = Some(value.to_string()),
            "FileHash" => self.file_hash = Some(value.to_string()),
            "FileSize" => self.file_size = Some(number("FileSize")?),
            "NarHash" => self.nar_hash = Some(NarHash::parse(value)),
            "NarSize" => self.nar_size = Some(number("NarSize")?),
            "References" => {
                self.references = value
                    .split_whitespace()
                    .map(|r| {
                        StorePath::from_base_name(r).map_err(|error| NarinfoError::References {
                            line: n,
                            value: value.to_string(),
                            error,
                        })
                    })
                    .collect::<Result<_, _>>()?;
            }
            "Deriver" if value == "unknown-deriver" || value.is_empty() => self.deriver = None,
            "Deriver" => match sd.parse_path_or_base(value) {
                Ok(d) => self.deriver = Some(d),
                Err(error) => self
                    .warnings
                    .push(NarinfoWarning::DeriverIgnored { line: n, error }),
            },
            "Sig" => self.sigs.push(value.to_string()),
            "CA" if !value.is_empty() => self.ca = Some(value.to_string()),
            _ => {} // unknown keys are ignored, as Nix does
        }
        Ok(())
    }

    /// The narinfo, once every line is read.
    fn finish(self) -> Result<Narinfo, NarinfoError> {
        let sp = self.store_path.ok_or(NarinfoError::NoStorePath)?;
        let mut warnings = self.warnings;
        let mut info = PathInfo::new(sp);
        info.nar_hash = self.nar_hash;
        info.nar_size = self.nar_size;
        info.references = self.references;
        info.deriver = self.deriver;
        info.signatures = self.sigs;
        info.ca = self.ca;
        info.download_size = self.file_size;
        info.normalise();
        if info.nar_size.is_none() {
            warnings.push(NarinfoWarning::NoNarSize);
        }
        let entry = match self.url {
            Some(url) => Some(CacheEntry {
                url,
                compression: self.compression.unwrap_or_else(|| "bzip2".to_string()),
                file_size: self.file_size,
                file_hash: self.file_hash,
            }),
            None => {
                warnings.push(NarinfoWarning::NoUrl);
                None
            }
        };
        Ok(Narinfo {
            info,
            entry,
            warnings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIBFOO: &str = "StorePath: /nix/store/x71ahacbysflg2pf8638mdh69871353b-libfoo-3.2\n";

    #[test]
    fn details() {
        let text = format!(
            "{LIBFOO}URL: nar/abc.nar\n\
             NarHash: sha256:1xga7qa3wjdkhc71mbz9wm36q1nl7z2c95sl9529vindmjnrdn0z\n\
             NarSize: 0\nReferences:\nDeriver: unknown-deriver\nSig: a:1\nSig: b:2\n\
             FancyNewKey: whatever\n"
        );
        let n = parse(&text, &StoreDir::default()).unwrap();
        assert_eq!(n.info.nar_size, Some(0));
        assert_eq!(n.info.deriver, None);
        assert_eq!(n.info.signatures, vec!["a:1", "b:2"]);
        assert!(matches!(n.info.nar_hash, Some(NarHash::Sha256(_))));
        assert_eq!(n.entry.unwrap().compression, "bzip2");
        assert!(n.warnings.is_empty(), "{:?}", n.warnings);
    }

    #[test]
    fn missing_fields_warn() {
        let text = format!("{LIBFOO}Deriver: not a path\n");
        let n = parse(&text, &StoreDir::default()).unwrap();
        assert!(n.entry.is_none());
        assert!(matches!(
            n.warnings[..],
            [
                NarinfoWarning::DeriverIgnored { line: 2, .. },
                NarinfoWarning::NoNarSize,
                NarinfoWarning::NoUrl
            ]
        ));
    }

    #[test]
    fn errors_name_the_line() {
        let sd = StoreDir::default();
        let e = parse(&format!("{LIBFOO}NarSize: lots\n"), &sd).unwrap_err();
        assert!(matches!(
            e,
            NarinfoError::Number {
                line: 2,
                key: "NarSize",
                ..
            }
        ));
        let e = parse("garbage\n", &sd).unwrap_err();
        assert!(matches!(e, NarinfoError::NotKeyValue { line: 1, .. }));
        assert_eq!(
            parse("URL: x\n", &sd).unwrap_err(),
            NarinfoError::NoStorePath
        );
        let text = format!("{LIBFOO}NarSize: 1\nSig: a:1\nSig: b:2\nNarSize: 2\n");
        let e = parse(&text, &sd).unwrap_err();
        assert!(matches!(
            e,
            NarinfoError::Repeated {
                line: 5,
                first: 2,
                ..
            }
        ));
        let e = parse(&format!("{LIBFOO}References: nope\n"), &sd).unwrap_err();
        assert!(matches!(e, NarinfoError::References { line: 2, .. }));
        let e = parse("StorePath: /elsewhere/x\n", &sd).unwrap_err();
        assert!(matches!(e, NarinfoError::StorePath { line: 1, .. }));
    }

    #[test]
    fn relative_paths_stay_inside_the_cache() {
        let entry = |url: &str| CacheEntry {
            url: url.into(),
            compression: "none".into(),
            file_size: None,
            file_hash: None,
        };
        assert_eq!(
            entry("nar/x.nar").relative_path(),
            Some(Path::new("nar/x.nar"))
        );
        for bad in [
            "../../etc/passwd",
            "/etc/passwd",
            "http://x/nar",
            "nar/../x",
        ] {
            assert_eq!(entry(bad).relative_path(), None, "{bad}");
        }
    }
}
