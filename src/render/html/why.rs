//! The `why` reports as HTML: the treemap of the dominator tree, with the total, the
//! legend and the top list beside it; and the chain tree of `why ROOT TARGET`.
//!
//! Treemap: every path of the report whose rectangle is big enough is a rectangle
//! with an area proportional to its added size, laid inside the rectangle of its
//! immediate dominator (`WhyPath::dominator`); paths without one (the roots, paths
//! shared by several roots, and paths whose dominator `--top` left out) share the
//! whole picture. Inside a path's rectangle, its own NAR size and one "other" block
//! (its dominated paths too small to draw, or not in the report) take the space its
//! drawn children leave. So, at every level, area = added size × one scale. At most
//! [`MAX_RECTS`] paths are drawn, largest added size first, none under [`MIN_AREA`]
//! square units: the generated 10,000-path closure of `tests/html.rs` makes a page of
//! 1.1 MB (1,500 rectangles, 928 "other" blocks), under the 2 MiB budget.
//!
//! Colour is the strongest verdict among the evidence of a path's referrers (its
//! `kept_by`): what keeps it in the closure (`colours.rs`).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt::Write as _;
use std::io::{self, Write};

use super::colours::{ink, lighten, Category, Palette, BRANCH_COLOURS};
use super::escape::{esc, esc_lines};
use super::page;
use super::treemap::{squarify, Rect};
use crate::render::text::name_of;
use crate::render::words::why::{chains_header, header, kept_by, sort_note, tree_lines};
use crate::report::{EvidenceLevel, WhyChainsReport, WhyPath, WhyReport};
use crate::store::format_size;

/// The treemap's size in SVG units (the SVG scales to the page's width).
const W: f64 = 1000.0;
const H: f64 = 680.0;
/// Rectangles smaller than this (square units) merge into their parent's "other".
const MIN_AREA: f64 = 30.0;
/// At most this many paths are drawn as rectangles.
const MAX_RECTS: usize = 1500;
/// Rows of the top list.
const TOP_LIST: usize = 15;
/// Label font size and average glyph width, in SVG units.
const FONT: f64 = 11.0;
const GLYPH: f64 = 6.3;

/// A drawn path: its report row, rectangle and depth in the dominator tree.
struct Drawn {
    row: usize,
    rect: Rect,
    depth: usize,
    /// Where its own NAR size sits (for the label).
    own: Rect,
    /// Whether some of its dominated paths are drawn inside it.
    parent: bool,
    /// Its ancestor one level below the top (a root's dependency), for colours
    /// without evidence.
    branch: usize,
}

/// A parent's block for what is too small to draw.
struct Other {
    parent: Option<usize>,
    rect: Rect,
    bytes: u64,
    paths: usize,
    depth: usize,
}

/// The treemap's geometry: which paths are drawn where.
struct Layout {
    drawn: Vec<Drawn>,
    others: Vec<Other>,
}

/// Decide which paths are drawn and where. O(n log n) for the n paths of the report:
/// a heap picks the drawn paths (largest added size first, a path only after its
/// dominator), then one [`squarify`] per drawn path places its drawn children.
fn layout(r: &WhyReport) -> Layout {
    let n = r.paths.len();
    let (children, top) = dominator_children(r);
    let top_sum: u64 = top.iter().map(|&i| r.paths[i].added_size).sum();
    let total = r.closure_size.max(top_sum).max(1) as f64;
    let per_byte = W * H / total;
    let (is_drawn, count) = drawn_paths(r, &children, &top, per_byte);
    let mut placer = Placer {
        r,
        is_drawn: &is_drawn,
        others: Vec::new(),
    };
    let mut stack: Vec<(usize, Rect, usize)> = Vec::new();
    let mut branch = vec![usize::MAX; n];
    let whole = Rect {
        x: 0.0,
        y: 0.0,
        w: W,
        h: H,
    };
    let total_bytes = r.closure_size.max(top_sum);
    placer.place(None, whole, 0, (0, total_bytes), &top, &mut stack);
    // Depth first, biggest first: parents are written before (under) their children.
    stack.reverse();
    let mut drawn = Vec::with_capacity(count);
    while let Some((i, rect, depth)) = stack.pop() {
        let p = &r.paths[i];
        if branch[i] == usize::MAX {
            branch[i] = i;
        }
        let mut next = Vec::new();
        let own = placer.place(
            Some(i),
            rect,
            depth,
            (p.nar_size, p.added_size),
            &children[i],
            &mut next,
        );
        for &(c, _, _) in &next {
            // A single root's dependencies start the branches; deeper paths inherit.
            branch[c] = if depth == 1 && top.len() == 1 {
                c
            } else {
                branch[i]
            };
        }
        drawn.push(Drawn {
            row: i,
            rect,
            depth,
            own,
            parent: !next.is_empty(),
            branch: branch[i],
        });
        next.reverse();
        stack.extend(next);
    }
    Layout {
        drawn,
        others: placer.others,
    }
}

