//! `nixcut browse ROOT`: the closure in a terminal, one path at a time — its
//! referrers, its sizes and verdict, its references ranked by added size, the evidence
//! of each edge and the chain from the root — with `why`, `gpu`, `split` and `diff` of
//! the selection a key away. The last layer: it draws what the analyses compute and
//! the renderers write, and computes nothing of its own beyond what is on screen.
//!
//! `model.rs` is the graph-level view (sizes, dominators, chains: ready before any file
//! is read); `worker.rs` gathers file evidence and the reports on other threads;
//! `state.rs` is what the screen shows, `keys.rs` what each key does, `panes.rs` how
//! it is drawn, `help.rs` the help screen; `app.rs` ties them into a session, which
//! `term.rs` runs on the terminal and `headless.rs` on a screen of text.

mod app;
mod error;
mod headless;
mod help;
mod keys;
mod model;
mod options;
mod panes;
mod state;
mod term;
mod worker;

pub use app::Session;
pub use error::BrowseError;
pub use headless::{parse_dump, DumpSpec};
pub use options::{BrowseOptions, Loader};

use std::io::Write;
use std::sync::Arc;

use crate::store::Closure;

/// Open a session on `closure`: the graph-level view (sizes, dominators, chains; no
/// file read) and the background worker started.
pub fn open(closure: Arc<Closure>, opts: &BrowseOptions) -> Result<Session, BrowseError> {
    Ok(Session(app::App::new(closure, opts)?))
}

/// Browse on the terminal (raw mode, alternate screen) until `q`.
pub fn run(session: &mut Session) -> Result<(), BrowseError> {
    Ok(term::run(&mut session.0)?)
}

/// Draw the session on a screen of `spec`'s size, apply its keys and write the last
/// frame as text.
pub fn dump_screen(
    session: &mut Session,
    spec: &DumpSpec,
    out: &mut dyn Write,
) -> Result<(), BrowseError> {
    Ok(headless::dump(&mut session.0, spec, out)?)
}
