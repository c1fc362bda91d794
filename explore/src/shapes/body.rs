//! A test's body as tokens (`shapes`): its shape (and its loose shape, the functions its
//! calls call left out), the literals and calls that may differ between tests of one shape
//! and where each is, and the checks that have no message of their own.

use std::collections::BTreeSet;
use std::str::FromStr;

use proc_macro2::{Delimiter, LineColumn, Spacing, TokenStream, TokenTree};
use syn::punctuated::Punctuated;
use syn::{Expr, Lit, Token};

/// Macros whose first argument is a format string.
const FORMATS: [&str; 11] = [
    "format",
    "format_args",
    "print",
    "println",
    "eprint",
    "eprintln",
    "write",
    "writeln",
    "panic",
    "unreachable",
    "todo",
];

/// A literal of a test's body, where it is (in the body's text) and what it can be.
#[derive(Debug, Clone)]
pub(super) struct Literal {
    pub(super) text: String,
    /// `str`, `int u8`, `bytes 3`, …; `None` when it must stay as it is.
    pub(super) kind: Option<String>,
    pub(super) start: LineColumn,
    pub(super) end: LineColumn,
    /// What names it as a column: `expected` in an `assert_eq!`'s second argument, or the
    /// function (as written: `lib::f`, `.raise`) and the argument it is.
    pub(super) role: Role,
    /// When it is the function a call calls: the call.
    pub(super) call: Option<Call>,
}

