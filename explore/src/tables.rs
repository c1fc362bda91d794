//! Kept tests of one call with other values written as one table (issue 27: "fold the
//! remaining useful inputs into table-driven tests"), once distilling has said which stay:
//! the tests whose body is one check of one call with literal arguments,
//! `assert_eq!(f("a", 3u8), 7usize)`, `assert!(f('x'))` or `assert!(!f('x'))`, grouped by the
//! function called and the kinds of their arguments, become one `#[test]` that runs each row
//! and names it in its failure message (`width_cjk("ab")`). A group of one stays a test.
//! Plain text in, plain text out: the caller verifies the file and puts it back when a table
//! does not pass.

use std::collections::BTreeMap;

use proc_macro2::Span;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Item, Lit, Stmt, Token, UnOp};

/// What folding made of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folded {
    pub text: String,
    /// Tables written, and the tests they hold as rows.
    pub tables: usize,
    pub rows: usize,
    /// The names of the file's `#[test]` functions afterwards.
    pub tests: Vec<String>,
    /// Each table's name and the name of the test that was its first row, where a table
    /// can be left out alone when it fails (`shapes/`; empty for these tables).
    pub firsts: BTreeMap<String, String>,
}

/// One test of one call, as a row.
struct Row {
    /// The test's lines (1-based, inclusive), its doc comment included.
    lines: (usize, usize),
    name: String,
    /// The first line of its doc comment up to its first `:` (`Explored (BOBW, length 1,
    /// seed 1)`).
    origin: Option<String>,
    /// The function called, as written.
    function: String,
    /// Each argument and the expected value, as written.
    args: Vec<String>,
    expected: String,
    /// What the row's values are (`str`, `int u8`, …): rows of one table agree on each
    /// argument's, so that the table's tuple has one type.
    kinds: Vec<String>,
}

/// `source` with every group of at least two one-call tests of one function written as one
/// table; `None` when there is none (or the file does not parse).
pub fn fold(source: &str, parameters: &BTreeMap<String, Vec<String>>) -> Option<Folded> {
    let file = syn::parse_file(source).ok()?;
    let lines: Vec<&str> = source.lines().collect();
    let mut groups: BTreeMap<(String, Vec<String>), Vec<Row>> = BTreeMap::new();
    let mut names = Vec::new();
    for f in test_fns(&file) {
        names.push(f.sig.ident.to_string());
        if let Some(row) = row(f, &lines) {
            let key = (row.function.clone(), row.kinds.clone());
            groups.entry(key).or_default().push(row);
        }
    }
    let groups: Vec<Vec<Row>> = groups.into_values().filter(|g| g.len() > 1).collect();
    if groups.is_empty() {
        return None;
    }
    // Each table takes its first row's place; the other rows' lines go.
    let mut replaced: BTreeMap<usize, (usize, String)> = BTreeMap::new();
    let mut gone: Vec<(usize, usize)> = Vec::new();
    let mut tests: Vec<String> = names.clone();
    let mut rows = 0;
    let functions: Vec<&str> = groups.iter().map(|g| g[0].function.as_str()).collect();
    for group in &groups {
        let name = unique(&table_name(&group[0].function, &functions), &tests);
        tests.retain(|t| !group.iter().any(|r| &r.name == t));
        tests.push(name.clone());
        let columns = columns(&group[0], parameters);
        replaced.insert(
            group[0].lines.0,
            (group[0].lines.1, table(&name, &columns, group)),
        );
        gone.extend(group[1..].iter().map(|r| r.lines));
        rows += group.len();
    }
    Some(Folded {
        text: splice(&lines, &replaced, &gone),
        tables: groups.len(),
        rows,
        tests,
        firsts: BTreeMap::new(),
    })
}

impl Folded {
    /// This folding of a text `before` folded: the tables of both.
    pub(crate) fn after(mut self, before: Option<&Folded>) -> Folded {
        if let Some(b) = before {
            self.tables += b.tables;
            self.rows += b.rows;
        }
        self
    }
}

/// `lines` with each table of `replaced` (by its first line: its last line and its text) in
/// place of the lines it covers, and the line ranges of `gone` left out (each with the blank
/// line that followed it).
pub(crate) fn splice(
    lines: &[&str],
    replaced: &BTreeMap<usize, (usize, String)>,
    gone: &[(usize, usize)],
) -> String {
    let mut text = String::new();
    let mut at = 1;
    while at <= lines.len() {
        if let Some((end, table)) = replaced.get(&at) {
            text.push_str(table);
            at = end + 1;
            continue;
        }
        if let Some(&(_, end)) = gone.iter().find(|(start, _)| *start == at) {
            at = end + 1;
            // The blank line that separated it from the next.
            if lines.get(at - 1).is_some_and(|l| l.trim().is_empty()) {
                at += 1;
            }
            continue;
        }
        text.push_str(lines[at - 1]);
        text.push('\n');
        at += 1;
    }
    text
}

