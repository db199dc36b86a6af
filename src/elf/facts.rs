//! [`ElfFacts`]: what the dynamic loader and the hit classifier need to know about one
//! ELF file, read with positional reads (headers via goblin, strings by offset) so that
//! a 2 GiB `librocblas.so` costs a few kilobytes of reads, not 2 GiB of memory.
//!
//! Only the ELF header is mandatory: a problem with program headers, section headers or
//! the dynamic section becomes a warning in [`ElfFacts::warnings`] and the facts that
//! could be read are kept. Nothing here panics on malformed input.

use std::io;
use std::ops::Range;

use goblin::container::{Container, Ctx, Endian};
use goblin::elf::dynamic::{
    DT_NEEDED, DT_NULL, DT_RPATH, DT_RUNPATH, DT_SONAME, DT_STRSZ, DT_STRTAB,
};
use goblin::elf::program_header::{ProgramHeader, PT_DYNAMIC, PT_INTERP, PT_LOAD};
use goblin::elf::section_header::{SectionHeader, SHN_XINDEX, SHT_DYNAMIC, SHT_NOBITS, SHT_NULL};
use goblin::elf::Elf;

use super::bytes::ByteSource;
use super::gpu::GpuCode;
pub use super::section::{section_kind, Section, SectionKind};

/// The four bytes every ELF file starts with.
pub const ELF_MAGIC: [u8; 4] = *b"\x7fELF";

const MAX_SECTIONS: u64 = 1 << 20;
const MAX_SHSTRTAB: usize = 16 << 20;
const MAX_DYNAMIC: usize = 4 << 20;
const MAX_DYN_STRING: usize = 64 << 10;
const MAX_INTERP: usize = 4096;

/// Whether `head` starts with the ELF magic.
pub fn has_elf_magic(head: &[u8]) -> bool {
    head.starts_with(&ELF_MAGIC)
}

/// Why a file could not be analysed as ELF at all.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    /// The file does not start with the ELF magic.
    #[error("not an ELF file")]
    NotElf,
    /// The ELF header itself is unusable.
    #[error("malformed ELF header: {0}")]
    BadHeader(String),
    /// Reading the file failed.
    #[error("cannot read the file: {0}")]
    Io(#[from] io::Error),
}

/// A string in the file with the file offsets of its bytes (NUL excluded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElfString {
    /// The string, lossily decoded as UTF-8.
    pub value: String,
    /// File offsets of its bytes.
    pub range: Range<u64>,
}

/// Which dynamic tag a search-path entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunpathTag {
    /// `DT_RUNPATH`.
    Runpath,
    /// `DT_RPATH`.
    Rpath,
}

/// One `:`-separated directory of a `DT_RUNPATH` or `DT_RPATH` string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunpathEntry {
    /// The tag the string came from.
    pub tag: RunpathTag,
    /// Whether the loader searches it (`DT_RPATH` is ignored when `DT_RUNPATH` exists).
    pub active: bool,
    /// The entry as written, e.g. `$ORIGIN/../lib`.
    pub raw: String,
    /// The entry with `$ORIGIN` expanded, when that gives an absolute path.
    pub dir: Option<String>,
    /// File offsets of the entry's bytes.
    pub range: Range<u64>,
    /// `DT_NEEDED` names this directory supplies (filled by [`ElfFacts::resolve_needed`]).
    pub supplies: Vec<String>,
    /// Names for `dlopen` ([`ElfFacts::dlopen`]) this directory supplies, searched as the
    /// loader would (filled by [`ElfFacts::resolve_needed`]).
    pub dlopen: Vec<String>,
}

/// What an ELF file tells the loader and the classifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElfFacts {
    /// ELFCLASS64.
    pub is_64: bool,
    /// ELFDATA2LSB.
    pub little_endian: bool,
    /// `e_machine` (62 x86-64, 183 aarch64, 224 AMDGPU …).
    pub machine: u16,
    /// `e_flags` (the GPU architecture for AMDGPU code objects).
    pub flags: u32,
    /// `PT_INTERP`: the interpreter path and the whole segment's file range.
    pub interpreter: Option<ElfString>,
    /// `DT_NEEDED` entries in order.
    pub needed: Vec<ElfString>,
    /// `DT_SONAME`.
    pub soname: Option<ElfString>,
    /// `DT_RUNPATH` then `DT_RPATH` entries, each in search order.
    pub runpath: Vec<RunpathEntry>,
    /// Sections with file contents.
    pub sections: Vec<Section>,
    /// Embedded or native GPU code.
    pub gpu: GpuCode,
    /// Sonames the file names for `dlopen` (data-section strings, `.note.dlopen`); filled
    /// by the caller with `crate::elf::dlopen_names`, which needs the file's bytes.
    pub dlopen: Vec<String>,
    /// Relative data directories and data file patterns its data strings name
    /// (`rocblas/library`, `Library_lazy_%s.dat`); filled by the caller with
    /// `crate::elf::names_in_data`.
    pub data_paths: Vec<String>,
    /// Whether [`ElfFacts::resolve_needed`] has run.
    pub needed_resolved: bool,
    /// Parts of the file that could not be read (those of its GPU code are in `gpu`).
    pub warnings: Vec<String>,
}

