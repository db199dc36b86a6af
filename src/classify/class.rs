//! File classes: what each file of a store path is for (`out`, `bin`, `lib`, `dev`,
//! `static`, `doc`, `man`, `info`, `debug`, `gpu:<arch>`, `gpu-generic`, `removable`),
//! decided by an ordered table of rules ([`ClassRules`]; the first match wins, every
//! class names its rule).
//!
//! The built-in table follows nixpkgs' multiple-outputs conventions
//! (`docs/nixpkgs-outputs.md`: `include`, `lib/cmake`, `lib/pkgconfig` … are dev;
//! `share/doc` doc, `share/man` man …) and the ROCm/CUDA facts (`docs/rocm-runtime.md`:
//! GPU code by content first, then by the anchored architecture token of the name). What
//! is known of one GPU library's files (its generic data, build inventories,
//! per-architecture databases, data directories) comes from its row of the GPU library
//! table (`gpu_libs.rs`), never from a list here. Rules look at facts only (the path,
//! the entry type, the first bytes, ELF facts), never at the file system.
//!
//! A user's rules file (`rules_file.rs`, `--rules FILE`) puts its rows ahead of the
//! built-in ones ([`ClassRules::with_user_rules`]), so a user rule overrides a built-in
//! class; [`ClassRules::user_rules`] tells them apart for `nixcut rules`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::gpu_arch::{arch_of_cu_name, base_arch};
use super::{arch_of_name, GpuTarget, RuleId};
use crate::elf::{
    amdgpu_arch, cuda_arch, has_bundle_magic, read_bundle_head, ElfFacts, EM_AMDGPU, EM_CUDA,
};

/// The SQLite database header (GPU libraries' perf dbs and kernel caches).
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

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
    Gpu(GpuTarget),
    /// GPU data every architecture needs (the GPU library table's generic files and suffixes).
    GpuGeneric,
    /// Needed by nothing: build inventories a GPU library's build leaves.
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
                // Whatever `Display` writes must parse back (`gfx10-3-generic`,
                // `amdgcn-mach-0x33` too).
                let arch_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
                if !arch.starts_with(|c: char| c.is_ascii_alphanumeric())
                    || !arch.bytes().all(arch_byte)
                {
                    return None;
                }
                FileClass::Gpu(GpuTarget::from_id(arch))
            }
        })
    }

    /// The class of files for one base architecture (`gfx90a`).
    pub fn gpu(base: String) -> FileClass {
        FileClass::Gpu(GpuTarget::from(base))
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
    /// An AMDGPU code object (`e_machine` 224).
    AmdgpuElf,
    /// A CUDA cubin (`e_machine` 190).
    CudaElf,
    /// A clang offload bundle file (`__CLANG_OFFLOAD_BUNDLE__` or `CCOB` at offset 0).
    OffloadBundle,
    /// A data file in a GPU library's format (SQLite, or a msgpack map as index
    /// `.dat` files are) whose name carries an anchored GPU architecture token.
    GpuDataNamedForArch,
    /// The path is below one of `under` and the name is a processor, a CU count and one
    /// of `ends` (`gfx900_56.db`, `gfx90a68.db`, `gfx908.tn.model`; see
    /// [`arch_of_cu_name`]): a GPU library's per-architecture database.
    ArchDatabase {
        /// The directories.
        under: Vec<String>,
        /// How the names end.
        ends: Vec<String>,
    },
    /// The path is below one of these directories (given with a trailing `/`).
    UnderDir(Vec<String>),
    /// The file name is one of these.
    NameIs(Vec<String>),
    /// The file name ends with one of these.
    NameEndsWith(Vec<String>),
    /// The file name starts with one of these.
    NameStartsWith(Vec<String>),
    /// The path is below one of these directories and the name carries an anchored GPU
    /// architecture token.
    ArchNameUnder(Vec<String>),
    /// Every one of these (a user rule giving several keys).
    All(Vec<ClassMatcher>),
}

