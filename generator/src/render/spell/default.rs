//! Spelling: `<T as std::default::Default>::default()` is written `T::default()`
//! (`tinyvec::TinyVec::<[i32; 10]>::default()`), as a person writes it. `Default` is in the
//! prelude, so the path resolves to the same function unless `T` has an inherent `default`
//! of its own (which clippy's `should_implement_trait` steers crates away from); a type that
//! is no path (`[u8; 4]`) keeps the qualified form.

use super::qualified::{path_call, qualified_call, type_as_expr_path};

/// `T::default()` for `<T as std::default::Default>::default()`.
pub(crate) fn rule(expr: &syn::Expr) -> Option<syn::Expr> {
    let (ty, args) = qualified_call(expr, &["std", "default", "Default"], "default")?;
    if !args.is_empty() {
        return None;
    }
    Some(path_call(type_as_expr_path(ty)?, "default", &[]))
}

#[cfg(test)]
mod tests {
    use super::super::qualified::spelled_expr;
    use super::*;

    #[test]
    fn a_default_is_called_on_its_type() {
        let check = |src| spelled_expr(rule, src);
        assert_eq!(
            check("<tinyvec::TinyVec<[i32; 10]> as std::default::Default>::default()").as_deref(),
            Some("tinyvec::TinyVec::<[i32; 10]>::default()")
        );
        assert_eq!(
            check("<m::Quoter as std::default::Default>::default()").as_deref(),
            Some("m::Quoter::default()")
        );
        assert_eq!(check("<[u8; 4] as std::default::Default>::default()"), None);
        assert_eq!(check("<m::Q as m::Default>::default()"), None);
    }
}