/// Dominator-tree children among the report's rows, and the rows with no dominator
/// among them (they hang at the top).
fn dominator_children(r: &WhyReport) -> (Vec<Vec<usize>>, Vec<usize>) {
    let index: HashMap<&str, usize> = r
        .paths
        .iter()
        .enumerate()
        .map(|(i, p)| (p.path.as_str(), i))
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); r.paths.len()];
    let mut top: Vec<usize> = Vec::new();
    for (i, p) in r.paths.iter().enumerate() {
        match p.dominator.as_deref().and_then(|d| index.get(d)) {
            Some(&d) if d != i => children[d].push(i),
            _ => top.push(i),
        }
    }
    (children, top)
}

/// Which rows are drawn, and how many: largest added size first, parents before
/// children, at most [`MAX_RECTS`], none smaller than [`MIN_AREA`] at `per_byte`.
fn drawn_paths(
    r: &WhyReport,
    children: &[Vec<usize>],
    top: &[usize],
    per_byte: f64,
) -> (Vec<bool>, usize) {
    let area = |bytes: u64| bytes as f64 * per_byte;
    let mut is_drawn = vec![false; r.paths.len()];
    let mut heap: BinaryHeap<(u64, Reverse<usize>)> = top
        .iter()
        .map(|&i| (r.paths[i].added_size, Reverse(i)))
        .collect();
    let mut count = 0;
    while let Some((added, Reverse(i))) = heap.pop() {
        if count >= MAX_RECTS || area(added) < MIN_AREA {
            break;
        }
        is_drawn[i] = true;
        count += 1;
        heap.extend(
            children[i]
                .iter()
                .map(|&c| (r.paths[c].added_size, Reverse(c))),
        );
    }
    (is_drawn, count)
}

/// Places one level of the treemap at a time, collecting the "other" blocks.
struct Placer<'a> {
    r: &'a WhyReport,
    is_drawn: &'a [bool],
    others: Vec<Other>,
}

impl Placer<'_> {
    /// Lay out one level in `rect`: the drawn rows of `kids` (pushed on `stack` with
    /// their rectangles), an own block of `own` bytes and an other block for what is
    /// left of `budget`. Returns the own block.
    fn place(
        &mut self,
        parent: Option<usize>,
        rect: Rect,
        depth: usize,
        (own, budget): (u64, u64),
        kids: &[usize],
        stack: &mut Vec<(usize, Rect, usize)>,
    ) -> Rect {
        let r = self.r;
        let drawn_kids: Vec<usize> = kids.iter().copied().filter(|&c| self.is_drawn[c]).collect();
        let kids_sum: u64 = drawn_kids.iter().map(|&c| r.paths[c].added_size).sum();
        let other = budget.saturating_sub(own).saturating_sub(kids_sum);
        let mut sizes: Vec<f64> = drawn_kids
            .iter()
            .map(|&c| r.paths[c].added_size as f64)
            .collect();
        // A parent whose own NAR fills a strip tall enough for its label gets that
        // strip at the top, its name above its children; otherwise its own bytes are
        // one more block among them.
        let whole = (own + kids_sum + other).max(1) as f64;
        let strip_h = rect.h * own as f64 / whole;
        let pinned = !drawn_kids.is_empty() && strip_h >= FONT + 5.0 && strip_h < rect.h;
        let (own_rect, rest) = if pinned {
            let top = Rect { h: strip_h, ..rect };
            let rest = Rect {
                y: rect.y + strip_h,
                h: rect.h - strip_h,
                ..rect
            };
            sizes.push(0.0);
            (Some(top), rest)
        } else {
            sizes.push(own as f64);
            (None, rect)
        };
        sizes.push(other as f64);
        let mut rects = squarify(&sizes, rest);
        if let Some(top) = own_rect {
            let k = rects.len() - 2;
            rects[k] = top;
        }
        for (k, &c) in drawn_kids.iter().enumerate() {
            stack.push((c, rects[k], depth + 1));
        }
        let hidden = kids.len() - drawn_kids.len();
        if other > 0 {
            self.others.push(Other {
                parent,
                rect: rects[sizes.len() - 1],
                bytes: other,
                paths: hidden,
                depth: depth + 1,
            });
        }
        rects[sizes.len() - 2]
    }
}

