//! Methods of the crate's generic types (`lru::LruCache<K, V, S>`), explored on the instance the
//! run used. The recording names the methods by the definition (`lru::LruCache<K,V,S>::get`)
//! and the receivers by the instance (`lru::LruCache<u64, alloc::string::String,
//! hashbrown::…::DefaultHashBuilder>`); a test names the instance as a caller writes it,
//! `lru::LruCache<u64, String>`: defaulted parameters left out, each kept one a type a pool
//! holds. A method's own type parameter stands for an instance's through its bound
//! (`K: Borrow<Q>`, `Q: Equivalent<K>`), so `get(&self, k: &Q)` takes a `&u64`.

use std::collections::{BTreeMap, BTreeSet};

use carve_generator::{type_arguments, CrateApi, FnApi, TypeApi};
use carve_storage::Trace;
use quote::ToTokens;
use syn::visit_mut::VisitMut;

use crate::api::{
    callable, callable_signature, param_kind, stand_in, trait_and_argument, Explorable, Pass,
    PoolKind, Seen,
};

/// A generic type as the run instantiated it (none: a type without parameters).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Instance {
    /// As a test writes it: `lru::LruCache<u64, String>`.
    pub written: String,
    /// Each type parameter kept, as the instance fills it (`K` → `u64`, `V` → `String`).
    pub args: BTreeMap<String, syn::Type>,
}

/// The recorded type of each generic type's values, by the type's path without its arguments
/// (`lru::LruCache` → `lru::LruCache<u64, alloc::string::String, …>`): the first receiver of
/// one of its methods, or the first value one returned. A type another type's method made
/// with the same arguments (`SmallVec<[i64; 4]>::into_iter` made an `IntoIter<[i64; 4]>`)
/// takes the instance its maker's instance makes (an `IntoIter<[u32; 8]>` when the
/// `SmallVec` is a `SmallVec<[u32; 8]>`): only its maker fills its slots, and the run may
/// have made it on another instance than the maker's first.
pub(crate) fn recorded_instances(trace: &Trace) -> BTreeMap<String, String> {
    let owners: BTreeMap<_, _> = trace
        .functions
        .iter()
        .filter_map(|f| {
            // `<smallvec::IntoIter<A> as core::iter::traits::iterator::Iterator>::next` is a
            // method of `smallvec::IntoIter<A>` too.
            let owner = match f.path.strip_prefix('<') {
                Some(rest) => rest.split_once(" as ")?.0,
                None => f.path.rsplit_once("::")?.0,
            };
            let base = owner.strip_suffix('>')?.split_once('<')?.0;
            Some((f.id, base.to_string()))
        })
        .collect();
    let mut out = BTreeMap::new();
    // (made, maker): the made type's base and its maker's.
    let mut follows = BTreeSet::new();
    for c in &trace.calls {
        let Some(base) = owners.get(&c.function) else {
            continue;
        };
        let receiver = (c.args.iter().find(|a| a.name == "self")).map(|a| referent_type(&a.value));
        let of_self = receiver.into_iter().chain(c.ret.iter().map(referent_type));
        for ty in of_self {
            let instance = ty
                .strip_prefix(base.as_str())
                .is_some_and(|r| r.starts_with('<'));
            if instance && !out.contains_key(base) {
                out.insert(base.clone(), ty.to_string());
            }
        }
        let made = (receiver.zip(c.ret.as_ref()))
            .filter(|(r, _)| {
                r.strip_prefix(base.as_str())
                    .is_some_and(|a| a.starts_with('<'))
            })
            .and_then(|(r, ret)| made_alike(r, referent_type(ret)));
        follows.extend(made.map(|m| (m.to_string(), base.clone())));
    }
    for (made, maker) in follows {
        let args = (out.get(&maker)).and_then(|i| i.get(maker.len()..));
        if let Some(args) = args.map(str::to_string) {
            let instance = format!("{made}{args}");
            out.insert(made, instance);
        }
    }
    out
}

/// The base of `made`, the type a method returned on `receiver` (an instance of a generic
/// type, as recorded), when it is another type with the receiver's arguments
/// (`smallvec::IntoIter` for `smallvec::IntoIter<[i64; 4]>` made by a
/// `smallvec::SmallVec<[i64; 4]>`).
pub(crate) fn made_alike<'a>(receiver: &str, made: &'a str) -> Option<&'a str> {
    let (base, args) = receiver.split_at(receiver.find('<')?);
    let made_base = made.strip_suffix(args)?;
    let plain = |p: &str| !p.is_empty() && !p.contains(['<', '>', ' ', '&', '[']);
    (made_base != base && plain(made_base)).then_some(made_base)
}

