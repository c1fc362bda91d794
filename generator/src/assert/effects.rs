//! What a test checks of the objects a call changed (`&mut self`, `&mut` arguments): the same
//! observations that check an arrangement, after the call.

use crate::arrange::builder::Builder;
use crate::arrange::check::observations;
use crate::arrange::context::Ctx;

use carve_storage::Value;
/// Assertions on the state of `var` after the call: public fields and getters
/// (`fn field(&self) -> T`).
pub(crate) fn effects(cx: &Ctx, b: &mut Builder, var: &str, after: &Value, type_path: &str) {
    let observed = observations(cx, var, after, type_path);
    b.effects.extend(observed);
}
