//! [`GpuCode`]: GPU device code found in an ELF file, and the targets of standalone
//! device-code files, read from headers only.
//!
//! - Host ELF with HIP code: `.hip_fatbin` holds clang offload bundles
//!   (`__CLANG_OFFLOAD_BUNDLE__`, ids like `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`) or
//!   compressed bundles (`CCOB`, zlib or zstd; the first kilobytes are decompressed to
//!   read the inner bundle's ids).
//! - Host ELF with CUDA code: `.nv_fatbin` holds a fatbin container (`0xBA55ED50`) whose
//!   entries carry an `sm_XX` architecture.
//! - An AMDGPU code object (`e_machine` 224) names its architecture in `e_flags`
//!   ([`amdgpu_arch`]); a CUDA cubin (`e_machine` 190) too ([`cuda_arch`]).
//! - A standalone bundle or CCOB file (what Tensile and MIOpen install as `.co`,
//!   `.hsaco`) names its targets in its header ([`read_bundle_head`]), which
//!   `crate::classify`'s class rules read from a file's first bytes.
//!
//! The formats are described in `docs/rocm-runtime.md`. Anything unexpected stops the
//! walk quietly: this is inventory, not validation.

use std::io::Read;

use super::bytes::ByteSource;
use super::section::{Section, SectionKind};

const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
const CCOB_MAGIC: &[u8; 4] = b"CCOB";
const NV_FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// `e_machine` of AMDGPU code objects.
pub const EM_AMDGPU: u16 = 224;
/// `e_machine` of CUDA cubins.
pub const EM_CUDA: u16 = 190;
const MAX_BUNDLES: usize = 4096;
const MAX_ENTRIES: u64 = 1024;
/// Warnings kept per file: a corrupt fat binary says what is wrong, not a thousand times.
const MAX_WARNINGS: usize = 8;
/// The largest uncompressed size believed for one code object (1 TiB): a header saying
/// more is corrupt, and sums of such sizes over a closure must not overflow.
const MAX_CODE: u64 = 1 << 40;
/// `flags` bit of a fatbin entry whose payload is compressed.
const NV_FLAG_COMPRESSED: u64 = 0x2000;

/// How one device code object is stored in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeviceContainer {
    /// The whole file is one code object (an AMDGPU ELF, a CUDA cubin).
    CodeObject,
    /// An entry of an uncompressed clang offload bundle.
    Offload,
    /// An entry of a compressed (`CCOB`) clang offload bundle.
    Compressed,
    /// A cubin (or other non-PTX) entry of a CUDA fatbin container.
    Cubin,
    /// A PTX entry of a CUDA fatbin container.
    Ptx,
}

impl DeviceContainer {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceContainer::CodeObject => "code-object",
            DeviceContainer::Offload => "offload-bundle",
            DeviceContainer::Compressed => "compressed-bundle",
            DeviceContainer::Cubin => "cubin",
            DeviceContainer::Ptx => "ptx",
        }
    }

    /// Parse [`DeviceContainer::as_str`]'s spelling.
    pub fn parse(s: &str) -> Option<DeviceContainer> {
        [
            DeviceContainer::CodeObject,
            DeviceContainer::Offload,
            DeviceContainer::Compressed,
            DeviceContainer::Cubin,
            DeviceContainer::Ptx,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
    }
}

/// One device code object inside a file, with the bytes it takes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceObject {
    /// The target as its container names it (`gfx90a:xnack+`, `sm_80`).
    pub target: String,
    /// How it is stored.
    pub container: DeviceContainer,
    /// Bytes it takes in the file: the entry's payload (for fatbin entries with the entry
    /// header); for an entry of a compressed bundle, its share of the compressed bytes,
    /// in proportion to its uncompressed size.
    pub stored: u64,
    /// Bytes of the code object itself, uncompressed (equal to `stored` when stored
    /// uncompressed).
    pub code: u64,
}

/// GPU code inside one ELF file (or one standalone bundle file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuCode {
    /// GPU-related sections present (`.hip_fatbin`, `.nv_fatbin`, wrappers).
    pub sections: Vec<String>,
    /// Uncompressed clang offload bundles found.
    pub offload_bundles: u32,
    /// Compressed (`CCOB`) bundles found.
    pub compressed_bundles: u32,
    /// Whether a CUDA fatbin container was found.
    pub nv_fatbin: bool,
    /// Target architectures, e.g. `gfx90a:xnack+`, `sm_80`; sorted, deduplicated.
    pub targets: Vec<String>,
    /// Every device code object with its size, in file order.
    pub objects: Vec<DeviceObject>,
    /// What could not be read (truncated bundles, absurd counts or sizes), each naming
    /// the section or container and the offset.
    pub warnings: Vec<String>,
}

