//! The HTML format: one self-contained page per report, for a browser, a pull
//! request attachment or a CI artefact. Inline CSS, inline SVG and a few lines of
//! inline JavaScript (click for details); no external script, style, font or image,
//! and no `//` anywhere, so the page works offline and fetches nothing. Without
//! JavaScript the SVG is still the whole picture, with `<title>` tooltips.
//!
//! `why` is a treemap of the dominator tree ([`why`], laid out by [`treemap`]);
//! `why ROOT TARGET` is the chain tree; `diff` is a diverging bar chart of the
//! packages' impact. `refs` and `check` have no picture: asking for one is an error.
//! Every string from the report is escaped by [`escape::esc`].

mod colours;
mod diff;
mod escape;
mod gpu;
mod page;
mod set_diff;
mod split;
mod store;
mod treemap;
mod why;

pub use escape::esc;
pub(crate) use escape::is_invisible_format;
use page::{page, warnings};

use std::io::{self, Write};

use super::Report;

/// Write `report` as one HTML page.
pub(super) fn render(report: Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    match report {
        Report::Why(r) => why::why(r, out),
        Report::WhyChains(r) => why::chains(r, out),
        Report::Diff(r) => diff::diff(r, out),
        Report::Refs(_) => Err(super::unsupported("html", "refs")),
        Report::Check(_) => Err(super::unsupported("html", "check")),
        Report::Split(r) => split::split(r, out),
        Report::Gpu(r) => gpu::gpu(r, out),
        Report::Rules(_) => Err(super::unsupported("html", "rules")),
        Report::SetDiff(r) => set_diff::set_diff(r, out),
        Report::Store(r) => store::store(r, out),
    }
}
