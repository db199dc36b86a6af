//! GPU architecture tokens in file names (`…_gfx90a-xnack+.hsaco`, `…_CU104_gfx90a.co`,
//! `…_lazy_gfx1030.dat`, `…_sm_80.cubin`) and database names that glue a CU count onto
//! the processor (`gfx900_56.db`, `gfx90a68.db`).
//!
//! The token is anchored, as ROCm's own loaders match it: preceded by `_` or `-` (or the
//! start of the name) and followed by `.`, `-`, `_`, `:` or the end, so `gfx90` never
//! matches `gfx90a` and `gfx101` never matches `gfx1010`. Variants (`-xnack±`, `:xnack±`,
//! `:sramecc±`, `_CU<n>`, `_APU`, `_XPU`, CUDA's `sm_90a`) group under the base
//! architecture; LLVM's family targets (`gfx10-3-generic`) keep their whole name.
//!
//! Databases glue a CU count onto the architecture ([`arch_of_cu_name`]): decimal after
//! `_` up to 64 CUs (`gfx1030_36`), hex without a separator above (`gfx90a68` is 104
//! CUs). Only the list of known processors (`crate::elf::amdgpu_processors`) can tell
//! `gfx90a` + `68` from an architecture `gfx90a68`, so that form is read against it.
//! These are pure functions of the name; the class rules (`class.rs`) call them.
//!
//! [`GpuTarget`] is the one type of a GPU target (vendor, base architecture, features):
//! every spelling of one (a code object's target id `gfx90a:xnack+`, a user's
//! `--gpu-targets` item `8.6` or `compute_86`) is read here and nowhere else.

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::elf::amdgpu_processors;

/// Who makes a GPU architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GpuVendor {
    Amd,
    Nvidia,
}

impl GpuVendor {
    /// The vendor of a base architecture: CUDA's are `sm_…`, every other one is AMD's.
    pub fn of_base(base: &str) -> GpuVendor {
        if base.starts_with("sm_") {
            GpuVendor::Nvidia
        } else {
            GpuVendor::Amd
        }
    }
}

/// One GPU target: `gfx90a:xnack+` is AMD's `gfx90a` with feature `xnack+`; `sm_86`
/// (also spelt `8.6`, `86`, `compute_86`) is NVIDIA's compute capability 8.6.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GpuTarget {
    /// AMD or NVIDIA.
    pub vendor: GpuVendor,
    /// The base architecture (`gfx90a`, `sm_86`): what nixcut groups bytes under.
    pub base: String,
    /// Target features after the base (`xnack+`, `sramecc-`), in the order written.
    pub features: Vec<String>,
}

impl GpuTarget {
    /// A target id as code objects and clang write it (`gfx90a:sramecc+:xnack-`,
    /// `sm_80`): the base is what comes before the first `:`.
    pub fn from_id(id: &str) -> GpuTarget {
        let mut parts = id.split(':');
        let base = parts.next().unwrap_or(id).to_string();
        GpuTarget {
            vendor: GpuVendor::of_base(&base),
            features: parts.map(str::to_string).collect(),
            base,
        }
    }

    /// A user's spelling of a target (`--gpu-targets`): trimmed and lower-cased;
    /// `gfx90a:xnack+` is `gfx90a` with its feature, and `8.6`, `86`, `sm_86` and
    /// `compute_86` are all `sm_86`. `None` when empty.
    pub fn parse(s: &str) -> Option<GpuTarget> {
        let s = s.trim().to_ascii_lowercase();
        if s.is_empty() {
            return None;
        }
        let mut t = GpuTarget::from_id(&s);
        if let Some(base) = cuda_spelling(&t.base) {
            t.base = base;
            t.vendor = GpuVendor::Nvidia;
        }
        Some(t)
    }