impl ElfFacts {
    /// Read the facts of the ELF file in `src`. `origin_dir` is the logical absolute
    /// directory holding the file (what `$ORIGIN` expands to), when known.
    pub fn parse<S: ByteSource + ?Sized>(
        src: &S,
        origin_dir: Option<&str>,
    ) -> Result<ElfFacts, ElfError> {
        let head = src.read_vec(0, 64)?;
        if !has_elf_magic(&head) {
            return Err(ElfError::NotElf);
        }
        let header = Elf::parse_header(&head).map_err(|e| ElfError::BadHeader(e.to_string()))?;
        let container = header
            .container()
            .map_err(|e| ElfError::BadHeader(e.to_string()))?;
        let endian = header
            .endianness()
            .map_err(|e| ElfError::BadHeader(e.to_string()))?;
        let ctx = Ctx::new(container, endian);
        let mut facts = ElfFacts {
            is_64: container == Container::Big,
            little_endian: endian == Endian::Little,
            machine: header.e_machine,
            flags: header.e_flags,
            interpreter: None,
            needed: Vec::new(),
            soname: None,
            runpath: Vec::new(),
            sections: Vec::new(),
            gpu: GpuCode::default(),
            dlopen: Vec::new(),
            data_paths: Vec::new(),
            needed_resolved: false,
            warnings: Vec::new(),
        };
        let phdrs = match read_program_headers(src, &header, ctx) {
            Ok(p) => p,
            Err(e) => {
                facts.warnings.push(format!("program headers: {e}"));
                Vec::new()
            }
        };
        let shdrs = match read_sections(src, &header, ctx) {
            Ok(s) => s,
            Err(e) => {
                facts.warnings.push(format!("section headers: {e}"));
                Vec::new()
            }
        };
        facts.sections = shdrs.iter().map(|(s, _)| s.clone()).collect();

        if let Some(p) = phdrs.iter().find(|p| p.p_type == PT_INTERP) {
            match read_interp(src, p) {
                Ok(i) => facts.interpreter = Some(i),
                Err(e) => facts.warnings.push(format!("PT_INTERP: {e}")),
            }
        }
        if let Err(e) = read_dynamic(src, ctx, &phdrs, &shdrs, origin_dir, &mut facts) {
            facts.warnings.push(format!("dynamic section: {e}"));
        }
        facts.gpu = GpuCode::detect(src, &facts.sections, facts.machine, facts.flags);
        Ok(facts)
    }

    /// Attribute each `DT_NEEDED` library to the first active search directory where
    /// `exists("<dir>/<name>")` holds, as the loader would find it. Names with a `/` are
    /// not searched. Entries whose directory is unknown are skipped.
    pub fn resolve_needed(&mut self, exists: &dyn Fn(&str) -> bool) {
        for e in &mut self.runpath {
            e.supplies.clear();
            e.dlopen.clear();
        }
        for (name, dlopen) in self
            .needed
            .iter()
            .map(|n| (&n.value, false))
            .chain(self.dlopen.iter().map(|n| (n, true)))
        {
            if name.contains('/') || name.is_empty() {
                continue;
            }
            for e in self.runpath.iter_mut().filter(|e| e.active) {
                let Some(dir) = &e.dir else { continue };
                let candidate = format!("{}/{}", dir.trim_end_matches('/'), name);
                if exists(&candidate) {
                    if dlopen {
                        e.dlopen.push(name.clone());
                    } else {
                        e.supplies.push(name.clone());
                    }
                    break;
                }
            }
        }
        self.needed_resolved = true;
    }

