//! The words of the `split` report: headings, one line per action, the sentences for
//! `no_split`, assumptions and remedies. Shared by the table and Markdown formats.

use crate::report::{
    Assumption, AssumptionReason, BecauseDetail, NoSplit, NoSplitReason, Remedy, RemedyOption,
    SplitAction, SplitReport,
};
use crate::store::format_size;

/// `s` with control characters escaped, for a terminal or a Markdown line (names come
/// from the package's files and may hold anything).
pub(crate) fn printable(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// The heading: package and its size now.
pub(crate) fn heading(r: &SplitReport) -> String {
    format!("split {} ({} now)", r.package, format_size(r.package_size))
}

/// The label above the split as attributes of the package's own expression: the
/// attribute set to add, or (with `--expr`) the change to FILE.
pub(crate) fn expression_label(r: &SplitReport) -> Option<String> {
    match &r.expression {
        Some(e) => Some(format!(
            "The same split as a change to {} (unified diff):",
            printable(&e.file)
        )),
        None if !crate::render::nix::split_attributes(r).is_empty() => {
            Some("Attributes to add to the package's mkDerivation (no --expr given):".to_string())
        }
        None => None,
    }
}

/// What `no_split` says.
pub(crate) fn no_split(n: &NoSplit) -> String {
    match n.reason {
        NoSplitReason::OnlyRuntimeFiles => format!(
            "no split: every file is a run-time file ({}) and {}",
            if n.classes.is_empty() {
                "none".to_string()
            } else {
                n.classes.join(", ")
            },
            match n.references {
                0 => "it has no references".to_string(),
                k => format!("none of its {k} reference(s) can be cut"),
            }
        ),
        NoSplitReason::FilesUnavailable => {
            "no split: the package's files are not available, so there is no evidence to split by"
                .to_string()
        }
    }
}

/// One line per action, as a maintainer would read it.
/// Where an architecture's files are: its output, or "not built" (a rebuild with
/// fewer `gpuTargets`).
pub(crate) fn arch_output(a: &crate::report::ArchRow) -> String {
    if a.output.is_empty() {
        "not built".to_string()
    } else {
        printable(&a.output)
    }
}

pub(crate) fn action(a: &SplitAction) -> String {
    printable(&match a {
        SplitAction::Move { path, to, because } => {
            let n: u64 = because.iter().map(|b| b.count).sum();
            let classes: Vec<String> = because.iter().map(|b| b.kind.to_string()).collect();
            format!(
                "move {path} to {to} ({}, class {})",
                crate::render::text::count(n, "file", "files"),
                classes.join(", ")
            )
        }
        SplitAction::Delete { path, because } => format!(
            "delete {path} ({})",
            because
                .first()
                .map_or(String::new(), |b| b.kind.to_string())
        ),
        SplitAction::RemoveReferences {
            target,
            files,
            because,
        } => format!(
            "remove-references-to -t {target} in {} ({})",
            files.join(", "),
            because
                .first()
                .map_or(String::new(), |b| b.kind.to_string())
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
            format!(
                "drop {arch}: {}",
                crate::render::text::count(paths.len() as u64, "path", "paths")
            )
        }
        SplitAction::Rewrite {
            output,
            file,
            from,
            to,
            ..
        } => format!("rewrite {from} to {to} in {file} of {output}"),
    })
}

/// An evidence item's kind as JSON and the Nix comments name it (`elf-needed`, `lib`).
impl std::fmt::Display for crate::report::BecauseKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// What an evidence item says of its place.
impl std::fmt::Display for BecauseDetail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BecauseDetail::None => Ok(()),
            BecauseDetail::Hit(h) => h.fmt(f),
            BecauseDetail::Text(t) => f.write_str(t),
            BecauseDetail::MovesTo { sub, output } => {
                write!(f, "names $out/{sub}, which moves to {output}")
            }
            BecauseDetail::MovedAway {
                from,
                sub,
                output,
                now_in,
            } => write!(
                f,
                "{from} resolves to {sub} of {output}, but that is in {now_in} after the moves"
            ),
        }
    }
}

impl serde::Serialize for BecauseDetail {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
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
    printable(&format!(
        "{}{at} {why}: assumed to land on {}",
        a.from, a.output
    ))
}

/// One remedy option.
pub(crate) fn remedy_option(o: &RemedyOption) -> String {
    match o {
        RemedyOption::Rebuild { rebuild } => format!("rebuild with fewer targets: {rebuild}"),
        RemedyOption::EnvVar { name, value } => format!("set {name}={value} (a wrapper)"),
        RemedyOption::SymlinkBack => {
            "symlink the files back into out (brings the closure edge back)".to_string()
        }
    }
}

/// Remedies grouped by the directory the files came from: one heading naming every
/// output, then the first remedy's options (the others differ only in the output).
pub(crate) fn remedy_groups(remedies: &[Remedy]) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(&Remedy, Vec<&str>)> = Vec::new();
    for m in remedies {
        match groups
            .iter_mut()
            .find(|(g, _)| g.directory == m.directory && g.library == m.library)
        {
            Some((_, outs)) => outs.push(&m.output),
            None => groups.push((m, vec![&m.output])),
        }
    }
    groups
        .into_iter()
        .map(|(m, outs)| {
            let heading = format!(
                "files moved to {} ({}{}) are found again by:",
                outs.join(", "),
                m.directory,
                m.library
                    .as_deref()
                    .map(|l| format!(", opened by {l}"))
                    .unwrap_or_default()
            );
            let options = m
                .options
                .iter()
                .map(|o| match o {
                    RemedyOption::EnvVar { .. } if outs.len() > 1 => {
                        format!("{} (shown for {})", remedy_option(o), m.output)
                    }
                    _ => remedy_option(o),
                })
                .collect();
            (heading, options)
        })
        .collect()
}

