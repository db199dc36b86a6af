//! File classes: what each file of a store path is for (`out`, `bin`, `lib`, `dev`,
//! `static`, `doc`, `man`, `info`, `debug`, `gpu:<arch>`, `gpu-generic`, `removable`),
//! decided by an ordered table of rules ([`ClassRules`]; the first match wins, every
//! class names its rule).
//!
//! The built-in table follows nixpkgs' multiple-outputs conventions
//! (`docs/nixpkgs-outputs.md`: `include`, `lib/cmake`, `lib/pkgconfig` … are dev;
//! `share/doc` doc, `share/man` man …) and the ROCm/CUDA facts (`docs/rocm-runtime.md`:
//! GPU code by content first, then by the anchored architecture token of the name;
//! arch-generic Tensile data; build inventories). Rules look at facts only (the path,
//! the entry type, the first bytes, ELF facts), never at the file system.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{arch_of_name, RuleId};
use crate::elf::{amdgpu_target, ElfFacts};

/// `e_machine` of AMDGPU code objects.
const EM_AMDGPU: u16 = 224;

/// What a file is for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileClass {
    /// Run-time files that are neither programs nor libraries (data, config).
    Out,
    /// Programs (`bin/`, `sbin/`, `libexec/`).
    Bin,
    /// Shared libraries and what lies beside them in `lib/`.
    Lib,
    /// Needed only to build against the package (headers, cmake, pkg-config …).
    Dev,
    /// Static archives (`lib/*.a`).
    Static,
    /// Documentation (`share/doc`, `share/gtk-doc` …).
    Doc,
    /// Manual pages.
    Man,
    /// Info manuals.
    Info,
    /// Separate debug info.
    Debug,
    /// Needed only on GPUs of this base architecture (`gfx90a`, `sm_80`).
    Gpu(String),
    /// GPU data every architecture needs (`TensileLibrary.dat`, `*_fallback.dat` …).
    GpuGeneric,
    /// Needed by nothing: build inventories such as `TensileManifest.txt`.
    Removable,
}

impl FileClass {
    /// Parse the JSON spelling (`lib`, `gpu:gfx90a`, `gpu-generic` …).
    pub fn parse(s: &str) -> Option<FileClass> {
        Some(match s {
            "out" => FileClass::Out,
            "bin" => FileClass::Bin,
            "lib" => FileClass::Lib,
            "dev" => FileClass::Dev,
            "static" => FileClass::Static,
            "doc" => FileClass::Doc,
            "man" => FileClass::Man,
            "info" => FileClass::Info,
            "debug" => FileClass::Debug,
            "gpu-generic" => FileClass::GpuGeneric,
            "removable" => FileClass::Removable,
            _ => {
                let arch = s.strip_prefix("gpu:")?;
                // Whatever `Display` writes must parse back (`amdgcn-mach-0x33` too).
                let arch_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
                if arch.is_empty() || !arch.bytes().all(arch_byte) {
                    return None;
                }
                FileClass::Gpu(arch.to_string())
            }
        })
    }

    /// Whether files of this class are part of what runs (`out`, `bin`, `lib`, GPU data).
    pub fn is_runtime(&self) -> bool {
        matches!(
            self,
            FileClass::Out
                | FileClass::Bin
                | FileClass::Lib
                | FileClass::Gpu(_)
                | FileClass::GpuGeneric
        )
    }
}

impl fmt::Display for FileClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileClass::Out => f.write_str("out"),
            FileClass::Bin => f.write_str("bin"),
            FileClass::Lib => f.write_str("lib"),
            FileClass::Dev => f.write_str("dev"),
            FileClass::Static => f.write_str("static"),
            FileClass::Doc => f.write_str("doc"),
            FileClass::Man => f.write_str("man"),
            FileClass::Info => f.write_str("info"),
            FileClass::Debug => f.write_str("debug"),
            FileClass::Gpu(a) => write!(f, "gpu:{a}"),
            FileClass::GpuGeneric => f.write_str("gpu-generic"),
            FileClass::Removable => f.write_str("removable"),
        }
    }
}

impl Serialize for FileClass {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for FileClass {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        FileClass::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown file class `{s}`")))
    }
}

/// What an entry is, for the class rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryType {
    /// A regular file without the executable bit.
    Regular,
    /// A regular file with the executable bit.
    Executable,
    /// A symbolic link.
    Symlink,
    /// A directory.
    Directory,
}