    /// nixpkgs' spelling of the target: `cudaCapabilities`' `8.6` for `sm_86`
    /// (`10.0` for `sm_100`), the base architecture for AMD (`gpuTargets`).
    pub fn nixpkgs_value(&self) -> String {
        match self.vendor {
            GpuVendor::Amd => self.base.clone(),
            GpuVendor::Nvidia => {
                let n = self.base.strip_prefix("sm_").unwrap_or(&self.base);
                match n.len() {
                    0 | 1 => n.to_string(),
                    l => format!("{}.{}", &n[..l - 1], &n[l - 1..]),
                }
            }
        }
    }
}

impl fmt::Display for GpuTarget {
    /// The target id: the base, then each feature after a `:` (`gfx90a:xnack+`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.base)?;
        self.features.iter().try_for_each(|x| write!(f, ":{x}"))
    }
}

impl From<&str> for GpuTarget {
    /// [`GpuTarget::from_id`].
    fn from(id: &str) -> GpuTarget {
        GpuTarget::from_id(id)
    }
}

impl From<String> for GpuTarget {
    /// [`GpuTarget::from_id`].
    fn from(id: String) -> GpuTarget {
        GpuTarget::from_id(&id)
    }
}

/// A sorted set of GPU targets: the architectures a `gpu:` verdict names. Written as
/// the ids joined by commas (`gfx900,gfx906,sm_80`: AMD's before NVIDIA's, then by name).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GpuTargets(BTreeSet<GpuTarget>);

impl GpuTargets {
    /// The set of one target.
    pub fn one(t: GpuTarget) -> GpuTargets {
        GpuTargets(BTreeSet::from([t]))
    }

    /// The targets of a comma-separated list of ids (what `Display` writes); `None`
    /// when the list or one of its items is empty.
    pub fn parse_ids(list: &str) -> Option<GpuTargets> {
        list.split(',')
            .map(|id| (!id.is_empty()).then(|| GpuTarget::from_id(id)))
            .collect::<Option<BTreeSet<_>>>()
            .map(GpuTargets)
    }

    /// The targets, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &GpuTarget> + '_ {
        self.0.iter()
    }

    /// How many targets.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<GpuTarget> for GpuTargets {
    fn from(t: GpuTarget) -> GpuTargets {
        GpuTargets::one(t)
    }
}

impl FromIterator<GpuTarget> for GpuTargets {
    fn from_iter<I: IntoIterator<Item = GpuTarget>>(iter: I) -> Self {
        GpuTargets(iter.into_iter().collect())
    }
}

impl Extend<GpuTarget> for GpuTargets {
    fn extend<I: IntoIterator<Item = GpuTarget>>(&mut self, iter: I) {
        self.0.extend(iter)
    }
}

impl<'a> IntoIterator for &'a GpuTargets {
    type Item = &'a GpuTarget;
    type IntoIter = std::collections::btree_set::Iter<'a, GpuTarget>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Display for GpuTargets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{t}")?;
        }
        Ok(())
    }
}

/// The `sm_XX` of a CUDA spelling (`sm_86`, `compute_86`, `8.6`, `86`), if it is one.
fn cuda_spelling(base: &str) -> Option<String> {
    if let Some(n) = base
        .strip_prefix("sm_")
        .or_else(|| base.strip_prefix("compute_"))
    {
        return Some(format!("sm_{n}"));
    }
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if let Some((major, minor)) = base.split_once('.') {
        if !major.is_empty() && digits(major) && digits(minor) {
            return Some(format!("sm_{major}{minor}"));
        }
    }
    (!base.is_empty() && digits(base)).then(|| format!("sm_{base}"))
}

/// The base architecture of a target id: `gfx90a` from `gfx90a:xnack+`.
pub fn base_arch(target: &str) -> String {
    GpuTarget::from_id(target).base
}

/// Whether a name (an output, a class's architecture) is a GPU architecture's:
/// `gfx…` or `sm_…`.
pub fn is_gpu_arch_name(name: &str) -> bool {
    name.starts_with("gfx") || name.starts_with("sm_")
}

