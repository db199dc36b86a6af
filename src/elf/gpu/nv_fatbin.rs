//! CUDA fatbin containers in a `.nv_fatbin` section: containers (magic `0xBA55ED50`,
//! header size, body size) one after another, each a run of entries whose headers name
//! the kind (PTX or cubin), the `sm_XX` architecture and, for compressed entries, the
//! uncompressed size. Headers only; payloads are never decompressed.

use super::{
    read_u16, read_u32, read_u64, DeviceContainer, DeviceObject, GpuCode, MAX_BUNDLES, MAX_CODE,
    MAX_ENTRIES,
};
use crate::elf::bytes::ByteSource;

const NV_FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// `flags` bit of a fatbin entry whose payload is compressed.
const NV_FLAG_COMPRESSED: u64 = 0x2000;

impl GpuCode {
    pub(super) fn walk_nv_fatbin<S: ByteSource + ?Sized>(&mut self, src: &S, start: u64, end: u64) {
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
