//! `nixcut refs --paths-from LIST --format jsonl` and examples/cache-study/: the records
//! against what `nixcut refs PATH` and `nixcut gpu` say path by path, resuming after a
//! torn write, shards that add up to the whole list; then end to end on a few thousand
//! generated NARs served by nginx, the Ray job on a local cluster started (and stopped)
//! here, and DuckDB's answers against the same answers computed here from a
//! single-process run's records.

mod common;
#[path = "cache_study/gen.rs"]
mod gen;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::contract::{pin, RefsRecord};
use common::serve::Server;
use common::{decode, json, nixcut, repo};
use serde_json::{json, Value};

/// `nixcut --no-cache --cache URL refs --paths-from LIST --format jsonl …extra`;
/// (status, stdout, stderr).
fn study(url: &str, list: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = nixcut()
        .args(["--no-cache", "--cache", url, "refs", "--paths-from"])
        .arg(list)
        .args(["--format", "jsonl"])
        .args(extra)
        .output()
        .expect("run nixcut");
    decode(out)
}

/// The records of a JSON-lines text, each pinned to the contract, keyed by (release,
/// input); a key seen twice fails.
fn records(text: &str) -> BTreeMap<(Option<String>, String), RefsRecord> {
    let mut m = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let r: RefsRecord = pin(&format!("record {}", i + 1), line);
        let key = (r.release.clone(), r.input.clone());
        assert!(
            m.insert(key, r).is_none(),
            "line {}: a second record",
            i + 1
        );
    }
    m
}

/// A path list: `release<TAB>path` lines (no tab without a release).
fn write_list(file: &Path, entries: &[(Option<&str>, &str)]) {
    let text: String = entries
        .iter()
        .map(|(r, p)| match r {
            Some(r) => format!("{r}\t{p}\n"),
            None => format!("{p}\n"),
        })
        .collect();
    std::fs::write(file, format!("# generated\n{text}")).unwrap();
}

/// The entries of a study of `c`: apps 0..2n/3 in 23.11, apps n/3.. in 24.05, every
/// kernel package unlabelled, and a hash no cache has.
fn entries(c: &gen::Cache) -> Vec<(Option<&'static str>, String)> {
    let n = c.apps.len();
    let mut v: Vec<(Option<&str>, String)> = Vec::new();
    v.extend(
        c.apps[..2 * n / 3]
            .iter()
            .map(|p| (Some("23.11"), p.clone())),
    );
    v.extend(c.apps[n / 3..].iter().map(|p| (Some("24.05"), p.clone())));
    v.extend(c.kernels.iter().map(|p| (None, p.clone())));
    v.push((None, c.unknown.clone()));
    v
}

fn list_of(c: &gen::Cache, file: &Path) -> usize {
    let e = entries(c);
    let borrowed: Vec<(Option<&str>, &str)> = e.iter().map(|(r, p)| (*r, p.as_str())).collect();
    write_list(file, &borrowed);
    e.len()
}