/// The row a test is, when its body is one check of one call with literal arguments.
fn row(f: &syn::ItemFn, lines: &[&str]) -> Option<Row> {
    let [Stmt::Macro(stmt)] = f.block.stmts.as_slice() else {
        return None;
    };
    let exprs = stmt
        .mac
        .parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated)
        .ok()?;
    let exprs: Vec<&Expr> = exprs.iter().collect();
    let (call, expected) = match (stmt.mac.path.get_ident()?.to_string().as_str(), &exprs[..]) {
        ("assert_eq", [call, expected]) => (*call, text(lines, expected.span())?),
        ("assert", [Expr::Unary(u)]) if matches!(u.op, UnOp::Not(_)) => {
            (&*u.expr, "false".to_string())
        }
        ("assert", [call]) => (*call, "true".to_string()),
        _ => return None,
    };
    let Expr::Call(call) = call else { return None };
    let Expr::Path(function) = &*call.func else {
        return None;
    };
    let mut kinds = Vec::new();
    let mut args = Vec::new();
    for arg in &call.args {
        kinds.push(kind(arg)?);
        args.push(text(lines, arg.span())?);
    }
    if !is_value(&exprs[exprs.len() - 1..], &expected) {
        return None;
    }
    Some(Row {
        lines: lines_of(f)?,
        name: f.sig.ident.to_string(),
        origin: origin(f),
        function: text(lines, function.span())?,
        args,
        expected,
        kinds,
    })
}

/// The file's `#[test]` functions, in order.
pub(crate) fn test_fns(file: &syn::File) -> impl Iterator<Item = &syn::ItemFn> {
    file.items.iter().filter_map(|item| match item {
        Item::Fn(f) if f.attrs.iter().any(|a| a.path().is_ident("test")) => Some(f),
        _ => None,
    })
}

/// A test's lines (1-based, inclusive), its attributes and doc comment included.
pub(crate) fn lines_of(f: &syn::ItemFn) -> Option<(usize, usize)> {
    let start = f.attrs.iter().map(|a| a.span().start().line);
    let start = start.chain([f.sig.fn_token.span.start().line]).min()?;
    Some((start, f.block.span().end().line))
}

/// The first line of a test's doc comment up to its first `:` when it says where the test
/// came from (`Explored (BOBW, length 1, seed 1)`).
pub(crate) fn origin(f: &syn::ItemFn) -> Option<String> {
    f.attrs.iter().find_map(|a| {
        let syn::Meta::NameValue(nv) = &a.meta else {
            return None;
        };
        let Expr::Lit(syn::ExprLit {
            lit: Lit::Str(doc), ..
        }) = &nv.value
        else {
            return None;
        };
        let doc = doc.value();
        let origin = doc.trim().split(':').next()?.trim().to_string();
        origin.starts_with("Explored").then_some(origin)
    })
}

/// Whether the expected value of `assert_eq!` is a literal value (`7usize`, `Some('x')`,
/// `None`), so that rows of it make a table; `assert!`'s `true`/`false` always are.
fn is_value(exprs: &[&Expr], expected: &str) -> bool {
    if expected == "true" || expected == "false" {
        return true;
    }
    match exprs.first() {
        Some(Expr::Call(c)) => {
            let some = matches!(&*c.func, Expr::Path(p) if p.path.is_ident("Some"));
            some && c.args.len() == 1 && c.args.first().and_then(kind).is_some()
        }
        Some(Expr::Path(p)) if p.path.is_ident("None") => true,
        Some(e) => kind(e).is_some(),
        None => false,
    }
}

/// What a literal argument is (`str`, `char`, `int u8`, `float f64`, `bool`, `const u32`
/// for `u32::MAX`); `None` for anything else (a byte string's type holds its length).
fn kind(e: &Expr) -> Option<String> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Str(_) => Some("str".to_string()),
            Lit::Char(_) => Some("char".to_string()),
            Lit::Bool(_) => Some("bool".to_string()),
            Lit::Int(i) => Some(format!("int {}", i.suffix())),
            Lit::Float(f) => Some(format!("float {}", f.suffix())),
            _ => None,
        },
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => kind(&u.expr),
        Expr::Path(p) if p.qself.is_none() && p.path.segments.len() == 2 => {
            let ty = p.path.segments[0].ident.to_string();
            let name = p.path.segments[1].ident.to_string();
            let constant = name.chars().all(|c| c.is_ascii_uppercase() || c == '_');
            let prim = ["u8", "u16", "u32", "u64", "u128", "usize"]
                .into_iter()
                .chain(["i8", "i16", "i32", "i64", "i128", "isize", "char"])
                .any(|p| p == ty);
            (constant && prim).then(|| format!("int {ty}"))
        }
        _ => None,
    }
}

