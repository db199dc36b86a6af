//! `nixcut refs` on the Nix-built worlds: the references with evidence equal what Nix
//! registered (the oracle), every evidence kind is produced by a real file, NARs give
//! the same hits as directories, and the cache gives the same answer.

mod common;

/// path → reference → (file, offset, kind) of every hit.
type Hits = BTreeMap<String, BTreeMap<String, Vec<(String, u64, String)>>>;

use common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

fn refs_json(args: &[&str], cache_home: &std::path::Path) -> Value {
    let out = nixcut()
        .args(args)
        .args(["--format", "json"])
        .env("XDG_CACHE_HOME", cache_home)
        .output()
        .expect("run nixcut");
    let (code, stdout, stderr) = decode(out);
    assert_eq!(code, 0, "nixcut {args:?} failed: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("bad JSON: {e}\n{stdout}"))
}

/// path → (reference → entry)
fn index(report: &Value) -> BTreeMap<String, BTreeMap<String, Value>> {
    report["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let refs = p["references"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (r["path"].as_str().unwrap().to_string(), r.clone()))
                .collect();
            (p["path"].as_str().unwrap().to_string(), refs)
        })
        .collect()
}

fn nix_references(path: &str) -> BTreeSet<String> {
    nix_stdout("nix-store", &["-q", "--references", path])
        .lines()
        .map(str::to_string)
        .collect()
}

/// For every path of the closure, the references with at least one hit are exactly
/// `nix-store -q --references`.
fn assert_oracle(root: &str) {
    let cache = tempfile::tempdir().unwrap();
    let r = refs_json(&["refs", "--closure", root, "--no-cache"], cache.path());
    assert_eq!(r["files_from"], "store");
    let idx = index(&r);
    let closure: BTreeSet<String> = nix_stdout("nix-store", &["-qR", root])
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(idx.keys().cloned().collect::<BTreeSet<_>>(), closure);
    for (path, refs) in &idx {
        let with_hits: BTreeSet<String> = refs
            .iter()
            .filter(|(_, e)| e["evidence_count"].as_u64().unwrap() > 0)
            .map(|(p, _)| p.clone())
            .collect();
        assert_eq!(with_hits, nix_references(path), "references of {path}");
    }
    // --discover looks for every hash of the closure and still finds nothing Nix did
    // not register (the upper-cased hash in hipblas must not count).
    let d = refs_json(
        &["refs", "--closure", root, "--no-cache", "--discover"],
        cache.path(),
    );
    for (path, refs) in index(&d) {
        let found: BTreeSet<String> = refs
            .iter()
            .filter(|(_, e)| e["evidence_count"].as_u64().unwrap() > 0)
            .map(|(p, _)| p.clone())
            .collect();
        let expect = nix_references(&path);
        assert!(
            found.is_subset(&expect) || found == expect,
            "{path}: discover found {:?}",
            found.difference(&expect).collect::<Vec<_>>()
        );
    }
}

#[test]
fn oracle_rocm_world() {
    if !nix_or_skip("oracle_rocm_world") {
        return;
    }
    assert_oracle(&rocm_world().root);
}

#[test]
fn oracle_cuda_world() {
    if !nix_or_skip("oracle_cuda_world") {
        return;
    }
    assert_oracle(&cuda_world().root);
}

