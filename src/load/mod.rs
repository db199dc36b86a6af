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
//! instead). Each format lives in its own
//! file; all of them fill the vocabulary of `crate::store` and nothing else. The graph
//! layer reads the resulting [`Closure`].
//!
//! Errors are [`LoadError`]s naming the file and the position (line and column for
//! JSON, line and what was expected for text). Problems that do not stop loading
//! (invalid paths, missing sizes, cross-check mismatches) become
//! [`Closure::warnings`].

pub mod binary_cache;
pub mod closure_info;
pub mod closure_record;
pub mod http_cache;
pub mod json;
mod json_parts;
pub mod live;
pub mod package_set;
pub mod path_info_json;
pub mod registration;
pub mod snapshot;
pub mod store_db;
pub mod structured_attrs;

use rayon::prelude::*;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::store::{is_terminal_hazard, Closure, StoreDir, StorePath};

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

/// How many bytes are looked at to recognise a format before the rest is read: enough
/// to see binary data, or text that no format starts with.
const SNIFF_BYTES: usize = 8 << 10;

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

/// What an input turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Detected {
    ClosureInfoDir,
    BinaryCacheDir,
    PathInfoJson,
    StructuredAttrs,
    Registration(registration::RecordKind),
    Snapshot,
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
                Content::Known(kind, text) => load_detected(path, kind, text, opts)?,
                Content::Unknown(_) => live::load(path, &sp, opts)?,
            }
        }
        // The store path itself (or a symlink to it): ask Nix.
        Some((sp, sub, _)) if sub.is_empty() => live::load(path, &sp, opts)?,
        // A file or directory inside a store path: read it if it is a format we know,
        // else ask Nix about the store path that contains it.
        Some((sp, _, phys)) => match detect_content(&phys, opts)? {
            Content::Known(kind, text) => load_detected(path, kind, text, opts)?,
            Content::Unknown(_) => {
                let mut c = live::load(path, &sp, opts)?;
                c.warnings.push(format!(
                    "{} is inside store path {}; loaded that store path's closure",
                    path.display(),
                    opts.store_dir_or_default().display(&sp)
                ));
                c
            }
        },
        None => match detect_content(path, opts)? {
            Content::Known(kind, text) => load_detected(path, kind, text, opts)?,
            Content::Unknown(seen) => {
                return Err(LoadError::UnknownFormat {
                    path: path.to_path_buf(),
                    seen,
                })
            }
        },
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

/// Whether `path` (following symlinks) is something read as a stream: a FIFO (pipes,
/// `/dev/fd/N` of a process substitution) or a character device.
fn is_stream(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| {
        let ft = m.file_type();
        ft.is_fifo() || ft.is_char_device()
    })
}

/// Read a stream once and load it by its content (only file formats can arrive this way).
fn load_stream(reader: impl Read, path: &Path, opts: &LoadOptions) -> Result<Closure, LoadError> {
    let seen = match read_sniffed(reader, None, path, None, opts.max_input())? {
        Sniffed::Text(text) => match sniff_text(&text, path)? {
            Ok(kind) => return load_detected(path, kind, Some(text), opts),
            Err(seen) => seen,
        },
        Sniffed::Unknown(seen) => seen,
    };
    Err(LoadError::UnknownFormat {
        path: path.to_path_buf(),
        seen,
    })
}

/// What [`read_sniffed`] found.
enum Sniffed {
    /// The whole input, as text (a byte-order mark removed).
    Text(String),
    /// Not any format nixcut reads; what was seen. Only the first bytes were read.
    Unknown(String),
}