/// A call of a function (`lib::f(…)`: the literal is its path) or of a method of a local
/// (`gauge_0.raise(…)`: the literal is the method's name, from the local to it), which a
/// table can make a column of functions of one signature.
#[derive(Debug, Clone)]
pub(super) struct Call {
    /// The local a method is called on.
    pub(super) receiver: Option<String>,
    /// Just after its `(`.
    pub(super) open: LineColumn,
    pub(super) arity: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Role {
    Expected,
    /// The whole value of `let mut NAME = …`: the object's state before the calls.
    Before(String),
    Argument(String, usize),
    Other,
}

/// A check of the body that says nothing of its own when it fails: where its message goes.
#[derive(Debug, Clone)]
pub(super) struct Check {
    /// The position of its closing `)`, and whether a `,` ends its arguments already.
    pub(super) close: LineColumn,
    pub(super) trailing_comma: bool,
}

/// A test's body as tokens: its shape (literals that may differ left out) and its parts.
#[derive(Debug, Default)]
pub(super) struct Body {
    pub(super) shape: Vec<String>,
    pub(super) literals: Vec<Literal>,
    pub(super) checks: Vec<Check>,
    pub(super) idents: BTreeSet<String>,
    /// The body's lines, as written: a list's text.
    pub(super) source: Vec<String>,
    /// The names its `let`s bind, in order: one shape whatever they are called (`gauge_0`,
    /// `gauge_1`).
    pub(super) locals: Vec<String>,
    /// The places in `shape` that are a call's function: the shape of tests that call other
    /// functions of one signature has them left out (`loose`).
    pub(super) calls: Vec<usize>,
    /// A `match`, a `for` or an `if let`: not folded (its literals may be patterns, or it is
    /// a table already).
    pub(super) refused: bool,
}

/// How the walk sees the tokens around it.
#[derive(Clone, Default)]
struct Around {
    /// Inside `matches!` or a `let` pattern: literals stay.
    fixed: bool,
    /// The macro whose arguments these are.
    mac: Option<String>,
    /// The call whose arguments these are (`lib::f`, `.raise`).
    call: Option<String>,
    bracket: bool,
    /// Inside the expected side of an `assert_eq!` or `assert_ne!`.
    expected: bool,
}

/// The body of a test, its lines as written; `None` when it does not lex, or holds a
/// `match`, a `for` or an `if let`.
pub(super) fn parse(lines: &[String]) -> Option<Body> {
    let stream = TokenStream::from_str(&lines.join("\n")).ok()?;
    let mut body = Body {
        source: lines.to_vec(),
        locals: locals(stream.clone()),
        ..Body::default()
    };
    walk(stream, &Around::default(), &mut body);
    (!body.refused).then_some(body)
}

/// The names `let` and `let mut` bind in `stream`, in order.
fn locals(stream: TokenStream) -> Vec<String> {
    let mut names = Vec::new();
    let mut last: Vec<String> = Vec::new();
    for token in stream {
        match token {
            TokenTree::Group(g) => names.extend(locals(g.stream())),
            TokenTree::Ident(id) => {
                let id = id.to_string();
                let bound = matches!(last.as_slice(), [.., l] if l == "let")
                    || matches!(last.as_slice(), [.., l, m] if l == "let" && m == "mut");
                if bound && id != "mut" && !names.contains(&id) {
                    names.push(id.clone());
                }
                last.push(id);
            }
            other => last.push(other.to_string()),
        }
    }
    names
}

/// Walks `stream`, adding its shape, literals and checks to `body`.
fn walk(stream: TokenStream, around: &Around, body: &mut Body) {
    let tokens: Vec<TokenTree> = stream.into_iter().collect();
    let mut in_let = false;
    let mut after_semicolon = false;
    // The argument of the call or macro these tokens are, counted by top-level commas.
    let mut argument = 0;
    let mut past = 0;
    for (i, token) in tokens.iter().enumerate() {
        if i < past {
            continue;
        }
        let prev = i.checked_sub(1).map(|p| &tokens[p]);
        if !(around.fixed || in_let) {
            if let Some(end) = take_list(&tokens, i, (around, argument), body) {
                past = end + 1;
                continue;
            }
        }
        match token {
            TokenTree::Group(g) => {
                let mac = macro_name(&tokens, i);
                if mac.as_deref().is_some_and(is_check) {
                    check(g, mac.as_deref().unwrap_or_default(), body);
                }
                let call = (g.delimiter() == Delimiter::Parenthesis && mac.is_none())
                    .then(|| call_name(&tokens, i))
                    .flatten();
                let inner = Around {
                    fixed: around.fixed || in_let || mac.as_deref() == Some("matches"),
                    mac: mac.clone(),
                    call,
                    bracket: g.delimiter() == Delimiter::Bracket,
                    expected: expected_side(around, argument),
                };
                body.shape.push(format!("open {:?}", g.delimiter()));
                walk(g.stream(), &inner, body);
                body.shape.push("close".to_string());
            }
            TokenTree::Ident(id) => {
                let id = id.to_string();
                match id.as_str() {
                    "let" => in_let = true,
                    "match" | "for" => body.refused = true,
                    "if" | "while" if matches!(tokens.get(i + 1), Some(TokenTree::Ident(n)) if n == "let") => {
                        body.refused = true
                    }
                    "true" | "false" => {
                        let span = token.span();
                        let role = role(around, argument, &tokens, (i, i));
                        let kind = (!(around.fixed || in_let)).then_some("bool");
                        let lit = literal(&id, kind);
                        push_literal(body, lit, (span.start(), span.end(), role));
                        continue;
                    }
                    _ => {}
                }
                body.idents.insert(id.clone());
                if let Some(call) = call_at(&tokens, i, body) {
                    body.calls.push(body.shape.len());
                    body.shape.push(id);
                    body.literals.push(call);
                    continue;
                }
                match body.locals.iter().position(|l| *l == id) {
                    Some(n) => body.shape.push(format!("local {n}")),
                    None => body.shape.push(id),
                }
            }
            TokenTree::Punct(p) => {
                let c = p.as_char();
                let joined =
                    matches!(prev, Some(TokenTree::Punct(q)) if q.spacing() == Spacing::Joint);
                if (c == '=' && p.spacing() == Spacing::Alone && !joined) || c == ';' {
                    in_let = false;
                }
                if c == ';' && around.bracket {
                    after_semicolon = true;
                }
                if c == ',' && !joined {
                    argument += 1;
                }
                // A unary minus goes with the literal after it.
                let unary = prev.is_none() || matches!(prev, Some(TokenTree::Punct(_)));
                if c == '-' && unary && matches!(tokens.get(i + 1), Some(TokenTree::Literal(_))) {
                    continue;
                }
                body.shape.push(c.to_string());
            }
            TokenTree::Literal(_) => {
                let fixed = around.fixed || in_let || (around.bracket && after_semicolon);
                on_literal(&tokens, i, (around, argument, fixed), body);
            }
        }
    }
}

/// Adds the list of literals from token `i` to `body` as one literal, when it is one
/// ([`list`]) on one line; gives the index of its last token.
fn take_list(
    tokens: &[TokenTree],
    i: usize,
    (around, argument): (&Around, usize),
    body: &mut Body,
) -> Option<usize> {
    let (end, kind) = list(tokens, i)?;
    let start = tokens[i].span().start();
    let stop = tokens[end].span().end();
    let text = body.text(start, stop)?;
    let role = role(around, argument, tokens, (i, end));
    push_literal(body, (text, Some(kind.to_string())), (start, stop, role));
    Some(end)
}

/// Adds the literal at token `i` (with the unary minus before it) to `body`; `fixed`: it must
/// stay as it is whatever it is.
fn on_literal(
    tokens: &[TokenTree],
    i: usize,
    (around, argument, fixed): (&Around, usize, bool),
    body: &mut Body,
) {
    let TokenTree::Literal(l) = &tokens[i] else {
        return;
    };
    let prev = i.checked_sub(1).map(|p| &tokens[p]);
    let negative = matches!(prev, Some(TokenTree::Punct(p)) if p.as_char() == '-')
        && (i == 1 || matches!(&tokens[i - 2], TokenTree::Punct(_)));
    let lead = if negative { i - 1 } else { i };
    let text = format!("{}{l}", if negative { "-" } else { "" });
    let tuple_index = matches!(prev, Some(TokenTree::Punct(p)) if p.as_char() == '.');
    let format_string = i == 0 && around.mac.as_deref().is_some_and(|m| FORMATS.contains(&m));
    let fixed = fixed || tuple_index || format_string;
    let kind = if fixed { None } else { kind_of(l) };
    let role = role(around, argument, tokens, (lead, i));
    let lit = literal(&text, kind.as_deref());
    push_literal(
        body,
        lit,
        (tokens[lead].span().start(), l.span().end(), role),
    );
}

fn literal(text: &str, kind: Option<&str>) -> (String, Option<String>) {
    (text.to_string(), kind.map(str::to_string))
}

fn push_literal(
    body: &mut Body,
    (text, kind): (String, Option<String>),
    (start, end, role): (LineColumn, LineColumn, Role),
) {
    match &kind {
        Some(k) if start.line == end.line => {
            body.shape.push(format!("literal {k}"));
            body.literals.push(Literal {
                text,
                kind,
                start,
                end,
                role,
                call: None,
            });
        }
        _ => body.shape.push(text),
    }
}

impl Body {
    /// The body's text from `start` to `end`, on one line.
    fn text(&self, start: LineColumn, end: LineColumn) -> Option<String> {
        let line = self
            .source
            .get(start.line - 1)
            .filter(|_| start.line == end.line)?;
        let width = end.column.checked_sub(start.column)?;
        Some(line.chars().skip(start.column).take(width).collect())
    }

