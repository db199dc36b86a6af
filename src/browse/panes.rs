//! Drawing one frame: the title, the three panes (referrers | selected | references),
//! the evidence pane, the status line, and a report or prompt over them. Colour only
//! when allowed: without it the selection is reverse video and the diff's marks
//! (`+ > < ~ -`) say the same as its colours.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};
use ratatui::Frame;

use crate::render::format_delta;
use crate::store::format_size;

use super::model::Model;
use super::state::{Body, EdgeEvidence, Focus, Mark, Prompt, State};

/// What the status line says of the background scan.
pub struct Progress {
    pub scanned: usize,
    pub total: usize,
    pub pending_reports: usize,
}

/// Draw the whole screen.
pub fn draw(f: &mut Frame, state: &State, model: &Model, progress: &Progress) {
    let [title, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(4),
        Constraint::Length(1),
    ])
    .areas(f.area());
    let [top, detail] =
        Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(body);
    let [left, middle, right] = Layout::horizontal([
        Constraint::Percentage(27),
        Constraint::Percentage(33),
        Constraint::Percentage(40),
    ])
    .areas(top);
    let pal = Palette::new(state.color);
    title_line(f, title, state, model, &pal);
    list(f, left, state, model, Focus::Referrers, &pal);
    selected(f, middle, state, model, &pal);
    list(f, right, state, model, Focus::References, &pal);
    evidence(f, detail, state, model, &pal);
    status_line(f, status, state, progress, &pal);
    overlay(f, body, state, &pal);
}

/// The styles, with or without colour.
struct Palette {
    color: bool,
}

impl Palette {
    fn new(color: bool) -> Palette {
        Palette { color }
    }
    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }
    fn bold(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }
    fn cursor(&self, focused: bool) -> Style {
        if focused {
            Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::UNDERLINED)
        }
    }
    fn border(&self, focused: bool) -> Style {
        match (focused, self.color) {
            (true, true) => Style::default().fg(Color::Cyan),
            (true, false) => self.bold(),
            _ => Style::default(),
        }
    }
    fn mark(&self, m: Option<Mark>) -> (&'static str, Style) {
        match m {
            None => (" ", Style::default()),
            Some(Mark::Added) => ("+", self.fg(Color::Green)),
            Some(Mark::Grown(_)) => (">", self.fg(Color::Yellow)),
            Some(Mark::Shrunk(_)) => ("<", self.fg(Color::Cyan)),
            Some(Mark::Rebuilt) => ("~", self.fg(Color::Blue)),
        }
    }
    fn removed(&self) -> Style {
        self.fg(Color::Red)
    }
    fn dim(&self) -> Style {
        if self.color {
            Style::default().fg(Color::DarkGray)
        } else {
            Style::default()
        }
    }
}

/// `s` cut to `w` columns, with `…` when cut.
fn fit(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        return s.to_string();
    }
    if w == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(w - 1).collect();
    out.push('…');
    out
}

fn size(b: crate::store::Bytes) -> String {
    format_size(b.get())
}

