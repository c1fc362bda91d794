//! Calls on a receiver no public path reaches: a private field of the object a public call was
//! made on (`IndexSet::contains` calling `self.map.contains_key(..)`, which calls
//! `self.get_index_of(..)` in turn). No test outside the crate can hold that receiver, so such a
//! call is carved through the public call around it, as private helpers are: when that call's
//! test passes, it made this call again on the same state (see `Summary::credit_replayed`).
//!
//! Likewise an object a public call is still building (`collect()`: `from_iter` makes a vector
//! and fills it with `extend`, `push`...; `into_vec` drains an `IntoIter` it made): no test can
//! hold it before the call returns it, and the calls on it inside are that call's doing, made
//! again by its test ([`building_call`]).

use carve_storage::{Call, CallId, Value};

use crate::act::target::Target;
use crate::arrange::context::Ctx;
use crate::arrange::values::{same_state, strip_ref};

/// How many calls up the receiver may stay the same object before the call holding it as a
/// private field.
const MAX_UP: usize = 8;

/// The public call whose receiver holds `call`'s receiver as a private field (going up through
/// calls on the same object first), when there is one.
pub fn holding_call(cx: &Ctx, call: &Call) -> Option<CallId> {
    let own = call.object("self");
    let state = strip_ref(call.arg("self")?);
    let mut at = call.parent;
    for _ in 0..MAX_UP {
        let outer = cx.call_by_id(at?)?;
        let outer_self = strip_ref(outer.arg("self")?);
        // A method of the same object calling another (`contains_key` → `get_index_of`).
        if own.is_some() && outer.object("self") == own {
            at = outer.parent;
            continue;
        }
        let Value::Struct { ty, fields } = outer_self else {
            return None;
        };
        let api_ty = cx.api.public_type(crate::read::types::strip_generics(ty))?;
        let private_part = fields.iter().any(|f| {
            let name = f.name.strip_prefix("__").unwrap_or(&f.name);
            same_state(&f.value, state) && !api_ty.fields.iter().any(|a| a.public && a.name == name)
        });
        let public_call = matches!(cx.targets.get(&outer.function), Some(Target::Callable(_)));
        return (private_part && public_call).then_some(outer.id);
    }
    None
}

/// The public call that made `call`'s receiver and has not returned yet (the nearest call
/// around `call` whose calls below hold the receiver's maker), when there is one. A receiver
/// with no recorded maker (made by a function that is no constructor, or not traced:
/// `into_iter()` inside `into_vec`) was made where it was first seen.
pub fn building_call(cx: &Ctx, call: &Call) -> Option<CallId> {
    let own = call.object("self")?;
    let maker = match cx.trace.objects.iter().find(|o| o.id == own)?.created_by {
        Some(maker) => maker,
        None => {
            let seen = |c: &&Call| c.objects.iter().any(|o| o.object == own);
            cx.trace.calls.iter().find(seen)?.id
        }
    };
    // The calls the maker ran inside, innermost first.
    let mut around_maker = Vec::new();
    let mut at = cx.call_by_id(maker)?.parent;
    while let Some(id) = at {
        if around_maker.len() > MAX_UP * 8 {
            return None;
        }
        around_maker.push(id);
        at = cx.call_by_id(id)?.parent;
    }
    let mut at = call.parent;
    for _ in 0..MAX_UP * 8 {
        let outer = cx.call_by_id(at?)?;
        if around_maker.contains(&outer.id) {
            let public_call = matches!(cx.targets.get(&outer.function), Some(Target::Callable(_)));
            return public_call.then_some(outer.id);
        }
        at = outer.parent;
    }
    None
}
