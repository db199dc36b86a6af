//! Runtime reachability on the Nix-built ROCm world (issue 9): with the consumer
//! `llama-cpp-rocm` (`refs --closure ROOT`), every reference's verdict says what the
//! consumer needs at run time, asserted per reference; without a consumer, a package's
//! own tools count.

mod common;

use std::collections::BTreeMap;

use common::*;
use serde_json::Value;

/// `refs …` as JSON, without the scan cache.
fn refs(args: &[&str]) -> Value {
    let mut a = vec!["refs"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--no-cache", "--format", "json"]);
    json(&a)
}

/// (referrer attr, reference attr) → the reference's JSON entry.
fn by_attr(w: &World, report: &Value) -> BTreeMap<(String, String), Value> {
    let attr_of: BTreeMap<&str, &str> = w
        .attrs
        .iter()
        .map(|(a, p)| (p.as_str(), a.as_str()))
        .collect();
    let mut out = BTreeMap::new();
    for p in report["paths"].as_array().unwrap() {
        let from = attr_of[p["path"].as_str().unwrap()];
        for r in p["references"].as_array().unwrap() {
            let to = attr_of[r["path"].as_str().unwrap()];
            out.insert((from.to_string(), to.to_string()), r.clone());
        }
    }
    out
}

fn verdict<'a>(m: &'a BTreeMap<(String, String), Value>, from: &str, to: &str) -> &'a str {
    let r = m
        .get(&(from.to_string(), to.to_string()))
        .unwrap_or_else(|| panic!("no reference {from} -> {to}"));
    r["verdict"].as_str().unwrap()
}

/// The evidence items of one reference as (file, kind, verdict, file_class, reached).
fn items(
    m: &BTreeMap<(String, String), Value>,
    from: &str,
    to: &str,
) -> Vec<(String, String, String, String, Option<bool>)> {
    m[&(from.to_string(), to.to_string())]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["file"].as_str().unwrap().to_string(),
                e["kind"].as_str().unwrap().to_string(),
                e["verdict"].as_str().unwrap().to_string(),
                e["file_class"].as_str().unwrap().to_string(),
                e["reached"].as_bool(),
            )
        })
        .collect()
}

