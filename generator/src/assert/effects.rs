//! What a test checks of the objects a call changed (`&mut self`, `&mut` arguments): the same
//! observations that check an arrangement, after the call.

use carve_storage::{Call, Value};

use crate::act::target::Callable;
use crate::arrange::builder::Builder;
use crate::arrange::check::observations;
use crate::arrange::context::Ctx;
use crate::arrange::values::strip_ref;

/// Assertions on the state of `var` after the call: public fields and getters
/// (`fn field(&self) -> T`).
pub(crate) fn effects(cx: &Ctx, b: &mut Builder, var: &str, after: &Value, type_path: &str) {
    let observed = observations(cx, var, after, type_path);
    b.effects.extend(observed);
}

/// The effects of `call` a test checks after it: the fields of its `&mut self` receiver (in
/// `receiver`) and of its `&mut` object arguments (`objects`: parameter, variable).
pub(crate) fn of_call(
    cx: &Ctx,
    b: &mut Builder,
    call: &Call,
    target: &Callable,
    receiver: Option<&str>,
    objects: &[(String, String)],
) {
    if let (Some(var), true) = (receiver, target.api.mut_receiver) {
        if let Some(after) = call.after("self") {
            effects(cx, b, var, after, target.self_type.as_deref().unwrap_or(""));
        }
    }
    for (name, var) in objects {
        if let Some(after) = call.after(name) {
            let ty = crate::read::types::strip_generics(strip_ref(after).type_name()).to_string();
            effects(cx, b, var, after, &ty);
        }
    }
}
