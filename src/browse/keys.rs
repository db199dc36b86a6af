//! What each key does (the help screen lists the same keys, `help.rs`): moving, going
//! in and back, searching, and asking the worker for a report. A key never waits for a
//! scan: a report opens at once as "computing…" and fills in when the worker answers.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::help;
use super::model::Model;
use super::state::{Body, Overlay, Prompt, Search, State};
use super::worker::{ReportKind, Worker};

/// Rows a page key moves.
const PAGE: isize = 10;

/// Apply `key`; `width` is the screen's, for the reports asked for.
pub fn key(state: &mut State, model: &mut Model, worker: &mut Worker, key: KeyEvent, width: u16) {
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        state.quit = true;
        return;
    }
    if state.prompt.is_some() {
        return prompt_key(state, model, worker, key, width);
    }
    if state.overlay.is_some() {
        return overlay_key(state, key);
    }
    state.message = None;
    match key.code {
        KeyCode::Char('q') => state.quit = true,
        KeyCode::Down | KeyCode::Char('j') => state.move_by(1),
        KeyCode::Up | KeyCode::Char('k') => state.move_by(-1),
        KeyCode::PageDown => state.move_by(PAGE),
        KeyCode::PageUp => state.move_by(-PAGE),
        KeyCode::Home => state.move_to_end(false),
        KeyCode::End => state.move_to_end(true),
        KeyCode::Tab | KeyCode::BackTab => state.toggle_focus(),
        KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => state.enter(model),
        KeyCode::Backspace | KeyCode::Left | KeyCode::Char('h') => go_back(state, model),
        KeyCode::Char('/') => {
            state.prompt = Some(Prompt::Search {
                query: String::new(),
                from: state.current,
                before: state.search.clone(),
            })
        }
        KeyCode::Char('n') => next_hit(state, model, 1),
        KeyCode::Char('N') => next_hit(state, model, -1),
        KeyCode::Char('w') => ask(state, model, worker, ReportKind::Why, width),
        KeyCode::Char('g') => ask(state, model, worker, ReportKind::Gpu, width),
        KeyCode::Char('s') => ask(state, model, worker, ReportKind::Split, width),
        KeyCode::Char('d') => {
            state.prompt = Some(Prompt::Diff {
                text: String::new(),
            })
        }
        KeyCode::Char('?') => {
            state.overlay = Some(Overlay {
                title: "help".into(),
                body: Body::Ready(help::text()),
                scroll: 0,
                asked: None,
            })
        }
        KeyCode::Esc => state.search = None,
        _ => {}
    }
}

fn go_back(state: &mut State, model: &Model) {
    if !state.back(model) {
        state.message = Some("at the start: nothing to go back to".into());
    }
}

fn next_hit(state: &mut State, model: &Model, step: isize) {
    match &state.search {
        Some(s) if !s.hits.is_empty() => {
            let at = s.at as isize + step;
            state.show_hit(model, at);
        }
        _ => state.message = Some("no search: press / and type a name".into()),
    }
}

/// Open `kind`'s report of the selected path (computing until the worker answers).
fn ask(state: &mut State, model: &Model, worker: &mut Worker, kind: ReportKind, width: u16) {
    let node = state.current;
    if model.is_virtual(node) {
        state.message = Some("select a path first (Enter on one of the roots)".into());
        return;
    }
    let what = match kind {
        ReportKind::Why => "why ROOT",
        ReportKind::Gpu => "gpu",
        ReportKind::Split => "split --for ROOT",
    };
    state.overlay = Some(Overlay {
        title: format!("{what} {}", model.name(node)),
        body: Body::Pending,
        scroll: 0,
        asked: Some((kind, node)),
    });
    worker.report(
        kind,
        node,
        model.path(node),
        width.saturating_sub(2).max(40),
    );
}

fn overlay_key(state: &mut State, key: KeyEvent) {
    let Some(o) = &mut state.overlay else {
        return;
    };
    let lines = match &o.body {
        Body::Ready(t) | Body::Failed(t) => t.lines().count(),
        Body::Pending => 0,
    };
    let scroll = |o: &mut Overlay, d: isize| {
        o.scroll = (o.scroll as isize + d).clamp(0, lines.saturating_sub(1) as isize) as usize;
    };
    match key.code {
        KeyCode::Char('q') | KeyCode::Esc | KeyCode::Char('?') | KeyCode::Backspace => {
            state.overlay = None
        }
        KeyCode::Down | KeyCode::Char('j') | KeyCode::Enter => scroll(o, 1),
        KeyCode::Up | KeyCode::Char('k') => scroll(o, -1),
        KeyCode::PageDown | KeyCode::Char(' ') => scroll(o, PAGE),
        KeyCode::PageUp => scroll(o, -PAGE),
        KeyCode::Home => o.scroll = 0,
        KeyCode::End => scroll(o, lines as isize),
        _ => {}
    }
}

fn prompt_key(
    state: &mut State,
    model: &mut Model,
    worker: &mut Worker,
    key: KeyEvent,
    width: u16,
) {
    match state.prompt.take() {
        Some(Prompt::Search {
            mut query,
            from,
            before,
        }) => {
            match key.code {
                KeyCode::Esc => {
                    // Back to where the search started, and to the search before.
                    if state.current != from {
                        state.back(model);
                    }
                    state.search = before;
                    return;
                }
                KeyCode::Enter => {
                    if state.search.as_ref().is_some_and(|s| s.hits.is_empty()) {
                        state.message = Some(format!("no path's name contains `{query}`"));
                    }
                    return;
                }
                KeyCode::Backspace => {
                    query.pop();
                }
                KeyCode::Char(c) => query.push(c),
                _ => {}
            }
            // Incremental: each key shows the largest path matching so far.
            if state.current != from {
                state.back(model);
            }
            let hits = model.search(&query);
            state.search = Some(Search {
                query: query.clone(),
                hits,
                at: 0,
            });
            state.show_hit(model, 0);
            state.prompt = Some(Prompt::Search {
                query,
                from,
                before,
            });
        }
        Some(Prompt::Diff { mut text }) => match key.code {
            KeyCode::Esc => {}
            KeyCode::Enter if !text.trim().is_empty() => {
                let other = text.trim().to_string();
                state.message = Some(format!("diff: loading {other}…"));
                state.overlay = Some(Overlay {
                    title: format!("diff {other} → this closure"),
                    body: Body::Pending,
                    scroll: 0,
                    asked: None,
                });
                worker.diff(other, width.saturating_sub(2).max(40));
            }
            KeyCode::Backspace => {
                text.pop();
                state.prompt = Some(Prompt::Diff { text });
            }
            KeyCode::Char(c) => {
                text.push(c);
                state.prompt = Some(Prompt::Diff { text });
            }
            _ => state.prompt = Some(Prompt::Diff { text }),
        },
        None => {}
    }
}
