//! A structured-attrs `.attrs.json` holding `exportReferencesGraph` results.
//!
//! With `__structuredAttrs = true; exportReferencesGraph.<key> = [ drv … ];` Nix puts
//! under each `<key>` an array of `{path, narHash ("sha256:<nix32>"), narSize,
//! references, closureSize}`. Every key holding such an array is read and the results
//! merged; two keys that disagree about a path give a warning and the first one wins.
//! Everything else in the file (the derivation's other attributes) is ignored.
//! `super::json::classify` uses `graph_keys` to recognise the file.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::json::{graph_keys, json_error, located, parse_value, with_store_dir_hint};
use super::{LoadError, LoadOptions};
use crate::store::{Closure, LoadWarning, NarHash, PathInfo, SourceKind};

#[derive(Debug, Deserialize)]
struct Entry {
    path: String,
    #[serde(rename = "narHash")]
    nar_hash: Option<String>,
    #[serde(rename = "narSize")]
    nar_size: Option<u64>,
    #[serde(default)]
    references: Vec<String>,
    #[serde(rename = "closureSize")]
    closure_size: Option<u64>,
}

/// Read a `.attrs.json`; paths are full paths in the options' store directory.
pub fn parse(text: &str, path: &Path, opts: &LoadOptions) -> Result<Closure, LoadError> {
    let value = parse_value(text, path)?;
    let Value::Object(map) = value else {
        return Err(LoadError::Invalid {
            path: path.to_path_buf(),
            message: "a structured-attrs file is a JSON object".into(),
        });
    };
    let keys: Vec<String> = graph_keys(&map).into_iter().map(String::from).collect();
    if keys.is_empty() {
        return Err(LoadError::Invalid {
            path: path.to_path_buf(),
            message: "no key holds exportReferencesGraph results (arrays of {path, narHash, \
                      narSize, references})"
                .into(),
        });
    }
    let sd = opts.store_dir_or_default();
    let mut closure = Closure::new(
        sd.clone(),
        SourceKind::StructuredAttrs,
        path.display().to_string(),
    );
    let mut map = map;
    for key in &keys {
        let Some(v) = map.remove(key) else { continue };
        let entries: Vec<Entry> = serde_json::from_value(v).map_err(|e| {
            let msg = format!("key `{key}`: {}", strip_position(&e));
            match located(text, path, key, key, msg) {
                // Point at the key when the value's own position is lost.
                err @ LoadError::Json { .. } => err,
                _ => json_error(path, &e),
            }
        })?;
        for e in entries {
            let sp = sd
                .parse_path(&e.path)
                .map_err(|err| located(text, path, &e.path, key, with_store_dir_hint(&err, &sd)))?;
            let mut info = PathInfo::new(sp);
            info.nar_hash = e.nar_hash.as_deref().map(NarHash::parse);
            info.nar_size = e.nar_size;
            info.reported_closure_size = e.closure_size;
            for r in &e.references {
                let rp = sd.parse_path(r).map_err(|err| {
                    located(
                        text,
                        path,
                        r,
                        &e.path,
                        format!("reference: {}", with_store_dir_hint(&err, &sd)),
                    )
                })?;
                info.references.push(rp);
            }
            info.normalise();
            match closure.paths.get(&info.path) {
                None => closure.insert(info),
                Some(prev) => {
                    if prev.nar_hash != info.nar_hash
                        || prev.nar_size != info.nar_size
                        || prev.references != info.references
                    {
                        closure.warnings.push(LoadWarning::KeyDiffers {
                            file: path.display().to_string(),
                            key: key.to_string(),
                            path: e.path.to_string(),
                        });
                    }
                }
            }
        }
    }
    if closure.paths.values().any(|i| i.nar_size.is_none()) {
        closure.warnings.push(LoadWarning::WithoutNarSize {
            file: path.display().to_string(),
            count: None,
        });
    }
    Ok(closure)
}

fn strip_position(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    full.strip_suffix(&suffix).unwrap_or(&full).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Closure, LoadError> {
        parse(text, Path::new(".attrs.json"), &LoadOptions::default())
    }

    #[test]
    fn reads_and_merges_keys() {
        let p = format!(
            "{}/tests/fixtures/load/attrs.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let c = read(&std::fs::read_to_string(p).unwrap()).unwrap();
        assert_eq!(c.source, SourceKind::StructuredAttrs);
        assert_eq!(c.paths.len(), 5);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        let app = c
            .paths
            .values()
            .find(|i| i.path.name() == "app-1.0")
            .unwrap();
        assert_eq!(app.nar_size, Some(664));
        assert_eq!(app.reported_closure_size, Some(2248));
        assert_eq!(app.references.len(), 4);
    }

    #[test]
    fn disagreeing_keys_warn() {
        let a = "/nix/store/x71ahacbysflg2pf8638mdh69871353b-libfoo-3.2";
        let text = format!(
            r#"{{"one":[{{"path":"{a}","narSize":1,"references":[]}}],
                 "two":[{{"path":"{a}","narSize":2,"references":[]}}],
                 "name":"x"}}"#
        );
        let c = read(&text).unwrap();
        assert_eq!(c.paths.values().next().unwrap().nar_size, Some(1));
        assert!(
            c.warnings.iter().any(|w| w.to_string().contains("`two`")),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn errors_are_located() {
        let text = "{\"closure\": [{\"path\": \"/nix/store/nope\", \"narSize\": 1}]}";
        let e = read(text).unwrap_err();
        assert!(matches!(e, LoadError::Json { line: 1, .. }), "{e}");
        let text = "{\n\"closure\": [{\"path\": \"/x\", \"narSize\": -1}]}";
        let e = read(text).unwrap_err();
        assert!(
            matches!(
                e,
                LoadError::Json {
                    line: 2,
                    column: 1,
                    ..
                }
            ),
            "{e}"
        );
        assert!(read("{\"x\": 1}").is_err());
    }
}
