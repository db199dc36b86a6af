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
//! - A standalone bundle or CCOB file (what GPU libraries install as `.co`,
//!   `.hsaco`) names its targets in its header ([`read_bundle_head`]), which
//!   `crate::classify`'s class rules read from a file's first bytes.
//!
//! The formats are described in `docs/rocm-runtime.md`. Anything unexpected stops the
//! walk quietly: this is inventory, not validation.
//!
//! One module per container: `offload` (clang offload bundles, plain and `CCOB`),
//! `nv_fatbin` (CUDA fatbin containers) and `arch` (processor names from `e_flags`).
//! This file holds the inventory types and the walk over an ELF file's sections.

mod arch;
mod code;
mod nv_fatbin;
mod offload;

use super::bytes::ByteSource;
use super::section::{Section, SectionKind};

pub use arch::{amdgpu_arch, amdgpu_processors, amdgpu_target, cuda_arch};
use code::{read_u16, read_u32, read_u64, MAX_BUNDLES, MAX_CODE, MAX_ENTRIES, MAX_WARNINGS};
pub use code::{DeviceContainer, DeviceObject, GpuCode, EM_AMDGPU, EM_CUDA};
use offload::BUNDLE_MAGIC;
pub use offload::{
    bundle_target, has_bundle_magic, read_bundle_head, BundleContainer, BundleTargets,
};

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
    /// offset 0; what GPU libraries install as `.co`, `.hsaco`): every bundle in it,
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
}
