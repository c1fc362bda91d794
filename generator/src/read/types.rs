//! Types as the crate declares them and as the trace records them: what every stage asks
//! of a type (its declared shape, `DeclType`; a primitive, `Prim`; what a literal of one of
//! the crate's types may be, `TypeFacts`), without writing any value.

use serde::Serialize;

/// A parameter or return type as declared in the source, reduced to what literals need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum DeclType {
    /// `()` (also a missing `-> T`).
    Unit,
    /// `bool`, `char`, integers and floats.
    Prim(Prim),
    /// `str` (only meaningful behind a reference).
    Str,
    /// `String` (any path ending in `String` with a std prefix or none).
    String,
    /// `&T` or `&mut T`.
    Ref { mutable: bool, inner: Box<DeclType> },
    /// A type parameter of the function (`T`), inferred at the call site from the argument.
    Generic(String),
    /// `impl Trait`: fine as an argument, opaque as a return value.
    ImplTrait,
    /// Anything else (a struct, a type alias, a generic container), as written.
    Other(String),
}

/// The primitive scalar types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Prim {
    Bool,
    Char,
    I8,
    I16,
    I32,
    I64,
    I128,
    Isize,
    U8,
    U16,
    U32,
    U64,
    U128,
    Usize,
    F32,
    F64,
}

const PRIMS: [(&str, Prim); 16] = [
    ("bool", Prim::Bool),
    ("char", Prim::Char),
    ("i8", Prim::I8),
    ("i16", Prim::I16),
    ("i32", Prim::I32),
    ("i64", Prim::I64),
    ("i128", Prim::I128),
    ("isize", Prim::Isize),
    ("u8", Prim::U8),
    ("u16", Prim::U16),
    ("u32", Prim::U32),
    ("u64", Prim::U64),
    ("u128", Prim::U128),
    ("usize", Prim::Usize),
    ("f32", Prim::F32),
    ("f64", Prim::F64),
];

impl Prim {
    /// The Rust spelling, also the literal suffix.
    pub fn name(self) -> &'static str {
        PRIMS
            .iter()
            .find(|(_, p)| *p == self)
            .map_or("?", |(n, _)| n)
    }

    pub fn from_name(name: &str) -> Option<Prim> {
        PRIMS.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
    }

    /// `(min, max)` for integer types. `isize`/`usize` are taken as 64-bit (the recorder's
    /// targets).
    pub(crate) fn int_range(self) -> Option<(i128, u128)> {
        Some(match self {
            Prim::I8 => (i8::MIN.into(), i8::MAX as u128),
            Prim::I16 => (i16::MIN.into(), i16::MAX as u128),
            Prim::I32 => (i32::MIN.into(), i32::MAX as u128),
            Prim::I64 | Prim::Isize => (i64::MIN.into(), i64::MAX as u128),
            Prim::I128 => (i128::MIN, i128::MAX as u128),
            Prim::U8 => (0, u8::MAX.into()),
            Prim::U16 => (0, u16::MAX.into()),
            Prim::U32 => (0, u32::MAX.into()),
            Prim::U64 | Prim::Usize => (0, u64::MAX.into()),
            Prim::U128 => (0, u128::MAX),
            _ => return None,
        })
    }
}

impl DeclType {
    /// Reduces a `syn` type; `generics` are the function's type parameter names.
    pub fn from_syn(ty: &syn::Type, generics: &[String]) -> DeclType {
        match ty {
            syn::Type::Reference(r) => DeclType::Ref {
                mutable: r.mutability.is_some(),
                inner: Box::new(DeclType::from_syn(&r.elem, generics)),
            },
            syn::Type::Paren(p) => DeclType::from_syn(&p.elem, generics),
            syn::Type::Group(g) => DeclType::from_syn(&g.elem, generics),
            syn::Type::Tuple(t) if t.elems.is_empty() => DeclType::Unit,
            syn::Type::ImplTrait(_) => DeclType::ImplTrait,
            syn::Type::Path(p) if p.qself.is_none() => path_type(&p.path, generics),
            _ => DeclType::Other("a complex type".to_string()),
        }
    }

    /// Parses a type written as Rust source (`&'a str`, `u32`); `Other` when it does not parse.
    pub fn parse(src: &str, generics: &[String]) -> DeclType {
        match syn::parse_str::<syn::Type>(src) {
            Ok(ty) => DeclType::from_syn(&ty, generics),
            Err(_) => DeclType::Other(src.to_string()),
        }
    }

