//! `--rules FILE` and `nixcut rules`: the binary reads the user's rules file (the
//! library only parses text, `nixcut::classify::class_rules_from_file`) and lists the
//! rule tables in force: class rules (user rows first, marked), the evidence-kind file
//! rules and the verdict rules, each with its name, what it matches and what it gives.
//!
//! The report and its table, Markdown and JSON writers live here for now, not in
//! `report/` and `render/`: those were being reorganised by format (the `render`
//! branch) when this was written. Moving them there (a `RulesReport` in `report/`, its
//! words in `render/`) is a follow-up for the owners of those modules.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use anyhow::{Context, Result};
use comfy_table::{presets, ContentArrangement, Table};
use serde::Serialize;

use super::args::GlobalArgs;
use super::Outcome;
use nixcut::classify::{
    class_rules_from_file, verdict_rules, ClassRules, FileClassName, Gives, HitCondition, Matcher,
    Place, CLASS_OUT, FILE_RULES,
};
use nixcut::render::{Format, Style};

/// The class rules in force: the built-in table, with the rows of `--rules FILE` ahead
/// of it when given. Errors name the file (and, for its contents, line and column).
pub fn class_rules(g: &GlobalArgs) -> Result<ClassRules> {
    match &g.rules {
        None => Ok(ClassRules::builtin()),
        Some(path) => load(path),
    }
}

/// A rules file larger than this is refused (`--rules /dev/zero` must not eat memory).
const MAX_RULES_FILE: u64 = 16 << 20;

fn load(path: &Path) -> Result<ClassRules> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_RULES_FILE + 1).read_to_end(&mut bytes))
        .with_context(|| format!("cannot read rules file `{}`", path.display()))?;
    if bytes.len() as u64 > MAX_RULES_FILE {
        anyhow::bail!(
            "rules file `{}` is larger than {} MiB",
            path.display(),
            MAX_RULES_FILE >> 20
        );
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| anyhow::anyhow!("rules file `{}` is not UTF-8 text: {e}", path.display()))?;
    Ok(class_rules_from_file(&text, &path.display().to_string())?)
}

/// The `rules` report (JSON: this structure, with `schema_version`).
#[derive(Debug, Serialize)]
struct RulesReport {
    schema_version: u32,
    /// The user's rules file, when one was given.
    rules_file: Option<String>,
    /// File classes: the first matching row wins; user rows come first.
    class_rules: Vec<ClassRow>,
    /// Evidence kinds of hits outside analysed ELF files: the first matching row wins.
    kind_rules: Vec<KindRow>,
    /// Verdicts of single hits: the first matching row wins.
    verdict_rules: Vec<VerdictRow>,
}

#[derive(Debug, Serialize)]
struct ClassRow {
    name: String,
    /// `user` (from the rules file) or `builtin`.
    source: &'static str,
    matches: String,
    class: String,
}

#[derive(Debug, Serialize)]
struct KindRow {
    name: String,
    matches: String,
    kind: String,
}

#[derive(Debug, Serialize)]
struct VerdictRow {
    name: String,
    when: String,
    verdict: String,
    why: String,
}

fn report(g: &GlobalArgs, rules: &ClassRules) -> RulesReport {
    let mut class_rules: Vec<ClassRow> = rules
        .rules()
        .iter()
        .enumerate()
        .map(|(i, r)| ClassRow {
            name: r.id.to_string(),
            source: if rules.is_user_rule(i) {
                "user"
            } else {
                "builtin"
            },
            matches: r.matcher.to_string(),
            class: r.class.to_string(),
        })
        .collect();
    class_rules.push(ClassRow {
        name: CLASS_OUT.to_string(),
        source: "builtin",
        matches: "anything no row above matches".into(),
        class: "out".into(),
    });
    RulesReport {
        schema_version: nixcut::report::SCHEMA_VERSION,
        rules_file: g.rules.as_ref().map(|p| p.display().to_string()),
        class_rules,
        kind_rules: FILE_RULES
            .iter()
            .map(|r| KindRow {
                name: r.name.to_string(),
                matches: describe_matcher(&r.matcher),
                kind: r.kind.to_string(),
            })
            .collect(),
        verdict_rules: verdict_rules()
            .iter()
            .map(|r| VerdictRow {
                name: r.id.to_string(),
                when: describe_condition(r.when),
                verdict: match &r.gives {
                    Gives::Verdict(v) => v.to_string(),
                    Gives::GpuArchOfName => "gpu:<arch of the name>".into(),
                    Gives::GpuArchOfClass => "gpu:<arch of the file's class>".into(),
                },
                why: r.why.to_string(),
            })
            .collect(),
    }
}

fn describe_matcher(m: &Matcher) -> String {
    let list = |v: &[&str]| v.join(" ");
    match *m {
        Matcher::In(Place::Contents) => "a hit in file contents".into(),
        Matcher::In(Place::SymlinkTarget) => "a hit in a symlink target".into(),
        Matcher::In(Place::FileName) => "a hit in a directory entry name".into(),
        Matcher::UnderDir(d) => format!("under {}", list(d)),
        Matcher::NameEndsWith(s) => format!("name ends with {}", list(s)),
        Matcher::NameEndsWithIgnoreCase(s) => {
            format!("name ends with {} (any case)", list(s))
        }
        Matcher::NameIs(s) => format!("name is {}", list(s)),
        Matcher::NameStartsWith(s) => format!("name starts with {}", list(s)),
        Matcher::Shebang => "starts with #!".into(),
        Matcher::ExecutableText => "executable text file".into(),
        Matcher::Text => "text file".into(),
        Matcher::Any => "any other file".into(),
    }
}

