//! The split written into the package's own expression, from the same [`SplitAttrs`]
//! as the overlay (`crate::render::nix`):
//!
//! - [`SplitAttributes`]: the attributes to add to the package's `mkDerivation`
//!   attribute set, as text (no expression given).
//! - [`SplitExpr`]: a unified diff of the package's `default.nix` (`--expr FILE`).
//!
//! The expression is parsed with `rnix`: the file must be a function of a formal
//! argument set (`{ lib, stdenv, … }:`) returning a `mkDerivation` call whose argument
//! is an attribute set, `rec { … }` or `finalAttrs: { … }`. The text is then edited by
//! ranges, keeping everything else byte for byte:
//!
//! - `outputs` and each setting replace an attribute of the same name, or are added;
//! - `nativeBuildInputs` items go inside an existing list (`x ++ [ … ]` when it is not a
//!   list), else a new attribute;
//! - the `postFixup` lines go before the closing `''` of an existing indented string
//!   (`x + ''…''` when it is another expression), else a new attribute;
//! - arguments that are not formals yet are added after the last formal, in the
//!   formals' own style (one line, leading or trailing commas);
//! - new attributes go in one block right after `src` (else `version`, else `pname` or
//!   `name`, else before the closing `}`), with the notes as `#` comments above
//!   `outputs`, indented like the set's first member.
//!
//! The diff's headers are `a/PATH` and `b/PATH`, PATH being FILE as given when it is a
//! relative path without `..` (apply with `patch -p1` or `git apply` in the directory
//! nixcut ran in), else FILE's base name (apply with `patch -p1` in FILE's directory).

use std::fmt;

use rnix::ast::{self, HasEntry};
use rnix::parser::ParseError;
use rnix::{SyntaxKind, TextRange};
use rowan::ast::AstNode;

use super::nix::{comment, split_attrs, SplitAttrs};
use crate::report::{
    ExpressionError, ExpressionFile, ExpressionProblem, SplitAttributes, SplitExpr,
};

/// The attributes to add, indented by nothing.
impl fmt::Display for SplitAttributes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&attributes_text(&split_attrs(&self.0)))
    }
}

impl SplitExpr<'_> {
    /// The unified diff of the file with the split in its `mkDerivation`.
    pub fn diff(&self) -> Result<String, ExpressionError> {
        let a = split_attrs(&self.code);
        expression_diff(&a, &self.file.name, &self.file.text)
    }
}

impl fmt::Display for ExpressionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        match &self.problem {
            ExpressionProblem::Syntax(what) => write!(f, "not a Nix expression: {what}"),
            ExpressionProblem::NotAFunction => f.write_str(
                "not a package expression: the file should be a function of its \
                 dependencies, `{ lib, stdenv, … }: stdenv.mkDerivation …`",
            ),
            ExpressionProblem::NoMkDerivation => f.write_str(
                "no mkDerivation call: the function should return `stdenv.mkDerivation { … }` \
                 (or `rec { … }`, `(finalAttrs: { … })`)",
            ),
            ExpressionProblem::SeveralMkDerivations(n) => write!(
                f,
                "{n} mkDerivation calls and none of them is what the function returns; \
                 give the package's own expression"
            ),
            ExpressionProblem::NotAnAttrSet => f.write_str(
                "mkDerivation's argument is not an attribute set (`{ … }`, `rec { … }` or \
                 `finalAttrs: { … }`)",
            ),
            ExpressionProblem::Inherited(name) => write!(
                f,
                "`{name}` is inherited here, and the split sets it: write it as \
                 `{name} = …;` first"
            ),
        }
    }
}

impl std::error::Error for ExpressionError {}

/// Whether FILE can take a split: a function returning a `mkDerivation` call on an
/// attribute set (the CLI checks this before any scanning).
pub fn check_expression(file: &ExpressionFile) -> Result<(), ExpressionError> {
    parse(&file.name, &file.text).map(|_| ())
}

