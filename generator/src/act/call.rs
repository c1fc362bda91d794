//! How to call a recorded function: the call-form rules, tried in order by [`resolve`].
//!
//! A recorded function (its demangled path and DWARF signature) becomes a [`Target`]: a
//! [`Callable`] with the path a test writes and the signature it calls with, or the reason no
//! test can call it (private, or a form carve does not write yet). Each form is one rule:
//! free and associated functions of the crate ([`callable`], generic instances through
//! [`instance`]), methods of the crate's traits, the crate's traits on standard and foreign
//! types, standard traits on the crate's types ([`std_traits`]), `Display` as `to_string()`
//! ([`display`]). A new call form is a new rule here, with its own test in `tests/rules.rs`.

use std::path::Path;

use carve_storage::{closing_angle, FunctionInfo, Language};

use crate::act::target::{Callable, Target};
use crate::act::{display, instance, std_traits};
use crate::read::crate_api::{CrateApi, FnApi, ModuleApi, TypeApi};
use crate::read::paths::{spell_public, split_impl_block, split_top, split_trait_impl};
use crate::read::types::Prim;

pub(crate) fn resolve(api: &CrateApi, info: &FunctionInfo) -> Target {
    if info.language != Language::Rust {
        return Target::Unsupported("not Rust");
    }
    if let Some((ty, tr, method)) =
        split_trait_impl(&info.path).or_else(|| split_impl_block(&info.path))
    {
        return resolve_trait_impl(api, info, &ty, &tr, &method);
    }
    // `module::<impl Type<Args>>::method`, an inherent impl written in another module: no test
    // can call it when the type is private.
    if let Some(ty) = inherent_impl_type(&info.path) {
        let base = crate::read::types::strip_generics(&ty);
        if api.declared_type(base).is_some() && api.public_type(base).is_none() {
            return Target::Private;
        }
        if let Some(target) = method_of_impl_elsewhere(api, info, base) {
            return target;
        }
    }
    let segments = match parse_fn_path(&info.path) {
        Ok(segments) => segments,
        Err(kind) => return Target::Unsupported(kind),
    };
    let Some((krate, rest)) = segments.split_first() else {
        return Target::Unsupported("unknown function");
    };
    if krate != &api.crate_name || rest.is_empty() {
        return Target::Unsupported("other crate");
    }
    if let Some(outside) = outside_lib(api, info) {
        return outside;
    }
    let (fn_name, owners) = match rest.split_last() {
        Some(split) => split,
        None => return Target::Unsupported("unknown function"),
    };
    // A free function of module `owners`...
    if let Some((module, f)) = api
        .find_module(owners)
        .and_then(|m| Some((m, m.functions.get(fn_name)?)))
    {
        let full = format!("{}::{}", api.crate_name, rest.join("::"));
        if !(f.public && (module.reachable || api.public_path(&full).is_some())) {
            return Target::Private;
        }
        return callable(api, info, module, None, f);
    }
    // ...or an associated function of type `owners.last()`.
    if let Some((type_name, module_path)) = owners.split_last() {
        if let Some(module) = api.find_module(module_path) {
            if let Some(ty) = module.types.get(type_name) {
                if let Some(f) = ty.functions.get(fn_name) {
                    let type_path = format!("{}::{}", api.crate_name, owners.join("::"));
                    let reachable = module.reachable || api.public_path(&type_path).is_some();
                    if !(reachable && ty.public && f.public) {
                        return Target::Private;
                    }
                    return callable(api, info, module, Some(ty), f);
                }
            }
        }
    }
    if is_nested_fn(api, owners) {
        // `fn` items inside a function body: no path outside that body names them.
        return Target::Private;
    }
    // A tuple struct's constructor, which rustc emits as a function named after the type
    // (`smallvec::ConstNonNull(ptr)`): no test can call it when the type is private.
    let type_path = format!("{}::{}", api.crate_name, rest.join("::"));
    if api.declared_type(&type_path).is_some() && api.public_type(&type_path).is_none() {
        return Target::Private;
    }
    Target::Unsupported("not found in the source")
}

/// Whether the item path `owners` (below the crate) names a function, free or associated: a
/// function recorded under it (`url::Url::make_relative::extract_path_filename`) is an `fn` item
/// declared inside that function's body.
fn is_nested_fn(api: &CrateApi, owners: &[String]) -> bool {
    let Some((outer, parent)) = owners.split_last() else {
        return false;
    };
    let free = api
        .find_module(parent)
        .is_some_and(|m| m.functions.contains_key(outer));
    let associated = parent.split_last().is_some_and(|(ty, module)| {
        api.find_module(module)
            .and_then(|m| m.types.get(ty))
            .is_some_and(|t| t.functions.contains_key(outer))
    });
    free || associated
}