impl ClassMatcher {
    /// Whether the matcher accepts `f`, whose file name is `name`.
    fn matches(&self, f: &ClassFacts<'_>, name: &[u8]) -> bool {
        match self {
            ClassMatcher::AmdgpuElf => f.elf.is_some_and(|e| e.machine == EM_AMDGPU),
            ClassMatcher::CudaElf => f.elf.is_some_and(|e| e.machine == EM_CUDA),
            ClassMatcher::OffloadBundle => {
                f.entry != EntryType::Symlink && has_bundle_magic(f.head)
            }
            ClassMatcher::GpuDataNamedForArch => {
                f.entry != EntryType::Symlink
                    && (f.head.starts_with(SQLITE_MAGIC) || is_msgpack_map(f.head))
                    && arch_of_name(name).is_some()
            }
            ClassMatcher::ArchDatabase { under: dirs, ends } => {
                under(f.path, dirs)
                    && ends.iter().any(|e| name.ends_with(e.as_bytes()))
                    && arch_of_cu_name(name).is_some()
            }
            ClassMatcher::UnderDir(dirs) => under(f.path, dirs),
            ClassMatcher::NameIs(names) => names.iter().any(|n| name == n.as_bytes()),
            ClassMatcher::NameEndsWith(ends) => ends.iter().any(|e| name.ends_with(e.as_bytes())),
            ClassMatcher::NameStartsWith(s) => s.iter().any(|p| name.starts_with(p.as_bytes())),
            ClassMatcher::ArchNameUnder(dirs) => {
                under(f.path, dirs) && arch_of_name(name).is_some()
            }
            ClassMatcher::All(all) => all.iter().all(|m| m.matches(f, name)),
        }
    }
}

impl fmt::Display for ClassMatcher {
    /// What the matcher accepts, in words (for `nixcut rules`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |v: &[String]| v.join(" ");
        match self {
            ClassMatcher::AmdgpuElf => f.write_str("AMDGPU code object (ELF e_machine 224)"),
            ClassMatcher::CudaElf => f.write_str("CUDA cubin (ELF e_machine 190)"),
            ClassMatcher::OffloadBundle => {
                f.write_str("clang offload bundle (__CLANG_OFFLOAD_BUNDLE__ or CCOB header)")
            }
            ClassMatcher::GpuDataNamedForArch => {
                f.write_str("SQLite or msgpack data with a GPU architecture in its name")
            }
            ClassMatcher::ArchDatabase { under, ends } => write!(
                f,
                "database name <arch><CUs> ending {} under {}",
                list(ends),
                list(under)
            ),
            ClassMatcher::UnderDir(d) => write!(f, "under {}", list(d)),
            ClassMatcher::NameIs(n) => write!(f, "name is {}", list(n)),
            ClassMatcher::NameEndsWith(n) => write!(f, "name ends with {}", list(n)),
            ClassMatcher::NameStartsWith(n) => write!(f, "name starts with {}", list(n)),
            ClassMatcher::ArchNameUnder(d) => {
                write!(f, "name with a GPU architecture token, under {}", list(d))
            }
            ClassMatcher::All(all) => {
                for (i, m) in all.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; and ")?;
                    }
                    write!(f, "{m}")?;
                }
                Ok(())
            }
        }
    }
}

/// Whether `head` starts like a msgpack map with a string key (what index `.dat`
/// files hold): fixmap with at least one entry, map16 or map32, then fixstr, str8,
/// str16 or str32.
fn is_msgpack_map(head: &[u8]) -> bool {
    let key_at = match head.first() {
        Some(0x81..=0x8f) => 1,
        Some(0xde) => 3,
        Some(0xdf) => 5,
        _ => return false,
    };
    matches!(head.get(key_at), Some(0xa1..=0xbf | 0xd9..=0xdb))
}

/// What a class rule gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassOf {
    /// This class.
    Class(FileClass),
    /// `gpu:<arch>` from the file name's architecture token.
    GpuArchOfName,
    /// `gpu:<arch>` from the ELF header (an AMDGPU processor from `e_flags`, a cubin's
    /// `sm_XX`); an unknown processor falls back to the name's token, then to
    /// `gpu-generic` (GPU code all the same, kept).
    GpuArchOfElf,
    /// From a bundle's entry ids. One base architecture gives `gpu:<arch>`. Code for
    /// several architectures gives `gpu-generic`: the file is needed on every one of
    /// them, so no per-architecture output can take it, and dropping one architecture
    /// cannot drop the file; `gpu-generic` keeps it with the GPU data every target needs
    /// (erring towards keeping for targets it does not hold). A header cut short of
    /// its last id falls back to the name's token, then `gpu-generic`.
    GpuArchOfBundle,
    /// `gpu:<arch>` from a database name, CU count dropped (`gfx90a68` → `gfx90a`).
    GpuArchOfDatabaseName,
}