/// stdenv's own file in a cycle's edge.
const STDENV_FILE: &str = "nix-support/propagated-build-inputs (stdenv)";

/// `files`, then stdenv's own file when it is one of them, separated by commas.
fn with_stdenv(files: &[String], stdenv: bool) -> String {
    let mut v: Vec<&str> = files.iter().map(String::as_str).collect();
    if stdenv {
        v.push(STDENV_FILE);
    }
    v.join(", ")
}

/// `lib/a.so lib/b.so (out) names dev`.
impl std::fmt::Display for crate::report::CycleEdge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}) names {}",
            with_stdenv(&self.files, self.stdenv),
            self.from,
            self.to
        )
    }
}

fn joined<T: std::fmt::Display>(items: &[T], sep: &str) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(sep)
}

impl std::fmt::Display for crate::report::SplitWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::report::SplitWarning as W;
        match self {
            W::Load(w) => w.fmt(f),
            W::Input(w) => f.write_str(w),
            W::Evidence { path, warning } => write!(f, "{path}: {warning}"),
            W::CycleBroken {
                outputs,
                edges,
                moved,
                moved_stdenv,
                to,
            } => write!(
                f,
                "outputs {} would refer to each other in a cycle, which Nix refuses: {}; so \
                 {} go(es) to {to} instead",
                outputs.join(" and "),
                joined(edges, "; "),
                with_stdenv(moved, *moved_stdenv)
            ),
            W::CycleRemains { outputs, edges } => write!(
                f,
                "outputs {} still refer to each other in a cycle: {}; Nix will refuse this \
                 split",
                outputs.join(" and "),
                joined(edges, "; ")
            ),
            W::ConfigNotKept {
                package,
                file,
                size,
                max,
            } => {
                let why = if size > max {
                    format!(
                        "({size} bytes) is larger than the {max} bytes nixcut reads of a \
                         build-configuration file"
                    )
                } else {
                    "(a build-configuration file) could not be read whole".to_string()
                };
                write!(
                    f,
                    "{package}: {file} {why}, so the paths it names were not checked after \
                     the moves"
                )
            }
            W::PrefixNotRewritten { file, sub, output } => write!(
                f,
                "{file}: $out/{sub} is also the start of another path it names, so it is not \
                 rewritten to ${output}"
            ),
            W::KeptForRunTime { file, target, sub } => write!(
                f,
                "{file}: names {target}/{sub}, which a program may use at run time (a \
                 compiler's -I directory, a script an interpreter runs), so the reference is \
                 kept"
            ),
            W::DlopenPatterns { file, patterns } => write!(
                f,
                "{file}: its RUNPATH is kept whole: it formats library names for dlopen ({}), \
                 so any directory of it may supply one",
                patterns.join(", ")
            ),
            W::RunpathUnexpanded { file } => write!(
                f,
                "{file}: a RUNPATH entry could not be expanded, so its RUNPATH is left as it is"
            ),
            W::OutputStillNeeded {
                output,
                package,
                uses,
            } => {
                let uses: Vec<String> = uses
                    .iter()
                    .map(|u| format!("{} {} names {}", u.referrer, u.file, u.names))
                    .collect();
                write!(
                    f,
                    "the consumer still needs output {output} of {package} ({}): what it uses \
                     moved there, so the split does not take {output} (nor what {output} \
                     refers to) out of its closure",
                    uses.join("; ")
                )
            }
        }
    }
}

/// In JSON a warning is its sentence.
impl serde::Serialize for crate::report::SplitWarning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use crate::report::{BecauseDetail, CycleEdge, SplitWarning};

    #[test]
    fn a_cycle_names_stdenvs_own_file_after_the_package_files() {
        let edge = |files: &[&str], stdenv| CycleEdge {
            files: files.iter().map(|f| f.to_string()).collect(),
            stdenv,
            from: "dev".into(),
            to: "out".into(),
        };
        let w = SplitWarning::CycleBroken {
            outputs: vec!["out".into(), "dev".into()],
            edges: vec![edge(&["lib/a.pc"], true), edge(&[], true)],
            moved: vec!["lib/a.pc".into()],
            moved_stdenv: true,
            to: "out".into(),
        };
        assert_eq!(
            w.to_string(),
            "outputs out and dev would refer to each other in a cycle, which Nix refuses: \
             lib/a.pc, nix-support/propagated-build-inputs (stdenv) (dev) names out; \
             nix-support/propagated-build-inputs (stdenv) (dev) names out; so lib/a.pc, \
             nix-support/propagated-build-inputs (stdenv) go(es) to out instead"
        );
        assert_eq!(edge(&["a", "b"], false).to_string(), "a, b (dev) names out");
    }

    #[test]
    fn the_splits_own_evidence_details_are_sentences() {
        let moves = BecauseDetail::MovesTo {
            sub: "lib/x.so".into(),
            output: "lib".into(),
        };
        assert_eq!(moves.to_string(), "names $out/lib/x.so, which moves to lib");
        let away = BecauseDetail::MovedAway {
            from: "${prefix}/lib".into(),
            sub: "lib".into(),
            output: "out".into(),
            now_in: "lib".into(),
        };
        assert_eq!(
            away.to_string(),
            "${prefix}/lib resolves to lib of out, but that is in lib after the moves"
        );
        assert_eq!(serde_json::to_string(&BecauseDetail::None).unwrap(), "\"\"");
    }
}