#[test]
fn consumer_llama_gets_exact_verdicts_per_reference() {
    if !nix_or_skip("consumer_llama_gets_exact_verdicts_per_reference") {
        return;
    }
    let w = rocm_world();
    let r = refs(&["--closure", &w.root]);
    let m = by_attr(w, &r);

    // Loaded libraries, through RUNPATH: runtime.
    for (from, to) in [
        ("llama-cpp-rocm", "hipblas"),
        ("llama-cpp-rocm", "rocblas"),
        ("llama-cpp-rocm", "clr"),
        ("llama-cpp-rocm", "glibc"),
        ("hipblas", "rocsolver"),
        ("rocsolver", "rocsparse"),
        ("clr", "rocm-runtime"),
        ("rocm-runtime", "gcc-lib"),
    ] {
        assert_eq!(verdict(&m, from, to), "runtime", "{from} -> {to}");
    }
    // The library clr dlopens by soname through its RUNPATH (no DT_NEEDED): runtime,
    // kind elf-runpath-dlopen; the same RUNPATH entry in rocsparse, which names no
    // comgr soname, is removable.
    assert_eq!(verdict(&m, "clr", "rocm-comgr"), "runtime");
    assert_eq!(items(&m, "clr", "rocm-comgr")[0].1, "elf-runpath-dlopen");
    assert_eq!(verdict(&m, "rocsparse", "rocm-comgr"), "removable");
    assert_eq!(
        items(&m, "rocsparse", "rocm-comgr")[0].1,
        "elf-runpath-unused"
    );
    // An unused RUNPATH entry: removable.
    assert_eq!(verdict(&m, "rocm-runtime", "rocm-llvm"), "removable");

    // rocblas' symlinked Tensile kernels: per-architecture files are gpu:<arch>, the
    // arch-generic fallbacks runtime (librocblas.so is loaded, so its library directory
    // is reached).
    assert_eq!(
        verdict(&m, "rocblas", "rocblas-tensile-gfx80"),
        "gpu:gfx803"
    );
    assert_eq!(
        verdict(&m, "rocblas", "rocblas-tensile-gfx90"),
        "gpu:gfx900,gfx906,gfx908,gfx90a"
    );
    assert_eq!(
        verdict(&m, "rocblas", "rocblas-tensile-gfx11"),
        "gpu:gfx1100,gfx1101,gfx1102"
    );
    assert_eq!(
        verdict(&m, "rocblas", "rocblas-tensile-fallbacks"),
        "runtime"
    );
    for (file, kind, v, class, reached) in items(&m, "rocblas", "rocblas-tensile-gfx90") {
        assert_eq!(kind, "symlink", "{file}");
        assert!(v.starts_with("gpu:") && class == v, "{file}: {v} {class}");
        assert_eq!(reached, Some(true), "{file}");
    }
    // TensileManifest.txt (the manifest naming the gfx94 group): removable.
    let manifest: Vec<_> = items(&m, "rocblas", "rocblas-tensile-gfx94")
        .into_iter()
        .filter(|i| i.1 == "manifest")
        .collect();
    assert_eq!(manifest.len(), 1);
    assert!(manifest[0].0.ends_with("TensileManifest.txt"));
    assert_eq!(
        (manifest[0].2.as_str(), manifest[0].3.as_str()),
        ("removable", "removable")
    );

    // The Tensile path reaching librocblas through a __FILE__ string: removable; the
    // reference as a whole is dev (cmake names tensile too).
    let tensile = items(&m, "rocblas", "tensile");
    let file = tensile
        .iter()
        .find(|i| i.1 == "elf-source-path")
        .expect("__FILE__ hit");
    assert_eq!(
        (file.0.as_str(), file.2.as_str()),
        ("lib/librocblas.so", "removable")
    );
    assert_eq!(verdict(&m, "rocblas", "tensile"), "dev");
    // cmake and pkg-config: dev.
    assert_eq!(verdict(&m, "rocblas", "rocm-cmake"), "dev");
    // Docs naming the compiler: doc.
    assert_eq!(verdict(&m, "rocblas", "cmake"), "doc");

    // Build-tool scripts the consumer never runs: not runtime. clr's bin/hipcc execs the
    // LLVM clang; rocblas' benchmark wrapper runs bash.
    for (from, to) in [("clr", "rocm-llvm"), ("clr", "bash"), ("rocblas", "bash")] {
        assert_eq!(verdict(&m, from, to), "removable", "{from} -> {to}");
        assert!(
            items(&m, from, to)
                .iter()
                .all(|i| i.1 == "script" && i.4 == Some(false)),
            "{from} -> {to}: {:?}",
            items(&m, from, to)
        );
    }
    // Libraries no one loads: what they reference is not needed by the consumer.
    assert_eq!(verdict(&m, "zstd", "glibc"), "removable");
    assert_eq!(verdict(&m, "rocm-llvm", "glibc"), "removable");
    // Facts that reachability cannot settle stay unknown.
    assert_eq!(verdict(&m, "rocblas", "zstd"), "unknown");
    assert_eq!(verdict(&m, "rocm-runtime", "libdrm"), "unknown");
}

#[test]
fn without_a_consumer_a_package_counts_its_own_tools() {
    if !nix_or_skip("without_a_consumer_a_package_counts_its_own_tools") {
        return;
    }
    let w = rocm_world();
    // `refs clr` on its own: bin/hipcc is one of clr's own executables, so the LLVM
    // clang it execs is runtime for clr.
    let r = refs(&[w.path("clr")]);
    let m = by_attr(w, &r);
    assert_eq!(verdict(&m, "clr", "rocm-llvm"), "runtime");
    assert!(
        items(&m, "clr", "rocm-llvm").iter().all(|i| i.4.is_none()),
        "no consumer, no `reached`"
    );
    assert_eq!(verdict(&m, "clr", "rocm-comgr"), "runtime");
}

