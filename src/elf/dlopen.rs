//! Libraries an ELF file names for `dlopen`: soname-like strings (`libamd_comgr.so.2`)
//! in its data sections, and the sonames of a FreeDesktop `.note.dlopen` note (the
//! dlopen metadata systemd writes). `dlopen` searches the caller's RUNPATH, so a RUNPATH
//! directory that supplies such a library is needed even when it supplies no
//! `DT_NEEDED` one (Debian's `libamdhip64.so.5` loads comgr this way).
//!
//! Reads at most [`MAX_DATA`] bytes of sections per file, by position.

use super::bytes::ByteSource;
use super::facts::ElfFacts;
use super::gpu::{EM_AMDGPU, EM_CUDA};
use super::section::SectionKind;

/// Most bytes of data sections read per file.
pub const MAX_DATA: u64 = 64 << 20;
/// Most names kept per file.
const MAX_NAMES: usize = 4096;

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-' | b'.')
}

/// Every run of bytes `part` accepts around a `.so` in `bytes`, with optional `.N`
/// version parts, delimited on both sides by bytes it does not accept.
fn so_tokens<'a>(
    bytes: &'a [u8],
    part: impl Fn(u8) -> bool + 'a,
) -> impl Iterator<Item = &'a [u8]> + 'a {
    memchr::memmem::find_iter(bytes, b".so").filter_map(move |at| {
        let mut start = at;
        while start > 0 && part(bytes[start - 1]) {
            start -= 1;
        }
        let mut end = at + 3;
        // Version parts: `.2`, `.5.7.1`.
        while end + 1 < bytes.len() && bytes[end] == b'.' && bytes[end + 1].is_ascii_digit() {
            end += 1;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
        }
        (end >= bytes.len() || !part(bytes[end])).then(|| &bytes[start..end])
    })
}

/// Every soname-like token in `bytes`: `lib<name>.so` with optional `.N` version parts,
/// delimited on both sides by bytes that cannot be part of a file name.
pub fn soname_tokens(bytes: &[u8], out: &mut Vec<String>) {
    for token in so_tokens(bytes, is_name_byte) {
        // The name starts at the last `lib` that begins a token inside the run
        // (`/usr/lib/libfoo.so` has no `/` inside the run; `xlibfoo.so` is no soname).
        if !token.starts_with(b"lib") || token.len() <= b"lib.so".len() {
            continue;
        }
        if let Ok(s) = std::str::from_utf8(token) {
            out.push(s.to_string());
        }
    }
}

/// Every `printf` pattern of a library name in `bytes` (`%s_dri.so`, `lib%s.so.1`,
/// `libfoo-%d.so`): a program that formats such a name and `dlopen`s it may load any
/// library its search path supplies, so its RUNPATH directories are all in use.
pub fn dlopen_patterns(bytes: &[u8], out: &mut Vec<String>) {
    for token in so_tokens(bytes, |b| is_name_byte(b) || b == b'%') {
        let conversion = token
            .windows(2)
            .any(|w| w[0] == b'%' && matches!(w[1], b's' | b'd' | b'u' | b'i'));
        if !conversion {
            continue;
        }
        if let Ok(s) = std::str::from_utf8(token) {
            out.push(s.to_string());
        }
    }
}

