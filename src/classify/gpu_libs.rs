//! The one table of GPU libraries nixcut knows ([`GPU_LIBRARIES`]): per nixpkgs package,
//! its attribute, the nixpkgs option that picks its GPU targets, the shared library
//! that opens data beside itself at run time, the data it opens (the data-directory
//! rules of `data_dir.rs`), the environment variable that points it elsewhere, and the
//! file names of its architecture-generic data and build inventories (the class rules
//! of `class.rs`). `nixcut gpu` takes the attribute and option of its remedies from here,
//! `nixcut split` the variable of a moved data directory; see `docs/rocm-runtime.md`.
//!
//! Facts only, no I/O: every command asks this table rather than keeping its own list.

use serde::{Deserialize, Serialize};

use super::data_dir::DataBase;

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

/// One GPU library of nixpkgs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuLibrary {
    /// The package name (`rocblas`), as in its store paths.
    pub package: &'static str,
    /// Its nixpkgs attribute (`rocmPackages.rocblas`).
    pub attribute: &'static str,
    /// The option that picks its GPU targets.
    pub takes: GpuOption,
    /// The data it opens at run time, if any.
    pub data: Option<LibraryData>,
    /// Data files every GPU architecture needs (`TensileLibrary.dat`): class `gpu-generic`.
    pub generic_files: &'static [&'static str],
    /// Files its build leaves that nothing reads at run time: class `removable`.
    pub build_inventories: &'static [&'static str],
}

/// A rocmPackages library that takes `gpuTargets` and has no facts beyond its name.
const fn rocm(package: &'static str, attribute: &'static str) -> GpuLibrary {
    GpuLibrary {
        package,
        attribute,
        takes: GpuOption::GpuTargets,
        data: None,
        generic_files: &[],
        build_inventories: &[],
    }
}

/// Every GPU library nixcut knows: those that open data first (in the order their
/// data-directory rules are tried), then the others by name.
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

#[cfg(test)]
mod tests {
    use super::*;

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
