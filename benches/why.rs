//! Benchmark of `nixcut why` (run with `cargo bench --bench why`).
//!
//! Generates closures in the `nix path-info --json` object shape with about eight
//! references per path (a layered graph: most references point at older, more basic
//! packages, like real closures do), then in one run:
//! 1. `nixcut why FILE` (table) and `nixcut why FILE --format json` end to end on
//!    100,000 paths: median wall time of three runs and peak memory (from
//!    `/usr/bin/time` when installed, else by polling `/proc`);
//! 2. the same on 12,000 paths;
//! 3. a brute force on those 12,000 paths: for every path, one walk of the graph
//!    without it (what nix-tree does), timed in-process.
//!
//! Results are printed as Markdown rows for BENCHMARKS.md. Set `NIXCUT_BENCH_DIR` to
//! keep the generated inputs.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::process::{Command, Stdio};
use std::time::Instant;

const ALPHABET: &[u8] = b"0123456789abcdfghijklmnpqrsvwxyz";

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn hash(i: usize) -> String {
    let mut x = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xdead_beef;
    (0..32)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ALPHABET[(x >> 59) as usize] as char
        })
        .collect()
}

/// Paths are created in build order: path i references ~8 earlier paths, biased
/// towards low indices (basic libraries) and recent neighbours (its own family).
fn generate(n: usize, seed: u64) -> (Vec<u64>, Vec<Vec<usize>>) {
    let mut rng = Rng(seed);
    let mut sizes = Vec::with_capacity(n);
    let mut refs = Vec::with_capacity(n);
    for i in 0..n {
        let magnitude = 10 + rng.below(14);
        sizes.push(1024 + rng.below(1 << magnitude));
        let mut r = Vec::new();
        if i > 0 {
            let k = 4 + rng.below(9) as usize; // 4..12, mean 8
            for _ in 0..k {
                let j = match rng.below(3) {
                    0 => rng.below(64.min(i as u64)) as usize, // basics
                    1 => i - 1 - rng.below(200.min(i as u64)) as usize, // family
                    _ => rng.below(i as u64) as usize,         // anything older
                };
                r.push(j);
            }
            r.sort_unstable();
            r.dedup();
        }
        refs.push(r);
    }
    (sizes, refs)
}

fn write_json(path: &std::path::Path, sizes: &[u64], refs: &[Vec<usize>]) {
    let n = sizes.len();
    let full = |i: usize| format!("/nix/store/{}-pkg{i}-1.0", hash(i));
    // The root references every path nothing else references, so there is one root.
    let mut referenced = vec![false; n];
    for r in refs {
        for &j in r {
            referenced[j] = true;
        }
    }
    let mut s = String::with_capacity(n * 400);
    s.push('{');
    for i in 0..n {
        let mut rr: Vec<String> = refs[i].iter().map(|&j| full(j)).collect();
        if i == n - 1 {
            rr.extend((0..n - 1).filter(|&j| !referenced[j]).map(full));
        }
        rr.sort();
        let list = rr
            .iter()
            .map(|r| format!("\"{r}\""))
            .collect::<Vec<_>>()
            .join(",");
        if i > 0 {
            s.push(',');
        }
        let _ = write!(
            s,
            "\"{}\":{{\"narHash\":\"sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\",\"narSize\":{},\"references\":[{}],\"registrationTime\":1700000000,\"ultimate\":false,\"signatures\":[]}}",
            full(i),
            sizes[i],
            list
        );
    }
    s.push('}');
    std::fs::write(path, s).expect("write benchmark input");
}

/// Median wall seconds (of three runs) and peak RSS in MiB of `nixcut why FILE ARGS`.
fn run_nixcut(file: &std::path::Path, args: &[&str]) -> (f64, f64) {
    let mut runs: Vec<(f64, f64)> = (0..3).map(|_| run_once(file, args)).collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    runs[1]
}

/// Wall seconds and peak RSS in MiB of one `nixcut why FILE ARGS`.
fn run_once(file: &std::path::Path, args: &[&str]) -> (f64, f64) {
    let exe = env!("CARGO_BIN_EXE_nixcut");
    let time = std::path::Path::new("/usr/bin/time");
    let start = Instant::now();
    if time.exists() {
        let out = Command::new(time)
            .args(["-f", "%M"])
            .arg(exe)
            .arg("why")
            .arg(file)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .expect("run nixcut");
        let secs = start.elapsed().as_secs_f64();
        assert!(
            out.status.success(),
            "nixcut failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let kib: f64 = String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or(f64::NAN);
        return (secs, kib / 1024.0);
    }
    let mut child = Command::new(exe)
        .arg("why")
        .arg(file)
        .args(args)
        .stdout(Stdio::null())
        .spawn()
        .expect("run nixcut");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0f64;
    loop {
        if let Ok(s) = std::fs::read_to_string(&status_file) {
            for l in s.lines() {
                if let Some(v) = l.strip_prefix("VmHWM:") {
                    let kib: f64 = v
                        .trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse()
                        .unwrap_or(0.0);
                    peak_kib = peak_kib.max(kib);
                }
            }
        }
        if let Some(st) = child.try_wait().expect("wait") {
            assert!(st.success());
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    (start.elapsed().as_secs_f64(), peak_kib / 1024.0)
}

/// Added size of every path by its definition: drop it, walk from the root again.
fn brute_force_added(sizes: &[u64], refs: &[Vec<usize>], root: usize) -> Vec<u64> {
    let walk = |skip: usize| -> u64 {
        let mut seen = vec![false; sizes.len()];
        let mut stack = vec![root];
        let mut total = 0;
        while let Some(v) = stack.pop() {
            if v == skip || seen[v] {
                continue;
            }
            seen[v] = true;
            total += sizes[v];
            stack.extend(refs[v].iter().copied());
        }
        total
    };
    let all = walk(usize::MAX);
    (0..sizes.len()).map(|v| all - walk(v)).collect()
}

fn main() {
    // NIXCUT_BENCH_DIR keeps the generated inputs (for profiling); else a temp dir.
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir_path = std::env::var_os("NIXCUT_BENCH_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&dir_path).expect("bench dir");
    println!("| closure | tool | wall time | peak memory |");
    println!("|---|---|--:|--:|");
    for (n, seed) in [(100_000usize, 7u64), (12_000, 11)] {
        let (sizes, mut refs) = generate(n, seed);
        // Add the single root that references all unreferenced paths.
        let mut referenced: HashSet<usize> = HashSet::new();
        refs.iter().flatten().for_each(|&j| {
            referenced.insert(j);
        });
        let file = dir_path.join(format!("closure-{n}.json"));
        write_json(&file, &sizes, &refs);
        let edges: usize = refs.iter().map(Vec::len).sum();
        for (label, args) in [
            ("nixcut why (table, top 25; end to end)", &[][..]),
            (
                "nixcut why --format json (every path with its chain; end to end)",
                &["--format", "json"][..],
            ),
        ] {
            let (secs, mib) = run_nixcut(&file, args);
            println!(
                "| {n} paths, {:.1} refs/path | {label} | {secs:.3} s | {mib:.0} MiB |",
                edges as f64 / n as f64
            );
        }
        if n == 12_000 {
            let last = n - 1;
            refs[last].extend((0..last).filter(|j| !referenced.contains(j)));
            let start = Instant::now();
            let added = brute_force_added(&sizes, &refs, last);
            let secs = start.elapsed().as_secs_f64();
            println!(
                "| {n} paths | brute force, one walk per path (in-process, no I/O) | {secs:.3} s | – |"
            );
            std::hint::black_box(added);
        }
    }
}
