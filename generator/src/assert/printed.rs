//! How the text `{:?}` printed for a value becomes the literal a test compares it with: the
//! kind of a value verification observes (`verify/observe.rs`), chosen from its declared type
//! when the observation rules write the probe (`assert/getters.rs`, `rules/display.rs`,
//! `rules/debug.rs`), and named in the probe's tag.

use crate::read::types::Prim;
use crate::syntax;

/// Whether `ty` is a path ending in `name` with no generic arguments (`str`, `String`).
fn is_named(ty: &syn::Type, name: &str) -> bool {
    let syn::Type::Path(p) = ty else {
        return false;
    };
    let last = p.path.segments.last();
    last.is_some_and(|s| s.ident == name && s.arguments.is_empty())
}

/// How the text `{:?}` printed for a value becomes a literal it is compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An integer of this type: `3` → `3u32`.
    Int(Prim),
    /// A float of this type: `0.5` → `0.5f64` (not NaN or infinite).
    Float(Prim),
    Bool,
    Char,
    /// `&str` or `String`: `"a"` → `"a"` (a `String` equals a `&str`).
    Str,
    /// `Option` of a kind above but `Str` of a `String`: `None`, `Some(3u32)`.
    Opt(Box<Kind>),
    /// Anything else with a `Debug`: its text compared, `format!("{:?}", ACTUAL)`.
    Debug,
}

impl Kind {
    /// The kind a value of the type written `written` (a getter's return type) is observed as,
    /// `None` when it cannot be printed or compared (`debug`: whether a type the kinds do not
    /// name implements `Debug`).
    pub(crate) fn of(written: &str, debug: &dyn Fn(&syn::Type) -> bool) -> Option<Kind> {
        let ty = syn::parse_str::<syn::Type>(written).ok()?;
        Kind::of_type(&ty, debug)
    }

    fn of_type(ty: &syn::Type, debug: &dyn Fn(&syn::Type) -> bool) -> Option<Kind> {
        let as_text = || debug(ty).then_some(Kind::Debug);
        let syn::Type::Path(path) = ty else {
            return match ty {
                syn::Type::Reference(r) if is_named(&r.elem, "str") => Some(Kind::Str),
                // `&u32` is not compared with `3u32`: as text.
                syn::Type::Reference(r) => Kind::of_type(&r.elem, debug).map(|_| Kind::Debug),
                syn::Type::Paren(p) => Kind::of_type(&p.elem, debug),
                _ => as_text(),
            };
        };
        let last = path.path.segments.last()?;
        let name = last.ident.to_string();
        if let Some(prim) = Prim::from_name(&name) {
            return Some(match prim {
                Prim::F32 | Prim::F64 => Kind::Float(prim),
                Prim::Bool => Kind::Bool,
                Prim::Char => Kind::Char,
                _ => Kind::Int(prim),
            });
        }
        if name == "String" {
            return Some(Kind::Str);
        }
        let inner = crate::read::types::type_arguments(last).into_iter().next();
        match (name.as_str(), inner) {
            ("Option", Some(inner)) if !is_named(inner, "String") => {
                match Kind::of_type(inner, debug)? {
                    Kind::Debug | Kind::Opt(_) => Some(Kind::Debug),
                    kind => Some(Kind::Opt(Box::new(kind))),
                }
            }
            _ => as_text(),
        }
    }

    /// As a probe's tag writes it (`int:u32`, `opt:str`).
    pub(crate) fn name(&self) -> String {
        match self {
            Kind::Int(p) => format!("int:{}", p.name()),
            Kind::Float(p) => format!("float:{}", p.name()),
            Kind::Bool => "bool".into(),
            Kind::Char => "char".into(),
            Kind::Str => "str".into(),
            Kind::Opt(k) => format!("opt:{}", k.name()),
            Kind::Debug => "debug".into(),
        }
    }

    /// [`Kind::name`] read back.
    pub(crate) fn parse(name: &str) -> Option<Kind> {
        if let Some(inner) = name.strip_prefix("opt:") {
            return Some(Kind::Opt(Box::new(Kind::parse(inner)?)));
        }
        let prim = |n: &str| Prim::from_name(n);
        Some(match name.split_once(':') {
            Some(("int", p)) => Kind::Int(prim(p)?),
            Some(("float", p)) => Kind::Float(prim(p)?),
            _ => match name {
                "bool" => Kind::Bool,
                "char" => Kind::Char,
                "str" => Kind::Str,
                "debug" => Kind::Debug,
                _ => return None,
            },
        })
    }

