//! The `Display` texts a recording holds, by the state they were written from.

use carve_storage::{Trace, Value};

use crate::act::display::written;

/// The `Display` texts a recording holds, by the state they were written from: a value of a
/// type without `PartialEq` is observed by the text of an equal value (same type, same
/// recorded fields, read exactly), `assert_eq!(size.display().to_string(), "1.0 kB")`.
#[derive(Debug, Default)]
pub struct Texts {
    /// (type, state) of each `self` a `Display::fmt` wrote a text from, the text and its spec;
    /// the first with default options is preferred.
    by_state: Vec<(Value, String, Option<String>)>,
}

impl Texts {
    pub fn new(trace: &Trace) -> Texts {
        let mut by_state: Vec<(Value, String, Option<String>)> = Vec::new();
        for call in &trace.calls {
            let Some(f) = trace.function(call.function) else {
                continue;
            };
            if !is_display_fmt(&f.path) {
                continue;
            }
            let Some(this) = call.arg("self") else {
                continue;
            };
            let state = match this {
                Value::Ref { target, .. } => target.as_ref(),
                other => other,
            };
            if !state.is_exact() {
                continue;
            }
            let Ok((text, spec)) = written(call) else {
                continue;
            };
            let known = by_state.iter_mut().find(|(s, ..)| same_state(s, state));
            match known {
                Some(entry) if entry.2.is_some() && spec.is_none() => {
                    *entry = (state.clone(), text, None);
                }
                Some(_) => {}
                None => by_state.push((state.clone(), text, spec)),
            }
        }
        Texts { by_state }
    }

    /// The check of `value` (in variable `var`) by the text an equal value was displayed as:
    /// (actual expression, expected literal, the text).
    pub fn check(&self, var: &str, value: &Value) -> Option<(String, String, &str)> {
        let value = match value {
            Value::Ref { target, .. } => target.as_ref(),
            other => other,
        };
        if !value.is_exact() {
            return None;
        }
        let (_, text, spec) = self.by_state.iter().find(|(s, ..)| same_state(s, value))?;
        let actual = match spec {
            None => format!("{var}.to_string()"),
            Some(spec) => format!("format!({}, {var})", crate::syntax::str_lit(spec)),
        };
        Some((actual, crate::syntax::str_lit(text), text))
    }
}

/// `<T as core::fmt::Display>::fmt`.
pub(crate) fn is_display_fmt(path: &str) -> bool {
    path.ends_with(" as core::fmt::Display>::fmt")
}

/// Equal recorded values, addresses of followed references aside (their targets are compared).
pub(crate) fn same_state(a: &Value, b: &Value) -> bool {
    use carve_storage::Field;
    let fields = |x: &[Field], y: &[Field]| {
        x.len() == y.len()
            && x.iter()
                .zip(y)
                .all(|(f, g)| f.name == g.name && same_state(&f.value, &g.value))
    };
    let elems = |x: &[Value], y: &[Value]| {
        x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_state(v, w))
    };
    match (a, b) {
        (
            Value::Ref {
                ty: t, target: x, ..
            },
            Value::Ref {
                ty: u, target: y, ..
            },
        ) => t == u && same_state(x, y),
        (Value::Struct { ty: t, fields: x }, Value::Struct { ty: u, fields: y }) => {
            t == u && fields(x, y)
        }
        (
            Value::Enum {
                ty: t,
                variant: v,
                fields: x,
            },
            Value::Enum {
                ty: u,
                variant: w,
                fields: y,
            },
        ) => t == u && v == w && fields(x, y),
        (Value::Tuple { ty: t, elems: x }, Value::Tuple { ty: u, elems: y }) => {
            t == u && elems(x, y)
        }
        (
            Value::Seq {
                ty: t, elems: x, ..
            },
            Value::Seq {
                ty: u, elems: y, ..
            },
        ) => t == u && elems(x, y),
        _ => a == b,
    }
}
