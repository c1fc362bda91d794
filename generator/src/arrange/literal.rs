//! Recorded values to Rust literals, written for the type the function declares.
//!
//! The declared type (from the crate's source) decides the spelling: a recorded string is
//! `"abc"` for a `&str` parameter and `String::from("abc")` for a `String` one, an integer gets
//! the suffix of the declared width. Where the declaration says nothing usable (a type parameter,
//! `impl Trait`, a type alias) the value's own recorded type is used instead.

use crate::reasons::NOT_RUST_SYNTAX;
use crate::reasons::UNDECODED;
use crate::reasons::UNSUPPORTED_TYPE;
use carve_storage::{Field, Value};

use crate::read::types::{
    os_text_constructor, strip_generics, text_iterator_method, DeclType, Prim, TypeFacts,
};
use crate::syntax::{self, char_lit, str_lit, Refused};

/// Why a value could not be written as a literal of its declared type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiteralError {
    /// The value is not an exact scalar or string (a struct, a truncated string, unreadable...).
    Undecoded,
    /// The declared type takes no literal carve can write, or the value does not fit it.
    UnsupportedType(String),
    /// A name in the trace that is not Rust syntax where the literal needs it (a damaged or
    /// hostile trace): never written.
    Refused(Refused),
}

impl From<Refused> for LiteralError {
    fn from(r: Refused) -> LiteralError {
        LiteralError::Refused(r)
    }
}

/// Where a literal goes: into a call, or into the right-hand side of `assert_eq!`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    Arg,
    Expected,
}

/// A path or OS string recorded as its text (`&std::path::Path`, `PathBuf`, `&OsStr`,
/// `OsString`), written as the std constructor a user writes: `std::path::Path::new("a/b")`.
/// `None` when the value is no such text or the declared type takes another kind of value.
fn os_text(value: &Value, decl: &DeclType) -> Option<Result<String, LiteralError>> {
    let Value::Str {
        ty,
        value: text,
        truncated,
    } = value
    else {
        return None;
    };
    if let Some(method) = text_iterator_method(ty) {
        let fits = matches!(decl, DeclType::Generic(_) | DeclType::ImplTrait)
            || matches!(decl, DeclType::Other(d) if d == ty);
        return Some(match (fits, truncated) {
            (false, _) => Err(mismatch(value, decl)),
            (true, true) => Err(LiteralError::Undecoded),
            (true, false) => Ok(format!("{}.{method}()", str_lit(text))),
        });
    }
    let ctor = os_text_constructor(ty)?;
    let fits = match decl {
        DeclType::Other(_) | DeclType::Generic(_) | DeclType::ImplTrait => true,
        DeclType::Ref { inner, .. } => matches!(**inner, DeclType::Other(_)),
        _ => false,
    };
    Some(match (fits, truncated) {
        (false, _) => Err(mismatch(value, decl)),
        (true, true) => Err(LiteralError::Undecoded),
        (true, false) => Ok(format!("{ctor}({})", str_lit(text))),
    })
}

/// The type a value says it has, for parameters whose declaration does not tell.
fn recorded_type(value: &Value) -> Result<DeclType, LiteralError> {
    if let Value::Str { ty, .. } = value {
        if text_iterator_method(ty).is_some()
            || os_text(value, &DeclType::Other(ty.clone())).is_some()
        {
            return Ok(DeclType::Other(ty.clone()));
        }
    }
    Ok(match value {
        Value::Unit => DeclType::Unit,
        Value::Bool { .. } => DeclType::Prim(Prim::Bool),
        Value::Char { .. } => DeclType::Prim(Prim::Char),
        Value::Int { ty, .. } | Value::Uint { ty, .. } | Value::Float { ty, .. } => {
            match Prim::from_name(ty) {
                Some(p) => DeclType::Prim(p),
                None => return Err(LiteralError::UnsupportedType(ty.clone())),
            }
        }
        Value::Str { ty, .. } => {
            let t = ty.trim();
            if t.ends_with("String") {
                DeclType::String
            } else if t == "&str" || t.starts_with("&'") && t.ends_with(" str") || t == "str" {
                DeclType::Ref {
                    mutable: false,
                    inner: Box::new(DeclType::Str),
                }
            } else {
                return Err(LiteralError::UnsupportedType(ty.clone()));
            }
        }
        Value::Ref { target, .. } => DeclType::Ref {
            mutable: false,
            inner: Box::new(recorded_type(target)?),
        },
        _ => return Err(LiteralError::Undecoded),
    })
}

/// Writes `value` as a Rust expression of type `decl` (for `Position::Expected`: an expression
/// `assert_eq!` can compare a value of type `decl` with).
pub fn render(value: &Value, decl: &DeclType, pos: Position) -> Result<String, LiteralError> {
    if pos == Position::Expected && text_iterator_method(value.type_name()).is_some() {
        return Err(LiteralError::UnsupportedType(value.type_name().to_string()));
    }
    if let Some(expr) = os_text(value, decl) {
        return expr;
    }
    if let Value::Ref { ty, target, .. } = value {
        return match decl {
            DeclType::Ref { mutable, inner } => render_behind_ref(target, *mutable, inner, pos),
            // A plain reference (not a `Box` or other smart pointer) fixes `T = &U`.
            DeclType::Generic(_) | DeclType::ImplTrait if ty.starts_with('&') => {
                render(value, &recorded_type(value)?, pos)
            }
            _ => Err(mismatch(value, decl)),
        };
    }
    if !value.is_scalar_or_string() {
        return Err(LiteralError::Undecoded);
    }
    match decl {
        DeclType::Unit => match value {
            Value::Unit => Ok("()".to_string()),
            _ => Err(mismatch(value, decl)),
        },
        DeclType::Prim(p) => render_prim(value, *p),
        DeclType::String => match (value, pos) {
            (Value::Str { value: s, .. }, Position::Arg) => {
                Ok(format!("String::from({})", str_lit(s)))
            }
            (Value::Str { value: s, .. }, Position::Expected) => Ok(str_lit(s)),
            _ => Err(mismatch(value, decl)),
        },
        // The recorder may give a reference parameter as its (scalar) target directly.
        DeclType::Ref { mutable, inner } => render_behind_ref(value, *mutable, inner, pos),
        DeclType::Str => Err(LiteralError::UnsupportedType("str".to_string())),
        DeclType::Generic(_) | DeclType::ImplTrait => render(value, &recorded_type(value)?, pos),
        // A newtype or foreign type that happens to be recorded as a scalar: no literal fits.
        DeclType::Other(_) => Err(mismatch(value, decl)),
    }
}

