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

/// A string from input as a message quotes it: at most 300 characters, and every
/// character that would act on a terminal (control characters, bidirectional
/// embeddings, overrides and isolates) replaced by `?`.
pub(crate) fn shown(s: &str) -> String {
    const MAX: usize = 300;
    let mut out: String = s
        .chars()
        .take(MAX)
        .map(|c| if is_terminal_hazard(c) { '?' } else { c })
        .collect();
    if s.chars().nth(MAX).is_some() {
        out.push('…');
    }
    out
}