    /// The section whose contents hold file offset `offset`.
    pub fn section_at(&self, offset: u64) -> Option<&Section> {
        self.sections
            .iter()
            .filter(|s| s.range.contains(&offset))
            .min_by_key(|s| s.range.end - s.range.start)
    }
}

fn read_program_headers<S: ByteSource + ?Sized>(
    src: &S,
    header: &goblin::elf::Header,
    ctx: Ctx,
) -> Result<Vec<ProgramHeader>, String> {
    let count = usize::from(header.e_phnum);
    if header.e_phoff == 0 || count == 0 {
        return Ok(Vec::new());
    }
    let size = ProgramHeader::size(ctx);
    if usize::from(header.e_phentsize) != size {
        return Err(format!(
            "entry size {} where {size} was expected",
            header.e_phentsize
        ));
    }
    let bytes = src
        .read_vec(header.e_phoff, count * size)
        .map_err(|e| e.to_string())?;
    if bytes.len() < count * size {
        return Err(format!("truncated at offset {}", header.e_phoff));
    }
    ProgramHeader::parse(&bytes, 0, count, ctx).map_err(|e| e.to_string())
}

/// Sections with contents, paired with their goblin headers.
fn read_sections<S: ByteSource + ?Sized>(
    src: &S,
    header: &goblin::elf::Header,
    ctx: Ctx,
) -> Result<Vec<(Section, SectionHeader)>, String> {
    if header.e_shoff == 0 {
        return Ok(Vec::new());
    }
    let size = SectionHeader::size(ctx);
    if usize::from(header.e_shentsize) != size {
        return Err(format!(
            "entry size {} where {size} was expected",
            header.e_shentsize
        ));
    }
    let first = src
        .read_vec(header.e_shoff, size)
        .map_err(|e| e.to_string())?;
    if first.len() < size {
        return Err(format!("truncated at offset {}", header.e_shoff));
    }
    let null = SectionHeader::parse_from(&first, 0, 1, ctx).map_err(|e| e.to_string())?;
    let null = null.first().ok_or("no null section header")?;
    let count = match header.e_shnum {
        0 => null.sh_size,
        n => u64::from(n),
    };
    if count == 0 {
        return Ok(Vec::new());
    }
    if count > MAX_SECTIONS || count > src.len() / size as u64 {
        return Err(format!("implausible section count {count}"));
    }
    let count = count as usize;
    let bytes = src
        .read_vec(header.e_shoff, count * size)
        .map_err(|e| e.to_string())?;
    if bytes.len() < count * size {
        return Err(format!("truncated at offset {}", header.e_shoff));
    }
    let shdrs = SectionHeader::parse_from(&bytes, 0, count, ctx).map_err(|e| e.to_string())?;
    let strndx = match u32::from(header.e_shstrndx) {
        SHN_XINDEX => null.sh_link as usize,
        n => n as usize,
    };
    let names = match shdrs.get(strndx) {
        Some(s) if s.sh_type != SHT_NOBITS && strndx != 0 => src
            .read_vec(s.sh_offset, (s.sh_size as usize).min(MAX_SHSTRTAB))
            .map_err(|e| e.to_string())?,
        _ => Vec::new(),
    };
    let mut out = Vec::with_capacity(count);
    for sh in shdrs {
        if sh.sh_type == SHT_NULL || sh.sh_type == SHT_NOBITS || sh.sh_size == 0 {
            continue;
        }
        let Some(end) = sh.sh_offset.checked_add(sh.sh_size) else {
            continue;
        };
        let name = names
            .get(sh.sh_name..)
            .map(|s| {
                let n = s.iter().position(|&b| b == 0).unwrap_or(s.len());
                String::from_utf8_lossy(&s[..n]).into_owned()
            })
            .unwrap_or_default();
        let kind = section_kind(&name);
        out.push((
            Section {
                name,
                range: sh.sh_offset..end,
                kind,
            },
            sh,
        ));
    }
    Ok(out)
}

fn read_interp<S: ByteSource + ?Sized>(src: &S, p: &ProgramHeader) -> Result<ElfString, String> {
    let len = (p.p_filesz as usize).min(MAX_INTERP);
    let bytes = src.read_vec(p.p_offset, len).map_err(|e| e.to_string())?;
    let n = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let end = p.p_offset.saturating_add(p.p_filesz.max(n as u64));
    Ok(ElfString {
        value: String::from_utf8_lossy(&bytes[..n]).into_owned(),
        range: p.p_offset..end,
    })
}