/// Writes any exactly recorded value by its recorded type: scalars and strings as [`render`]
/// does, and `Ok(..)`, `Some(..)`, the crate's enums and structs (full paths), tuples, `vec![..]`,
/// `Box::new(..)`. With `compare`, every type of the crate inside must be comparable with
/// `assert_eq!`. Trait objects are never literals.
pub fn render_value(
    value: &Value,
    compare: bool,
    facts: &dyn TypeFacts,
) -> Result<String, LiteralError> {
    if value.is_scalar_or_string() {
        if compare && text_iterator_method(value.type_name()).is_some() {
            return Err(LiteralError::UnsupportedType(value.type_name().to_string()));
        }
        return render(value, &recorded_type(value)?, Position::Arg);
    }
    let list = |values: &mut dyn Iterator<Item = &Value>| -> Result<Vec<String>, LiteralError> {
        values.map(|v| render_value(v, compare, facts)).collect()
    };
    // An iterator is an argument only: no `PartialEq` checks a result with it.
    if !compare {
        if let Some(written) = std_iterator(value, facts) {
            return written;
        }
    }
    match value {
        Value::Enum {
            ty,
            variant,
            fields,
        } => {
            let base = strip_generics(ty);
            // `==` on a `Result<u32, E>` needs `E: PartialEq` even when the value is an `Ok`.
            if compare {
                if let Some(t) = mentioned_types(ty).find(|t| !known_comparable(t, facts)) {
                    return Err(LiteralError::UnsupportedType(t.to_string()));
                }
            }
            let args = list(&mut fields.iter().map(|f| &f.value))?;
            let std_variant = match base {
                "core::option::Option" | "std::option::Option" => {
                    matches!(variant.as_str(), "Some" | "None")
                }
                "core::result::Result" | "std::result::Result" => {
                    matches!(variant.as_str(), "Ok" | "Err")
                }
                _ => false,
            };
            // A standard enum a test names by its public path (`a.cmp(&b)`'s result).
            let std_enum = match base {
                "core::cmp::Ordering" => Some("std::cmp::Ordering"),
                _ => None,
            };
            let path = if std_variant {
                variant.clone()
            } else if let Some(std_enum) = std_enum {
                format!("{std_enum}::{}", syntax::ident(variant)?)
            } else {
                let shape = facts
                    .shape(base)
                    .ok_or_else(|| LiteralError::UnsupportedType(base.to_string()))?;
                if compare && !shape.comparable {
                    return Err(LiteralError::UnsupportedType(base.to_string()));
                }
                format!("{base}::{}", syntax::ident(variant)?)
            };
            compose(&path, fields, &args, true)
        }
        Value::Struct { ty, fields } => {
            // Types whose representation is private but whose constructor is known.
            if let Some(written) =
                std_value(ty, fields).or_else(|| bitflags_value(ty, fields, facts))
            {
                return Ok(written);
            }
            let base = strip_generics(ty);
            let shape = facts
                .shape(base)
                .ok_or_else(|| LiteralError::UnsupportedType(base.to_string()))?;
            if !shape.fields_public || (compare && !shape.comparable) {
                return Err(LiteralError::UnsupportedType(base.to_string()));
            }
            let args = list(&mut fields.iter().map(|f| &f.value))?;
            compose(base, fields, &args, shape.unit)
        }
        Value::Tuple { elems, .. } => {
            let args = list(&mut elems.iter())?;
            Ok(match args.len() {
                1 => format!("({},)", args[0]),
                _ => format!("({})", args.join(", ")),
            })
        }
        Value::Seq {
            ty,
            elems,
            truncated: false,
        } => {
            let args = list(&mut elems.iter())?;
            render_seq(ty, &args)
        }
        Value::Ref { ty, target, .. } => {
            if ty.contains("dyn ") {
                return Err(LiteralError::UnsupportedType(ty.clone()));
            }
            if ty.starts_with("alloc::boxed::Box") {
                return Ok(format!(
                    "Box::new({})",
                    render_value(target, compare, facts)?
                ));
            }
            if let Some(rest) = ty.strip_prefix('&') {
                if let Value::Str {
                    ty: str_ty,
                    value: s,
                    ..
                } = target.as_ref()
                {
                    // `&String` is not `&str` inside an `Option` or a tuple, where `==` needs
                    // the exact type.
                    if str_ty.ends_with("String") && !rest.starts_with("mut") {
                        return Ok(format!("&String::from({})", str_lit(s)));
                    }
                    if !rest.starts_with("mut") {
                        return Ok(str_lit(s));
                    }
                }
                let amp = if rest.starts_with("mut ") {
                    "&mut "
                } else {
                    "&"
                };
                let inner = render_value(target, compare, facts)?;
                // `&1..4` would be `(&1)..4`.
                let is_range = matches!(target.as_ref(), Value::Struct { ty, .. }
                    if strip_generics(ty).starts_with("core::ops::range::"));
                return Ok(if is_range {
                    format!("{amp}({inner})")
                } else {
                    format!("{amp}{inner}")
                });
            }
            Err(LiteralError::UnsupportedType(ty.clone()))
        }
        _ => Err(LiteralError::Undecoded),
    }
}

