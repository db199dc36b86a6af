//! [`classify_hit`]: what a hash at a given file offset of an ELF file is, from the
//! [`ElfFacts`] of that file, reading at most a few kilobytes around the hit.
//!
//! Order of the tests (first match wins): `PT_INTERP`; a `DT_NEEDED` string; a
//! RUNPATH/RPATH entry (needed or unused, after [`ElfFacts::resolve_needed`]); then the
//! section holding the offset: data and `.dynstr` strings (`elf-string`, or
//! `elf-source-path` when the path around the hash names a source file or an include
//! directory), debug sections, GPU code, anything else. Every result names its rule.

use crate::elf::{ByteSource, ElfFacts, RunpathTag, SectionKind};
use crate::store::HASH_LEN;

use super::text::{binary_context, cstr_around};
use super::{EvidenceKind, Excerpt, HitDetail, RuleId, SearchDirHit, SearchTag, SearchUse};

/// Longest string kept on each side of a hit in an `elf-string` detail.
pub const STRING_CAP: usize = 4096;

/// Extensions that make a path a source file (`__FILE__`-style strings).
pub const SOURCE_EXTENSIONS: &[&str] = &[
    "c", "cc", "cpp", "cxx", "c++", "cp", "h", "hh", "hpp", "hxx", "h++", "inl", "ipp", "tcc",
    "tpp", "cu", "cuh", "hip", "cl", "py", "rs", "go", "f", "f77", "f90", "f95", "f03", "f08", "s",
    "S", "asm", "m", "mm",
];

/// How one hit in an ELF file is classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitClass {
    /// The evidence kind.
    pub kind: EvidenceKind,
    /// What the hit's surroundings say (the library, the directory and what it
    /// supplies, the string …).
    pub detail: HitDetail,
    /// The rule that decided.
    pub rule: RuleId,
}

impl HitClass {
    fn new(kind: EvidenceKind, rule: &'static str, detail: HitDetail) -> HitClass {
        HitClass {
            kind,
            detail,
            rule: RuleId::new(rule),
        }
    }
}

/// The ELF hit rules of [`classify_hit`], in the order it tries them: name, kind, and
/// which hits it applies to (for `nixcut rules`).
pub const ELF_HIT_RULES: &[(&str, EvidenceKind, &str)] = {
    use EvidenceKind as K;
    &[
        (
            "elf-pt-interp",
            K::ElfInterpreter,
            "in the PT_INTERP segment",
        ),
        (
            "elf-needed-absolute",
            K::ElfNeeded,
            "in a DT_NEEDED entry (an absolute library path)",
        ),
        (
            "elf-rpath-shadowed",
            K::ElfRunpathUnused,
            "in a DT_RPATH entry the loader ignores because DT_RUNPATH is present",
        ),
        (
            "elf-runpath-unchecked",
            K::ElfNeeded,
            "in a RUNPATH/RPATH entry whose libraries could not be checked (no listing)",
        ),
        (
            "elf-runpath-supplies-dlopen",
            K::ElfRunpathDlopen,
            "in a RUNPATH entry that supplies only libraries named for dlopen",
        ),
        (
            "elf-runpath-supplies-nothing",
            K::ElfRunpathUnused,
            "in a RUNPATH entry that supplies no library",
        ),
        (
            "elf-runpath-supplies-needed",
            K::ElfNeeded,
            "in a RUNPATH entry that supplies a DT_NEEDED library",
        ),
        ("elf-outside-sections", K::ElfOther, "outside every section"),
        (
            "elf-interp-section",
            K::ElfInterpreter,
            "in the .interp section",
        ),
        (
            "elf-source-path",
            K::ElfSourcePath,
            "a data string naming a source or include file (__FILE__, assert)",
        ),
        (
            "elf-dynstr-string",
            K::ElfString,
            "another string of .dynstr",
        ),
        (
            "elf-data-string",
            K::ElfString,
            "another data-section string",
        ),
        ("elf-debug-section", K::ElfDebug, "in a debug section"),
        (
            "elf-gpu-code",
            K::ElfOther,
            "in GPU device code (.hip_fatbin, .nv_fatbin)",
        ),
        ("elf-other-section", K::ElfOther, "in any other section"),
    ]
};

