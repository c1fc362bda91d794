//! Call form: a method of one of the crate's public traits implemented by a standard or foreign
//! type (`impl FromHex for [u8; 4]`, `impl Shout for str`), called by its full path with the
//! receiver written as the first argument: `<[u8; 4] as hex::FromHex>::from_hex(..)`. A generic
//! or blanket impl is called on the recorded instance.

use carve_storage::FunctionInfo;

use crate::act::call::{outside_lib, parse_fn_path, trait_impl};
use crate::act::target::{Callable, Target};
use crate::act::{instance, std_traits};
use crate::read::crate_api::CrateApi;
use crate::read::paths::spell_public;
use crate::read::types::Prim;

/// A trait impl whose Self type is no type of the crate.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let (ty, tr, method) = trait_impl(info)?;
    // `[T; 4]`, `&mut D`: no path of the crate, so a type another crate (or the language) owns.
    let own = parse_fn_path(&ty).is_ok_and(|segments| segments.first() == Some(&api.crate_name));
    (!own).then(|| resolve_foreign_self_impl(api, info, &ty, &tr, &method))
}

/// A method of one of the crate's public traits implemented by a standard or foreign type
/// (`impl FromHex for [u8; 4]`, `impl Shout for str`): called by its full path, the receiver
/// written as the first argument.
pub(crate) fn resolve_foreign_self_impl(
    api: &CrateApi,
    info: &FunctionInfo,
    ty: &str,
    tr: &str,
    method: &str,
) -> Target {
    let trait_base = crate::read::types::strip_generics(tr);
    // A private (or sealed) trait of the crate on a standard type (`impl Sealed for u64`) is no
    // public API: no test outside the crate can name it.
    if api.declared_trait(trait_base).is_some() && api.public_trait(trait_base).is_none() {
        return Target::Private;
    }
    // A std trait the crate implements for a std type, over one of its own types (`impl
    // From<BytesMut> for Vec<u8>`, `impl PartialEq<Bytes> for [u8]`): named with its
    // arguments, `<Vec<u8> as std::convert::From<bytes::BytesMut>>::from(..)`.
    let std_trait = ["core::", "alloc::", "std::"]
        .iter()
        .any(|p| trait_base.starts_with(p));
    let trait_written = if std_trait && tr != trait_base {
        match instance::test_spelling(tr, api) {
            Some(written) => written,
            None => return Target::Unsupported("trait impl"),
        }
    } else if tr != trait_base
        || !crate::syntax::is_path(trait_base)
        || api.public_trait(trait_base).is_none()
    {
        return Target::Unsupported("trait impl");
    } else {
        trait_base.to_string()
    };
    let written = instance::closures_inferred(&std_traits::std_spelling(ty));
    let Ok(self_ty) = syn::parse_str::<syn::Type>(&written) else {
        return Target::Unsupported("trait impl");
    };
    // A generic or blanket impl (`impl<T> Array for [T; 4]`, `impl<T: AsRef<[u8]>> ToHex for
    // T`) is called on the recorded instance: the impl's type parameters, in the order the
    // Self type names them, are the first template arguments of the DWARF name
    // (`encode_hex<&[u8], alloc::string::String>`), the method's own the rest.
    let params = type_params_in(&self_ty);
    let args = instance::template_args(&info.name);
    if args.len() < params.len() {
        return Target::Unsupported("trait impl on a type parameter");
    }
    let mut written = written;
    for (param, arg) in params.iter().zip(&args) {
        let Some(spelled) = instance::test_spelling(arg, api) else {
            return Target::Unsupported("trait impl on a type parameter");
        };
        written = spell_public(&written, &[(param.clone(), spelled)]);
    }
    // The method's own parameters are named only on a generic impl, where the recorded
    // instance is the point (`encode_hex::<String>` has nothing else to infer from).
    let fish = if params.is_empty() {
        String::new()
    } else {
        instance::turbofish(&args[params.len()..], api, false)
    };
    if let Some(outside) = outside_lib(api, info) {
        return outside;
    }
    let f = match std_traits::path_call_api(info, method) {
        Ok(f) => f,
        Err(why) => return Target::Unsupported(why),
    };
    Target::Callable(Box::new(Callable {
        module: Vec::new(),
        call_path: format!("<{written} as {trait_written}>::{method}{fish}"),
        subject: f.name.clone(),
        api: f,
        self_type: None,
        via_trait: None,
        display: false,
    }))
}

/// The type parameters a Self type names (`T` in `[T; 4]` or `&T`), in order: single-segment
/// paths that are no primitive, `str` or `String`.
pub(crate) fn type_params_in(ty: &syn::Type) -> Vec<String> {
    fn walk(ty: &syn::Type, out: &mut Vec<String>) {
        match ty {
            syn::Type::Reference(r) => walk(&r.elem, out),
            syn::Type::Slice(s) => walk(&s.elem, out),
            syn::Type::Array(a) => walk(&a.elem, out),
            syn::Type::Ptr(p) => walk(&p.elem, out),
            syn::Type::Tuple(t) => t.elems.iter().for_each(|e| walk(e, out)),
            syn::Type::Path(p) if p.qself.is_none() => {
                if let [one] = p.path.segments.iter().collect::<Vec<_>>().as_slice() {
                    let name = one.ident.to_string();
                    let known =
                        Prim::from_name(&name).is_some() || name == "str" || name == "String";
                    if !known && one.arguments.is_none() && !out.contains(&name) {
                        out.push(name);
                        return;
                    }
                }
                for seg in &p.path.segments {
                    if let syn::PathArguments::AngleBracketed(a) = &seg.arguments {
                        for arg in &a.args {
                            if let syn::GenericArgument::Type(t) = arg {
                                walk(t, out);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(ty, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn the_crate_s_trait_on_a_std_type_is_called_by_its_full_path() {
        let r = rulebook();
        let (rule, target) = decide(&r.api, r.function("<u32 as rulebook::Shape>::area"));
        assert_eq!(rule, "foreign_self");
        let Target::Callable(c) = target else {
            panic!("{} is not callable", "<u32 as rulebook::Shape>::area")
        };
        assert_eq!(c.call_path, "<u32 as rulebook::Shape>::area");
    }

    #[test]
    fn a_std_trait_over_a_crate_type_on_a_std_type_is_called_with_its_arguments() {
        // What a run records for `impl From<Counter> for Vec<u8>`.
        let r = rulebook();
        let mut f = r.function("<u32 as rulebook::Shape>::area").clone();
        f.path = "<alloc::vec::Vec<u8, alloc::alloc::Global> as core::convert::From<rulebook::Counter>>::from"
            .to_string();
        f.name = "from".to_string();
        f.params = vec![carve_storage::ParamInfo {
            name: "c".into(),
            type_name: "rulebook::Counter".into(),
        }];
        f.return_type = Some("alloc::vec::Vec<u8, alloc::alloc::Global>".into());
        let (rule, target) = decide(&r.api, &f);
        assert_eq!(rule, "foreign_self");
        let Target::Callable(c) = target else {
            panic!("{} is not callable", f.path)
        };
        assert_eq!(
            c.call_path,
            "<std::vec::Vec<u8> as std::convert::From<rulebook::Counter>>::from"
        );
    }
}
