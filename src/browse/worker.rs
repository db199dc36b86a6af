//! The work that reads files, off the drawing thread: the evidence of every reference
//! (what `nixcut refs PATH` reports, path by path: the selection first, then every path
//! by added size, largest first) and the reports the keys ask for (`why ROOT TARGET`,
//! `gpu`, `split --for ROOT`, `diff`), each on a thread of its own. Results arrive on one
//! channel as they are computed; the screen never waits for them.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crate::analysis::{self, DiffOptions, GpuOptions, RefsOptions, SplitOptions};
use crate::graph::ClosureGraph;
use crate::render::{self, Format, Style};
use crate::report::{DiffReport, RefsPath};
use crate::store::{Bytes, Closure};

use super::model::Model;
use super::options::BrowseOptions;

/// A report a key asks for, about one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportKind {
    /// `w`: `why ROOT TARGET`, every chain with its evidence.
    Why,
    /// `g`: `gpu` of the selection's closure.
    Gpu,
    /// `s`: `split SELECTION --for ROOT`.
    Split,
}

/// What the worker sends back.
pub enum Done {
    /// The evidence of one path's references (`refs PATH`), or why there is none.
    Evidence {
        node: usize,
        refs: Result<Arc<RefsPath>, String>,
    },
    /// A report, as the table `nixcut` prints (or its error).
    Report {
        kind: ReportKind,
        node: usize,
        text: Result<String, String>,
    },
    /// `d OTHER`: the diff of OTHER (old) against the closure browsed (new), and OTHER.
    Diff {
        other: String,
        result: Result<Box<(DiffReport, Arc<Closure>, String)>, String>,
    },
}

/// The background threads and the channel their results come on.
pub struct Worker {
    closure: Arc<Closure>,
    opts: BrowseOptions,
    root: Option<String>,
    /// The selection, to gather first (`None` when there are no files).
    priority: Option<Sender<usize>>,
    done_tx: Sender<Done>,
    pub done: Receiver<Done>,
    /// Paths whose references the sweep will scan.
    pub total: usize,
    /// Reports asked for and not yet back.
    pub pending: usize,
}

impl Worker {
    /// Start gathering evidence for `model` (when files are available).
    pub fn start(model: &Model, opts: &BrowseOptions) -> Worker {
        let (done_tx, done) = mpsc::channel();
        // The root `why`, `gpu` and `split` are given: the one browsing starts at.
        let root = (!model.is_virtual(model.start)).then(|| model.path(model.start));
        let mut w = Worker {
            closure: model.closure.clone(),
            opts: opts.clone(),
            root,
            priority: None,
            done_tx,
            done,
            total: 0,
            pending: 0,
        };
        if opts.evidence.enabled && opts.evidence.files.source().is_some() {
            let (tx, rx) = mpsc::channel();
            let graph = model.graph.clone();
            let added = model.added_sizes().to_vec();
            w.total = (0..graph.len())
                .filter(|&i| !graph.successors(i).is_empty())
                .count();
            let (closure, opts, done) = (w.closure.clone(), w.opts.clone(), w.done_tx.clone());
            thread::spawn(move || sweep(&closure, &graph, &added, &opts, &rx, &done));
            w.priority = Some(tx);
        }
        w
    }

    /// Whether file evidence is being gathered at all.
    pub fn has_files(&self) -> bool {
        self.priority.is_some()
    }

    /// Gather the evidence of `node` (and then of `more`) before any other.
    pub fn prefer(&self, nodes: &[usize]) {
        if let Some(tx) = &self.priority {
            for &n in nodes {
                let _ = tx.send(n);
            }
        }
    }

    /// Compute `kind` for `node` (its full store path `path`), rendered `width` wide.
    pub fn report(&mut self, kind: ReportKind, node: usize, path: String, width: u16) {
        self.spawn(move |closure, opts, root| {
            let text = report(&closure, &opts, root, kind, &path, width);
            Done::Report { kind, node, text }
        });
    }

    /// Run `job` on a thread of its own with the closure browsed, the options and ROOT;
    /// what it returns is sent back as done.
    fn spawn(
        &mut self,
        job: impl FnOnce(Arc<Closure>, BrowseOptions, Option<String>) -> Done + Send + 'static,
    ) {
        self.pending += 1;
        let (closure, opts, root, done) = (
            self.closure.clone(),
            self.opts.clone(),
            self.root.clone(),
            self.done_tx.clone(),
        );
        thread::spawn(move || {
            let _ = done.send(job(closure, opts, root));
        });
    }

