//! Format detection by content, never by name, in one table ([`FORMATS`]): every input
//! format with how it is recognised ([`Sniff`]) and how it is read. A new input format
//! is one row here and its reader module.
//!
//! A directory is recognised by a file it holds. A file's text is tried against the
//! cheap, certain text tests first (a path-info document by its first keys, registration
//! records by their first lines, `nix-store --query --graph` output by its header); JSON
//! is then parsed once and recognised by its shape (`super::json::classify`); JSON that
//! does not parse but starts like a format that is recognised when cut short (a snapshot) goes to that format's reader, which says
//! it is truncated. Anything else is [`Content::Unknown`], described for the error.

use std::io::Read;
use std::path::Path;

use super::json::{self, JsonShape};
use super::read::{read_sniffed, Sniffed};
use super::registration::{self, RecordKind};
use super::{
    binary_cache, closure_info, narinfo_parquet, nix_store_graph, path_info_json, sanitize,
    snapshot, structured_attrs, LoadError, LoadOptions,
};
use crate::store::Closure;

/// What an input turned out to be: the name of a row of [`FORMATS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Detected {
    ClosureInfoDir,
    BinaryCacheDir,
    PathInfoJson,
    StructuredAttrs,
    Registration(RecordKind),
    NixStoreGraph,
    Snapshot,
    NarinfoParquet,
}

/// How a format is recognised.
enum Sniff {
    /// A directory that holds a file of this name.
    DirHolds(&'static str),
    /// A directory that passes this test (tried after every `DirHolds`).
    Dir(fn(&Path) -> bool),
    /// A regular file that passes this test on its path (its first bytes: a binary
    /// format), tried before the file is read as text.
    File(fn(&Path) -> bool),
    /// A file whose text passes this test (cheap, and certain: tried before JSON is
    /// parsed).
    Text(fn(&str) -> bool),
    /// A JSON document of this shape.
    Json(fn(&JsonShape) -> bool),
    /// Text that does not parse as JSON but starts like this (the format's reader says
    /// what is wrong with it).
    BrokenJson(fn(&str) -> bool),
}

/// How a format is read: the input's text (empty for a directory), its name and the
/// options.
type Reader = fn(String, &Path, &LoadOptions) -> Result<Closure, LoadError>;

/// One input format: its name, how it is recognised and how it is read.
pub(super) struct Format {
    /// Its name (what the tests check detection by).
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "only the tests ask a row its name")
    )]
    pub(super) kind: Detected,
    sniff: Sniff,
    read: Reader,
}