/// The path in the diff's headers (see the module's documentation).
fn header_path(name: &str) -> String {
    let p = std::path::Path::new(name);
    let plain = p.is_relative()
        && p.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
    if plain {
        let parts: Vec<String> = p
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        if !parts.is_empty() {
            return parts.join("/");
        }
    }
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "default.nix".to_string())
}

/// The unified diff of `text` (FILE `name`) with `a` written into it.
pub(crate) fn expression_diff(
    a: &SplitAttrs,
    name: &str,
    text: &str,
) -> Result<String, ExpressionError> {
    let new = patched(a, name, text)?;
    let path = header_path(name);
    Ok(similar::TextDiff::from_lines(text, new.as_str())
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string())
}

/// `"out" "dev"`, as a list's items.
fn output_list(a: &SplitAttrs) -> String {
    let outs: Vec<String> = a.outputs.iter().map(|o| format!("\"{o}\"")).collect();
    format!("[ {} ]", outs.join(" "))
}

/// A `postFixup` line of [`SplitAttrs`] (written for a member indentation of two
/// spaces: four spaces first) with `inner` instead of those four spaces.
fn reindent(line: &str, inner: &str) -> String {
    match line.strip_prefix("    ") {
        Some(rest) => format!("{inner}{rest}"),
        None => format!("{inner}{}", line.trim_start()),
    }
}

/// The attributes of a split as they would stand in an attribute set, indented by
/// nothing; the arguments to add and what merges with existing attributes in comments.
fn attributes_text(a: &SplitAttrs) -> String {
    let mut s = String::new();
    if !a.args.is_empty() {
        s.push_str(&format!(
            "# the function's arguments gain: {}\n",
            a.args.join(", ")
        ));
    }
    s.push_str("# an existing attribute of the same name is replaced, except nativeBuildInputs and postFixup, which are appended to\n");
    for line in new_attributes(a, "", "  ", true, true) {
        s.push_str(&line);
        s.push('\n');
    }
    s
}

/// The lines of the attributes added (without indentation `ind`, inner lines with
/// `inner`): notes and `outputs` (when `outputs`), settings, `nativeBuildInputs` and
/// `postFixup` (when asked).
fn new_attributes(a: &SplitAttrs, ind: &str, unit: &str, outputs: bool, rest: bool) -> Vec<String> {
    let mut v = Vec::new();
    if outputs {
        for n in &a.notes {
            v.push(format!("{ind}# {}", comment(n)));
        }
        v.push(format!("{ind}outputs = {};", output_list(a)));
    }
    if !rest {
        return v;
    }
    for (name, value) in &a.settings {
        v.push(format!("{ind}{name} = {value};"));
    }
    if !a.native_build_inputs.is_empty() {
        v.push(format!(
            "{ind}nativeBuildInputs = [ {} ];",
            a.native_build_inputs.join(" ")
        ));
    }
    v.extend(post_fixup_attribute(a, ind, unit));
    v
}

/// `postFixup = '' … '';` with the split's lines (none without lines).
fn post_fixup_attribute(a: &SplitAttrs, ind: &str, unit: &str) -> Vec<String> {
    if a.post_fixup.is_empty() {
        return Vec::new();
    }
    let inner = format!("{ind}{unit}");
    let mut v = vec![format!("{ind}postFixup = ''")];
    v.extend(a.post_fixup.iter().map(|l| reindent(l, &inner)));
    v.push(format!("{ind}'';"));
    v
}

/// What the edits need to know of the expression.
struct Parsed {
    /// The formal argument set `{ … }`.
    pattern: ast::Pattern,
    /// The `mkDerivation` attribute set.
    set: ast::AttrSet,
}

fn error_at(name: &str, text: &str, offset: usize, problem: ExpressionProblem) -> ExpressionError {
    let (line, column) = line_column(text, offset);
    ExpressionError {
        file: name.to_string(),
        line,
        column,
        problem,
    }
}