impl GpuCode {
    /// Whether any GPU code was found.
    pub fn is_empty(&self) -> bool {
        self.sections.is_empty() && self.targets.is_empty()
    }

    /// Inventory the GPU code of an ELF file whose sections are already known (a native
    /// code object is one object of the file's length).
    pub fn detect<S: ByteSource + ?Sized>(
        src: &S,
        sections: &[Section],
        machine: u16,
        flags: u32,
    ) -> GpuCode {
        let mut g = GpuCode::default();
        if machine == EM_AMDGPU {
            g.push_whole(src, amdgpu_target(flags));
        }
        if machine == EM_CUDA {
            let abi = src.read_vec(8, 1).ok().and_then(|b| b.first().copied());
            if let Some(sm) = abi.and_then(|abi| cuda_arch(flags, abi)) {
                g.push_whole(src, sm);
            }
        }
        // A device code object is one object, whole: fat binary sections inside it
        // (nothing real has them) would count its bytes twice.
        let whole = !g.objects.is_empty();
        for s in sections.iter().filter(|s| s.kind == SectionKind::Gpu) {
            g.sections.push(s.name.clone());
            if whole {
                if s.name.ends_with("fatbin") {
                    g.warn(format!(
                        "section {} in a device code object (e_machine {machine}) was not read",
                        s.name
                    ));
                }
                continue;
            }
            let end = s.range.end.min(src.len());
            if s.range.end > src.len() && s.name.ends_with("fatbin") {
                g.warn(format!(
                    "section {} ends at byte {} but the file has {} bytes",
                    s.name,
                    s.range.end,
                    src.len()
                ));
            }
            match s.name.as_str() {
                ".hip_fatbin" => g.walk_bundles(src, s.range.start, end, ".hip_fatbin"),
                ".nv_fatbin" => g.walk_nv_fatbin(src, s.range.start, end),
                _ => {}
            }
        }
        g.finish();
        g
    }

    /// Inventory a standalone bundle file (`__CLANG_OFFLOAD_BUNDLE__` or `CCOB` at
    /// offset 0; what Tensile and MIOpen install as `.co`, `.hsaco`): every bundle in it,
    /// one after another. Empty for anything else.
    pub fn detect_bundle_file<S: ByteSource + ?Sized>(src: &S) -> GpuCode {
        let mut g = GpuCode::default();
        let Ok(head) = src.read_vec(0, BUNDLE_MAGIC.len()) else {
            return g;
        };
        if has_bundle_magic(&head) {
            g.walk_bundles(src, 0, src.len(), "bundle");
        }
        g.finish();
        g
    }

    fn finish(&mut self) {
        self.targets
            .extend(self.objects.iter().map(|o| o.target.clone()));
        self.targets.sort();
        self.targets.dedup();
    }

    fn push_whole<S: ByteSource + ?Sized>(&mut self, src: &S, target: String) {
        self.objects.push(DeviceObject {
            target,
            container: DeviceContainer::CodeObject,
            stored: src.len(),
            code: src.len(),
        });
    }

