//! Objects whose recorded state is not all of their state: memory behind a pointer the recorder
//! did not follow (an LRU cache's linked list, a hash table's buckets, a spilled small vector's
//! heap buffer) or `MaybeUninit` storage (a small vector's inline elements). Two such objects
//! can look equal in the trace and behave differently, so the shortcuts that rebuild an object
//! from its recorded state alone (the latest call that left that state, a call taken to have
//! left its receiver as it was, a derived sequence of counter changes) would write tests that
//! fail on the very code they were carved from. Such an object is rebuilt only from its own
//! recorded history: the call that made it, then every `&mut` call it went through, in order,
//! as the program made them. When one of them cannot be replayed, the test is declined with
//! [`HISTORY_NOT_REPLAYABLE`] rather than guessed. What a handle's drop did to the object
//! (`Drain`'s, putting the tail back) is not a step: the step that made the handle drops it at
//! once, and that drop does it again.

use std::collections::{HashMap, HashSet};

use carve_storage::{ArgObject, Call, CallId, ObjectId, Outcome, Value};

use crate::act::target::Target;
use crate::arrange::builder::{mark, undo, Builder};
use crate::arrange::context::{
    in_library, leaves_library, reads_unbuilt_world, step_result_var, Ctx,
};
use crate::arrange::mocks::interactions;
use crate::arrange::rebuild::directly::rebuild_directly;
use crate::arrange::rebuild::producer::constructed;
use crate::arrange::rebuild::replay::{handle_chain, is_drop_impl, replay_call, ReplayCall};
use crate::arrange::values::{is_maybe_uninit, same_state, strip_ref};
use crate::arrange::wanted::{Answer, Wanted};
use crate::body::Binding;
use crate::read::types::DeclType;
use crate::reasons::{HISTORY_NOT_REPLAYABLE, INSIDE_A_HANDLE};

/// How many recorded calls the history of one object may replay.
const MAX_HISTORY: usize = 512;
/// How many moves an object's history may be followed back through.
const MAX_MOVES: usize = 8;

/// Whether `state` leaves out part of what the object's methods read: memory behind a non-null
/// pointer that was not followed, `MaybeUninit` storage (read as bytes, compared as nothing), a
/// part not read or cut short. Trait objects are not looked into (they become mocks).
pub(crate) fn incomplete(state: &Value) -> bool {
    match state {
        Value::Pointer { addr, .. } => *addr != 0,
        Value::Opaque { ty, .. } => is_maybe_uninit(ty),
        Value::Unavailable { .. } => true,
        Value::Str { truncated, .. } => *truncated,
        Value::Seq {
            elems, truncated, ..
        } => *truncated || elems.iter().any(incomplete),
        Value::Ref { ty, target, .. } => !ty.contains("dyn ") && incomplete(target),
        Value::Struct { fields, .. } | Value::Enum { fields, .. } => {
            fields.iter().any(|f| incomplete(&f.value))
        }
        Value::Tuple { elems, .. } => elems.iter().any(incomplete),
        _ => false,
    }
}

