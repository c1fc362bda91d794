//! The crate's own `macro_rules!` expanded where they make items: `rng_integer!(u64, ..)` inside
//! `impl Rng { .. }` writes `pub fn u64(&mut self, range: impl RangeBounds<u64>) -> u64`, a method
//! the run calls and a test can call, which the source shows nowhere as written (fastrand,
//! bytes, num-* crates make their per-type methods so).
//!
//! The expansion covers what such macros are made of: rules whose patterns are literal tokens
//! and `$name:fragment` captures (no `$(..)*` repetition); a `tt`, `ident`, `literal` or
//! `lifetime` capture takes one token tree, any other fragment the tokens up to the pattern's next
//! literal token. The first rule that matches is expanded; a macro that matches no rule, or
//! whose expansion does not parse, adds nothing (as before). Expansions are expanded again, a
//! few levels deep. Macros are in scope from the module that defines them down (textual scope;
//! order within a file is not followed).

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::ToTokens;

/// How many times an expansion may hold another macro to expand.
const MAX_DEPTH: usize = 8;

/// One `macro_rules!` of the crate.
#[derive(Clone)]
pub(crate) struct MacroRules {
    name: String,
    /// (pattern, body) of each rule, in order.
    rules: Vec<(Vec<TokenTree>, TokenStream)>,
}

/// The `macro_rules!` defined among `items`.
pub(crate) fn defined(items: &[syn::Item]) -> Vec<MacroRules> {
    items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                let name = m.ident.as_ref()?.to_string();
                Some(MacroRules {
                    name,
                    rules: rules(m.mac.tokens.clone()),
                })
            }
            _ => None,
        })
        .collect()
}

/// `(pattern) => { body };` pairs.
fn rules(tokens: TokenStream) -> Vec<(Vec<TokenTree>, TokenStream)> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 3 < trees.len() + 1 {
        let (
            Some(TokenTree::Group(pattern)),
            Some(arrow),
            Some(next),
            Some(TokenTree::Group(body)),
        ) = (
            trees.get(i),
            trees.get(i + 1),
            trees.get(i + 2),
            trees.get(i + 3),
        )
        else {
            break;
        };
        if !(is_punct(arrow, '=') && is_punct(next, '>')) {
            break;
        }
        out.push((pattern.stream().into_iter().collect(), body.stream()));
        i += 4;
        if trees.get(i).is_some_and(|t| is_punct(t, ';')) {
            i += 1;
        }
    }
    out
}

fn is_punct(tree: &TokenTree, c: char) -> bool {
    matches!(tree, TokenTree::Punct(p) if p.as_char() == c)
}

/// `items` with each invocation of one of `macros` as an item (or, inside an inherent `impl`,
/// as an impl item) replaced by the items it expands to.
pub(crate) fn expand_items(items: &[syn::Item], macros: &[MacroRules]) -> Vec<syn::Item> {
    expand_items_at(items, macros, 0)
}

fn expand_items_at(items: &[syn::Item], macros: &[MacroRules], depth: usize) -> Vec<syn::Item> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        match item {
            syn::Item::Macro(m) if m.ident.is_none() && depth < MAX_DEPTH => {
                match expand(&m.mac, macros).and_then(|t| syn::parse2::<syn::File>(t).ok()) {
                    Some(file) => out.extend(expand_items_at(&file.items, macros, depth + 1)),
                    None => out.push(item.clone()),
                }
            }
            syn::Item::Impl(imp) => {
                let mut imp = imp.clone();
                imp.items = expand_impl_items(&imp.items, macros, depth);
                out.push(syn::Item::Impl(imp));
            }
            other => out.push(other.clone()),
        }
    }
    out
}

