//! The one table of GPU libraries nixcut knows ([`GPU_LIBRARIES`]): per nixpkgs package,
//! its attribute, the nixpkgs option that picks its GPU targets, and every fact of its
//! files that another module acts on:
//!
//! - the data it opens beside its shared library at run time (the data-directory rules
//!   of `data_dir.rs`, which `crate::reach` follows) and the environment variable that
//!   points it elsewhere (`nixcut split` writes it for a moved data directory);
//! - its class rules (`class.rs`): the names of its architecture-generic data
//!   (`gpu-generic`) and of build inventories nothing reads (`removable`), its
//!   per-architecture databases ([`ArchDatabases`]), and the directories whose files
//!   named for one architecture are for that one only;
//! - the names of its code objects and index files ([`CodeObjects`], [`IndexFiles`]),
//!   which `crate::reach` reads to tell what a master index loads;
//! - the extensions of its data files ([`data_extensions`]): which strings of a library
//!   the scanner keeps as data paths (`crate::elf::data_path_tokens`). They, and the
//!   index and build-inventory names the scanner reads, are part of the scan cache's key
//!   ([`scan_fingerprint`]), so a new row never reads an entry scanned without it.
//!
//! Facts only, no I/O: every command asks this table rather than keeping its own list.
//! See `docs/rocm-runtime.md` for where each fact comes from.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// Where a library's data directories are counted from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataBase {
    /// The directory the loader found the library in (its RUNPATH directory, not the
    /// symlink-resolved path): rocBLAS, for one.
    LoadedAs,
    /// The directory of the library's real path.
    RealPath,
}

impl DataBase {
    /// `loaded-as` or `real-path` (the rules file's spelling).
    pub fn as_str(self) -> &'static str {
        match self {
            DataBase::LoadedAs => "loaded-as",
            DataBase::RealPath => "real-path",
        }
    }

    /// Parse the rules file's spelling.
    pub fn parse(s: &str) -> Option<DataBase> {
        match s {
            "loaded-as" => Some(DataBase::LoadedAs),
            "real-path" => Some(DataBase::RealPath),
            _ => None,
        }
    }
}

/// The nixpkgs option that picks the GPU targets a package is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum GpuOption {
    /// An argument of rocmPackages' libraries (`rocblas.override { gpuTargets = … }`).
    #[serde(rename = "gpuTargets")]
    GpuTargets,
    /// nixpkgs' `config.cudaCapabilities`, one setting for every CUDA package.
    #[serde(rename = "cudaCapabilities")]
    CudaCapabilities,
}

impl GpuOption {
    /// The option's name in nixpkgs.
    pub fn as_str(self) -> &'static str {
        match self {
            GpuOption::GpuTargets => "gpuTargets",
            GpuOption::CudaCapabilities => "cudaCapabilities",
        }
    }
}

/// The data a library opens beside itself at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LibraryData {
    /// The library's upstream name (`rocBLAS`).
    pub name: &'static str,
    /// The data-directory rule's name (`data/rocblas-tensile`).
    pub rule: &'static str,
    /// The shared library's unversioned file name (`librocblas.so`).
    pub library: &'static str,
    /// Where `dirs` are counted from.
    pub base: DataBase,
    /// The directories (or files) it opens, relative to `base`, in the order tried.
    pub dirs: &'static [&'static str],
    /// The variable that points the library at another directory, and the directory
    /// (a suffix of a path in the package) it replaces: `ROCBLAS_TENSILE_LIBPATH`,
    /// `lib/rocblas/library`.
    pub env: Option<(&'static str, &'static str)>,
}

/// Per-architecture databases: files below `under` whose name is a processor, the CU
/// count and an extension of `extensions` ([`super::arch_of_cu_name`]: `gfx90a68.db`,
/// `gfx1030_36.db`), class `gpu:<arch>` with the CU count dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchDatabases {
    /// The class rule's name.
    pub rule: &'static str,
    /// The directories, relative to the store path, with a trailing `/`.
    pub under: &'static [&'static str],
    /// How the names end (the part after the CU count).
    pub extensions: &'static [&'static str],
}

/// Code objects a library loads by name: `prefix` then anything, then one of
/// `extensions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeObjects {
    /// How the names start.
    pub prefix: &'static str,
    /// How the names end.
    pub extensions: &'static [&'static str],
}

