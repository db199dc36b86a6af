//! Escaping for HTML text and attribute values. Store names, file names and evidence
//! details come from the closure under inspection and may be hostile: markup
//! (`<script>`, `</svg>`), quotes, `&`, control characters, newlines, and Unicode
//! bidirectional overrides that would reorder what the reader sees. Everything the
//! page shows from a report goes through [`esc`] (for text in a `<title>`, where our
//! own line breaks are wanted, through [`esc_lines`]).

use std::fmt::Write;

/// Escape `s` for HTML text or a double- or single-quoted attribute value.
///
/// `< > & " '` become character references; control characters (C0, DEL, C1, line
/// and paragraph separators, newlines included) and invisible formatting characters
/// (bidi embeddings, overrides and isolates, marks, zero-width characters, BOM) are
/// written visibly as `\x07` or `\u{202e}`; a `/` following a `/` becomes `&#47;`, so
/// no `//` (and hence no `http://` URL) appears in the page however the data reads.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    push_escaped(&mut out, s);
    out
}

/// Like [`esc`], but keeps `\n` as a line break (for tooltips the renderer builds
/// from lines it escaped itself: the lines must not contain raw newlines).
pub fn esc_lines(lines: &[String]) -> String {
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        push_escaped(&mut out, l);
    }
    out
}

fn push_escaped(out: &mut String, s: &str) {
    let mut prev = '\0';
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '/' if prev == '/' => out.push_str("&#47;"),
            // No `##[` (a CI runner's older workflow-command form) in a page printed
            // to a log: a second `#` in a row is an entity.
            '#' if prev == '#' => out.push_str("&#35;"),
            c if is_control(c) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_invisible_format(c) => {
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
            c => out.push(c),
        }
        prev = c;
    }
}

/// C0 controls (newline and tab included), DEL and C1 controls.
fn is_control(c: char) -> bool {
    (c as u32) < 0x20 || ('\u{7f}'..='\u{9f}').contains(&c)
}

/// Characters that change how text around them is displayed without showing
/// themselves: bidi marks, embeddings, overrides and isolates, zero-width characters,
/// line and paragraph separators, the BOM.
pub(crate) fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_quotes_and_ampersands() {
        assert_eq!(
            esc("<script>alert('x')</script>"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"
        );
        assert_eq!(esc("</svg>\"&amp;"), "&lt;/svg&gt;&quot;&amp;amp;");
    }

    #[test]
    fn controls_newlines_and_bidi_are_visible() {
        assert_eq!(esc("a\nb\tc\u{7}d\u{85}"), "a\\x0ab\\x09c\\x07d\\x85");
        assert_eq!(esc("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(
            esc("\u{2066}x\u{2069}\u{200f}\u{feff}"),
            "\\u{2066}x\\u{2069}\\u{200f}\\u{feff}"
        );
        assert_eq!(esc("caf\u{e9} \u{fffd}"), "caf\u{e9} \u{fffd}");
    }

    #[test]
    fn no_double_slash_survives() {
        let e = esc("see https://example.org//x and /nix/store/abc");
        assert!(!e.contains("//"), "{e}");
        assert!(e.contains("https:/&#47;example.org/&#47;x"), "{e}");
        assert!(e.contains("/nix/store/abc"));
    }

    #[test]
    fn lines_join_with_real_newlines_only() {
        let e = esc_lines(&["a\nb".to_string(), "<c>".to_string()]);
        assert_eq!(e, "a\\x0ab\n&lt;c&gt;");
    }
}
