//! Verdicts: what a reference or a file is needed for, and the rules that decide it.
//!
//! A reference's verdict is the strongest among its evidence
//! (runtime > gpu > unknown > dev > doc > removable), and every verdict names the rule
//! that produced it. This module holds the first, kind-only rules: one row per
//! evidence kind, so the table is the documentation.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::EvidenceKind;

/// What a reference (or a file) is needed for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Needed to run: keep.
    Runtime,
    /// Needed only on GPUs of this architecture (`gfx90a`, `sm_80`).
    Gpu(String),
    /// The tool cannot tell: keep, and say so.
    Unknown,
    /// Needed only to build against the package: move to the dev output.
    Dev,
    /// Only documentation refers to it: move to the doc output.
    Doc,
    /// Nothing needs it: remove-references-to, patchelf --shrink-rpath, strip, delete.
    Removable,
}

impl Verdict {
    /// Rank for "strongest wins": higher is stronger.
    pub fn strength(&self) -> u8 {
        match self {
            Verdict::Runtime => 5,
            Verdict::Gpu(_) => 4,
            Verdict::Unknown => 3,
            Verdict::Dev => 2,
            Verdict::Doc => 1,
            Verdict::Removable => 0,
        }
    }

    /// Parse the JSON spelling (`runtime`, `gpu:gfx90a`, …).
    pub fn parse(s: &str) -> Option<Verdict> {
        Some(match s {
            "runtime" => Verdict::Runtime,
            "unknown" => Verdict::Unknown,
            "dev" => Verdict::Dev,
            "doc" => Verdict::Doc,
            "removable" => Verdict::Removable,
            _ => Verdict::Gpu(s.strip_prefix("gpu:")?.to_string()),
        })
    }

    /// What a maintainer should do about a reference with this verdict.
    pub fn advice(&self) -> &'static str {
        match self {
            Verdict::Runtime => "keep",
            Verdict::Gpu(_) => "per-arch output or rebuild with fewer targets",
            Verdict::Unknown => "keep (cannot tell)",
            Verdict::Dev => "move to the dev output",
            Verdict::Doc => "move to the doc output",
            Verdict::Removable => "remove-references-to / patchelf --shrink-rpath / strip",
        }
    }
}

impl Ord for Verdict {
    fn cmp(&self, other: &Self) -> Ordering {
        self.strength()
            .cmp(&other.strength())
            .then_with(|| match (self, other) {
                (Verdict::Gpu(a), Verdict::Gpu(b)) => b.cmp(a),
                _ => Ordering::Equal,
            })
    }
}

impl PartialOrd for Verdict {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Runtime => f.write_str("runtime"),
            Verdict::Gpu(a) => write!(f, "gpu:{a}"),
            Verdict::Unknown => f.write_str("unknown"),
            Verdict::Dev => f.write_str("dev"),
            Verdict::Doc => f.write_str("doc"),
            Verdict::Removable => f.write_str("removable"),
        }
    }
}

impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Verdict::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown verdict `{s}`")))
    }
}

/// One kind-only rule: evidence of `kind` gives `verdict`, named `rule`.
pub struct KindRule {
    pub kind: EvidenceKind,
    pub verdict: Verdict,
    pub rule: &'static str,
    pub why: &'static str,
}

/// The first verdict of each evidence kind, before any run-time analysis.
pub fn kind_rules() -> Vec<KindRule> {
    use EvidenceKind as K;
    let r = |kind, verdict, rule, why| KindRule {
        kind,
        verdict,
        rule,
        why,
    };
    vec![
        r(K::ElfInterpreter, Verdict::Runtime, "kind/elf-interpreter", "the kernel loads PT_INTERP to start the program"),
        r(K::ElfNeeded, Verdict::Runtime, "kind/elf-needed", "the dynamic loader finds a DT_NEEDED library in this RUNPATH directory"),
        r(K::ElfRunpathUnused, Verdict::Removable, "kind/elf-runpath-unused", "no DT_NEEDED library resolves here: patchelf --shrink-rpath drops it"),
        r(K::ElfString, Verdict::Unknown, "kind/elf-string", "a string in a data section may be opened at run time"),
        r(K::ElfSourcePath, Verdict::Removable, "kind/elf-source-path", "a source-file or include path (__FILE__, assert message) is never opened at run time"),
        r(K::ElfDebug, Verdict::Removable, "kind/elf-debug", "debug info is not loaded at run time: strip or separateDebugInfo"),
        r(K::ElfOther, Verdict::Unknown, "kind/elf-other", "bytes outside known sections: cannot tell"),
        r(K::Symlink, Verdict::Runtime, "kind/symlink", "a symlink is followed when its name is opened"),
        r(K::FileName, Verdict::Unknown, "kind/file-name", "a hash in a file name: cannot tell who reads it"),
        r(K::Script, Verdict::Runtime, "kind/script", "an executable script runs its interpreter and commands"),
        r(K::BuildConfig, Verdict::Dev, "kind/build-config", "cmake, pkg-config, libtool and nix-support files are read only when building against the package"),
        r(K::Manifest, Verdict::Removable, "kind/manifest", "build inventories such as TensileManifest.txt are not read at run time"),
        r(K::Doc, Verdict::Doc, "kind/doc", "documentation"),
        r(K::Text, Verdict::Unknown, "kind/text", "a text file: cannot tell who reads it"),
        r(K::Binary, Verdict::Unknown, "kind/binary", "a data file: cannot tell who reads it"),
    ]
}

/// The kind-only verdict of one piece of evidence, with its rule name.
pub fn kind_verdict(kind: EvidenceKind) -> (Verdict, &'static str) {
    kind_rules()
        .into_iter()
        .find(|r| r.kind == kind)
        .map(|r| (r.verdict, r.rule))
        .unwrap_or((Verdict::Unknown, "kind/unlisted"))
}

/// The strongest verdict of a set (removable for an empty set), with its rule.
pub fn strongest<'a>(
    items: impl IntoIterator<Item = (&'a Verdict, &'a str)>,
) -> Option<(Verdict, String)> {
    items
        .into_iter()
        .max_by(|a, b| a.0.cmp(b.0))
        .map(|(v, r)| (v.clone(), r.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_spelling() {
        let mut v = [
            Verdict::Removable,
            Verdict::Dev,
            Verdict::Gpu("gfx90a".into()),
            Verdict::Runtime,
            Verdict::Unknown,
            Verdict::Doc,
        ];
        v.sort();
        let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            s,
            [
                "removable",
                "doc",
                "dev",
                "unknown",
                "gpu:gfx90a",
                "runtime"
            ]
        );
        for x in &v {
            assert_eq!(Verdict::parse(&x.to_string()).as_ref(), Some(x));
        }
        assert_eq!(Verdict::parse("gpu"), None);
    }

    #[test]
    fn every_kind_has_one_rule() {
        let rules = kind_rules();
        for k in EvidenceKind::ALL {
            assert_eq!(rules.iter().filter(|r| r.kind == k).count(), 1, "{k:?}");
        }
        assert_eq!(kind_verdict(EvidenceKind::ElfNeeded).0, Verdict::Runtime);
        let (v, rule) = strongest([
            (&Verdict::Dev, "a"),
            (&Verdict::Runtime, "b"),
            (&Verdict::Doc, "c"),
        ])
        .unwrap();
        assert_eq!((v, rule.as_str()), (Verdict::Runtime, "b"));
    }
}
