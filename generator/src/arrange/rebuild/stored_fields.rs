//! How to build an object — a constructor that stores its arguments: a public associated
//! function of the type whose every recorded call gave back an object whose fields are its
//! arguments as given, each argument one field (`Extent::new(start, end)`,
//! `ArrayVec::from_array_len(data, len)`), called with the fields of the state wanted. It
//! builds states no recorded call gave: an object made inside the crate with private fields
//! (the array inside a small vector, the window inside a pager), reached only as the receiver
//! of calls nested in other calls.
//!
//! What a constructor does with its arguments is read from what it did: every recorded call
//! must agree on which argument became which field, or the constructor is not used. The state
//! it builds is a hypothesis, so it is checked before the test acts where it can be observed,
//! and verification takes out a test whose arrangement did not give the recorded result.

use std::rc::Rc;

use carve_storage::{Call, Value};

use crate::act::target::Target;
use crate::arrange::context::{Ctx, Storing};
use crate::arrange::literal;
use crate::arrange::rebuild::producer::producers;
use crate::arrange::values::{returned_struct, same_state, strip_ref, OK_IN_THE_RECORDING};
use crate::arrange::wanted::{Answer, Wanted};
use crate::body::Binding;

/// The panic message's reason to unwrap a constructor's `Result`.
const OK_FOR_EVERY_CALL: &str = "every recorded call of it returned Ok";

/// The object wanted, made by a constructor that stores its arguments, given the fields of the
/// state wanted (see [`written`]).
pub(crate) fn rule(cx: &Ctx, b: &mut crate::arrange::builder::Builder, w: Wanted) -> Answer {
    let Some(expr) = written(cx, w.state) else {
        return Answer::Pass(None);
    };
    b.setup.push(Binding {
        var: w.var.to_string(),
        mutable: w.mutable,
        expr,
        repeat: 1,
        times: None,
    });
    Answer::Built { check: true }
}

/// A value of one of the crate's types with private fields written as a call of a constructor
/// that stores its fields, each argument a literal (`petgraph::graph::NodeIndex::<u32>::new(0usize)`):
/// how the rule builds an object, and how a replayed step passes one (`graph.add_edge(a, b,
/// 1.0)`). `None` when no such constructor is known or a field is no literal.
pub(crate) fn written(cx: &Ctx, value: &Value) -> Option<String> {
    written_avoiding(cx, value, None)
}

/// [`written`], by a constructor other than `avoid`: a test of a constructor never writes
/// the value it expects by calling that constructor (it could not fail).
pub(crate) fn written_avoiding(
    cx: &Ctx,
    value: &Value,
    avoid: Option<carve_storage::FunctionId>,
) -> Option<String> {
    let Value::Struct { ty, fields } = value else {
        return None;
    };
    let type_path = crate::read::types::strip_generics(ty);
    for s in storing(cx, type_path).iter() {
        let recorded = &cx.trace.calls[s.call];
        if Some(recorded.function) == avoid {
            continue;
        }
        let Some(Target::Callable(c)) = cx.targets.get(&recorded.function) else {
            continue;
        };
        if s.fields.len() != fields.len() {
            continue;
        }
        let args: Option<Vec<String>> = (recorded.args.iter().zip(&s.fields).zip(&c.api.params))
            .map(|((arg, &field), param)| {
                let given = as_argument(&fields[field].value, &arg.value);
                literal::render(&given, &param.ty, literal::Position::Arg)
                    .or_else(|_| literal::render_value(&given, false, cx.api))
                    .ok()
            })
            .collect();
        let (Some(args), Some(path)) = (args, instance_path(cx, recorded, value)) else {
            continue;
        };
        let unwrap = (recorded.ret.as_ref())
            .and_then(|r| returned_struct(cx, r, &path))
            .and_then(|(_, unwrap)| unwrap)
            .unwrap_or_default()
            .replace(OK_IN_THE_RECORDING, OK_FOR_EVERY_CALL);
        return Some(format!("{path}({}){unwrap}", args.join(", ")));
    }
    None
}

