//! What every table shares: a new table in the house style, cells that fit the terminal
//! (columns dropped or wrapped, units glued to their numbers), bold that is only bold on
//! a terminal, and the marker of a cell that must not wrap ([`WHOLE`]).

use std::io::{self, Write};

use comfy_table::{
    presets, Cell, CellAlignment, ColumnConstraint, ContentArrangement, Table, Width,
};

use crate::render::Style;

/// Marks a line to be written whole, never wrapped: a command or Nix code meant to be
/// copied. The table renderer (`render`) removes it.
pub(super) const WHOLE: char = '\u{e000}';

/// Lines longer than `width` wrapped at spaces, each continuation indented two more
/// than its line; table lines (the renderer fitted them) and lines marked [`WHOLE`] as
/// they are.
pub(super) fn wrap_lines(text: &str, width: Option<usize>) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if let Some(whole) = body.strip_prefix(WHOLE) {
            out.push_str(whole);
            out.push_str(nl);
            continue;
        }
        match width {
            Some(w) if body.chars().count() > w => {
                // A number and its unit stay on one line.
                let glued = glue_units(body);
                let body = glued.as_str();
                // The indent, or a chain tree's prefix (`│   ├───`): continuation lines
                // carry its vertical lines on.
                let lead = |c: char| c == ' ' || "│├└─".contains(c);
                let indent = body.len() - body.trim_start_matches(lead).len();
                // A prefix wider than half the line (a deep chain tree) leaves too little
                // to wrap into: the line stays whole.
                if body[..indent].chars().count() * 2 > w {
                    out.push_str(body);
                    out.push_str(nl);
                    continue;
                }
                let cont: String = body[..indent]
                    .chars()
                    .map(|c| {
                        if c == '├' {
                            '│'
                        } else if c == '│' {
                            c
                        } else {
                            ' '
                        }
                    })
                    .chain("  ".chars())
                    .collect();
                let mut cur = body[..indent].to_string();
                let mut empty = true;
                for word in body[indent..].split(' ') {
                    let len = cur.chars().count();
                    if !empty && len + 1 + word.chars().count() > w {
                        out.push_str(cur.trim_end());
                        out.push('\n');
                        cur = cont.clone();
                        empty = true;
                    }
                    if !empty {
                        cur.push(' ');
                    }
                    cur.push_str(word);
                    empty = false;
                }
                out.push_str(&cur);
                out.push_str(nl);
            }
            _ => {
                out.push_str(body);
                out.push_str(nl);
            }
        }
    }
    out
}

pub(super) const BOLD_ON: &str = "\x1b[1m";
pub(super) const BOLD_OFF: &str = "\x1b[0m";

/// `text` with every terminal hazard but `\n` and `\t` as `\u{…}`; with `keep_bold`, the
/// two sequences [`bold`] writes stay as they are.
pub(super) fn escape_hazards(text: &str, keep_bold: bool) -> std::borrow::Cow<'_, str> {
    let hazard = |c: char| c != '\n' && c != '\t' && crate::store::is_terminal_hazard(c);
    if !text.chars().any(hazard) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if keep_bold && c == '\x1b' {
            if let Some(seq) = [BOLD_ON, BOLD_OFF]
                .into_iter()
                .find(|s| rest.starts_with(s))
            {
                out.push_str(seq);
                rest = &rest[seq.len()..];
                continue;
            }
        }
        if hazard(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// A table with the house style: wrapped to `style.width` (never, without one),
/// coloured only when allowed.
pub(super) fn new_table(style: &Style) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    match style.width {
        Some(w) => {
            t.set_width(w);
            t.set_content_arrangement(ContentArrangement::Dynamic);
        }
        None => {
            t.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    if !style.color {
        t.force_no_tty();
    }
    t
}

/// Words a table may not break between: a number and its unit (`407.4 KiB`), glued
/// with a no-break space that [`render`] turns back into a space.
pub(super) const GLUE: char = '\u{a0}';

pub(super) const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// `s` with the space between a number and its unit glued (`407.4 KiB`, `(−9.6 GiB,`).
pub(super) fn glue_units(s: &str) -> String {
    let words: Vec<&str> = s.split(' ').collect();
    let mut out = String::with_capacity(s.len());
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            let unit = w.trim_end_matches([',', ')', ';', ':', '.']);
            let number = words[i - 1]
                .chars()
                .last()
                .is_some_and(|c| c.is_ascii_digit());
            out.push(if number && UNITS.contains(&unit) {
                GLUE
            } else {
                ' '
            });
        }
        out.push_str(w);
    }
    out
}

