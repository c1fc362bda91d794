//! How to build the receiver of a method call: rebuilt in its recorded state (by the rules of
//! `rebuild/`) into a new variable the call is made on.

use carve_storage::{Arg, Call, Value};

use crate::act::target::Callable;
use crate::arrange::builder::Builder;
use crate::arrange::context::Ctx;
use crate::arrange::values::strip_ref;
use crate::arrange::wanted::Wanted;
use crate::naming;
use crate::reasons::{UNDECODED, UNSUPPORTED_TYPE};

/// What a test calls: `var.method` on a rebuilt receiver (with the variable and a slug of its
/// state), or the function's path.
pub(crate) struct Receiver {
    pub(crate) callee: String,
    pub(crate) var: Option<String>,
    pub(crate) state_slug: Option<String>,
}

/// Rebuilds the receiver of `call` when `target` is a method (taking `self` out of `args`) and
/// gives what the test calls.
pub(crate) fn arrange(
    cx: &Ctx,
    b: &mut Builder,
    call: &Call,
    target: &Callable,
    args: &mut Vec<&Arg>,
) -> Result<Receiver, &'static str> {
    let api = &target.api;
    if !api.has_receiver {
        return Ok(Receiver {
            callee: target.call_path.clone(),
            var: None,
            state_slug: None,
        });
    }
    let Some(pos) = args.iter().position(|a| a.name == "self") else {
        return Err(UNDECODED);
    };
    let self_arg = args.remove(pos);
    let state_slug = state_slug(strip_ref(&self_arg.value));
    let Some(self_type) = target.self_type.as_deref() else {
        return Err(UNSUPPORTED_TYPE);
    };
    let short = self_type.rsplit("::").next().unwrap_or(self_type);
    let var = b.fresh(short);
    cx.rebuild(
        b,
        Wanted {
            state: strip_ref(&self_arg.value),
            object: call.object("self"),
            type_path: self_type,
            before: call.id,
            var: &var,
            mutable: api.mut_receiver,
        },
    )?;
    Ok(Receiver {
        callee: format!("{var}.{}", api.ident),
        var: Some(var),
        state_slug,
    })
}

/// `src_1_2_pos_5`: the receiver's first two scalar or string fields, naming a test apart from
/// others that call the same method with the same arguments on another state.
pub(crate) fn state_slug(state: &Value) -> Option<String> {
    let Value::Struct { fields, .. } = state else {
        return None;
    };
    let parts: Vec<String> = fields
        .iter()
        .filter(|f| f.value.is_scalar_or_string())
        .take(2)
        .map(|f| format!("{}_{}", f.name, naming::value_slug(&f.value)))
        .collect();
    (!parts.is_empty()).then(|| parts.join("_"))
}
