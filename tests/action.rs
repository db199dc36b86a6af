//! The GitHub Action's scripts (`action/run.sh`, `action/comment.py`) against a fake of
//! the GitHub REST API on 127.0.0.1 that keeps the comments of one pull request, pages
//! the list (three a page, `Link: rel="next"`) and records every request: the first
//! run POSTs one comment, the second PATCHes that comment (found on page 2), a
//! read-only token (403) is reported without hiding the verdict, and the exit codes are
//! the check's (0 pass, 1 over budget, 2 error). The check runs the real binary on the
//! shipped example closures.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

const REPO: &str = "octo/widgets";
const PR: u64 = 35;
const PAGE: usize = 3;
const READ_ONLY: &str = "read-only-token";

#[derive(Debug, Clone)]
struct Request {
    method: String,
    target: String,
    auth: String,
    body: String,
}

#[derive(Default)]
struct Api {
    comments: Vec<(u64, String)>,
    next_id: u64,
    log: Vec<Request>,
}

/// The fake API: its address and its state.
struct Fake {
    url: String,
    api: Arc<Mutex<Api>>,
}

impl Fake {
    fn start(others: usize) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let api = Arc::new(Mutex::new(Api {
            comments: (0..others)
                .map(|i| (1000 + i as u64, format!("LGTM {i}\n<!-- not ours -->")))
                .collect(),
            next_id: 5000,
            log: Vec::new(),
        }));
        let (a, u) = (api.clone(), url.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (a, u) = (a.clone(), u.clone());
                std::thread::spawn(move || serve(stream, &a, &u));
            }
        });
        Fake { url, api }
    }

    fn log(&self) -> Vec<Request> {
        self.api.lock().unwrap().log.clone()
    }

    fn comments(&self) -> Vec<(u64, String)> {
        self.api.lock().unwrap().comments.clone()
    }

    fn count(&self, method: &str) -> usize {
        self.log().iter().filter(|r| r.method == method).count()
    }
}

fn serve(stream: TcpStream, api: &Mutex<Api>, url: &str) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let (mut len, mut auth) = (0usize, String::new());
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        let (k, v) = h.split_once(':').unwrap_or((&h, ""));
        match k.to_ascii_lowercase().as_str() {
            "content-length" => len = v.trim().parse().unwrap_or(0),
            "authorization" => auth = v.trim().to_string(),
            _ => {}
        }
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    let body = String::from_utf8(body).unwrap();
    let (status, link, answer) = answer(api, url, &method, &target, &auth, &body);
    api.lock().unwrap().log.push(Request {
        method,
        target,
        auth,
        body,
    });
    let mut s = stream;
    let link = link.map_or(String::new(), |l| format!("Link: {l}\r\n"));
    let _ = write!(
        s,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{link}Connection: close\r\n\r\n{answer}",
        answer.len()
    );
}

