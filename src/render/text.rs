//! Small text helpers shared by every format: short store paths, package names,
//! signed sizes, chains and tree prefixes.

use crate::store::{format_size, HASH_LEN};

/// `/nix/store/<hash>-<name>` → `<first 7 hash chars>…-<name>`; other strings as is.
pub fn short_path(p: &str) -> String {
    let base = p.rsplit_once('/').map_or(p, |(_, b)| b);
    match base.split_once('-') {
        Some((hash, name)) if hash.len() == HASH_LEN => format!("{}…-{name}", &hash[..7]),
        _ => base.to_string(),
    }
}

/// The package part of a store path, `<name>` without the hash.
pub fn name_of(p: &str) -> &str {
    let base = p.rsplit_once('/').map_or(p, |(_, b)| b);
    match base.split_once('-') {
        Some((hash, name)) if hash.len() == HASH_LEN => name,
        _ => base,
    }
}

/// A name from the input (a file name, a root, an origin) on one line: line breaks
/// and tabs spelled `\u{a}`, `\u{d}`, `\u{9}`, so that a name set into a sentence
/// or a header cannot start a line of its own (other control characters are left to
/// each format's own escaping).
pub fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains(['\n', '\r', '\t']) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A signed size change: `+2.0 MiB`, `−512 B`, `0 B`.
pub fn format_delta(bytes: i64) -> String {
    match bytes {
        0 => "0 B".to_string(),
        b if b > 0 => format!("+{}", format_size(b.unsigned_abs())),
        b => format!("−{}", format_size(b.unsigned_abs())),
    }
}

/// The chain from the root to the path's parent, as names: `llama-cpp-rocm → rocblas`,
/// shortened in the middle when long; `(root)` for the root itself.
pub fn via_chain<S: AsRef<str>>(chain: &[S]) -> String {
    if chain.len() <= 1 {
        return "(root)".to_string();
    }
    let hops: Vec<&str> = chain[..chain.len() - 1]
        .iter()
        .map(|s| name_of(s.as_ref()))
        .collect();
    if hops.len() <= 3 {
        hops.join(" → ")
    } else {
        format!("{} → … → {}", hops[0], hops[hops.len() - 1])
    }
}

/// Tree drawing prefix in the style of `nix why-depends`.
pub fn tree_prefix(ancestors_last: &[bool], last: bool) -> String {
    let mut s = String::new();
    for &l in ancestors_last {
        s.push_str(if l { "    " } else { "│   " });
    }
    s.push_str(if last { "└───" } else { "├───" });
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortens() {
        assert_eq!(
            short_path("/nix/store/9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-rocblas-5.7.1"),
            "9fm8cfj…-rocblas-5.7.1"
        );
        assert_eq!(
            name_of("/nix/store/9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-rocblas-5.7.1"),
            "rocblas-5.7.1"
        );
        assert_eq!(short_path("<2 roots>"), "<2 roots>");
        assert_eq!(format_delta(2048), "+2.0 KiB");
        assert_eq!(format_delta(-5), "−5 B");
        assert_eq!(format_delta(0), "0 B");
        let chain: Vec<String> = ["a-1", "b-2", "c-3"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(via_chain(&chain), "a-1 → b-2");
        assert_eq!(via_chain(&chain[..1]), "(root)");
    }
}

/// `s` cut to at most `max` characters by replacing its middle with `…`, so that both
/// the start and the end (a package's name and its version) stay readable.
pub fn shorten_middle(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    if max <= 1 {
        return "…".chars().take(max).collect();
    }
    let keep = max - 1;
    let head = keep.div_ceil(2);
    let tail = keep / 2;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// `s` cut to at most `max` characters at the end, with `…`.
pub fn shorten_end(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// A list of versions for a table cell: all of them when there are few, else the first
/// two, `…` and the count: `0, 10, … (6,604 versions)`.
pub fn version_list(v: &[String]) -> String {
    let show = |s: &String| {
        if s.is_empty() {
            "ε".to_string()
        } else {
            s.clone()
        }
    };
    match v.len() {
        0 => "∅".to_string(),
        1..=4 => v.iter().map(show).collect::<Vec<_>>().join(", "),
        n => format!(
            "{}, {}, … ({} versions)",
            show(&v[0]),
            show(&v[1]),
            thousands(n as u64)
        ),
    }
}

/// `n` things, counted the one way every format counts: `1 path`, `2 paths`,
/// `6,604 paths` (commas between thousands).
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

/// The row for what a table leaves out: `… 1 more path`, `… 48 more paths`.
pub fn more_paths(n: u64) -> String {
    format!(
        "… {} more {}",
        thousands(n),
        if n == 1 { "path" } else { "paths" }
    )
}

/// A signed percentage with one decimal, with the one minus sign every format uses
/// (U+2212, as [`format_delta`]): `+41.0%`, `−28.2%`, `0.0%`.
pub fn signed_percent(p: f64) -> String {
    let s = format!("{:.1}", p.abs());
    if s == "0.0" {
        "0.0%".to_string()
    } else if p > 0.0 {
        format!("+{s}%")
    } else {
        format!("−{s}%")
    }
}

/// `6604` → `6,604`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod shortening_tests {
    use super::*;

    #[test]
    fn shortening() {
        assert_eq!(
            shorten_middle("llama-cpp-rocm-0.0.0", 30),
            "llama-cpp-rocm-0.0.0"
        );
        assert_eq!(
            shorten_middle("rocblas-tensile-fallbacks-5.7.1", 15),
            "rocblas…s-5.7.1"
        );
        assert_eq!(shorten_middle("abcdef", 15).chars().count(), 6);
        assert_eq!(shorten_middle("abcdefghij", 5).chars().count(), 5);
        assert_eq!(shorten_end("abcdefghij", 5), "abcd…");
        let many: Vec<String> = (0..6604).map(|i| (i * 10).to_string()).collect();
        assert_eq!(version_list(&many), "0, 10, … (6,604 versions)");
        assert_eq!(version_list(&["1".into(), "".into()]), "1, ε");
        assert_eq!(thousands(100000), "100,000");
        assert_eq!(thousands(999), "999");
    }
}
