//! issue 33: `split` proposes the same code from every input that has the files. For
//! every test world with a split, the report is made from the live store (the package's
//! store path), from a binary cache directory (`nix copy --to
//! file://DIR?compression=xz&write-nar-listing=true`, its NARs streamed) and from the
//! same directory served over HTTP on 127.0.0.1 (`--cache URL`); the `nix` code is
//! byte-identical and the `actions` and `outputs` equal. The three are compared with
//! each other, not with fixed text, so the test holds whatever the proposal becomes.
//!
//! Every run has `--no-cache`: the scan cache is keyed by store path and NAR hash, so a
//! cached scan from the store would otherwise stand in for the NAR's. The cmake world
//! also checks a cached scan read back (a second run from the cache directory).

mod common;

use std::path::Path;

use common::serve::Server;
use common::*;
use serde_json::Value;

/// `paths`' closure as a binary cache with listings, its NARs compressed with
/// `compression` (`xz`; `zstd` for the trixie world, whose 4 GiB xz takes far too
/// long), in a new directory.
fn cache_of(paths: &[&str], compression: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!(
        "file://{}?compression={compression}&write-nar-listing=true",
        dir.path().display()
    );
    let mut args = vec!["copy", "--to", &url];
    args.extend_from_slice(paths);
    nix_stdout("nix", &args);
    dir
}

/// The test worlds' caches: xz, as `nix copy` writes them by default.
const XZ: (&str, &str) = ("xz", ".nar.xz");

/// `nixcut` with `args` and its caches in `xdg`; the JSON report.
fn report(xdg: &Path, args: &[&str]) -> Value {
    let (code, out, err) = decode(
        nixcut()
            .env("XDG_CACHE_HOME", xdg)
            .args(args)
            .output()
            .expect("run nixcut"),
    );
    assert_eq!(code, 0, "nixcut {args:?} failed: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad JSON from {args:?}: {e}\n{out}"))
}

/// How the package and the consumer are named to nixcut.
struct Split<'a> {
    /// The package: a store path, or a name in the consumer's closure.
    package: &'a str,
    /// The consumer's store path (`--for`), or none.
    consumer: Option<&'a str>,
    /// The cache's compression, and the NAR files' extension.
    compression: (&'a str, &'a str),
    /// More options of `split` (`--gpu-targets`).
    options: &'a [&'a str],
}

impl Split<'_> {
    /// The arguments reading `input` (a store path, or a cache directory), with `extra`
    /// first (`--cache URL`).
    fn args<'a>(&'a self, input: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
        let mut v = vec!["split"];
        v.extend_from_slice(extra);
        match self.consumer {
            Some(_) => v.extend([self.package, "--for", input]),
            None => v.push(input),
        }
        v.extend_from_slice(self.options);
        v.extend(["--format", "json", "--no-cache"]);
        v
    }

    /// The input holding the store's files: the consumer, else the package.
    fn root(&self) -> &str {
        self.consumer.unwrap_or(self.package)
    }
}

/// The fields that must agree, with the name each form is known by.
fn same(what: &str, a: (&str, &Value), b: (&str, &Value)) {
    let nix = |v: &Value| v["nix"].as_str().unwrap_or_default().to_string();
    assert_eq!(
        nix(a.1),
        nix(b.1),
        "{what}: the nix code from {} and from {} differ",
        a.0,
        b.0
    );
    for field in ["actions", "outputs"] {
        assert_eq!(
            a.1[field], b.1[field],
            "{what}: `{field}` from {} and from {} differ",
            a.0, b.0
        );
    }
}

/// Split from the store, the cache directory and the cache over HTTP; the three agree.
/// Returns the store's report.
fn agree(what: &str, s: &Split<'_>) -> Value {
    let cache = cache_of(&[s.root()], s.compression.0);
    let dir = cache.path().to_str().expect("utf-8 temp dir");
    let xdg = tempfile::tempdir().expect("temp dir");
    let store = report(xdg.path(), &s.args(s.root(), &[]));
    // The directory as the input: the package is its only root, or the consumer is.
    let from_dir = report(xdg.path(), &s.args(dir, &[]));
    assert!(
        !store["nix"].as_str().unwrap_or_default().is_empty(),
        "{what}: a split is proposed: {store}"
    );
    same(
        what,
        ("the store", &store),
        ("the cache directory", &from_dir),
    );
    let srv = Server::start(cache.path());
    let url = srv.url.clone();
    let from_http = report(xdg.path(), &s.args(s.root(), &["--cache", &url]));
    assert!(
        srv.count(s.compression.1) > 0,
        "{what}: the HTTP form read its files from the cache's NARs: {:?}",
        srv.log()
    );
    same(what, ("the store", &store), ("the HTTP cache", &from_http));
    for (form, r) in [("cache directory", &from_dir), ("HTTP cache", &from_http)] {
        let unchecked = (r["warnings"].as_array().into_iter().flatten())
            .filter_map(|w| w.as_str())
            .find(|w| w.contains("were not checked"));
        assert!(unchecked.is_none(), "{what} from the {form}: {unchecked:?}");
    }
    store
}