/// The hover text of a path: full path, sizes, dominator, chain, evidence.
fn tooltip(r: &WhyReport, p: &WhyPath, cat: &Category) -> Vec<String> {
    let pct = percent(p.added_size, r.closure_size);
    let mut lines = vec![
        p.path.clone(),
        format!(
            "added {} ({pct} of the closure) · NAR {} · closure {}",
            format_size(p.added_size),
            format_size(p.nar_size),
            format_size(p.closure_size)
        ),
    ];
    if let Some(d) = &p.dominator {
        lines.push(format!("inside {} (its dominator)", name_of(d)));
    }
    lines.push(format!("chain: {}", chain_words(&p.chain, p.chain_omitted)));
    lines.push(format!("kept in as: {}", cat.label()));
    let ev = kept_by(p);
    if !ev.is_empty() {
        lines.push("kept in by:".to_string());
        lines.extend(ev.lines().map(|l| format!("  {l}")));
        // The first piece of evidence of each referrer: where the hash sits.
        for h in &p.kept_by {
            if let Some(e) = h.evidence.first() {
                lines.push(format!(
                    "  e.g. {}: {} @{} ({})",
                    name_of(&h.referrer),
                    e.file,
                    e.offset,
                    e.kind
                ));
                let detail = e.detail.to_string();
                if !detail.is_empty() {
                    lines.push(format!("    {}", clip(&detail, 120).unwrap_or_default()));
                }
            }
        }
    }
    lines
}

/// The chain's names, root first, its middle cut when long: the first paths listed
/// (the root alone when the report cut the chain, `omitted` paths after it) and the last
/// four, with how many are not named between. Only its ends are read (a chain may be
/// 50,000 paths deep).
fn chain_words(chain: &crate::report::Chain, omitted: usize) -> String {
    if chain.len() <= 10 && omitted == 0 {
        let all = chain.to_vec();
        let names: Vec<&str> = all.iter().map(|s| name_of(s)).collect();
        return names.join(" → ");
    }
    // A cut chain leaves paths out right after the root: it leads alone (the chain
    // itself knows that only until it is read back from JSON).
    let head = match chain.head() {
        [root, ..] if omitted > 0 => std::slice::from_ref(root),
        head => head,
    };
    let head: Vec<&str> = head.iter().map(|s| name_of(s)).collect();
    let tail_len = 4.min(chain.len().saturating_sub(head.len()));
    let mut tail: Vec<&str> = chain
        .rev_iter()
        .take(tail_len)
        .map(|s| name_of(s))
        .collect();
    tail.reverse();
    let between = chain.len() - head.len() - tail_len + omitted;
    if tail.is_empty() {
        return format!("{} → … ({between} more)", head.join(" → "));
    }
    format!(
        "{} → … ({between} more) … → {}",
        head.join(" → "),
        tail.join(" → ")
    )
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "—".to_string();
    }
    let p = part as f64 / whole as f64 * 100.0;
    if p >= 10.0 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// `s` cut to `max` characters with an ellipsis.
fn clip(s: &str, max: usize) -> Option<String> {
    if max < 4 {
        return None;
    }
    let n = s.chars().count();
    Some(if n <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    })
}