/// The constructors of `type_path` that store their arguments (see [`Storing`]), the latest
/// recorded first; worked out once per type.
pub(crate) fn storing(cx: &Ctx, type_path: &str) -> Rc<Vec<Storing>> {
    if let Some(found) = cx.stored_fields.borrow().get(type_path) {
        return Rc::clone(found);
    }
    // Per constructor, its latest call and where it put each argument; `None` once two of its
    // calls disagree or one did not store its arguments.
    let mut found: Vec<(carve_storage::FunctionId, Option<Storing>)> = Vec::new();
    for &(i, _) in &producers(cx, type_path).in_order {
        let call = &cx.trace.calls[i];
        let fields = stores(cx, call, type_path);
        match found.iter_mut().find(|(f, _)| *f == call.function) {
            Some((_, known)) => {
                if known.as_ref().map(|s| &s.fields) != fields.as_ref() {
                    *known = None;
                }
            }
            None => found.push((
                call.function,
                fields.map(|fields| Storing { call: i, fields }),
            )),
        }
    }
    let mut storing: Vec<Storing> = found.into_iter().filter_map(|(_, s)| s).collect();
    // Those that give the object itself first: nothing to unwrap (a stable sort).
    storing.sort_by_key(|s| {
        matches!(&cx.trace.calls[s.call].ret,
            Some(Value::Enum { ty, .. }) if ty.starts_with("core::"))
    });
    let storing = Rc::new(storing);
    cx.stored_fields
        .borrow_mut()
        .insert(type_path.to_string(), Rc::clone(&storing));
    storing
}

/// For a recorded call of an associated function of `type_path` with no receiver, below which
/// only the library's own code ran (no trait object, closure or read of the world to stand in
/// for), which gave back an object whose fields are its arguments, one each: the
/// field each argument became. `None` when some field is no argument, some argument no field, or
/// an argument's value is in two fields (which one it became cannot be told).
fn stores(cx: &Ctx, call: &Call, type_path: &str) -> Option<Vec<usize>> {
    let Some(Target::Callable(c)) = cx.targets.get(&call.function) else {
        return None;
    };
    if c.api.has_receiver
        || c.api.params.len() != call.args.len()
        || cx
            .below
            .get(&call.id)
            .is_some_and(|b| b.trait_calls || b.world || b.files || b.outside)
    {
        return None;
    }
    let (state, _) = returned_struct(cx, call.ret.as_ref()?, &c.call_path)?;
    let Value::Struct { ty, fields } = state else {
        return None;
    };
    let own = c.self_type.as_deref() == Some(type_path)
        || crate::read::types::strip_generics(ty) == type_path;
    if !own || fields.len() != call.args.len() {
        return None;
    }
    let mut taken = vec![false; fields.len()];
    let mut became = Vec::with_capacity(call.args.len());
    for arg in &call.args {
        let value = strip_ref(&arg.value);
        let mut same = (0..fields.len()).filter(|&j| stored(value, &fields[j].value));
        let (Some(j), None) = (same.next(), same.next()) else {
            return None;
        };
        if std::mem::replace(&mut taken[j], true) {
            return None;
        }
        became.push(j);
    }
    Some(became)
}

/// How to call the constructor of `recorded` for an object of the type `state` has: its path,
/// with the generic arguments of the recorded instance (`ArrayVec::<[u8; 10]>::from_array_len`)
/// made those of the state (`[i32; 10]`); `None` when the path does not spell them as the type
/// does.
fn instance_path(cx: &Ctx, recorded: &Call, state: &Value) -> Option<String> {
    let Some(Target::Callable(c)) = cx.targets.get(&recorded.function) else {
        return None;
    };
    let (made, _) = returned_struct(cx, recorded.ret.as_ref()?, &c.call_path)?;
    // As the call path writes them (`[String; 10]`, not DWARF's `[alloc::string::String; 10]`).
    let generics = |v: &Value| {
        let ty = crate::act::std_traits::std_spelling(v.type_name());
        ty.find('<').map(|at| ty[at..].to_string())
    };
    match (generics(made), generics(state)) {
        (from, to) if from == to => Some(c.call_path.clone()),
        (Some(from), Some(to)) => {
            let spelled = format!("::{from}");
            c.call_path
                .contains(&spelled)
                .then(|| c.call_path.replace(&spelled, &format!("::{to}")))
        }
        // The path names no instance: the arguments say which.
        (Some(_), None) | (None, Some(_)) => {
            (!c.call_path.contains("::<")).then(|| c.call_path.clone())
        }
        (None, None) => Some(c.call_path.clone()),
    }
}

