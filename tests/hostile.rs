//! Hostile and careless input (issue 8): every defect a probe found, pinned by a test
//! named after it. Real nodes (FIFOs, symlinks, pipes) live in temporary directories,
//! never under /dev.

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::*;

const ROCM: &str = "examples/llama-cpp-rocm.json";
const ROCM_SIZE: u64 = 11_382_742_168;

fn ex(p: &str) -> String {
    repo().join(p).to_string_lossy().into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// A store path with a readable hash (`c` repeated) and `name`.
fn sp(c: char, name: &str) -> String {
    format!("/nix/store/{}-{name}", c.to_string().repeat(32))
}

/// `nix path-info --json` (the object form) for `(path, narSize, references)`.
fn path_info_json(entries: &[(&str, &str, &[&str])]) -> String {
    let mut obj = serde_json::Map::new();
    for (path, size, refs) in entries {
        let size: serde_json::Value = serde_json::from_str(size).expect("a JSON number");
        obj.insert(
            path.to_string(),
            serde_json::json!({ "narSize": size, "references": refs }),
        );
    }
    serde_json::Value::Object(obj).to_string()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    f
}

fn mkfifo(p: &Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .expect("run mkfifo");
    assert!(st.success(), "mkfifo {}", p.display());
}

fn file_type(p: &Path) -> std::fs::FileType {
    std::fs::symlink_metadata(p).unwrap().file_type()
}

// ---- 1. snapshot -o writes into what is there, not over it ----

#[test]
fn snapshot_output_to_a_fifo_reaches_the_reader_and_keeps_the_fifo() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo);
    // A writer end held by the test, so that opening the reader does not block and the
    // reader sees end-of-file once nixcut is done, whatever nixcut did to the FIFO.
    let keeper = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let mut read_end = std::fs::File::open(&fifo).unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        read_end.read_to_string(&mut text).unwrap();
        text
    });
    let (code, _, err) = run(&["snapshot", &ex(ROCM), "-o", s(&fifo)]);
    drop(keeper);
    assert_eq!(code, 0, "{err}");
    let got = reader.join().unwrap();
    let (_, expected, _) = run(&["snapshot", &ex(ROCM), "-o", "-"]);
    assert_eq!(got, expected, "the reader got the snapshot");
    assert!(file_type(&fifo).is_fifo(), "the FIFO is still a FIFO");
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "no file left beside the FIFO: {names:?}");
}

#[test]
fn snapshot_output_through_a_symlink_replaces_its_target() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ci")).unwrap();
    let target = write(&dir.path().join("ci"), "base.json", "old baseline\n");
    let link = dir.path().join("baseline.json");
    std::os::unix::fs::symlink("ci/base.json", &link).unwrap();
    let (code, _, err) = run(&["snapshot", &ex(ROCM), "-o", s(&link)]);
    assert_eq!(code, 0, "{err}");
    assert!(file_type(&link).is_symlink(), "the symlink is kept");
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("ci/base.json")
    );
    let (_, expected, _) = run(&["snapshot", &ex(ROCM), "-o", "-"]);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), expected);
    // No temporary file is left in either directory.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    assert_eq!(std::fs::read_dir(dir.path().join("ci")).unwrap().count(), 1);

    // A dangling symlink: its target is created.
    std::fs::remove_file(&target).unwrap();
    let (code, _, err) = run(&["snapshot", &ex(ROCM), "-o", s(&link)]);
    assert_eq!(code, 0, "{err}");
    assert!(file_type(&link).is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), expected);
}

/// `-o /proc/self/fd/3` where fd 3 is a pipe: a link whose text (`pipe:[…]`) names no
/// file, which must be opened, not resolved (the `/dev/stdout` and `/dev/fd/N` case,
/// without touching /dev).
#[test]
fn snapshot_output_to_an_inherited_pipe_descriptor_is_written_through() {
    let bin = env!("CARGO_BIN_EXE_nixcut");
    let out = nix_cmd("bash")
        .arg("-c")
        .arg(format!(
            "'{bin}' snapshot '{}' -o /proc/self/fd/3 3>&1 1>&2 | cat",
            ex(ROCM)
        ))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let (code, got, err) = decode(out);
    assert_eq!(code, 0, "{err}");
    let (_, expected, _) = run(&["snapshot", &ex(ROCM), "-o", "-"]);
    assert_eq!(got, expected, "{err}");
}

#[test]
fn snapshot_output_onto_a_directory_or_socket_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("out");
    std::fs::create_dir(&sub).unwrap();
    let (code, _, err) = run(&["snapshot", &ex(ROCM), "-o", s(&sub)]);
    assert_eq!(code, 2);
    assert!(err.contains(s(&sub)) && err.contains("directory"), "{err}");
    let sock = dir.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let (code, _, err) = run(&["snapshot", &ex(ROCM), "-o", s(&sock)]);
    assert_eq!(code, 2);
    assert!(err.contains(s(&sock)) && err.contains("socket"), "{err}");
    use std::os::unix::fs::FileTypeExt;
    assert!(file_type(&sock).is_socket(), "the socket is untouched");
}

// ---- 2. check refuses an incomplete closure ----

fn partial_inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let (a, b, c) = (sp('a', "app-1.0"), sp('b', "lib-1.0"), sp('c', "gone-1.0"));
    let complete = write(
        dir,
        "complete.json",
        &path_info_json(&[(&a, "100", &[b.as_str()]), (&b, "10", &[])]),
    );
    // `nix path-info --json X` without `-r`: X's references are not described.
    let partial = write(
        dir,
        "partial.json",
        &path_info_json(&[(&a, "100", &[b.as_str(), c.as_str()]), (&b, "10", &[])]),
    );
    (complete, partial)
}

