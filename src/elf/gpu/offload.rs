//! Clang offload bundles in a fat binary's `.hip_fatbin` section or a standalone
//! `.co`/`.hsaco` file: the uncompressed `__CLANG_OFFLOAD_BUNDLE__` format (a count,
//! then per entry its offset, size and id) and the compressed `CCOB` one (zlib or zstd
//! around an uncompressed bundle; versions 2 and 3 record their total length). Only the
//! headers are read: a compressed bundle is decompressed just far enough for its ids.

use std::io::Read;

use super::{read_u64, DeviceContainer, DeviceObject, GpuCode, MAX_BUNDLES, MAX_CODE, MAX_ENTRIES};
use crate::elf::bytes::ByteSource;

pub(super) const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
pub(super) const CCOB_MAGIC: &[u8; 4] = b"CCOB";

impl GpuCode {
    pub(super) fn walk_bundles<S: ByteSource + ?Sized>(
        &mut self,
        src: &S,
        start: u64,
        end: u64,
        what: &str,
    ) {
        let mut pos = start;
        for _ in 0..MAX_BUNDLES {
            if pos >= end {
                return;
            }
            let Ok(head) = src.read_vec(pos, 32) else {
                return;
            };
            let next = if head.starts_with(BUNDLE_MAGIC) {
                self.offload_bundles += 1;
                self.read_bundle(src, pos, end, what)
            } else if head.starts_with(CCOB_MAGIC) {
                self.compressed_bundles += 1;
                self.read_compressed(src, pos, end, what)
            } else {
                if pos == start {
                    self.warn(format!(
                        "{what} at byte {pos}: no bundle magic (__CLANG_OFFLOAD_BUNDLE__ or CCOB)"
                    ));
                }
                None
            };
            let Some(next) = next else { return };
            // Bundles in `.hip_fatbin` are aligned; look for the next magic nearby.
            let Some(found) = find_next_magic(src, next.max(pos + 1), end) else {
                return;
            };
            pos = found;
        }
        self.warn(format!(
            "{what}: more than {MAX_BUNDLES} bundles; the rest was not read"
        ));
    }

    /// Read one uncompressed bundle's entries; returns where it ends.
    fn read_bundle<S: ByteSource + ?Sized>(
        &mut self,
        src: &S,
        start: u64,
        end: u64,
        what: &str,
    ) -> Option<u64> {
        let parsed = parse_offload(src, start, end - start);
        for w in &parsed.warnings {
            self.warn(format!("{what}: bundle at byte {start}: {w}"));
        }
        let bundle_end = parsed.end.map(|e| start.saturating_add(e));
        // Entries that overlap (or cover the header) count their bytes once: never more
        // than the bundle's extent in all, so bundles after it are not counted twice.
        let mut left = parsed.extent;
        let mut overlap = false;
        for (target, size) in parsed.entries {
            let stored = size.min(left);
            left -= stored;
            overlap |= stored < size;
            self.objects.push(DeviceObject {
                target,
                container: DeviceContainer::Offload,
                stored,
                code: stored,
            });
        }
        if overlap {
            self.warn(format!(
                "{what}: bundle at byte {start}: entries overlap; their bytes are counted once"
            ));
        }
        bundle_end
    }

