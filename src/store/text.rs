//! Text from input, made safe to show: which characters would act on a terminal
//! instead of showing ([`is_terminal_hazard`]), and strings quoted in messages with those
//! replaced ([`shown`]). Shared by the store vocabulary's errors, the loaders, the
//! snapshot writer and the renderers.

/// Whether a character would act on a terminal rather than show: a control character
/// (C0, DEL, C1: escape sequences, carriage returns) or a bidirectional embedding,
/// override or isolate (U+202A–U+202E, U+2066–U+2069), which make text read
/// differently from what it is.
pub fn is_terminal_hazard(c: char) -> bool {
    c.is_control()
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// The edit distance of two short strings, counting an insertion, a deletion, a
/// substitution and a swap of two neighbours as one edit each (`tpo` → `top` is 1),
/// for "did you mean" messages.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// A string from input as a message quotes it: at most 300 characters (see
/// [`sanitize`]).
pub(crate) fn shown(s: &str) -> String {
    sanitize(s, 300)
}

/// A piece of untrusted input made fit for a message: at most `max` characters (then
/// `…`), and every character that would act on a terminal (control characters,
/// bidirectional embeddings, overrides and isolates) replaced by `?`.
pub fn sanitize(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max)
        .map(|c| if is_terminal_hazard(c) { '?' } else { c })
        .collect();
    if s.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

/// `text` with everything a CI runner would take for a workflow command made inert.
/// GitHub's runner reads its output line by line (a line ends at LF or CR) and takes
/// a line for a command when, after any leading white space (as .NET's `TrimStart`
/// sees it: every Unicode white space), it begins `::` (`::error::…`,
/// `::stop-commands::…`); its older parser finds `##[` anywhere in a line
/// (`##[error]…`). So the first `:` of such a line is written `escaped_colon`, and
/// the second `#` of every `##[` is written `escaped_hash`: each format's own spelling
/// (`\u{3a}` and `\u{23}` in a terminal, `\:` and `\#` in Markdown). nixcut writes
/// workflow commands only on purpose (`check`'s annotations); a name from the input
/// that would start one (a file called `x\n::error::y`, a long name wrapped onto a
/// line of its own, a name holding `##[error]`) is shown this way instead.
pub fn neutralise_workflow_commands<'a>(
    text: &'a str,
    escaped_colon: &str,
    escaped_hash: &str,
) -> std::borrow::Cow<'a, str> {
    let starts_command = |line: &str| {
        line.trim_start_matches(char::is_whitespace)
            .starts_with("::")
    };
    let hit = text.contains("##[") || text.split(['\n', '\r']).any(starts_command);
    if !hit {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    loop {
        let end = rest.find(['\n', '\r']).map_or(rest.len(), |i| i + 1);
        let (line, tail) = rest.split_at(end);
        let body = line.trim_start_matches(char::is_whitespace);
        let line = if body.starts_with("::") {
            out.push_str(&line[..line.len() - body.len()]);
            out.push_str(escaped_colon);
            &body[1..]
        } else {
            line
        };
        // Every `##[`: `#`, the escaped `#`, and the rest from the `[` on.
        let mut from = 0;
        while let Some(at) = line[from..].find("##[") {
            let at = from + at;
            out.push_str(&line[from..=at]);
            out.push_str(escaped_hash);
            from = at + 2;
        }
        out.push_str(&line[from..]);
        if tail.is_empty() {
            break;
        }
        rest = tail;
    }
    std::borrow::Cow::Owned(out)
}

/// Whether a CI runner would read a workflow command in `text` (see
/// [`neutralise_workflow_commands`]): a line beginning `::` after white space, or a
/// `##[` anywhere.
pub fn has_workflow_command(text: &str) -> bool {
    text.contains("##[")
        || text
            .split(['\n', '\r'])
            .any(|l| l.trim_start_matches(char::is_whitespace).starts_with("::"))
}

#[cfg(test)]
mod workflow_command_tests {
    use super::neutralise_workflow_commands as n;

    #[test]
    fn lines_that_would_be_workflow_commands_are_made_inert() {
        assert_eq!(
            n("plain\ntext: a::b #[x] #\n", "C", "H"),
            "plain\ntext: a::b #[x] #\n"
        );
        assert_eq!(
            n("head e\n::error::pwn.paths → x\n", "\\u{3a}", "H"),
            "head e\n\\u{3a}:error::pwn.paths → x\n"
        );
        // After indentation, after a CR, after Unicode white space.
        assert_eq!(n("a\r  ::warning::x", "C", "H"), "a\r  C:warning::x");
        assert_eq!(n("a\n\u{a0}\u{3000}::x", "C", "H"), "a\n\u{a0}\u{3000}C:x");
        assert_eq!(n("::", "C", "H"), "C:");
        // The older `##[` form, anywhere in a line, every time.
        assert_eq!(n("\t##[error]x\n", "C", "H"), "\t#H[error]x\n");
        assert_eq!(
            n("e\u{d}##[error]p ##[x]", "C", "H"),
            "e\u{d}#H[error]p #H[x]"
        );
        assert_eq!(n("###[", "C", "H"), "##H[");
        // No line of the result would still be read as a command.
        for text in ["::a\n::b\r\n ::c", "x ##[error]y", "####[[", "\u{2003}::z"] {
            let out = n(text, "\\u{3a}", "\\u{23}");
            assert!(!super::has_workflow_command(&out), "{text:?} -> {out:?}");
            assert!(super::has_workflow_command(text), "{text:?}");
        }
    }
}