#[test]
fn explain_shows_the_chain_of_loads_to_a_kernel_file() {
    if !nix_or_skip("explain_shows_the_chain_of_loads_to_a_kernel_file") {
        return;
    }
    let w = rocm_world();
    let group = w.path("rocblas-tensile-gfx90");
    let kernel = std::fs::read_dir(format!("{group}/lib/rocblas/library"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.contains("gfx90a"))
        .expect("a gfx90a file");
    let file = format!("{group}/lib/rocblas/library/{kernel}");
    let r = refs(&["--closure", &w.root, "--explain", &file]);
    let e = &r["explain"];
    assert_eq!(e["reached"], true, "{e:#}");
    let vias: Vec<&str> = e["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["via"].as_str().unwrap())
        .collect();
    assert_eq!(
        vias,
        ["entry-point", "needed", "data-dir", "inside", "symlink"],
        "{e:#}"
    );
    let chain = e["chain"].as_array().unwrap();
    assert!(chain[0]["file"].as_str().unwrap().starts_with(&w.root));
    assert!(chain[1]["file"]
        .as_str()
        .unwrap()
        .ends_with("/lib/librocblas.so"));
    assert_eq!(chain[2]["detail"], "data/rocblas-tensile");
    assert_eq!(chain.last().unwrap()["file"], file.as_str());

    // The compiler behind clr's hipcc is not reached; the table says so.
    let clang = format!("{}/bin/clang", w.path("rocm-llvm"));
    let r = refs(&["--closure", &w.root, "--explain", &clang]);
    assert_eq!(r["explain"]["reached"], false);
    assert_eq!(r["explain"]["chain"].as_array().unwrap().len(), 0);
    let (code, out, _) = run(&[
        "refs",
        "--closure",
        &w.root,
        "--explain",
        &clang,
        "--no-cache",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("does not load, run or open"), "{out}");

    // Without a consumer there is nothing to explain.
    let (code, _, err) = run(&["refs", w.path("clr"), "--explain", &clang]);
    assert_eq!(code, 2, "{err}");
}

/// Four store paths built by Nix: the consumer `c` loads `libmid.so` from `m`, whose
/// RUNPATH `$ORIGIN/../private` supplies `libpriv.so`, which loads `libd.so` from `d`.
/// `m` also holds `libnobody.so` (nothing loads it), which needs `libn.so` from `n`.
const ORIGIN_NIX: &str = r#"
let
  mk = name: script: derivation {
    inherit name;
    system = builtins.currentSystem;
    builder = "/bin/sh";
    PATH = "/usr/bin:/bin";
    args = [ "-c" script ];
  };
  lib = name: fn: mk name ''
    mkdir -p $out/lib
    printf 'int ${fn}(void) { return 1; }\n' > x.c
    gcc -shared -fPIC -Wl,-soname,lib${fn}.so -o $out/lib/lib${fn}.so x.c
  '';
  d = lib "origin-d" "d";
  n = lib "origin-n" "n";
  m = mk "origin-m" ''
    mkdir -p $out/lib $out/private
    printf 'int d(void); int priv(void) { return d(); }\n' > p.c
    gcc -shared -fPIC -Wl,-soname,libpriv.so -o $out/private/libpriv.so p.c \
      -L${d}/lib -ld -Wl,--enable-new-dtags -Wl,-rpath,${d}/lib
    printf 'int priv(void); int mid(void) { return priv(); }\n' > m.c
    gcc -shared -fPIC -Wl,-soname,libmid.so -o $out/lib/libmid.so m.c \
      -L$out/private -lpriv -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/../private'
    printf 'int n(void); int nobody(void) { return n(); }\n' > o.c
    gcc -shared -fPIC -Wl,-soname,libnobody.so -o $out/lib/libnobody.so o.c \
      -L${n}/lib -ln -Wl,--enable-new-dtags -Wl,-rpath,${n}/lib
  '';
in mk "origin-c" ''
  mkdir -p $out/bin
  printf 'int mid(void); int main(void) { return mid(); }\n' > c.c
  gcc -o $out/bin/c c.c -L${m}/lib -lmid -Wl,--enable-new-dtags -Wl,-rpath,${m}/lib
''
"#;

#[test]
fn origin_runpath_reaches_a_private_library_and_an_unloaded_one_stays_unreached() {
    if !nix_or_skip("origin_runpath_reaches_a_private_library_and_an_unloaded_one_stays_unreached")
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let expr = dir.path().join("origin.nix");
    std::fs::write(&expr, ORIGIN_NIX).unwrap();
    let c = nix_stdout("nix-build", &[expr.to_str().unwrap(), "--no-out-link"]);
    let c = c.trim();
    let r = refs(&["--closure", c]);
    let verdicts: BTreeMap<String, (String, String)> = r["paths"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| {
            let from = p["path"]
                .as_str()
                .unwrap()
                .rsplit('-')
                .next()
                .unwrap()
                .to_string();
            p["references"].as_array().unwrap().iter().map(move |x| {
                let to = x["path"]
                    .as_str()
                    .unwrap()
                    .rsplit('-')
                    .next()
                    .unwrap()
                    .to_string();
                let file = x["evidence"][0]["file"].as_str().unwrap_or("").to_string();
                (
                    (format!("{from}->{to}")),
                    (x["verdict"].as_str().unwrap().to_string(), file),
                )
            })
        })
        .collect();
    // m's private library is found only through $ORIGIN/../private of libmid.so: what
    // it loads (d) is runtime for c.
    assert_eq!(verdicts["m->d"].0, "runtime", "{verdicts:#?}");
    assert_eq!(verdicts["m->d"].1, "private/libpriv.so");
    // Nothing loads libnobody.so: its library n is not needed by c.
    assert_eq!(verdicts["m->n"].0, "removable", "{verdicts:#?}");
    assert_eq!(verdicts["m->n"].1, "lib/libnobody.so");
    assert_eq!(verdicts["c->m"].0, "runtime");
    // And the chain says how: c's program, libmid by DT_NEEDED, libpriv through $ORIGIN.
    let m = r["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap().to_string())
        .find(|p| p.ends_with("-origin-m"))
        .unwrap();
    let e = refs(&[
        "--closure",
        c,
        "--explain",
        &format!("{m}/private/libpriv.so"),
    ]);
    let chain = e["explain"]["chain"].as_array().unwrap();
    let last = chain.last().unwrap();
    assert_eq!(last["via"], "needed");
    assert_eq!(last["detail"], format!("libpriv.so in {m}/lib/../private"));
}

/// (referrer, reference) → verdict, from `refs --closure ROOT`.
fn refs_closure_verdicts(root: &str) -> BTreeMap<(String, String), String> {
    let r = json(&["refs", "--closure", root, "--format", "json", "--no-cache"]);
    let mut out = BTreeMap::new();
    for p in r["paths"].as_array().unwrap() {
        let from = p["path"].as_str().unwrap();
        for x in p["references"].as_array().unwrap() {
            let to = x["path"].as_str().unwrap();
            out.insert(
                (from.to_string(), to.to_string()),
                x["verdict"].as_str().unwrap().to_string(),
            );
        }
    }
    out
}

/// Every (referrer, reference) pair `why ROOT` and `why ROOT TARGET` report, with the
/// verdict each gives it; asserts both judge with ROOT as the consumer.
fn why_verdicts(root: &str) -> BTreeMap<(String, String), String> {
    let r = json(&[
        "why",
        root,
        "--evidence-paths",
        "all",
        "--evidence-referrers",
        "1000",
        "--format",
        "json",
        "--no-cache",
    ]);
    assert_eq!(r["evidence"], "files", "{root}");
    assert_eq!(r["verdict_scope"], "consumer", "{root}");
    let mut out = BTreeMap::new();
    for p in r["paths"].as_array().unwrap() {
        let to = p["path"].as_str().unwrap();
        for k in p["kept_by"].as_array().into_iter().flatten() {
            let from = k["referrer"].as_str().unwrap();
            out.insert(
                (from.to_string(), to.to_string()),
                k["verdict"].as_str().unwrap().to_string(),
            );
        }
    }
    out
}

/// The hops of `why ROOT TARGET` for every path of the closure, (referrer, reference)
/// → verdict.
fn chain_verdicts(root: &str, targets: &[String]) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    for t in targets {
        let r = json(&["why", root, t, "--format", "json", "--no-cache"]);
        assert_eq!(r["verdict_scope"], "consumer", "{root} {t}");
        let mut stack = vec![r["tree"].clone()];
        while let Some(n) = stack.pop() {
            for c in n["children"].as_array().into_iter().flatten() {
                let via = &c["via"];
                out.insert(
                    (
                        via["referrer"].as_str().unwrap().to_string(),
                        c["path"].as_str().unwrap().to_string(),
                    ),
                    via["verdict"].as_str().unwrap().to_string(),
                );
                stack.push(c.clone());
            }
        }
    }
    out
}

/// Asserts that `why ROOT` (every path, every referrer) and `why ROOT TARGET` give each
/// (referrer, reference) pair the verdict `refs --closure ROOT` gives it; returns the
/// number of pairs compared.
fn assert_one_answer(root: &str) -> usize {
    type Pairs = BTreeMap<(String, String), String>;
    let refs = refs_closure_verdicts(root);
    let same = |what: &str, got: &Pairs| {
        let differ: Vec<String> = got
            .iter()
            .filter(|(k, v)| refs.get(*k) != Some(*v))
            .map(|(k, v)| format!("{} -> {}: {what} {v}, refs {:?}", k.0, k.1, refs.get(k)))
            .collect();
        assert!(differ.is_empty(), "{root}:\n{}", differ.join("\n"));
    };
    let why = why_verdicts(root);
    same("why", &why);
    // why ROOT TARGET for each path some referrer keeps in.
    let targets: Vec<String> = why
        .keys()
        .map(|(_, to)| to.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    same("why ROOT TARGET", &chain_verdicts(root, &targets));
    why.len()
}

/// Issue 22: one answer to "does ROOT need this at run time?" on every Nix world.
#[test]
fn why_and_refs_closure_give_one_verdict_per_pair_on_every_world() {
    if !nix_or_skip("why_and_refs_closure_give_one_verdict_per_pair_on_every_world") {
        return;
    }
    let mut roots: Vec<(String, String)> = vec![
        ("rocm".into(), rocm_world().root.clone()),
        (
            "rocm 6.0.0".into(),
            build_world("rocm", &["--argstr", "version", "6.0.0"]).root,
        ),
        (
            "rocm heavy".into(),
            build_world("rocm", &["--arg", "heavy", "true"]).root,
        ),
        ("cuda".into(), cuda_world().root.clone()),
        ("blas".into(), blas_world().root.clone()),
        (
            "blas with indexes".into(),
            blas_indexed_world().root.clone(),
        ),
    ];
    if tool_or_skip(
        "why_and_refs_closure_give_one_verdict_per_pair_on_every_world (gpu.nix)",
        "hipcc",
        "hipcc",
    ) {
        let gpu = repo().join("tests/worlds/gpu.nix");
        for attr in ["rocblas-links", "miopen-gpu", "gpu-acct"] {
            let p = nix_stdout(
                "nix-build",
                &[gpu.to_str().unwrap(), "-A", attr, "--no-out-link"],
            );
            roots.push((format!("gpu {attr}"), p.trim().to_string()));
        }
    }
    let mut compared = Vec::new();
    for (name, root) in &roots {
        let n = assert_one_answer(root);
        // Every world but the leaf-like GPU ones has references to compare.
        assert!(
            n > 0 || name.starts_with("gpu"),
            "{name}: why reports no kept_by"
        );
        compared.push(format!("{name}: {n}"));
    }
    eprintln!("pairs compared: {}", compared.join(", "));
    // The case that started it: clr's bin/hipcc execs the LLVM clang, which the
    // consumer never runs.
    let w = rocm_world();
    let why = why_verdicts(&w.root);
    let key = (w.path("clr").to_string(), w.path("rocm-llvm").to_string());
    assert_eq!(why.get(&key).map(String::as_str), Some("removable"));
}

const BLAS_ATTRS: &[&str] = &[
    "blas-app",
    "fastblas",
    "fastblas-kernels-gfx90a",
    "fastblas-kernels-gfx1030",
    "fastblas-kernels-fallbacks",
    "glibc",
];

/// `tests/worlds/blas.nix`: a BLAS-like library not named librocblas whose strings name
/// its kernel directory and index pattern.
fn blas_world() -> &'static World {
    static W: std::sync::OnceLock<World> = std::sync::OnceLock::new();
    W.get_or_init(|| build_blas(&[]))
}

/// The Tensile problem types of the BLAS world's kernel files.
const SS: &str = "TensileLibrary_Type_SS_Contraction_l_Ailk_Bjlk_Cijk_Dijk";
const DD: &str = "TensileLibrary_Type_DD_Contraction_l_Ailk_Bjlk_Cijk_Dijk";

/// The BLAS world with real MessagePack master indexes, written here as Tensile writes
/// a lazy master: `{version, solutions, library}`, the library a hardware row over a
/// problem row ending in a placeholder `{type: Placeholder, value: <prefix>}`, which
/// makes the library load `<prefix>.dat` and `<prefix>.co`. The DD problem type's code
/// objects are named by no index.
fn blas_indexed_world() -> &'static World {
    static W: std::sync::OnceLock<(tempfile::TempDir, World)> = std::sync::OnceLock::new();
    &W.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        for arch in ["gfx90a", "gfx1030"] {
            let master = serde_json::json!({
                "version": "4.38.0",
                "solutions": [],
                "library": {
                    "type": "Hardware",
                    "rows": [{
                        "predicate": {"type": "AMDGPU", "value": {"type": "Processor", "value": arch}},
                        "library": {
                            "type": "Problem",
                            "rows": [{
                                "key": [0, 1, 1],
                                "library": {"type": "Placeholder", "value": format!("{SS}_{arch}")}
                            }]
                        }
                    }]
                }
            });
            let bytes = rmp_serde::to_vec(&master).unwrap();
            std::fs::write(
                dir.path().join(format!("TensileLibrary_lazy_{arch}.dat")),
                bytes,
            )
            .unwrap();
        }
        let w = build_blas(&["--arg", "dats", dir.path().to_str().unwrap()]);
        (dir, w)
    })
    .1
}