    /// Read one compressed bundle: its length from the header (v2, v3) or up to `end`
    /// (v1), its targets and their uncompressed sizes from the decompressed inner
    /// header. Returns where it ends, when the header says.
    fn read_compressed<S: ByteSource + ?Sized>(
        &mut self,
        src: &S,
        start: u64,
        end: u64,
        what: &str,
    ) -> Option<u64> {
        let avail = end - start;
        let head = src.read_vec(start, 32).ok()?;
        let declared = ccob_len(&head);
        let len = match declared {
            Some(l) if l > avail => {
                self.warn(format!(
                    "{what}: compressed bundle at byte {start} says it is {l} bytes, but only {avail} follow"
                ));
                avail
            }
            Some(l) if l < 24 => {
                self.warn(format!(
                    "{what}: compressed bundle at byte {start} says it is {l} bytes, shorter than its header"
                ));
                return None;
            }
            Some(l) => l,
            None => avail,
        };
        let take = len.min(CCOB_READ as u64) as usize;
        let bytes = src.read_vec(start, take).ok()?;
        match read_ccob_inner(&bytes) {
            Err(why) => self.warn(format!("{what}: compressed bundle at byte {start}: {why}")),
            Ok((inner, uncompressed)) => {
                let parsed = parse_offload(&inner[..], 0, u64::MAX);
                // The inner header is all that was decompressed: entries are checked
                // against the uncompressed size the header records.
                for w in &parsed.warnings {
                    self.warn(format!(
                        "{what}: compressed bundle at byte {start}: inner bundle: {w}"
                    ));
                }
                let mut inside = Vec::new();
                for (target, size) in parsed.entries {
                    match uncompressed {
                        u if size > u => self.warn(format!(
                            "{what}: compressed bundle at byte {start}: entry {target} of {size} bytes is larger than the whole uncompressed bundle ({u} bytes)"
                        )),
                        _ if size > MAX_CODE => self.warn(format!(
                            "{what}: compressed bundle at byte {start}: entry {target} of {size} bytes is absurd (more than {MAX_CODE})"
                        )),
                        _ => inside.push((target, size)),
                    }
                }
                let sum: u64 = inside.iter().map(|(_, s)| *s).fold(0, u64::saturating_add);
                let denom = uncompressed.max(sum).max(1);
                for (target, size) in inside {
                    let stored = (u128::from(len) * u128::from(size) / u128::from(denom)) as u64;
                    self.objects.push(DeviceObject {
                        target,
                        container: DeviceContainer::Compressed,
                        stored,
                        code: size,
                    });
                }
            }
        }
        declared.map(|_| start.saturating_add(len))
    }
}

/// What [`parse_offload`] read of one uncompressed bundle.
struct Offload {
    /// Device entries (target, size); host entries left out.
    entries: Vec<(String, u64)>,
    /// The bundle's end relative to its start (the furthest entry end), when every
    /// entry was read.
    end: Option<u64>,
    /// The furthest end of the entries read so far, relative to the bundle's start.
    extent: u64,
    warnings: Vec<String>,
}

/// Parse the uncompressed bundle at `start`, of at most `avail` bytes.
fn parse_offload<S: ByteSource + ?Sized>(src: &S, start: u64, avail: u64) -> Offload {
    let mut out = Offload {
        entries: Vec::new(),
        end: None,
        extent: 0,
        warnings: Vec::new(),
    };
    let Some(count) = read_u64(src, start + 24) else {
        out.warnings
            .push("header cut short before the entry count".into());
        return out;
    };
    if count > MAX_ENTRIES {
        out.warnings.push(format!(
            "entry count {count} is absurd (more than {MAX_ENTRIES})"
        ));
        return out;
    }
    let mut pos = 32u64;
    for i in 0..count {
        let (Some(off), Some(size), Some(id_len)) = (
            read_u64(src, start + pos),
            read_u64(src, start + pos + 8),
            read_u64(src, start + pos + 16),
        ) else {
            out.warnings
                .push(format!("header cut short in entry {i} of {count}"));
            return out;
        };
        if id_len > 1024 {
            out.warnings
                .push(format!("entry {i}: id length {id_len} is absurd"));
            return out;
        }
        let Some(id) = src
            .read_vec(start + pos + 24, id_len as usize)
            .ok()
            .filter(|id| id.len() as u64 == id_len)
        else {
            out.warnings
                .push(format!("header cut short in entry {i}'s id"));
            return out;
        };
        pos += 24 + id_len;
        let id = String::from_utf8_lossy(&id);
        // An entry running past the end counts for the bytes that are there.
        let there = avail.saturating_sub(off).min(size);
        if there < size {
            out.warnings.push(format!(
                "entry {i} ({id}: {size} bytes at offset {off}) runs past the {avail} bytes there are"
            ));
        }
        if let Some(t) = bundle_target(&id) {
            out.entries.push((t, there));
        }
        out.extent = out.extent.max(off.saturating_add(there).min(avail));
    }
    if pos > avail {
        out.warnings.push(format!(
            "header of {pos} bytes runs past the {avail} bytes there are"
        ));
        return out;
    }
    out.end = Some(out.extent.max(pos));
    out
}

