//! `nixcut snapshot ROOT -o FILE`: freeze a closure as a baseline file for CI.
//!
//! [`snapshot`] builds the document (`crate::report::Snapshot`, whose module documents
//! the format) from a loaded closure; the binary writes it (atomically, `src/cli/`), and
//! `crate::load::snapshot` reads it back.
//!
//! The same closure gives the same document however its input was named: for a store
//! path (`./result`, the path itself, any symlink to it) `created_from.origin` is the
//! root's store path, and for a file or directory it is the file's base name (the
//! directory a baseline was taken in says nothing about the closure).
//!
//! A snapshot must be a complete closure with known sizes: an input that misses paths
//! (`nix path-info --json` without `-r`) or sizes (a sizeless `exportReferencesGraph`)
//! is refused rather than frozen as a baseline that is too small.

use crate::graph::{closure_sizes, ClosureGraph};
use crate::report::{Snapshot, SnapshotKind, SnapshotPath, SourceRef, SNAPSHOT_SCHEMA_VERSION};
use crate::store::{is_terminal_hazard, Closure, SourceKind};

use super::common::{pick_roots, source_ref};
use super::AnalysisError;

/// Options of `nixcut snapshot`.
#[derive(Debug, Clone, Default)]
pub struct SnapshotOptions {
    /// `--root`: which root of a multi-root input (all roots when `None`).
    pub root: Option<String>,
}

/// `created_from` without what depends on how the input was named.
fn stable_source(c: &Closure, root: Option<&String>) -> SourceRef {
    let mut source = source_ref(c);
    source.origin = match (c.source, root) {
        (SourceKind::LiveStore, Some(root)) => root.clone(),
        _ => std::path::Path::new(&c.origin)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| c.origin.clone())
            // A file name may hold anything; a committed baseline shows no escape codes.
            .chars()
            .map(|ch| if is_terminal_hazard(ch) { '?' } else { ch })
            .collect(),
    };
    source
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
                nar_size: g.nar_sizes[i].get(),
                nar_hash: info.nar_hash.as_ref().map(|h| h.to_sri()),
                closure_size: closure[i].get(),
                references: info.references.iter().map(|r| sd.display(r)).collect(),
                deriver: info.deriver.as_ref().map(|d| sd.display(d)),
            })
        })
        .collect();
    let root_strings: Vec<String> = roots.iter().map(|r| sd.display(r)).collect();
    let created_from = stable_source(c, root_strings.first());
    Ok(Snapshot {
        kind: SnapshotKind::NixcutSnapshot,
        schema_version: SNAPSHOT_SCHEMA_VERSION,
        nixcut_version: env!("CARGO_PKG_VERSION").to_string(),
        store_dir: sd.as_str().to_string(),
        root: root_strings.first().cloned().unwrap_or_default(),
        roots: root_strings,
        created_from,
        closure_size: g.total_size().get(),
        path_count: paths.len(),
        paths,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::testutil::{closure, path};
    use crate::load::LoadOptions;

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
        let text = serde_json::to_string_pretty(&s).unwrap();
        let back = crate::load::snapshot::parse(
            &text,
            std::path::Path::new("base.json"),
            &LoadOptions::default(),
        )
        .unwrap();
        // The same paths, now with the closure sizes the snapshot recorded.
        let mut expect = c.paths.clone();
        for (info, sp) in expect.values_mut().zip(&s.paths) {
            info.reported_closure_size = Some(sp.closure_size);
        }
        assert_eq!(back.paths, expect);
        assert_eq!(back.roots(), vec![path(0)]);
        // Snapshotting it again gives the same document (the origin is a base name).
        let again = snapshot(&back, &SnapshotOptions::default()).unwrap();
        assert_eq!(again.created_from.origin, "base.json");
        assert_eq!(again.paths, s.paths);
    }

    #[test]
    fn the_origin_does_not_depend_on_how_the_input_was_named() {
        let mut c = closure(&[1, 2], &[vec![1], vec![]]);
        let root = c.store_dir.display(&path(0));
        c.source = SourceKind::LiveStore;
        let mut docs = Vec::new();
        for origin in ["./result", root.as_str(), "/tmp/elsewhere/link"] {
            c.origin = origin.to_string();
            let s = snapshot(&c, &SnapshotOptions::default()).unwrap();
            docs.push(serde_json::to_string(&s).unwrap());
            assert_eq!(s.created_from.origin, root);
        }
        assert!(docs.iter().all(|d| *d == docs[0]));
        c.source = SourceKind::PathInfoJson;
        for origin in [
            "closure.json",
            "./closure.json",
            "/ci/checkout/closure.json",
        ] {
            c.origin = origin.to_string();
            let s = snapshot(&c, &SnapshotOptions::default()).unwrap();
            assert_eq!(s.created_from.origin, "closure.json");
        }
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
