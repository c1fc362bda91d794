//! Functions and traits as their signatures declare them: parameters and their declared types,
//! trait bounds, return types, and the source text a mock or test writes them with.

use std::collections::BTreeMap;

use quote::ToTokens;
use syn::ext::IdentExt;
use syn::visit_mut::VisitMut;

use crate::read::crate_api::scope::{Qualify, Scope};
use crate::read::crate_api::{FnApi, ParamApi, TraitApi, TraitMethodApi};
use crate::read::types::{impl_iterator, written_ok_unit, DeclType};

pub(crate) fn type_params(generics: &syn::Generics) -> Vec<String> {
    generics
        .params
        .iter()
        .filter_map(|p| match p {
            syn::GenericParam::Type(t) => Some(t.ident.to_string()),
            _ => None,
        })
        .collect()
}

pub(crate) fn has_const_params(generics: &syn::Generics) -> bool {
    generics
        .params
        .iter()
        .any(|p| matches!(p, syn::GenericParam::Const(_)))
}

/// Type parameters with exactly one trait bound that is not a marker (`R: Repo`,
/// `where R: Repo + Send`), and the bound as a test writes it.
pub(crate) fn trait_bounds(generics: &syn::Generics, scope: &Scope) -> BTreeMap<String, String> {
    let mut all: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut add =
        |param: String,
         bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, syn::token::Plus>| {
            let entry = all.entry(param).or_default();
            entry.extend(bounds.iter().filter_map(|b| bound_path(b, scope)));
        };
    for p in &generics.params {
        if let syn::GenericParam::Type(t) = p {
            add(t.ident.to_string(), &t.bounds);
        }
    }
    if let Some(w) = &generics.where_clause {
        for pred in &w.predicates {
            if let syn::WherePredicate::Type(pt) = pred {
                if let syn::Type::Path(p) = &pt.bounded_ty {
                    if let Some(ident) = p.path.get_ident() {
                        add(ident.to_string(), &pt.bounds);
                    }
                }
            }
        }
    }
    all.into_iter()
        .filter_map(|(param, bounds)| match bounds.as_slice() {
            [one] => Some((param, one.clone())),
            _ => None,
        })
        .collect()
}

/// A trait bound's path as a test writes it (`crate::Repo` → `app::Repo`); `None` for lifetimes,
/// `?Sized` and the auto traits a mock has anyway (`Send`, `Sync`, `Unpin`).
pub(crate) fn bound_path(bound: &syn::TypeParamBound, scope: &Scope) -> Option<String> {
    let syn::TypeParamBound::Trait(t) = bound else {
        return None;
    };
    if t.maybe.is_some() {
        return None;
    }
    let mut path = t.path.clone();
    let last = path.segments.last()?.ident.to_string();
    if matches!(last.as_str(), "Send" | "Sync" | "Unpin" | "Sized") {
        return None;
    }
    Qualify(scope).visit_path_mut(&mut path);
    Some(
        path.segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect::<Vec<_>>()
            .join("::"),
    )
}

/// The mockable trait of a parameter typed `R`, `&R`, `&mut R` (bounded) or `impl Trait`.
pub(crate) fn param_bound(
    ty: &syn::Type,
    bounds: &BTreeMap<String, String>,
    scope: &Scope,
) -> Option<String> {
    match ty {
        syn::Type::Reference(r) => param_bound(&r.elem, bounds, scope),
        syn::Type::Paren(p) => param_bound(&p.elem, bounds, scope),
        syn::Type::Path(p) => bounds.get(&p.path.get_ident()?.to_string()).cloned(),
        syn::Type::ImplTrait(i) => {
            let paths: Vec<String> = i
                .bounds
                .iter()
                .filter_map(|b| bound_path(b, scope))
                .collect();
            match paths.as_slice() {
                [one] => Some(one.clone()),
                _ => None,
            }
        }
        _ => None,
    }
}

pub(crate) fn fn_api(
    vis: &syn::Visibility,
    sig: &syn::Signature,
    outer_generics: &[String],
    outer_bounds: &BTreeMap<String, String>,
    scope: &Scope,
) -> FnApi {
    let mut generics = type_params(&sig.generics);
    let own_generics = generics.clone();
    generics.extend(outer_generics.iter().cloned());
    let mut bounds = trait_bounds(&sig.generics, scope);
    for (k, v) in outer_bounds {
        bounds.entry(k.clone()).or_insert_with(|| v.clone());
    }
    let mut has_receiver = false;
    let mut mut_receiver = false;
    let mut self_by_value = false;
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => {
                has_receiver = true;
                mut_receiver = matches!(r.kind, syn::ReceiverKind::Reference(_, _, Some(_)));
                self_by_value = !matches!(r.kind, syn::ReceiverKind::Reference(..));
            }
            syn::FnArg::Typed(pt) => {
                let name = match pt.pat.as_ref() {
                    syn::Pat::Ident(p) => p.ident.unraw().to_string(),
                    _ => "_".to_string(),
                };
                params.push(ParamApi {
                    name,
                    ty: DeclType::from_syn(&pt.ty, &generics),
                    bound: param_bound(&pt.ty, &bounds, scope),
                });
            }
        }
    }
    let ret = match &sig.output {
        syn::ReturnType::Default => DeclType::Unit,
        syn::ReturnType::Type(_, ty) => DeclType::from_syn(ty, &generics),
    };
    let ret_written = match &sig.output {
        syn::ReturnType::Default => "()".to_string(),
        syn::ReturnType::Type(_, ty) => type_source(ty),
    };
    // Every type parameter must be pinned down by an argument, or the call would not infer.
    let inferable = own_generics.iter().all(|g| {
        params
            .iter()
            .any(|p| p.ty.generic_name() == Some(g.as_str()))
    });
    let blocker = if sig.asyncness.is_some() {
        Some("async")
    } else if matches!(sig.safety, syn::Safety::Unsafe(_)) {
        Some("unsafe")
    } else if sig.variadic.is_some() || sig.abi.is_some() {
        Some("extern")
    } else if has_const_params(&sig.generics) || (ret.is_opaque() && !impl_iterator(&ret_written)) {
        Some("generic")
    } else if !inferable && params.iter().any(|p| p.ty.is_opaque()) {
        // `impl Trait` arguments forbid naming the other parameters.
        Some("generic")
    } else {
        None
    };
    let uninferable_generics = if inferable { 0 } else { own_generics.len() };
    FnApi {
        name: sig.ident.unraw().to_string(),
        ident: sig.ident.to_string(),
        public: matches!(vis, syn::Visibility::Public(_)),
        has_receiver,
        mut_receiver,
        self_by_value,
        params,
        ret,
        ret_ok_unit: written_ok_unit(&ret_written),
        ret_written,
        blocker,
        uninferable_generics,
        signature: sig.to_token_stream().to_string(),
    }
}