    fn warn(&mut self, msg: String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(msg);
        }
    }

    fn walk_bundles<S: ByteSource + ?Sized>(&mut self, src: &S, start: u64, end: u64, what: &str) {
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

    fn walk_nv_fatbin<S: ByteSource + ?Sized>(&mut self, src: &S, start: u64, end: u64) {
        match read_u32(src, start) {
            Some(NV_FATBIN_MAGIC) => {}
            Some(m) => {
                self.warn(format!(
                    ".nv_fatbin at byte {start}: magic {m:#010x}, not 0xba55ed50"
                ));
                return;
            }
            None => return,
        }
        self.nv_fatbin = true;
        let mut container = start;
        for _ in 0..MAX_BUNDLES {
            if container >= end {
                return;
            }
            match read_u32(src, container) {
                Some(NV_FATBIN_MAGIC) => {}
                // Zero padding may follow the last container.
                Some(0) | None => return,
                Some(m) => {
                    self.warn(format!(
                        ".nv_fatbin: container at byte {container}: magic {m:#010x}, not 0xba55ed50"
                    ));
                    return;
                }
            }
            let (Some(header_size), Some(size)) =
                (read_u16(src, container + 6), read_u64(src, container + 8))
            else {
                self.warn(format!(
                    ".nv_fatbin: container at byte {container}: header cut short"
                ));
                return;
            };
            let body = container + u64::from(header_size.max(16));
            let body_end = match body.checked_add(size) {
                Some(e) if e <= end => e,
                _ => {
                    self.warn(format!(
                        ".nv_fatbin: container at byte {container} says it holds {size} bytes, but only {} follow",
                        end.saturating_sub(body)
                    ));
                    end
                }
            };
            let mut entry = body;
            let mut entries = 0u64;
            while entry < body_end {
                entries += 1;
                if entries > MAX_ENTRIES {
                    self.warn(format!(
                        ".nv_fatbin: container at byte {container}: more than {MAX_ENTRIES} entries; the rest was not read"
                    ));
                    break;
                }
                if entry + 64 > body_end {
                    self.warn(format!(
                        ".nv_fatbin: entry at byte {entry}: header cut short by the container's end"
                    ));
                    break;
                }
                let (Some(kind), Some(eh), Some(es), Some(arch), Some(eflags), Some(full)) = (
                    read_u16(src, entry),
                    read_u32(src, entry + 4),
                    read_u64(src, entry + 8),
                    read_u32(src, entry + 28),
                    read_u64(src, entry + 40),
                    read_u64(src, entry + 56),
                ) else {
                    self.warn(format!(".nv_fatbin: entry at byte {entry}: unreadable"));
                    break;
                };
                let span = u64::from(eh).checked_add(es);
                let next = span.and_then(|s| entry.checked_add(s));
                let Some(next) = next.filter(|&n| n > entry && n <= body_end) else {
                    self.warn(format!(
                        ".nv_fatbin: entry at byte {entry} (header {eh} bytes, payload {es} bytes) runs past its container's end at byte {body_end}"
                    ));
                    break;
                };
                if arch > 0 && arch < 10_000 {
                    let mut compressed = eflags & NV_FLAG_COMPRESSED != 0;
                    if compressed && full > MAX_CODE {
                        self.warn(format!(
                            ".nv_fatbin: entry at byte {entry}: uncompressed size {full} is absurd (more than {MAX_CODE})"
                        ));
                        compressed = false;
                    }
                    self.objects.push(DeviceObject {
                        target: format!("sm_{arch}"),
                        container: if kind == 1 {
                            DeviceContainer::Ptx
                        } else {
                            DeviceContainer::Cubin
                        },
                        stored: next - entry,
                        code: if compressed && full > 0 { full } else { es },
                    });
                } else {
                    self.warn(format!(
                        ".nv_fatbin: entry at byte {entry}: architecture {arch} is not an sm_XX"
                    ));
                }
                entry = next;
            }
            container = body_end;
        }
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

/// `EF_AMDGPU_MACH` values (`e_flags & 0xff`) and their processors. 0x20 – 0x47 as
/// LLVM 15's `llvm-readobj --file-headers` names them (checked by patching the flags
/// of a real hipcc code object), the newer ones from `docs/rocm-runtime.md`.
const AMDGPU_MACH: &[(u32, &str)] = &[
    (0x20, "gfx600"),
    (0x21, "gfx601"),
    (0x22, "gfx700"),
    (0x23, "gfx701"),
    (0x24, "gfx702"),
    (0x25, "gfx703"),
    (0x26, "gfx704"),
    (0x28, "gfx801"),
    (0x29, "gfx802"),
    (0x2a, "gfx803"),
    (0x2b, "gfx810"),
    (0x2c, "gfx900"),
    (0x2d, "gfx902"),
    (0x2e, "gfx904"),
    (0x2f, "gfx906"),
    (0x30, "gfx908"),
    (0x31, "gfx909"),
    (0x32, "gfx90c"),
    (0x33, "gfx1010"),
    (0x34, "gfx1011"),
    (0x35, "gfx1012"),
    (0x36, "gfx1030"),
    (0x37, "gfx1031"),
    (0x38, "gfx1032"),
    (0x39, "gfx1033"),
    (0x3a, "gfx602"),
    (0x3b, "gfx705"),
    (0x3c, "gfx805"),
    (0x3d, "gfx1035"),
    (0x3e, "gfx1034"),
    (0x3f, "gfx90a"),
    (0x40, "gfx940"),
    (0x41, "gfx1100"),
    (0x42, "gfx1013"),
    (0x43, "gfx1150"),
    (0x44, "gfx1103"),
    (0x45, "gfx1036"),
    (0x46, "gfx1101"),
    (0x47, "gfx1102"),
    (0x48, "gfx1200"),
    (0x4b, "gfx941"),
    (0x4c, "gfx942"),
    (0x4e, "gfx1201"),
    (0x4f, "gfx950"),
];

/// Every AMDGPU processor name this module knows (for name parsing elsewhere).
pub fn amdgpu_processors() -> impl Iterator<Item = &'static str> {
    AMDGPU_MACH.iter().map(|(_, n)| *n)
}

/// The processor of an AMDGPU code object from its `e_flags` (`gfx90a`), if known.
pub fn amdgpu_arch(flags: u32) -> Option<&'static str> {
    let mach = flags & 0xff;
    AMDGPU_MACH
        .iter()
        .find(|(m, _)| *m == mach)
        .map(|(_, n)| *n)
}

