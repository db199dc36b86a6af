//! [`HitDetail`]: what a hit's surroundings say, as typed facts and raw bytes: the
//! `DT_NEEDED` name, the search directory with what it supplies, the line, string or
//! bytes around the hash. The kind rules (`super::kinds`, `super::elf`) make it, the
//! scan cache stores it, and code that needs a part of it (the search directory, the
//! bytes naming a store path) takes that part, never its text. The notation reports
//! show (`refs`' `detail`) is its `Display`, in `crate::render::words::evidence`.

use serde::{Deserialize, Serialize};

use super::text::raw_bytes;

/// Which dynamic tag a search directory came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SearchTag {
    /// `DT_RUNPATH`: searched for the file's own `DT_NEEDED` libraries only.
    Runpath,
    /// `DT_RPATH`: searched for the file's libraries and, unless they have a
    /// `DT_RUNPATH`, for those of the libraries it loads.
    Rpath,
}

/// Bytes of a file around a hit, and whether a cap (not a delimiter or the edge of
/// what could be read) cut them on either side.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Excerpt {
    /// The bytes, the hash among them.
    #[serde(with = "raw_bytes")]
    pub bytes: Vec<u8>,
    /// Cut on the left by the cap.
    #[serde(default, skip_serializing_if = "is_false")]
    pub cut_left: bool,
    /// Cut on the right by the cap.
    #[serde(default, skip_serializing_if = "is_false")]
    pub cut_right: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Excerpt {
    /// Bytes not cut by any cap (a window of binary context, a whole name).
    pub fn whole(bytes: &[u8]) -> Excerpt {
        Excerpt {
            bytes: bytes.to_vec(),
            cut_left: false,
            cut_right: false,
        }
    }
}

/// What a RUNPATH/RPATH directory holding a hit does for the loader.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SearchUse {
    /// A `DT_RPATH` entry the loader ignores because `DT_RUNPATH` is present.
    Shadowed,
    /// Which `DT_NEEDED` libraries it supplies was not checked (no listing, or the
    /// directory could not be expanded).
    Unchecked,
    /// It supplies only these libraries named for `dlopen`.
    Dlopen(Vec<String>),
    /// It supplies no library.
    Nothing,
    /// It supplies these `DT_NEEDED` libraries.
    Needed(Vec<String>),
}

/// A hit in one RUNPATH/RPATH directory of an ELF file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchDirHit {
    /// The tag it came from.
    pub tag: SearchTag,
    /// The directory with `$ORIGIN` expanded (`None` when it could not be).
    pub dir: Option<String>,
    /// The entry as written (`$ORIGIN/../lib`).
    pub raw: String,
    /// What it does for the loader.
    pub supplies: SearchUse,
}

/// What the surroundings of one hit say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HitDetail {
    /// The hit is in `PT_INTERP`: the interpreter's path.
    Interpreter(String),
    /// The hit is in a `DT_NEEDED` entry (an absolute library path).
    Needed(String),
    /// The hit is in a RUNPATH/RPATH directory.
    SearchDir(SearchDirHit),
    /// The line (text), the string (ELF strings) or the bytes (binary) around the hit.
    Excerpt(Excerpt),
    /// The hit is in an ELF section that holds no strings the rules read: its name,
    /// whether it is GPU code, and the bytes around the hit (`None`: unreadable).
    Section {
        name: String,
        gpu: bool,
        around: Option<Excerpt>,
    },
    /// The hit is outside every ELF section: the bytes around it (`None`: unreadable).
    OutsideSections(Option<Excerpt>),
    /// The hit is in an entry's own name: that name.
    Name(#[serde(with = "raw_bytes")] Vec<u8>),
    /// The hit is in a symlink's target: that target, raw.
    SymlinkTarget(#[serde(with = "raw_bytes")] Vec<u8>),
    /// The bytes around the hit could not be read.
    Unreadable,
}

impl HitDetail {
    /// For a hit in a search directory: the directory, `$ORIGIN` expanded.
    pub fn runpath_dir(&self) -> Option<&String> {
        match self {
            HitDetail::SearchDir(s) => s.dir.as_ref(),
            _ => None,
        }
    }

    /// For a hit in a symlink's target: the target, raw.
    pub fn symlink_target(&self) -> Option<&[u8]> {
        match self {
            HitDetail::SymlinkTarget(t) => Some(t),
            _ => None,
        }
    }

    /// The bytes around the hit that may name a path: the string, line, name, target,
    /// library or directory (empty when unreadable).
    pub fn around(&self) -> &[u8] {
        match self {
            HitDetail::Interpreter(s) | HitDetail::Needed(s) => s.as_bytes(),
            HitDetail::SearchDir(s) => s.dir.as_deref().unwrap_or(&s.raw).as_bytes(),
            HitDetail::Excerpt(e)
            | HitDetail::Section {
                around: Some(e), ..
            }
            | HitDetail::OutsideSections(Some(e)) => &e.bytes,
            HitDetail::Name(b) | HitDetail::SymlinkTarget(b) => b,
            HitDetail::Section { around: None, .. }
            | HitDetail::OutsideSections(None)
            | HitDetail::Unreadable => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notation_escapes_file_bytes_and_names_the_place() {
        let e = Excerpt {
            bytes: b"a\x00/nix/store/h-x\n".to_vec(),
            cut_left: true,
            cut_right: false,
        };
        assert_eq!(
            HitDetail::Excerpt(e.clone()).to_string(),
            "…a\\x00/nix/store/h-x\\n"
        );
        let gpu = HitDetail::Section {
            name: ".hip_fatbin".into(),
            gpu: true,
            around: None,
        };
        assert_eq!(gpu.to_string(), ".hip_fatbin (GPU code): (unreadable)");
        let dir = HitDetail::SearchDir(SearchDirHit {
            tag: SearchTag::Rpath,
            dir: None,
            raw: "$ORIGIN/../lib".into(),
            supplies: SearchUse::Unchecked,
        });
        assert_eq!(
            dir.to_string(),
            "$ORIGIN/../lib (RPATH; which DT_NEEDED libraries it supplies was not checked)"
        );
        assert_eq!(dir.runpath_dir(), None);
        assert_eq!(dir.around(), b"$ORIGIN/../lib");
        let json = serde_json::to_string(&HitDetail::Excerpt(e.clone())).unwrap();
        let back: HitDetail = serde_json::from_str(&json).unwrap();
        assert_eq!(back, HitDetail::Excerpt(e));
        let raw = HitDetail::SymlinkTarget(b"/nix/store/\xff".to_vec());
        let back: HitDetail = serde_json::from_str(&serde_json::to_string(&raw).unwrap()).unwrap();
        assert_eq!(back.symlink_target(), Some(&b"/nix/store/\xff"[..]));
    }
}
