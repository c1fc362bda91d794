//! What a test checks of the objects a call changed (`&mut self`, `&mut` arguments): the same
//! observations that check an arrangement, after the call, and their other cheap getters too
//! (`assert/getters.rs`).

use carve_storage::{Call, Value};

use crate::act::target::Callable;
use crate::arrange::builder::Builder;
use crate::arrange::check::observations;
use crate::arrange::context::Ctx;
use crate::arrange::values::strip_ref;
use crate::assert::getters::{debug_probe, other_getters, probed_getters};
use crate::body::Effect;

/// Assertions on the state of `var` after the call: public fields and getters
/// (`fn field(&self) -> T`).
pub(crate) fn effects(cx: &Ctx, b: &mut Builder, var: &str, after: &Value, type_path: &str) {
    let observed = observations(cx, var, after, type_path);
    b.effects.extend(observed);
}

/// The effects of `call` a test checks after it: the fields and getters of its `&mut self`
/// receiver (in `receiver`) and of its `&mut` object arguments (`objects`: parameter, variable).
pub(crate) fn of_call(
    cx: &Ctx,
    b: &mut Builder,
    call: &Call,
    target: &Callable,
    receiver: Option<&str>,
    objects: &[(String, String)],
) {
    let type_path = target.self_type.as_deref().unwrap_or("");
    if b.after_drop {
        // Recorded before the result dropped: only what this build shows after it.
        if let (Some(var), Some(after), false) =
            (receiver, call.after("self"), cx.weak_oracles.get())
        {
            b.effects.extend(probed_getters(cx, var, type_path));
            b.effects.extend(debug_probe(cx, var, after, type_path));
        }
        return;
    }
    if let (Some(var), true) = (receiver, target.api.mut_receiver) {
        if let Some(after) = call.after("self") {
            let checked = b.effects.len();
            effects(cx, b, var, after, type_path);
            // Parts no field check shows (an enum's, private fields'): its `Debug` text.
            let hidden = match strip_ref(after) {
                Value::Struct { fields, .. } => fields.len() > b.effects.len() - checked,
                Value::Enum { .. } => true,
                _ => false,
            };
            getters(cx, b, var, strip_ref(after), type_path);
            if hidden && !cx.weak_oracles.get() {
                b.effects.extend(debug_probe(cx, var, after, type_path));
            }
        }
    }
    for (name, var) in objects {
        if let Some(after) = call.after(name) {
            if !matches!(strip_ref(after), Value::Struct { .. }) {
                b.effects.extend(whole(cx, var, after));
                continue;
            }
            let ty = crate::read::types::strip_generics(strip_ref(after).type_name()).to_string();
            effects(cx, b, var, after, &ty);
            getters(cx, b, var, strip_ref(after), &ty);
        }
    }
}

/// A `&mut` argument that is not a struct (a buffer, a number, a text) checked whole: `var`
/// holds the value the test passed (`let mut out = [0u8; 4]` for `&mut out[..]`), compared
/// with what the call left in it.
fn whole(cx: &Ctx, var: &str, after: &Value) -> Option<Effect> {
    let after = strip_ref(after);
    let expected = match after {
        Value::Str { value, .. } => crate::syntax::str_lit(value),
        _ => crate::arrange::literal::render_value(after, true, cx.api).ok()?,
    };
    // The value as the variable holds it: `[2u32, 4u32]`, not the `&mut [..][..]` passed.
    let expected = match crate::arrange::args::borrowed::borrowed_temporary(&expected) {
        Some((_, value, _)) => value.to_string(),
        None => expected,
    };
    Some(Effect {
        actual: var.to_string(),
        expected,
        message: None,
        observe: None,
    })
}

/// Checks of the cheap getters of `var` (holding `after`, of `type_path`) that are not its
/// fields' namesakes (`assert/getters.rs`).
fn getters(cx: &Ctx, b: &mut Builder, var: &str, after: &Value, type_path: &str) {
    if !cx.weak_oracles.get() {
        b.effects.extend(other_getters(cx, var, after, type_path));
    }
}

#[cfg(test)]
mod tests {
    use crate::arrange::builder::Builder;
    use crate::body::Effect;
    use crate::testdata::{rows, rulebook};

    /// The checks after the first recorded call of `path`.
    fn effects_of(path: &str, receiver: Option<&str>, objects: &[(String, String)]) -> Vec<Effect> {
        let rb = rulebook();
        let mut b = Builder::default();
        let call = rb.calls_of(path)[0];
        super::of_call(&rb.cx(), &mut b, call, rb.callable(path), receiver, objects);
        b.effects
    }

    #[test]
    fn a_changed_receiver_is_checked_by_its_fields_and_its_other_getters() {
        // `c.bump()`, the first: `total` is a public field with its getter, `is_even()` a
        // getter the run never called (`check()` runs a verification: no getter).
        let effects = effects_of("rulebook::Counter::bump", Some("counter"), &[]);
        assert_eq!(
            rows(&effects),
            [
                ("counter.total()", "2u32", None),
                ("counter.is_even()", "", Some("bool"))
            ]
        );
    }

    #[test]
    fn a_changed_argument_is_checked_by_its_fields_and_its_other_getters() {
        // `add_to(&mut tally, 5)`: the tally after, at 6.
        let objects = [("tally".to_string(), "tally".to_string())];
        let effects = effects_of("rulebook::add_to", None, &objects);
        assert_eq!(
            rows(&effects),
            [
                ("tally.count", "6u32", None),
                ("tally.is_even()", "", Some("bool"))
            ]
        );
    }
}
