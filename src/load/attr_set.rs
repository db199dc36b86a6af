//! Package sets that name their roots by attribute path: what an evaluator or a review
//! tool writes, read into a [`PackageSet`] whose `attrs` say which attribute each root
//! is, so that reports show `python3Packages.numpy` beside `python3.12-numpy`.
//!
//! - **nix-eval-jobs** (what Hydra's evaluator runs, and CI jobs on flakes): JSON lines,
//!   one job a line, `{"attr": "hello", "attrPath": ["hello"], "drvPath": …,
//!   "outputs": {"out": "/nix/store/…-hello-2.12.1"}, "system": …}`. Every output path
//!   is a root, named `attr` for `out` and `attr.<output>` for the others (the way
//!   nixpkgs-review names them). A line with `error` and no outputs (the job did not
//!   evaluate) is no root; such lines are counted in one warning. An output whose path
//!   is `null` (a content-addressed output not yet built) is skipped the same way.
//!   Recognised by its first line: a JSON object with `attr` (or `attrPath`) and
//!   `outputs` (or `error`); a first line too long for the 64 KiB head is recognised by
//!   its start, `{"attr":`.
//! - **nixpkgs-review** (`nixpkgs-review pr N`, `rev`, `wip`): its directory
//!   (`~/.cache/nixpkgs-review/pr-N/`) holds `report.json` and `results/`, a symlink per
//!   output built, named `<attr>` or `<attr>.<output>`, then `-<system>` since
//!   nixpkgs-review 3 (`results/hello-x86_64-linux`), and pointing to the store path.
//!   The systems are the keys of `report.json`'s `result` (or its `system`, in the
//!   older single-system report); the suffix is taken off, and when the report has
//!   several systems the attribute is written Hydra's way, `hello.x86_64-linux`.
//!   Links in `failed_results/` are not roots. A link that does not point to a store
//!   path is an error naming it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::json::json_error;
use super::package_set::{PackageSet, Roots};
use super::read::read_text_file;
use super::{LoadError, LoadOptions};
use crate::store::LoadWarning;

/// Whether `text` (a file's head) is nix-eval-jobs output (see the module docs).
pub fn looks_like_eval_jobs(text: &[u8]) -> bool {
    let Some(line) = text
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .find(|l| !l.is_empty())
    else {
        return false;
    };
    if !line.starts_with(b"{") {
        return false;
    }
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(o)) => {
            (o.contains_key("attr") || o.contains_key("attrPath"))
                && (o.contains_key("outputs") || o.contains_key("error"))
        }
        Ok(_) => false,
        // A first line longer than the head that was read: judged by its start.
        Err(e) if e.is_eof() => {
            let squeezed: Vec<u8> = line
                .iter()
                .copied()
                .filter(|b| !b.is_ascii_whitespace())
                .take(8)
                .collect();
            squeezed == b"{\"attr\":"
        }
        Err(_) => false,
    }
}

/// The attribute of a job: `attr`, else `attrPath` joined by dots.
fn job_attr(o: &serde_json::Map<String, Value>) -> Option<String> {
    if let Some(Value::String(a)) = o.get("attr") {
        return Some(a.clone());
    }
    let path = o.get("attrPath")?.as_array()?;
    let parts: Option<Vec<&str>> = path.iter().map(Value::as_str).collect();
    parts.map(|p| p.join("."))
}

