//! Shared helpers of the integration tests: running the `nixcut` binary, and building
//! the test worlds (`tests/worlds/`) with the real Nix.
//!
//! Tests that need Nix call [`nix_or_skip`]: without Nix they print why they skip and
//! return early, unless `NIXCUT_REQUIRE_NIX=1` (set by `.ci/run`), where a missing
//! Nix fails the test. [`contract`] is the JSON contract written down independently
//! of the library, for tests that read the binary's JSON.

#![allow(dead_code)]

pub mod contract;
pub mod serve;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

/// The settings single-user root Nix needs on these machines.
pub const NIX_CONFIG: &str =
    "sandbox = false\nbuild-users-group =\nexperimental-features = nix-command\nsubstituters =";

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `XDG_CACHE_HOME` of every command this test process starts: a directory of its
/// own under Cargo's scratch directory, so that no test reads or writes the caches under
/// the user's `~/.cache/nixcut` (tests of the caches set their own on top of it).
pub fn test_cache_home() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("xdg-cache")
            .join(std::process::id().to_string());
        // A directory left by an earlier process with the same id starts empty.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the tests' cache directory");
        dir
    })
}

/// A command running the `nixcut` binary under test, with colour off and the caches in
/// [`test_cache_home`].
pub fn nixcut() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_nixcut"));
    c.env("NO_COLOR", "1").env_remove("NIXCUT_STORE_DIR");
    c.env("NIX_CONFIG", NIX_CONFIG);
    c.env("XDG_CACHE_HOME", test_cache_home());
    c
}

/// Run nixcut with `args`; returns (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = nixcut().args(args).output().expect("run nixcut");
    decode(out)
}

pub fn decode(out: Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Parse stdout as JSON, with the stderr in the panic message.
pub fn json(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "nixcut {args:?} failed: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad JSON from {args:?}: {e}\n{out}"))
}

/// Whether a usable Nix is installed.
pub fn nix_available() -> bool {
    Command::new("nix-build")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// True when the test may use Nix; false (after saying so) when it must skip.
pub fn nix_or_skip(test: &str) -> bool {
    if nix_available() {
        return true;
    }
    if std::env::var("NIXCUT_REQUIRE_NIX").as_deref() == Ok("1") {
        panic!("{test}: Nix is required (NIXCUT_REQUIRE_NIX=1) but `nix-build` is not installed");
    }
    eprintln!("SKIP {test}: Nix is not installed (apt-get install -y nix-bin); set NIXCUT_REQUIRE_NIX=1 to make this a failure");
    false
}

/// A command for the Nix CLI with the settings these machines need (and, for a shell
/// that starts nixcut itself, the caches in [`test_cache_home`]).
pub fn nix_cmd(program: &str) -> Command {
    let mut c = Command::new(program);
    c.env("NIX_CONFIG", NIX_CONFIG);
    c.env("XDG_CACHE_HOME", test_cache_home());
    c
}

/// Run a Nix command and return its stdout; panics with stderr on failure.
pub fn nix_stdout(program: &str, args: &[&str]) -> String {
    let out = nix_cmd(program).args(args).output().expect("run nix");
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A built test world: attribute name → store path, and its root.
#[derive(Debug, Clone)]
pub struct World {
    pub root: String,
    pub attrs: BTreeMap<String, String>,
}

impl World {
    /// The store path of an attribute.
    pub fn path(&self, attr: &str) -> &str {
        self.attrs
            .get(attr)
            .unwrap_or_else(|| panic!("world has no attribute {attr}: {:?}", self.attrs.keys()))
    }
}

/// Build a world (`rocm` or `cuda`) with extra nix-build arguments; every attribute is
/// built. Builds are serialised within one test binary.
pub fn build_world(world: &str, args: &[&str]) -> World {
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let script = repo().join("tests/worlds/build.sh");
    let out = nix_cmd("bash")
        .arg(&script)
        .arg(world)
        .arg("--all")
        .args(args)
        .output()
        .expect("run tests/worlds/build.sh");
    assert!(
        out.status.success(),
        "building world {world} {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut attrs = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some((a, p)) = line.split_once('\t') {
            attrs.insert(a.to_string(), p.to_string());
        }
    }
    let root_attr = match world {
        "cuda" => "llama-cpp-cuda",
        "trixie" => "llama-server-hip",
        _ => "llama-cpp-rocm",
    };
    let root = attrs
        .get(root_attr)
        .cloned()
        .unwrap_or_else(|| panic!("world {world} has no {root_attr}: {attrs:?}"));
    World { root, attrs }
}

/// The default ROCm world, built once per test binary.
pub fn rocm_world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| build_world("rocm", &[]))
}

