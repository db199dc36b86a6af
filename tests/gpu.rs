//! `nixcut gpu`: per-architecture bytes of real device code, checked against an
//! independent reader (`tests/gpu_reader.py`), on store paths built by real Nix:
//! `tests/worlds/gpu.nix`'s `gpu-acct` (Debian's hipcc: a fat binary for five targets,
//! bare code objects, bundles) and `cuda-wheel` (PyPI's nvidia-nvjpeg-cu12 unpacked: a
//! real CUDA fat binary), plus CCOB bundles compressed by this test and the ROCm world
//! for `--gpu-targets`.

mod common;

use common::{nixcut_archs, reader_archs};

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;

const NVJPEG: &str = "nvidia-nvjpeg-cu12==12.4.0.76";

fn gpu_nix() -> String {
    common::repo()
        .join("tests/worlds/gpu.nix")
        .to_string_lossy()
        .into_owned()
}

/// `gpu-acct`, built once per test binary.
fn gpu_acct(test: &str) -> Option<&'static str> {
    static P: OnceLock<String> = OnceLock::new();
    if !common::nix_or_skip(test) || !common::tool_or_skip(test, "hipcc", "hipcc") {
        return None;
    }
    Some(P.get_or_init(|| {
        common::nix_stdout(
            "nix-build",
            &[&gpu_nix(), "-A", "gpu-acct", "--no-out-link"],
        )
        .trim()
        .to_string()
    }))
}

