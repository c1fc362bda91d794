//! A long text written more than once in a file becomes one `const` at its top: a reviewer
//! reads `parse(DOCUMENT)` forty times rather than the same 600-character string. A string
//! literal over [`MIN_LEN`] characters that appears twice or more in value positions is
//! hoisted; one that also appears where only a literal may stand (an attribute such as
//! `#[should_panic(expected = "..")]`, a format string: `panic!`'s, `format!`'s, the message of
//! `assert!`/`assert_eq!`) is left alone wherever it is. The file is read as tokens
//! (proc-macro2), so a string inside a macro's arguments counts as well.

use std::collections::BTreeMap;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// Literals at least this long (quotes and escapes included) are hoisted when repeated.
pub(crate) const MIN_LEN: usize = 200;

/// Macros whose argument at some index is a format string: (name, first format index).
const FORMAT_MACROS: &[(&str, usize)] = &[
    ("format", 0),
    ("print", 0),
    ("println", 0),
    ("eprint", 0),
    ("eprintln", 0),
    ("panic", 0),
    ("unreachable", 0),
    ("todo", 0),
    ("unimplemented", 0),
    ("write", 1),
    ("writeln", 1),
    ("assert", 1),
    ("debug_assert", 1),
    ("assert_eq", 2),
    ("assert_ne", 2),
    ("debug_assert_eq", 2),
    ("debug_assert_ne", 2),
];

/// `source` (a formatted file) with each repeated long literal as a `const` after its `use`s.
/// Unchanged when there is none, or the file does not lex.
pub fn long_literals(source: &str) -> String {
    let Ok(tokens) = source.parse::<TokenStream>() else {
        return source.to_string();
    };
    // Per literal text: (occurrences where a const may stand, where it may not).
    let mut seen: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    walk(tokens, false, &mut seen);
    let hoisted: Vec<&String> = seen
        .iter()
        .filter(|(text, (free, fixed))| {
            // Every occurrence in the text must be one of the tokens (none in a comment).
            *free >= 2 && *fixed == 0 && source.matches(text.as_str()).count() == *free
        })
        .map(|(text, _)| text)
        .collect();
    if hoisted.is_empty() {
        return source.to_string();
    }
    let mut out = source.to_string();
    let mut consts = String::new();
    let mut names: Vec<String> = Vec::new();
    for text in hoisted {
        let name = unique(const_name(text), &names, &out);
        out = out.replace(text.as_str(), &name);
        consts.push_str(&format!("const {name}: &str = {text};\n"));
        names.push(name);
    }
    insert_after_header(&out, &consts)
}

/// Records every long string literal in `tokens`; `fixed`: the tokens stand where only a
/// literal may.
fn walk(tokens: TokenStream, fixed: bool, seen: &mut BTreeMap<String, (usize, usize)>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Literal(lit) => {
                let text = lit.to_string();
                if text.starts_with('"') && text.len() >= MIN_LEN {
                    let entry = seen.entry(text).or_default();
                    if fixed {
                        entry.1 += 1;
                    } else {
                        entry.0 += 1;
                    }
                }
            }
            TokenTree::Group(g) => {
                let attribute = g.delimiter() == Delimiter::Bracket
                    && i > 0
                    && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '#');
                let format_at = macro_name(&trees, i).and_then(|name| {
                    FORMAT_MACROS
                        .iter()
                        .find(|(m, _)| *m == name)
                        .map(|(_, at)| *at)
                });
                match format_at {
                    Some(at) if !fixed => macro_args(g.stream(), at, seen),
                    _ => walk(g.stream(), fixed || attribute, seen),
                }
            }
            _ => {}
        }
    }
}

/// The name of the macro whose arguments are the group at `i` (`name ! (..)`).
fn macro_name(trees: &[TokenTree], i: usize) -> Option<String> {
    if i < 2 {
        return None;
    }
    match (&trees[i - 2], &trees[i - 1]) {
        (TokenTree::Ident(name), TokenTree::Punct(bang)) if bang.as_char() == '!' => {
            Some(name.to_string())
        }
        _ => None,
    }
}

/// A format macro's arguments: those from index `format_at` on (top-level commas) are its
/// format string and what follows it, where a literal must stay.
fn macro_args(tokens: TokenStream, format_at: usize, seen: &mut BTreeMap<String, (usize, usize)>) {
    let mut index = 0;
    let mut arg = TokenStream::new();
    let mut flush = |arg: &mut TokenStream, index: usize| {
        walk(std::mem::take(arg), index >= format_at, seen);
    };
    for tree in tokens {
        match &tree {
            TokenTree::Punct(p) if p.as_char() == ',' => {
                flush(&mut arg, index);
                index += 1;
            }
            _ => arg.extend([tree]),
        }
    }
    flush(&mut arg, index);
}

/// `PROJECT_CARVE_TOOL` from the first three words of the text (of 2 to 12 letters or digits,
/// starting with a letter); `TEXT` when it has none.
fn const_name(literal: &str) -> String {
    // The text itself, not its escapes (`\n\nA` is no word `nA`).
    let text =
        syn::parse_str::<syn::LitStr>(literal).map_or_else(|_| literal.to_string(), |l| l.value());
    let words: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| (2..=12).contains(&w.len()))
        .filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_alphabetic()))
        .take(3)
        .map(str::to_ascii_uppercase)
        .collect();
    if words.is_empty() {
        "TEXT".to_string()
    } else {
        words.join("_")
    }
}

