//! The real terminal: raw mode and the alternate screen while browsing, restored on
//! every way out (quit, error, panic), and the frame loop that draws, reads keys and
//! takes in the worker's results without ever waiting on them.

use std::io::{self, Stdout};
use std::time::Duration;

use crossterm::event::{self, Event, KeyEventKind};
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use crossterm::{cursor, execute};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use super::app::App;

/// How long the loop waits for a key before looking at the worker again.
const TICK: Duration = Duration::from_millis(50);

/// Puts the terminal back as it was: on drop, and from the panic hook.
struct Restore;

fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(io::stdout(), LeaveAlternateScreen, cursor::Show);
}

impl Drop for Restore {
    fn drop(&mut self) {
        restore();
    }
}

/// Browse on the terminal until `q`.
pub fn run(app: &mut App) -> io::Result<()> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
    enable_raw_mode()?;
    let _restore = Restore;
    execute!(io::stdout(), EnterAlternateScreen, cursor::Hide)?;
    let mut term: Terminal<CrosstermBackend<Stdout>> =
        Terminal::new(CrosstermBackend::new(io::stdout()))?;
    term.clear()?;
    loop {
        app.absorb();
        let frame = term.draw(|f| app.draw(f))?;
        let width = frame.area.width;
        if app.quit() {
            break;
        }
        if event::poll(TICK)? {
            match event::read()? {
                Event::Key(k) if k.kind != KeyEventKind::Release => app.key(k, width),
                // The next draw fits the new size.
                Event::Resize(..) => term.autoresize()?,
                _ => {}
            }
        }
    }
    Ok(())
}