/// The base GPU architecture a file name is specific to, if any: the last anchored
/// `gfx…` or `sm_…` token.
pub fn arch_of_name(name: &[u8]) -> Option<String> {
    let n = name.len();
    let mut found = None;
    let mut i = 0;
    while i < n {
        let anchored_left = i == 0 || matches!(name[i - 1], b'_' | b'-' | b'/');
        let token = if !anchored_left {
            None
        } else if name[i..].starts_with(b"gfx") {
            gfx_token(name, i)
        } else if name[i..].starts_with(b"sm_") {
            sm_token(name, i)
        } else {
            None
        };
        match token {
            // The last anchored token wins (`…_CU104_gfx90a.co`).
            Some((arch, end)) => {
                found = Some(arch);
                i = end;
            }
            None => i += 1,
        }
    }
    found
}

fn right_anchored(name: &[u8], j: usize) -> bool {
    j == name.len() || matches!(name[j], b'.' | b'-' | b'_' | b':')
}

/// `gfx` + hex digits at `i`, right-anchored; or a family target `gfx<N>[-<M>]-generic`.
fn gfx_token(name: &[u8], i: usize) -> Option<(String, usize)> {
    let mut j = i + 3;
    while j < name.len() && (name[j].is_ascii_digit() || matches!(name[j], b'a'..=b'f')) {
        j += 1;
    }
    if j == i + 3 || !right_anchored(name, j) {
        return None;
    }
    if let Some(end) = generic_suffix(name, j) {
        return Some((String::from_utf8_lossy(&name[i..end]).into_owned(), end));
    }
    Some((String::from_utf8_lossy(&name[i..j]).into_owned(), j))
}

/// The end of `[-<digits>]-generic` at `j`, when it is there and right-anchored.
fn generic_suffix(name: &[u8], mut j: usize) -> Option<usize> {
    let rest = &name[j..];
    if let Some(r) = rest.strip_prefix(b"-") {
        let digits = r.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 && r[digits..].starts_with(b"-generic") {
            j += 1 + digits;
        }
    }
    let end = j + b"-generic".len();
    (name[j..].starts_with(b"-generic") && right_anchored(name, end)).then_some(end)
}

/// `sm_` + decimal digits at `i` (an `a`/`f` suffix, `sm_90a`, groups under `sm_90`).
fn sm_token(name: &[u8], i: usize) -> Option<(String, usize)> {
    let mut j = i + 3;
    while j < name.len() && name[j].is_ascii_digit() {
        j += 1;
    }
    if j == i + 3 {
        return None;
    }
    let base = String::from_utf8_lossy(&name[i..j]).into_owned();
    if j < name.len() && matches!(name[j], b'a' | b'f') && right_anchored(name, j + 1) {
        return Some((base, j + 1));
    }
    right_anchored(name, j).then_some((base, j))
}

/// The architecture of a database or model file name that starts with the processor
/// and its CU count (`gfx900_56.db`, `gfx1030_36.HIP.fdb.txt`, `gfx90a68.db`,
/// `gfx942130.db`, `gfx908.tn.model`, `gfx90a_metadata.ktn.model`): a known processor
/// at the start of the name, then the CU count in decimal after `_`, or in hex (above
/// 64) glued on, or nothing, then `.` (or `_` and a model's own words). `None` when the
/// name has no such form. Which directories and endings hold such names is the GPU
/// library table's (`gpu_libs.rs`).
pub fn arch_of_cu_name(name: &[u8]) -> Option<String> {
    if !name.starts_with(b"gfx") {
        return None;
    }
    // The longest known processor the name starts with (`gfx1030` rather than none,
    // `gfx90a` in `gfx90a68`).
    let arch = amdgpu_processors()
        .filter(|p| name.starts_with(p.as_bytes()))
        .max_by_key(|p| p.len())?;
    let rest = &name[arch.len()..];
    let ok = match rest.first() {
        Some(b'.') => true,
        Some(b'_') => {
            let digits = rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
            // `_56.` is a CU count; `_metadata.tn.model` a model's words.
            (digits > 0 && rest.get(1 + digits) == Some(&b'.')) || digits == 0
        }
        Some(_) => {
            let hex = rest.iter().take_while(|b| b.is_ascii_hexdigit()).count();
            rest.get(hex) == Some(&b'.')
                && std::str::from_utf8(&rest[..hex])
                    .ok()
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .is_some_and(|cu| cu > 64)
        }
        None => false,
    };
    ok.then(|| arch.to_string())
}

