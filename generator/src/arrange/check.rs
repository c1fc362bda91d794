//! What a test can observe of an object's state: `assert_eq!`s on its public fields and
//! getters, or its derived `Debug` output. Arrange checks a rebuilt object with it before the
//! test acts; assert checks the effects of the call with it after.

use std::rc::Rc;

use carve_storage::Value;

use crate::act::target::Target;
use crate::arrange::context::{cached, Ctx};
use crate::arrange::debug_repr::debug_repr;
use crate::arrange::literal;
use crate::arrange::literal::Position;
use crate::arrange::values::{same_state, strip_ref};
use crate::body::Effect;

/// Whether the recording shows getter `getter` of `type_path` returning something other than
/// field `field` of its receiver (SmallVec's `capacity()` is not its `capacity` field, which
/// holds the length while the items are inline): a field's namesake is its getter only until a
/// recorded call says otherwise.
pub(crate) fn getter_contradicted(cx: &Ctx, type_path: &str, getter: &str, field: &str) -> bool {
    let calls = getter_calls(cx, type_path, getter);
    calls.iter().any(|&i| {
        let call = &cx.trace.calls[i];
        let (Some(recv), Some(ret)) = (call.arg("self"), call.ret.as_ref()) else {
            return false;
        };
        let Value::Struct { fields, .. } = strip_ref(recv) else {
            return false;
        };
        fields
            .iter()
            .find(|f| f.name == field)
            .is_some_and(|f| !same_state(strip_ref(&f.value), strip_ref(ret)))
    })
}

/// The recorded calls (indices in the trace) of method `getter` of `type_path`.
pub(crate) fn getter_calls(cx: &Ctx, type_path: &str, getter: &str) -> Rc<Vec<usize>> {
    cached(&cx.getter_calls, &format!("{type_path}::{getter}"), || {
        (0..cx.trace.calls.len())
            .filter(|&i| {
                matches!(cx.targets.get(&cx.trace.calls[i].function),
                    Some(Target::Callable(c)) if c.api.has_receiver
                        && c.api.ident == getter
                        && c.self_type.as_deref() == Some(type_path))
            })
            .collect()
    })
}

/// What a test can observe of `var` in `state`: `assert_eq!`s on its public fields and getters,
/// or, when some field shows through neither, on its derived `Debug` output as a whole.
pub(crate) fn observations(cx: &Ctx, var: &str, state: &Value, type_path: &str) -> Vec<Effect> {
    let Value::Struct { fields, .. } = strip_ref(state) else {
        return Vec::new();
    };
    let Some(ty) = cx.api.public_type(type_path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut hidden = 0;
    for field in fields {
        let declared = ty.fields.iter().find(|f| f.name == field.name);
        let getter = ty.functions.get(&field.name).filter(|f| {
            f.public
                && f.has_receiver
                && !f.mut_receiver
                && f.params.is_empty()
                && f.blocker.is_none()
                && !getter_contradicted(cx, type_path, &f.ident, &field.name)
        });
        let (actual, expected) = if let Some(g) = getter {
            let expected = literal::render(&field.value, &g.ret, Position::Expected)
                .or_else(|_| literal::render_value(&field.value, true, cx.api));
            (format!("{var}.{}()", g.ident), expected)
        } else if declared.is_some_and(|f| f.public) {
            (
                format!("{var}.{}", field.name),
                literal::render_value(&field.value, true, cx.api),
            )
        } else {
            hidden += 1;
            continue;
        };
        match expected {
            Ok(expected) => out.push(Effect {
                actual,
                expected,
                message: None,
                observe: None,
            }),
            Err(_) => hidden += 1,
        }
    }
    if hidden > 0 {
        if let Some(repr) = debug_repr(strip_ref(state), cx.api) {
            return vec![Effect {
                actual: format!("format!(\"{{:?}}\", {var})"),
                expected: crate::syntax::str_lit(&repr),
                message: None,
                observe: None,
            }];
        }
    }
    out
}