/// The text layer: labels placed top-left in their rectangles, pushed down below
/// the labels already placed on the same top edge over the same columns (a parent's
/// tag sits where its children's labels would).
#[derive(Default)]
struct Labels {
    svg: String,
    /// For each top edge (rounded to 1/10 unit): the spans `(x0, x1, height used)`.
    used: HashMap<i64, Vec<(f64, f64, f64)>>,
}

impl Labels {
    /// How far down `rect`'s label must start, and where its span ends.
    fn offset(&self, rect: &Rect, width: f64) -> f64 {
        let key = (rect.y * 10.0).round() as i64;
        let (x0, x1) = (rect.x, rect.x + width);
        self.used.get(&key).map_or(0.0, |spans| {
            spans
                .iter()
                .filter(|(a, b, _)| *a < x1 - 0.01 && *b > x0 + 0.01)
                .map(|s| s.2)
                .fold(0.0, f64::max)
        })
    }

    fn mark(&mut self, rect: &Rect, width: f64, height: f64) {
        let key = (rect.y * 10.0).round() as i64;
        self.used
            .entry(key)
            .or_default()
            .push((rect.x, rect.x + width, height));
    }

    /// Name (and, with room, size on a second line) in `rect`, as far as they fit.
    fn plain(&mut self, rect: &Rect, name: &str, size: &str, fill: &str) {
        let off = self.offset(rect, rect.w);
        if rect.w < 30.0 || rect.h - off < FONT + 4.0 {
            return;
        }
        let chars = ((rect.w - 6.0) / GLYPH) as usize;
        let Some(first) = clip(name, chars) else {
            return;
        };
        let _ = write!(
            self.svg,
            "<text x=\"{:.2}\" y=\"{:.2}\" font-size=\"{FONT}\" fill=\"{}\">{}",
            rect.x + 4.0,
            rect.y + off + FONT + 2.0,
            ink(fill),
            esc(&first)
        );
        let mut used = off + FONT + 4.0;
        let one_line = format!("{first} · {size}");
        if rect.h - off < 2.0 * FONT + 8.0 && first == name && one_line.chars().count() <= chars {
            let _ = write!(
                self.svg,
                "<tspan fill-opacity=\".85\"> · {}</tspan>",
                esc(size)
            );
        } else if rect.h - off >= 2.0 * FONT + 8.0 && size.chars().count() <= chars {
            let _ = write!(
                self.svg,
                "<tspan x=\"{:.2}\" dy=\"{:.1}\" fill-opacity=\".85\">{}</tspan>",
                rect.x + 4.0,
                FONT + 2.0,
                esc(size)
            );
            used += FONT + 2.0;
        }
        self.svg.push_str("</text>");
        self.mark(rect, rect.w, used);
    }

    /// A parent's name on a dark tag at its corner, above its children.
    fn tag(&mut self, rect: &Rect, text: &str) {
        let off = self.offset(rect, rect.w);
        if rect.w < 60.0 || rect.h - off < 3.0 * FONT {
            return;
        }
        let chars = ((rect.w - 10.0) / GLYPH) as usize;
        let Some(t) = clip(text, chars) else {
            return;
        };
        let w = (t.chars().count() as f64 * GLYPH + 8.0).min(rect.w - 2.0);
        let _ = write!(
            self.svg,
            "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{w:.2}\" height=\"{:.1}\" rx=\"2\" fill=\"#1d2330\" fill-opacity=\".72\"/><text x=\"{:.2}\" y=\"{:.2}\" font-size=\"{FONT}\" fill=\"#fff\">{}</text>",
            rect.x + 1.0,
            rect.y + off + 1.0,
            FONT + 4.0,
            rect.x + 5.0,
            rect.y + off + FONT + 2.0,
            esc(&t)
        );
        self.mark(rect, w + 2.0, off + FONT + 5.0);
    }
}

fn rect_attrs(r: &Rect) -> String {
    format!(
        "x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\"",
        r.x, r.y, r.w, r.h
    )
}