impl fmt::Display for ClassOf {
    /// What the rule gives, in words (for `nixcut rules`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClassOf::Class(c) => write!(f, "{c}"),
            ClassOf::GpuArchOfName => f.write_str("gpu:<arch of the name>"),
            ClassOf::GpuArchOfElf => f.write_str("gpu:<arch of the ELF header>"),
            ClassOf::GpuArchOfBundle => {
                f.write_str("gpu:<arch of the bundle> (gpu-generic for several)")
            }
            ClassOf::GpuArchOfDatabaseName => f.write_str("gpu:<arch of the database name>"),
        }
    }
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

/// The class rules in force, in priority order: a user's rows first, then the built-in
/// ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassRules {
    rules: Vec<ClassRule>,
    /// How many of the first rows came from a user's rules file.
    user: usize,
    /// The data-directory rules (the built-in table merged with a user's rows).
    data_dirs: Vec<super::DataDirRule>,
    /// The names of the data-directory rules that came from a user's rules file.
    user_data_dirs: Vec<RuleId>,
}

impl Default for ClassRules {
    fn default() -> Self {
        ClassRules::builtin()
    }
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// File names one column of the GPU library table (`gpu_libs.rs`) lists, in its order.
fn library_files(column: fn(&super::GpuLibrary) -> &'static [&'static str]) -> Vec<String> {
    super::GPU_LIBRARIES
        .iter()
        .flat_map(|l| column(l).iter().map(|s| s.to_string()))
        .collect()
}

/// The class rules of the GPU library table's per-architecture databases, one per row
/// that has them.
fn database_rules() -> impl Iterator<Item = ClassRule> {
    super::GPU_LIBRARIES
        .iter()
        .filter_map(|l| l.databases)
        .map(|d| ClassRule {
            id: RuleId::new(d.rule),
            matcher: ClassMatcher::ArchDatabase {
                under: strs(d.under),
                ends: strs(d.extensions),
            },
            class: ClassOf::GpuArchOfDatabaseName,
        })
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
            user: 0,
            data_dirs: super::builtin_data_dirs(),
            user_data_dirs: Vec::new(),
            rules: [
                // Content first: device code says which GPU it is for.
                r(
                    "class/amdgpu-code-object",
                    M::AmdgpuElf,
                    ClassOf::GpuArchOfElf,
                ),
                r("class/cuda-cubin", M::CudaElf, ClassOf::GpuArchOfElf),
                r(
                    "class/offload-bundle",
                    M::OffloadBundle,
                    ClassOf::GpuArchOfBundle,
                ),
                r(
                    "class/gpu-generic-data",
                    M::NameIs(library_files(|l| l.generic_files)),
                    fixed(C::GpuGeneric),
                ),
                r(
                    "class/tensile-fallback",
                    M::NameEndsWith(library_files(|l| l.generic_suffixes)),
                    fixed(C::GpuGeneric),
                ),
                r(
                    "class/build-inventory",
                    M::NameIs(library_files(|l| l.build_inventories)),
                    fixed(C::Removable),
                ),
            ]
            .into_iter()
            .chain(database_rules())
            .chain([
                r(
                    "class/gpu-data-arch-name",
                    M::GpuDataNamedForArch,
                    ClassOf::GpuArchOfName,
                ),
                // Then the name.
                r(
                    "class/gpu-arch-name",
                    M::ArchNameUnder(
                        ["lib/".to_string()]
                            .into_iter()
                            .chain(library_files(|l| l.arch_dirs))
                            .collect(),
                    ),
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
            ])
            .collect(),
        }
    }

    /// This table with `user` rows put ahead of it (after any user rows it already has),
    /// so that they override the built-in classes.
    pub fn with_user_rules(mut self, user: Vec<ClassRule>) -> ClassRules {
        let n = user.len();
        let at = self.user;
        self.rules.splice(at..at, user);
        self.user += n;
        self
    }

    /// These rules with a user's data-directory rows merged into the table
    /// ([`super::merge_data_dirs`]).
    pub fn with_user_data_dirs(mut self, user: Vec<super::DataDirRule>) -> ClassRules {
        self.user_data_dirs.extend(user.iter().map(|r| r.id));
        self.data_dirs = super::merge_data_dirs(std::mem::take(&mut self.data_dirs), user);
        self
    }

    /// The data-directory rules in force.
    pub fn data_dirs(&self) -> &[super::DataDirRule] {
        &self.data_dirs
    }

    /// Whether a data-directory rule came from a user's rules file.
    pub fn is_user_data_dir(&self, id: RuleId) -> bool {
        self.user_data_dirs.contains(&id)
    }

    /// The rows, in priority order.
    pub fn rules(&self) -> &[ClassRule] {
        &self.rules
    }

    /// The rows that came from a user's rules file (they come first).
    pub fn user_rules(&self) -> &[ClassRule] {
        &self.rules[..self.user]
    }

    /// Whether the row at `index` of [`ClassRules::rules`] came from a user's file.
    pub fn is_user_rule(&self, index: usize) -> bool {
        index < self.user
    }

    /// The class of a file and the rule that gave it; `out` (rule `class/out`) when no
    /// row matches.
    pub fn class_of(&self, f: &ClassFacts<'_>) -> (FileClass, RuleId) {
        let name = f.name();
        for rule in &self.rules {
            if !rule.matcher.matches(f, name) {
                continue;
            }
            let class = match &rule.class {
                ClassOf::Class(c) => Some(c.clone()),
                ClassOf::GpuArchOfName => arch_of_name(name).map(FileClass::gpu),
                ClassOf::GpuArchOfElf => elf_gpu_class(f, name),
                ClassOf::GpuArchOfBundle => bundle_class(f.head, name),
                ClassOf::GpuArchOfDatabaseName => arch_of_cu_name(name).map(FileClass::gpu),
            };
            if let Some(class) = class {
                return (class, rule.id);
            }
        }
        (FileClass::Out, CLASS_OUT)
    }
}

