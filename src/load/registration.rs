//! Registration records (`nix-store --dump-db`, closureInfo's `registration`) and the
//! sizeless records of a non-structured `exportReferencesGraph` file.
//!
//! A registration record is the lines `path`, `hash`, `narSize`, `deriver` (empty when
//! none), `N`, then N reference paths. `--dump-db` writes the hash as bare base16,
//! closureInfo as `sha256:<nix32>`. An `exportReferencesGraph` record lacks the hash and
//! size lines: `path`, deriver (empty), `N`, references; its paths get no NAR size and
//! the closure a warning that sizes are unknown. The two are told apart by the first
//! record: a hash on line 2 and a number on line 3 make a registration file.
//! `super::closure_info` reads a closureInfo directory with this module.

use std::path::Path;

use super::{found, LoadError};
use crate::store::{Closure, LoadWarning, NarHash, PathInfo, SourceKind, StoreDir, StorePath};

/// Which of the two record layouts a file has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// `path`, `hash`, `narSize`, `deriver`, `N`, references.
    Registration,
    /// `path`, `deriver`, `N`, references (non-structured `exportReferencesGraph`).
    ExportReferencesGraph,
}

/// Tell the layouts apart by the first record; `None` when the text is neither.
///
/// Line 1 must look like a store path. A hash on line 2 makes a registration file, an
/// empty line or a path (the deriver) an `exportReferencesGraph` file. Line 3 (a
/// number in both) is left to the parser, so that a damaged first record gets an error
/// at its line rather than "unknown format".
pub fn sniff(text: &str) -> Option<RecordKind> {
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty());
    let first = lines.next()?.trim();
    let second = lines.next()?.trim();
    if !looks_like_store_path(first) {
        return None;
    }
    if second.is_empty() || second.starts_with('/') {
        Some(RecordKind::ExportReferencesGraph)
    } else if looks_like_hash(second) {
        Some(RecordKind::Registration)
    } else {
        None
    }
}

/// Whether a line is `<dir>/<hash>-<name>` in some store directory.
fn looks_like_store_path(s: &str) -> bool {
    s.starts_with('/')
        && s.rsplit_once('/')
            .is_some_and(|(_, base)| StorePath::from_base_name(base).is_ok())
}

/// Whether a line can be a NAR hash in one of the spellings Nix writes.
fn looks_like_hash(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('/')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=:-_".contains(&b))
}

/// Lines with 1-based numbers, for error messages.
struct Lines<'a> {
    it: std::str::Lines<'a>,
    line: usize,
    path: &'a Path,
}

impl<'a> Lines<'a> {
    fn next(&mut self) -> Option<&'a str> {
        let l = self.it.next()?;
        self.line += 1;
        Some(l.trim())
    }

    /// The next line, or an error saying `expected` was due.
    fn expect(&mut self, expected: &str) -> Result<&'a str, LoadError> {
        match self.next() {
            Some(l) => Ok(l),
            None => Err(self.error(self.line + 1, expected, None)),
        }
    }

    fn error(&self, line: usize, expected: &str, got: Option<&str>) -> LoadError {
        LoadError::Text {
            path: self.path.to_path_buf(),
            line,
            expected: expected.to_string(),
            found: found(got),
        }
    }
}

/// Read records of `kind` from `text`; paths are full paths in `store_dir`. `path`
/// names the input in messages and in [`Closure::origin`].
pub fn parse(
    text: &str,
    kind: RecordKind,
    path: &Path,
    store_dir: &StoreDir,
) -> Result<Closure, LoadError> {
    let source = match kind {
        RecordKind::Registration => SourceKind::Registration,
        RecordKind::ExportReferencesGraph => SourceKind::ExportReferencesGraph,
    };
    let mut closure = Closure::new(store_dir.clone(), source, path.display().to_string());
    let mut lines = Lines {
        it: text.lines(),
        line: 0,
        path,
    };
    let parse_path = |lines: &Lines, l: &str, what: &str| -> Result<StorePath, LoadError> {
        store_dir.parse_path(l).map_err(|e| {
            let expected = format!("{what} ({})", e_hint(&e, store_dir));
            lines.error(lines.line, &expected, Some(l))
        })
    };
    while let Some(first) = lines.next() {
        if first.is_empty() {
            continue; // blank lines between records or at the end
        }
        let sp = parse_path(&lines, first, "a store path")?;
        let mut info = PathInfo::new(sp);
        if kind == RecordKind::Registration {
            let h = lines.expect("a NAR hash")?;
            if !looks_like_hash(h) {
                return Err(lines.error(lines.line, "a NAR hash", Some(h)));
            }
            info.nar_hash = Some(NarHash::parse(h));
            let s = lines.expect("the NAR size (a number)")?;
            info.nar_size = Some(
                s.parse()
                    .map_err(|_| lines.error(lines.line, "the NAR size (a number)", Some(s)))?,
            );
        }
        let d = lines.expect("the deriver (a store path or an empty line)")?;
        if !d.is_empty() {
            match store_dir.parse_path(d) {
                Ok(dp) => info.deriver = Some(dp),
                Err(e) => closure.warnings.push(LoadWarning::DeriverIgnored {
                    file: path.display().to_string(),
                    line: Some(lines.line as u64),
                    path: Some(first.to_string()),
                    error: e.to_string(),
                }),
            }
        }
        let n = lines.expect("the number of references")?;
        let n: u64 = n
            .parse()
            .map_err(|_| lines.error(lines.line, "the number of references", Some(n)))?;
        for i in 1..=n {
            let what = format!("reference {i} of {n} of {first}");
            let r = lines.expect(&what)?;
            info.references.push(parse_path(&lines, r, &what)?);
        }
        if closure.paths.contains_key(&info.path) {
            closure.warnings.push(LoadWarning::ListedTwice {
                file: path.display().to_string(),
                path: first.to_string(),
                record: true,
            });
        }
        closure.insert(info);
    }
    if kind == RecordKind::ExportReferencesGraph && !closure.paths.is_empty() {
        closure.warnings.push(LoadWarning::NoNarSizes {
            file: path.display().to_string(),
        });
    }
    Ok(closure)
}