fn build_blas(extra: &[&str]) -> World {
    {
        let file = repo().join("tests/worlds/blas.nix");
        let mut args = vec![file.to_str().unwrap().to_string(), "--no-out-link".into()];
        args.extend(extra.iter().map(|a| a.to_string()));
        for a in BLAS_ATTRS {
            args.extend(["-A".to_string(), a.to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = nix_stdout("nix-build", &args);
        let attrs: BTreeMap<String, String> = BLAS_ATTRS
            .iter()
            .map(|a| a.to_string())
            .zip(out.lines().map(str::to_string))
            .collect();
        World {
            root: attrs["blas-app"].clone(),
            attrs,
        }
    }
}

/// `refs --closure` of the BLAS world with extra arguments: (referrer, reference) →
/// verdict.
fn blas_verdicts(extra: &[&str]) -> BTreeMap<(String, String), String> {
    let w = blas_world();
    let mut a = vec!["--closure", w.root.as_str()];
    a.extend_from_slice(extra);
    by_attr(w, &refs(&a))
        .into_iter()
        .map(|(k, v)| (k, v["verdict"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn a_blas_library_not_named_rocblas_opens_what_its_strings_name() {
    if !nix_or_skip("a_blas_library_not_named_rocblas_opens_what_its_strings_name") {
        return;
    }
    let w = blas_world();
    let m = blas_verdicts(&[]);
    let v = |to: &str| m[&("fastblas".to_string(), to.to_string())].as_str();
    assert_eq!(v("fastblas-kernels-gfx90a"), "gpu:gfx90a", "{m:#?}");
    assert_eq!(v("fastblas-kernels-gfx1030"), "gpu:gfx1030", "{m:#?}");
    assert_eq!(v("fastblas-kernels-fallbacks"), "runtime", "{m:#?}");
    // Through the string rule: the chain to a kernel names the string.
    let kernel = format!(
        "{}/lib/fastblas/library/Kernels.so-000-gfx90a.hsaco",
        w.path("fastblas-kernels-gfx90a")
    );
    let e = refs(&["--closure", &w.root, "--explain", &kernel]);
    let chain = e["explain"]["chain"].as_array().unwrap();
    let steps: Vec<(&str, &str)> = chain
        .iter()
        .map(|s| (s["via"].as_str().unwrap(), s["detail"].as_str().unwrap()))
        .collect();
    assert!(
        steps.contains(&("data-string", "fastblas/library")),
        "{steps:?}"
    );
    // The index pattern reaches the lazy master itself.
    let master = format!(
        "{}/lib/fastblas/library/TensileLibrary_lazy_gfx1030.dat",
        w.path("fastblas-kernels-gfx1030")
    );
    let e = refs(&["--closure", &w.root, "--explain", &master]);
    let chain = e["explain"]["chain"].as_array().unwrap();
    // The library's own directory entry (a symlink into the group) is named by the
    // pattern; the group's file is its target.
    let n = chain.len();
    assert_eq!(
        (
            chain[n - 2]["via"].as_str(),
            chain[n - 2]["detail"].as_str()
        ),
        (Some("data-string"), Some("TensileLibrary_lazy_%s.dat")),
        "{e:#}"
    );
    assert_eq!(chain[n - 1]["via"], "symlink", "{e:#}");

    // Without the table's rocBLAS row the result is the same (the table never knew
    // this library); the same holds for the ROCm world's librocblas, whose strings
    // name rocblas/library.
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "[[data_dir]]\nname = \"data/rocblas-tensile\"\ndirs = []\n",
    )
    .unwrap();
    let rules = rules.to_str().unwrap();
    assert_eq!(blas_verdicts(&["--rules", rules]), m);
    let rocm = rocm_world();
    let with = by_attr(rocm, &refs(&["--closure", &rocm.root]));
    let without = by_attr(rocm, &refs(&["--closure", &rocm.root, "--rules", rules]));
    let verdicts = |m: &BTreeMap<(String, String), Value>| -> BTreeMap<(String, String), String> {
        m.iter()
            .map(|(k, v)| (k.clone(), v["verdict"].as_str().unwrap().to_string()))
            .collect()
    };
    assert_eq!(verdicts(&without), verdicts(&with));
}

#[test]
fn index_files_name_the_code_objects_they_load() {
    if !nix_or_skip("index_files_name_the_code_objects_they_load") {
        return;
    }
    let w = blas_indexed_world();
    let group = w.path("fastblas-kernels-gfx90a");
    // library -> index -> code object.
    let co = format!("{group}/lib/fastblas/library/{SS}_gfx90a.co");
    let e = refs(&["--closure", &w.root, "--explain", &co]);
    let steps: Vec<(String, String, String)> = e["explain"]["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["file"]
                    .as_str()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_string(),
                s["via"].as_str().unwrap().to_string(),
                s["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let vias: Vec<&str> = steps.iter().map(|s| s.1.as_str()).collect();
    assert_eq!(
        vias,
        ["entry-point", "needed", "data-string", "index", "symlink"],
        "{steps:#?}"
    );
    assert_eq!(steps[1].0, "libfastblas.so.1");
    assert_eq!(steps[2].0, "TensileLibrary_lazy_gfx90a.dat");
    assert_eq!(steps[3].2, format!("{SS}_gfx90a.co"));
    // The index's placeholder .dat is reached the same way.
    let dat = format!("{group}/lib/fastblas/library/{SS}_gfx90a.dat");
    let e = refs(&["--closure", &w.root, "--explain", &dat]);
    assert_eq!(e["explain"]["reached"], true, "{e:#}");

    // A code object no index names is not opened, and the manifest that lists it is
    // said to be the only thing that does.
    let dd = format!("{group}/lib/fastblas/library/{DD}_gfx90a.co");
    let e = refs(&["--closure", &w.root, "--explain", &dd]);
    assert_eq!(e["explain"]["reached"], false, "{e:#}");
    let note = e["explain"]["note"].as_str().unwrap_or("");
    assert!(note.contains("listed only in TensileManifest.txt"), "{e:#}");
    let dd_hit = e["paths"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["path"] == w.path("fastblas"))
        .flat_map(|p| p["references"].as_array().unwrap().iter())
        .flat_map(|r| r["evidence"].as_array().unwrap().iter())
        .find(|i| {
            i["file"]
                .as_str()
                .unwrap()
                .ends_with(&format!("{DD}_gfx90a.co"))
        })
        .cloned()
        .expect("the DD symlink's evidence");
    assert_eq!(dd_hit["verdict"], "removable", "{dd_hit:#}");
    assert_eq!(dd_hit["reached"], false);
    // Still gpu:<arch> for the group (its named kernels), runtime for the fallbacks.
    let m = by_attr(w, &refs(&["--closure", &w.root]));
    let v = |to: &str| m[&("fastblas".to_string(), to.to_string())]["verdict"].clone();
    assert_eq!(v("fastblas-kernels-gfx90a"), "gpu:gfx90a");
    assert_eq!(v("fastblas-kernels-fallbacks"), "runtime");
}

#[test]
fn explain_takes_result_links_roots_own_files_store_paths_and_refuses_missing_files() {
    if !nix_or_skip(
        "explain_takes_result_links_roots_own_files_store_paths_and_refuses_missing_files",
    ) {
        return;
    }
    let w = rocm_world();
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("result");
    std::os::unix::fs::symlink(&w.root, &result).unwrap();
    let explain = |root: &str, file: &str| -> (i32, String, String) {
        let out = nixcut()
            .current_dir(dir.path())
            .args(["refs", "--closure", root, "--explain", file, "--no-cache"])
            .output()
            .unwrap();
        decode(out)
    };
    let program = format!("{}/bin/llama-server", w.root);
    // Through ./result, as ROOT and as FILE: ROOT's own program is an entry point, and the
    // answer is printed first.
    for (root, file) in [
        ("./result", "./result/bin/llama-server"),
        (w.root.as_str(), "result/bin/llama-server"),
        ("./result", "bin/llama-server"),
        ("./result", program.as_str()),
    ] {
        let (code, out, err) = explain(root, file);
        assert_eq!(code, 0, "{root} {file}: {err}");
        let first = out.lines().next().unwrap_or("");
        assert!(
            first.contains("how the consumer reaches") && first.contains(&program),
            "{root} {file}: the answer first:\n{out}"
        );
        assert!(out.contains("one of the consumer's own files"), "{out}");
    }
    // Through ./result into a library's data directory, followed by symlinks.
    let (code, out, err) = explain(
        "./result",
        &format!("{}/lib/librocblas.so", w.path("rocblas")),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines()
            .next()
            .unwrap()
            .contains("how the consumer reaches"),
        "{out}"
    );
    // A store path: the chain to the first file of it that ROOT reaches.
    let r = json(&[
        "refs",
        "--closure",
        &w.root,
        "--explain",
        w.path("rocblas"),
        "--format",
        "json",
        "--no-cache",
    ]);
    assert_eq!(r["explain"]["reached"], true, "{:#}", r["explain"]);
    assert!(
        r["explain"]["note"]
            .as_str()
            .unwrap()
            .starts_with("a directory"),
        "{:#}",
        r["explain"]
    );
    // Missing files: exit 2, naming the file; not "does not load".
    for missing in [
        format!("{}/bin/no-such-program", w.root),
        "./result/bin/no-such-program".to_string(),
        "no-such-file".to_string(),
    ] {
        let (code, out, err) = explain("./result", &missing);
        assert_eq!(code, 2, "{missing}: {out}");
        assert!(
            err.contains(&missing) && err.contains("no such file"),
            "{err}"
        );
    }
    // A path outside the store.
    let (code, _, err) = explain("./result", "/etc/hostname");
    assert_eq!(code, 2);
    assert!(err.contains("not in the store"), "{err}");
}

/// Over a binary cache (HTTP) the walk would need every NAR of the closure, so `why`
/// judges each referrer on its own files and says so.
#[test]
fn over_a_binary_cache_why_says_its_verdicts_are_per_path() {
    if !nix_or_skip("over_a_binary_cache_why_says_its_verdicts_are_per_path") {
        return;
    }
    let w = rocm_world();
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "file://{}?compression=xz&write-nar-listing=true",
        dir.path().display()
    );
    nix_stdout("nix", &["copy", "--to", &url, &w.root]);
    let srv = common::serve::Server::start(dir.path());
    let r = json(&[
        "why",
        "--cache",
        &srv.url,
        &w.root,
        "--evidence-paths",
        "all",
        "--format",
        "json",
        "--no-cache",
    ]);
    assert_eq!(r["evidence"], "files");
    assert_eq!(r["verdict_scope"], "per-path", "{}", r["verdict_scope"]);
    // Per path, clr's own bin/hipcc runs the LLVM clang: runtime for clr itself.
    let llvm = r["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"] == w.path("rocm-llvm"))
        .unwrap();
    let from_clr = llvm["kept_by"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["referrer"] == w.path("clr"))
        .expect("clr keeps rocm-llvm");
    assert_eq!(from_clr["verdict"], "runtime");
    // The table says so too.
    let (code, out, err) = run(&["why", "--cache", &srv.url, &w.root, "--no-cache"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("judge each referrer on its own files"),
        "{out}"
    );
}