    /// The shape with the functions calls call left out.
    pub(super) fn loose(&self) -> Vec<String> {
        let mut shape = self.shape.clone();
        for &at in &self.calls {
            shape[at] = "call".to_string();
        }
        shape
    }
}

/// The call whose function's name is the identifier at `i`, when it is a function's path
/// (`lib::f(…)`, not after `<T as Trait>::`) or a method of a local (`x.f(…)`), as a literal
/// that is no column of a table unless the function differs between its rows.
fn call_at(tokens: &[TokenTree], i: usize, body: &Body) -> Option<Literal> {
    let Some(TokenTree::Group(args)) = tokens.get(i + 1) else {
        return None;
    };
    if args.delimiter() != Delimiter::Parenthesis {
        return None;
    }
    let punct =
        |k: usize, c: char| matches!(tokens.get(k), Some(TokenTree::Punct(p)) if p.as_char() == c);
    let ident = |k: usize| matches!(tokens.get(k), Some(TokenTree::Ident(_)));
    let method = i >= 1 && punct(i - 1, '.');
    let (first, receiver) = match method {
        true => {
            // A local: an identifier after nothing that makes it a path or a field.
            let at = i.checked_sub(2).filter(|&r| ident(r))?;
            let alone = at == 0 || !(punct(at - 1, '.') || punct(at - 1, ':'));
            (at, Some(alone.then(|| tokens[at].to_string())?))
        }
        false => {
            let first = path_start(tokens, i);
            // `<T as Trait>::f`, `Vec::<u8>::new`, `x.0.f`: not a plain path.
            if first >= 1
                && (punct(first - 1, ':') || punct(first - 1, '.') || punct(first - 1, '>'))
            {
                return None;
            }
            (first, None)
        }
    };
    let start = tokens[first].span().start();
    let end = tokens[i].span().end();
    let text = match method {
        true => tokens[i].to_string(),
        false => body.text(start, end)?,
    };
    let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
    let arity = syn::parse::Parser::parse2(parser, args.stream())
        .ok()?
        .len();
    let kind = match method {
        true => format!("call method {arity}"),
        false => format!("call function {arity}"),
    };
    Some(Literal {
        text,
        kind: Some(kind),
        start,
        end,
        role: Role::Other,
        call: Some(Call {
            receiver,
            open: args.span_open().end(),
            arity,
        }),
    })
}

/// A list of literals from token `i`: `&[1u8, 2u8]` (`slice`: its length is no part of its
/// type once it is a slice) or `vec![1u8, 2u8]` (`vec`), with the index of its last token.
fn list(tokens: &[TokenTree], i: usize) -> Option<(usize, &'static str)> {
    let (group, kind) = match (&tokens[i], tokens.get(i + 1), tokens.get(i + 2)) {
        (TokenTree::Punct(p), Some(TokenTree::Group(g)), _) if p.as_char() == '&' => {
            let unary = i == 0 || matches!(&tokens[i - 1], TokenTree::Punct(_));
            (unary.then_some(g)?, "slice")
        }
        (TokenTree::Ident(v), Some(TokenTree::Punct(p)), Some(TokenTree::Group(g)))
            if v == "vec" && p.as_char() == '!' =>
        {
            (g, "vec")
        }
        _ => return None,
    };
    if group.delimiter() != Delimiter::Bracket {
        return None;
    }
    // Only literals, negative ones and paths of constants (`u8::MAX`), between commas.
    let items: Vec<TokenTree> = group.stream().into_iter().collect();
    let mut items = items.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','));
    let plain = items.all(|item| match item {
        [] | [TokenTree::Literal(_)] => true,
        [TokenTree::Punct(m), TokenTree::Literal(_)] => m.as_char() == '-',
        [TokenTree::Ident(_), TokenTree::Punct(a), TokenTree::Punct(b), TokenTree::Ident(_)] => {
            a.as_char() == ':' && b.as_char() == ':'
        }
        [TokenTree::Ident(b)] => b == "true" || b == "false",
        _ => false,
    });
    let end = match kind {
        "vec" => i + 2,
        _ => i + 1,
    };
    plain.then_some((end, kind))
}