/// Index files (MessagePack maps naming the files to load; `crate::elf::index_loads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexFiles {
    /// How the names end.
    pub extension: &'static str,
    /// What a lazy master's name holds (it names placeholders, loaded on first use);
    /// any other master too large to decode loads its code objects up front.
    pub lazy_marker: &'static str,
}

/// One GPU library of nixpkgs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuLibrary {
    /// The package name (`rocblas`), as in its store paths.
    pub package: &'static str,
    /// Its nixpkgs attribute (`rocmPackages.rocblas`).
    pub attribute: &'static str,
    /// The option that picks its GPU targets; `None` for a library NVIDIA ships built
    /// (cuBLAS …): no nixpkgs option rebuilds it for fewer targets.
    pub takes: Option<GpuOption>,
    /// The data it opens at run time, if any.
    pub data: Option<LibraryData>,
    /// Data files every GPU architecture needs (`TensileLibrary.dat`): class `gpu-generic`.
    pub generic_files: &'static [&'static str],
    /// How the names of other data files every architecture needs end
    /// (`_fallback.dat`): class `gpu-generic`.
    pub generic_suffixes: &'static [&'static str],
    /// Files its build leaves that nothing reads at run time: class `removable`.
    pub build_inventories: &'static [&'static str],
    /// Its per-architecture databases, if any.
    pub databases: Option<ArchDatabases>,
    /// Directories (relative to the store path, trailing `/`) besides `lib/` whose files
    /// named for one architecture are for that one only: class `gpu:<arch>`.
    pub arch_dirs: &'static [&'static str],
    /// Its code objects, if it loads them by name.
    pub code_objects: Option<CodeObjects>,
    /// Its index files, if any.
    pub indexes: Option<IndexFiles>,
    /// Extensions of the data files it opens (`.dat`, `.co`): the strings of a library
    /// that end so are kept as data paths.
    pub data_extensions: &'static [&'static str],
}

/// A rocmPackages library that takes `gpuTargets` and has no facts beyond its name.
const fn rocm(package: &'static str, attribute: &'static str) -> GpuLibrary {
    GpuLibrary {
        package,
        attribute,
        takes: Some(GpuOption::GpuTargets),
        ..NO_FACTS
    }
}

/// A cudaPackages library NVIDIA ships built for every architecture it supports.
const fn cuda_redist(package: &'static str, attribute: &'static str) -> GpuLibrary {
    GpuLibrary {
        package,
        attribute,
        takes: None,
        ..NO_FACTS
    }
}

/// A row with nothing but its names (the others' base).
const NO_FACTS: GpuLibrary = GpuLibrary {
    package: "",
    attribute: "",
    takes: None,
    data: None,
    generic_files: &[],
    generic_suffixes: &[],
    build_inventories: &[],
    databases: None,
    arch_dirs: &[],
    code_objects: None,
    indexes: None,
    data_extensions: &[],
};

/// Tensile's index files (rocBLAS', hipBLASLt's).
const TENSILE_INDEXES: IndexFiles = IndexFiles {
    extension: ".dat",
    lazy_marker: "lazy",
};