/// Adds `let <var> = <maker>;` and the object's recorded `&mut` calls made before `before`, in
/// recording order (an equivalent call grouped under a kept one is replayed at its own place).
pub(crate) fn rebuild(cx: &Ctx, b: &mut Builder, w: Wanted) -> Result<(), &'static str> {
    let Wanted {
        state,
        object,
        type_path,
        before,
        var,
        mutable,
    } = w;
    let object = object.ok_or(HISTORY_NOT_REPLAYABLE)?;
    // The object, and the ones it was moved from, latest first.
    let mut lineage = vec![object];
    let maker = loop {
        let last = *lineage.last().unwrap_or(&object);
        let info = cx.trace.objects.iter().find(|o| o.id == last);
        match info.and_then(|o| o.created_by) {
            Some(id) => break cx.call_by_id(id).ok_or(HISTORY_NOT_REPLAYABLE)?,
            None if lineage.len() < MAX_MOVES => {
                lineage.push(moved_from(cx, last).ok_or(HISTORY_NOT_REPLAYABLE)?);
            }
            None => return Err(HISTORY_NOT_REPLAYABLE),
        }
    };
    // Made inside a call of the library (`collect()` building it with `new` and `extend`): the
    // calls after its maker are that call's doing, not the program's.
    let mut above = maker.parent.and_then(|p| cx.call_by_id(p));
    while let Some(call) = above {
        if in_library(cx, call) {
            return Err(HISTORY_NOT_REPLAYABLE);
        }
        above = call.parent.and_then(|p| cx.call_by_id(p));
    }
    if maker.id >= before {
        return Err(HISTORY_NOT_REPLAYABLE);
    }
    // Calls of the type's `&mut self` methods dropped over `--max-per-function` are not listed
    // one by one: the history may lack some.
    let capped = cx.over_max.keys().any(|f| {
        matches!(cx.targets.get(f), Some(Target::Callable(c))
            if c.api.mut_receiver && c.self_type.as_deref() == Some(type_path))
    });
    if capped {
        return Err(HISTORY_NOT_REPLAYABLE);
    }
    let steps = steps(cx, &lineage, maker, before, type_path, (state, mutable))?;
    let made = constructed(cx, maker, type_path).ok_or(HISTORY_NOT_REPLAYABLE)?;
    let at = mark(b);
    // The maker is the latest producer of that state before it ends: itself.
    let made = rebuild_directly(
        cx,
        b,
        Wanted {
            state: made,
            object: None,
            type_path,
            before: CallId(maker.id.0 + 1),
            var,
            mutable: mutable || !steps.is_empty(),
        },
    );
    // What the replayed calls asked of dependencies, the mocks answer in the test too.
    let asked = made.and_then(|()| {
        steps
            .iter()
            .flat_map(|s| &s.calls)
            .try_for_each(|&c| interactions(cx, b, c))
    });
    if asked.is_err() {
        undo(b, at);
        return Err(HISTORY_NOT_REPLAYABLE);
    }
    for Step {
        calls,
        star,
        expr,
        statement,
    } in steps
    {
        // What the program went on using lives to the end of the test, as in the program (it
        // may share state with the object: a split buffer's storage); the rest is dropped at once.
        let result = if statement {
            String::new()
        } else {
            step_result_var(cx, b, &calls)
        };
        b.arranged.extend(calls);
        // A replay closure's replies are bound right before its step, checked right after.
        let (expr, after) = match expr {
            StepExpr::Text(text) => (text, Vec::new()),
            StepExpr::Call(call) => call.add_to(b),
        };
        b.setup.push(Binding {
            var: result,
            mutable: false,
            expr: format!("{star}{var}.{expr}"),
            repeat: 1,
            times: None,
        });
        b.setup.extend(after);
    }
    Ok(())
}

/// Whether `call`, a `&mut self` call of an object's history, can be left out of its replay
/// (seed 001's redundancy by state equivalence): the receiver's recorded state before and
/// after compare equal (`same_state`: addresses and `MaybeUninit` bytes ignored), that state
/// was read whole (nothing behind a pointer not followed, nothing cut short: `MaybeUninit`
/// storage aside, which the type's code may only read after writing it), and the call did
/// nothing else a later step could see: it took no other `&mut` argument (nor a closure or trait object), made no object,
/// ran no code outside the library below it (a dependency, a closure). Its result is not used: a history step is `let _ = ..`. Verification
/// runs the shortened test; where it fails, the call is carved again with the whole history
/// ([`Ctx::replay_whole_histories`]).
fn state_equivalent<'t>(
    cx: &Ctx<'t>,
    call: &'t Call,
    api: &crate::read::crate_api::FnApi,
    type_path: &str,
) -> bool {
    if cx.whole_histories.get() {
        return false;
    }
    let (Some(before), Some(after)) = (call.arg("self"), call.after("self")) else {
        return false;
    };
    let (before, after) = (strip_ref(before), strip_ref(after));
    if hidden(before) || hidden(after) || !same_state(before, after) {
        return false;
    }
    // A generic parameter is judged by its recorded instance: an integer, or a closure.
    let declared_mut = api
        .params
        .iter()
        .any(|p| matches!(p.ty, DeclType::Ref { mutable: true, .. }));
    let others_mut = declared_mut
        || call.args.iter().filter(|a| a.name != "self").any(|a| {
            let ty = a.value.type_name();
            ty.contains("&mut") || ty.contains("closure") || ty.contains("dyn ")
        });
    // Another argument's state after, a formatter's writes, the caller's write through a
    // returned `&mut`; or a returned `&mut` (a handle whose later calls change the receiver).
    let other_effects = call.after.iter().any(|a| a.name != "self")
        || call.ret.as_ref().is_some_and(holds_mut_ref)
        || handle_chain(cx, call, type_path).is_some();
    let made = cx
        .trace
        .objects
        .iter()
        .any(|o| o.created_by == Some(call.id));
    !others_mut && !other_effects && !made && !leaves_library(cx, call.id)
}

