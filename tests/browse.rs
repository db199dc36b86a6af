//! `nixcut browse` in a real terminal: the binary runs in tmux (`new-session -x W -y H`),
//! keys go in with `send-keys`, and the screen comes back with `capture-pane`. Each pane
//! and each key is shown at 80x24 and 160x48, on the shipped binary cache
//! (`examples/rocm-world-cache`) and on Debian 13's real rocBLAS world built by Nix;
//! the screens are insta snapshots (store hashes of Nix-built worlds and the scan's
//! progress counter normalised). Every wait polls the screen until the expected text is
//! there and the screen has stopped changing; the give-up bound only ends a hung test
//! (with the last screen in the message), it times nothing.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

use common::{human, json, repo, test_cache_home, tool_or_skip, trixie_world, NIX_CONFIG};
use serde_json::Value;

/// The sizes every screen is shown at.
const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

/// When a wait gives up (a hung test, not a speed limit).
const GIVE_UP: Duration = Duration::from_secs(180);

/// One `nixcut browse` in a tmux server of its own (its socket in `_dir`).
struct Screen {
    socket: String,
    _dir: tempfile::TempDir,
}

/// How the terminal is set up.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Colours {
    /// `TERM=xterm-256color`, `NO_COLOR` unset.
    Colour256,
    /// `TERM=vt100` and `NO_COLOR=1`.
    Monochrome,
}

impl Screen {
    /// Start `nixcut browse ARGS` in a `w`x`h` tmux window; `None` when tmux is missing.
    fn open(test: &str, (w, h): (u16, u16), args: &[&str], colours: Colours) -> Option<Screen> {
        if !tool_or_skip(test, "tmux", "tmux") {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        // The server's socket lives (and goes) with the test's directory.
        let socket = dir.path().join("tmux.sock").to_str().unwrap().to_string();
        // The pane stays when the program ends, so what it left can be read.
        let conf = dir.path().join("tmux.conf");
        std::fs::write(&conf, "set -g remain-on-exit on\nset -g status off\n").unwrap();
        let mut cmd = format!(
            "env -u NO_COLOR -u NIXCUT_STORE_DIR XDG_CACHE_HOME='{}' {} NIX_CONFIG=\"$(printf '{}')\" '{}' browse",
            test_cache_home().display(),
            match colours {
                Colours::Colour256 => "TERM=xterm-256color",
                Colours::Monochrome => "TERM=vt100 NO_COLOR=1",
            },
            NIX_CONFIG.replace('\n', "\\n"),
            env!("CARGO_BIN_EXE_nixcut"),
        );
        for a in args {
            cmd.push_str(&format!(" '{a}'"));
        }
        cmd.push_str(&format!(
            "; echo $? > '{}'",
            dir.path().join("exit").display()
        ));
        let s = Screen { socket, _dir: dir };
        let (w, h) = (w.to_string(), h.to_string());
        let conf = conf.to_str().unwrap().to_string();
        s.tmux_with_conf(
            &conf,
            &["new-session", "-d", "-x", &w, "-y", &h, "-s", "t", &cmd],
        );
        Some(s)
    }

    fn tmux_with_conf(&self, conf: &str, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-S", &self.socket, "-f", conf])
            .args(args)
            .output()
            .expect("run tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn tmux(&self, args: &[&str]) -> String {
        self.tmux_with_conf("/dev/null", args)
    }

    /// Keys by tmux's names (`Down`, `Enter`, `BSpace`, `q`).
    fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.tmux(&["send-keys", "-t", "t", k]);
        }
    }

    /// Text typed one character at a time (each an incremental step).
    fn type_text(&self, text: &str) {
        for c in text.chars() {
            self.tmux(&["send-keys", "-t", "t", "-l", &c.to_string()]);
        }
    }

