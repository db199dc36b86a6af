//! Package sets: a file of store paths, one a line, each a root (a channel's or a Hydra
//! jobset's `store-paths`, plain or compressed with xz or zstd, or standard input).
//!
//! [`read`] turns such a file into a [`PackageSet`] (the roots, with the line each came
//! from); [`looks_like_package_set`] tells one apart from the other line-based inputs
//! (a registration or `exportReferencesGraph` file also begins with a store path, but
//! its second line is a deriver or empty and its third a count). The graph the roots
//! stand in comes from elsewhere: [`load_graph`] walks the union of their closures in
//! HTTP binary caches once (`super::http_cache::load_roots`), reads given inputs (a
//! `nix path-info --json -r` file of the union, a binary cache directory) or asks the
//! local store for each root not already loaded.

use std::io::Read;
use std::path::{Path, PathBuf};

use rustc_hash::FxHashSet;

use super::{LoadError, LoadOptions};
use crate::store::{Closure, LoadWarning, StoreDir, StorePath};

/// The roots of a package set, as its file lists them.
#[derive(Debug, Clone)]
pub struct PackageSet {
    /// Where the set came from (the file, or `standard input`), for messages.
    pub origin: String,
    /// The store directory its paths are in.
    pub store_dir: StoreDir,
    /// The roots, in file order, each once.
    pub roots: Vec<StorePath>,
    /// 1-based line of each root in the file.
    pub lines: Vec<usize>,
    /// The attribute path of each root (same order), when the set names them (a
    /// nix-eval-jobs or Hydra listing, a nixpkgs-review result); empty for a plain
    /// list of store paths.
    pub attrs: Vec<Option<String>>,
    /// Problems that did not stop reading (duplicate lines).
    pub warnings: Vec<LoadWarning>,
}

const XZ_MAGIC: &[u8] = &[0xfd, b'7', b'z', b'X', b'Z', 0];
const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

/// Decompress `bytes` when they are xz or zstd (by their magic number), reading at
/// most `cap` bytes of output; plain bytes are returned as they are.
pub fn decompress(bytes: Vec<u8>, path: &Path, cap: u64) -> Result<Vec<u8>, LoadError> {
    let reader: Box<dyn Read> = if bytes.starts_with(XZ_MAGIC) {
        Box::new(liblzma::read::XzDecoder::new_multi_decoder(&bytes[..]))
    } else if bytes.starts_with(ZSTD_MAGIC) {
        Box::new(zstd::stream::read::Decoder::new(&bytes[..]).map_err(|e| LoadError::io(path, e))?)
    } else {
        return Ok(bytes);
    };
    let mut out = Vec::new();
    reader
        .take(cap.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| LoadError::Invalid {
            path: path.to_path_buf(),
            message: format!("cannot decompress it: {e}"),
        })?;
    if out.len() as u64 > cap {
        return Err(LoadError::Invalid {
            path: path.to_path_buf(),
            message: format!(
                "it decompresses to more than {} ({cap} bytes), the most nixcut reads from one input",
                crate::store::format_size(cap)
            ),
        });
    }
    Ok(out)
}

/// Read `input` (a file, or `-` for standard input) whole, decompressed.
pub fn read_bytes(input: &str, opts: &LoadOptions) -> Result<(Vec<u8>, String), LoadError> {
    let cap = opts.max_input();
    let (mut raw, name) = if input == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .lock()
            .take(cap.saturating_add(1))
            .read_to_end(&mut buf)
            .map_err(|e| LoadError::io(Path::new(super::STDIN_NAME), e))?;
        (buf, super::STDIN_NAME.to_string())
    } else {
        let path = Path::new(input);
        let f = std::fs::File::open(path).map_err(|e| LoadError::io(path, e))?;
        let mut buf = Vec::new();
        f.take(cap.saturating_add(1))
            .read_to_end(&mut buf)
            .map_err(|e| LoadError::io(path, e))?;
        (buf, input.to_string())
    };
    if raw.len() as u64 > cap {
        return Err(LoadError::Invalid {
            path: PathBuf::from(&name),
            message: format!("it is larger than {cap} bytes, the most nixcut reads from one input"),
        });
    }
    raw = decompress(raw, Path::new(&name), cap)?;
    Ok((raw, name))
}