/// Every input format nixcut reads, in the order each kind of test tries them.
const FORMATS: &[Format] = &[
    Format {
        kind: Detected::ClosureInfoDir,
        sniff: Sniff::DirHolds("registration"),
        read: |_, path, opts| closure_info::load_dir(path, opts),
    },
    Format {
        kind: Detected::BinaryCacheDir,
        sniff: Sniff::DirHolds("nix-cache-info"),
        read: |_, path, opts| binary_cache::load_dir(path, opts),
    },
    // Read from the file itself: a Parquet file's index is at its end.
    Format {
        kind: Detected::NarinfoParquet,
        sniff: Sniff::File(narinfo_parquet::is_parquet_file),
        read: |_, path, opts| narinfo_parquet::load(path, opts),
    },
    Format {
        kind: Detected::NarinfoParquet,
        sniff: Sniff::Dir(narinfo_parquet::dir_holds_parquet),
        read: |_, path, opts| narinfo_parquet::load(path, opts),
    },
    // Parsed (and checked) once, by the path-info reader.
    Format {
        kind: Detected::PathInfoJson,
        sniff: Sniff::Text(|text| path_info_json::quick_shape(text).is_some()),
        read: path_info_json::parse_owned,
    },
    Format {
        kind: Detected::Registration(RecordKind::Registration),
        sniff: Sniff::Text(|text| registration::sniff(text) == Some(RecordKind::Registration)),
        read: |text, path, opts| {
            let sd = opts.store_dir_or_default();
            registration::parse(&text, RecordKind::Registration, path, &sd)
        },
    },
    Format {
        kind: Detected::Registration(RecordKind::ExportReferencesGraph),
        sniff: Sniff::Text(|text| {
            registration::sniff(text) == Some(RecordKind::ExportReferencesGraph)
        }),
        read: |text, path, opts| {
            let sd = opts.store_dir_or_default();
            registration::parse(&text, RecordKind::ExportReferencesGraph, path, &sd)
        },
    },
    Format {
        kind: Detected::NixStoreGraph,
        sniff: Sniff::Text(nix_store_graph::looks_like_graph),
        read: |text, path, opts| nix_store_graph::parse(&text, path, &opts.store_dir_or_default()),
    },
    Format {
        kind: Detected::PathInfoJson,
        sniff: Sniff::Json(|shape| matches!(shape, JsonShape::PathInfo(_))),
        read: path_info_json::parse_owned,
    },
    Format {
        kind: Detected::StructuredAttrs,
        sniff: Sniff::Json(|shape| *shape == JsonShape::StructuredAttrs),
        read: |text, path, opts| structured_attrs::parse(&text, path, opts),
    },
    Format {
        kind: Detected::Snapshot,
        sniff: Sniff::Json(|shape| *shape == JsonShape::Snapshot),
        read: |text, path, opts| snapshot::parse(&text, path, opts),
    },
    // A snapshot cut short: its reader says it is truncated.
    Format {
        kind: Detected::Snapshot,
        sniff: Sniff::BrokenJson(snapshot::looks_like_snapshot),
        read: |text, path, opts| snapshot::parse(&text, path, opts),
    },
];

/// The first format whose test `test` passes.
fn first(test: impl Fn(&Sniff) -> bool) -> Option<&'static Format> {
    FORMATS.iter().find(|f| test(&f.sniff))
}

