//! The real ROCm stack: Debian 13's rocBLAS 5.5.1 (with its 2.2 GB of Tensile data),
//! rocSOLVER, hipBLAS, rocRAND and RCCL as a Nix closure (`tests/worlds/trixie.nix`),
//! linked by a consumer compiled with hipcc. What rocBLAS opens for one processor is
//! worked out here from its loader source (`docs/rocm-runtime.md`, "The real Debian 13
//! stack"), independently of nixcut, and every command must agree with it and with each
//! other.
//!
//! Needs Nix, hipcc, patchelf and the Debian packages (downloaded once into
//! `target/debian-trixie/`); says SKIP without them, and fails instead under
//! `NIXCUT_REQUIRE_NIX=1`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{files_below, json, trixie_world};
use serde_json::Value;

/// The processors rocBLAS 5.5.1 is built for in Debian 13 (debian/rules' AMDGPU_TARGETS).
const TARGETS: &[&str] = &[
    "gfx803", "gfx900", "gfx906", "gfx908", "gfx90a", "gfx1010", "gfx1030", "gfx1100", "gfx1101",
    "gfx1102",
];

/// rocBLAS' library version, the directory Debian's patch 0006 inserts.
const ROCBLAS_VERSION_STRING: &str = "2.47.0";

/// The files rocBLAS opens on processor `p` when loaded from directory `lib`, as its
/// loader does it (`tensile_host.cpp` `initialize()` of rocBLAS 5.5.1 with Debian's
/// patch 0006): the first existing of `<lib>/rocblas/<version>/library`,
/// `<lib>/../../Tensile/library`, `<lib>library` (no slash, as the source has it), else
/// `<lib>/rocblas/library` untested; then `<dir>/<p>` if it exists; the master is the
/// first existing of `TensileLibrary_lazy_<p>.dat`, `TensileLibrary_<p>.dat`,
/// `TensileLibrary.dat` (none: rocBLAS aborts, `None`); a master that is not the lazy
/// one loads every `<dir>/*<p>*co`.
fn rocblas_opens(lib: &Path, p: &str) -> Option<BTreeSet<PathBuf>> {
    let candidates = [
        lib.join(format!("rocblas/{ROCBLAS_VERSION_STRING}/library")),
        lib.join("../../Tensile/library"),
        PathBuf::from(format!("{}library", lib.display())),
    ];
    let mut dir = candidates
        .into_iter()
        .find(|d| d.exists())
        .unwrap_or_else(|| lib.join("rocblas/library"));
    if dir.join(p).exists() {
        dir = dir.join(p);
    }
    let masters = [
        format!("TensileLibrary_lazy_{p}.dat"),
        format!("TensileLibrary_{p}.dat"),
        "TensileLibrary.dat".to_string(),
    ];
    let master = masters.iter().map(|m| dir.join(m)).find(|m| m.exists())?;
    assert!(
        !master.to_string_lossy().contains("_lazy_"),
        "Debian builds rocBLAS without lazy loading; this oracle does not model it"
    );
    let mut out = BTreeSet::from([master]);
    // glob("<dir>/*<p>*co")
    for e in std::fs::read_dir(&dir).ok()?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.contains(p) && name.ends_with("co") {
            out.insert(dir.join(name));
        }
    }
    Some(out)
}