/// Whether a cell holds a number (a size, a count, a percentage, a ratio): its column
/// is right-aligned.
pub(super) fn numeric(s: &str) -> bool {
    let t = s.trim_start_matches(['+', '−', '-', '≥', '~']);
    t.starts_with(|c: char| c.is_ascii_digit())
        && t.split(GLUE)
            .next()
            .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit() || ".,%×".contains(c)))
}

/// `t` rebuilt to be read at `style.width`: no word or number is ever split across
/// lines (each column is at least as wide as its longest word, a number and its unit
/// counting as one), columns of numbers are right-aligned, and when the columns do
/// not fit, those in `drop` are left out, in that order, until they do. Returns the
/// table and the headers it left out (for a note under it).
pub(super) fn fit(t: &Table, style: &Style, drop: &[usize]) -> (Table, Vec<String>) {
    let cols = Columns::of(t);
    let (widths, hidden) = match style.width.map(usize::from) {
        Some(width) => cols.fit(width, drop),
        None => (cols.natural.clone(), vec![false; cols.n]),
    };
    let out = cols.table(style, &widths, &hidden);
    let names = (0..cols.n)
        .filter(|&i| hidden[i])
        .map(|i| cols.cell(&cols.header, i).replace(GLUE, " "))
        .collect();
    (out, names)
}

/// A table's cells as text (units glued to their numbers), and what each column
/// needs: its longest word, its longest line, and whether it holds numbers only.
pub(super) struct Columns {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// How many columns.
    n: usize,
    /// Each column's longest word (never split across lines).
    min: Vec<usize>,
    /// Each column's longest line.
    natural: Vec<usize>,
    /// Columns of numbers, right-aligned.
    right: Vec<bool>,
}

