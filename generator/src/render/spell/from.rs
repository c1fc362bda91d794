//! Spelling: `<T as std::convert::From<_>>::from(x)` is written `T::from(x)`
//! (`smallvec::SmallVec::<[i64; 4]>::from(&[3i64][..])`), as a person writes it: `From` is in
//! the prelude and its parameter was left to inference either way. A type that is no path
//! keeps the qualified form.

use super::qualified::{path_call, qualified_call, type_as_expr_path};

/// `T::from(x)` for `<T as std::convert::From<_>>::from(x)`.
pub(crate) fn rule(expr: &syn::Expr) -> Option<syn::Expr> {
    let (ty, args) = qualified_call(expr, &["std", "convert", "From"], "from")?;
    if args.len() != 1 || !inferred(expr) {
        return None;
    }
    Some(path_call(type_as_expr_path(ty)?, "from", &args))
}

/// Whether the trait's parameter is `_` (a named one picks one impl of several: kept).
fn inferred(expr: &syn::Expr) -> bool {
    let syn::Expr::Call(call) = expr else {
        return false;
    };
    let syn::Expr::Path(func) = &*call.func else {
        return false;
    };
    let tr = func.path.segments.iter().rev().nth(1);
    let Some(syn::PathArguments::AngleBracketed(a)) = tr.map(|s| &s.arguments) else {
        return false;
    };
    matches!(
        a.args.iter().collect::<Vec<_>>()[..],
        [syn::GenericArgument::Type(syn::Type::Infer(_))]
    )
}

#[cfg(test)]
mod tests {
    use super::super::qualified::spelled_expr;
    use super::*;

    #[test]
    fn a_from_with_an_inferred_parameter_is_called_on_its_type() {
        let check = |src| spelled_expr(rule, src);
        assert_eq!(
            check("<smallvec::SmallVec<[i64; 4]> as std::convert::From<_>>::from(&[3i64][..])")
                .as_deref(),
            Some("smallvec::SmallVec::<[i64; 4]>::from(&[3i64][..])")
        );
        // A named parameter chooses among impls: kept.
        assert_eq!(
            check("<m::Name as std::convert::From<&str>>::from(\"a\")"),
            None
        );
        assert_eq!(
            check("<u64 as std::convert::From<_>>::from(3u8)").as_deref(),
            Some("u64::from(3u8)")
        );
        assert_eq!(check("<[u8; 2] as std::convert::From<_>>::from(x)"), None);
    }
}
