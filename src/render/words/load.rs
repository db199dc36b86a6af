//! The words of the loaders' warnings ([`LoadWarning`]): one sentence each, naming the
//! file (or URL) read, as every report and the command line show them.

use std::fmt;

use crate::store::LoadWarning;

impl fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use LoadWarning as W;
        match self {
            W::DeriverIgnored {
                file,
                line,
                path,
                error,
            } => match (line, path) {
                (Some(l), Some(p)) => write!(f, "{file}:{l}: ignored the deriver of {p}: {error}"),
                (Some(l), None) => write!(f, "{file}:{l}: ignored the deriver: {error}"),
                (None, Some(p)) => write!(f, "{file}: {p}: ignored its deriver: {error}"),
                (None, None) => write!(f, "{file}: ignored the deriver: {error}"),
            },
            W::ListedTwice { file, path, record } => write!(
                f,
                "{file}: {path} is listed twice; kept the last {}",
                if *record { "record" } else { "entry" }
            ),
            W::NoNarSizes { file } => write!(
                f,
                "{file}: an exportReferencesGraph file has no NAR sizes: sizes unknown"
            ),
            W::GraphWithoutSizes { file } => write!(
                f,
                "{file}: `nix-store --query --graph` output has no NAR sizes and no \
                 self-references: sizes unknown"
            ),
            W::NodeTwice { file, line, name } => write!(
                f,
                "{file}:{line}: {name} has a second node line; read as one node"
            ),
            W::WithoutNarSize { file, count } => match count {
                Some(n) => write!(
                    f,
                    "{file}: {n} path(s) have no narSize; their sizes are unknown"
                ),
                None => write!(
                    f,
                    "{file}: some paths have no narSize; their sizes are unknown"
                ),
            },
            W::StoreDirDiffers { file, says, given } => write!(
                f,
                "{file} says the store directory is {says}, but {given} was given; using {says}"
            ),
            W::NoNarinfos { dir } => write!(f, "{dir} holds no .narinfo files"),
            W::NotAFile { file, directory } => write!(
                f,
                "{file} is named like a narinfo but is not a file ({}); skipped",
                if *directory {
                    "a directory"
                } else {
                    "not a regular file"
                }
            ),
            W::NarinfoMisnamed {
                file,
                path,
                expected,
            } => write!(
                f,
                "{file} describes {path}, whose narinfo would be named {expected}"
            ),
            W::NarinfoNoSize { file, path } => {
                write!(f, "{file}: no NarSize; the size of {path} is unknown")
            }
            W::NarinfoNoUrl { file, path } => {
                write!(f, "{file}: no URL; the NAR of {path} cannot be found")
            }
            W::NarinfoCacheUnused { problem } => {
                write!(f, "the narinfo cache is not used: {problem}")
            }
            W::NarinfoCacheNotSaved { problem } => f.write_str(problem),
            W::RecordDamaged {
                of,
                set: false,
                problem,
            } => write!(
                f,
                "the narinfo cache's record of the closure of {of} is damaged ({problem}); \
                 walked it again"
            ),
            W::RecordDamaged {
                of,
                set: true,
                problem,
            } => write!(
                f,
                "the narinfo cache's record of the closures of {of} is damaged ({problem}); \
                 walked them again"
            ),
            W::NoCacheInfo { url } => {
                write!(f, "{url} does not exist; assuming the store directory")
            }
            W::KeyDiffers { file, key, path } => write!(
                f,
                "{file}: key `{key}` describes {path} differently from an earlier key; kept \
                 the earlier"
            ),
            W::CannotCrossCheck { file, problem } => {
                write!(f, "{file}: cannot cross-check: {problem}")
            }
            W::NotAStorePath { file, line, error } => {
                write!(f, "{file}:{line}: not a store path: {error}")
            }
            W::ListsUnregistered { file, count, first } => write!(
                f,
                "{file} lists {count} path(s) the registration does not describe (first: \
                 {first})"
            ),
            W::OmitsRegistered { file, count, first } => {
                write!(
                    f,
                    "{file} omits {count} registered path(s) (first: {first})"
                )
            }
            W::TotalNotANumber { file, found } => {
                write!(f, "{file}:1: expected a number, found `{found}`")
            }
            W::TotalDiffers { file, says, sum } => write!(
                f,
                "{file} says {says} bytes but the registration's NAR sizes add up to {sum}"
            ),
            W::InsideStorePath { file, store_path } => write!(
                f,
                "{file} is inside store path {store_path}; loaded that store path's closure"
            ),
            W::NotClosed { count, from, to } => write!(
                f,
                "the input is not a closed closure: {count} reference(s) point to paths it \
                 does not describe (first: {from} -> {to}); was `-r` forgotten? Closure \
                 sizes are lower bounds"
            ),
            W::UnknownFormatVersion { file, version } => write!(
                f,
                "{file}: path-info JSON format version {version} is {} than those this \
                 nixcut knows (2, 3); read it as format 3",
                if *version < 2 { "older" } else { "newer" }
            ),
            W::NotValid {
                file,
                key,
                valid_false,
            } => write!(
                f,
                "{file}: {key} is not a valid path: nix reported it as invalid ({})",
                if *valid_false {
                    "`valid: false`"
                } else {
                    "`null`"
                }
            ),
            W::DuplicateRoots {
                file,
                duplicates,
                line,
            } => write!(
                f,
                "{file}: {} listed more than once (first at line {line}); each counts once",
                crate::render::text::count(*duplicates, "store path", "store paths")
            ),
            W::JobsWithoutOutputs {
                file,
                count,
                line,
                attr,
            } => write!(
                f,
                "{file}: {} without output paths (an evaluation error; the first, `{}`, at line \
                 {line}): not roots",
                crate::render::text::count(*count, "job", "jobs"),
                crate::store::sanitize(attr, 80)
            ),
            W::BaselineOfOtherPackage { theirs, ours } => write!(
                f,
                "the baseline is of another package: its root is {}, ROOT's is {}; a \
                 baseline says how one package's closure changed, so this check compares two \
                 packages (use --against OTHER --max-ratio R for that)",
                theirs.join(", "),
                ours.join(", ")
            ),
        }
    }
}