    /// The screen as text, each line without trailing blanks.
    fn capture(&self) -> String {
        let raw = self.tmux(&["capture-pane", "-p", "-t", "t"]);
        raw.lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The screen with its attributes (SGR escapes).
    fn capture_escapes(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-e", "-t", "t"])
    }

    /// Poll until the screen holds every one of `needles` and has stopped changing.
    fn wait(&self, needles: &[&str]) -> String {
        let start = Instant::now();
        let mut last = String::new();
        loop {
            let now = self.capture();
            if needles.iter().all(|n| now.contains(n)) && now == last {
                return now;
            }
            assert!(
                start.elapsed() < GIVE_UP,
                "gave up waiting for {needles:?}; the last screen:\n{now}"
            );
            last = now;
            sleep(Duration::from_millis(100));
        }
    }

    /// The program's exit status once it has ended (`None` while it runs): the shell
    /// that ran it writes it to a file.
    fn exit_status(&self) -> Option<i32> {
        let text = std::fs::read_to_string(self._dir.path().join("exit")).ok()?;
        text.trim().parse().ok()
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-S", &self.socket, "kill-server"])
            .output();
    }
}

/// The shipped binary cache.
fn example() -> String {
    repo()
        .join("examples/rocm-world-cache")
        .to_str()
        .unwrap()
        .to_string()
}

/// Store hashes (`/nix/store/<hash>`) as `#`s of the same width, and the progress
/// counter of the scan, for screens of a world built by Nix.
fn normalised(screen: &str) -> String {
    let mut out = String::new();
    for line in screen.lines() {
        let mut l = String::new();
        let mut rest = line;
        while let Some(i) = rest.find("/nix/store/") {
            l.push_str(&rest[..i + 11]);
            rest = &rest[i + 11..];
            let n = rest
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(rest.len());
            l.push_str(&"#".repeat(n));
            rest = &rest[n..];
        }
        l.push_str(rest);
        if let Some(i) = l
            .find("evidence ")
            .filter(|&i| l[i + 9..].starts_with(|c: char| c.is_ascii_digit()))
        {
            l.truncate(i);
            l = format!("{} evidence <n>/<total>", l.trim_end());
        }
        out.push_str(&l);
        out.push('\n');
    }
    out
}

fn snap(name: &str, (w, h): (u16, u16), screen: &str) {
    insta::assert_snapshot!(format!("{name}-{w}x{h}"), normalised(screen));
}

/// The row of `path` (by name) in `why --format json --all` of `input`.
fn why_row<'a>(why: &'a Value, name: &str) -> &'a Value {
    why["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"].as_str().unwrap().ends_with(name))
        .unwrap_or_else(|| panic!("{name} not in why's rows"))
}

/// The middle pane's rows of a screen: `label value` pairs in the order shown.
fn selected_value(screen: &str, label: &str) -> String {
    for line in screen.lines() {
        let Some(mid) = line.split('│').nth(3) else {
            continue;
        };
        if let Some(v) = mid.trim().strip_prefix(label) {
            return v.trim().to_string();
        }
    }
    panic!("no {label} in the selected pane:\n{screen}")
}

#[test]
fn panes_show_the_sizes_why_computes_and_the_evidence_refs_finds() {
    let why = json(&[
        "why",
        &example(),
        "--format",
        "json",
        "--all",
        "--no-evidence",
    ]);
    for size in SIZES {
        let Some(s) = Screen::open("browse panes", size, &[&example()], Colours::Colour256) else {
            return;
        };
        let screen = s.wait(&["evidence: all 11 paths", "verdict runtime"]);
        // The three panes, the evidence pane and the status line.
        for pane in [
            " referrers (0) ",
            " selected ",
            " references (4) ",
            " evidence: llama-cpp-rocm-0.0.0 → rocblas-5.7.1 ",
            "chain: llama-cpp-rocm-0.0.0",
        ] {
            assert!(screen.contains(pane), "{pane}:\n{screen}");
        }
        let root = why_row(&why, "llama-cpp-rocm-0.0.0");
        assert_eq!(
            selected_value(&screen, "NAR"),
            human(root["nar_size"].as_u64().unwrap())
        );
        assert_eq!(
            selected_value(&screen, "closure"),
            human(root["closure_size"].as_u64().unwrap())
        );
        assert_eq!(
            selected_value(&screen, "added"),
            human(root["added_size"].as_u64().unwrap())
        );
        // The references, ranked by added size as why ranks them.
        let rocblas = why_row(&why, "rocblas-5.7.1");
        let line = screen
            .lines()
            .find(|l| l.contains("rocblas-5.7.1 "))
            .unwrap();
        assert!(
            line.ends_with(&format!(
                "{}│",
                human(rocblas["added_size"].as_u64().unwrap())
            )),
            "{line}"
        );
        // The edge's evidence as `refs` gives it: file, offset, kind.
        assert!(
            screen.contains("bin/llama-server @1525 elf-needed"),
            "{screen}"
        );
        snap("start", size, &screen);
        // Descend into rocblas: its sizes as why has them, its verdict, its referrers.
        s.keys(&["Enter"]);
        let screen = s.wait(&[
            " referrers (3) ",
            "verdict   runtime",
            "chain: llama-cpp-rocm-0.0.0 → rocblas-5.7.1",
        ]);
        assert_eq!(
            selected_value(&screen, "closure"),
            human(rocblas["closure_size"].as_u64().unwrap())
        );
        assert_eq!(
            selected_value(&screen, "added"),
            human(rocblas["added_size"].as_u64().unwrap())
        );
        snap("rocblas", size, &screen);
    }
}