/// `module::<impl Type<Args>>::method` where the inherent impl is written in `module`, another
/// module than the type's (`similar::types::text_additions::<impl Change<&T>>::missing_newline`):
/// the method as the impl declares it, called by the type's own path. `None` when the impl's
/// module or the method is not in the index.
fn method_of_impl_elsewhere(api: &CrateApi, info: &FunctionInfo, base: &str) -> Option<Target> {
    let at = info.path.find("::<impl ")?;
    let impl_module: Vec<String> = split_top(&info.path[..at], "::")
        .into_iter()
        .skip(1)
        .collect();
    let inner = &info.path[at + 3..];
    let method = inner[closing_angle(inner)? + 1..].strip_prefix("::")?;
    let type_name = base.rsplit("::").next()?;
    let in_impl = api.find_module(&impl_module)?.types.get(type_name)?;
    let f = in_impl.functions.get(method)?;
    let (declared_in, _) = api.split_path(base)?;
    if !(f.public && api.public_type(base).is_some()) {
        return Some(Target::Private);
    }
    Some(callable(api, info, declared_in, Some(in_impl), f))
}

/// A source file we can see that is not part of the lib: the binary (or another crate).
fn outside_lib(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let file = info.decl_file.as_deref().map(Path::new)?;
    if !file.is_file() || api.contains_file(file) {
        return None;
    }
    let in_crate = std::fs::canonicalize(file)
        .ok()
        .zip(std::fs::canonicalize(&api.dir).ok())
        .is_some_and(|(f, d)| f.starts_with(d));
    Some(Target::Unsupported(if in_crate {
        "binary only"
    } else {
        "other crate"
    }))
}

/// `m::<impl abc::Tree<abc::Item>>::append` → `abc::Tree<abc::Item>` (legacy mangling's
/// spelling of an inherent impl).
fn inherent_impl_type(path: &str) -> Option<String> {
    let at = path.find("<impl ")?;
    let inner = &path[at + 1..];
    let end = closing_angle(inner)?;
    let ty = inner[..end].strip_prefix("impl ")?;
    (split_top(ty, " for ").len() == 1).then(|| ty.trim().to_string())
}

/// A trait method called on a type of the crate: callable as a method when both are public.
fn resolve_trait_impl(
    api: &CrateApi,
    info: &FunctionInfo,
    ty: &str,
    tr: &str,
    method: &str,
) -> Target {
    if method.contains("{{closure}}") || method.contains("{closure#") {
        return Target::Unsupported("closure");
    }
    if method.contains(['{', '<', ':']) {
        return Target::Unsupported("trait impl");
    }
    // `[T; 4]`, `&mut D`: no path of the crate, so a type another crate (or the language) owns.
    let Ok(ty_segments) = parse_fn_path(ty) else {
        return resolve_foreign_self_impl(api, info, ty, tr, method);
    };
    let trait_base = crate::read::types::strip_generics(tr);
    if ty_segments.first() != Some(&api.crate_name) {
        return resolve_foreign_self_impl(api, info, ty, tr, method);
    }
    // A trait impl on a private type (`impl<K: Hash> Hash for KeyRef<K>`) is no public API,
    // whatever the trait.
    let base = crate::read::types::strip_generics(ty);
    if api.declared_type(base).is_some() && api.public_type(base).is_none() {
        return Target::Private;
    }
    if display::is_display(trait_base) {
        if let Some(outside) = outside_lib(api, info) {
            return outside;
        }
        return display::resolve(api, info, ty);
    }
    if let Some(public_trait) = std_traits::public_path(trait_base) {
        if let Some(outside) = outside_lib(api, info) {
            return outside;
        }
        return resolve_std_trait_impl(api, info, ty, tr, public_trait, method);
    }
    if tr != trait_base {
        return Target::Unsupported("trait impl");
    }
    if let Some(outside) = outside_lib(api, info) {
        return outside;
    }
    // The type and trait come from the trace's function name: written only when the crate's
    // source declares them, and as Rust paths (`&mut D`, a blanket impl's Self, is not one).
    if !(crate::syntax::is_path(base) && crate::syntax::is_path(tr)) {
        return Target::Unsupported("trait impl on a reference or type parameter");
    }
    let (Some(_), Some(trait_api)) = (api.public_type(base), api.public_trait(tr)) else {
        return Target::Private;
    };
    let Some(m) = trait_api.methods.iter().find(|m| m.name == method) else {
        return Target::Unsupported("not found in the source");
    };
    let Some((_, module)) = ty_segments.split_first() else {
        return Target::Unsupported("trait impl");
    };
    let module = module[..module.len().saturating_sub(1)].to_vec();
    Target::Callable(Box::new(Callable {
        module,
        call_path: format!("{base}::{method}"),
        subject: m.name.clone(),
        api: FnApi {
            name: m.name.clone(),
            ident: m.name.clone(),
            public: true,
            has_receiver: true,
            mut_receiver: m.mut_receiver,
            params: m.params.clone(),
            ret: m.ret.clone(),
            ret_ok_unit: crate::read::types::written_ok_unit(&m.ret_written),
            blocker: None,
            uninferable_generics: 0,
        },
        self_type: Some(base.to_string()),
        via_trait: Some(tr.to_string()),
        display: false,
    }))
}

