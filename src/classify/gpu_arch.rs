//! GPU architecture tokens in file names (`…_gfx90a-xnack+.hsaco`, `…_CU104_gfx90a.co`,
//! `TensileLibrary_lazy_gfx1030.dat`, `…sm_80.cubin`).
//!
//! The token is anchored, as ROCm's own loaders match it: preceded by `_` or `-` (or the
//! start of the name) and followed by `.`, `-`, `_` or the end, so `gfx90` never matches
//! `gfx90a` and `gfx101` never matches `gfx1010`. Variants (`-xnack±`, `:xnack±`, `_CU<n>`,
//! `_APU`, `_XPU`) group under the base architecture.

/// The base GPU architecture a file name is specific to, if any.
pub fn arch_of_name(name: &[u8]) -> Option<String> {
    let n = name.len();
    let mut found = None;
    for i in 0..n {
        let anchored_left = i == 0 || matches!(name[i - 1], b'_' | b'-' | b'/');
        if !anchored_left {
            continue;
        }
        let (prefix, digits_hex) = if name[i..].starts_with(b"gfx") {
            (3, true)
        } else if name[i..].starts_with(b"sm_") {
            (3, false)
        } else {
            continue;
        };
        let mut j = i + prefix;
        while j < n && (name[j].is_ascii_digit() || (digits_hex && matches!(name[j], b'a'..=b'f')))
        {
            j += 1;
        }
        if j == i + prefix {
            continue;
        }
        let anchored_right = j == n || matches!(name[j], b'.' | b'-' | b'_' | b':');
        if anchored_right {
            // The last anchored token wins (`…_CU104_gfx90a.co`).
            found = Some(String::from_utf8_lossy(&name[i..j]).into_owned());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        let cases: [(&str, Option<&str>); 9] = [
            ("TensileLibrary_lazy_gfx1030.dat", Some("gfx1030")),
            ("TensileLibrary_Type_DD_Contraction_l_Ailk_Bjlk_Cijk_Dijk_fallback_gfx906-xnack-.hsaco", Some("gfx906")),
            ("TensileLibrary_Type_4xi8I_HPA_Contraction_l_Ailk_Bjlk_Cijk_Dijk_CU104_gfx90a.co", Some("gfx90a")),
            ("Kernels.so-000-gfx90a-xnack+.hsaco", Some("gfx90a")),
            ("TensileLibrary_Type_4xi8I_HPA_Contraction_l_Ailk_Bjlk_Cijk_Dijk_fallback.dat", None),
            ("TensileLibrary.dat", None),
            ("libfoo_gfx90.so.1", Some("gfx90")),
            ("kernel.sm_80.cubin", None),
            ("kernel_sm_80.cubin", Some("sm_80")),
        ];
        for (name, want) in cases {
            assert_eq!(arch_of_name(name.as_bytes()).as_deref(), want, "{name}");
        }
        assert_eq!(arch_of_name(b"xgfx90a.dat"), None);
    }
}
