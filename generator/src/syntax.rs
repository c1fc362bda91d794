//! The one place where text from a trace becomes Rust source.
//!
//! A trace is a file people share (CI artefacts, baselines), so every string in it is treated as
//! hostile: a program path, a function, type, field or variant name, a string value or a panic
//! message. Such text reaches a carved file only through this module, in one of three forms:
//! - a **literal** (`"…"`, `'…'`), escaped so that nothing in it can end the literal;
//! - an **identifier or path**, written only when it is one by Rust's grammar, refused otherwise;
//! - **comment text**, on one line, with nothing that could end the comment or fool a reader.
//!
//! Bidirectional-override and other invisible format characters are escaped in all three: rustc
//! refuses them in literals and comments (`text_direction_codepoint_in_literal`), and they can make
//! code read differently from what it does.

use std::fmt::Write as _;

/// Rust's keywords (strict, reserved and the 2018+ ones): never an identifier unless raw (`r#`).
pub(crate) const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "union", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Path segments that are keywords but may stand in a path (`crate::x`, `self::y`, `Self::z`).
const PATH_KEYWORDS: &[&str] = &["crate", "self", "super", "Self"];

/// Whether `c` must never appear raw in generated source: what a terminal would act on
/// (control characters, line and paragraph separators) and invisible format characters such as
/// bidirectional overrides, which rustc refuses in literals and comments.
fn is_unsafe_char(c: char) -> bool {
    carve_storage::acts_on_terminal(c)
}

fn push_escaped(out: &mut String, c: char, quote: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\0' => out.push_str("\\0"),
        '\\' => out.push_str("\\\\"),
        c if c == quote => {
            out.push('\\');
            out.push(c);
        }
        c if is_unsafe_char(c) => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

/// `text` as a Rust string literal: `"a \"b\"\n"`.
pub fn str_lit(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        push_escaped(&mut out, c, '"');
    }
    out.push('"');
    out
}

/// `bytes` as a Rust byte string literal: `b"GET /\r\n"`. Bytes outside printable ASCII and
/// `\n`, `\r`, `\t` are written as `\x..` escapes.
pub fn byte_str_lit(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 3);
    out.push_str("b\"");
    for &b in bytes {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push('"');
    out
}

/// `c` as a Rust char literal: `'\''`.
pub fn char_lit(c: char) -> String {
    let mut out = String::with_capacity(4);
    out.push('\'');
    push_escaped(&mut out, c, '\'');
    out.push('\'');
    out
}

/// `text` made safe to stand inside a `//` or `/* */` comment on one line: line breaks, control
/// and invisible characters are written as escapes, and `*/` cannot close a block comment.
pub fn comment_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push('\\'),
            c => push_escaped(&mut out, c, '\0'),
        }
    }
    out.replace("*/", "*\\/").replace("/*", "/\\*")
}

/// `text` made safe to stand inside a Markdown code span on one line (`carved_quarantine.md`):
/// escaped as [`comment_text`] does, and `<`, `>`, `&` and backticks written as escapes too, so
/// that neither a terminal showing the file nor a viewer rendering it acts on any of it.
pub fn markdown_code_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' | '>' | '&' | '`' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            '\\' => out.push('\\'),
            c => push_escaped(&mut out, c, '\0'),
        }
    }
    out
}

/// `expr` as the receiver of a method call: in parentheses unless a postfix binds to it as it
/// is (`(1u32..4u32).map(..)`, `(&x).iter()`, but `[1u32].iter().map(..)`).
pub fn method_receiver(expr: &str) -> String {
    let bare = matches!(
        syn::parse_str::<syn::Expr>(expr),
        Ok(syn::Expr::Path(_)
            | syn::Expr::MethodCall(_)
            | syn::Expr::Call(_)
            | syn::Expr::Array(_)
            | syn::Expr::Paren(_)
            | syn::Expr::Tuple(_)
            | syn::Expr::Field(_)
            | syn::Expr::Index(_)
            | syn::Expr::Macro(_))
    );
    if bare {
        expr.to_string()
    } else {
        format!("({expr})")
    }
}

/// Whether `name` is a Rust identifier (or raw identifier) that may name a field, variant,
/// variable or function: XID rules, not a keyword unless written `r#name`, not `_`.
pub fn is_ident(name: &str) -> bool {
    let (raw, bare) = match name.strip_prefix("r#") {
        Some(rest) => (true, rest),
        None => (false, name),
    };
    let mut chars = bare.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    if !(first == '_' || unicode_ident::is_xid_start(first)) {
        return false;
    }
    if !chars.all(unicode_ident::is_xid_continue) || bare == "_" {
        return false;
    }
    if raw {
        // `r#crate`, `r#self`, `r#super`, `r#Self` are not allowed.
        !PATH_KEYWORDS.contains(&bare)
    } else {
        !KEYWORDS.contains(&bare) && bare != "Self"
    }
}

/// Whether `path` is a plain Rust path of identifiers (`a::b::C`, `crate::x`, `::std::y`),
/// without generic arguments.
pub fn is_path(path: &str) -> bool {
    let path = path.strip_prefix("::").unwrap_or(path);
    !path.is_empty()
        && path.split("::").enumerate().all(|(i, seg)| {
            is_ident(seg) || (PATH_KEYWORDS.contains(&seg) && (i == 0 || seg == "super"))
        })
}