/// The rule named when no row matches.
pub const CLASS_OUT: RuleId = RuleId::new("class/out");

/// The class of GPU device code in an ELF file (`None` for a host ELF).
fn elf_gpu_class(f: &ClassFacts<'_>, name: &[u8]) -> Option<FileClass> {
    let e = f.elf?;
    let arch = match e.machine {
        EM_AMDGPU => amdgpu_arch(e.flags).map(str::to_string),
        EM_CUDA => {
            // e_ident[EI_ABIVERSION]; without the head, ABI 7 cubins are the ones whose
            // low flag byte is an SM number.
            let abi = f
                .head
                .get(8)
                .copied()
                .unwrap_or(if e.flags & 0xff >= 10 { 7 } else { 8 });
            cuda_arch(e.flags, abi)
        }
        _ => return None,
    };
    Some(
        arch.or_else(|| arch_of_name(name))
            .map_or(FileClass::GpuGeneric, FileClass::gpu),
    )
}

/// The class of a bundle file from its header (see [`ClassOf::GpuArchOfBundle`]).
fn bundle_class(head: &[u8], name: &[u8]) -> Option<FileClass> {
    let t = read_bundle_head(head)?;
    let mut bases: Vec<String> = t.targets.iter().map(|t| base_arch(t)).collect();
    bases.sort();
    bases.dedup();
    Some(match (bases.len(), t.complete) {
        (1, true) => FileClass::gpu(bases.remove(0)),
        (n, _) if n > 1 => FileClass::GpuGeneric,
        // Only a host entry, or a header cut short: the name says more, if anything.
        _ => arch_of_name(name).map_or(FileClass::GpuGeneric, FileClass::gpu),
    })
}