/// Read nix-eval-jobs output (JSON lines) from `text`, read from `origin`.
pub fn parse_eval_jobs(
    text: &[u8],
    origin: &str,
    opts: &LoadOptions,
) -> Result<PackageSet, LoadError> {
    let path = PathBuf::from(origin);
    let mut roots = Roots::new(origin, opts);
    let (mut without, mut first_without): (u64, Option<(usize, String)>) = (0, None);
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        let line_no = i + 1;
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            continue;
        }
        let at = |e: &serde_json::Error| match json_error(&path, e) {
            LoadError::Json {
                path,
                column,
                message,
                ..
            } => LoadError::Json {
                path,
                line: line_no,
                column: column + (line.len() - line.trim_ascii_start().len()),
                message,
            },
            other => other,
        };
        let v: Value = serde_json::from_slice(trimmed).map_err(|e| at(&e))?;
        let bad = |what: &str| LoadError::Text {
            path: path.clone(),
            line: line_no,
            expected: "a nix-eval-jobs job (a JSON object with `attr` and `outputs`)".into(),
            found: what.to_string(),
        };
        let Value::Object(o) = v else {
            return Err(bad("another JSON value"));
        };
        let attr = job_attr(&o).ok_or_else(|| bad("an object without `attr` or `attrPath`"))?;
        let outputs = match o.get("outputs") {
            Some(Value::Object(outs)) => outs,
            None | Some(Value::Null) => {
                without += 1;
                first_without.get_or_insert((line_no, attr));
                continue;
            }
            Some(_) => return Err(bad("`outputs` that is not an object")),
        };
        let before = without;
        // Outputs in name order, `out` first: the same roots whatever order they came in.
        let mut outs: Vec<(&String, &Value)> = outputs.iter().collect();
        outs.sort_by_key(|(name, _)| (name.as_str() != "out", name.as_str()));
        for (name, p) in outs {
            let named = if name == "out" {
                attr.clone()
            } else {
                format!("{attr}.{name}")
            };
            match p {
                Value::String(p) => roots.push(p, line_no, Some(named))?,
                Value::Null => {
                    if without == before {
                        without += 1;
                        first_without.get_or_insert((line_no, attr.clone()));
                    }
                }
                _ => {
                    return Err(bad(&format!(
                        "output `{}` whose path is not a string",
                        crate::store::sanitize(name, 80)
                    )))
                }
            }
        }
    }
    let mut set = roots.finish()?;
    if let Some((line, attr)) = first_without {
        set.warnings.push(LoadWarning::JobsWithoutOutputs {
            file: origin.to_string(),
            count: without,
            line: line as u64,
            attr,
        });
    }
    Ok(set)
}

/// Whether `dir` is a nixpkgs-review directory: `report.json` and `results/` in it.
pub fn is_nixpkgs_review(dir: &Path) -> bool {
    dir.join("report.json").is_file() && dir.join("results").is_dir()
}

/// The systems a nixpkgs-review `report.json` was run on.
fn review_systems(report: &Path, opts: &LoadOptions) -> Result<Vec<String>, LoadError> {
    let text = read_text_file(report, opts.max_input()).map_err(|e| LoadError::io(report, e))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| json_error(report, &e))?;
    let bad = || LoadError::Invalid {
        path: report.to_path_buf(),
        message: "not a nixpkgs-review report: it has neither `result` (an object keyed by \
                  system) nor `system`"
            .into(),
    };
    match (v.get("result"), v.get("system")) {
        (Some(Value::Object(r)), _) => Ok(r.keys().cloned().collect()),
        (_, Some(Value::String(s))) => Ok(vec![s.clone()]),
        _ => Err(bad()),
    }
}

