//! Call form: an associated function or a trait method of a generic type, called on the
//! instance the recording knows.
//!
//! Real crates are made of generic containers (`IndexMap<K, V, S>`, `SmallVec<A>`,
//! `LruCache<K, V, S>`). A recorded call names the generic impl (`indexmap::map::IndexMap<K,V>::new`),
//! but DWARF gives every recorded value its concrete type
//! (`indexmap::map::IndexMap<alloc::string::String, usize, std::hash::random::RandomState>`), so the
//! test can name the instance: `indexmap::map::IndexMap::<String, usize,
//! std::collections::hash_map::RandomState>::new()` or `<shapes::Stack<u32> as
//! std::default::Default>::default()`. A type argument a test cannot name (a private type, a
//! closure, a type of another crate) is written `_` and left to inference, which the impl
//! usually pins down; when it does not, per-test compile repair takes the test out with the
//! compiler's message.

use carve_storage::{closing_angle, FunctionInfo};

use crate::act::std_traits::std_spelling;
use crate::read::crate_api::CrateApi;
use crate::read::paths::split_top;
use crate::read::types::{strip_generics, TypeFacts};

/// The recorded type arguments of generic type `type_path` (`shapes::Stack`, without
/// arguments) in this function instance: from its receiver, its other parameters, or its
/// return type (`fn new() -> Self`, `-> Option<Self>`), whichever names the type first.
pub fn recorded_args(info: &FunctionInfo, type_path: &str) -> Option<Vec<String>> {
    info.params
        .iter()
        .map(|p| p.type_name.as_str())
        .chain(info.return_type.as_deref())
        .find_map(|ty| args_of(ty, type_path))
}

/// The type arguments of the first mention of `type_path<...>` in type name `ty`.
fn args_of(ty: &str, type_path: &str) -> Option<Vec<String>> {
    let mut from = 0;
    while let Some(at) = ty[from..].find(type_path).map(|i| i + from) {
        let before = ty[..at].chars().last();
        let after = &ty[at + type_path.len()..];
        from = at + type_path.len();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let Some(inner) = after.strip_prefix('<') else {
            continue;
        };
        let end = closing_angle(inner)?;
        return Some(split_args(&inner[..end]));
    }
    None
}

/// The template arguments DWARF names a generic function's instance with
/// (`encode_hex<&[u8], alloc::string::String>`): the impl's type parameters first, then the
/// function's own. Empty for a function that is not generic.
pub fn template_args(dwarf_name: &str) -> Vec<String> {
    dwarf_name
        .find('<')
        .and_then(|open| dwarf_name[open + 1..].strip_suffix('>'))
        .map(split_args)
        .unwrap_or_default()
}

/// `A, B<C, D>, (E, F)` → its top-level arguments, trimmed.
fn split_args(inner: &str) -> Vec<String> {
    split_top(inner, ",")
        .into_iter()
        .map(|a| a.trim().to_string())
        .collect()
}

