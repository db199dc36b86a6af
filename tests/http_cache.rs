//! A binary cache over HTTP (`--cache URL`, `URL/<hash>.narinfo`): the test world
//! copied with `nix copy --to file://…?compression=xz&write-nar-listing=true`, served
//! from 127.0.0.1 by the server in `common::serve`, which injects faults: 500s on a share
//! of first requests, connections dropped mid-body, answers slower than the timeout,
//! a malformed narinfo, a missing one. Sizes are checked against `nix path-info -rS`,
//! file-level references against `nix-store -q --references`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use common::serve::{file_nar, write_cache, Fault, Server, APP, LIB};
use common::*;
use nixcut::http::{FetchError, HttpClient, HttpConfig, NarinfoResult, Pipes};
use serde_json::Value;

/// The ROCm world's closure as an xz binary cache with listings, made once.
fn world_cache() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let w = rocm_world();
        let dir = tempfile::tempdir().unwrap();
        let url = format!(
            "file://{}?compression=xz&write-nar-listing=true",
            dir.path().display()
        );
        nix_stdout("nix", &["copy", "--to", &url, &w.root]);
        dir
    })
    .path()
}

/// Run nixcut with its caches in `xdg`.
fn run_in(xdg: &Path, args: &[&str]) -> (i32, String, String) {
    decode(
        nixcut()
            .env("XDG_CACHE_HOME", xdg)
            .args(args)
            .output()
            .expect("run nixcut"),
    )
}

fn json_in(xdg: &Path, args: &[&str]) -> Value {
    let (code, out, err) = run_in(xdg, args);
    assert_eq!(code, 0, "nixcut {args:?} failed: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad JSON from {args:?}: {e}\n{out}"))
}

/// A stable pseudo-random share of request paths (about one in `n`).
fn share(path: &str, n: u32, k: u32) -> bool {
    path.bytes().map(u32::from).sum::<u32>() % n == k
}

fn hash_of(store_path: &str) -> String {
    Path::new(store_path).file_name().unwrap().to_str().unwrap()[..32].to_string()
}

fn narinfos(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "narinfo"))
        .collect();
    v.sort();
    v
}

