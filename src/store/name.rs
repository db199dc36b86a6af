//! Store-path names split the way nixpkgs builds them: `<pname>-<version>[-<output>]`.
//!
//! nixpkgs names an output path `${pname}-${version}` for `out` and
//! `${pname}-${version}-${output}` for every other output (`gcc-12.2.0-lib`,
//! `openssl-3.0.12-dev`). The split follows `nix store diff-closures`: a trailing
//! all-lower-case component (or `lib32`/`lib64`) is an output name, then Nix's
//! `parseDrvName` splits the rest at the first `-` not followed by a letter. One
//! difference, to avoid the ambiguity Nix's own source admits ("we can't distinguish
//! between output names like `bin` and version suffixes like `unstable`"): the suffix
//! is taken as an output only when what precedes it has a version, so `hello-unstable`
//! is the package `hello-unstable` rather than `hello` with an output `unstable`.
//! Used by `diff` to group paths by package; pure string work, no I/O.

/// A store-path name split into package, version and output.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PackageName<'a> {
    /// The package name (`gcc`, `rocm-llvm-clang`, `python3.11-numpy`).
    pub pname: &'a str,
    /// The version (`12.2.0`, `5.2p15`); empty when the name has none.
    pub version: &'a str,
    /// The output (`out` when the name has no output suffix).
    pub output: &'a str,
}

/// Split a store-path name (`gcc-12.2.0-lib`, without the hash) into package, version
/// and output. Never fails: a name without a version is all package.
pub fn parse_package_name(name: &str) -> PackageName<'_> {
    if let Some((rest, suffix)) = name.rsplit_once('-') {
        if is_output_name(suffix) {
            let (pname, version) = split_drv_name(rest);
            if !version.is_empty() {
                return PackageName {
                    pname,
                    version,
                    output: suffix,
                };
            }
        }
    }
    let (pname, version) = split_drv_name(name);
    PackageName {
        pname,
        version,
        output: "out",
    }
}

/// What `nix store diff-closures` takes for an output name: `[a-z]+`, `lib32`, `lib64`.
fn is_output_name(s: &str) -> bool {
    (!s.is_empty() && s.bytes().all(|c| c.is_ascii_lowercase())) || s == "lib32" || s == "lib64"
}

/// Nix's `DrvName`: the name is everything before the first `-` that is not followed by
/// a letter; the version is everything after it.
fn split_drv_name(s: &str) -> (&str, &str) {
    let b = s.as_bytes();
    for i in 0..b.len() {
        if b[i] == b'-' && b.get(i + 1).is_some_and(|c| !c.is_ascii_alphabetic()) {
            return (&s[..i], &s[i + 1..]);
        }
    }
    (s, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nixpkgs_style_names() {
        // (name, pname, version, output)
        let table: &[(&str, &str, &str, &str)] = &[
            ("gcc-12.2.0-lib", "gcc", "12.2.0", "lib"),
            ("gcc-12.2.0", "gcc", "12.2.0", "out"),
            ("openssl-3.0.12-dev", "openssl", "3.0.12", "dev"),
            ("openssl-3.0.12-bin", "openssl", "3.0.12", "bin"),
            ("openssl-3.0.12-man", "openssl", "3.0.12", "man"),
            ("coreutils-9.3-info", "coreutils", "9.3", "info"),
            ("gettext-0.21.1-doc", "gettext", "0.21.1", "doc"),
            ("curl-8.4.0-devdoc", "curl", "8.4.0", "devdoc"),
            ("zstd-1.5.5-static", "zstd", "1.5.5", "static"),
            ("glibc-2.38-27-lib32", "glibc", "2.38-27", "lib32"),
            ("glibc-2.38-27", "glibc", "2.38-27", "out"),
            ("bash-5.2p15", "bash", "5.2p15", "out"),
            ("rocm-llvm-clang-5.7.1", "rocm-llvm-clang", "5.7.1", "out"),
            (
                "rocblas-tensile-gfx90-5.7.1",
                "rocblas-tensile-gfx90",
                "5.7.1",
                "out",
            ),
            ("cuda_cudart-12.2.140-lib", "cuda_cudart", "12.2.140", "lib"),
            ("libcublas-12.2.5.6", "libcublas", "12.2.5.6", "out"),
            (
                "python3.11-numpy-1.26.0",
                "python3.11-numpy",
                "1.26.0",
                "out",
            ),
            (
                "python3.11-numpy-1.26.0-dist",
                "python3.11-numpy",
                "1.26.0",
                "dist",
            ),
            ("python3-3.11.6-env", "python3", "3.11.6", "env"),
            ("llama-cpp-rocm-0.0.0", "llama-cpp-rocm", "0.0.0", "out"),
            ("big-blob-1.0", "big-blob", "1.0", "out"),
            ("source", "source", "", "out"),
            ("hello-unstable", "hello-unstable", "", "out"),
            ("etc-os-release", "etc-os-release", "", "out"),
            ("linux-6.1.64-modules", "linux", "6.1.64", "modules"),
            ("foo-1.0-rc1", "foo", "1.0-rc1", "out"),
            (
                "nixos-system-host-23.11.20231129.057f9ae",
                "nixos-system-host",
                "23.11.20231129.057f9ae",
                "out",
            ),
            ("hello-2.12.1.drv", "hello", "2.12.1.drv", "out"),
            ("ncurses-6.4-abi5-compat", "ncurses", "6.4-abi5", "compat"),
            ("x-", "x-", "", "out"),
            ("-1.0", "", "1.0", "out"),
        ];
        for &(name, pname, version, output) in table {
            assert_eq!(
                parse_package_name(name),
                PackageName {
                    pname,
                    version,
                    output
                },
                "{name}"
            );
        }
    }
}