/// Whether `text` is a package set: its first three non-empty lines (or all, when it
/// has fewer) are absolute paths. A registration or `exportReferencesGraph` record has
/// a count on its third line (and an empty deriver line is skipped, making the count
/// the second), so neither is taken for one. A line that is a path but not a store
/// path (`/nix/store/notahash`, a file inside a store path) still makes a package set,
/// so that [`parse`] names that line as not a store path, rather than a registration
/// reader asking for a count.
pub fn looks_like_package_set(text: &[u8]) -> bool {
    let mut seen = 0;
    for line in text.split(|&b| b == b'\n').map(trim) {
        if line.is_empty() {
            continue;
        }
        if std::str::from_utf8(line).is_err() || !line.starts_with(b"/") {
            return false;
        }
        seen += 1;
        if seen == 3 {
            break;
        }
    }
    seen > 0
}

fn trim(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    let start = line[..end]
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(end);
    &line[start..end]
}

/// Parse a package set from `text`, read from `origin`. The store directory is
/// `opts.store_dir` when given, else the directory of the first path; every line must
/// be a store path in it (an error names the line). Blank lines are skipped; a path
/// listed twice counts once (with a warning).
pub fn parse(text: &[u8], origin: &str, opts: &LoadOptions) -> Result<PackageSet, LoadError> {
    let mut roots = Roots::new(origin, opts);
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        let line_no = i + 1;
        let line = trim(line);
        if line.is_empty() {
            continue;
        }
        let Ok(line) = std::str::from_utf8(line) else {
            return Err(LoadError::Text {
                path: PathBuf::from(origin),
                line: line_no,
                expected: "a store path".to_string(),
                found: super::found(Some(&String::from_utf8_lossy(line))),
            });
        };
        roots.push(line, line_no, None)?;
    }
    roots.finish()
}

/// The roots of a set as they are read, one by one (by [`parse`], and by the readers
/// of sets that name their roots by attribute, `super::attr_set`): each a store path in
/// canonical form in the set's one store directory, each once.
pub(super) struct Roots<'o> {
    origin: String,
    opts: &'o LoadOptions,
    store_dir: Option<StoreDir>,
    roots: Vec<StorePath>,
    lines: Vec<usize>,
    attrs: Vec<Option<String>>,
    seen: FxHashSet<StorePath>,
    duplicates: usize,
    first_duplicate: Option<usize>,
}