/// Every GPU library nixcut knows: those that open data first (in the order their
/// data-directory rules are tried), then the others by name, ROCm's then CUDA's.
pub const GPU_LIBRARIES: &[GpuLibrary] = &[
    GpuLibrary {
        data: Some(LibraryData {
            name: "rocBLAS",
            rule: "data/rocblas-tensile",
            library: "librocblas.so",
            base: DataBase::LoadedAs,
            // ROCBLAS_TENSILE_LIBPATH aside, the first that exists of these (5.7, 6.x).
            dirs: &[
                "rocblas/library",
                "../../Tensile/library",
                "library",
                "../rocblas/library",
            ],
            env: Some(("ROCBLAS_TENSILE_LIBPATH", "lib/rocblas/library")),
        }),
        generic_files: &["TensileLibrary.dat"],
        generic_suffixes: &["_fallback.dat"],
        code_objects: Some(CodeObjects {
            prefix: "TensileLibrary",
            extensions: &[".co", ".hsaco"],
        }),
        indexes: Some(TENSILE_INDEXES),
        data_extensions: &[".dat", ".co", ".hsaco"],
        ..rocm("rocblas", "rocmPackages.rocblas")
    },
    GpuLibrary {
        data: Some(LibraryData {
            name: "hipBLASLt",
            rule: "data/hipblaslt-tensile",
            library: "libhipblaslt.so",
            base: DataBase::LoadedAs,
            dirs: &["hipblaslt/library"],
            env: Some(("HIPBLASLT_TENSILE_LIBPATH", "hipblaslt/library")),
        }),
        generic_files: &["hipblasltExtOpLibrary.dat"],
        indexes: Some(TENSILE_INDEXES),
        data_extensions: &[".dat", ".co"],
        ..rocm("hipblaslt", "rocmPackages.hipblaslt")
    },
    GpuLibrary {
        data: Some(LibraryData {
            name: "MIOpen",
            rule: "data/miopen-db",
            library: "libMIOpen.so",
            base: DataBase::RealPath,
            dirs: &["../share/miopen/db"],
            env: Some(("MIOPEN_SYSTEM_DB_PATH", "share/miopen/db")),
        }),
        // Perf dbs (`gfx90a68.db`, `gfx900_56.db.txt`), find dbs
        // (`gfx1030_36.HIP.fdb.txt`), kernel caches (`gfx90a68.kdb`, 506-711 MB each in
        // nixpkgs) and tuning models (`gfx908.tn.model`).
        databases: Some(ArchDatabases {
            rule: "class/miopen-db",
            under: &["share/miopen/db/"],
            extensions: &[".db", ".db.txt", ".fdb.txt", ".kdb", ".model"],
        }),
        arch_dirs: &["share/miopen/"],
        data_extensions: &[".kdb", ".db", ".model"],
        ..rocm("miopen", "rocmPackages.miopen")
    },
    GpuLibrary {
        data: Some(LibraryData {
            name: "rocFFT",
            rule: "data/rocfft-kernel-cache",
            library: "librocfft.so",
            base: DataBase::LoadedAs,
            dirs: &["rocfft_kernel_cache.db", "rocfft", "rocfft_rtc_helper"],
            env: None,
        }),
        generic_files: &["rocfft_kernel_cache.db"],
        data_extensions: &[".db"],
        ..rocm("rocfft", "rocmPackages.rocfft")
    },
    rocm("composable_kernel", "rocmPackages.composable_kernel"),
    rocm("hipblas", "rocmPackages.hipblas"),
    rocm("hipcub", "rocmPackages.hipcub"),
    rocm("hipfft", "rocmPackages.hipfft"),
    rocm("hiprand", "rocmPackages.hiprand"),
    rocm("hipsolver", "rocmPackages.hipsolver"),
    rocm("hipsparse", "rocmPackages.hipsparse"),
    rocm("migraphx", "rocmPackages.migraphx"),
    rocm("rccl", "rocmPackages.rccl"),
    rocm("rocprim", "rocmPackages.rocprim"),
    rocm("rocrand", "rocmPackages.rocrand"),
    rocm("rocsolver", "rocmPackages.rocsolver"),
    rocm("rocsparse", "rocmPackages.rocsparse"),
    rocm("rocthrust", "rocmPackages.rocthrust"),
    rocm("rocwmma", "rocmPackages.rocwmma"),
    GpuLibrary {
        build_inventories: &["TensileManifest.txt"],
        ..rocm("tensile", "rocmPackages.tensile")
    },
    // CUDA: the math libraries are NVIDIA's builds (fat binaries for every
    // architecture of their release, `.nv_fatbin`); NCCL nixpkgs builds from source
    // for `config.cudaCapabilities`.
    cuda_redist("cudnn", "cudaPackages.cudnn"),
    cuda_redist("libcublas", "cudaPackages.libcublas"),
    cuda_redist("libcufft", "cudaPackages.libcufft"),
    cuda_redist("libcurand", "cudaPackages.libcurand"),
    cuda_redist("libcusolver", "cudaPackages.libcusolver"),
    cuda_redist("libcusparse", "cudaPackages.libcusparse"),
    cuda_redist("libnvjpeg", "cudaPackages.libnvjpeg"),
    GpuLibrary {
        takes: Some(GpuOption::CudaCapabilities),
        ..cuda_redist("nccl", "cudaPackages.nccl")
    },
];

/// The library of a package name (`rocblas`), if nixcut knows it.
pub fn gpu_library(package: &str) -> Option<&'static GpuLibrary> {
    GPU_LIBRARIES.iter().find(|l| l.package == package)
}