/// `refs --closure ROOT --explain FILE` as JSON: (reached, processors, class).
fn explain(root: &str, file: &str) -> (bool, BTreeSet<String>, String, Value) {
    let r = json(&[
        "refs",
        "--closure",
        root,
        "--explain",
        file,
        "--format",
        "json",
    ]);
    let e = r["explain"].clone();
    let procs = e["processors"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    (
        e["reached"] == true,
        procs,
        e["class"].as_str().unwrap_or("").to_string(),
        e,
    )
}

#[test]
fn explain_reaches_the_real_tensile_files_with_the_strings_that_lead_there() {
    let test = "explain_reaches_the_real_tensile_files_with_the_strings_that_lead_there";
    let Some(w) = trixie_world(test, "") else {
        return;
    };
    let lib = format!("{}/lib/rocblas/2.47.0/library", w.path("rocblas"));
    let (reached, procs, class, e) = explain(&w.root, &format!("{lib}/TensileLibrary.dat"));
    assert!(reached && procs.is_empty(), "{e}");
    assert_eq!(class, "gpu-generic", "{e}");
    let last = e["chain"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["via"], "data-string", "{e}");
    assert_eq!(
        last["detail"], "/rocblas/2.47.0/library + /TensileLibrary.dat",
        "{e}"
    );
    for f in ["TensileLibrary_gfx1030.co", "Kernels.so-000-gfx1030.hsaco"] {
        let (reached, procs, class, e) = explain(&w.root, &format!("{lib}/{f}"));
        assert!(reached, "{f}: {e}");
        assert_eq!(procs, BTreeSet::from(["gfx1030".to_string()]), "{f}: {e}");
        assert_eq!(class, "gpu:gfx1030", "{f}: {e}");
        let chain = e["chain"].as_array().unwrap();
        let last = chain.last().unwrap();
        assert_eq!(last["via"], "processor", "{e}");
        let detail = last["detail"].as_str().unwrap();
        assert!(
            detail.contains("/rocblas/2.47.0/library") && detail.contains("*gfx1030*co"),
            "{detail}"
        );
        // Through the consumer's DT_NEEDED librocblas.
        assert!(chain
            .iter()
            .any(|s| s["via"] == "needed" && s["file"].as_str().unwrap().contains("librocblas")));
    }
    // The gfx908 code objects: opened only on a gfx908, never removable.
    for f in ["TensileLibrary_gfx908.co", "Kernels.so-000-gfx908.hsaco"] {
        let (reached, procs, class, e) = explain(&w.root, &format!("{lib}/{f}"));
        assert!(reached, "{e}");
        assert_eq!(procs, BTreeSet::from(["gfx908".to_string()]), "{e}");
        assert_eq!(class, "gpu:gfx908", "{e}");
    }
    let table = common::run(&[
        "refs",
        "--closure",
        &w.root,
        "--explain",
        &format!("{lib}/TensileLibrary_gfx908.co"),
    ]);
    let words = table.1.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("(opened only on gfx908, class gpu:gfx908)"),
        "{}",
        table.1
    );
}

#[test]
fn every_processor_opens_what_the_loader_source_says() {
    let test = "every_processor_opens_what_the_loader_source_says";
    let Some(w) = trixie_world(test, "") else {
        return;
    };
    let lib = PathBuf::from(format!("{}/lib", w.path("rocblas")));
    let mut expected: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    for p in TARGETS {
        let opened = rocblas_opens(&lib, p).expect("Debian's layout has a master");
        for f in opened {
            expected.entry(f).or_default().insert(p.to_string());
        }
    }
    let data = lib.join("rocblas/2.47.0/library");
    let files = files_below(&data);
    assert_eq!(files.len(), 21, "{files:?}");
    for f in files {
        let on = expected.get(&f).cloned().unwrap_or_default();
        let (reached, procs, _, e) = explain(&w.root, f.to_str().unwrap());
        if on.is_empty() {
            assert!(
                !reached,
                "{}: the loader opens it on no processor: {e}",
                f.display()
            );
        } else if on.len() == TARGETS.len() {
            assert!(
                reached && procs.is_empty(),
                "{}: every processor: {e}",
                f.display()
            );
        } else {
            assert!(reached, "{}: {e}", f.display());
            assert_eq!(procs, on, "{}: {e}", f.display());
        }
    }
}

#[test]
fn a_renamed_data_directory_is_opened_by_nothing() {
    let test = "a_renamed_data_directory_is_opened_by_nothing";
    let Some(w) = trixie_world(test, "renamed-data") else {
        return;
    };
    let lib = PathBuf::from(format!("{}/lib", w.path("rocblas")));
    // The loader aborts: no master where it looks.
    assert_eq!(rocblas_opens(&lib, "gfx1030"), None);
    let moved = lib.join("rocblas/2.47.0/library.moved");
    for f in ["TensileLibrary.dat", "TensileLibrary_gfx1030.co"] {
        let (reached, _, _, e) = explain(&w.root, moved.join(f).to_str().unwrap());
        assert!(!reached, "{f}: {e}");
    }
}

