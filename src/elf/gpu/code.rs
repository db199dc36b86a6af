//! What the GPU inventory of one ELF file holds: its containers of device code
//! ([`DeviceContainer`]), each device object ([`DeviceObject`]), the whole
//! ([`GpuCode`]), the bounds every parser keeps to, and the little-endian reads they share.

use crate::elf::bytes::ByteSource;

/// `e_machine` of AMDGPU code objects and of CUDA cubins (goblin's constants).
pub use goblin::elf::header::{EM_AMDGPU, EM_CUDA};
pub(super) const MAX_BUNDLES: usize = 4096;
/// Entries believed per bundle or fatbin container.
pub(super) const MAX_ENTRIES: u64 = 1024;
/// Warnings kept per file: a corrupt fat binary says what is wrong, not a thousand times.
pub(super) const MAX_WARNINGS: usize = 8;
/// The largest uncompressed size believed for one code object (1 TiB): a header saying
/// more is corrupt, and sums of such sizes over a closure must not overflow.
pub(super) const MAX_CODE: u64 = 1 << 40;

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

pub(super) fn read_u16<S: ByteSource + ?Sized>(src: &S, at: u64) -> Option<u16> {
    Some(u16::from_le_bytes(
        src.read_vec(at, 2).ok()?.try_into().ok()?,
    ))
}

pub(super) fn read_u32<S: ByteSource + ?Sized>(src: &S, at: u64) -> Option<u32> {
    Some(u32::from_le_bytes(
        src.read_vec(at, 4).ok()?.try_into().ok()?,
    ))
}

pub(super) fn read_u64<S: ByteSource + ?Sized>(src: &S, at: u64) -> Option<u64> {
    Some(u64::from_le_bytes(
        src.read_vec(at, 8).ok()?.try_into().ok()?,
    ))
}