fn e_hint(e: &crate::store::StorePathError, sd: &StoreDir) -> String {
    super::json::with_store_dir_hint(e, sd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = format!("{}/tests/fixtures/load/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(p).unwrap()
    }

    fn read(text: &str) -> Result<Closure, LoadError> {
        let kind = sniff(text).expect("sniffable");
        parse(text, kind, Path::new("reg"), &StoreDir::default())
    }

    #[test]
    fn dump_db_and_closure_info_agree() {
        let a = read(&fixture("dump-db.txt")).unwrap();
        let b = read(&fixture("closure-info/registration")).unwrap();
        assert_eq!(a.source, SourceKind::Registration);
        assert_eq!(a.paths.len(), 5);
        for (p, x) in &a.paths {
            let y = &b.paths[p];
            assert!(matches!(x.nar_hash, Some(NarHash::Sha256(_))));
            assert_eq!(x.nar_hash, y.nar_hash);
            assert_eq!(x.nar_size, y.nar_size);
            assert_eq!(x.references, y.references);
        }
        // --dump-db keeps derivers; closureInfo writes an empty line.
        assert!(a.paths.values().all(|i| i.deriver.is_some()));
        assert!(b.paths.values().all(|i| i.deriver.is_none()));
        assert!(a.warnings.is_empty() && b.warnings.is_empty());
    }

    #[test]
    fn export_references_graph_has_no_sizes() {
        let text = fixture("export-references-graph");
        assert_eq!(sniff(&text), Some(RecordKind::ExportReferencesGraph));
        let c = read(&text).unwrap();
        assert_eq!(c.source, SourceKind::ExportReferencesGraph);
        assert_eq!(c.paths.len(), 5);
        assert!(c.paths.values().all(|i| i.nar_size.is_none()));
        assert!(c
            .warnings
            .iter()
            .any(|w| w.to_string().contains("sizes unknown")));
        let reg = read(&fixture("dump-db.txt")).unwrap();
        for (p, i) in &reg.paths {
            assert_eq!(c.paths[p].references, i.references);
        }
    }

    #[test]
    fn errors_name_line_and_expectation() {
        let p = "/nix/store/x71ahacbysflg2pf8638mdh69871353b-libfoo-3.2";
        let cases = [
            (format!("{p}\nsha256:abc\nlots\n\n0\n"), 3, "NAR size"),
            (format!("{p}\nabc\n12\n\n2\n{p}\n"), 7, "reference 2 of 2"),
            (format!("{p}\nabc\n12\n\nx\n"), 5, "number of references"),
            (
                format!("{p}\nabc\n12\n\n1\n/nix/store/bad\n"),
                6,
                "reference 1 of 1",
            ),
            (
                format!("{p}\nabc\n12\n\n0\n/etc/passwd\nabc\n1\n"),
                6,
                "a store path",
            ),
        ];
        for (text, line, want) in cases {
            let k = RecordKind::Registration;
            match parse(&text, k, Path::new("reg"), &StoreDir::default()).unwrap_err() {
                LoadError::Text {
                    line: l, expected, ..
                } => {
                    assert_eq!(l, line, "{text:?}: {expected}");
                    assert!(expected.contains(want), "{expected}");
                }
                other => panic!("{other}"),
            }
        }
    }

    #[test]
    fn sniffing() {
        let p = "/nix/store/x71ahacbysflg2pf8638mdh69871353b-libfoo-3.2";
        let erg = Some(RecordKind::ExportReferencesGraph);
        let reg = Some(RecordKind::Registration);
        assert_eq!(sniff("hello\n"), None);
        assert_eq!(sniff("/nix/store/x\n\n0\n"), None);
        assert_eq!(sniff(&format!("{p}\n/nix/store/y.drv\n0\n")), erg);
        assert_eq!(sniff(&format!("{p}\n\nfoo\n")), erg);
        assert_eq!(sniff(&format!("\n{p}\nabcd\n12\n")), reg);
        assert_eq!(
            sniff(&format!("/gnu/store/{}\nabcd\nlots\n", &p[11..])),
            reg
        );
        assert_eq!(sniff(&format!("{p}\nab cd\n12\n")), None);
    }
}
