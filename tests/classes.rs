//! File classes on real inputs: device code built with Debian's `hipcc` (bare AMDGPU code
//! objects, offload bundles, a fat binary, and CCOB bundles compressed here from the
//! real bundle), every file of Debian 13's real rocBLAS and rocSOLVER packages (classes
//! checked against the files' bytes and Debian's package split, not against names),
//! MIOpen database names, and the `--rules FILE` override through the binary.
//!
//! The Debian test needs the trixie world (Nix, hipcc, patchelf and the packages
//! `tests/worlds/fetch-trixie.sh` downloads once into `target/debian-trixie/`) and
//! `dpkg-deb`; the hipcc tests need `hipcc` (`apt-get install -y hipcc`). Without what
//! they need they print `SKIP …` and pass, and fail instead under `NIXCUT_REQUIRE_NIX=1`,
//! as `.ci/run` sets. hipcc runs four times per test run (about 3 to 5 s each); the outputs are
//! shared by every test through [`device_code`]. `tests/worlds/gpu.nix` puts the same
//! kinds of device code into store paths built by real Nix, and every file's class is
//! asserted there too.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use nixcut::classify::{
    class_rules_from_file, ClassFacts, ClassRules, EntryType, FileClass, RuleId,
};
use nixcut::elf::{read_bundle_head, BundleContainer, ElfFacts, EM_AMDGPU};

/// How many bytes of a file the scanner hands the class rules (`TEXT_SNIFF_LEN`).
const HEAD: usize = 8 << 10;

/// The targets of the bare code objects (one file each): GCN 3 to RDNA 2, with the
/// xnack variants rocBLAS builds (hipcc writes e_flags 0x2a, 0x12c, 0x62f, 0x530, 0x73f,
/// 0x133, 0x36, 0x45).
const BARE_TARGETS: [&str; 8] = [
    "gfx803",
    "gfx900",
    "gfx906:xnack-",
    "gfx908",
    "gfx90a:xnack+",
    "gfx1010",
    "gfx1030",
    "gfx1036",
];

/// What hipcc built, in a directory under `CARGO_TARGET_TMPDIR`.
struct DeviceCode {
    dir: PathBuf,
}

impl DeviceCode {
    fn bare(&self, target: &str) -> PathBuf {
        self.dir
            .join("bare")
            .join(format!("scale-hip-amdgcn-amd-amdhsa-{target}.out"))
    }
    /// A bundle with code for gfx900 and gfx1030.
    fn bundle2(&self) -> PathBuf {
        self.dir.join("scale2.co")
    }
    /// A bundle with code for gfx908 only.
    fn bundle1(&self) -> PathBuf {
        self.dir.join("scale1.co")
    }
    /// A host library with a `.hip_fatbin` for gfx900, gfx90a:xnack+ and gfx1030.
    fn fat(&self) -> PathBuf {
        self.dir.join("libscale.so")
    }
}

fn hipcc_available() -> bool {
    Command::new("hipcc")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// True when the test may use hipcc; false (after saying so) when it must skip. Under
/// `NIXCUT_REQUIRE_NIX=1` a missing hipcc fails the test instead.
fn hipcc_or_skip(test: &str) -> bool {
    if hipcc_available() {
        return true;
    }
    if std::env::var("NIXCUT_REQUIRE_NIX").as_deref() == Ok("1") {
        panic!("{test}: hipcc is required (NIXCUT_REQUIRE_NIX=1) but `hipcc` does not run (apt-get install -y hipcc)");
    }
    eprintln!("SKIP {test}: hipcc is not installed (apt-get install -y hipcc); set NIXCUT_REQUIRE_NIX=1 to make this a failure");
    false
}

/// The device code, built once per test run; `None` (after saying so) when hipcc is
/// missing and the test may skip.
fn device_code(test: &str) -> Option<&'static DeviceCode> {
    static BUILT: OnceLock<Result<DeviceCode, String>> = OnceLock::new();
    if !hipcc_or_skip(test) {
        return None;
    }
    match BUILT.get_or_init(build_device_code) {
        Ok(d) => Some(d),
        Err(e) => panic!("{test}: building device code with hipcc failed: {e}"),
    }
}

