//! The words of the evidence layer: a hit's surroundings ([`HitDetail`], the notation
//! of `refs`' `detail`, every byte from the file escaped), what a scan got past
//! ([`ScanWarning`]) and what is wrong with one path's evidence ([`PathWarning`]), as
//! the `refs`, `why`, `split` and `gpu` reports show them (and serialise them).

use std::fmt;

use serde::{Serialize, Serializer};

use crate::classify::text::{escape_bytes, escaped_excerpt};
use crate::classify::{Excerpt, HitDetail, SearchTag, SearchUse};
use crate::evidence::{NotScanned, PathWarning};
use crate::report::EvidenceDetail;
use crate::scan::{EntryProblem, RelPath, ScanWarning};

/// The entry as a problem names it: the store-tree walker calls the top level
/// `(top level)`; the NAR walker and the file analysis leave it empty.
fn entry_name(file: &RelPath, problem: &EntryProblem) -> String {
    use EntryProblem as P;
    let from_tree_walk = matches!(
        problem,
        P::CannotReadSymlink(_)
            | P::CannotList(_)
            | P::CannotListDirectory(_)
            | P::CannotStat(_)
            | P::Special { .. }
            | P::CannotOpen(_)
            | P::ReadError { .. }
    );
    if from_tree_walk && file.is_root() {
        "(top level)".to_string()
    } else {
        file.to_string()
    }
}

impl fmt::Display for EntryProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use EntryProblem as P;
        match self {
            P::CannotReadSymlink(e) => write!(f, "cannot read symlink: {e}"),
            P::CannotList(e) => write!(f, "cannot list: {e}"),
            P::CannotListDirectory(e) => write!(f, "cannot list directory: {e}"),
            P::CannotStat(e) => write!(f, "cannot stat: {e}"),
            P::Special { what } => {
                write!(f, "skipped: a {what}, which a NAR cannot hold (not opened)")
            }
            P::CannotOpen(e) => write!(f, "cannot read: {e}"),
            P::ReadError { offset, error } => write!(f, "read error at offset {offset}: {error}"),
            P::NoSpoolFile(e) => write!(f, "no temporary file to analyse this ELF file: {e}"),
            P::CannotSpool(e) => write!(f, "cannot spool this ELF file for analysis: {e}"),
            P::CannotRereadSpool(e) => write!(f, "cannot reread the spooled ELF file: {e}"),
            P::Elf(e) => write!(f, "ELF {e}"),
            P::ElfGpuCode(e) => write!(f, "ELF GPU code: {e}"),
            P::BundleGpuCode(e) => write!(f, "GPU code: {e}"),
            P::NotElf(e) => write!(f, "analysed as plain bytes: {e}"),
            P::CappedHits { more, cap } => write!(
                f,
                "{more} more hits beyond the cap of {cap} per file were counted, not reported"
            ),
        }
    }
}

/// `lib/libx.so: cannot read: …`.
impl fmt::Display for ScanWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScanWarning::Entry { file, problem } => {
                write!(f, "{}: {problem}", entry_name(file, problem))
            }
            ScanWarning::TrailingBytes { nar, bytes } => {
                write!(f, "{nar}: {bytes} bytes after the end of the NAR ignored")
            }
        }
    }
}

impl fmt::Display for NotScanned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotScanned::FilesUnavailable => {
                f.write_str("files unavailable: references are from the graph only")
            }
            NotScanned::Missing(m) => f.write_str(m),
            NotScanned::Failed(m) => write!(f, "cannot scan: {m}"),
        }
    }
}

impl fmt::Display for PathWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathWarning::Scan(w) => w.fmt(f),
            PathWarning::NotScanned(n) => n.fmt(f),
            PathWarning::RegisteredUnseen {
                target,
                complete: true,
            } => write!(
                f,
                "Nix registered a reference to {target} but no file shows its hash"
            ),
            PathWarning::RegisteredUnseen {
                target,
                complete: false,
            } => write!(
                f,
                "Nix registered a reference to {target}; no file that could be read shows \
                 its hash (some entries could not be read: see the warnings above)"
            ),
            PathWarning::CappedHits { hits } => write!(
                f,
                "{hits} hit(s) beyond the per-file cap were counted but not listed"
            ),
        }
    }
}

