//! File rules: the evidence kind of a hit that is not inside an analysed ELF file,
//! decided by where the hit is (symlink target, entry name), then the file's path
//! (documentation, build configuration, manifests), then its contents (script, text,
//! binary).
//!
//! The rules are data ([`FILE_RULES`]): an ordered table of (name, matcher, kind); the
//! first match wins and every piece of evidence carries the rule's name. ELF files are
//! classified by `crate::elf` first; these rules are the fallback for everything else.

use super::text::{binary_context, line_around, looks_like_text};
use super::{EvidenceKind, RuleId};
use super::{Excerpt, HitDetail};

/// Longest part of a line kept on each side of a hit in a `script`/`text` detail.
pub const LINE_CAP: usize = 256;
/// Bytes of context kept on each side of a hit in a `binary` detail.
pub const BINARY_CONTEXT: usize = 32;
/// Bytes around a hit a classifier may need (the walkers keep at least this much).
pub const CONTEXT_WINDOW: usize = LINE_CAP + 64;

/// Which part of a serialised entry a hit lies in ([`crate::scan::Location`] without
/// the offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// File contents.
    Contents,
    /// A symlink's target.
    SymlinkTarget,
    /// A directory entry name.
    FileName,
}

/// What the rules look at.
#[derive(Debug, Clone, Copy)]
pub struct FileFacts<'a> {
    /// Path relative to the store path, `/`-separated (empty for the top level).
    pub path: &'a [u8],
    /// Where the hit lies.
    pub place: Region,
    /// Whether the file is executable.
    pub executable: bool,
    /// The first bytes of the file (up to `TEXT_SNIFF_LEN`); empty for non-files.
    pub head: &'a [u8],
}

impl FileFacts<'_> {
    fn name(&self) -> &[u8] {
        self.path.rsplit(|&b| b == b'/').next().unwrap_or(self.path)
    }
}

/// How a rule recognises a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matcher {
    /// The hit is in this place.
    In(Region),
    /// The path is below one of these directories (given with a trailing `/`).
    UnderDir(&'static [&'static str]),
    /// The file name ends with one of these.
    NameEndsWith(&'static [&'static str]),
    /// The file name ends with one of these, ignoring ASCII case.
    NameEndsWithIgnoreCase(&'static [&'static str]),
    /// The file name is one of these.
    NameIs(&'static [&'static str]),
    /// The file name starts with one of these.
    NameStartsWith(&'static [&'static str]),
    /// The file starts with `#!`.
    Shebang,
    /// The file is executable and looks like text.
    ExecutableText,
    /// The file looks like text.
    Text,
    /// Always.
    Any,
}

impl Matcher {
    /// Whether the matcher accepts `f`.
    pub fn matches(&self, f: &FileFacts<'_>) -> bool {
        let name = f.name();
        match *self {
            Matcher::In(p) => f.place == p,
            Matcher::UnderDir(dirs) => dirs.iter().any(|d| f.path.starts_with(d.as_bytes())),
            Matcher::NameEndsWith(s) => s.iter().any(|s| name.ends_with(s.as_bytes())),
            Matcher::NameEndsWithIgnoreCase(s) => s.iter().any(|s| {
                name.len() >= s.len()
                    && name[name.len() - s.len()..].eq_ignore_ascii_case(s.as_bytes())
            }),
            Matcher::NameIs(s) => s.iter().any(|s| name == s.as_bytes()),
            Matcher::NameStartsWith(s) => s.iter().any(|s| name.starts_with(s.as_bytes())),
            Matcher::Shebang => f.head.starts_with(b"#!"),
            Matcher::ExecutableText => f.executable && looks_like_text(f.head),
            Matcher::Text => looks_like_text(f.head),
            Matcher::Any => true,
        }
    }
}

/// One row of the rule table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRule {
    /// The name every classification by this rule carries.
    pub name: RuleId,
    /// What it matches.
    pub matcher: Matcher,
    /// The kind it gives.
    pub kind: EvidenceKind,
}

const fn rule(name: &'static str, matcher: Matcher, kind: EvidenceKind) -> FileRule {
    FileRule {
        name: RuleId::new(name),
        matcher,
        kind,
    }
}

/// The file rules, in priority order; the last one always matches.
pub static FILE_RULES: &[FileRule] = &[
    rule(
        "symlink-target",
        Matcher::In(Region::SymlinkTarget),
        EvidenceKind::Symlink,
    ),
    rule(
        "entry-name",
        Matcher::In(Region::FileName),
        EvidenceKind::FileName,
    ),
    rule(
        "doc-directory",
        Matcher::UnderDir(&[
            "share/doc/",
            "share/man/",
            "share/info/",
            "share/gtk-doc/",
            "share/devhelp/",
            "doc/",
        ]),
        EvidenceKind::Doc,
    ),
    rule(
        "cmake-directory",
        Matcher::UnderDir(&["lib/cmake/", "lib64/cmake/", "share/cmake/"]),
        EvidenceKind::BuildConfig,
    ),
    rule(
        "cmake-file",
        Matcher::NameEndsWith(&[".cmake"]),
        EvidenceKind::BuildConfig,
    ),
    rule(
        "cmake-lists",
        Matcher::NameIs(&["CMakeLists.txt"]),
        EvidenceKind::BuildConfig,
    ),
    rule(
        "pkg-config",
        Matcher::NameEndsWith(&[".pc"]),
        EvidenceKind::BuildConfig,
    ),
    rule(
        "libtool-archive",
        Matcher::NameEndsWith(&[".la"]),
        EvidenceKind::BuildConfig,
    ),
    rule(
        "config-script",
        Matcher::NameEndsWith(&["-config"]),
        EvidenceKind::BuildConfig,
    ),
    rule(
        "nix-support",
        Matcher::UnderDir(&["nix-support/"]),
        EvidenceKind::BuildConfig,
    ),
    rule(
        "manifest-file",
        Matcher::NameEndsWithIgnoreCase(&["manifest.txt", ".manifest"]),
        EvidenceKind::Manifest,
    ),
    rule(
        "installed-files",
        Matcher::NameStartsWith(&["installed-files"]),
        EvidenceKind::Manifest,
    ),
    rule("shebang", Matcher::Shebang, EvidenceKind::Script),
    rule(
        "executable-text",
        Matcher::ExecutableText,
        EvidenceKind::Script,
    ),
    rule("text", Matcher::Text, EvidenceKind::Text),
    rule("binary", Matcher::Any, EvidenceKind::Binary),
];

