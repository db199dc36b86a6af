//! Step timings on standard error, for profiling large inputs: `NIXCUT_TIMINGS=1
//! nixcut why big.json --format json` prints one line per step (time since the first
//! step, time since the previous one, the CPU time of every thread since the previous
//! one (in the kernel's 10 ms ticks: a step's parallelism is its CPU time over its
//! time), the page faults since the previous one, the peak resident set so far, the
//! step's name; on a virtual machine a fault costs microseconds, and a step that
//! touches new memory pays for every 4 KiB of it). A [`Timings`] observer is made once
//! by the binary and passed down (in `LoadOptions` and the analyses' options) to the
//! code whose steps it times; there is no global switch. The default observer prints
//! nothing, and a step then costs one branch. Steps that run in parallel each print
//! when they end, so their times overlap.

use std::fmt;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The observer of a command's steps: off (the default, prints nothing) or on (one
/// line per step on standard error). Clones share one clock.
#[derive(Clone, Default)]
pub struct Timings {
    /// `None`: off. Else the first step's time, the previous step's, and the page
    /// faults then (`None` until the first step).
    clock: Option<Arc<Mutex<Option<Clock>>>>,
}

/// The times and fault count a step's line is measured from.
#[derive(Clone, Copy)]
struct Clock {
    first: Instant,
    last: Instant,
    faults: u64,
    cpu: f64,
}

impl Timings {
    /// An observer that prints nothing.
    pub fn off() -> Timings {
        Timings::default()
    }

    /// An observer that prints every step from now on, starting with `start`.
    pub fn on() -> Timings {
        let t = Timings {
            clock: Some(Arc::new(Mutex::new(None))),
        };
        t.step("start");
        t
    }

    /// Whether steps are printed.
    pub fn is_on(&self) -> bool {
        self.clock.is_some()
    }

    /// Mark the end of step `name`.
    pub fn step(&self, name: &str) {
        let Some(clock) = &self.clock else {
            return;
        };
        let now = Instant::now();
        let (faults, cpu) = process_counters();
        let mut clock = clock.lock().unwrap_or_else(|e| e.into_inner());
        let c = clock.get_or_insert(Clock {
            first: now,
            last: now,
            faults,
            cpu,
        });
        let line = format!(
            "nixcut: timing: {:>8.3} s {:>+9.3} s {:>6.2} s CPU {:>8} faults {:>6} MiB peak  {name}\n",
            (now - c.first).as_secs_f64(),
            (now - c.last).as_secs_f64(),
            (cpu - c.cpu).max(0.0),
            faults.saturating_sub(c.faults),
            peak_rss_kib() / 1024
        );
        (c.last, c.faults, c.cpu) = (now, faults, cpu);
        drop(clock);
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}

impl fmt::Debug for Timings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.is_on() {
            "Timings(on)"
        } else {
            "Timings(off)"
        })
    }
}

/// The process's minor page faults and CPU seconds (user and system, every thread)
/// so far: `/proc/self/stat` fields 10, 14 and 15, the times in ticks of 1/100 s (Linux's
/// `USER_HZ` on every architecture it runs on); 0 where they cannot be read.
fn process_counters() -> (u64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command name (field 2) is in parentheses and may contain blanks; field 3
    // comes first after it.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<u64> = after
        .split_whitespace()
        .take(13)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let field = |n: usize| fields.get(n - 3).copied().unwrap_or(0);
    (field(10), (field(14) + field(15)) as f64 / 100.0)
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

#[cfg(test)]
mod tests {
    use super::Timings;

    #[test]
    fn off_by_default_and_clones_share_the_switch() {
        assert!(!Timings::default().is_on());
        assert!(!Timings::off().clone().is_on());
        let on = Timings::on();
        assert!(on.clone().is_on());
        assert_eq!(format!("{on:?}"), "Timings(on)");
    }
}
