//! One answer: for every file of every path of a closure, the commands agree about
//! whether the consumer opens it and on which processor. `refs --closure --explain`
//! gives the answer per file (reached; opened on every processor or only on some);
//! the file's class says which architecture it serves; `gpu` counts each
//! architecture's files; `split --gpu-targets` moves the files no kept processor
//! opens. On every test world they must agree; on a broken package (rocBLAS' data
//! directory renamed, so rocBLAS opens none of its Tensile files) they must not:
//! `gpu` and `split` still count those files per architecture by content and name,
//! while the consumer opens none of them, and the property says so.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{
    cuda_world, entries_below, json, nix_or_skip, nix_stdout, rocm_world, trixie_world, World,
};
use serde_json::Value;

/// What `--explain` says of one file.
#[derive(Debug, Clone)]
struct Answer {
    reached: bool,
    processors: BTreeSet<String>,
    class: String,
    size: u64,
}

/// The answer for every regular file of every path of the root's closure, and for every
/// symlink (the answer for what it resolves to; `size`: its target's length, what it
/// adds to a NAR).
fn answers(w: &World) -> (BTreeMap<PathBuf, Answer>, BTreeMap<PathBuf, Answer>) {
    let closure = nix_stdout("nix-store", &["-qR", &w.root]);
    let mut files = BTreeMap::new();
    let mut links = BTreeMap::new();
    for p in closure.lines() {
        let (regular, symlinks) = entries_below(Path::new(p));
        for (f, is_link) in regular
            .into_iter()
            .map(|f| (f, false))
            .chain(symlinks.into_iter().map(|l| (l, true)))
        {
            let r = json(&[
                "refs",
                "--closure",
                &w.root,
                "--explain",
                f.to_str().expect("utf-8 store path"),
                "--format",
                "json",
            ]);
            let e = &r["explain"];
            let a = Answer {
                reached: e["reached"] == true,
                processors: e["processors"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|p| p.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default(),
                class: e["class"].as_str().unwrap_or("").to_string(),
                size: if is_link {
                    std::fs::read_link(&f).expect("readlink").as_os_str().len() as u64
                } else {
                    std::fs::metadata(&f).expect("stat").len()
                },
            };
            if is_link {
                links.insert(f, a);
            } else {
                files.insert(f, a);
            }
        }
    }
    (files, links)
}

/// Every disagreement between the commands on world `w`, one sentence each.
fn disagreements(w: &World) -> Vec<String> {
    let (answers, links) = answers(w);
    let mut bad = Vec::new();
    // --explain and the class: a reached file of class gpu:X is opened only on X, and a
    // file opened only on some processors is of that one architecture.
    for (f, a) in &answers {
        let arch = a.class.strip_prefix("gpu:");
        if a.reached {
            match arch {
                Some(x) if a.processors != BTreeSet::from([x.to_string()]) => bad.push(format!(
                    "{}: class {} but --explain says opened on {:?}",
                    f.display(),
                    a.class,
                    a.processors
                )),
                None if !a.processors.is_empty() => bad.push(format!(
                    "{}: opened only on {:?} but its class is {}",
                    f.display(),
                    a.processors,
                    a.class
                )),
                _ => {}
            }
        }
    }
    // gpu: the bytes it counts for an architecture in files are those of the files the
    // consumer opens on that architecture.
    let g = json(&["gpu", &w.root, "--format", "json"]);
    let mut opened_on: BTreeMap<String, u64> = BTreeMap::new();
    let mut counted: BTreeMap<String, u64> = BTreeMap::new();
    for a in answers.values() {
        if let Some(x) = a.class.strip_prefix("gpu:") {
            *counted.entry(x.to_string()).or_default() += a.size;
            if a.reached && a.processors.contains(x) {
                *opened_on.entry(x.to_string()).or_default() += a.size;
            }
        }
    }
    for arch in g["archs"].as_array().expect("archs") {
        let name = arch["arch"].as_str().unwrap().to_string();
        let gpu_files = arch["file_bytes"].as_u64().unwrap();
        let opened = opened_on.get(&name).copied().unwrap_or(0);
        if gpu_files != opened {
            bad.push(format!(
                "gpu counts {gpu_files} B of {name} files; the consumer opens {opened} B of them on {name}"
            ));
        }
        let by_class = counted.get(&name).copied().unwrap_or(0);
        if gpu_files != by_class {
            bad.push(format!(
                "gpu counts {gpu_files} B of {name} files; their classes say {by_class} B"
            ));
        }
    }
    // gpu --gpu-targets: the files it drops from a path are those of the architectures
    // not kept (each opened only on its own, as checked above).
    let kept = "gfx1030";
    let after = json(&["gpu", &w.root, "--gpu-targets", kept, "--format", "json"]);
    for c in after["changed"].as_array().into_iter().flatten() {
        let path = c["path"].as_str().unwrap();
        let dropped = c["files_dropped"].as_u64().unwrap();
        let opened_elsewhere = answers
            .iter()
            .chain(links.iter())
            .filter(|(f, a)| {
                f.starts_with(path)
                    && a.class.starts_with("gpu:")
                    && a.class != format!("gpu:{kept}")
            })
            .count() as u64;
        if dropped != opened_elsewhere {
            bad.push(format!(
                "gpu --gpu-targets {kept} drops {dropped} files of {path}; {opened_elsewhere} are of other architectures"
            ));
        }
    }
    // why and refs --closure: every piece of evidence says whether the consumer reaches
    // the file holding it; --explain must say the same. And why's GPU bytes per path and
    // architecture are gpu's.
    let why = json(&[
        "why",
        &w.root,
        "--evidence-paths",
        "all",
        "--format",
        "json",
    ]);
    let refs = json(&["refs", "--closure", &w.root, "--format", "json"]);
    let mut evidence: Vec<(String, &Value)> = Vec::new();
    for p in why["paths"].as_array().into_iter().flatten() {
        for k in p["kept_by"].as_array().into_iter().flatten() {
            let referrer = k["referrer"].as_str().unwrap().to_string();
            for e in k["evidence"].as_array().into_iter().flatten() {
                evidence.push((referrer.clone(), e));
            }
        }
    }
    for p in refs["paths"].as_array().into_iter().flatten() {
        let referrer = p["path"].as_str().unwrap().to_string();
        for r in p["references"].as_array().into_iter().flatten() {
            for e in r["evidence"].as_array().into_iter().flatten() {
                evidence.push((referrer.clone(), e));
            }
        }
    }
    for (referrer, e) in evidence {
        let f = PathBuf::from(format!("{referrer}/{}", e["file"].as_str().unwrap()));
        if let (Some(a), Some(r)) = (answers.get(&f), e["reached"].as_bool()) {
            if a.reached != r {
                bad.push(format!(
                    "evidence in {} says reached = {r}, --explain says {}",
                    f.display(),
                    a.reached
                ));
            }
        }
    }
    let gpu_paths = common::gpu_path_archs(&g);
    for p in why["paths"].as_array().into_iter().flatten() {
        let path = p["path"].as_str().unwrap();
        let why_archs = &p["gpu"]["archs"];
        if why_archs.is_null() {
            continue;
        }
        if gpu_paths.get(path).copied() != Some(why_archs) {
            bad.push(format!(
                "why counts {why_archs} GPU bytes per architecture in {path}; gpu counts {:?}",
                gpu_paths.get(path)
            ));
        }
    }
    // split --gpu-targets: for each package with per-architecture files, the files moved
    // out of `out` for a kept processor P are those no kept processor opens.
    let mut packages: BTreeSet<String> = BTreeSet::new();
    for (f, a) in &answers {
        if a.class.starts_with("gpu:") && f.starts_with("/nix/store") {
            let top: PathBuf = f.components().take(4).collect();
            packages.insert(top.to_string_lossy().into_owned());
        }
    }
    for pkg in packages {
        let r = json(&[
            "split",
            &pkg,
            "--for",
            &w.root,
            "--gpu-targets",
            kept,
            "--format",
            "json",
        ]);
        let Some(archs) = r["archs"].as_array() else {
            continue;
        };
        for arch in archs {
            let name = arch["arch"].as_str().unwrap();
            let moved = arch["kept"] == false;
            let bytes = arch["bytes"].as_u64().unwrap_or(0);
            let opened: u64 = answers
                .iter()
                .chain(links.iter())
                .filter(|(f, a)| f.starts_with(&pkg) && a.reached && a.processors.contains(name))
                .map(|(_, a)| a.size)
                .sum();
            if moved == (name == kept) || (bytes != opened) {
                bad.push(format!(
                    "split {pkg} --gpu-targets {kept}: {name} ({bytes} B, kept {}) but the consumer opens {opened} B of it on {name}",
                    !moved
                ));
            }
        }
    }
    bad
}

#[test]
fn every_command_gives_one_answer_on_the_rocm_and_cuda_worlds() {
    if !nix_or_skip("every_command_gives_one_answer_on_the_rocm_and_cuda_worlds") {
        return;
    }
    for w in [rocm_world(), cuda_world()] {
        let bad = disagreements(w);
        assert!(bad.is_empty(), "{}:\n{}", w.root, bad.join("\n"));
    }
}

/// `nix-build tests/worlds/FILE -A ATTR` as a world rooted at that attribute.
fn nix_file_world(file: &str, attr: &str) -> World {
    let nix = common::repo().join("tests/worlds").join(file);
    let root = nix_stdout(
        "nix-build",
        &[nix.to_str().unwrap(), "-A", attr, "--no-out-link"],
    )
    .trim()
    .to_string();
    World {
        root,
        attrs: BTreeMap::new(),
    }
}

#[test]
fn every_command_gives_one_answer_on_the_blas_cmake_and_device_code_worlds() {
    let test = "every_command_gives_one_answer_on_the_blas_cmake_and_device_code_worlds";
    if !nix_or_skip(test)
        || !common::tool_or_skip(test, "hipcc", "hipcc")
        || !common::tool_or_skip(test, "cmake", "cmake")
        || !common::tool_or_skip(test, "pkg-config", "pkg-config")
    {
        return;
    }
    for (file, attr) in [
        ("blas.nix", "blas-app"),
        ("cmake.nix", "ember-app"),
        ("gpu.nix", "rocblas-links"),
        ("gpu.nix", "miopen-gpu"),
    ] {
        let w = nix_file_world(file, attr);
        let bad = disagreements(&w);
        assert!(
            bad.is_empty(),
            "{file} {attr} {}:\n{}",
            w.root,
            bad.join("\n")
        );
    }
}

#[test]
fn every_command_gives_one_answer_on_debian_rocm() {
    let Some(w) = trixie_world("every_command_gives_one_answer_on_debian_rocm", "") else {
        return;
    };
    let bad = disagreements(w);
    assert!(bad.is_empty(), "{}:\n{}", w.root, bad.join("\n"));
}

#[test]
fn a_renamed_data_directory_breaks_the_agreement() {
    let Some(w) = trixie_world(
        "a_renamed_data_directory_breaks_the_agreement",
        "renamed-data",
    ) else {
        return;
    };
    let bad = disagreements(w);
    assert!(
        bad.iter()
            .any(|b| b.contains("gpu counts") && b.contains("the consumer opens 0 B")),
        "the broken package must show: {bad:#?}"
    );
}
