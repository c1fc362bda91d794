//! How to build an object — its producer: the recorded public call that gave an object in the
//! state wanted (a constructor, a builder step, a method of another rebuilt object, the item
//! `iter.next()` gave), made again with its receiver and object arguments rebuilt in turn.

use std::collections::HashMap;
use std::rc::Rc;

use carve_storage::{Call, CallId, Outcome, Value};

use crate::act::target::Target;
use crate::arrange::args::{self, Place, Site};
use crate::arrange::builder::{mark, undo, Builder, MAX_PRODUCER_DEPTH};
use crate::arrange::context::{reads_unbuilt_world, ByStateKey, Ctx, Producers};
use crate::arrange::mocks::interactions;
use crate::arrange::values::{dyn_addrs, returned_struct, same_state, state_key, strip_ref};
use crate::arrange::wanted::Wanted;
use crate::body::Binding;

/// The state of the `type_path` object a recorded producer call gave back: a constructor-like
/// associated function of the type (returning `T`, `Option<T>` or `Result<T, E>`), or any public
/// call whose result is a `T` (a free function, a method of another object such as
/// `size.display()`, a builder step `quoter.allow_nul(true)`, the item `iter.next()` gave).
pub(crate) fn constructed<'t>(cx: &Ctx<'t>, ctor: &'t Call, type_path: &str) -> Option<&'t Value> {
    if ctor.outcome != Outcome::Returned {
        return None;
    }
    let Some(Target::Callable(c)) = cx.targets.get(&ctor.function) else {
        return None;
    };
    // A `&mut self` producer is one too, whether it left its receiver as it was (`map.entry(k)`)
    // or moved it on (`iter.next()`): [`producer_receiver`] rebuilds the receiver in the state
    // the call found it in, so the call gives the same value again.
    if reads_unbuilt_world(cx, ctor) {
        return None;
    }
    let (state, _) = returned_struct(cx, ctor.ret.as_ref()?, &c.call_path)?;
    let own_ctor = !c.api.has_receiver && c.self_type.as_deref() == Some(type_path);
    let produces = matches!(state, Value::Struct { ty, .. } | Value::Enum { ty, .. }
        if crate::read::types::strip_generics(ty) == type_path);
    (own_ctor || produces).then_some(state)
}

/// The recorded producers of `type_path` objects (indices into the trace's calls, see
/// [`constructed`]), the latest first, the type's own (inherent) ones before trait ones
/// (`PaperLedger::new()` rather than `<PaperLedger as Default>::default()`), each with the key
/// of the state it gave; worked out once per type.
pub(crate) fn producers(cx: &Ctx, type_path: &str) -> Rc<Producers> {
    if let Some(found) = cx.producers.borrow().get(type_path) {
        return Rc::clone(found);
    }
    let via_trait = |i: usize| {
        matches!(cx.targets.get(&cx.trace.calls[i].function),
            Some(Target::Callable(c)) if c.via_trait.is_some())
    };
    let mut made: Vec<(usize, u64, &Value)> = (0..cx.trace.calls.len())
        .rev()
        .filter_map(|i| {
            constructed(cx, &cx.trace.calls[i], type_path).map(|state| (i, state_key(state), state))
        })
        .collect();
    // A stable sort: the latest first within each kind.
    made.sort_by_key(|&(i, ..)| via_trait(i));
    let mut by_key = ByStateKey::new();
    // Classes of equal states: compared only within a key.
    let mut class = Vec::with_capacity(made.len());
    let mut classes: HashMap<u64, Vec<(&Value, usize)>> = HashMap::new();
    let mut count = 0;
    for &(i, key, state) in &made {
        by_key.entry(key).or_default().push(i);
        let alike = classes.entry(key).or_default();
        match alike.iter().find(|(other, _)| same_state(state, other)) {
            Some(&(_, c)) => class.push(c),
            None => {
                alike.push((state, count));
                class.push(count);
                count += 1;
            }
        }
    }
    let in_order = made.iter().map(|&(i, key, _)| (i, key)).collect();
    let made = Rc::new(Producers {
        in_order,
        by_key,
        class,
        classes: count,
    });
    cx.producers
        .borrow_mut()
        .insert(type_path.to_string(), Rc::clone(&made));
    made
}

/// Rebuilds the receiver of producer method call `ctor` (made before `before`) into a new
/// variable, as it was when the call was made; `None` when it cannot be rebuilt.
pub(crate) fn producer_receiver(
    cx: &Ctx,
    b: &mut Builder,
    ctor: &Call,
    before: CallId,
) -> Option<String> {
    if b.producer_depth >= MAX_PRODUCER_DEPTH || ctor.id >= before {
        return None;
    }
    let recv = ctor.args.iter().find(|a| a.name == "self")?;
    let state = strip_ref(&recv.value);
    let Value::Struct { ty, .. } = state else {
        return None;
    };
    let recv_type = crate::read::types::strip_generics(ty).to_string();
    let var = b.fresh(recv_type.rsplit("::").next().unwrap_or("receiver"));
    let mutable = matches!(cx.targets.get(&ctor.function),
        Some(Target::Callable(c)) if c.api.mut_receiver);
    b.producer_depth += 1;
    let object = ctor.object("self");
    let wanted = Wanted {
        state,
        object,
        type_path: &recv_type,
        before: ctor.id,
        var: &var,
        mutable,
    };
    let rebuilt = cx.rebuild(b, wanted);
    b.producer_depth -= 1;
    match rebuilt {
        Ok(()) => Some(var),
        Err(_) => {
            b.vars.remove(&var);
            None
        }
    }
}

