//! A package-set diff (or check) as one HTML page: the summary, a bar per cause on a
//! shared axis (growth red to the right, shrinkage green to the left), and the tables of
//! causes and roots.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::escape::esc;
use super::page;
use crate::render::text::format_delta;
use crate::render::words::set_diff as words;
use crate::report::SetDiffReport;

const W: f64 = 1000.0;
const NAMES: f64 = 300.0;
const ROW: f64 = 22.0;
const MAX_BARS: usize = 60;
/// Rows of the roots table.
const MAX_ROOTS: usize = 2000;

pub(super) fn set_diff(r: &SetDiffReport, out: &mut dyn Write) -> io::Result<()> {
    page(out, &words::header(r), |out| {
        let mut s = String::new();
        let _ = writeln!(s, "<header><h1>{}</h1>", esc(&words::header(r)));
        let _ = writeln!(s, "<p class=\"sub\">{}</p>", esc(&words::counts(r)));
        let _ = writeln!(s, "<p class=\"sub\">{}</p>", esc(&words::rebuild(r)));
        for line in words::verdict(r) {
            let _ = writeln!(s, "<p><b>{}</b></p>", esc(&line));
        }
        if let Some(c) = &r.check {
            let _ = writeln!(s, "<ul>");
            for f in &c.failed {
                let _ = writeln!(s, "<li>{}</li>", esc(&words::failed_root(f)));
            }
            for f in &c.failed_new {
                let _ = writeln!(s, "<li>{}</li>", esc(&words::failed_new_root(f)));
            }
            let _ = writeln!(s, "</ul>");
        }
        let _ = writeln!(s, "</header><div style=\"padding:8px 20px\">");
        let bars: Vec<_> = r.causes.iter().take(MAX_BARS).collect();
        let max = bars
            .iter()
            .map(|c| c.bytes.unsigned_abs())
            .max()
            .unwrap_or(1)
            .max(1) as f64;
        let h = ROW * bars.len() as f64 + 10.0;
        let mid = NAMES + (W - NAMES) / 2.0;
        let half = (W - NAMES) / 2.0 - 70.0;
        let _ = writeln!(
            s,
            "<h2>Causes</h2><svg viewBox=\"0 0 {W} {h}\" width=\"100%\" role=\"img\" \
             style=\"background:#fff;border:1px solid #d5d9e0\">"
        );
        for (i, c) in bars.iter().enumerate() {
            let y = 5.0 + ROW * i as f64;
            let len = c.bytes.unsigned_abs() as f64 / max * half;
            let (x, color) = if c.bytes >= 0 {
                (mid, "#d64541")
            } else {
                (mid - len, "#2e9e5b")
            };
            let _ = writeln!(
                s,
                "<g><title>{}</title><text x=\"4\" y=\"{:.1}\" font-size=\"12\">{}</text>\
                 <rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{len:.1}\" height=\"{:.1}\" fill=\"{color}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text></g>",
                esc(&format!("{}\n{}", words::cause(c), words::chain(c))),
                y + 14.0,
                esc(&format!("{} ({})", c.name, c.change.as_str())),
                y + 3.0,
                ROW - 6.0,
                if c.bytes >= 0 { mid + len + 4.0 } else { mid + 4.0 },
                y + 14.0,
                esc(&format_delta(c.bytes))
            );
        }
        let _ = writeln!(
            s,
            "<line x1=\"{mid}\" x2=\"{mid}\" y1=\"0\" y2=\"{h}\" stroke=\"#888\"/></svg>"
        );
        let _ = writeln!(
            s,
            "<table><tr><th>#</th><th>cause</th><th>change</th><th>roots</th><th>bytes</th>\
             <th>example chain</th></tr>"
        );
        for (i, c) in r.causes.iter().enumerate() {
            let _ = writeln!(
                s,
                "<tr><td class=\"num\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"name\">{}</td></tr>",
                i + 1,
                esc(&format!("{} {}", c.name, words::versions(c))),
                c.change.as_str(),
                c.roots,
                esc(&format_delta(c.bytes)),
                esc(&words::chain(c))
            );
        }
        let downloads = words::has_downloads(r);
        let _ = writeln!(
            s,
            "</table><h2>Roots, by size of change</h2><table><tr><th>#</th><th>root</th>\
             <th>old</th><th>new</th><th>Δ</th><th>%</th>{}</tr>",
            if downloads { "<th>download</th>" } else { "" }
        );
        for (i, root) in r.roots.iter().take(MAX_ROOTS).enumerate() {
            let _ = write!(
                s,
                "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
                i + 1,
                esc(&words::root_name(root)),
                esc(&words::size(&root.old)),
                esc(&words::size(&root.new)),
                esc(&format_delta(root.delta)),
                esc(&words::percent(root.percent))
            );
            if downloads {
                let _ = write!(s, "<td class=\"num\">{}</td>", esc(&words::download(root)));
            }
            let _ = writeln!(s, "</tr>");
        }
        let hidden = r.roots.len().saturating_sub(MAX_ROOTS) + r.rest.map_or(0, |x| x.roots);
        if hidden > 0 {
            let _ = writeln!(
                s,
                "<tr><td></td><td>{} (--format json has every one)</td></tr>",
                esc(&words::more(hidden, "root", "roots"))
            );
        }
        let _ = writeln!(s, "</table><p class=\"sub\">{}</p>", esc(words::NOTE));
        for w in &r.warnings {
            let _ = writeln!(s, "<p class=\"sub\">warning: {}</p>", esc(&w.to_string()));
        }
        let _ = writeln!(s, "</div>");
        out.write_all(s.as_bytes())
    })
}