/// The default CUDA world, built once per test binary.
pub fn cuda_world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| build_world("cuda", &[]))
}

/// The directory of Debian 13's ROCm packages for the trixie world
/// (`tests/worlds/fetch-trixie.sh`: `apt-get download` with a sources list and package
/// lists of its own, cached under `target/debian-trixie/`). `None` (after saying why)
/// when they cannot be had; under `NIXCUT_REQUIRE_NIX=1` that is a failure instead.
pub fn trixie_debs(test: &str) -> Option<PathBuf> {
    static DEBS: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let got = DEBS.get_or_init(|| {
        let script = repo().join("tests/worlds/fetch-trixie.sh");
        match Command::new("bash").arg(&script).output() {
            Ok(o) if o.status.success() => {
                Ok(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
            }
            Ok(o) => Err(format!(
                "tests/worlds/fetch-trixie.sh failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => Err(format!("cannot run tests/worlds/fetch-trixie.sh: {e}")),
        }
    });
    match got {
        Ok(d) => Some(d.clone()),
        Err(why) => {
            if std::env::var("NIXCUT_REQUIRE_NIX").as_deref() == Ok("1") {
                panic!(
                    "{test}: Debian 13's ROCm packages are required (NIXCUT_REQUIRE_NIX=1): {why}"
                );
            }
            eprintln!("SKIP {test}: Debian 13's ROCm packages cannot be downloaded ({why}); set NIXCUT_REQUIRE_NIX=1 to make this a failure");
            None
        }
    }
}

/// The trixie world (Debian 13's real ROCm stack, `tests/worlds/trixie.nix`) with this
/// variant (`""`, or `"renamed-data"`), built once per test binary; `None` (after saying
/// why) when Nix, hipcc or the packages are missing.
pub fn trixie_world(test: &str, variant: &str) -> Option<&'static World> {
    static PLAIN: OnceLock<World> = OnceLock::new();
    static RENAMED: OnceLock<World> = OnceLock::new();
    if !nix_or_skip(test)
        || !tool_or_skip(test, "hipcc", "hipcc")
        || !tool_or_skip(test, "patchelf", "patchelf")
    {
        return None;
    }
    let debs = trixie_debs(test)?;
    let debs = debs.to_str().expect("utf-8 repository path").to_string();
    let cell = match variant {
        "" => &PLAIN,
        "renamed-data" => &RENAMED,
        v => panic!("no trixie variant {v:?}"),
    };
    Some(cell.get_or_init(|| {
        build_world(
            "trixie",
            &["--argstr", "debs", &debs, "--argstr", "variant", variant],
        )
    }))
}

/// `nix path-info --json -rS` of a store path, written into `dir`; returns the file.
pub fn path_info_file(dir: &Path, root: &str, name: &str) -> PathBuf {
    let json = nix_stdout("nix", &["path-info", "--json", "-r", "-S", root]);
    let f = dir.join(name);
    std::fs::write(&f, json).expect("write path-info json");
    f
}

/// Per-path closure sizes as Nix computes them (`nix path-info -rS --json`).
pub fn nix_closure_sizes(root: &str) -> BTreeMap<String, u64> {
    let json = nix_stdout("nix", &["path-info", "--json", "-r", "-S", root]);
    let v: serde_json::Value = serde_json::from_str(&json).expect("nix path-info json");
    let mut out = BTreeMap::new();
    if let Some(arr) = v.as_array() {
        for e in arr {
            if let (Some(p), Some(s)) = (e["path"].as_str(), e["closureSize"].as_u64()) {
                out.insert(p.to_string(), s);
            }
        }
    } else if let Some(obj) = v.as_object() {
        for (p, e) in obj {
            if let Some(s) = e["closureSize"].as_u64() {
                out.insert(p.clone(), s);
            }
        }
    }
    out
}

/// True when `program` can be started (`program --version`; its exit status does not
/// matter: Graphviz's `dot` answers `--version` with an error); false (after saying so)
/// when the test must skip, unless `NIXCUT_REQUIRE_NIX=1` (as in CI), where a missing
/// tool fails the test. `package` is the Debian package that provides it.
pub fn tool_or_skip(test: &str, program: &str, package: &str) -> bool {
    let ok = Command::new(program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok();
    if ok {
        return true;
    }
    if std::env::var("NIXCUT_REQUIRE_NIX").as_deref() == Ok("1") {
        panic!("{test}: `{program}` is required (NIXCUT_REQUIRE_NIX=1) but not installed (apt-get install -y {package})");
    }
    eprintln!("SKIP {test}: `{program}` is not installed (apt-get install -y {package}); set NIXCUT_REQUIRE_NIX=1 to make this a failure");
    false
}

/// Headless Chromium with the flags this machine needs (no sandbox as root, no
/// background networking, a fresh profile in `profile`).
pub fn chromium(profile: &Path) -> Command {
    let mut c = Command::new("chromium");
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]);
    c.arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// A directory holding the Debian packages `names` (`apt-get download`), cached under
/// `target/debian-debs/` between runs. `None` (after saying why) when they cannot be
/// downloaded; under `NIXCUT_REQUIRE_NIX=1` that is a failure instead.
pub fn debian_debs(test: &str, names: &[&str]) -> Option<PathBuf> {
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = repo().join("target/debian-debs");
    let have = |name: &str| {
        std::fs::read_dir(&dir).is_ok_and(|rd| {
            rd.filter_map(Result::ok).any(|e| {
                let f = e.file_name();
                let f = f.to_string_lossy();
                f.starts_with(&format!("{name}_")) && f.ends_with(".deb")
            })
        })
    };
    let missing: Vec<&str> = names.iter().copied().filter(|n| !have(n)).collect();
    if !missing.is_empty() {
        let ok = std::fs::create_dir_all(&dir).is_ok()
            && Command::new("apt-get")
                .arg("download")
                .args(&missing)
                .current_dir(&dir)
                .output()
                .is_ok_and(|o| o.status.success());
        if !ok || names.iter().any(|n| !have(n)) {
            let why = format!("cannot `apt-get download {}`", missing.join(" "));
            if std::env::var("NIXCUT_REQUIRE_NIX").as_deref() == Ok("1") {
                panic!("{test}: {why} (NIXCUT_REQUIRE_NIX=1)");
            }
            eprintln!("SKIP {test}: {why}; set NIXCUT_REQUIRE_NIX=1 to make this a failure");
            return None;
        }
    }
    Some(dir)
}

/// A wheel from PyPI (`pip download --no-deps SPEC`, e.g.
/// `nvidia-nvjpeg-cu12==12.4.0.76`), cached under `target/pypi-wheels/` between runs;
/// its path. `None` (after saying why) when it cannot be downloaded; under
/// `NIXCUT_REQUIRE_NIX=1` that is a failure instead.
pub fn pypi_wheel(test: &str, spec: &str) -> Option<PathBuf> {
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let (name, version) = spec.split_once("==").expect("SPEC is NAME==VERSION");
    let dir = repo().join("target/pypi-wheels");
    let prefix = format!("{}-{version}-", name.replace('-', "_"));
    let find = || {
        std::fs::read_dir(&dir).ok().and_then(|rd| {
            rd.filter_map(Result::ok).map(|e| e.path()).find(|p| {
                p.file_name()
                    .is_some_and(|f| f.to_string_lossy().starts_with(&prefix))
                    && p.extension().is_some_and(|x| x == "whl")
            })
        })
    };
    if let Some(w) = find() {
        return Some(w);
    }
    let ok = std::fs::create_dir_all(&dir).is_ok()
        && Command::new("python3")
            .args(["-m", "pip", "download", "--no-deps", "--quiet", "-d"])
            .arg(&dir)
            .arg(spec)
            .output()
            .is_ok_and(|o| o.status.success());
    match (ok, find()) {
        (true, Some(w)) => Some(w),
        _ => {
            let why = format!("cannot `pip download --no-deps {spec}`");
            if std::env::var("NIXCUT_REQUIRE_NIX").as_deref() == Ok("1") {
                panic!("{test}: {why} (NIXCUT_REQUIRE_NIX=1)");
            }
            eprintln!("SKIP {test}: {why}; set NIXCUT_REQUIRE_NIX=1 to make this a failure");
            None
        }
    }
}

/// A CCOB (compressed clang offload bundle) of `inner`, in the header layout of
/// docs/rocm-runtime.md: version 1, 2 or 3; method 0 zlib, 1 zstd.
pub fn ccob(version: u16, method: u16, inner: &[u8]) -> Vec<u8> {
    let data = match method {
        0 => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            std::io::Write::write_all(&mut e, inner).unwrap();
            e.finish().unwrap()
        }
        _ => zstd::bulk::compress(inner, 19).unwrap(),
    };
    let mut b = b"CCOB".to_vec();
    b.extend_from_slice(&version.to_le_bytes());
    b.extend_from_slice(&method.to_le_bytes());
    match version {
        1 => b.extend_from_slice(&(inner.len() as u32).to_le_bytes()),
        2 => {
            b.extend_from_slice(&((24 + data.len()) as u32).to_le_bytes());
            b.extend_from_slice(&(inner.len() as u32).to_le_bytes());
        }
        _ => {
            b.extend_from_slice(&((32 + data.len()) as u64).to_le_bytes());
            b.extend_from_slice(&(inner.len() as u64).to_le_bytes());
        }
    }
    b.extend_from_slice(&0x0123_4567_89ab_cdefu64.to_le_bytes());
    b.extend_from_slice(&data);
    b
}

/// A property test's configuration: `n` cases unless `PROPTEST_CASES` says otherwise,
/// and at most `max_shrink_iters` shrinking steps.
pub fn proptest_config(n: u32, max_shrink_iters: u32) -> proptest::test_runner::Config {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n);
    proptest::test_runner::Config {
        cases: n,
        max_shrink_iters,
        ..proptest::test_runner::Config::default()
    }
}