/// `name`, or `name_2`, `name_3`.. when it is taken or appears in the file.
fn unique(name: String, taken: &[String], source: &str) -> String {
    let free = |n: &str| !taken.iter().any(|t| t == n) && !source.contains(n);
    if free(&name) {
        return name;
    }
    (2..)
        .map(|i| format!("{name}_{i}"))
        .find(|n| free(n))
        .expect("a free name")
}

/// `consts` after the file's last top-level `use` line or inner attribute (`#![allow(..)]`,
/// which no item may precede), else after its leading comments, set off by blank lines.
fn insert_after_header(source: &str, consts: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let after = lines
        .iter()
        .rposition(|l| l.starts_with("use ") || l.starts_with("#!["))
        .or_else(|| lines.iter().rposition(|l| l.starts_with("//!")))
        .map_or(0, |i| i + 1);
    let rest = lines[after..].iter().skip_while(|l| l.trim().is_empty());
    let mut out = String::with_capacity(source.len() + consts.len() + 2);
    for line in &lines[..after] {
        out.push_str(line);
        out.push('\n');
    }
    if after > 0 {
        out.push('\n');
    }
    out.push_str(consts);
    out.push('\n');
    for line in rest {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `source` without the consts [`long_literals`] wrote that nothing uses any more (the tests
/// that used them were taken out).
pub(crate) fn without_unused_consts(source: &str) -> String {
    let unused = |line: &str| {
        let Some(rest) = line.strip_prefix("const ") else {
            return false;
        };
        let Some(name) = rest.split(':').next() else {
            return false;
        };
        rest.contains(": &str = \"") && uses_of(source, name) == 1
    };
    let mut out = String::with_capacity(source.len());
    for line in source.lines().filter(|l| !unused(l)) {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// How many times `name` appears in `source` as a whole identifier (`TEXT` not in `TEXT_2`).
fn uses_of(source: &str, name: &str) -> usize {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    source
        .match_indices(name)
        .filter(|(at, _)| {
            let before = source[..*at].chars().next_back();
            let after = source[at + name.len()..].chars().next();
            !before.is_some_and(ident) && !after.is_some_and(ident)
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long(word: &str) -> String {
        format!("\"{} {}\"", word, "x".repeat(MIN_LEN))
    }

    #[test]
    fn a_long_text_written_twice_becomes_one_const() {
        let doc = long("Project carve");
        let source = format!(
            "//! Carved.\n\nuse abc::Shape;\n\n#[test]\nfn a() {{\n    assert_eq!(abc::parse({doc}), 1);\n}}\n\n#[test]\nfn b() {{\n    let x = abc::parse(String::from({doc}));\n}}\n"
        );
        let out = long_literals(&source);
        assert_eq!(super::const_name("\"*a*\\n\\nA tool\""), "TOOL");
        assert_eq!(out.matches(&doc).count(), 1, "{out}");
        assert!(
            out.contains(&format!(
                "use abc::Shape;\n\nconst PROJECT_CARVE: &str = {doc};\n\n#[test]\nfn a() {{"
            )),
            "{out}"
        );
        assert!(out.contains("abc::parse(PROJECT_CARVE)"), "{out}");
        assert!(out.contains("String::from(PROJECT_CARVE)"), "{out}");
    }

    #[test]
    fn a_text_also_in_a_literal_only_place_stays_everywhere() {
        let doc = long("boom");
        let source = format!(
            "#[test]\n#[should_panic(expected = {doc})]\nfn a() {{\n    abc::f({doc});\n}}\n\n#[test]\nfn b() {{\n    assert_eq!(abc::f({doc}), 1, {doc});\n}}\n"
        );
        assert_eq!(long_literals(&source), source);
    }

    #[test]
    fn a_const_goes_after_the_inner_attributes() {
        let doc = format!("{:?}", "Carve tool text ".repeat(20));
        let src = format!(
            "//! Explored.\n#![allow(unused_mut)]\n\n#[test]\nfn a() {{\n    f({doc});\n}}\n\n#[test]\nfn b() {{\n    g({doc});\n}}\n"
        );
        let out = long_literals(&src);
        assert!(
            out.starts_with(&format!(
                "//! Explored.\n#![allow(unused_mut)]\n\nconst CARVE_TOOL_TEXT: &str = {doc};\n\n#[test]"
            )),
            "{out}"
        );
    }

    #[test]
    fn a_text_written_once_or_short_stays() {
        let doc = long("once");
        let source =
            format!("fn a() {{\n    f({doc});\n    g(\"short\");\n    g(\"short\");\n}}\n");
        assert_eq!(long_literals(&source), source);
    }

    #[test]
    fn a_const_nothing_uses_any_more_goes() {
        let doc = long("gone");
        let source = format!("use a::B;\n\nconst GONE: &str = {doc};\nconst GONE_2: &str = {doc};\nconst KEPT: &str = \"k\";\n\nfn t() {{\n    f(KEPT);\n    f(GONE_2);\n}}\n");
        let out = without_unused_consts(&source);
        assert!(!out.contains("const GONE:"), "{out}");
        assert!(out.contains("const GONE_2:"), "{out}");
        assert!(out.contains("const KEPT"), "{out}");
    }
}
