//! Screens without a terminal (`--dump-screen WxH[,KEYS]`): the session drawn on
//! ratatui's test backend at a given size, the keys applied one by one, and the last
//! frame printed as text. Before each key and the last frame it waits for the reports
//! asked for and the evidence on screen, so the same keys always give the same screen.

use std::io::{self, Write};
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::app::App;

/// `--dump-screen`: the screen's size and the keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpSpec {
    pub width: u16,
    pub height: u16,
    pub keys: Vec<KeyEvent>,
}

/// Read `WxH[,KEY…]`: keys are a name (`Enter`, `Esc`, `Tab`, `Backspace`, `Up`,
/// `Down`, `Left`, `Right`, `PageUp`, `PageDown`, `Home`, `End`, `Space`, `Comma`) or
/// text typed one character at a time (`/`, `rocblas`, `q`).
pub fn parse_dump(spec: &str) -> Result<DumpSpec, String> {
    let mut parts = spec.split(',');
    let size = parts.next().unwrap_or_default();
    let (w, h) = size
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("`{size}` is no size: give WIDTHxHEIGHT, as 80x24"))?;
    let num = |s: &str, what: &str| -> Result<u16, String> {
        let n: u16 = s
            .trim()
            .parse()
            .map_err(|_| format!("`{s}` is no {what} in `{size}` (WIDTHxHEIGHT, as 80x24)"))?;
        if !(20..=1000).contains(&n) {
            return Err(format!(
                "the {what} {n} in `{size}` is not between 20 and 1000"
            ));
        }
        Ok(n)
    };
    let (width, height) = (num(w, "width")?, num(h, "height")?);
    let mut keys = Vec::new();
    for (k, token) in parts.enumerate() {
        let code = match token {
            "Enter" => KeyCode::Enter,
            "Esc" => KeyCode::Esc,
            "Tab" => KeyCode::Tab,
            "Backspace" => KeyCode::Backspace,
            "Up" => KeyCode::Up,
            "Down" => KeyCode::Down,
            "Left" => KeyCode::Left,
            "Right" => KeyCode::Right,
            "PageUp" => KeyCode::PageUp,
            "PageDown" => KeyCode::PageDown,
            "Home" => KeyCode::Home,
            "End" => KeyCode::End,
            "Space" => KeyCode::Char(' '),
            "Comma" => KeyCode::Char(','),
            "" => return Err(format!("key {} of `{spec}` is empty", k + 1)),
            text => {
                keys.extend(
                    text.chars()
                        .map(|c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
                );
                continue;
            }
        };
        keys.push(KeyEvent::new(code, KeyModifiers::NONE));
    }
    Ok(DumpSpec {
        width,
        height,
        keys,
    })
}

/// Apply `spec.keys` and write the last frame (lines without trailing blanks).
pub fn dump(app: &mut App, spec: &DumpSpec, out: &mut dyn Write) -> io::Result<()> {
    let mut term = Terminal::new(TestBackend::new(spec.width, spec.height))?;
    for &k in &spec.keys {
        settle(app);
        if app.quit() {
            break;
        }
        term.draw(|f| app.draw(f))?;
        app.key(k, spec.width);
    }
    settle(app);
    term.draw(|f| app.draw(f))?;
    let buf = term.backend().buffer();
    let area = buf.area;
    for y in 0..area.height {
        let mut line = String::new();
        for x in 0..area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// Wait until the reports asked for and the evidence on screen are in.
fn settle(app: &mut App) {
    app.absorb();
    while app.pending_reports() > 0 || !app.settled() {
        app.absorb_waiting(Duration::from_millis(200));
    }
}