fn answer(
    api: &Mutex<Api>,
    url: &str,
    method: &str,
    target: &str,
    auth: &str,
    body: &str,
) -> (u16, Option<String>, String) {
    let list = format!("/repos/{REPO}/issues/{PR}/comments");
    let one = format!("/repos/{REPO}/issues/comments/");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut a = api.lock().unwrap();
    let writes = method == "POST" || method == "PATCH";
    if writes && auth == format!("Bearer {READ_ONLY}") {
        let m = r#"{"message":"Resource not accessible by integration"}"#;
        return (403, None, m.to_string());
    }
    let text = |b: &str| serde_json::Value::String(b.to_string());
    match (method, path) {
        ("GET", p) if p == list => {
            let page: usize = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("page="))
                .and_then(|n| n.parse().ok())
                .unwrap_or(1);
            let items: Vec<String> = a
                .comments
                .iter()
                .skip((page - 1) * PAGE)
                .take(PAGE)
                .map(|(id, b)| format!(r#"{{"id":{id},"body":{}}}"#, text(b)))
                .collect();
            let link = (a.comments.len() > page * PAGE)
                .then(|| format!("<{url}{list}?per_page=100&page={}>; rel=\"next\"", page + 1));
            (200, link, format!("[{}]", items.join(",")))
        }
        ("POST", p) if p == list => {
            let v: serde_json::Value = serde_json::from_str(body).unwrap();
            a.next_id += 1;
            let id = a.next_id;
            a.comments
                .push((id, v["body"].as_str().unwrap().to_string()));
            (201, None, format!(r#"{{"id":{id}}}"#))
        }
        ("PATCH", p) if p.starts_with(&one) => {
            let id: u64 = p[one.len()..].parse().unwrap();
            let v: serde_json::Value = serde_json::from_str(body).unwrap();
            match a.comments.iter_mut().find(|(i, _)| *i == id) {
                Some(c) => {
                    c.1 = v["body"].as_str().unwrap().to_string();
                    (200, None, format!(r#"{{"id":{id}}}"#))
                }
                None => (404, None, r#"{"message":"Not Found"}"#.to_string()),
            }
        }
        _ => (404, None, r#"{"message":"Not Found"}"#.to_string()),
    }
}

fn example(name: &str) -> String {
    common::repo()
        .join("examples")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// One run of `action/run.sh all` in a fresh directory; its exit code, output, error
/// output, the GitHub outputs it wrote and the job summary.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    outputs: String,
    summary: String,
}

fn run_action(fake: &Fake, dir: &Path, env: &[(&str, &str)]) -> Run {
    let event = dir.join("event.json");
    std::fs::write(
        &event,
        format!(
            r#"{{"action":"synchronize","number":{PR},"pull_request":{{"number":{PR},"base":{{"sha":"0123abcd"}}}}}}"#
        ),
    )
    .unwrap();
    let (outputs, summary) = (dir.join("outputs"), dir.join("summary.md"));
    let _ = std::fs::remove_file(&outputs);
    let _ = std::fs::remove_file(&summary);
    let script: PathBuf = common::repo().join("action/run.sh");
    let mut cmd = Command::new("bash");
    cmd.arg(script)
        .arg("all")
        .env("NIXCUT", env!("CARGO_BIN_EXE_nixcut"))
        .env("NIXCUT_OUT", dir.join("out"))
        .env("XDG_CACHE_HOME", common::test_cache_home())
        .env("NO_COLOR", "1")
        .env("NIX_CONFIG", common::NIX_CONFIG)
        .env("GITHUB_API_URL", &fake.url)
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_TOKEN", "write-token")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("NIXCUT_PR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run action/run.sh");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        outputs: std::fs::read_to_string(&outputs).unwrap_or_default(),
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
    }
}

const MARKER: &str = "<!-- nixcut:comment id=closure-size -->";

fn ours(fake: &Fake) -> Vec<(u64, String)> {
    fake.comments()
        .into_iter()
        .filter(|(_, b)| b.starts_with(MARKER))
        .collect()
}

#[test]
fn the_first_run_posts_the_second_updates_the_same_comment_on_page_two() {
    // Four comments before ours: ours is the fifth, on page 2 of 3 a page.
    let fake = Fake::start(4);
    let dir = tempfile::tempdir().unwrap();
    let (cuda, rocm) = (
        example("llama-cpp-cuda.json"),
        example("llama-cpp-rocm.json"),
    );
    let grown = [
        ("NIXCUT_BASE", cuda.as_str()),
        ("NIXCUT_HEAD", rocm.as_str()),
        ("NIXCUT_MAX_GROWTH", "5%"),
    ];
    let r = run_action(&fake, dir.path(), &grown);
    assert_eq!(r.code, 1, "over budget: {}\n{}", r.stdout, r.stderr);
    assert!(r.outputs.contains("verdict=fail\n"), "{}", r.outputs);
    assert!(r.outputs.contains("comment-posted=true\n"), "{}", r.outputs);
    assert_eq!(fake.count("POST"), 1, "{:?}", fake.log());
    assert_eq!(fake.count("PATCH"), 0);
    let mine = ours(&fake);
    assert_eq!(mine.len(), 1);
    let (id, body) = &mine[0];
    assert!(body.lines().nth(1).unwrap().contains("failed"), "{body}");
    assert!(
        r.summary.starts_with(MARKER),
        "the job summary holds the comment"
    );
    for req in fake.log() {
        assert_eq!(req.auth, "Bearer write-token", "{req:?}");
    }
    let post = fake.log().into_iter().find(|r| r.method == "POST").unwrap();
    let sent: serde_json::Value = serde_json::from_str(&post.body).unwrap();
    assert_eq!(
        sent["body"].as_str(),
        Some(body.as_str()),
        "the comment file as sent"
    );
    let report = dir.path().join("out/report.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    assert_eq!(json["pass"], false, "the JSON report is kept");

    // The second run (a bigger budget: it passes) updates the same comment.
    let before = fake.log().len();
    let passing = [
        ("NIXCUT_BASE", cuda.as_str()),
        ("NIXCUT_HEAD", rocm.as_str()),
        ("NIXCUT_MAX_GROWTH", "2000%"),
    ];
    let r = run_action(&fake, dir.path(), &passing);
    assert_eq!(r.code, 0, "passes: {}\n{}", r.stdout, r.stderr);
    assert!(r.outputs.contains("verdict=pass\n"), "{}", r.outputs);
    let log = &fake.log()[before..];
    let methods: Vec<&str> = log.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(methods, ["GET", "GET", "PATCH"], "{log:?}");
    assert!(
        log[1].target.contains("page=2"),
        "followed the Link header: {log:?}"
    );
    assert!(
        log[2].target.ends_with(&format!("/issues/comments/{id}")),
        "{log:?}"
    );
    let mine = ours(&fake);
    assert_eq!(mine.len(), 1, "no second comment");
    assert_eq!(mine[0].0, *id);
    assert!(
        mine[0].1.lines().nth(1).unwrap().contains("passed"),
        "{}",
        mine[0].1
    );
    assert_eq!(fake.comments().len(), 5, "the others are untouched");

    // Another id is another comment.
    let r = run_action(
        &fake,
        dir.path(),
        &[
            ("NIXCUT_BASE", cuda.as_str()),
            ("NIXCUT_HEAD", rocm.as_str()),
            ("NIXCUT_MAX_GROWTH", "2000%"),
            ("NIXCUT_COMMENT_ID", "closure-size.cuda"),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(fake.count("POST"), 2);
    assert_eq!(fake.comments().len(), 6);
}

#[test]
fn a_read_only_token_is_reported_and_the_verdict_stands() {
    let fake = Fake::start(0);
    let dir = tempfile::tempdir().unwrap();
    let (cuda, rocm) = (
        example("llama-cpp-cuda.json"),
        example("llama-cpp-rocm.json"),
    );
    let r = run_action(
        &fake,
        dir.path(),
        &[
            ("NIXCUT_BASE", cuda.as_str()),
            ("NIXCUT_HEAD", rocm.as_str()),
            ("NIXCUT_MAX_GROWTH", "5%"),
            ("GITHUB_TOKEN", READ_ONLY),
        ],
    );
    assert_eq!(
        r.code, 1,
        "the check's verdict, not the comment's: {}",
        r.stderr
    );
    assert!(r.outputs.contains("verdict=fail\n"), "{}", r.outputs);
    assert!(
        r.outputs.contains("comment-posted=false\n"),
        "{}",
        r.outputs
    );
    assert!(r.stderr.contains("HTTP 403"), "{}", r.stderr);
    assert!(r.stderr.contains("pull-requests: write"), "{}", r.stderr);
    assert!(
        r.stdout
            .contains("::warning title=nixcut comment not posted::"),
        "{}",
        r.stdout
    );
    assert_eq!(fake.count("POST"), 1, "tried once");
    assert!(fake.comments().is_empty());
    assert!(
        r.summary.starts_with(MARKER),
        "the job summary still has the report"
    );

    // A passing check with a read-only token passes.
    let r = run_action(
        &fake,
        dir.path(),
        &[
            ("NIXCUT_BASE", cuda.as_str()),
            ("NIXCUT_HEAD", cuda.as_str()),
            ("GITHUB_TOKEN", READ_ONLY),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn an_input_that_cannot_be_read_is_exit_2_and_no_comment() {
    let fake = Fake::start(0);
    let dir = tempfile::tempdir().unwrap();
    let cuda = example("llama-cpp-cuda.json");
    let missing = dir.path().join("no-such-file");
    let r = run_action(
        &fake,
        dir.path(),
        &[
            ("NIXCUT_BASE", cuda.as_str()),
            ("NIXCUT_HEAD", missing.to_str().unwrap()),
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.outputs.contains("verdict=error\n"), "{}", r.outputs);
    assert!(r.stderr.contains("no-such-file"), "{}", r.stderr);
    assert!(fake.log().is_empty(), "nothing posted: {:?}", fake.log());
    assert!(r.summary.contains("could not run"), "{}", r.summary);

    // A damaged input: nixcut's own error (exit 2), named.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "[{\"path\": ").unwrap();
    let r = run_action(
        &fake,
        dir.path(),
        &[
            ("NIXCUT_BASE", cuda.as_str()),
            ("NIXCUT_HEAD", bad.to_str().unwrap()),
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("bad.json"), "{}", r.stderr);
    assert!(fake.log().is_empty());
}

#[test]
fn comment_py_refuses_a_file_that_is_not_a_comment() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("c.md");
    std::fs::write(&f, "### no marker\n").unwrap();
    let out = Command::new("python3")
        .arg(common::repo().join("action/comment.py"))
        .arg(&f)
        .env("GITHUB_REPOSITORY", REPO)
        .env("NIXCUT_PR", "1")
        .env("GITHUB_API_URL", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("c.md line 1 is not a nixcut comment marker"),
        "{err}"
    );
}

/// A store path of a world built by real Nix is read from the store as it is.
#[test]
fn store_paths_from_nix_are_checked() {
    if !common::nix_or_skip("store_paths_from_nix_are_checked") {
        return;
    }
    let w = common::rocm_world();
    let root = w.root.clone();
    let fake = Fake::start(0);
    let dir = tempfile::tempdir().unwrap();
    let r = run_action(
        &fake,
        dir.path(),
        &[
            ("NIXCUT_BASE", root.as_str()),
            ("NIXCUT_HEAD", root.as_str()),
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let mine = ours(&fake);
    assert_eq!(mine.len(), 1);
    assert!(mine[0].1.contains("passed"), "{}", mine[0].1);
}

/// A flake with `hello`; with `grown`, `hello` references a 64 KiB `blob` as well.
fn flake(grown: bool) -> String {
    let blob = r#"blob = derivation {
        name = "blob-1.0";
        system = "x86_64-linux";
        builder = "/bin/sh";
        args = [ "-c" "i=0; while [ $i -lt 2048 ]; do echo 0123456789abcdef0123456789abcdef; i=$((i+1)); done > $out" ];
      };"#;
    // A directory: a regular file of store paths would read as a package set.
    let script = if grown {
        "/bin/mkdir $out; echo ${blob} > $out/uses"
    } else {
        "/bin/mkdir $out; echo hi > $out/uses"
    };
    format!(
        r#"{{
  outputs = {{ self }}: let
      {blob}
    in {{
    packages.x86_64-linux.hello = derivation {{
      name = "flake-hello-1.0";
      system = "x86_64-linux";
      builder = "/bin/sh";
      args = [ "-c" "{script}" ];
    }};
  }};
}}
"#
    )
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Flake attributes are built with real Nix: `head: .#hello` of the working tree, and
/// with no `base`, the same attribute at `base-ref` (the pull request's base SHA from
/// the event when not given), from a worktree of the repository.
#[test]
fn flake_attributes_are_built_and_base_ref_builds_the_base() {
    if !common::nix_or_skip("flake_attributes_are_built_and_base_ref_builds_the_base") {
        return;
    }
    let repo = tempfile::tempdir().unwrap();
    let r = repo.path();
    git(r, &["init", "-q"]);
    std::fs::write(r.join("flake.nix"), flake(false)).unwrap();
    git(r, &["add", "flake.nix"]);
    git(r, &["commit", "-qm", "base"]);
    let base_sha = git(r, &["rev-parse", "HEAD"]);
    std::fs::write(r.join("flake.nix"), flake(true)).unwrap();
    git(r, &["commit", "-qam", "head"]);

    let fake = Fake::start(0);
    let dir = tempfile::tempdir().unwrap();
    let nix_config = format!(
        "{}\nexperimental-features = nix-command flakes",
        common::NIX_CONFIG
    );
    let script = common::repo().join("action/run.sh");
    let event = dir.path().join("event.json");
    std::fs::write(
        &event,
        format!(r#"{{"pull_request":{{"number":{PR},"base":{{"sha":"{base_sha}"}}}}}}"#),
    )
    .unwrap();
    let outputs = dir.path().join("outputs");
    let out = Command::new("bash")
        .current_dir(r)
        .arg(&script)
        .arg("all")
        .env("NIX_CONFIG", &nix_config)
        .env("NIXCUT", env!("CARGO_BIN_EXE_nixcut"))
        .env("NIXCUT_OUT", dir.path().join("out"))
        .env("XDG_CACHE_HOME", common::test_cache_home())
        .env("NIXCUT_HEAD", ".#hello")
        .env("NIXCUT_MAX_GROWTH", "5%")
        .env("GITHUB_API_URL", &fake.url)
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_TOKEN", "write-token")
        .env_remove("NIXCUT_BASE")
        .env_remove("NIXCUT_BASE_REF")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "the blob is new growth: {err}");
    let mine = ours(&fake);
    assert_eq!(mine.len(), 1, "{err}");
    let c = &mine[0].1;
    let head: Vec<&str> = c.lines().take(10).collect();
    assert!(head[1].contains("failed"), "{c}");
    assert!(
        head.iter()
            .any(|l| l.contains("largest cause") && l.contains("blob")),
        "the blob is the cause:\n{}",
        head.join("\n")
    );
    let outputs = std::fs::read_to_string(outputs).unwrap();
    assert!(outputs.contains("verdict=fail\n"), "{outputs}");
}