/// Classify the hash found at file offset `offset` of the ELF file `src`.
pub fn classify_hit<S: ByteSource + ?Sized>(facts: &ElfFacts, offset: u64, src: &S) -> HitClass {
    use EvidenceKind as K;
    if let Some(i) = facts
        .interpreter
        .as_ref()
        .filter(|i| i.range.contains(&offset))
    {
        let detail = HitDetail::Interpreter(i.value.clone());
        return HitClass::new(K::ElfInterpreter, "elf-pt-interp", detail);
    }
    if let Some(n) = facts.needed.iter().find(|n| n.range.contains(&offset)) {
        let detail = HitDetail::Needed(n.value.clone());
        return HitClass::new(K::ElfNeeded, "elf-needed-absolute", detail);
    }
    if let Some(e) = facts.runpath.iter().find(|e| e.range.contains(&offset)) {
        let (kind, rule, supplies) = if !e.active {
            (
                K::ElfRunpathUnused,
                "elf-rpath-shadowed",
                SearchUse::Shadowed,
            )
        } else if !facts.needed_resolved || e.dir.is_none() {
            (K::ElfNeeded, "elf-runpath-unchecked", SearchUse::Unchecked)
        } else if e.supplies.is_empty() && !e.dlopen.is_empty() {
            let names = SearchUse::Dlopen(e.dlopen.clone());
            (K::ElfRunpathDlopen, "elf-runpath-supplies-dlopen", names)
        } else if e.supplies.is_empty() {
            (
                K::ElfRunpathUnused,
                "elf-runpath-supplies-nothing",
                SearchUse::Nothing,
            )
        } else {
            let libs = SearchUse::Needed(e.supplies.clone());
            (K::ElfNeeded, "elf-runpath-supplies-needed", libs)
        };
        let detail = HitDetail::SearchDir(SearchDirHit {
            tag: match e.tag {
                RunpathTag::Runpath => SearchTag::Runpath,
                RunpathTag::Rpath => SearchTag::Rpath,
            },
            dir: e.dir.clone(),
            raw: e.raw.clone(),
            supplies,
        });
        return HitClass::new(kind, rule, detail);
    }
    let Some(section) = facts.section_at(offset) else {
        let around = context(src, offset, 0..src.len());
        let detail = HitDetail::OutsideSections(around);
        return HitClass::new(K::ElfOther, "elf-outside-sections", detail);
    };
    let name = &section.name;
    let in_section = |gpu: bool, around: Option<Excerpt>| HitDetail::Section {
        name: name.clone(),
        gpu,
        around,
    };
    let string =
        |(s, _): (Option<Excerpt>, bool)| s.map_or(HitDetail::Unreadable, HitDetail::Excerpt);
    match section.kind {
        SectionKind::Interp => {
            let s = string(string_at(src, offset, section.range.clone()));
            HitClass::new(K::ElfInterpreter, "elf-interp-section", s)
        }
        SectionKind::Data | SectionKind::DynStr => {
            let (s, is_source) = string_at(src, offset, section.range.clone());
            let s = string((s, is_source));
            match (is_source, section.kind) {
                (true, _) => HitClass::new(K::ElfSourcePath, "elf-source-path", s),
                (false, SectionKind::DynStr) => HitClass::new(K::ElfString, "elf-dynstr-string", s),
                _ => HitClass::new(K::ElfString, "elf-data-string", s),
            }
        }
        SectionKind::Debug => {
            let (s, _) = string_at(src, offset, section.range.clone());
            HitClass::new(K::ElfDebug, "elf-debug-section", in_section(false, s))
        }
        SectionKind::Gpu => {
            let around = context(src, offset, section.range.clone());
            HitClass::new(K::ElfOther, "elf-gpu-code", in_section(true, around))
        }
        SectionKind::Other => {
            let around = context(src, offset, section.range.clone());
            HitClass::new(K::ElfOther, "elf-other-section", in_section(false, around))
        }
    }
}

/// The NUL-terminated string around `offset` within `limit` (`None`: unreadable), and
/// whether the path holding the hash names a source file or include directory.
fn string_at<S: ByteSource + ?Sized>(
    src: &S,
    offset: u64,
    limit: std::ops::Range<u64>,
) -> (Option<Excerpt>, bool) {
    let lo = offset.saturating_sub(STRING_CAP as u64).max(limit.start);
    let hi = offset
        .saturating_add((HASH_LEN + STRING_CAP) as u64)
        .min(limit.end);
    let Ok(buf) = src.read_vec(lo, hi.saturating_sub(lo) as usize) else {
        return (None, false);
    };
    let pos = (offset - lo) as usize;
    let e = cstr_around(&buf, pos, HASH_LEN, STRING_CAP);
    // Also cut when the window (not the cap) ended the string inside the section.
    let cut_left = e.cut_left || (e.start == 0 && lo > limit.start);
    let cut_right = e.cut_right || (e.start + e.bytes.len() == buf.len() && hi < limit.end);
    let is_source = names_source_path(e.bytes, pos - e.start);
    let excerpt = Excerpt {
        bytes: e.bytes.to_vec(),
        cut_left,
        cut_right,
    };
    (Some(excerpt), is_source)
}

