//! Recorded values to Rust literals, written for the type the function declares.
//!
//! The declared type (from the crate's source) decides the spelling: a recorded string is
//! `"abc"` for a `&str` parameter and `String::from("abc")` for a `String` one, an integer gets
//! the suffix of the declared width. Where the declaration says nothing usable (a type parameter,
//! `impl Trait`, a type alias) the value's own recorded type is used instead.

mod collections;
pub(crate) mod compose;
mod error;
mod function;
mod iterators;
mod os_text;
mod scalar;
mod std_values;
#[cfg(test)]
mod tests;

use carve_storage::{Field, Value};

use crate::arrange::literal::collections::render_seq;
use crate::arrange::literal::compose::compose;
use crate::arrange::literal::error::{describe, mismatch};
pub(crate) use crate::arrange::literal::error::{reason, LiteralError};
use crate::arrange::literal::iterators::split_at_char;
use crate::arrange::literal::os_text::os_text;
pub(crate) use crate::arrange::literal::scalar::is_nan;
use crate::arrange::literal::scalar::render_prim;
use crate::arrange::literal::std_values::{
    bitflags_value, known_comparable, mentioned_types, std_value,
};
use crate::read::types::{strip_generics, text_iterator_method, DeclType, Prim, TypeFacts};
use crate::syntax::{self, str_lit};

/// Where a literal goes: into a call, or into the right-hand side of `assert_eq!`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    Arg,
    Expected,
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
    if let (Value::Function { path, .. }, Position::Arg) = (value, pos) {
        return function::function_path(path);
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
        } => enum_value(ty, variant, fields, compare, facts),
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
            if !shape.fields_public && (!compare || shape.comparable) {
                if let Some(written) = facts.constructed(value) {
                    return Ok(written);
                }
            }
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
            render_seq(ty, &args, compare, facts)
        }
        Value::Ref { ty, target, .. } => ref_value(ty, target, compare, facts),
        Value::Function { path, .. } if !compare => function::function_path(path),
        _ => Err(LiteralError::Undecoded),
    }
}

/// An enum value: `Some(..)`, `Ok(..)` by their variant, `std::cmp::Ordering::Less`, or one of the
/// crate's enums by its full path (comparable with `compare`).
fn enum_value(
    ty: &str,
    variant: &str,
    fields: &[Field],
    compare: bool,
    facts: &dyn TypeFacts,
) -> Result<String, LiteralError> {
    let base = strip_generics(ty);
    // `==` on a `Result<u32, E>` needs `E: PartialEq` even when the value is an `Ok`.
    if compare {
        if let Some(t) = mentioned_types(ty).find(|t| !known_comparable(t, facts)) {
            return Err(LiteralError::UnsupportedType(t.to_string()));
        }
    }
    let args = fields
        .iter()
        .map(|f| render_value(&f.value, compare, facts))
        .collect::<Result<Vec<String>, LiteralError>>()?;
    let std_variant = match base {
        "core::option::Option" | "std::option::Option" => {
            matches!(variant, "Some" | "None")
        }
        "core::result::Result" | "std::result::Result" => {
            matches!(variant, "Ok" | "Err")
        }
        _ => false,
    };
    // A standard enum a test names by its public path (`a.cmp(&b)`'s result).
    let std_enum = match base {
        "core::cmp::Ordering" => Some("std::cmp::Ordering"),
        _ => None,
    };
    let path = if std_variant {
        variant.to_string()
    } else if let Some(std_enum) = std_enum {
        format!("{std_enum}::{}", syntax::ident(variant)?)
    } else {
        let shape = facts
            .shape(base)
            .ok_or_else(|| LiteralError::UnsupportedType(base.to_string()))?;
        if compare && !shape.comparable {
            return Err(LiteralError::UnsupportedType(base.to_string()));
        }
        // A generic enum's variant may not name every parameter (`TinyVec::Heap(Vec<A::Item>)`
        // says nothing of `A`'s length): the recorded instance is named where a test can.
        format!(
            "{base}{}::{}",
            enum_instance(ty, facts),
            syntax::ident(variant)?
        )
    };
    compose(&path, fields, &args, true)
}

/// `::<[i32; 4]>`, the turbofish of a generic enum's recorded instance
/// (`tinyvec::TinyVec<[i32; 4]>`), when a test can name every argument; empty otherwise.
fn enum_instance(ty: &str, facts: &dyn TypeFacts) -> String {
    let Some(args) = ty
        .find('<')
        .and_then(|open| ty[open + 1..].strip_suffix('>'))
    else {
        return String::new();
    };
    let written: Option<Vec<String>> = crate::read::paths::split_top(args, ",")
        .iter()
        .map(|a| crate::act::instance::test_spelling(a.trim(), facts))
        .collect();
    match written {
        Some(w) if !w.is_empty() => format!("::<{}>", w.join(", ")),
        _ => String::new(),
    }
}

/// A reference or `Box` to a value written as [`render_value`] does: `&v`, `&mut v`,
/// `Box::new(v)`, a string literal for `&str`; never a trait object.
fn ref_value(
    ty: &str,
    target: &Value,
    compare: bool,
    facts: &dyn TypeFacts,
) -> Result<String, LiteralError> {
    if ty.contains("dyn ") {
        return Err(LiteralError::UnsupportedType(ty.to_string()));
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
        } = target
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
        let is_range = matches!(target, Value::Struct { ty, .. }
                if strip_generics(ty).starts_with("core::ops::range::"));
        return Ok(if is_range {
            format!("{amp}({inner})")
        } else {
            format!("{amp}{inner}")
        });
    }
    Err(LiteralError::UnsupportedType(ty.to_string()))
}

/// A standard iterator over values the recording holds whole, written the way a program makes
/// it: a slice iterator (recorded as the elements it has left) as `[a, b].iter()`, a vector's
/// as `vec![a, b].into_iter()`, the
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
            if let Some(args) = collections::type_args(ty, "alloc::vec::into_iter::IntoIter") {
                if elems.is_empty() {
                    let p = Prim::from_name(args.first()?)?;
                    return Some(Ok(format!("Vec::<{}>::new().into_iter()", p.name())));
                }
                let items: Result<Vec<String>, LiteralError> = elems
                    .iter()
                    .map(|v| render_value(v, false, facts))
                    .collect();
                return Some(items.map(|items| format!("vec![{}].into_iter()", items.join(", "))));
            }
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
        // `&&str` (`impl PartialEq<&str> for Mime`): the string literal, borrowed once more.
        DeclType::Ref {
            mutable: false,
            inner: deeper,
        } if !mutable && **deeper == DeclType::Str => match target {
            Value::Str { value: s, .. } => Ok(format!("&{}", str_lit(s))),
            _ => Err(mismatch(target, inner)),
        },
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