fn hipcc(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("hipcc")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run hipcc: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "hipcc {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn build_device_code() -> Result<DeviceCode, String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("classes-hipcc");
    let _ = std::fs::remove_dir_all(&dir);
    let bare = dir.join("bare");
    std::fs::create_dir_all(&bare).map_err(|e| e.to_string())?;
    let src = common::repo().join("tests/fixtures/hip/scale.hip");
    std::fs::copy(&src, dir.join("scale.hip")).map_err(|e| e.to_string())?;
    std::fs::copy(&src, bare.join("scale.hip")).map_err(|e| e.to_string())?;
    // Bare code objects: the link step fails for lack of `main`, after writing one
    // `scale-hip-amdgcn-amd-amdhsa-<target>.out` per target (rocm-runtime.md).
    let mut args = vec!["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output"];
    let archs: Vec<String> = BARE_TARGETS
        .iter()
        .map(|t| format!("--offload-arch={t}"))
        .collect();
    args.extend(archs.iter().map(String::as_str));
    args.push("scale.hip");
    let link = hipcc(&bare, &args);
    let d = DeviceCode { dir: dir.clone() };
    for t in BARE_TARGETS {
        if !d.bare(t).exists() {
            return Err(format!(
                "no code object for {t} in {}: {link:?}",
                bare.display()
            ));
        }
    }
    hipcc(
        &dir,
        &[
            "-x",
            "hip",
            "--offload-arch=gfx900",
            "--offload-arch=gfx1030",
            "--cuda-device-only",
            "-c",
            "-o",
            "scale2.co",
            "scale.hip",
        ],
    )?;
    hipcc(
        &dir,
        &[
            "-x",
            "hip",
            "--offload-arch=gfx908",
            "--cuda-device-only",
            "-c",
            "-o",
            "scale1.co",
            "scale.hip",
        ],
    )?;
    hipcc(
        &dir,
        &[
            "--offload-arch=gfx900",
            "--offload-arch=gfx90a:xnack+",
            "--offload-arch=gfx1030",
            "-shared",
            "-fPIC",
            "-o",
            "libscale.so",
            "scale.hip",
        ],
    )?;
    Ok(d)
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

/// The class of `bytes` installed at `path`, as the scanner asks for it: the first
/// [`HEAD`] bytes and, for ELF files, their facts.
fn class_of(rules: &ClassRules, path: &str, bytes: &[u8]) -> (FileClass, RuleId, Option<ElfFacts>) {
    let elf = ElfFacts::parse(bytes, None).ok();
    let (c, r) = rules.class_of(&ClassFacts {
        path: path.as_bytes(),
        entry: EntryType::Regular,
        head: &bytes[..bytes.len().min(HEAD)],
        elf: elf.as_ref(),
    });
    (c, r, elf)
}

#[test]
fn real_bare_code_objects_are_gpu_code_of_their_arch() {
    let Some(d) = device_code("real_bare_code_objects_are_gpu_code_of_their_arch") else {
        return;
    };
    let rules = ClassRules::builtin();
    for target in BARE_TARGETS {
        let bytes = read(&d.bare(target));
        let base = target.split(':').next().unwrap();
        // A Tensile-style name, and a name that says nothing: the content decides.
        for path in [
            format!("lib/rocblas/library/TensileLibrary_Type_SS_Contraction_l_Ailk_Bjlk_Cijk_Dijk_{}.co", target.replace(':', "-")),
            "share/kernels/scale.co".to_string(),
        ] {
            let (c, rule, elf) = class_of(&rules, &path, &bytes);
            let elf = elf.expect("an ELF file");
            assert_eq!(elf.machine, EM_AMDGPU, "{target}");
            assert_eq!(c, FileClass::Gpu(base.into()), "{target} at {path}");
            assert_eq!(rule, "class/amdgpu-code-object", "{target}");
            // The variant survives in the target id (e_flags & 0x300).
            assert_eq!(elf.gpu.targets, vec![target.to_string()], "{target}");
        }
    }
}

#[test]
fn real_bundle_files_one_arch_and_several() {
    let Some(d) = device_code("real_bundle_files_one_arch_and_several") else {
        return;
    };
    let rules = ClassRules::builtin();
    let one = read(&d.bundle1());
    let t = read_bundle_head(&one).expect("a bundle");
    assert_eq!(
        (t.container, t.targets.clone(), t.complete),
        (BundleContainer::Offload, vec!["gfx908".to_string()], true)
    );
    let (c, rule, _) = class_of(&rules, "lib/hipblaslt/library/extop_x.co", &one);
    assert_eq!(
        (c, rule.as_str()),
        (FileClass::Gpu("gfx908".into()), "class/offload-bundle")
    );

    let two = read(&d.bundle2());
    let t = read_bundle_head(&two).expect("a bundle");
    assert_eq!(t.targets, vec!["gfx1030", "gfx900"]);
    // Code for several architectures is needed on each of them: gpu-generic.
    let (c, rule, _) = class_of(&rules, "lib/hipblaslt/library/extop_x.co", &two);
    assert_eq!(
        (c, rule.as_str()),
        (FileClass::GpuGeneric, "class/offload-bundle")
    );
    // With only 64 bytes the ids are cut off: the name decides, else gpu-generic.
    let short = |path: &str| {
        rules
            .class_of(&ClassFacts {
                path: path.as_bytes(),
                entry: EntryType::Regular,
                head: &two[..64],
                elf: None,
            })
            .0
    };
    assert_eq!(
        short("lib/x/extop_gfx1030.co"),
        FileClass::Gpu("gfx1030".into())
    );
    assert_eq!(short("share/x/extop.co"), FileClass::GpuGeneric);
}

#[test]
fn real_fat_binary_is_a_library_holding_three_targets() {
    let Some(d) = device_code("real_fat_binary_is_a_library_holding_three_targets") else {
        return;
    };
    let bytes = read(&d.fat());
    let (c, rule, elf) = class_of(&ClassRules::builtin(), "lib/libscale.so", &bytes);
    assert_eq!((c, rule.as_str()), (FileClass::Lib, "class/lib"));
    let elf = elf.unwrap();
    assert_eq!(elf.machine, 62);
    assert_eq!(elf.gpu.offload_bundles, 1);
    assert_eq!(elf.gpu.targets, vec!["gfx1030", "gfx900", "gfx90a:xnack+"]);
    assert!(elf.needed.iter().any(|n| n.value == "libamdhip64.so.5"));
}

#[test]
fn real_bundles_compressed_as_ccob() {
    let Some(d) = device_code("real_bundles_compressed_as_ccob") else {
        return;
    };
    let rules = ClassRules::builtin();
    for (bundle, want) in [
        (read(&d.bundle1()), FileClass::Gpu("gfx908".into())),
        (read(&d.bundle2()), FileClass::GpuGeneric),
    ] {
        for version in 1..=3 {
            for method in 0..=1 {
                let file = common::ccob(version, method, &bundle);
                let t = read_bundle_head(&file[..file.len().min(HEAD)]).expect("CCOB");
                assert_eq!(t.container, BundleContainer::Compressed);
                assert!(t.complete, "v{version} method {method}");
                let (c, rule, _) = class_of(&rules, "lib/x/kernels.co", &file);
                assert_eq!(c, want, "v{version} method {method}");
                assert_eq!(rule, "class/offload-bundle");
            }
        }
    }
}

/// The processors Debian 13 builds rocBLAS 5.5.1 for (debian/rules' `AMDGPU_TARGETS`).
const DEBIAN_TARGETS: [&str; 10] = [
    "gfx803", "gfx900", "gfx906", "gfx908", "gfx90a", "gfx1010", "gfx1030", "gfx1100", "gfx1101",
    "gfx1102",
];

/// The regular files of a Debian package, from its own `md5sums` (`dpkg-deb --info DEB
/// md5sums`, no unpacking), at the place `tests/worlds/trixie.nix` installs them:
/// `usr/lib/x86_64-linux-gnu/` → `lib/`, `usr/include/` → `include/`; the documentation
/// and lintian overrides under `usr/share/` are not installed there and left out.
fn debian_files(debs: &Path, package: &str) -> BTreeSet<String> {
    let deb = std::fs::read_dir(debs)
        .expect("the .deb directory")
        .map(|e| e.expect("dir entry").path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{package}_")))
        })
        .unwrap_or_else(|| panic!("no {package}_*.deb in {}", debs.display()));
    let out = Command::new("dpkg-deb")
        .arg("--info")
        .arg(&deb)
        .arg("md5sums")
        .output()
        .expect("run dpkg-deb");
    assert!(out.status.success(), "dpkg-deb --info {}", deb.display());
    let mut files = BTreeSet::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let path = line.split_once("  ").map_or("", |(_, p)| p);
        if let Some(rest) = path.strip_prefix("usr/lib/x86_64-linux-gnu/") {
            files.insert(format!("lib/{rest}"));
        } else if let Some(rest) = path.strip_prefix("usr/include/") {
            files.insert(format!("include/{rest}"));
        } else {
            assert!(
                path.starts_with("usr/share/doc/") || path.starts_with("usr/share/lintian/"),
                "{package}: {line:?} is installed nowhere by trixie.nix"
            );
        }
    }
    assert!(!files.is_empty(), "{package}: no files in its md5sums");
    files
}

