//! Text from the input made safe for the terminal and for CI logs, the last step
//! before a message reaches stderr ([`printable`]). No imports from the rest of the
//! command line: every file of it may use this one.

/// `s` with everything a terminal would act on escaped as `\u{…}`: control characters
/// other than newline and tab (C0, DEL, C1: ESC sequences, carriage returns) and the
/// bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069)
/// that make text read differently from what it is; and a line that would read as a CI
/// workflow command (`::error::…`) has its first character spelled `\u{3a}`. Messages
/// quote input (file names, store paths, lines of a file); this is the last step before
/// they reach stderr.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    // Newlines and tabs lay a message out; everything else that acts is escaped.
    let hazard = |c: char| c != '\n' && c != '\t' && nixcut::store::is_terminal_hazard(c);
    if !s.chars().any(hazard) {
        // Nor may a quoted name put a CI workflow command on a line of its own.
        return nixcut::store::neutralise_workflow_commands(s, "\\u{3a}", "\\u{23}");
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if hazard(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(
        nixcut::store::neutralise_workflow_commands(&out, "\\u{3a}", "\\u{23}").into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn printable_escapes_what_a_terminal_would_act_on() {
        assert_eq!(printable("plain\ttext\nnext"), "plain\ttext\nnext");
        assert_eq!(printable("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(printable("\r\u{7f}\u{85}"), "\\u{d}\\u{7f}\\u{85}");
        assert_eq!(
            printable("x\u{202e}y\u{2066}z\u{2069}"),
            "x\\u{202e}y\\u{2066}z\\u{2069}"
        );
        // Other non-ASCII text is left alone.
        assert_eq!(printable("rocblas → 6.0 é"), "rocblas → 6.0 é");
    }
}