/// 1-based line and column (characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

fn start(n: &impl AstNode) -> usize {
    usize::from(n.syntax().text_range().start())
}

fn end(n: &impl AstNode) -> usize {
    usize::from(n.syntax().text_range().end())
}

/// The parser's first error, where it is and what it is.
fn syntax_error(text: &str, e: &ParseError) -> (usize, String) {
    let at = |r: &TextRange| usize::from(r.start());
    match e {
        ParseError::Unexpected(r) => (at(r), "unexpected text".to_string()),
        ParseError::UnexpectedExtra(r) => (at(r), "unexpected text after the expression".into()),
        ParseError::UnexpectedWanted(got, r, want) => (
            at(r),
            format!("found {got:?}, expected one of {want:?}")
                .replace("TOKEN_", "")
                .replace("NODE_", ""),
        ),
        ParseError::UnexpectedDoubleBind(r) => (at(r), "a pattern bound twice".into()),
        ParseError::DuplicatedArgs(r, n) => (at(r), format!("argument `{n}` twice")),
        ParseError::UnexpectedEOF | ParseError::UnexpectedEOFWanted(_) => {
            (text.len(), "unexpected end of file".into())
        }
        other => (0, other.to_string()),
    }
}

/// The expression inside any parentheses.
fn unparen(mut e: ast::Expr) -> ast::Expr {
    while let ast::Expr::Paren(p) = &e {
        match p.expr() {
            Some(inner) => e = inner,
            None => break,
        }
    }
    e
}

/// What an expression evaluates to through `let … in`, `with …;`, `assert …;` and
/// parentheses.
fn result_of(mut e: ast::Expr) -> ast::Expr {
    loop {
        let next = match &e {
            ast::Expr::Paren(p) => p.expr(),
            ast::Expr::LetIn(l) => l.body(),
            ast::Expr::With(w) => w.body(),
            ast::Expr::Assert(a) => a.body(),
            _ => None,
        };
        match next {
            Some(n) => e = n,
            None => return e,
        }
    }
}

/// Whether `f` names `mkDerivation` (`mkDerivation`, `stdenv.mkDerivation`, …).
fn is_mk_derivation(f: &ast::Expr) -> bool {
    let name = match unparen(f.clone()) {
        ast::Expr::Ident(i) => i.ident_token().map(|t| t.text().to_string()),
        ast::Expr::Select(s) if s.default_expr().is_none() => s
            .attrpath()
            .and_then(|p| p.attrs().last())
            .and_then(|a| match a {
                ast::Attr::Ident(i) => i.ident_token().map(|t| t.text().to_string()),
                _ => None,
            }),
        _ => None,
    };
    name.as_deref() == Some("mkDerivation")
}

/// The attribute set of a `mkDerivation` call: its argument, or `finalAttrs:`'s body.
fn call_set(name: &str, text: &str, call: &ast::Apply) -> Result<ast::AttrSet, ExpressionError> {
    let not_set = |at: usize| error_at(name, text, at, ExpressionProblem::NotAnAttrSet);
    let arg = call.argument().ok_or_else(|| not_set(end(call)))?;
    match unparen(arg.clone()) {
        ast::Expr::AttrSet(s) => Ok(s),
        ast::Expr::Lambda(l) => match l.body().map(result_of) {
            Some(ast::Expr::AttrSet(s)) => Ok(s),
            Some(b) => Err(not_set(start(&b))),
            None => Err(not_set(end(&l))),
        },
        other => Err(not_set(start(&other))),
    }
}

