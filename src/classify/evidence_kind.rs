//! [`EvidenceKind`]: where in a file a reference hash sits, named exactly as the SPEC's
//! "Evidence kinds" table (the JSON `kind`). The ELF analysis (`crate::elf`) and the
//! file rules (`super::file_rules`) produce kinds; the verdict rules read them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Where a reference hash sits. Serialised in kebab-case, e.g. `elf-runpath-unused`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceKind {
    /// `PT_INTERP`.
    ElfInterpreter,
    /// A RUNPATH/RPATH directory that supplies a `DT_NEEDED` library (or a `DT_NEEDED`
    /// entry that is itself an absolute path).
    ElfNeeded,
    /// A RUNPATH/RPATH directory that supplies no `DT_NEEDED` library and no library
    /// the file names for `dlopen`.
    ElfRunpathUnused,
    /// A RUNPATH/RPATH directory that supplies a library the file names for `dlopen`
    /// (a soname string, `.note.dlopen`) and no `DT_NEEDED` one.
    ElfRunpathDlopen,
    /// A string in a data section.
    ElfString,
    /// A data-section string that names a source file or an include directory.
    ElfSourcePath,
    /// A `.debug_*` / `.zdebug_*` section.
    ElfDebug,
    /// Anywhere else in an ELF file.
    ElfOther,
    /// A symlink target.
    Symlink,
    /// A directory entry name.
    FileName,
    /// An executable text file (shebang or command line).
    Script,
    /// cmake, pkg-config, libtool, `*-config`, `nix-support/`.
    BuildConfig,
    /// Build inventories such as `TensileManifest.txt`.
    Manifest,
    /// Documentation directories.
    Doc,
    /// Any other text file.
    Text,
    /// Any other file.
    Binary,
}

impl EvidenceKind {
    /// Every kind, in declaration order.
    pub const ALL: [EvidenceKind; 16] = [
        EvidenceKind::ElfInterpreter,
        EvidenceKind::ElfNeeded,
        EvidenceKind::ElfRunpathUnused,
        EvidenceKind::ElfRunpathDlopen,
        EvidenceKind::ElfString,
        EvidenceKind::ElfSourcePath,
        EvidenceKind::ElfDebug,
        EvidenceKind::ElfOther,
        EvidenceKind::Symlink,
        EvidenceKind::FileName,
        EvidenceKind::Script,
        EvidenceKind::BuildConfig,
        EvidenceKind::Manifest,
        EvidenceKind::Doc,
        EvidenceKind::Text,
        EvidenceKind::Binary,
    ];

    /// The SPEC name, e.g. `elf-needed`.
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceKind::ElfInterpreter => "elf-interpreter",
            EvidenceKind::ElfNeeded => "elf-needed",
            EvidenceKind::ElfRunpathUnused => "elf-runpath-unused",
            EvidenceKind::ElfRunpathDlopen => "elf-runpath-dlopen",
            EvidenceKind::ElfString => "elf-string",
            EvidenceKind::ElfSourcePath => "elf-source-path",
            EvidenceKind::ElfDebug => "elf-debug",
            EvidenceKind::ElfOther => "elf-other",
            EvidenceKind::Symlink => "symlink",
            EvidenceKind::FileName => "file-name",
            EvidenceKind::Script => "script",
            EvidenceKind::BuildConfig => "build-config",
            EvidenceKind::Manifest => "manifest",
            EvidenceKind::Doc => "doc",
            EvidenceKind::Text => "text",
            EvidenceKind::Binary => "binary",
        }
    }
}

impl fmt::Display for EvidenceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not an evidence kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an evidence kind")]
pub struct UnknownKind(pub String);

impl FromStr for EvidenceKind {
    type Err = UnknownKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EvidenceKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownKind(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_names_match_spec_and_as_str() {
        for k in EvidenceKind::ALL {
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.as_str()));
            assert_eq!(serde_json::from_str::<EvidenceKind>(&json).unwrap(), k);
            assert_eq!(k.as_str().parse::<EvidenceKind>(), Ok(k));
        }
        assert!("elf_needed".parse::<EvidenceKind>().is_err());
    }
}