#[test]
fn keys_move_descend_go_back_and_switch_panes() {
    for size in SIZES {
        let Some(s) = Screen::open("browse keys", size, &[&example()], Colours::Colour256) else {
            return;
        };
        s.wait(&["evidence: all 11 paths"]);
        // j and Down move; the evidence pane follows the highlighted edge.
        s.keys(&["j"]);
        s.wait(&[" evidence: llama-cpp-rocm-0.0.0 → glibc-2.36 "]);
        s.keys(&["Down"]);
        s.wait(&[" evidence: llama-cpp-rocm-0.0.0 → hipblas-5.7.1 "]);
        s.keys(&["k"]);
        let screen = s.wait(&[" evidence: llama-cpp-rocm-0.0.0 → glibc-2.36 "]);
        snap("moved", size, &screen);
        s.keys(&["Up", "l"]);
        s.wait(&["chain: llama-cpp-rocm-0.0.0 → rocblas-5.7.1"]);
        // Tab: the referrers pane, its edges' evidence.
        s.keys(&["Tab", "j"]);
        let screen = s.wait(&[
            " evidence: hipblas-5.7.1 → rocblas-5.7.1 ",
            "verdict runtime",
        ]);
        snap("referrers", size, &screen);
        // Enter on a referrer goes there; Backspace, h and Left come back.
        s.keys(&["Enter"]);
        s.wait(&["chain: llama-cpp-rocm-0.0.0 → hipblas-5.7.1"]);
        s.keys(&["BSpace"]);
        s.wait(&[
            "chain: llama-cpp-rocm-0.0.0 → rocblas-5.7.1",
            " evidence: hipblas-5.7.1 → rocblas-5.7.1 ",
        ]);
        s.keys(&["Right"]);
        s.wait(&["chain: llama-cpp-rocm-0.0.0 → hipblas-5.7.1"]);
        s.keys(&["h", "Left"]);
        let screen = s.wait(&[" references (4) ", "verdict   (root)"]);
        s.keys(&["Left"]);
        let screen2 = s.wait(&["at the start: nothing to go back to"]);
        assert!(screen.contains(" referrers (0) "), "{screen}");
        snap("back-at-start", size, &screen2);
    }
}

#[test]
fn search_is_incremental_and_n_and_shift_n_step_through_the_matches() {
    // The paths whose name holds `rocblas-t`, counted from why's rows.
    let why = json(&[
        "why",
        &example(),
        "--format",
        "json",
        "--all",
        "--no-evidence",
    ]);
    let hits = why["paths"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["path"].as_str().unwrap().contains("-rocblas-t"))
        .count();
    assert!(hits > 2, "{why}");
    for size in SIZES {
        let Some(s) = Screen::open("browse search", size, &[&example()], Colours::Colour256) else {
            return;
        };
        s.wait(&["evidence: all 11 paths"]);
        s.keys(&["/"]);
        s.type_text("roc");
        // Each key shows the largest match so far.
        let screen = s.wait(&["/roc▏", "matches"]);
        assert!(screen.contains("rocblas-5.7.1"), "{screen}");
        s.type_text("blas-t");
        let screen = s.wait(&[&format!("/rocblas-t▏ {hits} matches")]);
        snap("search-typing", size, &screen);
        s.keys(&["Enter"]);
        s.wait(&[&format!("/rocblas-t: 1 of {hits}")]);
        s.keys(&["n"]);
        let screen = s.wait(&[&format!("/rocblas-t: 2 of {hits}")]);
        snap("search-n", size, &screen);
        s.keys(&["N", "N"]);
        let screen = s.wait(&[&format!("/rocblas-t: {hits} of {hits}")]);
        snap("search-shift-n", size, &screen);
        // Esc while typing goes back to where the search started.
        s.keys(&["/"]);
        s.type_text("glibc");
        s.wait(&["/glibc▏ 1 match"]);
        s.keys(&["Escape"]);
        s.wait(&[&format!("/rocblas-t: {hits} of {hits}")]);
    }
}