/// `ty` with each closure type in it (`app::main::{closure_env#0}`, with any generic arguments)
/// written `_`: no test can name a closure's type, and the value given in its place pins it
/// down (`std::iter::Map<std::ops::Range<u32>, _>` for a `(1..5).map(|x| ..)` receiver).
pub(crate) fn closures_inferred(ty: &str) -> String {
    const ENV: &str = "{closure_env#";
    let mut out = String::with_capacity(ty.len());
    let mut rest = ty;
    while let Some(at) = rest.find(ENV) {
        // Back to where the closure's path starts.
        let head = &rest[..at];
        let start = head
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .map_or(0, |i| i + 1);
        out.push_str(&head[..start]);
        out.push('_');
        let after = &rest[at..];
        let Some(close) = after.find('}') else {
            return ty.to_string();
        };
        let mut tail = &after[close + 1..];
        if let Some(inner) = tail.strip_prefix('<') {
            match closing_angle(inner) {
                Some(end) => tail = &inner[end + 1..],
                None => return ty.to_string(),
            }
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// A recorded (DWARF) type name as a test outside the crate writes it, or `None` when a test
/// cannot name it: a private type of the crate, a closure, a type of another crate.
pub fn test_spelling(ty: &str, facts: &dyn TypeFacts) -> Option<String> {
    let written = std_spelling(ty);
    let parsed = syn::parse_str::<syn::Type>(&written).ok()?;
    nameable(&parsed, facts).then_some(written)
}

fn nameable(ty: &syn::Type, api: &dyn TypeFacts) -> bool {
    match ty {
        syn::Type::Reference(r) => nameable(&r.elem, api),
        syn::Type::Slice(s) => nameable(&s.elem, api),
        syn::Type::Array(a) => nameable(&a.elem, api),
        syn::Type::Tuple(t) => t.elems.iter().all(|e| nameable(e, api)),
        syn::Type::Ptr(p) => nameable(&p.elem, api),
        syn::Type::Path(p) if p.qself.is_none() => {
            let segments: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let arguments_nameable = p.path.segments.iter().all(|s| match &s.arguments {
                syn::PathArguments::None => true,
                syn::PathArguments::AngleBracketed(a) => a.args.iter().all(|arg| match arg {
                    syn::GenericArgument::Type(t) => nameable(t, api),
                    syn::GenericArgument::Lifetime(_) | syn::GenericArgument::Const(_) => true,
                    _ => false,
                }),
                syn::PathArguments::Parenthesized(_) => false,
            });
            let head_nameable = match segments.as_slice() {
                [one] => {
                    crate::read::types::Prim::from_name(one).is_some()
                        || matches!(one.as_str(), "str" | "String")
                }
                [first, ..] if first == "std" => true,
                // A public type of the crate (no other crate's type has a shape).
                _ => api.shape(&segments.join("::")).is_some(),
            };
            head_nameable && arguments_nameable
        }
        _ => false,
    }
}

/// `::<u32, _>`, the turbofish naming recorded instance `args`; each argument a test cannot
/// name is `_`, and so is each of the crate's own types when `mocked` (a type parameter that
/// carve fills with a mock). Empty when every argument is `_`: the call infers them all.
pub fn turbofish(args: &[String], api: &CrateApi, mocked: bool) -> String {
    let written: Vec<String> = args
        .iter()
        .map(|a| {
            // A const generic's value (`ArrayString<11>`): nothing infers it from the call.
            if is_const_value(a) {
                // A negative value is an expression: braced.
                return if a.starts_with('-') {
                    format!("{{ {a} }}")
                } else {
                    a.clone()
                };
            }
            let own_type = a.starts_with(&format!("{}::", api.crate_name));
            match test_spelling(a, api) {
                Some(t) if !(mocked && own_type) => t,
                _ => "_".to_string(),
            }
        })
        .collect();
    if written.iter().all(|w| w == "_") {
        String::new()
    } else {
        format!("::<{}>", written.join(", "))
    }
}

/// Whether a recorded generic argument is a const generic's value as DWARF names it: an
/// integer (`11`, `-3`), `true` or `false`.
fn is_const_value(arg: &str) -> bool {
    let digits = arg.strip_prefix('-').unwrap_or(arg);
    (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()))
        || matches!(arg, "true" | "false")
}

/// `::<&str, &str, str>`: the turbofish naming a generic function's own `own` type parameters
/// as recorded. DWARF names an instance `from_lines<&str, &str, str>`: the impl's type
/// parameters first, then the function's own, so its own are the last `own`. `None` when the
/// name gives fewer, or when no argument can be named.
pub fn fn_turbofish(dwarf_name: &str, own: usize, api: &CrateApi) -> Option<String> {
    let args = template_args(dwarf_name);
    let mine = args.get(args.len().checked_sub(own)?..)?;
    let fish = turbofish(mine, api, false);
    (!fish.is_empty()).then_some(fish)
}

/// `shapes::Stack<u32>`: the instance of generic type `type_path` a trait method was recorded
/// on, for `<Type<Args> as Trait>::method`; arguments a test cannot name are `_`.
pub fn instance_type(info: &FunctionInfo, type_path: &str, api: &CrateApi) -> Option<String> {
    let args = recorded_args(info, strip_generics(type_path))?;
    let fish = turbofish(&args, api, false);
    let angled = fish.strip_prefix("::").unwrap_or("");
    let fallback = format!("<{}>", vec!["_"; args.len()].join(", "));
    Some(format!(
        "{}{}",
        strip_generics(type_path),
        if angled.is_empty() { &fallback } else { angled }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::act::std_traits::tests::info;

    #[test]
    fn a_closure_s_type_is_left_to_inference() {
        assert_eq!(
            closures_inferred("std::iter::Map<std::ops::Range<u32>, app::main::{closure_env#0}>"),
            "std::iter::Map<std::ops::Range<u32>, _>"
        );
        assert_eq!(
            closures_inferred("(a::{closure_env#1}<u8, b::C<u8>>, a::f::{closure_env#0})"),
            "(_, _)"
        );
        assert_eq!(closures_inferred("u32"), "u32");
    }

    #[test]
    fn the_instance_comes_from_the_receiver_or_the_return_type() {
        let ctor = info(
            &[("n", "usize")],
            Some("shapes::Buckets<alloc::string::String, std::hash::random::RandomState>"),
        );
        assert_eq!(
            recorded_args(&ctor, "shapes::Buckets").unwrap(),
            ["alloc::string::String", "std::hash::random::RandomState"]
        );
        let method = info(
            &[("self", "&mut shapes::Stack<(u8, [i32; 2])>"), ("x", "u8")],
            Some("core::option::Option<u8>"),
        );
        assert_eq!(
            recorded_args(&method, "shapes::Stack").unwrap(),
            ["(u8, [i32; 2])"]
        );
        let wrapped = info(&[], Some("core::option::Option<shapes::Stack<u32>>"));
        assert_eq!(recorded_args(&wrapped, "shapes::Stack").unwrap(), ["u32"]);
        // `shapes::StackX` is another type; no mention at all is `None`.
        let other = info(&[], Some("shapes::StackX<u32>"));
        assert_eq!(recorded_args(&other, "shapes::Stack"), None);
    }

    #[test]
    fn a_const_generic_s_recorded_value_is_written_as_it_is() {
        // `ArrayString<const CAP: usize>` parsed from a string: nothing in the call says CAP.
        let mut api = CrateApi::default();
        api.crate_name = "arrayvec".into();
        let parse = info(
            &[("s", "&str")],
            Some("core::result::Result<arrayvec::array_string::ArrayString<11>, arrayvec::errors::CapacityError<()>>"),
        );
        assert_eq!(
            instance_type(&parse, "arrayvec::array_string::ArrayString", &api).unwrap(),
            "arrayvec::array_string::ArrayString<11>"
        );
        assert_eq!(
            turbofish(&["i32".into(), "-2".into(), "true".into()], &api, false),
            "::<i32, { -2 }, true>"
        );
    }

    #[test]
    fn a_generic_functions_own_parameters_are_the_last_of_its_dwarf_name() {
        let mut api = CrateApi::default();
        api.crate_name = "shapes".into();
        assert_eq!(
            fn_turbofish("from_lines<&str, &str, str>", 3, &api).unwrap(),
            "::<&str, &str, str>"
        );
        // `get<K, V, S, Q>` on `impl<K, V, S> Cache<K, V, S>`: the function's own is `Q`.
        assert_eq!(
            fn_turbofish("get<u64, alloc::string::String, m::H, (u8, u16)>", 1, &api).unwrap(),
            "::<(u8, u16)>"
        );
        assert_eq!(fn_turbofish("make", 1, &api), None);
        // A closure type cannot be named.
        assert_eq!(fn_turbofish("run<{closure_env#0}>", 1, &api), None);
    }
}