/// What tests/gpu_reader.py (written from the formats, not from nixcut) reads in the
/// bytes of every regular file below `dir`: relative path → `{kind, targets|processors}`.
fn content_of(dir: &str) -> BTreeMap<String, serde_json::Value> {
    let out = Command::new("python3")
        .arg(common::repo().join("tests/gpu_reader.py"))
        .args(["--files", dir])
        .output()
        .expect("run python3 tests/gpu_reader.py");
    assert!(
        out.status.success(),
        "gpu_reader.py --files {dir}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("gpu_reader.py prints JSON")
}

/// The base architecture of a target id (`gfx90a:xnack+` → `gfx90a`).
fn base_of(target: &str) -> &str {
    target.split(':').next().unwrap_or(target)
}

fn strings(v: &serde_json::Value) -> BTreeSet<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(String::from))
        .collect()
}

/// The class nixcut gives each file of Debian 13's real rocBLAS (runtime and -dev
/// packages) and rocSOLVER, checked against what a maintainer can see without nixcut's
/// naming rules: the file lists are Debian's own (`md5sums`); a file's architecture is
/// read from its bytes (the code object's e_flags, a bundle's entries, a fat binary's
/// bundles, by tests/gpu_reader.py); which files serve building is Debian's split into
/// `librocblas-dev`.
#[test]
fn debian_rocblas_and_rocsolver_files_have_the_class_their_bytes_and_packages_say() {
    let test = "debian_rocblas_and_rocsolver_files_have_the_class_their_bytes_and_packages_say";
    let Some(w) = common::trixie_world(test, "") else {
        return;
    };
    if !common::tool_or_skip(test, "dpkg-deb", "dpkg")
        || !common::tool_or_skip(test, "python3", "python3")
    {
        return;
    }
    let debs = common::trixie_debs(test).expect("the world was built from them");
    let trixie = common::repo().join("tests/worlds/trixie.nix");
    let dev = common::nix_stdout(
        "nix-build",
        &[
            trixie.to_str().unwrap(),
            "--argstr",
            "debs",
            debs.to_str().unwrap(),
            "--argstr",
            "variant",
            "",
            "-A",
            "rocblas.dev",
            "--no-out-link",
        ],
    );
    let dev = dev.trim().to_string();
    let targets: BTreeSet<String> = DEBIAN_TARGETS.iter().map(|t| t.to_string()).collect();
    // (package, store path, the root whose closure holds it)
    let packages = [
        ("librocblas0", w.path("rocblas").to_string(), w.root.clone()),
        (
            "librocsolver0",
            w.path("rocsolver").to_string(),
            w.root.clone(),
        ),
        ("librocblas-dev", dev.clone(), dev.clone()),
    ];
    // Per base architecture: files whose bytes are code for it alone, and their bytes.
    let mut per_arch: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut classed: BTreeMap<String, u64> = BTreeMap::new();
    for (package, path, root) in &packages {
        let listed = debian_files(&debs, package);
        let content = content_of(path);
        let installed: BTreeSet<String> = content.keys().cloned().collect();
        assert_eq!(
            installed, listed,
            "{package}: the store path holds Debian's files"
        );
        for (file, what) in &content {
            let full = format!("{path}/{file}");
            let r = common::json(&[
                "refs",
                "--closure",
                root,
                "--explain",
                &full,
                "--format",
                "json",
            ]);
            let class = r["explain"]["class"]
                .as_str()
                .unwrap_or_else(|| panic!("{full}: no class: {r}"))
                .to_string();
            *classed.entry(class.clone()).or_default() += 1;
            let kind = what["kind"].as_str().unwrap();
            let ctx = format!("{package} {file}: class {class}, bytes {what}");
            // Debian's split: the -dev package is what building needs; the library
            // packages are what runs.
            if *package == "librocblas-dev" {
                assert_eq!(class, "dev", "{ctx}");
            } else {
                assert!(
                    !["dev", "static", "doc", "man", "info", "debug", "removable"]
                        .contains(&class.as_str()),
                    "{ctx}: Debian ships it to run"
                );
            }
            match kind {
                // A code object or bundle for one architecture: needed on that one only.
                "code-object" | "bundle" => {
                    let bases: BTreeSet<&str> = what["targets"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| base_of(t.as_str().unwrap()))
                        .collect();
                    if bases.len() == 1 {
                        let base = bases.first().unwrap().to_string();
                        assert_eq!(class, format!("gpu:{base}"), "{ctx}");
                        let size = std::fs::metadata(&full).unwrap().len();
                        let row = per_arch.entry(base).or_default();
                        row.0 += 1;
                        row.1 += size;
                    } else {
                        assert_eq!(class, "gpu-generic", "{ctx}");
                    }
                }
                // A host library with every processor's code in its fat binary: needed
                // on every processor, a library.
                "host" => {
                    assert_eq!(class, "lib", "{ctx}");
                    let bases: BTreeSet<String> = strings(&what["targets"])
                        .iter()
                        .map(|t| base_of(t).to_string())
                        .collect();
                    assert_eq!(bases, targets, "{ctx}: built for Debian's targets");
                }
                // Data: never GPU code of one architecture. Run-time data naming several
                // of the processors (the master index of kernels per processor) is GPU
                // data all of them share, and GPU data is nothing else.
                _ => {
                    assert!(!class.starts_with("gpu:"), "{ctx}: holds no device code");
                    let named = strings(&what["processors"]);
                    let index = *package != "librocblas-dev" && named.len() > 1;
                    assert_eq!(class == "gpu-generic", index, "{ctx}");
                    assert!(named.is_subset(&targets), "{ctx}: names other processors");
                }
            }
        }
    }
    // Every processor Debian builds for has its code objects in rocBLAS, and nixcut's
    // split counts each architecture's files and bytes as their bytes do.
    let arches: BTreeSet<String> = per_arch.keys().cloned().collect();
    assert_eq!(arches, targets);
    let split = common::json(&[
        "split",
        w.path("rocblas"),
        "--for",
        &w.root,
        "--format",
        "json",
    ]);
    let counted: BTreeMap<String, (u64, u64)> = split["archs"]
        .as_array()
        .expect("archs")
        .iter()
        .map(|a| {
            (
                a["arch"].as_str().unwrap().to_string(),
                (a["files"].as_u64().unwrap(), a["bytes"].as_u64().unwrap()),
            )
        })
        .collect();
    assert_eq!(counted, per_arch);
    let gpu_files: u64 = classed
        .iter()
        .filter(|(c, _)| c.starts_with("gpu:"))
        .map(|(_, n)| n)
        .sum();
    assert_eq!(
        gpu_files,
        per_arch.values().map(|r| r.0).sum::<u64>(),
        "{classed:?}"
    );
    eprintln!("classes of Debian's rocBLAS and rocSOLVER files: {classed:?}");
}