/// Standard-library values whose representation is private, written through the public
/// constructor that makes them: `NonZero<usize>` (recorded as its niche-carrying inner integer)
/// is `std::num::NonZero::<usize>::new(8).unwrap()`, `Duration` is `Duration::new(secs, nanos)`.
fn std_value(ty: &str, fields: &[Field]) -> Option<String> {
    // The integer inside however many newtype layers the standard library wraps it in.
    fn innermost(v: &Value) -> Option<&Value> {
        match v {
            Value::Int { .. } | Value::Uint { .. } => Some(v),
            Value::Struct { fields, .. } if fields.len() == 1 => innermost(&fields[0].value),
            _ => None,
        }
    }
    let base = strip_generics(ty);
    let int_of = |v: &Value| -> Option<String> {
        let int = innermost(v)?;
        let prim = match int {
            Value::Int { ty, .. } | Value::Uint { ty, .. } => Prim::from_name(ty)?,
            _ => return None,
        };
        render_prim(int, prim).ok()
    };
    let nonzero = ["core::num::nonzero::NonZero", "std::num::NonZero"]
        .iter()
        .any(|p| base.starts_with(p));
    if nonzero {
        let [field] = fields else { return None };
        let int = innermost(&field.value)?;
        let (Value::Int { ty: prim, .. } | Value::Uint { ty: prim, .. }) = int else {
            return None;
        };
        let lit = int_of(int)?;
        return Some(format!("std::num::NonZero::<{prim}>::new({lit}).unwrap()"));
    }
    let field = |name: &str| fields.iter().find(|f| f.name == name).map(|f| &f.value);
    match base {
        "core::ops::range::Range" => {
            return Some(format!(
                "{}..{}",
                int_of(field("start")?)?,
                int_of(field("end")?)?
            ));
        }
        "core::ops::range::RangeFrom" => return Some(format!("{}..", int_of(field("start")?)?)),
        "core::ops::range::RangeTo" => return Some(format!("..{}", int_of(field("end")?)?)),
        // An exhausted `RangeInclusive` has no literal.
        "core::ops::range::RangeInclusive" => {
            if !matches!(field("exhausted")?, Value::Bool { value: false }) {
                return None;
            }
            return Some(format!(
                "{}..={}",
                int_of(field("start")?)?,
                int_of(field("end")?)?
            ));
        }
        _ => {}
    }
    if matches!(base, "core::time::Duration" | "std::time::Duration") {
        let (secs, nanos) = (int_of(field("secs")?)?, int_of(field("nanos")?)?);
        return Some(format!("std::time::Duration::new({secs}, {nanos})"));
    }
    None
}

/// A standard iterator over values the recording holds whole, written the way a program makes
/// it: a slice iterator (recorded as the elements it has left) as `[a, b].iter()`, the
/// `copied()`/`cloned()` adapters over one, and a string split at a `char` that has not started
/// (`"a b".split(' ')`). `None` for any other value.
fn std_iterator(value: &Value, facts: &dyn TypeFacts) -> Option<Result<String, LiteralError>> {
    let field = |fields: &[Field], name: &str| {
        fields
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.value.clone())
    };
    let usize_of = |v: Option<Value>| match v {
        Some(Value::Uint { value, .. }) => Some(value),
        _ => None,
    };
    match value {
        Value::Seq {
            ty,
            elems,
            truncated: false,
        } => {
            let elem = ty
                .strip_prefix("core::slice::iter::Iter<")?
                .strip_suffix('>')?;
            if elems.is_empty() {
                let p = Prim::from_name(elem.trim())?;
                return Some(Ok(format!("([] as [{}; 0]).iter()", p.name())));
            }
            let items: Result<Vec<String>, LiteralError> = elems
                .iter()
                .map(|v| render_value(v, false, facts))
                .collect();
            Some(items.map(|items| format!("[{}].iter()", items.join(", "))))
        }
        Value::Struct { ty, fields } => {
            let adapter = match strip_generics(ty) {
                "core::iter::adapters::copied::Copied" => "copied",
                "core::iter::adapters::cloned::Cloned" => "cloned",
                "core::str::iter::Split" if ty == "core::str::iter::Split<char>" => {
                    return split_at_char(fields, field, usize_of).map(Ok);
                }
                _ => return None,
            };
            let inner = field(fields, "it")?;
            let written = std_iterator(&inner, facts)?;
            Some(written.map(|w| format!("{w}.{adapter}()")))
        }
        _ => None,
    }
}

/// `"text".split('c')` for a `Split<char>` that has not moved: searching from 0 to the text's
/// end, not finished.
fn split_at_char(
    fields: &[Field],
    field: impl Fn(&[Field], &str) -> Option<Value>,
    usize_of: impl Fn(Option<Value>) -> Option<u128>,
) -> Option<String> {
    let Value::Struct { fields: inner, .. } = field(fields, "__0")? else {
        return None;
    };
    let Value::Struct {
        fields: searcher, ..
    } = field(&inner, "matcher")?
    else {
        return None;
    };
    let Value::Str {
        value: text,
        truncated: false,
        ..
    } = field(&searcher, "haystack")?
    else {
        return None;
    };
    let Value::Char { value: needle } = field(&searcher, "needle")? else {
        return None;
    };
    let len = text.len() as u128;
    let fresh = usize_of(field(&inner, "start")) == Some(0)
        && usize_of(field(&inner, "end")) == Some(len)
        && usize_of(field(&searcher, "finger")) == Some(0)
        && usize_of(field(&searcher, "finger_back")) == Some(len)
        && field(&inner, "allow_trailing_empty") == Some(Value::Bool { value: true })
        && field(&inner, "finished") == Some(Value::Bool { value: false });
    fresh.then(|| format!("{}.split({})", str_lit(&text), char_lit(needle)))
}

/// A public flags type generated by the `bitflags` macro (version 2: its one field is a hidden
/// `_::InternalBitFlags` holding the bits), written `Type::from_bits_retain(bits)`, the
/// constructor every such type has.
fn bitflags_value(ty: &str, fields: &[Field], facts: &dyn TypeFacts) -> Option<String> {
    let [Field { value: inner, .. }] = fields else {
        return None;
    };
    let Value::Struct {
        ty: inner_ty,
        fields: bits,
    } = inner
    else {
        return None;
    };
    let [Field { value: int, .. }] = bits.as_slice() else {
        return None;
    };
    if !strip_generics(inner_ty).ends_with("::_::InternalBitFlags") || ty != strip_generics(ty) {
        return None;
    }
    // `bitflags!` defines the type, so the crate's source (as syn reads it) may not show it.
    if facts.shape(ty).is_none() && !facts.unseen_type_nameable(ty) {
        return None;
    }
    let (Value::Uint { ty: prim, .. } | Value::Int { ty: prim, .. }) = int else {
        return None;
    };
    let lit = render_prim(int, Prim::from_name(prim)?).ok()?;
    Some(format!("{ty}::from_bits_retain({lit})"))
}