/// The library whose data directory a directory of a package is (it ends with the
/// directory the library's variable replaces), with that variable.
pub fn library_of_data_dir(dir: &str) -> Option<(&'static GpuLibrary, &'static str)> {
    GPU_LIBRARIES.iter().find_map(|l| {
        let (var, suffix) = l.data?.env?;
        dir.ends_with(suffix).then_some((l, var))
    })
}

/// Every extension of the data files the libraries open (sorted, once each): the
/// strings of a library that end so are kept as data paths.
pub fn data_extensions() -> &'static [&'static str] {
    static ALL: OnceLock<Vec<&'static str>> = OnceLock::new();
    ALL.get_or_init(|| union(|l| l.data_extensions.iter().copied()))
}

/// Every extension of the libraries' code objects (`.co`, `.hsaco`).
pub fn code_object_extensions() -> &'static [&'static str] {
    static ALL: OnceLock<Vec<&'static str>> = OnceLock::new();
    ALL.get_or_init(|| union(|l| l.code_objects.iter().flat_map(|c| c.extensions).copied()))
}

/// Whether a file name (the last component of `name`) is a code object of a library
/// that loads them by name (`TensileLibrary_…_gfx90a.co`).
pub fn is_library_code_object(name: &[u8]) -> bool {
    let name = name.rsplit(|&b| b == b'/').next().unwrap_or(name);
    GPU_LIBRARIES
        .iter()
        .filter_map(|l| l.code_objects)
        .any(|c| {
            name.starts_with(c.prefix.as_bytes())
                && c.extensions.iter().any(|e| name.ends_with(e.as_bytes()))
        })
}

/// Whether a file name (or a name an index lists) is an index file's.
pub fn is_index_name(name: &[u8]) -> bool {
    GPU_LIBRARIES
        .iter()
        .filter_map(|l| l.indexes)
        .any(|i| name.ends_with(i.extension.as_bytes()))
}

/// Whether a file name is a build inventory's (`removable`; its list of names is read).
pub fn is_build_inventory(name: &[u8]) -> bool {
    GPU_LIBRARIES
        .iter()
        .any(|l| l.build_inventories.iter().any(|b| name == b.as_bytes()))
}

/// Whether an index file's name says it is a lazy master (one that names placeholders).
pub fn is_lazy_index_name(name: &[u8]) -> bool {
    GPU_LIBRARIES.iter().filter_map(|l| l.indexes).any(|i| {
        name.ends_with(i.extension.as_bytes())
            && memchr::memmem::find(name, i.lazy_marker.as_bytes()).is_some()
    })
}

/// What of the table the scanner's facts depend on ([`data_extensions`], the index
/// extensions, the build inventories' names), for the scan cache's key: a change of it
/// never reads an entry scanned before.
pub fn scan_fingerprint() -> String {
    let indexes = union(|l| l.indexes.iter().map(|i| i.extension));
    let inventories = union(|l| l.build_inventories.iter().copied());
    format!(
        "data {}; indexes {}; inventories {}",
        data_extensions().join(" "),
        indexes.join(" "),
        inventories.join(" ")
    )
}