/// What the class rules look at.
#[derive(Debug, Clone, Copy)]
pub struct ClassFacts<'a> {
    /// Path relative to the store path, `/`-separated (empty for the top level).
    pub path: &'a [u8],
    /// The entry type.
    pub entry: EntryType,
    /// The first bytes of a regular file (may be empty).
    pub head: &'a [u8],
    /// ELF facts, for ELF files that were analysed.
    pub elf: Option<&'a ElfFacts>,
}

impl ClassFacts<'_> {
    fn name(&self) -> &[u8] {
        self.path.rsplit(|&b| b == b'/').next().unwrap_or(self.path)
    }
}

/// How a class rule recognises a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassMatcher {
    /// An AMDGPU code object (`e_machine` 224): class from its `e_flags`.
    AmdgpuElf,
    /// The path is below one of these directories (given with a trailing `/`).
    UnderDir(Vec<String>),
    /// The file name is one of these.
    NameIs(Vec<String>),
    /// The file name ends with one of these.
    NameEndsWith(Vec<String>),
    /// The path is below one of these directories and the name carries an anchored GPU
    /// architecture token.
    ArchNameUnder(Vec<String>),
}

/// What a class rule gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassOf {
    /// This class.
    Class(FileClass),
    /// `gpu:<arch>` from the file name's architecture token.
    GpuArchOfName,
    /// `gpu:<arch>` from the AMDGPU ELF header.
    GpuArchOfElf,
}

/// One row of the class table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassRule {
    /// The rule's name.
    pub id: RuleId,
    /// What it matches.
    pub matcher: ClassMatcher,
    /// The class it gives.
    pub class: ClassOf,
}

/// The class rules in force, in priority order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassRules {
    rules: Vec<ClassRule>,
}

impl Default for ClassRules {
    fn default() -> Self {
        ClassRules::builtin()
    }
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

impl ClassRules {
    /// The built-in table.
    pub fn builtin() -> ClassRules {
        use ClassMatcher as M;
        use FileClass as C;
        let r = |id: &'static str, matcher, class| ClassRule {
            id: RuleId::new(id),
            matcher,
            class,
        };
        let fixed = ClassOf::Class;
        ClassRules {
            rules: vec![
                r(
                    "class/amdgpu-code-object",
                    M::AmdgpuElf,
                    ClassOf::GpuArchOfElf,
                ),
                r(
                    "class/gpu-generic-data",
                    M::NameIs(strs(&["TensileLibrary.dat", "hipblasltExtOpLibrary.dat"])),
                    fixed(C::GpuGeneric),
                ),
                r(
                    "class/tensile-fallback",
                    M::NameEndsWith(strs(&["_fallback.dat"])),
                    fixed(C::GpuGeneric),
                ),
                r(
                    "class/build-inventory",
                    M::NameIs(strs(&["TensileManifest.txt"])),
                    fixed(C::Removable),
                ),
                r(
                    "class/gpu-arch-name",
                    M::ArchNameUnder(strs(&["lib/", "share/miopen/"])),
                    ClassOf::GpuArchOfName,
                ),
                r(
                    "class/debug",
                    M::UnderDir(strs(&["lib/debug/"])),
                    fixed(C::Debug),
                ),
                r(
                    "class/man",
                    M::UnderDir(strs(&["share/man/"])),
                    fixed(C::Man),
                ),
                r(
                    "class/info",
                    M::UnderDir(strs(&["share/info/"])),
                    fixed(C::Info),
                ),
                r(
                    "class/doc",
                    M::UnderDir(strs(&["share/doc/", "share/gtk-doc/", "share/devhelp/"])),
                    fixed(C::Doc),
                ),
                r(
                    "class/dev",
                    M::UnderDir(strs(&[
                        "include/",
                        "lib/cmake/",
                        "lib64/cmake/",
                        "share/cmake/",
                        "lib/pkgconfig/",
                        "share/pkgconfig/",
                        "share/aclocal/",
                        "nix-support/",
                    ])),
                    fixed(C::Dev),
                ),
                r(
                    "class/static",
                    M::NameEndsWith(strs(&[".a"])),
                    fixed(C::Static),
                ),
                r(
                    "class/bin",
                    M::UnderDir(strs(&["bin/", "sbin/", "libexec/"])),
                    fixed(C::Bin),
                ),
                r(
                    "class/lib",
                    M::UnderDir(strs(&["lib/", "lib64/"])),
                    fixed(C::Lib),
                ),
            ],
        }
    }