/// `nixcut why ROOT --format html`.
pub(super) fn why(r: &WhyReport, out: &mut dyn Write) -> io::Result<()> {
    let cats: Vec<Category> = r
        .paths
        .iter()
        .map(|p| Category::of(p, r.evidence))
        .collect();
    let mut gpu: Vec<String> = cats.iter().filter_map(Category::gpu).collect();
    gpu.sort();
    gpu.dedup();
    let palette = Palette { gpu };
    let map = layout(r);
    let fills = fills(r, &cats, &palette, &map);
    let svg = treemap(r, &map, &cats, &fills);
    let title = format!("nixcut why: {}", header(r));
    page(out, &title, |out| {
        writeln!(out, "<header><h1>{}</h1>", esc(&header(r)))?;
        writeln!(
            out,
            "<p class=\"sub\">Treemap of the dominator tree: each block is a store path, its area the <b>added size</b> (what leaving the path out would free), nested inside the path that dominates it. Hover for details, click to pin them.</p></header>"
        )?;
        writeln!(out, "<main><div class=\"map\">")?;
        if r.closure_size == 0 {
            writeln!(
                out,
                "<p class=\"warn\">No NAR sizes are known (the input has none): nothing to draw.</p>"
            )?;
        }
        writeln!(out, "{svg}</div><aside>")?;
        aside(out, r, &map, &cats, &palette, &fills)?;
        writeln!(out, "</aside></main>")
    })
}

/// The fill of every row: its verdict's colour, or without evidence its branch's.
fn fills(r: &WhyReport, cats: &[Category], palette: &Palette, map: &Layout) -> Vec<String> {
    let mut fills: Vec<String> = cats.iter().map(|c| palette.fill(c).to_string()).collect();
    if r.evidence == EvidenceLevel::Graph {
        let mut rank: HashMap<usize, usize> = HashMap::new();
        for d in &map.drawn {
            let next = rank.len();
            let k = *rank.entry(d.branch).or_insert(next);
            let base = BRANCH_COLOURS[k % BRANCH_COLOURS.len()];
            let t = (d.depth.saturating_sub(2) as f64 * 0.16).min(0.6);
            fills[d.row] = lighten(base, t);
        }
    }
    fills
}

/// The treemap's `<svg>`: a block per drawn path and per other block, their borders
/// and their labels.
fn treemap(r: &WhyReport, map: &Layout, cats: &[Category], fills: &[String]) -> String {
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg class=\"pick\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"treemap of the closure by added size\">"
    );
    let _ = write!(
        svg,
        "<rect x=\"0\" y=\"0\" width=\"{W}\" height=\"{H}\" fill=\"#eef0f3\"/>"
    );
    let mut labels = Labels::default();
    let mut borders = Borders::default();
    for d in &map.drawn {
        let p = &r.paths[d.row];
        let cat = &cats[d.row];
        let fill = fills[d.row].as_str();
        let tip = esc_lines(&tooltip(r, p, cat));
        let _ = write!(
            svg,
            "<g data-path=\"{}\" data-added=\"{}\" data-depth=\"{}\"><title>{tip}</title><rect class=\"p\" {} fill=\"{fill}\"/></g>",
            esc(&p.path),
            p.added_size,
            d.depth,
            rect_attrs(&d.rect)
        );
        borders.add(d.depth, &d.rect);
        let size = format!(
            "{} · {}",
            format_size(p.added_size),
            percent(p.added_size, r.closure_size)
        );
        let name = name_of(&p.path);
        let labelled_own = d.own.w >= d.rect.w - 0.01 && d.own.y <= d.rect.y + 0.01;
        if !d.parent || labelled_own || d.depth == 1 {
            // Leaves, parents with a strip, and the roots (the page's title names
            // them) are labelled where their own bytes are.
            labels.plain(&d.own, name, &size, fill);
        } else {
            labels.tag(&d.rect, &format!("{name} · {size}"));
        }
    }
    for o in &map.others {
        let fill = match o.parent {
            Some(i) => fills[i].as_str(),
            None => "#b8c0cc",
        };
        let what = match (o.paths, &r.rest) {
            (0, Some(_)) => "paths not in the report (--top)".to_string(),
            (0, None) => "paths not in the report".to_string(),
            (1, _) => "1 small path and what it holds".to_string(),
            (k, _) => format!("{k} small paths and what they hold"),
        };
        let inside = match o.parent {
            Some(i) => format!(" inside {}", name_of(&r.paths[i].path)),
            None => String::new(),
        };
        let tip = esc_lines(&[format!("other{inside}: {}", format_size(o.bytes)), what]);
        let _ = write!(
            svg,
            "<g class=\"other\" data-bytes=\"{}\"><title>{tip}</title><rect {} fill=\"{fill}\" fill-opacity=\".45\"/></g>",
            o.bytes,
            rect_attrs(&o.rect)
        );
        borders.add(o.depth, &o.rect);
        labels.plain(&o.rect, "other", &format_size(o.bytes), "#ffffff");
    }
    borders.write(&mut svg);
    svg.push_str(&labels.svg);
    svg.push_str("</svg>");
    svg
}