/// A recorded value's type, behind its reference: `&mut lru::LruCache<u64, …>` is
/// `lru::LruCache<u64, …>`.
pub(crate) fn referent_type(v: &carve_storage::Value) -> &str {
    v.type_name()
        .trim_start_matches('&')
        .trim_start_matches("mut ")
}

/// The instance `recorded` (a type written in full by the recording) is of `ty`, written from
/// `path` (`lru::LruCache`), each lifetime `'static` (`pulldown_cmark::Parser<'static>`: a
/// pool's text lives that long); why not, when a parameter it keeps is no type a pool holds.
/// A type whose parameters all have defaults needs no recorded instance.
pub(crate) fn instance(
    ty: &TypeApi,
    path: &str,
    recorded: Option<&str>,
) -> Result<Instance, String> {
    let given = match recorded {
        Some(recorded) => {
            let parsed: syn::Type = syn::parse_str(recorded)
                .map_err(|_| format!("its recorded type `{recorded}` was not read"))?;
            let syn::Type::Path(p) = &parsed else {
                return Err(format!("its recorded type `{recorded}` was not read"));
            };
            p.path
                .segments
                .last()
                .map(type_arguments)
                .unwrap_or_default()
                .into_iter()
                .cloned()
                .collect()
        }
        None if ty.type_params.iter().all(|p| p.defaulted) => Vec::new(),
        None => return Err("no recorded value shows its type parameters".to_string()),
    };
    let recorded = recorded.unwrap_or_default();
    let mut args = BTreeMap::new();
    let mut written = vec!["'static".to_string(); ty.lifetimes];
    for (i, param) in ty.type_params.iter().enumerate() {
        if param.defaulted {
            break;
        }
        let arg = given
            .get(i)
            .ok_or_else(|| format!("its recorded type `{recorded}` has fewer parameters"))?;
        let as_written = pooled_type(arg).ok_or_else(|| {
            format!(
                "its type parameter `{}` is `{}`, no type a pool holds",
                param.name,
                tidy(arg)
            )
        })?;
        written.push(as_written.clone());
        args.insert(
            param.name.clone(),
            syn::parse_str(&as_written).expect("a pooled type parses"),
        );
    }
    let written = if written.is_empty() {
        path.to_string()
    } else {
        format!("{path}<{}>", written.join(", "))
    };
    Ok(Instance { written, args })
}

/// A recorded type as a caller writes it, when a pool holds its values by value: `u64`,
/// `String` (recorded `alloc::string::String`), `Vec<u8>`; or an array of such values
/// (smallvec's `[u32; 8]`, whose `A::Item` is `u32`); or `str`, which a pool holds behind a
/// reference (similar's `TextDiff<'_, '_, '_, str>` takes `&str`s).
pub(crate) fn pooled_type(ty: &syn::Type) -> Option<String> {
    if let syn::Type::Array(a) = ty {
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(len),
            ..
        }) = &a.len
        else {
            return None;
        };
        let elem = pooled_type(&a.elem)?;
        return Some(format!("[{elem}; {}]", len.base10_digits()));
    }
    // An unsized instance behind the type's own references (`TextDiff<'_, '_, '_, str>`).
    if crate::api::is_named(ty, "str") {
        return Some("str".to_string());
    }
    match param_kind(ty)? {
        (PoolKind::Scalar(t), Pass::Value) => Some(t),
        (PoolKind::Str, Pass::Owned) => Some("String".to_string()),
        (PoolKind::Slice(t), Pass::Owned) => Some(format!("Vec<{t}>")),
        _ => None,
    }
}

/// Tokens as a person writes them: `app::Key<u8>`, `fn(&mut u32) -> bool` (for messages, and
/// for types the harness names).
pub(crate) fn tidy(tokens: &impl ToTokens) -> String {
    tokens
        .to_token_stream()
        .to_string()
        .replace("& mut ", "&mut ")
        .replace("& ", "&")
        .replace(" (", "(")
        .replace("( ", "(")
        .replace(" )", ")")
        .replace(" ,", ",")
        .replace(" :: ", "::")
        .replace(" < ", "<")
        .replace(" >", ">")
}

