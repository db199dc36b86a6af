//! Step timings on standard error, for profiling large inputs: `NIXCUT_TIMINGS=1
//! nixcut why big.json --format json` prints one line per step (time since the first
//! step, time since the previous one, the page faults since the previous one, the
//! peak resident set so far, the step's name; on a virtual machine a fault costs microseconds, and a step that
//! touches new memory pays for every 4 KiB of it). Off unless the binary turns it
//! on; a step then costs one relaxed atomic load. Steps that run in parallel each
//! print when they end, so their times overlap.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

static ENABLED: AtomicBool = AtomicBool::new(false);
/// The first step's time, the previous step's, and the page faults then.
static CLOCK: Mutex<Option<(Instant, Instant, u64)>> = Mutex::new(None);

/// Print step timings from now on (the binary calls this for `NIXCUT_TIMINGS`).
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
    step("start");
}

/// Whether timings are printed.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Mark the end of step `name`.
pub fn step(name: &str) {
    if !enabled() {
        return;
    }
    let now = Instant::now();
    let faults = minor_faults();
    let mut clock = CLOCK.lock().unwrap_or_else(|e| e.into_inner());
    let (first, last, last_faults) = clock.get_or_insert((now, now, faults));
    let line = format!(
        "nixcut: timing: {:>8.3} s {:>+9.3} s {:>8} faults {:>6} MiB peak  {name}\n",
        (now - *first).as_secs_f64(),
        (now - *last).as_secs_f64(),
        faults.saturating_sub(*last_faults),
        peak_rss_kib() / 1024
    );
    (*last, *last_faults) = (now, faults);
    drop(clock);
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// The process's minor page faults so far (`/proc/self/stat`, field 10), 0 where that
/// cannot be read.
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command name (field 2) is in parentheses and may contain blanks.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    after
        .split_whitespace()
        .nth(7)
        .and_then(|f| f.parse().ok())
        .unwrap_or(0)
}

/// The process's peak resident set so far in KiB (`VmHWM` in `/proc/self/status`), 0
/// where that cannot be read.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
