//! The "a similar argument exists" tip for a mistyped option, from the nearest option of
//! the subcommand the user typed: clap's own pick proposed `--http-connections` for
//! `--tpo` (meaning `--top`).

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::CommandFactory;

use super::Cli;

/// `e` with its suggestion replaced by the nearest long option (edit distance at most
/// 2, or a third of the word) of the subcommand on the command line; other errors as
/// they are.
pub fn better_suggestion(e: clap::Error) -> clap::Error {
    if e.kind() == ErrorKind::InvalidSubcommand {
        return nearest_subcommand(e);
    }
    if e.kind() != ErrorKind::UnknownArgument {
        return e;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg).cloned() else {
        return e;
    };
    let Some(typed) = arg.strip_prefix("--") else {
        return e;
    };
    let typed = typed.split('=').next().unwrap_or(typed);
    let mut root = Cli::command();
    root.build();
    let words: Vec<String> = std::env::args().skip(1).collect();
    let sub = words
        .iter()
        .find_map(|w| root.get_subcommands().find(|s| s.get_name() == w.as_str()));
    let cmd = sub.unwrap_or(&root);
    let best = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long())
        .map(|l| (nixcut::store::edit_distance(typed, l), l))
        .min();
    let mut c = cmd.clone();
    let mut fresh = clap::Error::new(ErrorKind::UnknownArgument).with_cmd(&c);
    fresh.insert(ContextKind::InvalidArg, ContextValue::String(arg.clone()));
    if let Some((_, long)) = best.filter(|(d, _)| *d <= 2.max(typed.chars().count() / 3)) {
        fresh.insert(
            ContextKind::SuggestedArg,
            ContextValue::String(format!("--{long}")),
        );
    }
    fresh.insert(
        ContextKind::Usage,
        ContextValue::StyledStr(c.render_usage()),
    );
    fresh
}

/// A mistyped subcommand (`nixcut wyh`) with the nearest subcommand as the tip (edit
/// distance at most 2, a swap of neighbours counting one): clap's own similarity
/// measure proposed nothing for `wyh`.
fn nearest_subcommand(e: clap::Error) -> clap::Error {
    let Some(ContextValue::String(typed)) = e.get(ContextKind::InvalidSubcommand).cloned() else {
        return e;
    };
    let mut root = Cli::command();
    root.build();
    let best = root
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .filter(|n| n != "help")
        .map(|n| (nixcut::store::edit_distance(&typed, &n), n))
        .min();
    let mut fresh = clap::Error::new(ErrorKind::InvalidSubcommand).with_cmd(&root);
    fresh.insert(
        ContextKind::InvalidSubcommand,
        ContextValue::String(typed.clone()),
    );
    if let Some((_, name)) = best.filter(|(d, _)| *d <= 2.max(typed.chars().count() / 3)) {
        fresh.insert(
            ContextKind::SuggestedSubcommand,
            ContextValue::Strings(vec![name]),
        );
    }
    fresh.insert(
        ContextKind::Usage,
        ContextValue::StyledStr(root.render_usage()),
    );
    fresh
}

#[cfg(test)]
mod tests {
    use nixcut::store::edit_distance as distance;

    #[test]
    fn transpositions_are_one_edit() {
        assert_eq!(distance("tpo", "top"), 1);
        assert_eq!(distance("top", "top"), 0);
        assert!(distance("tpo", "http-connections") > 10);
    }
}
