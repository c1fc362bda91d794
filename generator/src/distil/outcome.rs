//! What a recorded call ended in, as a distinct outcome of its function: the variant it
//! returned (`Ok`, `None`, an enum's `Plus`; `Ok(Some)` one level down), `true` or `false`,
//! the whole error of an `Err` (its kind and message), or the panic and its message. Every
//! other value is the outcome `returned`: two calls of a function that both return a number
//! are told apart by the lines they run, not here.

use carve_storage::{Call, Outcome, Value};

/// The outcome of `call`, `None` when it did not end (unwound, unfinished).
pub(crate) fn of(call: &Call) -> Option<String> {
    match &call.outcome {
        Outcome::Returned => Some(
            call.ret
                .as_ref()
                .and_then(returned)
                .unwrap_or_else(|| "returned".to_string()),
        ),
        Outcome::Panicked { message } => Some(format!(
            "panicked: {}",
            message.as_deref().unwrap_or("(no message recorded)")
        )),
        Outcome::Unwound | Outcome::Unfinished => None,
    }
}

/// The outcome of `call` and, for a call that returned with `&mut` effects recorded (`self`,
/// `&mut` arguments), whether it changed them: `returned; changed self` or `returned; left
/// self`. A `reserve` that grew the buffer and one that found it large enough end alike and
/// run lines other tests also run; only this tells them apart. Nothing is added where a value
/// was not read whole (equal in what was read says nothing).
pub(crate) fn with_effects(call: &Call) -> Option<String> {
    let outcome = of(call)?;
    let Some(changed) = changed(call) else {
        return Some(outcome);
    };
    let names: Vec<&str> = call.after.iter().map(|a| a.name.as_str()).collect();
    Some(if changed.is_empty() {
        format!("{outcome}; left {}", names.join(", "))
    } else {
        format!("{outcome}; changed {}", changed.join(", "))
    })
}

/// The `self` and `&mut` arguments a call that returned changed what they refer to (none:
/// it left them all as they were); `None` where it recorded no such effect, did not return,
/// or one was not read whole (equal in what was read says nothing).
pub(crate) fn changed(call: &Call) -> Option<Vec<&str>> {
    if call.outcome != Outcome::Returned || call.after.is_empty() {
        return None;
    }
    let mut changed = Vec::new();
    for after in &call.after {
        let before = call.arg(&after.name)?;
        // At entry the argument is the reference; after, what it refers to.
        let (before, now) = (behind(before), behind(&after.value));
        if before != now {
            changed.push(after.name.as_str());
        } else if !before.is_exact() {
            return None;
        }
    }
    Some(changed)
}

/// What `value` refers to, through every reference.
fn behind(value: &Value) -> &Value {
    match value {
        Value::Ref { target, .. } => behind(target),
        v => v,
    }
}

/// The outcome a returned value stands for, when it has one.
fn returned(value: &Value) -> Option<String> {
    match value {
        Value::Bool { value } => Some(value.to_string()),
        Value::Ref { target, .. } => returned(target),
        Value::Enum {
            variant, fields, ..
        } if variant == "Err" => {
            let mut error = String::new();
            for f in fields {
                text(&f.value, 0, &mut error);
            }
            Some(format!("Err({error})"))
        }
        Value::Enum {
            variant, fields, ..
        } => match fields.as_slice() {
            [only] => Some(match returned(&only.value) {
                Some(inner) => format!("{variant}({inner})"),
                None => variant.clone(),
            }),
            _ => Some(variant.clone()),
        },
        _ => None,
    }
}

/// How deep `text` goes into an error.
const MAX_DEPTH: usize = 6;

