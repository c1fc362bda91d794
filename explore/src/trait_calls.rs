//! The crate's public traits' methods on types a pool holds: `<str as
//! unicode_width::UnicodeWidthStr>::width` and `<char as unicode_width::UnicodeWidthChar>::width`
//! as the run recorded them. A test calls them through the trait's path with the receiver as
//! the first argument, drawn from the pool of its type (`unicode_width::UnicodeWidthStr::width("Zoë")`):
//! free functions to the search, with no object to hold.

use std::collections::{BTreeMap, BTreeSet};

use carve_generator::{CrateApi, TraitMethodApi};

use crate::api::{
    generic_kinds, generic_param, module_paths, names, param_kind, parse_signature, ret_form,
    Callable, Explorable, Param, Ret,
};
use crate::operators::Declared;

/// Adds to `out` the methods of the crate's public traits that the run `called` on a type
/// of a pool (or leaves them out with why); a blanket impl's (`impl<T: AsRef<[u8]>> ToHex for
/// T`) on the type the run's function table declares its receiver (`&&[u8]`: `&[u8]`).
pub(crate) fn on_pooled_types(
    out: &mut Explorable,
    api: &CrateApi,
    (called, declared): (&BTreeSet<String>, &BTreeMap<String, Declared>),
) {
    for module in api.modules.values().filter(|m| m.reachable) {
        let (written, recorded) = module_paths(api, module);
        for tr in module.traits.values().filter(|t| t.public) {
            for m in &tr.methods {
                let tail = format!(" as {recorded}::{}>::{}", tr.name, m.name);
                for path in called
                    .iter()
                    .filter(|p| p.starts_with('<') && p.ends_with(&tail))
                {
                    let recorded_self = &path[1..path.len() - tail.len()];
                    let self_ty = match blanket_self(recorded_self, declared.get(path)) {
                        Some(ty) => ty,
                        None => written_type(recorded_self),
                    };
                    // With no receiver to tell the type, the call names it.
                    let call = if m.signature.contains("self") {
                        format!("{written}::{}::{}", tr.name, m.name)
                    } else {
                        format!("<{self_ty} as {written}::{}>::{}", tr.name, m.name)
                    };
                    let ret = declared.get(path).and_then(|d| d.1.as_deref());
                    match callables((path, call), (&self_ty, ret), m) {
                        Ok(cs) => out.callables.extend(cs),
                        Err(why) => out.left_out.push((path.clone(), why.to_string())),
                    }
                }
            }
        }
    }
}

/// The type a blanket impl's method was called on (its `Self` recorded as the impl's parameter,
/// `<T as hex::ToHex>::encode_hex`): the declared receiver's referent, `&&[u8]` giving `&[u8]`.
fn blanket_self(recorded: &str, declared: Option<&Declared>) -> Option<String> {
    let is_param = recorded.len() <= 2 && recorded.chars().all(|c| c.is_ascii_uppercase());
    let receiver = declared?.0.first().filter(|_| is_param)?;
    let referent = receiver.strip_prefix('&')?.trim_start_matches("mut ");
    Some(written_type(referent))
}

/// The callables of trait method `m` on `self_ty`: one, or, when a type parameter stands only
/// for the collection its result is collected into (`fn encode_hex<T: FromIterator<char>>(&self)
/// -> T`), one into the collection the run used (`ret`, `alloc::string::String`) and one into
/// [`COLLECTED`], which records what the iterator said of its length besides the items: a
/// `size_hint` a `String` never shows.
fn callables(
    (path, call): (&str, String),
    (self_ty, ret): (&str, Option<&str>),
    m: &TraitMethodApi,
) -> Result<Vec<Callable>, &'static str> {
    let sig = parse_signature(&m.signature).ok_or("a signature syn does not read")?;
    let Some((param, item)) = collection_param(&sig) else {
        return callable((path, call), self_ty, m).map(|c| vec![c]);
    };
    let recorded = ret.map(written_type).ok_or("a generic trait method")?;
    let mut out = Vec::new();
    for collection in [recorded, format!("Collected<{item}>")] {
        let ty: syn::Type = syn::parse_str(&collection).map_err(|_| "a type syn does not read")?;
        let args = BTreeMap::from([(param.clone(), ty)]);
        let sig = crate::generic_types::instantiate(&sig, &args);
        let one = TraitMethodApi {
            signature: quote::quote!(#sig).to_string(),
            ..m.clone()
        };
        let call = format!("{call}::<{collection}>");
        out.push(callable((path, call), self_ty, &one)?);
    }
    Ok(out)
}