fn expand_impl_items(
    items: &[syn::ImplItem],
    macros: &[MacroRules],
    depth: usize,
) -> Vec<syn::ImplItem> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let syn::ImplItem::Macro(m) = item else {
            out.push(item.clone());
            continue;
        };
        let parsed = (depth < MAX_DEPTH)
            .then(|| expand(&m.mac, macros))
            .flatten()
            .and_then(|tokens| {
                syn::parse2::<syn::ItemImpl>(quote::quote!(impl X { #tokens })).ok()
            });
        match parsed {
            Some(imp) => out.extend(expand_impl_items(&imp.items, macros, depth + 1)),
            None => out.push(item.clone()),
        }
    }
    out
}

/// The tokens `mac` expands to, by the first rule of its macro that matches.
fn expand(mac: &syn::Macro, macros: &[MacroRules]) -> Option<TokenStream> {
    let name = mac.path.get_ident()?.to_string();
    let found = macros.iter().rev().find(|m| m.name == name)?;
    let input: Vec<TokenTree> = mac.tokens.clone().into_iter().collect();
    found.rules.iter().find_map(|(pattern, body)| {
        let mut captures = Vec::new();
        matches(pattern, &input, &mut captures)?;
        substitute(body.clone(), &captures)
    })
}

/// A capture: `$name` and the tokens it took.
type Capture = (String, TokenStream);

/// Matches `input` against `pattern` whole, filling `captures`.
fn matches(pattern: &[TokenTree], input: &[TokenTree], captures: &mut Vec<Capture>) -> Option<()> {
    let (mut p, mut i) = (0, 0);
    while p < pattern.len() {
        // `$name:fragment`
        if is_punct(&pattern[p], '$') {
            let TokenTree::Ident(name) = pattern.get(p + 1)? else {
                return None; // `$( .. )*`: not followed
            };
            if !pattern.get(p + 2).is_some_and(|t| is_punct(t, ':')) {
                return None;
            }
            let TokenTree::Ident(fragment) = pattern.get(p + 3)? else {
                return None;
            };
            p += 4;
            let taken = match fragment.to_string().as_str() {
                "tt" | "ident" | "literal" | "lifetime" => 1.min(input.len() - i),
                // Up to the pattern's next literal token (or the end).
                _ => match pattern.get(p) {
                    Some(next) => input[i..].iter().position(|t| same_token(t, next))?,
                    None => input.len() - i,
                },
            };
            if taken == 0 && fragment != "vis" {
                return None;
            }
            let tokens: TokenStream = input[i..i + taken].iter().cloned().collect();
            captures.push((name.to_string(), tokens));
            i += taken;
            continue;
        }
        let here = input.get(i)?;
        match (&pattern[p], here) {
            (TokenTree::Group(a), TokenTree::Group(b)) if a.delimiter() == b.delimiter() => {
                let a: Vec<TokenTree> = a.stream().into_iter().collect();
                let b: Vec<TokenTree> = b.stream().into_iter().collect();
                matches(&a, &b, captures)?;
            }
            (a, b) if same_token(a, b) => {}
            _ => return None,
        }
        p += 1;
        i += 1;
    }
    (i == input.len()).then_some(())
}

/// The same punctuation, identifier or literal (groups are matched by [`matches`]).
fn same_token(a: &TokenTree, b: &TokenTree) -> bool {
    match (a, b) {
        (TokenTree::Punct(x), TokenTree::Punct(y)) => x.as_char() == y.as_char(),
        (TokenTree::Ident(x), TokenTree::Ident(y)) => x == y,
        (TokenTree::Literal(x), TokenTree::Literal(y)) => x.to_string() == y.to_string(),
        _ => false,
    }
}

/// `body` with each `$name` replaced by its capture (in an invisible group, as rustc keeps a
/// captured expression or type whole); `None` on a `$` it cannot replace (a repetition).
fn substitute(body: TokenStream, captures: &[Capture]) -> Option<TokenStream> {
    let trees: Vec<TokenTree> = body.into_iter().collect();
    let mut out = TokenStream::new();
    let mut i = 0;
    while i < trees.len() {
        match &trees[i] {
            t if is_punct(t, '$') => {
                let TokenTree::Ident(name) = trees.get(i + 1)? else {
                    return None;
                };
                let (_, tokens) = captures.iter().find(|(n, _)| name == n)?;
                let single = tokens.clone().into_iter().count() == 1;
                if single {
                    out.extend(tokens.clone());
                } else {
                    Group::new(Delimiter::None, tokens.clone()).to_tokens(&mut out);
                }
                i += 2;
            }
            TokenTree::Group(g) => {
                let inner = substitute(g.stream(), captures)?;
                let mut group = Group::new(g.delimiter(), inner);
                group.set_span(g.span());
                group.to_tokens(&mut out);
                i += 1;
            }
            other => {
                other.to_tokens(&mut out);
                i += 1;
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(src: &str) -> syn::File {
        syn::parse_str(src).expect("parses")
    }

    #[test]
    fn a_macro_making_methods_in_an_impl_is_expanded_into_them() {
        let f = file(
            r#"
            macro_rules! ranged {
                ($t:tt, $doc:tt) => {
                    #[doc = $doc]
                    pub fn $t(&mut self, range: impl core::ops::RangeBounds<$t>) -> $t { 0 }
                };
            }
            pub struct Rng(u64);
            impl Rng {
                ranged!(u8, "A u8.");
                ranged!(u64, "A u64.");
                pub fn seed(&self) -> u64 { self.0 }
            }
            "#,
        );
        let items = expand_items(&f.items, &defined(&f.items));
        let syn::Item::Impl(imp) = &items[2] else {
            panic!("the impl stays third")
        };
        let names: Vec<String> = imp
            .items
            .iter()
            .map(|i| match i {
                syn::ImplItem::Fn(f) => f.sig.ident.to_string(),
                other => panic!("not expanded: {}", other.to_token_stream()),
            })
            .collect();
        assert_eq!(names, ["u8", "u64", "seed"]);
        let syn::ImplItem::Fn(u64_fn) = &imp.items[1] else {
            unreachable!()
        };
        let sig = u64_fn.sig.to_token_stream().to_string();
        assert_eq!(
            sig,
            "fn u64 (& mut self , range : impl core :: ops :: RangeBounds < u64 >) -> u64"
        );
    }

    #[test]
    fn a_macro_making_free_functions_takes_types_up_to_the_next_separator() {
        let f = file(
            r#"
            macro_rules! getter {
                ($name:ident, $ty:ty) => { pub fn $name() -> $ty { Default::default() } };
            }
            getter!(pair, (u8, Vec<u16>));
            getter!(plain, u32);
            "#,
        );
        let items = expand_items(&f.items, &defined(&f.items));
        let sigs: Vec<String> = items
            .iter()
            .filter_map(|i| match i {
                syn::Item::Fn(f) => Some(f.sig.to_token_stream().to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(
            sigs,
            ["fn pair () -> (u8 , Vec < u16 >)", "fn plain () -> u32"]
        );
    }

    #[test]
    fn a_repetition_or_an_unmatched_call_is_left_as_it_was() {
        let f = file(
            r#"
            macro_rules! many { ($($t:ty),*) => { $(pub fn f() -> $t { 0 })* }; }
            macro_rules! one { (u8) => { pub fn g() {} }; }
            many!(u8, u16);
            one!(u16);
            "#,
        );
        let items = expand_items(&f.items, &defined(&f.items));
        assert_eq!(items.len(), f.items.len());
        assert!(items.iter().all(|i| !matches!(i, syn::Item::Fn(_))));
    }
}