/// Whether `value` is or holds a `&mut` reference.
fn holds_mut_ref(value: &Value) -> bool {
    match value {
        Value::Ref { ty, target, .. } => ty.starts_with("&mut") || holds_mut_ref(target),
        Value::Struct { ty, fields, .. } | Value::Enum { ty, fields, .. } => {
            ty.contains("&mut") || fields.iter().any(|f| holds_mut_ref(&f.value))
        }
        Value::Tuple { elems, .. } | Value::Seq { elems, .. } => elems.iter().any(holds_mut_ref),
        _ => false,
    }
}

/// Whether `state` leaves out memory behind a pointer not followed or a part not read whole;
/// unlike [`incomplete`], `MaybeUninit` storage does not count.
fn hidden(state: &Value) -> bool {
    match state {
        Value::Pointer { addr, .. } => *addr != 0,
        Value::Opaque { ty, .. } => !is_maybe_uninit(ty),
        Value::Unavailable { .. } => true,
        Value::Str { truncated, .. } => *truncated,
        Value::Seq {
            elems, truncated, ..
        } => *truncated || elems.iter().any(hidden),
        Value::Ref { ty, target, .. } => ty.contains("dyn ") || hidden(target),
        Value::Struct { fields, .. } | Value::Enum { fields, .. } => {
            fields.iter().any(|f| hidden(&f.value))
        }
        Value::Tuple { elems, .. } => elems.iter().any(hidden),
        _ => false,
    }
}

/// One call of an object's history, as a test writes it: `{star}{var}.{expr}`.
struct Step {
    /// The recorded calls it replays (for an equivalent call grouping dropped, the ones kept for
    /// it): what they asked of dependencies, mocks answer.
    calls: Vec<CallId>,
    /// `*` for a write through a handle chain.
    star: &'static str,
    expr: StepExpr,
    /// A statement (a handle chain) rather than `let _ = ..`.
    statement: bool,
}

/// What a step calls: a handle chain's text, or a call whose replay closures are written when
/// the step is added (each binds its replies to a fresh variable of the test).
#[derive(Clone)]
enum StepExpr {
    Text(String),
    Call(ReplayCall),
}