/// Every string in `bytes` (delimited by bytes that cannot be in a path) that names a
/// relative data directory, a data file (pattern) or a piece of a data file name:
/// `rocblas/library`, `../share/x/db`, `Library_lazy_%s.dat`, `%s.db`,
/// `rocfft_kernel_cache.db`; and the pieces a library joins to the directory it was
/// loaded from and to the processor's name at run time (rocBLAS 5.5 as Debian builds it:
/// `/rocblas/2.47.0/library`, `/Library.dat`, `/Library_`, `Kernels.so-000-`, `*co`),
/// kept with their leading `/` (see [`is_name_fragment`]). A data file is one whose
/// name ends with one of `exts` (the caller's: the GPU library table's data
/// extensions, `.dat`, `.co` …).
/// Not: absolute paths under the usual system and store directories (store paths are
/// references, found by hash), bare extensions (`.hsaco`), sonames, strings without a
/// letter.
pub fn data_path_tokens(bytes: &[u8], exts: &[&str], out: &mut Vec<String>) {
    // Every token that can name data holds one of `/ _ - * .` (see `could_name_data`):
    // find those bytes with memchr (vectorised) and take the run of token bytes around
    // each, once; the bytes between are never looked at one by one.
    let n = bytes.len();
    let mut a = memchr::memchr3_iter(b'/', b'_', b'-', bytes).peekable();
    let mut b = memchr::memchr2_iter(b'*', b'.', bytes).peekable();
    let mut done = 0;
    loop {
        let at = match (a.peek(), b.peek()) {
            (Some(&x), Some(&y)) if x <= y => a.next(),
            (Some(_), Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, Some(_)) => b.next(),
            (None, None) => None,
        };
        let Some(at) = at else { break };
        if at < done {
            continue;
        }
        let mut start = at;
        while start > 0 && TOKEN[bytes[start - 1] as usize] {
            start -= 1;
        }
        let mut end = at + 1;
        while end < n && TOKEN[bytes[end] as usize] {
            end += 1;
        }
        done = end;
        push_if_data(&bytes[start..end], exts, out);
    }
}

/// The byte table of [`data_path_tokens`]: what can be part of a data path or piece.
static TOKEN: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric()
            || matches!(c, b'_' | b'+' | b'-' | b'.' | b'/' | b'%' | b'*');
        b += 1;
    }
    t
};

/// Keep one maximal run of token bytes if it names data (see [`data_path_tokens`]).
fn push_if_data(token: &[u8], exts: &[&str], out: &mut Vec<String>) {
    if token.len() < 3 || token.len() > 200 || !could_name_data(token, exts) {
        return;
    }
    let Ok(s) = std::str::from_utf8(token) else {
        return;
    };
    // `%.*s` prints a counted string like `%s`; a leading `%s/` is the directory the
    // program fills in (its own, found by `dladdr`): `%.*s/ember/kernels-%s.dat` names
    // `ember/kernels-%s.dat` beside the library.
    let owned;
    let s = if s.contains("%.*s") {
        owned = s.replace("%.*s", "%s");
        owned.as_str()
    } else {
        s
    };
    let s = s.strip_prefix("%s/").unwrap_or(s);
    // A string joined to a directory at run time starts with `/`: the part after it is
    // what names the data.
    let rel = match s.strip_prefix('/') {
        Some(r) if is_system_path(s) || r.starts_with('/') => return,
        Some(r) => r,
        None => s,
    };
    if is_name_fragment(rel) || (!rel.contains('*') && is_data_path(rel, exts)) {
        out.push(s.to_string());
    }
}

/// The cheap test before the others: a data path has a `/` in it or ends in a data
/// extension; a name piece ends in `_` or `-`, or is a glob piece starting with `*`.
fn could_name_data(token: &[u8], exts: &[&str]) -> bool {
    let last = token[token.len() - 1];
    token[0] == b'*'
        || last == b'_'
        || last == b'-'
        || memchr::memchr(b'/', token).is_some()
        || exts.iter().any(|e| token.ends_with(e.as_bytes()))
}

/// Whether an absolute string is under a directory no library keeps its own data in
/// relative to itself (`/usr/…`, `/etc/…`, `/nix/…`, `/proc/…`): such strings are
/// absolute paths, not pieces joined to a library's directory.
fn is_system_path(s: &str) -> bool {
    const SYSTEM: &[&str] = &[
        "/usr/", "/etc/", "/nix/", "/proc/", "/sys/", "/dev/", "/tmp/", "/var/", "/opt/", "/home/",
        "/run/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/build/", "/gnu/",
    ];
    SYSTEM
        .iter()
        .any(|p| s.starts_with(p) || s == &p[..p.len() - 1])
}