/// One real file per evidence kind (tests/worlds/README.md has the table).
#[test]
fn every_evidence_kind_from_a_real_file() {
    if !nix_or_skip("every_evidence_kind_from_a_real_file") {
        return;
    }
    let w = rocm_world();
    let cache = tempfile::tempdir().unwrap();
    let r = refs_json(&["refs", "--closure", &w.root, "--no-cache"], cache.path());
    let idx = index(&r);
    let evidence = |from: &str, to: &str| -> Vec<Value> {
        idx[w.path(from)]
            .get(w.path(to))
            .unwrap_or_else(|| panic!("{from} has no reference to {to}"))["evidence"]
            .as_array()
            .unwrap()
            .clone()
    };
    let has = |from: &str, to: &str, kind: &str, file_part: &str| -> Value {
        let ev = evidence(from, to);
        ev.iter()
            .find(|e| e["kind"] == kind && e["file"].as_str().unwrap().contains(file_part))
            .cloned()
            .unwrap_or_else(|| {
                panic!("{from} -> {to}: no {kind} in a file matching {file_part}: {ev:#?}")
            })
    };
    has(
        "llama-cpp-rocm",
        "glibc",
        "elf-interpreter",
        "bin/llama-server",
    );
    has(
        "rocm-runtime",
        "gcc-lib",
        "elf-needed",
        "lib/libhsa-runtime64",
    );
    let unused = has(
        "rocm-runtime",
        "rocm-llvm",
        "elf-runpath-unused",
        "lib/libhsa-runtime64",
    );
    assert_eq!(unused["verdict"], "removable");
    let s = has(
        "rocm-runtime",
        "libdrm",
        "elf-string",
        "lib/libhsa-runtime64",
    );
    assert!(
        s["detail"]
            .as_str()
            .unwrap()
            .contains("share/libdrm/amdgpu.ids"),
        "{s}"
    );
    let src = has("rocblas", "tensile", "elf-source-path", "lib/librocblas.so");
    assert!(
        src["detail"].as_str().unwrap().contains("Tensile.hpp"),
        "{src}"
    );
    has(
        "rocsparse",
        "rocsparse-src",
        "elf-debug",
        "lib/librocsparse.so",
    );
    has(
        "rocsolver",
        "rocm-device-libs",
        "elf-other",
        "lib/librocsolver.so",
    );
    let link = has(
        "rocblas",
        "rocblas-tensile-gfx90",
        "symlink",
        "lib/rocblas/library/",
    );
    assert!(
        link["verdict"].as_str().unwrap().starts_with("gpu:gfx90"),
        "{link}"
    );
    let dangling = has(
        "rocblas",
        "tensile",
        "symlink",
        "share/rocblas/tensile-dangling",
    );
    assert_eq!(dangling["verdict"], "removable", "{dangling}");
    assert!(
        dangling["rule"].as_str().unwrap().contains("dangling"),
        "{dangling}"
    );
    has(
        "rocblas",
        "rocblas-tensile-gfx94",
        "manifest",
        "TensileManifest.txt",
    );
    has("rocblas", "tensile", "build-config", "rocblas-config.cmake");
    has("rocblas", "cmake", "doc", "share/doc/rocblas/BUILD-INFO");
    has("rocblas", "bash", "script", "bin/rocblas-bench-wrapper");
    has(
        "rocblas",
        "rocblas-tensile-fallbacks",
        "file-name",
        "-tensile.stamp",
    );
    let blob = has("rocblas", "zstd", "binary", "share/rocblas/blob.bin");
    assert_eq!(
        blob["offset"], 65520,
        "the hash straddling the 64 KiB boundary: {blob}"
    );
    has("rocblas", "rocm-runtime", "text", "share/rocblas/notes.txt");
    // Verdicts of whole references follow the strongest evidence.
    let refs = &idx[w.path("rocblas")];
    assert_eq!(refs[w.path("rocm-cmake")]["verdict"], "dev");
    assert_eq!(refs[w.path("cmake")]["verdict"], "doc");
    assert_eq!(refs[w.path("clr")]["verdict"], "runtime");
    // tensile reaches rocblas through a __FILE__ string, a cmake file and a dangling
    // symlink: nothing needs it at run time, but cmake files need it to build.
    assert_eq!(refs[w.path("tensile")]["verdict"], "dev");
    // The upper-cased hash of cmake in hipblas is not a reference.
    assert!(!idx[w.path("hipblas")].contains_key(w.path("cmake")));
}

/// The same store path scanned from a binary cache's NARs (xz) and from the store
/// directory gives the same evidence; the cache gives the same answer, marked cached.
#[test]
fn nar_equals_directory_and_cache_is_faithful() {
    if !nix_or_skip("nar_equals_directory_and_cache_is_faithful") {
        return;
    }
    let w = rocm_world();
    let dir = tempfile::tempdir().unwrap();
    let cache_dir = dir.path().join("bincache");
    let url = format!(
        "file://{}?compression=xz&write-nar-listing=true",
        cache_dir.display()
    );
    nix_stdout("nix", &["copy", "--to", &url, &w.root]);
    let xdg = dir.path().join("xdg");
    let from_store = refs_json(&["refs", "--closure", &w.root, "--no-cache"], &xdg);
    let from_nar = refs_json(
        &[
            "refs",
            "--closure",
            cache_dir.to_str().unwrap(),
            "--root",
            &w.root,
            "--no-cache",
        ],
        &xdg,
    );
    assert_eq!(from_nar["files_from"], "nar");
    let strip = |v: &Value| -> Hits {
        index(v)
            .into_iter()
            .map(|(p, refs)| {
                let refs = refs
                    .into_iter()
                    .map(|(r, e)| {
                        let ev = e["evidence"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|x| {
                                (
                                    x["file"].as_str().unwrap().to_string(),
                                    x["offset"].as_u64().unwrap(),
                                    x["kind"].as_str().unwrap().to_string(),
                                )
                            })
                            .collect();
                        (r, ev)
                    })
                    .collect();
                (p, refs)
            })
            .collect()
    };
    assert_eq!(strip(&from_store), strip(&from_nar));

    let first = refs_json(&["refs", "--closure", &w.root], &xdg);
    let second = refs_json(&["refs", "--closure", &w.root], &xdg);
    assert!(second["paths"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["cached"] == true));
    assert_eq!(strip(&first), strip(&second));
}