/// The object `object` was moved from, when the recording shows a move: no call made it, and
/// the first state it was seen in is exactly (bytes and addresses included) the last state
/// another object of its type was seen in, an object never seen again after it appeared (a value
/// returned from a block, `let v = smallvec![..]`); of several, the one seen last, when one
/// call saw it after every other. A copy made by a call would have that call as its maker; a
/// bitwise copy of a type with such state is a move.
fn moved_from(cx: &Ctx, object: ObjectId) -> Option<ObjectId> {
    let ty = &cx.trace.objects.iter().find(|o| o.id == object)?.type_name;
    let of_type: HashSet<ObjectId> = cx
        .trace
        .objects
        .iter()
        .filter(|o| o.type_name == *ty && o.id != object)
        .map(|o| o.id)
        .collect();
    fn state_in<'c>(call: &'c Call, arg: &str, after: bool) -> Option<&'c Value> {
        let value = if after {
            call.after(arg).or_else(|| call.arg(arg))
        } else {
            call.arg(arg)
        };
        value.map(strip_ref)
    }
    let (first, first_arg) = cx.trace.calls.iter().find_map(|c| {
        let o = c.objects.iter().find(|o| o.object == object)?;
        Some((c, o.arg.as_str()))
    })?;
    let first_state = state_in(first, first_arg, false)?;
    // Per other object of the type: its last outermost call before `first` (a call inside
    // another on it ends first), and whether it was seen after.
    let mut last: HashMap<ObjectId, (&Call, &str, bool)> = HashMap::new();
    let mut on_type: HashSet<CallId> = HashSet::new();
    for call in &cx.trace.calls {
        let inner = call.parent.is_some_and(|p| on_type.contains(&p));
        for o in call.objects.iter().filter(|o| of_type.contains(&o.object)) {
            on_type.insert(call.id);
            if call.id < first.id {
                if inner {
                    continue;
                }
                last.insert(o.object, (call, o.arg.as_str(), false));
            } else if let Some(seen) = last.get_mut(&o.object) {
                seen.2 = true;
            }
        }
    }
    // The latest seen of those left in that state: a move through a by-value parameter
    // (`into_inner(self)` giving back `Err(self)`) leaves the vector and the parameter alike,
    // and the value came from the parameter.
    let mut from: Vec<(CallId, ObjectId)> = last
        .into_iter()
        .filter(|(_, (call, arg, seen_after))| {
            !seen_after && state_in(call, arg, true).is_some_and(|s| s == first_state)
        })
        .map(|(id, (call, ..))| (call.id, id))
        .collect();
    from.sort_unstable_by(|a, b| b.cmp(a));
    match from.as_slice() {
        [(_, id)] => Some(*id),
        [(latest, id), (next, _), ..] if latest > next => Some(*id),
        _ => None,
    }
}