#[test]
fn miopen_databases_decimal_and_hex_cu_counts() {
    let rules = ClassRules::builtin();
    let sqlite = b"SQLite format 3\0\x10\x00\x01\x01\x00\x40\x20\x20";
    for (name, head, arch) in [
        ("gfx900_56.db", &sqlite[..], "gfx900"),
        ("gfx900_64.kdb", &sqlite[..], "gfx900"),
        (
            "gfx906_60.HIP.fdb.txt",
            b"ConvBinWinogradRxSf2x3:1x1-3-3",
            "gfx906",
        ),
        ("gfx1030_36.db", &sqlite[..], "gfx1030"),
        ("gfx1030_36.db.txt", b"1-1-1-3x3", "gfx1030"),
        ("gfx90878.kdb", &sqlite[..], "gfx908"),
        ("gfx90a68.db", &sqlite[..], "gfx90a"),
        ("gfx90a68.kdb", &sqlite[..], "gfx90a"),
        ("gfx90a6e.HIP.fdb.txt", b"x", "gfx90a"),
        ("gfx942130.kdb", &sqlite[..], "gfx942"),
        ("gfx942130.db", &sqlite[..], "gfx942"),
        ("gfx908.tn.model", b"{", "gfx908"),
        ("gfx90a_metadata.tn.model", b"{", "gfx90a"),
        ("gfx908_ConvAsm1x1U_metadata.ktn.model", b"{", "gfx908"),
    ] {
        let path = format!("share/miopen/db/{name}");
        let (c, rule) = rules.class_of(&ClassFacts {
            path: path.as_bytes(),
            entry: EntryType::Regular,
            head,
            elf: None,
        });
        assert_eq!(c, FileClass::Gpu(arch.into()), "{path}");
        assert_eq!(rule, "class/miopen-db", "{path}");
    }
}

