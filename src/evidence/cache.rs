//! The scan cache: one file per scanned store path in a directory the caller chooses
//! (the binary uses `$XDG_CACHE_HOME/nixcut/scan`), holding what the scan found
//! ([`ScannedPath`]: facts, no verdicts) in its own versioned format.
//!
//! Store paths never change, so a scan is valid forever for the same path, NAR hash,
//! candidate set, class rules and tool version; all five make the file name. The file is
//! the payload, JSON of the wire structs below, which hold the scanner's own
//! [`HitFact`]s and warnings as they are (raw bytes for names, targets and excerpts
//! that are not UTF-8), in the checksummed framing of `crate::store::frame`. An entry
//! whose frame, checksum or payload does not match, or that describes another path, is
//! a miss and is rewritten: it is never trusted. Entries are written atomically
//! (temporary file, then rename), so a crash leaves no half-written entry.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::store::frame::{Frame, Opened};

use super::{ElfLink, EntryFact, HitFact, ScannedPath, ScannedRef, SearchDir, SearchTag};
use crate::classify::{EntryType, FileClass, RuleId};
use crate::elf::{DeviceContainer, DeviceObject};
use crate::scan::IndexFile;
use crate::scan::{RelPath, ScanWarning};
use crate::store::{NarHash, StorePath};

/// Version of the cache file format; part of every key, so a new format never reads
/// an old entry.
pub const CACHE_FORMAT: u32 = 11;

const KEY_VERSION: &str = concat!("nixcut-scan-cache-11-", env!("CARGO_PKG_VERSION"));

/// The framing of an entry (format 7 moved from a text header line to this frame; format 8 stores typed hit details and warnings; format 11 the texts of build-configuration files).
const FRAME: Frame = Frame {
    magic: b"nixcut-scan\n\0\0\0\0",
    format: CACHE_FORMAT,
    writer: env!("CARGO_PKG_VERSION"),
};

/// A directory of cached scans.
#[derive(Debug, Clone)]
pub struct ScanCache {
    dir: PathBuf,
}