/// Whether an argument's value is the value of a field: the same state, or the same integer
/// converted (`len: usize` kept in a `u16` field).
fn stored(arg: &Value, field: &Value) -> bool {
    match (integer(arg), integer(field)) {
        (Some(a), Some(f)) => a == f,
        _ => same_state(arg, field),
    }
}

/// The value of an integer, whatever its type.
fn integer(v: &Value) -> Option<i128> {
    match v {
        Value::Int { value, .. } => Some(*value),
        Value::Uint { value, .. } => i128::try_from(*value).ok(),
        _ => None,
    }
}

/// The field's value, given as the argument that became it: an integer in the argument's type.
fn as_argument(field: &Value, arg: &Value) -> Value {
    match (integer(field), arg) {
        (Some(n), Value::Int { ty, .. }) => Value::Int {
            ty: ty.clone(),
            value: n,
        },
        (Some(n), Value::Uint { ty, .. }) => Value::Uint {
            ty: ty.clone(),
            value: u128::try_from(n).unwrap_or_default(),
        },
        _ => field.clone(),
    }
}

#[cfg(test)]
mod tests {
    use crate::arrange::builder::Builder;
    use crate::arrange::wanted::Answer;
    use crate::testdata::rulebook;

    #[test]
    fn a_state_no_call_gave_is_made_by_the_constructor_that_stores_its_fields() {
        // `extent.len()` on the extent `widened_len` made at { start: 2, end: 11 }: `Extent::new` stored
        // its arguments as given in every recorded call, so it makes that state directly.
        let r = rulebook();
        let cx = r.cx();
        let mut b = Builder::default();
        let w = r.receiver("rulebook::Extent::len", 1, "rulebook::Extent");
        assert!(matches!(
            super::rule(&cx, &mut b, w),
            Answer::Built { check: true }
        ));
        let setup: Vec<&str> = b.setup.iter().map(|s| s.expr.as_str()).collect();
        assert_eq!(setup, ["rulebook::Extent::new(2u32, 11u32)"]);
    }

    #[test]
    fn a_value_with_private_fields_is_written_as_the_constructor_that_stores_them() {
        // The extent `widened_len` made, as a replayed step would pass it.
        let r = rulebook();
        let cx = r.cx();
        let state = crate::arrange::values::strip_ref(
            r.calls_of("rulebook::Extent::len")[1].arg("self").unwrap(),
        );
        assert_eq!(
            super::written(&cx, state).as_deref(),
            Some("rulebook::Extent::new(2u32, 11u32)")
        );
        // `Bounds::new` is no such constructor.
        let bounds = r.calls_of("rulebook::Bounds::width")[0]
            .arg("self")
            .unwrap();
        assert_eq!(
            super::written(&cx, crate::arrange::values::strip_ref(bounds)),
            None
        );
    }

    #[test]
    fn a_constructor_that_does_not_always_store_its_arguments_as_given_is_not_used() {
        // `Bounds::new(9, 4)` stored them the other way round from `Bounds::new(1, 3)`: which
        // argument becomes which field depends on the values, so it makes no state it was not
        // seen to make.
        let r = rulebook();
        let cx = r.cx();
        assert!(super::storing(&cx, "rulebook::Bounds").is_empty());
        assert_eq!(super::storing(&cx, "rulebook::Extent").len(), 1);
    }
}
