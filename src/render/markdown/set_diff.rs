//! A package-set diff (or check) in Markdown for a pull-request comment: the summary,
//! the first `show` causes and roots, then the rest collapsed in `<details>`, as many
//! rows as fit: the whole text stays within a budget of bytes ([`MAX_CHARS`], GitHub's
//! limit, or what a comment leaves it, `markdown::comment`), and what does not fit is
//! counted and pointed to (the JSON report).

use std::fmt::Write as _;
use std::io::{self, Write};

use super::{md_cell, md_code};
use crate::render::text::{count, format_delta, thousands};
use crate::render::words::set_diff as words;
use crate::report::{Cause, RootDiff, SetDiffReport};

/// The most characters a GitHub comment holds (counted here in bytes, which is never
/// fewer).
pub(crate) const MAX_CHARS: usize = crate::render::comment::COMMENT_LIMIT;

/// Where the rows left out are, when nothing else is said.
const SEE_JSON: &str = "see `--format json`";

fn cause_row(i: usize, c: &Cause) -> String {
    format!(
        "| {} | {} | {} | {} | {} | {} |\n",
        i + 1,
        md_code(&format!("{} {}", c.name, words::versions(c))),
        c.change.as_str(),
        c.roots,
        format_delta(c.bytes),
        md_cell(&words::chain(c))
    )
}

/// A root's row; `downloads`: with the download-size column.
fn root_row(i: usize, r: &RootDiff, downloads: bool) -> String {
    let mut s = format!(
        "| {} | {} | {} | {} | {} | {} |",
        i + 1,
        md_code(&words::root_name(r)),
        words::size(&r.old),
        words::size(&r.new),
        format_delta(r.delta),
        words::percent(r.percent),
    );
    if downloads {
        let _ = write!(s, " {} |", words::download(r));
    }
    s.push('\n');
    s
}

const CAUSE_HEAD: &str =
    "| # | cause | change | roots | bytes | example chain |\n|--:|---|---|--:|--:|---|\n";
/// The roots' table head, with the download-size column when any root has one.
fn root_head(downloads: bool) -> &'static str {
    if downloads {
        "| # | root | old | new | Δ | % | download |\n|--:|---|--:|--:|--:|--:|--:|\n"
    } else {
        "| # | root | old | new | Δ | % |\n|--:|---|--:|--:|--:|--:|\n"
    }
}

/// Rows from `rows` (numbered from `from`) until `budget` bytes are used; the text and
/// how many rows it holds.
fn fill<T>(
    rows: &[T],
    from: usize,
    budget: usize,
    row: impl Fn(usize, &T) -> String,
) -> (String, usize) {
    let mut s = String::new();
    let mut n = 0;
    for (k, x) in rows.iter().enumerate() {
        let line = row(from + k, x);
        if s.len() + line.len() > budget {
            break;
        }
        s.push_str(&line);
        n += 1;
    }
    (s, n)
}

/// The most rows shown open per table; the rest are collapsed.
const MAX_OPEN: usize = 100;

pub(super) fn set_diff(r: &SetDiffReport, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(set_diff_within(r, MAX_CHARS, SEE_JSON).as_bytes())
}