/// Decompress the start of a `CCOB` bundle: the inner bytes (up to [`CCOB_INNER`]) and
/// the uncompressed size its header records.
fn read_ccob_inner(b: &[u8]) -> Result<(Vec<u8>, u64), String> {
    let field = |r: std::ops::Range<usize>| b.get(r).ok_or("header cut short");
    let version = u16::from_le_bytes(field(4..6)?.try_into().map_err(|_| "header")?);
    let method = u16::from_le_bytes(field(6..8)?.try_into().map_err(|_| "header")?);
    let (header_len, uncompressed) = match version {
        1 => (
            20,
            u64::from(u32::from_le_bytes(
                field(8..12)?.try_into().map_err(|_| "header")?,
            )),
        ),
        2 => (
            24,
            u64::from(u32::from_le_bytes(
                field(12..16)?.try_into().map_err(|_| "header")?,
            )),
        ),
        3 => (
            32,
            u64::from_le_bytes(field(16..24)?.try_into().map_err(|_| "header")?),
        ),
        v => return Err(format!("unknown version {v}")),
    };
    let data = b.get(header_len..).ok_or("header cut short")?;
    let mut inner = Vec::new();
    // A truncated stream (only the first bytes are at hand) ends in an error after the
    // output it could produce: keep that output.
    let _ = match method {
        0 => flate2::read::ZlibDecoder::new(data)
            .take(CCOB_INNER as u64)
            .read_to_end(&mut inner),
        1 => zstd::stream::read::Decoder::with_buffer(data)
            .map_err(|e| format!("zstd: {e}"))?
            .take(CCOB_INNER as u64)
            .read_to_end(&mut inner),
        m => return Err(format!("unknown compression method {m}")),
    };
    if !inner.starts_with(BUNDLE_MAGIC) {
        return Err(if inner.is_empty() {
            "nothing could be decompressed".to_string()
        } else {
            "the decompressed bytes are not an offload bundle".to_string()
        });
    }
    Ok((inner, uncompressed))
}

/// The target of a bundle id: `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+` → `gfx90a:xnack+`;
/// host entries have none.
pub fn bundle_target(id: &str) -> Option<String> {
    if id.starts_with("host-") {
        return None;
    }
    let t = id.rsplit_once("--").map(|(_, t)| t).unwrap_or(id);
    (!t.is_empty()).then(|| t.to_string())
}

/// Which container a device-code file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BundleContainer {
    /// An uncompressed clang offload bundle (`__CLANG_OFFLOAD_BUNDLE__`).
    Offload,
    /// A compressed clang offload bundle (`CCOB`).
    Compressed,
}

/// The device targets a bundle file names in its header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleTargets {
    /// The container.
    pub container: BundleContainer,
    /// Device targets (`gfx90a:xnack+`), in header order, host entries left out.
    pub targets: Vec<String>,
    /// Whether every entry id was read (false when the bytes given end inside the
    /// header, or a compressed bundle could not be decompressed far enough).
    pub complete: bool,
}

/// How much of a compressed bundle is decompressed to read its inner header.
const CCOB_READ: usize = 64 << 10;
/// How much decompressed output is kept (the inner header comes first).
const CCOB_INNER: usize = 16 << 10;

/// Whether `head` starts with a bundle magic (`__CLANG_OFFLOAD_BUNDLE__` or `CCOB`).
pub fn has_bundle_magic(head: &[u8]) -> bool {
    head.starts_with(BUNDLE_MAGIC) || head.starts_with(CCOB_MAGIC)
}

/// The targets of a bundle file from its first bytes: an uncompressed offload bundle or
/// a `CCOB` compressed one at offset 0. `None` when `head` is neither.
pub fn read_bundle_head(head: &[u8]) -> Option<BundleTargets> {
    if head.starts_with(BUNDLE_MAGIC) {
        Some(read_offload_header(head))
    } else if head.starts_with(CCOB_MAGIC) {
        read_ccob(head).or(Some(BundleTargets {
            container: BundleContainer::Compressed,
            targets: Vec::new(),
            complete: false,
        }))
    } else {
        None
    }
}

/// Parse an uncompressed bundle header at the start of `b` as far as `b` goes (the
/// same parser as a fat binary's bundles; entry sizes and warnings are not needed here).
fn read_offload_header(b: &[u8]) -> BundleTargets {
    let parsed = parse_offload(b, 0, b.len() as u64);
    BundleTargets {
        container: BundleContainer::Offload,
        targets: parsed.entries.into_iter().map(|(t, _)| t).collect(),
        // Every entry's id was read.
        complete: parsed.end.is_some(),
    }
}

