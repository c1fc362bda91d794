//! Compile repair: when a carved file does not compile, the compiler's own messages say which
//! tests broke it, so only those are taken out and their neighbours keep running. Pure: cargo's
//! JSON messages in, the tests to blame out; a source text in, the same text without them out.
//! Verification (`verify.rs`) does the building and writing.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::RangeInclusive;
use std::path::Path;

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use serde::Deserialize;

/// One error the compiler reported while building a carved test file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompileError {
    /// `error[E0369]: binary operation `==` cannot be applied to type `Result<i32, E>``.
    pub(crate) message: String,
    /// The line of the carved file it points at (its primary span, followed out of macro
    /// expansions such as `assert_eq!`), if it points into that file at all.
    pub(crate) line: Option<usize>,
}

/// What to take out of a file so that it may compile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Repair {
    /// Top-level items to remove: test functions and `Mock*` structs (their `mock!` blocks).
    pub(crate) remove: BTreeSet<String>,
    /// The tests taken out, in file order, each with why.
    pub(crate) tests: Vec<(String, String)>,
    /// Rows to take out of table tests that otherwise stay (test → row as written → why).
    pub(crate) rows: BTreeMap<String, BTreeMap<usize, String>>,
}

#[derive(Deserialize)]
struct CargoMessage {
    reason: String,
    message: Option<Diagnostic>,
}

#[derive(Deserialize)]
struct Diagnostic {
    message: String,
    level: String,
    code: Option<Code>,
    #[serde(default)]
    spans: Vec<Span>,
}

#[derive(Deserialize)]
struct Code {
    code: String,
}

#[derive(Deserialize)]
struct Span {
    file_name: String,
    line_start: usize,
    is_primary: bool,
    expansion: Option<Box<Expansion>>,
}

#[derive(Deserialize)]
struct Expansion {
    span: Span,
}

/// The errors in `cargo build --message-format=json` output (one JSON object a line; other lines
/// are skipped), each placed in `file_name` (`carved_calc.rs`) where it can be.
pub(crate) fn compile_errors(cargo_json: &str, file_name: &str) -> Vec<CompileError> {
    let in_file = |span: &Span| Path::new(&span.file_name).file_name() == Some(file_name.as_ref());
    cargo_json
        .lines()
        .filter_map(|line| serde_json::from_str::<CargoMessage>(line).ok())
        .filter(|m| m.reason == "compiler-message")
        .filter_map(|m| m.message)
        .filter(|d| d.level.starts_with("error"))
        .map(|d| {
            let first_line = d.message.lines().next().unwrap_or_default();
            let message = match &d.code {
                Some(code) => format!("error[{}]: {first_line}", code.code),
                None => format!("error: {first_line}"),
            };
            // Primary spans first; a span in a macro's definition counts where it was called.
            let line = [true, false].iter().find_map(|&primary| {
                d.spans
                    .iter()
                    .filter(|s| s.is_primary == primary)
                    .find_map(|s| call_site_in(s, &in_file))
            });
            CompileError { message, line }
        })
        .collect()
}

fn call_site_in(span: &Span, in_file: &impl Fn(&Span) -> bool) -> Option<usize> {
    if in_file(span) {
        return Some(span.line_start);
    }
    call_site_in(&span.expansion.as_ref()?.span, in_file)
}

/// A top-level item of a carved file.
struct Item {
    /// A `#[test]` function's name, or the struct a `mock!` block defines (`MockAnswerer`).
    name: Option<String>,
    is_test: bool,
    /// The lines it spans, attributes included (1-based).
    lines: RangeInclusive<usize>,
    /// Every identifier in it, to find the tests that use a mock.
    idents: BTreeSet<String>,
    /// The lines of each row of a table test's `cases` (`table.rs`).
    rows: Vec<RangeInclusive<usize>>,
}