/// Read `reader` whole, unless its first bytes already show it is no format nixcut
/// reads (binary data, text that starts like none of them), and never more than `cap`
/// bytes. `size` is the file's size when known (to refuse before reading, and to
/// allocate once).
///
/// `file`: the regular file `reader` reads, when it is one; a large one is read in
/// parts on every core (see [`read_at_parallel`]).
fn read_sniffed(
    mut reader: impl Read,
    file: Option<&std::fs::File>,
    path: &Path,
    size: Option<u64>,
    cap: u64,
) -> Result<Sniffed, LoadError> {
    let io_err = |e| LoadError::io(path, e);
    let parallel = size
        .filter(|&n| (PARALLEL_READ_BYTES..=cap).contains(&n))
        .and(file);
    let capacity = match parallel {
        Some(_) => SNIFF_BYTES as u64,
        None => size.map_or(SNIFF_BYTES as u64, |n| n.min(cap).saturating_add(1)),
    };
    let mut buf = Vec::with_capacity(usize::try_from(capacity).unwrap_or(SNIFF_BYTES));
    (&mut reader)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut buf)
        .map_err(io_err)?;
    if let Some(seen) = refuse_from_head(&buf, buf.len() < SNIFF_BYTES) {
        return Ok(Sniffed::Unknown(seen));
    }
    let too_large = || LoadError::Invalid {
        path: path.to_path_buf(),
        message: format!(
            "it is larger than {} ({cap} bytes), the most nixcut reads from one input; \
             no closure description is that big",
            crate::store::format_size(cap)
        ),
    };
    if size.is_some_and(|n| n > cap) {
        return Err(too_large());
    }
    let whole = match (parallel, size) {
        (Some(f), Some(n)) => read_at_parallel(f, &buf, n).map_err(io_err)?,
        _ => None,
    };
    match whole {
        Some(whole) => buf = whole,
        // Not a large file, or one that changed while it was read: read on.
        None => {
            let rest = (cap + 1).saturating_sub(buf.len() as u64);
            reader.take(rest).read_to_end(&mut buf).map_err(io_err)?;
        }
    }
    if buf.len() as u64 > cap {
        return Err(too_large());
    }
    // A byte-order mark (some Windows editors add one) is not part of any format.
    if buf.starts_with(BOM) {
        buf.drain(..BOM.len());
    }
    match String::from_utf8(buf) {
        Ok(text) => Ok(Sniffed::Text(text)),
        Err(e) => Ok(Sniffed::Unknown(format!(
            "binary data (not UTF-8 at byte {})",
            e.utf8_error().valid_up_to()
        ))),
    }
}

const BOM: &[u8] = "\u{feff}".as_bytes();

/// Files from this size on are read in parts on every core: copying 75 MiB out of the
/// page cache costs a page fault every 4 KiB of the new buffer, and those are taken on
/// both cores at once.
const PARALLEL_READ_BYTES: u64 = 16 << 20;

