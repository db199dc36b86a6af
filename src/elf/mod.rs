//! Facts from ELF files, read with goblin and positional reads: interpreter, `DT_NEEDED`,
//! RUNPATH/RPATH entries with their file offsets, the section table and embedded GPU
//! code ([`ElfFacts`]). Facts only: what a hash at some offset *is* (an `elf-needed`
//! RUNPATH entry, a `__FILE__` string …) is decided by the rules in `crate::classify`.
//!
//! Tensile's index files and manifests are read here too (`tensile.rs`): which files
//! an index names for loading.
//!
//! The walkers in `crate::scan` read these for ELF files; malformed files give an
//! [`ElfError`] or warnings, never a panic.

mod bytes;
mod dlopen;
mod facts;
mod gpu;
mod section;
mod tensile;

pub use bytes::{ByteSource, FileBytes};
pub use dlopen::{
    data_path_tokens, dlopen_names, is_data_path, is_name_fragment, names_in_data, soname_tokens,
};
pub use facts::{
    expand_origin, has_elf_magic, section_kind, ElfError, ElfFacts, ElfString, RunpathEntry,
    RunpathTag, Section, SectionKind, ELF_MAGIC,
};
pub use gpu::{
    amdgpu_arch, amdgpu_processors, amdgpu_target, bundle_target, cuda_arch, has_bundle_magic,
    read_bundle_head, BundleContainer, BundleTargets, DeviceContainer, DeviceObject, GpuCode,
    EM_AMDGPU, EM_CUDA,
};
pub use tensile::{index_loads, manifest_names, MAX_INDEX};
