//! How to observe a result: what a test asserts about a recorded return value (`==` against a
//! literal, `assert!`, a `matches!` pattern, the parts a caller can observe, a panic), and the
//! reasons a value cannot be written.

use carve_storage::Value;

use crate::arrange::literal::{self, reason, Position};
use crate::body::Assertion;
use crate::naming;
use crate::read::types::{DeclType, Prim};
use crate::reasons::UNDECODED;

/// The part of a recorded panic message a test can expect exactly: the longest run of literal
/// text (formatted arguments were recorded as `{…}`), as a Rust string literal.
pub(crate) fn expected_panic(message: &str) -> Option<String> {
    let piece = message
        .split("{…}")
        .map(str::trim)
        .max_by_key(|p| p.len())
        .filter(|p| !p.is_empty())?;
    Some(crate::syntax::str_lit(piece))
}

/// What the test checks about the returned value, and the slug naming it.
pub(crate) fn assertion(
    ret: Option<&Value>,
    decl: &DeclType,
    facts: &dyn crate::read::types::TypeFacts,
) -> Result<(Assertion, Option<String>), &'static str> {
    let Some(value) = ret else {
        return match decl {
            DeclType::Unit => Ok((Assertion::Unit, None)),
            _ => Err(UNDECODED),
        };
    };
    if let Some(expected) = cow(value, facts) {
        return Ok((Assertion::Eq { expected }, Some(naming::value_slug(value))));
    }
    if !value.is_scalar_or_string()
        && !matches!(value, Value::Ref { target, .. } if target.is_scalar_or_string())
    {
        // `Ok(43i32)`, `abc::User { .. }`: compared whole when every type in it allows.
        if !value.is_exact() {
            return Err(UNDECODED);
        }
        let expected = literal::render_value(value, true, facts).map_err(reason)?;
        return Ok((Assertion::Eq { expected }, Some(naming::value_slug(value))));
    }
    if let (Value::Unit, DeclType::Unit) = (value, decl) {
        return Ok((Assertion::Unit, None));
    }
    let slug = Some(naming::value_slug(value));
    if literal::is_nan(value) {
        // Still check that a float is what the declaration allows.
        literal::render(value, decl, Position::Expected).map_err(reason)?;
        return Ok((Assertion::Nan, slug));
    }
    if let Value::Bool { value: b } = value {
        let plain_bool = matches!(
            decl,
            DeclType::Prim(Prim::Bool) | DeclType::Generic(_) | DeclType::Other(_)
        );
        if plain_bool {
            literal::render(value, decl, Position::Expected).map_err(reason)?;
            return Ok((
                if *b {
                    Assertion::True
                } else {
                    Assertion::False
                },
                slug,
            ));
        }
    }
    let expected = literal::render(value, decl, Position::Expected).map_err(reason)?;
    Ok((Assertion::Eq { expected }, slug))
}

/// A `Cow<str>` or `Cow<[T]>`, borrowed or owned, compared with what it holds:
/// `assert_eq!(result, "text")` (`Cow<str>: PartialEq<&str>`), `&[1, 2][..]` or `vec![..]`
/// (`Cow<[T]>: PartialEq<&[U]>`, `PartialEq<Vec<U>>`). `alloc::borrow::Cow` itself is no path
/// a literal can name through its variants.
pub(crate) fn cow(value: &Value, facts: &dyn crate::read::types::TypeFacts) -> Option<String> {
    let Value::Enum {
        ty,
        variant,
        fields,
    } = value
    else {
        return None;
    };
    let inner_ty = ty.strip_prefix("alloc::borrow::Cow<")?;
    if !matches!(variant.as_str(), "Borrowed" | "Owned") || !value.is_exact() {
        return None;
    }
    let [field] = fields.as_slice() else {
        return None;
    };
    let mut inner = &field.value;
    if inner_ty.starts_with("str>") {
        while let Value::Ref { target, .. } = inner {
            inner = target;
        }
        let Value::Str { value, .. } = inner else {
            return None;
        };
        return Some(crate::syntax::str_lit(value));
    }
    if inner_ty.starts_with('[') {
        let seq = match inner {
            Value::Ref { target, .. } => target.as_ref(),
            other => other,
        };
        if !matches!(seq, Value::Seq { .. }) {
            return None;
        }
        return literal::render_value(inner, true, facts).ok();
    }
    None
}