/// An error value as text, without what changes from run to run (addresses) or says nothing
/// of the error (type paths): `Parse("unexpected `x`", 3)`.
fn text(value: &Value, depth: usize, out: &mut String) {
    if depth > MAX_DEPTH {
        out.push('…');
        return;
    }
    let parts = |fields: &mut dyn Iterator<Item = &Value>, out: &mut String| {
        for (i, v) in fields.enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            text(v, depth + 1, out);
        }
    };
    match value {
        Value::Unit => out.push_str("()"),
        Value::Bool { value } => out.push_str(&value.to_string()),
        Value::Int { value, .. } => out.push_str(&value.to_string()),
        Value::Uint { value, .. } => out.push_str(&value.to_string()),
        Value::Float { bits, .. } => out.push_str(&format!("{bits:#x}")),
        Value::Char { value } => out.push_str(&format!("{value:?}")),
        Value::Str { value, .. } => out.push_str(&format!("{value:?}")),
        Value::Function { path, .. } => out.push_str(path),
        Value::Ref { target, .. } => text(target, depth + 1, out),
        Value::Enum {
            variant, fields, ..
        } => {
            out.push_str(variant);
            if !fields.is_empty() {
                out.push('(');
                parts(&mut fields.iter().map(|f| &f.value), out);
                out.push(')');
            }
        }
        Value::Struct { fields, .. } => {
            out.push('{');
            parts(&mut fields.iter().map(|f| &f.value), out);
            out.push('}');
        }
        Value::Tuple { elems, .. } | Value::Seq { elems, .. } => {
            out.push('[');
            parts(&mut elems.iter(), out);
            out.push(']');
        }
        Value::Pointer { .. } | Value::Opaque { .. } | Value::Unavailable { .. } => out.push('_'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distil::test_call as call;
    use carve_storage::Field;

    fn variant(name: &str, fields: Vec<Value>) -> Value {
        Value::Enum {
            ty: "T".into(),
            variant: name.into(),
            fields: fields
                .into_iter()
                .enumerate()
                .map(|(i, v)| Field::new(format!("__{i}"), v))
                .collect(),
        }
    }

    fn returning(v: Value) -> Option<String> {
        of(&call(Outcome::Returned, Some(v)))
    }

    #[test]
    fn variants_booleans_errors_and_panics_are_outcomes_and_numbers_are_not() {
        let n = Value::Uint {
            ty: "u32".into(),
            value: 7,
        };
        assert_eq!(returning(n.clone()).as_deref(), Some("returned"));
        assert_eq!(
            returning(variant("Some", vec![n.clone()])).as_deref(),
            Some("Some")
        );
        assert_eq!(returning(variant("None", vec![])).as_deref(), Some("None"));
        assert_eq!(
            returning(variant("Ok", vec![variant("None", vec![])])).as_deref(),
            Some("Ok(None)")
        );
        assert_eq!(
            returning(Value::Bool { value: false }).as_deref(),
            Some("false")
        );
        let message = Value::Str {
            ty: "&str".into(),
            value: "empty input".into(),
            truncated: false,
        };
        assert_eq!(
            returning(variant("Err", vec![variant("Empty", vec![message, n])])).as_deref(),
            Some("Err(Empty(\"empty input\", 7))")
        );
        let panicked = call(
            Outcome::Panicked {
                message: Some("divide by zero".into()),
            },
            None,
        );
        assert_eq!(of(&panicked).as_deref(), Some("panicked: divide by zero"));
        assert_eq!(of(&call(Outcome::Unfinished, None)), None);
    }

    #[test]
    fn a_call_that_changed_its_receiver_and_one_that_left_it_are_two_outcomes() {
        let cap = |n: u128| Value::Struct {
            ty: "Buf".into(),
            fields: vec![Field::new(
                "cap",
                Value::Uint {
                    ty: "usize".into(),
                    value: n,
                },
            )],
        };
        let reserve = |before: Value, after: Value| {
            let mut c = call(Outcome::Returned, None);
            c.args = vec![carve_storage::Arg {
                name: "self".into(),
                value: Value::Ref {
                    ty: "&mut Buf".into(),
                    addr: 0x10,
                    target: Box::new(before),
                },
            }];
            c.after = vec![carve_storage::Arg {
                name: "self".into(),
                value: after,
            }];
            c
        };
        let grew = with_effects(&reserve(cap(4), cap(8)));
        assert_eq!(grew.as_deref(), Some("returned; changed self"));
        let left = with_effects(&reserve(cap(4), cap(4)));
        assert_eq!(left.as_deref(), Some("returned; left self"));
        // Equal in what was read of it: not known to be left as it was.
        let unread = Value::Unavailable {
            ty: "Buf".into(),
            reason: "x".into(),
        };
        let unknown = with_effects(&reserve(unread.clone(), unread));
        assert_eq!(unknown.as_deref(), Some("returned"));
        // No `&mut` effect recorded: the outcome alone.
        assert_eq!(
            with_effects(&call(Outcome::Returned, None)).as_deref(),
            Some("returned")
        );
    }

    #[test]
    fn an_error_behind_a_reference_is_the_same_outcome_wherever_it_lies() {
        let at = |addr| Value::Ref {
            ty: "&E".into(),
            addr,
            target: Box::new(variant("Err", vec![variant("Bad", vec![])])),
        };
        assert_eq!(returning(at(0x10)), returning(at(0x20)));
        assert_eq!(returning(at(0x10)).as_deref(), Some("Err(Bad)"));
    }
}
