//! What a pull-request comment is made of (`--comment`): the reports it can hold
//! ([`Comment`]), its options ([`CommentOptions`]: the id of its stable first line, the
//! link to the JSON report), the first line a bot finds it by ([`marker`]) and the size
//! it must fit ([`COMMENT_LIMIT`]). The Markdown itself is `render::markdown`'s.

use crate::report::{CheckReport, DiffReport, SetDiffReport};

/// The most characters GitHub keeps in a comment body (65,536). A comment is held to
/// it in bytes, which also holds it in characters (a character is at least one byte).
pub const COMMENT_LIMIT: usize = 65_536;

/// The id when `--comment-id` is not given.
pub const DEFAULT_COMMENT_ID: &str = "closure-size";

/// The most characters of a comment id (it is one line of an HTML comment).
pub const MAX_COMMENT_ID: usize = 100;

/// A report as a pull-request comment.
#[derive(Debug, Clone, Copy)]
pub enum Comment<'a> {
    /// `nixcut diff OLD NEW` of two closures.
    Diff(&'a DiffReport),
    /// `nixcut diff` or `check` of two package sets (a check carries its verdict).
    SetDiff(&'a SetDiffReport),
    /// `nixcut check ROOT`: the verdict, then the diff against the baseline when there
    /// is one.
    Check(&'a CheckReport, Option<&'a DiffReport>),
}

/// How the comment is told apart and where the whole report is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommentOptions {
    /// The id of the stable first line (`--comment-id`), checked by [`check_comment_id`].
    pub id: String,
    /// Where the JSON report is (`--artifact-url`): every folded or left-out row is in
    /// it.
    pub artifact_url: Option<String>,
    /// The command that prints the whole report as JSON, said when there is no
    /// artifact (`nixcut diff OLD NEW --format json`).
    pub json_command: String,
}

/// The first line of every comment: `<!-- nixcut:comment id=ID -->`. A bot lists a
/// pull request's comments and updates the one whose body starts with it.
pub fn marker(id: &str) -> String {
    format!("<!-- nixcut:comment id={id} -->")
}

/// A comment id is 1 to [`MAX_COMMENT_ID`] characters of `A-Z a-z 0-9 . _ -`, so that
/// the first line can never close its HTML comment or spill onto a second line.
pub fn check_comment_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("the comment id is empty; give letters, digits, `.`, `_` or `-`".into());
    }
    if id.chars().count() > MAX_COMMENT_ID {
        return Err(format!(
            "the comment id is {} characters long; at most {MAX_COMMENT_ID}",
            id.chars().count()
        ));
    }
    if let Some((i, c)) = id
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(format!(
            "the comment id has {c:?} at character {}; only letters, digits, `.`, `_` and \
             `-` are allowed",
            id[..i].chars().count() + 1
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert!(check_comment_id("closure-size").is_ok());
        assert!(check_comment_id("a.B_9-x").is_ok());
        assert!(check_comment_id("").is_err());
        let e = check_comment_id("ab-->x").unwrap_err();
        assert!(e.contains("'>' at character 5"), "{e}");
        assert!(check_comment_id("a b").is_err());
        assert!(check_comment_id("a\nb").is_err());
        assert!(check_comment_id("é").is_err());
        assert!(check_comment_id(&"x".repeat(101)).is_err());
        assert_eq!(marker("x"), "<!-- nixcut:comment id=x -->");
    }
}
