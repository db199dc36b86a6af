//! The words of the `refs` report: the heading of each scanned path, a reference's
//! label and kind counts (and the `n kind + …` sum the `why` lines and dot labels use),
//! clipped details; shared by table and Markdown.

use crate::render::text::{count, name_of};
use crate::report::{Explanation, ReachStep, ReachVia, RefEntry, RefsPath};
use crate::store::format_size;

/// Evidence lines shown per reference in tables (JSON has them all).
pub(crate) const SHOWN: usize = 4;

/// `elf-needed 2, symlink 26`: a reference's kind counts, kind first, as the `refs`
/// table lists them.
pub(crate) fn kinds(r: &RefEntry) -> String {
    r.kinds
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `26 symlink + 1 elf-needed`: a hop's kind counts, count first, as the `why` lines and
/// the dot graph's edge labels say them.
pub(crate) fn kind_sum<K: std::fmt::Display>(kinds: impl IntoIterator<Item = (K, u64)>) -> String {
    kinds
        .into_iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect::<Vec<_>>()
        .join(" + ")
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
        ReachVia::Processor => "opened only on one processor",
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
        let on = if e.processors.is_empty() {
            String::new()
        } else {
            let class = e
                .class
                .as_ref()
                .map(|c| format!(", class {c}"))
                .unwrap_or_default();
            format!(" (opened only on {}{class})", e.processors.join(", "))
        };
        format!("how the consumer reaches {}{on}:", e.file)
    } else {
        match &e.note {
            Some(n) => format!("the consumer does not load, run or open {}: {n}", e.file),
            None => format!("the consumer does not load, run or open {}", e.file),
        }
    }
}

impl std::fmt::Display for crate::report::RefsWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::report::RefsWarning as W;
        match self {
            W::Load(w) => w.fmt(f),
            W::Input(w) => f.write_str(w),
            W::FilesUnavailable { looked_in } => {
                let looked = match looked_in {
                    None => "no store directory was given".to_string(),
                    Some(dir) => format!("not in {dir}"),
                };
                write!(
                    f,
                    "the files of these paths are not available ({looked}, no NARs in the \
                     input): evidence is graph-level only; use --store-root or a binary \
                     cache with nar/"
                )
            }
            W::ExplainWithoutFiles { file } => write!(
                f,
                "--explain {file}: the files are not available, so what the consumer \
                 reaches cannot be worked out"
            ),
        }
    }
}

/// In JSON a warning is its sentence.
impl serde::Serialize for crate::report::RefsWarning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