impl<'o> Roots<'o> {
    pub(super) fn new(origin: &str, opts: &'o LoadOptions) -> Roots<'o> {
        Roots {
            origin: origin.to_string(),
            opts,
            store_dir: opts.store_dir.clone(),
            roots: Vec::new(),
            lines: Vec::new(),
            attrs: Vec::new(),
            seen: FxHashSet::default(),
            duplicates: 0,
            first_duplicate: None,
        }
    }

    /// Add the root `line` (a store path as text) from line `line_no`, named `attr`
    /// when the set names it. The store directory is `opts.store_dir` when given, else
    /// the local store's when the first root is in it, else the first root's own.
    pub(super) fn push(
        &mut self,
        line: &str,
        line_no: usize,
        attr: Option<String>,
    ) -> Result<(), LoadError> {
        let path = PathBuf::from(&self.origin);
        if let Some(why) = not_canonical(line) {
            return Err(LoadError::Text {
                path,
                line: line_no,
                expected: "a store path in canonical form".to_string(),
                found: format!("{} ({why})", super::found(Some(line))),
            });
        }
        let opts = self.opts;
        // Without --store-dir: the local store's directory when the line is in it (so
        // that a file inside a store path is named as such), else the line's own.
        let sd = self.store_dir.get_or_insert_with(|| {
            let local = opts
                .nix_store_dir
                .as_deref()
                .map(StoreDir::new)
                .unwrap_or_default();
            match line.strip_prefix(local.as_str()) {
                Some(rest) if rest.starts_with('/') => local,
                _ => StoreDir::new(line.rsplit_once('/').map_or("", |(d, _)| d).to_string()),
            }
        });
        let p = sd.parse_path(line).map_err(|e| LoadError::Text {
            path: path.clone(),
            line: line_no,
            expected: format!("a store path ({sd}/<hash>-<name>)"),
            found: format!(
                "{}, which is not a store path: {e}",
                super::found(Some(line))
            ),
        })?;
        if self.seen.insert(p.clone()) {
            self.roots.push(p);
            self.lines.push(line_no);
            self.attrs.push(attr);
        } else {
            self.duplicates += 1;
            self.first_duplicate.get_or_insert(line_no);
        }
        Ok(())
    }

    /// The set: an error when it has no root.
    pub(super) fn finish(self) -> Result<PackageSet, LoadError> {
        if self.roots.is_empty() {
            return Err(LoadError::Invalid {
                path: PathBuf::from(&self.origin),
                message: "the package set lists no store paths".into(),
            });
        }
        let mut warnings = Vec::new();
        if let Some(l) = self.first_duplicate {
            warnings.push(LoadWarning::DuplicateRoots {
                file: self.origin.clone(),
                duplicates: self.duplicates as u64,
                line: l as u64,
            });
        }
        let named = self.attrs.iter().any(Option::is_some);
        Ok(PackageSet {
            origin: self.origin,
            store_dir: self.store_dir.unwrap_or_default(),
            roots: self.roots,
            lines: self.lines,
            attrs: if named { self.attrs } else { Vec::new() },
            warnings,
        })
    }
}

/// Why `line` is not an absolute path in canonical form (`None` when it is): a store
/// path is written as Nix writes it, with no `.` or `..` component, no empty one
/// (`//`) and no trailing `/`, so that the text names the path it seems to.
fn not_canonical(line: &str) -> Option<&'static str> {
    if !line.starts_with('/') {
        return Some("not an absolute path");
    }
    if line.len() > 1 && line.ends_with('/') {
        return Some("it ends with `/`");
    }
    for part in line[1..].split('/') {
        match part {
            "" => return Some("it has an empty component (`//`)"),
            "." | ".." => return Some("it has a `.` or `..` component"),
            _ => {}
        }
    }
    None
}

/// Whether the regular file `path` is a package set, from its first bytes (its first
/// 64 KiB decompressed, when it is compressed): a large JSON input is not read twice.
pub fn sniff_file(path: &Path) -> bool {
    head(path).is_some_and(|h| looks_like_package_set(&h))
}

/// The first 64 KiB of the file `path`, decompressed when it is xz or zstd, cut after
/// its last complete line; `None` when it cannot be read.
pub fn head(path: &Path) -> Option<Vec<u8>> {
    const HEAD: u64 = 64 << 10;
    let Ok(mut f) = std::fs::File::open(path) else {
        return None;
    };
    let mut magic = [0u8; 6];
    let got = f.read(&mut magic).unwrap_or(0);
    let Ok(f) = std::fs::File::open(path) else {
        return None;
    };
    let mut head = Vec::new();
    let res = if magic[..got].starts_with(XZ_MAGIC) {
        liblzma::read::XzDecoder::new_multi_decoder(f)
            .take(HEAD)
            .read_to_end(&mut head)
    } else if magic[..got].starts_with(ZSTD_MAGIC) {
        match zstd::stream::read::Decoder::new(f) {
            Ok(d) => d.take(HEAD).read_to_end(&mut head),
            Err(e) => Err(e),
        }
    } else {
        f.take(HEAD).read_to_end(&mut head)
    };
    if res.is_err() {
        return None;
    }
    // A line cut by the end of the head is not judged.
    if head.len() as u64 == HEAD {
        if let Some(i) = head.iter().rposition(|&b| b == b'\n') {
            head.truncate(i);
        }
    }
    Some(head)
}