#[test]
fn check_refuses_a_root_whose_references_leave_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let (_, partial) = partial_inputs(dir.path());
    let (code, out, err) = run(&["check", s(&partial), "--max-size", "1GiB"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains(s(&partial)), "{err}");
    assert!(err.contains("not a complete closure"), "{err}");
    assert!(err.contains("--allow-partial"), "{err}");
    assert!(err.contains("gone-1.0"), "names a missing reference: {err}");
    // The user may say they know.
    let (code, _, err) = run(&[
        "check",
        s(&partial),
        "--max-size",
        "1GiB",
        "--allow-partial",
    ]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn check_refuses_a_baseline_or_other_whose_references_leave_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let (complete, partial) = partial_inputs(dir.path());
    let (code, _, err) = run(&["check", s(&complete), "--baseline", s(&partial)]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("baseline") && err.contains(s(&partial)) && err.contains("not a complete"),
        "{err}"
    );
    let (code, _, err) = run(&[
        "check",
        s(&complete),
        "--against",
        s(&partial),
        "--max-ratio",
        "2",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--against") && err.contains(s(&partial)) && err.contains("not a complete"),
        "{err}"
    );
    let (code, _, err) = run(&[
        "check",
        s(&complete),
        "--baseline",
        s(&partial),
        "--allow-partial",
    ]);
    assert_eq!(code, 0, "{err}");
}

// ---- 3. broken pipes ----

/// Run nixcut with stdout a pipe whose reading end is already closed: the write end of
/// the standard input of a `true` that has exited (the test keeps no read end).
fn run_into_closed_pipe(args: &[&str]) -> (i32, String) {
    let mut reader = std::process::Command::new("true")
        .stdin(Stdio::piped())
        .spawn()
        .expect("run true");
    let writer = reader.stdin.take().expect("a pipe");
    assert!(reader.wait().unwrap().success());
    let out = nixcut()
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run nixcut");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn check_failure_exit_code_survives_a_closed_stdout() {
    for format in ["table", "json", "markdown"] {
        let (code, err) =
            run_into_closed_pipe(&["check", &ex(ROCM), "--max-size", "1MiB", "--format", format]);
        assert_eq!(code, 1, "{format}: a failing check stays failed: {err}");
        let (code, err) =
            run_into_closed_pipe(&["check", &ex(ROCM), "--max-size", "1TiB", "--format", format]);
        assert_eq!(code, 0, "{format}: {err}");
    }
}

#[test]
fn a_closed_stdout_is_success_for_every_command() {
    for args in [
        vec!["snapshot", ROCM, "-o", "-"],
        vec!["why", ROCM, "--no-evidence"],
        vec!["why", ROCM, "--no-evidence", "--format", "json"],
        vec!["diff", ROCM, "examples/llama-cpp-cuda.json"],
    ] {
        let args: Vec<String> = args
            .iter()
            .map(|a| {
                if a.starts_with("examples/") {
                    ex(a)
                } else {
                    a.to_string()
                }
            })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, err) = run_into_closed_pipe(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?} says nothing: {err}");
    }
}

// ---- 4. sizes never wrap ----

#[test]
fn nar_sizes_adding_up_past_u64_are_an_error_naming_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (sp('a', "app-1.0"), sp('b', "lib-1.0"));
    let half = (1u64 << 63).to_string();
    let f = write(
        dir.path(),
        "huge.json",
        &path_info_json(&[(&a, &half, &[b.as_str()]), (&b, &half, &[])]),
    );
    for args in [
        vec!["why", s(&f), "--no-evidence"],
        vec!["check", s(&f), "--max-size", "1GiB"],
        vec!["snapshot", s(&f), "-o", "-"],
        vec!["gpu", s(&f)],
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(s(&f)), "{args:?}: {err}");
        assert!(err.contains("add up to more than"), "{args:?}: {err}");
    }
}

/// diff works in signed deltas: two new paths of 3·2^61 bytes each overflowed its i64
/// sum of the hidden packages (a panic in debug builds, a wrong sign in release).
#[test]
fn diff_of_closures_beyond_signed_sizes_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let (r, a, b) = (
        sp('r', "root-1.0"),
        sp('a', "alpha-1.0"),
        sp('b', "beta-1.0"),
    );
    let old = write(dir.path(), "old.json", &path_info_json(&[(&r, "1", &[])]));
    let big = (3u64 << 61).to_string();
    let new = write(
        dir.path(),
        "new.json",
        &path_info_json(&[
            (&r, "1", &[a.as_str(), b.as_str()]),
            (&a, &big, &[]),
            (&b, &big, &[]),
        ]),
    );
    for top in ["0", "5"] {
        let (code, _, err) = run(&["diff", s(&old), s(&new), "--top", top]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(s(&new)) && err.contains("2^63 - 1"), "{err}");
    }
}

#[test]
fn a_narinfo_size_of_u64_max_plus_another_path_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    write(&cache, "nix-cache-info", "StoreDir: /nix/store\n");
    let (a, b) = (sp('a', "app-1.0"), sp('b', "lib-1.0"));
    write(
        &cache,
        &format!("{}.narinfo", "a".repeat(32)),
        &format!(
            "StorePath: {a}\nURL: nar/a.nar\nNarSize: 18446744073709551615\nReferences: {}\n",
            &b["/nix/store/".len()..]
        ),
    );
    write(
        &cache,
        &format!("{}.narinfo", "b".repeat(32)),
        &format!("StorePath: {b}\nURL: nar/b.nar\nNarSize: 1\nReferences: \n"),
    );
    let (code, out, err) = run(&["check", s(&cache), "--max-size", "1GiB"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains(s(&cache)) && err.contains("add up to more than"),
        "{err}"
    );
}

// ---- 7. process substitution and pipes ----