#[test]
fn w_g_and_s_show_why_gpu_and_split_of_the_selection() {
    for size in SIZES {
        let Some(s) = Screen::open("browse reports", size, &[&example()], Colours::Colour256)
        else {
            return;
        };
        s.wait(&["evidence: all 11 paths"]);
        s.keys(&["Enter", "w"]);
        let screen = s.wait(&[" why ROOT rocblas-5.7.1 ", "j k scroll"]);
        let screen = if screen.contains("computing…") {
            s.wait(&["1 chain"])
        } else {
            screen
        };
        // What `nixcut why ROOT TARGET` prints, at the screen's width.
        let (code, why, _) = common::run(&["why", &example(), "rocblas-5.7.1"]);
        assert_eq!(code, 0);
        let first = words(why.lines().next().unwrap());
        assert!(
            words(&overlay_text(&screen)).contains(&first),
            "{first}\n{screen}"
        );
        snap("why", size, &screen);
        s.keys(&["q", "g"]);
        let screen = s.wait(&[" gpu rocblas-5.7.1 ", "GPU code in rocblas-5.7.1"]);
        snap("gpu", size, &screen);
        s.keys(&["q", "s"]);
        let screen = s.wait(&[" split --for ROOT rocblas-5.7.1 ", "j k scroll"]);
        let screen = if screen.contains("computing…") {
            s.wait(&["rocblas"]);
            let start = Instant::now();
            loop {
                let now = s.wait(&["split"]);
                if !now.contains("computing…") || start.elapsed() > GIVE_UP {
                    break now;
                }
                sleep(Duration::from_millis(100));
            }
        } else {
            screen
        };
        let (code, split, _) = common::run(&["split", "rocblas-5.7.1", "--for", &example()]);
        assert_eq!(code, 0);
        let first = words(split.lines().next().unwrap());
        assert!(
            words(&overlay_text(&screen)).contains(&first),
            "{first}\n{screen}"
        );
        snap("split", size, &screen);
        // The report scrolls; q closes it and the panes are as they were.
        s.keys(&["j", "q"]);
        s.wait(&["chain: llama-cpp-rocm-0.0.0 → rocblas-5.7.1"]);
    }
}