impl Columns {
    /// Read the cells of `t` and measure its columns.
    fn of(t: &Table) -> Columns {
        let header: Vec<String> = t
            .header()
            .map(|h| h.cell_iter().map(|c| glue_units(&c.content())).collect())
            .unwrap_or_default();
        let rows: Vec<Vec<String>> = t
            .row_iter()
            .map(|r| r.cell_iter().map(|c| glue_units(&c.content())).collect())
            .collect();
        let n = header
            .len()
            .max(rows.iter().map(Vec::len).max().unwrap_or(0));
        let mut cols = Columns {
            header,
            rows,
            n,
            min: Vec::new(),
            natural: Vec::new(),
            right: Vec::new(),
        };
        let word = |s: &String| {
            s.split([' ', '\n'])
                .map(|w| w.chars().count())
                .max()
                .unwrap_or(0)
        };
        cols.min = (0..n)
            .map(|i| {
                cols.rows
                    .iter()
                    .chain(std::iter::once(&cols.header))
                    .map(|r| word(&cols.cell(r, i)))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        cols.right = (0..n)
            .map(|i| {
                let cells: Vec<String> = cols
                    .rows
                    .iter()
                    .map(|r| cols.cell(r, i))
                    .filter(|c| !c.is_empty())
                    .collect();
                !cells.is_empty() && cells.iter().all(|c| numeric(c))
            })
            .collect();
        cols.natural = (0..n)
            .map(|i| {
                cols.rows
                    .iter()
                    .chain(std::iter::once(&cols.header))
                    .flat_map(|r| {
                        cols.cell(r, i)
                            .lines()
                            .map(|l| l.chars().count())
                            .collect::<Vec<_>>()
                    })
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        cols
    }

    /// Cell `i` of row `r` (empty past its end).
    fn cell(&self, r: &[String], i: usize) -> String {
        r.get(i).cloned().unwrap_or_default()
    }

    /// The columns' widths within `width`, and which columns are left out: those in
    /// `drop`, in order, until the rest fit; then the widest columns of words get
    /// narrower; then the spare columns go to those that need the fewest to be whole.
    fn fit(&self, width: usize, drop: &[usize]) -> (Vec<usize>, Vec<bool>) {
        let (n, natural) = (self.n, &self.natural);
        let mut min = self.min.clone();
        let mut hidden = vec![false; n];
        // `│ a ┆ b │`: three columns of border and padding per column, and one.
        let borders = |hidden: &[bool]| 3 * hidden.iter().filter(|h| !**h).count() + 1;
        let mut widths = natural.clone();
        let need = |hidden: &[bool], min: &[usize]| -> usize {
            (0..n)
                .filter(|&i| !hidden[i])
                .map(|i| min[i])
                .sum::<usize>()
                + borders(hidden)
        };
        for &i in drop {
            if need(&hidden, &min) <= width {
                break;
            }
            if i < n {
                hidden[i] = true;
            }
        }
        // Still too wide: the widest columns of words get narrower, and their words
        // longer than that are shortened in the middle (marked `…`, never split).
        while need(&hidden, &min) > width {
            let excess = need(&hidden, &min) - width;
            let Some(i) = (0..n)
                .filter(|&i| !hidden[i] && !self.right[i] && min[i] > 8)
                .max_by_key(|&i| min[i])
            else {
                break;
            };
            min[i] = min[i].saturating_sub(excess).max(8);
            widths[i] = widths[i].min(min[i]);
        }
        let shown: Vec<usize> = (0..n).filter(|&i| !hidden[i]).collect();
        let budget = width.saturating_sub(borders(&hidden));
        if shown.iter().map(|&i| natural[i]).sum::<usize>() > budget {
            // Every column its longest word; then the spare columns go to the columns
            // that need the fewest to be whole (numbers first), then to the rest.
            for &i in &shown {
                widths[i] = min[i];
            }
            let mut spare = budget.saturating_sub(shown.iter().map(|&i| min[i]).sum());
            let mut order = shown.clone();
            order.sort_by_key(|&i| natural[i].saturating_sub(min[i]));
            for i in order {
                let give = spare.min(natural[i].saturating_sub(min[i]));
                widths[i] += give;
                spare -= give;
            }
        }
        (widths, hidden)
    }

    /// The table rebuilt with these widths, without the hidden columns; words longer
    /// than their column are shortened in the middle.
    fn table(&self, style: &Style, widths: &[usize], hidden: &[bool]) -> Table {
        let n = self.n;
        let mut out = new_table(style);
        let fitted = |i: usize, text: String| -> String {
            if text
                .split([' ', '\n'])
                .all(|w| w.chars().count() <= widths[i])
            {
                return text;
            }
            text.split('\n')
                .map(|l| {
                    l.split(' ')
                        .map(|w| crate::render::text::shorten_middle(w, widths[i]))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        let keep = |r: &Vec<String>| -> Vec<Cell> {
            (0..n)
                .filter(|&i| !hidden[i])
                .map(|i| {
                    let c = Cell::new(fitted(i, self.cell(r, i)));
                    if self.right[i] {
                        c.set_alignment(CellAlignment::Right)
                    } else {
                        c
                    }
                })
                .collect()
        };
        if !self.header.is_empty() {
            out.set_header(keep(&self.header));
        }
        for r in &self.rows {
            out.add_row(keep(r));
        }
        for (k, i) in (0..n).filter(|&i| !hidden[i]).enumerate() {
            if let Some(col) = out.column_mut(k) {
                // The width with the padding on both sides.
                col.set_constraint(ColumnConstraint::Absolute(Width::Fixed(
                    u16::try_from(widths[i] + 2).unwrap_or(u16::MAX),
                )));
            }
        }
        out
    }
}

/// A fitted table's text with every line marked [`WHOLE`].
pub(super) fn whole(t: &Table) -> String {
    t.to_string()
        .lines()
        .map(|l| format!("{WHOLE}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Write a table made readable at the width ([`fit`]), and say which columns it left
/// out.
pub(super) fn write_fitted(
    out: &mut dyn Write,
    t: &Table,
    style: &Style,
    drop: &[usize],
) -> io::Result<()> {
    let (t, hidden) = fit(t, style, drop);
    // Fitted already: never wrapped again.
    for line in t.to_string().lines() {
        writeln!(out, "{WHOLE}{line}")?;
    }
    if !hidden.is_empty() {
        writeln!(
            out,
            "(not shown at this width: {}; wider terminal or --format json)",
            hidden.join(", ")
        )?;
    }
    Ok(())
}

/// Bold with ANSI when colour is allowed.
pub(super) fn bold(s: &str, style: &Style) -> String {
    if style.color {
        format!("{BOLD_ON}{s}{BOLD_OFF}")
    } else {
        s.to_string()
    }
}
