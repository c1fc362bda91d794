//! The crate's public traits' methods on types a pool holds: `<str as
//! unicode_width::UnicodeWidthStr>::width` and `<char as unicode_width::UnicodeWidthChar>::width`
//! as the run recorded them. A test calls them through the trait's path with the receiver as
//! the first argument, drawn from the pool of its type (`unicode_width::UnicodeWidthStr::width("Zoë")`):
//! free functions to the search, with no object to hold.

use std::collections::BTreeSet;

use carve_generator::{CrateApi, TraitMethodApi};

use crate::api::{
    generic_kinds, generic_param, module_paths, names, param_kind, parse_signature, ret_form,
    Callable, Explorable, Param, Ret,
};

/// Adds to `out` the methods of the crate's public traits that the run `called` on a type
/// of a pool (or leaves them out with why).
pub(crate) fn on_pooled_types(out: &mut Explorable, api: &CrateApi, called: &BTreeSet<String>) {
    for module in api.modules.values().filter(|m| m.reachable) {
        let (written, recorded) = module_paths(api, module);
        for tr in module.traits.values().filter(|t| t.public) {
            for m in &tr.methods {
                let tail = format!(" as {recorded}::{}>::{}", tr.name, m.name);
                for path in called
                    .iter()
                    .filter(|p| p.starts_with('<') && p.ends_with(&tail))
                {
                    let self_ty = written_type(&path[1..path.len() - tail.len()]);
                    // With no receiver to tell the type, the call names it.
                    let call = if m.signature.contains("self") {
                        format!("{written}::{}::{}", tr.name, m.name)
                    } else {
                        format!("<{self_ty} as {written}::{}>::{}", tr.name, m.name)
                    };
                    match callable((path, call), &self_ty, m) {
                        Ok(c) => out.callables.push(c),
                        Err(why) => out.left_out.push((path.clone(), why.to_string())),
                    }
                }
            }
        }
    }
}

/// A recorded type as a test writes it: `alloc::vec::Vec<u8>` is `Vec<u8>`.
fn written_type(recorded: &str) -> String {
    syn::parse_str::<syn::Type>(recorded)
        .ok()
        .and_then(|t| crate::generic_types::pooled_type(&t))
        .unwrap_or_else(|| recorded.to_string())
}

/// Trait method `m` on `self_ty` as a call of `call` with the receiver first.
fn callable(
    (path, call): (&str, String),
    self_ty: &str,
    m: &TraitMethodApi,
) -> Result<Callable, &'static str> {
    if let Some(why) = m.blocker {
        return Err(why);
    }
    let sig = parse_signature(&m.signature).ok_or("a signature syn does not read")?;
    // `Self` in the result is only compared through `Debug` (`from_hex`'s `Result<Self,
    // Self::Error>`); a parameter naming it is no pool's.
    if sig.inputs.iter().any(|i| match i {
        syn::FnArg::Typed(pt) => names(&pt.ty, "Self"),
        syn::FnArg::Receiver(_) => false,
    }) {
        return Err("a trait method whose parameter names `Self`");
    }
    // A type parameter bounded by what a pool stands for (`T: AsRef<[u8]>`).
    let generics = if sig.generics.params.is_empty() {
        Default::default()
    } else {
        generic_kinds(&sig.generics).ok_or("a generic trait method")?
    };
    let self_ty: syn::Type = syn::parse_str(self_ty).map_err(|_| "a type syn does not read")?;
    let mut params = Vec::new();
    for input in &sig.inputs {
        let (name, ty): (String, syn::Type) = match input {
            syn::FnArg::Receiver(r) => match &r.kind {
                syn::ReceiverKind::Reference(_, _, None) => {
                    ("self".into(), syn::parse_quote!(&#self_ty))
                }
                syn::ReceiverKind::Value => ("self".into(), self_ty.clone()),
                _ => return Err("takes self as `&mut self` or through a pointer type"),
            },
            syn::FnArg::Typed(pt) => match pt.pat.as_ref() {
                syn::Pat::Ident(p) => (p.ident.to_string(), (*pt.ty).clone()),
                _ => ("_".into(), (*pt.ty).clone()),
            },
        };
        let (kind, pass) = param_kind(&ty)
            .or_else(|| generic_param(&ty, &generics))
            .ok_or("a parameter no pool holds")?;
        params.push(Param { name, kind, pass });
    }
    let ret = match &sig.output {
        syn::ReturnType::Default => Ret::Unit,
        syn::ReturnType::Type(_, ty) => ret_form(ty),
    };
    Ok(Callable {
        path: path.to_string(),
        call,
        receiver: None,
        params,
        makes: None,
        ret,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Pass, PoolKind};
    use carve_generator::DeclType;

    fn method(signature: &str) -> TraitMethodApi {
        TraitMethodApi {
            name: "width".into(),
            signature: signature.into(),
            params: Vec::new(),
            ret: DeclType::Unit,
            mut_receiver: signature.contains("&mut self"),
            ret_written: String::new(),
            blocker: None,
        }
    }

    #[test]
    fn the_receiver_becomes_the_first_argument_from_the_pool_of_its_type() {
        let path = "<char as w::Width>::width";
        let c = callable(
            (path, "w::Width::width".into()),
            "char",
            &method("fn width(self, cjk: bool) -> Option<usize>"),
        )
        .unwrap();
        assert_eq!(c.call, "w::Width::width");
        assert!(c.receiver.is_none());
        let kinds: Vec<(&str, &PoolKind, Pass)> = c
            .params
            .iter()
            .map(|p| (p.name.as_str(), &p.kind, p.pass))
            .collect();
        assert_eq!(
            kinds,
            [
                ("self", &PoolKind::Scalar("char".into()), Pass::Value),
                ("cjk", &PoolKind::Scalar("bool".into()), Pass::Value)
            ]
        );
        let on_str = callable(
            ("<str as w::Width>::width", "w::Width::width".into()),
            "str",
            &method("fn width(&self) -> usize"),
        )
        .unwrap();
        assert_eq!(on_str.params[0].kind, PoolKind::Str);
        // What a pool cannot stand for is left out with why.
        for refused in [
            "fn width(&mut self)",
            "fn width(&self, other: Self)",
            "fn width<T>(&self, t: T)",
        ] {
            assert!(
                callable((path, String::new()), "char", &method(refused)).is_err(),
                "{refused}"
            );
        }
    }

    #[test]
    fn a_constructor_of_the_trait_is_called_on_the_type_the_run_called_it_on() {
        // hex's `<alloc::vec::Vec<u8> as hex::FromHex>::from_hex`: `Self` only in the result,
        // a type parameter bounded by what a pool stands for.
        assert_eq!(written_type("alloc::vec::Vec<u8>"), "Vec<u8>");
        assert_eq!(written_type("[u8; 4]"), "[u8; 4]");
        let from_hex = method("fn from_hex<T: AsRef<[u8]>>(hex: T) -> Result<Self, Self::Error>");
        let call = "<Vec<u8> as hex::FromHex>::from_hex".to_string();
        let path = "<alloc::vec::Vec<u8> as hex::FromHex>::from_hex";
        let c = callable((path, call), "Vec<u8>", &from_hex).unwrap();
        assert_eq!(c.params[0].kind, PoolKind::Slice("u8".into()));
        assert_eq!(c.call, "<Vec<u8> as hex::FromHex>::from_hex");
    }
}