    /// The type parameter this argument type pins down (`T` or `&T`), if any.
    pub fn generic_name(&self) -> Option<&str> {
        match self {
            DeclType::Generic(name) => Some(name),
            DeclType::Ref { inner, .. } => inner.generic_name(),
            _ => None,
        }
    }

    /// True when the type mentions a type parameter or `impl Trait` anywhere we can see.
    pub fn is_opaque(&self) -> bool {
        match self {
            DeclType::ImplTrait => true,
            DeclType::Ref { inner, .. } => inner.is_opaque(),
            _ => false,
        }
    }
}

fn path_type(path: &syn::Path, generics: &[String]) -> DeclType {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let plain = path
        .segments
        .iter()
        .all(|s| matches!(s.arguments, syn::PathArguments::None));
    let written = segments.join("::");
    if !plain {
        return DeclType::Other(written);
    }
    let Some(last) = segments.last() else {
        return DeclType::Other(written);
    };
    let prefix = &segments[..segments.len() - 1];
    let std_prefix = |allowed: &[&[&str]]| {
        prefix.is_empty()
            || allowed.iter().any(|p| {
                p.len() == prefix.len() && p.iter().zip(prefix).all(|(a, b)| *a == b.as_str())
            })
    };
    if segments.len() == 1 && generics.iter().any(|g| g == last) {
        return DeclType::Generic(last.clone());
    }
    // An associated type of a type parameter or of `Self` (`A::Item`, `Self::Output`): which
    // type it is depends on the instance, so the value is written as its recorded type, as for
    // a type parameter (`v.push(3u32)` on a recorded `SmallVec<[u32; 8]>`).
    if segments.len() == 2 && (segments[0] == "Self" || generics.iter().any(|g| *g == segments[0]))
    {
        return DeclType::Generic(written);
    }
    let primitive_prefixes: &[&[&str]] = &[&["std", "primitive"], &["core", "primitive"]];
    if last == "str" && std_prefix(primitive_prefixes) {
        return DeclType::Str;
    }
    if let Some(prim) = Prim::from_name(last) {
        if std_prefix(primitive_prefixes) {
            return DeclType::Prim(prim);
        }
    }
    if last == "String" && std_prefix(&[&["std", "string"], &["alloc", "string"]]) {
        return DeclType::String;
    }
    DeclType::Other(written)
}

/// The std constructor of a path or OS string type as recorded (`&std::path::Path` →
/// `std::path::Path::new`); `None` for any other type.
pub fn os_text_constructor(ty: &str) -> Option<&'static str> {
    Some(match ty.strip_prefix('&').unwrap_or(ty) {
        "std::path::Path" => "std::path::Path::new",
        "std::path::PathBuf" => "std::path::PathBuf::from",
        "std::ffi::os_str::OsStr" => "std::ffi::OsStr::new",
        "std::ffi::os_str::OsString" => "std::ffi::OsString::from",
        _ => return None,
    })
}

/// Whether a recorded text of type `ty` equals a string literal under `==`: `String`, `str`
/// and references to them; not a path or OS string (`os_text_constructor`) or a text
/// iterator (`text_iterator_method`), which have no `PartialEq<&str>`.
pub fn equals_a_str(ty: &str) -> bool {
    let bare = ty.trim_start_matches('&').trim_start_matches("mut ");
    bare == "str" || bare == "String" || bare.ends_with("::string::String")
}

/// The method that makes an iterator recorded as the text it has left from a string literal
/// (`core::str::iter::Chars` → `.chars()`); `None` for any other type. Such a value is an
/// argument only: an iterator has no `PartialEq` to check a result with.
pub fn text_iterator_method(ty: &str) -> Option<&'static str> {
    match ty {
        "core::str::iter::Chars" => Some("chars"),
        _ => None,
    }
}

/// What a literal of one of the crate's own types needs to know about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Shape {
    /// A struct literal can be written: every field is `pub` (or there are none).
    pub fields_public: bool,
    /// `struct A;`: written without braces.
    pub unit: bool,
    /// Derives or implements `PartialEq` and `Debug`, so `assert_eq!` accepts it.
    pub comparable: bool,
    /// Derives or implements `Debug`.
    pub debug: bool,
    /// Derives `Debug`, so what `{:?}` prints follows from the value.
    pub debug_derived: bool,
}

