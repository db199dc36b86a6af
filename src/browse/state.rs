//! What the screen shows and where the cursor is: the selected path and its two lists
//! (referrers, references), which pane has the focus, the way back, the search, the
//! report or prompt open over the panes, the evidence gathered so far and the diff
//! against OTHER. Pure state: the keys (`keys.rs`) change it, the panes (`panes.rs`)
//! draw it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::render::name_of;
use crate::report::{DiffReport, PathChange, RefEntry, RefsPath};
use crate::store::Closure;

use super::model::Model;
use super::worker::ReportKind;

/// The pane the cursor keys move in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    References,
    Referrers,
}

/// A report's text over the panes.
pub enum Body {
    /// Asked for, being computed.
    Pending,
    Ready(String),
    Failed(String),
}

/// A report (or the help) drawn over the panes, scrolled by the cursor keys.
pub struct Overlay {
    pub title: String,
    pub body: Body,
    pub scroll: usize,
    /// Which report of which path, to match the worker's answer.
    pub asked: Option<(ReportKind, usize)>,
}

/// A line being typed at the bottom of the screen.
pub enum Prompt {
    /// `/`: the name searched for, where the search started and the search before it
    /// (Esc goes back to both).
    Search {
        query: String,
        from: usize,
        before: Option<Search>,
    },
    /// `d`: OTHER to diff against.
    Diff { text: String },
}

/// The paths whose name matched the last search, and the one shown.
#[derive(Debug, Clone)]
pub struct Search {
    pub query: String,
    pub hits: Vec<usize>,
    pub at: usize,
}

/// How a path of the closure browsed differs from OTHER.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Not in OTHER (no path of its name).
    Added,
    /// Rebuilt, NAR size larger by this much.
    Grown(u64),
    /// Rebuilt, NAR size smaller by this much.
    Shrunk(u64),
    /// Rebuilt, same NAR size.
    Rebuilt,
}

/// The diff against OTHER (`d`): each path's mark, and OTHER itself, whose references
/// name what the closure browsed no longer has.
pub struct DiffView {
    pub other: String,
    pub report: DiffReport,
    pub marks: HashMap<usize, Mark>,
    other_closure: Arc<Closure>,
    /// OTHER's paths by name (without hash).
    other_by_name: HashMap<String, String>,
}

impl DiffView {
    /// The marks of `report` (OTHER old, the closure browsed new) on `model`'s nodes.
    pub fn new(
        model: &Model,
        other: String,
        report: DiffReport,
        other_closure: Arc<Closure>,
    ) -> DiffView {
        let mut marks = HashMap::new();
        for p in report.packages.iter().flat_map(|p| &p.paths) {
            let Some(node) = p.new_path.as_deref().and_then(|n| model.node_of(n)) else {
                continue;
            };
            let mark = match (p.change, p.old_nar_size, p.new_nar_size) {
                (PathChange::Added, ..) => Mark::Added,
                (PathChange::Changed, Some(o), Some(n)) if n > o => Mark::Grown(n - o),
                (PathChange::Changed, Some(o), Some(n)) if n < o => Mark::Shrunk(o - n),
                (PathChange::Changed, ..) => Mark::Rebuilt,
                (PathChange::Removed, ..) => continue,
            };
            marks.insert(node, mark);
        }
        let sd = &other_closure.store_dir;
        let other_by_name = other_closure
            .paths
            .keys()
            .map(|p| {
                let full = sd.display(p);
                (name_of(&full).to_string(), full)
            })
            .collect();
        DiffView {
            other,
            report,
            marks,
            other_closure,
            other_by_name,
        }
    }

    /// What OTHER's path of the same name as `node` referred to that `node` no longer
    /// refers to (by name), as full paths of OTHER.
    pub fn removed_references(&self, model: &Model, node: usize) -> Vec<String> {
        let Some(old) = self.other_by_name.get(&model.name(node)) else {
            return Vec::new();
        };
        let c = &self.other_closure;
        let Some(info) = c
            .store_dir
            .parse_path(old)
            .ok()
            .and_then(|p| c.paths.get(&p))
        else {
            return Vec::new();
        };
        let now: HashSet<String> = model
            .references(node)
            .into_iter()
            .map(|r| model.name(r))
            .collect();
        let mut gone: Vec<String> = info
            .references
            .iter()
            .filter(|r| **r != info.path)
            .map(|r| c.store_dir.display(r))
            .filter(|r| !now.contains(name_of(r)))
            .collect();
        gone.sort();
        gone
    }
}

/// Where the screen was before a step forward, to come back to.
struct Place {
    node: usize,
    focus: Focus,
    cursors: [usize; 2],
}