/// The first rule in [`FILE_RULES`] that matches.
pub fn file_rule(f: &FileFacts<'_>) -> &'static FileRule {
    FILE_RULES
        .iter()
        .find(|r| r.matcher.matches(f))
        .unwrap_or(&FILE_RULES[FILE_RULES.len() - 1])
}

/// The detail of a hit at `window[pos..]`: the line around it for text, escaped bytes
/// around it otherwise. `window` holds at least [`CONTEXT_WINDOW`] bytes on each side of
/// the hit where the file has them.
pub fn hit_detail(is_text: bool, window: &[u8], pos: usize, hash_len: usize) -> HitDetail {
    HitDetail::Excerpt(if is_text {
        let e = line_around(window, pos, hash_len, LINE_CAP);
        Excerpt {
            bytes: e.bytes.to_vec(),
            cut_left: e.cut_left,
            cut_right: e.cut_right,
        }
    } else {
        Excerpt::whole(binary_context(window, pos, hash_len, BINARY_CONTEXT))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind_of(path: &str, executable: bool, head: &[u8]) -> (EvidenceKind, RuleId) {
        let r = file_rule(&FileFacts {
            path: path.as_bytes(),
            place: Region::Contents,
            executable,
            head,
        });
        (r.kind, r.name)
    }

    #[test]
    fn table_examples() {
        use EvidenceKind as K;
        let bin = b"\0\x01\x02binary";
        for (path, exec, head, kind) in [
            ("share/doc/rocblas/README.md", false, &b"# x"[..], K::Doc),
            ("share/man/man1/x.1.gz", false, bin, K::Doc),
            ("doc/html/index.html", false, b"<html>", K::Doc),
            (
                "lib/cmake/rocblas/rocblas-targets.cmake",
                false,
                b"set(x)",
                K::BuildConfig,
            ),
            (
                "lib/cmake/rocblas/whatever.txt",
                false,
                b"x",
                K::BuildConfig,
            ),
            ("share/foo/CMakeLists.txt", false, b"x", K::BuildConfig),
            (
                "lib/pkgconfig/rocblas.pc",
                false,
                b"prefix=",
                K::BuildConfig,
            ),
            ("lib/libfoo.la", false, b"# libtool", K::BuildConfig),
            ("bin/llvm-config", true, b"#!/bin/sh", K::BuildConfig),
            (
                "nix-support/propagated-build-inputs",
                false,
                b"/nix",
                K::BuildConfig,
            ),
            (
                "lib/rocblas/library/TensileManifest.txt",
                false,
                b"/build",
                K::Manifest,
            ),
            (
                "share/x/install_manifest.txt",
                false,
                b"/build",
                K::Manifest,
            ),
            ("lib/x.manifest", false, b"a", K::Manifest),
            ("share/installed-files.txt", false, b"a", K::Manifest),
            ("bin/run", false, b"#!/nix/store/x/bin/sh\n", K::Script),
            (
                "bin/run",
                true,
                b"exec /nix/store/x/bin/y \"$@\"\n",
                K::Script,
            ),
            ("share/x/data.json", false, b"{\"a\": 1}", K::Text),
            ("lib/rocblas/library/x.dat", false, bin, K::Binary),
            ("bin/run", true, bin, K::Binary),
            ("", false, b"hello", K::Text),
        ] {
            assert_eq!(kind_of(path, exec, head).0, kind, "{path}");
        }
        assert_eq!(
            kind_of("lib/libfoo.la", false, b"").1.as_str(),
            "libtool-archive"
        );
    }

    #[test]
    fn place_rules_come_first() {
        for (place, kind) in [
            (Region::SymlinkTarget, EvidenceKind::Symlink),
            (Region::FileName, EvidenceKind::FileName),
        ] {
            let r = file_rule(&FileFacts {
                path: b"share/doc/x",
                place,
                executable: false,
                head: b"",
            });
            assert_eq!(r.kind, kind);
        }
    }

    #[test]
    fn details() {
        let w = b"a\nexport X=/nix/store/HASH/bin\nb";
        let pos = 18;
        let text = |w: &[u8], pos, len| hit_detail(true, w, pos, len).to_string();
        assert_eq!(text(w, pos, 4), "export X=/nix/store/HASH/bin");
        let long = [b'x'; 1000];
        let d = text(&long, 500, 32);
        assert!(d.starts_with('…') && d.ends_with('…'), "{d}");
        assert_eq!(d.chars().filter(|&c| c == 'x').count(), 2 * LINE_CAP + 32);
        let d = hit_detail(false, b"\0\0ab\xffcd\0", 2, 2);
        assert_eq!(d.to_string(), "\\x00\\x00ab\\xffcd\\x00");
    }
}