/// `assert_eq` for the group of `assert_eq!(…)` at `i`.
fn macro_name(tokens: &[TokenTree], i: usize) -> Option<String> {
    let bang = matches!(&tokens[i.checked_sub(1)?], TokenTree::Punct(p) if p.as_char() == '!');
    match &tokens[i.checked_sub(2)?] {
        TokenTree::Ident(name) if bang => Some(name.to_string()),
        _ => None,
    }
}

/// The call the parenthesised group at `i` holds the arguments of: `lib::f` for
/// `lib::f(…)`, `.raise` for `x.raise(…)`; `None` for anything else.
fn call_name(tokens: &[TokenTree], i: usize) -> Option<String> {
    let last = i.checked_sub(1)?;
    if !matches!(&tokens[last], TokenTree::Ident(_)) {
        return None;
    }
    let first = path_start(tokens, last);
    let path: Vec<String> = (first..=last)
        .step_by(3)
        .map(|k| tokens[k].to_string())
        .collect();
    let dot = first >= 1 && matches!(&tokens[first - 1], TokenTree::Punct(p) if p.as_char() == '.');
    Some(match dot {
        true => format!(".{}", path.join("::")),
        false => path.join("::"),
    })
}

/// The first token of the path `a::b::c` whose last identifier is at `i`.
fn path_start(tokens: &[TokenTree], i: usize) -> usize {
    let colon = |k: usize| matches!(&tokens[k], TokenTree::Punct(p) if p.as_char() == ':');
    let mut first = i;
    while first >= 3
        && colon(first - 1)
        && colon(first - 2)
        && matches!(&tokens[first - 3], TokenTree::Ident(_))
    {
        first -= 3;
    }
    first
}