/// Answers questions about the crate's types by their recorded path (`abc::AbcError`).
pub trait TypeFacts {
    /// `None` when a test cannot name the type (private, unknown, another crate).
    fn shape(&self, path: &str) -> Option<Shape>;

    /// Whether a type the source does not show (a macro made it: `bitflags!`) sits where a test
    /// can name it: in a reachable module of the crate.
    fn unseen_type_nameable(&self, _path: &str) -> bool {
        false
    }

    /// A value of one of the crate's types that no struct literal writes (private fields),
    /// written as the call of a constructor that makes it (`NodeIndex::<u32>::new(0usize)`);
    /// `None` where none is known.
    fn constructed(&self, _value: &carve_storage::Value) -> Option<String> {
        None
    }
}

/// The type arguments of a path segment: `u64` and `String` of `LruCache<u64, String>`,
/// lifetimes and consts aside.
pub fn type_arguments(seg: &syn::PathSegment) -> Vec<&syn::Type> {
    match &seg.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `core::result::Result<i32, abc::E>` → `core::result::Result`.
pub fn strip_generics(ty: &str) -> &str {
    ty.split('<').next().unwrap_or(ty).trim()
}

/// Whether a return type as written is `Result<(), E>` (any path to `Result`).
pub(crate) fn written_ok_unit(written: &str) -> bool {
    let written: String = written.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(args) = written.split_once('<') else {
        return false;
    };
    (args.0 == "Result" || args.0.ends_with("::Result")) && args.1.starts_with("(),")
}

/// Whether a return type written `written` (as `type_source` gives it) is an opaque
/// iterator: `impl Iterator<Item = T>`, `impl DoubleEndedIterator<..> + '_`. A test cannot
/// name its hidden type, but can collect its items.
pub(crate) fn impl_iterator(written: &str) -> bool {
    let compact: String = written.chars().filter(|c| !c.is_whitespace()).collect();
    ["Iterator<", "DoubleEndedIterator<", "ExactSizeIterator<"]
        .iter()
        .any(|t| compact.starts_with(&format!("impl{t}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_texts_that_equal_a_str_are_compared_with_a_string_literal() {
        for ty in [
            "alloc::string::String",
            "&str",
            "&mut alloc::string::String",
        ] {
            assert!(equals_a_str(ty), "{ty}");
        }
        for ty in [
            "std::path::PathBuf",
            "std::ffi::os_str::OsString",
            "core::str::iter::Chars",
        ] {
            assert!(!equals_a_str(ty), "{ty}");
        }
    }

    #[test]
    fn declared_types_are_reduced_from_syn() {
        let g = ["T".to_string()];
        assert_eq!(DeclType::parse("()", &g), DeclType::Unit);
        assert_eq!(
            DeclType::parse("std::primitive::u8", &g),
            DeclType::Prim(Prim::U8)
        );
        assert_eq!(
            DeclType::parse("alloc::string::String", &g),
            DeclType::String
        );
        assert_eq!(DeclType::parse("T", &g), DeclType::Generic("T".to_string()));
        // Associated types of a parameter or of `Self` are the instance's: written as recorded.
        assert_eq!(
            DeclType::parse("T::Item", &g),
            DeclType::Generic("T::Item".to_string())
        );
        assert_eq!(
            DeclType::parse("Self::Output", &g),
            DeclType::Generic("Self::Output".to_string())
        );
        assert_eq!(
            DeclType::parse("io::Error", &g),
            DeclType::Other("io::Error".to_string())
        );
        assert_eq!(
            DeclType::parse("Vec<u8>", &g),
            DeclType::Other("Vec".to_string())
        );
        assert_eq!(
            DeclType::parse("my::String", &g),
            DeclType::Other("my::String".to_string())
        );
        assert_eq!(DeclType::parse("impl Fn()", &g), DeclType::ImplTrait);
    }

    #[test]
    fn an_impl_iterator_return_is_told_from_other_opaque_types() {
        assert!(impl_iterator("impl Iterator<Item = Change<&T>> + '_"));
        assert!(impl_iterator("impl DoubleEndedIterator<Item=&str>"));
        assert!(!impl_iterator("impl Fn(u8) -> bool"));
        assert!(!impl_iterator("impl Display"));
        assert!(!impl_iterator("Iterator<Item = u8>"));
    }
}