pub(crate) fn trait_api(t: &syn::ItemTrait, scope: &Scope) -> TraitApi {
    let mut api = TraitApi {
        name: t.ident.unraw().to_string(),
        public: matches!(t.vis, syn::Visibility::Public(_)),
        blocker: None,
        methods: Vec::new(),
    };
    if !t.generics.params.is_empty() || t.generics.where_clause.is_some() {
        api.blocker = Some("generic trait");
    }
    if t.unsafety.is_some() {
        api.blocker = Some("unsafe trait");
    }
    if t.supertraits.iter().any(unmockable_supertrait) {
        api.blocker = Some("supertrait");
    }
    for item in &t.items {
        match item {
            syn::TraitItem::Fn(f) => {
                let mut sig = f.sig.clone();
                Qualify(scope).visit_signature_mut(&mut sig);
                let has_receiver = matches!(sig.inputs.first(), Some(syn::FnArg::Receiver(_)));
                if !has_receiver || !sig.generics.params.is_empty() || sig.asyncness.is_some() {
                    api.blocker
                        .get_or_insert("method without self or generic method");
                }
                // Parameter patterns other than plain names cannot go into `mock!`.
                let plain = sig.inputs.iter().all(|input| match input {
                    syn::FnArg::Typed(pt) => matches!(pt.pat.as_ref(), syn::Pat::Ident(_)),
                    _ => true,
                });
                if !plain {
                    api.blocker.get_or_insert("pattern parameters");
                }
                let fn_info = fn_api(
                    &syn::Visibility::Inherited,
                    &sig,
                    &[],
                    &BTreeMap::new(),
                    scope,
                );
                let ret_written = match &sig.output {
                    syn::ReturnType::Default => "()".to_string(),
                    syn::ReturnType::Type(_, ty) => type_source(ty),
                };
                api.methods.push(TraitMethodApi {
                    name: fn_info.name,
                    signature: signature_source(&sig),
                    params: fn_info.params,
                    ret: fn_info.ret,
                    mut_receiver: fn_info.mut_receiver,
                    ret_written,
                    blocker: fn_info.blocker.filter(|b| matches!(*b, "unsafe" | "async")),
                });
            }
            syn::TraitItem::Type(_) | syn::TraitItem::Const(_) => {
                api.blocker.get_or_insert("associated items");
            }
            _ => {}
        }
    }
    api
}

/// `fn ask(&self, a: &dyn abc::Answerer) -> i32`, formatted by prettyplease.
pub(crate) fn signature_source(sig: &syn::Signature) -> String {
    let source = format!("trait T {{ {}; }}", sig.to_token_stream());
    let Ok(file) = syn::parse_file(&source) else {
        return type_source_tokens(sig.to_token_stream().to_string());
    };
    let text = prettyplease::unparse(&file);
    let body: Vec<&str> = text
        .lines()
        .skip(1)
        .take_while(|l| *l != "}")
        .map(str::trim)
        .collect();
    body.join(" ")
        .trim_end_matches(';')
        .replace("( ", "(")
        .replace(" )", ")")
        .replace(", )", ")")
}

pub(crate) fn type_source(ty: &syn::Type) -> String {
    type_source_tokens(ty.to_token_stream().to_string())
}

pub(crate) fn type_source_tokens(tokens: String) -> String {
    let mut out = tokens;
    for (from, to) in [
        (" :: ", "::"),
        (":: ", "::"),
        ("& ", "&"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
    ] {
        out = out.replace(from, to);
    }
    out
}

/// The trait names in `#[derive(...)]` attributes.
pub(crate) fn derives(attrs: &[syn::Attribute]) -> Vec<String> {
    let mut out = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let _ = a.parse_nested_meta(|meta| {
            if let Some(last) = meta.path.segments.last() {
                out.push(last.ident.to_string());
            }
            Ok(())
        });
    }
    out
}

/// Whether a trait's supertrait keeps a `mock!` of it from compiling: a mock implements only
/// the trait it is written for, and what mockall gives every mock (`Debug`, `Send`, `Sync`)
/// or every type has (`Sized`, `Unpin`, lifetimes). A sealed trait (`pub trait Float: Sealed`,
/// with `Sealed` private) is the common case: no type outside the crate can implement it, so
/// the call gets the value the program passed instead of a mock.
fn unmockable_supertrait(bound: &syn::TypeParamBound) -> bool {
    match bound {
        syn::TypeParamBound::Trait(t) => {
            let last = t.path.segments.last().map(|s| s.ident.to_string());
            !matches!(
                last.as_deref(),
                Some("Debug" | "Send" | "Sync" | "Sized" | "Unpin")
            )
        }
        _ => false,
    }
}