fn title_line(f: &mut Frame, area: Rect, state: &State, model: &Model, pal: &Palette) {
    let n = model.path_count();
    let paths = if n == 1 {
        "1 path".into()
    } else {
        format!("{} paths", thousands(n))
    };
    let mut spans = vec![
        Span::styled(" nixcut browse ", pal.bold()),
        Span::raw(model.name(model.start)),
        Span::raw(format!(" · {paths} · {}", size(model.graph.total_size()))),
    ];
    if !model.sizes_known() {
        spans.push(Span::raw(" (some sizes unknown)"));
    }
    if let Some(d) = &state.diff {
        let r = &d.report;
        spans.push(Span::raw(format!(
            " · vs {}: +{} −{} ~{} {}",
            fit(crate::render::name_of(&d.other), 24),
            r.paths_added,
            r.paths_removed,
            r.paths_changed,
            format_delta(r.closure_size_delta)
        )));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// `1234567` → `1,234,567`.
fn thousands(n: usize) -> String {
    crate::render::thousands(n as u64)
}

/// The referrers or the references of the selected path, with each one's added size.
fn list(f: &mut Frame, area: Rect, state: &State, model: &Model, which: Focus, pal: &Palette) {
    let (items, cursor, name) = match which {
        Focus::References => (&state.references, state.cursors[0], "references"),
        Focus::Referrers => (&state.referrers, state.cursors[1], "referrers"),
    };
    let focused = state.focus == which;
    let removed = match (which, &state.diff) {
        (Focus::References, Some(d)) => d.removed_references(model, state.current),
        _ => Vec::new(),
    };
    let title = if removed.is_empty() {
        format!(" {name} ({}) ", thousands(items.len()))
    } else {
        format!(
            " {name} ({}, {} gone) ",
            thousands(items.len()),
            removed.len()
        )
    };
    let block = Block::bordered()
        .title(title)
        .border_style(pal.border(focused));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let (h, w) = (inner.height as usize, inner.width as usize);
    if h == 0 || w < 4 {
        return;
    }
    // A window of rows with the cursor on it.
    let offset = cursor.saturating_sub(h.saturating_sub(1));
    let mut lines: Vec<Line> = Vec::with_capacity(h);
    for (k, &node) in items.iter().enumerate().skip(offset).take(h) {
        let mark = state
            .diff
            .as_ref()
            .and_then(|d| d.marks.get(&node).copied());
        let (m, mstyle) = pal.mark(mark);
        let sz = size(model.added(node));
        let name_w = w.saturating_sub(sz.chars().count() + 3);
        let text = if name_w >= 6 {
            format!("{:<name_w$} {sz}", fit(&model.name(node), name_w))
        } else {
            fit(&model.name(node), w - 2)
        };
        let mut line = Line::from(vec![
            Span::styled(m, mstyle),
            Span::raw(" "),
            Span::styled(text, mstyle),
        ]);
        if k == cursor {
            line = line.style(pal.cursor(focused));
        }
        lines.push(line);
    }
    // What OTHER's path of this name referred to and this one no longer does.
    for r in removed.iter().take(h.saturating_sub(lines.len())) {
        let name = crate::render::name_of(r);
        lines.push(Line::from(vec![
            Span::styled("-", pal.removed()),
            Span::raw(" "),
            Span::styled(fit(name, w - 2), pal.removed()),
        ]));
    }
    if items.is_empty() && removed.is_empty() {
        lines.push(Line::styled("(none)", pal.dim()));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// The selected path: its sizes, verdict and dominator.
fn selected(f: &mut Frame, area: Rect, state: &State, model: &Model, pal: &Palette) {
    let node = state.current;
    let block = Block::bordered().title(" selected ");
    let inner = block.inner(area);
    f.render_widget(block, area);
    let w = inner.width as usize;
    let row = |k: &str, v: String| {
        Line::from(vec![
            Span::styled(format!("{k:<10}"), pal.dim()),
            Span::raw(v),
        ])
    };
    let mark = state
        .diff
        .as_ref()
        .and_then(|d| d.marks.get(&node).copied());
    let (m, mstyle) = pal.mark(mark);
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("{m} "), mstyle),
        Span::styled(fit(&model.name(node), w.saturating_sub(2)), pal.bold()),
    ])];
    lines.push(row("NAR", size(model.nar(node))));
    lines.push(row(
        "closure",
        model.closure_size(node).map_or("…".into(), size),
    ));
    lines.push(row("added", size(model.added(node))));
    lines.push(row("verdict", verdict(state, model, node)));
    if let Some(d) = model.dominator(node) {
        lines.push(row("dominator", fit(&model.name(d), w.saturating_sub(10))));
    }
    lines.push(row(
        "refs",
        format!(
            "{} out, {} in",
            state.references.len(),
            state.referrers.len()
        ),
    ));
    match mark {
        Some(Mark::Added) => lines.push(Line::styled("+ not in OTHER", mstyle)),
        Some(Mark::Grown(b)) => lines.push(Line::styled(
            format!("> NAR {}", format_delta(b as i64)),
            mstyle,
        )),
        Some(Mark::Shrunk(b)) => lines.push(Line::styled(
            format!("< NAR {}", format_delta(-(b as i64))),
            mstyle,
        )),
        Some(Mark::Rebuilt) => lines.push(Line::styled("~ rebuilt, same size", mstyle)),
        None => {}
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// The verdict of the reference the selected path was reached by.
fn verdict(state: &State, model: &Model, node: usize) -> String {
    if model.is_virtual(node) || node == model.start {
        return "(root)".into();
    }
    let Some(from) = state.arrived_from(model, node) else {
        return "(root)".into();
    };
    match state.edge_evidence(model, from, node) {
        EdgeEvidence::NoFiles => "no files".into(),
        EdgeEvidence::Pending => "scanning…".into(),
        EdgeEvidence::Failed(_) => "unreadable".into(),
        EdgeEvidence::Missing => "unknown".into(),
        EdgeEvidence::Found(e) => e.verdict.to_string(),
    }
}

/// The evidence of the highlighted edge, and the chain from the root.
fn evidence(f: &mut Frame, area: Rect, state: &State, model: &Model, pal: &Palette) {
    let title = match state.edge() {
        Some((a, b)) => format!(" evidence: {} → {} ", model.name(a), model.name(b)),
        None => " evidence ".into(),
    };
    let block = Block::bordered().title(title);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let w = inner.width as usize;
    let chain: Vec<String> = model
        .chain(state.current)
        .iter()
        .map(|&i| model.name(i))
        .collect();
    let mut lines = vec![Line::from(vec![
        Span::styled("chain: ", pal.dim()),
        Span::raw(if chain.is_empty() {
            "(not reached from the root)".into()
        } else {
            chain.join(" → ")
        }),
    ])];
    match state.edge() {
        None => lines.push(Line::raw("(no edge: the selected path has no references)")),
        Some((a, b)) => match state.edge_evidence(model, a, b) {
            EdgeEvidence::NoFiles => lines.push(Line::raw(
                "no files to scan: graph only (give --store-root or a binary cache)",
            )),
            EdgeEvidence::Pending => lines.push(Line::raw(format!("scanning {}…", model.name(a)))),
            EdgeEvidence::Failed(e) => lines.push(Line::raw(format!("cannot scan: {e}"))),
            EdgeEvidence::Missing => lines.push(Line::raw(
                "no entry: the reference was not found in its files",
            )),
            EdgeEvidence::Found(e) => {
                let kinds: Vec<String> = e.kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
                lines.push(Line::from(vec![
                    Span::styled("verdict ", pal.dim()),
                    Span::styled(e.verdict.to_string(), pal.bold()),
                    Span::raw(format!(
                        " ({}) · {} · {}",
                        e.rule,
                        hits(e.evidence_count),
                        kinds.join(", ")
                    )),
                ]));
                for item in &e.evidence {
                    let file = if item.file.is_empty() {
                        "(top)"
                    } else {
                        &item.file
                    };
                    let text = format!(
                        "{file} @{} {} {} → {}",
                        item.offset, item.kind, item.detail, item.verdict
                    );
                    lines.push(Line::raw(fit(&text, w)));
                }
                if e.omitted > 0 {
                    lines.push(Line::styled(
                        format!("… {} not listed", hits(e.omitted)),
                        pal.dim(),
                    ));
                }
            }
        },
    }
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

fn hits(n: u64) -> String {
    if n == 1 {
        "1 hit".into()
    } else {
        format!("{n} hits")
    }
}

fn status_line(f: &mut Frame, area: Rect, state: &State, p: &Progress, pal: &Palette) {
    let left = match (&state.prompt, &state.message) {
        (Some(Prompt::Search { query, .. }), _) => {
            let n = state.search.as_ref().map_or(0, |s| s.hits.len());
            format!("/{query}▏ {} (Enter keeps, Esc back)", matches(n))
        }
        (Some(Prompt::Diff { text }), _) => format!("diff against: {text}▏ (Enter, Esc)"),
        (None, Some(m)) => m.clone(),
        (None, None) => match &state.search {
            Some(s) if !s.hits.is_empty() => format!(
                "/{}: {} of {} (n N) · ? help",
                s.query,
                s.at + 1,
                s.hits.len()
            ),
            _ => "?:help q:quit /:search w:why g:gpu s:split d:diff".into(),
        },
    };
    let right = if !state.has_files {
        "graph only".to_string()
    } else if p.scanned >= p.total {
        format!("evidence: all {}", paths(p.total))
    } else {
        format!("evidence {}/{}", p.scanned, paths(p.total))
    };
    let right = if p.pending_reports > 0 {
        format!("computing… · {right}")
    } else {
        right
    };
    let w = area.width as usize;
    let lw = w.saturating_sub(right.chars().count() + 1);
    let text = format!("{:<lw$} {right}", fit(&left, lw));
    f.render_widget(Paragraph::new(Line::styled(text, pal.cursor(true))), area);
}

fn paths(n: usize) -> String {
    if n == 1 {
        "1 path".into()
    } else {
        format!("{} paths", thousands(n))
    }
}

fn matches(n: usize) -> String {
    if n == 1 {
        "1 match".into()
    } else {
        format!("{} matches", thousands(n))
    }
}

/// A report or the help over the panes.
fn overlay(f: &mut Frame, area: Rect, state: &State, pal: &Palette) {
    let Some(o) = &state.overlay else {
        return;
    };
    f.render_widget(Clear, area);
    let block = Block::bordered()
        .title(format!(" {} ", o.title))
        .title_bottom(" j k scroll · q close ")
        .border_style(pal.border(true));
    let text = match &o.body {
        Body::Pending => "computing… (scanning files; the panes stay usable after q)".to_string(),
        Body::Ready(t) => t.clone(),
        Body::Failed(e) => format!("error: {e}"),
    };
    let lines: Vec<Line> = text.lines().skip(o.scroll).map(Line::raw).collect();
    f.render_widget(Paragraph::new(lines).block(block), area);
}
