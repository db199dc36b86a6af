//! `nixcut snapshot ROOT -o FILE`: freeze a closure as a baseline file for CI.
//!
//! [`snapshot`] builds the document (`crate::report::Snapshot`, whose module documents
//! the format) from a loaded closure; [`write_snapshot`] writes it atomically: into a
//! temporary file in the target's directory, flushed to disk, then renamed over the
//! target, so an existing baseline is replaced only by a complete new one and a crash
//! or full disk leaves the old file untouched. `crate::load::snapshot` reads it back.
//!
//! A snapshot must be a complete closure with known sizes: an input that misses paths
//! (`nix path-info --json` without `-r`) or sizes (a sizeless `exportReferencesGraph`)
//! is refused rather than frozen as a baseline that is too small.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::graph::{closure_sizes, ClosureGraph};
use crate::report::{Snapshot, SnapshotPath, SNAPSHOT_KIND, SNAPSHOT_SCHEMA_VERSION};
use crate::store::Closure;

use super::common::{pick_roots, source_ref};
use super::AnalysisError;

/// Options of `nixcut snapshot`.
#[derive(Debug, Clone, Default)]
pub struct SnapshotOptions {
    /// `--root`: which root of a multi-root input (all roots when `None`).
    pub root: Option<String>,
}

/// Build the snapshot of the closure of the chosen roots. O(n + m) plus the closure
/// sizes (`crate::graph::closure_sizes`).
pub fn snapshot(c: &Closure, opts: &SnapshotOptions) -> Result<Snapshot, AnalysisError> {
    let roots = pick_roots(c, opts.root.as_deref())?;
    let sub = c.restrict_to(&roots);
    let missing = sub.missing_references();
    if let Some((from, to)) = missing.first() {
        return Err(AnalysisError::Incomplete {
            origin: c.origin.clone(),
            count: missing.len(),
            example: format!(
                "{} -> {}",
                c.store_dir.display(from),
                c.store_dir.display(to)
            ),
        });
    }
    let g = ClosureGraph::new(c, &roots);
    if !g.sizes_known {
        return Err(AnalysisError::SizesUnknown {
            origin: c.origin.clone(),
            what: "a snapshot",
        });
    }
    let closure = closure_sizes(&g);
    let sd = &c.store_dir;
    let paths: Vec<SnapshotPath> = g
        .paths
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let info = c.paths.get(p)?;
            Some(SnapshotPath {
                path: sd.display(p),
                nar_size: g.nar_sizes[i],
                nar_hash: info.nar_hash.as_ref().map(|h| h.to_sri()),
                closure_size: closure[i],
                references: info.references.iter().map(|r| sd.display(r)).collect(),
                deriver: info.deriver.as_ref().map(|d| sd.display(d)),
            })
        })
        .collect();
    let root_strings: Vec<String> = roots.iter().map(|r| sd.display(r)).collect();
    Ok(Snapshot {
        kind: SNAPSHOT_KIND.to_string(),
        schema_version: SNAPSHOT_SCHEMA_VERSION,
        nixcut_version: env!("CARGO_PKG_VERSION").to_string(),
        store_dir: sd.as_str().to_string(),
        root: root_strings.first().cloned().unwrap_or_default(),
        roots: root_strings,
        created_from: source_ref(c),
        closure_size: g.total_size(),
        path_count: paths.len(),
        paths,
    })
}

/// Why a snapshot could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write snapshot {}: {source}", .path.display())]
pub struct SnapshotWriteError {
    /// The file that was to be written.
    pub path: PathBuf,
    /// The operating-system error.
    pub source: io::Error,
}

/// Write `s` as pretty JSON to `out` (any writer, e.g. standard output).
pub fn write_snapshot_to(s: &Snapshot, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, s).map_err(io::Error::other)?;
    writeln!(out)
}

/// Write `s` to `file` atomically: a temporary file in the same directory, synced,
/// then renamed over `file`. On any error `file` is left as it was and the temporary
/// file is removed.
pub fn write_snapshot(s: &Snapshot, file: &Path) -> Result<(), SnapshotWriteError> {
    let err = |source: io::Error| SnapshotWriteError {
        path: file.to_path_buf(),
        source,
    };
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".nixcut-snapshot-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(err)?;
    {
        let mut w = io::BufWriter::new(tmp.as_file_mut());
        write_snapshot_to(s, &mut w).map_err(err)?;
        w.flush().map_err(err)?;
    }
    tmp.as_file().sync_all().map_err(err)?;
    // A baseline is meant to be committed and read by others: not the 0600 of a
    // temporary file. Keep the permissions of the file being replaced, if any.
    let perms = match std::fs::metadata(file) {
        Ok(m) => m.permissions(),
        Err(_) => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::Permissions::from_mode(0o644)
        }
    };
    std::fs::set_permissions(tmp.path(), perms).map_err(err)?;
    tmp.persist(file).map_err(|e| err(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::testutil::{closure, path};
    use crate::load::{load, LoadOptions};

    #[test]
    fn snapshot_round_trips_through_the_loader() {
        let c = closure(
            &[10, 1000, 50, 7],
            &[vec![1, 2], vec![3], vec![3, 2], vec![]],
        );
        let s = snapshot(&c, &SnapshotOptions::default()).unwrap();
        assert_eq!(s.closure_size, 1067);
        assert_eq!(s.path_count, 4);
        assert_eq!(s.paths[0].closure_size, 1067);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("base.json");
        write_snapshot(&s, &f).unwrap();
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            text.starts_with("{\n  \"kind\": \"nixcut-snapshot\""),
            "{text}"
        );
        let back = load(f.to_str().unwrap(), &LoadOptions::default()).unwrap();
        // The same paths, now with the closure sizes the snapshot recorded.
        let mut expect = c.paths.clone();
        for (info, sp) in expect.values_mut().zip(&s.paths) {
            info.reported_closure_size = Some(sp.closure_size);
        }
        assert_eq!(back.paths, expect);
        assert_eq!(back.roots(), vec![path(0)]);
        // Writing the same closure again gives the same bytes.
        write_snapshot(&s, &f).unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), text);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "temporary files left: {leftovers:?}");
    }

    #[test]
    fn a_failed_write_leaves_the_old_file() {
        let c = closure(&[1, 2], &[vec![1], vec![]]);
        let s = snapshot(&c, &SnapshotOptions::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        // The target is a non-empty directory: the rename fails after the data was
        // written to the temporary file.
        let target = dir.path().join("base.json");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), "old").unwrap();
        let e = write_snapshot(&s, &target).unwrap_err();
        assert!(e.to_string().contains("base.json"), "{e}");
        assert_eq!(std::fs::read_to_string(target.join("keep")).unwrap(), "old");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["base.json".to_string()], "temporary file left");
    }

    #[test]
    fn refuses_incomplete_or_sizeless_closures() {
        let mut c = closure(&[1, 2], &[vec![1], vec![]]);
        c.paths.remove(&path(1));
        let e = snapshot(&c, &SnapshotOptions::default()).unwrap_err();
        assert!(e.to_string().contains("not a complete closure"), "{e}");
        let mut c = closure(&[1, 2], &[vec![1], vec![]]);
        c.paths.get_mut(&path(1)).unwrap().nar_size = None;
        let e = snapshot(&c, &SnapshotOptions::default()).unwrap_err();
        assert!(e.to_string().contains("NAR sizes"), "{e}");
    }
}
