//! ELF sections as the hit rules see them: a name, the file range of its contents and a
//! role ([`SectionKind`]). Shared by the fact reader (`facts.rs`) and the GPU code reader
//! (`gpu.rs`), which both walk the section table.

use std::ops::Range;

/// What a section holds, as far as hit classification cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionKind {
    /// `.interp`.
    Interp,
    /// Constant or initialised data: `.rodata*`, `.data*`, `.tdata*`, `.comment` …
    Data,
    /// `.dynstr`.
    DynStr,
    /// `.debug_*`, `.zdebug_*`, `.gnu_debuglink`, `.gnu_debugaltlink`, `.stab*`.
    Debug,
    /// Embedded GPU code: `.hip_fatbin`, `.nv_fatbin` and their wrappers.
    Gpu,
    /// Anything else (code, symbol tables, relocations …).
    Other,
}

/// A section with file contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Its name from the section-name string table (empty when unknown).
    pub name: String,
    /// File offsets of its contents.
    pub range: Range<u64>,
    /// Its role.
    pub kind: SectionKind,
}

/// Classify a section by name.
pub fn section_kind(name: &str) -> SectionKind {
    const DATA: &[&str] = &[
        ".rodata", ".data", ".tdata", ".lrodata", ".ldata", ".comment", ".sdata", ".srodata",
    ];
    const DEBUG: &[&str] = &[
        ".debug",
        ".zdebug",
        ".gnu_debuglink",
        ".gnu_debugaltlink",
        ".stab",
    ];
    const GPU: &[&str] = &[
        ".hip_fatbin",
        ".hipFatBinSegment",
        ".nv_fatbin",
        ".nvFatBinSegment",
    ];
    if name == ".interp" {
        SectionKind::Interp
    } else if name == ".dynstr" {
        SectionKind::DynStr
    } else if DEBUG.iter().any(|p| name.starts_with(p)) {
        SectionKind::Debug
    } else if GPU.contains(&name) {
        SectionKind::Gpu
    } else if DATA
        .iter()
        .any(|p| name == *p || name.strip_prefix(p).is_some_and(|r| r.starts_with('.')))
    {
        SectionKind::Data
    } else {
        SectionKind::Other
    }
}
