//! The page every HTML report is written into ([`page`]: doctype, the shared style and
//! script) and its warning lines ([`warnings`]).

use std::io::{self, Write};

use super::escape::esc;

/// One `<p class="warn">` line per warning of a report, each escaped.
pub(super) fn warnings(out: &mut dyn Write, warnings: &[impl std::fmt::Display]) -> io::Result<()> {
    for w in warnings {
        writeln!(
            out,
            "<p class=\"warn\">warning: {}</p>",
            esc(&w.to_string())
        )?;
    }
    Ok(())
}

/// The page's shared style: a two-column layout, the legend, the tooltips' panel.
const CSS: &str = "
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;color:#1d2330;background:#f6f7f9}
header{padding:14px 20px 6px}
h1{font-size:20px;margin:0 0 2px}
h2{font-size:14px;margin:14px 0 6px;text-transform:uppercase;letter-spacing:.04em;color:#5a6272}
.sub{color:#5a6272;margin:0}
main{display:flex;gap:18px;padding:8px 20px 20px;align-items:flex-start}
.map{flex:1 1 auto;min-width:0}
.map svg{width:100%;height:auto;display:block;background:#fff;border:1px solid #d5d9e0;border-radius:4px}
aside{flex:0 0 340px;min-width:0;max-width:340px;overflow-wrap:anywhere;background:#fff;border:1px solid #d5d9e0;border-radius:4px;padding:4px 14px 12px}
.legend{list-style:none;padding:0;margin:0;display:flex;flex-wrap:wrap;gap:2px 14px}
.legend li{margin:1px 0}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:6px;vertical-align:-1px}
ol.top{padding-left:22px;margin:0}
ol.top li{margin:1px 0}
.num{font-variant-numeric:tabular-nums;white-space:nowrap}
.top .num{float:right;margin-left:8px;color:#3c4454}
.name{overflow-wrap:anywhere}
#details pre{white-space:pre-wrap;overflow-wrap:anywhere;font:12px/1.35 ui-monospace,'DejaVu Sans Mono',monospace;background:#f3f4f7;padding:8px;border-radius:3px;margin:0}
.warn{color:#8a4b00}
svg text{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;pointer-events:none}
svg .hl{fill:none;stroke:#111;stroke-width:2.5;pointer-events:none}
svg g:hover>rect{filter:brightness(1.08)}
table{border-collapse:collapse;width:100%;background:#fff}
td,th{padding:3px 8px;border-bottom:1px solid #e3e6eb;text-align:left}
td.num,th.num{text-align:right}
pre.tree{background:#fff;border:1px solid #d5d9e0;padding:10px;overflow:auto;font:12px/1.35 ui-monospace,'DejaVu Sans Mono',monospace}
";

/// Click on any `<g>` with a `<title>` in an `svg.pick`: outline it and show the
/// title's text in `#details`. No comments with slashes: the page has no `//`.
const JS: &str = "
(function(){
var svg=document.querySelector('svg.pick');var box=document.getElementById('details');
if(!svg||!box)return;var pre=box.querySelector('pre');
var hl=document.createElementNS(svg.namespaceURI,'rect');hl.setAttribute('class','hl');
function show(g){var t=g.querySelector('title');var r=g.querySelector('rect');if(!t||!r)return;
['x','y','width','height'].forEach(function(a){hl.setAttribute(a,r.getAttribute(a));});
svg.appendChild(hl);pre.textContent=t.textContent;box.hidden=false;}
svg.addEventListener('click',function(e){var g=e.target.closest('g[data-path],g[data-package],g.other');if(g)show(g);});
})();
";

/// Write the page around `body`: doctype, charset, title and style; the script last.
pub(super) fn page(
    out: &mut dyn Write,
    title: &str,
    body: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    writeln!(out, "<!DOCTYPE html>")?;
    writeln!(out, "<html lang=\"en\"><head><meta charset=\"utf-8\">")?;
    writeln!(
        out,
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
    )?;
    writeln!(out, "<meta name=\"generator\" content=\"nixcut\">")?;
    writeln!(out, "<title>{}</title>", esc(title))?;
    writeln!(out, "<style>{CSS}</style></head><body>")?;
    body(out)?;
    writeln!(out, "<script>{JS}</script>")?;
    writeln!(out, "</body></html>")
}
