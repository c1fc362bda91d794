//! The tests left with only a bare variant check (`assert!(matches!(result, Some(_)))`, or no
//! check but the `.unwrap()` that gets the result out): what the report calls "bare checks
//! left", counted in the files as written, after verification and distilling took out what they
//! took out.

use std::path::Path;

use proc_macro2::{TokenStream, TokenTree};

use crate::assert::pattern::is_bare;

/// How many `#[test]` functions of the carved files in `files` (other files are skipped) check
/// nothing but bare variants.
pub(crate) fn count(files: &[impl AsRef<Path>]) -> usize {
    files
        .iter()
        .map(AsRef::as_ref)
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .map(|source| in_source(&source))
        .sum()
}

/// [`count`] for one file's source.
pub(crate) fn in_source(source: &str) -> usize {
    let Ok(file) = syn::parse_file(source) else {
        return 0;
    };
    file.items
        .iter()
        .filter(|item| match item {
            syn::Item::Fn(f) => {
                let attr = |name: &str| f.attrs.iter().any(|a| a.path().is_ident(name));
                attr("test")
                    && !attr("should_panic")
                    && only_bare(quote::ToTokens::to_token_stream(&f.block))
            }
            _ => false,
        })
        .count()
}

/// Whether the checks in `body` (its `assert*!` macros) are all bare `matches!`, and there is
/// one; or there is none, no mock, and the result is unwrapped (`.unwrap()` says no more than
/// `matches!(result, Some(_))`) or dropped (`let _ =`).
fn only_bare(body: TokenStream) -> bool {
    let mut checks = Vec::new();
    collect_checks(body.clone(), &mut checks);
    if checks.is_empty() {
        let text = body.to_string();
        let mut idents = std::collections::BTreeSet::new();
        crate::verify::repair::items::collect_idents(body, &mut idents);
        let mocks = idents.iter().any(|i| i.starts_with("mock"));
        // `let _ = f(..)`: a result nothing looks at (its probes went).
        let dropped = text.contains("let _ =");
        return !mocks && (idents.contains("unwrap") || idents.contains("unwrap_err") || dropped);
    }
    checks.iter().all(|c| c.is_some_and(|bare| bare))
}

/// Each check in `tokens`: `Some(true)` for `assert!(matches!(x, <bare pattern>))`, `Some(false)`
/// for any other `assert*!`.
fn collect_checks(tokens: TokenStream, out: &mut Vec<Option<bool>>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, t) in tokens.iter().enumerate() {
        match t {
            TokenTree::Ident(name) if name.to_string().starts_with("assert") => {
                let bang =
                    matches!(tokens.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!');
                if let (true, Some(TokenTree::Group(args))) = (bang, tokens.get(i + 2)) {
                    out.push(Some(*name == "assert" && bare_matches(args.stream())));
                }
            }
            TokenTree::Group(g) => collect_checks(g.stream(), out),
            _ => {}
        }
    }
}

/// `matches!(x, P)` with a bare `P`.
fn bare_matches(args: TokenStream) -> bool {
    let tokens: Vec<TokenTree> = args.into_iter().collect();
    let [TokenTree::Ident(m), TokenTree::Punct(bang), TokenTree::Group(inner)] = tokens.as_slice()
    else {
        return false;
    };
    if *m != "matches" || bang.as_char() != '!' {
        return false;
    }
    let inner: Vec<TokenTree> = inner.stream().into_iter().collect();
    let Some(comma) = inner
        .iter()
        .position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','))
    else {
        return false;
    };
    let pattern: TokenStream = inner[comma + 1..].iter().cloned().collect();
    is_bare(&pattern.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_tests_whose_every_check_is_a_bare_variant_count() {
        let source = r#"
#[test]
fn a() { let result = f(); assert!(matches!(result, Some(_))); }
#[test]
fn b() { let result = f(); assert!(matches!(result, Some(_))); assert_eq!(result.unwrap().x(), 3u8); }
#[test]
fn c() { let result = g(); assert!(matches!(result, Err(k::E::At(3usize)))); }
#[test]
fn d() { let result = g(); assert!(matches!(result, Ok(k::P { .. }))); }
#[test]
#[should_panic]
fn e() { let _ = h(); }
#[test]
fn f() { h(); }
#[test]
fn i() { let _ = h(); }
#[test]
fn g() { let _ = k::f().unwrap(); }
#[test]
fn h() { let mock_a = MockA::new(); let _ = k::C::new(Box::new(mock_a)).unwrap(); }
"#;
        assert_eq!(in_source(source), 4);
    }
}
