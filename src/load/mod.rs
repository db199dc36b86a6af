//! Loaders: every input nixcut accepts, turned into one [`Closure`].
//!
//! [`load`] looks at what an input *is*, never at its name: a directory is a closureInfo
//! output (it has `registration`) or a binary cache (it has `nix-cache-info`); a file is
//! sniffed as JSON (`nix path-info --json` of any Nix version, a structured-attrs
//! `.attrs.json`, a nixcut snapshot) or text (registration records, the sizeless
//! `exportReferencesGraph` records, or the DOT graph of `nix-store --query --graph`); a
//! store path, or a symlink to one such as
//! `./result`, is read from the local store's database, or queried through the installed
//! `nix` when the database cannot be read (even when that store path is itself, say, a
//! closureInfo output: name a file inside it, `result/registration`, to read the file
//! instead). Each format lives in its own module; all of them fill the vocabulary of
//! `crate::store` and nothing else. Which format an input is, is decided in one table
//! (`detect.rs`); reading an input's bytes under the size cap is `read.rs`, and which
//! store path an input is, `in_store.rs`. The graph layer reads the resulting
//! [`Closure`].
//!
//! Errors are [`LoadError`]s naming the file and the position (line and column for
//! JSON, line and what was expected for text). Problems that do not stop loading
//! (invalid paths, missing sizes, cross-check mismatches) become
//! [`Closure::warnings`].
//!
//! Package sets (many roots, no graph of their own) are read apart: `package_set.rs`
//! (a list of store paths) and `attr_set.rs` (nix-eval-jobs or Hydra job listings, a
//! nixpkgs-review directory: roots named by attribute path).

pub mod attr_set;
pub mod binary_cache;
pub mod closure_info;
pub mod closure_record;
mod detect;
mod error;
pub mod gc_roots;
pub mod http_cache;
mod in_store;
pub mod json;
mod json_parts;
pub mod live;
pub mod nix_store_graph;
mod options;
pub mod package_set;
pub mod path_info_json;
mod read;
pub mod registration;
pub mod snapshot;
pub mod store_db;
pub mod structured_attrs;
pub mod whole;
pub mod whole_json;

use std::io;
use std::path::Path;

use detect::{detect_content, load_stream, Content};
use in_store::store_path_of;
use read::is_stream;

use crate::store::{sanitize, Closure, LoadWarning};

pub use error::LoadError;
pub(crate) use error::{found, refuse_size_overflow};
use options::STDIN_NAME;
pub use options::{LoadOptions, NixCommand, DEFAULT_MAX_INPUT_BYTES};

/// Load `input` (a path, see the module docs) into a [`Closure`], detecting its format
/// from its content.
pub fn load(input: &str, opts: &LoadOptions) -> Result<Closure, LoadError> {
    if http_cache::wants(input, opts) {
        return http_cache::load(input, opts);
    }
    let path = Path::new(input);
    // Streams are read once, as they come: standard input (`-`), a pipe or process
    // substitution (`<(nix path-info --json -r …)` is `/dev/fd/N`, a symlink to
    // `pipe:[…]` that cannot be resolved and re-opened), a FIFO, a character device.
    if input == "-" {
        let stdin = io::stdin();
        let closure = load_stream(&mut stdin.lock(), Path::new(STDIN_NAME), opts)?;
        return finish(closure, Path::new(STDIN_NAME), opts);
    }
    if is_stream(path) {
        let file = std::fs::File::open(path).map_err(|e| LoadError::io(path, e))?;
        let closure = load_stream(file, path, opts)?;
        return finish(closure, path, opts);
    }
    let closure = match store_path_of(path, opts)? {
        // A store path that is itself a file in a format we know (a snapshot baseline
        // copied into the store by `"${./ci/closure-baseline.json}"`): read the file.
        Some((sp, sub, phys)) if sub.is_empty() && phys.is_file() => {
            match detect_content(&phys, opts)? {
                known @ Content::Known(..) => known.load(path, opts)?,
                Content::Unknown(_) => live::load(path, &sp, opts)?,
            }
        }
        // The store path itself (or a symlink to it): ask Nix.
        Some((sp, sub, _)) if sub.is_empty() => live::load(path, &sp, opts)?,
        // A file or directory inside a store path: read it if it is a format we know,
        // else ask Nix about the store path that contains it.
        Some((sp, _, phys)) => match detect_content(&phys, opts)? {
            known @ Content::Known(..) => known.load(path, opts)?,
            Content::Unknown(_) => {
                let mut c = live::load(path, &sp, opts)?;
                c.warnings.push(LoadWarning::InsideStorePath {
                    file: path.display().to_string(),
                    store_path: opts.store_dir_or_default().display(&sp),
                });
                c
            }
        },
        None => detect_content(path, opts)?.load(path, opts)?,
    };
    finish(closure, path, opts)
}

