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