/// A method of one of the crate's public traits implemented by a standard or foreign type
/// (`impl FromHex for [u8; 4]`, `impl Shout for str`): called by its full path, the receiver
/// written as the first argument.
fn resolve_foreign_self_impl(
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
    if tr != trait_base
        || !crate::syntax::is_path(trait_base)
        || api.public_trait(trait_base).is_none()
    {
        return Target::Unsupported("trait impl");
    }
    let written = std_traits::std_spelling(ty);
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
        call_path: format!("<{written} as {trait_base}>::{method}{fish}"),
        subject: f.name.clone(),
        api: f,
        self_type: None,
        via_trait: None,
        display: false,
    }))
}

/// A method of a standard trait implemented by a public type of the crate, called through the
/// trait's public path (see [`std_traits`]).
fn resolve_std_trait_impl(
    api: &CrateApi,
    info: &FunctionInfo,
    ty: &str,
    tr: &str,
    public_trait: &str,
    method: &str,
) -> Target {
    let base = crate::read::types::strip_generics(ty);
    if !(crate::syntax::is_path(base) && crate::syntax::is_ident(method)) {
        return Target::Unsupported("trait impl on a reference or type parameter");
    }
    if api.public_type(base).is_none() {
        return Target::Private;
    }
    // `<shapes::Stack<T> as Default>::default` is called on the recorded instance.
    let written = if ty == base {
        ty.to_string()
    } else {
        match instance::instance_type(info, base, api) {
            Some(written) => written,
            None => return Target::Unsupported("trait impl on a generic type"),
        }
    };
    let f = match std_traits::method_api(info, method) {
        Ok(f) => f,
        Err(why) => return Target::Unsupported(why),
    };
    // `From<u64>` is written `From<_>`: the argument's recorded type picks the impl.
    let generic_args = tr.len() > crate::read::types::strip_generics(tr).len();
    let trait_written = if generic_args {
        let inner = &tr[crate::read::types::strip_generics(tr).len() + 1..tr.len() - 1];
        let n = split_top(inner, ",").len();
        format!("{public_trait}<{}>", vec!["_"; n].join(", "))
    } else {
        public_trait.to_string()
    };
    let module = parse_fn_path(base)
        .ok()
        .and_then(|segments| {
            segments
                .get(1..segments.len().saturating_sub(1))
                .map(<[String]>::to_vec)
        })
        .unwrap_or_default();
    Target::Callable(Box::new(Callable {
        module,
        call_path: format!("<{written} as {trait_written}>::{method}"),
        subject: f.name.clone(),
        api: f,
        self_type: Some(base.to_string()),
        via_trait: Some(public_trait.to_string()),
        display: false,
    }))
}

