//! The data directories known libraries open beside themselves at run time, as data
//! (facts from `docs/rocm-runtime.md`): reaching the library reaches these directories,
//! and everything below them.

/// Where a library's data directories are counted from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataBase {
    /// The directory the loader found the library in (its RUNPATH directory, not the
    /// symlink-resolved path): rocBLAS, hipBLASLt, rocFFT.
    LoadedAs,
    /// The directory of the library's real path: MIOpen.
    RealPath,
}

/// One row: a library (file name `library` or `library.<version>`) and the directories,
/// relative to [`DataBase`], it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataDirRule {
    /// The rule's name.
    pub id: &'static str,
    /// The library's unversioned file name.
    pub library: &'static str,
    /// Where `dirs` are counted from.
    pub base: DataBase,
    /// The directories (or files) it opens, relative to the base.
    pub dirs: &'static [&'static str],
}

impl DataDirRule {
    /// Whether a file named `name` is this library (`librocblas.so`, `librocblas.so.3`).
    pub fn applies_to(&self, name: &[u8]) -> bool {
        let lib = self.library.as_bytes();
        name == lib || (name.starts_with(lib) && name.get(lib.len()) == Some(&b'.'))
    }
}

/// The table.
pub fn data_dir_rules() -> &'static [DataDirRule] {
    &[
        DataDirRule {
            id: "data/rocblas-tensile",
            library: "librocblas.so",
            base: DataBase::LoadedAs,
            // ROCBLAS_TENSILE_LIBPATH aside, the first that exists of these (5.7 and 6.x).
            dirs: &[
                "rocblas/library",
                "../../Tensile/library",
                "library",
                "../rocblas/library",
            ],
        },
        DataDirRule {
            id: "data/hipblaslt-tensile",
            library: "libhipblaslt.so",
            base: DataBase::LoadedAs,
            dirs: &["hipblaslt/library"],
        },
        DataDirRule {
            id: "data/miopen-db",
            library: "libMIOpen.so",
            base: DataBase::RealPath,
            dirs: &["../share/miopen/db"],
        },
        DataDirRule {
            id: "data/rocfft-kernel-cache",
            library: "librocfft.so",
            base: DataBase::LoadedAs,
            dirs: &["rocfft_kernel_cache.db", "rocfft", "rocfft_rtc_helper"],
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_names_with_versions() {
        let r = &data_dir_rules()[0];
        assert!(r.applies_to(b"librocblas.so"));
        assert!(r.applies_to(b"librocblas.so.3.1.0"));
        assert!(!r.applies_to(b"librocblas.so3"));
        assert!(!r.applies_to(b"librocblas.a"));
    }
}