/// `why` over HTTP gives Nix's closure sizes while a third of first narinfo requests
/// fail with 500 and another third are cut off mid-body; a second run asks for no
/// narinfo (the narinfo cache), `--no-cache` asks again.
#[test]
fn why_over_http_matches_nix_through_500s_and_dropped_bodies() {
    if !nix_or_skip("why_over_http_matches_nix_through_500s_and_dropped_bodies") {
        return;
    }
    let w = rocm_world();
    let cache = world_cache();
    let srv = Server::start(cache);
    srv.set_rule(|p, nth| {
        if !p.ends_with(".narinfo") || nth > 0 {
            None
        } else if share(p, 3, 0) {
            Some(Fault::Status(500))
        } else if share(p, 3, 1) {
            Some(Fault::DropMidBody)
        } else {
            None
        }
    });
    let xdg = tempfile::tempdir().unwrap();
    let args = [
        "why",
        "--cache",
        &srv.url,
        &w.root,
        "--all",
        "--no-evidence",
        "--format",
        "json",
    ];
    let r = json_in(xdg.path(), &args);
    let expect = nix_closure_sizes(&w.root);
    let got: BTreeMap<String, u64> = r["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["path"].as_str().unwrap().to_string(),
                p["closure_size"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, expect);
    assert_eq!(r["closure_size"].as_u64().unwrap(), expect[&w.root]);
    assert_eq!(r["source"]["kind"], "http-cache", "{}", r["source"]);
    let faulted: Vec<String> = srv
        .log()
        .into_iter()
        .filter(|p| p.ends_with(".narinfo") && (share(p, 3, 0) || share(p, 3, 1)))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(
        faulted.len() >= 3,
        "the faults hit some narinfos: {faulted:?}"
    );
    for p in &faulted {
        assert_eq!(srv.count(p), 2, "{p} was retried once");
    }
    assert_eq!(
        srv.count("/nix-cache-info"),
        1,
        "nix-cache-info is read first"
    );
    assert_eq!(srv.log()[0], "/nix-cache-info");

    srv.reset();
    let again = json_in(xdg.path(), &args);
    assert_eq!(again["paths"], r["paths"]);
    assert_eq!(srv.count(".narinfo"), 0, "warm: {:?}", srv.log());
    // A closure never walked as such, whose narinfos are all cached one by one.
    let sub = w.path("rocblas");
    let part = json_in(
        xdg.path(),
        &[
            "why",
            "--cache",
            &srv.url,
            sub,
            "--no-evidence",
            "--format",
            "json",
        ],
    );
    assert_eq!(part["closure_size"].as_u64().unwrap(), expect[sub]);
    assert_eq!(
        srv.count(".narinfo"),
        0,
        "warm sub-closure: {:?}",
        srv.log()
    );

    let mut no_cache = args.to_vec();
    no_cache.push("--no-cache");
    json_in(xdg.path(), &no_cache);
    assert_eq!(
        srv.count(".narinfo"),
        expect.len(),
        "--no-cache fetches again"
    );
}

/// `refs --closure` over HTTP streams the xz NARs (every first NAR request cut off
/// mid-body, resumed with a Range request) and finds exactly Nix's references for every
/// path, with the same evidence as the same cache read as a directory.
#[test]
fn refs_over_http_matches_nix_store_references() {
    if !nix_or_skip("refs_over_http_matches_nix_store_references") {
        return;
    }
    let w = rocm_world();
    let cache = world_cache();
    let srv = Server::start(cache);
    srv.set_rule(|p, nth| (p.ends_with(".nar.xz") && nth == 0).then_some(Fault::DropMidBody));
    let xdg = tempfile::tempdir().unwrap();
    let r = json_in(
        xdg.path(),
        &[
            "refs",
            "--cache",
            &srv.url,
            "--closure",
            &w.root,
            "--format",
            "json",
        ],
    );
    assert_eq!(r["files_from"], "nar");
    let closure: BTreeSet<String> = nix_stdout("nix-store", &["-qR", &w.root])
        .lines()
        .map(str::to_string)
        .collect();
    let paths = r["paths"].as_array().unwrap();
    let listed: BTreeSet<String> = paths
        .iter()
        .map(|p| p["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, closure);
    for p in paths {
        let path = p["path"].as_str().unwrap();
        let with_hits: BTreeSet<String> = p["references"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["evidence_count"].as_u64().unwrap() > 0)
            .map(|e| e["path"].as_str().unwrap().to_string())
            .collect();
        let nix: BTreeSet<String> = nix_stdout("nix-store", &["-q", "--references", path])
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(with_hits, nix, "references of {path}");
    }
    let nars = srv.log().iter().filter(|p| p.ends_with(".nar.xz")).count();
    assert!(nars >= 2 * closure.len(), "every NAR resumed once: {nars}");
    assert!(srv.count(".ls") > 0, "listings were read");

    let dir_xdg = tempfile::tempdir().unwrap();
    let from_dir = json_in(
        dir_xdg.path(),
        &[
            "refs",
            "--closure",
            cache.to_str().unwrap(),
            "--root",
            &w.root,
            "--format",
            "json",
        ],
    );
    assert_eq!(r["paths"], from_dir["paths"], "HTTP and directory agree");
}

/// Each fault is retried or gives a clear error (exit 2) naming what failed.
#[test]
fn faults_are_retried_or_named() {
    if !nix_or_skip("faults_are_retried_or_named") {
        return;
    }
    let w = rocm_world();
    let cache = world_cache();
    let srv = Server::start(cache);
    let xdg = tempfile::tempdir().unwrap();
    let root_hash = hash_of(&w.root);
    let leaf = w.path("rocm-runtime");
    let leaf_hash = hash_of(leaf);
    let base = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["why", "--cache", &srv.url, &w.root, "--no-cache"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let go = |args: &[String]| {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        run_in(xdg.path(), &a)
    };

    // Slower than the timeout once: retried.
    let slow = format!("/{root_hash}.narinfo");
    let s2 = slow.clone();
    srv.set_rule(move |p, nth| {
        (p == s2 && nth == 0).then_some(Fault::Slow(Duration::from_secs(3)))
    });
    let (code, _, err) = go(&base(&["--http-timeout", "0.5", "--no-evidence"]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(srv.count(&slow), 2);

    // Slower every time: a timeout error naming the URL, after the retries.
    srv.reset();
    srv.set_rule(move |p, _| (p == slow).then_some(Fault::Slow(Duration::from_secs(3))));
    let (code, _, err) = go(&base(&[
        "--http-timeout",
        "0.5",
        "--http-retries",
        "1",
        "--no-evidence",
    ]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{}/{root_hash}.narinfo", srv.url)),
        "{err}"
    );
    assert!(err.contains("2 attempts"), "{err}");

    // 500 every time.
    srv.reset();
    let l = format!("/{leaf_hash}.narinfo");
    srv.set_rule(move |p, _| (p == l).then_some(Fault::Status(500)));
    let (code, _, err) = go(&base(&["--http-retries", "2", "--no-evidence"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("HTTP 500") && err.contains("3 attempts"),
        "{err}"
    );
    assert!(err.contains(&leaf_hash), "{err}");

    // Missing: names the hash and the path that references it.
    srv.reset();
    let l = format!("/{leaf_hash}.narinfo");
    srv.set_rule(move |p, _| (p == l).then_some(Fault::NotFound));
    let (code, _, err) = go(&base(&["--no-evidence"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&leaf_hash) && err.contains("no cache has"),
        "{err}"
    );
    let referrers: Vec<String> = narinfos(cache)
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .filter(|t| {
            t.lines()
                .any(|l| l.starts_with("References:") && l.contains(&leaf_hash))
        })
        .filter_map(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("StorePath: "))
                .map(str::to_string)
        })
        .filter(|p| !p.contains(&leaf_hash))
        .collect();
    assert!(
        referrers.iter().any(|r| err.contains(r.as_str())),
        "names a referrer of {leaf_hash} ({referrers:?}): {err}"
    );

    // Malformed: the URL and the line.
    srv.reset();
    let l = format!("/{leaf_hash}.narinfo");
    let text = std::fs::read_to_string(cache.join(format!("{leaf_hash}.narinfo"))).unwrap();
    let bad = text.replace("NarSize: ", "NarSize: lots");
    let line = bad.lines().position(|l| l.starts_with("NarSize:")).unwrap() + 1;
    srv.set_rule(move |p, _| (p == l).then(|| Fault::Body(bad.clone().into_bytes())));
    let (code, _, err) = go(&base(&["--no-evidence"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "{}/{leaf_hash}.narinfo:{line}: expected a NarSize number",
            srv.url
        )),
        "{err}"
    );

    // The cache's store directory against --store-dir.
    srv.reset();
    let (code, _, err) = go(&base(&["--store-dir", "/other/store", "--no-evidence"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("/nix-cache-info") && err.contains("/other/store"),
        "{err}"
    );

    // A NAR that cannot be had: a warning in the report, not an abort.
    srv.reset();
    srv.set_rule(|p, _| p.ends_with(".nar.xz").then_some(Fault::Status(503)));
    let (code, out, err) = go(&base(&["--http-retries", "0", "--format", "json"]));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("HTTP 503"), "{err}");
    let _: Value = serde_json::from_str(&out).unwrap();
}

/// ROOT as `URL/<hash>.narinfo`, and `check`, `diff` and `snapshot` through `--cache`.
#[test]
fn every_command_reads_the_cache() {
    if !nix_or_skip("every_command_reads_the_cache") {
        return;
    }
    let w = rocm_world();
    let cache = world_cache();
    let srv = Server::start(cache);
    let xdg = tempfile::tempdir().unwrap();
    let root_hash = hash_of(&w.root);
    let expect = nix_closure_sizes(&w.root)[&w.root];

    let url = format!("{}/{root_hash}.narinfo", srv.url);
    let r = json_in(
        xdg.path(),
        &["why", &url, "--no-evidence", "--format", "json"],
    );
    assert_eq!(r["closure_size"].as_u64().unwrap(), expect);
    let base_name = Path::new(&w.root).file_name().unwrap().to_str().unwrap();
    let r = json_in(
        xdg.path(),
        &[
            "why",
            "--cache",
            &srv.url,
            base_name,
            "--no-evidence",
            "--format",
            "json",
        ],
    );
    assert_eq!(r["closure_size"].as_u64().unwrap(), expect);

    let (code, _, err) = run_in(
        xdg.path(),
        &["check", "--cache", &srv.url, &root_hash, "--max-size", "1"],
    );
    assert_eq!(code, 1, "a 1-byte budget fails: {err}");
    let snap = xdg.path().join("base.json");
    let (code, _, err) = run_in(
        xdg.path(),
        &[
            "snapshot",
            "--cache",
            &srv.url,
            &w.root,
            "-o",
            snap.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let d = json_in(
        xdg.path(),
        &[
            "diff",
            "--cache",
            &srv.url,
            snap.to_str().unwrap(),
            &w.root,
            "--format",
            "json",
        ],
    );
    assert_eq!(d["packages"].as_array().map(Vec::len), Some(0), "{d}");
}

/// NARs compressed with zstd, bzip2 or not at all stream through the same decoders as
/// xz ones: `refs --closure` over HTTP gives the same report for each.
#[test]
fn every_nar_compression_streams() {
    if !nix_or_skip("every_nar_compression_streams") {
        return;
    }
    let w = rocm_world();
    let xz = Server::start(world_cache());
    let refs = |url: &str| {
        let xdg = tempfile::tempdir().unwrap();
        json_in(
            xdg.path(),
            &[
                "refs",
                "--cache",
                url,
                "--closure",
                &w.root,
                "--format",
                "json",
            ],
        )
    };
    let want = refs(&xz.url);
    for compression in ["zstd", "bzip2", "none"] {
        let dir = tempfile::tempdir().unwrap();
        let to = format!(
            "file://{}?compression={compression}&write-nar-listing=true",
            dir.path().display()
        );
        nix_stdout("nix", &["copy", "--to", &to, &w.root]);
        let srv = Server::start(dir.path());
        let got = refs(&srv.url);
        assert_eq!(got["paths"], want["paths"], "{compression}");
        let suffix = match compression {
            "zstd" => ".nar.zst",
            "bzip2" => ".nar.bz2",
            _ => ".nar",
        };
        assert!(srv.count(suffix) > 0, "{compression}: {:?}", srv.log());
    }
}

/// A generated binary cache of `n` paths (no Nix needed): path `i` references its
/// children `2i + 1` and `2i + 2` in a binary tree and the next path `i + 1`, and its
/// one uncompressed NAR is a file naming those references, so that every reference has
/// evidence. Returns the cache, the store paths (root first) and each path's
/// references as indices.
struct Generated {
    dir: tempfile::TempDir,
    paths: Vec<String>,
    refs: Vec<Vec<usize>>,
}

fn generated_cache(n: usize) -> Generated {
    use sha2::{Digest, Sha256};
    const NIX32: &[u8] = b"0123456789abcdfghijklmnpqrsvwxyz";
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("nar")).unwrap();
    std::fs::write(
        dir.path().join("nix-cache-info"),
        "StoreDir: /nix/store\nWantMassQuery: 1\nPriority: 40\n",
    )
    .unwrap();
    let hashes: Vec<String> = (0..n)
        .map(|i| {
            Sha256::digest(format!("path {i}"))[..32]
                .iter()
                .map(|b| NIX32[usize::from(*b) % 32] as char)
                .collect()
        })
        .collect();
    let bases: Vec<String> = (0..n)
        .map(|i| format!("{}-gen{i}-1.0", hashes[i]))
        .collect();
    let refs: Vec<Vec<usize>> = (0..n)
        .map(|i| {
            let mut r: Vec<usize> = [2 * i + 1, 2 * i + 2, i + 1]
                .into_iter()
                .filter(|&j| j < n)
                .collect();
            r.sort_unstable();
            r.dedup();
            r
        })
        .collect();
    let nar_string = |b: &[u8]| {
        let mut v = (b.len() as u64).to_le_bytes().to_vec();
        v.extend_from_slice(b);
        v.resize(v.len() + (8 - b.len() % 8) % 8, 0);
        v
    };
    for i in 0..n {
        let body: String = refs[i]
            .iter()
            .map(|&j| format!("/nix/store/{}/lib\n", bases[j]))
            .collect();
        let mut nar = Vec::new();
        for s in [
            &b"nix-archive-1"[..],
            b"(",
            b"type",
            b"regular",
            b"contents",
        ] {
            nar.extend(nar_string(s));
        }
        nar.extend(nar_string(body.as_bytes()));
        nar.extend(nar_string(b")"));
        let digest: String = Sha256::digest(&nar)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        std::fs::write(dir.path().join(format!("nar/{digest}.nar")), &nar).unwrap();
        let references: Vec<&str> = refs[i].iter().map(|&j| bases[j].as_str()).collect();
        std::fs::write(
            dir.path().join(format!("{}.narinfo", hashes[i])),
            format!(
                "StorePath: /nix/store/{}\nURL: nar/{digest}.nar\nCompression: none\n\
                 NarHash: sha256:{digest}\nNarSize: {}\nReferences: {}\n",
                bases[i],
                nar.len(),
                references.join(" ")
            ),
        )
        .unwrap();
    }
    Generated {
        dir,
        paths: bases.iter().map(|b| format!("/nix/store/{b}")).collect(),
        refs,
    }
}

impl Generated {
    /// The referrers `why` scans for the path at index `i`: at most 4 (the default
    /// `--evidence-referrers`).
    fn scanned_referrers(&self, i: usize) -> Vec<usize> {
        let mut by: Vec<usize> = (0..self.refs.len())
            .filter(|&k| self.refs[k].contains(&i))
            .collect();
        by.truncate(4); // every path here has at most 3
        by
    }

    fn index(&self, path: &str) -> usize {
        self.paths.iter().position(|p| p == path).unwrap()
    }
}

/// `why --format json` over HTTP used to download the NAR of nearly every referrer in
/// the closure (evidence for every path listed). It now lists every path but gathers
/// evidence for the first 25, the rows of a default table, so that JSON and table
/// report the same evidence; `--evidence-paths all` asks for the rest.
#[test]
fn why_json_over_http_fetches_nars_only_for_the_top_paths() {
    let g = generated_cache(200);
    let srv = Server::start(g.dir.path());
    let root = &g.paths[0];
    let nars_for = |rows: &[Value]| -> usize {
        rows.iter()
            .flat_map(|p| g.scanned_referrers(g.index(p["path"].as_str().unwrap())))
            .collect::<BTreeSet<usize>>()
            .len()
    };

    let xdg = tempfile::tempdir().unwrap();
    let r = json_in(
        xdg.path(),
        &["why", "--cache", &srv.url, root, "--format", "json"],
    );
    let rows = r["paths"].as_array().unwrap();
    assert_eq!(rows.len(), 200, "JSON lists every path");
    let top = nars_for(&rows[..25]);
    let every = nars_for(rows);
    assert!(
        top < every / 2,
        "the test tells them apart: {top} vs {every}"
    );
    assert_eq!(
        srv.count(".nar"),
        top,
        "one NAR per referrer of the first 25 paths (every path's: {every})"
    );
    assert_eq!(r["evidence"], "files");
    assert_eq!(r["evidence_paths"], 25);
    for (k, p) in rows.iter().enumerate() {
        let has = p.get("kept_by").is_some();
        let is_root = p["path"] == *root;
        assert_eq!(has, k < 25 && !is_root, "row {k}: {p}");
    }

    // The table scans the same referrers and names the same first one per row.
    srv.reset();
    let fresh = tempfile::tempdir().unwrap();
    let (code, table, err) = run_in(fresh.path(), &["why", "--cache", &srv.url, root]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(srv.count(".nar"), top, "table NARs: {:?}", srv.log());
    let lines: Vec<&str> = table.lines().collect();
    for (k, p) in rows[..25].iter().enumerate() {
        let line = lines
            .iter()
            .find(|l| l.trim_start().starts_with(&format!("{} ", k + 1)))
            .unwrap_or_else(|| panic!("row {}: {table}", k + 1));
        if let Some(first) = p["kept_by"].get(0) {
            let name = &first["referrer"].as_str().unwrap()[44..];
            assert!(line.contains(&format!("← {name}:")), "{line} / {first}");
        }
    }

    // Asked for all: every referrer, in a fresh cache.
    srv.reset();
    let all = tempfile::tempdir().unwrap();
    let r = json_in(
        all.path(),
        &[
            "why",
            "--cache",
            &srv.url,
            root,
            "--format",
            "json",
            "--evidence-paths",
            "all",
        ],
    );
    assert_eq!(r["evidence_paths"], 200);
    assert_eq!(srv.count(".nar"), every);
}

/// The closure record in the narinfo cache: a second run reads it (no narinfo asked
/// for, one `nix-cache-info`); a record that is corrupted or cut short is reported,
/// walked again from the cached narinfos (still no request) with the same report,
/// and rewritten; a record of another nixcut version is replaced without a word.
#[test]
fn a_corrupted_closure_record_is_walked_again_with_a_warning() {
    let g = generated_cache(300);
    let srv = Server::start(g.dir.path());
    let xdg = tempfile::tempdir().unwrap();
    let args = [
        "why",
        "--cache",
        &srv.url,
        &g.paths[0],
        "--all",
        "--no-evidence",
        "--format",
        "json",
    ];
    let cold = json_in(xdg.path(), &args);
    assert_eq!(cold["path_count"], 300);
    assert_eq!(srv.count(".narinfo"), 300);

    let db = xdg.path().join("nixcut/narinfo/narinfo-v1.sqlite");
    let record = || -> Vec<u8> {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.query_row("SELECT record FROM closure_record", [], |r| r.get(0))
            .unwrap()
    };
    let replace = |bytes: &[u8]| {
        let c = rusqlite::Connection::open(&db).unwrap();
        let n = c
            .execute("UPDATE closure_record SET record = ?1", [bytes])
            .unwrap();
        assert_eq!(n, 1, "one closure recorded");
    };
    let warm = |what: &str| -> String {
        srv.reset();
        let (code, out, err) = run_in(xdg.path(), &args);
        assert_eq!(code, 0, "{what}: {err}");
        let r: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(r["paths"], cold["paths"], "{what}: same report");
        assert_eq!(srv.count(".narinfo"), 0, "{what}: {:?}", srv.log());
        assert_eq!(srv.log(), ["/nix-cache-info"], "{what}");
        err
    };

    let good = record();
    assert!(good.starts_with(b"nixcut-closure\n"), "a closure record");
    assert!(!warm("warm").contains("warning"));

    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x20;
    replace(&flipped);
    let err = warm("corrupted");
    assert!(
        err.contains("warning:") && err.contains("damaged") && err.contains("checksum"),
        "{err}"
    );
    assert_eq!(record(), good, "rewritten");
    assert!(!warm("rewritten").contains("warning"));

    replace(&good[..good.len() - 7]);
    let err = warm("truncated");
    assert!(err.contains("damaged"), "{err}");
    assert_eq!(record(), good);

    // Another writer's version (the byte after magic, format and length byte).
    let mut other = good.clone();
    other[16 + 4 + 1] ^= 1;
    replace(&other);
    assert!(!warm("other version").contains("warning"));
    assert_eq!(record(), good);
}

// ---- Issue 19: hostile caches on loopback (no Nix needed) ----

/// A cache at `<dir>/<sub>`: APP (a script that execs LIB's program) and LIB, with
/// uncompressed NARs whose narinfos carry their true NarHash and NarSize. Returns the
/// cache directory and APP's NAR file name (`nar/<hex>.nar`).
fn tiny_cache(dir: &Path, sub: &str) -> (PathBuf, String) {
    let cache = dir.join(sub);
    let app = format!(
        "#!/bin/sh\nexec /nix/store/{LIB}/bin/lib \"$@\"\n{}\n",
        "#".repeat(400)
    );
    let files = write_cache(
        &cache,
        &[
            (APP, file_nar(app.as_bytes()), LIB),
            (LIB, file_nar(b"#!/bin/sh\necho lib\n"), ""),
        ],
    );
    (cache, files[0].clone())
}

/// The evidence of APP's reference to LIB in `refs --format json`, and stderr with
/// APP's warnings.
fn app_lib_evidence(xdg: &Path, url: &str, extra: &[&str]) -> (Vec<Value>, String) {
    let root = format!("/nix/store/{APP}");
    let mut args = vec!["refs", "--cache", url, &root, "--format", "json"];
    args.extend(extra);
    let (code, out, err) = run_in(xdg, &args);
    assert_eq!(code, 0, "{args:?}: {err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let app = v["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"].as_str().is_some_and(|p| p.ends_with(APP)));
    let warnings: Vec<&str> = app
        .and_then(|p| p["warnings"].as_array())
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let err = format!("{err}{}", warnings.join("\n"));
    let ev = app
        .and_then(|p| p["references"].as_array())
        .and_then(|r| {
            r.iter()
                .find(|r| r["path"].as_str().is_some_and(|p| p.ends_with(LIB)))
        })
        .and_then(|r| r["evidence"].as_array().cloned())
        .unwrap_or_default();
    (ev, err)
}

/// Issue 19, item 2: two narinfos of 2^63 bytes each gave `why` a saturated
/// `16.0 EiB`, `check` exit 0 and `snapshot` a baseline it refused to read; a cache
/// directory with the same narinfos was already refused. Over HTTP too, now.
#[test]
fn http_nar_sizes_past_u64_are_refused_like_a_cache_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (cache, _) = tiny_cache(dir.path(), "c");
    for p in [APP, LIB] {
        let f = cache.join(format!("{}.narinfo", &p[..32]));
        let text = std::fs::read_to_string(&f).unwrap();
        let text: String = text
            .lines()
            .map(|l| {
                if l.starts_with("NarSize:") {
                    "NarSize: 9223372036854775808\n".to_string()
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        std::fs::write(&f, text).unwrap();
    }
    let srv = Server::start(&cache);
    let xdg = tempfile::tempdir().unwrap();
    let root = format!("/nix/store/{APP}");
    let u = srv.url.as_str();
    for args in [
        vec!["why", "--cache", u, &root, "--no-evidence"],
        vec!["check", "--cache", u, &root, "--max-size", "1GiB"],
        vec![
            "check",
            "--cache",
            u,
            &root,
            "--against",
            &root,
            "--max-ratio",
            "2",
        ],
        vec!["snapshot", "--cache", u, &root, "-o", "-"],
    ] {
        let (code, out, err) = run_in(xdg.path(), &args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains("add up to more than"), "{args:?}: {err}");
    }
}

/// Issue 19, item 3: a NAR whose bytes differ from its narinfo's NarHash was scanned,
/// and its (wrong) evidence cached per store path, so that the correct server got it
/// back until `--no-cache`. Now the mismatch is a warning, the path is not scanned,
/// nothing is cached: the next run against the right NAR finds the reference.
#[test]
fn a_nar_that_does_not_match_its_narinfo_is_neither_used_nor_cached() {
    let dir = tempfile::tempdir().unwrap();
    let (cache, app_nar) = tiny_cache(dir.path(), "c");
    let srv = Server::start(&cache);
    let xdg = tempfile::tempdir().unwrap();
    // The same length, another content: only the hash tells.
    let good = std::fs::read(cache.join(&app_nar)).unwrap();
    let forged: Vec<u8> = {
        let at = good
            .windows(LIB.len())
            .position(|w| w == LIB.as_bytes())
            .unwrap();
        let mut f = good.clone();
        f[at..at + LIB.len()].fill(b'x');
        f
    };
    assert_eq!(forged.len(), good.len());
    let nar_path = format!("/{app_nar}");
    srv.set_rule(move |p, _| (p == nar_path).then(|| Fault::Body(forged.clone())));
    let (ev, err) = app_lib_evidence(xdg.path(), &srv.url, &[]);
    assert!(err.contains("does not match its narinfo"), "{err}");
    assert!(err.contains("NarHash"), "{err}");
    assert!(ev.is_empty(), "no evidence from the forged NAR: {ev:?}");
    // Longer than NarSize: refused as well.
    let mut longer = good.clone();
    longer.extend_from_slice(&[0u8; 64]);
    let nar_path = format!("/{app_nar}");
    srv.set_rule(move |p, _| (p == nar_path).then(|| Fault::Body(longer.clone())));
    let (_, err) = app_lib_evidence(xdg.path(), &srv.url, &[]);
    assert!(err.contains("longer than its NarSize"), "{err}");
    // The right NAR now: scanned (nothing was cached), the reference found.
    srv.reset();
    let (ev, err) = app_lib_evidence(xdg.path(), &srv.url, &[]);
    assert!(!err.contains("does not match"), "{err}");
    assert!(!ev.is_empty(), "the script's reference is found: {err}");
}

/// Issue 19, item 4: the narinfos a failed walk parsed were kept in the narinfo cache
/// for good, so that runs against the fixed server kept failing until `--no-cache`:
/// a root narinfo naming another path for the hash asked for, and a narinfo whose
/// references 404. Now a failed walk keeps nothing.
#[test]
fn a_failed_walk_leaves_nothing_in_the_narinfo_cache() {
    let dir = tempfile::tempdir().unwrap();
    let (cache, _) = tiny_cache(dir.path(), "c");
    let srv = Server::start(&cache);
    let xdg = tempfile::tempdir().unwrap();
    let root = format!("/nix/store/{APP}");
    let args = ["why", "--cache", &srv.url, &root, "--no-evidence"];
    let app_info = format!("/{}.narinfo", &APP[..32]);
    let text = std::fs::read_to_string(cache.join(&app_info[1..])).unwrap();

    // A wrong name for the hash.
    let renamed = text.replace("-app-1.0", "-evil-6.6");
    let p = app_info.clone();
    srv.set_rule(move |q, _| (q == p).then(|| Fault::Body(renamed.clone().into_bytes())));
    let (code, _, err) = run_in(xdg.path(), &args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("evil-6.6"), "{err}");
    srv.reset();
    let (code, _, err) = run_in(xdg.path(), &args);
    assert_eq!(code, 0, "the fixed server is asked again: {err}");

    // References that 404 (5,000 of them), then a fixed narinfo without them.
    let xdg = tempfile::tempdir().unwrap();
    let ghosts: Vec<String> = (0..5000)
        .map(|i| {
            format!(
                "{:0>32}-ghost-{i}",
                format!("{i}").replace(['e', 't', 'u', 'o'], "0")
            )
        })
        .collect();
    let haunted = text.replace(
        &format!("References: {LIB}"),
        &format!("References: {LIB} {}", ghosts.join(" ")),
    );
    let p = app_info.clone();
    srv.set_rule(move |q, _| (q == p).then(|| Fault::Body(haunted.clone().into_bytes())));
    let (code, _, err) = run_in(xdg.path(), &args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("ghost"), "{err}");
    srv.reset();
    let (code, _, err) = run_in(xdg.path(), &args);
    assert_eq!(code, 0, "the fixed narinfo is fetched again: {err}");
    assert_eq!(srv.count(&app_info), 1);
}

/// Issue 19, item 8: `URL: nar/%2e%2e/%2e%2e/…` (or with backslashes) fetched and
/// scanned a file outside the cache's base path `http://host/sub/cache/`. Now such a
/// URL is refused before any request.
#[test]
fn nar_urls_that_decode_out_of_the_cache_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (cache, app_nar) = tiny_cache(dir.path(), "sub/cache");
    // What an escape would reach: the same NAR outside the cache.
    std::fs::copy(cache.join(&app_nar), dir.path().join("outside.nar")).unwrap();
    let info = cache.join(format!("{}.narinfo", &APP[..32]));
    let text = std::fs::read_to_string(&info).unwrap();
    let srv = Server::start(dir.path());
    let url = format!("{}/sub/cache", srv.url);
    for evil in [
        "nar/%2e%2e/%2e%2e/%2e%2e/outside.nar",
        "nar/%2E%2E/%2e%2E/%2e%2e/outside.nar",
        "nar\\..\\..\\..\\outside.nar",
        "nar/%5c..%5c..%5c..%5coutside.nar",
        "nar/%252e%252e/%252e%252e/%252e%252e/outside.nar",
    ] {
        std::fs::write(&info, text.replace(&app_nar, evil)).unwrap();
        srv.reset();
        let xdg = tempfile::tempdir().unwrap();
        let (ev, err) = app_lib_evidence(xdg.path(), &url, &[]);
        assert!(
            err.contains("is not a path inside the cache"),
            "{evil}: {err}"
        );
        assert!(ev.is_empty(), "{evil}: {ev:?}");
        assert_eq!(srv.count("outside.nar"), 0, "{evil}: {:?}", srv.log());
    }
}

/// Issue 19, item 9: a redirect to `file:`, `data:` or `mailto:` panicked inside ureq
/// (exit 101; on a narinfo, the walk then waited for ever). Redirects are followed by
/// nixcut now: to http(s) only, at most 8 hops, else exit 2 (or a warning, for a NAR
/// or listing) naming the URL. A plain redirect within the server is followed.
#[test]
fn redirects_to_other_schemes_are_refused_naming_the_url() {
    let dir = tempfile::tempdir().unwrap();
    let (cache, app_nar) = tiny_cache(dir.path(), "c");
    let srv = Server::start(&cache);
    let root = format!("/nix/store/{APP}");
    let app_info = format!("/{}.narinfo", &APP[..32]);
    let app_ls = format!("/{}.ls", &APP[..32]);
    let nar = format!("/{app_nar}");
    for target in [
        "file:///etc/passwd",
        "data:text/plain,hello",
        "mailto:a@b.c",
    ] {
        // nix-cache-info, then a NAR and a listing (the commands that scan), then the
        // root's narinfo.
        for (path, scan) in [
            ("/nix-cache-info", false),
            (nar.as_str(), true),
            (app_ls.as_str(), true),
            (app_info.as_str(), false),
        ] {
            let xdg = tempfile::tempdir().unwrap();
            srv.reset();
            let (p, t) = (path.to_string(), target.to_string());
            srv.set_rule(move |q, _| (q == p).then(|| Fault::Redirect(t.clone())));
            let args = ["refs", "--cache", &srv.url, &root, "--http-retries", "0"];
            let (code, out, err) = run_in(xdg.path(), &args);
            let err = format!("{out}{err}");
            assert!(!err.contains("panicked"), "{path} -> {target}: {err}");
            if scan {
                assert_eq!(code, 0, "{path} -> {target}: a warning: {err}");
            } else {
                assert_eq!(code, 2, "{path} -> {target}: {err}");
                assert!(err.contains(&format!("{}{path}", srv.url)), "{err}");
            }
            if path != app_ls {
                assert!(
                    err.contains("only http and https URLs are followed"),
                    "{path} -> {target}: {err}"
                );
            }
        }
    }
    // Followed: a redirect to the narinfo's copy elsewhere on the server.
    std::fs::copy(cache.join(&app_info[1..]), cache.join("moved.narinfo")).unwrap();
    let xdg = tempfile::tempdir().unwrap();
    srv.reset();
    let p = app_info.clone();
    srv.set_rule(move |q, _| (q == p).then(|| Fault::Redirect("/moved.narinfo".into())));
    let (ev, err) = app_lib_evidence(xdg.path(), &srv.url, &[]);
    assert!(!ev.is_empty(), "{err}");
    // A loop: refused after 8 hops.
    srv.reset();
    let p = app_info.clone();
    srv.set_rule(move |q, _| (q == p).then(|| Fault::Redirect(p.clone())));
    let xdg = tempfile::tempdir().unwrap();
    let (code, _, err) = run_in(xdg.path(), &["why", "--cache", &srv.url, &root]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("more than 8 redirects"), "{err}");
}

/// Issue 19, item 10: NarSize was not enforced and every resume restarted the retry
/// budget: an endless NAR ran past 116 GB, a slow drip took 118 s with
/// `--http-timeout 3`. Now a NAR stops at its declared length (FileSize here) and a
/// download has one deadline, `timeout · (retries + 1)` plus its length at 64 KiB/s.
#[test]
fn endless_and_dripping_nars_stop_at_their_bounds() {
    use common::serve::ENDLESS_CAP;
    let dir = tempfile::tempdir().unwrap();
    let (cache, app_nar) = tiny_cache(dir.path(), "c");
    let info = cache.join(format!("{}.narinfo", &APP[..32]));
    let nar_len = std::fs::metadata(cache.join(&app_nar)).unwrap().len();
    let text = std::fs::read_to_string(&info).unwrap();
    std::fs::write(&info, format!("{text}FileSize: {nar_len}\n")).unwrap();
    let srv = Server::start(&cache);
    let nar = format!("/{app_nar}");

    // Endless: a NAR whose one file claims 64 GiB, then zeros. Served once; asked
    // again (a resume), 404.
    let mut head = file_nar(b"");
    head.truncate(head.len() - 24); // drop the empty contents and `)`
    head.extend((64u64 << 30).to_le_bytes());
    let n = nar.clone();
    srv.set_rule(move |p, nth| {
        (p == n).then(|| {
            if nth == 0 {
                Fault::Endless(head.clone())
            } else {
                Fault::NotFound
            }
        })
    });
    let xdg = tempfile::tempdir().unwrap();
    let (ev, err) = app_lib_evidence(xdg.path(), &srv.url, &[]);
    assert!(ev.is_empty(), "{ev:?}");
    assert!(
        err.contains(&format!(
            "longer than the {nar_len} bytes its narinfo declares"
        )),
        "{err}"
    );
    let sent = srv.bytes_sent(&nar);
    assert!(
        sent < ENDLESS_CAP / 2,
        "{sent} bytes sent of an endless NAR (at most {nar_len} read, plus what the \
         sockets buffered)"
    );

    // A drip: one byte every 20 ms (~10 s for this NAR). With --http-timeout 1 and one
    // retry, the download gets 2 s.
    // Another server: the endless answer's thread may still be counting its bytes.
    let srv = Server::start(&cache);
    let n = nar.clone();
    srv.set_rule(move |p, _| (p == n).then_some(Fault::Drip(Duration::from_millis(20))));
    let xdg = tempfile::tempdir().unwrap();
    let (ev, err) = app_lib_evidence(
        xdg.path(),
        &srv.url,
        &["--http-timeout", "1", "--http-retries", "1"],
    );
    assert!(ev.is_empty(), "{ev:?}");
    assert!(err.contains("deadline"), "{err}");
    assert!(
        srv.bytes_sent(&nar) < nar_len,
        "stopped before the whole NAR dripped in"
    );
}

/// Issue 19, item 14: concurrent runs said "database is locked" and skipped caching:
/// a run that read the narinfo cache for the length of its walk made another run's
/// write wait, then give up. Here a reader holds a read transaction open while a run
/// writes: no warning, and the next run fetches no narinfo.
#[test]
fn a_run_writes_the_narinfo_cache_while_another_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let (cache, _) = tiny_cache(dir.path(), "c");
    let (one, two) = (Server::start(&cache), Server::start(&cache));
    let xdg = tempfile::tempdir().unwrap();
    let root = format!("/nix/store/{APP}");
    let why = |url: &str| run_in(xdg.path(), &["why", "--cache", url, &root, "--no-evidence"]);
    let (code, _, err) = why(&one.url);
    assert_eq!(code, 0, "{err}");
    let db = xdg.path().join("nixcut/narinfo/narinfo-v1.sqlite");
    let reader = rusqlite::Connection::open(&db).unwrap();
    reader.execute_batch("BEGIN").unwrap();
    let n: i64 = reader
        .query_row("SELECT count(*) FROM narinfo", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2);
    // Another cache URL: its narinfos are new, and written while the reader reads.
    let (code, _, err) = why(&two.url);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("locked"), "{err}");
    assert!(!err.contains("cannot write"), "{err}");
    reader.execute_batch("COMMIT").unwrap();
    drop(reader);
    let asked = two.count(".narinfo");
    let (code, _, err) = why(&two.url);
    assert_eq!(code, 0, "{err}");
    assert_eq!(two.count(".narinfo"), asked, "all from the narinfo cache");
}

/// The world cache's hashes (see [`world_hashes`]) and a server for that cache: what
/// each pipelining test starts from.
fn world_served() -> (Vec<String>, Server) {
    let cache = world_cache();
    (world_hashes(cache), Server::start(cache))
}

/// The hash parts of the world cache's narinfos, with two that it does not have (one
/// near the start, one at the end).
fn world_hashes(cache: &Path) -> Vec<String> {
    let mut v: Vec<String> = narinfos(cache)
        .iter()
        .map(|p| p.file_stem().unwrap().to_str().unwrap().to_string())
        .collect();
    assert!(
        v.len() >= 12,
        "a world of a dozen paths or more: {}",
        v.len()
    );
    v.insert(2, "0".repeat(32));
    v.push("1".repeat(32));
    v
}

/// A narinfo result as plain values: (base, text), `None` (not there), or the error.
type Plain = Option<Result<Option<(String, String)>, FetchError>>;

fn plain(r: Option<NarinfoResult>) -> Plain {
    r.map(|r| r.map(|n| n.map(|n| (n.base.to_string(), n.text.to_string()))))
}

/// `fetch_narinfos` (pipelined) over `hashes`, as plain values.
fn piped(client: &HttpClient, base: &str, hashes: &[String]) -> Vec<Plain> {
    let asked: Vec<&str> = hashes.iter().map(String::as_str).collect();
    let stop = AtomicBool::new(false);
    let base: Arc<str> = Arc::from(base);
    client
        .fetch_narinfos(&mut Pipes::default(), &base, &asked, &stop)
        .into_iter()
        .map(plain)
        .collect()
}

/// `fetch_narinfo` (one request at a time, through ureq) for each of `hashes`.
fn single(client: &HttpClient, base: &str, hashes: &[String]) -> Vec<Plain> {
    let base: Arc<str> = Arc::from(base);
    hashes
        .iter()
        .map(|h| plain(Some(client.fetch_narinfo(&base, h))))
        .collect()
}

fn client(timeout: Duration, retries: u32) -> HttpClient {
    HttpClient::new(HttpConfig {
        timeout,
        retries,
        backoff: Duration::from_millis(10),
        ..HttpConfig::default()
    })
}

/// Issue 24: the walk pipelines narinfo requests on a few connections. Pipelined, the
/// world cache's narinfos (and two it does not have) read exactly as one request at a
/// time through ureq, each asked once, on one connection.
#[test]
fn pipelined_narinfos_equal_single_requests() {
    if !nix_or_skip("pipelined_narinfos_equal_single_requests") {
        return;
    }
    let (hashes, srv) = world_served();
    let c = client(Duration::from_secs(30), 0);
    let got = piped(&c, &srv.url, &hashes);
    assert_eq!(srv.connections(), 1, "one connection");
    assert_eq!(srv.count(".narinfo"), hashes.len(), "each asked once");
    let want = single(&c, &srv.url, &hashes);
    assert_eq!(got, want);
    assert_eq!(got[2], Some(Ok(None)), "a narinfo the cache does not have");
    assert!(
        got.iter()
            .filter(|r| matches!(r, Some(Ok(Some(_)))))
            .count()
            == hashes.len() - 2
    );
    assert!(HttpClient::pipelines(&srv.url));
    assert!(!HttpClient::pipelines("https://cache.nixos.org"));
}

/// A server that ends connections after k answers (nginx's `keepalive_requests`),
/// saying so or not: the requests it left unanswered are sent again on new connections
/// and are no failure (no retries allowed here), each narinfo asked once; a walk
/// through such a server gives the same report.
#[test]
fn a_server_closing_after_k_answers_is_asked_again_on_new_connections() {
    if !nix_or_skip("a_server_closing_after_k_answers_is_asked_again_on_new_connections") {
        return;
    }
    let (hashes, srv) = world_served();
    let c = client(Duration::from_secs(30), 0);
    let want = single(&c, &srv.url, &hashes);
    for (k, announce) in [(1, true), (1, false), (3, false), (5, true)] {
        srv.reset();
        let before = srv.connections();
        srv.close_after(k, announce);
        let got = piped(&c, &srv.url, &hashes);
        assert_eq!(got, want, "closing after {k} (announced: {announce})");
        assert_eq!(srv.count(".narinfo"), hashes.len(), "each asked once");
        assert_eq!(
            srv.connections() - before,
            hashes.len().div_ceil(k as usize),
            "closing after {k}"
        );
    }

    let w = rocm_world();
    let args = |url: &str| {
        let v = [
            "why",
            "--cache",
            url,
            &w.root,
            "--all",
            "--no-evidence",
            "--no-cache",
        ];
        v.map(str::to_string)
    };
    let xdg = tempfile::tempdir().unwrap();
    let go = |a: &[String]| {
        let mut a: Vec<&str> = a.iter().map(String::as_str).collect();
        a.extend(["--format", "json", "--http-retries", "0"]);
        json_in(xdg.path(), &a)
    };
    srv.reset();
    let plainly = go(&args(&srv.url));
    srv.reset();
    srv.close_after(2, false);
    let closing = go(&args(&srv.url));
    assert_eq!(closing, plainly);
    let n = plainly["paths"].as_array().unwrap().len();
    assert_eq!(srv.count(".narinfo"), n, "each narinfo asked once");
}

/// A 500, a body cut short and an answer slower than the timeout in the middle of a
/// pipelined batch: retried, under the same policy as single requests (the answers are
/// the same, each faulted narinfo asked twice); a fault that persists ends in the error
/// a single request gives, naming the URL and the attempts.
#[test]
fn faults_mid_batch_are_retried_or_named_as_single_requests() {
    if !nix_or_skip("faults_mid_batch_are_retried_or_named_as_single_requests") {
        return;
    }
    let (hashes, srv) = world_served();
    let c = client(Duration::from_millis(500), 2);
    let want = single(&c, &srv.url, &hashes);
    let faulted: Vec<String> = [4, 7, 10]
        .iter()
        .map(|&i| format!("/{}.narinfo", hashes[i]))
        .collect();
    let fault = |i: usize| match i {
        0 => Fault::Status(500),
        1 => Fault::DropMidBody,
        _ => Fault::Slow(Duration::from_secs(2)),
    };
    srv.reset();
    let f = faulted.clone();
    srv.set_rule(move |p, nth| {
        let i = f.iter().position(|q| q == p)?;
        (nth == 0).then(|| fault(i))
    });
    assert_eq!(piped(&c, &srv.url, &hashes), want);
    for p in &faulted {
        assert_eq!(srv.count(p), 2, "{p} retried once");
    }

    for (i, p) in faulted.iter().enumerate() {
        srv.reset();
        let q = p.clone();
        srv.set_rule(move |p, _| (p == q).then(|| fault(i)));
        let at = [4, 7, 10][i];
        let got = piped(&c, &srv.url, &hashes);
        let alone = single(&c, &srv.url, &hashes[at..=at]);
        let Some(Err(e)) = &alone[0] else {
            panic!("{p}: {alone:?}")
        };
        assert!(e.url.ends_with(p.as_str()), "{e}");
        assert!(e.message.ends_with("(3 attempts)"), "{e}");
        assert_eq!(got[at], alone[0], "{p}");
        assert_eq!(srv.count(p), 6, "{p}: three attempts each way");
        for (j, r) in got.iter().enumerate() {
            if j != at {
                assert!(r.is_none() || *r == want[j], "{j}: {r:?}");
            }
        }
    }
}
