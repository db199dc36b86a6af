//! Progress on stderr: scanning (paths and bytes) and the narinfo walk of an HTTP
//! cache, shown only on a terminal and only once the work takes more than a moment.

use std::io::{self, IsTerminal};

use super::config::Config;

/// Scanning progress on stderr: only when stderr is a terminal, and only once scanning
/// has taken more than a moment (short runs print nothing).
pub(super) struct Progress {
    bar: indicatif::ProgressBar,
    start: std::time::Instant,
    shown: std::sync::atomic::AtomicBool,
}

impl Progress {
    /// `len` 0 means the count is not known in advance (a spinner with a counter).
    pub(super) fn new(cfg: &Config, len: u64) -> Option<Progress> {
        if cfg.quiet || (len > 0 && len < 4) || !io::stderr().is_terminal() {
            return None;
        }
        let (bar, template) = if len == 0 {
            (
                indicatif::ProgressBar::hidden(),
                "scanning {spinner} {pos} paths {msg}",
            )
        } else {
            let bar = indicatif::ProgressBar::hidden();
            bar.set_length(len);
            (bar, "scanning {bar:30} {pos}/{len} paths {msg}")
        };
        bar.set_style(
            indicatif::ProgressStyle::with_template(template)
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(Progress {
            bar,
            start: std::time::Instant::now(),
            shown: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// One path scanned (`bytes` of files).
    pub(super) fn tick(&self, bytes: u64) {
        use std::sync::atomic::Ordering;
        self.bar.inc(1);
        self.bar.set_message(nixcut::store::format_size(bytes));
        if self.start.elapsed() > std::time::Duration::from_millis(300)
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar
                .set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
        }
    }

    pub(super) fn finish(self) {
        self.bar.finish_and_clear();
    }

    /// A bar for a walk whose length grows as it goes ("fetching narinfos").
    pub(super) fn walk(cfg: &Config, what: &str) -> Option<Progress> {
        let p = Progress::new(cfg, 0)?;
        let template = format!("{what} {{bar:30}} {{pos}}/{{len}}");
        p.bar.set_style(
            indicatif::ProgressStyle::with_template(&template)
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(p)
    }

    /// A counter of rows or bytes read, of unknown total (`what` says which).
    pub(super) fn counter(cfg: &Config, what: &str) -> Option<Progress> {
        let p = Progress::new(cfg, 0)?;
        let template = format!("{what} {{spinner}} {{pos}}");
        p.bar.set_style(
            indicatif::ProgressStyle::with_template(&template)
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        Some(p)
    }

    /// `done` so far, of an unknown total.
    pub(super) fn at(&self, done: u64) {
        self.bar.set_position(done);
        self.tick_shown();
    }

    /// `done` of `known` so far.
    pub(super) fn set(&self, done: u64, known: u64) {
        self.bar.set_length(known);
        self.bar.set_position(done);
        self.tick_shown();
    }

    /// Show the bar once the work has taken more than a moment.
    fn tick_shown(&self) {
        use std::sync::atomic::Ordering;
        if self.start.elapsed() > std::time::Duration::from_millis(300)
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar
                .set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
        }
    }

    /// Remove the bar.
    pub(super) fn clear(&self) {
        self.bar.finish_and_clear();
    }
}
