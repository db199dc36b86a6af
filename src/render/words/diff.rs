//! The words of the `diff` report: version changes in `nix store diff-closures`
//! notation and the side a warning came from (both also its JSON, through the
//! `Serialize` impls here), the header and count lines, the version and path-count
//! columns, and the note on what the sizes mean; shared by table and Markdown.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::render::text::{format_delta, name_of};
use crate::report::{DiffReport, DiffWarning, PackageChange, PackageDiff, Side, VersionChange};
use crate::store::format_size;

/// `5.7.1, 6.0.0`; `∅` for none, `ε` for an empty version.
fn show_versions(f: &mut fmt::Formatter<'_>, v: &[String]) -> fmt::Result {
    if v.is_empty() {
        return f.write_str("∅");
    }
    for (i, s) in v.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        f.write_str(if s.is_empty() { "ε" } else { s })?;
    }
    Ok(())
}

/// `5.7.1 → 6.0.0`, `∅ → 1.0`; nothing when the versions did not change.
impl fmt::Display for VersionChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return Ok(());
        }
        show_versions(f, &self.gone)?;
        f.write_str(" → ")?;
        show_versions(f, &self.came)
    }
}

/// `OLD: …`, `NEW: …`.
impl fmt::Display for DiffWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = match self.side {
            Side::Old => "OLD",
            Side::New => "NEW",
            Side::Both => "OLD and NEW",
        };
        write!(f, "{side}: {}", self.warning)
    }
}

/// In JSON a version change is its notation (`""` when none).
impl Serialize for VersionChange {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// In JSON a warning is its sentence.
impl Serialize for DiffWarning {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

fn side_name(roots: &[String], root: &str) -> String {
    if roots.len() > 1 {
        format!("{} roots", roots.len())
    } else {
        name_of(root).to_string()
    }
}

/// `old → new: closure 4.8 MiB → 6.9 MiB (+2.0 MiB, +41.0%)`.
pub(crate) fn header(r: &DiffReport) -> String {
    let pct = match r.closure_size_change_percent() {
        Some(p) => format!(", {}", crate::render::text::signed_percent(p)),
        None => String::new(),
    };
    let (o, n) = (&r.old.closure, &r.new.closure);
    format!(
        "{} → {}: closure {} → {} ({}{pct})",
        side_name(&o.roots, &o.root),
        side_name(&n.roots, &n.root),
        format_size(r.old.closure_size),
        format_size(r.new.closure_size),
        format_delta(r.closure_size_delta),
    )
}

/// The path counts of the whole diff, in thousands-separated numbers; a rebuild says
/// how many rebuilt paths kept their size (`100,000 paths rebuilt, 90,000 with the same
/// size`), which tells a mass rebuild from real growth.
pub(crate) fn counts(r: &DiffReport) -> String {
    use crate::render::text::thousands;
    let n = |x: usize| thousands(x as u64);
    let rebuilt = if r.paths_changed > 0 {
        format!(
            "{} rebuilt ({} with the same size)",
            n(r.paths_changed),
            n(r.paths_changed_same_size)
        )
    } else {
        "0 rebuilt".to_string()
    };
    format!(
        "paths: {} added, {} removed, {rebuilt}, {} unchanged; {} → {}",
        n(r.paths_added),
        n(r.paths_removed),
        n(r.paths_unchanged),
        n(r.old.path_count),
        crate::render::text::count(r.new.path_count as u64, "path", "paths")
    )
}

/// The version cell of a table: like [`versions`], with long lists shortened
/// (`0, 10, … (6,604 versions) → …`); JSON keeps every version.
pub(crate) fn versions_short(p: &PackageDiff) -> String {
    use crate::render::text::version_list;
    match p.change {
        PackageChange::Rebuilt => {
            if p.new_versions.is_empty() {
                "rebuilt".to_string()
            } else {
                format!("{} (rebuilt)", version_list(&p.new_versions))
            }
        }
        _ if p.version_change.is_empty() => String::new(),
        _ => format!(
            "{} → {}",
            version_list(&p.version_change.gone),
            version_list(&p.version_change.came)
        ),
    }
}

/// `+1 −1 ~2`: paths added, removed, changed within the package.
pub(crate) fn path_counts(p: &PackageDiff) -> String {
    let c = p.path_counts();
    [(c.added, "+"), (c.removed, "−"), (c.changed, "~")]
        .into_iter()
        .filter(|&(n, _)| n > 0)
        .map(|(n, sign)| format!("{sign}{n}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the size columns mean.
pub(crate) const NOTE: &str = "impact: what the package's new paths bring into the closure \
beyond the old one, minus what its old paths brought (added size over the shared part; \
impacts overlap). NAR Δ: change of the package's own NAR sizes, as `nix store \
diff-closures` counts it.";

#[cfg(test)]
mod tests {
    use super::*;

    fn change(gone: &[&str], came: &[&str]) -> VersionChange {
        VersionChange {
            gone: gone.iter().map(|s| s.to_string()).collect(),
            came: came.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn version_changes_in_diff_closures_notation() {
        assert_eq!(change(&["5.7.1"], &["6.0.0"]).to_string(), "5.7.1 → 6.0.0");
        assert_eq!(change(&[], &["1.0"]).to_string(), "∅ → 1.0");
        assert_eq!(change(&["", "2"], &[]).to_string(), "ε, 2 → ∅");
        assert_eq!(change(&[], &[]).to_string(), "");
        assert_eq!(
            serde_json::to_string(&change(&[], &["1.0"])).unwrap(),
            "\"∅ → 1.0\""
        );
    }

    #[test]
    fn warnings_say_their_side() {
        let w = DiffWarning {
            side: Side::New,
            warning: crate::store::LoadWarning::NoNarSizes { file: "g".into() },
        };
        let said = "NEW: g: an exportReferencesGraph file has no NAR sizes: sizes unknown";
        assert_eq!(w.to_string(), said);
        assert_eq!(serde_json::to_string(&w).unwrap(), format!("\"{said}\""));
    }
}
