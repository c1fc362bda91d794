//! The functions a crate's source declares, read with syn from its root files (`src/lib.rs`,
//! `src/main.rs`) through its `mod` declarations, as `cargo mutants` finds them: a function no
//! test calls is often in no test binary at all (rustc compiles into a binary only what it
//! can reach), so the recording cannot list it, yet it is the least tested of all. Each comes
//! with the values carve would force it to return, written as source writes them (the same
//! values and spellings `carve_recorder::Program::extremes` gives from DWARF), worked out from
//! the return type as written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::spanned::Spanned;

/// A function as its source declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceFunction {
    /// `krate::module::Type::name`, `<krate::module::Type as Trait>::name` (the trait as
    /// written), `krate::module::Trait::name` for a trait's provided method.
    pub path: String,
    pub file: PathBuf,
    /// From its first attribute to the end of its signature: where DWARF declares it.
    pub lines: (u32, u32),
    /// The values carve would force it to return, or why there are none.
    pub values: Result<Vec<String>, String>,
    /// Why a test binary may run it without having code of its own for it, when it may: a
    /// `const fn` may run only at compile time, an `#[inline(always)]` function is inlined into
    /// its callers even in a debug build. No breakpoint can stop either.
    pub no_code: Option<String>,
}

/// Every function of the crate named `krate` whose root file is `root`, but for tests
/// (`#[test]` functions and `#[cfg(test)]`, `tests` and `test` modules). A file that cannot be
/// read or parsed is left out, with the functions of its modules.
pub fn source_functions(krate: &str, root: &Path) -> Vec<SourceFunction> {
    let mut walk = Walk::default();
    let dir = root.parent().map(Path::to_path_buf).unwrap_or_default();
    if let Some(file) = parse(root) {
        // Every fieldless enum first: a function may return one declared further down.
        walk.enums_in(&file.items, root, &dir);
        walk.items(&file.items, krate, root, &dir);
    }
    walk.functions
        .into_iter()
        .map(|(path, file, lines, ret, no_code)| {
            let values = match &ret {
                None => Ok(vec!["()".to_string()]),
                Some(ty) => values_of(ty, &walk.enums, 0),
            };
            SourceFunction {
                path,
                file,
                lines,
                values,
                no_code,
            }
        })
        .collect()
}

/// A function found: its path, file, lines, return type (`None` for `()`) and why it may run
/// with no code of its own ([`SourceFunction::no_code`]).
type Found = (
    String,
    PathBuf,
    (u32, u32),
    Option<syn::Type>,
    Option<String>,
);

/// [`SourceFunction::no_code`] for a function with these attributes and signature.
fn no_code(attrs: &[syn::Attribute], sig: &syn::Signature) -> Option<String> {
    let always = attrs.iter().any(|a| {
        a.path().is_ident("inline")
            && matches!(&a.meta, syn::Meta::List(l) if l.tokens.to_string() == "always")
    });
    if always {
        Some("#[inline(always)]: inlined into its callers, even in a debug build, so no breakpoint can stop it".into())
    } else if sig.constness.is_some() {
        Some("a const fn no test binary has code for: it runs at compile time only, where carve cannot transform it".into())
    } else {
        None
    }
}

#[derive(Default)]
struct Walk {
    functions: Vec<Found>,
    /// Fieldless enums by name: their variants.
    enums: BTreeMap<String, Vec<String>>,
}

fn parse(file: &Path) -> Option<syn::File> {
    let text = std::fs::read_to_string(file).ok()?;
    syn::parse_file(&text).ok()
}

/// `#[test]`, `#[tokio::test]`, `#[cfg(test)]`...
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let path = a.path();
        if path.segments.last().is_some_and(|s| s.ident == "test") {
            return true;
        }
        match &a.meta {
            syn::Meta::List(l) if path.is_ident("cfg") => l.tokens.to_string() == "test",
            _ => false,
        }
    })
}