/// The type paths a recorded type name mentions: `core::result::Result<u32, m::E>` gives
/// `core::result::Result`, `u32` and `m::E`.
fn mentioned_types(ty: &str) -> impl Iterator<Item = &str> {
    ty.split(|c: char| {
        matches!(
            c,
            '<' | '>' | ',' | ' ' | '&' | '(' | ')' | '[' | ']' | ';' | '*'
        )
    })
    .filter(|t| !t.is_empty())
}

/// Standard types whose `PartialEq` holds whenever their parameters' does.
const STD_COMPARABLE: &[&str] = &[
    "str",
    "std::path::Path",
    "std::path::PathBuf",
    "std::ffi::os_str::OsStr",
    "std::ffi::os_str::OsString",
    "core::option::Option",
    "core::result::Result",
    "alloc::string::String",
    "alloc::vec::Vec",
    "alloc::boxed::Box",
    "alloc::alloc::Global",
    "alloc::borrow::Cow",
    "alloc::collections::btree::map::BTreeMap",
    "alloc::collections::btree::set::BTreeSet",
    "alloc::collections::vec_deque::VecDeque",
    "std::collections::hash::map::HashMap",
    "std::collections::hash::set::HashSet",
    "std::hash::random::RandomState",
    "core::time::Duration",
    "core::cmp::Ordering",
    "core::num::nonzero::NonZero",
    "core::ops::range::Range",
    "core::ops::range::RangeInclusive",
    "core::ops::range::RangeFrom",
    "core::ops::range::RangeTo",
];

/// Whether `==` is known to compile on type path `t`: a primitive, a standard type above, or a
/// type of the crate that is comparable. Anything else (an iterator of another crate, a trait
/// object) is not known to be, and the value is checked another way.
fn known_comparable(t: &str, facts: &dyn TypeFacts) -> bool {
    if t == "mut" || t.bytes().all(|b| b.is_ascii_digit()) || Prim::from_name(t).is_some() {
        return true;
    }
    if STD_COMPARABLE.contains(&t) {
        return true;
    }
    facts.shape(t).is_some_and(|shape| shape.comparable)
}

/// A sequence by its recorded type: `vec![..]`, an array `[..]`, or a slice `&[..][..]` (the
/// `[..]` makes it `&[T]`, not `&[T; N]`, so a generic parameter is the recorded instance). An
/// empty one names its element type when that is a primitive, so that it infers.
fn render_seq(ty: &str, args: &[String]) -> Result<String, LiteralError> {
    let items = args.join(", ");
    let typed_empty = |elem: &str| Prim::from_name(elem.trim()).map(|p| p.name());
    if let Some(rest) = ty.strip_prefix("alloc::vec::Vec<") {
        let elem = rest.split(',').next().unwrap_or("").trim_end_matches('>');
        return Ok(match (args.is_empty(), typed_empty(elem)) {
            (true, Some(p)) => format!("Vec::<{p}>::new()"),
            _ => format!("vec![{items}]"),
        });
    }
    let (amp, slice) = if let Some(rest) = ty.strip_prefix("&mut [") {
        ("&mut ", rest)
    } else if let Some(rest) = ty.strip_prefix("&[") {
        ("&", rest)
    } else if let Some(rest) = ty.strip_prefix('[') {
        // An array `[T; N]`.
        let elem = rest.split(';').next().unwrap_or("");
        return Ok(match (args.is_empty(), typed_empty(elem)) {
            (true, Some(p)) => format!("([] as [{p}; 0])"),
            _ => format!("[{items}]"),
        });
    } else {
        return Err(LiteralError::UnsupportedType(ty.to_string()));
    };
    let elem = slice.strip_suffix(']').unwrap_or(slice);
    if elem.contains(';') {
        // `&[T; N]`, recorded as the array itself.
        return Ok(format!("{amp}[{items}]"));
    }
    Ok(match (args.is_empty(), typed_empty(elem)) {
        (true, Some(p)) => format!("{amp}([] as [{p}; 0])[..]"),
        _ => format!("{amp}[{items}][..]"),
    })
}

/// `Path`, `Path(a, b)` or `Path { x: a }`: tuple fields are recorded as `__0`, `__1`...; a
/// named field is written only when its name is an identifier.
fn compose(
    path: &str,
    fields: &[carve_storage::Field],
    args: &[String],
    unit: bool,
) -> Result<String, LiteralError> {
    if fields.is_empty() {
        return Ok(if unit {
            path.to_string()
        } else {
            format!("{path} {{}}")
        });
    }
    if fields.iter().all(|f| is_positional(&f.name)) {
        return Ok(format!("{path}({})", args.join(", ")));
    }
    let named = fields
        .iter()
        .zip(args)
        .map(|(f, a)| Ok(format!("{}: {a}", syntax::ident(&f.name)?)))
        .collect::<Result<Vec<String>, LiteralError>>()?;
    Ok(format!("{path} {{ {} }}", named.join(", ")))
}

