//! `--comment` (`diff`, `check`): its flags checked and turned into the renderer's
//! [`CommentOptions`], before any work, and the comment written.

use anyhow::{anyhow, Result};

use super::args::CommentArgs;
use super::output::printable;
use nixcut::render::{check_comment_id, Comment, CommentOptions, Format, DEFAULT_COMMENT_ID};

/// The longest `--artifact-url` taken (a URL, not a document).
const MAX_URL: usize = 2000;

/// The comment's options when `--comment` is given; `json_command` is how to get the
/// whole report without an artifact. Refuses a bad id or URL, and a `--format` other
/// than Markdown when the comment goes to standard output (`to_stdout`).
pub(super) fn options(
    a: &CommentArgs,
    format: Format,
    to_stdout: bool,
    json_command: String,
) -> Result<Option<CommentOptions>> {
    if !a.comment {
        return Ok(None);
    }
    if to_stdout && !matches!(format, Format::Markdown | Format::Table) {
        return Err(anyhow!(
            "--comment writes a Markdown comment on standard output; drop --format or give \
             --format markdown"
        ));
    }
    let id = a.comment_id.as_deref().unwrap_or(DEFAULT_COMMENT_ID);
    check_comment_id(id).map_err(|e| anyhow!("--comment-id `{}`: {e}", printable(id)))?;
    if let Some(url) = &a.artifact_url {
        let ok_scheme = url.starts_with("https://") || url.starts_with("http://");
        if !ok_scheme {
            return Err(anyhow!(
                "--artifact-url `{}` is not an http:// or https:// URL",
                printable(url)
            ));
        }
        if url.len() > MAX_URL {
            return Err(anyhow!(
                "--artifact-url is {} bytes long; at most {MAX_URL}",
                url.len()
            ));
        }
        if let Some((i, c)) = url
            .char_indices()
            .find(|(_, c)| c.is_whitespace() || c.is_control())
        {
            return Err(anyhow!(
                "--artifact-url has {c:?} at character {}; a URL has no spaces or control \
                 characters",
                url[..i].chars().count() + 1
            ));
        }
    }
    Ok(Some(CommentOptions {
        id: id.to_string(),
        artifact_url: a.artifact_url.clone(),
        json_command,
    }))
}

/// The comment's bytes.
pub(super) fn bytes(c: Comment<'_>, opts: &CommentOptions) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    nixcut::render::comment(c, opts, &mut buf)?;
    Ok(buf)
}

/// `nixcut diff OLD NEW --format json`, the inputs quoted for a shell when they need
/// it.
pub(super) fn json_command(words: &[&str]) -> String {
    let mut s = String::from("nixcut");
    for w in words {
        s.push(' ');
        s.push_str(&shell_word(w));
    }
    s.push_str(" --format json");
    s
}

fn shell_word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=+,@%#".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_quote_what_a_shell_would_split() {
        assert_eq!(
            json_command(&["diff", "old.json", "a b"]),
            "nixcut diff old.json 'a b' --format json"
        );
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }
}