/// The target id of an AMDGPU code object from its `e_flags`: the processor, then
/// `:sramecc±` (`e_flags & 0xc00`: 0xc00 on, 0x800 off) and `:xnack±` (`e_flags & 0x300`:
/// 0x300 on, 0x200 off), as clang spells targets (`gfx90a:sramecc+:xnack-`). An unknown
/// processor is `amdgcn-mach-0x…`.
pub fn amdgpu_target(flags: u32) -> String {
    let mut t = match amdgpu_arch(flags) {
        Some(n) => n.to_string(),
        None => format!("amdgcn-mach-{:#x}", flags & 0xff),
    };
    match flags & 0xc00 {
        0x800 => t.push_str(":sramecc-"),
        0xc00 => t.push_str(":sramecc+"),
        _ => {}
    }
    match flags & 0x300 {
        0x200 => t.push_str(":xnack-"),
        0x300 => t.push_str(":xnack+"),
        _ => {}
    }
    t
}

/// The architecture of a CUDA cubin (`sm_80`) from its `e_flags` and ELF ABI version
/// (`e_ident[EI_ABIVERSION]`). Layout read from real cubins (the `libcudadevrt.a` of
/// PyPI's `nvidia-cuda-runtime-cu12` 12.9.79): ABI version 7 keeps the SM in the low
/// byte (`0x500550`: sm_80, with the virtual architecture in bits 16–23); ABI version 8
/// (sm_100 and later) keeps it in bits 8–15 (`0x6006402`: sm_100).
pub fn cuda_arch(flags: u32, abi_version: u8) -> Option<String> {
    let sm = if abi_version >= 8 {
        (flags >> 8) & 0xff
    } else {
        flags & 0xff
    };
    (sm >= 10).then(|| format!("sm_{sm}"))
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

fn read_u16<S: ByteSource + ?Sized>(src: &S, at: u64) -> Option<u16> {
    Some(u16::from_le_bytes(
        src.read_vec(at, 2).ok()?.try_into().ok()?,
    ))
}

fn read_u32<S: ByteSource + ?Sized>(src: &S, at: u64) -> Option<u32> {
    Some(u32::from_le_bytes(
        src.read_vec(at, 4).ok()?.try_into().ok()?,
    ))
}

fn read_u64<S: ByteSource + ?Sized>(src: &S, at: u64) -> Option<u64> {
    Some(u64::from_le_bytes(
        src.read_vec(at, 8).ok()?.try_into().ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn amdgpu_flags() {
        assert_eq!(amdgpu_target(0x3f | 0x300), "gfx90a:xnack+");
        assert_eq!(amdgpu_target(0x41), "gfx1100");
        assert_eq!(amdgpu_target(0x2f | 0x200), "gfx906:xnack-");
        assert_eq!(amdgpu_target(0x7), "amdgcn-mach-0x7");
        // What hipcc (clang 15) writes: sramecc "any" (0x400) is not spelled.
        assert_eq!(amdgpu_target(0x73f), "gfx90a:xnack+");
        assert_eq!(amdgpu_target(0x62f), "gfx906:xnack-");
        assert_eq!(amdgpu_target(0xc3f | 0x200), "gfx90a:sramecc+:xnack-");
        assert_eq!(amdgpu_arch(0x2a), Some("gfx803"));
        assert_eq!(amdgpu_arch(0x37), Some("gfx1031"));
        assert_eq!(amdgpu_arch(0x4c), Some("gfx942"));
        assert_eq!(amdgpu_arch(0x27), None);
        let mut names: Vec<_> = amdgpu_processors().collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "a processor listed twice");
    }

    #[test]
    fn cuda_flags_from_real_cubins() {
        // e_flags and EI_ABIVERSION of the cubins in libcudadevrt.a
        // (nvidia-cuda-runtime-cu12 12.9.79).
        for (flags, abi, want) in [
            (0x0032_0532, 7, "sm_50"),
            (0x0050_0550, 7, "sm_80"),
            (0x005a_055a, 7, "sm_90"),
            (0x0600_6402, 8, "sm_100"),
            (0x0600_7802, 8, "sm_120"),
            (0x0600_7902, 8, "sm_121"),
        ] {
            assert_eq!(cuda_arch(flags, abi).as_deref(), Some(want), "{flags:#x}");
        }
        assert_eq!(cuda_arch(0x0600_0002, 8), None);
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