/// A tuple field's recorded name: `__0`, `__1`...
fn is_positional(name: &str) -> bool {
    name.strip_prefix("__")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn render_behind_ref(
    target: &Value,
    mutable: bool,
    inner: &DeclType,
    pos: Position,
) -> Result<String, LiteralError> {
    if !target.is_scalar_or_string() {
        return Err(LiteralError::Undecoded);
    }
    let amp = if mutable { "&mut " } else { "&" };
    match inner {
        DeclType::Str if !mutable => match target {
            Value::Str { value: s, .. } => Ok(str_lit(s)),
            _ => Err(mismatch(target, inner)),
        },
        DeclType::String => match (target, pos) {
            (Value::Str { value: s, .. }, Position::Arg) => {
                Ok(format!("{amp}String::from({})", str_lit(s)))
            }
            (Value::Str { value: s, .. }, Position::Expected) => Ok(str_lit(s)),
            _ => Err(mismatch(target, inner)),
        },
        DeclType::Prim(p) => Ok(format!("{amp}{}", render_prim(target, *p)?)),
        DeclType::Generic(_) | DeclType::ImplTrait => {
            let recorded = recorded_type(target)?;
            match recorded {
                // `&T` with `T = str`: a string literal already is the reference.
                DeclType::Ref { .. } if !mutable => render(target, &recorded, pos),
                DeclType::Prim(_) | DeclType::String => {
                    render_behind_ref(target, mutable, &recorded, pos)
                }
                _ => Err(mismatch(target, inner)),
            }
        }
        _ => Err(LiteralError::UnsupportedType(format!(
            "{amp}{}",
            describe(inner)
        ))),
    }
}

fn render_prim(value: &Value, prim: Prim) -> Result<String, LiteralError> {
    match (value, prim) {
        (Value::Bool { value }, Prim::Bool) => Ok(value.to_string()),
        (Value::Char { value }, Prim::Char) => Ok(char_lit(*value)),
        (Value::Int { value: v, .. }, _) => render_int(*v < 0, v.unsigned_abs(), prim, value),
        (Value::Uint { value: v, .. }, _) => render_int(false, *v, prim, value),
        (Value::Float { ty, bits }, Prim::F64) if is_f64_name(ty) => {
            Ok(f64_literal(f64::from_bits(*bits)))
        }
        (Value::Float { ty, bits }, Prim::F32) if is_f32_name(ty) => {
            // f32 values keep their bits in the low 32 bits.
            let low = u32::try_from(*bits & 0xffff_ffff).unwrap_or(0);
            Ok(f32_literal(f32::from_bits(low)))
        }
        _ => Err(mismatch(value, &DeclType::Prim(prim))),
    }
}

fn is_f64_name(ty: &str) -> bool {
    matches!(ty, "f64" | "double")
}

fn is_f32_name(ty: &str) -> bool {
    matches!(ty, "f32" | "float")
}

fn render_int(
    negative: bool,
    magnitude: u128,
    prim: Prim,
    value: &Value,
) -> Result<String, LiteralError> {
    let Some((min, max)) = prim.int_range() else {
        return Err(mismatch(value, &DeclType::Prim(prim)));
    };
    let name = prim.name();
    if negative {
        let min_magnitude = min.unsigned_abs();
        if min == 0 || magnitude > min_magnitude {
            return Err(mismatch(value, &DeclType::Prim(prim)));
        }
        if magnitude == min_magnitude {
            return Ok(format!("{name}::MIN"));
        }
        Ok(format!("-{magnitude}{name}"))
    } else {
        if magnitude > max {
            return Err(mismatch(value, &DeclType::Prim(prim)));
        }
        if magnitude == max && max > u128::from(u8::MAX) {
            return Ok(format!("{name}::MAX"));
        }
        Ok(format!("{magnitude}{name}"))
    }
}

/// A bit-exact `f64` expression: `2.5f64`, `f64::INFINITY`, `f64::from_bits(0x...)`.
pub fn f64_literal(x: f64) -> String {
    if x.is_nan() {
        return "f64::NAN".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "f64::INFINITY"
        } else {
            "f64::NEG_INFINITY"
        }
        .to_string();
    }
    let repr = format!("{x:?}");
    match repr.parse::<f64>() {
        Ok(back) if back.to_bits() == x.to_bits() => format!("{repr}f64"),
        _ => format!("f64::from_bits({:#018x})", x.to_bits()),
    }
}

/// A bit-exact `f32` expression: `0.1f32`, `f32::NEG_INFINITY`, `f32::from_bits(0x...)`.
pub fn f32_literal(x: f32) -> String {
    if x.is_nan() {
        return "f32::NAN".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "f32::INFINITY"
        } else {
            "f32::NEG_INFINITY"
        }
        .to_string();
    }
    let repr = format!("{x:?}");
    match repr.parse::<f32>() {
        Ok(back) if back.to_bits() == x.to_bits() => format!("{repr}f32"),
        _ => format!("f32::from_bits({:#010x})", x.to_bits()),
    }
}

/// True for a recorded NaN (directly or behind a reference).
pub fn is_nan(value: &Value) -> bool {
    match value {
        Value::Float { ty, bits } if is_f32_name(ty) => {
            f32::from_bits(u32::try_from(*bits & 0xffff_ffff).unwrap_or(0)).is_nan()
        }
        Value::Float { bits, .. } => f64::from_bits(*bits).is_nan(),
        Value::Ref { target, .. } => is_nan(target),
        _ => false,
    }
}

fn mismatch(value: &Value, decl: &DeclType) -> LiteralError {
    LiteralError::UnsupportedType(format!(
        "recorded {} for declared {}",
        value.type_name(),
        describe(decl)
    ))
}

fn describe(decl: &DeclType) -> String {
    match decl {
        DeclType::Unit => "()".to_string(),
        DeclType::Prim(p) => p.name().to_string(),
        DeclType::Str => "str".to_string(),
        DeclType::String => "String".to_string(),
        DeclType::Ref { mutable, inner } => {
            format!(
                "{}{}",
                if *mutable { "&mut " } else { "&" },
                describe(inner)
            )
        }
        DeclType::Generic(name) => name.clone(),
        DeclType::ImplTrait => "impl Trait".to_string(),
        DeclType::Other(written) => written.clone(),
    }
}