/// The whole of `file`, `size` bytes, of which `head` (the first bytes, already read)
/// is copied: the rest is read with positioned reads (`pread`, which leave the file's
/// offset alone) in one part per core. `None` when the file is no longer `size` bytes
/// long (it changed since it was measured): the caller reads on sequentially.
fn read_at_parallel(file: &std::fs::File, head: &[u8], size: u64) -> io::Result<Option<Vec<u8>>> {
    use std::os::unix::fs::FileExt;
    let Ok(n) = usize::try_from(size) else {
        return Ok(None);
    };
    if head.len() > n {
        return Ok(None);
    }
    // Zeroed by the allocator (fresh pages), so nothing is touched before the reads.
    let mut whole = vec![0u8; n];
    whole[..head.len()].copy_from_slice(head);
    let parts = rayon::current_num_threads().clamp(1, 8);
    let part_len = (n - head.len()).div_ceil(parts).max(1);
    let complete = whole[head.len()..]
        .par_chunks_mut(part_len)
        .enumerate()
        .map(|(i, part)| -> io::Result<bool> {
            let mut at = head.len() + i * part_len;
            let mut part = part;
            while !part.is_empty() {
                match file.read_at(part, at as u64) {
                    Ok(0) => return Ok(false),
                    Ok(k) => {
                        part = &mut part[k..];
                        at += k;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(true)
        })
        .collect::<io::Result<Vec<bool>>>()?
        .into_iter()
        .all(|c| c);
    // Nothing past the end either.
    let grew = file.read_at(&mut [0u8; 1], size)? > 0;
    Ok((complete && !grew).then_some(whole))
}

/// Judge an input by its first bytes (`complete`: they are all of it). `Some(seen)`
/// when it cannot be any format nixcut reads: every format is UTF-8 text without NUL
/// bytes, starting (after blanks) with `{` or `[` (JSON) or `/` (a store path: the
/// registration and `exportReferencesGraph` records).
fn refuse_from_head(head: &[u8], complete: bool) -> Option<String> {
    if let Some(i) = memchr::memchr(0, head) {
        return Some(format!("binary data (a NUL byte at byte {i})"));
    }
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // A character cut at the end of the head is not an error.
        Err(e) if e.error_len().is_none() && !complete => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(e) => {
            return Some(format!(
                "binary data (not UTF-8 at byte {})",
                e.valid_up_to()
            ))
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let start = text.trim_start();
    match start.chars().next() {
        None | Some('{' | '[' | '/') => None,
        Some(_) => Some(format!(
            "text starting with `{}`",
            sanitize(start.lines().next().unwrap_or_default(), 60)
        )),
    }
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

fn load_detected(
    path: &Path,
    kind: Detected,
    text: Option<String>,
    opts: &LoadOptions,
) -> Result<Closure, LoadError> {
    let text = text.unwrap_or_default();
    match kind {
        Detected::ClosureInfoDir => closure_info::load_dir(path, opts),
        Detected::BinaryCacheDir => binary_cache::load_dir(path, opts),
        Detected::PathInfoJson => path_info_json::parse_owned(text, path, opts),
        Detected::StructuredAttrs => structured_attrs::parse(&text, path, opts),
        Detected::Registration(k) => {
            registration::parse(&text, k, path, &opts.store_dir_or_default())
        }
        Detected::Snapshot => snapshot::parse(&text, path, opts),
    }
}

/// The result of sniffing a file or directory: its format and, for files, its text.
enum Content {
    Known(Detected, Option<String>),
    Unknown(String),
}

fn detect_content(path: &Path, opts: &LoadOptions) -> Result<Content, LoadError> {
    let cap = opts.max_input();
    let meta = std::fs::metadata(path).map_err(|e| LoadError::io(path, e))?;
    if meta.is_dir() {
        return detect_dir(path);
    }
    let file = std::fs::File::open(path).map_err(|e| LoadError::io(path, e))?;
    let text = match read_sniffed(&file, Some(&file), path, Some(meta.len()), cap)? {
        Sniffed::Text(text) => text,
        Sniffed::Unknown(seen) => return Ok(Content::Unknown(seen)),
    };
    let kind = match sniff_text(&text, path)? {
        Ok(kind) => kind,
        Err(seen) => return Ok(Content::Unknown(seen)),
    };
    opts.timings
        .step("load: read, UTF-8 check, format sniffing");
    Ok(Content::Known(kind, Some(text)))
}

fn detect_dir(path: &Path) -> Result<Content, LoadError> {
    // Listed first: an unreadable directory (EACCES) is reported as such, not as a
    // directory that holds nothing of interest.
    let listing = std::fs::read_dir(path).map_err(|e| LoadError::io(path, e))?;
    if path.join("registration").is_file() {
        return Ok(Content::Known(Detected::ClosureInfoDir, None));
    }
    if path.join("nix-cache-info").is_file() {
        return Ok(Content::Known(Detected::BinaryCacheDir, None));
    }
    let mut names: Vec<String> = listing
        .filter_map(|e| e.ok())
        .map(|e| sanitize(&e.file_name().to_string_lossy(), 80))
        .collect();
    names.sort();
    let total = names.len();
    names.truncate(8);
    let more = if total > names.len() { ", …" } else { "" };
    Ok(Content::Unknown(format!(
        "a directory without `registration` (closureInfo) or `nix-cache-info` (binary \
         cache); it holds [{}{more}]",
        names.join(", ")
    )))
}

/// Sniff a file's text. `Ok(Err(seen))` when the format is unknown; `Err` when the
/// file is JSON that does not parse.
fn sniff_text(text: &str, path: &Path) -> Result<Result<Detected, String>, LoadError> {
    let t = text.trim_start();
    if path_info_json::quick_shape(text).is_some() {
        // Parsed (and checked) once, by the path-info reader.
        return Ok(Ok(Detected::PathInfoJson));
    }
    if t.starts_with('{') || t.starts_with('[') {
        let value: serde_json::Value = match json::parse_value(text, path) {
            Ok(v) => v,
            // A snapshot cut short: its reader says it is truncated.
            Err(_) if snapshot::looks_like_snapshot(t) => return Ok(Ok(Detected::Snapshot)),
            Err(e) => return Err(e),
        };
        return Ok(match json::classify(&value) {
            json::JsonShape::PathInfo(_) => Ok(Detected::PathInfoJson),
            json::JsonShape::StructuredAttrs => Ok(Detected::StructuredAttrs),
            json::JsonShape::Snapshot => Ok(Detected::Snapshot),
            json::JsonShape::Unknown(seen) => Err(seen),
        });
    }
    if t.is_empty() {
        return Ok(Err("an empty file".into()));
    }
    Ok(match registration::sniff(text) {
        Some(k) => Ok(Detected::Registration(k)),
        None => Err(format!(
            "text starting with `{}`",
            sanitize(text.lines().next().unwrap_or_default(), 60)
        )),
    })
}

/// If `path` (or what its symlinks lead to) lies in the store directory, the store path
/// it is in and the sub-path below that store path.
/// With `--store-root`, a logical store path (`/nix/store/…`, as users and symlinks
/// name it) is found under the root: `<root>/nix/store/…`.
fn to_physical(p: PathBuf, opts: &LoadOptions) -> PathBuf {
    if opts.store_root.is_none() {
        return p;
    }
    let logical = opts.store_dir_or_default();
    match p.strip_prefix(logical.as_str()) {
        Ok(rest) => opts.physical_store_dir().join(rest),
        Err(_) => p,
    }
}

/// The store path `path` is (or leads to through symlinks), its sub-path, and where it
/// physically is.
fn store_path_of(
    path: &Path,
    opts: &LoadOptions,
) -> Result<Option<(StorePath, String, PathBuf)>, LoadError> {
    let store = opts.physical_store_dir();
    let mut cur = to_physical(absolute(path), opts);
    for _ in 0..40 {
        if let Some((sp, sub)) = in_store(&cur, &store, opts)? {
            return Ok(Some((sp, sub, cur)));
        }
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&cur).map_err(|e| LoadError::io(&cur, e))?;
                let parent = cur.parent().map(Path::to_path_buf).unwrap_or_default();
                cur = to_physical(normalize(&parent.join(target)), opts);
            }
            Ok(_) => break,
            Err(e) => return Err(LoadError::io(&cur, e)),
        }
    }
    // Directories on the way may be symlinks too (`/tmp` → `/private/tmp`, a store
    // mounted elsewhere); look at the fully resolved path once more.
    match std::fs::canonicalize(&cur) {
        Ok(c) => Ok(in_store(&c, &store, opts)?.map(|(sp, sub)| (sp, sub, c))),
        Err(e) => Err(LoadError::io(&cur, e)),
    }
}

fn in_store(
    p: &Path,
    store: &Path,
    opts: &LoadOptions,
) -> Result<Option<(StorePath, String)>, LoadError> {
    let Ok(rest) = p.strip_prefix(store) else {
        return Ok(None);
    };
    let mut comps = rest.components();
    let Some(first) = comps.next() else {
        return Ok(None); // the store directory itself
    };
    let base = first.as_os_str().to_string_lossy();
    match StorePath::from_base_name(&base) {
        Ok(sp) => Ok(Some((sp, comps.as_path().to_string_lossy().into_owned()))),
        Err(e) => Err(LoadError::Invalid {
            path: p.to_path_buf(),
            message: format!(
                "it is inside the store directory {} but not a store path: {e}",
                opts.store_dir_or_default()
            ),
        }),
    }
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        normalize(p)
    } else {
        match std::env::current_dir() {
            Ok(cwd) => normalize(&cwd.join(p)),
            Err(_) => p.to_path_buf(),
        }
    }
}

/// Remove `.` and `..` lexically (symlinks are followed separately, one at a time).
fn normalize(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Warn when references point outside the loaded set (e.g. `nix path-info --json`
/// without `-r`).
fn warn_if_not_closed(c: &mut Closure) {
    let missing = c.missing_references();
    if let Some((from, to)) = missing.first() {
        c.warnings.push(format!(
            "the input is not a closed closure: {} reference(s) point to paths it does not \
             describe (first: {} -> {}); was `-r` forgotten? Closure sizes are lower \
             bounds",
            missing.len(),
            c.store_dir.display(from),
            c.store_dir.display(to)
        ));
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
    fn detects_every_fixture_by_content() {
        for (name, want) in [
            ("path-info-2.8.json", Detected::PathInfoJson),
            ("path-info-format3.json", Detected::PathInfoJson),
            ("attrs.json", Detected::StructuredAttrs),
            (
                "dump-db.txt",
                Detected::Registration(registration::RecordKind::Registration),
            ),
            (
                "export-references-graph",
                Detected::Registration(registration::RecordKind::ExportReferencesGraph),
            ),
            ("closure-info", Detected::ClosureInfoDir),
            ("binary-cache", Detected::BinaryCacheDir),
        ] {
            match detect_content(Path::new(&fixture(name)), &LoadOptions::default()).unwrap() {
                Content::Known(k, _) => assert_eq!(k, want, "{name}"),
                Content::Unknown(seen) => panic!("{name}: {seen}"),
            }
        }
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
        assert!(e.to_string().contains("without `registration`"), "{e}");
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
    fn byte_order_marks_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bom.json");
        let text = std::fs::read_to_string(fixture("path-info-2.8.json")).unwrap();
        std::fs::write(&p, format!("\u{feff}{text}")).unwrap();
        let c = load(p.to_str().unwrap(), &LoadOptions::default()).unwrap();
        assert_eq!(c.paths.len(), 5);
    }

    #[test]
    fn the_first_bytes_decide_what_cannot_be_an_input() {
        let refuse = |b: &[u8], complete| refuse_from_head(b, complete);
        assert!(refuse(b"{\"a\": 1}", true).is_none());
        assert!(refuse(b"  \n[", false).is_none());
        assert!(refuse(b"\xef\xbb\xbf/nix/store/x", false).is_none(), "BOM");
        assert!(refuse(b"", true).is_none(), "the empty file is named later");
        let seen = refuse(b"[\x00", false).unwrap();
        assert_eq!(seen, "binary data (a NUL byte at byte 1)");
        let seen = refuse(b"[\xff", false).unwrap();
        assert_eq!(seen, "binary data (not UTF-8 at byte 1)");
        // A character cut by the end of the head is only an error at the end of input.
        assert!(refuse("[é".as_bytes().split_at(2).0, false).is_none());
        assert!(refuse("[é".as_bytes().split_at(2).0, true).is_some());
        let seen = refuse(b"hello\x1b[2J world\nmore", false).unwrap();
        assert_eq!(seen, "text starting with `hello?[2J world`");
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

    #[test]
    fn store_root_maps_store_paths() {
        let root = tempfile::tempdir().unwrap();
        let store = root.path().join("nix/store");
        let sp = "9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-rocblas-5.7.1";
        std::fs::create_dir_all(store.join(sp).join("lib")).unwrap();
        let opts = LoadOptions {
            store_root: Some(root.path().to_path_buf()),
            ..LoadOptions::default()
        };
        let link = root.path().join("result");
        std::os::unix::fs::symlink(store.join(sp), &link).unwrap();
        let (p, sub, phys) = store_path_of(&link, &opts).unwrap().unwrap();
        assert_eq!(p.to_string(), sp);
        assert_eq!(sub, "");
        assert_eq!(phys, store.join(sp));
        let (_, sub, _) = store_path_of(&store.join(sp).join("lib"), &opts)
            .unwrap()
            .unwrap();
        assert_eq!(sub, "lib");
        // Logical paths, as users and symlinks inside the image name them, are found
        // under the root.
        let logical = format!("/nix/store/{sp}/lib");
        let (_, sub, phys) = store_path_of(Path::new(&logical), &opts).unwrap().unwrap();
        assert_eq!((sub.as_str(), phys), ("lib", store.join(sp).join("lib")));
        let abs_link = root.path().join("abs");
        std::os::unix::fs::symlink(format!("/nix/store/{sp}"), &abs_link).unwrap();
        let (p, _, phys) = store_path_of(&abs_link, &opts).unwrap().unwrap();
        assert_eq!((p.to_string().as_str(), phys), (sp, store.join(sp)));
        assert!(store_path_of(root.path(), &opts).unwrap().is_none());
        let rel = root.path().join("rel");
        std::os::unix::fs::symlink(format!("nix/store/{sp}/lib"), &rel).unwrap();
        let (p, sub, _) = store_path_of(&rel, &opts).unwrap().unwrap();
        assert_eq!((p.to_string().as_str(), sub.as_str()), (sp, "lib"));
        // The live store under a store root is not queried (Nix would open its database).
        let e = load(link.to_str().unwrap(), &opts).unwrap_err();
        assert!(matches!(e, LoadError::Unsupported { .. }), "{e}");
    }
}