/// Whether `ret` (looked at through references, `Ok`/`Some`) is a struct or enum of a crate
/// other than `crate_name` and the standard library: a value of a crate the recording did not
/// select (see [`crate::reasons::UNRECORDED_CRATE_VALUE`]).
pub(crate) fn of_other_crate(ret: &Value, crate_name: &str) -> bool {
    let value = match ret {
        Value::Ref { target, .. } => target,
        other => other,
    };
    let ty = match value {
        Value::Enum {
            ty,
            variant,
            fields,
        } if (ty.starts_with("core::result::Result") && variant == "Ok")
            || (ty.starts_with("core::option::Option") && variant == "Some") =>
        {
            return fields
                .first()
                .is_some_and(|f| of_other_crate(&f.value, crate_name));
        }
        Value::Struct { ty, .. } | Value::Enum { ty, .. } => ty,
        _ => return false,
    };
    let krate = ty.split("::").next().unwrap_or_default();
    ty.contains("::") && !["core", "alloc", "std", crate_name].contains(&krate)
}

/// The check for a call that returned a zero-sized value, declared `Result<(), E>` (`ok_unit`;
/// in `similar`, a `DiffHook`'s `Result<(), Infallible>`): the debug information gives such a
/// function no return type, since nothing is passed back, so the recording holds no value. A
/// zero-sized `Result<(), E>` has one value only, `Ok(())` (with an `Err` it could hold, it
/// would take a byte to tell the two apart), so the test checks exactly that, with a pattern
/// that compiles whatever `E` implements. `None` for any other declared type.
pub(crate) fn zero_sized_ok(ok_unit: bool) -> Option<(Assertion, Option<String>)> {
    ok_unit.then(|| {
        (
            Assertion::Matches {
                pattern: "Ok(())".to_string(),
            },
            Some("ok".to_string()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::types::written_ok_unit;

    #[test]
    fn a_panic_test_expects_the_longest_exact_part_of_the_message() {
        assert_eq!(
            expected_panic("not implemented: the question is not known yet").as_deref(),
            Some("\"not implemented: the question is not known yet\"")
        );
        assert_eq!(
            expected_panic("index out of bounds: the len is {…} but the index is {…}").as_deref(),
            Some("\"index out of bounds: the len is\"")
        );
        assert_eq!(expected_panic("{…}"), None);
        assert_eq!(
            expected_panic("say \"hi\"\n").as_deref(),
            Some("\"say \\\"hi\\\"\"")
        );
    }

    #[test]
    fn only_results_written_result_of_unit_are_zero_sized_ok() {
        for written in [
            "Result<(), Self::Error>",
            "Result < () , D :: Error >",
            "std::result::Result<(), E>",
        ] {
            assert!(written_ok_unit(written), "{written}");
        }
        for written in ["Result<u8, E>", "io::Result<()>", "Option<()>", "()"] {
            assert!(!written_ok_unit(written), "{written}");
        }
        assert!(zero_sized_ok(false).is_none());
    }

    #[test]
    fn values_of_other_crates_are_told_from_the_crates_and_std_ones() {
        let of = |ty: &str| Value::Struct {
            ty: ty.to_string(),
            fields: Vec::new(),
        };
        let in_ok = |v: Value| Value::Enum {
            ty: "core::result::Result<x, y>".to_string(),
            variant: "Ok".to_string(),
            fields: vec![carve_storage::Field::new("__0", v)],
        };
        assert!(of_other_crate(&of("form_urlencoded::Parse"), "url"));
        assert!(of_other_crate(&in_ok(of("form_urlencoded::Parse")), "url"));
        assert!(!of_other_crate(&of("url::ParseOptions"), "url"));
        assert!(!of_other_crate(&of("alloc::string::String"), "url"));
    }
}
