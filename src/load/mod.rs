//! Loaders: every input nixcut accepts, turned into one [`Closure`].
//!
//! [`load`] looks at what an input *is*, never at its name: a directory is a closureInfo
//! output (it has `registration`) or a binary cache (it has `nix-cache-info`); a file is
//! sniffed as JSON (`nix path-info --json` of any Nix version, a structured-attrs
//! `.attrs.json`, a nixcut snapshot) or text (registration records, or the sizeless
//! `exportReferencesGraph` records); a store path, or a symlink to one such as
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

pub mod binary_cache;
pub mod closure_info;
pub mod closure_record;
mod detect;
pub mod http_cache;
mod in_store;
pub mod json;
mod json_parts;
pub mod live;
pub mod package_set;
pub mod path_info_json;
mod read;
pub mod registration;
pub mod snapshot;
pub mod store_db;
pub mod structured_attrs;

use std::io;
use std::path::{Path, PathBuf};

use detect::{detect_content, load_stream, Content};
use in_store::store_path_of;
use read::is_stream;

use crate::store::{is_terminal_hazard, Closure, LoadWarning, StoreDir};

pub use live::NixCommand;

/// How to read inputs: which store directory the paths are in, where its files
/// physically are, and which `nix` to ask about the live store.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The logical store directory (`--store-dir`). `None`: take it from the input when
    /// the input says, else `/nix/store`.
    pub store_dir: Option<StoreDir>,
    /// Where the store directory's files physically are (`--store-root`): the store
    /// directory `D` is found at `<store_root>/D`. `None`: at `D` itself.
    pub store_root: Option<PathBuf>,
    /// The `nix` binary used to query the live store.
    pub nix: NixCommand,
    /// Never read the local store database; always ask `nix` (the binary sets it
    /// from `NIXCUT_NO_STORE_DB=1`). See [`store_db`].
    pub no_store_db: bool,
    /// The local Nix's store directory (the binary passes `$NIX_STORE_DIR`); `None`:
    /// `/nix/store`. Only the store database of that directory is read.
    pub nix_store_dir: Option<String>,
    /// The local Nix's state directory (the binary passes `$NIX_STATE_DIR`); `None`:
    /// `/nix/var/nix`.
    pub nix_state_dir: Option<PathBuf>,
    /// The most bytes read from one input file or stream; `None`:
    /// [`DEFAULT_MAX_INPUT_BYTES`].
    pub max_input_bytes: Option<u64>,
    /// Binary caches over HTTP (`--cache URL`) and the client to reach them.
    pub http: http_cache::HttpInputs,
    /// Where the loading steps report their times (`NIXCUT_TIMINGS`).
    pub timings: crate::timing::Timings,
}

/// The most bytes nixcut reads from one input file or stream: 2 GiB, thirty times the
/// `nix path-info --json -r` of a 100,000-path closure. Endless or huge inputs
/// (`/dev/zero`, a disk image that begins like JSON) stop here instead of filling memory.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 2 << 30;

/// How standard input (`-`) is named in messages.
const STDIN_NAME: &str = "standard input";

impl LoadOptions {
    /// The store directory to use when the input does not name one.
    pub fn store_dir_or_default(&self) -> StoreDir {
        self.store_dir.clone().unwrap_or_default()
    }

    /// The cap on bytes read from one input.
    pub fn max_input(&self) -> u64 {
        self.max_input_bytes.unwrap_or(DEFAULT_MAX_INPUT_BYTES)
    }

    /// Where the store directory's files are on this machine.
    pub fn physical_store_dir(&self) -> PathBuf {
        crate::store::physical_path(
            self.store_root.as_deref(),
            self.store_dir_or_default().as_str(),
        )
    }
}

