//! nixcut snapshot files (`nixcut snapshot ROOT -o FILE`), read back as a [`Closure`].
//!
//! The format is defined once, by the structs of `crate::store::snapshot`, which
//! `nixcut snapshot` serialises and this reader deserialises (unknown keys are ignored,
//! so a newer nixcut may add fields without breaking older readers). The file is checked
//! hard, because a snapshot is a CI baseline and a damaged one must never pass as a
//! small closure:
//!
//! - a `schema_version` above [`SNAPSHOT_SCHEMA_VERSION`] is refused
//!   ([`LoadError::Unsupported`]) with the nixcut version that wrote it;
//! - a file cut short is refused as truncated, even though it no longer parses as
//!   JSON: `super::detect` routes anything starting `{"kind": "nixcut-snapshot"`
//!   here ([`looks_like_snapshot`]);
//! - `path_count` and `closure_size` must match the paths listed, every reference and
//!   root must be listed, and no path may appear twice.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use super::json::{json_error, located, with_store_dir_hint};
use super::{LoadError, LoadOptions};
use crate::store::{
    Closure, LoadWarning, NarHash, PathInfo, Snapshot, SnapshotHeader, SnapshotPath, SourceKind,
    StoreDir, StorePath, SNAPSHOT_KIND, SNAPSHOT_SCHEMA_VERSION,
};