/// `nixcut gpu ARGS --format json`, checked to add up.
fn gpu_json(args: &[&str]) -> Value {
    let mut all = vec!["gpu"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json", "--no-cache"]);
    let v = common::json(&all);
    let sum: u64 = [
        "gpu_bytes",
        "generic_bytes",
        "host_bytes",
        "unscanned_bytes",
    ]
    .iter()
    .map(|k| v[k].as_u64().unwrap())
    .sum();
    assert_eq!(
        sum,
        v["closure_size"].as_u64().unwrap(),
        "parts add up: {v}"
    );
    let archs: u64 = v["archs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(archs, v["gpu_bytes"].as_u64().unwrap());
    v
}

fn arch<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["archs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["arch"] == name)
        .unwrap_or_else(|| panic!("no arch {name} in {v}"))
}

fn nar_size(path: &str) -> u64 {
    let v: Value =
        serde_json::from_str(&common::nix_stdout("nix", &["path-info", "--json", path])).unwrap();
    let e = match &v {
        Value::Array(a) => &a[0],
        Value::Object(o) => o.values().next().unwrap(),
        _ => panic!("{v}"),
    };
    e["narSize"].as_u64().unwrap()
}

#[test]
fn real_hipcc_code_per_arch_bytes_equal_an_independent_reader() {
    let Some(p) = gpu_acct("real_hipcc_code_per_arch_bytes_equal_an_independent_reader") else {
        return;
    };
    let v = gpu_json(&[p]);
    let ours = nixcut_archs(&v);
    let theirs = reader_archs(p);
    eprintln!("nixcut: {ours:?}\nreader: {theirs:?}");
    assert_eq!(ours, theirs);
    // Five fat-binary targets, two bare objects, a bundle for gfx900 + gfx1030, one for
    // gfx1010: eight base architectures; gfx90a's xnack variants are one row.
    assert_eq!(ours.len(), 8, "{ours:?}");
    assert_eq!(
        arch(&v, "gfx90a")["targets"],
        serde_json::json!(["gfx90a:xnack+", "gfx90a:xnack-"])
    );
    assert!(ours["gfx90a"].1 > 0 && ours["gfx908"].0 > 0 && ours["gfx1010"].0 > 0);
    // gfx1030 is in the fat binary and in the two-target bundle.
    assert_eq!(arch(&v, "gfx1030")["files"], 2);
    assert_eq!(v["closure_size"].as_u64().unwrap(), nar_size(p));
    assert_eq!(v["paths"][0]["fat_binaries"], 2);
}

#[test]
fn real_cuda_library_from_a_pypi_wheel() {
    let test = "real_cuda_library_from_a_pypi_wheel";
    if !common::nix_or_skip(test) {
        return;
    }
    let Some(wheel) = common::pypi_wheel(test, NVJPEG) else {
        return;
    };
    let p = common::nix_stdout(
        "nix-build",
        &[
            &gpu_nix(),
            "-A",
            "cuda-wheel",
            "--arg",
            "nvjpegWheel",
            wheel.to_str().unwrap(),
            "--no-out-link",
        ],
    );
    let p = p.trim();
    let v = gpu_json(&[p]);
    let ours = nixcut_archs(&v);
    let theirs = reader_archs(p);
    assert_eq!(ours, theirs);
    assert!(
        ours.len() >= 10,
        "nvjpeg 12.4 carries sm_50 … sm_121: {ours:?}"
    );
    assert!(ours.keys().all(|a| a.starts_with("sm_")));
    assert!(ours.values().all(|(files, fat)| *files == 0 && *fat > 0));
    assert_eq!(arch(&v, "sm_86")["vendor"], "nvidia");
    // Only sm_86: an estimate, the closure minus every other capability's entries, and
    // nixpkgs' cudaCapabilities as the remedy.
    let after = gpu_json(&[p, "--gpu-targets", "8.6"]);
    let others: u64 = ours
        .iter()
        .filter(|(a, _)| *a != "sm_86")
        .map(|(_, (_, fat))| fat)
        .sum();
    assert_eq!(after["estimated"], true);
    assert_eq!(
        after["closure_size_after"].as_u64().unwrap(),
        v["closure_size"].as_u64().unwrap() - others
    );
    assert_eq!(after["kept"], serde_json::json!(["sm_86"]));
    assert_eq!(after["remedies"][0]["option"], "cudaCapabilities");
    assert_eq!(after["remedies"][0]["value"], serde_json::json!(["8.6"]));
    assert!(after["remedies"][0]["nix"]
        .as_str()
        .unwrap()
        .contains("cudaCapabilities = [ \"8.6\" ]"));
}

/// `nix-store --add` a directory holding one file.
fn add_to_store(dir: &Path, name: &str, file: &str, bytes: &[u8]) -> String {
    let d = dir.join(name);
    std::fs::create_dir_all(d.join("lib")).unwrap();
    std::fs::write(d.join("lib").join(file), bytes).unwrap();
    common::nix_stdout("nix-store", &["--add", d.to_str().unwrap()])
        .trim()
        .to_string()
}

#[test]
fn ccob_bundles_give_the_per_target_bytes_of_the_bundle_they_came_from() {
    let test = "ccob_bundles_give_the_per_target_bytes_of_the_bundle_they_came_from";
    let Some(p) = gpu_acct(test) else { return };
    // The real two-target bundle hipcc wrote, and CCOBs of it made here.
    let plain = std::fs::read(Path::new(p).join("lib/kernels/pair.co")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let code = |v: &Value| -> BTreeMap<String, u64> {
        v["archs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a["arch"].as_str().unwrap().to_string(),
                    a["code_bytes"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let base = add_to_store(tmp.path(), "ccob-plain", "pair.co", &plain);
    let want = code(&gpu_json(&[&base]));
    let plain_v = gpu_json(&[&base]);
    assert_eq!(want.len(), 2, "{want:?}");
    for (a, bytes) in &want {
        assert_eq!(*bytes, arch(&plain_v, a)["elf_bytes"].as_u64().unwrap());
    }
    for version in [2u16, 3] {
        for (method, mname) in [(0u16, "zlib"), (1, "zstd")] {
            let file = common::ccob(version, method, &plain);
            let name = format!("ccob-v{version}-{mname}");
            let sp = add_to_store(tmp.path(), &name, "pair.co", &file);
            let v = gpu_json(&[&sp]);
            assert_eq!(code(&v), want, "{name}: {v}");
            // What the closure carries: the compressed bytes, shared out.
            let stored: u64 = v["archs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["elf_bytes"].as_u64().unwrap())
                .sum();
            assert!(
                stored > 0 && stored <= file.len() as u64,
                "{name}: {stored}"
            );
            assert!(v["warnings"].as_array().unwrap().is_empty(), "{name}: {v}");
        }
    }
}

#[test]
fn gpu_targets_estimate_a_fat_binary_as_the_closure_minus_other_targets() {
    let test = "gpu_targets_estimate_a_fat_binary_as_the_closure_minus_other_targets";
    let Some(p) = gpu_acct(test) else { return };
    let v = gpu_json(&[p]);
    // Keep every per-architecture file's target, drop three of the fat binary's.
    let keep = "gfx1030,gfx908,gfx1031,gfx1010,gfx900";
    let after = gpu_json(&[p, "--gpu-targets", keep]);
    let dropped: u64 = ["gfx803", "gfx906", "gfx90a"]
        .iter()
        .map(|a| arch(&v, a)["bytes"].as_u64().unwrap())
        .sum();
    assert!(dropped > 0);
    assert_eq!(after["estimated"], true);
    assert_eq!(
        after["closure_size_after"].as_u64().unwrap(),
        v["closure_size"].as_u64().unwrap() - dropped
    );
    assert_eq!(
        after["dropped"],
        serde_json::json!(["gfx90a", "gfx803", "gfx906"])
    );
    assert_eq!(after["changed"][0]["objects_dropped"], 4, "{after}");
    assert_eq!(after["remedies"][0]["option"], "gpuTargets");
    // A target the closure does not have is said.
    let none = gpu_json(&[p, "--gpu-targets", "gfx1100"]);
    assert!(none["warnings"]
        .to_string()
        .contains("no code or data for gfx1100"));
}

#[test]
fn gpu_targets_drop_the_other_tensile_groups_from_the_rocm_world() {
    if !common::nix_or_skip("gpu_targets_drop_the_other_tensile_groups_from_the_rocm_world") {
        return;
    }
    let w = common::rocm_world();
    let v = gpu_json(&[&w.root]);
    let sizes = common::nix_closure_sizes(&w.root);
    assert_eq!(v["closure_size"].as_u64().unwrap(), sizes[&w.root]);
    let after = gpu_json(&[&w.root, "--gpu-targets", "gfx1030"]);
    let removed: Vec<&str> = after["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    for g in ["gfx80", "gfx90", "gfx94", "gfx11"] {
        let p = w.path(&format!("rocblas-tensile-{g}"));
        assert!(removed.contains(&p), "{g} group leaves: {removed:?}");
    }
    // gfx1030's own group stays, smaller; the arch-generic fallbacks stay whole.
    assert!(!removed.contains(&w.path("rocblas-tensile-gfx10")));
    assert!(!removed.contains(&w.path("rocblas-tensile-fallbacks")));
    assert_eq!(removed.len(), 4, "{removed:?}");
    let changed = after["changed"].as_array().unwrap();
    let gfx10 = changed
        .iter()
        .find(|c| c["path"] == w.path("rocblas-tensile-gfx10"))
        .expect("gfx10 group shrinks");
    assert_eq!(gfx10["estimated"], false);
    // The closure after is the closure less what left and what shrank.
    let left: u64 = removed.iter().map(|p| nar_size(p)).sum();
    let shrank: u64 = changed
        .iter()
        .map(|c| c["size_before"].as_u64().unwrap() - c["size_after"].as_u64().unwrap())
        .sum();
    assert_eq!(
        after["closure_size_after"].as_u64().unwrap(),
        v["closure_size"].as_u64().unwrap() - left - shrank
    );
    assert_eq!(
        after["path_count_after"].as_u64().unwrap(),
        v["path_count"].as_u64().unwrap() - 4
    );
    let rocblas = after["remedies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["packages"] == serde_json::json!(["rocblas"]))
        .expect("a rocblas remedy");
    assert_eq!(
        rocblas["nix"],
        "rocmPackages.rocblas.override { gpuTargets = [ \"gfx1030\" ]; }"
    );
    // Every table format shows it; dot says it has no picture.
    let (code, table, _) = common::run(&["gpu", &w.root, "--gpu-targets", "gfx1030"]);
    assert_eq!(code, 0);
    assert!(table.contains("gfx90a (dropped)") && table.contains("leaves the closure"));
    let (code, md, _) = common::run(&["gpu", &w.root, "--format", "markdown"]);
    assert_eq!(code, 0);
    assert!(md.contains("| gfx90a |"), "{md}");
    let (code, html, _) = common::run(&["gpu", &w.root, "--format", "html"]);
    assert_eq!(code, 0);
    assert!(html.contains("data-arch=\"gfx90a\""), "{html}");
    assert!(!html
        .replace("http://www.w3.org/2000/svg", "")
        .contains("http"));
    let (code, _, err) = common::run(&["gpu", &w.root, "--format", "dot"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn why_shows_the_gpu_share_of_paths_with_device_code() {
    if !common::nix_or_skip("why_shows_the_gpu_share_of_paths_with_device_code") {
        return;
    }
    let w = common::rocm_world();
    let v = common::json(&["why", &w.root, "--format", "json", "--no-cache"]);
    let row = |attr: &str| {
        v["paths"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["path"] == w.path(attr))
            .unwrap_or_else(|| panic!("{attr} in why"))
            .clone()
    };
    let gfx90 = row("rocblas-tensile-gfx90");
    let g = &gfx90["gpu"];
    assert!(g["bytes"].as_u64().unwrap() * 10 > gfx90["nar_size"].as_u64().unwrap() * 9);
    assert!(row("glibc").get("gpu").is_none());
    // Every path's GPU bytes, per architecture, are what `gpu` counts in it; no other
    // path has any.
    let report = gpu_json(&[&w.root]);
    let counted = common::gpu_path_archs(&report);
    let gpu_bytes: BTreeMap<&str, u64> = report["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["path"].as_str().unwrap(),
                p["gpu_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    for p in v["paths"].as_array().unwrap() {
        let path = p["path"].as_str().unwrap();
        match (p.get("gpu"), counted.get(path)) {
            (Some(g), Some(archs)) => {
                assert_eq!(&g["archs"], *archs, "{path}");
                assert_eq!(g["bytes"], gpu_bytes[path], "{path}");
            }
            (None, None) => {}
            (g, archs) => panic!("{path}: why says {g:?}, gpu says {archs:?}"),
        }
    }
    // The table's share: the GPU bytes of the NAR, rounded, and the two largest
    // architectures first.
    let mut archs: Vec<(&String, u64)> = g["archs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(a, b)| (a, b.as_u64().unwrap()))
        .collect();
    archs.sort_by_key(|a| std::cmp::Reverse(a.1));
    let share = (g["bytes"].as_u64().unwrap() as f64 * 100.0
        / gfx90["nar_size"].as_u64().unwrap() as f64)
        .round();
    let want = format!(
        "GPU {share}% {},{},+{} ·",
        archs[0].0,
        archs[1].0,
        archs.len() - 2
    );
    let (code, table, _) = common::run(&["why", &w.root, "--top", "8"]);
    assert_eq!(code, 0);
    let line = table
        .lines()
        .find(|l| l.contains("rocblas-tensile-gfx90"))
        .unwrap();
    assert!(line.contains(&want), "{line}: want {want}");
}

#[test]
fn the_html_bars_are_proportional_to_the_bytes() {
    let Some(p) = gpu_acct("the_html_bars_are_proportional_to_the_bytes") else {
        return;
    };
    let v = gpu_json(&[p]);
    let (code, html, err) = common::run(&["gpu", p, "--format", "html", "--no-cache"]);
    assert_eq!(code, 0, "{err}");
    // Each bar: <g data-arch="A" data-kind="K">…<rect … width="W" …/></g>.
    let mut width: BTreeMap<String, f64> = BTreeMap::new();
    for g in html.split("<g data-arch=\"").skip(1) {
        let arch = g.split('"').next().unwrap().to_string();
        let w: f64 = g
            .split("width=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .and_then(|x| x.parse().ok())
            .unwrap();
        *width.entry(arch).or_default() += w;
    }
    let max = v["archs"][0]["bytes"].as_u64().unwrap() as f64;
    let wmax = width[v["archs"][0]["arch"].as_str().unwrap()];
    for a in v["archs"].as_array().unwrap() {
        let want = a["bytes"].as_u64().unwrap() as f64 / max;
        let got = width[a["arch"].as_str().unwrap()] / wmax;
        assert!((want - got).abs() < 0.005, "{}: {want} vs {got}", a["arch"]);
    }
    assert!(!html
        .replace("http://www.w3.org/2000/svg", "")
        .contains("http"));
}

#[test]
fn without_files_the_bytes_are_not_split_and_it_says_so() {
    // examples/ holds path-info JSON only: no files to read.
    let ex = common::repo().join("examples/llama-cpp-rocm.json");
    let v = gpu_json(&[ex.to_str().unwrap()]);
    assert_eq!(v["gpu_bytes"], 0);
    assert_eq!(
        v["unscanned_bytes"].as_u64().unwrap(),
        v["closure_size"].as_u64().unwrap()
    );
    assert!(v["warnings"].to_string().contains("not available"));
}

/// Issue 19, item 14: `--gpu-targets gfx1030` on a closure with CUDA code proposed
/// `cudaCapabilities = [  ]`, and `sm_90` on a ROCm closure `gpuTargets = [  ]`. A
/// remedy never lists no targets: that code would all go, and a warning says so.
#[test]
fn no_remedy_lists_no_targets() {
    if !common::nix_or_skip("no_remedy_lists_no_targets") {
        return;
    }
    let empty_remedy = |v: &Value| {
        v["remedies"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["value"].as_array().is_none_or(|a| a.is_empty()))
            .cloned()
    };
    let cuda = common::cuda_world();
    let v = gpu_json(&[&cuda.root, "--gpu-targets", "gfx1030"]);
    assert!(
        v["gpu_bytes"].as_u64().unwrap() > 0,
        "the CUDA world has CUDA code: {v}"
    );
    assert_eq!(empty_remedy(&v), None, "{v}");
    assert!(!v.to_string().contains("cudaCapabilities = [  ]"), "{v}");
    assert!(
        v["warnings"]
            .to_string()
            .contains("names no CUDA architecture"),
        "{v}"
    );
    let rocm = common::rocm_world();
    let v = gpu_json(&[&rocm.root, "--gpu-targets", "sm_90"]);
    assert_eq!(empty_remedy(&v), None, "{v}");
    assert!(!v.to_string().contains("gpuTargets = [  ]"), "{v}");
    let (code, table, _) = common::run(&["gpu", &rocm.root, "--gpu-targets", "sm_90"]);
    assert_eq!(code, 0);
    assert!(!table.contains("[  ]"), "{table}");
}

/// Issue 23: a typo in `--gpu-targets` (`gfx130`) was accepted, dropped gfx1030 and
/// proposed `gpuTargets = [ "gfx130" ]`. An unknown processor is exit 2, before any
/// input is read, naming the nearest known ones.
#[test]
fn an_unknown_gpu_target_is_an_error_naming_the_nearest() {
    let cache = common::repo().join("examples/rocm-world-cache");
    let cache = cache.to_str().unwrap();
    for (cmd, t, near) in [
        (["gpu", cache], "gfx130", "gfx1030"),
        (["gpu", cache], "gfx1030,sm_91", "sm_90"),
        (["split", "rocblas"], "gfx10300", "gfx1030"),
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--for", cache]);
        if cmd[0] == "gpu" {
            args.truncate(2);
        }
        args.extend(["--gpu-targets", t]);
        let (code, out, err) = common::run(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(
            err.contains("not a GPU architecture") && err.contains(near),
            "{err}"
        );
        assert!(out.is_empty(), "{out}");
    }
    // A nonexistent input is not read first: the target is refused before it.
    let (code, _, err) = common::run(&["gpu", "/nonexistent", "--gpu-targets", "gfx130"]);
    assert_eq!(code, 2);
    assert!(err.contains("gfx130"), "{err}");
    let (code, _, err) = common::run(&["gpu", cache, "--gpu-targets", ","]);
    assert_eq!(code, 2);
    assert!(err.contains("names no target"), "{err}");
}

/// Issue 23: without files, `gpu --gpu-targets` said `0 B less … exact` and "the closure
/// holds no code or data for gfx1030", though it had read nothing.
#[test]
fn without_files_gpu_targets_say_nothing_was_read() {
    let ex = common::repo().join("examples/llama-cpp-rocm.json");
    let (code, out, err) = common::run(&["gpu", ex.to_str().unwrap(), "--gpu-targets", "gfx1030"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("exact"), "{out}");
    assert!(out.contains("no file of the closure was read"), "{out}");
    assert!(!err.contains("holds no code or data"), "{err}");
}
