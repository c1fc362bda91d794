//! Spelling: a `FromStr` impl is called as `"1.2.3".parse::<semver::Version>()`, as a person
//! writes it, not `<semver::Version as std::str::FromStr>::from_str("1.2.3")`.
//!
//! The two are the same call: `str::parse::<F>` is `F::from_str(self)`, and what carve passes
//! `from_str` is a `&str` (a literal, a table's `case.0`, a hoisted `const`), on which `parse`
//! is the inherent method of `str` (no trait in scope comes before it). The type keeps the path the plan gave it (its public path, a generic instance
//! as recorded), the trait needs no import either way, and what follows the call (`.unwrap()`
//! where the error is `Debug`, else `.unwrap_or_else(|_| panic!(..))`; see
//! `arrange/values.rs`'s `returned_struct`) stays as it was: the result is the same `Result`.

use super::qualified::qualified_call;

/// The trait as carve writes it in a qualified call (the public path `act/std_traits.rs` gives
/// `core::str::traits::FromStr`).
const FROM_STR: [&str; 3] = ["std", "str", "FromStr"];

/// `s.parse::<T>()` for `<T as std::str::FromStr>::from_str(s)`.
pub(crate) fn rule(expr: &syn::Expr) -> Option<syn::Expr> {
    let (ty, args) = qualified_call(expr, &FROM_STR, "from_str")?;
    let [text] = args[..] else {
        return None;
    };
    let ty = ty.clone();
    Some(syn::Expr::MethodCall(syn::ExprMethodCall {
        attrs: Vec::new(),
        // prettyplease puts parentheses around a receiver that needs them (`(&s).parse`).
        receiver: Box::new(text.clone()),
        dot_token: Default::default(),
        method: syn::Ident::new("parse", proc_macro2::Span::call_site()),
        turbofish: Some(syn::parse_quote!(::<#ty>)),
        paren_token: Default::default(),
        args: syn::punctuated::Punctuated::new(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the rule writes for `source`, formatted; `None` when it does not apply.
    fn check(source: &str) -> Option<String> {
        super::super::qualified::spelled_expr(rule, source)
    }

    #[test]
    fn a_from_str_call_is_spelled_as_parse_with_the_same_type_path() {
        assert_eq!(
            check(r#"<shapes::Size as std::str::FromStr>::from_str("2k")"#).as_deref(),
            Some(r#""2k".parse::<shapes::Size>()"#)
        );
        assert_eq!(
            check("<m::Stack<u32> as std::str::FromStr>::from_str(case.0)").as_deref(),
            Some("case.0.parse::<m::Stack<u32>>()")
        );
        assert_eq!(
            check("<m::Version as std::str::FromStr>::from_str(TEXT)").as_deref(),
            Some("TEXT.parse::<m::Version>()")
        );
        // A receiver that binds less tightly than a method call is put in parentheses.
        assert_eq!(
            check("<m::Version as std::str::FromStr>::from_str(&text)").as_deref(),
            Some("(&text).parse::<m::Version>()")
        );
    }

    #[test]
    fn only_std_s_from_str_called_with_one_argument_is_spelled_again() {
        for other in [
            // Another trait, or a trait of the crate that is named FromStr too.
            "<m::Size as std::convert::From<_>>::from(5u64)",
            r#"<m::Size as m::FromStr>::from_str("2k")"#,
            r#"<m::Size as m::str::FromStr>::from_str("2k")"#,
            // An inherent `from_str`, however it is written.
            r#"<m::Size>::from_str("2k")"#,
            r#"m::Size::from_str("2k")"#,
            // Not a call of `from_str` with its one argument.
            r#"<m::Size as std::str::FromStr>::from_str("2k", 1)"#,
            r#"<m::Size as std::str::FromStr>::other("2k")"#,
            "<m::Size as std::str::FromStr>::from_str",
        ] {
            assert_eq!(check(other), None, "{other}");
        }
    }

    #[test]
    fn the_trait_is_written_as_act_writes_it() {
        assert_eq!(
            crate::act::std_traits::public_path("core::str::traits::FromStr"),
            Some(FROM_STR.join("::").as_str())
        );
    }
}