/// The split the seed asked for, on the real rocBLAS: rebuilt, the consumer's closure is
/// the predicted one to the byte, and `out` keeps exactly what the loader source says a
/// gfx1030 opens.
#[test]
fn split_for_gfx1030_keeps_what_a_gfx1030_opens_and_the_closure_is_predicted() {
    let test = "split_for_gfx1030_keeps_what_a_gfx1030_opens_and_the_closure_is_predicted";
    let Some(w) = trixie_world(test, "") else {
        return;
    };
    let r = json(&[
        "split",
        w.path("rocblas"),
        "--for",
        &w.root,
        "--gpu-targets",
        "gfx1030",
        "--format",
        "json",
    ]);
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = dir.path().join("plan.json");
    std::fs::write(&plan, r.to_string()).expect("write the plan");
    let debs = common::trixie_debs(test).expect("the world was built from them");
    let debs = ["--argstr", "debs", debs.to_str().unwrap()];
    let build = |attr: &str| common::build_split_applied(&plan, &debs, attr);
    let out = build("rocblas.out");
    let kept: BTreeSet<PathBuf> =
        files_below(&PathBuf::from(&out).join("lib/rocblas/2.47.0/library"))
            .into_iter()
            .collect();
    let rule: BTreeSet<PathBuf> = rocblas_opens(&PathBuf::from(&out).join("lib"), "gfx1030")
        .expect("the master stays in out");
    assert_eq!(kept, rule, "out keeps exactly what a gfx1030 opens");
    let consumer = build("llama-server-hip");
    let real = common::closure_size(&consumer);
    let predicted = r["for"]["closure_size_after"].as_u64().expect("after");
    assert_eq!(real, predicted, "rebuilt consumer {consumer}");
    // The generated code under the stdenv model (issue 33): rocBLAS rebuilt with
    // gpuTargets = [ "gfx1030" ] through override (Debian's files need nothing else).
    let code = r["nix"].as_str().expect("nix");
    assert!(
        code.contains("rocblas.override { gpuTargets = [ \"gfx1030\" ]; }"),
        "{code}"
    );
    let code = |attr: &str| common::build_split_code(dir.path(), &r, &debs, attr);
    let out = code("rocblas.out");
    let kept_code: BTreeSet<PathBuf> =
        files_below(&PathBuf::from(&out).join("lib/rocblas/2.47.0/library"))
            .into_iter()
            .collect();
    let relative = |set: &BTreeSet<PathBuf>, root: &str| -> BTreeSet<PathBuf> {
        set.iter()
            .filter_map(|p| p.strip_prefix(root).ok().map(PathBuf::from))
            .collect()
    };
    assert_eq!(
        relative(&kept_code, &out),
        relative(&kept, &build("rocblas.out")),
        "the stdenv model keeps what the plan keeps"
    );
    let consumer = code("llama-server-hip");
    assert_eq!(
        common::closure_size(&consumer),
        predicted,
        "rebuilt consumer {consumer} under the stdenv model"
    );
}

/// Bytes per architecture of every GPU library of the stack, in files and in fat
/// binaries, as nixcut's `gpu` counts them per store path and as an independent reader
/// (tests/gpu_reader.py, written from the formats alone) reads each path.
#[test]
fn bytes_per_architecture_match_an_independent_reader() {
    let test = "bytes_per_architecture_match_an_independent_reader";
    let Some(w) = trixie_world(test, "") else {
        return;
    };
    let g = json(&["gpu", &w.root, "--format", "json"]);
    let per_path = common::gpu_path_archs(&g);
    for attr in [
        "rocblas",
        "rocsolver",
        "rccl",
        "rocrand",
        "llama-server-hip",
    ] {
        let p = w.path(attr);
        let theirs = common::reader_archs(p);
        let ours: BTreeMap<String, u64> = per_path[p]
            .as_object()
            .unwrap()
            .iter()
            .map(|(a, b)| (a.clone(), b.as_u64().unwrap()))
            .collect();
        let summed: BTreeMap<String, u64> = theirs
            .iter()
            .map(|(a, (files, fat))| (a.clone(), files + fat))
            .collect();
        assert_eq!(ours, summed, "{attr}");
        let expected: BTreeSet<&str> = if attr == "llama-server-hip" {
            BTreeSet::from(["gfx1030", "gfx908"])
        } else {
            TARGETS.iter().copied().collect()
        };
        let got: BTreeSet<&str> = theirs.keys().map(String::as_str).collect();
        assert_eq!(got, expected, "{attr}");
        // rocSOLVER, RCCL and rocRAND keep all their device code in fat binaries.
        if attr != "rocblas" {
            assert!(
                theirs.values().all(|(files, fat)| *files == 0 && *fat > 0),
                "{attr}: {theirs:?}"
            );
        }
    }
    // The seed's figure: gfx90a in rocBLAS is 416.5 MiB of files and 40.8 MiB of fat
    // binary (457.3 MiB); no other path has gfx90a files.
    let (files, fat) = common::reader_archs(w.path("rocblas"))["gfx90a"];
    assert_eq!(files, 436_745_712);
    assert!(fat > 40 << 20 && fat < 41 << 20, "{fat}");
    assert_eq!(common::nixcut_archs(&g)["gfx90a"].0, files);
}