fn describe_condition(c: HitCondition) -> String {
    match c {
        HitCondition::DanglingSymlink => "a symlink whose target does not exist".into(),
        HitCondition::SymlinkNamedForArch => {
            "a symlink whose name carries a GPU architecture".into()
        }
        HitCondition::Kind(k) => format!("kind {k}"),
        HitCondition::ClassIn(classes) => {
            let names: Vec<&str> = classes
                .iter()
                .map(|c| match c {
                    FileClassName::Dev => "dev",
                    FileClassName::Static => "static",
                    FileClassName::Doc => "doc",
                    FileClassName::Man => "man",
                    FileClassName::Info => "info",
                    FileClassName::Debug => "debug",
                    FileClassName::Removable => "removable",
                })
                .collect();
            format!("a hit in a file of class {}", names.join(" "))
        }
        HitCondition::GpuClass => "a hit in a gpu:<arch> file".into(),
        HitCondition::UnreachedRuntimeKind => {
            "a runtime kind of hit in a file the consumer does not reach".into()
        }
    }
}

/// `nixcut rules`: print the tables in force.
pub fn run(g: &GlobalArgs, rules: &ClassRules, format: Format, style: &Style) -> Result<Outcome> {
    let r = report(g, rules);
    let mut buf = String::new();
    match format {
        Format::Json => {
            buf = if style.pretty_json {
                serde_json::to_string_pretty(&r)
            } else {
                serde_json::to_string(&r)
            }
            .context("cannot write the rules as JSON")?;
            buf.push('\n');
        }
        Format::Table => table(&r, style, &mut buf),
        Format::Markdown => markdown(&r, &mut buf),
        Format::Html | Format::Dot => {
            anyhow::bail!("`--format html` and `--format dot` are not available for `nixcut rules`")
        }
    }
    let mut out = io::stdout().lock();
    out.write_all(buf.as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write the rules to standard output")?;
    Ok(Outcome::Success)
}

fn new_table(style: &Style, header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    match style.width {
        Some(w) => {
            t.set_width(w);
            t.set_content_arrangement(ContentArrangement::Dynamic);
        }
        None => {
            t.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    if !style.color {
        t.force_no_tty();
    }
    t.set_header(header.to_vec());
    t
}

fn class_heading(r: &RulesReport) -> String {
    let mut s = String::from("File classes (first match wins");
    match &r.rules_file {
        Some(f) => {
            let _ = write!(s, "; rules from {f} come first");
        }
        None => s.push_str("; no --rules file"),
    }
    s.push(')');
    s
}

const KIND_HEADING: &str = "Evidence kinds of hits outside analysed ELF files (first match wins)";
const VERDICT_HEADING: &str = "Verdicts of single hits (first match wins; a reference takes the strongest: runtime > gpu > unknown > dev > doc > removable)";

fn table(r: &RulesReport, style: &Style, out: &mut String) {
    let mut t = new_table(style, &["rule", "source", "matches", "class"]);
    for c in &r.class_rules {
        t.add_row(vec![&c.name, c.source, &c.matches, &c.class]);
    }
    let _ = writeln!(out, "{}\n{t}\n", class_heading(r));
    let mut t = new_table(style, &["rule", "matches", "kind"]);
    for k in &r.kind_rules {
        t.add_row(vec![&k.name, &k.matches, &k.kind]);
    }
    let _ = writeln!(out, "{KIND_HEADING}\n{t}\n");
    let mut t = new_table(style, &["rule", "when", "verdict", "why"]);
    for v in &r.verdict_rules {
        t.add_row(vec![&v.name, &v.when, &v.verdict, &v.why]);
    }
    let _ = writeln!(out, "{VERDICT_HEADING}\n{t}");
}

/// A Markdown code span's text (`|` would end the cell).
fn md(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Plain Markdown text: `_`, `*`, `<` and `|` shown as themselves.
fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' | '_' | '*' | '`' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    out
}

fn markdown(r: &RulesReport, out: &mut String) {
    let _ = writeln!(out, "### {}\n", md_text(&class_heading(r)));
    let _ = writeln!(
        out,
        "| rule | source | matches | class |\n|---|---|---|---|"
    );
    for c in &r.class_rules {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | `{}` |",
            md(&c.name),
            c.source,
            md_text(&c.matches),
            md(&c.class)
        );
    }
    let _ = writeln!(out, "\n### {KIND_HEADING}\n");
    let _ = writeln!(out, "| rule | matches | kind |\n|---|---|---|");
    for k in &r.kind_rules {
        let _ = writeln!(
            out,
            "| `{}` | {} | `{}` |",
            md(&k.name),
            md_text(&k.matches),
            k.kind
        );
    }
    let _ = writeln!(out, "\n### {VERDICT_HEADING}\n");
    let _ = writeln!(out, "| rule | when | verdict | why |\n|---|---|---|---|");
    for v in &r.verdict_rules {
        let _ = writeln!(
            out,
            "| `{}` | {} | `{}` | {} |",
            md(&v.name),
            md_text(&v.when),
            md(&v.verdict),
            md_text(&v.why)
        );
    }
}