/// The formals and the `mkDerivation` attribute set of a package expression.
fn parse(name: &str, text: &str) -> Result<Parsed, ExpressionError> {
    let parsed = rnix::Root::parse(text);
    if let Some(e) = parsed.errors().first() {
        let (at, what) = syntax_error(text, e);
        return Err(error_at(name, text, at, ExpressionProblem::Syntax(what)));
    }
    let root = parsed.tree();
    let not_function = |at: usize| error_at(name, text, at, ExpressionProblem::NotAFunction);
    let expr = root.expr().ok_or_else(|| not_function(0))?;
    let lambda = match result_of(expr.clone()) {
        ast::Expr::Lambda(l) => l,
        other => return Err(not_function(start(&other))),
    };
    let pattern = match lambda.param() {
        Some(ast::Param::Pattern(p)) => p,
        _ => return Err(not_function(start(&lambda))),
    };
    let body = lambda.body().ok_or_else(|| not_function(end(&lambda)))?;
    let result = result_of(body.clone());
    if let ast::Expr::Apply(call) = &result {
        if call.lambda().is_some_and(|f| is_mk_derivation(&f)) {
            let set = call_set(name, text, call)?;
            return Ok(Parsed { pattern, set });
        }
    }
    // Not what the function returns: the one mkDerivation call inside, if one.
    let calls: Vec<ast::Apply> = body
        .syntax()
        .descendants()
        .filter_map(ast::Apply::cast)
        .filter(|a| a.lambda().is_some_and(|f| is_mk_derivation(&f)))
        .collect();
    match calls.as_slice() {
        [one] => {
            let set = call_set(name, text, one)?;
            Ok(Parsed { pattern, set })
        }
        [] => Err(error_at(
            name,
            text,
            start(&result),
            ExpressionProblem::NoMkDerivation,
        )),
        many => Err(error_at(
            name,
            text,
            start(&result),
            ExpressionProblem::SeveralMkDerivations(many.len()),
        )),
    }
}