const OVERRIDE: &str = r#"# cmake files of this package are read at run time by a plugin loader
[[class]]
name = "site/cmake-at-runtime"
under = ["lib/cmake/"]
name_ends_with = [".cmake"]
class = "lib"
"#;

#[test]
fn rules_file_overrides_a_builtin_class() {
    let f = |rules: &ClassRules, p: &str| {
        rules.class_of(&ClassFacts {
            path: p.as_bytes(),
            entry: EntryType::Regular,
            head: b"",
            elf: None,
        })
    };
    let builtin = ClassRules::builtin();
    let user = class_rules_from_file(OVERRIDE, "site.toml").unwrap();
    let p = "lib/cmake/rocblas/rocblas-config.cmake";
    assert_eq!(f(&builtin, p), (FileClass::Dev, RuleId::new("class/dev")));
    assert_eq!(
        f(&user, p),
        (FileClass::Lib, RuleId::intern("site/cmake-at-runtime"))
    );
    // What it does not match keeps its built-in class.
    assert_eq!(f(&user, "lib/cmake/rocblas/README").0, FileClass::Dev);
}

#[test]
fn rules_command_lists_user_rules_first() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("site.toml");
    std::fs::write(&file, OVERRIDE).unwrap();
    let v = common::json(&[
        "rules",
        "--rules",
        file.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(v["schema_version"], 1);
    let classes = v["class_rules"].as_array().unwrap();
    assert_eq!(classes[0]["name"], "site/cmake-at-runtime");
    assert_eq!(classes[0]["source"], "user");
    assert_eq!(classes[0]["class"], "lib");
    assert!(classes[1..].iter().all(|c| c["source"] == "builtin"));
    assert_eq!(classes.last().unwrap()["name"], "class/out");
    for name in [
        "class/amdgpu-code-object",
        "class/offload-bundle",
        "class/miopen-db",
    ] {
        assert!(classes.iter().any(|c| c["name"] == name), "{name}");
    }
    assert!(v["kind_rules"]
        .as_array()
        .unwrap()
        .iter()
        .any(|k| k["name"] == "symlink-target" && k["kind"] == "symlink"));
    assert!(v["verdict_rules"]
        .as_array()
        .unwrap()
        .iter()
        .any(|k| k["name"] == "symlink/dangling" && k["verdict"] == "removable"));
    // Table and Markdown carry the same rows.
    for format in ["table", "markdown"] {
        let (code, out, err) = common::run(&[
            "rules",
            "--rules",
            file.to_str().unwrap(),
            "--format",
            format,
        ]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("site/cmake-at-runtime") && out.contains("user"),
            "{out}"
        );
        assert!(
            out.contains("class/lib") && out.contains("kind/elf-needed"),
            "{out}"
        );
    }
    let (code, out, _) = common::run(&["rules"]);
    assert_eq!(code, 0);
    assert!(!out.contains(" user "), "no user rows without --rules");
}

#[test]
fn malformed_rules_file_names_its_line_on_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(
        &file,
        "[[class]]\nname = \"site/tools\"\nunder = [\"share/tools/\"]\nclass = \"binary\"\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let example = common::repo().join("examples/llama-cpp-rocm.json");
    for args in [
        vec!["rules", "--rules", f],
        vec!["why", example.to_str().unwrap(), "--rules", f],
    ] {
        let (code, out, err) = common::run(&args);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(
            err.contains(&format!("{f}:4:9: unknown class `binary`")),
            "{args:?}: {err}"
        );
    }
    std::fs::write(&file, "[[class]]\nname = \"a\"\nunder = [\"x/\"\n").unwrap();
    let (code, _, err) = common::run(&["rules", "--rules", f]);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!("{f}:4:")) || err.contains(&format!("{f}:3:")),
        "{err}"
    );
    let (code, _, err) = common::run(&["rules", "--rules", "/nonexistent/rules.toml"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("cannot read rules file `/nonexistent/rules.toml`"),
        "{err}"
    );
}