    /// The literal a value that printed `printed` with `{:?}` equals; `None` when the text is
    /// not what a value of this kind prints (or not one a literal can equal: NaN).
    pub(crate) fn expected(&self, printed: &str) -> Option<String> {
        Some(match self {
            Kind::Int(p) => {
                let digits = printed.strip_prefix('-').unwrap_or(printed);
                let ok = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
                (ok && printed.parse::<i128>().is_ok()).then(|| format!("{printed}{}", p.name()))?
            }
            Kind::Float(p) => {
                let finite = printed.parse::<f64>().ok()?.is_finite();
                let plain = printed
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b"-.e".contains(&b));
                (finite && plain).then(|| format!("{printed}{}", p.name()))?
            }
            Kind::Bool => match printed {
                "true" | "false" => printed.to_string(),
                _ => return None,
            },
            Kind::Char => syntax::char_lit(syn::parse_str::<syn::LitChar>(printed).ok()?.value()),
            Kind::Str => syntax::str_lit(&syn::parse_str::<syn::LitStr>(printed).ok()?.value()),
            Kind::Opt(inner) => match printed {
                "None" => "None".to_string(),
                _ => {
                    let inside = printed.strip_prefix("Some(")?.strip_suffix(')')?;
                    format!("Some({})", inner.expected(inside)?)
                }
            },
            Kind::Debug => syntax::str_lit(printed),
        })
    }

    /// The check a probe of `actual` becomes once the value printed `printed`.
    pub(crate) fn assertion(&self, actual: &str, printed: &str) -> Option<String> {
        let expected = self.expected(printed)?;
        Some(match (self, expected.as_str()) {
            (Kind::Bool, "true") => format!("assert!({actual});"),
            (Kind::Bool, _) => format!("assert!(!{actual});"),
            (Kind::Debug, _) => format!("assert_eq!(format!(\"{{:?}}\", {actual}), {expected});"),
            _ => format!("assert_eq!({actual}, {expected});"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_debug(_: &syn::Type) -> bool {
        false
    }

    #[test]
    fn a_declared_type_gives_the_kind_its_printed_value_is_read_as() {
        let kind = |src: &str| Kind::of(src, &no_debug).map(|k| k.name());
        assert_eq!(kind("u32").as_deref(), Some("int:u32"));
        assert_eq!(kind("&'a str").as_deref(), Some("str"));
        assert_eq!(kind("String").as_deref(), Some("str"));
        assert_eq!(kind("Option<usize>").as_deref(), Some("opt:int:usize"));
        assert_eq!(kind("Option<&'a str>").as_deref(), Some("opt:str"));
        assert_eq!(kind("Option<String>"), None);
        assert_eq!(
            Kind::of("Option<String>", &|_| true)
                .map(|k| k.name())
                .as_deref(),
            Some("debug")
        );
        assert_eq!(kind("Node<'a>"), None);
        assert_eq!(kind("()"), None);
        for k in [
            "int:u32",
            "opt:str",
            "opt:int:i8",
            "debug",
            "float:f64",
            "char",
        ] {
            assert_eq!(Kind::parse(k).map(|k| k.name()).as_deref(), Some(k));
        }
    }

    #[test]
    fn what_a_value_printed_becomes_the_literal_it_equals() {
        let expected = |k: &str, printed: &str| Kind::parse(k).unwrap().expected(printed);
        assert_eq!(expected("int:u32", "7").as_deref(), Some("7u32"));
        assert_eq!(expected("int:i64", "-7").as_deref(), Some("-7i64"));
        assert_eq!(expected("int:u32", "0x7"), None);
        assert_eq!(expected("float:f64", "0.5").as_deref(), Some("0.5f64"));
        assert_eq!(expected("float:f64", "NaN"), None);
        assert_eq!(expected("str", "\"a\\\"b\"").as_deref(), Some("\"a\\\"b\""));
        assert_eq!(
            expected("opt:str", "Some(\"x\")").as_deref(),
            Some("Some(\"x\")")
        );
        assert_eq!(expected("opt:int:u8", "None").as_deref(), Some("None"));
        assert_eq!(expected("char", "'\\''").as_deref(), Some("'\\''"));
        assert_eq!(
            expected("debug", "Node { id: 1 }").as_deref(),
            Some("\"Node { id: 1 }\"")
        );
    }
}