/// In JSON (`refs`' per-path `warnings`) a warning is its sentence.
impl Serialize for PathWarning {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for Excerpt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&escaped_excerpt(&self.bytes, self.cut_left, self.cut_right))
    }
}

/// `bytes` or `(unreadable)`.
struct Around<'a>(&'a Option<Excerpt>);

impl fmt::Display for Around<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(e) => e.fmt(f),
            None => f.write_str(UNREADABLE),
        }
    }
}

const UNREADABLE: &str = "(unreadable)";

/// The notation of `refs`' `detail` (`DT_NEEDED libfoo.so`, `/nix/store/…/lib supplies
/// libfoo.so`, `.debug_str: …`), every byte from the file escaped.
impl fmt::Display for HitDetail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HitDetail::Interpreter(s) => f.write_str(s),
            HitDetail::Needed(s) => write!(f, "DT_NEEDED {s}"),
            HitDetail::SearchDir(s) => {
                let dir = s.dir.as_deref().unwrap_or(&s.raw);
                let tag = match s.tag {
                    SearchTag::Runpath => "RUNPATH",
                    SearchTag::Rpath => "RPATH",
                };
                match &s.supplies {
                    SearchUse::Shadowed => {
                        write!(f, "{dir} (DT_RPATH, ignored because DT_RUNPATH is present)")
                    }
                    SearchUse::Unchecked => write!(
                        f,
                        "{dir} ({tag}; which DT_NEEDED libraries it supplies was not checked)"
                    ),
                    SearchUse::Dlopen(names) => {
                        write!(f, "{dir} supplies {} (named for dlopen)", names.join(", "))
                    }
                    SearchUse::Nothing => f.write_str(dir),
                    SearchUse::Needed(libs) => write!(f, "{dir} supplies {}", libs.join(", ")),
                }
            }
            HitDetail::Excerpt(e) => e.fmt(f),
            HitDetail::Section {
                name,
                gpu: false,
                around,
            } => write!(f, "{name}: {}", Around(around)),
            HitDetail::Section {
                name,
                gpu: true,
                around,
            } => write!(f, "{name} (GPU code): {}", Around(around)),
            HitDetail::OutsideSections(around) => {
                write!(f, "outside any section: {}", Around(around))
            }
            HitDetail::Name(b) | HitDetail::SymlinkTarget(b) => f.write_str(&escape_bytes(b)),
            HitDetail::Unreadable => f.write_str(UNREADABLE),
        }
    }
}

/// The notation, or the notation as read back.
impl fmt::Display for EvidenceDetail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvidenceDetail::Hit(h) => h.fmt(f),
            EvidenceDetail::Read(s) => f.write_str(s),
        }
    }
}

/// In JSON a hit's detail is its notation.
impl Serialize for EvidenceDetail {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_level_is_named_as_each_walker_named_it() {
        let top = RelPath::root();
        let tree = ScanWarning::entry(&top, EntryProblem::CannotOpen("denied".into()));
        assert_eq!(tree.to_string(), "(top level): cannot read: denied");
        let nar = ScanWarning::entry(&top, EntryProblem::NotElf("short".into()));
        assert_eq!(nar.to_string(), ": analysed as plain bytes: short");
        let file = RelPath::from_bytes(b"lib/a\xff".to_vec());
        let capped = ScanWarning::entry(&file, EntryProblem::CappedHits { more: 3, cap: 10 });
        assert_eq!(
            capped.to_string(),
            "lib/a\\xff: 3 more hits beyond the cap of 10 per file were counted, not reported"
        );
    }

    #[test]
    fn a_report_warning_is_its_sentence_and_reads_back_as_words() {
        use crate::report::WhyWarning;
        let w = WhyWarning::Evidence {
            path: "/nix/store/x-a".into(),
            warning: PathWarning::RegisteredUnseen {
                target: "/nix/store/y-b".into(),
                complete: true,
            },
        };
        let json = serde_json::to_string(&w).unwrap();
        assert_eq!(
            json,
            r#""/nix/store/x-a: Nix registered a reference to /nix/store/y-b but no file shows its hash""#
        );
        let back: WhyWarning = serde_json::from_str(&json).unwrap();
        assert_eq!(back.to_string(), w.to_string());
        let e: Result<PathWarning, _> = serde_json::from_str(r#""x""#);
        assert!(
            e.is_err(),
            "a path warning's sentence has no facts to read back"
        );
    }
}