/// Every entry below `dir` (files and symlinks), with its path relative to `top`.
fn walk(top: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let meta = std::fs::symlink_metadata(&p).unwrap();
        if meta.is_dir() {
            walk(top, &p, out);
        } else {
            let rel = p.strip_prefix(top).unwrap().to_string_lossy().into_owned();
            out.push((rel, p));
        }
    }
}

#[test]
fn nix_built_store_paths_with_real_device_code() {
    let test = "nix_built_store_paths_with_real_device_code";
    if !common::nix_or_skip(test) || !hipcc_or_skip(test) {
        return;
    }
    let nix_file = common::repo().join("tests/worlds/gpu.nix");
    let built = common::nix_stdout(
        "nix-build",
        &[
            nix_file.to_str().unwrap(),
            "-A",
            "rocblas-gpu",
            "-A",
            "miopen-gpu",
            "--no-out-link",
        ],
    );
    let paths: Vec<&str> = built.lines().collect();
    assert_eq!(paths.len(), 2, "{built}");
    let t = "lib/rocblas/library/TensileLibrary_Type_SS_Contraction_l_Ailk_Bjlk_Cijk_Dijk";
    let gpu = |a: &str| FileClass::Gpu(a.into());
    let want: Vec<(String, FileClass, &str)> = vec![
        ("include/rocblas.h".into(), FileClass::Dev, "class/dev"),
        ("lib/librocblas.so".into(), FileClass::Lib, "class/lib"),
        ("lib/librocblas.so.3".into(), FileClass::Lib, "class/lib"),
        (
            "lib/rocblas/library/Kernels.co".into(),
            FileClass::GpuGeneric,
            "class/offload-bundle",
        ),
        (
            "lib/rocblas/library/Kernels.so-000-gfx1030.hsaco".into(),
            gpu("gfx1030"),
            "class/gpu-arch-name",
        ),
        (
            "lib/rocblas/library/TensileLibrary.dat".into(),
            FileClass::GpuGeneric,
            "class/gpu-generic-data",
        ),
        (
            format!("{t}_fallback.dat"),
            FileClass::GpuGeneric,
            "class/tensile-fallback",
        ),
        (
            format!("{t}_fallback_gfx1030.hsaco"),
            gpu("gfx1030"),
            "class/offload-bundle",
        ),
        (
            format!("{t}_gfx1030.co"),
            gpu("gfx1030"),
            "class/amdgpu-code-object",
        ),
        (
            format!("{t}_gfx803.co"),
            gpu("gfx803"),
            "class/amdgpu-code-object",
        ),
        (
            format!("{t}_gfx906-xnack-.co"),
            gpu("gfx906"),
            "class/amdgpu-code-object",
        ),
        (
            format!("{t}_gfx90a-xnack+.co"),
            gpu("gfx90a"),
            "class/amdgpu-code-object",
        ),
        (
            "lib/rocblas/library/TensileLibrary_lazy_gfx90a.dat".into(),
            gpu("gfx90a"),
            "class/gpu-data-arch-name",
        ),
        (
            "lib/rocblas/library/TensileManifest.txt".into(),
            FileClass::Removable,
            "class/build-inventory",
        ),
        (
            "share/doc/miopen/README".into(),
            FileClass::Doc,
            "class/doc",
        ),
        (
            "share/miopen/db/gfx1030_36.HIP.fdb.txt".into(),
            gpu("gfx1030"),
            "class/miopen-db",
        ),
        (
            "share/miopen/db/gfx1030_36.db".into(),
            gpu("gfx1030"),
            "class/miopen-db",
        ),
        (
            "share/miopen/db/gfx900_56.db".into(),
            gpu("gfx900"),
            "class/miopen-db",
        ),
        (
            "share/miopen/db/gfx900_56.db.txt".into(),
            gpu("gfx900"),
            "class/miopen-db",
        ),
        (
            "share/miopen/db/gfx908.tn.model".into(),
            gpu("gfx908"),
            "class/miopen-db",
        ),
        (
            "share/miopen/db/gfx90a68.HIP.fdb.txt".into(),
            gpu("gfx90a"),
            "class/miopen-db",
        ),
        (
            "share/miopen/db/gfx90a68.db".into(),
            gpu("gfx90a"),
            "class/miopen-db",
        ),
        (
            "share/miopen/db/gfx90a68.kdb".into(),
            gpu("gfx90a"),
            "class/miopen-db",
        ),
        (
            "share/miopen/db/gfx90a_metadata.tn.model".into(),
            gpu("gfx90a"),
            "class/miopen-db",
        ),
        (
            "share/miopen/db/gfx942130.kdb".into(),
            gpu("gfx942"),
            "class/miopen-db",
        ),
    ];
    let rules = ClassRules::builtin();
    let mut got = Vec::new();
    for top in &paths {
        let mut files = Vec::new();
        walk(Path::new(top), Path::new(top), &mut files);
        for (rel, p) in files {
            let meta = std::fs::symlink_metadata(&p).unwrap();
            let (class, rule) = if meta.file_type().is_symlink() {
                let (c, r) = rules.class_of(&ClassFacts {
                    path: rel.as_bytes(),
                    entry: EntryType::Symlink,
                    head: b"",
                    elf: None,
                });
                (c, r)
            } else {
                let (c, r, _) = class_of(&rules, &rel, &read(&p));
                (c, r)
            };
            got.push((rel, class, rule.to_string()));
        }
    }
    got.sort_by(|a, b| a.0.cmp(&b.0));
    let mut want: Vec<(String, FileClass, String)> = want
        .into_iter()
        .map(|(p, c, r)| (p, c, r.to_string()))
        .collect();
    want.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(got, want);
    // The fat binary holds code for three targets (what `nixcut gpu` will count).
    let rocblas = paths
        .iter()
        .find(|p| p.ends_with("-rocblas-gpu-5.7.1"))
        .unwrap();
    let fat = read(&Path::new(rocblas).join("lib/librocblas.so.3"));
    let elf = ElfFacts::parse(&fat[..], None).unwrap();
    assert_eq!(elf.gpu.targets, vec!["gfx1030", "gfx900", "gfx90a:xnack+"]);
}