/// Borders, one path per depth: drawn over the fills, deepest first, so that the
/// border of a bigger block stays visible around its children.
#[derive(Default)]
struct Borders(Vec<String>);

impl Borders {
    /// Outline `rc` at `depth`.
    fn add(&mut self, depth: usize, rc: &Rect) {
        if self.0.len() <= depth {
            self.0.resize(depth + 1, String::new());
        }
        let _ = write!(
            self.0[depth],
            "M{:.2} {:.2}h{:.2}v{:.2}h{:.2}Z",
            rc.x, rc.y, rc.w, rc.h, -rc.w
        );
    }

    /// The borders as SVG paths, deepest first, thinner the deeper.
    fn write(&self, svg: &mut String) {
        for (depth, d) in self.0.iter().enumerate().rev() {
            if d.is_empty() {
                continue;
            }
            let width = match depth {
                0 => 3.0,
                1 => 2.2,
                2 => 1.3,
                _ => 0.6,
            };
            let _ = write!(
                svg,
                "<path d=\"{d}\" fill=\"none\" stroke=\"#fff\" stroke-width=\"{width}\" pointer-events=\"none\"/>"
            );
        }
    }
}

/// The side panel: the total, the selected path, the legend, the top paths and the
/// warnings.
fn aside(
    out: &mut dyn Write,
    r: &WhyReport,
    map: &Layout,
    cats: &[Category],
    palette: &Palette,
    fills: &[String],
) -> io::Result<()> {
    writeln!(out, "<h2>Total</h2>")?;
    writeln!(
        out,
        "<p class=\"num\" style=\"font-size:22px;margin:0\">{}</p><p class=\"sub\">{} paths; {} drawn</p>",
        esc(&crate::render::words::why::size_or_unknown(
            r.closure_size,
            r.sizes_known
        )),
        r.path_count,
        map.drawn.len()
    )?;
    writeln!(
        out,
        "<div id=\"details\" hidden><h2>Selected</h2><pre></pre></div>"
    )?;
    legend(out, r, cats, palette)?;
    writeln!(out, "<h2>Top paths</h2><ol class=\"top\">")?;
    for (i, p) in r.paths.iter().take(TOP_LIST).enumerate() {
        let fill = &fills[i];
        writeln!(
            out,
            "<li title=\"{}\"><span class=\"num\">{}</span><span class=\"sw\" style=\"background:{fill}\"></span><span class=\"name\">{}</span></li>",
            esc_lines(&tooltip(r, p, &cats[i])),
            esc(&format_size(p.added_size)),
            esc(name_of(&p.path))
        )?;
    }
    writeln!(out, "</ol><p class=\"sub\">{}.</p>", esc(sort_note(r)))?;
    if let Some(rest) = &r.rest {
        writeln!(
            out,
            "<p class=\"sub\">… {} more paths ({} NAR) not in the report.</p>",
            rest.count,
            esc(&format_size(rest.nar_size))
        )?;
    }
    super::warnings(out, &r.warnings)?;
    Ok(())
}