/// The bytes around `offset` within `limit` (`None`: unreadable).
fn context<S: ByteSource + ?Sized>(
    src: &S,
    offset: u64,
    limit: std::ops::Range<u64>,
) -> Option<Excerpt> {
    let lo = offset.saturating_sub(32).max(limit.start);
    let hi = offset.saturating_add(64).min(limit.end);
    let buf = src.read_vec(lo, hi.saturating_sub(lo) as usize).ok()?;
    Some(Excerpt::whole(binary_context(
        &buf,
        (offset - lo) as usize,
        HASH_LEN,
        32,
    )))
}

fn is_path_delimiter(b: u8) -> bool {
    b.is_ascii_whitespace()
        || b < 0x20
        || matches!(
            b,
            b'"' | b'\''
                | b'`'
                | b'('
                | b')'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'<'
                | b'>'
                | b','
                | b';'
                | b'='
                | b'|'
                | b'*'
                | b'?'
        )
}

/// Whether the path token holding `s[hit]` names a source file (`…/x.hpp`, `…/x.c:42`)
/// or an include directory (`…/include`, `…/include/…`).
pub fn names_source_path(s: &[u8], hit: usize) -> bool {
    let hit = hit.min(s.len());
    let start = s[..hit]
        .iter()
        .rposition(|&b| is_path_delimiter(b))
        .map_or(0, |i| i + 1);
    let after = (hit + HASH_LEN).min(s.len());
    let end = s[after..]
        .iter()
        .position(|&b| is_path_delimiter(b) || b == b':')
        .map_or(s.len(), |i| after + i);
    let mut token = &s[start..end];
    while let Some(t) = token.strip_suffix(b".") {
        token = t;
    }
    if token.ends_with(b"/include") || memchr::memmem::find(token, b"/include/").is_some() {
        return true;
    }
    let file = token.rsplit(|&b| b == b'/').next().unwrap_or(token);
    match file.iter().rposition(|&b| b == b'.') {
        Some(dot) if dot > 0 => {
            let ext = &file[dot + 1..];
            SOURCE_EXTENSIONS.iter().any(|e| e.as_bytes() == ext)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::ReferenceScanner;
    use proptest::prelude::*;

    use crate::elf::ElfFacts;

    const H_LIB: &str = "1b9p07z77phvv2hf6gm9f28syp39f039";
    const H_UNUSED: &str = "2c9p07z77phvv2hf6gm9f28syp39f039";
    const H_SRC: &str = "3d9p07z77phvv2hf6gm9f28syp39f039";
    const H_STR: &str = "4f9p07z77phvv2hf6gm9f28syp39f039";
    const H_INTERP: &str = "5g9p07z77phvv2hf6gm9f28syp39f039";
    const H_DEBUG: &str = "6h9p07z77phvv2hf6gm9f28syp39f039";
    const ALL: [&str; 6] = [H_LIB, H_UNUSED, H_SRC, H_STR, H_INTERP, H_DEBUG];

    fn scanner() -> ReferenceScanner {
        ReferenceScanner::from_hashes(ALL.iter().map(|h| {
            let mut a = [0u8; 32];
            a.copy_from_slice(h.as_bytes());
            a
        }))
    }

    fn kinds_of(bytes: &[u8]) -> Vec<(usize, HitClass)> {
        let mut facts = ElfFacts::parse(bytes, Some("/nix/store/x-prog/bin")).unwrap();
        let lib = format!("/nix/store/{H_LIB}-foo/lib/libfoo.so");
        facts.resolve_needed(&|p: &str| p == lib);
        scanner()
            .scan_slice(bytes)
            .into_iter()
            .map(|h| (h.candidate as usize, classify_hit(&facts, h.offset, bytes)))
            .collect()
    }

    fn check_program(new_dtags: bool) {
        let bytes = if new_dtags { FIXTURE } else { FIXTURE_RPATH };
        let facts = ElfFacts::parse(bytes, None).unwrap();
        assert!(
            facts.needed.iter().any(|n| n.value == "libfoo.so"),
            "{facts:?}"
        );
        let tag = if new_dtags {
            RunpathTag::Runpath
        } else {
            RunpathTag::Rpath
        };
        assert!(facts.runpath.iter().all(|e| e.tag == tag && e.active));
        let hits = kinds_of(bytes);
        let kinds_for = |c: usize| -> Vec<EvidenceKind> {
            hits.iter()
                .filter(|(i, _)| *i == c)
                .map(|(_, k)| k.kind)
                .collect()
        };
        use EvidenceKind as K;
        assert_eq!(kinds_for(0), vec![K::ElfNeeded], "{hits:#?}");
        assert_eq!(kinds_for(1), vec![K::ElfRunpathUnused], "{hits:#?}");
        assert!(kinds_for(2).contains(&K::ElfSourcePath), "{hits:#?}");
        assert!(kinds_for(3).contains(&K::ElfString), "{hits:#?}");
        assert_eq!(kinds_for(4), vec![K::ElfInterpreter], "{hits:#?}");
        let debug = kinds_for(5);
        assert!(
            !debug.is_empty() && debug.iter().all(|k| *k == K::ElfDebug),
            "{hits:#?}"
        );
        let needed = hits.iter().find(|(i, _)| *i == 0).unwrap();
        assert_eq!(
            needed.1.detail.to_string(),
            format!("/nix/store/{H_LIB}-foo/lib supplies libfoo.so")
        );
        assert_eq!(needed.1.rule, "elf-runpath-supplies-needed");
        let string = hits
            .iter()
            .find(|(i, k)| *i == 3 && k.kind == K::ElfString)
            .unwrap();
        assert_eq!(
            string.1.detail.to_string(),
            format!("/nix/store/{H_STR}-share/data")
        );
        let source = hits.iter().find(|(i, _)| *i == 2).unwrap();
        assert_eq!(
            source.1.detail.to_string(),
            format!("Error in /nix/store/{H_SRC}-tensile/include/x.hpp")
        );
    }

    #[test]
    fn compiled_program_with_runpath() {
        check_program(true);
    }

    #[test]
    fn compiled_program_with_rpath() {
        check_program(false);
    }

    #[test]
    fn unresolved_runpath_is_kept_as_needed() {
        let bytes = FIXTURE;
        let facts = ElfFacts::parse(bytes, None).unwrap();
        for h in scanner().scan_slice(bytes) {
            let c = classify_hit(&facts, h.offset, bytes);
            if h.candidate <= 1 {
                assert_eq!(c.kind, EvidenceKind::ElfNeeded);
                assert_eq!(c.rule, "elf-runpath-unchecked");
            }
        }
    }

    /// The test program's bytes, built once for the mutation tests.
    /// Committed programs (`tests/fixtures/elf/`, with their source and the commands
    /// that built them: `build.sh`), so every machine tests the same bytes: `prog` has a
    /// DT_RUNPATH, `prog-rpath` a DT_RPATH; both NEED libfoo.so from the first entry and
    /// nothing from the second, name a `__FILE__`-style header path and a data path, and
    /// carry debug info naming their source directory.
    const FIXTURE: &[u8] = include_bytes!("../../tests/fixtures/elf/prog");
    const FIXTURE_RPATH: &[u8] = include_bytes!("../../tests/fixtures/elf/prog-rpath");

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn mutated_elf_never_panics(
            muts in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 1..24),
            cut in any::<prop::sample::Index>(),
            truncate in any::<bool>(),
            probes in proptest::collection::vec(any::<prop::sample::Index>(), 1..8),
        ) {
            let mut b = FIXTURE.to_vec();
            for (i, v, region) in muts {
                // Aim most mutations at the headers: ELF header, program headers, the
                // section header table at the end, or anywhere.
                let pos = match region {
                    0 => i.index(64),
                    1 => 64 + i.index(512),
                    2 => b.len() - 1 - i.index(2048.min(b.len())),
                    _ => i.index(b.len()),
                };
                b[pos] = v;
            }
            if truncate {
                b.truncate(cut.index(b.len()));
            }
            if let Ok(mut facts) = ElfFacts::parse(&b[..], Some("/o")) {
                facts.resolve_needed(&|_| true);
                for p in probes {
                    let off = p.index(b.len().max(1)) as u64;
                    let _ = classify_hit(&facts, off, &b[..]);
                }
            }
        }
    }

    fn src(s: &str) -> (Vec<u8>, usize) {
        let hit = s.find("aaaa").unwrap();
        (s.as_bytes().to_vec(), hit)
    }

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    #[test]
    fn source_paths() {
        for (s, yes) in [
            (format!("/nix/store/{A}-tensile/include/x.hpp"), true),
            (format!("Error in /nix/store/{A}-t/lib/x.hpp: bad"), true),
            (format!("/nix/store/{A}-src/foo.c:42"), true),
            (format!("/nix/store/{A}-src/kern.cu."), true),
            (format!("/nix/store/{A}-src/k.S"), true),
            (format!("/nix/store/{A}-gcc/lib/gcc/include"), true),
            (format!("/nix/store/{A}-gcc/lib/libfoo.so"), false),
            (format!("/nix/store/{A}-rocblas/lib/rocblas/library"), false),
            (A.to_string(), false),
            (format!("/nix/store/{A}-x/bin/python3 /other/y.py"), false),
        ] {
            let (b, hit) = src(&s);
            assert_eq!(names_source_path(&b, hit), yes, "{s}");
        }
    }
}
