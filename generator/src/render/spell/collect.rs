//! Spelling: `<T as std::iter::FromIterator<_>>::from_iter(it)` is written
//! `it.collect::<T>()` when `it` is plainly an iterator (a call of an iterator's producer or
//! adapter: `.iter()`, `.split(' ')`, `.cloned()`, `.map(..)`), as a person writes it:
//! `Iterator::collect` is `FromIterator::from_iter(self)`. Anything else `from_iter` takes
//! (a `Vec`, an array: only `IntoIterator`) keeps the qualified form.

use super::qualified::qualified_call;

/// Methods whose result is an iterator.
const ITERATORS: &[&str] = &[
    "iter",
    "into_iter",
    "iter_mut",
    "chars",
    "bytes",
    "lines",
    "split",
    "split_whitespace",
    "cloned",
    "copied",
    "map",
    "filter",
    "rev",
    "take",
    "skip",
    "chain",
    "zip",
    "enumerate",
    "drain",
];

/// `it.collect::<T>()` for `<T as std::iter::FromIterator<_>>::from_iter(it)`.
pub(crate) fn rule(expr: &syn::Expr) -> Option<syn::Expr> {
    let (ty, args) = qualified_call(expr, &["std", "iter", "FromIterator"], "from_iter")?;
    let [it] = args[..] else {
        return None;
    };
    let syn::Expr::MethodCall(m) = it else {
        return None;
    };
    if !ITERATORS.contains(&m.method.to_string().as_str()) {
        return None;
    }
    Some(syn::parse_quote!(#it.collect::<#ty>()))
}

#[cfg(test)]
mod tests {
    use super::super::qualified::spelled_expr;
    use super::*;

    #[test]
    fn an_iterator_collected_into_a_type_is_written_with_collect() {
        let check = |src| spelled_expr(rule, src);
        assert_eq!(
            check(r#"<smallvec::SmallVec<[&str; 4]> as std::iter::FromIterator<_>>::from_iter("a b".split(' '))"#)
                .as_deref(),
            Some(r#""a b".split(' ').collect::<smallvec::SmallVec<[&str; 4]>>()"#)
        );
        // A vector is `IntoIterator`, not an iterator: kept.
        assert_eq!(
            check("<m::Set as std::iter::FromIterator<_>>::from_iter(vec![1u8])"),
            None
        );
    }
}