/// The calls that can have changed `object` between its maker and `before`, in recording order.
///
/// When the call the test acts on runs inside one of them (`len()` called by `push`), the object
/// is in the middle of that call. A query (`&self`; `wanted` is its recorded state and whether
/// it takes `&mut self`) made while the object still looked as it did when the enclosing call
/// started is carved on the state before that call; a `&mut self` call there (`pop()` inside
/// `swap_remove`, after the hidden swap), a call made after the enclosing call changed what the
/// recording shows, and a call inside a library call on another object (`len()` inside a
/// `Drain`'s `drop`, which holds the vector half-drained) are declined. Calls below one of
/// them, or below the maker, are theirs; a call that only reads the object (`&self`, `&`
/// argument) changes nothing.
fn steps(
    cx: &Ctx,
    lineage: &[ObjectId],
    maker: &Call,
    before: CallId,
    type_path: &str,
    wanted: (&Value, bool),
) -> Result<Vec<Step>, &'static str> {
    // The call the test acts on runs inside these: a state in the middle of one of them is no
    // state a sequence of whole calls reaches.
    let mut enclosing = HashSet::new();
    let mut at = cx.call_by_id(before).and_then(|c| c.parent);
    while let Some(id) = at {
        enclosing.insert(id);
        let call = cx.call_by_id(id);
        let on_ours = call.is_some_and(|c| c.objects.iter().any(|o| lineage.contains(&o.object)));
        if call.is_some_and(|c| in_library(cx, c)) && !on_ours {
            if call.is_some_and(|c| on_a_handle(cx, c, lineage)) {
                return Err(INSIDE_A_HANDLE);
            }
            return Err(HISTORY_NOT_REPLAYABLE);
        }
        at = call.and_then(|c| c.parent);
    }
    let mut covered: HashSet<CallId> = HashSet::from([maker.id]);
    // (position in the recording, step)
    let mut found: Vec<(CallId, Step)> = Vec::new();
    for call in &cx.trace.calls {
        if call.id <= maker.id || call.id >= before {
            continue;
        }
        if call.parent.is_some_and(|p| covered.contains(&p)) {
            covered.insert(call.id);
            continue;
        }
        let ours = |o: &&ArgObject| lineage.contains(&o.object);
        if !call.objects.iter().any(|o| ours(&o)) {
            // A handle's drop (`Drain`'s): the step that made the handle drops it at once,
            // and that drop does to the object again what this one did.
            if is_drop_impl(cx, call) && in_library(cx, call) && on_a_handle(cx, call, lineage) {
                covered.insert(call.id);
            }
            continue;
        }
        covered.insert(call.id);
        let Some(Target::Callable(c)) = cx.targets.get(&call.function) else {
            return Err(HISTORY_NOT_REPLAYABLE);
        };
        let changes = call.objects.iter().filter(ours).any(|o| {
            if o.arg == "self" {
                return c.api.mut_receiver;
            }
            let others = call.args.iter().filter(|a| a.name != "self");
            match others.zip(&c.api.params).find(|(a, _)| a.name == o.arg) {
                Some((_, param)) => !matches!(param.ty, DeclType::Ref { mutable: false, .. }),
                None => true,
            }
        });
        if !changes {
            continue;
        }
        let own_method = call.objects.iter().any(|o| ours(&o) && o.arg == "self")
            && c.self_type.as_deref() == Some(type_path);
        if own_method && enclosing.contains(&call.id) {
            let untouched = call
                .arg("self")
                .is_some_and(|pre| same_state(strip_ref(pre), wanted.0));
            if wanted.1 || !untouched {
                return Err(HISTORY_NOT_REPLAYABLE);
            }
            // Calls grouped under earlier ones may come later than this one.
            found.retain(|(id, _)| *id < call.id);
            break;
        }
        if !own_method || call.outcome != Outcome::Returned || reads_unbuilt_world(cx, call) {
            return Err(HISTORY_NOT_REPLAYABLE);
        }
        if state_equivalent(cx, call, &c.api, type_path) {
            // Grouped equivalents of it are the same call on the same state: left out too.
            continue;
        }
        let (star, expr, statement, calls) = match handle_chain(cx, call, type_path) {
            Some(chain) => {
                // The handle's own calls come right after: they are the chain's.
                let calls: Vec<CallId> = chain.calls().map(|c| c.id).collect();
                covered.extend(calls.iter().copied());
                let expr = chain.expr(cx).ok_or(HISTORY_NOT_REPLAYABLE)?;
                let star = if chain.written.is_some() { "*" } else { "" };
                (star, StepExpr::Text(expr), true, calls)
            }
            None => {
                let expr = replay_call(cx, call).ok_or(HISTORY_NOT_REPLAYABLE)?;
                ("", StepExpr::Call(expr), false, vec![call.id])
            }
        };
        let step = |expr: StepExpr| Step {
            calls: calls.clone(),
            star,
            expr,
            statement,
        };
        for &again in cx.equivalent.get(&call.id).into_iter().flatten() {
            if again < before {
                found.push((again, step(expr.clone())));
            }
        }
        found.push((call.id, step(expr)));
        if found.len() > MAX_HISTORY {
            return Err(HISTORY_NOT_REPLAYABLE);
        }
    }
    found.sort_by_key(|(id, ..)| *id);
    Ok(found.into_iter().map(|(_, step)| step).collect())
}

/// Whether `call` is a method of a handle into the object (`lineage`): its receiver is of the
/// type an earlier `&mut self` call of the object returned (`Drain` from `drain(..)`), so it
/// holds the object mutably borrowed while it lives.
fn on_a_handle(cx: &Ctx, call: &Call, lineage: &[ObjectId]) -> bool {
    let Some(handle) = call.object("self") else {
        return false;
    };
    let Some(handle_type) = cx.trace.objects.iter().find(|o| o.id == handle) else {
        return false;
    };
    cx.trace
        .calls
        .iter()
        .take_while(|c| c.id < call.id)
        .any(|c| {
            let on_ours = c.object("self").is_some_and(|o| lineage.contains(&o));
            let mut_self = matches!(cx.targets.get(&c.function),
            Some(Target::Callable(f)) if f.api.mut_receiver);
            on_ours
                && mut_self
                && c.ret
                    .as_ref()
                    .is_some_and(|r| strip_ref(r).type_name() == handle_type.type_name)
        })
}