#[test]
fn process_substitution_and_standard_input_are_read_as_streams() {
    let (_, expected, _) = run(&["why", &ex(ROCM), "--no-evidence", "--format", "json"]);
    let expected: serde_json::Value = serde_json::from_str(&expected).unwrap();
    let bin = env!("CARGO_BIN_EXE_nixcut");
    let out = nix_cmd("bash")
        .arg("-c")
        .arg(format!(
            "'{bin}' why <(cat '{}') --no-evidence --format json",
            ex(ROCM)
        ))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let (code, out, err) = decode(out);
    assert_eq!(code, 0, "<(…): {err}");
    let got: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(got["paths"], expected["paths"]);
    assert_eq!(got["closure_size"], ROCM_SIZE);

    let mut child = nixcut()
        .args(["why", "-", "--no-evidence", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = std::fs::read(ex(ROCM)).unwrap();
    let feeder = std::thread::spawn(move || stdin.write_all(&data));
    let (code, out, err) = decode(child.wait_with_output().unwrap());
    feeder.join().unwrap().unwrap();
    assert_eq!(code, 0, "stdin: {err}");
    let got: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(got["paths"], expected["paths"]);
}

#[test]
fn registration_text_on_standard_input_is_detected_from_the_content() {
    let text = std::fs::read(repo().join("tests/fixtures/load/dump-db.txt")).unwrap();
    let mut child = nixcut()
        .args(["why", "-", "--no-evidence", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&text).unwrap();
    let (code, out, err) = decode(child.wait_with_output().unwrap());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["source"]["kind"], "registration");
}

#[test]
fn standard_input_given_twice_is_refused_not_read_as_empty() {
    for args in [
        vec!["diff", "-", "-"],
        vec!["check", "-", "--baseline", "-"],
        vec!["refs", "-", "-"],
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains("can be read only once"), "{args:?}: {err}");
    }
}

// ---- 8. binary input is refused early ----

/// Deterministic pseudo-random bytes.
fn noise(len: usize, mut x: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn a_large_binary_file_is_refused_from_its_first_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("disk.img");
    std::fs::write(&f, noise(4 << 20, 0x5eed)).unwrap();
    let (code, _, err) = run(&["why", s(&f)]);
    assert_eq!(code, 2);
    assert!(err.contains(s(&f)) && err.contains("binary data"), "{err}");
}

/// A 3 GiB file (sparse: it takes no disk) that starts like JSON: refused from its size,
/// before anything past the first bytes is read.
#[test]
fn a_file_over_the_input_cap_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("huge.json");
    let file = std::fs::File::create(&f).unwrap();
    // Blank past the first bytes nixcut judges; the rest is a hole of NUL bytes.
    let mut head = b"[".to_vec();
    head.resize(64 << 10, b' ');
    (&file).write_all(&head).unwrap();
    file.set_len(3 << 30).unwrap();
    drop(file);
    let (code, _, err) = run(&["why", s(&f)]);
    assert_eq!(code, 2);
    assert!(
        err.contains(s(&f)) && err.contains("larger than 2.0 GiB"),
        "{err}"
    );
}

#[test]
fn an_endless_binary_stream_is_refused_without_reading_it_all() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("endless");
    mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            let chunk = noise(1 << 16, 7);
            let mut written: u64 = 0;
            // Until the reader goes away (EPIPE: the test binary ignores SIGPIPE), or
            // 128 MiB: a reader that reads it all fails the test instead of the machine.
            while written < 128 << 20 && f.write_all(&chunk).is_ok() {
                written += chunk.len() as u64;
            }
            written
        })
    };
    let (code, _, err) = run(&["why", s(&fifo)]);
    assert_eq!(code, 2);
    assert!(err.contains("binary data"), "{err}");
    let written = writer.join().unwrap();
    assert!(written < 16 << 20, "read {written} bytes of noise");
}

#[test]
fn an_endless_text_stream_of_no_known_format_is_refused() {
    let mut child = nixcut()
        .args(["why", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let line = b"hello world, this is not a closure\n".repeat(1000);
        let mut written = 0;
        while written < 128 << 20 && stdin.write_all(&line).is_ok() {
            written += line.len();
        }
    });
    let (code, _, err) = decode(child.wait_with_output().unwrap());
    feeder.join().unwrap();
    assert_eq!(code, 2);
    assert!(err.contains("unknown input format"), "{err}");
    assert!(err.contains("standard input"), "{err}");
}

// ---- 9. permission denied ----

#[test]
fn an_unreadable_directory_says_permission_denied() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    write(&locked, "something", "x");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    // As root, permissions do not bite: drop the capabilities that override them.
    let bin = env!("CARGO_BIN_EXE_nixcut");
    let out = std::process::Command::new("setpriv")
        .env("XDG_CACHE_HOME", common::test_cache_home())
        .args([
            "--inh-caps=-all",
            "--bounding-set=-dac_override,-dac_read_search",
            "--",
            bin,
            "why",
            s(&locked),
        ])
        .output();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = match out {
        Ok(o) if !String::from_utf8_lossy(&o.stderr).starts_with("setpriv:") => o,
        other => {
            eprintln!("SKIP an_unreadable_directory_says_permission_denied: setpriv: {other:?}");
            return;
        }
    };
    let (code, _, err) = decode(out);
    assert_eq!(code, 2);
    assert!(err.contains(s(&locked)), "{err}");
    assert!(err.contains("Permission denied"), "{err}");
    assert!(!err.contains("it holds"), "{err}");
}

// ---- 10. contradictions inside inputs ----