/// `name` when it is an identifier by Rust's grammar; the error says what was refused, escaped.
pub fn ident(name: &str) -> Result<&str, Refused> {
    if is_ident(name) {
        Ok(name)
    } else {
        Err(Refused::new("identifier", name))
    }
}

/// Text from a trace that was to be written as Rust syntax but is not valid there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// What was expected: `identifier` or `path`.
    pub expected: &'static str,
    /// The refused text, escaped for display (at most 80 characters of it).
    pub text: String,
}

impl Refused {
    fn new(expected: &'static str, text: &str) -> Refused {
        let shown: String = text.chars().take(80).collect();
        let mut shown_lit = str_lit(&shown);
        if shown.len() < text.len() {
            shown_lit.push('…');
        }
        Refused {
            expected,
            text: shown_lit,
        }
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the trace holds {} where a Rust {} belongs",
            self.text, self.expected
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receiver_is_parenthesised_where_a_postfix_would_bind_inside_it() {
        assert_eq!(method_receiver("1u32..4u32"), "(1u32..4u32)");
        assert_eq!(method_receiver("&x"), "(&x)");
        assert_eq!(method_receiver("[1u32].iter()"), "[1u32].iter()");
        assert_eq!(method_receiver("xs"), "xs");
    }

    /// Parses `expr` as a Rust expression and returns the string it denotes.
    fn denoted(lit: &str) -> String {
        match syn::parse_str::<syn::LitStr>(lit) {
            Ok(l) => l.value(),
            Err(e) => panic!("{lit} is not a string literal: {e}"),
        }
    }

    #[test]
    fn string_literals_denote_exactly_the_recorded_text() {
        for text in [
            "",
            "plain",
            "quote \" and backslash \\",
            "line\nbreak\r\n\ttab\0nul",
            "\u{1b}[2J\u{1b}]0;title\u{7}",
            "bidi \u{202e}desrever\u{202c} and zero\u{200b}width",
            "\u{2028}separator\u{2029}",
            "emoji 🦀 and accents é",
            "\"); std::process::exit(1); (\"",
        ] {
            let lit = str_lit(text);
            assert!(!lit.contains('\n') && !lit.contains('\u{202e}'), "{lit}");
            assert_eq!(denoted(&lit), text);
        }
    }

    #[test]
    fn char_literals_denote_the_char() {
        for c in ['a', '\'', '"', '\\', '\n', '\u{202e}', '🦀', '\0'] {
            let lit = char_lit(c);
            let parsed: syn::LitChar = syn::parse_str(&lit).expect("a char literal");
            assert_eq!(parsed.value(), c, "{lit}");
        }
    }

    #[test]
    fn comment_text_stays_on_one_line_and_inside_the_comment() {
        let hostile = "app\n#![allow(warnings)]\nfn evil() {}\r\u{2028}*/ /* \u{202e}";
        let text = comment_text(hostile);
        assert!(!text.chars().any(is_unsafe_char), "{text:?}");
        assert!(!text.contains("*/") && !text.contains("/*"), "{text}");
        // As a doc comment and as a block comment, the file has no item at all.
        for src in [format!("//! {text}\n"), format!("/* {text} */\n")] {
            let file = syn::parse_file(&src).expect("parses");
            assert!(file.items.is_empty(), "{src}");
        }
    }

    #[test]
    fn markdown_code_text_stays_on_one_line_inside_its_code_span_and_holds_no_html() {
        let hostile = "x\n\u{1b}]0;owned\u{7}<img src=x onerror=alert(1)>`&\u{202e}";
        let safe = markdown_code_text(hostile);
        assert_eq!(
            safe,
            "x\\n\\u{1b}]0;owned\\u{7}\\u{3c}img src=x onerror=alert(1)\\u{3e}\\u{60}\\u{26}\\u{202e}"
        );
        assert!(
            !safe.chars().any(|c| c.is_control() || "<>`&".contains(c)),
            "{safe}"
        );
        assert_eq!(markdown_code_text("tiny-calc"), "tiny-calc");
    }

    #[test]
    fn identifiers_follow_rusts_grammar() {
        for ok in ["x", "_x", "Foo", "__0", "r#type", "café", "x1"] {
            assert!(is_ident(ok), "{ok}");
        }
        for bad in [
            "", "_", "1x", "type", "self", "Self", "r#self", "a b", "a;b", "a\nb", "a-b", "a::b",
            "x()", "r#",
        ] {
            assert!(!is_ident(bad), "{bad}");
        }
    }

    #[test]
    fn paths_follow_rusts_grammar() {
        for ok in [
            "a",
            "a::b::C",
            "::std::x",
            "crate::m::f",
            "self::f",
            "super::super::g",
        ] {
            assert!(is_path(ok), "{ok}");
        }
        for bad in [
            "",
            "a::",
            "::",
            "a::::b",
            "a::b<T>",
            "a::crate",
            "a::b; evil()",
            "a::\nb",
            "a b",
        ] {
            assert!(!is_path(bad), "{bad}");
        }
        assert_eq!(
            ident("a; c").unwrap_err().to_string(),
            "the trace holds \"a; c\" where a Rust identifier belongs"
        );
    }
}
