//! The budget of a comment: whatever the body does with the room it is given (ignore
//! it, open `<details>` it never closes, write multi-byte characters or lines that
//! read as workflow commands), the comment holds at most the limit in bytes and in
//! characters, starts with its head and closes every `<details>`.

use proptest::prelude::*;

use super::{cut_to, fit, link_target};

fn balanced(s: &str) -> bool {
    s.matches("<details>").count() == s.matches("</details>").count()
}

fn check(head: &str, foot: &str, limit: usize, out: &str) {
    assert!(out.len() <= limit, "{} bytes > {limit}", out.len());
    assert!(out.chars().count() <= limit);
    if head.len() + foot.len() + 200 <= limit {
        assert!(out.starts_with(head), "the head comes first");
        assert!(balanced(out), "every <details> closed:\n{out}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_body_fits(
        line in "(\\PC|é|😀|<details>|::error::x|##\\[warning\\]){0,40}",
        lines in 0usize..5_000,
        obey in any::<bool>(),
        limit in prop_oneof![Just(65_536usize), 0usize..70_000],
    ) {
        let head = "<!-- nixcut:comment id=t -->\n### title\n\n";
        let foot = "\n<sub>foot</sub>\n";
        let body = |room: usize| {
            let mut s = String::new();
            s.push_str("<details><summary>x</summary>\n\n");
            for _ in 0..lines {
                if obey && s.len() + line.len() + 20 > room {
                    break;
                }
                s.push_str(&line);
                s.push('\n');
            }
            s.push_str("</details>\n");
            s
        };
        let out = fit(head, foot, limit, body);
        check(head, foot, limit, &out);
        // A body that keeps within its room is kept whole.
        if obey && !line.contains("::") && !line.contains("##[") && limit >= 2000 {
            prop_assert!(out.contains("</details>\n\n<sub>") || out.ends_with("</sub>\n"));
        }
    }

    #[test]
    fn cut_keeps_whole_characters(
        text in "((\\PC|😀|\n){0,150}<details>){0,3}(\\PC|😀|\n){0,150}",
        max in 0usize..2000,
    ) {
        let c = cut_to(&text, max);
        prop_assert!(c.len() <= max || text.len() <= max);
        if max >= 200 {
            prop_assert!(balanced(&c) || text.len() <= max);
        }
    }
}

#[test]
fn a_body_that_ignores_its_room_is_cut_at_a_line() {
    let head = "<!-- nixcut:comment id=t -->\n";
    let body = |_room: usize| {
        let mut s = String::from("<details><summary>many</summary>\n\n");
        for i in 0..100_000 {
            s.push_str(&format!("| {i} | row |\n"));
        }
        s
    };
    let out = fit(head, "", 65_536, body);
    check(head, "", 65_536, &out);
    assert!(out.contains("… (cut to fit a comment)"), "says it was cut");
    assert!(out.trim_end().ends_with("</details>"));
}

#[test]
fn link_targets_cannot_end_the_link() {
    assert_eq!(
        link_target("https://x/a b)c\n<d>"),
        "https://x/a%20b%29c%0A%3Cd%3E"
    );
    assert_eq!(link_target("https://x/?a=1&b=2#f"), "https://x/?a=1&b=2#f");
}