/// The byte offset where the line holding `pos` starts.
fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// The whitespace the line holding `pos` starts with.
fn indent_at(text: &str, pos: usize) -> &str {
    let s = line_start(text, pos);
    let line = &text[s..];
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

/// Whether only spaces and tabs stand before `pos` on its line.
fn first_on_line(text: &str, pos: usize) -> bool {
    text[line_start(text, pos)..pos]
        .chars()
        .all(|c| c == ' ' || c == '\t')
}

/// The offset after `pos`'s line (its newline included) when only spaces, tabs or a
/// comment follow `pos` on it.
fn after_line(text: &str, pos: usize) -> Option<usize> {
    let rest = &text[pos..];
    let eol = rest.find('\n')?;
    let tail = rest[..eol].trim();
    (tail.is_empty() || tail.starts_with('#')).then_some(pos + eol + 1)
}

/// One edit: replace `start..end` with `text`.
struct Edit {
    start: usize,
    end: usize,
    text: String,
}

/// The single-identifier attributes of a set, by name.
fn members(set: &ast::AttrSet) -> Vec<(String, ast::AttrpathValue)> {
    set.attrpath_values()
        .filter_map(|v| {
            let mut attrs = v.attrpath()?.attrs();
            let first = attrs.next()?;
            if attrs.next().is_some() {
                return None;
            }
            match first {
                ast::Attr::Ident(i) => Some((i.ident_token()?.text().to_string(), v)),
                _ => None,
            }
        })
        .collect()
}

/// The names a set inherits, with where.
fn inherited(set: &ast::AttrSet) -> Vec<(String, usize)> {
    let mut v = Vec::new();
    for i in set.inherits() {
        for a in i.attrs() {
            if let ast::Attr::Ident(id) = a {
                if let Some(t) = id.ident_token() {
                    v.push((t.text().to_string(), start(&id)));
                }
            }
        }
    }
    v
}

/// `text` with the split written into its `mkDerivation` attribute set.
pub(crate) fn patched(a: &SplitAttrs, name: &str, text: &str) -> Result<String, ExpressionError> {
    let Parsed { pattern, set } = parse(name, text)?;
    let members = members(&set);
    let find = |n: &str| members.iter().find(|(m, _)| m == n).map(|(_, v)| v);
    let mut sets: Vec<&str> = vec!["outputs"];
    sets.extend(a.settings.iter().map(|(n, _)| n.as_str()));
    for (n, at) in inherited(&set) {
        if sets.contains(&n.as_str()) {
            return Err(error_at(name, text, at, ExpressionProblem::Inherited(n)));
        }
    }

    // The set's indentation: its first member's, else its closing brace's plus two.
    let close = set
        .r_curly_token()
        .map(|t| usize::from(t.text_range().start()))
        .unwrap_or_else(|| end(&set));
    let close_indent = indent_at(text, close).to_string();
    let ind = match set.entries().next() {
        Some(e) if first_on_line(text, start(&e)) => indent_at(text, start(&e)).to_string(),
        _ => format!("{close_indent}  "),
    };
    let unit = match ind.strip_prefix(close_indent.as_str()) {
        Some(u) if !u.is_empty() => u.to_string(),
        _ => "  ".to_string(),
    };

    let mut edits: Vec<Edit> = Vec::new();
    let mut block: Vec<String> = Vec::new();
    // A replaced attribute keeps its place; a new one goes in the block.
    let replace =
        |edits: &mut Vec<Edit>, block: &mut Vec<String>, n: &str, lines: Vec<String>| match find(n)
        {
            Some(v) => edits.push(Edit {
                start: start(v),
                end: end(v),
                text: lines
                    .iter()
                    .enumerate()
                    .map(|(i, l)| {
                        if i == 0 {
                            l.trim_start().to_string()
                        } else {
                            l.clone()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            }),
            None => block.extend(lines),
        };
    replace(
        &mut edits,
        &mut block,
        "outputs",
        new_attributes(a, &ind, &unit, true, false),
    );
    for (n, value) in &a.settings {
        replace(
            &mut edits,
            &mut block,
            n,
            vec![format!("{ind}{n} = {value};")],
        );
    }
    native_inputs(
        a,
        text,
        find("nativeBuildInputs"),
        &ind,
        &mut edits,
        &mut block,
    );
    post_fixup(
        a,
        text,
        find("postFixup"),
        &ind,
        &unit,
        &mut edits,
        &mut block,
    );
    formals(a, text, &pattern, &mut edits);

    if !block.is_empty() {
        let anchor = ["src", "version", "pname", "name"]
            .iter()
            .find_map(|n| find(n));
        let lines = block.join("\n");
        let edit = match anchor.map(|v| (end(v), after_line(text, end(v)))) {
            // A file that separates attributes by blank lines gets one before the block.
            Some((_, Some(next))) if text[next..].starts_with('\n') => {
                (next, format!("\n{lines}\n"))
            }
            Some((_, Some(next))) => (next, format!("{lines}\n")),
            Some((at, None)) => (at, format!("\n{lines}\n{ind}")),
            None if first_on_line(text, close) => (line_start(text, close), format!("{lines}\n")),
            None => (close, format!("\n{lines}\n{close_indent}")),
        };
        edits.push(Edit {
            start: edit.0,
            end: edit.0,
            text: edit.1,
        });
    }
    Ok(apply(text, edits))
}

/// `nativeBuildInputs`: the items added inside an existing list (those not there
/// yet), `x ++ [ … ]` for another expression, else a new attribute.
fn native_inputs(
    a: &SplitAttrs,
    text: &str,
    existing: Option<&ast::AttrpathValue>,
    ind: &str,
    edits: &mut Vec<Edit>,
    block: &mut Vec<String>,
) {
    if a.native_build_inputs.is_empty() {
        return;
    }
    let Some(value) = existing.and_then(|v| v.value()) else {
        block.push(format!(
            "{ind}nativeBuildInputs = [ {} ];",
            a.native_build_inputs.join(" ")
        ));
        return;
    };
    if let ast::Expr::List(list) = &value {
        let have: Vec<String> = list.items().map(|i| i.syntax().to_string()).collect();
        let add: Vec<&String> = a
            .native_build_inputs
            .iter()
            .filter(|n| !have.contains(n))
            .collect();
        if add.is_empty() {
            return;
        }
        let close = list
            .r_brack_token()
            .map(|t| usize::from(t.text_range().start()))
            .unwrap_or_else(|| end(list));
        let last = list.items().last();
        let multi_line = last
            .as_ref()
            .is_some_and(|l| first_on_line(text, start(l)) && first_on_line(text, close));
        if let (true, Some(l)) = (multi_line, &last) {
            let item_indent = indent_at(text, start(l));
            let lines: String = add.iter().map(|n| format!("\n{item_indent}{n}")).collect();
            edits.push(Edit {
                start: end(l),
                end: end(l),
                text: lines,
            });
        } else {
            let at = last.as_ref().map_or_else(
                || {
                    list.l_brack_token()
                        .map_or(close, |t| usize::from(t.text_range().end()))
                },
                end,
            );
            let words: String = add.iter().map(|n| format!(" {n}")).collect();
            edits.push(Edit {
                start: at,
                end: at,
                text: words,
            });
        }
        return;
    }
    let simple = matches!(
        value,
        ast::Expr::Ident(_) | ast::Expr::Select(_) | ast::Expr::Apply(_) | ast::Expr::BinOp(_)
    );
    let (s, e) = (start(&value), end(&value));
    let tail = format!(" ++ [ {} ]", a.native_build_inputs.join(" "));
    append_to(edits, s, e, simple, tail);
}

/// `tail` after the value spanning `s..e`, the value in parentheses unless `simple`
/// (an operand that binds tighter than the operator `tail` starts with).
fn append_to(edits: &mut Vec<Edit>, s: usize, e: usize, simple: bool, tail: String) {
    if !simple {
        edits.push(Edit {
            start: s,
            end: s,
            text: "(".into(),
        });
    }
    let text = if simple { tail } else { format!("){tail}") };
    edits.push(Edit {
        start: e,
        end: e,
        text,
    });
}

/// `postFixup`: the lines before the closing `''` of an existing indented string,
/// `x + ''…''` for another expression, else a new attribute.
fn post_fixup(
    a: &SplitAttrs,
    text: &str,
    existing: Option<&ast::AttrpathValue>,
    ind: &str,
    unit: &str,
    edits: &mut Vec<Edit>,
    block: &mut Vec<String>,
) {
    if a.post_fixup.is_empty() {
        return;
    }
    let Some(value) = existing.and_then(|v| v.value()) else {
        block.extend(post_fixup_attribute(a, ind, unit));
        return;
    };
    let indented_close = match &value {
        ast::Expr::Str(s) => {
            let toks: Vec<_> = s
                .syntax()
                .children_with_tokens()
                .filter_map(|t| t.into_token())
                .collect();
            match (toks.first(), toks.last()) {
                (Some(o), Some(c))
                    if o.kind() == SyntaxKind::TOKEN_STRING_START
                        && o.text() == "''"
                        && c.kind() == SyntaxKind::TOKEN_STRING_END =>
                {
                    Some(usize::from(c.text_range().start()))
                }
                _ => None,
            }
        }
        _ => None,
    };
    if let Some(close) = indented_close {
        // The existing lines' indentation, else the attribute's plus one step.
        let content = &text[start(&value) + 2..close];
        let inner = content
            .lines()
            .skip(1)
            .find(|l| !l.trim().is_empty())
            .map(|l| l[..l.len() - l.trim_start_matches([' ', '\t']).len()].to_string())
            .unwrap_or_else(|| format!("{}{unit}", indent_at(text, start(&value))));
        let lines: String = a
            .post_fixup
            .iter()
            .map(|l| format!("{}\n", reindent(l, &inner)))
            .collect();
        if first_on_line(text, close) {
            let at = line_start(text, close);
            edits.push(Edit {
                start: at,
                end: at,
                text: lines,
            });
        } else {
            let close_ind = indent_at(text, start(&value)).to_string();
            edits.push(Edit {
                start: close,
                end: close,
                text: format!("\n{lines}{close_ind}"),
            });
        }
        return;
    }
    let attr_ind = existing.map_or(ind.to_string(), |v| indent_at(text, start(v)).to_string());
    let inner = format!("{attr_ind}{unit}");
    let lines: String = a
        .post_fixup
        .iter()
        .map(|l| format!("{}\n", reindent(l, &inner)))
        .collect();
    let simple = matches!(
        value,
        ast::Expr::Str(_) | ast::Expr::Ident(_) | ast::Expr::Select(_) | ast::Expr::Apply(_)
    );
    let tail = format!(" + ''\n{lines}{attr_ind}''");
    let (s, e) = (start(&value), end(&value));
    append_to(edits, s, e, simple, tail);
}

/// The arguments that are not formals yet, after the last formal in the formals' own
/// style.
fn formals(a: &SplitAttrs, text: &str, pattern: &ast::Pattern, edits: &mut Vec<Edit>) {
    let entries: Vec<ast::PatEntry> = pattern.pat_entries().collect();
    let have: Vec<String> = entries
        .iter()
        .filter_map(|e| e.ident()?.ident_token().map(|t| t.text().to_string()))
        .collect();
    let add: Vec<&String> = a.args.iter().filter(|n| !have.contains(n)).collect();
    if add.is_empty() {
        return;
    }
    let Some(last) = entries.last() else {
        // `{ }:` or `{ ... }:`: right after the brace.
        let at = pattern
            .syntax()
            .first_token()
            .map_or(start(pattern), |t| usize::from(t.text_range().end()));
        let words: String = add.iter().map(|n| format!(" {n},")).collect();
        edits.push(Edit {
            start: at,
            end: at,
            text: words,
        });
        return;
    };
    let (s, e) = (start(last), end(last));
    let one_line = !text[start(pattern)..end(pattern)].contains('\n');
    if one_line {
        let words: String = add.iter().map(|n| format!(", {n}")).collect();
        edits.push(Edit {
            start: e,
            end: e,
            text: words,
        });
        return;
    }
    let indent = indent_at(text, s).to_string();
    let line_head = text[line_start(text, s)..s].trim();
    if line_head == "," {
        // Leading commas: `, gpuTargets ? [ ]`.
        let lines: String = add.iter().map(|n| format!("\n{indent}, {n}")).collect();
        edits.push(Edit {
            start: e,
            end: e,
            text: lines,
        });
        return;
    }
    // Trailing commas: after the comma that follows the last formal, if any.
    let comma = last
        .syntax()
        .siblings_with_tokens(rowan::Direction::Next)
        .skip(1)
        .find(|t| {
            !matches!(
                t.kind(),
                SyntaxKind::TOKEN_WHITESPACE | SyntaxKind::TOKEN_COMMENT
            )
        })
        .filter(|t| t.kind() == SyntaxKind::TOKEN_COMMA)
        .map(|t| usize::from(t.text_range().end()));
    let ind = if line_head.is_empty() {
        indent
    } else {
        format!("{}  ", indent_at(text, start(pattern)))
    };
    let text = match comma {
        Some(_) => add.iter().map(|n| format!("\n{ind}{n},")).collect(),
        None => add.iter().map(|n| format!(",\n{ind}{n}")).collect(),
    };
    let at = comma.unwrap_or(e);
    edits.push(Edit {
        start: at,
        end: at,
        text,
    });
}

/// `text` with the edits made (none overlap; several at one place keep their order).
fn apply(text: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| e.start);
    let mut out = String::with_capacity(text.len() + 1024);
    let mut at = 0;
    for e in edits {
        let s = e.start.max(at);
        out.push_str(&text[at..s]);
        out.push_str(&e.text);
        at = e.end.max(s);
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests;