/// The legend: each category present, with its bytes of added size at the top level.
fn legend(
    out: &mut dyn Write,
    r: &WhyReport,
    cats: &[Category],
    palette: &Palette,
) -> io::Result<()> {
    writeln!(out, "<h2>Colour</h2>")?;
    if r.evidence == EvidenceLevel::Graph {
        return writeln!(
            out,
            "<p class=\"sub\">No files were scanned, so no verdicts: each dependency of the root has its colour, lighter deeper down; faded blocks are the small paths merged into \"other\". Run where the store's files are at hand for colours by evidence.</p>"
        );
    }
    let mut present: Vec<&Category> = cats.iter().collect();
    present.sort();
    present.dedup();
    writeln!(out, "<ul class=\"legend\">")?;
    for c in present {
        writeln!(
            out,
            "<li><span class=\"sw\" style=\"background:{}\"></span>{}</li>",
            palette.fill(c),
            esc(&c.label())
        )?;
    }
    writeln!(
        out,
        "<li><span class=\"sw\" style=\"background:#b8c0cc\"></span>other (small)</li></ul>"
    )?;
    writeln!(
        out,
        "<p class=\"sub\">What keeps each path in: the strongest verdict among the evidence of its referrers (runtime &gt; gpu &gt; unknown &gt; dev &gt; doc &gt; removable).</p>"
    )?;
    Ok(())
}