/// Read the dynamic entries, then `DT_NEEDED`, `DT_SONAME`, `DT_RUNPATH` and `DT_RPATH`.
fn read_dynamic<S: ByteSource + ?Sized>(
    src: &S,
    ctx: Ctx,
    phdrs: &[ProgramHeader],
    shdrs: &[(Section, SectionHeader)],
    origin_dir: Option<&str>,
    facts: &mut ElfFacts,
) -> Result<(), String> {
    let (off, size) = match phdrs.iter().find(|p| p.p_type == PT_DYNAMIC) {
        Some(p) => (p.p_offset, p.p_filesz),
        None => match shdrs.iter().find(|(_, h)| h.sh_type == SHT_DYNAMIC) {
            Some((s, _)) => (s.range.start, s.range.end - s.range.start),
            None => return Ok(()),
        },
    };
    let bytes = src
        .read_vec(off, (size as usize).min(MAX_DYNAMIC))
        .map_err(|e| e.to_string())?;
    let entries = parse_dyn_entries(&bytes, ctx);
    let get = |tag: u64| entries.iter().find(|(t, _)| *t == tag).map(|(_, v)| *v);
    let Some(strtab_addr) = get(DT_STRTAB) else {
        return Err("no DT_STRTAB".to_string());
    };
    let strtab = vaddr_to_offset(phdrs, strtab_addr)
        .or_else(|| {
            shdrs
                .iter()
                .find(|(s, h)| s.name == ".dynstr" || h.sh_addr == strtab_addr)
                .map(|(s, _)| s.range.start)
        })
        .ok_or_else(|| format!("DT_STRTAB address {strtab_addr:#x} is not in the file"))?;
    let strsz = get(DT_STRSZ).unwrap_or(u64::MAX);
    let read = |v: u64| -> Result<ElfString, String> {
        if v >= strsz {
            return Err(format!("string offset {v} beyond DT_STRSZ {strsz}"));
        }
        let start = strtab
            .checked_add(v)
            .ok_or_else(|| format!("string offset {v} overflows"))?;
        let max = (strsz - v).min(MAX_DYN_STRING as u64) as usize;
        let bytes = read_cstr(src, start, max).map_err(|e| e.to_string())?;
        Ok(ElfString {
            value: String::from_utf8_lossy(&bytes).into_owned(),
            range: start..start + bytes.len() as u64,
        })
    };
    let has_runpath = entries.iter().any(|(t, _)| *t == DT_RUNPATH);
    let mut runpaths = Vec::new();
    let mut rpaths = Vec::new();
    for &(tag, val) in &entries {
        let target = match tag {
            DT_NEEDED | DT_SONAME | DT_RUNPATH | DT_RPATH => read(val),
            _ => continue,
        };
        let s = match target {
            Ok(s) => s,
            Err(e) => {
                facts.warnings.push(format!("dynamic tag {tag}: {e}"));
                continue;
            }
        };
        match tag {
            DT_NEEDED => facts.needed.push(s),
            DT_SONAME => facts.soname = Some(s),
            DT_RUNPATH => {
                runpaths.extend(split_search_path(&s, RunpathTag::Runpath, true, origin_dir))
            }
            _ => rpaths.extend(split_search_path(
                &s,
                RunpathTag::Rpath,
                !has_runpath,
                origin_dir,
            )),
        }
    }
    facts.runpath = runpaths;
    facts.runpath.extend(rpaths);
    Ok(())
}

fn parse_dyn_entries(bytes: &[u8], ctx: Ctx) -> Vec<(u64, u64)> {
    let word = if ctx.is_big() { 8 } else { 4 };
    let little = ctx.is_little_endian();
    let read = |b: &[u8]| -> u64 {
        let mut v = 0u64;
        for i in 0..word {
            let byte = if little { b[word - 1 - i] } else { b[i] };
            v = (v << 8) | u64::from(byte);
        }
        v
    };
    let mut out = Vec::new();
    for e in bytes.chunks_exact(2 * word) {
        let tag = read(&e[..word]);
        if tag == DT_NULL {
            break;
        }
        out.push((tag, read(&e[word..])));
    }
    out
}

fn vaddr_to_offset(phdrs: &[ProgramHeader], vaddr: u64) -> Option<u64> {
    phdrs
        .iter()
        .filter(|p| p.p_type == PT_LOAD)
        .find(|p| vaddr >= p.p_vaddr && vaddr - p.p_vaddr < p.p_filesz)
        .and_then(|p| p.p_offset.checked_add(vaddr - p.p_vaddr))
}