/// The source text `span` covers (on one line).
fn text(lines: &[&str], span: Span) -> Option<String> {
    let (start, end) = (span.start(), span.end());
    if start.line != end.line {
        return None;
    }
    let line = lines.get(start.line.checked_sub(1)?)?;
    Some(
        line.chars()
            .skip(start.column)
            .take(end.column - start.column)
            .collect(),
    )
}

/// `explored_width_cjk_table` for `unicode_width::UnicodeWidthStr::width_cjk`, or, when
/// another of the file's tables (`functions`) calls a function of that name too,
/// `explored_unicode_width_str_width_table`.
fn table_name(function: &str, functions: &[&str]) -> String {
    let last = |f: &str| f.rsplit("::").next().unwrap_or(f).to_string();
    let shared = functions
        .iter()
        .filter(|f| last(f) == last(function))
        .count()
        > 1;
    let segments: Vec<&str> = function
        .rsplit("::")
        .take(if shared { 2 } else { 1 })
        .collect();
    let words: Vec<String> = segments.iter().rev().map(|s| snake(s)).collect();
    format!("explored_{}_table", words.join("_"))
}

/// `unicode_width_str` for `UnicodeWidthStr`, `width_cjk` as it is; anything but letters,
/// digits and `_` made `_`.
pub(crate) fn snake(segment: &str) -> String {
    let mut out = String::new();
    for (i, c) in segment.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 && !out.ends_with('_') {
            out.push('_');
        }
        out.push(if c.is_ascii_alphanumeric() {
            c.to_ascii_lowercase()
        } else {
            '_'
        });
    }
    out.trim_matches('_').to_string()
}

/// `name`, or `name_2`… when a test of the file has it.
pub(crate) fn unique(name: &str, taken: &[String]) -> String {
    let mut out = name.to_string();
    let mut n = 1;
    while taken.contains(&out) {
        n += 1;
        out = format!("{name}_{n}");
    }
    out
}

/// The table test of `rows` (at least two), its arguments bound to `columns`.
fn table(name: &str, columns: &[String], rows: &[Row]) -> String {
    let first = &rows[0];
    let short = first
        .function
        .rsplit("::")
        .next()
        .unwrap_or(&first.function);
    let origin = first.origin.as_deref().unwrap_or("Explored");
    let mut out = format!(
        "/// {origin}: `{}` called {} ways, a row each, each kept for what it added (a line, \
         an outcome, a comparison at its boundary or a value fault).\n",
        first.function,
        rows.len(),
    );
    out.push_str(&format!("#[test]\nfn {name}() {{\n"));
    let pattern = match columns.len() {
        0 => "expected".to_string(),
        _ => format!("({}, expected)", columns.join(", ")),
    };
    out.push_str(&format!("    for {pattern} in [\n"));
    for r in rows {
        let values: Vec<&str> = r.args.iter().map(String::as_str).collect();
        match values.len() {
            0 => out.push_str(&format!("        {},\n", r.expected)),
            _ => out.push_str(&format!(
                "        ({}, {}),\n",
                values.join(", "),
                r.expected
            )),
        }
    }
    let shown = vec!["{:?}"; columns.len()].join(", ");
    let args = columns.join(", ");
    let message_args = match columns.len() {
        0 => String::new(),
        _ => format!(", {args}"),
    };
    out.push_str(&format!(
        "    ] {{\n        assert_eq!({}({args}), expected, \"{short}({shown})\"{message_args});\n    }}\n}}\n",
        first.function
    ));
    out
}

/// The columns' names: the function's parameters' (`parameters`, by how a test writes it)
/// when they are plain names, else [`column_names`].
fn columns(row: &Row, parameters: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    let plain = |p: &String| {
        let mut chars = p.chars();
        let first = chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_');
        first
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && p != "expected"
            && p != "_"
            && syn::parse_str::<syn::Ident>(p).is_ok()
    };
    match parameters.get(&row.function) {
        Some(names)
            if names.len() == row.args.len()
                && names.iter().all(plain)
                && names
                    .iter()
                    .collect::<std::collections::BTreeSet<_>>()
                    .len()
                    == names.len() =>
        {
            names.clone()
        }
        _ => column_names(&row.kinds),
    }
}