/// Whether a string is a piece of a data file name that a library completes at run time
/// with a processor's name: a name prefix ending in `_` or `-` (`Library_`,
/// `Library_lazy_`, `Kernels.so-000-`) or a glob piece (`*`, `*co`, `*.hsaco`), with no
/// `/` inside. rocBLAS builds `<dir>/<prefix>_<processor>.dat` and the glob
/// `<dir>/*<processor>*co` from such pieces (`tensile_host.cpp`).
pub fn is_name_fragment(s: &str) -> bool {
    if s.is_empty() || s.contains('/') || s.contains('%') {
        return false;
    }
    if let Some(tail) = s.strip_prefix('*') {
        // `*`, `*co`, `*.co`, `*.hsaco`: what a glob puts after the processor.
        return tail.is_empty()
            || (!tail.contains('*')
                && tail.len() <= 8
                && tail.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.'));
    }
    let letters = s.bytes().filter(|b| b.is_ascii_alphabetic()).count();
    !s.contains('*')
        && (s.ends_with('_') || s.ends_with('-'))
        && s.len() >= 4
        && letters >= 3
        && s.as_bytes()[0].is_ascii_alphabetic()
}

/// Whether a string names a relative data directory or data file (pattern): a file
/// when its name ends with one of `exts`.
pub fn is_data_path(s: &str, exts: &[&str]) -> bool {
    let last = s.rsplit('/').next().unwrap_or(s);
    let parts_ok = s
        .split('/')
        .all(|c| !c.is_empty() && c.bytes().any(|b| b.is_ascii_alphanumeric() || b == b'.'));
    if !parts_ok || !s.bytes().any(|b| b.is_ascii_alphabetic()) {
        return false;
    }
    // `%` only as a printf conversion naming one component (`%s`, `%d`, `%x`).
    let pct_ok = s
        .match_indices('%')
        .all(|(i, _)| matches!(s.as_bytes().get(i + 1), Some(b's' | b'd' | b'u' | b'x')));
    if !pct_ok {
        return false;
    }
    let data_file = exts
        .iter()
        .any(|e| last.len() > e.len() && last.ends_with(e) && !last.starts_with('.'));
    let dir = s.contains('/')
        && !s.contains('%')
        && s.split('/').any(|c| c != "." && c != "..")
        && (!last.contains('.') || last == "..");
    data_file || dir
}

/// The sonames `facts`' file names for `dlopen`, sorted and deduplicated; a name with
/// `%` is a pattern ([`dlopen_patterns`]).
pub fn dlopen_names<S: ByteSource + ?Sized>(facts: &ElfFacts, src: &S) -> Vec<String> {
    names_in_data(facts, src, &[]).0
}

/// The sonames `facts`' file names for `dlopen` and the data paths its strings name
/// ([`data_path_tokens`], data files by `exts`), each sorted and deduplicated: one read
/// of the data sections.
pub fn names_in_data<S: ByteSource + ?Sized>(
    facts: &ElfFacts,
    src: &S,
    exts: &[&str],
) -> (Vec<String>, Vec<String>) {
    let mut names = Vec::new();
    let mut data = Vec::new();
    // A GPU code object (AMDGPU, CUDA) is loaded by a runtime, never by the dynamic
    // loader: it dlopens and opens nothing, and its data sections (hundreds of kilobytes
    // in every Tensile code object) are not read for names.
    if matches!(facts.machine, EM_AMDGPU | EM_CUDA) {
        return (names, data);
    }
    let mut budget = MAX_DATA;
    for s in &facts.sections {
        let wanted = s.kind == SectionKind::Data || s.name == ".note.dlopen";
        if !wanted || s.name == ".comment" {
            continue;
        }
        let len = (s.range.end - s.range.start).min(budget);
        if len == 0 {
            continue;
        }
        budget -= len;
        let Ok(bytes) = src.read_vec(s.range.start, len as usize) else {
            continue;
        };
        soname_tokens(&bytes, &mut names);
        dlopen_patterns(&bytes, &mut names);
        if s.kind == SectionKind::Data && data.len() <= MAX_NAMES {
            data_path_tokens(&bytes, exts, &mut data);
        }
        if names.len() > MAX_NAMES {
            break;
        }
    }
    data.sort();
    data.dedup();
    data.truncate(MAX_NAMES);
    let own = facts.soname.as_ref().map(|s| s.value.as_str());
    let needed: Vec<&str> = facts.needed.iter().map(|n| n.value.as_str()).collect();
    names.retain(|n| Some(n.as_str()) != own && !needed.contains(&n.as_str()));
    names.sort();
    names.dedup();
    names.truncate(MAX_NAMES);
    (names, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The data extensions of these tests.
    const EXTS: &[&str] = &[".dat", ".co", ".hsaco", ".pdb", ".db"];

    #[test]
    fn data_path_strings() {
        let mut v = Vec::new();
        data_path_tokens(
            b"\0rocblas/library\0Library_lazy_%s.dat\0.hsaco\0.co\0Kernels.so-000-\0\
              %s.pdb\0../share/x/db\0/nix/store/x/lib\0Error in a/b.cpp\0lib%s.so\0\
              rocfft_kernel_cache.db\0x100%\0../..\0a//b\0fastblas/library\0\
              /rocblas/2.47.0/library\0/Library.dat\0/Library_\0/*\0*co\0\
              /usr/lib/x86_64-linux-gnu\0//x/y\0a*b/c\0ROCBLAS_LAYER\0%.*s/ember/kernels-%s.dat\0\
              %s.txt\0",
            EXTS,
            &mut v,
        );
        assert_eq!(
            v,
            [
                "rocblas/library",
                "Library_lazy_%s.dat",
                "Kernels.so-000-",
                "%s.pdb",
                "../share/x/db",
                "rocfft_kernel_cache.db",
                "fastblas/library",
                "/rocblas/2.47.0/library",
                "/Library.dat",
                "/Library_",
                "*co",
                "ember/kernels-%s.dat",
            ]
        );
        // A data file is what the caller's extensions say.
        let mut v = Vec::new();
        data_path_tokens(b"\0%s.pdb\0%s.txt\0", &[".txt"], &mut v);
        assert_eq!(v, ["%s.txt"]);
    }

    fn tokens(s: &[u8]) -> Vec<String> {
        let mut v = Vec::new();
        soname_tokens(s, &mut v);
        v
    }

    #[test]
    fn soname_like_strings() {
        assert_eq!(
            tokens(b"\0Loading COMGR library.\0libamd_comgr.so.2\0"),
            ["libamd_comgr.so.2"]
        );
        assert_eq!(tokens(b"/usr/lib/libfoo.so\0"), ["libfoo.so"]);
        assert_eq!(tokens(b"libz.so.1.2.13 x"), ["libz.so.1.2.13"]);
        assert_eq!(
            tokens(br#"[{"feature":"x","soname":["libqrencode.so.4","libqrencode.so.3"]}]"#),
            ["libqrencode.so.4", "libqrencode.so.3"]
        );
        for none in [
            &b"Kernels.so-000-"[..],
            b".so",
            b"lib.so",
            b"libfoo.sox",
            b"libfoo.so.x1",
            b"xyz.so.1",
        ] {
            assert!(
                tokens(none).is_empty(),
                "{:?}",
                String::from_utf8_lossy(none)
            );
        }
    }

    #[test]
    fn printf_patterns_of_library_names() {
        let mut v = Vec::new();
        dlopen_patterns(b"\0%s_dri.so\0lib%s.so.1\0libfoo.so\0%d%%\0", &mut v);
        assert_eq!(v, ["%s_dri.so", "lib%s.so.1"]);
    }

    /// Looking only around the marker bytes finds what looking at every run finds.
    #[test]
    fn marker_search_equals_every_run() {
        use proptest::prelude::*;
        let alphabet: Vec<u8> = b"ab/_-*.%sdatco0\0\xff ".to_vec();
        proptest!(ProptestConfig::with_cases(2000), |(picks in proptest::collection::vec(0usize..17, 0..300))| {
            let bytes: Vec<u8> = picks.iter().map(|&i| alphabet[i]).collect();
            let mut fast = Vec::new();
            data_path_tokens(&bytes, EXTS, &mut fast);
            let mut slow = Vec::new();
            for run in bytes.split(|&b| !TOKEN[b as usize]) {
                push_if_data(run, EXTS, &mut slow);
            }
            prop_assert_eq!(fast, slow);
        });
    }
}
