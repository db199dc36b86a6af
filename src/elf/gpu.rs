//! [`GpuCode`]: GPU device code found in an ELF file, read from headers only.
//!
//! - Host ELF with HIP code: `.hip_fatbin` holds clang offload bundles
//!   (`__CLANG_OFFLOAD_BUNDLE__`, ids like `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`) or
//!   compressed bundles (`CCOB`, whose targets are inside the compressed data and not
//!   read here).
//! - Host ELF with CUDA code: `.nv_fatbin` holds a fatbin container (`0xBA55ED50`) whose
//!   entries carry an `sm_XX` architecture.
//! - An AMDGPU code object (`e_machine` 224) names its architecture in `e_flags`.
//!
//! The formats are described in `docs/rocm-runtime.md`. Anything unexpected stops the
//! walk quietly: this is inventory, not validation.

use super::bytes::ByteSource;
use super::section::{Section, SectionKind};

const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
const CCOB_MAGIC: &[u8; 4] = b"CCOB";
const NV_FATBIN_MAGIC: u32 = 0xBA55_ED50;
const EM_AMDGPU: u16 = 224;
const MAX_BUNDLES: usize = 4096;
const MAX_ENTRIES: u64 = 1024;

/// GPU code inside one ELF file.
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
}

impl GpuCode {
    /// Whether any GPU code was found.
    pub fn is_empty(&self) -> bool {
        self.sections.is_empty() && self.targets.is_empty()
    }

    /// Inventory the GPU code of an ELF file whose sections are already known.
    pub fn detect<S: ByteSource + ?Sized>(
        src: &S,
        sections: &[Section],
        machine: u16,
        flags: u32,
    ) -> GpuCode {
        let mut g = GpuCode::default();
        if machine == EM_AMDGPU {
            g.targets.push(amdgpu_target(flags));
        }
        for s in sections.iter().filter(|s| s.kind == SectionKind::Gpu) {
            g.sections.push(s.name.clone());
            match s.name.as_str() {
                ".hip_fatbin" => g.walk_bundles(src, s.range.start, s.range.end),
                ".nv_fatbin" => g.walk_nv_fatbin(src, s.range.start, s.range.end),
                _ => {}
            }
        }
        g.targets.sort();
        g.targets.dedup();
        g
    }

    fn walk_bundles<S: ByteSource + ?Sized>(&mut self, src: &S, start: u64, end: u64) {
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
                self.read_bundle(src, pos, end)
            } else if head.starts_with(CCOB_MAGIC) {
                self.compressed_bundles += 1;
                ccob_len(&head).map(|l| pos.saturating_add(l))
            } else {
                None
            };
            let Some(next) = next else { return };
            // Bundles in `.hip_fatbin` are aligned; look for the next magic nearby.
            let Some(found) = find_next_magic(src, next.max(pos + 1), end) else {
                return;
            };
            pos = found;
        }
    }

    /// Read one uncompressed bundle's ids; returns where it ends.
    fn read_bundle<S: ByteSource + ?Sized>(
        &mut self,
        src: &S,
        start: u64,
        end: u64,
    ) -> Option<u64> {
        let count = read_u64(src, start + 24)?;
        if count > MAX_ENTRIES {
            return None;
        }
        let mut pos = start + 32;
        let mut bundle_end = pos;
        for _ in 0..count {
            let off = read_u64(src, pos)?;
            let size = read_u64(src, pos + 8)?;
            let id_len = read_u64(src, pos + 16)?;
            if id_len > 1024 {
                return None;
            }
            let id = src.read_vec(pos + 24, id_len as usize).ok()?;
            pos = pos.checked_add(24 + id_len)?;
            if pos > end {
                return None;
            }
            let id = String::from_utf8_lossy(&id);
            if let Some(t) = bundle_target(&id) {
                self.targets.push(t);
            }
            bundle_end = bundle_end.max(start.checked_add(off)?.checked_add(size)?);
        }
        Some(bundle_end.max(pos))
    }

    fn walk_nv_fatbin<S: ByteSource + ?Sized>(&mut self, src: &S, start: u64, end: u64) {
        let Some(magic) = read_u32(src, start) else {
            return;
        };
        if magic != NV_FATBIN_MAGIC {
            return;
        }
        self.nv_fatbin = true;
        let mut container = start;
        for _ in 0..MAX_BUNDLES {
            if container >= end || read_u32(src, container) != Some(NV_FATBIN_MAGIC) {
                return;
            }
            let Some(header_size) = read_u16(src, container + 6) else {
                return;
            };
            let Some(size) = read_u64(src, container + 8) else {
                return;
            };
            let body = container + u64::from(header_size);
            let Some(body_end) = body.checked_add(size) else {
                return;
            };
            let mut entry = body;
            for _ in 0..MAX_ENTRIES {
                if entry + 32 > body_end {
                    break;
                }
                let (Some(eh), Some(es), Some(arch)) = (
                    read_u32(src, entry + 4),
                    read_u64(src, entry + 8),
                    read_u32(src, entry + 28),
                ) else {
                    break;
                };
                if arch > 0 && arch < 10_000 {
                    self.targets.push(format!("sm_{arch}"));
                }
                let Some(next) = entry
                    .checked_add(u64::from(eh))
                    .and_then(|e| e.checked_add(es))
                else {
                    break;
                };
                if next <= entry {
                    break;
                }
                entry = next;
            }
            container = body_end;
        }
    }
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

/// The architecture of an AMDGPU code object from its `e_flags`.
pub fn amdgpu_target(flags: u32) -> String {
    const MACH: &[(u32, &str)] = &[
        (0x2c, "gfx900"),
        (0x2f, "gfx906"),
        (0x30, "gfx908"),
        (0x3f, "gfx90a"),
        (0x40, "gfx940"),
        (0x4b, "gfx941"),
        (0x4c, "gfx942"),
        (0x4f, "gfx950"),
        (0x33, "gfx1010"),
        (0x36, "gfx1030"),
        (0x41, "gfx1100"),
        (0x46, "gfx1101"),
        (0x47, "gfx1102"),
        (0x43, "gfx1150"),
        (0x48, "gfx1200"),
        (0x4e, "gfx1201"),
    ];
    let mach = flags & 0xff;
    let base = MACH
        .iter()
        .find(|(m, _)| *m == mach)
        .map(|(_, n)| (*n).to_string())
        .unwrap_or_else(|| format!("amdgcn-mach-{mach:#x}"));
    match flags & 0x300 {
        0x200 => format!("{base}:xnack-"),
        0x300 => format!("{base}:xnack+"),
        _ => base,
    }
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
        data.append(&mut second);
        let sections = vec![Section {
            name: ".hip_fatbin".into(),
            range: 0..data.len() as u64,
            kind: SectionKind::Gpu,
        }];
        let g = GpuCode::detect(&data[..], &sections, 62, 0);
        assert_eq!(g.offload_bundles, 2);
        assert_eq!(g.targets, vec!["gfx1100", "gfx90a:xnack+"]);
    }

    #[test]
    fn amdgpu_flags() {
        assert_eq!(amdgpu_target(0x3f | 0x300), "gfx90a:xnack+");
        assert_eq!(amdgpu_target(0x41), "gfx1100");
        assert_eq!(amdgpu_target(0x2f | 0x200), "gfx906:xnack-");
        assert_eq!(amdgpu_target(0x7), "amdgcn-mach-0x7");
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