/// The rocm world's rocblas, split for llama-cpp-rocm.
#[test]
fn rocm_world_rocblas_for_llama_is_proposed_alike_from_store_directory_and_http() {
    if !nix_or_skip("rocm_world_rocblas_for_llama_is_proposed_alike_from_store_directory_and_http")
    {
        return;
    }
    let w = rocm_world();
    let s = Split {
        package: "rocblas",
        consumer: Some(&w.root),
        compression: XZ,
        options: &[],
    };
    agree("rocm world", &s);
}

/// The cmake world's ember, split for ember-app: its pkg-config and CMake files get
/// their rewrites from the NARs as from the store (they did not: the texts were read
/// from directory trees only). A second run from the cache directory, its scan now
/// cached, agrees too.
#[test]
fn cmake_world_ember_for_its_app_is_proposed_alike_from_store_directory_and_http() {
    let test = "cmake_world_ember_for_its_app_is_proposed_alike_from_store_directory_and_http";
    if !nix_or_skip(test)
        || !tool_or_skip(test, "cmake", "cmake")
        || !tool_or_skip(test, "pkg-config", "pkg-config")
    {
        return;
    }
    let world = repo().join("tests/worlds/cmake.nix");
    let world = world.to_str().unwrap();
    let build = |attr: &str| {
        nix_stdout("nix-build", &[world, "-A", attr, "--no-out-link"])
            .trim()
            .to_string()
    };
    let (ember, app) = (build("ember"), build("ember-app"));
    let s = Split {
        package: &ember,
        consumer: Some(&app),
        compression: XZ,
        options: &[],
    };
    let store = agree("cmake world", &s);
    let pc = (store["actions"].as_array().into_iter().flatten())
        .any(|a| a["action"] == "rewrite" && a["file"] == "lib/pkgconfig/ember.pc");
    assert!(pc, "ember.pc is rewritten: {}", store["actions"]);
    // The scan cache carries the texts: cached twice over, the directory agrees.
    let cache = cache_of(&[&app], "xz");
    let dir = cache.path().to_str().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let mut args = s.args(dir, &[]);
    args.retain(|a| *a != "--no-cache");
    let first = report(xdg.path(), &args);
    let again = report(xdg.path(), &args);
    same(
        "cmake world",
        ("the store", &store),
        ("a first scan", &first),
    );
    same(
        "cmake world",
        ("the store", &store),
        ("a cached scan", &again),
    );
}

/// The small worlds of tests/worlds/split/ that tests/split.rs splits, each alone.
#[test]
fn small_worlds_are_proposed_alike_from_store_directory_and_http() {
    if !nix_or_skip("small_worlds_are_proposed_alike_from_store_directory_and_http") {
        return;
    }
    for (file, attr) in [
        ("shadowed.nix", "shadowed"),
        ("cyclic.nix", "cyclic"),
        ("dri.nix", "loader"),
        ("wrapper.nix", "wrapper"),
        ("quoted-names.nix", "pkg"),
        ("autotools.nix", "spark"),
    ] {
        let world = repo().join("tests/worlds/split").join(file);
        let pkg = nix_stdout(
            "nix-build",
            &[world.to_str().unwrap(), "-A", attr, "--no-out-link"],
        );
        let s = Split {
            package: pkg.trim(),
            consumer: None,
            compression: XZ,
            options: &[],
        };
        agree(file, &s);
    }
}

/// The trixie world's rocBLAS (Debian 13's), split for llama-server-hip keeping gfx1030.
#[test]
fn trixie_world_rocblas_is_proposed_alike_from_store_directory_and_http() {
    let test = "trixie_world_rocblas_is_proposed_alike_from_store_directory_and_http";
    let Some(w) = trixie_world(test, "") else {
        return;
    };
    let s = Split {
        package: w.path("rocblas"),
        consumer: Some(&w.root),
        compression: ("zstd", ".nar.zst"),
        // Without targets Debian's rocBLAS has nothing to split (tests/trixie.rs).
        options: &["--gpu-targets", "gfx1030"],
    };
    agree("trixie world", &s);
}
