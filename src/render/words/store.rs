//! The words of the `store` report: its heading, the totals line, and its warnings.

use crate::render::text::thousands;
use crate::report::{StoreReport, StoreWarning};
use crate::store::format_size;

/// `store: 4,325,879 paths, 11.0 TiB; 1,551,688 GC roots`.
pub(crate) fn heading(r: &StoreReport) -> String {
    format!(
        "store {}: {} paths, {}; {} GC roots",
        r.store_dir,
        thousands(r.path_count),
        format_size(r.store_size),
        thousands(r.root_count)
    )
}

/// What roots keep, what they share and what nothing keeps.
pub(crate) fn totals(r: &StoreReport) -> String {
    let alone = r.live.bytes.saturating_sub(r.shared.bytes);
    let mut s = format!(
        "kept alive: {} in {} paths ({} by one root alone, {} shared by several); \
         unreachable: {} in {} paths (what the garbage collector would delete now)",
        format_size(r.live.bytes),
        thousands(r.live.paths),
        format_size(alone),
        format_size(r.shared.bytes),
        format_size(r.unreachable.bytes),
        thousands(r.unreachable.paths),
    );
    if r.keep.derivations || r.keep.outputs {
        let kept: Vec<&str> = [
            (r.keep.derivations, "keep-derivations"),
            (r.keep.outputs, "keep-outputs"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| *n)
        .collect();
        s.push_str(&format!(" [{}]", kept.join(", ")));
    }
    s
}

/// The row for the roots not listed.
pub(crate) fn rest(r: &StoreReport) -> Option<String> {
    r.rest.map(|rest| {
        format!(
            "… and {} more roots, which alone keep {} in {} paths (--top N or --all to list them)",
            thousands(rest.roots),
            format_size(rest.alone),
            thousands(rest.alone_paths)
        )
    })
}

impl std::fmt::Display for StoreWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use StoreWarning as W;
        match self {
            W::Input(s) => f.write_str(s),
            W::StaleRoots { count } => write!(
                f,
                "{count} indirect GC roots point to links that no longer exist (stale: the \
                 next garbage collection removes them); they keep nothing"
            ),
            W::Unreadable { path, why } => write!(
                f,
                "{}: cannot read ({why}); any GC roots below it are not counted, so what \
                 they keep shows as unreachable",
                crate::store::sanitize(path, 200)
            ),
            W::UnknownRoots { count, example } => write!(
                f,
                "{count} GC roots name store paths the store does not have as valid (e.g. \
                 {}); they keep nothing",
                crate::store::sanitize(example, 300)
            ),
            W::Duplicates { count } => write!(
                f,
                "{count} paths are described twice; the first description of each is used"
            ),
            W::RenamedReferences { count } => write!(
                f,
                "{count} references name a path's hash with another name; they are taken \
                 as references to the path with that hash"
            ),
            W::MissingSizes { count } => write!(
                f,
                "{count} paths have no NAR size and count as 0 bytes: sizes are too small"
            ),
            W::Undescribed { count, example } => write!(
                f,
                "{count} paths are referenced but not described (e.g. {}); they count as 0 \
                 bytes",
                crate::store::sanitize(example, 300)
            ),
            W::DanglingReferences { count } => write!(
                f,
                "{count} rows of the reference table name no valid path; they are left out"
            ),
            W::InvalidPaths { count } => {
                write!(f, "{count} paths are listed as invalid; they are left out")
            }
            W::NoRoots => f.write_str(
                "no GC roots: every path is unreachable (give --store-root, --root or \
                 --roots-from)",
            ),
        }
    }
}

impl serde::Serialize for StoreWarning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