/// CUDA architectures `--gpu-targets` accepts (`sm_XX`; `X.Y` and `XY` are spelt
/// as nixpkgs' `cudaCapabilities` and nvcc's `-arch` do), Kepler to Blackwell.
const CUDA_ARCHS: &[&str] = &[
    "sm_35", "sm_37", "sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62", "sm_70", "sm_72",
    "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_101", "sm_103", "sm_110",
    "sm_120", "sm_121",
];

/// LLVM's AMDGPU family targets (one code object for several processors).
const AMD_FAMILIES: &[&str] = &[
    "gfx9-generic",
    "gfx9-4-generic",
    "gfx10-1-generic",
    "gfx10-3-generic",
    "gfx11-generic",
    "gfx12-generic",
];

/// Every base architecture `--gpu-targets` accepts: the AMD processors nixcut reads
/// from code objects, LLVM's family targets, and the CUDA architectures.
pub fn known_gpu_archs() -> impl Iterator<Item = &'static str> {
    amdgpu_processors()
        .chain(AMD_FAMILIES.iter().copied())
        .chain(CUDA_ARCHS.iter().copied())
}

/// Whether `base` (a normalised target: `gfx90a`, `sm_86`) is a known architecture. A
/// CUDA architecture-specific variant (`sm_90a`, `sm_100f`) is its base's.
pub fn is_known_gpu_arch(base: &str) -> bool {
    let cuda_base = base
        .strip_prefix("sm_")
        .map(|n| n.trim_end_matches(['a', 'f']))
        .map(|n| format!("sm_{n}"));
    let base = cuda_base.as_deref().unwrap_or(base);
    known_gpu_archs().any(|k| k == base)
}