    /// Load OTHER and diff it against the closure browsed.
    pub fn diff(&mut self, other: String, width: u16) {
        self.spawn(move |closure, opts, root| {
            let result = (opts.load_other)(&other).and_then(|old| {
                let d = analysis::diff(
                    &old,
                    &closure,
                    &DiffOptions {
                        root,
                        ..Default::default()
                    },
                )
                .map_err(|e| e.to_string())?;
                let text = rendered(&d, width)?;
                Ok(Box::new((d, Arc::new(old), text)))
            });
            Done::Diff { other, result }
        });
    }
}

/// The report `kind` of `path`, as `nixcut` prints its table.
fn report(
    c: &Closure,
    opts: &BrowseOptions,
    root: Option<String>,
    kind: ReportKind,
    path: &str,
    width: u16,
) -> Result<String, String> {
    let ev = &opts.evidence;
    let e = |e: analysis::AnalysisError| e.to_string();
    match kind {
        ReportKind::Why => {
            let r = analysis::why_chains_capped(
                c,
                root.as_deref(),
                path,
                ev,
                None,
                Some(opts.max_chains),
            )
            .map_err(e)?;
            rendered(&r, width)
        }
        ReportKind::Gpu => {
            let r = analysis::gpu(
                c,
                &GpuOptions {
                    root: Some(path.to_string()),
                    gpu_targets: Vec::new(),
                    files: ev.files.clone(),
                    cache: ev.cache.clone(),
                    rules: ev.rules.clone(),
                },
                None,
            )
            .map_err(e)?;
            rendered(&r, width)
        }
        ReportKind::Split => {
            let r = analysis::split(
                c,
                &SplitOptions {
                    package: path.to_string(),
                    for_root: true,
                    root,
                    files: ev.files.clone(),
                    cache: ev.cache.clone(),
                    rules: ev.rules.clone(),
                    ..Default::default()
                },
                None,
            )
            .map_err(e)?;
            rendered(&r, width)
        }
    }
}

/// A report as the table `nixcut` prints, `width` wide, without colour.
fn rendered<'a>(r: impl Into<render::Report<'a>>, width: u16) -> Result<String, String> {
    let mut out = Vec::new();
    let style = Style {
        width: Some(width),
        color: false,
        ..Default::default()
    };
    render::render(r, Format::Table, &style, &mut out).map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Gather every referring path's evidence, largest added size first, the paths sent on
/// `priority` before any other; ends when the screen is gone.
fn sweep(
    c: &Closure,
    g: &ClosureGraph,
    added: &[Bytes],
    opts: &BrowseOptions,
    priority: &Receiver<usize>,
    done: &Sender<Done>,
) {
    let order = Model::sweep_order(g, added);
    let mut next = order.iter();
    let mut seen: HashSet<usize> = HashSet::new();
    let mut wanted: Vec<usize> = Vec::new();
    let base = RefsOptions {
        files: opts.evidence.files.clone(),
        cache: opts.evidence.cache.clone(),
        rules: opts.evidence.rules.clone(),
        ..Default::default()
    };
    loop {
        // The selection first: everything asked for since the last scan.
        loop {
            match priority.try_recv() {
                Ok(n) => wanted.push(n),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => return,
            }
        }
        let batch: Vec<usize> = if !wanted.is_empty() {
            // The newest selection first.
            let mut b: Vec<usize> = wanted.drain(..).rev().collect();
            b.retain(|n| *n < g.len() && !seen.contains(n));
            b.dedup();
            b
        } else {
            // Then the rest, a few at a time (scanned on every core).
            next.by_ref()
                .filter(|n| !seen.contains(n))
                .take(8)
                .copied()
                .collect()
        };
        if batch.is_empty() {
            if next.len() > 0 {
                continue;
            }
            // Everything is gathered: wait for the screen to go.
            match priority.recv_timeout(Duration::from_secs(3600)) {
                Ok(_) | Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        seen.extend(batch.iter().copied());
        let opts = RefsOptions {
            paths: batch
                .iter()
                .map(|&n| c.store_dir.display(&g.paths[n]))
                .collect(),
            ..base.clone()
        };
        match analysis::refs(c, &opts, None) {
            Ok(r) => {
                let node_of: HashMap<&str, usize> = opts
                    .paths
                    .iter()
                    .map(String::as_str)
                    .zip(batch.iter().copied())
                    .collect();
                for p in r.paths {
                    let Some(&node) = node_of.get(p.path.as_str()) else {
                        continue;
                    };
                    let refs = Ok(Arc::new(p));
                    if done.send(Done::Evidence { node, refs }).is_err() {
                        return;
                    }
                }
            }
            Err(e) => {
                for &node in &batch {
                    let refs = Err(e.to_string());
                    if done.send(Done::Evidence { node, refs }).is_err() {
                        return;
                    }
                }
            }
        }
    }
}
