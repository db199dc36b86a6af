//! GPU processor names from a code object's ELF header: AMDGPU's `EF_AMDGPU_MACH`
//! values with the `sramecc`/`xnack` feature bits, and a CUDA cubin's `sm_XX`.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
