//! The colours of the `why` treemap: what colours a block ([`Category`]: the verdict
//! that keeps the path in, or why there is none), the fill of each category, the
//! text colour on a fill, and the branch colours of a closure without evidence.

use std::cmp::{Ordering, Reverse};

use crate::classify::Verdict;
use crate::report::{EvidenceLevel, WhyPath};

/// What colours a rectangle: the verdict that keeps the path in, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Category {
    /// The strongest verdict among its referrers' evidence.
    Verdict(Verdict),
    /// Files were scanned, but no referrer's evidence is attached (a root, or a path
    /// whose referrers were not scanned).
    NoEvidence,
    /// Only the reference graph: nothing was scanned.
    GraphOnly,
}

impl Category {
    pub(super) fn of(p: &WhyPath, level: EvidenceLevel) -> Category {
        if level == EvidenceLevel::Graph {
            return Category::GraphOnly;
        }
        match p.kept_by.iter().map(|h| &h.verdict).max() {
            None => Category::NoEvidence,
            Some(v) => Category::Verdict(v.clone()),
        }
    }

    pub(super) fn label(&self) -> String {
        match self {
            Category::Verdict(v) => v.to_string(),
            Category::NoEvidence => "no evidence".into(),
            Category::GraphOnly => "not scanned (graph only)".into(),
        }
    }

    /// The label of a GPU verdict, which picks its colour.
    pub(super) fn gpu(&self) -> Option<String> {
        match self {
            Category::Verdict(v @ Verdict::Gpu(_)) => Some(v.to_string()),
            _ => None,
        }
    }
}

/// The legend's order: the strongest verdict first, then the paths without one.
impl Ord for Category {
    fn cmp(&self, other: &Self) -> Ordering {
        let key = |c: &Category| match c {
            Category::Verdict(v) => (0, Some(Reverse(v.clone()))),
            Category::NoEvidence => (1, None),
            Category::GraphOnly => (2, None),
        };
        key(self).cmp(&key(other))
    }
}

impl PartialOrd for Category {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Warm colours for the GPU architectures, in order of their names.
pub(super) const GPU_COLOURS: [&str; 8] = [
    "#e8743b", "#d94f70", "#b9539f", "#f2a93b", "#c0392b", "#8e5ea2", "#ff8f66", "#a0522d",
];

/// Fill colours: one per category (GPU architectures by their rank among those shown).
pub(super) struct Palette {
    pub(super) gpu: Vec<String>,
}

impl Palette {
    pub(super) fn fill(&self, c: &Category) -> &'static str {
        match c {
            Category::Verdict(Verdict::Runtime) => "#4e79a7",
            Category::Verdict(v @ Verdict::Gpu(_)) => {
                let label = v.to_string();
                let i = self.gpu.iter().position(|g| *g == label).unwrap_or(0);
                GPU_COLOURS[i % GPU_COLOURS.len()]
            }
            Category::Verdict(Verdict::Unknown) => "#9d8f84",
            Category::Verdict(Verdict::Dev) => "#47a6a0",
            Category::Verdict(Verdict::Doc) => "#6aa84f",
            Category::Verdict(Verdict::Removable) => "#e03e3e",
            Category::NoEvidence => "#8c9bb0",
            Category::GraphOnly => "#7f93ad",
        }
    }
}

/// Text colour on a fill: dark on light fills, white otherwise.
pub(super) fn ink(fill: &str) -> &'static str {
    let v = u32::from_str_radix(fill.trim_start_matches('#'), 16).unwrap_or(0);
    let (r, g, b) = ((v >> 16) & 255, (v >> 8) & 255, v & 255);
    if r * 299 + g * 587 + b * 114 > 150_000 {
        "#17202c"
    } else {
        "#fff"
    }
}

/// Distinct colours for a closure without evidence: one per branch (a dependency of
/// the root), lighter with depth.
pub(super) const BRANCH_COLOURS: [&str; 9] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f",
];

/// `hex` mixed with white by `t` (0 to 1).
pub(super) fn lighten(hex: &str, t: f64) -> String {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
    let mix = |c: u32| (c as f64 + (255.0 - c as f64) * t).round() as u32;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix((v >> 16) & 255),
        mix((v >> 8) & 255),
        mix(v & 255)
    )
}