/// The values `f` gives over the table, sorted, once each.
fn union<I: Iterator<Item = &'static str>>(
    f: impl Fn(&'static GpuLibrary) -> I,
) -> Vec<&'static str> {
    let mut all: Vec<&'static str> = GPU_LIBRARIES.iter().flat_map(f).collect();
    all.sort_unstable();
    all.dedup();
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{ClassFacts, ClassRules, EntryType, FileClass};

    #[test]
    fn one_row_per_package_and_rule() {
        let mut packages: Vec<&str> = GPU_LIBRARIES.iter().map(|l| l.package).collect();
        let n = packages.len();
        packages.sort_unstable();
        packages.dedup();
        assert_eq!(packages.len(), n, "a package listed twice");
        for l in GPU_LIBRARIES {
            assert!(l.attribute.ends_with(&format!(".{}", l.package)), "{l:?}");
        }
        assert_eq!(
            gpu_library("rocblas").and_then(|l| l.data).map(|d| d.name),
            Some("rocBLAS")
        );
        assert_eq!(gpu_library("zlib"), None);
    }

    fn class(path: &str) -> (FileClass, String) {
        let facts = ClassFacts {
            path: path.as_bytes(),
            entry: EntryType::Regular,
            head: b"",
            elf: None,
        };
        let (c, rule) = ClassRules::builtin().class_of(&facts);
        (c, rule.to_string())
    }

    #[test]
    fn class_rules_of_the_rows() {
        use FileClass as C;
        for (path, want) in [
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
            ("lib/hipblaslt/library/hipblasltExtOpLibrary.dat", C::GpuGeneric),
            ("lib/rocfft/rocfft_kernel_cache.db", C::GpuGeneric),
            // A row's data directory beside lib/: named for one architecture.
            ("share/miopen/perf/gfx1030_model.json", C::Gpu("gfx1030".into())),
        ] {
            assert_eq!(class(path).0, want, "{path}");
        }
    }

    #[test]
    fn miopen_databases_group_cu_variants_under_the_base_arch() {
        for (name, arch) in [
            ("gfx900_56.db", "gfx900"),
            ("gfx900_64.kdb", "gfx900"),
            ("gfx1030_36.HIP.fdb.txt", "gfx1030"),
            ("gfx1030_36.db.txt", "gfx1030"),
            ("gfx1030_36.kdb", "gfx1030"),
            ("gfx90a68.kdb", "gfx90a"),
            ("gfx90a6e.db", "gfx90a"),
            ("gfx942130.db", "gfx942"),
            ("gfx942130.kdb", "gfx942"),
            ("gfx908.tn.model", "gfx908"),
            ("gfx90a_metadata.ktn.model", "gfx90a"),
        ] {
            let path = format!("share/miopen/db/{name}");
            assert_eq!(
                class(&path),
                (FileClass::Gpu(arch.into()), "class/miopen-db".to_string()),
                "{path}"
            );
        }
        // The same name elsewhere is read with the plain token rule, which cannot split
        // a hex CU count off (and outside lib/ and share/miopen/ there is no rule); an
        // ending the row does not list is no database.
        assert_eq!(class("share/foo/gfx90a68.kdb").0, FileClass::Out);
        assert_ne!(class("share/miopen/db/gfx90a68.json").1, "class/miopen-db");
    }

    #[test]
    fn derived_lists() {
        assert_eq!(
            data_extensions(),
            [".co", ".dat", ".db", ".hsaco", ".kdb", ".model"]
        );
        assert_eq!(code_object_extensions(), [".co", ".hsaco"]);
        assert!(is_library_code_object(
            b"lib/rocblas/library/TensileLibrary_Type_HH_Contraction_l_Ailk_Bjlk_Cijk_Dijk_gfx90a.co"
        ));
        assert!(is_library_code_object(b"TensileLibrary_gfx1030.hsaco"));
        assert!(!is_library_code_object(b"Kernels.so-000-gfx90a.hsaco"));
        assert!(!is_library_code_object(b"TensileLibrary_gfx1030.dat"));
        assert!(is_index_name(b"TensileLibrary_lazy_gfx1030.dat"));
        assert!(is_lazy_index_name(b"TensileLibrary_lazy_gfx1030.dat"));
        assert!(!is_lazy_index_name(b"TensileLibrary.dat"));
        assert!(!is_index_name(b"gfx90a68.kdb"));
        assert!(scan_fingerprint().contains(".kdb"));
        assert!(is_build_inventory(b"TensileManifest.txt"));
        assert!(!is_build_inventory(b"TensileLibrary.dat"));
        // Every CUDA row is NVIDIA's build but NCCL's, which cudaCapabilities rebuilds.
        let cuda: Vec<_> = GPU_LIBRARIES
            .iter()
            .filter(|l| l.attribute.starts_with("cudaPackages."))
            .collect();
        assert!(cuda.iter().any(|l| l.package == "libcublas"));
        for l in cuda {
            let want = (l.package == "nccl").then_some(GpuOption::CudaCapabilities);
            assert_eq!(l.takes, want, "{}", l.package);
        }
    }

    #[test]
    fn data_directories_find_their_variable() {
        let var = |d: &str| library_of_data_dir(d).map(|(l, v)| (l.package, v));
        assert_eq!(
            var("lib/rocblas/library"),
            Some(("rocblas", "ROCBLAS_TENSILE_LIBPATH"))
        );
        assert_eq!(
            var("lib/hipblaslt/library"),
            Some(("hipblaslt", "HIPBLASLT_TENSILE_LIBPATH"))
        );
        assert_eq!(
            var("share/miopen/db"),
            Some(("miopen", "MIOPEN_SYSTEM_DB_PATH"))
        );
        assert_eq!(var("lib/rocfft"), None);
    }
}