/// What the literal from token `lead` (its minus, if any) to `i` is to its surroundings: the
/// expected side of a check, a whole argument of a call, or something else.
fn role(around: &Around, argument: usize, tokens: &[TokenTree], (lead, i): (usize, usize)) -> Role {
    let is_comma =
        |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == ',');
    let before = lead == 0 || is_comma(tokens.get(lead - 1));
    let whole = before && (i + 1 == tokens.len() || is_comma(tokens.get(i + 1)));
    if expected_side(around, argument) {
        return Role::Expected;
    }
    let at = |k: usize| lead.checked_sub(k).map(|k| &tokens[k]);
    let assigned = matches!(at(1), Some(TokenTree::Punct(p)) if p.as_char() == '=' && p.spacing() == Spacing::Alone);
    let after = i + 1 == tokens.len()
        || matches!(tokens.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == ';');
    if let (true, true, Some(TokenTree::Ident(name)), Some(TokenTree::Ident(m))) =
        (assigned, after, at(2), at(3))
    {
        if m == "mut" && matches!(at(4), Some(TokenTree::Ident(l)) if l == "let") {
            return Role::Before(name.to_string());
        }
    }
    match (&around.mac, &around.call) {
        (None, Some(call)) if whole => Role::Argument(call.clone(), argument),
        _ => Role::Other,
    }
}

/// Whether argument `argument` of what `around` holds is on the expected side of a check.
fn expected_side(around: &Around, argument: usize) -> bool {
    let check = matches!(around.mac.as_deref(), Some("assert_eq" | "assert_ne"));
    around.expected || (check && argument == 1)
}

fn is_check(name: &str) -> bool {
    matches!(name, "assert" | "assert_eq" | "assert_ne")
}

/// Notes the check `name!(g)` when it has no message of its own.
fn check(g: &proc_macro2::Group, name: &str, body: &mut Body) {
    let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
    let Ok(args) = syn::parse::Parser::parse2(parser, g.stream()) else {
        return;
    };
    let bare = match name {
        "assert" => args.len() == 1,
        _ => args.len() == 2,
    };
    if bare {
        body.checks.push(Check {
            close: g.span_close().start(),
            trailing_comma: args.trailing_punct(),
        });
    }
}

/// What a literal is, for a column's type: rows of one table agree on it.
fn kind_of(l: &proc_macro2::Literal) -> Option<String> {
    Some(match Lit::new(l.clone()) {
        Lit::Str(_) => "str".to_string(),
        Lit::ByteStr(b) => format!("bytes {}", b.value().len()),
        Lit::Char(_) => "char".to_string(),
        Lit::Byte(_) => "byte".to_string(),
        Lit::Int(i) => format!("int {}", i.suffix()),
        Lit::Float(f) => format!("float {}", f.suffix()),
        _ => return None,
    })
}