/// Read a nixpkgs-review directory (see the module docs): one root per link in
/// `results/`, in name order, named by the link.
pub fn read_nixpkgs_review(dir: &Path, opts: &LoadOptions) -> Result<PackageSet, LoadError> {
    let systems = review_systems(&dir.join("report.json"), opts)?;
    let results = dir.join("results");
    let mut names: Vec<(String, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(&results).map_err(|e| LoadError::io(&results, e))? {
        let entry = entry.map_err(|e| LoadError::io(&results, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        names.push((name, entry.path()));
    }
    names.sort();
    let origin = dir.display().to_string();
    let mut roots = Roots::new(&origin, opts);
    for (k, (name, link)) in names.iter().enumerate() {
        let target = std::fs::read_link(link).map_err(|e| LoadError::Invalid {
            path: link.clone(),
            message: format!("not a link to a store path ({e})"),
        })?;
        let Some(target) = target.to_str() else {
            return Err(LoadError::Invalid {
                path: link.clone(),
                message: "its target is not UTF-8, so no store path".into(),
            });
        };
        // The result's system, taken off its name; Hydra's `attr.system` with several.
        let attr = systems
            .iter()
            .find_map(|s| {
                name.strip_suffix(s.as_str())
                    .and_then(|a| a.strip_suffix('-'))
                    .filter(|a| !a.is_empty())
                    .map(|a| match systems.len() {
                        1 => a.to_string(),
                        _ => format!("{a}.{s}"),
                    })
            })
            .unwrap_or_else(|| name.clone());
        roots.push(target, k + 1, Some(attr)).map_err(|e| match e {
            LoadError::Text {
                expected, found, ..
            } => LoadError::Invalid {
                path: link.clone(),
                message: format!("the link points to {found}; expected {expected}"),
            },
            other => other,
        })?;
    }
    roots.finish().map_err(|e| match e {
        LoadError::Invalid { .. } => LoadError::Invalid {
            path: results.clone(),
            message: "no results: nixpkgs-review built nothing (or the links are gone)".into(),
        },
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HELLO: &str = "/nix/store/x71ahacbysflg2pf8638mdh69871353b-hello-2.12.1";
    const DEV: &str = "/nix/store/0lx7p0xfn5fwq8lq4mzkm8ni8a0d2x6c-openssl-3.0.13-dev";
    const OUT: &str = "/nix/store/1lx7p0xfn5fwq8lq4mzkm8ni8a0d2x6c-openssl-3.0.13";

    #[test]
    fn eval_jobs_lines_name_every_output() {
        let text = format!(
            "{{\"attr\":\"hello\",\"attrPath\":[\"hello\"],\"drvPath\":\"/nix/store/a.drv\",\"outputs\":{{\"out\":\"{HELLO}\"}},\"system\":\"x86_64-linux\"}}\n\
             {{\"attr\":\"broken\",\"attrPath\":[\"broken\"],\"error\":\"boom\"}}\n\
             {{\"attrPath\":[\"openssl\"],\"outputs\":{{\"dev\":\"{DEV}\",\"out\":\"{OUT}\"}}}}\n"
        );
        assert!(looks_like_eval_jobs(text.as_bytes()));
        let s = parse_eval_jobs(text.as_bytes(), "jobs", &LoadOptions::default()).unwrap();
        let got: Vec<(String, Option<String>)> = s
            .roots
            .iter()
            .map(|r| r.name().to_string())
            .zip(s.attrs.iter().cloned())
            .collect();
        assert_eq!(
            got,
            vec![
                ("hello-2.12.1".into(), Some("hello".into())),
                ("openssl-3.0.13".into(), Some("openssl".into())),
                ("openssl-3.0.13-dev".into(), Some("openssl.dev".into())),
            ]
        );
        assert_eq!(s.lines, vec![1, 3, 3]);
        assert_eq!(
            s.warnings,
            vec![LoadWarning::JobsWithoutOutputs {
                file: "jobs".into(),
                count: 1,
                line: 2,
                attr: "broken".into()
            }]
        );
    }

    #[test]
    fn eval_jobs_errors_name_the_line() {
        let opts = LoadOptions::default();
        let e = parse_eval_jobs(
            format!("{{\"attr\":\"a\",\"outputs\":{{\"out\":\"{HELLO}\"}}}}\n{{\"attr\": 1,\n")
                .as_bytes(),
            "jobs",
            &opts,
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("jobs:2:"), "{e}");
        let e = parse_eval_jobs(
            b"{\"attr\":\"a\",\"outputs\":{\"out\":\"/nix/store/nope\"}}\n",
            "jobs",
            &opts,
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("jobs:1: expected a store path"), "{e}");
        let e = parse_eval_jobs(b"{\"attr\":\"a\",\"outputs\":[1]}\n", "jobs", &opts)
            .unwrap_err()
            .to_string();
        assert!(e.contains("jobs:1:") && e.contains("not an object"), "{e}");
        // A store-paths list and path-info JSON are not nix-eval-jobs output.
        assert!(!looks_like_eval_jobs(format!("{HELLO}\n").as_bytes()));
        assert!(!looks_like_eval_jobs(
            b"{\"/nix/store/x\": {\"narSize\": 1}}"
        ));
        // A first line cut by the head: judged by its start.
        assert!(looks_like_eval_jobs(
            b"{\"attr\":\"hello\",\"inputDrvs\":{\"/nix/st"
        ));
    }

    proptest::proptest! {
        /// A listing with bytes changed anywhere, or cut anywhere, is read or refused,
        /// never a panic; an error names the file and its message has no raw control
        /// character.
        #[test]
        fn mutated_listings_never_panic(
            edits in proptest::collection::vec((0usize..400, proptest::num::u8::ANY), 0..6),
            cut in 0usize..400,
        ) {
            let mut text = format!(
                "{{\"attr\":\"hello\",\"outputs\":{{\"out\":\"{HELLO}\",\"dev\":\"{DEV}\"}}}}\n\
                 {{\"attrPath\":[\"a\",\"b\"],\"error\":\"x\"}}\n\
                 {{\"attr\":\"o\",\"outputs\":{{\"out\":\"{OUT}\",\"lib\":null}}}}\n"
            )
            .into_bytes();
            for (at, b) in edits {
                let at = at % text.len();
                text[at] = b;
            }
            text.truncate(cut.min(text.len()));
            let _ = looks_like_eval_jobs(&text);
            if let Err(e) = parse_eval_jobs(&text, "jobs", &LoadOptions::default()) {
                let e = e.to_string();
                proptest::prop_assert!(e.starts_with("jobs"), "{}", e);
                proptest::prop_assert!(!e.chars().any(char::is_control), "{:?}", e);
            }
        }
    }
}