/// What an edge's evidence is, as far as the worker has got.
pub enum EdgeEvidence<'a> {
    /// No files to scan: graph-level only.
    NoFiles,
    /// Not scanned yet.
    Pending,
    /// The referrer could not be scanned.
    Failed(&'a str),
    /// The scan found this (the reference's entry of `refs REFERRER`).
    Found(&'a RefEntry),
    /// Scanned, and the reference is not among its entries.
    Missing,
}

/// Everything the screen shows.
pub struct State {
    pub current: usize,
    pub references: Vec<usize>,
    pub referrers: Vec<usize>,
    pub focus: Focus,
    /// Cursor in the references and in the referrers.
    pub cursors: [usize; 2],
    history: Vec<Place>,
    pub overlay: Option<Overlay>,
    pub prompt: Option<Prompt>,
    pub search: Option<Search>,
    /// `refs PATH` of each path scanned so far.
    pub evidence: HashMap<usize, Result<Arc<RefsPath>, String>>,
    /// Whether files are being scanned at all.
    pub has_files: bool,
    pub diff: Option<DiffView>,
    /// One line for the status bar (an error, a search without hits).
    pub message: Option<String>,
    pub quit: bool,
    pub color: bool,
}

impl State {
    pub fn new(model: &Model, color: bool, has_files: bool) -> State {
        let mut s = State {
            current: model.start,
            references: Vec::new(),
            referrers: Vec::new(),
            focus: Focus::References,
            cursors: [0, 0],
            history: Vec::new(),
            overlay: None,
            prompt: None,
            search: None,
            evidence: HashMap::new(),
            has_files,
            diff: None,
            message: None,
            quit: false,
            color,
        };
        s.show(model, model.start);
        s
    }

    fn show(&mut self, model: &Model, node: usize) {
        self.current = node;
        self.references = model.references(node);
        self.referrers = model.referrers(node);
        self.cursors = [0, 0];
        self.focus = if self.references.is_empty() && !self.referrers.is_empty() {
            Focus::Referrers
        } else {
            Focus::References
        };
    }

    fn pane(&self) -> usize {
        match self.focus {
            Focus::References => 0,
            Focus::Referrers => 1,
        }
    }

    /// The list the focus is on.
    pub fn list(&self) -> &[usize] {
        match self.focus {
            Focus::References => &self.references,
            Focus::Referrers => &self.referrers,
        }
    }

    /// The path under the cursor of the focused pane.
    pub fn selected(&self) -> Option<usize> {
        self.list().get(self.cursors[self.pane()]).copied()
    }

    /// The highlighted reference and referrer (each pane keeps its cursor).
    pub fn highlighted(&self) -> (Option<usize>, Option<usize>) {
        (
            self.references.get(self.cursors[0]).copied(),
            self.referrers.get(self.cursors[1]).copied(),
        )
    }

    /// The edge under the cursor: current → reference, or referrer → current.
    pub fn edge(&self) -> Option<(usize, usize)> {
        let s = self.selected()?;
        Some(match self.focus {
            Focus::References => (self.current, s),
            Focus::Referrers => (s, self.current),
        })
    }

    /// Move the cursor of the focused pane by `delta` rows (clamped).
    pub fn move_by(&mut self, delta: isize) {
        let len = self.list().len();
        let k = self.pane();
        if len == 0 {
            return;
        }
        let at = self.cursors[k] as isize + delta;
        self.cursors[k] = at.clamp(0, len as isize - 1) as usize;
    }

    /// Move to the first (`false`) or last (`true`) row.
    pub fn move_to_end(&mut self, last: bool) {
        let len = self.list().len();
        let k = self.pane();
        self.cursors[k] = if last { len.saturating_sub(1) } else { 0 };
    }

    /// Switch the focus between referrers and references.
    pub fn toggle_focus(&mut self) {
        self.focus = match self.focus {
            Focus::References => Focus::Referrers,
            Focus::Referrers => Focus::References,
        };
    }

    /// Make `node` the selected path, remembering where we were.
    pub fn go(&mut self, model: &Model, node: usize) {
        if node == self.current {
            return;
        }
        self.history.push(Place {
            node: self.current,
            focus: self.focus,
            cursors: self.cursors,
        });
        self.show(model, node);
    }

    /// Descend into the path under the cursor.
    pub fn enter(&mut self, model: &Model) {
        if let Some(s) = self.selected() {
            self.go(model, s);
        }
    }

    /// Go back to where the last step came from; false when there is none.
    pub fn back(&mut self, model: &Model) -> bool {
        let Some(p) = self.history.pop() else {
            return false;
        };
        self.show(model, p.node);
        self.focus = p.focus;
        self.cursors = p.cursors;
        true
    }

    /// The evidence of `from → to`, as far as gathered.
    pub fn edge_evidence(&self, model: &Model, from: usize, to: usize) -> EdgeEvidence<'_> {
        if !self.has_files {
            return EdgeEvidence::NoFiles;
        }
        match self.evidence.get(&from) {
            None => EdgeEvidence::Pending,
            Some(Err(e)) => EdgeEvidence::Failed(e),
            Some(Ok(r)) => {
                let target = model.path(to);
                match r.references.iter().find(|e| e.path == target) {
                    Some(e) => EdgeEvidence::Found(e),
                    None => EdgeEvidence::Missing,
                }
            }
        }
    }

    /// The reference into `node` that the screen judges it by: from the path before it
    /// on the way here when that refers to it, else from the one before it on a
    /// shortest chain from the root.
    pub fn arrived_from(&self, model: &Model, node: usize) -> Option<usize> {
        let back = self.history.last().map(|p| p.node);
        let refs = model.referrers(node);
        match back {
            Some(b) if refs.contains(&b) => Some(b),
            _ => {
                let chain = model.chain(node);
                (chain.len() >= 2)
                    .then(|| chain[chain.len() - 2])
                    .filter(|p| !model.is_virtual(*p))
            }
        }
    }

    /// Show the hit of the current search numbered `at` (wrapping).
    pub fn show_hit(&mut self, model: &Model, at: isize) {
        let Some(s) = &mut self.search else {
            return;
        };
        if s.hits.is_empty() {
            return;
        }
        let n = s.hits.len() as isize;
        s.at = at.rem_euclid(n) as usize;
        let node = s.hits[s.at];
        self.go(model, node);
    }
}