/// The rule: an object whose recorded state leaves out what its methods read, rebuilt from its
/// own history first (on a copy of the test, kept only if it works); when that history cannot
/// be replayed, the rules after it still try, and its reason is the one to give if none does.
pub(crate) fn rule(cx: &Ctx, b: &mut Builder, w: Wanted) -> Answer {
    if !incomplete(w.state) {
        return Answer::Pass(None);
    }
    // State behind pointers the recorder did not follow: equal recorded states may differ, so
    // the object's own history comes first. Where it cannot be replayed, the rules below still
    // try, and verification drops a test whose arrangement was not the recorded one.
    let mut attempt = b.clone();
    match rebuild(cx, &mut attempt, w) {
        Ok(()) => {
            *b = attempt;
            Answer::Built { check: true }
        }
        // No rule can reach a state only a live handle gives.
        Err(INSIDE_A_HANDLE) => Answer::Fail(INSIDE_A_HANDLE),
        Err(why) => Answer::Pass(Some(why)),
    }
}

#[cfg(test)]
mod tests {
    use crate::testdata::rulebook;

    #[test]
    fn an_object_with_state_the_recording_cannot_compare_is_rebuilt_from_its_history() {
        // `Stack`'s items are `MaybeUninit`: its maker and both pushes, in order.
        let rebuilt = rulebook().rebuilt("rulebook::Stack::top", 0, "rulebook::Stack", false);
        let (rule, setup) = (rebuilt.rule, rebuilt.setup);
        assert_eq!(rule, "history");
        assert_eq!(
            setup,
            [
                "rulebook::Stack::new()",
                "receiver.push(7u8)",
                "receiver.push(9u8)"
            ]
        );
    }

    #[test]
    fn a_call_made_inside_a_handle_that_holds_the_object_is_declined_by_every_rule() {
        // `is_empty()` inside the drop of the `Unloading` that `unload()` returned: the stack
        // looked empty only while that handle lived; `let _ = receiver.unload();` would drop it
        // at once and put the items back.
        let decided = rulebook().decided("rulebook::Stack::is_empty", 0, "rulebook::Stack");
        assert_eq!(decided, Err(crate::reasons::INSIDE_A_HANDLE));
    }

    #[test]
    fn a_value_moved_through_a_by_value_parameter_comes_from_the_parameter() {
        // `back` from `d.into_full()`'s `Err(self)`: the deck `d` and the parameter `len()` saw
        // inside `into_full` were both last seen in the state `back` is first seen in, and
        // neither after; the parameter was seen last, so `back` came from it, and it from `d`.
        let rebuilt = rulebook().rebuilt("rulebook::Deck::top", 0, "rulebook::Deck", false);
        assert_eq!(rebuilt.rule, "history");
        assert_eq!(
            rebuilt.setup,
            [
                "rulebook::Deck::new()",
                "receiver.push(1u8)",
                "receiver.push(2u8)"
            ]
        );
    }

    #[test]
    fn what_a_handles_drop_did_to_the_object_is_done_again_by_dropping_the_handle() {
        // `top()` after `unload().next()`: the handle's drop put the item not taken back with
        // `set_len`, an `unsafe fn` no step can call; the step drops the handle at once, and
        // that drop does it again. Without the rule the history stopped at `set_len` and the
        // stack was rebuilt from a call that left the same recorded state, `push(7)`, where
        // the top is 9.
        let rebuilt = rulebook().rebuilt("rulebook::Stack::top", 1, "rulebook::Stack", false);
        assert_eq!(rebuilt.rule, "history");
        assert_eq!(
            rebuilt.setup,
            [
                "rulebook::Stack::new()",
                "receiver.push(7u8)",
                "receiver.push(9u8)",
                "receiver.unload().next()"
            ]
        );
    }
}