/// Whether `text` starts like a snapshot (`{"kind": "nixcut-snapshot"`), whatever
/// follows: how a truncated snapshot is still recognised.
pub fn looks_like_snapshot(text: &str) -> bool {
    let rest = text.trim_start();
    let steps: [&str; 4] = ["{", "\"kind\"", ":", "\"nixcut-snapshot\""];
    let mut rest = rest;
    for s in steps {
        match rest.trim_start().strip_prefix(s) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    true
}

fn invalid(path: &Path, message: impl Into<String>) -> LoadError {
    LoadError::Invalid {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

const RECREATE: &str = "re-create it with `nixcut snapshot ROOT -o FILE`";

/// Read a snapshot file. The store directory is the file's unless `opts` names one.
pub fn parse(text: &str, path: &Path, opts: &LoadOptions) -> Result<Closure, LoadError> {
    check_header(text, path)?;
    let snap: Snapshot = serde_json::from_str(text).map_err(|e| json_error(path, &e))?;
    let sd = match &opts.store_dir {
        Some(sd) => sd.clone(),
        None => StoreDir::new(snap.store_dir.as_str()),
    };
    let reader = Reader { text, path, sd };
    let (mut closure, total) = reader.paths(&snap.paths)?;
    reader.check_totals(&snap, &closure, total)?;
    closure.declared_roots = reader.roots(&snap, &closure)?;
    Ok(closure)
}

/// Refuse a file that is cut short, is not a snapshot, or has a schema version this
/// nixcut does not read, before its body is read by the structs of this version.
fn check_header(text: &str, path: &Path) -> Result<(), LoadError> {
    let header: SnapshotHeader = serde_json::from_str(text).map_err(|e| {
        if e.classify() == serde_json::error::Category::Eof {
            invalid(
                path,
                format!(
                    "the snapshot is truncated: it ends at line {} column {} before the JSON \
                     document is complete; {RECREATE}",
                    e.line(),
                    e.column()
                ),
            )
        } else {
            json_error(path, &e)
        }
    })?;
    if header.kind.as_ref().and_then(Value::as_str) != Some(SNAPSHOT_KIND) {
        return Err(invalid(
            path,
            format!("not a nixcut snapshot: `kind` is not \"{SNAPSHOT_KIND}\""),
        ));
    }
    let version = match &header.schema_version {
        None => return Err(invalid(path, "the snapshot has no `schema_version`")),
        Some(v) => v.as_u64().ok_or_else(|| {
            invalid(
                path,
                format!("`schema_version` is {v}, not a positive integer"),
            )
        })?,
    };
    if version > u64::from(SNAPSHOT_SCHEMA_VERSION) {
        let writer = header
            .nixcut_version
            .as_ref()
            .and_then(Value::as_str)
            .map(|v| format!("nixcut {}", super::sanitize(v, 40)))
            .unwrap_or_else(|| "a newer nixcut".to_string());
        return Err(LoadError::Unsupported {
            path: path.to_path_buf(),
            what: format!("snapshot schema version {version}"),
            hint: format!(
                "the file was written by {writer}, and this nixcut ({}) reads snapshot schema \
                 versions up to {SNAPSHOT_SCHEMA_VERSION}; upgrade nixcut, or {RECREATE}",
                env!("CARGO_PKG_VERSION")
            ),
        });
    }
    if version == 0 {
        return Err(invalid(path, "`schema_version` 0 does not exist"));
    }
    Ok(())
}

/// A snapshot's text, its name for messages and the store directory its paths are in.
struct Reader<'a> {
    text: &'a str,
    path: &'a Path,
    sd: StoreDir,
}

impl Reader<'_> {
    /// `s` as a store path; an error locates it in the text (`entry` when it cannot be
    /// found), prefixed with `what`.
    fn store_path(&self, s: &str, entry: &str, what: &str) -> Result<StorePath, LoadError> {
        self.sd.parse_path(s).map_err(|err| {
            located(
                self.text,
                self.path,
                s,
                entry,
                format!("{what}{}", with_store_dir_hint(&err, &self.sd)),
            )
        })
    }

    /// The closure of the listed paths (each listed once) and the sum of their NAR
    /// sizes (within 2^64 - 1).
    fn paths(&self, paths: &[SnapshotPath]) -> Result<(Closure, u64), LoadError> {
        let path = self.path;
        let mut closure = Closure::new(
            self.sd.clone(),
            SourceKind::Snapshot,
            path.display().to_string(),
        );
        let mut total: u64 = 0;
        for p in paths {
            let info = self.path_info(p, &mut closure.warnings)?;
            if closure.paths.contains_key(&info.path) {
                return Err(invalid(
                    path,
                    format!(
                        "{} is listed twice; the snapshot was edited? {RECREATE}",
                        p.path
                    ),
                ));
            }
            total = total.checked_add(p.nar_size).ok_or_else(|| {
                invalid(
                    path,
                    format!(
                        "its NAR sizes add up to more than {} bytes (2^64 - 1): a size is \
                         wrong; {RECREATE}",
                        u64::MAX
                    ),
                )
            })?;
            closure.insert(info);
        }
        Ok((closure, total))
    }

    /// One listed path; a deriver that is not a store path is left out with a warning.
    fn path_info(
        &self,
        p: &SnapshotPath,
        warnings: &mut Vec<LoadWarning>,
    ) -> Result<PathInfo, LoadError> {
        let mut info = PathInfo::new(self.store_path(&p.path, &p.path, "")?);
        info.nar_size = Some(p.nar_size);
        info.nar_hash = p.nar_hash.as_deref().map(NarHash::parse);
        info.reported_closure_size = Some(p.closure_size);
        for r in &p.references {
            info.references
                .push(self.store_path(r, &p.path, "reference: ")?);
        }
        if let Some(d) = &p.deriver {
            match self.sd.parse_path(d) {
                Ok(dp) => info.deriver = Some(dp),
                Err(e) => warnings.push(LoadWarning::DeriverIgnored {
                    file: self.path.display().to_string(),
                    line: None,
                    path: Some(p.path.clone()),
                    error: e.to_string(),
                }),
            }
        }
        Ok(info)
    }

    /// `path_count` and `closure_size` match the paths listed, and every reference is
    /// listed.
    fn check_totals(
        &self,
        snap: &Snapshot,
        closure: &Closure,
        total: u64,
    ) -> Result<(), LoadError> {
        let path = self.path;
        if snap.path_count != snap.paths.len() {
            return Err(invalid(
                path,
                format!(
                    "the snapshot says it has {} paths but lists {}: it is truncated or was \
                     edited; {RECREATE}",
                    snap.path_count,
                    snap.paths.len()
                ),
            ));
        }
        if snap.closure_size != total {
            return Err(invalid(
                path,
                format!(
                    "the snapshot says its closure size is {} bytes but its paths add up to \
                     {}: it is damaged or was edited; {RECREATE}",
                    snap.closure_size, total
                ),
            ));
        }
        if let Some((from, to)) = closure.missing_references().first() {
            return Err(invalid(
                path,
                format!(
                    "{} references {}, which the snapshot does not list: it is truncated or \
                     was edited; {RECREATE}",
                    self.sd.display(from),
                    self.sd.display(to)
                ),
            ));
        }
        Ok(())
    }

    /// The roots: `roots`, or `[root]` when a file has no `roots`; each must be listed,
    /// and `root` must be among `roots`.
    fn roots(&self, snap: &Snapshot, closure: &Closure) -> Result<Vec<StorePath>, LoadError> {
        let path = self.path;
        let not_listed = |r: &str| {
            invalid(
                path,
                format!("its root {r} is not among its paths; {RECREATE}"),
            )
        };
        // `root` is `roots[0]` as nixcut writes it; an edited `root` that `roots` does
        // not hold would otherwise be ignored in favour of another root.
        let r = &snap.root;
        if !closure
            .paths
            .contains_key(&self.store_path(r, "root", "root: ")?)
        {
            return Err(not_listed(r));
        }
        if !snap.roots.is_empty() && !snap.roots.contains(r) {
            return Err(invalid(
                path,
                format!("its root {r} is not among its roots; {RECREATE}"),
            ));
        }
        let root_strings = match snap.roots.as_slice() {
            [] => std::slice::from_ref(r),
            roots => roots,
        };
        let mut roots = BTreeSet::new();
        for r in root_strings {
            let rp = self.store_path(r, "roots", "root: ")?;
            if !closure.paths.contains_key(&rp) {
                return Err(not_listed(r));
            }
            roots.insert(rp);
        }
        Ok(roots.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "/nix/store/9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-app-1.0";
    const B: &str = "/nix/store/1b6qcr7l9p0yx4mji8c6pbjcybz4fp88-lib-2.0";

    fn snapshot(version: u32, path_count: usize, closure_size: u64) -> String {
        format!(
            r#"{{"kind": "nixcut-snapshot", "schema_version": {version}, "nixcut_version": "9.9.9",
  "store_dir": "/nix/store", "root": "{A}", "roots": ["{A}"],
  "created_from": {{"kind": "path-info-json", "origin": "x.json"}},
  "closure_size": {closure_size}, "path_count": {path_count}, "future_field": true,
  "paths": [
    {{"path": "{B}", "nar_size": 100, "nar_hash": null, "closure_size": 100, "references": [], "deriver": null}},
    {{"path": "{A}", "nar_size": 20, "nar_hash": "sha256-GOhJmAjL8yFgJXWKEpkPj5V67NYxCO1Ycaq6DNTeyk8=",
      "closure_size": 120, "references": ["{A}", "{B}"], "deriver": null}}
  ]}}"#
        )
    }

    fn load(text: &str) -> Result<Closure, LoadError> {
        parse(text, Path::new("base.json"), &LoadOptions::default())
    }

    #[test]
    fn reads_a_snapshot_with_its_root() {
        let c = load(&snapshot(1, 2, 120)).unwrap();
        assert_eq!(c.source, SourceKind::Snapshot);
        assert_eq!(c.paths.len(), 2);
        assert_eq!(c.roots().len(), 1);
        assert_eq!(c.store_dir.display(&c.roots()[0]), A);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }

    #[test]
    fn refuses_a_future_schema() {
        let e = load(&snapshot(2, 2, 120)).unwrap_err();
        assert!(matches!(e, LoadError::Unsupported { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("base.json") && msg.contains("schema version 2") && msg.contains("9.9.9"),
            "{msg}"
        );
    }

    #[test]
    fn refuses_truncated_and_inconsistent_files() {
        let full = snapshot(1, 2, 120);
        for cut in [10, full.len() / 2, full.len() - 3] {
            let e = load(&full[..cut]).unwrap_err().to_string();
            assert!(
                e.contains("truncated") && e.contains("base.json"),
                "{cut}: {e}"
            );
            assert!(looks_like_snapshot(&full[..cut.max(30)]));
        }
        let e = load(&snapshot(1, 3, 120)).unwrap_err().to_string();
        assert!(e.contains("says it has 3 paths but lists 2"), "{e}");
        let e = load(&snapshot(1, 2, 121)).unwrap_err().to_string();
        assert!(e.contains("add up to 120"), "{e}");
        // Drop the entry of B: A's reference dangles.
        let text = snapshot(1, 1, 20);
        let start = text.find(&format!("{{\"path\": \"{B}\"")).unwrap();
        let end = start + text[start..].find("},").unwrap() + 2;
        let e = load(&format!("{}{}", &text[..start], &text[end..]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not list"), "{e}");
        assert!(!looks_like_snapshot("{\"paths\": []}"));
    }
}
