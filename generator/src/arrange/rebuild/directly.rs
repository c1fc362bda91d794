//! An object rebuilt directly: the recorded call that produced its state, a part of a value a
//! call returned, or a struct literal.

use crate::arrange::builder::Builder;
use crate::arrange::context::Ctx;
use crate::arrange::literal;
use crate::arrange::rebuild::part_of_returned::part_of_returned;
use crate::arrange::rebuild::producer::{constructed, producer_call, producers_in_order};
use crate::arrange::values::{dyn_addrs, same_state};
use crate::arrange::wanted::Wanted;
use crate::body::Binding;
use crate::reasons::RECEIVER_NOT_REBUILT;

/// An object in `state` from its recorded constructor, a part of a value a recorded call
/// returned, or a struct literal.
pub(crate) fn rebuild_directly(cx: &Ctx, b: &mut Builder, w: Wanted) -> Result<(), &'static str> {
    let Wanted {
        state,
        type_path,
        before,
        var,
        mutable,
        ..
    } = w;
    let mut state_dyns = Vec::new();
    dyn_addrs(state, &mut state_dyns);
    for i in producers_in_order(cx, type_path) {
        let ctor = &cx.trace.calls[i];
        if ctor.id >= before {
            continue;
        }
        let Some(built) = constructed(cx, ctor, type_path) else {
            continue;
        };
        if !same_state(built, state) {
            continue;
        }
        let Some(expr) = producer_call(cx, b, ctor, built, &state_dyns, before) else {
            continue;
        };
        b.arranged.push(ctor.id);
        b.setup.push(Binding {
            var: var.to_string(),
            mutable,
            expr,
            repeat: 1,
            times: None,
        });
        return Ok(());
    }
    if part_of_returned(cx, b, state, type_path, before, var, mutable) {
        return Ok(());
    }
    // No constructor: a struct literal, when every field is public and writable.
    if state_dyns.is_empty() {
        if let Ok(expr) = literal::render_value(state, false, cx.api) {
            b.setup.push(Binding {
                var: var.to_string(),
                mutable,
                expr,
                repeat: 1,
                times: None,
            });
            return Ok(());
        }
    }
    Err(RECEIVER_NOT_REBUILT)
}
