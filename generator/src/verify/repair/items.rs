//! A carved file's top-level items as repair sees them (tests, `mock!` blocks, the rows of
//! table tests, the lines each spans), and what a repair rule does about an error in them.

use std::collections::BTreeSet;
use std::ops::RangeInclusive;

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;

/// A top-level item of a carved file.
pub(crate) struct Item {
    /// A `#[test]` function's name, or the struct a `mock!` block defines (`MockAnswerer`).
    pub(crate) name: Option<String>,
    pub(crate) is_test: bool,
    /// The lines it spans, attributes included (1-based).
    pub(crate) lines: RangeInclusive<usize>,
    /// Every identifier in it, to find the tests that use a mock.
    pub(crate) idents: BTreeSet<String>,
    /// The lines of each row of a table test's `cases` (`table.rs`).
    pub(crate) rows: Vec<RangeInclusive<usize>>,
}

pub(crate) fn items(source: &str) -> Result<Vec<Item>, String> {
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
pub(crate) fn mock_name(mac: &syn::Macro) -> Option<String> {
    mac.tokens.clone().into_iter().find_map(|t| match t {
        TokenTree::Ident(i) if i != "pub" => Some(format!("Mock{i}")),
        _ => None,
    })
}

pub(crate) fn line_range(tokens: TokenStream) -> Option<RangeInclusive<usize>> {
    let spans = tokens.into_iter().map(|t| t.span());
    let (first, last) = spans.fold((usize::MAX, 0), |(first, last), s| {
        (first.min(s.start().line), last.max(s.end().line))
    });
    (first <= last).then_some(first..=last)
}

pub(crate) fn collect_idents(tokens: TokenStream, out: &mut BTreeSet<String>) {
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

/// What a repair rule does about one compile error.
pub(crate) enum Fix {
    /// The file cannot be repaired test by test, for this reason: it goes whole.
    Refuse(String),
    /// Take out row `row` (as written) of the table test `test`, which stays.
    Row { test: String, row: usize },
    /// Take out the test that is item `at`.
    Test { at: usize },
    /// Take out the `mock!` that is item `at`, and every test that uses it.
    Mock { at: usize },
}

/// The item of `items` whose lines hold `line`.
pub(crate) fn holder(items: &[Item], line: usize) -> Option<usize> {
    items.iter().position(|i| i.lines.contains(&line))
}
