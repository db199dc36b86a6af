//! One browsing session, whatever it draws on: the model, the screen's state and the
//! worker, and the three things a frame loop does with them — take in what the worker
//! sent, apply a key, draw. The terminal (`term.rs`) and the headless screens
//! (`headless.rs`) run the same session.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use crossterm::event::KeyEvent;
use ratatui::Frame;

use crate::analysis::AnalysisError;
use crate::store::Closure;

use super::keys;
use super::model::Model;
use super::options::BrowseOptions;
use super::panes::{self, Progress};
use super::state::{Body, DiffView, State};
use super::worker::{Done, Worker};

/// A browsing session, opened by `browse::open` (the binary drops it without freeing
/// at exit, as it does every large value).
pub struct Session(pub(super) App);

/// A browsing session's parts.
pub struct App {
    pub model: Model,
    pub state: State,
    worker: Worker,
    /// Paths whose evidence was asked for first already.
    preferred: HashSet<usize>,
    /// Referring paths whose evidence has arrived.
    scanned: usize,
}

impl App {
    /// The graph-level view of `closure` (no file read) and the worker started.
    pub fn new(closure: Arc<Closure>, opts: &BrowseOptions) -> Result<App, AnalysisError> {
        let timings = &opts.evidence.timings;
        let model = Model::new(closure, opts.root.as_deref(), timings)?;
        let worker = Worker::start(&model, opts);
        let state = State::new(&model, opts.color, worker.has_files());
        let mut app = App {
            model,
            state,
            worker,
            preferred: HashSet::new(),
            scanned: 0,
        };
        app.prepare();
        timings.step("the selected path's closure size");
        Ok(app)
    }

    /// Take in everything the worker has sent; whether anything came.
    pub fn absorb(&mut self) -> bool {
        let mut any = false;
        while let Ok(done) = self.worker.done.try_recv() {
            any = true;
            self.take(done);
        }
        any
    }

    /// Wait up to `timeout` for the worker's next result and take it in (with any
    /// others already sent); whether anything came.
    pub fn absorb_waiting(&mut self, timeout: Duration) -> bool {
        match self.worker.done.recv_timeout(timeout) {
            Ok(done) => {
                self.take(done);
                self.absorb();
                true
            }
            Err(_) => false,
        }
    }

    /// Reports asked for and not yet back.
    pub fn pending_reports(&self) -> usize {
        self.worker.pending
    }

    /// Whether the evidence the screen shows is in (or there are no files): the
    /// selected path's references, the highlighted edge's and the verdict's.
    pub fn settled(&self) -> bool {
        let (s, m) = (&self.state, &self.model);
        if !s.has_files {
            return true;
        }
        let mut need = Vec::new();
        if !m.graph.successors(s.current).is_empty() && !m.is_virtual(s.current) {
            need.push(s.current);
        }
        need.extend(s.edge().map(|(from, _)| from));
        need.extend(s.arrived_from(m, s.current));
        need.iter()
            .all(|n| m.is_virtual(*n) || s.evidence.contains_key(n))
    }

    fn take(&mut self, done: Done) {
        let s = &mut self.state;
        match done {
            Done::Evidence { node, refs } => {
                if !self.model.graph.successors(node).is_empty() && !s.evidence.contains_key(&node)
                {
                    self.scanned += 1;
                }
                s.evidence.insert(node, refs);
            }
            Done::Report { kind, node, text } => {
                self.worker.pending -= 1;
                if let Some(o) = &mut s.overlay {
                    if o.asked == Some((kind, node)) {
                        o.body = match text {
                            Ok(t) => Body::Ready(t),
                            Err(e) => Body::Failed(e),
                        };
                    }
                }
            }
            Done::Diff { other, result } => {
                self.worker.pending -= 1;
                let body = match result {
                    Ok(done) => {
                        let (report, other_closure, text) = *done;
                        s.message = Some(format!("diff against {other}: marks + > < ~ -"));
                        s.diff = Some(DiffView::new(&self.model, other, report, other_closure));
                        Body::Ready(text)
                    }
                    Err(e) => {
                        s.message = Some(format!("diff: {e}"));
                        Body::Failed(e)
                    }
                };
                if let Some(o) = &mut s.overlay {
                    if o.asked.is_none() && matches!(o.body, Body::Pending) {
                        o.body = body;
                    }
                }
            }
        }
    }

    /// Apply a key, then ready what the next frame shows.
    pub fn key(&mut self, key: KeyEvent, width: u16) {
        keys::key(
            &mut self.state,
            &mut self.model,
            &mut self.worker,
            key,
            width,
        );
        self.prepare();
    }

    /// Closure sizes of the paths the frame shows in full, and their evidence first.
    fn prepare(&mut self) {
        let s = &self.state;
        let (r, q) = s.highlighted();
        let shown: Vec<usize> = [Some(s.current), r, q].into_iter().flatten().collect();
        self.model.compute_closure_sizes(&shown);
        // The edges on screen: the selected path's own references, and the
        // referrers' references to it.
        let mut want = vec![s.current];
        want.extend(s.arrived_from(&self.model, s.current));
        want.extend(q);
        want.extend(s.referrers.iter().take(32).copied());
        want.retain(|n| !self.model.is_virtual(*n) && self.preferred.insert(*n));
        // The worker takes the newest first.
        want.reverse();
        self.worker.prefer(&want);
    }

    pub fn quit(&self) -> bool {
        self.state.quit
    }

    /// Draw the frame.
    pub fn draw(&self, f: &mut Frame) {
        let p = Progress {
            scanned: self.scanned,
            total: self.worker.total,
            pending_reports: self.worker.pending,
        };
        panes::draw(f, &self.state, &self.model, &p);
    }
}