/// The skip reason a literal that cannot be written gives.
pub(crate) fn reason(e: LiteralError) -> &'static str {
    match e {
        LiteralError::Undecoded => UNDECODED,
        LiteralError::UnsupportedType(_) => UNSUPPORTED_TYPE,
        LiteralError::Refused(_) => NOT_RUST_SYNTAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::types::Shape;

    fn arg(value: &Value, ty: &str) -> Result<String, LiteralError> {
        render(
            value,
            &DeclType::parse(ty, &["T".to_string()]),
            Position::Arg,
        )
    }

    fn expected(value: &Value, ty: &str) -> Result<String, LiteralError> {
        render(
            value,
            &DeclType::parse(ty, &["T".to_string()]),
            Position::Expected,
        )
    }

    #[test]
    fn paths_are_written_with_their_constructor_only_where_their_type_fits_and_exact() {
        let path = |ty: &str, truncated| Value::Str {
            ty: ty.into(),
            value: "a/b".into(),
            truncated,
        };
        assert_eq!(
            arg(&path("&std::path::Path", false), "&Path").unwrap(),
            "std::path::Path::new(\"a/b\")"
        );
        assert_eq!(
            arg(&path("std::path::PathBuf", false), "T").unwrap(),
            "std::path::PathBuf::from(\"a/b\")"
        );
        assert_eq!(
            expected(&path("std::ffi::os_str::OsString", false), "OsString").unwrap(),
            "std::ffi::OsString::from(\"a/b\")"
        );
        // Cut short (bytes that are not UTF-8): not exact, never written.
        assert!(matches!(
            arg(&path("&std::path::Path", true), "&Path"),
            Err(LiteralError::Undecoded)
        ));
        // A declared `&str` or `String` takes no path.
        assert!(arg(&path("&std::path::Path", false), "&str").is_err());
        assert!(arg(&path("std::path::PathBuf", false), "String").is_err());
    }

    fn s(text: &str) -> Value {
        Value::Str {
            ty: "&str".to_string(),
            value: text.to_string(),
            truncated: false,
        }
    }

    fn int(ty: &str, value: i128) -> Value {
        Value::Int {
            ty: ty.to_string(),
            value,
        }
    }

    fn uint(ty: &str, value: u128) -> Value {
        Value::Uint {
            ty: ty.to_string(),
            value,
        }
    }

    fn f64v(x: f64) -> Value {
        Value::Float {
            ty: "f64".to_string(),
            bits: x.to_bits(),
        }
    }

    fn f32v(x: f32) -> Value {
        Value::Float {
            ty: "f32".to_string(),
            bits: u64::from(x.to_bits()),
        }
    }

    /// Parses the literal back as Rust and checks it is an expression.
    fn parses(src: &str) -> bool {
        syn::parse_str::<syn::Expr>(src).is_ok()
    }

    #[test]
    fn strings_are_escaped_like_rust_source() {
        let cases = [
            ("plain", r#""plain""#),
            ("say \"hi\"", r#""say \"hi\"""#),
            ("line\nbreak\ttab", r#""line\nbreak\ttab""#),
            ("back\\slash", r#""back\\slash""#),
            ("héllo ✓", r#""héllo ✓""#),
            ("nul\0", r#""nul\0""#),
        ];
        for (text, want) in cases {
            let got = arg(&s(text), "&str").unwrap();
            assert_eq!(got, want);
            assert!(parses(&got));
        }
    }

    #[test]
    fn string_spelling_follows_the_declared_type() {
        let v = s("abc");
        assert_eq!(arg(&v, "&'a str").unwrap(), r#""abc""#);
        assert_eq!(arg(&v, "String").unwrap(), r#"String::from("abc")"#);
        assert_eq!(
            arg(&v, "std::string::String").unwrap(),
            r#"String::from("abc")"#
        );
        assert_eq!(arg(&v, "&String").unwrap(), r#"&String::from("abc")"#);
        assert_eq!(
            arg(&v, "&mut String").unwrap(),
            r#"&mut String::from("abc")"#
        );
        assert_eq!(expected(&v, "String").unwrap(), r#""abc""#);
        assert_eq!(expected(&v, "&String").unwrap(), r#""abc""#);
        let behind_ref = Value::Ref {
            ty: "&alloc::string::String".to_string(),
            addr: 8,
            target: Box::new(Value::Str {
                ty: "alloc::string::String".to_string(),
                value: "abc".to_string(),
                truncated: false,
            }),
        };
        assert_eq!(
            arg(&behind_ref, "&String").unwrap(),
            r#"&String::from("abc")"#
        );
    }

    #[test]
    fn truncated_strings_and_structs_are_undecoded() {
        let truncated = Value::Str {
            ty: "&str".to_string(),
            value: "abc".to_string(),
            truncated: true,
        };
        assert_eq!(arg(&truncated, "&str"), Err(LiteralError::Undecoded));
        let st = Value::Struct {
            ty: "m::P".to_string(),
            fields: vec![],
        };
        assert_eq!(arg(&st, "P"), Err(LiteralError::Undecoded));
    }

    #[test]
    fn chars_are_quoted_and_escaped() {
        for (c, want) in [
            ('x', "'x'"),
            ('\'', r"'\''"),
            ('\n', r"'\n'"),
            ('"', "'\"'"),
            ('é', "'é'"),
        ] {
            let got = arg(&Value::Char { value: c }, "char").unwrap();
            assert_eq!(got, want);
            assert!(parses(&got));
        }
    }

    #[test]
    fn integers_carry_the_declared_suffix_and_extremes_use_constants() {
        assert_eq!(arg(&int("i32", 3), "u32").unwrap(), "3u32");
        assert_eq!(arg(&int("i64", -5), "i64").unwrap(), "-5i64");
        assert_eq!(arg(&int("i128", i128::MIN), "i128").unwrap(), "i128::MIN");
        assert_eq!(arg(&int("i128", i128::MAX), "i128").unwrap(), "i128::MAX");
        assert_eq!(
            arg(&uint("u64", u64::MAX.into()), "u64").unwrap(),
            "u64::MAX"
        );
        assert_eq!(arg(&uint("u128", u128::MAX), "u128").unwrap(), "u128::MAX");
        assert_eq!(arg(&int("i8", -128), "i8").unwrap(), "i8::MIN");
        assert_eq!(arg(&uint("u8", 255), "u8").unwrap(), "255u8");
        assert_eq!(arg(&uint("usize", 7), "usize").unwrap(), "7usize");
        assert_eq!(arg(&int("int", -1), "i32").unwrap(), "-1i32");
    }

    #[test]
    fn integers_that_do_not_fit_the_declared_type_are_refused() {
        assert!(matches!(
            arg(&int("i32", -1), "u32"),
            Err(LiteralError::UnsupportedType(_))
        ));
        assert!(matches!(
            arg(&uint("u32", 300), "u8"),
            Err(LiteralError::UnsupportedType(_))
        ));
        assert!(matches!(
            arg(&int("i32", 1), "bool"),
            Err(LiteralError::UnsupportedType(_))
        ));
    }

    #[test]
    fn floats_round_trip_bit_exactly() {
        assert_eq!(arg(&f64v(0.1), "f64").unwrap(), "0.1f64");
        assert_eq!(arg(&f64v(2.5), "f64").unwrap(), "2.5f64");
        assert_eq!(arg(&f64v(-0.0), "f64").unwrap(), "-0.0f64");
        assert_eq!(arg(&f64v(1e300), "f64").unwrap(), "1e300f64");
        assert_eq!(arg(&f64v(f64::NAN), "f64").unwrap(), "f64::NAN");
        assert_eq!(arg(&f64v(f64::INFINITY), "f64").unwrap(), "f64::INFINITY");
        assert_eq!(
            arg(&f64v(f64::NEG_INFINITY), "f64").unwrap(),
            "f64::NEG_INFINITY"
        );
        assert_eq!(arg(&f32v(0.1), "f32").unwrap(), "0.1f32");
        assert_eq!(arg(&f32v(-1.5e-40), "f32").unwrap(), "-1.5e-40f32");
        for x in [
            0.1,
            -0.0,
            1e300,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
            1.0 / 3.0,
        ] {
            let lit = f64_literal(x);
            let digits = lit.trim_end_matches("f64");
            assert_eq!(
                digits.parse::<f64>().unwrap().to_bits(),
                x.to_bits(),
                "{lit}"
            );
            assert!(parses(&lit));
        }
        assert!(matches!(
            arg(&f64v(1.0), "f32"),
            Err(LiteralError::UnsupportedType(_))
        ));
    }

    #[test]
    fn nan_is_detected_through_references() {
        assert!(is_nan(&f64v(f64::NAN)));
        assert!(is_nan(&f32v(f32::NAN)));
        assert!(!is_nan(&f64v(1.0)));
        let r = Value::Ref {
            ty: "&f64".to_string(),
            addr: 1,
            target: Box::new(f64v(f64::NAN)),
        };
        assert!(is_nan(&r));
    }

    #[test]
    fn generic_parameters_use_the_recorded_type() {
        assert_eq!(arg(&int("i64", 4), "T").unwrap(), "4i64");
        assert!(matches!(
            arg(&int("u32", 4), "NonZeroU32"),
            Err(LiteralError::UnsupportedType(_))
        ));
        let boxed = Value::Ref {
            ty: "alloc::boxed::Box<i32>".to_string(),
            addr: 1,
            target: Box::new(int("i32", 1)),
        };
        assert!(matches!(
            arg(&boxed, "Box<i32>"),
            Err(LiteralError::UnsupportedType(_))
        ));
        assert!(matches!(
            arg(&boxed, "T"),
            Err(LiteralError::UnsupportedType(_))
        ));
        assert_eq!(arg(&s("x"), "impl AsRef<str>").unwrap(), r#""x""#);
        assert_eq!(arg(&int("i32", 4), "&T").unwrap(), "&4i32");
        assert!(matches!(
            arg(&int("int", 4), "T"),
            Err(LiteralError::UnsupportedType(_))
        ));
    }

    #[test]
    fn references_to_scalars_take_an_ampersand() {
        let r = Value::Ref {
            ty: "&i32".to_string(),
            addr: 1,
            target: Box::new(int("i32", 9)),
        };
        assert_eq!(arg(&r, "&i32").unwrap(), "&9i32");
        assert_eq!(arg(&r, "&mut i32").unwrap(), "&mut 9i32");
        assert_eq!(expected(&r, "&i32").unwrap(), "&9i32");
        assert_eq!(arg(&Value::Bool { value: true }, "&bool").unwrap(), "&true");
    }

    /// Knows no type of any crate.
    struct NoTypes;

    impl TypeFacts for NoTypes {
        fn shape(&self, _: &str) -> Option<Shape> {
            None
        }
    }

    #[test]
    fn an_ordering_is_written_by_its_public_path() {
        let less = Value::Enum {
            ty: "core::cmp::Ordering".into(),
            variant: "Less".into(),
            fields: vec![],
        };
        assert_eq!(
            render_value(&less, true, &NoTypes).unwrap(),
            "std::cmp::Ordering::Less"
        );
    }

    #[test]
    fn slice_iterators_their_adapters_and_a_fresh_split_are_written_as_a_program_makes_them() {
        let field = |name: &str, value: Value| Field {
            name: name.into(),
            value,
        };
        let iter = |ty: &str, elems: Vec<Value>| Value::Seq {
            ty: format!("core::slice::iter::Iter<{ty}>"),
            elems,
            truncated: false,
        };
        let copied = Value::Struct {
            ty: "core::iter::adapters::copied::Copied<core::slice::iter::Iter<u8>>".into(),
            fields: vec![field(
                "it",
                iter("u8", vec![uint("u8", 62), uint("u8", 62)]),
            )],
        };
        let got = render_value(&copied, false, &NoTypes).unwrap();
        assert_eq!(got, "[62u8, 62u8].iter().copied()");
        assert!(parses(&got));
        // Never an expected value: an iterator has no `PartialEq`.
        assert!(render_value(&copied, true, &NoTypes).is_err());
        let cloned = Value::Struct {
            ty: "core::iter::adapters::cloned::Cloned<core::slice::iter::Iter<i64>>".into(),
            fields: vec![field("it", iter("i64", vec![]))],
        };
        assert_eq!(
            render_value(&cloned, false, &NoTypes).unwrap(),
            "([] as [i64; 0]).iter().cloned()"
        );
        let split = |start: u128, finished: bool| Value::Struct {
            ty: "core::str::iter::Split<char>".into(),
            fields: vec![field(
                "__0",
                Value::Struct {
                    ty: "core::str::iter::SplitInternal<char>".into(),
                    fields: vec![
                        field("start", uint("usize", start)),
                        field("end", uint("usize", 3)),
                        field(
                            "matcher",
                            Value::Struct {
                                ty: "core::str::pattern::CharSearcher".into(),
                                fields: vec![
                                    field(
                                        "haystack",
                                        Value::Str {
                                            ty: "&str".into(),
                                            value: "a b".into(),
                                            truncated: false,
                                        },
                                    ),
                                    field("finger", uint("usize", start)),
                                    field("finger_back", uint("usize", 3)),
                                    field("needle", Value::Char { value: ' ' }),
                                ],
                            },
                        ),
                        field("allow_trailing_empty", Value::Bool { value: true }),
                        field("finished", Value::Bool { value: finished }),
                    ],
                },
            )],
        };
        assert_eq!(
            render_value(&split(0, false), false, &NoTypes).unwrap(),
            "\"a b\".split(' ')"
        );
        // One that has moved on, or finished, is no fresh split of its text.
        assert!(render_value(&split(2, false), false, &NoTypes).is_err());
        assert!(render_value(&split(0, true), false, &NoTypes).is_err());
    }

    #[test]
    fn std_values_with_private_representations_use_their_public_constructor() {
        let field = |name: &str, value: Value| Field {
            name: name.into(),
            value,
        };
        let nonzero = Value::Struct {
            ty: "core::num::nonzero::NonZero<usize>".into(),
            fields: vec![field(
                "__0",
                Value::Struct {
                    ty: "core::num::niche_types::NonZeroUsizeInner".into(),
                    fields: vec![field("__0", uint("usize", 8))],
                },
            )],
        };
        let got = render_value(&nonzero, true, &NoTypes).unwrap();
        assert_eq!(got, "std::num::NonZero::<usize>::new(8usize).unwrap()");
        assert!(parses(&got));
        let duration = Value::Struct {
            ty: "core::time::Duration".into(),
            fields: vec![
                field("secs", uint("u64", 3)),
                field(
                    "nanos",
                    Value::Struct {
                        ty: "core::num::niche_types::Nanoseconds".into(),
                        fields: vec![field("__0", uint("u32", 5))],
                    },
                ),
            ],
        };
        assert_eq!(
            render_value(&duration, true, &NoTypes).unwrap(),
            "std::time::Duration::new(3u64, 5u32)"
        );
        let range = Value::Struct {
            ty: "core::ops::range::Range<usize>".into(),
            fields: vec![
                field("start", uint("usize", 2)),
                field("end", uint("usize", 5)),
            ],
        };
        assert_eq!(
            render_value(&range, true, &NoTypes).unwrap(),
            "2usize..5usize"
        );
        // Behind a reference, the range keeps its parentheses: `&1..4` is `(&1)..4`.
        let range_ref = Value::Ref {
            ty: "&core::ops::range::Range<usize>".into(),
            addr: 0x1000,
            target: Box::new(range),
        };
        assert_eq!(
            render_value(&range_ref, true, &NoTypes).unwrap(),
            "&(2usize..5usize)"
        );
        // A public `bitflags` type: its hidden inner struct holds the bits.
        struct Flags;
        impl TypeFacts for Flags {
            fn shape(&self, path: &str) -> Option<Shape> {
                (path == "md::Options").then(Shape::default)
            }
        }
        let flags = Value::Struct {
            ty: "md::Options".into(),
            fields: vec![field(
                "__0",
                Value::Struct {
                    ty: "md::_::InternalBitFlags".into(),
                    fields: vec![field("__0", uint("u32", 4095))],
                },
            )],
        };
        assert_eq!(
            render_value(&flags, false, &Flags).unwrap(),
            "md::Options::from_bits_retain(4095u32)"
        );
        assert!(render_value(&flags, false, &NoTypes).is_err());
        // Made by the `bitflags!` macro, so the source syn reads does not show it.
        struct MacroMade;
        impl TypeFacts for MacroMade {
            fn shape(&self, _: &str) -> Option<Shape> {
                None
            }
            fn unseen_type_nameable(&self, path: &str) -> bool {
                path == "md::Options"
            }
        }
        assert_eq!(
            render_value(&flags, false, &MacroMade).unwrap(),
            "md::Options::from_bits_retain(4095u32)"
        );
        // Another crate's `NonZero` is no standard value.
        let other = Value::Struct {
            ty: "mycrate::NonZero".into(),
            fields: vec![field("__0", uint("u8", 1))],
        };
        assert!(render_value(&other, true, &NoTypes).is_err());
    }

    #[test]
    fn sequences_are_written_as_their_recorded_type_and_empty_ones_name_the_element() {
        let bytes = |ty: &str, n: &[u128]| Value::Seq {
            ty: ty.into(),
            elems: n.iter().map(|v| uint("u8", *v)).collect(),
            truncated: false,
        };
        let none = NoTypes;
        let cases = [
            (bytes("&[u8]", &[1, 2]), "&[1u8, 2u8][..]"),
            (bytes("&[u8]", &[]), "&([] as [u8; 0])[..]"),
            (bytes("&mut [u8]", &[7]), "&mut [7u8][..]"),
            (bytes("[u8; 2]", &[1, 2]), "[1u8, 2u8]"),
            (bytes("[u8; 0]", &[]), "([] as [u8; 0])"),
            (
                bytes("alloc::vec::Vec<u8, alloc::alloc::Global>", &[3]),
                "vec![3u8]",
            ),
            (
                bytes("alloc::vec::Vec<u8, alloc::alloc::Global>", &[]),
                "Vec::<u8>::new()",
            ),
        ];
        for (value, want) in cases {
            let got = render_value(&value, false, &none).unwrap();
            assert_eq!(got, want);
            assert!(syn::parse_str::<syn::Expr>(&got).is_ok(), "{got}");
        }
    }
}