impl ScanCache {
    /// A cache in `dir` (created when the first entry is written).
    pub fn at(dir: impl Into<PathBuf>) -> ScanCache {
        ScanCache { dir: dir.into() }
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The entry file for a path, NAR hash and candidate set; `None` without a NAR hash
    /// (nothing would tell a changed path apart).
    pub fn key(
        &self,
        path: &StorePath,
        nar_hash: Option<&NarHash>,
        candidates: &[StorePath],
        rules: &[u8],
    ) -> Option<PathBuf> {
        let nar_hash = nar_hash?;
        let mut h = Sha256::new();
        h.update(KEY_VERSION.as_bytes());
        // What the scanner takes from the GPU library table (the data extensions):
        // a new row's extension never reads an entry scanned without it.
        h.update(Sha256::digest(crate::classify::scan_fingerprint()));
        h.update(Sha256::digest(rules));
        h.update(path.to_string().as_bytes());
        h.update(nar_hash.to_sri().as_bytes());
        for c in candidates {
            h.update(c.hash_bytes());
        }
        let digest = hex(&h.finalize()[..12]);
        Some(self.dir.join(format!("{}-{digest}.scan", path.hash_part())))
    }

    /// Read an entry for `expect`; anything unreadable or inconsistent is a miss.
    pub fn get(&self, file: &Path, expect: &StorePath) -> Option<ScannedPath> {
        let bytes = std::fs::read(file).ok()?;
        let Ok(Opened::Fresh(payload)) = FRAME.open(&bytes) else {
            return None;
        };
        let entry: WireEntry = serde_json::from_slice(payload).ok()?;
        if entry.path != expect.to_string() {
            return None;
        }
        entry.into_scanned()
    }

    /// Write an entry atomically; failures are returned for a warning, never fatal.
    pub fn put(&self, file: &Path, path: &StorePath, scanned: &ScannedPath) -> std::io::Result<()> {
        let payload = serde_json::to_vec(&WireEntry::from_scanned(path, scanned))
            .map_err(std::io::Error::other)?;
        let bytes = FRAME.seal(&payload);
        std::fs::create_dir_all(&self.dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)?;
        std::io::Write::write_all(&mut tmp, &bytes)?;
        tmp.persist(file).map_err(|e| e.error)?;
        Ok(())
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes on the wire: a string when they are UTF-8, else the raw byte values.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum WireBytes {
    Text(String),
    Raw(Vec<u8>),
}

impl WireBytes {
    fn of(b: &[u8]) -> WireBytes {
        match std::str::from_utf8(b) {
            Ok(s) => WireBytes::Text(s.to_string()),
            Err(_) => WireBytes::Raw(b.to_vec()),
        }
    }

    fn into_bytes(self) -> Vec<u8> {
        match self {
            WireBytes::Text(s) => s.into_bytes(),
            WireBytes::Raw(b) => b,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct WireRef {
    /// Base name `<hash>-<name>`.
    target: String,
    hits: Vec<HitFact>,
    capped: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum WireType {
    Regular,
    Executable,
    Symlink,
    Directory,
}

#[derive(Serialize, Deserialize)]
struct WireSearch {
    rpath: bool,
    dir: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct WireElf {
    interpreter: Option<String>,
    needed: Vec<String>,
    soname: Option<String>,
    search: Vec<WireSearch>,
    dlopen: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    data_paths: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct WireFile {
    path: WireBytes,
    #[serde(rename = "type")]
    entry: WireType,
    size: u64,
    class: FileClass,
    class_rule: RuleId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    target: Option<WireBytes>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    elf: Option<WireElf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shebang: Option<WireBytes>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    names: Vec<WireBytes>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    device: Vec<WireDevice>,
}

#[derive(Serialize, Deserialize)]
struct WireDevice {
    target: String,
    container: String,
    stored: u64,
    code: u64,
}

#[derive(Serialize, Deserialize)]
struct WireEntry {
    /// Base name of the scanned path.
    path: String,
    files: u64,
    bytes: u64,
    capped_total: u64,
    references: Vec<WireRef>,
    warnings: Vec<ScanWarning>,
    entries: Vec<WireFile>,
    complete: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    indexes: Vec<WireIndex>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    config_texts: Vec<WireText>,
}

/// A build-configuration file's text, by entry number.
#[derive(Serialize, Deserialize)]
struct WireText {
    entry: u32,
    text: WireBytes,
}

/// An index file's (or manifest's) names, by entry number.
#[derive(Serialize, Deserialize)]
struct WireIndex {
    entry: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    loads: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lists: Option<Vec<String>>,
}

fn wire_file(e: &EntryFact) -> WireFile {
    WireFile {
        path: WireBytes::of(e.path.as_bytes()),
        entry: match e.entry {
            EntryType::Regular => WireType::Regular,
            EntryType::Executable => WireType::Executable,
            EntryType::Symlink => WireType::Symlink,
            EntryType::Directory => WireType::Directory,
        },
        size: e.size,
        class: e.class.clone(),
        class_rule: e.class_rule,
        target: e.symlink_target.as_deref().map(WireBytes::of),
        elf: e.elf.as_ref().map(|l| WireElf {
            interpreter: l.interpreter.clone(),
            needed: l.needed.clone(),
            soname: l.soname.clone(),
            search: l
                .search
                .iter()
                .map(|s| WireSearch {
                    rpath: s.tag == SearchTag::Rpath,
                    dir: s.dir.clone(),
                })
                .collect(),
            dlopen: l.dlopen.clone(),
            data_paths: l.data_paths.clone(),
        }),
        shebang: e.shebang.as_deref().map(WireBytes::of),
        names: e.names.iter().map(|n| WireBytes::of(n)).collect(),
        device: e
            .device
            .iter()
            .map(|d| WireDevice {
                target: d.target.clone(),
                container: d.container.as_str().to_string(),
                stored: d.stored,
                code: d.code,
            })
            .collect(),
    }
}

fn entry_fact(w: WireFile) -> Option<EntryFact> {
    let device = w
        .device
        .into_iter()
        .map(|d| {
            Some(DeviceObject {
                target: d.target,
                container: DeviceContainer::parse(&d.container)?,
                stored: d.stored,
                code: d.code,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(EntryFact {
        path: RelPath::from_bytes(w.path.into_bytes()),
        entry: match w.entry {
            WireType::Regular => EntryType::Regular,
            WireType::Executable => EntryType::Executable,
            WireType::Symlink => EntryType::Symlink,
            WireType::Directory => EntryType::Directory,
        },
        size: w.size,
        class: w.class,
        class_rule: w.class_rule,
        symlink_target: w.target.map(WireBytes::into_bytes),
        elf: w.elf.map(|l| ElfLink {
            interpreter: l.interpreter,
            needed: l.needed,
            soname: l.soname,
            search: l
                .search
                .into_iter()
                .map(|s| SearchDir {
                    tag: if s.rpath {
                        SearchTag::Rpath
                    } else {
                        SearchTag::Runpath
                    },
                    dir: s.dir,
                })
                .collect(),
            dlopen: l.dlopen,
            data_paths: l.data_paths,
        }),
        shebang: w.shebang.map(WireBytes::into_bytes),
        names: w.names.into_iter().map(WireBytes::into_bytes).collect(),
        device,
    })
}

impl WireEntry {
    fn from_scanned(path: &StorePath, s: &ScannedPath) -> WireEntry {
        WireEntry {
            path: path.to_string(),
            files: s.files,
            bytes: s.bytes,
            capped_total: s.capped_total,
            references: s
                .references
                .iter()
                .map(|r| WireRef {
                    target: r.target.to_string(),
                    capped: r.capped,
                    hits: r.hits.clone(),
                })
                .collect(),
            warnings: s.warnings.clone(),
            entries: s.entries.iter().map(wire_file).collect(),
            complete: s.complete,
            indexes: s
                .indexes
                .iter()
                .map(|(entry, i)| match i {
                    IndexFile::Loads(v) => WireIndex {
                        entry: *entry,
                        loads: v.clone(),
                        lists: None,
                    },
                    IndexFile::Lists(v) => WireIndex {
                        entry: *entry,
                        loads: Vec::new(),
                        lists: Some(v.clone()),
                    },
                })
                .collect(),
            config_texts: s
                .config_texts
                .iter()
                .map(|(entry, t)| WireText {
                    entry: *entry,
                    text: WireBytes::of(t),
                })
                .collect(),
        }
    }

    fn into_scanned(self) -> Option<ScannedPath> {
        let mut references = Vec::with_capacity(self.references.len());
        for r in self.references {
            let target = StorePath::from_base_name(&r.target).ok()?;
            references.push(ScannedRef {
                target,
                hits: r.hits,
                capped: r.capped,
            });
        }
        Some(ScannedPath {
            files: self.files,
            bytes: self.bytes,
            references,
            capped_total: self.capped_total,
            warnings: self.warnings,
            entries: self
                .entries
                .into_iter()
                .map(entry_fact)
                .collect::<Option<Vec<_>>>()?,
            complete: self.complete,
            indexes: self
                .indexes
                .into_iter()
                .map(|w| {
                    let i = match w.lists {
                        Some(l) => IndexFile::Lists(l),
                        None => IndexFile::Loads(w.loads),
                    };
                    (w.entry, i)
                })
                .collect(),
            config_texts: self
                .config_texts
                .into_iter()
                .map(|w| (w.entry, w.text.into_bytes()))
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{EvidenceKind, Excerpt, HitDetail, SearchDirHit, SearchUse};
    use crate::scan::{EntryProblem, Location};

    fn hit(file: &[u8], location: Location, kind: EvidenceKind, detail: HitDetail) -> HitFact {
        HitFact {
            file: RelPath::from_bytes(file.to_vec()),
            location,
            kind,
            kind_rule: RuleId::new("test"),
            detail,
            target_exists: None,
        }
    }

    fn sample(p: &StorePath) -> ScannedPath {
        ScannedPath {
            files: 3,
            bytes: 99,
            references: vec![ScannedRef {
                target: p.clone(),
                capped: 1,
                hits: vec![
                    HitFact {
                        target_exists: Some(true),
                        ..hit(
                            b"lib/\xff\\odd",
                            Location::SymlinkTarget { offset: 11 },
                            EvidenceKind::Symlink,
                            HitDetail::SymlinkTarget(b"/nix/store/x/\x80".to_vec()),
                        )
                    },
                    hit(
                        b"lib/libx.so",
                        Location::Contents { offset: 99 },
                        EvidenceKind::ElfRunpathUnused,
                        HitDetail::SearchDir(SearchDirHit {
                            tag: SearchTag::Rpath,
                            dir: Some("/nix/store/x/lib".into()),
                            raw: "$ORIGIN/../lib".into(),
                            supplies: SearchUse::Needed(vec!["liby.so".into()]),
                        }),
                    ),
                    hit(
                        b"bin/x",
                        Location::Contents { offset: 7 },
                        EvidenceKind::Binary,
                        HitDetail::Excerpt(Excerpt {
                            bytes: b"\0\xfe/nix/store/x".to_vec(),
                            cut_left: true,
                            cut_right: false,
                        }),
                    ),
                ],
            }],
            capped_total: 1,
            warnings: vec![
                ScanWarning::entry(
                    &RelPath::from_bytes(b"lib/\xfe".to_vec()),
                    EntryProblem::ReadError {
                        offset: 4,
                        error: "gone".into(),
                    },
                ),
                ScanWarning::TrailingBytes {
                    nar: "x.nar".into(),
                    bytes: 3,
                },
            ],
            entries: vec![EntryFact {
                path: RelPath::from_bytes(b"lib/libx.so".to_vec()),
                entry: EntryType::Executable,
                size: 7,
                class: FileClass::Gpu("gfx90a".into()),
                class_rule: RuleId::new("class/lib"),
                symlink_target: None,
                elf: Some(ElfLink {
                    interpreter: Some("/nix/store/x/ld.so".into()),
                    needed: vec!["libc.so.6".into()],
                    soname: None,
                    search: vec![SearchDir {
                        tag: SearchTag::Rpath,
                        dir: Some("/nix/store/x/lib".into()),
                    }],
                    dlopen: vec!["libamd_comgr.so.2".into()],
                    data_paths: vec!["rocblas/library".into()],
                }),
                shebang: Some(b"/bin/sh".to_vec()),
                names: vec![b"/nix/store/\xff".to_vec()],
                device: vec![DeviceObject {
                    target: "gfx90a:xnack+".into(),
                    container: DeviceContainer::Compressed,
                    stored: 3,
                    code: 9,
                }],
            }],
            complete: false,
            indexes: vec![(0, IndexFile::Loads(vec!["a.co".into()]))],
            config_texts: vec![(0, b"prefix=/nix/store/x\n\xff".to_vec())],
        }
    }

    #[test]
    fn roundtrip_raw_bytes_and_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ScanCache::at(dir.path().join("c"));
        let p =
            StorePath::from_base_name("9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-rocblas-5.7.1").unwrap();
        let q = StorePath::from_base_name("0al28vamp5nn339hq5kpi9jl1fpkhl6a-rocm-llvm-clang-5.7.1")
            .unwrap();
        let h = NarHash::parse("sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
        assert!(cache.key(&p, None, &[], b"").is_none());
        let k = cache
            .key(&p, Some(&h), std::slice::from_ref(&p), b"")
            .unwrap();
        assert_ne!(
            Some(&k),
            cache.key(&p, Some(&h), &[], b"").as_ref(),
            "candidates are part of the key"
        );
        assert!(cache.get(&k, &p).is_none());
        cache.put(&k, &p, &sample(&p)).unwrap();
        assert_eq!(cache.get(&k, &p), Some(sample(&p)), "raw bytes survive");
        assert!(
            cache.get(&k, &q).is_none(),
            "an entry for another path is not trusted"
        );

        // A well-formed but edited entry: the checksum no longer matches.
        let bytes = std::fs::read(&k).unwrap();
        let at = bytes.windows(9).position(|w| w == b"\"files\":3").unwrap();
        let mut edited = bytes.clone();
        edited[at + 8] = b'4';
        std::fs::write(&k, &edited).unwrap();
        assert!(cache.get(&k, &p).is_none(), "edited entry is a miss");
        std::fs::write(&k, &bytes[..bytes.len() - 5]).unwrap();
        assert!(cache.get(&k, &p).is_none(), "truncated entry is a miss");
        cache.put(&k, &p, &sample(&p)).unwrap();
        assert!(cache.get(&k, &p).is_some(), "and is rewritten");
    }

    #[test]
    fn entries_of_the_old_text_framing_are_misses() {
        // Format 6 and before: a header line `nixcut-scan-cache <format> <sha256>` and
        // the JSON payload. Such a file at an entry's name is never read as an entry.
        let dir = tempfile::tempdir().unwrap();
        let cache = ScanCache::at(dir.path());
        let p =
            StorePath::from_base_name("9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-rocblas-5.7.1").unwrap();
        let h = NarHash::parse("sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
        let k = cache.key(&p, Some(&h), &[], b"").unwrap();
        let payload = serde_json::to_vec(&WireEntry::from_scanned(&p, &sample(&p))).unwrap();
        for format in [6, CACHE_FORMAT] {
            let mut old = format!(
                "nixcut-scan-cache {format} {}\n",
                hex(&Sha256::digest(&payload))
            )
            .into_bytes();
            old.extend_from_slice(&payload);
            std::fs::write(&k, &old).unwrap();
            assert!(cache.get(&k, &p).is_none(), "text framing, format {format}");
        }
        cache.put(&k, &p, &sample(&p)).unwrap();
        assert_eq!(cache.get(&k, &p), Some(sample(&p)));
        assert_ne!(
            KEY_VERSION,
            concat!("nixcut-scan-cache-6-", env!("CARGO_PKG_VERSION")),
            "a new layout has new keys"
        );
        // An entry of format 6's shape (string warnings and details) in the current
        // frame: not read as facts.
        let v6 = format!(
            r#"{{"path":"{p}","files":1,"bytes":1,"capped_total":0,"references":[],"warnings":["lib/x: cannot read: gone"],"entries":[],"complete":true}}"#
        );
        std::fs::write(&k, FRAME.seal(v6.as_bytes())).unwrap();
        assert!(
            cache.get(&k, &p).is_none(),
            "string warnings are not read as facts, even in the current frame"
        );
    }
}
