//! Observation: a result `==` cannot compare whole because of the other side of it (an error
//! type without `PartialEq` beside an `Ok`) and no pattern can name (a `String`, a `Vec`, a
//! `Cow`), whose value inside is comparable: `assert_eq!(result.unwrap(), "a b")`, the
//! value inside `Ok`/`Some` (or `Err`, `.unwrap_err()`) compared whole, a `Cow` with what it
//! holds. Only values recorded exactly; a reference inside is left to the later rules.

use carve_storage::Value;

use crate::arrange::builder::Builder;
use crate::arrange::literal;
use crate::assert::inside::inside_as_is;
use crate::assert::observe::cow;
use crate::assert::subject::{Subject, Verdict};
use crate::body::{Assertion, Effect};
use crate::naming;
use crate::read::types;

/// A result whose unwrapped value a literal can equal.
pub(crate) fn rule(s: &Subject, b: &mut Builder) -> Verdict {
    let Some(ret) = s.call.ret.as_ref() else {
        return Verdict::Pass(None);
    };
    let Some((value, Some(unwrap))) = inside_as_is(s.cx, ret, &s.target.call_path) else {
        return Verdict::Pass(None);
    };
    if matches!(value, Value::Ref { .. } | Value::Unit) || !value.is_exact() {
        return Verdict::Pass(None);
    }
    // A `String` equals a `&str`: `"AB"`, not `String::from("AB")`; a `PathBuf` does not.
    let text = match value {
        Value::Str { ty, value, .. } if types::equals_a_str(ty) => {
            Some(crate::syntax::str_lit(value))
        }
        _ => None,
    };
    let expected = text
        .or_else(|| cow(value, s.cx.api))
        .or_else(|| literal::render_value(value, true, s.cx.api).ok());
    let Some(expected) = expected else {
        return Verdict::Pass(None);
    };
    b.effects.push(Effect {
        actual: "result".to_string(),
        expected,
        message: None,
        observe: None,
    });
    Verdict::Observed((
        Assertion::Observed {
            unwrap: Some(unwrap),
        },
        Some(naming::value_slug(ret)),
    ))
}

#[cfg(test)]
mod tests {
    use crate::body::Assertion;
    use crate::testdata::rulebook;

    #[test]
    fn the_value_inside_ok_is_compared_when_the_error_type_cannot_be() {
        // `parse_name(" ab ")`: `Ok("AB")`, beside a `NameError` without `PartialEq`.
        let (rule, (assertion, _), b) = rulebook().observe("rulebook::parse_name", 0);
        assert_eq!(rule, "unwrapped");
        assert_eq!(
            assertion,
            Assertion::Observed {
                unwrap: Some(".unwrap()".to_string())
            }
        );
        assert_eq!(
            (b.effects[0].actual.as_str(), b.effects[0].expected.as_str()),
            ("result", "\"AB\"")
        );
    }
}