#[test]
fn a_snapshot_whose_root_is_not_among_its_paths_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, snap, _) = run(&["snapshot", &ex(ROCM), "-o", "-"]);
    let mut v: serde_json::Value = serde_json::from_str(&snap).unwrap();
    v["root"] = sp('z', "elsewhere-1.0").into();
    let f = write(dir.path(), "edited.json", &v.to_string());
    let (code, _, err) = run(&["why", s(&f), "--no-evidence"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(s(&f)) && err.contains("elsewhere-1.0"),
        "{err}"
    );
    assert!(err.contains("not among its paths"), "{err}");
}

fn one_path_cache(dir: &Path, narinfo: &str) -> PathBuf {
    let cache = dir.join("cache");
    std::fs::create_dir(&cache).unwrap();
    write(&cache, "nix-cache-info", "StoreDir: /nix/store\n");
    write(&cache, &format!("{}.narinfo", "a".repeat(32)), narinfo);
    cache
}

#[test]
fn a_narinfo_field_given_twice_is_refused_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let a = sp('a', "app-1.0");
    let cache = one_path_cache(
        dir.path(),
        &format!("StorePath: {a}\nURL: nar/a.nar\nNarSize: 10\nReferences: \nNarSize: 99999\n"),
    );
    let (code, _, err) = run(&["why", s(&cache), "--no-evidence"]);
    assert_eq!(code, 2, "{err}");
    let file = cache.join(format!("{}.narinfo", "a".repeat(32)));
    assert!(err.contains(&format!("{}:5:", file.display())), "{err}");
    assert!(err.contains("NarSize") && err.contains("line 3"), "{err}");
}

#[test]
fn a_directory_named_like_a_narinfo_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let a = sp('a', "app-1.0");
    let cache = one_path_cache(
        dir.path(),
        &format!("StorePath: {a}\nURL: nar/a.nar\nNarSize: 10\nReferences: \n"),
    );
    let odd = cache.join(format!("{}.narinfo", "b".repeat(32)));
    std::fs::create_dir(&odd).unwrap();
    let (code, _, err) = run(&["why", s(&cache), "--no-evidence"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning") && err.contains(s(&odd)) && err.contains("not a file"),
        "{err}"
    );
}

// ---- 11. size arguments ----

