//! The crate's public traits' methods on types a pool holds: `<str as
//! unicode_width::UnicodeWidthStr>::width` and `<char as unicode_width::UnicodeWidthChar>::width`
//! as the run recorded them. A test calls them through the trait's path with the receiver as
//! the first argument, drawn from the pool of its type (`unicode_width::UnicodeWidthStr::width("Zoë")`):
//! free functions to the search, with no object to hold.

use std::collections::BTreeSet;

use carve_generator::{CrateApi, TraitMethodApi};

use crate::api::{
    module_paths, param_kind, parse_signature, ret_form, Callable, Explorable, Param, Ret,
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
                    let self_ty = &path[1..path.len() - tail.len()];
                    let call = format!("{written}::{}::{}", tr.name, m.name);
                    match callable((path, call), self_ty, m) {
                        Ok(c) => out.callables.push(c),
                        Err(why) => out.left_out.push((path.clone(), why.to_string())),
                    }
                }
            }
        }
    }
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
    if m.signature.contains("Self") {
        return Err("a trait method whose signature names `Self`");
    }
    let sig = parse_signature(&m.signature).ok_or("a signature syn does not read")?;
    if !sig.generics.params.is_empty() {
        return Err("a generic trait method");
    }
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
        let (kind, pass) = param_kind(&ty).ok_or("a parameter no pool holds")?;
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
            "fn width(&self) -> Self",
            "fn width<T>(&self, t: T)",
        ] {
            assert!(
                callable((path, String::new()), "char", &method(refused)).is_err(),
                "{refused}"
            );
        }
    }
}