fn items(source: &str) -> Result<Vec<Item>, String> {
    let file = syn::parse_file(source).map_err(|e| format!("the file does not parse: {e}"))?;
    let items = file
        .items
        .iter()
        .filter_map(|item| {
            let tokens = item.to_token_stream();
            let lines = line_range(tokens.clone())?;
            let mut idents = BTreeSet::new();
            collect_idents(tokens, &mut idents);
            let rows = match item {
                syn::Item::Fn(f) => crate::verify::rows::rows_of(&mut f.clone())
                    .map(|elems| {
                        elems
                            .iter()
                            .filter_map(|e| line_range(e.to_token_stream()))
                            .collect()
                    })
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            let (name, is_test) = match item {
                syn::Item::Fn(f) if f.attrs.iter().any(|a| a.path().is_ident("test")) => {
                    (Some(f.sig.ident.to_string()), true)
                }
                syn::Item::Macro(m) if m.mac.path.is_ident("mock") => (mock_name(&m.mac), false),
                _ => (None, false),
            };
            Some(Item {
                name,
                is_test,
                lines,
                idents,
                rows,
            })
        })
        .collect();
    Ok(items)
}

/// `mock! { pub Answerer {} ... }` defines `MockAnswerer`.
fn mock_name(mac: &syn::Macro) -> Option<String> {
    mac.tokens.clone().into_iter().find_map(|t| match t {
        TokenTree::Ident(i) if i != "pub" => Some(format!("Mock{i}")),
        _ => None,
    })
}

fn line_range(tokens: TokenStream) -> Option<RangeInclusive<usize>> {
    let spans = tokens.into_iter().map(|t| t.span());
    let (first, last) = spans.fold((usize::MAX, 0), |(first, last), s| {
        (first.min(s.start().line), last.max(s.end().line))
    });
    (first <= last).then_some(first..=last)
}

fn collect_idents(tokens: TokenStream, out: &mut BTreeSet<String>) {
    for t in tokens {
        match t {
            TokenTree::Ident(i) => {
                out.insert(i.to_string());
            }
            TokenTree::Group(g) => collect_idents(g.stream(), out),
            _ => {}
        }
    }
}

/// Pins each error of `errors` on the test function of `source` that holds it. An error in a
/// `mock!` block takes out the mock and every test that uses it. `Err` says why the file cannot
/// be repaired test by test: an error outside any test or mock (a `use`, another file), or
/// one that points nowhere.
pub(crate) fn blame(source: &str, errors: &[CompileError]) -> Result<Repair, String> {
    let items = items(source)?;
    let mut repair = Repair::default();
    let mut reasons: Vec<(usize, String)> = Vec::new();
    for error in errors {
        let Some(line) = error.line else {
            return Err(format!("{} (not in this file)", error.message));
        };
        let holder = items.iter().position(|i| i.lines.contains(&line));
        let Some((at, name)) = holder.and_then(|at| Some((at, items[at].name.clone()?))) else {
            let what = source.lines().nth(line - 1).unwrap_or_default().trim();
            return Err(format!("{} (line {line}: `{what}`)", error.message));
        };
        let mut rows = items[at]
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.contains(&line));
        let row = match (rows.next(), rows.next()) {
            (Some((row, _)), None) => Some(row),
            _ => None,
        };
        if let (true, Some(row)) = (items[at].is_test, row) {
            // A row of a table: it goes, the table stays.
            repair
                .rows
                .entry(name)
                .or_default()
                .entry(row)
                .or_insert_with(|| format!("does not compile: {}", error.message));
            continue;
        } else if items[at].is_test {
            reasons.push((at, format!("does not compile: {}", error.message)));
        } else {
            for (user, item) in items.iter().enumerate() {
                if item.is_test && item.idents.contains(&name) {
                    let reason = format!(
                        "does not compile: the mock `{name}` it uses does not: {}",
                        error.message
                    );
                    reasons.push((user, reason));
                }
            }
        }
        repair.remove.insert(name);
    }
    // One reason per test, the first error it got; tests in file order.
    reasons.sort_by_key(|(at, _)| *at);
    reasons.dedup_by_key(|(at, _)| *at);
    for (at, reason) in reasons {
        if let Some(name) = &items[at].name {
            repair.remove.insert(name.clone());
            repair.tests.push((name.clone(), reason));
        }
    }
    // A table that goes whole loses no row on its own.
    repair.rows.retain(|test, _| !repair.remove.contains(test));
    Ok(repair)
}