/// A name per column, from what its values are: `text`, `c`, `n`, `flag`, numbered when two
/// are alike.
fn column_names(kinds: &[String]) -> Vec<String> {
    let base: Vec<&str> = kinds
        .iter()
        .map(|k| match k.split(' ').next().unwrap_or("") {
            "str" => "text",
            "char" => "c",
            "bool" => "flag",
            _ => "n",
        })
        .collect();
    base.iter()
        .enumerate()
        .map(|(i, b)| match base.iter().filter(|o| *o == b).count() {
            1 => b.to_string(),
            _ => format!("{b}_{}", i + 1),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "//! Explored by carve.\n\
        #![allow(unused_mut, unused_variables, clippy::all)]\n\
        \n\
        /// Explored (BOBW, length 1, seed 1): lines the run never reached: lookup.rs:48.\n\
        #[test]\n\
        fn explored_001_width_new_lines() {\n    \
            assert_eq!(lib::Str::width(\"山田\"), 4usize);\n\
        }\n\
        \n\
        /// Explored (BOBW, length 1, seed 1): comparison outcomes met first: lib.rs:3 equal.\n\
        #[test]\n\
        fn explored_002_is_small_boundary() {\n    \
            assert!(!lib::is_small(100u32));\n\
        }\n\
        \n\
        /// Explored (BOBW, length 1, seed 1): outcomes no carved test checks.\n\
        #[test]\n\
        fn explored_003_width_zero() {\n    \
            assert_eq!(lib::Str::width(\"\\u{fe0f}\"), 0usize);\n\
        }\n\
        \n\
        /// Explored (BOBW, length 1, seed 1): a buffer.\n\
        #[test]\n\
        fn explored_004_fill() {\n    \
            let mut out = vec![0u8];\n    \
            assert_eq!(lib::fill(&mut out), 1usize);\n\
        }\n";

    #[test]
    fn one_call_tests_of_one_function_become_a_table_in_the_first_ones_place() {
        let folded = fold(FILE, &BTreeMap::new()).expect("a table");
        assert_eq!((folded.tables, folded.rows), (1, 2));
        assert_eq!(
            folded.tests,
            vec![
                "explored_002_is_small_boundary".to_string(),
                "explored_004_fill".to_string(),
                "explored_width_table".to_string()
            ]
        );
        let expected =
            "/// Explored (BOBW, length 1, seed 1): `lib::Str::width` called 2 ways, a row \
            each, each kept for what it added (a line, an outcome, a comparison at its boundary \
            or a value fault).\n\
            #[test]\n\
            fn explored_width_table() {\n    \
                for (text, expected) in [\n        \
                    (\"山田\", 4usize),\n        \
                    (\"\\u{fe0f}\", 0usize),\n    \
                ] {\n        \
                    assert_eq!(lib::Str::width(text), expected, \"width({:?})\", text);\n    \
                }\n\
            }\n";
        assert!(folded.text.contains(expected), "{}", folded.text);
        assert!(!folded.text.contains("explored_003"), "{}", folded.text);
        // The one-row group and the test of two statements stay as they were.
        assert!(folded
            .text
            .contains("    assert!(!lib::is_small(100u32));\n"));
        assert!(folded.text.contains("    let mut out = vec![0u8];\n"));
        syn::parse_file(&folded.text).expect("the folded file parses");
    }

    #[test]
    fn columns_are_named_by_the_functions_parameters_when_they_are_plain_names() {
        let file = "#[test]\nfn a() {\n    assert_eq!(f(1u8, 2u8), 2u8);\n}\n\n\
                    #[test]\nfn b() {\n    assert_eq!(f(3u8, 4u8), 4u8);\n}\n";
        let named = |names: &[&str]| {
            let names = names.iter().map(|n| n.to_string()).collect();
            let folded = fold(file, &BTreeMap::from([("f".to_string(), names)])).unwrap();
            folded.text
        };
        assert!(named(&["lo", "hi"]).contains("for (lo, hi, expected) in ["));
        assert!(named(&["expected", "hi"]).contains("for (n_1, n_2, expected) in ["));
        assert!(named(&["self", "hi"]).contains("for (n_1, n_2, expected) in ["));
    }

    #[test]
    fn tables_of_two_functions_of_one_name_are_named_by_their_types() {
        let functions = ["u::Str::width", "u::Char::width", "u::Str::width_cjk"];
        let names: Vec<String> = functions
            .iter()
            .map(|f| table_name(f, &functions))
            .collect();
        assert_eq!(
            names,
            [
                "explored_str_width_table",
                "explored_char_width_table",
                "explored_width_cjk_table"
            ]
        );
        assert_eq!(snake("UnicodeWidthStr"), "unicode_width_str");
    }

    #[test]
    fn arguments_of_other_kinds_do_not_share_a_table() {
        let file = "#[test]\nfn a() {\n    assert_eq!(f(1u8), 2u8);\n}\n\n\
                    #[test]\nfn b() {\n    assert_eq!(f(&[1u8]), 2u8);\n}\n\n\
                    #[test]\nfn c() {\n    assert_eq!(f(b\"ab\"), 2u8);\n}\n";
        assert_eq!(fold(file, &BTreeMap::new()), None);
    }
}