/// The file `#[path = "..."]` names, if any.
fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Where the files of the modules declared in `file` live: beside it for a `mod.rs`,
/// `lib.rs` or `main.rs`, else in a directory named after it.
fn child_dir(file: &Path) -> PathBuf {
    let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
    match file.file_stem().and_then(|s| s.to_str()) {
        Some("mod" | "lib" | "main") | None => dir,
        Some(stem) => dir.join(stem),
    }
}

/// The file of `mod name;` declared with `attrs`, its modules' files in `dir`.
fn module_file(name: &str, attrs: &[syn::Attribute], file: &Path, dir: &Path) -> Option<PathBuf> {
    if let Some(p) = path_attr(attrs) {
        let base = file.parent().unwrap_or(Path::new("."));
        return Some(base.join(p));
    }
    [
        dir.join(format!("{name}.rs")),
        dir.join(name).join("mod.rs"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

fn lines(first: impl Spanned, last: impl Spanned) -> (u32, u32) {
    (
        first.span().start().line as u32,
        last.span().end().line as u32,
    )
}

/// The lines of a function from its first attribute (or its signature) to the end of its
/// signature.
fn fn_lines(attrs: &[syn::Attribute], sig: &syn::Signature) -> (u32, u32) {
    match attrs.first() {
        Some(a) => lines(a, sig),
        None => lines(sig, sig),
    }
}

fn ret(sig: &syn::Signature) -> Option<syn::Type> {
    match &sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, ty) => Some((**ty).clone()),
    }
}

impl Walk {
    fn enums_in(&mut self, items: &[syn::Item], file: &Path, dir: &Path) {
        for item in items {
            match item {
                syn::Item::Enum(e)
                    if !e.variants.is_empty()
                        && e.variants
                            .iter()
                            .all(|v| matches!(v.fields, syn::Fields::Unit)) =>
                {
                    self.enums.insert(
                        e.ident.to_string(),
                        e.variants.iter().map(|v| v.ident.to_string()).collect(),
                    );
                }
                syn::Item::Mod(m) if !is_test(&m.attrs) => match &m.content {
                    Some((_, items)) => self.enums_in(items, file, &dir.join(m.ident.to_string())),
                    None => {
                        let name = m.ident.to_string();
                        if let Some(f) = module_file(&name, &m.attrs, file, dir) {
                            if let Some(parsed) = parse(&f) {
                                self.enums_in(&parsed.items, &f, &child_dir(&f));
                            }
                        }
                    }
                },
                _ => {}
            }
        }
    }

    fn items(&mut self, items: &[syn::Item], prefix: &str, file: &Path, dir: &Path) {
        for item in items {
            match item {
                syn::Item::Fn(f) if !is_test(&f.attrs) => {
                    self.functions.push((
                        format!("{prefix}::{}", f.sig.ident),
                        file.to_path_buf(),
                        fn_lines(&f.attrs, &f.sig),
                        ret(&f.sig),
                        no_code(&f.attrs, &f.sig),
                    ));
                }
                syn::Item::Impl(i) if !is_test(&i.attrs) => {
                    let ty = type_text(&i.self_ty);
                    let owner = match &i.trait_ {
                        Some((tr, _)) => {
                            format!("<{prefix}::{ty} as {}>", type_text(tr))
                        }
                        None => format!("{prefix}::{ty}"),
                    };
                    for it in &i.items {
                        if let syn::ImplItem::Fn(f) = it {
                            if is_test(&f.attrs) {
                                continue;
                            }
                            // `Self` is the impl's type.
                            let ret = ret(&f.sig).map(|t| match &t {
                                syn::Type::Path(p)
                                    if p.qself.is_none() && p.path.is_ident("Self") =>
                                {
                                    (*i.self_ty).clone()
                                }
                                _ => t,
                            });
                            self.functions.push((
                                format!("{owner}::{}", f.sig.ident),
                                file.to_path_buf(),
                                fn_lines(&f.attrs, &f.sig),
                                ret,
                                no_code(&f.attrs, &f.sig),
                            ));
                        }
                    }
                }
                syn::Item::Trait(t) if !is_test(&t.attrs) => {
                    for it in &t.items {
                        if let syn::TraitItem::Fn(f) = it {
                            if f.default.is_some() && !is_test(&f.attrs) {
                                self.functions.push((
                                    format!("{prefix}::{}::{}", t.ident, f.sig.ident),
                                    file.to_path_buf(),
                                    fn_lines(&f.attrs, &f.sig),
                                    ret(&f.sig),
                                    no_code(&f.attrs, &f.sig),
                                ));
                            }
                        }
                    }
                }
                syn::Item::Mod(m) => {
                    let name = m.ident.to_string();
                    if is_test(&m.attrs) || name == "tests" || name == "test" {
                        continue;
                    }
                    let inner = format!("{prefix}::{name}");
                    match &m.content {
                        Some((_, items)) => self.items(items, &inner, file, &dir.join(&name)),
                        None => {
                            if let Some(f) = module_file(&name, &m.attrs, file, dir) {
                                if let Some(parsed) = parse(&f) {
                                    self.items(&parsed.items, &inner, &f, &child_dir(&f));
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// Tokens as source writes them (`Vec < u8 >` → `Vec<u8>`).
fn type_text(t: &impl ToTokens) -> String {
    let mut s = t.to_token_stream().to_string();
    for (from, to) in [
        (" :: ", "::"),
        (":: ", "::"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        ("& ", "&"),
        ("[ ", "["),
        (" ]", "]"),
        (" ;", ";"),
        ("( ", "("),
        (" )", ")"),
    ] {
        s = s.replace(from, to);
    }
    s
}

fn cannot(ty: &syn::Type) -> Result<Vec<String>, String> {
    Err(format!(
        "no value of {} can be built without its allocator or drop glue (carve forces only \
         (), bool, numbers, fieldless enums, empty strings, vectors and slices, and Option and \
         Result of those)",
        type_text(ty)
    ))
}

/// The values of `ty` as `carve_recorder`'s `forced::extremes` gives them for the type it
/// names, from its syntax (a type alias is not followed, but for `fmt::Result` and the
/// `Result<T>` aliases that keep `T` first).
fn values_of(
    ty: &syn::Type,
    enums: &BTreeMap<String, Vec<String>>,
    depth: u32,
) -> Result<Vec<String>, String> {
    if depth > 2 {
        return cannot(ty);
    }
    match ty {
        syn::Type::Tuple(t) if t.elems.is_empty() => Ok(vec!["()".into()]),
        syn::Type::Paren(p) => values_of(&p.elem, enums, depth),
        syn::Type::Group(g) => values_of(&g.elem, enums, depth),
        syn::Type::Reference(r) => match &*r.elem {
            syn::Type::Path(p) if p.path.is_ident("str") => Ok(vec!["\"\"".into()]),
            syn::Type::Slice(_) => Ok(vec!["&[]".into()]),
            _ => cannot(ty),
        },
        syn::Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else {
                return cannot(ty);
            };
            let name = last.ident.to_string();
            let args = carve_generator::type_arguments(last);
            let written = type_text(&p.path);
            Ok(match name.as_str() {
                "bool" => vec!["true".into(), "false".into()],
                "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64"
                | "i128" | "isize" => vec!["0".into(), "1".into()],
                "f32" | "f64" => vec!["0.0".into(), "1.0".into()],
                "String" => vec!["String::new()".into()],
                "Vec" => vec!["vec![]".into()],
                "Option" => {
                    let mut all = vec!["None".to_string()];
                    if let Some(inner) = args.first() {
                        if let Ok(inner) = values_of(inner, enums, depth + 1) {
                            all.extend(inner.into_iter().map(|v| format!("Some({v})")));
                        }
                    }
                    all
                }
                "Result" => {
                    let ok = match args.first() {
                        Some(inner) => values_of(inner, enums, depth + 1),
                        None if written.ends_with("fmt::Result") => Ok(vec!["()".into()]),
                        None => return cannot(ty),
                    };
                    ok.map_err(|reason| format!("{reason} (the Ok value of {written})"))?
                        .into_iter()
                        .map(|v| format!("Ok({v})"))
                        .collect()
                }
                "Ordering" if written.contains("atomic") => {
                    ["Relaxed", "Release", "Acquire", "AcqRel", "SeqCst"]
                        .iter()
                        .map(|v| format!("Ordering::{v}"))
                        .collect()
                }
                "Ordering" if !enums.contains_key("Ordering") => ["Less", "Equal", "Greater"]
                    .iter()
                    .map(|v| format!("Ordering::{v}"))
                    .collect(),
                _ => match enums.get(&name) {
                    Some(variants) if args.is_empty() => {
                        variants.iter().map(|v| format!("{name}::{v}")).collect()
                    }
                    _ => return cannot(ty),
                },
            })
        }
        _ => cannot(ty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(ty: &str) -> Result<Vec<String>, String> {
        let ty: syn::Type = syn::parse_str(ty).unwrap();
        let mut enums = BTreeMap::new();
        enums.insert(
            "Unit".to_string(),
            vec!["Byte".to_string(), "Kilo".to_string()],
        );
        values_of(&ty, &enums, 0)
    }

    #[test]
    fn the_values_of_a_return_type_are_those_carve_forces_from_dwarf() {
        assert_eq!(values("u32").unwrap(), ["0", "1"]);
        assert_eq!(
            values("Option<bool>").unwrap(),
            ["None", "Some(true)", "Some(false)"]
        );
        assert_eq!(values("io::Result<()>").unwrap(), ["Ok(())"]);
        assert_eq!(values("fmt::Result").unwrap(), ["Ok(())"]);
        assert_eq!(values("&'a str").unwrap(), ["\"\""]);
        assert_eq!(values("&[u8]").unwrap(), ["&[]"]);
        assert_eq!(
            values("std::cmp::Ordering").unwrap(),
            ["Ordering::Less", "Ordering::Equal", "Ordering::Greater"]
        );
        assert_eq!(values("Unit").unwrap(), ["Unit::Byte", "Unit::Kilo"]);
        let why = values("Box<Wallet>").unwrap_err();
        assert!(
            why.starts_with("no value of Box<Wallet> can be built"),
            "{why}"
        );
        let why = values("Result<Wallet, E>").unwrap_err();
        assert!(
            why.ends_with("(the Ok value of Result<Wallet, E>)"),
            "{why}"
        );
    }

    #[test]
    fn functions_are_found_through_mod_declarations_and_tests_are_left_out() {
        let tmp = std::env::temp_dir().join(format!("carve-sources-{}", std::process::id()));
        std::fs::create_dir_all(tmp.join("src/shapes")).unwrap();
        std::fs::write(
            tmp.join("src/lib.rs"),
            "mod shapes;\npub fn area() -> u32 { 1 }\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n",
        )
        .unwrap();
        std::fs::write(
            tmp.join("src/shapes.rs"),
            "mod round;\npub struct Square;\nimpl Square {\n    #[inline]\n    pub fn side(&self)\n        -> f64 { 1.0 }\n}\nimpl std::fmt::Display for Square {\n    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { Ok(()) }\n}\n",
        )
        .unwrap();
        std::fs::write(
            tmp.join("src/shapes/round.rs"),
            "pub fn pi() -> Box<f64> { Box::new(3.0) }\n",
        )
        .unwrap();
        let found = source_functions("geo", &tmp.join("src/lib.rs"));
        let paths: Vec<(&str, (u32, u32))> =
            found.iter().map(|f| (f.path.as_str(), f.lines)).collect();
        assert_eq!(
            paths,
            [
                ("geo::shapes::round::pi", (1, 1)),
                ("geo::shapes::Square::side", (4, 6)),
                ("<geo::shapes::Square as std::fmt::Display>::fmt", (9, 9)),
                ("geo::area", (2, 2)),
            ]
        );
        assert_eq!(found[1].values, Ok(vec!["0.0".into(), "1.0".into()]));
        assert_eq!(found[2].values, Ok(vec!["Ok(())".into()]));
        assert!(found[0].values.is_err());
        assert_eq!(found[3].no_code, None);
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