/// Every entry under `dir` with its kind, size, mode and modification time: compared
/// before and after a run, it shows whether anything below `dir` was written.
pub fn tree_inventory(dir: &Path) -> BTreeMap<PathBuf, String> {
    use std::os::unix::fs::MetadataExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            out.insert(
                p.clone(),
                format!(
                    "{:?} {} {:o} {}.{}",
                    m.file_type(),
                    m.len(),
                    m.mode(),
                    m.mtime(),
                    m.mtime_nsec()
                ),
            );
            if m.is_dir() {
                stack.push(p);
            }
        }
    }
    out
}

/// arch -> (file_bytes, elf_bytes) as nixcut reports them.
pub fn nixcut_archs(v: &serde_json::Value) -> BTreeMap<String, (u64, u64)> {
    v["archs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert_eq!(
                a["bytes"].as_u64().unwrap(),
                a["file_bytes"].as_u64().unwrap() + a["elf_bytes"].as_u64().unwrap()
            );
            (
                a["arch"].as_str().unwrap().to_string(),
                (
                    a["file_bytes"].as_u64().unwrap(),
                    a["elf_bytes"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

/// arch -> (file_bytes, elf_bytes) as tests/gpu_reader.py reads the store path.
pub fn reader_archs(path: &str) -> BTreeMap<String, (u64, u64)> {
    let script = repo().join("tests/gpu_reader.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg(path)
        .output()
        .expect("run python3 tests/gpu_reader.py");
    assert!(
        out.status.success(),
        "gpu_reader.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, a)| {
            (
                k.clone(),
                (
                    a["file_bytes"].as_u64().unwrap(),
                    a["elf_bytes"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

/// Every regular file below `dir` and every symlink, each list sorted; no symlink is
/// followed.
pub fn entries_below(dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut files, mut links) = (Vec::new(), Vec::new());
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let t = e.file_type().expect("file type");
            if t.is_dir() {
                todo.push(e.path());
            } else if t.is_symlink() {
                links.push(e.path());
            } else if t.is_file() {
                files.push(e.path());
            }
        }
    }
    files.sort();
    links.sort();
    (files, links)
}

/// Every regular file below `dir`, sorted; no symlink is followed.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    entries_below(dir).0
}

/// `nix-build tests/worlds/split/apply.nix` for the split report in `plan_file`, with
/// these extra arguments (`--argstr debs DIR` for the trixie world), attribute `attr`:
/// its store path.
pub fn build_split_applied(plan_file: &Path, extra: &[&str], attr: &str) -> String {
    let nix = repo().join("tests/worlds/split/apply.nix");
    let plan = plan_file.to_str().expect("utf-8 temp path");
    let mut args = vec![
        nix.to_str().expect("utf-8 repo path"),
        "--argstr",
        "plan",
        plan,
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-A", attr, "--no-out-link"]);
    nix_stdout("nix-build", &args).trim().to_string()
}

/// The generated code of split report `report` (for the rocm world's rocblas, or the
/// trixie world's with `extra` `--argstr debs DIR`) applied under the stdenv model by
/// tests/worlds/split/apply.nix (`code`): `attr` built, its store path. The code's
/// arguments other than the package are the store paths its `remove-references-to`
/// lines name, found by the name each argument is.
pub fn build_split_code(
    dir: &Path,
    report: &serde_json::Value,
    extra: &[&str],
    attr: &str,
) -> String {
    let file = dir.join("split-code.nix");
    std::fs::write(&file, report["nix"].as_str().expect("nix is a string"))
        .expect("write the code");
    let nix = repo().join("tests/worlds/split/apply.nix");
    let paths = code_paths(report);
    let mut args = vec![
        nix.to_str().expect("utf-8 repo path"),
        "--arg",
        "code",
        file.to_str().expect("utf-8 temp path"),
        "--argstr",
        "paths",
        &paths,
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-A", attr, "--no-out-link"]);
    nix_stdout("nix-build", &args).trim().to_string()
}

/// The store paths the generated code of `report` takes as arguments besides the
/// package, as JSON (identifier -> path): the targets of its `remove-references-to`
/// lines, each found by the name the argument is.
pub fn code_paths(report: &serde_json::Value) -> String {
    let code = report["nix"].as_str().expect("nix is a string");
    let args_line = code
        .lines()
        .find(|l| l.starts_with('{'))
        .expect("the code's argument line");
    let targets: Vec<&str> = report["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .filter(|a| a["action"] == "remove-references")
        .filter_map(|a| a["target"].as_str())
        .collect();
    let mut paths = serde_json::Map::new();
    for arg in args_line
        .trim_start_matches('{')
        .split('}')
        .next()
        .unwrap_or("")
        .split(',')
        .map(str::trim)
    {
        let named = targets.iter().find(|t| {
            let base = t.rsplit('/').next().unwrap_or("");
            base.get(33..)
                .is_some_and(|n| n.starts_with(&format!("{arg}-")))
        });
        if let Some(t) = named {
            paths.insert(arg.to_string(), serde_json::Value::from(*t));
        }
    }
    serde_json::Value::Object(paths).to_string()
}

/// The closure size Nix reports for a store path (`nix path-info -S`).
pub fn closure_size(path: &str) -> u64 {
    let out = nix_stdout("nix", &["path-info", "-S", path]);
    out.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no closure size in {out:?}"))
}

/// A `gpu` report's bytes per architecture of each store path: path -> `archs`.
pub fn gpu_path_archs(g: &serde_json::Value) -> BTreeMap<&str, &serde_json::Value> {
    g["paths"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| (p["path"].as_str().unwrap(), &p["archs"]))
        .collect()
}

/// Bytes in binary units with one decimal, as nixcut's tables print them (`16.2 KiB`,
/// `1008 B`, `1009.7 MiB`: a unit is used up to 1024 of it). Written here from what the
/// README shows, for tests that compute a figure and look for it in the output.
pub fn human(bytes: u64) -> String {
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    for unit in ["KiB", "MiB", "GiB"] {
        if v < 1024.0 {
            return format!("{v:.1} {unit}");
        }
        v /= 1024.0;
    }
    format!("{v:.1} TiB")
}

/// Nix's `-h` rendering: divide by 1024 while above 1024, one decimal, K/M/G suffix.
pub fn nix_human(bytes: u64) -> String {
    let mut v = bytes as f64;
    let mut i = 0;
    while v > 1024.0 && i < 4 {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.1}{}", ["", "K", "M", "G", "T"][i])
}