/// The report in at most `budget` bytes (when `budget` leaves room for the summary; a
/// smaller one still gives the summary, cut). The rows left out are counted and `more`
/// says where they are (`see `--format json``, a link to the JSON artifact).
pub(super) fn set_diff_within(r: &SetDiffReport, budget: usize, more: &str) -> String {
    let show = r.show.clamp(1, MAX_OPEN);
    let mut head = String::new();
    let _ = writeln!(head, "### {}\n", md_cell(&words::header(r)));
    let _ = writeln!(head, "{}\n", md_cell(&words::counts(r)));
    for line in words::verdict(r) {
        let _ = writeln!(head, "**{}**\n", md_cell(&line));
    }
    if let Some(c) = &r.check {
        for f in c.failed.iter().take(show) {
            let _ = writeln!(head, "- {}", md_cell(&words::failed_root(f)));
        }
        if c.failed.len() > show {
            let _ = writeln!(head, "- … {} more", c.failed.len() - show);
        }
        for f in c.failed_new.iter().take(show) {
            let _ = writeln!(head, "- {}", md_cell(&words::failed_new_root(f)));
        }
        if c.failed_new.len() > show {
            let _ = writeln!(head, "- … {} more", c.failed_new.len() - show);
        }
        let _ = writeln!(head);
    }
    let _ = writeln!(head, "{}\n", md_cell(&words::rebuild(r)));
    let top_causes = &r.causes[..r.causes.len().min(show)];
    let top_roots = &r.roots[..r.roots.len().min(show)];
    let mut causes_top = String::new();
    if top_causes.is_empty() {
        causes_top.push_str("No package changed a root's closure size.\n");
    } else {
        causes_top.push_str("#### Causes\n\n");
        causes_top.push_str(CAUSE_HEAD);
        for (i, c) in top_causes.iter().enumerate() {
            causes_top.push_str(&cause_row(i, c));
        }
    }
    let mut roots_top = String::from("\n#### Roots, by size of change\n\n");
    let downloads = words::has_downloads(r);
    roots_top.push_str(root_head(downloads));
    for (i, x) in top_roots.iter().enumerate() {
        roots_top.push_str(&root_row(i, x, downloads));
    }
    let mut tail = String::new();
    let _ = writeln!(tail, "\n_{}_", md_cell(words::NOTE));
    let mut warned = 0;
    for w in &r.warnings {
        let line = format!("\n> **warning:** {}\n", md_cell(&w.to_string()));
        if tail.len() + line.len() > 4096 {
            break;
        }
        tail.push_str(&line);
        warned += 1;
    }
    if warned < r.warnings.len() {
        let _ = writeln!(tail, "\n> … {} more warnings", r.warnings.len() - warned);
    }
    // What is always shown, cut to fit if it must (very long names).
    let mut fixed = head + &causes_top + &roots_top;
    // The two `<details>` around the rows and their counts, each naming `more`.
    let reserve = 2048 + 2 * more.len() + tail.len();
    if fixed.len() + reserve > budget {
        let mut cut = budget.saturating_sub(reserve);
        while !fixed.is_char_boundary(cut) {
            cut -= 1;
        }
        fixed.truncate(cut);
        fixed.push_str("\n\n… (cut to fit a comment)\n");
    }
    let mut budget = budget.saturating_sub(fixed.len() + reserve);
    let more_causes = &r.causes[top_causes.len()..];
    let more_roots = &r.roots[top_roots.len()..];
    let hidden_roots = r.rest.map_or(0, |x| x.roots);
    let hidden_causes = r.rest.map_or(0, |x| x.causes);
    let mut body = String::new();
    body.push_str(&fixed);
    // Half the room for the rest of the causes, the other half (and what they left) for
    // the roots.
    if !more_causes.is_empty() || hidden_causes > 0 {
        let (rows, n) = fill(more_causes, top_causes.len(), budget / 2, cause_row);
        let left = more_causes.len() - n + hidden_causes;
        let what = if left == 1 { "cause" } else { "causes" };
        let mut d = format!(
            "\n<details><summary>{}</summary>\n\n{CAUSE_HEAD}{rows}",
            count(
                (more_causes.len() + hidden_causes) as u64,
                "more cause",
                "more causes"
            )
        );
        if left > 0 {
            let _ = writeln!(d, "\n… and {} more {what} ({more})", thousands(left as u64));
        }
        d.push_str("\n</details>\n");
        budget = budget.saturating_sub(d.len());
        body.push_str(&d);
    }
    if !more_roots.is_empty() || hidden_roots > 0 {
        let (rows, n) = fill(more_roots, top_roots.len(), budget, |i, x| {
            root_row(i, x, downloads)
        });
        let left = more_roots.len() - n + hidden_roots;
        let what = if left == 1 { "root" } else { "roots" };
        let mut d = format!(
            "\n<details><summary>{}</summary>\n\n{}{rows}",
            count(
                (more_roots.len() + hidden_roots) as u64,
                "more root",
                "more roots"
            ),
            root_head(downloads)
        );
        if left > 0 {
            let _ = writeln!(d, "\n… and {} more {what} ({more})", thousands(left as u64));
        }
        d.push_str("\n</details>\n");
        body.push_str(&d);
    }
    body.push_str(&tail);
    body
}
