//! How to build an object — a derived sequence: a state no completed call left (a counter
//! raised inside an unfinished call), reached from a recorded constructor's state by the
//! shortest sequence of recorded calls whose changes add up to it.

use std::rc::Rc;

use carve_storage::{CallId, Value};

use crate::arrange::builder::{mark, undo, Builder};
use crate::arrange::check::observations;
use crate::arrange::context::{Ctx, Step, Steps};
use crate::arrange::rebuild::directly::rebuild_directly;
use crate::arrange::rebuild::producer::{constructed, producers};
use crate::arrange::rebuild::replay::replayable;
use crate::arrange::sequence;
use crate::arrange::sequence::Transition;
use crate::arrange::values::{same_state, state_key};
use crate::arrange::wanted::{Answer, Wanted};
use crate::body::Binding;
use crate::reasons::RECEIVER_NOT_REBUILT;

/// A state no completed call left an object in (a counter raised inside an unfinished recursive
/// call): a recorded constructor's state followed by the shortest sequence of recorded calls
/// whose changes to the object's integers add up to it ([`sequence::counter_path_split`]). Only for
/// states the test can check before acting, since the sequence rests on a hypothesis.
pub(crate) fn derive(
    cx: &Ctx,
    b: &mut Builder,
    state: &Value,
    type_path: &str,
    before: CallId,
    var: &str,
) -> Result<(), &'static str> {
    if observations(cx, var, state, type_path).is_empty() {
        return Err(RECEIVER_NOT_REBUILT);
    }
    let steps = steps_of(cx, type_path);
    // The distinct states recorded producers gave, in the order they are tried.
    let producers = producers(cx, type_path);
    let mut starts: Vec<(usize, &Value)> = Vec::new();
    // Classes are numbered densely from 0: a flag each, no hashing (a derive attempt walks every
    // producer of the type, thousands in bytes' buffers).
    let mut seen = vec![false; producers.classes];
    for (&(i, _), &class) in producers.in_order.iter().zip(&producers.class) {
        let ctor = &cx.trace.calls[i];
        if ctor.id >= before || std::mem::replace(&mut seen[class], true) {
            continue;
        }
        if let Some(start) = constructed(cx, ctor, type_path) {
            starts.push((class, start));
        }
    }
    // The search depends only on the type's steps and the two states: asked again (by the next
    // test wanting the same state), it is not searched again.
    let target = state_key(state);
    let mut best: Option<(&Value, Rc<Vec<usize>>)> = None;
    for (class, start) in starts {
        let asked = (type_path.to_string(), class, target);
        let found = cx.counter_paths.borrow().get(&asked).cloned();
        let found = found.unwrap_or_else(|| {
            let path =
                sequence::counter_path_split(start, state, &steps.split, &same_state, &state_key)
                    .map(Rc::new);
            cx.counter_paths.borrow_mut().insert(asked, path.clone());
            path
        });
        let Some(path) = found else {
            continue;
        };
        if best.as_ref().is_none_or(|(_, p)| path.len() < p.len()) {
            best = Some((start, path));
        }
    }
    let (start, path) = best.ok_or(RECEIVER_NOT_REBUILT)?;
    let at = mark(b);
    if let Err(e) = rebuild_directly(cx, b, Wanted::new(start, type_path, before, var)) {
        undo(b, at);
        return Err(e);
    }
    for &i in path.iter() {
        b.setup.push(Binding {
            var: "_".to_string(),
            mutable: false,
            expr: format!("{var}.{}", steps.calls[i].0),
            repeat: 1,
            times: None,
        });
    }
    Ok(())
}

/// Every replayable call on `type_path`, the shortest to write first, and the same calls split
/// for the counter search; worked out once per type.
fn steps_of<'t>(cx: &Ctx<'t>, type_path: &str) -> Rc<Steps<'t>> {
    if let Some(found) = cx.steps.borrow().get(type_path) {
        return Rc::clone(found);
    }
    let mut calls: Vec<Step> = cx
        .trace
        .calls
        .iter()
        .filter_map(|c| replayable(cx, c, type_path, false))
        .collect();
    calls.sort_by_key(|(expr, ..)| expr.len());
    let transitions: Vec<Transition> = calls
        .iter()
        .map(|(_, before, after)| Transition { before, after })
        .collect();
    let split = sequence::split_steps(&transitions, &state_key);
    let made = Rc::new(Steps { calls, split });
    cx.steps
        .borrow_mut()
        .insert(type_path.to_string(), Rc::clone(&made));
    made
}

/// The rule (see [`derive()`]); the state it reaches is checked before the test acts.
pub(crate) fn rule(cx: &Ctx, b: &mut Builder, w: Wanted) -> Answer {
    match derive(cx, b, w.state, w.type_path, w.before, w.var) {
        Ok(()) => Answer::Built { check: true },
        Err(RECEIVER_NOT_REBUILT) => Answer::Pass(None),
        Err(why) => Answer::Fail(why),
    }
}

#[cfg(test)]
mod tests {
    use crate::testdata::rulebook;

    #[test]
    fn a_state_no_call_left_is_derived_from_the_steps_recorded_calls_took() {
        // `check()` inside `jump(6)`: a total of 10 no call returned, five `bump()`s of 2 from
        // `Counter::new(2)`.
        let rebuilt = rulebook().rebuilt("rulebook::Counter::check", 0, "rulebook::Counter", false);
        let (rule, setup, checks) = (rebuilt.rule, rebuilt.setup, rebuilt.checks);
        assert_eq!(rule, "derive");
        let mut expected = vec!["rulebook::Counter::new(2u32)"];
        expected.extend(["receiver.bump()"; 5]);
        assert_eq!(setup, expected);
        assert_eq!(checks, ["receiver.total() == 10u32"]);
    }
}