#[test]
fn max_size_units_mean_what_they_say() {
    let rocm = ex(ROCM);
    // 11 GB = 11e9 < 11.38e9 bytes < 11 GiB.
    let (code, _, err) = run(&["check", &rocm, "--max-size", "11GB"]);
    assert_eq!(code, 1, "11GB is 11e9 bytes: {err}");
    let (code, _, err) = run(&["check", &rocm, "--max-size", "11GiB"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(&["check", &rocm, "--max-size", "11G"]);
    assert_eq!(code, 0, "a bare G is GiB, as Nix prints it: {err}");
    for big in [
        "1PiB",
        "1EiB",
        "1PB",
        "1EB",
        "15EiB",
        "18446744073709551615",
    ] {
        let (code, _, err) = run(&["check", &rocm, "--max-size", big]);
        assert_eq!(code, 0, "{big}: {err}");
    }
    let exact = ROCM_SIZE.to_string();
    let (code, _, err) = run(&["check", &rocm, "--max-size", &exact]);
    assert_eq!(code, 0, "plain bytes, exactly: {err}");
    let one_less = (ROCM_SIZE - 1).to_string();
    let (code, _, _) = run(&["check", &rocm, "--max-size", &one_less]);
    assert_eq!(code, 1);
}

#[test]
fn size_arguments_out_of_range_or_malformed_say_why() {
    let rocm = ex(ROCM);
    for (flag, value, want) in [
        ("--max-size", "18446744073709551616", "out of range"),
        ("--max-size", "16EiB", "out of range"),
        (
            "--max-size",
            "99999999999999999999999999999999999999999",
            "out of range",
        ),
        ("--max-size", "-5GB", "negative"),
        ("--max-size", "12Q", "not a size"),
        ("--max-size", "1.2.3G", "not a size"),
        ("--max-size", "", "not a size"),
        ("--max-growth", "1e999%", "out of range"),
        ("--max-growth", "-1%", "negative"),
        ("--max-growth", "lots%", "not a percentage"),
        ("--max-growth", "16EiB", "out of range"),
    ] {
        // `--flag=value`: a value may start with `-`.
        let arg = format!("{flag}={value}");
        let mut args = vec!["check", rocm.as_str(), arg.as_str()];
        if flag == "--max-growth" {
            args.extend(["--baseline", rocm.as_str()]);
        }
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{flag} {value}: {err}");
        assert!(err.contains(want), "{flag} {value}: want {want:?}: {err}");
        assert!(err.contains(flag), "{flag} {value}: names the flag: {err}");
    }
}

#[test]
fn check_help_documents_the_size_units() {
    let (code, out, _) = run(&["check", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("GiB") && out.contains("10^9"), "{out}");
    assert!(out.contains("EiB"), "{out}");
}

// ---- 13. the TARGET is named as the target ----

#[test]
fn why_target_that_matches_nothing_is_named_as_the_target() {
    let (code, _, err) = run(&["why", &ex(ROCM), "nosuchthing"]);
    assert_eq!(code, 2);
    assert!(err.contains("TARGET `nosuchthing`"), "{err}");
    assert!(!err.contains("root `nosuchthing`"), "{err}");
    let (code, _, err) = run(&["why", &ex(ROCM), "--root", "nosuchroot", "rocblas"]);
    assert_eq!(code, 2);
    assert!(err.contains("root `nosuchroot`"), "{err}");
}

// ---- 18. one closure, one snapshot ----

#[test]
fn snapshots_of_one_closure_named_three_ways_are_identical() {
    if !nix_or_skip("snapshots_of_one_closure_named_three_ways_are_identical") {
        return;
    }
    let w = rocm_world();
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("result");
    std::os::unix::fs::symlink(&w.root, &result).unwrap();
    std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
    let other = dir.path().join("elsewhere/link");
    std::os::unix::fs::symlink(&w.root, &other).unwrap();
    let mut files = Vec::new();
    for (i, input) in [
        "./result".to_string(),
        w.root.clone(),
        other.to_string_lossy().into_owned(),
    ]
    .iter()
    .enumerate()
    {
        let out = dir.path().join(format!("snap{i}.json"));
        let o = nixcut()
            .current_dir(dir.path())
            .args(["snapshot", input, "-o", s(&out)])
            .output()
            .unwrap();
        let (code, _, err) = decode(o);
        assert_eq!(code, 0, "{input}: {err}");
        files.push(std::fs::read_to_string(&out).unwrap());
    }
    assert_eq!(files[0], files[1], "./result and the store path");
    assert_eq!(files[0], files[2], "./result and another symlink");
}

// ---- Issue 19, item 12: a big rules file ----

/// A rules file of `n` rules, the last one naming an unknown class.
fn rules_file(dir: &Path, n: usize) -> PathBuf {
    let mut text = String::new();
    for i in 0..n {
        let class = if i + 1 == n { "nonsense" } else { "doc" };
        text.push_str(&format!(
            "[[class]]\nname = \"r{i}\"\nunder = [\"share/x{i}/\"]\nclass = \"{class}\"\n\n"
        ));
    }
    write(dir, &format!("rules{n}.toml"), &text)
}

/// The quickest of three runs of `nixcut rules --rules FILE` (refused at its last
/// rule, so that only loading is measured), and the error.
fn rules_load(file: &Path) -> (std::time::Duration, String) {
    let mut best = std::time::Duration::MAX;
    let mut err = String::new();
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let (code, _, e) = run(&["rules", "--rules", s(file)]);
        best = best.min(t.elapsed());
        assert_eq!(code, 2, "{e}");
        err = e;
    }
    (best, err)
}

/// `--rules` loaded in quadratic time (every rule's position was found by scanning
/// the text from its start): 20,000 rules took 10 s, 200,000 over 60 s. Not a time
/// limit: the growth from 1,000 to 16,000 rules is compared in one run; linear is 16x
/// (less with the start-up), the old quadratic loader was over 200x. The error still
/// names the last rule's line and column.
#[test]
fn a_rules_file_loads_in_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let (small, big) = (
        rules_file(dir.path(), 1_000),
        rules_file(dir.path(), 16_000),
    );
    let (t_small, e_small) = rules_load(&small);
    let (t_big, e_big) = rules_load(&big);
    assert!(e_small.contains(":4999:9:"), "{e_small}");
    assert!(e_big.contains(":79999:9:"), "{e_big}");
    assert!(e_big.contains("unknown class `nonsense`"), "{e_big}");
    let growth = t_big.as_secs_f64() / t_small.as_secs_f64().max(1e-3);
    assert!(
        growth < 64.0,
        "16x the rules took {growth:.1}x the time ({t_small:?} -> {t_big:?}): not linear"
    );
}

// ---- Issue 19, item 11: deep chains ----

/// A store path with a distinct hash for every `i`, named `p<i>`.
fn numbered(i: usize) -> String {
    const NIX32: &[u8] = b"0123456789abcdfghijklmnpqrsvwxyz";
    let mut h = [b'0'; 32];
    let mut x = i;
    for c in h.iter_mut().rev() {
        *c = NIX32[x % 32];
        x /= 32;
    }
    format!("/nix/store/{}-p{i}", std::str::from_utf8(&h).unwrap())
}

/// `nix path-info --json` of `n` paths in one chain: p0 -> p1 -> … -> p<n-1>.
fn deep_chain(dir: &Path, n: usize) -> PathBuf {
    let mut obj = serde_json::Map::new();
    for i in 0..n {
        let refs: Vec<String> = if i + 1 < n {
            vec![numbered(i + 1)]
        } else {
            vec![]
        };
        obj.insert(
            numbered(i),
            serde_json::json!({ "narSize": 1000 + i, "references": refs }),
        );
    }
    let f = dir.join(format!("chain{n}.json"));
    std::fs::write(&f, serde_json::Value::Object(obj).to_string()).unwrap();
    f
}

/// A 50,000-path chain made `why --format json` and `--format html` overflow the stack
/// (SIGABRT, exit 134: a recursive strongly-connected-components pass), and
/// `why ROOT TARGET` print an indentation per level (5 GB). Now every format answers,
/// in output linear in the chain, and the JSON tree is as deep as the chain.
#[test]
fn a_chain_of_50000_paths_is_reported_in_every_format() {
    let n = 50_000;
    let dir = tempfile::tempdir().unwrap();
    let input = deep_chain(dir.path(), n);
    let target = numbered(n - 1);
    let bytes_per_path = 400;
    for args in [
        vec!["why", s(&input), "--format", "html"],
        vec![
            "why",
            s(&input),
            "--format",
            "json",
            "--top",
            "3",
            "--sort",
            "nar",
        ],
        vec!["why", s(&input), &target, "--format", "table"],
        vec!["why", s(&input), &target, "--format", "html"],
        vec!["why", s(&input), &target, "--format", "markdown"],
        vec!["why", s(&input), &target, "--format", "json"],
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(
            out.len() < n * bytes_per_path,
            "{args:?}: {} bytes for {n} paths",
            out.len()
        );
        if args.contains(&"json") && args.contains(&target.as_str()) {
            assert_eq!(out.matches("\"children\":[").count(), n, "every node");
            assert!(
                out.contains(&format!("{},\"evidence\"", "]}".repeat(n))),
                "closed"
            );
        }
    }
    // The rows' chains are whole when asked for (by default they are cut to 32 paths:
    // tests/why.rs::why_on_a_deep_chain_writes_output_linear_in_the_graph): the
    // largest path, the last, has the chain from p0.
    let (code, out, err) = run(&[
        "why",
        s(&input),
        "--format",
        "json",
        "--top",
        "3",
        "--sort",
        "nar",
        "--max-chain-length",
        "50000",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let longest = v["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["chain"].as_array().unwrap().len())
        .max();
    assert_eq!(longest, Some(n));
}

/// `why ROOT TARGET` had no bound: `--max-chains N` shows the first N chains (a path
/// shown before stands for every chain through it) and counts the rest, in every
/// format. A lattice of 2^20 chains: 5 shown.
#[test]
fn max_chains_shows_the_first_chains_and_counts_the_rest() {
    // a0 -> {b0, c0} -> a1 -> {b1, c1} -> a2 … : 2^k chains from a0 to ak.
    let k = 20;
    let name = |tag: &str, i: usize| {
        numbered(i * 3 + usize::from(tag == "b") + 2 * usize::from(tag == "c"))
    };
    let mut obj = serde_json::Map::new();
    for i in 0..=k {
        let refs: Vec<String> = if i < k {
            vec![name("b", i), name("c", i)]
        } else {
            vec![]
        };
        obj.insert(
            name("a", i),
            serde_json::json!({"narSize": 10, "references": refs}),
        );
        if i < k {
            for t in ["b", "c"] {
                obj.insert(
                    name(t, i),
                    serde_json::json!({"narSize": 10, "references": [name("a", i + 1)]}),
                );
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "lattice.json",
        &serde_json::Value::Object(obj).to_string(),
    );
    let target = name("a", k);
    let all = json(&["why", s(&f), &target, "--format", "json"]);
    assert_eq!(all["chain_count"], 1u64 << k);
    assert!(all.get("chains_not_shown").is_none(), "{all}");
    let capped = json(&[
        "why",
        s(&f),
        &target,
        "--format",
        "json",
        "--max-chains",
        "5",
    ]);
    let mirror: common::contract::WhyChainsReport = serde_json::from_value(capped.clone())
        .unwrap_or_else(|e| panic!("the contract reads it: {e}"));
    assert_eq!(mirror.chains_not_shown, Some((1u64 << k) - 4));
    assert_eq!(capped["chain_count"], 1u64 << k);
    // 0→…→ak, then the other way into the last level (2), then a repeat of a level
    // standing for 2 chains (4); the next repeat stands for 4 and does not fit.
    assert_eq!(capped["chains_not_shown"], (1u64 << k) - 4);
    assert_eq!(capped["paths_on_chains"], all["paths_on_chains"]);
    let (code, out, err) = run(&["why", s(&f), &target, "--max-chains", "5"]);
    assert_eq!(code, 0, "{err}");
    // The header is wrapped at the table width: compare its words.
    let words = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("1,048,572 chains not shown (--max-chains)"),
        "{out}"
    );
    assert_eq!((1u64 << k) - 4, 1_048_572);
    let (code, _, err) = run(&["why", s(&f), "--max-chains", "5"]);
    assert_eq!(code, 2, "needs a TARGET: {err}");
}

// ---- Issue 19, item 14: small things ----

/// A `StoreDir` of `/`, `../../etc` or `/nix/../etc` in `nix-cache-info` was accepted
/// (store paths are joined to it). Now refused naming the file and line.
#[test]
fn a_cache_store_dir_that_is_not_a_plain_absolute_directory_is_refused() {
    for bad in [
        "/",
        "../../etc",
        "/nix/../etc",
        "nix/store",
        "/nix/store/",
        "/nix//store",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        std::fs::create_dir(&cache).unwrap();
        write(
            &cache,
            "nix-cache-info",
            &format!("WantMassQuery: 1\nStoreDir: {bad}\n"),
        );
        let a = sp('a', "app-1.0");
        write(
            &cache,
            &format!("{}.narinfo", "a".repeat(32)),
            &format!("StorePath: {a}\nURL: nar/a.nar\nNarSize: 1\nReferences: \n"),
        );
        let (code, _, err) = run(&["why", s(&cache), "--no-evidence"]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("nix-cache-info:2:"), "{bad}: {err}");
        assert!(err.contains("absolute directory"), "{bad}: {err}");
    }
}

/// A path-info file with `"version": 1` was called "newer than this nixcut knows".
#[test]
fn path_info_version_1_is_called_older() {
    let dir = tempfile::tempdir().unwrap();
    let a = sp('a', "app-1.0");
    let f = write(
        dir.path(),
        "v1.json",
        &format!(r#"{{"version": 1, "info": {{"{a}": {{"narSize": 5, "references": []}}}}}}"#),
    );
    let (code, _, err) = run(&["why", s(&f), "--no-evidence"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("version 1 is older than"), "{err}");
    assert!(!err.contains("newer"), "{err}");
}

/// 5,000 "no file shows its hash" warnings flooded stderr, one line each. Now the first
/// 20 are printed and the rest counted; the JSON report keeps every one.
#[test]
fn thousands_of_warnings_are_summarised_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("root/nix/store");
    let app = numbered(1_000_000).replace("-p1000000", "-app-1.0");
    let app_base = &app["/nix/store/".len()..];
    std::fs::create_dir_all(store.join(app_base).join("bin")).unwrap();
    std::fs::write(store.join(app_base).join("bin/app"), "#!/bin/sh\necho hi\n").unwrap();
    let libs: Vec<String> = (0..5000).map(numbered).collect();
    let mut obj = serde_json::Map::new();
    for l in &libs {
        std::fs::create_dir_all(store.join(&l["/nix/store/".len()..])).unwrap();
        obj.insert(
            l.clone(),
            serde_json::json!({"narSize": 100, "references": []}),
        );
    }
    obj.insert(
        app.clone(),
        serde_json::json!({"narSize": 1000, "references": libs}),
    );
    let f = write(
        dir.path(),
        "closure.json",
        &serde_json::Value::Object(obj).to_string(),
    );
    let root = dir.path().join("root");
    let (code, _, err) = run(&["why", s(&f), "--store-root", s(&root), "--no-cache"]);
    assert_eq!(code, 0, "{err}");
    let lines = err.lines().count();
    assert!(lines <= 25, "{lines} lines on stderr");
    assert!(
        err.contains("and 4980 more warning(s) (5000 in all"),
        "{err}"
    );
    let v = json(&[
        "why",
        s(&f),
        "--store-root",
        s(&root),
        "--no-cache",
        "--format",
        "json",
    ]);
    let all = v["warnings"].as_array().map_or(0, Vec::len);
    assert_eq!(all, 5000, "the JSON report keeps every warning");
}

/// `check` took 68 s on a 1,000,000-path input with 200,000 roots where `why` took 6 s:
/// each path asked whether it is a root by scanning every root. Not a time limit: the
/// two commands' times on one input (60,000 paths, 40,000 of them roots) are compared
/// in one run, the quicker of three runs each; the old `check` took 7x
/// `why`'s.
#[test]
fn check_on_many_roots_takes_no_longer_than_why() {
    let n = 60_000;
    let roots = 40_000;
    let mut obj = serde_json::Map::new();
    for i in 0..n {
        let refs: Vec<String> = if i < roots {
            vec![numbered(roots + i % (n - roots))]
        } else if i + 1 < n && (i - roots) % 50 != 49 {
            // Short chains (50 paths): deep ones are another test's.
            vec![numbered(i + 1)]
        } else {
            vec![]
        };
        obj.insert(
            numbered(i),
            serde_json::json!({"narSize": 1000, "references": refs}),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "roots.json",
        &serde_json::Value::Object(obj).to_string(),
    );
    let quickest = |args: &[&str]| {
        (0..3)
            .map(|_| {
                let t = std::time::Instant::now();
                let (code, _, err) = run(args);
                assert!(code == 0 || code == 1, "{args:?}: {err}");
                t.elapsed()
            })
            .min()
            .unwrap()
    };
    let why = quickest(&["why", s(&f), "--no-evidence"]);
    let check = quickest(&["check", s(&f), "--max-size", "1KiB"]);
    let ratio = check.as_secs_f64() / why.as_secs_f64().max(1e-3);
    eprintln!("check {check:?}, why {why:?}: {ratio:.1}x");
    assert!(
        ratio < 4.0,
        "check took {ratio:.1}x why's time ({why:?} -> {check:?}) on {roots} roots"
    );
}

// ---- issue 19, item 13: raw control characters from file contents and names ----

/// A clang offload bundle file whose device entry's id ends in `target`.
fn bundle_with_target(target: &str) -> Vec<u8> {
    let ids = [
        "host-x86_64-unknown-linux-gnu-".to_string(),
        format!("hipv4-amdgcn-amd-amdhsa--{target}"),
    ];
    let mut b = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    b.extend_from_slice(&(ids.len() as u64).to_le_bytes());
    for (i, id) in ids.iter().enumerate() {
        b.extend_from_slice(&(4096u64 * (i as u64 + 1)).to_le_bytes());
        b.extend_from_slice(&64u64.to_le_bytes());
        b.extend_from_slice(&(id.len() as u64).to_le_bytes());
        b.extend_from_slice(id.as_bytes());
    }
    b.resize(4096 * 3 + 64, 0x5a);
    b
}

/// Build, with the real Nix, a root whose `lib/kernel.hsaco` is `bundle` and whose file
/// named `name` holds the store path of a dependency (so the name is evidence).
fn hostile_world(dir: &Path, bundle: &[u8], name: &str) -> String {
    let blob = dir.join("kernel.hsaco");
    std::fs::write(&blob, bundle).unwrap();
    let hex: String = name.bytes().map(|b| format!("\\{b:03o}")).collect();
    let expr = format!(
        r#"let
  sys = builtins.currentSystem;
  dep = derivation {{ name = "dep-1.0"; system = sys; builder = "/bin/sh";
    args = [ "-c" "echo dependency > $out" ]; }};
in derivation {{ name = "hostile-1.0"; system = sys; builder = "/bin/sh";
  PATH = "/usr/bin:/bin";
  args = [ "-c" ''
    mkdir -p $out/lib $out/share
    cp ${{{blob}}} $out/lib/kernel.hsaco
    printf '%s\n' ${{dep}} > "$out/share/$(printf '{hex}')"
  '' ];
}}"#,
        blob = blob.display()
    );
    let f = dir.join("hostile.nix");
    std::fs::write(&f, expr).unwrap();
    nix_stdout("nix-build", &[f.to_str().unwrap(), "--no-out-link"])
        .trim()
        .to_string()
}

fn assert_no_raw_hazard(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| c != '\n' && c != '\t' && nixcut::store::is_terminal_hazard(c))
        .collect();
    assert!(bad.is_empty(), "{what}: raw {bad:?} in\n{text}");
}

#[test]
fn tables_escape_control_characters_from_bundle_ids_and_entry_names() {
    if !nix_or_skip("tables_escape_control_characters_from_bundle_ids_and_entry_names") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = hostile_world(
        dir.path(),
        &bundle_with_target("gfx90a\u{1b}[2J\u{0}\u{202e}x"),
        "notes\u{202e}txt.\u{1b}[31m\r",
    );
    for args in [
        vec!["gpu", root.as_str()],
        vec!["gpu", root.as_str(), "--gpu-targets", "gfx1030"],
        vec!["why", root.as_str()],
        vec!["why", root.as_str(), "--long"],
        vec!["refs", root.as_str()],
        vec!["refs", "--closure", root.as_str()],
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert_no_raw_hazard(&format!("{args:?} stdout"), &out);
        assert_no_raw_hazard(&format!("{args:?} stderr"), &err);
        // The characters are shown, escaped, not dropped.
        if args[0] == "gpu" {
            assert!(out.contains("\\u{1b}[2J"), "{args:?}:\n{out}");
        }
        if args[0] == "refs" {
            assert!(out.contains("notes\\u{202e}txt"), "{args:?}:\n{out}");
        }
    }
}

/// Issue 19, item 3, for a cache directory: a NAR that is not what its narinfo says
/// (another file of the same length) was scanned and its evidence used. Now it is a
/// warning and the path is not scanned.
#[test]
fn a_cache_directory_nar_that_does_not_match_its_narinfo_is_not_used() {
    use common::serve::{file_nar, write_cache, APP, LIB};
    let dir = tempfile::tempdir().unwrap();
    let script = format!("#!/bin/sh\nexec /nix/store/{LIB}/bin/lib\n");
    let files = write_cache(
        dir.path(),
        &[
            (APP, file_nar(script.as_bytes()), LIB),
            (LIB, file_nar(b"#!/bin/sh\n"), ""),
        ],
    );
    let forged = script.replace(LIB, &"x".repeat(LIB.len()));
    std::fs::write(dir.path().join(&files[0]), file_nar(forged.as_bytes())).unwrap();
    let v = json(&["refs", s(dir.path()), "--format", "json", "--no-cache"]);
    let app = v["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"].as_str().is_some_and(|p| p.ends_with(APP)))
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(app["scanned"], false, "{app}");
    assert!(
        app["warnings"]
            .to_string()
            .contains("does not match its narinfo"),
        "{app}"
    );
}

// ---- `nix-store --query --graph` output, damaged or hostile ----

/// A quote not closed, an id that is no store path, control and bidirectional
/// characters in names, bytes that are not UTF-8 (in the first bytes nixcut judges, and
/// past them): each an error naming the file (and the line and column where there is
/// one), never a panic, and nothing on stderr a terminal would act on.
#[test]
fn a_damaged_nix_store_graph_is_an_error_with_a_position() {
    let dir = tempfile::tempdir().unwrap();
    let app = "cb57q9mwx8761wyzrb6ypijgajriigag-app-1.0";
    let node = format!("\"{app}\" [label = \"app-1.0\"];\n");
    let mut far = format!("digraph G {{\n{}", node.repeat(200)).into_bytes();
    far.extend_from_slice(b"\"\xff\xfe\" [label = \"x\"];\n}\n");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "unclosed",
            format!("digraph G {{\n\"{app}\x1b[2J\u{202e} [label = x];\n}}\n").into_bytes(),
            ":2:1: expected a quoted string closed on its line",
        ),
        (
            "not-a-path",
            b"digraph G {\n\"../../etc/passwd\" [label = \"passwd\"];\n}\n".to_vec(),
            ":2:1: expected a store path base name",
        ),
        (
            "control",
            format!("digraph G {{\n\"{app}\x1b]0;pwned\x07\" [label = \"app\"];\n}}\n")
                .into_bytes(),
            ":2:1: expected a store path base name",
        ),
        (
            "label",
            format!("digraph G {{\n\"{app}\" [label = \"\u{202e}evil\x1b[31m\"];\n}}\n")
                .into_bytes(),
            ":2:53: expected the label `app-1.0`",
        ),
        (
            "near",
            b"digraph G {\n\"\xff\" [label = \"x\"];\n}\n".to_vec(),
            "binary data (not UTF-8 at byte 13)",
        ),
        ("far", far, "binary data (not UTF-8 at byte"),
    ];
    for (name, bytes, want) in cases {
        let f = dir.path().join(name);
        std::fs::write(&f, &bytes).unwrap();
        let (code, out, err) = run(&["why", s(&f), "--no-evidence"]);
        assert_eq!(code, 2, "{name}: {out}{err}");
        assert!(err.contains(s(&f)) && err.contains(want), "{name}: {err}");
        assert_no_raw_hazard(name, &err);
    }
}

/// The files of a directory input are read under the same cap as a file input, and
/// only when they are regular files: a closureInfo `registration` of 3 GiB (sparse) is
/// refused from its size, a `store-paths` that is a FIFO nobody writes to is a warning
/// (it would block the read forever), and so is one that is a link to `/dev/zero`.
#[test]
fn the_files_of_a_directory_input_are_read_under_the_cap() {
    let fixture = repo().join("tests/fixtures/load/closure-info");
    let dir = tempfile::tempdir().unwrap();
    let copy = |name: &str| {
        let d = dir.path().join(name);
        std::fs::create_dir(&d).unwrap();
        for f in ["registration", "store-paths", "total-nar-size"] {
            std::fs::copy(fixture.join(f), d.join(f)).unwrap();
        }
        d
    };
    let huge = copy("huge");
    let file = std::fs::File::create(huge.join("registration")).unwrap();
    file.set_len(3 << 30).unwrap();
    drop(file);
    let (code, _, err) = run(&["why", s(&huge), "--no-evidence"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("registration") && err.contains("larger than 2.0 GiB"),
        "{err}"
    );
    let fifo = copy("fifo");
    std::fs::remove_file(fifo.join("store-paths")).unwrap();
    mkfifo(&fifo.join("store-paths"));
    let zero = copy("zero");
    std::fs::remove_file(zero.join("store-paths")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", zero.join("store-paths")).unwrap();
    for d in [fifo, zero] {
        let (code, out, err) = run(&["why", s(&d), "--no-evidence"]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("app-1.0"), "{out}");
        assert!(
            err.contains("store-paths: cannot cross-check: ") && err.contains("not a regular file"),
            "{err}"
        );
    }
}