/// The result of sniffing a file or directory: its format and, for files, its text.
pub(super) enum Content {
    /// A format nixcut reads, and the file's whole text (empty for a directory).
    Known(&'static Format, String),
    /// No format nixcut reads: what was seen.
    Unknown(String),
}

impl Content {
    /// Read the input `path` when its format is known; else the error naming what
    /// was seen.
    pub(super) fn load(self, path: &Path, opts: &LoadOptions) -> Result<Closure, LoadError> {
        match self {
            Content::Known(format, text) => (format.read)(text, path, opts),
            Content::Unknown(seen) => Err(LoadError::UnknownFormat {
                path: path.to_path_buf(),
                seen,
            }),
        }
    }
}

/// Read a stream once and load it by its content (only file formats can arrive this way).
pub(super) fn load_stream(
    reader: impl Read,
    path: &Path,
    opts: &LoadOptions,
) -> Result<Closure, LoadError> {
    let content = match read_sniffed(reader, None, path, None, opts.max_input())? {
        Sniffed::Text(text) => sniff_text(text, path)?,
        Sniffed::Unknown(seen) => Content::Unknown(seen),
    };
    content.load(path, opts)
}

/// Sniff the file or directory at `path`; files are read whole (up to the options'
/// input cap)
/// unless their first bytes show they are no input.
pub(super) fn detect_content(path: &Path, opts: &LoadOptions) -> Result<Content, LoadError> {
    let cap = opts.max_input();
    let meta = std::fs::metadata(path).map_err(|e| LoadError::io(path, e))?;
    if meta.is_dir() {
        return detect_dir(path);
    }
    if let Some(format) = first(|s| matches!(s, Sniff::File(test) if test(path))) {
        return Ok(Content::Known(format, String::new()));
    }
    let file = std::fs::File::open(path).map_err(|e| LoadError::io(path, e))?;
    let text = match read_sniffed(&file, Some(&file), path, Some(meta.len()), cap)? {
        Sniffed::Text(text) => text,
        Sniffed::Unknown(seen) => return Ok(Content::Unknown(seen)),
    };
    let content = sniff_text(text, path)?;
    if matches!(content, Content::Known(..)) {
        opts.timings
            .step("load: read, UTF-8 check, format sniffing");
    }
    Ok(content)
}

fn detect_dir(path: &Path) -> Result<Content, LoadError> {
    // Listed first: an unreadable directory (EACCES) is reported as such, not as a
    // directory that holds nothing of interest.
    let listing = std::fs::read_dir(path).map_err(|e| LoadError::io(path, e))?;
    let holds = |sniff: &Sniff| matches!(sniff, Sniff::DirHolds(f) if path.join(f).is_file());
    if let Some(format) = first(holds) {
        return Ok(Content::Known(format, String::new()));
    }
    if let Some(format) = first(|s| matches!(s, Sniff::Dir(test) if test(path))) {
        return Ok(Content::Known(format, String::new()));
    }
    // Its entries are not named: a message quotes what the input is, not the files
    // of someone's directory (which may be anything: a home directory, secrets).
    let total = listing.filter_map(|e| e.ok()).count();
    Ok(Content::Unknown(format!(
        "a directory ({total} entr{}) that is neither a store path nor a closureInfo \
         directory (no `registration`) nor a binary cache (no `nix-cache-info`) nor a \
         Parquet dataset (no file starting with `PAR1`)",
        if total == 1 { "y" } else { "ies" }
    )))
}

/// Sniff a file's text; `Err` when it is JSON that does not parse (and starts like no
/// format that is recognised cut short).
fn sniff_text(text: String, path: &Path) -> Result<Content, LoadError> {
    if let Some(format) = first(|s| matches!(s, Sniff::Text(test) if test(&text))) {
        return Ok(Content::Known(format, text));
    }
    let t = text.trim_start();
    if t.starts_with('{') || t.starts_with('[') {
        let shape = match json::parse_value(&text, path) {
            Ok(value) => json::classify(&value),
            Err(e) => {
                return match first(|s| matches!(s, Sniff::BrokenJson(test) if test(t))) {
                    Some(format) => Ok(Content::Known(format, text)),
                    None => Err(e),
                }
            }
        };
        return Ok(
            match first(|s| matches!(s, Sniff::Json(test) if test(&shape))) {
                Some(format) => Content::Known(format, text),
                None => Content::Unknown(match shape {
                    JsonShape::Unknown(seen) => seen,
                    other => format!("a JSON document of no format nixcut reads ({other:?})"),
                }),
            },
        );
    }
    if t.is_empty() {
        return Ok(Content::Unknown("an empty file".into()));
    }
    Ok(Content::Unknown(format!(
        "text starting with `{}`",
        sanitize(text.lines().next().unwrap_or_default(), 60)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        format!("{}/tests/fixtures/load/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn detects_every_fixture_by_content() {
        for (name, want) in [
            ("path-info-2.8.json", Detected::PathInfoJson),
            ("path-info-format3.json", Detected::PathInfoJson),
            ("attrs.json", Detected::StructuredAttrs),
            (
                "dump-db.txt",
                Detected::Registration(RecordKind::Registration),
            ),
            (
                "export-references-graph",
                Detected::Registration(RecordKind::ExportReferencesGraph),
            ),
            ("nix-store-graph.dot", Detected::NixStoreGraph),
            ("closure-info", Detected::ClosureInfoDir),
            ("binary-cache", Detected::BinaryCacheDir),
        ] {
            match detect_content(Path::new(&fixture(name)), &LoadOptions::default()).unwrap() {
                Content::Known(f, _) => assert_eq!(f.kind, want, "{name}"),
                Content::Unknown(seen) => panic!("{name}: {seen}"),
            }
        }
    }
}