/// Decompress the start of a `CCOB` bundle and read the inner bundle's header.
fn read_ccob(b: &[u8]) -> Option<BundleTargets> {
    let (inner, _) = read_ccob_inner(b).ok()?;
    let mut t = read_offload_header(&inner);
    t.container = BundleContainer::Compressed;
    Some(t)
}

/// Total length of a compressed bundle from its header, when the version records it.
fn ccob_len(head: &[u8]) -> Option<u64> {
    let version = u16::from_le_bytes(head.get(4..6)?.try_into().ok()?);
    match version {
        2 => Some(u64::from(u32::from_le_bytes(
            head.get(8..12)?.try_into().ok()?,
        ))),
        3 => Some(u64::from_le_bytes(head.get(8..16)?.try_into().ok()?)),
        _ => None,
    }
}

/// The next bundle magic at or after `from` within 64 KiB (bundles are padded).
fn find_next_magic<S: ByteSource + ?Sized>(src: &S, from: u64, end: u64) -> Option<u64> {
    let len = (end.saturating_sub(from)).min(64 << 10) as usize;
    let buf = src.read_vec(from, len).ok()?;
    let a = memchr::memmem::find(&buf, BUNDLE_MAGIC);
    let b = memchr::memmem::find(&buf, CCOB_MAGIC);
    let i = match (a, b) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b)?,
    };
    Some(from + i as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::section::{Section, SectionKind};

    fn bundle(ids: &[&str]) -> Vec<u8> {
        let mut b = BUNDLE_MAGIC.to_vec();
        b.extend_from_slice(&(ids.len() as u64).to_le_bytes());
        for (i, id) in ids.iter().enumerate() {
            b.extend_from_slice(&(4096u64 * (i as u64 + 1)).to_le_bytes());
            b.extend_from_slice(&16u64.to_le_bytes());
            b.extend_from_slice(&(id.len() as u64).to_le_bytes());
            b.extend_from_slice(id.as_bytes());
        }
        b
    }

    #[test]
    fn offload_bundle_targets() {
        let mut data = bundle(&[
            "host-x86_64-unknown-linux-gnu-",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
        ]);
        data.resize(3 * 4096, 0);
        let mut second = bundle(&["hipv4-amdgcn-amd-amdhsa--gfx1100"]);
        second.resize(4096 + 16, 0);
        data.append(&mut second);
        let sections = vec![Section {
            name: ".hip_fatbin".into(),
            range: 0..data.len() as u64,
            kind: SectionKind::Gpu,
        }];
        let g = GpuCode::detect(&data[..], &sections, 62, 0);
        assert_eq!(g.offload_bundles, 2);
        assert_eq!(g.targets, vec!["gfx1100", "gfx90a:xnack+"]);
        assert!(g.warnings.is_empty(), "{:?}", g.warnings);
        let sizes: Vec<(&str, u64, u64)> = g
            .objects
            .iter()
            .map(|o| (o.target.as_str(), o.stored, o.code))
            .collect();
        assert_eq!(sizes, vec![("gfx90a:xnack+", 16, 16), ("gfx1100", 16, 16)]);
    }

    /// A standalone bundle file: header, then the code objects at their offsets.
    fn bundle_file(ids: &[&str]) -> Vec<u8> {
        let mut b = bundle(ids);
        b.resize(4096 * (ids.len() + 1) + 16, 0);
        b
    }

    #[test]
    fn bundle_file_heads() {
        let file = bundle_file(&[
            "host-x86_64-unknown-linux",
            "hipv4-amdgcn-amd-amdhsa--gfx1030",
            "hipv4-amdgcn-amd-amdhsa--gfx900",
        ]);
        let t = read_bundle_head(&file).unwrap();
        assert_eq!(t.container, BundleContainer::Offload);
        assert_eq!(t.targets, vec!["gfx1030", "gfx900"]);
        assert!(t.complete);
        // Cut inside the third id: what was read is kept, and it says it is partial.
        let t = read_bundle_head(&file[..180]).unwrap();
        assert_eq!(t.targets, vec!["gfx1030"]);
        assert!(!t.complete);
        assert_eq!(read_bundle_head(b"\x7fELF"), None);
        // Every cut of the header parses without panicking.
        for cut in 0..260 {
            let _ = read_bundle_head(&file[..cut]);
        }
    }

    /// A CCOB bundle around `inner` in the documented layout.
    fn ccob(version: u16, method: u16, inner: &[u8]) -> Vec<u8> {
        let data = match method {
            0 => {
                use std::io::Write;
                let mut e =
                    flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(inner).unwrap();
                e.finish().unwrap()
            }
            _ => zstd::bulk::compress(inner, 3).unwrap(),
        };
        let mut b = CCOB_MAGIC.to_vec();
        b.extend_from_slice(&version.to_le_bytes());
        b.extend_from_slice(&method.to_le_bytes());
        match version {
            1 => b.extend_from_slice(&(inner.len() as u32).to_le_bytes()),
            2 => {
                b.extend_from_slice(&((24 + data.len()) as u32).to_le_bytes());
                b.extend_from_slice(&(inner.len() as u32).to_le_bytes());
            }
            _ => {
                b.extend_from_slice(&((32 + data.len()) as u64).to_le_bytes());
                b.extend_from_slice(&(inner.len() as u64).to_le_bytes());
            }
        }
        b.extend_from_slice(&0x1234_5678_9abc_def0u64.to_le_bytes());
        b.extend_from_slice(&data);
        b
    }

    #[test]
    fn compressed_bundles_every_version_and_method() {
        let inner = bundle_file(&[
            "host-x86_64-unknown-linux-gnu-",
            "hipv4-amdgcn-amd-amdhsa--gfx942:xnack-",
        ]);
        for version in 1..=3 {
            for method in 0..=1 {
                let file = ccob(version, method, &inner);
                let t = read_bundle_head(&file).unwrap();
                assert_eq!(t.container, BundleContainer::Compressed);
                assert_eq!(t.targets, vec!["gfx942:xnack-"], "v{version} m{method}");
                assert!(t.complete);
                // Only the first 64 bytes: a CCOB file still, targets unknown.
                let t = read_bundle_head(&file[..64.min(file.len())]).unwrap();
                assert_eq!(t.container, BundleContainer::Compressed);
            }
        }
        // Unknown method or version: recognised, nothing read.
        let mut file = ccob(2, 1, &inner);
        file[6] = 9;
        assert!(read_bundle_head(&file).unwrap().targets.is_empty());
    }

    #[test]
    fn mutated_bundle_heads_never_panic() {
        let plain = bundle_file(&[
            "host-x86_64-unknown-linux",
            "hipv4-amdgcn-amd-amdhsa--gfx1030",
            "hipv4-amdgcn-amd-amdhsa--gfx900",
        ]);
        let inputs = [
            plain.clone(),
            ccob(2, 1, &plain),
            ccob(3, 0, &plain),
            ccob(1, 1, &plain),
        ];
        let mut seed = 0x9e37_79b9_u32;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as usize
        };
        for input in &inputs {
            for _ in 0..300 {
                let mut b = input.clone();
                for _ in 0..1 + next() % 8 {
                    let i = next() % b.len().min(256);
                    b[i] = next() as u8;
                }
                let cut = next() % (b.len() + 1);
                let _ = read_bundle_head(&b[..cut]);
                let sections = vec![Section {
                    name: ".hip_fatbin".into(),
                    range: 0..cut as u64 + 64,
                    kind: SectionKind::Gpu,
                }];
                let _ = GpuCode::detect(&b[..cut], &sections, 62, 0);
            }
        }
    }

    #[test]
    fn compressed_bundle_in_hip_fatbin() {
        let inner = bundle_file(&["hipv4-amdgcn-amd-amdhsa--gfx1030"]);
        let mut data = ccob(2, 1, &inner);
        data.resize(data.len().next_multiple_of(4096), 0);
        data.extend(ccob(
            3,
            0,
            &bundle_file(&["hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"]),
        ));
        let sections = vec![Section {
            name: ".hip_fatbin".into(),
            range: 0..data.len() as u64,
            kind: SectionKind::Gpu,
        }];
        let g = GpuCode::detect(&data[..], &sections, 62, 0);
        assert_eq!(g.compressed_bundles, 2);
        assert_eq!(g.targets, vec!["gfx1030", "gfx90a:xnack+"]);
    }

    #[test]
    fn garbage_sections_do_not_panic() {
        let data = [0xffu8; 100];
        for name in [".hip_fatbin", ".nv_fatbin"] {
            let sections = vec![Section {
                name: name.into(),
                range: 0..500,
                kind: SectionKind::Gpu,
            }];
            let g = GpuCode::detect(&data[..], &sections, 62, 0);
            assert!(g.targets.is_empty());
        }
    }
}
