//! The words of the `refs` report: the heading of each scanned path, a reference's
//! label and kind counts, clipped details; shared by table and Markdown.

use crate::render::text::{count, name_of};
use crate::report::{Explanation, ReachStep, ReachVia, RefEntry, RefsPath};
use crate::store::format_size;

/// Evidence lines shown per reference in tables (JSON has them all).
pub(crate) const SHOWN: usize = 4;

/// `elf-needed 2, symlink 26`.
pub(crate) fn kinds(r: &RefEntry) -> String {
    r.kinds
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `s` cut to `max` characters, with `…` when cut.
pub(crate) fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// The reference's name, marked `(self)` and `(not registered)`.
pub(crate) fn ref_label(r: &RefEntry) -> String {
    let mut s = name_of(&r.path).to_string();
    if r.self_reference {
        s.push_str(" (self)");
    }
    if !r.registered {
        s.push_str(" (not registered)");
    }
    s
}

/// `/nix/store/…-x: 2 references; 14 files, 1.2 MiB scanned (cached)`.
pub(crate) fn path_heading(p: &RefsPath) -> String {
    if p.scanned {
        format!(
            "{}: {}; {}, {} scanned{}",
            p.path,
            count(p.references.len() as u64, "reference", "references"),
            count(p.files_scanned, "file", "files"),
            format_size(p.bytes_scanned),
            if p.cached { " (cached)" } else { "" }
        )
    } else {
        format!(
            "{}: {} (not scanned)",
            p.path,
            count(p.references.len() as u64, "reference", "references")
        )
    }
}

/// How one hop of an explanation reaches its file.
pub(crate) fn reach_step(s: &ReachStep) -> String {
    let how = match s.via {
        ReachVia::EntryPoint => "one of the consumer's own files",
        ReachVia::Interpreter => "its PT_INTERP",
        ReachVia::Needed => "DT_NEEDED",
        ReachVia::Dlopen => "named for dlopen",
        ReachVia::Shebang => "its #! interpreter",
        ReachVia::Named => "named in a script or an ELF string",
        ReachVia::Symlink => "a symlink's target",
        ReachVia::Inside => "inside a reached directory",
        ReachVia::DataDir => "a data directory the library opens",
        ReachVia::DataString => "named by a string of the library",
        ReachVia::Index => "named by an index file",
    };
    if s.detail.is_empty() {
        how.to_string()
    } else {
        format!("{how} ({})", s.detail)
    }
}

/// The heading of an explanation.
pub(crate) fn explain_heading(e: &Explanation) -> String {
    if e.reached {
        format!("how the consumer reaches {}:", e.file)
    } else {
        match &e.note {
            Some(n) => format!("the consumer does not load, run or open {}: {n}", e.file),
            None => format!("the consumer does not load, run or open {}", e.file),
        }
    }
}