/// The type parameters a Self type names (`T` in `[T; 4]` or `&T`), in order: single-segment
/// paths that are no primitive, `str` or `String`.
fn type_params_in(ty: &syn::Type) -> Vec<String> {
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

fn callable(
    api: &CrateApi,
    info: &FunctionInfo,
    module: &ModuleApi,
    ty: Option<&TypeApi>,
    f: &FnApi,
) -> Target {
    if let Some(blocker) = f.blocker {
        return Target::Unsupported(blocker);
    }
    let mut call_path = vec![api.crate_name.clone()];
    call_path.extend(module.path.iter().cloned());
    let mut subject = String::new();
    if let Some(ty) = ty {
        call_path.push(ty.name.clone());
        subject.push_str(&ty.name);
        subject.push('_');
    }
    let self_type = ty.map(|_| {
        call_path
            .iter()
            .map(|s| s.trim_start_matches("r#"))
            .collect::<Vec<_>>()
            .join("::")
    });
    // A generic type's associated function is called on the recorded instance
    // (`Stack::<u32>::new()`; see [`instance`]); `impl<R: Repo> Service<R>` leaves to
    // inference the parameters carve fills in with mocks. A method needs no instance: its
    // receiver is rebuilt by calls that name it.
    if let (Some(ty), Some(self_type)) = (ty, &self_type) {
        if ty.generic && !f.has_receiver {
            let args = instance::recorded_args(info, self_type);
            let fish = args
                .as_deref()
                .map(|a| instance::turbofish(a, api, !ty.unmockable_generic))
                .unwrap_or_default();
            if fish.is_empty() && ty.unmockable_generic {
                return Target::Unsupported("generic instance not nameable");
            }
            if let Some(last) = call_path.last_mut() {
                last.push_str(&fish);
            }
        }
    }
    // A generic function whose arguments do not pin its type parameters down names the
    // recorded instance: `TextDiff::from_lines::<&str, &str, str>(..)`, `x.parse_as::<u8>()`.
    let mut f = f.clone();
    if f.uninferable_generics > 0 {
        match instance::fn_turbofish(&info.name, f.uninferable_generics, api) {
            Some(fish) => f.ident.push_str(&fish),
            None => return Target::Unsupported("generic instance not nameable"),
        }
    }
    call_path.push(f.ident.clone());
    subject.push_str(&f.name);
    Target::Callable(Box::new(Callable {
        module: module.path.clone(),
        call_path: call_path.join("::"),
        subject,
        api: f,
        self_type,
        via_trait: None,
        display: false,
    }))
}

/// Splits a demangled path into plain segments (`expr::parser::Parser::new`), dropping generic
/// arguments; `<T>::f` (an inherent impl in v0 mangling) becomes `T::f`.
fn parse_fn_path(path: &str) -> Result<Vec<String>, &'static str> {
    if path.contains("{{closure}}") || path.contains("{closure#") {
        return Err("closure");
    }
    if path.contains("{{") || path.contains("{shim") {
        return Err("compiler-generated");
    }
    let mut segments = Vec::new();
    let rest = if let Some(inner_and_rest) = path.strip_prefix('<') {
        let end = closing_angle(inner_and_rest).ok_or("unknown function")?;
        let inner = &inner_and_rest[..end];
        if split_top(inner, " as ").len() > 1 {
            return Err("trait impl");
        }
        segments.extend(split_top(inner, "::"));
        inner_and_rest[end + 1..].trim_start_matches("::")
    } else {
        path
    };
    segments.extend(split_top(rest, "::"));
    let cleaned: Vec<String> = segments
        .into_iter()
        .map(|s| strip_generics(&s).trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if cleaned
        .iter()
        .any(|s| s.contains(['<', '>', ' ', '&', '*', '[', '(', '{']))
    {
        return Err("unknown function");
    }
    Ok(cleaned)
}

fn strip_generics(segment: &str) -> String {
    match segment.find('<') {
        Some(i) => segment[..i].to_string(),
        None => segment.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index of a crate `calc` whose `src/lib.rs` is `lib`.
    fn calc_api(lib: &str) -> (tempfile::TempDir, CrateApi) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"calc\"\n").unwrap();
        std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
        let api = CrateApi::load(dir).unwrap();
        (tmp, api)
    }

    /// A recorded function at `path` with parameters `params` (name, type).
    fn info(path: &str, params: &[(&str, &str)]) -> FunctionInfo {
        FunctionInfo {
            id: carve_storage::FunctionId(1),
            path: path.into(),
            name: "f".into(),
            linkage_name: None,
            language: Language::Rust,
            decl_file: None,
            decl_line: None,
            low_pc: 0,
            params: params
                .iter()
                .map(|(name, ty)| carve_storage::ParamInfo {
                    name: name.to_string(),
                    type_name: ty.to_string(),
                })
                .collect(),
            return_type: None,
        }
    }

    #[test]
    fn nested_fns_are_private_and_impls_in_other_modules_are_called_by_the_type_s_path() {
        let (_tmp, api) = calc_api(
            r#"
            pub mod types {
                pub struct Change<T>(pub T);
                mod text { use super::Change; impl<T> Change<T> { pub fn tag(&self) -> u8 { 1 } fn hidden(&self) {} } }
            }
            pub struct Url;
            impl Url { pub fn relative(&self) -> u8 { fn filename() -> u8 { 0 } filename() } }
            pub fn outer() -> u8 { fn inner() -> u8 { 0 } inner() }
            "#,
        );
        let info = |path: &str| info(path, &[("self", "&calc::types::Change<u8>")]);
        for nested in ["calc::Url::relative::filename", "calc::outer::inner"] {
            assert!(
                matches!(resolve(&api, &info(nested)), Target::Private),
                "{nested}"
            );
        }
        let elsewhere = "calc::types::text::<impl calc::types::Change<T>>";
        assert!(matches!(
            resolve(&api, &info(&format!("{elsewhere}::hidden"))),
            Target::Private
        ));
        match resolve(&api, &info(&format!("{elsewhere}::tag"))) {
            Target::Callable(c) => {
                assert_eq!(c.self_type.as_deref(), Some("calc::types::Change"));
                assert!(c.api.has_receiver);
            }
            Target::Private => panic!("tag is public"),
            Target::Unsupported(why) => panic!("tag: {why}"),
        }
        // A function nobody declared is still unknown, not private.
        assert!(matches!(
            resolve(&api, &info("calc::Url::missing")),
            Target::Unsupported("not found in the source")
        ));
    }

    #[test]
    fn trait_impls_of_private_traits_and_on_private_types_are_private() {
        let (_tmp, api) = calc_api(
            r#"
            mod private { pub trait Sealed { fn write(self) -> u8; } }
            trait Unsigned { fn fmt(self) -> u8; }
            struct KeyRef<K>(K);
            struct Tree<T>(T);
            pub trait Shout { fn shout(&self) -> u8; }
            "#,
        );
        let info = |path: &str| info(path, &[]);
        for private in [
            "<u64 as calc::Unsigned>::fmt",
            "calc::<impl calc::private::Sealed for u64>::write",
            "<calc::KeyRef<K> as core::hash::Hash>::hash",
            "calc::<impl calc::Tree<u8>>::grow",
            // A private tuple struct's constructor, emitted as a function named after it.
            "calc::KeyRef<u8>",
            "calc::Tree",
        ] {
            assert!(
                matches!(resolve(&api, &info(private)), Target::Private),
                "{private}"
            );
        }
        // A public trait on a standard type stays public API.
        assert!(!matches!(
            resolve(&api, &info("<str as calc::Shout>::shout")),
            Target::Private
        ));
    }

    #[test]
    fn paths_are_respelled_as_pub_use_makes_them_public_and_only_whole() {
        let paths = vec![
            ("shop::store::Store".to_string(), "shop::Store".to_string()),
            ("shop::util::".to_string(), "shop::".to_string()),
        ];
        assert_eq!(
            spell_public(
                "let s = shop::store::Store::new(shop::util::pad(\"x\")); xshop::store::Store; shop::store::Storehouse",
                &paths
            ),
            "let s = shop::Store::new(shop::pad(\"x\")); xshop::store::Store; shop::store::Storehouse"
        );
    }

    #[test]
    fn demangled_paths_are_split_into_segments() {
        assert_eq!(
            parse_fn_path("expr::lexer::precedence").unwrap(),
            ["expr", "lexer", "precedence"]
        );
        assert_eq!(
            parse_fn_path("<expr::parser::Parser>::new").unwrap(),
            ["expr", "parser", "Parser", "new"]
        );
        assert_eq!(
            parse_fn_path("expr::Stack<T>::push").unwrap(),
            ["expr", "Stack", "push"]
        );
        assert_eq!(
            parse_fn_path("<abc::A as abc::Answerer>::answer"),
            Err("trait impl")
        );
        assert_eq!(parse_fn_path("abc::main::{{closure}}"), Err("closure"));
        assert_eq!(parse_fn_path("<abc::A"), Err("unknown function"));
        assert_eq!(parse_fn_path("<&[u8]>::len"), Err("unknown function"));
    }

    #[test]
    fn inherent_impls_in_legacy_spelling_name_their_type() {
        assert_eq!(
            inherent_impl_type("md::parse::<impl md::tree::Tree<md::parse::Item>>::append")
                .unwrap(),
            "md::tree::Tree<md::parse::Item>"
        );
        assert_eq!(
            inherent_impl_type("md::<impl core::fmt::Debug for md::A>::fmt"),
            None
        );
        assert_eq!(inherent_impl_type("md::A::new"), None);
    }
}
