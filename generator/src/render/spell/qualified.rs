//! What the spelling rules share (`spell/`): the shape of a qualified call of a std trait's
//! function as carve writes it, and a type as the start of an expression path.

/// `<T as a::b::Trait<..>>::method(args)`, as carve writes a call of a std trait's function:
/// `T` and the arguments, when `expr` is that call of `method` of the trait at `trait_path`
/// (its last segment may hold generic arguments, `FromIterator<_>`).
pub(crate) fn qualified_call<'e>(
    expr: &'e syn::Expr,
    trait_path: &[&str],
    method: &str,
) -> Option<(&'e syn::Type, Vec<&'e syn::Expr>)> {
    let syn::Expr::Call(call) = expr else {
        return None;
    };
    let syn::Expr::Path(func) = &*call.func else {
        return None;
    };
    let qself = func.qself.as_ref()?;
    let segments: Vec<&syn::PathSegment> = func.path.segments.iter().collect();
    let [tr @ .., m] = segments.as_slice() else {
        return None;
    };
    let last = tr.len().checked_sub(1)?;
    let is_call = qself.as_token.is_some()
        && qself.position == trait_path.len()
        && func.path.leading_colon.is_none()
        && tr.len() == trait_path.len()
        && tr
            .iter()
            .zip(trait_path)
            .enumerate()
            .all(|(i, (s, name))| s.ident == name && (i == last || s.arguments.is_none()))
        && m.ident == method
        && m.arguments.is_none()
        && call.attrs.is_empty()
        && func.attrs.is_empty();
    is_call.then(|| (&*qself.ty, call.args.iter().collect()))
}

/// `T` as the start of an expression path (`tinyvec::TinyVec::<[i32; 10]>`): a path type,
/// its generic arguments after `::`; `None` for any other type (`[u8; 4]`, `&str`), which
/// keeps its qualified form.
pub(crate) fn type_as_expr_path(ty: &syn::Type) -> Option<syn::Path> {
    let syn::Type::Path(p) = ty else {
        return None;
    };
    if p.qself.is_some() {
        return None;
    }
    let mut path = p.path.clone();
    for s in &mut path.segments {
        if let syn::PathArguments::AngleBracketed(a) = &mut s.arguments {
            a.colon2_token = Some(Default::default());
        }
    }
    Some(path)
}

/// `PATH::name(args)`.
pub(crate) fn path_call(mut path: syn::Path, name: &str, args: &[&syn::Expr]) -> syn::Expr {
    path.segments
        .push(syn::Ident::new(name, proc_macro2::Span::call_site()).into());
    syn::parse_quote!(#path(#(#args),*))
}

/// What `rule` writes for the expression `source`, formatted; `None` when it passes: the
/// spelling rules' tests.
#[cfg(test)]
pub(crate) fn spelled_expr(
    rule: fn(&syn::Expr) -> Option<syn::Expr>,
    source: &str,
) -> Option<String> {
    let expr: syn::Expr = syn::parse_str(source).unwrap();
    let spelled = rule(&expr)?;
    let file: syn::File = syn::parse_quote!(fn t() { #spelled; });
    let text = prettyplease::unparse(&file);
    let line = text.lines().nth(1).unwrap_or_default().trim();
    Some(line.trim_end_matches(';').to_string())
}