/// `callee(args).unwrap()`: recorded producer call `ctor` written again, its receiver and object
/// arguments rebuilt first (their bindings added to `b`), the trait objects it got as mocks
/// answering what it asked of them. `built` is the value it gave, `state_dyns` the trait objects
/// of the state wanted (where its mocks stand). `None`, with `b` as it was, when some part
/// cannot be written.
pub(crate) fn producer_call(
    cx: &Ctx,
    b: &mut Builder,
    ctor: &Call,
    built: &Value,
    state_dyns: &[(String, u64)],
    before: CallId,
) -> Option<String> {
    let replayed_before = b.replayed.clone();
    let expr = producer_call_expr(cx, b, ctor, built, state_dyns, before);
    match expr {
        Some(_) => {
            b.replayed.insert(ctor.id.0);
        }
        // What a failed attempt replayed is not part of the test.
        None => b.replayed = replayed_before,
    }
    expr
}

/// The expression of [`producer_call`].
pub(crate) fn producer_call_expr(
    cx: &Ctx,
    b: &mut Builder,
    ctor: &Call,
    built: &Value,
    state_dyns: &[(String, u64)],
    before: CallId,
) -> Option<String> {
    let Some(Target::Callable(c)) = cx.targets.get(&ctor.function) else {
        return None;
    };
    let unwrap = ctor
        .ret
        .as_ref()
        .and_then(|r| returned_struct(cx, r, &c.call_path))
        .and_then(|(_, unwrap)| unwrap)
        .unwrap_or_default();
    let mut built_dyns = Vec::new();
    dyn_addrs(built, &mut built_dyns);
    let to_state: HashMap<u64, u64> = built_dyns
        .iter()
        .zip(state_dyns)
        .map(|((_, from), (_, to))| (*from, *to))
        .collect();
    let at = mark(b);
    let mut args = Vec::new();
    let mut ok = true;
    // A producer method: its receiver is rebuilt first, as it was before the call.
    let receiver = if c.api.has_receiver {
        Some(producer_receiver(cx, b, ctor, before)?)
    } else {
        None
    };
    let own_args: Vec<&carve_storage::Arg> = ctor
        .args
        .iter()
        .filter(|a| !(c.api.has_receiver && a.name == "self"))
        .collect();
    for (arg, param) in own_args.iter().copied().zip(&c.api.params) {
        let moved = |addr| to_state.get(&addr).copied().unwrap_or(addr);
        let site = Site {
            cx,
            call: ctor,
            arg,
            param,
            callee: &c.api.ident,
            place: Place::Producer,
            moved: &moved,
        };
        match args::build(&site, b) {
            Ok((_, built)) => args.push(built.expr),
            Err(_) => ok = false,
        }
    }
    // What the constructor itself asked of its dependencies, the mocks answer too.
    if !ok || own_args.len() != c.api.params.len() || interactions(cx, b, ctor.id).is_err() {
        undo(b, at);
        return None;
    }
    let callee = match &receiver {
        Some(recv) => format!("{recv}.{}", c.api.ident),
        None => c.call_path.clone(),
    };
    // A producer that takes its receiver by value (`bytes_mut.freeze()`) moves it: the checks
    // of the state it was rebuilt to, which the test makes after its arrangement, cannot see it.
    let by_value = ctor
        .args
        .iter()
        .any(|a| a.name == "self" && !matches!(a.value, Value::Ref { .. }));
    if let (Some(recv), true) = (&receiver, by_value) {
        b.checks
            .retain(|check| !crate::read::paths::mentions_path(&check.actual, recv));
    }
    if receiver.is_some() {
        b.trait_uses.extend(c.via_trait.iter().cloned());
    }
    Some(format!("{callee}({}){unwrap}", args.join(", ")))
}

/// How many recorded producers of the state wanted the producer rule tries, the latest first:
/// producers of one state are mostly the same call made again, which fails again for the same
/// reason (base64's 1,001 equal `internal_decoded_len_estimate` results each had their engine
/// rebuilt anew), as [`crate::arrange::rebuild::replay::REPLAY_BUDGET`] bounds replays.
pub(crate) const PRODUCER_TRIES: usize = 16;

/// The latest recorded producer of an object in the state wanted (made before the call that
/// wants it; the type's own producers before trait ones) that a test can make again.
pub(crate) fn rule(cx: &Ctx, b: &mut Builder, w: Wanted) -> bool {
    let Wanted {
        state,
        type_path,
        before,
        var,
        mutable,
        ..
    } = w;
    let producers = producers(cx, type_path);
    let same_key = producers
        .by_key
        .get(&state_key(state))
        .map_or(&[][..], Vec::as_slice);
    let mut state_dyns: Option<Vec<(String, u64)>> = None;
    let mut tries = PRODUCER_TRIES;
    for &i in same_key {
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
        if tries == 0 {
            break;
        }
        tries -= 1;
        let state_dyns = state_dyns.get_or_insert_with(|| {
            let mut found = Vec::new();
            dyn_addrs(state, &mut found);
            found
        });
        let Some(expr) = producer_call(cx, b, ctor, built, state_dyns, before) else {
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
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::testdata::rulebook;

    #[test]
    fn a_receiver_is_rebuilt_by_the_constructor_that_made_its_state() {
        // `Counter::from(3).total()`: `from` made it through `Counter::new(3)`, the type's own
        // constructor, which comes first.
        let rebuilt = rulebook().rebuilt("rulebook::Counter::total", 1, "rulebook::Counter", true);
        let (rule, setup) = (rebuilt.rule, rebuilt.setup);
        assert_eq!(rule, "producer");
        assert_eq!(setup, ["rulebook::Counter::new(3u32)"]);
    }
}
