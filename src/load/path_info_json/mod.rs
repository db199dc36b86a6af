//! `nix path-info --json` output of every Nix version, read into a [`Closure`].
//!
//! The shapes (see `docs/nix-formats.md`): an array of objects with `path` (≤ 2.18 and
//! Lix; `sha256:<nix32>` hashes up to 2.3, SRI after; `valid` from 2.15); an object
//! keyed by full store path (2.19+, explicit `null`s from 2.23, per-entry `version` and
//! `storeDir` in 2.33's format 1); and the `{version, storeDir, info}` wrapper of
//! formats 2 and 3 (2.33+), keyed by base names, with base-name references and
//! deriver, `ca` as an object and, in format 3, signatures as `{keyName, sig}`.
//! Invalid paths (`valid: false`, `null`) go to [`Closure::invalid`] with a warning.
//! Unknown fields are ignored.
//!
//! The three shapes are recognised from their first bytes (`[`, a first key starting
//! with `/`, or a first key `info`, `storeDir` or `version`) and parsed once, straight
//! into typed structs. Other documents (and a wrong guess) are parsed twice: once into a
//! `serde_json::Value` to tell the shapes apart, once into typed structs so that a value of
//! the wrong type is reported with serde_json's line and column. Errors found after
//! parsing (a malformed store path) are located by searching the text for the
//! offending string.
//!
//! Each shape is its own module (`array`, `keyed`, `wrapper`), reading its document
//! into chunks of raw entries (`raw`: the serde layer, strings borrowed from the
//! document); `convert` turns those into the [`Closure`] on every core.

mod array;
mod convert;
mod keyed;
mod raw;
#[cfg(test)]
mod tests;
mod wrapper;

use std::path::Path;

use super::json::{classify, parse_value, JsonShape, PathInfoShape};
use super::json_parts;
use super::{LoadError, LoadOptions};
use crate::store::Closure;
use convert::{Builder, Converted};

/// The shape of a path-info document guessed from its first bytes: `[` is the array
/// shape, `{` followed by a key starting with `/` the keyed shape. `None` when the start
/// does not tell (the wrapper, structured attrs, snapshots: classified from the parsed
/// value). A wrong guess costs only a second parse: [`parse`] falls back.
pub fn quick_shape(text: &str) -> Option<PathInfoShape> {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('[') {
        return Some(PathInfoShape::Array);
    }
    let rest = t.strip_prefix('{')?.trim_start();
    if rest.starts_with("\"/") {
        return Some(PathInfoShape::Keyed);
    }
    // The wrapper's own keys, in any order (Nix writes them sorted: `info` first).
    ["\"info\"", "\"storeDir\"", "\"version\""]
        .iter()
        .any(|k| rest.starts_with(k))
        .then_some(PathInfoShape::Wrapper)
}

/// Read `nix path-info --json` output of any Nix version. `path` names the input in
/// messages and in [`Closure::origin`].
pub fn parse(text: &str, path: &Path, opts: &LoadOptions) -> Result<Closure, LoadError> {
    parse_converted(text, path, opts).map(Converted::finish)
}

/// [`parse`] of a document the caller gives away: it is freed as soon as its entries
/// are converted, while the path map is built (where the memory peaks: the document
/// was a third of it), on another core: returning 80 MB to the kernel takes as long
/// as a fifth of the map.
pub fn parse_owned(text: String, path: &Path, opts: &LoadOptions) -> Result<Closure, LoadError> {
    let converted = parse_converted(&text, path, opts)?;
    let (closure, ()) = rayon::join(|| converted.finish(), move || drop(text));
    Ok(closure)
}

fn parse_converted<'p>(
    text: &str,
    path: &'p Path,
    opts: &LoadOptions,
) -> Result<Converted<'p>, LoadError> {
    // Large documents are nearly always the array or keyed shape: parse them straight
    // into typed structs; anything else (or a wrong guess) goes through the value-based
    // classification, which also gives the better error message.
    let mut tried = None;
    if let Some(shape) = quick_shape(text) {
        match parse_shape(text, path, opts, shape) {
            Ok(c) => return Ok(c),
            Err(e) => tried = Some((shape, e)),
        }
    }
    let value = parse_value(text, path)?;
    let shape = match classify(&value) {
        JsonShape::PathInfo(s) => s,
        JsonShape::StructuredAttrs => {
            return Err(LoadError::Invalid {
                path: path.to_path_buf(),
                message: "this is a structured-attrs .attrs.json, not `nix path-info --json` \
                          output"
                    .into(),
            })
        }
        JsonShape::Snapshot => {
            return Err(LoadError::UnknownFormat {
                path: path.to_path_buf(),
                seen: "a nixcut snapshot, not `nix path-info --json` output".into(),
            })
        }
        JsonShape::Unknown(seen) => {
            return Err(LoadError::UnknownFormat {
                path: path.to_path_buf(),
                seen,
            })
        }
    };
    drop(value);
    match tried {
        // The guess was right: parsing it again would fail the same way.
        Some((guessed, e)) if guessed == shape => Err(e),
        _ => parse_shape(text, path, opts, shape),
    }
}

/// Parse a document of a known shape into converted entries.
fn parse_shape<'p>(
    text: &str,
    path: &'p Path,
    opts: &LoadOptions,
    shape: PathInfoShape,
) -> Result<Converted<'p>, LoadError> {
    parse_shape_split(text, path, opts, shape, PARALLEL_BYTES)
}

/// Documents from this size on are parsed on every core ([`json_parts`]).
const PARALLEL_BYTES: usize = 4 << 20;

/// [`parse_shape`], with documents of `split_from` bytes or more parsed on every core.
fn parse_shape_split<'p>(
    text: &str,
    path: &'p Path,
    opts: &LoadOptions,
    shape: PathInfoShape,
    split_from: usize,
) -> Result<Converted<'p>, LoadError> {
    // The offset of the document's first `{` or `[` when it is parsed in parts.
    let parallel = (text.len() >= split_from && rayon::current_num_threads() > 1)
        .then(|| json_parts::skip_ws(text, 0));
    let b = Builder::new(text, path, &opts.timings);
    match shape {
        PathInfoShape::Array => array::read(b, parallel, opts),
        PathInfoShape::Keyed => keyed::read(b, parallel, opts),
        PathInfoShape::Wrapper => wrapper::read(b, parallel, opts),
    }
}