#[test]
fn records_say_what_refs_and_gpu_say_and_resume_after_a_torn_write() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let cache = gen::generate(&tmp.path().join("cache"), 24);
    let server = Server::start(&cache.dir);
    let url = server.url.clone();
    let list = tmp.path().join("list");
    let n = list_of(&cache, &list);
    let out = tmp.path().join("out.jsonl");
    let (code, stdout, stderr) = study(&url, &list, &["--output", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.is_empty(), "records go to --output only: {stdout}");
    let full_text = std::fs::read_to_string(&out).unwrap();
    let full = records(&full_text);
    assert_eq!(full.len(), n, "one record per entry");
    assert!(Path::new(&format!("{}.done", out.display())).exists());

    // Errors are records, at the stage that failed; the run went on past them.
    let by_input = |p: &str| full.values().find(|r| r.input == p).unwrap();
    assert_eq!(
        by_input(&cache.missing_nar).error.as_ref().unwrap().stage,
        "nar"
    );
    let corrupt = by_input(&cache.corrupt).error.as_ref().unwrap();
    assert_eq!(corrupt.stage, "nar", "{corrupt:?}");
    let unknown = by_input(&cache.unknown).error.as_ref().unwrap();
    assert_eq!(unknown.stage, "load");
    assert!(unknown.message.contains(&cache.unknown), "{unknown:?}");
    let good: Vec<&RefsRecord> = full.values().filter(|r| r.error.is_none()).collect();
    let errors: Vec<_> = full.values().filter_map(|r| r.error.as_ref()).collect();
    assert_eq!(good.len(), n - 3, "{errors:#?}");

    // Path by path, what `nixcut refs PATH` says: verdict, rule and hits per kind.
    let mut verdicts: BTreeSet<String> = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for r in &good {
        let path = r.path.as_deref().unwrap();
        if !seen.insert(path) {
            continue;
        }
        let report = json(&[
            "--no-cache",
            "--cache",
            &url,
            "refs",
            path,
            "--format",
            "json",
        ]);
        let p = &report["paths"][0];
        assert_eq!(p["path"], path);
        let expected: Vec<Value> = p["references"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                json!({"path": e["path"], "verdict": e["verdict"], "rule": e["rule"],
                       "kinds": e["kinds"], "evidence_count": e["evidence_count"]})
            })
            .collect();
        let got: Vec<Value> = r
            .references
            .iter()
            .map(|e| {
                verdicts.insert(e.verdict.clone());
                json!({"path": e.path, "verdict": e.verdict, "rule": e.rule,
                       "kinds": e.kinds, "evidence_count": e.evidence_count})
            })
            .collect();
        assert_eq!(got, expected, "{path}");
        assert_eq!(
            r.bytes_scanned,
            p["bytes_scanned"].as_u64().unwrap(),
            "{path}"
        );
    }
    for v in ["runtime", "removable", "doc"] {
        assert!(
            verdicts.contains(v),
            "no `{v}` reference among {verdicts:?}"
        );
    }

    // GPU bytes per architecture: what `nixcut gpu` counts for that path.
    let mut archs = BTreeSet::new();
    for k in cache.kernels.iter().take(4) {
        let r = by_input(k);
        assert!(!r.gpu.is_empty(), "{k}");
        let report = json(&["--no-cache", "--cache", &url, "gpu", k, "--format", "json"]);
        let row = report["paths"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["path"] == k.as_str())
            .unwrap();
        let want: BTreeMap<String, u64> = serde_json::from_value(row["archs"].clone()).unwrap();
        assert_eq!(r.gpu, want, "{k}");
        archs.extend(r.gpu.keys().cloned());
    }
    assert!(archs.len() >= 2, "{archs:?}");

    // A run cut short: ten records and half of the eleventh. The rerun drops the torn
    // line and writes what is missing, once each.
    let lines: Vec<&str> = full_text.lines().collect();
    let mut partial: String = lines[..10].iter().map(|l| format!("{l}\n")).collect();
    partial.push_str(&lines[10][..lines[10].len() / 2]);
    let resumed = tmp.path().join("resumed.jsonl");
    std::fs::write(&resumed, partial).unwrap();
    let (code, _, stderr) = study(&url, &list, &["--output", resumed.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("cut short"), "{stderr}");
    assert!(stderr.contains("10 already written"), "{stderr}");
    let again = std::fs::read_to_string(&resumed).unwrap();
    assert_eq!(records(&again), full);
    // Complete: a third run does nothing.
    let (code, _, stderr) = study(&url, &list, &["--output", resumed.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("nothing to do"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&resumed).unwrap(), again);

    // Shards: entry i in shard i mod 3; together, the whole list (to standard output).
    let mut union = BTreeMap::new();
    for k in 0..3 {
        let (code, stdout, stderr) = study(&url, &list, &["--shard", &format!("{k}/3")]);
        assert_eq!(code, 0, "{stderr}");
        let part = records(&stdout);
        let want = (0..n).filter(|i| i % 3 == k).count();
        assert_eq!(part.len(), want, "shard {k}/3");
        for (key, r) in part {
            assert!(union.insert(key, r).is_none(), "an entry in two shards");
        }
    }
    assert_eq!(union, full);

    // Bad input is an error naming the file and line; --format jsonl needs a list.
    let bad = tmp.path().join("bad");
    std::fs::write(&bad, "a\n\tb\n").unwrap();
    let (code, _, stderr) = study(&url, &bad, &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("line 2"), "{stderr}");
    let (code, _, stderr) = decode(
        nixcut()
            .args(["refs", "x", "--format", "jsonl"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("--paths-from"), "{stderr}");
    let (code, _, stderr) = study(&url, &list, &["--shard", "3/3"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("K must be below N"), "{stderr}");
}

// ---- end to end: nginx, Ray, DuckDB ----

/// Whether an external part must be there (CI), else the test skips.
fn required() -> bool {
    std::env::var("NIXCUT_REQUIRE_NIX").as_deref() == Ok("1")
}

fn skip(test: &str, why: &str) {
    assert!(!required(), "{test}: {why} (NIXCUT_REQUIRE_NIX=1)");
    eprintln!("SKIP: {test}: {why}; set NIXCUT_REQUIRE_NIX=1 to make this a failure");
}

/// nginx, from PATH or /usr/sbin.
fn nginx() -> Option<PathBuf> {
    let ok = |p: &Path| {
        Command::new(p)
            .arg("-v")
            .stderr(Stdio::null())
            .status()
            .is_ok()
    };
    [PathBuf::from("nginx"), PathBuf::from("/usr/sbin/nginx")]
        .into_iter()
        .find(|p| ok(p))
}

/// The Python of a virtual environment with `ray` and `duckdb`, made (once, with pip)
/// under the target directory: `target/py-cache-study`. `None` when it cannot be made.
fn python_env() -> Result<PathBuf, String> {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("py-cache-study");
    let python = target.join("bin/python");
    let has = || {
        Command::new(&python)
            .args(["-c", "import ray, duckdb"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if has() {
        return Ok(python);
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&target)
        .status()
        .is_ok_and(|s| s.success())
        && Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "ray", "duckdb"])
            .status()
            .is_ok_and(|s| s.success());
    if made && has() {
        Ok(python)
    } else {
        Err(format!(
            "cannot make a Python environment with ray and duckdb at {}",
            target.display()
        ))
    }
}

/// A free port on 127.0.0.1 (free when asked).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A process group started by the test, ended (TERM, then KILL) when dropped, also when
/// the test fails.
struct Group {
    child: Child,
    what: &'static str,
    /// A directory the group wrote, removed once it is stopped.
    leaves: Option<PathBuf>,
}

impl Group {
    fn start(mut cmd: Command, what: &'static str) -> Group {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        Group {
            child,
            what,
            leaves: None,
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let pgid = format!("-{}", self.child.id());
        let _ = Command::new("kill")
            .args(["-TERM", "--", &pgid])
            .stderr(Stdio::null())
            .status();
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        // Whatever of the group is left (Ray's workers) goes too.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &pgid])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.wait();
        if let Some(dir) = &self.leaves {
            let _ = std::fs::remove_dir_all(dir);
        }
        eprintln!("stopped {}", self.what);
    }
}

/// nginx serving `cache` on a free port, logging bytes sent per request to `log`.
fn start_nginx(bin: &Path, work: &Path, cache: &Path) -> (Group, String) {
    let port = free_port();
    let conf = work.join("nginx.conf");
    std::fs::write(
        &conf,
        format!(
            "daemon off;\nworker_processes 2;\npid {w}/nginx.pid;\nerror_log {w}/error.log;\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n  log_format sent '$uri $bytes_sent';\n  access_log {w}/access.log sent;\n\
               client_body_temp_path {w}/body;\n  keepalive_requests 1000000;\n\
               default_type application/octet-stream;\n\
               server {{ listen 127.0.0.1:{port}; root {c}; }}\n}}\n",
            w = work.display(),
            c = cache.display()
        ),
    )
    .unwrap();
    let mut cmd = Command::new(bin);
    cmd.arg("-p").arg(work).arg("-c").arg(&conf);
    let group = Group::start(cmd, "nginx");
    let url = format!("http://127.0.0.1:{port}");
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return (group, url);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!(
        "nginx did not listen on {url}: {:?}",
        std::fs::read_to_string(work.join("error.log"))
    );
}

/// Bytes nginx sent, by kind (`nar`, `narinfo`, `ls`, `other`), from its access log.
fn bytes_sent(log: &Path) -> BTreeMap<&'static str, u64> {
    let mut m = BTreeMap::new();
    for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
        let Some((uri, n)) = line.rsplit_once(' ') else {
            continue;
        };
        let kind = if uri.ends_with(".narinfo") {
            "narinfo"
        } else if uri.ends_with(".ls") {
            "ls"
        } else if uri.starts_with("/nar/") {
            "nar"
        } else {
            "other"
        };
        *m.entry(kind).or_default() += n.parse::<u64>().unwrap_or(0);
    }
    m
}

/// The answers of examples/cache-study/queries.sql (README.md there defines them),
/// computed here from records.
fn expected_answers(recs: &[RefsRecord]) -> Value {
    let mut by_path: BTreeMap<&str, &RefsRecord> = BTreeMap::new();
    for r in recs {
        if let Some(p) = r.path.as_deref() {
            by_path.entry(p).or_insert(r);
        }
    }
    let mut sizes: HashMap<&str, Option<u64>> = HashMap::new();
    let mut edges: HashMap<&str, Vec<(&str, &str)>> = HashMap::new();
    let bigger = |a: Option<u64>, b: Option<u64>| a.max(b);
    for (p, r) in &by_path {
        let s = sizes.entry(p).or_default();
        *s = bigger(*s, r.nar_size);
        for e in r.references.iter().filter(|e| !e.self_reference) {
            edges
                .entry(p)
                .or_default()
                .push((e.path.as_str(), e.verdict.as_str()));
            let s = sizes.entry(e.path.as_str()).or_default();
            *s = bigger(*s, e.nar_size);
        }
    }
    let reach = |root: &str, skip_removable: bool| -> BTreeSet<String> {
        let mut seen = BTreeSet::from([root.to_string()]);
        let mut todo = vec![root.to_string()];
        while let Some(n) = todo.pop() {
            for (dst, verdict) in edges.get(n.as_str()).into_iter().flatten() {
                if skip_removable && n == root && *verdict == "removable" {
                    continue;
                }
                if seen.insert(dst.to_string()) {
                    todo.push(dst.to_string());
                }
            }
        }
        seen
    };
    let mut removable: Vec<(u64, String, Value)> = Vec::new();
    for (root, es) in &edges {
        let n_removable = es.iter().filter(|e| e.1 == "removable").count();
        if n_removable == 0 {
            continue;
        }
        let kept = reach(root, true);
        let gone: Vec<String> = reach(root, false).difference(&kept).cloned().collect();
        let bytes: u64 = gone
            .iter()
            .map(|g| sizes.get(g.as_str()).copied().flatten().unwrap_or(0))
            .sum();
        let name = root.rsplit('/').next().unwrap()[33..].to_string();
        removable.push((
            bytes,
            root.to_string(),
            json!({"path": root, "name": name, "removable_bytes": bytes,
                   "removable_paths": gone.len(), "removable_references": n_removable}),
        ));
    }
    removable.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut gpu: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for r in by_path.values() {
        for (arch, b) in &r.gpu {
            let e = gpu.entry(arch).or_default();
            e.0 += b;
            e.1 += 1;
        }
    }
    let mut gpu: Vec<(&str, (u64, u64))> = gpu.into_iter().collect();
    gpu.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then_with(|| a.0.cmp(b.0)));
    let rp: BTreeSet<(&str, &str, Option<u64>)> = recs
        .iter()
        .filter_map(|r| Some((r.release.as_deref()?, r.path.as_deref()?, r.nar_size)))
        .collect();
    let mut first: HashMap<&str, &str> = HashMap::new();
    for (rel, p, _) in &rp {
        let f = first.entry(p).or_insert(rel);
        *f = (*f).min(*rel);
    }
    let mut releases: BTreeMap<&str, [u64; 4]> = BTreeMap::new();
    for (rel, p, size) in &rp {
        let e = releases.entry(rel).or_default();
        let s = size.unwrap_or(0);
        e[0] += 1;
        e[1] += s;
        if first[p] == *rel {
            e[2] += 1;
            e[3] += s;
        }
    }
    json!({
        "removable": removable.into_iter().map(|r| r.2).collect::<Vec<_>>(),
        "gpu": gpu.into_iter().map(|(a, (b, n))| json!({"arch": a, "bytes": b, "paths": n}))
            .collect::<Vec<_>>(),
        "releases": releases.into_iter().map(|(r, e)| json!({"release": r, "paths": e[0],
            "bytes": e[1], "new_paths": e[2], "new_bytes": e[3]})).collect::<Vec<_>>(),
    })
}

#[test]
fn cache_study_on_ray_and_duckdb_agrees_with_refs_path_by_path() {
    const TEST: &str = "cache_study_on_ray_and_duckdb_agrees_with_refs_path_by_path";
    let Some(nginx) = nginx() else {
        return skip(
            TEST,
            "nginx is not installed (apt-get install -y nginx-light)",
        );
    };
    let python = match python_env() {
        Ok(p) => p,
        Err(why) => return skip(TEST, &why),
    };
    let bin = python.parent().unwrap();
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tmp.path();
    let t = std::time::Instant::now();
    let cache = gen::generate(&work.join("cache"), 1200);
    eprintln!("generated {} store paths in {:?}", cache.count, t.elapsed());
    std::fs::create_dir_all(work.join("nginx")).unwrap();
    let (_nginx, url) = start_nginx(&nginx, &work.join("nginx"), &cache.dir);
    let list = work.join("list");
    let n = list_of(&cache, &list);

    // One process, the whole list: the reference answers, and the measured cost.
    let direct = work.join("direct.jsonl");
    let t = std::time::Instant::now();
    let (code, _, stderr) = study(&url, &list, &["--output", direct.to_str().unwrap()]);
    let seconds = t.elapsed().as_secs_f64();
    assert_eq!(code, 0, "{stderr}");
    let sent = bytes_sent(&work.join("nginx/access.log"));
    let direct = records(&std::fs::read_to_string(&direct).unwrap());
    assert_eq!(direct.len(), n);
    let nar_bytes: u64 = direct
        .values()
        .filter(|r| r.scanned)
        .filter_map(|r| r.nar_size)
        .sum();
    eprintln!(
        "direct run: {n} entries in {seconds:.1} s on this machine ({:.2} s per 1,000); \
         bytes served {sent:?} ({:.1} MB per 1,000 entries); NAR bytes of the scanned \
         records {nar_bytes}",
        seconds * 1000.0 / n as f64,
        sent.values().sum::<u64>() as f64 / n as f64 / 1000.0
    );

    // A Ray cluster of one node on 127.0.0.1, stopped (its process group) at the end.
    let port = free_port();
    let ray_tmp = std::env::temp_dir().join(format!("nixcut-ray-{}", std::process::id()));
    let mut ray = Command::new(bin.join("ray"));
    ray.args(["start", "--head", "--block", "--node-ip-address=127.0.0.1"])
        .arg(format!("--port={port}"))
        .args([
            "--num-cpus=2",
            "--include-dashboard=false",
            "--disable-usage-stats",
            "--object-store-memory=100000000",
        ])
        .arg(format!("--temp-dir={}", ray_tmp.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut ray_group = Group::start(ray, "the Ray cluster");
    ray_group.leaves = Some(ray_tmp);
    let address = format!("127.0.0.1:{port}");
    let up = (0..240).any(|_| {
        let ok = Command::new(bin.join("ray"))
            .args(["status", "--address", &address])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        ok
    });
    assert!(up, "the Ray head did not come up at {address}");

    let example = repo().join("examples/cache-study");
    let dataset = work.join("dataset");
    let job = |what: &str| {
        let t = std::time::Instant::now();
        let out = Command::new(&python)
            .arg(example.join("study.py"))
            .args(["--cache", &url, "--list"])
            .arg(&list)
            .arg("--out")
            .arg(&dataset)
            .args(["--shards", "4", "--address", &address, "--batch", "16"])
            .arg("--nixcut")
            .arg(env!("CARGO_BIN_EXE_nixcut"))
            .env("XDG_CACHE_HOME", common::test_cache_home())
            .env("NO_COLOR", "1")
            .output()
            .expect("run study.py");
        let (code, stdout, stderr) = decode(out);
        assert_eq!(code, 0, "{what}: {stdout}\n{stderr}");
        eprintln!(
            "{what}: {} in {:.1} s",
            stdout.trim(),
            t.elapsed().as_secs_f64()
        );
        serde_json::from_str::<Value>(stdout.trim()).unwrap()
    };
    let first = job("Ray job");
    assert_eq!(first["records"], n);
    let read_dataset = || {
        let mut text = String::new();
        let mut parts: Vec<PathBuf> = std::fs::read_dir(&dataset)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        parts.sort();
        assert_eq!(parts.len(), 4);
        for p in parts {
            text.push_str(&std::fs::read_to_string(p).unwrap());
        }
        records(&text)
    };
    let dataset_records = read_dataset();
    assert_eq!(
        dataset_records, direct,
        "the cluster's records are the single run's"
    );
    // Resumable: every shard is done, a second job writes nothing.
    let again = job("Ray job, again");
    assert_eq!(again["records"], n);
    assert_eq!(read_dataset(), direct);

    // DuckDB's answers, against the same computed here from the single run.
    let out = Command::new(&python)
        .arg(example.join("query.py"))
        .arg(&dataset)
        .arg("--json")
        .output()
        .expect("run query.py");
    let (code, stdout, stderr) = decode(out);
    assert_eq!(code, 0, "{stderr}");
    let got: Value = serde_json::from_str(&stdout).unwrap();
    let recs: Vec<RefsRecord> = direct.into_values().collect();
    let want = expected_answers(&recs);
    for q in ["removable", "gpu", "releases"] {
        assert!(
            !want[q].as_array().unwrap().is_empty(),
            "`{q}` has no rows: the data is too plain"
        );
        assert_eq!(got[q], want[q], "`{q}`");
    }
    eprintln!(
        "answers: {} paths with removable references (top: {}), {} GPU architectures, {} releases",
        want["removable"].as_array().unwrap().len(),
        want["removable"][0],
        want["gpu"].as_array().unwrap().len(),
        want["releases"].as_array().unwrap().len()
    );
    drop(ray_group);
}