/// The `rules` JSON document, field for field (unknown fields fail the test).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct RulesDoc {
    schema_version: u32,
    rules_file: Option<String>,
    class_rules: Vec<ClassRowDoc>,
    kind_rules: Vec<KindRowDoc>,
    verdict_rules: Vec<VerdictRowDoc>,
    elf_rules: Vec<KindRowDoc>,
    data_dir_rules: Vec<DataDirRowDoc>,
    split_rules: Vec<SplitRowDoc>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct SplitRowDoc {
    name: String,
    when: String,
    action: String,
    why: String,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct DataDirRowDoc {
    name: String,
    source: String,
    library: String,
    base: String,
    dirs: Vec<String>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ClassRowDoc {
    name: String,
    source: String,
    matches: String,
    class: String,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct KindRowDoc {
    name: String,
    matches: String,
    kind: String,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct VerdictRowDoc {
    name: String,
    when: String,
    verdict: String,
    why: String,
}

#[test]
fn rules_json_is_the_documented_shape_and_lists_every_rule() {
    let (code, out, err) = common::run(&["rules", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let doc: RulesDoc = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert_eq!(doc.schema_version, 1);
    assert_eq!(doc.rules_file, None);
    let builtin = ClassRules::builtin();
    // Every built-in class rule, in order, then the class/out fallback.
    let names: Vec<&str> = doc.class_rules.iter().map(|r| r.name.as_str()).collect();
    let mut want: Vec<&str> = builtin.rules().iter().map(|r| r.id.as_str()).collect();
    want.push("class/out");
    assert_eq!(names, want);
    assert!(doc.class_rules.iter().all(|r| r.source == "builtin"));
    assert_eq!(doc.kind_rules.len(), nixcut::classify::FILE_RULES.len());
    assert_eq!(
        doc.verdict_rules.len(),
        nixcut::classify::verdict_rules().len()
    );
    assert_eq!(doc.elf_rules.len(), nixcut::classify::ELF_HIT_RULES.len());
    let dirs: Vec<&str> = doc.data_dir_rules.iter().map(|r| r.name.as_str()).collect();
    let want: Vec<String> = nixcut::classify::data_dir_rules()
        .iter()
        .map(|r| r.id.to_string())
        .collect();
    assert_eq!(dirs, want);
    // The split policy, row for row.
    let split: Vec<&str> = doc.split_rules.iter().map(|r| r.name.as_str()).collect();
    let want: Vec<&str> = nixcut::classify::split_rules()
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(split, want);
    assert!(doc
        .split_rules
        .iter()
        .all(|r| !r.when.is_empty() && !r.action.is_empty()));
    // Every class a row gives is a class spelling or says where the arch comes from.
    for r in &doc.class_rules {
        assert!(
            FileClass::parse(&r.class).is_some() || r.class.starts_with("gpu:<"),
            "{}: {}",
            r.name,
            r.class
        );
    }
}

/// `file_class` of every evidence item of `refs PATH --format json`, by file.
fn file_classes(args: &[&str]) -> std::collections::BTreeMap<String, String> {
    let v = common::json(args);
    let mut out = std::collections::BTreeMap::new();
    for p in v["paths"].as_array().unwrap() {
        for r in p["references"].as_array().unwrap() {
            for e in r["evidence"].as_array().unwrap() {
                out.insert(
                    e["file"].as_str().unwrap().to_string(),
                    e["file_class"].as_str().unwrap().to_string(),
                );
            }
        }
    }
    out
}

#[test]
fn refs_reports_file_classes_and_rules_file_overrides_them() {
    let test = "refs_reports_file_classes_and_rules_file_overrides_them";
    if !common::nix_or_skip(test) || !hipcc_or_skip(test) {
        return;
    }
    let nix_file = common::repo().join("tests/worlds/gpu.nix");
    let built = common::nix_stdout(
        "nix-build",
        &[
            nix_file.to_str().unwrap(),
            "-A",
            "rocblas-links",
            "--no-out-link",
        ],
    );
    let links = built.trim();
    let t = "lib/rocblas/library/TensileLibrary_Type_SS_Contraction_l_Ailk_Bjlk_Cijk_Dijk";
    let classes = file_classes(&["refs", links, "--format", "json", "--no-cache"]);
    let want = |file: &str, class: &str| (file.to_string(), class.to_string());
    for (file, class) in [
        want("lib/cmake/rocblas/rocblas-config.cmake", "dev"),
        want(&format!("{t}_gfx803.co"), "gpu:gfx803"),
        want(&format!("{t}_gfx906-xnack-.co"), "gpu:gfx906"),
        want(&format!("{t}_gfx90a-xnack+.co"), "gpu:gfx90a"),
        want(&format!("{t}_fallback_gfx1030.hsaco"), "gpu:gfx1030"),
        want(&format!("{t}_fallback.dat"), "gpu-generic"),
        want("lib/rocblas/library/TensileLibrary.dat", "gpu-generic"),
        want("lib/rocblas/library/TensileManifest.txt", "removable"),
        // A symlink is classed by its place: no arch in the name, under lib/.
        want("lib/rocblas/library/Kernels.co", "lib"),
    ] {
        assert_eq!(
            classes.get(&file).map(String::as_str),
            Some(class.as_str()),
            "{file}: {classes:#?}"
        );
    }
    // A rules file moves the cmake file to lib and the manifest to gpu-generic.
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("site.toml");
    std::fs::write(
        &rules,
        format!(
            "{OVERRIDE}\n[[class]]\nname = \"site/manifest-is-data\"\nname_is = [\"TensileManifest.txt\"]\nclass = \"gpu-generic\"\n"
        ),
    )
    .unwrap();
    let over = file_classes(&[
        "refs",
        links,
        "--format",
        "json",
        "--no-cache",
        "--rules",
        rules.to_str().unwrap(),
    ]);
    assert_eq!(over["lib/cmake/rocblas/rocblas-config.cmake"], "lib");
    assert_eq!(
        over["lib/rocblas/library/TensileManifest.txt"],
        "gpu-generic"
    );
    assert_eq!(over[&format!("{t}_gfx803.co")], "gpu:gfx803");
}

#[test]
fn rules_file_that_never_ends_is_refused_not_read_whole() {
    let (code, _, err) = common::run(&["rules", "--rules", "/dev/zero"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("rules file `/dev/zero` is larger than 16 MiB"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = common::run(&["rules", "--rules", dir.path().to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read rules file"), "{err}");
    let bin = dir.path().join("bin.toml");
    std::fs::write(&bin, b"[[class]]\nname = \"\xff\"\n").unwrap();
    let (code, _, err) = common::run(&["rules", "--rules", bin.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("is not UTF-8 text"), "{err}");
}
