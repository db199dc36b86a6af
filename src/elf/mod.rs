//! Facts from ELF files, read with goblin and positional reads: interpreter, `DT_NEEDED`,
//! RUNPATH/RPATH entries with their file offsets, the section table and embedded GPU
//! code ([`ElfFacts`]), and the classification of a reference hash by where it sits in
//! the file ([`classify_hit`]).
//!
//! The walkers in `crate::scan` call this for ELF files that contain hits; the kinds come
//! from `crate::classify`. Malformed files give an [`ElfError`] or warnings, never a panic.

mod classify;
mod facts;
mod gpu;
mod source;

pub use classify::{classify_hit, names_source_path, HitClass, SOURCE_EXTENSIONS, STRING_CAP};
pub use facts::{
    expand_origin, has_elf_magic, section_kind, ElfError, ElfFacts, ElfString, RunpathEntry,
    RunpathTag, Section, SectionKind, ELF_MAGIC,
};
pub use gpu::{amdgpu_target, bundle_target, GpuCode};
pub use source::{ByteSource, FileSource};