/// Why an input could not be loaded. Every variant names the input; JSON errors carry
/// a line and column, text errors a line and what was expected there.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The input does not exist or cannot be read.
    #[error("cannot read {}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating-system error.
        source: io::Error,
    },
    /// JSON that does not parse, or a value of the wrong type, at a known position.
    #[error("{}:{line}:{column}: {message}", .path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A JSON value that parses but makes no sense, found by entry rather than by
    /// position (the position could not be recovered).
    #[error("{}: entry {entry}: {message}", .path.display())]
    JsonEntry {
        /// The file.
        path: PathBuf,
        /// The entry: its key, or `[index]` in an array.
        entry: String,
        /// What is wrong.
        message: String,
    },
    /// A text record (registration, `exportReferencesGraph`, `.narinfo`, closureInfo
    /// file) that does not have the expected line.
    #[error("{}:{line}: expected {expected}, found {found}", .path.display())]
    Text {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What the format has at this line.
        expected: String,
        /// What the file has, quoted, or `end of file`.
        found: String,
    },
    /// The input is none of the formats nixcut reads.
    #[error("{}: unknown input format: {seen}; expected {}", .path.display(), EXPECTED_FORMATS)]
    UnknownFormat {
        /// The file or directory.
        path: PathBuf,
        /// A description of what was there.
        seen: String,
    },
    /// A format nixcut recognises but cannot read (yet, or in this configuration).
    #[error("{}: {what} is not supported: {hint}", .path.display())]
    Unsupported {
        /// The file, directory or store path.
        path: PathBuf,
        /// What was recognised.
        what: String,
        /// What to do instead.
        hint: String,
    },
    /// An input whose parts contradict each other or lack something required.
    #[error("{}: {message}", .path.display())]
    Invalid {
        /// The file or directory.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The `nix` binary could not be started.
    #[error("cannot run `{program}` to query the store: {source}; install Nix, or pass the output of `nix path-info --json -r -S PATH` instead")]
    NixMissing {
        /// The program that was run.
        program: String,
        /// The operating-system error.
        source: io::Error,
    },
    /// The local store database could not be read.
    #[error("cannot read the store database {}: {message}", .path.display())]
    StoreDb {
        /// The database file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// Neither the store database nor `nix` could load a store path.
    #[error("{nix}\n(reading the store database did not work either: {store_db})")]
    LiveStore {
        /// Why the store database could not be read.
        store_db: Box<LoadError>,
        /// Why `nix` failed.
        nix: Box<LoadError>,
    },
    /// A binary cache could not be reached, or answered with an error.
    #[error(transparent)]
    Fetch(#[from] crate::http::FetchError),
    /// `nix` ran and failed.
    #[error("`{command}` failed ({status}):\n{stderr}")]
    NixFailed {
        /// The command line.
        command: String,
        /// The exit status.
        status: String,
        /// What `nix` printed on stderr.
        stderr: String,
    },
}

const EXPECTED_FORMATS: &str = "a store path or a symlink to one, `nix path-info --json` \
output, a registration or exportReferencesGraph file, a structured-attrs .attrs.json, a nixcut \
snapshot, a closureInfo directory or a binary cache directory";

impl LoadError {
    pub(crate) fn io(path: &Path, source: io::Error) -> LoadError {
        LoadError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

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

/// Refuse a closure whose NAR sizes add up past `u64::MAX`: every size nixcut computes
/// is a sum of them, and none may wrap (two paths of 2^63 bytes would otherwise weigh 0).
pub(crate) fn refuse_size_overflow(c: &Closure, path: &Path) -> Result<(), LoadError> {
    if c.total_nar_size().is_some() {
        return Ok(());
    }
    let largest = c
        .paths
        .values()
        .filter_map(|i| Some((i.nar_size?, &i.path)))
        .max();
    let example = largest
        .map(|(size, p)| {
            format!(
                " (the largest: {} with {size} bytes)",
                c.store_dir.display(p)
            )
        })
        .unwrap_or_default();
    Err(LoadError::Invalid {
        path: path.to_path_buf(),
        message: format!(
            "the NAR sizes of its {} paths add up to more than {} bytes (2^64 - 1), more \
             than any store holds: a size is wrong{example}",
            c.paths.len(),
            u64::MAX
        ),
    })
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

/// Shorten and make printable a piece of untrusted input for a message.
pub(crate) fn sanitize(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max)
        .map(|c| if is_terminal_hazard(c) { '?' } else { c })
        .collect();
    if s.chars().count() > max {
        out.push('…');
    }
    out
}

/// `found` text for a text-format error: the line quoted, or `end of file`.
pub(crate) fn found(line: Option<&str>) -> String {
    match line {
        Some(l) => format!("`{}`", sanitize(l, 80)),
        None => "end of file".to_string(),
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