fn under(path: &[u8], dirs: &[String]) -> bool {
    dirs.iter().any(|d| path.starts_with(d.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(path: &'a str, head: &'a [u8], elf: Option<&'a ElfFacts>) -> ClassFacts<'a> {
        ClassFacts {
            path: path.as_bytes(),
            entry: EntryType::Regular,
            head,
            elf,
        }
    }

    fn class(path: &str) -> (FileClass, RuleId) {
        ClassRules::builtin().class_of(&facts(path, b"", None))
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
            (
                "lib/x/library/Kernels.so-000-gfx906-xnack-.hsaco",
                C::Gpu("gfx906".into()),
            ),
            ("share/libdrm/amdgpu.ids", C::Out),
            ("", C::Out),
        ] {
            assert_eq!(class(path).0, want, "{path}");
        }
        assert_eq!(class("bin/hipcc").1, "class/bin");
        assert_eq!(class("share/libdrm/amdgpu.ids").1, CLASS_OUT);
    }

    #[test]
    fn data_files_by_content_then_name() {
        let sqlite = b"SQLite format 3\0\x10\x00\x01\x01";
        let (c, rule) =
            ClassRules::builtin().class_of(&facts("share/x/perf_gfx1030.db", sqlite, None));
        assert_eq!(
            (c, rule.as_str()),
            (FileClass::Gpu("gfx1030".into()), "class/gpu-data-arch-name")
        );
        // A msgpack index: {"solutions": …}
        let msgpack = b"\x82\xa9solutions\x90";
        let (c, _) =
            ClassRules::builtin().class_of(&facts("opt/Library_lazy_gfx942.dat", msgpack, None));
        assert_eq!(c, FileClass::Gpu("gfx942".into()));
        // Without an architecture in the name a SQLite file is not GPU data.
        let (c, _) = ClassRules::builtin().class_of(&facts("share/x/cache.db", sqlite, None));
        assert_eq!(c, FileClass::Out);
        assert!(!is_msgpack_map(b"\x80"));
        assert!(!is_msgpack_map(b"\x85\x01"));
        assert!(is_msgpack_map(b"\xde\x00\x02\xd9\x05"));
    }

    /// A 64-byte ELF64 header with this machine, flags and ABI version.
    fn elf_header(machine: u16, flags: u32, osabi: u8, abiversion: u8) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2; // ELFCLASS64
        h[5] = 1; // little endian
        h[6] = 1;
        h[7] = osabi;
        h[8] = abiversion;
        h[16..18].copy_from_slice(&3u16.to_le_bytes()); // ET_DYN
        h[18..20].copy_from_slice(&machine.to_le_bytes());
        h[20..24].copy_from_slice(&1u32.to_le_bytes());
        h[48..52].copy_from_slice(&flags.to_le_bytes());
        h[52..54].copy_from_slice(&64u16.to_le_bytes());
        h
    }

    fn elf_class(path: &str, bytes: &[u8]) -> (FileClass, RuleId) {
        let elf = ElfFacts::parse(bytes, None).expect("parse header");
        ClassRules::builtin().class_of(&facts(path, bytes, Some(&elf)))
    }

    #[test]
    fn device_code_by_elf_header() {
        // Content beats the name: a code object for gfx1030 named for gfx90a.
        let co = elf_header(EM_AMDGPU, 0x36, 64, 2);
        let (c, rule) = elf_class("lib/x/foo_gfx90a.co", &co);
        assert_eq!(
            (c, rule.as_str()),
            (FileClass::Gpu("gfx1030".into()), "class/amdgpu-code-object")
        );
        // Unknown processor: the name, then gpu-generic.
        let odd = elf_header(EM_AMDGPU, 0x27, 64, 2);
        assert_eq!(
            elf_class("share/k_gfx1151.co", &odd).0,
            FileClass::Gpu("gfx1151".into())
        );
        assert_eq!(elf_class("share/k.co", &odd).0, FileClass::GpuGeneric);
        // Cubins, both flag layouts (values from real cubins, see elf::cuda_arch).
        let sm80 = elf_header(EM_CUDA, 0x0050_0550, 51, 7);
        assert_eq!(
            elf_class("share/k.cubin", &sm80).0,
            FileClass::Gpu("sm_80".into())
        );
        let sm100 = elf_header(EM_CUDA, 0x0600_6402, 65, 8);
        assert_eq!(
            elf_class("share/k.cubin", &sm100).0,
            FileClass::Gpu("sm_100".into())
        );
        // A host ELF is not GPU code, whatever its name.
        let host = elf_header(62, 0, 0, 0);
        assert_eq!(elf_class("lib/libk.so", &host).0, FileClass::Lib);
    }

    fn bundle(ids: &[&str]) -> Vec<u8> {
        let mut b = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
        b.extend_from_slice(&(ids.len() as u64).to_le_bytes());
        for id in ids {
            b.extend_from_slice(&4096u64.to_le_bytes());
            b.extend_from_slice(&0u64.to_le_bytes());
            b.extend_from_slice(&(id.len() as u64).to_le_bytes());
            b.extend_from_slice(id.as_bytes());
        }
        b
    }

    #[test]
    fn bundle_files() {
        let rules = ClassRules::builtin();
        let one = bundle(&[
            "host-x86_64-unknown-linux",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-",
        ]);
        let (c, rule) = rules.class_of(&facts("lib/k.co", &one, None));
        assert_eq!(
            (c, rule.as_str()),
            (FileClass::Gpu("gfx90a".into()), "class/offload-bundle")
        );
        let two = bundle(&[
            "host-x86_64-unknown-linux",
            "hipv4-amdgcn-amd-amdhsa--gfx1030",
            "hipv4-amdgcn-amd-amdhsa--gfx900",
        ]);
        assert_eq!(
            rules.class_of(&facts("lib/k.co", &two, None)).0,
            FileClass::GpuGeneric
        );
        // Cut inside the header: the name decides, else gpu-generic.
        assert_eq!(
            rules
                .class_of(&facts("lib/k_gfx900.co", &two[..64], None))
                .0,
            FileClass::Gpu("gfx900".into())
        );
        assert_eq!(
            rules.class_of(&facts("lib/k.co", &two[..64], None)).0,
            FileClass::GpuGeneric
        );
        // A symlink is classed by its place, never by content.
        let link = ClassFacts {
            entry: EntryType::Symlink,
            ..facts("lib/k.co", &two, None)
        };
        assert_eq!(rules.class_of(&link).0, FileClass::Lib);
    }

    #[test]
    fn user_rules_come_first() {
        let user = ClassRule {
            id: RuleId::intern("my/keep-tools"),
            matcher: ClassMatcher::UnderDir(vec!["share/tools/".into()]),
            class: ClassOf::Class(FileClass::Bin),
        };
        let lib = ClassRule {
            id: RuleId::intern("my/cmake-is-lib"),
            matcher: ClassMatcher::All(vec![
                ClassMatcher::UnderDir(vec!["lib/cmake/".into()]),
                ClassMatcher::NameEndsWith(vec![".cmake".into()]),
            ]),
            class: ClassOf::Class(FileClass::Lib),
        };
        let rules = ClassRules::builtin()
            .with_user_rules(vec![user.clone()])
            .with_user_rules(vec![lib.clone()]);
        assert_eq!(rules.user_rules(), &[user, lib][..]);
        assert!(rules.is_user_rule(1) && !rules.is_user_rule(2));
        let c = |p: &str| rules.class_of(&facts(p, b"", None));
        assert_eq!(c("share/tools/x").0, FileClass::Bin);
        assert_eq!(
            c("lib/cmake/a/b.cmake"),
            (FileClass::Lib, RuleId::intern("my/cmake-is-lib"))
        );
        assert_eq!(c("lib/cmake/a/b.txt").0, FileClass::Dev);
        assert_eq!(rules.rules().len(), ClassRules::builtin().rules().len() + 2);
    }

    #[test]
    fn every_rule_describes_itself() {
        for r in ClassRules::builtin().rules() {
            assert!(!r.matcher.to_string().is_empty(), "{}", r.id);
            assert!(!r.class.to_string().is_empty(), "{}", r.id);
        }
    }

    #[test]
    fn spelling_round_trips() {
        for c in [
            FileClass::Out,
            FileClass::Gpu("sm_80".into()),
            FileClass::Gpu("gfx10-3-generic".into()),
            FileClass::Gpu("amdgcn-mach-0x33".into()),
            FileClass::GpuGeneric,
            FileClass::Removable,
        ] {
            assert_eq!(FileClass::parse(&c.to_string()), Some(c.clone()));
        }
        assert_eq!(FileClass::parse("gpu:"), None);
        assert_eq!(FileClass::parse("gpu:a b"), None);
        assert_eq!(FileClass::parse("gpu:-x"), None);
        assert_eq!(FileClass::parse("binary"), None);
    }
}