/// The type parameter of `sig` that only its result names, bounded by `FromIterator<X>` alone
/// (the caller picks the collection), and `X` as written; `None` when `sig` has another.
fn collection_param(sig: &syn::Signature) -> Option<(String, String)> {
    let [syn::GenericParam::Type(t)] = &sig.generics.params.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let [syn::TypeParamBound::Trait(bound)] = &t.bounds.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let last = bound.path.segments.last()?;
    if last.ident != "FromIterator" || sig.generics.where_clause.is_some() {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let [syn::GenericArgument::Type(item)] = &args.args.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let only_result = sig.inputs.iter().all(|i| match i {
        syn::FnArg::Typed(pt) => !names(&pt.ty, &t.ident.to_string()),
        syn::FnArg::Receiver(_) => true,
    });
    only_result.then(|| (t.ident.to_string(), quote::quote!(#item).to_string()))
}

/// What a call collecting into [`COLLECTED`] writes (`encode_hex::<Collected<char>>`).
pub const INTO_COLLECTED: &str = "::<Collected<";

/// A collection that keeps what the iterator said of its length (`size_hint`) besides its
/// items, for a result the caller picks the collection of; the harness and a test file that
/// uses it define it.
pub const COLLECTED: &str = r#"/// What a collection sees of an iterator: the length it announced, then its items.
struct Collected<T> {
    size_hint: (usize, Option<usize>),
    items: Vec<T>,
}

impl<T> std::iter::FromIterator<T> for Collected<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let size_hint = iter.size_hint();
        Collected { size_hint, items: iter.collect() }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Collected<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collected")
            .field("size_hint", &self.size_hint)
            .field("items", &self.items)
            .finish()
    }
}
"#;

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

    #[test]
    fn a_collection_the_caller_picks_is_the_runs_and_one_that_shows_the_size_hint() {
        // hex's `ToHex::encode_hex`, by a blanket impl on `T: AsRef<[u8]>`: recorded as
        // `<T as hex::ToHex>::encode_hex` with a `self` of `&&[u8]`.
        let declared: Declared = (vec!["&&[u8]".into()], Some("alloc::string::String".into()));
        assert_eq!(blanket_self("T", Some(&declared)).as_deref(), Some("&[u8]"));
        assert_eq!(blanket_self("str", Some(&declared)), None);
        let m = method("fn encode_hex<T: iter::FromIterator<char>>(&self) -> T");
        let path = "<T as hex::ToHex>::encode_hex";
        let cs = callables(
            (path, "hex::ToHex::encode_hex".into()),
            ("&[u8]", Some("alloc::string::String")),
            &m,
        )
        .unwrap();
        let calls: Vec<&str> = cs.iter().map(|c| c.call.as_str()).collect();
        assert_eq!(
            calls,
            [
                "hex::ToHex::encode_hex::<String>",
                "hex::ToHex::encode_hex::<Collected<char>>"
            ]
        );
        assert_eq!(
            (cs[0].ret.clone(), cs[1].ret.clone()),
            (Ret::Text, Ret::Other)
        );
        assert!(!cs[0].into_collected() && cs[1].into_collected());
        // The receiver, a pooled slice behind one more reference.
        assert_eq!(cs[1].params[0].kind, PoolKind::Slice("u8".into()));
        assert_eq!(cs[1].params[0].pass, Pass::Ref);
        // A type parameter an argument names too is no collection the caller picks.
        let sig = parse_signature("fn f<T: FromIterator<char>>(&self, t: T) -> T").unwrap();
        assert_eq!(collection_param(&sig), None);
    }
}
