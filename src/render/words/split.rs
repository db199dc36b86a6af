//! The words of the `split` report: headings, one line per action, the sentences for
//! `no_split`, assumptions and remedies. Shared by the table and Markdown formats.

use crate::report::{
    Assumption, AssumptionReason, NoSplit, NoSplitReason, RemedyOption, SplitAction, SplitReport,
};
use crate::store::format_size;

/// The heading: package and its size now.
pub(crate) fn heading(r: &SplitReport) -> String {
    format!("split {} ({} now)", r.package, format_size(r.package_size))
}

/// What `no_split` says.
pub(crate) fn no_split(n: &NoSplit) -> String {
    match n.reason {
        NoSplitReason::OnlyRuntimeFiles => format!(
            "no split: every file is a run-time file ({}) and none of its {} reference(s) can be cut",
            if n.classes.is_empty() {
                "none".to_string()
            } else {
                n.classes.join(", ")
            },
            n.references
        ),
        NoSplitReason::FilesUnavailable => {
            "no split: the package's files are not available, so there is no evidence to split by"
                .to_string()
        }
    }
}

/// One line per action, as a maintainer would read it.
pub(crate) fn action(a: &SplitAction) -> String {
    match a {
        SplitAction::Move { path, to, because } => {
            let n: u64 = because
                .iter()
                .filter_map(|b| b.detail.parse::<u64>().ok())
                .sum();
            let classes: Vec<&str> = because.iter().map(|b| b.kind.as_str()).collect();
            format!(
                "move {path} to {to} ({n} file(s), class {})",
                classes.join(", ")
            )
        }
        SplitAction::Delete { path, because } => format!(
            "delete {path} ({})",
            because.first().map_or("", |b| b.kind.as_str())
        ),
        SplitAction::RemoveReferences {
            target,
            files,
            because,
        } => format!(
            "remove-references-to -t {target} in {} ({})",
            files.join(", "),
            because.first().map_or("", |b| b.kind.as_str())
        ),
        SplitAction::ShrinkRpath {
            files, drop, kept, ..
        } => format!(
            "patchelf --set-rpath {} {} (drops {})",
            if kept.is_empty() { "''" } else { kept },
            files.join(" "),
            drop.join(":")
        ),
        SplitAction::DropGpuArch { arch, paths, .. } => {
            format!("drop {arch}: {} path(s)", paths.len())
        }
    }
}

/// What an assumption says.
pub(crate) fn assumption(a: &Assumption) -> String {
    let why = match a.reason {
        AssumptionReason::NoSubPath => "names no sub-path",
        AssumptionReason::SeveralOutputs => "names a directory in several outputs",
        AssumptionReason::SubPathMissing => "names a sub-path the split package does not keep",
        AssumptionReason::NotScanned => "was not scanned",
    };
    let at = if a.file.is_empty() {
        String::new()
    } else {
        format!(" {}@{}", a.file, a.offset.unwrap_or(0))
    };
    format!("{}{at} {why}: assumed to land on {}", a.from, a.output)
}

/// One remedy option.
pub(crate) fn remedy_option(o: &RemedyOption) -> String {
    match o {
        RemedyOption::Rebuild { nix } => format!("rebuild with fewer targets: {nix}"),
        RemedyOption::EnvVar { name, value } => format!("set {name}={value} (a wrapper)"),
        RemedyOption::SymlinkBack => {
            "symlink the files back into out (brings the closure edge back)".to_string()
        }
    }
}