/// Read a NUL-terminated string of at most `max` bytes (the NUL excluded).
fn read_cstr<S: ByteSource + ?Sized>(src: &S, start: u64, max: usize) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut pos = start;
    while out.len() < max {
        let chunk = src.read_vec(pos, 256.min(max - out.len()))?;
        if chunk.is_empty() {
            break;
        }
        if let Some(n) = chunk.iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..n]);
            return Ok(out);
        }
        pos += chunk.len() as u64;
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// Split a RUNPATH/RPATH string on `:`, keeping each entry's file offsets.
fn split_search_path(
    s: &ElfString,
    tag: RunpathTag,
    active: bool,
    origin_dir: Option<&str>,
) -> Vec<RunpathEntry> {
    let mut out = Vec::new();
    let mut start = 0usize;
    // Offsets are byte offsets of the original bytes; `value` may have replacement
    // characters where the bytes were not UTF-8, so split the value only when it is
    // byte-identical in length.
    let exact = s.value.len() as u64 == s.range.end - s.range.start;
    for part in s.value.split(':') {
        let len = part.len();
        let range = if exact {
            s.range.start + start as u64..s.range.start + (start + len) as u64
        } else {
            s.range.clone()
        };
        start += len + 1;
        if part.is_empty() {
            continue;
        }
        out.push(RunpathEntry {
            tag,
            active,
            raw: part.to_string(),
            dir: expand_origin(part, origin_dir),
            range,
            supplies: Vec::new(),
            dlopen: Vec::new(),
        });
    }
    out
}

/// Expand `$ORIGIN` / `${ORIGIN}`; `None` when the result is not an absolute path.
pub fn expand_origin(entry: &str, origin_dir: Option<&str>) -> Option<String> {
    let expanded = if entry.contains("$ORIGIN") || entry.contains("${ORIGIN}") {
        let o = origin_dir?;
        entry.replace("${ORIGIN}", o).replace("$ORIGIN", o)
    } else {
        entry.to_string()
    };
    expanded.starts_with('/').then_some(expanded)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn section_kinds() {
        for (n, k) in [
            (".rodata", SectionKind::Data),
            (".rodata.str1.1", SectionKind::Data),
            (".data.rel.ro", SectionKind::Data),
            (".data", SectionKind::Data),
            (".dataxyz", SectionKind::Other),
            (".debug_str", SectionKind::Debug),
            (".zdebug_info", SectionKind::Debug),
            (".gnu_debugaltlink", SectionKind::Debug),
            (".dynstr", SectionKind::DynStr),
            (".hip_fatbin", SectionKind::Gpu),
            (".text", SectionKind::Other),
            (".interp", SectionKind::Interp),
        ] {
            assert_eq!(section_kind(n), k, "{n}");
        }
    }

    #[test]
    fn origin_expansion() {
        let o = Some("/nix/store/h-x/lib");
        assert_eq!(
            expand_origin("$ORIGIN/../lib64", o).as_deref(),
            Some("/nix/store/h-x/lib/../lib64")
        );
        assert_eq!(
            expand_origin("${ORIGIN}", o).as_deref(),
            Some("/nix/store/h-x/lib")
        );
        assert_eq!(expand_origin("$ORIGIN", None), None);
        assert_eq!(expand_origin("lib", o), None);
        assert_eq!(expand_origin("/a/b", None).as_deref(), Some("/a/b"));
    }

    #[test]
    fn runpath_split_keeps_offsets() {
        let s = ElfString {
            value: "/a/b::$ORIGIN/c:/d".into(),
            range: 100..118,
        };
        let e = split_search_path(&s, RunpathTag::Runpath, true, Some("/o"));
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].range, 100..104);
        assert_eq!(e[1].range, 106..115);
        assert_eq!(e[1].dir.as_deref(), Some("/o/c"));
        assert_eq!(e[2].range, 116..118);
    }

    #[test]
    fn not_elf_and_garbage() {
        assert!(matches!(
            ElfFacts::parse(&b"#!/bin/sh\n"[..], None),
            Err(ElfError::NotElf)
        ));
        assert!(ElfFacts::parse(&b"\x7fELF"[..], None).is_err());
        assert!(ElfFacts::parse(&b"\x7fELF\x09\x09"[..], None).is_err());
    }
}