    /// The rows, in priority order.
    pub fn rules(&self) -> &[ClassRule] {
        &self.rules
    }

    /// The class of a file and the rule that gave it; `out` (rule `class/out`) when no
    /// row matches.
    pub fn class_of(&self, f: &ClassFacts<'_>) -> (FileClass, RuleId) {
        let name = f.name();
        for rule in &self.rules {
            let class = match (&rule.matcher, &rule.class) {
                (ClassMatcher::AmdgpuElf, _) if f.elf.is_none_or(|e| e.machine != EM_AMDGPU) => {
                    continue
                }
                (ClassMatcher::UnderDir(dirs), _) if !under(f.path, dirs) => continue,
                (ClassMatcher::NameIs(names), _) if !names.iter().any(|n| name == n.as_bytes()) => {
                    continue
                }
                (ClassMatcher::NameEndsWith(ends), _)
                    if !ends.iter().any(|e| name.ends_with(e.as_bytes())) =>
                {
                    continue
                }
                (ClassMatcher::ArchNameUnder(dirs), _)
                    if !under(f.path, dirs) || arch_of_name(name).is_none() =>
                {
                    continue
                }
                (_, ClassOf::Class(c)) => c.clone(),
                (_, ClassOf::GpuArchOfName) => match arch_of_name(name) {
                    Some(a) => FileClass::Gpu(a),
                    None => continue,
                },
                (_, ClassOf::GpuArchOfElf) => match f.elf.filter(|e| e.machine == EM_AMDGPU) {
                    Some(e) => FileClass::Gpu(base_arch(&amdgpu_target(e.flags))),
                    None => continue,
                },
            };
            return (class, rule.id);
        }
        (FileClass::Out, RuleId::new("class/out"))
    }
}

fn under(path: &[u8], dirs: &[String]) -> bool {
    dirs.iter().any(|d| path.starts_with(d.as_bytes()))
}

/// The base architecture of a target id: `gfx90a` from `gfx90a:xnack+`.
pub fn base_arch(target: &str) -> String {
    target.split(':').next().unwrap_or(target).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(path: &str) -> (FileClass, RuleId) {
        ClassRules::builtin().class_of(&ClassFacts {
            path: path.as_bytes(),
            entry: EntryType::Regular,
            head: b"",
            elf: None,
        })
    }

    #[test]
    fn builtin_examples() {
        use FileClass as C;
        for (path, want) in [
            ("lib/librocblas.so.3", C::Lib),
            ("bin/hipcc", C::Bin),
            ("include/rocblas.h", C::Dev),
            ("lib/cmake/rocblas/rocblas-config.cmake", C::Dev),
            ("lib/pkgconfig/rocblas.pc", C::Dev),
            ("lib/librocblas.a", C::Static),
            ("share/doc/rocblas/README", C::Doc),
            ("share/man/man1/x.1.gz", C::Man),
            ("share/info/x.info", C::Info),
            ("lib/debug/.build-id/ab/cd.debug", C::Debug),
            ("lib/rocblas/library/TensileManifest.txt", C::Removable),
            ("lib/rocblas/library/TensileLibrary.dat", C::GpuGeneric),
            (
                "lib/rocblas/library/TensileLibrary_Type_DD_Contraction_l_Ailk_Bjlk_Cijk_Dijk_fallback.dat",
                C::GpuGeneric,
            ),
            (
                "lib/rocblas/library/TensileLibrary_lazy_gfx90a.dat",
                C::Gpu("gfx90a".into()),
            ),
            (
                "lib/rocblas/library/Kernels.so-000-gfx906-xnack-.hsaco",
                C::Gpu("gfx906".into()),
            ),
            ("share/libdrm/amdgpu.ids", C::Out),
            ("", C::Out),
        ] {
            assert_eq!(class(path).0, want, "{path}");
        }
        assert_eq!(class("bin/hipcc").1, "class/bin");
    }

    #[test]
    fn spelling_round_trips() {
        for c in [
            FileClass::Out,
            FileClass::Gpu("sm_80".into()),
            FileClass::Gpu("amdgcn-mach-0x33".into()),
            FileClass::GpuGeneric,
            FileClass::Removable,
        ] {
            assert_eq!(FileClass::parse(&c.to_string()), Some(c.clone()));
        }
        assert_eq!(FileClass::parse("gpu:"), None);
        assert_eq!(FileClass::parse("binary"), None);
    }
}
