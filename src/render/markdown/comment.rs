//! A report as a pull-request comment (`--comment`): the stable first line a bot finds
//! it by, a headline of at most ten lines (the verdict, the total, the largest cause),
//! the report's Markdown folded to fit, and where the whole report is. The comment is
//! held to [`COMMENT_LIMIT`] bytes (so characters too) whatever the report: the body
//! is given the room the rest leaves, checked once written (escapes for workflow
//! commands can lengthen it), given less if it overflowed, and cut at a line as a last
//! resort, with every `<details>` closed.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::cells::{md_cell, md_code};
use super::{check, diff, set_diff};
use crate::render::comment::{
    check_comment_id, marker, Comment, CommentOptions, COMMENT_LIMIT, DEFAULT_COMMENT_ID,
};
use crate::render::text::shorten_middle;
use crate::render::words::comment::{self as words, Headline};

/// The most characters of one headline sentence (names can be any length).
const HEADLINE_CHARS: usize = 600;

/// The most characters of the artifact URL shown (a longer one is refused by the
/// binary; this keeps a library caller within the limit too).
const URL_CHARS: usize = 2000;

/// The most characters of the command shown for the JSON report (inputs can be long).
const COMMAND_CHARS: usize = 500;

/// Write `c` as a comment.
pub(in crate::render) fn comment(
    c: Comment<'_>,
    opts: &CommentOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    out.write_all(compose(c, opts, COMMENT_LIMIT).as_bytes())
}

/// The comment in at most `limit` bytes.
pub(in crate::render) fn compose(c: Comment<'_>, opts: &CommentOptions, limit: usize) -> String {
    let headline = match c {
        Comment::Diff(r) => words::diff(r),
        Comment::SetDiff(r) => words::set_diff(r),
        Comment::Check(r, d) => words::check(r, d),
    };
    let (more, full) = match &opts.artifact_url {
        Some(url) => {
            let url = shorten_middle(url, URL_CHARS);
            (
                format!("see the [JSON report]({})", link_target(&url)),
                format!("[JSON report]({})", link_target(&url)),
            )
        }
        None => {
            let command = md_code(&shorten_middle(&opts.json_command, COMMAND_CHARS));
            (
                format!("see {command}"),
                format!("{command} prints every row"),
            )
        }
    };
    // A library caller's bad id is never written (the binary refuses it first).
    let id = match check_comment_id(&opts.id) {
        Ok(()) => opts.id.as_str(),
        Err(_) => DEFAULT_COMMENT_ID,
    };
    let head = head(id, &headline, &full);
    let foot = format!(
        "\n<sub>{}</sub>\n",
        md_cell(&format!("written by nixcut {}", env!("CARGO_PKG_VERSION")))
    );
    fit(&head, &foot, limit, |room| body(c, room, &more))
}

/// `head`, the body `body(room)` gives for some room, and `foot`, in at most `limit`
/// bytes whatever `body` does with its room: the body is escaped (workflow commands),
/// any `<details>` it left open closed, measured, asked again with less room when it
/// overflowed, and cut at a line as a last resort, with every `<details>` closed.
fn fit(head: &str, foot: &str, limit: usize, body: impl Fn(usize) -> String) -> String {
    let fixed = head.len() + foot.len();
    let mut room = limit.saturating_sub(fixed);
    for _ in 0..4 {
        let b = closed(neutralise(&body(room)));
        if fixed + b.len() <= limit {
            return format!("{head}{b}{foot}");
        }
        // Over by what the escapes or the wrappers added: try again with that much less.
        room = room.saturating_sub(fixed + b.len() - limit + 1024);
    }
    let b = closed(neutralise(&body(room)));
    let cut = cut_to(&b, limit.saturating_sub(fixed));
    let text = format!("{head}{cut}{foot}");
    if text.len() <= limit {
        return text;
    }
    // Only a limit smaller than the headline gets here.
    cut_to(&text, limit)
}

/// The first line, the title and the headline's sentences, each one line.
fn head(id: &str, h: &Headline, full: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", marker(id));
    let _ = writeln!(
        s,
        "### {}\n",
        md_cell(&shorten_middle(&h.title, HEADLINE_CHARS))
    );
    for (label, line) in &h.lines {
        let _ = writeln!(
            s,
            "- **{label}:** {}",
            md_cell(&shorten_middle(line, HEADLINE_CHARS))
        );
    }
    let _ = writeln!(s, "- **full report:** {full}\n");
    neutralise(&s)
}

/// The report's Markdown, as much of it as `room` bytes hold.
fn body(c: Comment<'_>, room: usize, more: &str) -> String {
    match c {
        Comment::Diff(r) => diff::diff_within(r, room, more),
        Comment::SetDiff(r) => set_diff::set_diff_within(r, room, more),
        Comment::Check(r, d) => {
            let mut buf = Vec::new();
            let _ = check::check(r, &mut buf);
            let text = String::from_utf8_lossy(&buf).into_owned();
            // The verdict first, in at most half the room when a diff follows.
            let share = if d.is_some() { room / 2 } else { room };
            let mut s = if text.len() > share {
                let mut t = cut_to(&text, share.saturating_sub(200));
                let _ = writeln!(t, "\n… the rest of the check ({more})");
                t
            } else {
                text
            };
            if let Some(d) = d {
                s.push('\n');
                let left = room.saturating_sub(s.len());
                s.push_str(&diff::diff_within(d, left, more));
            }
            s
        }
    }
}

/// `s` with a `</details>` for every `<details>` it left open.
fn closed(mut s: String) -> String {
    let open = s.matches("<details>").count();
    let shut = s.matches("</details>").count();
    for _ in shut..open {
        s.push_str("\n</details>\n");
    }
    s
}

fn neutralise(s: &str) -> String {
    crate::store::neutralise_workflow_commands(s, "\\:", "\\#").into_owned()
}

/// A link target that cannot end the link or break the line: spaces, parentheses,
/// angle brackets and control characters percent-encoded.
fn link_target(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            ' ' | '(' | ')' | '<' | '>' | '"' | '`' | '\\' | '[' | ']' | '|' => {
                let _ = write!(out, "%{:02X}", c as u32);
            }
            c if c.is_control() || crate::store::is_terminal_hazard(c) => {
                let mut b = [0; 4];
                for byte in c.encode_utf8(&mut b).bytes() {
                    let _ = write!(out, "%{byte:02X}");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` cut at a line end to at most `max` bytes, every `<details>` it opened
/// closed, and a line saying it was cut (with room for all of it: the more `<details>`
/// the kept part opens, the less of it is kept).
fn cut_to(text: &str, max: usize) -> String {
    const CUT: &str = "\n… (cut to fit a comment)\n";
    const CLOSE: &str = "\n</details>\n";
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max.saturating_sub(CUT.len());
    loop {
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let kept = &text[..text[..end].rfind('\n').map_or(0, |i| i + 1)];
        let open = kept
            .matches("<details>")
            .count()
            .saturating_sub(kept.matches("</details>").count());
        let size = kept.len() + CUT.len() + open * CLOSE.len();
        if size <= max || kept.is_empty() {
            let mut s = kept.to_string();
            if size <= max {
                s.push_str(CUT);
                for _ in 0..open {
                    s.push_str(CLOSE);
                }
            }
            return s;
        }
        end = kept.len().saturating_sub(size - max).min(kept.len() - 1);
    }
}

#[cfg(test)]
mod tests;