/// The first and the last of the known architectures of a vendor, in the order of
/// their generations (`gfx600` to `gfx1201`, `sm_35` to `sm_121`): LLVM's family
/// targets aside, AMD's as major version then the two last (hex) digits.
pub fn known_arch_range(vendor: GpuVendor) -> Option<(&'static str, &'static str)> {
    let key = |a: &str| -> Option<(u32, u32)> {
        if let Some(n) = a.strip_prefix("sm_") {
            return Some((n.parse().ok()?, 0));
        }
        let v = a.strip_prefix("gfx")?;
        let (major, minor) = v.split_at(v.len().checked_sub(2)?);
        Some((major.parse().ok()?, u32::from_str_radix(minor, 16).ok()?))
    };
    let mut all: Vec<((u32, u32), &'static str)> = known_gpu_archs()
        .filter(|a| GpuVendor::of_base(a) == vendor)
        .filter_map(|a| Some((key(a)?, a)))
        .collect();
    all.sort_unstable();
    Some((all.first()?.1, all.last()?.1))
}

/// The known architectures nearest to an unknown `base` by edit distance (at most
/// `max`, nearest first; at equal distance the same vendor, then the longer common
/// prefix first), for the message that refuses it: `gfx130` → `gfx1030`, …
pub fn nearest_gpu_archs(base: &str, max: usize) -> Vec<&'static str> {
    let cuda = base.starts_with("sm_");
    let prefix = |k: &str| {
        base.bytes()
            .zip(k.bytes())
            .take_while(|(a, b)| a == b)
            .count()
    };
    let mut all: Vec<(usize, bool, std::cmp::Reverse<usize>, &'static str)> = known_gpu_archs()
        .map(|k| {
            (
                crate::store::edit_distance(base, k),
                k.starts_with("sm_") != cuda,
                std::cmp::Reverse(prefix(k)),
                k,
            )
        })
        .collect();
    all.sort();
    all.into_iter().take(max).map(|(.., k)| k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        let cases: &[(&str, Option<&str>)] = &[
            ("Library_lazy_gfx1030.dat", Some("gfx1030")),
            (
                "Library_Type_DD_Contraction_l_Ailk_Bjlk_Cijk_Dijk_fallback_gfx906-xnack-.hsaco",
                Some("gfx906"),
            ),
            (
                "Library_Type_4xi8I_HPA_Contraction_l_Ailk_Bjlk_Cijk_Dijk_CU104_gfx90a.co",
                Some("gfx90a"),
            ),
            (
                "Library_Type_HH_Contraction_l_Ailk_Bjlk_Cijk_Dijk_CU304_APU_gfx942.co",
                Some("gfx942"),
            ),
            (
                "Library_Type_HH_Contraction_l_Ailk_Bjlk_Cijk_Dijk_XPU_gfx942.dat",
                Some("gfx942"),
            ),
            ("Kernels.so-000-gfx90a-xnack+.hsaco", Some("gfx90a")),
            ("k-hip-amdgcn-amd-amdhsa-gfx90a:xnack+.out", Some("gfx90a")),
            ("k-gfx90a:sramecc+:xnack-.co", Some("gfx90a")),
            (
                "Library_Type_4xi8I_HPA_Contraction_l_Ailk_Bjlk_Cijk_Dijk_fallback.dat",
                None,
            ),
            ("Library.dat", None),
            ("libfoo_gfx90.so.1", Some("gfx90")),
            ("kernel.sm_80.cubin", None),
            ("kernel_sm_80.cubin", Some("sm_80")),
            ("kernel_sm_90a.cubin", Some("sm_90")),
            ("kernel_sm_90ab.cubin", None),
            ("extop_gfx10-3-generic.co", Some("gfx10-3-generic")),
            ("extop_gfx11-generic.co", Some("gfx11-generic")),
            ("extop_gfx11-genericx.co", Some("gfx11")),
            ("gfx", None),
            ("_gfx", None),
            ("a-gfx1100", Some("gfx1100")),
        ];
        for (name, want) in cases {
            assert_eq!(arch_of_name(name.as_bytes()).as_deref(), *want, "{name}");
        }
        assert_eq!(arch_of_name(b"xgfx90a.dat"), None);
        assert_eq!(arch_of_name(b"gfx90ag.dat"), None);
        // gfx101 never matches gfx1010, gfx90 never gfx90a.
        assert_eq!(arch_of_name(b"x_gfx1010.co").as_deref(), Some("gfx1010"));
    }

    #[test]
    fn cu_count_names() {
        let cases: &[(&str, Option<&str>)] = &[
            ("gfx900_56.db", Some("gfx900")),
            ("gfx900_64.db", Some("gfx900")),
            ("gfx1030_36.HIP.fdb.txt", Some("gfx1030")),
            ("gfx1030_36.db.txt", Some("gfx1030")),
            ("gfx90a68.db", Some("gfx90a")),
            ("gfx90a6e.db", Some("gfx90a")),
            ("gfx942130.db", Some("gfx942")),
            ("gfx90878.HIP.fdb.txt", Some("gfx908")),
            ("gfx908.tn.model", Some("gfx908")),
            ("gfx90a_metadata.tn.model", Some("gfx90a")),
            ("gfx908_ConvAsm1x1U_metadata.ktn.model", Some("gfx908")),
            // Hex counts are only written above 64 CUs.
            ("gfx90a40.db", None),
            ("gfx9000.db", None),
            ("gfx90a68", None),
            ("perf.db", None),
            ("gfx", None),
        ];
        for (name, want) in cases {
            assert_eq!(arch_of_cu_name(name.as_bytes()).as_deref(), *want, "{name}");
        }
    }

    #[test]
    fn arbitrary_names_do_not_panic() {
        let alphabet = b"gfx_-.:sm0a9fcXPU";
        let mut seed = 0x2545_f491_u32;
        for len in 0..40 {
            for _ in 0..200 {
                let name: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 17;
                        seed ^= seed << 5;
                        alphabet[seed as usize % alphabet.len()]
                    })
                    .collect();
                let _ = arch_of_name(&name);
                let _ = arch_of_cu_name(&name);
            }
        }
    }

    #[test]
    fn targets_in_every_spelling() {
        for (given, want) in [
            ("gfx90a:xnack+", "gfx90a"),
            (" GFX1030 ", "gfx1030"),
            ("sm_90", "sm_90"),
            ("8.6", "sm_86"),
            ("10.0", "sm_100"),
            ("compute_80", "sm_80"),
            ("86", "sm_86"),
        ] {
            let t = GpuTarget::parse(given).unwrap();
            assert_eq!(t.base, want, "{given}");
            assert_eq!(t.vendor, GpuVendor::of_base(want), "{given}");
        }
        assert_eq!(GpuTarget::parse("  "), None);
        let t = GpuTarget::from_id("gfx90a:sramecc+:xnack-");
        assert_eq!((t.vendor, t.base.as_str()), (GpuVendor::Amd, "gfx90a"));
        assert_eq!(t.features, ["sramecc+", "xnack-"]);
        let value = |s: &str| GpuTarget::parse(s).unwrap().nixpkgs_value();
        assert_eq!(value("sm_86"), "8.6");
        assert_eq!(value("sm_100"), "10.0");
        assert_eq!(value("sm_121"), "12.1");
        assert_eq!(value("gfx90a:xnack+"), "gfx90a");
        assert!(is_gpu_arch_name("gfx90a") && is_gpu_arch_name("sm_80"));
        assert!(!is_gpu_arch_name("dev"));
    }

    #[test]
    fn target_sets_are_sorted_and_written_as_before() {
        let set: GpuTargets = ["sm_80", "gfx906", "gfx10-3-generic", "gfx900", "gfx906"]
            .map(GpuTarget::from)
            .into_iter()
            .collect();
        assert_eq!(set.len(), 4);
        assert_eq!(set.to_string(), "gfx10-3-generic,gfx900,gfx906,sm_80");
        assert_eq!(GpuTargets::parse_ids(&set.to_string()), Some(set));
        let one = GpuTargets::one(GpuTarget::from_id("gfx90a:xnack+"));
        assert_eq!(one.to_string(), "gfx90a:xnack+");
        assert_eq!(GpuTargets::parse_ids("gfx90a:xnack+"), Some(one));
        for bad in ["", "gfx900,", ",gfx900", "gfx900,,gfx906"] {
            assert_eq!(GpuTargets::parse_ids(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn gpu_targets_are_checked_against_the_known_architectures() {
        let range = |v| known_arch_range(v).unwrap();
        let (first, last) = range(GpuVendor::Amd);
        assert!(first.starts_with("gfx") && last.starts_with("gfx"));
        assert!(is_known_gpu_arch(first) && is_known_gpu_arch(last));
        assert_eq!(range(GpuVendor::Nvidia), ("sm_35", "sm_121"));
        for k in [
            "gfx1030", "gfx90a", "gfx803", "gfx942", "gfx1201", "sm_86", "sm_90a",
        ] {
            assert!(is_known_gpu_arch(k), "{k}");
        }
        assert!(is_known_gpu_arch("gfx10-3-generic"));
        for u in ["gfx130", "gfx9999", "sm_91", "sm_", "rocm", "gfx"] {
            assert!(!is_known_gpu_arch(u), "{u}");
        }
        assert_eq!(nearest_gpu_archs("gfx130", 3)[0], "gfx1030");
        assert_eq!(nearest_gpu_archs("sm_91", 1), ["sm_90"]);
        assert_eq!(nearest_gpu_archs("gfx130", 4).len(), 4);
    }
}