/// `nixcut why ROOT TARGET --format html`: the chain tree.
pub(super) fn chains(r: &WhyChainsReport, out: &mut dyn Write) -> io::Result<()> {
    let head = chains_header(r);
    page(out, &format!("nixcut why: {head}"), |out| {
        writeln!(
            out,
            "<header><h1>{}</h1></header><main><div class=\"map\">",
            esc(&head)
        )?;
        if let Some(tree) = &r.tree {
            writeln!(out, "<pre class=\"tree\">")?;
            for line in tree_lines(tree) {
                writeln!(out, "{}", esc(&line))?;
            }
            writeln!(out, "</pre>")?;
        }
        super::warnings(out, &r.warnings)?;
        writeln!(out, "</div></main>")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{why as analyse, SortKey, WhyOptions};
    use crate::graph::testutil::{closure, path};

    #[test]
    fn a_cut_chain_is_worded_with_its_ends_and_the_count_left_out() {
        // 0 → 1 → … → 19: the last path's chain cut to 3 paths (0, 18, 19), 17 left out.
        let n = 20;
        let refs: Vec<Vec<usize>> = (0..n)
            .map(|i| if i + 1 < n { vec![i + 1] } else { vec![] })
            .collect();
        let c = closure(&vec![1; n], &refs);
        let opts = |max| WhyOptions {
            max_chain_length: Some(max),
            sort: SortKey::Nar,
            ..Default::default()
        };
        let r = analyse(&c, &opts(3), None).unwrap();
        let name = |i: usize| path(i).to_string();
        let p19 = r
            .paths
            .iter()
            .find(|p| p.path.ends_with(&name(19)))
            .unwrap();
        assert_eq!((p19.chain.len(), p19.chain_omitted), (3, 17));
        let words = chain_words(&p19.chain, p19.chain_omitted);
        assert!(words.contains("(17 more)"), "{words}");
        assert_eq!(
            crate::render::words::why::via(p19),
            format!("{} → … → {}", name_of(&name(0)), name_of(&name(18)))
        );
        // Read back from its JSON, the report words its chains the same.
        let back: WhyReport = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        for (a, b) in r.paths.iter().zip(&back.paths) {
            assert_eq!(
                chain_words(&a.chain, a.chain_omitted),
                chain_words(&b.chain, b.chain_omitted)
            );
            assert_eq!(
                crate::render::words::why::via(a),
                crate::render::words::why::via(b)
            );
        }
        // Cut to the root and the path: no referrer to name.
        let r2 = analyse(&c, &opts(2), None).unwrap();
        let p19 = r2
            .paths
            .iter()
            .find(|p| p.path.ends_with(&name(19)))
            .unwrap();
        assert_eq!(
            crate::render::words::why::via(p19),
            format!("{} → …", name_of(&name(0)))
        );
        assert!(chain_words(&p19.chain, 18).contains("(18 more)"));
    }

    /// 0 → {1, 2}; 1 → {3, 4}; 2 → 4; 4 → 5; 6 is a small leaf of the root.
    fn report(top: Option<usize>, sort: SortKey) -> WhyReport {
        let c = closure(
            &[
                100_000, 5_000_000, 3_000_000, 2_000_000, 800_000, 4_000_000, 3,
            ],
            &[
                vec![1, 2, 6],
                vec![3, 4],
                vec![4],
                vec![],
                vec![5],
                vec![],
                vec![],
            ],
        );
        let opts = WhyOptions {
            top,
            sort,
            ..Default::default()
        };
        analyse(&c, &opts, None).unwrap()
    }

    fn inside(a: &Rect, b: &Rect) -> bool {
        let e = 1e-6;
        a.x >= b.x - e && a.y >= b.y - e && a.x + a.w <= b.x + b.w + e && a.y + a.h <= b.y + b.h + e
    }

    #[test]
    fn areas_follow_added_size_and_nest_in_the_dominator() {
        let r = report(None, SortKey::Added);
        let map = layout(&r);
        let per_byte = W * H / r.closure_size as f64;
        let rect_of: HashMap<&str, Rect> = map
            .drawn
            .iter()
            .map(|d| (r.paths[d.row].path.as_str(), d.rect))
            .collect();
        // The 3-byte leaf is far below MIN_AREA: it is in the root's "other" block.
        assert_eq!(map.drawn.len(), 6);
        assert_eq!(map.others.len(), 1);
        assert_eq!(map.others[0].bytes, 3);
        assert!(map.others[0].parent.is_some());
        for d in &map.drawn {
            let p = &r.paths[d.row];
            let want = p.added_size as f64 * per_byte;
            assert!((d.rect.area() - want).abs() < 1e-6 * want, "{}", p.path);
            if let Some(dom) = &p.dominator {
                assert!(inside(&d.rect, &rect_of[dom.as_ref()]), "{}", p.path);
            }
        }
        // 4 (and 5 under it) is shared by 1 and 2: dominated by the root, not by 1.
        let four = format!("/nix/store/{}", path(4));
        let row = r.paths.iter().find(|p| p.path == four).unwrap();
        assert_eq!(row.dominator.as_deref(), Some(r.paths[0].path.as_str()));
    }

    #[test]
    fn paths_left_out_by_top_fill_an_other_block() {
        let r = report(Some(2), SortKey::Added);
        let map = layout(&r);
        assert_eq!(map.drawn.len(), 2);
        let other: u64 = map.others.iter().map(|o| o.bytes).sum();
        let drawn_own: u64 = map.drawn.iter().map(|d| r.paths[d.row].nar_size).sum();
        assert_eq!(other + drawn_own, r.closure_size);
    }

    #[test]
    fn dominators_left_out_by_another_sort_do_not_break_the_page() {
        // Ranked by NAR size, the top 3 leave out the root that dominates them.
        let r = report(Some(3), SortKey::Nar);
        let map = layout(&r);
        let canvas = Rect {
            x: 0.0,
            y: 0.0,
            w: W,
            h: H,
        };
        assert!(map.drawn.iter().all(|d| inside(&d.rect, &canvas)));
        let mut page = Vec::new();
        why(&r, &mut page).unwrap();
    }

    #[test]
    fn hostile_strings_in_a_report_stay_text() {
        let r = report(None, SortKey::Added);
        let hostile = "<script>alert(1)</script></svg>\"'&\n\u{202e}x";
        let json = serde_json::to_string(&r).unwrap().replace(
            &path(1).to_string(),
            serde_json::to_string(hostile).unwrap().trim_matches('"'),
        );
        let mut r: WhyReport = serde_json::from_str(&json).unwrap();
        r.warnings
            .push(crate::report::WhyWarning::Input(hostile.to_string()));
        let mut page = Vec::new();
        why(&r, &mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        assert_eq!(page.matches("<script").count(), 1);
        assert_eq!(page.matches("</svg>").count(), 1);
        assert!(!page.contains('\u{202e}') && !page.contains("//"));
        assert!(page.contains(
            "&lt;script&gt;alert(1)&lt;/script&gt;&lt;/svg&gt;&quot;&#39;&amp;\\x0a\\u{202e}x"
        ));
    }
}
