//! JSON inputs in general: parsing with positions in errors, telling the JSON shapes
//! apart by their structure ([`classify`]: path-info of any Nix version, structured
//! attrs, snapshot), and locating an entry's text for an error. The per-format readers
//! (`path_info_json/`, `structured_attrs.rs`) build on these and not on each other.

use std::path::Path;

use serde_json::{Map, Value};

use super::LoadError;
use crate::store::{StoreDir, StorePathError};

/// The shape of a JSON input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonShape {
    /// `nix path-info --json` output.
    PathInfo(PathInfoShape),
    /// A structured-attrs `.attrs.json` with `exportReferencesGraph` results.
    StructuredAttrs,
    /// A nixcut snapshot.
    Snapshot,
    /// Something else, described for the error message.
    Unknown(String),
}

/// Which `nix path-info --json` layout a document has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathInfoShape {
    /// An array of objects with `path` (Nix ≤ 2.18, Lix).
    Array,
    /// An object keyed by full store path (Nix 2.19 – 2.32, 2.33+ format 1).
    Keyed,
    /// `{version, storeDir, info}` keyed by base name (Nix 2.33+ formats 2 and 3).
    Wrapper,
}

/// Parse JSON text, reporting a syntax error with its line and column.
pub fn parse_value(text: &str, path: &Path) -> Result<Value, LoadError> {
    serde_json::from_str(text).map_err(|e| json_error(path, &e))
}

/// Turn a serde_json error into a [`LoadError::Json`] with its position.
pub(crate) fn json_error(path: &Path, e: &serde_json::Error) -> LoadError {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
    LoadError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message,
    }
}

/// Tell the JSON inputs apart by their structure.
pub fn classify(v: &Value) -> JsonShape {
    match v {
        Value::Array(items) => {
            if items.iter().all(Value::is_object) {
                JsonShape::PathInfo(PathInfoShape::Array)
            } else {
                JsonShape::Unknown("a JSON array whose items are not all objects".into())
            }
        }
        Value::Object(map) => {
            if map.get("kind").and_then(Value::as_str) == Some("nixcut-snapshot")
                || map.contains_key("nixcut_snapshot")
            {
                return JsonShape::Snapshot;
            }
            if map.get("info").is_some_and(Value::is_object) && map.contains_key("version") {
                return JsonShape::PathInfo(PathInfoShape::Wrapper);
            }
            if map
                .iter()
                .all(|(k, v)| k.starts_with('/') && (v.is_object() || v.is_null()))
            {
                return JsonShape::PathInfo(PathInfoShape::Keyed);
            }
            if !graph_keys(map).is_empty() {
                return JsonShape::StructuredAttrs;
            }
            let mut keys: Vec<String> =
                map.keys().take(8).map(|k| super::sanitize(k, 40)).collect();
            if map.len() > keys.len() {
                keys.push("…".into());
            }
            JsonShape::Unknown(format!("a JSON object with keys [{}]", keys.join(", ")))
        }
        other => JsonShape::Unknown(format!("a JSON {}", json_type(other))),
    }
}

/// A store-path error's message, with a hint about `--store-dir` when it is an
/// absolute path outside the store directory.
pub(crate) fn with_store_dir_hint(e: &StorePathError, sd: &StoreDir) -> String {
    match e {
        StorePathError::NotInStore(path, _) if path.starts_with('/') => format!(
            "{e} (the input's store directory is taken to be {sd}; pass --store-dir if it is \
             another)"
        ),
        _ => e.to_string(),
    }
}

/// A [`LoadError::Json`] at the first occurrence of `"needle"` in `text`, or a
/// [`LoadError::JsonEntry`] naming `entry` when it cannot be found.
pub(crate) fn located(
    text: &str,
    path: &Path,
    needle: &str,
    entry: &str,
    message: String,
) -> LoadError {
    let quoted = format!("\"{needle}\"");
    match text.find(&quoted) {
        Some(at) => {
            let before = &text[..at];
            let line = before.matches('\n').count() + 1;
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let column = before[line_start..].chars().count() + 1;
            LoadError::Json {
                path: path.to_path_buf(),
                line,
                column,
                message,
            }
        }
        None => LoadError::JsonEntry {
            path: path.to_path_buf(),
            entry: super::sanitize(entry, 120),
            message,
        },
    }
}

/// The keys of `map` that hold `exportReferencesGraph` results: non-empty arrays of
/// objects that each have a string `path` and a `narHash` or `narSize`.
pub fn graph_keys(map: &Map<String, Value>) -> Vec<&str> {
    map.iter()
        .filter(|(_, v)| {
            v.as_array().is_some_and(|items| {
                !items.is_empty()
                    && items.iter().all(|i| {
                        i.get("path").is_some_and(Value::is_string)
                            && (i.get("narHash").is_some() || i.get("narSize").is_some())
                    })
            })
        })
        .map(|(k, _)| k.as_str())
        .collect()
}

pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