/// `source` without the top-level items named in `names` (tests by function name, mocks by
/// struct name), and without the blank line that separated each from the next.
pub(crate) fn remove_items(source: &str, names: &BTreeSet<String>) -> Result<String, String> {
    let doomed: Vec<RangeInclusive<usize>> = items(source)?
        .into_iter()
        .filter(|i| i.name.as_ref().is_some_and(|n| names.contains(n)))
        .map(|i| i.lines)
        .collect();
    let lines: Vec<&str> = source.lines().collect();
    let mut keep = vec![true; lines.len()];
    for range in doomed {
        for line in range.clone() {
            keep[line - 1] = false;
        }
        // The separating blank line: the one after the item, or before it at the end.
        let after = *range.end();
        let before = range.start().checked_sub(2);
        if lines.get(after).is_some_and(|l| l.trim().is_empty()) {
            keep[after] = false;
        } else if let Some(b) = before.filter(|&b| lines[b].trim().is_empty()) {
            keep[b] = false;
        }
    }
    let mut out = String::with_capacity(source.len());
    for (line, _) in lines.iter().zip(&keep).filter(|(_, k)| **k) {
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file behind `testdata/cargo_no_run_errors.json`: cargo 1.9x's messages for it, with
    /// the long explanations and rendered text cut.
    const CARVED: &str = "use demo::f;

#[test]
fn f_returns_ok_1() {
    let result = f(1);
    assert_eq!(result, Ok(1));
}

#[test]
fn f_1_is_ok() {
    assert!(f(1).is_ok());
}

#[test]
fn f_mismatched() {
    let x: u8 = f(2);
    assert!(x > 0);
}
";

    const MESSAGES: &str = include_str!("../../testdata/cargo_no_run_errors.json");

    #[test]
    fn errors_are_read_with_their_code_and_the_line_in_the_carved_file() {
        let errors = compile_errors(MESSAGES, "carved_demo.rs");
        assert_eq!(
            errors,
            [
                CompileError {
                    message: "error[E0369]: binary operation `==` cannot be applied to type `Result<i32, E>`".into(),
                    // The primary span is in core's `assert_eq!`; its call site is line 6.
                    line: Some(6),
                },
                CompileError {
                    message: "error[E0308]: mismatched types".into(),
                    line: Some(16),
                },
            ]
        );
    }

    #[test]
    fn errors_in_another_file_point_nowhere_in_this_one() {
        let errors = compile_errors(MESSAGES, "carved_other.rs");
        assert!(errors.iter().all(|e| e.line.is_none()), "{errors:?}");
    }

    #[test]
    fn each_error_is_pinned_on_the_test_that_holds_it() {
        let repair = blame(CARVED, &compile_errors(MESSAGES, "carved_demo.rs")).unwrap();
        assert_eq!(
            repair.tests,
            [
                (
                    "f_returns_ok_1".to_string(),
                    "does not compile: error[E0369]: binary operation `==` cannot be applied to type `Result<i32, E>`".to_string()
                ),
                (
                    "f_mismatched".to_string(),
                    "does not compile: error[E0308]: mismatched types".to_string()
                ),
            ]
        );
        let repaired = remove_items(CARVED, &repair.remove).unwrap();
        assert_eq!(
            repaired,
            "use demo::f;\n\n#[test]\nfn f_1_is_ok() {\n    assert!(f(1).is_ok());\n}\n"
        );
    }

    #[test]
    fn an_error_outside_any_test_cannot_be_pinned() {
        let error = CompileError {
            message: "error[E0432]: unresolved import `demo::f`".into(),
            line: Some(1),
        };
        assert_eq!(
            blame(CARVED, std::slice::from_ref(&error)),
            Err("error[E0432]: unresolved import `demo::f` (line 1: `use demo::f;`)".into())
        );
        let elsewhere = CompileError {
            line: None,
            ..error
        };
        assert_eq!(
            blame(CARVED, &[elsewhere]),
            Err("error[E0432]: unresolved import `demo::f` (not in this file)".into())
        );
    }

    #[test]
    fn an_error_in_a_mock_takes_out_the_mock_and_the_tests_using_it() {
        let source = "use mockall::mock;

mock! {
    pub Answerer {}
    impl abc::Answerer for Answerer {
        fn answer(&self) -> i32;
    }
}

#[test]
fn uses_the_mock() {
    let a = MockAnswerer::new();
    assert_eq!(abc::ask(&a), 1);
}

#[test]
fn plain() {
    assert_eq!(abc::one(), 1);
}
";
        let error = CompileError {
            message: "error[E0407]: method `answer` is not a member of trait `abc::Answerer`"
                .into(),
            line: Some(6),
        };
        let repair = blame(source, &[error]).unwrap();
        assert_eq!(
            repair.tests,
            [(
                "uses_the_mock".to_string(),
                "does not compile: the mock `MockAnswerer` it uses does not: error[E0407]: method `answer` is not a member of trait `abc::Answerer`".to_string()
            )]
        );
        assert_eq!(
            remove_items(source, &repair.remove).unwrap(),
            "use mockall::mock;\n\n#[test]\nfn plain() {\n    assert_eq!(abc::one(), 1);\n}\n"
        );
    }

    #[test]
    fn an_error_in_a_row_of_a_table_takes_out_the_row_and_one_in_its_body_the_table() {
        let source = "#[test]
fn f_recorded_cases() {
    let cases: &[(u8, u8)] = &[
        (1u8, 2u8),
        (2u8, 4u8),
    ];
    for (i, case) in cases.iter().enumerate() {
        assert_eq!(demo::f(case.0), case.1, \"case {i}\");
    }
}
";
        let error = |line| CompileError {
            message: "error[E0308]: mismatched types".into(),
            line: Some(line),
        };
        let repair = blame(source, &[error(5)]).unwrap();
        assert!(
            repair.tests.is_empty() && repair.remove.is_empty(),
            "{repair:?}"
        );
        assert_eq!(
            repair.rows["f_recorded_cases"],
            BTreeMap::from([(
                1,
                "does not compile: error[E0308]: mismatched types".to_string()
            )])
        );
        let repair = blame(source, &[error(5), error(8)]).unwrap();
        assert_eq!(repair.tests.len(), 1, "{repair:?}");
        assert!(repair.rows.is_empty(), "the table goes whole: {repair:?}");
    }

    #[test]
    fn removing_the_last_item_takes_the_blank_line_before_it() {
        let names = BTreeSet::from(["f_mismatched".to_string()]);
        let repaired = remove_items(CARVED, &names).unwrap();
        assert!(
            repaired.ends_with("assert!(f(1).is_ok());\n}\n"),
            "{repaired}"
        );
    }
}