/// The method's own type parameters, each standing for an instance's through a bound
/// (`K: Borrow<Q>` or `Q: Equivalent<K>` makes `Q` what `K` is), or for a `Vec` of one
/// (`I: IntoIterator<Item = A::Item>` takes a `Vec` of the array's elements), or else as the
/// run's calls filled it (`from_lines<T: ?Sized>(old: &T, …)` called with `&str`s: `str`;
/// `recorded`, the argument types of its recorded calls); `None` when one stands for nothing.
pub(crate) fn method_args(
    sig: &syn::Signature,
    inst: &Instance,
    recorded: Option<&BTreeSet<Vec<(String, String)>>>,
) -> Option<BTreeMap<String, syn::Type>> {
    let mut out = BTreeMap::new();
    let predicates = bounds(sig);
    for p in sig.generics.type_params() {
        let name = p.ident.to_string();
        // One no parameter is typed by (`T` of `-> TextDiff<'old, 'new, T>`): the compiler
        // infers it from the others.
        if !sig.inputs.iter().any(|i| mentions(i, &name)) {
            continue;
        }
        let from_bounds = predicates.iter().find_map(|(bounded, bound)| {
            if *bounded == name {
                if let Some(item) = iterator_item(bound) {
                    let mut item = item.clone();
                    Replace(&inst.args).visit_type_mut(&mut item);
                    return Some(syn::parse_quote!(Vec<#item>));
                }
                // A closure (`F: FnMut(&mut A::Item) -> bool`) or a range.
                if let Some(mut ty) = stand_in(bound) {
                    Replace(&inst.args).visit_type_mut(&mut ty);
                    return Some(ty);
                }
            }
            let (trait_name, arg) = trait_with_one_type(bound)?;
            match trait_name.as_str() {
                // `K: Borrow<Q>`: Q is K.
                "Borrow" if arg == name => inst.args.get(bounded).cloned(),
                // `Q: Equivalent<K>` (indexmap's, hashbrown's): Q is K.
                "Equivalent" if *bounded == name => inst.args.get(&arg).cloned(),
                _ => None,
            }
        });
        let stands_for = from_bounds.or_else(|| as_the_run_filled(sig, &name, recorded?))?;
        out.insert(name, stands_for);
    }
    Some(out)
}

/// Each bound of `sig`'s type parameters, inline or in its `where` clause, with the name of
/// the one it bounds (a bound of another type: "").
fn bounds(sig: &syn::Signature) -> Vec<(String, &syn::TypeParamBound)> {
    let inline = (sig.generics.type_params())
        .flat_map(|p| p.bounds.iter().map(move |b| (p.ident.to_string(), b)));
    (sig.generics.where_clause.iter())
        .flat_map(|w| &w.predicates)
        .filter_map(|w| match w {
            syn::WherePredicate::Type(t) => Some(t),
            _ => None,
        })
        .flat_map(|t| {
            let bounded = single_ident(&t.bounded_ty).unwrap_or_default();
            t.bounds.iter().map(move |b| (bounded.clone(), b))
        })
        .chain(inline)
        .collect()
}

/// The places, among `sig`'s parameters after the receiver, of those typed by a type
/// parameter bound by `IntoIterator<Item = …>` (each [`method_args`] makes a `Vec`).
pub(crate) fn iterator_params(sig: &syn::Signature) -> Vec<usize> {
    let iterators: BTreeSet<String> = (bounds(sig).into_iter())
        .filter(|(_, b)| iterator_item(b).is_some())
        .map(|(bounded, _)| bounded)
        .collect();
    (sig.inputs.iter())
        .filter_map(|input| match input {
            syn::FnArg::Typed(pt) => Some(pt),
            syn::FnArg::Receiver(_) => None,
        })
        .enumerate()
        .filter(|(_, pt)| single_ident(&pt.ty).is_some_and(|n| iterators.contains(&n)))
        .map(|(at, _)| at)
        .collect()
}

/// Type parameter `name` as a recorded call filled it (the first of their argument types, in
/// order): the recorded type of an argument typed `name` or `&name`, when a pool holds such
/// values.
fn as_the_run_filled(
    sig: &syn::Signature,
    name: &str,
    recorded: &BTreeSet<Vec<(String, String)>>,
) -> Option<syn::Type> {
    let (arg, by_ref) = sig.inputs.iter().find_map(|input| {
        let syn::FnArg::Typed(pt) = input else {
            return None;
        };
        let (ty, by_ref) = match pt.ty.as_ref() {
            syn::Type::Reference(r) => (r.elem.as_ref(), true),
            ty => (ty, false),
        };
        let syn::Pat::Ident(p) = pt.pat.as_ref() else {
            return None;
        };
        (single_ident(ty).as_deref() == Some(name)).then(|| (p.ident.to_string(), by_ref))
    })?;
    let call = recorded.iter().next()?;
    let (_, ty) = call.iter().find(|(a, _)| *a == arg)?;
    if !by_ref && ty == "&str" {
        return Some(syn::parse_quote!(&'static str));
    }
    let ty = if by_ref { ty.strip_prefix('&')? } else { ty };
    let written = pooled_type(&syn::parse_str(ty).ok()?)?;
    syn::parse_str(&written).ok()
}

/// Whether `input`'s type names `name` anywhere.
fn mentions(input: &syn::FnArg, name: &str) -> bool {
    matches!(input, syn::FnArg::Typed(pt) if crate::api::names(&pt.ty, name))
}

fn single_ident(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
            let seg = &p.path.segments[0];
            matches!(seg.arguments, syn::PathArguments::None).then(|| seg.ident.to_string())
        }
        _ => None,
    }
}

/// `Borrow<Q>` as ("Borrow", "Q").
fn trait_with_one_type(bound: &syn::TypeParamBound) -> Option<(String, String)> {
    let (name, arg) = trait_and_argument(bound)?;
    Some((name, single_ident(arg)?))
}

/// `T` of `IntoIterator<Item = T>`.
pub(crate) fn iterator_item(bound: &syn::TypeParamBound) -> Option<&syn::Type> {
    let syn::TypeParamBound::Trait(t) = bound else {
        return None;
    };
    let seg = t.path.segments.last()?;
    let syn::PathArguments::AngleBracketed(a) = &seg.arguments else {
        return None;
    };
    if seg.ident != "IntoIterator" {
        return None;
    }
    a.args.iter().find_map(|arg| match arg {
        syn::GenericArgument::AssocType(b) if b.ident == "Item" => Some(&b.ty),
        _ => None,
    })
}

/// Replaces each type parameter it has a type for, and the `Item` of one that is an array
/// (`A::Item` with `A` = `[u32; 8]`) by the element's.
struct Replace<'a>(&'a BTreeMap<String, syn::Type>);

impl VisitMut for Replace<'_> {
    fn visit_type_mut(&mut self, ty: &mut syn::Type) {
        if let Some(t) = single_ident(ty).and_then(|n| self.0.get(&n)) {
            *ty = t.clone();
            return;
        }
        if let Some(elem) = array_item(ty, self.0) {
            *ty = elem;
            return;
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

/// `sig` with each type parameter of `args` replaced by its type, and the `Item` of one that
/// is an array (`A::Item` with `A` = `[u32; 8]`) by the element's.
pub(crate) fn instantiate(
    sig: &syn::Signature,
    args: &BTreeMap<String, syn::Type>,
) -> syn::Signature {
    let mut out = sig.clone();
    out.generics = syn::Generics::default();
    for input in &mut out.inputs {
        Replace(args).visit_fn_arg_mut(input);
    }
    Replace(args).visit_return_type_mut(&mut out.output);
    out
}

/// `A::Item` where `A` stands for an array: its element type.
fn array_item(ty: &syn::Type, args: &BTreeMap<String, syn::Type>) -> Option<syn::Type> {
    let syn::Type::Path(p) = ty else {
        return None;
    };
    let [param, item] = p.path.segments.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    if p.qself.is_some() || item.ident != "Item" {
        return None;
    }
    match args.get(&param.ident.to_string())? {
        syn::Type::Array(a) => Some((*a.elem).clone()),
        _ => None,
    }
}

/// Whether `ty`'s methods are explored here (on an instance) rather than as a plain type's: it
/// has type parameters (whether an inherent impl is generic or only trait impls are: an
/// iterator `Drain<T>` with `impl<T> Iterator for Drain<T>` alone), or lifetimes.
pub(crate) fn handles(ty: &TypeApi) -> bool {
    !ty.type_params.is_empty() || ty.lifetimes > 0
}

/// Adds the methods of generic type `ty` (in module `written`, recorded under `recorded`) that
/// the run called to `out`, on the instance the run used, or to `left_out` with the reason;
/// and the standard traits' methods the run called on it.
pub(crate) fn consider_type(
    out: &mut Explorable,
    (api, written, recorded): (&CrateApi, &str, &str),
    ty: &TypeApi,
    called: &BTreeSet<String>,
    (seen, instances): (&Seen, &BTreeMap<String, String>),
) {
    if !handles(ty) {
        return;
    }
    // The recorded paths of its methods, by method: `lru::LruCache<K,V,S>::get` under `get`;
    // those of an impl with no parameters of its own (`impl<'a> Parser<'a,
    // DefaultBrokenLinkCallback>`) are recorded without them: `pulldown_cmark::parse::Parser::new`.
    let head = format!("{recorded}::{}<", ty.name);
    let plain = format!("{recorded}::{}::", ty.name);
    let by_method: BTreeMap<&str, &String> = called
        .range(head.clone()..)
        .take_while(|p| p.starts_with(&head))
        .filter_map(|p| {
            let (params, method) = p[head.len()..].rsplit_once(">::")?;
            (!params.contains("::")).then_some((method, p))
        })
        .chain(
            called
                .range(plain.clone()..)
                .take_while(|p| p.starts_with(&plain))
                .filter_map(|p| {
                    let method = &p[plain.len()..];
                    (!method.contains("::")).then_some((method, p))
                }),
        )
        .collect();
    let reached: Vec<(&FnApi, &String)> = ty
        .functions
        .values()
        .filter_map(|f| Some((f, *by_method.get(f.name.as_str())?)))
        .collect();
    // With no method of its own reached, the standard traits' may have been (an iterator's).
    let type_path = format!("{written}::{}", ty.name);
    let inst = if !ty.public {
        Err("its type is not public".to_string())
    } else {
        let recorded_instance = instances.get(&format!("{recorded}::{}", ty.name));
        instance(ty, &type_path, recorded_instance.map(String::as_str))
    };
    if let Ok(inst) = &inst {
        crate::std_traits::std_trait_methods(
            out,
            (&inst.written, &format!("{recorded}::{}", ty.name)),
            (api, ty),
            called,
        );
    }
    for (f, path) in reached {
        let one = match &inst {
            Err(why) => Err(why.clone()),
            Ok(inst) => on_instance(out, (f, path), (ty, inst), seen).map_err(String::from),
        };
        match one {
            Ok(c) => out.callables.extend(c),
            Err(why) => out.left_out.push((path.clone(), why)),
        }
    }
}

/// The callable of method `f` (recorded as `path`) of generic type `ty` on instance `inst`,
/// and its twin that takes an iterator not telling its length where `f` takes an
/// `IntoIterator`.
fn on_instance(
    out: &mut Explorable,
    (f, path): (&FnApi, &str),
    (ty, inst): (&TypeApi, &Instance),
    seen: &Seen,
) -> Result<Vec<crate::api::Callable>, &'static str> {
    let sig = callable_signature(f, path, seen)?;
    let mut args = inst.args.clone();
    args.extend(
        method_args(&sig, inst, seen.arg_types.get(path))
            .ok_or("a type parameter of its own stands for no type parameter of the instance")?,
    );
    let filled = instantiate(&sig, &args);
    let call = format!("<{}>::{}", inst.written, f.ident);
    let owner = Some((inst.written.clone(), ty));
    let c = callable(out, (path, call), f, (&owner, &filled), &BTreeMap::new())?;
    let twin = c.unsized_twin(&iterator_params(&sig));
    Ok(std::iter::once(c).chain(twin).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::parse_signature;
    use carve_generator::TypeParamApi;

    fn lru() -> TypeApi {
        TypeApi {
            name: "LruCache".into(),
            public: true,
            generic: true,
            type_params: ["K", "V", "S"]
                .map(|n| TypeParamApi {
                    name: n.into(),
                    defaulted: n == "S",
                })
                .to_vec(),
            ..TypeApi::default()
        }
    }

    #[test]
    fn the_instance_is_written_as_a_caller_writes_it_defaults_left_out() {
        let inst = instance(
            &lru(),
            "lru::LruCache",
            Some(
                "lru::LruCache<u64, alloc::string::String, hashbrown::hasher::DefaultHashBuilder>",
            ),
        )
        .unwrap();
        assert_eq!(inst.written, "lru::LruCache<u64, String>");
        assert_eq!(inst.args.len(), 2);
        let why = instance(
            &lru(),
            "lru::LruCache",
            Some("lru::LruCache<app::Key, u8, S>"),
        )
        .unwrap_err();
        assert!(why.contains("`K` is `app::Key`"), "{why}");
    }

    #[test]
    fn lifetimes_are_static_and_a_type_whose_parameters_all_default_needs_no_recorded_instance() {
        let parser = TypeApi {
            name: "Parser".into(),
            public: true,
            generic: true,
            type_params: vec![TypeParamApi {
                name: "F".into(),
                defaulted: true,
            }],
            lifetimes: 1,
            ..TypeApi::default()
        };
        let inst = instance(&parser, "pulldown_cmark::Parser", None).unwrap();
        assert_eq!(inst.written, "pulldown_cmark::Parser<'static>");
        assert!(inst.args.is_empty());
        // A parameter without a default needs the recorded instance.
        assert!(instance(&lru(), "lru::LruCache", None).is_err());
    }

    #[test]
    fn a_methods_own_parameter_stands_for_the_one_its_bound_names() {
        let inst = instance(
            &lru(),
            "lru::LruCache",
            Some("lru::LruCache<u64, String, S>"),
        )
        .unwrap();
        let sig = parse_signature(
            "fn get<'a, Q>(&'a mut self, k: &Q) -> Option<&'a V> where K: Borrow<Q>, Q: Hash + Eq + ?Sized",
        )
        .unwrap();
        let mut args = inst.args.clone();
        args.extend(method_args(&sig, &inst, None).unwrap());
        let sig = instantiate(&sig, &args);
        let text = sig.to_token_stream().to_string();
        assert!(text.contains("k : & u64"), "{text}");
        assert!(text.contains("Option < & 'a String >"), "{text}");
        let equivalent = parse_signature(
            "fn get<Q: ?Sized + Hash + Equivalent<K>>(&self, key: &Q) -> Option<&V>",
        )
        .unwrap();
        assert!(method_args(&equivalent, &inst, None).is_some());
        // A closure bound: a function pointer of the instance's types stands in.
        let closure = parse_signature("fn map<F: Fn(&V) -> V>(&mut self, f: F)").unwrap();
        let f = method_args(&closure, &inst, None).unwrap()["F"].clone();
        assert_eq!(f.to_token_stream().to_string(), "fn (& String) -> String");
        let unbound = parse_signature("fn map<F: Hash>(&mut self, f: F)").unwrap();
        assert_eq!(method_args(&unbound, &inst, None), None);
    }

    #[test]
    fn an_array_instance_gives_its_element_for_the_parameters_item() {
        let small_vec = TypeApi {
            name: "SmallVec".into(),
            public: true,
            generic: true,
            type_params: vec![TypeParamApi {
                name: "A".into(),
                defaulted: false,
            }],
            ..TypeApi::default()
        };
        let recorded = "smallvec::SmallVec<[u32; 8]>";
        let inst = instance(&small_vec, "smallvec::SmallVec", Some(recorded)).unwrap();
        assert_eq!(inst.written, "smallvec::SmallVec<[u32; 8]>");
        let sig = parse_signature("fn push(&mut self, value: A::Item)").unwrap();
        let sig = instantiate(&sig, &inst.args);
        assert_eq!(
            sig.to_token_stream().to_string(),
            "fn push (& mut self , value : u32)"
        );
        // An iterator of elements is taken as a `Vec` of them.
        let sig = parse_signature(
            "fn insert_many<I: IntoIterator<Item = A::Item>>(&mut self, index: usize, iterable: I)",
        )
        .unwrap();
        let mut args = inst.args.clone();
        args.extend(method_args(&sig, &inst, None).expect("I stands for a Vec"));
        assert_eq!(
            instantiate(&sig, &args).to_token_stream().to_string(),
            "fn insert_many (& mut self , index : usize , iterable : Vec < u32 >)"
        );
        // ... in the second place after the receiver (a twin takes it as an iterator that
        // does not tell its length), in a `where` clause too.
        assert_eq!(iterator_params(&sig), vec![1]);
        let sig = parse_signature(
            "fn extend_at<J>(&mut self, items: J, at: usize) where J: IntoIterator<Item = u8>",
        )
        .unwrap();
        assert_eq!(iterator_params(&sig), vec![0]);
        assert!(iterator_params(&parse_signature("fn f<T: Copy>(x: T)").unwrap()).is_empty());
    }
}