#[test]
fn graph_only_inputs_say_evidence_is_unavailable() {
    let ex = repo().join("examples/llama-cpp-rocm.json");
    let cache = tempfile::tempdir().unwrap();
    let r = refs_json(&["refs", ex.to_str().unwrap(), "--no-cache"], cache.path());
    assert_eq!(r["files_from"], "unavailable");
    assert_eq!(r["evidence"], "graph");
    assert!(r["paths"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["scanned"] == false));
}

/// The other closures the tests build (the CI gate's heavier rebuild and the 6.x
/// version bump) agree with Nix too.
#[test]
fn oracle_world_variants() {
    if !nix_or_skip("oracle_world_variants") {
        return;
    }
    for args in [
        &["--arg", "heavy", "true"][..],
        &["--argstr", "version", "6.0.0"][..],
    ] {
        let w = build_world("rocm", args);
        assert_oracle(&w.root);
    }
}

/// `--store-root`: a store copied elsewhere (`nix copy --to DIR`) is read there — its
/// database and its files — even when the root no longer exists in the live store.
#[test]
fn store_root_reads_a_copied_store() {
    if !nix_or_skip("store_root_reads_a_copied_store") {
        return;
    }
    // A world of its own, so deleting its root from the live store disturbs nothing.
    let w = build_world("rocm", &["--argstr", "tag", "store-root-test"]);
    let dir = tempfile::tempdir().unwrap();
    let chroot = dir.path().join("chroot");
    let to = chroot.to_str().unwrap();
    nix_stdout("nix", &["copy", "--no-check-sigs", "--to", to, &w.root]);
    let expect = nix_closure_sizes(&w.root);
    let live = refs_json(&["refs", "--closure", &w.root, "--no-cache"], dir.path());
    nix_stdout("nix-store", &["--delete", &w.root]);
    assert!(!std::path::Path::new(&w.root).exists());

    let r = json(&["why", &w.root, "--store-root", to, "--format", "json"]);
    assert_eq!(r["closure_size"].as_u64().unwrap(), expect[&w.root]);
    assert_eq!(
        r["evidence"], "files",
        "files under the store root were scanned"
    );
    let copied = refs_json(
        &[
            "refs",
            "--closure",
            &w.root,
            "--store-root",
            to,
            "--no-cache",
        ],
        dir.path(),
    );
    assert_eq!(copied["files_from"], "store");
    let count = |v: &Value| -> u64 {
        v["paths"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["references"].as_array().unwrap().iter())
            .map(|r| r["evidence_count"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(count(&copied), count(&live));
    assert_eq!(index(&copied).len(), index(&live).len());
}

/// The Nix expression of a referrer whose symlinks point at files of a dependency named
/// with a backslash, a control byte and a non-UTF-8 byte, plus one dangling symlink.
const ODD_TARGETS_NIX: &str = r#"
let
  mk = name: attrs: derivation ({
    inherit name;
    system = builtins.currentSystem;
    builder = "/bin/sh";
    PATH = "/usr/bin:/bin";
  } // attrs);
  dep = mk "odd-names-dep" {
    args = [ "-c" ''
      mkdir -p $out/lib
      for n in 'back\\slash' 'ctl\001byte' 'latin\351'; do
        printf x > "$out/lib/$(printf "$n")"
      done
    '' ];
  };
in mk "odd-names-user" {
  inherit dep;
  args = [ "-c" ''
    mkdir -p $out/lib
    ln -s "$dep/lib/$(printf 'back\\slash')" $out/lib/l1
    ln -s "$dep/lib/$(printf 'ctl\001byte')" $out/lib/l2
    ln -s "$dep/lib/$(printf 'latin\351')" $out/lib/l3
    ln -s "$dep/lib/missing" $out/lib/l4
  '' ];
}
"#;

/// Issue 7: the escaped display text of a symlink target was used as a real path, so a
/// live symlink whose target holds `\`, a control byte or a non-UTF-8 byte was judged
/// `removable (symlink/dangling)`. The target is now resolved from its raw bytes.
#[test]
fn live_symlink_with_backslash_control_or_non_utf8_target_is_runtime() {
    if !nix_or_skip("live_symlink_with_backslash_control_or_non_utf8_target_is_runtime") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let expr = dir.path().join("odd.nix");
    std::fs::write(&expr, ODD_TARGETS_NIX).unwrap();
    let user = nix_stdout("nix-build", &[expr.to_str().unwrap(), "--no-out-link"]);
    let user = user.trim();
    let r = refs_json(&["refs", user, "--no-cache"], dir.path());
    let refs = &index(&r)[user];
    let (dep, entry) = refs
        .iter()
        .find(|(p, _)| p.ends_with("-odd-names-dep"))
        .expect("a reference to the dependency");
    assert!(nix_references(user).contains(dep.as_str()));
    assert_eq!(entry["verdict"], "runtime", "{entry:#}");
    let by_file: BTreeMap<&str, &str> = entry["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["file"].as_str().unwrap(), e["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(
        by_file,
        BTreeMap::from([
            ("lib/l1", "runtime"),
            ("lib/l2", "runtime"),
            ("lib/l3", "runtime"),
            ("lib/l4", "removable"),
        ]),
        "{entry:#}"
    );
    // The detail shows the targets escaped, never raw.
    let details: Vec<&str> = entry["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["detail"].as_str().unwrap())
        .collect();
    assert!(details.iter().all(|d| !d.contains('\u{1}')), "{details:?}");
    assert!(
        details.iter().any(|d| d.ends_with("back\\\\slash")),
        "{details:?}"
    );

    // The same from a binary cache with listings (names that are not UTF-8 cannot be
    // looked up in a JSON listing: not judged dangling).
    let cache = dir.path().join("cache");
    nix_stdout(
        "nix",
        &[
            "copy",
            "--to",
            &format!("file://{}?write-nar-listing=true", cache.display()),
            user,
        ],
    );
    let c = refs_json(
        &["refs", "--closure", cache.to_str().unwrap(), "--no-cache"],
        dir.path(),
    );
    assert_eq!(c["files_from"], "nar");
    let entry = &index(&c)[user][dep.as_str()];
    let verdicts: BTreeMap<&str, &str> = entry["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["file"].as_str().unwrap(), e["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(verdicts["lib/l1"], "runtime", "{entry:#}");
    assert_eq!(verdicts["lib/l2"], "runtime", "{entry:#}");
    assert_ne!(verdicts["lib/l3"], "removable", "{entry:#}");
    assert_eq!(verdicts["lib/l4"], "removable", "{entry:#}");
}

/// Issue 8.12: `--max-evidence 1` showed one line but said "… 11 more" where 13 were
/// hidden, values above 4 never showed more than 4, and JSON said nothing was left out.
#[test]
fn max_evidence_counts_what_it_hides_and_shows_what_it_keeps() {
    if !nix_or_skip("max_evidence_counts_what_it_hides_and_shows_what_it_keeps") {
        return;
    }
    let w = rocm_world();
    let rocblas = w.path("rocblas");
    let gfx90 = w.path("rocblas-tensile-gfx90");
    let dir = tempfile::tempdir().unwrap();
    let r = refs_json(
        &["refs", rocblas, "--max-evidence", "1", "--no-cache"],
        dir.path(),
    );
    assert_eq!(r["max_evidence"], 1);
    let e = &index(&r)[rocblas][gfx90];
    let count = e["evidence_count"].as_u64().unwrap();
    assert!(count > 20, "{e:#}");
    assert_eq!(e["evidence"].as_array().unwrap().len(), 1);
    assert_eq!(e["omitted"].as_u64().unwrap(), count - 1);
    for (n, lines) in [("1", 1), ("6", 6)] {
        let (code, out, err) = run(&["refs", rocblas, "--max-evidence", n, "--no-cache"]);
        assert_eq!(code, 0, "{err}");
        let section: Vec<&str> = out
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("rocblas-tensile-gfx90-5.7.1 ("))
            .skip(1)
            .take_while(|l| l.starts_with("    "))
            .collect();
        let shown = section.iter().filter(|l| !l.contains(" more ")).count();
        assert_eq!(shown, lines, "--max-evidence {n}:\n{out}");
        let more = format!("… {} more", count - lines as u64);
        assert!(
            section.iter().any(|l| l.contains(&more)),
            "--max-evidence {n}: {section:?}"
        );
    }
}

/// Issue 8.15: `refs X X` reported X twice.
#[test]
fn refs_of_the_same_path_twice_reports_it_once() {
    if !nix_or_skip("refs_of_the_same_path_twice_reports_it_once") {
        return;
    }
    let w = rocm_world();
    let clr = w.path("clr");
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("result");
    std::os::unix::fs::symlink(clr, &result).unwrap();
    let result = result.to_str().unwrap();
    for args in [
        vec!["refs", clr, clr, "--no-cache"],
        vec!["refs", clr, result, clr, "--no-cache"],
    ] {
        let r = refs_json(&args, dir.path());
        let paths: Vec<&str> = r["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["path"].as_str().unwrap())
            .collect();
        assert_eq!(paths, [clr], "{args:?}");
    }
}