/// The text inside the report's frame, its lines joined (the report wraps them).
fn overlay_text(screen: &str) -> String {
    screen
        .lines()
        .filter_map(|l| l.strip_prefix('│')?.strip_suffix('│'))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Words separated by single spaces.
fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// OTHER for `d`: the example's closure as `nix path-info --json` would have it before
/// a change — rocblas under another hash with a NAR 100,000 bytes smaller, no hipblas,
/// and an `old-extra-1.0` the root referred to.
fn other_closure(dir: &Path) -> PathBuf {
    let snapshot = dir.join("snap.json");
    let (code, _, err) = common::run(&["snapshot", &example(), "-o", snapshot.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let snap: Value = serde_json::from_str(&std::fs::read_to_string(&snapshot).unwrap()).unwrap();
    let rename = |p: &str| -> String {
        if p.ends_with("-rocblas-5.7.1") {
            p.replacen("/nix/store/", "/nix/store/0000000000", 1)
                .chars()
                .take(11 + 32)
                .collect::<String>()
                + "-rocblas-5.7.1"
        } else {
            p.to_string()
        }
    };
    let extra = "/nix/store/11111111111111111111111111111111-old-extra-1.0";
    let mut out = serde_json::Map::new();
    for p in snap["paths"].as_array().unwrap() {
        let path = p["path"].as_str().unwrap();
        if path.ends_with("-hipblas-5.7.1") {
            continue;
        }
        let mut refs: Vec<String> = p["references"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .filter(|r| !r.ends_with("-hipblas-5.7.1"))
            .map(rename)
            .collect();
        let mut nar = p["nar_size"].as_u64().unwrap();
        if path.ends_with("-rocblas-5.7.1") {
            nar -= 100_000;
        }
        if path.ends_with("-llama-cpp-rocm-0.0.0") {
            refs.push(extra.to_string());
        }
        refs.sort();
        out.insert(
            rename(path),
            serde_json::json!({"narSize": nar, "narHash": p["nar_hash"], "references": refs}),
        );
    }
    out.insert(
        extra.to_string(),
        serde_json::json!({"narSize": 4096, "narHash": "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "references": []}),
    );
    let file = dir.join("other.json");
    std::fs::write(&file, serde_json::to_string(&Value::Object(out)).unwrap()).unwrap();
    file
}

#[test]
fn d_marks_the_diff_against_other_with_and_without_colour() {
    let dir = tempfile::tempdir().unwrap();
    let other = other_closure(dir.path());
    for colours in [Colours::Colour256, Colours::Monochrome] {
        for size in SIZES {
            let Some(s) = Screen::open("browse diff", size, &[&example()], colours) else {
                return;
            };
            s.wait(&["evidence: all 11 paths"]);
            s.keys(&["d"]);
            s.type_text(other.to_str().unwrap());
            s.wait(&["diff against:"]);
            s.keys(&["Enter"]);
            // The diff as `nixcut diff OTHER ROOT` prints it, then the marks.
            let screen = s.wait(&["diff ", "1 removed, 1 rebuilt", "j k scroll"]);
            snap_diff("diff-report", size, colours, &screen, &other);
            s.keys(&["q"]);
            let screen = s.wait(&[
                "+ hipblas-5.7.1",
                "> rocblas-5.7.1",
                "- old-extra-1.0",
                "references (4, 1 gone)",
            ]);
            snap_diff("diff-marks", size, colours, &screen, &other);
            let esc = s.capture_escapes();
            let colour = sgr_colours(&esc);
            match colours {
                Colours::Colour256 => assert!(colour > 0, "no colour drawn:\n{esc}"),
                Colours::Monochrome => {
                    assert_eq!(colour, 0, "colour drawn under NO_COLOR:\n{esc}");
                    // The selection is still visible: reverse video.
                    assert!(esc.contains("\u{1b}[7m") || esc.contains(";7m"), "{esc}");
                }
            }
            s.keys(&["Enter"]);
            let screen = s.wait(&["> NAR +97.7 KiB"]);
            assert!(screen.contains("rocblas-5.7.1"), "{screen}");
        }
    }
}

fn snap_diff(name: &str, size: (u16, u16), colours: Colours, screen: &str, other: &Path) {
    // The temporary file's name varies from run to run.
    let screen = screen.replace(other.to_str().unwrap(), "OTHER");
    let o = other.file_name().unwrap().to_str().unwrap();
    let screen = screen.replace(o, "OTHER");
    let tag = match colours {
        Colours::Colour256 => "colour",
        Colours::Monochrome => "mono",
    };
    snap(&format!("{name}-{tag}"), size, &screen);
}

/// How many SGR parameters in `s` set a colour (30-37, 40-47, 90-97, 100-107, 38;…,
/// 48;…).
fn sgr_colours(s: &str) -> usize {
    let mut n = 0;
    for part in s.split("\u{1b}[").skip(1) {
        let Some(end) = part.find('m') else { continue };
        let params: Vec<&str> = part[..end].split(';').collect();
        let mut i = 0;
        while i < params.len() {
            match params[i].parse::<u32>().unwrap_or(0) {
                38 | 48 => {
                    n += 1;
                    break;
                }
                30..=37 | 40..=47 | 90..=97 | 100..=107 => n += 1,
                _ => {}
            }
            i += 1;
        }
    }
    n
}

#[test]
fn help_and_q_leave_the_terminal_as_it_was() {
    for size in SIZES {
        let Some(s) = Screen::open("browse help", size, &[&example()], Colours::Monochrome) else {
            return;
        };
        s.wait(&["evidence: all 11 paths"]);
        s.keys(&["?"]);
        let screen = s.wait(&["Numbers", "dominator subtree"]);
        snap("help", size, &screen);
        // The help scrolls to its keys.
        s.keys(&["PageDown", "j"]);
        let screen = s.wait(&["search by name", "q  quit"]);
        snap("help-keys", size, &screen);
        s.keys(&["q"]);
        s.wait(&["evidence: all 11 paths"]);
        s.keys(&["q"]);
        let start = Instant::now();
        let status = loop {
            if let Some(st) = s.exit_status() {
                break st;
            }
            assert!(
                start.elapsed() < GIVE_UP,
                "q did not end it:\n{}",
                s.capture()
            );
            sleep(Duration::from_millis(100));
        };
        assert_eq!(status, 0);
        // The alternate screen is gone: nothing of the UI is left on the terminal.
        let screen = s.capture();
        assert!(!screen.contains("nixcut browse"), "{screen}");
        assert!(!screen.contains("referrers"), "{screen}");
    }
}

#[test]
fn refuses_when_standard_output_is_no_terminal() {
    let (code, out, err) = common::run(&["browse", &example()]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("`nixcut browse` draws on a terminal") && err.contains("--dump-screen"),
        "{err}"
    );
    // The headless screen is the same frame the terminal shows.
    let (code, out, err) = common::run(&["browse", &example(), "--dump-screen", "80x24"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(" references (4) "), "{out}");
    for bad in ["80", "80x", "5x5", "80x24,"] {
        let (code, _, err) = common::run(&["browse", &example(), "--dump-screen", bad]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("--dump-screen"), "{bad}: {err}");
    }
}

#[test]
fn the_real_rocm_world_browses_to_rocblas_with_its_evidence() {
    let Some(w) = trixie_world("browse trixie", "") else {
        return;
    };
    let why = json(&["why", &w.root, "--format", "json", "--all", "--no-evidence"]);
    for size in SIZES {
        let Some(s) = Screen::open("browse trixie", size, &[&w.root], Colours::Colour256) else {
            return;
        };
        // Every referring path scanned: the screens that follow are the same each run.
        let screen = s.wait(&[" selected ", "verdict runtime", "evidence: all "]);
        let root = &why["paths"][0];
        assert_eq!(
            selected_value(&screen, "closure"),
            human(root["closure_size"].as_u64().unwrap())
        );
        assert_eq!(
            selected_value(&screen, "added"),
            human(root["added_size"].as_u64().unwrap())
        );
        snap("trixie-start", size, &screen);
        s.keys(&["/"]);
        s.type_text("rocblas");
        s.wait(&["/rocblas▏ 1 match"]);
        s.keys(&["Enter"]);
        let screen = s.wait(&["/rocblas: 1 of 1", "verdict   runtime"]);
        let row = why_row_containing(&why, "-rocblas-5");
        assert_eq!(
            selected_value(&screen, "added"),
            human(row["added_size"].as_u64().unwrap())
        );
        snap("trixie-rocblas", size, &screen);
        s.keys(&["w"]);
        let screen = wait_report(&s, "why ROOT");
        snap("trixie-why", size, &screen);
        s.keys(&["q", "g"]);
        let screen = wait_report(&s, "gpu");
        assert!(screen.contains("gfx1030"), "{screen}");
        snap("trixie-gpu", size, &screen);
        s.keys(&["q", "s"]);
        let screen = wait_report(&s, "split --for ROOT");
        snap("trixie-split", size, &screen);
    }
}

fn why_row_containing<'a>(why: &'a Value, part: &str) -> &'a Value {
    why["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"].as_str().unwrap().contains(part))
        .unwrap_or_else(|| panic!("{part} not in why's rows"))
}

/// Wait until the report titled `title` has been computed.
fn wait_report(s: &Screen, title: &str) -> String {
    let start = Instant::now();
    loop {
        let now = s.wait(&[title, "j k scroll"]);
        if !now.contains("computing…") {
            return now;
        }
        assert!(
            start.elapsed() < GIVE_UP,
            "report {title} never came:\n{now}"
        );
        sleep(Duration::from_millis(200));
    }
}