/// What every loaded closure goes through, whatever its format.
fn finish(mut closure: Closure, path: &Path, opts: &LoadOptions) -> Result<Closure, LoadError> {
    refuse_size_overflow(&closure, path)?;
    warn_if_not_closed(&mut closure);
    opts.timings.step("load: size sum, closedness check");
    Ok(closure)
}

/// Warn when references point outside the loaded set (e.g. `nix path-info --json`
/// without `-r`).
fn warn_if_not_closed(c: &mut Closure) {
    if std::mem::take(&mut c.references_resolved) {
        return;
    }
    let missing = c.missing_references();
    if let Some((from, to)) = missing.first() {
        c.warnings.push(LoadWarning::NotClosed {
            count: missing.len() as u64,
            from: c.store_dir.display(from),
            to: c.store_dir.display(to),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        format!("{}/tests/fixtures/load/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn detection_ignores_file_names() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("closure.json");
        std::fs::copy(fixture("dump-db.txt"), &p).unwrap();
        let c = load(p.to_str().unwrap(), &LoadOptions::default()).unwrap();
        assert_eq!(c.source, crate::store::SourceKind::Registration);
    }

    #[test]
    fn unknown_inputs_say_what_was_seen() {
        let dir = tempfile::tempdir().unwrap();
        let cases: [(&str, &[u8], &str); 5] = [
            ("a", b"hello world\n", "text starting with `hello world`"),
            ("b", b"", "an empty file"),
            ("c", b"\xff\xfe\x00", "binary data"),
            ("d", b"{\"foo\": 1}", "JSON object"),
            ("e", b"42", "text starting with `42`"),
        ];
        for (name, bytes, want) in cases {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            let e = load(p.to_str().unwrap(), &LoadOptions::default()).unwrap_err();
            assert!(matches!(e, LoadError::UnknownFormat { .. }), "{e}");
            let msg = e.to_string();
            assert!(msg.contains(want), "{msg}");
            assert!(msg.contains(p.to_str().unwrap()), "{msg}");
        }
        let e = load(dir.path().to_str().unwrap(), &LoadOptions::default()).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("no `registration`"), "{msg}");
        // Its entries are counted, never named.
        assert!(msg.contains("(5 entries)") && !msg.contains('['), "{msg}");
    }

    #[test]
    fn json_syntax_errors_have_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.json");
        std::fs::write(&p, "[\n  {\"path\": \"/nix/store/x\",\n   oops}\n]").unwrap();
        let e = load(p.to_str().unwrap(), &LoadOptions::default()).unwrap_err();
        match e {
            LoadError::Json { line, column, .. } => assert_eq!((line, column), (3, 4)),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn a_damaged_first_record_is_located_not_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("db");
        let text = std::fs::read_to_string(fixture("dump-db.txt")).unwrap();
        std::fs::write(&p, text.replacen("\n456\n", "\n4x6\n", 1)).unwrap();
        let e = load(p.to_str().unwrap(), &LoadOptions::default()).unwrap_err();
        match e {
            LoadError::Text {
                line, ref expected, ..
            } => assert_eq!((line, expected.as_str()), (3, "the NAR size (a number)")),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn path_info_references_outside_the_document_are_reported() {
        // The reader resolves references while reading and vouches for a closed
        // document, so the closedness check is skipped; anything it cannot resolve (a
        // path the document does not describe, or describes as invalid) still warns.
        let dir = tempfile::tempdir().unwrap();
        let entry = |h: char, name: &str, refs: &[(char, &str)]| {
            let refs: Vec<String> = refs
                .iter()
                .map(|(c, n)| format!("\"/nix/store/{}-{n}\"", c.to_string().repeat(32)))
                .collect();
            format!(
                "\"/nix/store/{}-{name}\":{{\"narSize\":8,\"references\":[{}]}}",
                h.to_string().repeat(32),
                refs.join(",")
            )
        };
        let warning = |text: &str| {
            let p = dir.path().join("closure.json");
            std::fs::write(&p, text).unwrap();
            let c = load(p.to_str().unwrap(), &LoadOptions::default()).unwrap();
            assert!(!c.references_resolved, "the check takes the flag back");
            (c.warnings.iter())
                .map(ToString::to_string)
                .find(|w| w.contains("not a closed closure"))
        };
        let lib = entry('b', "lib", &[]);
        let app = entry('a', "app", &[('b', "lib")]);
        assert_eq!(warning(&format!("{{{app},{lib}}}")), None);
        let app_gone = entry('a', "app", &[('b', "lib"), ('c', "gone")]);
        let w = warning(&format!("{{{app_gone},{lib}}}")).expect("a warning");
        assert!(w.contains("1 reference(s)") && w.contains("-gone"), "{w}");
        let invalid = format!("\"/nix/store/{}-gone\":null", "c".repeat(32));
        let w = warning(&format!("{{{app_gone},{lib},{invalid}}}")).expect("a warning");
        assert!(w.contains("-gone"), "{w}");
    }

    #[test]
    fn byte_order_marks_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bom.json");
        let text = std::fs::read_to_string(fixture("path-info-2.8.json")).unwrap();
        std::fs::write(&p, format!("\u{feff}{text}")).unwrap();
        let c = load(p.to_str().unwrap(), &LoadOptions::default()).unwrap();
        assert_eq!(c.paths.len(), 5);
    }

    #[test]
    fn inputs_larger_than_the_cap_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let opts = LoadOptions {
            max_input_bytes: Some(1 << 20),
            ..LoadOptions::default()
        };
        // A regular file: refused from its size, before it is read.
        let big = dir.path().join("big.json");
        let mut text = String::from("[");
        text.push_str(&" ".repeat(2 << 20));
        text.push(']');
        std::fs::write(&big, &text).unwrap();
        let e = load(big.to_str().unwrap(), &opts).unwrap_err().to_string();
        assert!(
            e.contains("big.json") && e.contains("larger than 1.0 MiB"),
            "{e}"
        );
        // An endless stream that looks like JSON: read up to the cap, then refused.
        let fifo = dir.path().join("endless");
        let st = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(st.success());
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
                let chunk = vec![b' '; 1 << 16];
                let mut written = f.write_all(b"[").map_or(0, |()| 1u64);
                // Bounded, so that a reader without a cap fails instead of hanging.
                while written < 64 << 20 && f.write_all(&chunk).is_ok() {
                    written += chunk.len() as u64;
                }
                written
            })
        };
        let e = load(fifo.to_str().unwrap(), &opts).unwrap_err().to_string();
        assert!(
            e.contains("endless") && e.contains("larger than 1.0 MiB"),
            "{e}"
        );
        assert!(writer.join().unwrap() < 8 << 20);
    }

    #[test]
    fn missing_input_names_it() {
        let e = load("/nonexistent/nixcut-input", &LoadOptions::default()).unwrap_err();
        assert!(matches!(e, LoadError::Io { .. }));
        assert!(e.to_string().contains("/nonexistent/nixcut-input"), "{e}");
    }

    #[test]
    fn snapshots_go_to_the_snapshot_reader() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("snap");
        std::fs::write(&p, r#"{"kind": "nixcut-snapshot", "schema_version": 99}"#).unwrap();
        let e = load(p.to_str().unwrap(), &LoadOptions::default()).unwrap_err();
        assert!(matches!(e, LoadError::Unsupported { .. }), "{e}");
        assert!(e.to_string().contains("schema version 99"), "{e}");
        // Cut short: no longer JSON, still recognised, and refused as truncated.
        std::fs::write(
            &p,
            r#"{"kind": "nixcut-snapshot", "schema_version": 1, "paths": [{"#,
        )
        .unwrap();
        let e = load(p.to_str().unwrap(), &LoadOptions::default()).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
    }

    #[test]
    fn a_store_path_that_is_a_known_file_is_read_not_queried() {
        let root = tempfile::tempdir().unwrap();
        let store = root.path().join("nix/store");
        std::fs::create_dir_all(&store).unwrap();
        let file = store.join("k0c0d60n2dqnb396hj717yvk0y17kx6h-closure-baseline.json");
        std::fs::copy(fixture("dump-db.txt"), &file).unwrap();
        let opts = LoadOptions {
            store_root: Some(root.path().to_path_buf()),
            // A `nix` that cannot run: the file must not be sent to it.
            nix: NixCommand::new("/nonexistent/nix"),
            ..LoadOptions::default()
        };
        let c = load(file.to_str().unwrap(), &opts).unwrap();
        assert_eq!(c.source, crate::store::SourceKind::Registration);
    }
}