/// Read the package set `input` (plain, xz, zstd, or `-`); `None` when it is not one
/// (see [`looks_like_package_set`]), together with the bytes read, so that a stream
/// read to find out is not lost.
pub fn read(
    input: &str,
    opts: &LoadOptions,
) -> Result<Result<PackageSet, (Vec<u8>, String)>, LoadError> {
    let (bytes, name) = read_bytes(input, opts)?;
    if !looks_like_package_set(&bytes) {
        return Ok(Err((bytes, name)));
    }
    parse(&bytes, &name, opts).map(Ok)
}

/// Where the graph of a package set comes from.
#[derive(Debug, Clone, Copy)]
pub enum GraphSource<'a> {
    /// The HTTP binary caches of `LoadOptions::http`: the union walked once.
    Caches,
    /// These inputs (any form [`super::load`] reads), merged.
    Inputs(&'a [Closure]),
    /// The local store: one closure per root not already loaded.
    LocalStore,
}

/// One graph for several package sets (both sides of a diff): a closure holding the
/// closure of every root of every set, walked or read once (a path two sets share is
/// fetched once). Its declared roots are the sets' roots, each once. A root the graph
/// does not describe is an error naming its set and line.
pub fn load_graph(
    sets: &[&PackageSet],
    source: GraphSource<'_>,
    opts: &LoadOptions,
) -> Result<Closure, LoadError> {
    let mut roots: Vec<StorePath> = Vec::new();
    let mut seen: FxHashSet<&StorePath> = FxHashSet::default();
    for s in sets {
        roots.extend(s.roots.iter().filter(|r| seen.insert(r)).cloned());
    }
    let origin = sets
        .iter()
        .map(|s| s.origin.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let store_dir = sets
        .first()
        .map_or_else(|| opts.store_dir_or_default(), |s| s.store_dir.clone());
    // Every set and every graph must be of one store directory: roots are matched by
    // hash and name, and `/other/store/<hash>-hello` is not `/nix/store/<hash>-hello`.
    for s in sets {
        if s.store_dir != store_dir {
            return Err(LoadError::Invalid {
                path: PathBuf::from(&s.origin),
                message: format!(
                    "line {}: its store paths are in {}, but those of {} are in {}; both sets must be of one store",
                    s.lines.first().copied().unwrap_or(1),
                    s.store_dir,
                    sets[0].origin,
                    store_dir
                ),
            });
        }
    }
    let other_store = |what: &str, theirs: &StoreDir| LoadError::Invalid {
        path: PathBuf::from(sets.first().map_or("", |s| s.origin.as_str())),
        message: format!(
            "the package set's store paths are in {store_dir}, but {what} is of the store \
             {theirs}; a root is only found in a graph of its own store (give --store-dir \
             to say which store the set is of)"
        ),
    };
    match source {
        GraphSource::Inputs(pool) => {
            if let Some(c) = pool.iter().find(|c| c.store_dir != store_dir) {
                return Err(other_store(
                    &format!("the graph `{}`", c.origin),
                    &c.store_dir,
                ));
            }
        }
        GraphSource::LocalStore => {
            let local = opts
                .store_dir
                .clone()
                .or_else(|| opts.nix_store_dir.as_deref().map(StoreDir::new))
                .unwrap_or_default();
            if local != store_dir {
                return Err(other_store("the local store", &local));
            }
        }
        GraphSource::Caches => {}
    }
    let mut closure = match source {
        GraphSource::Caches => {
            // The set's store directory is given to the walk, which checks every cache's
            // nix-cache-info against it before it fetches a narinfo.
            let opts = LoadOptions {
                store_dir: Some(store_dir.clone()),
                ..opts.clone()
            };
            let c = super::http_cache::load_roots(&roots, &origin, &opts)?;
            if c.store_dir != store_dir {
                return Err(other_store(
                    "the binary cache (its nix-cache-info)",
                    &c.store_dir,
                ));
            }
            c
        }
        GraphSource::Inputs(pool) => merged(pool, &origin, &store_dir),
        GraphSource::LocalStore => {
            let mut c = Closure::new(
                store_dir.clone(),
                crate::store::SourceKind::LiveStore,
                &origin,
            );
            for r in &roots {
                if c.paths.contains_key(r) {
                    continue; // in the closure of a root loaded before
                }
                let one = super::load(&store_dir.display(r), opts)?;
                c.warnings.extend(one.warnings);
                for (p, info) in one.paths {
                    c.paths.entry(p).or_insert(info);
                }
            }
            c
        }
    };
    for set in sets {
        for (r, line) in set.roots.iter().zip(&set.lines) {
            if !closure.paths.contains_key(r) {
                return Err(LoadError::Invalid {
                    path: PathBuf::from(&set.origin),
                    message: format!(
                        "line {line}: {} is not described by the graph given for the set \
                         ({}); give a `nix path-info --json -r` of every root, or --cache URL",
                        set.store_dir.display(r),
                        closure.origin
                    ),
                });
            }
        }
    }
    // The sets' own warnings (duplicate lines) stay with each set, for the caller to
    // report with its side: the graph is shared by both.
    closure.declared_roots = roots;
    Ok(closure)
}

/// The union of `pool` (same paths, same facts: the first one seen is kept).
fn merged(pool: &[Closure], origin: &str, sd: &StoreDir) -> Closure {
    let source = pool
        .first()
        .map_or(crate::store::SourceKind::PathInfoJson, |c| c.source);
    let names: Vec<&str> = pool.iter().map(|c| c.origin.as_str()).collect();
    let mut c = Closure::new(sd.clone(), source, names.join(", "));
    if names.is_empty() {
        c.origin = origin.to_string();
    }
    for one in pool {
        c.warnings.extend(one.warnings.iter().cloned());
        for (p, info) in &one.paths {
            if !c.paths.contains_key(p) {
                c.paths.insert(p.clone(), info.clone());
            }
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "/nix/store/x71ahacbysflg2pf8638mdh69871353b-hello-2.12";
    const B: &str = "/nix/store/0lx7p0xfn5fwq8lq4mzkm8ni8a0d2x6c-openssl-3.0.13-dev";

    #[test]
    fn tells_sets_from_registration_records() {
        assert!(looks_like_package_set(format!("{A}\n{B}\n").as_bytes()));
        assert!(looks_like_package_set(format!("{A}\n").as_bytes()));
        // registration: path, deriver (or empty), count, references
        assert!(!looks_like_package_set(
            format!("{A}\n\n1\n{B}\n").as_bytes()
        ));
        assert!(!looks_like_package_set(
            format!("{A}\n{B}.drv\n0\n").as_bytes()
        ));
        assert!(!looks_like_package_set(b"{\"a\": 1}"));
        assert!(!looks_like_package_set(b""));
    }

    #[test]
    fn parses_with_line_numbers_and_compression() {
        let opts = LoadOptions::default();
        let text = format!("{A}\n\n{B}\n{A}\n");
        let s = parse(text.as_bytes(), "set", &opts).unwrap();
        assert_eq!(s.roots.len(), 2);
        assert_eq!(s.lines, vec![1, 3]);
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        let e = parse(format!("{A}\n/nix/store/nope\n").as_bytes(), "set", &opts)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("set:2: expected a store path (/nix/store/<hash>-<name>)"),
            "{e}"
        );
        let xz = {
            let mut out = Vec::new();
            let mut enc = liblzma::read::XzEncoder::new(text.as_bytes(), 6);
            enc.read_to_end(&mut out).unwrap();
            out
        };
        assert_eq!(
            decompress(xz, Path::new("x"), 1 << 20).unwrap(),
            text.as_bytes()
        );
        let zst = zstd::encode_all(text.as_bytes(), 3).unwrap();
        assert_eq!(
            decompress(zst.clone(), Path::new("x"), 1 << 20).unwrap(),
            text.as_bytes()
        );
        let e = decompress(zst, Path::new("x"), 10).unwrap_err().to_string();
        assert!(e.contains("decompresses to more than"), "{e}");
    }
}
