//! What the call-form rules (`act/rules/`) share: the [`Callable`] for a function of the crate
//! (with the generic instance it was recorded on), a demangled path split into segments, the
//! parts of a trait impl's path, and whether a function is declared outside the library.

use std::path::Path;

use carve_storage::{closing_angle, FunctionInfo};

use crate::act::instance;
use crate::act::target::{Callable, Target};
use crate::read::crate_api::{CrateApi, FnApi, ModuleApi, TypeApi};
use crate::read::paths::{split_impl_block, split_top, split_trait_impl};

/// A source file we can see that is not part of the lib: the binary (or another crate).
pub(crate) fn outside_lib(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let recorded = info.decl_file.as_deref().map(Path::new)?;
    let file = api.local_file(recorded);
    if !file.is_file() || api.contains_file(recorded) {
        return None;
    }
    let in_crate = std::fs::canonicalize(&file)
        .ok()
        .zip(std::fs::canonicalize(&api.dir).ok())
        .is_some_and(|(f, d)| f.starts_with(d));
    Some(Target::Unsupported(if in_crate {
        "binary only"
    } else {
        "other crate"
    }))
}

pub(crate) fn callable(
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

/// `(type, trait, method)` of a trait impl's method path, in either spelling:
/// `<abc::B as abc::Asker>::ask` or legacy `m::<impl abc::Asker for abc::B>::ask`.
pub(crate) fn trait_impl(info: &FunctionInfo) -> Option<(String, String, String)> {
    split_trait_impl(&info.path).or_else(|| split_impl_block(&info.path))
}

/// Splits a demangled path into plain segments (`expr::parser::Parser::new`), dropping generic
/// arguments; `<T>::f` (an inherent impl in v0 mangling) becomes `T::f`.
pub(crate) fn parse_fn_path(path: &str) -> Result<Vec<String>, &'static str> {
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
    use crate::act::rules::impl_elsewhere::inherent_impl_type;
    use crate::act::rules::resolve;
    use crate::read::paths::spell_public;
    use carve_storage::Language;

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
