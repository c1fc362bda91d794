//! How to build an object — replayed calls: the latest recorded `&mut self` call that left the
//! object in the state wanted, replayed on an object rebuilt in that call's own pre-state (a
//! handle chain, `*map.entry(k).or_insert(0) = 1`, counts as one call).

use std::rc::Rc;

use carve_storage::{Call, CallId, Outcome, Value};

use crate::act::target::Target;
use crate::arrange::builder::{mark, undo, Builder};
use crate::arrange::context::{
    has_trait_calls, reads_world, step_result_var, ByStateKey, Constructing, Ctx,
};
use crate::arrange::literal::Position;
use crate::arrange::mocks::interactions;
use crate::arrange::rebuild::directly::rebuild_directly;
use crate::arrange::values::{same_state, state_key, strip_ref};
use crate::arrange::wanted::Wanted;
use crate::arrange::{closure, literal};
use crate::body::Binding;
use crate::reasons::RECEIVER_NOT_REBUILT;

/// A recorded call that can be replayed on an object of `type_path` in an arrange step: a
/// returned `&mut self` method call with literal arguments, and, unless `with_deps`, no
/// dependency calls to mock. Gives `method(args)` and the object's state before and after.
pub(crate) fn replayable<'t>(
    cx: &Ctx<'t>,
    step: &'t Call,
    type_path: &str,
    with_deps: bool,
) -> Option<(String, &'t Value, &'t Value)> {
    let (pre, after) = replay_states(cx, step, type_path, with_deps)?;
    Some((replay_expr(cx, step)?, pre, after))
}

/// The cheap half of [`replayable`]: whether `step` qualifies, and the states before and after.
pub(crate) fn replay_states<'t>(
    cx: &Ctx<'t>,
    step: &'t Call,
    type_path: &str,
    with_deps: bool,
) -> Option<(&'t Value, &'t Value)> {
    if step.outcome != Outcome::Returned {
        return None;
    }
    let Some(Target::Callable(c)) = cx.targets.get(&step.function) else {
        return None;
    };
    if !c.api.has_receiver || !c.api.mut_receiver || c.self_type.as_deref() != Some(type_path) {
        return None;
    }
    let (after, pre) = (step.after("self")?, step.arg("self")?);
    if (!with_deps && has_trait_calls(cx, step.id)) || reads_world(cx, step) {
        return None;
    }
    Some((strip_ref(pre), strip_ref(after)))
}

/// The costly half of [`replayable`]: `method(args)`, when every argument can be written as
/// an expression alone (no replay closure).
pub(crate) fn replay_expr(cx: &Ctx, step: &Call) -> Option<String> {
    replay_call(cx, step)?.plain()
}

/// A recorded call as an arrange step makes it again: `method(args)`, each argument a literal or
/// a replay closure (`closure.rs`).
#[derive(Debug, Clone)]
pub(crate) struct ReplayCall {
    pub(crate) ident: String,
    pub(crate) args: Vec<ReplayArg>,
}

#[derive(Debug, Clone)]
pub(crate) enum ReplayArg {
    Expr(String),
    Closure(closure::ReplayClosure),
}

/// `step` as an arrange step, when every argument can be written: a literal, a replay closure,
/// or a value of the crate made by a constructor that stores its fields.
pub(crate) fn replay_call(cx: &Ctx, step: &Call) -> Option<ReplayCall> {
    let Some(Target::Callable(c)) = cx.targets.get(&step.function) else {
        return None;
    };
    let others: Vec<&carve_storage::Arg> = step.args.iter().filter(|a| a.name != "self").collect();
    if others.len() != c.api.params.len() {
        return None;
    }
    let args = others
        .iter()
        .zip(&c.api.params)
        .map(|(arg, param)| {
            let bound = param.bound.as_deref();
            if let Some(replay) = closure::replay(cx, step, arg, &c.api.ident, bound) {
                // A closure the step keeps would answer the tested call's calls too.
                return replay.ok().filter(|r| !r.kept).map(ReplayArg::Closure);
            }
            // A private-field value of the crate, alone or inside one, through the
            // constructor that stores its fields.
            literal::render(&arg.value, &param.ty, Position::Arg)
                .or_else(|_| literal::render_value(&arg.value, false, &Constructing(cx, None)))
                .ok()
                .map(ReplayArg::Expr)
        })
        .collect::<Option<Vec<ReplayArg>>>()?;
    Some(ReplayCall {
        ident: c.api.ident.clone(),
        args,
    })
}

impl ReplayCall {
    /// `method(args)`, when no argument is a replay closure.
    pub(crate) fn plain(&self) -> Option<String> {
        let args = self
            .args
            .iter()
            .map(|a| match a {
                ReplayArg::Expr(e) => Some(e.as_str()),
                ReplayArg::Closure(_) => None,
            })
            .collect::<Option<Vec<&str>>>()?;
        Some(format!("{}({})", self.ident, args.join(", ")))
    }

    /// `method(args)`, each replay closure's replies bound in `b`'s setup first; gives the
    /// statements that check, after the step, that each closure was called as recorded.
    pub(crate) fn add_to(&self, b: &mut Builder) -> (String, Vec<Binding>) {
        let mut after = Vec::new();
        let args: Vec<String> = self
            .args
            .iter()
            .map(|a| match a {
                ReplayArg::Expr(e) => e.clone(),
                ReplayArg::Closure(c) => {
                    let (expr, check) = c.add_to(b);
                    after.extend(check.map(|e| Binding {
                        var: String::new(),
                        mutable: false,
                        expr: match &e.message {
                            Some(m) => format!("assert_eq!({}, {}, {m})", e.actual, e.expected),
                            None => format!("assert_eq!({}, {})", e.actual, e.expected),
                        },
                        repeat: 1,
                        times: None,
                    }));
                    expr
                }
            })
            .collect();
        (format!("{}({})", self.ident, args.join(", ")), after)
    }
}

/// A replay step through a handle: a `&mut self` method of the object returns a handle
/// (`map.entry(k)`, `url.query_pairs_mut()`), the calls right after it on the same thread act on
/// that handle (`.or_insert(0)`, `.append_pair("q", "1")`, each returning the handle again but
/// the last; the handle's `Drop` impl may run too), and then the object's next call comes. When
/// the last call returned `&mut` to a scalar the caller wrote through (`+= 1`, recorded as the
/// [`carve_storage::RESULT_EFFECT`] effect), the write is replayed too. Written as one chain,
/// `*map.entry(k).or_insert(0) = 1` or `url.query_pairs_mut().append_pair("q", "1")`: the object
/// goes from its state before the first call to its state at its next call. A call returning the
/// reference itself is a chain without steps: `*bag.index_mut(0) = 6`.
pub(crate) struct HandleChain<'t> {
    pub(crate) first: &'t Call,
    pub(crate) steps: Vec<&'t Call>,
    pub(crate) written: Option<&'t Value>,
    pub(crate) pre: &'t Value,
    pub(crate) after: &'t Value,
}

/// How many calls on one handle a chain may hold.
pub(crate) const MAX_CHAIN: usize = 8;

impl HandleChain<'_> {
    /// `entry(k).or_insert(0) = 1`, when every argument and the written value can be written.
    pub(crate) fn expr(&self, cx: &Ctx) -> Option<String> {
        let mut chain = replay_expr(cx, self.first)?;
        for step in &self.steps {
            chain = format!("{chain}.{}", replay_expr(cx, step)?);
        }
        Some(match self.written {
            Some(written) => {
                let written = literal::render_value(written, false, cx.api).ok()?;
                format!("{chain} = {written}")
            }
            None => chain,
        })
    }

    /// Every call of the chain, for the mocks they asked.
    pub(crate) fn calls(&self) -> impl Iterator<Item = &Call> {
        std::iter::once(self.first).chain(self.steps.iter().copied())
    }
}

pub(crate) fn is_drop_impl(cx: &Ctx, call: &Call) -> bool {
    cx.trace
        .function(call.function)
        .is_some_and(|f| f.path.ends_with("as core::ops::drop::Drop>::drop"))
}

pub(crate) fn handle_chain<'t>(
    cx: &Ctx<'t>,
    first: &'t Call,
    type_path: &str,
) -> Option<HandleChain<'t>> {
    if first.outcome != Outcome::Returned {
        return None;
    }
    let Some(Target::Callable(c)) = cx.targets.get(&first.function) else {
        return None;
    };
    if !c.api.has_receiver || !c.api.mut_receiver || c.self_type.as_deref() != Some(type_path) {
        return None;
    }
    let handle = strip_ref(first.ret.as_ref()?);
    let handle_type = crate::read::types::strip_generics(handle.type_name());
    if handle_type == type_path || reads_world(cx, first) {
        return None;
    }
    let Value::Ref {
        addr: object,
        target: pre,
        ..
    } = first.arg("self")?
    else {
        return None;
    };
    // The calls after `first` on its thread, at its level.
    let siblings = cx.children.get(&first.parent)?;
    // Siblings are mostly in id order (one thread's are): a binary search finds `first`
    // without a scan of every sibling (ids are unique, so a hit is the one); else the scan.
    let at = match siblings.binary_search_by_key(&first.id, |&i| cx.trace.calls[i].id) {
        Ok(at) => at,
        Err(_) => siblings
            .iter()
            .position(|&i| cx.trace.calls[i].id == first.id)?,
    };
    let next = siblings[at + 1..]
        .iter()
        .map(|&i| &cx.trace.calls[i])
        .filter(|c| c.thread == first.thread);
    let mut steps: Vec<&Call> = Vec::new();
    let mut dropped = false;
    for call in next.take(MAX_CHAIN + 2) {
        // The object's next call: its state then is what the chain left.
        if let Some(Value::Ref {
            addr,
            target: after,
            ..
        }) = call.arg("self")
        {
            if *addr == *object
                && crate::read::types::strip_generics(after.type_name()) == type_path
            {
                // No step: the call itself returned the reference written through
                // (`*v.index_mut(0) = 6`).
                let written = steps
                    .last()
                    .copied()
                    .unwrap_or(first)
                    .after(carve_storage::RESULT_EFFECT);
                if steps.is_empty() && written.is_none() {
                    return None;
                }
                // Each step but the last hands the handle on.
                let handed_on = steps.iter().rev().skip(1).all(|s| {
                    s.ret.as_ref().is_some_and(|r| {
                        crate::read::types::strip_generics(strip_ref(r).type_name()) == handle_type
                    })
                });
                return handed_on.then_some(HandleChain {
                    first,
                    steps,
                    written,
                    pre,
                    after,
                });
            }
        }
        if dropped || steps.len() == MAX_CHAIN {
            return None;
        }
        if is_drop_impl(cx, call) {
            // The handle's drop glue ran (`UrlQuery` writes the query back): the chain's end.
            dropped = true;
            continue;
        }
        let on_handle = call.arg("self").is_some_and(|s| {
            crate::read::types::strip_generics(strip_ref(s).type_name()) == handle_type
        });
        if call.outcome != Outcome::Returned
            || !on_handle
            || !matches!(cx.targets.get(&call.function), Some(Target::Callable(_)))
            || reads_world(cx, call)
            // Only the last step's write is replayed.
            || steps.last().is_some_and(|s| s.after(carve_storage::RESULT_EFFECT).is_some())
        {
            return None;
        }
        steps.push(call);
    }
    None
}

/// The calls [`replay`] may use on an object of `type_path`, by the key of the state each
/// leaves it in (a handle chain's: the state at the object's next call), in recording order;
/// worked out once per type.
fn candidates(cx: &Ctx, type_path: &str) -> Rc<ByStateKey> {
    if let Some(found) = cx.candidates.borrow().get(type_path) {
        return Rc::clone(found);
    }
    let mut by_state = ByStateKey::new();
    for (i, step) in cx.trace.calls.iter().enumerate() {
        let after = match handle_chain(cx, step, type_path) {
            Some(chain) => Some(chain.after),
            None => replay_states(cx, step, type_path, true).map(|(_, after)| after),
        };
        if let Some(after) = after {
            by_state.entry(state_key(after)).or_default().push(i);
        }
    }
    let made = Rc::new(by_state);
    cx.candidates
        .borrow_mut()
        .insert(type_path.to_string(), Rc::clone(&made));
    made
}

/// How many recorded calls a rebuilt object may replay after its constructor.
pub(crate) const MAX_REPLAYED_CALLS: usize = 512;

/// How many candidate calls the search for one object's replay may try in all.
pub(crate) const REPLAY_BUDGET: usize = 200;

/// The latest recorded `&mut self` call before `before` that left an object of `type_path` in
/// `state`, replayed on an object rebuilt in that call's own pre-state.
#[allow(clippy::too_many_arguments)]
pub(crate) fn replay(
    cx: &Ctx,
    b: &mut Builder,
    state: &Value,
    type_path: &str,
    before: CallId,
    var: &str,
    replayed: usize,
    budget: &mut usize,
) -> Result<(), &'static str> {
    if replayed >= MAX_REPLAYED_CALLS {
        return Err(RECEIVER_NOT_REBUILT);
    }
    let candidates = candidates(cx, type_path);
    // Only the calls that leave the object in a state of the same key can leave it in `state`.
    let leaving = candidates
        .get(&state_key(state))
        .map_or(&[][..], Vec::as_slice);
    for &i in leaving.iter().rev() {
        let step = &cx.trace.calls[i];
        if step.id >= before {
            continue;
        }
        let chain = handle_chain(cx, step, type_path);
        // A handle's write-through is what the call is for: `entry(k)` alone changes nothing.
        let Some((pre, after)) = chain
            .as_ref()
            .map(|w| (w.pre, w.after))
            .or_else(|| replay_states(cx, step, type_path, true))
        else {
            continue;
        };
        if !same_state(after, state) || same_state(pre, state) {
            continue;
        }
        // Each way tried may recurse; a long recording could otherwise try them all.
        if *budget == 0 {
            return Err(RECEIVER_NOT_REBUILT);
        }
        *budget -= 1;
        // A chain's text, or the call's own (its replay closures written once it is chosen).
        let call_expr = match &chain {
            None => replay_call(cx, step).map(Err),
            Some(w) => w.expr(cx).map(Ok),
        };
        let Some(call_expr) = call_expr else {
            continue;
        };
        let at = mark(b);
        let rebuilt = match rebuild_directly(cx, b, Wanted::new(pre, type_path, step.id, var)) {
            Err(RECEIVER_NOT_REBUILT) => {
                replay(cx, b, pre, type_path, step.id, var, replayed + 1, budget)
            }
            other => other,
        };
        // What the replayed call asked of the mocks, they must answer in the test too.
        let asked = rebuilt
            .and_then(|()| interactions(cx, b, step.id))
            .and_then(|()| {
                chain
                    .iter()
                    .flat_map(|w| w.calls().skip(1))
                    .try_for_each(|c| interactions(cx, b, c.id))
            });
        if asked.is_err() {
            undo(b, at);
            continue;
        }
        // A replayed trait method (`replace.equal(..)` of `DiffHook`) needs its trait in scope.
        let replayed_calls =
            std::iter::once(step).chain(chain.iter().flat_map(|w| w.steps.iter().copied()));
        for c in replayed_calls {
            if let Some(Target::Callable(c)) = cx.targets.get(&c.function) {
                b.trait_uses.extend(c.via_trait.iter().cloned());
            }
        }
        match (chain, call_expr) {
            // A statement, not a binding: `*map.entry(k).or_insert(0) = 1;`,
            // `url.query_pairs_mut().append_pair("q", "1");`.
            (Some(w), Ok(call_expr)) => b.setup.push(Binding {
                var: String::new(),
                mutable: false,
                expr: format!(
                    "{}{var}.{call_expr}",
                    if w.written.is_some() { "*" } else { "" }
                ),
                repeat: 1,
                times: None,
            }),
            (_, call) => {
                let (call_expr, after) = match call {
                    Ok(text) => (text, Vec::new()),
                    Err(call) => call.add_to(b),
                };
                // What the program went on using lives on (see `step_result_var`).
                let result = step_result_var(cx, b, &[step.id]);
                b.setup.push(Binding {
                    var: result,
                    mutable: false,
                    expr: format!("{var}.{call_expr}"),
                    repeat: 1,
                    times: None,
                });
                b.setup.extend(after);
            }
        }
        return Ok(());
    }
    Err(RECEIVER_NOT_REBUILT)
}

#[cfg(test)]
mod tests {
    use crate::testdata::rulebook;

    #[test]
    fn a_state_left_by_recorded_calls_is_reached_by_replaying_them_and_checked() {
        // `c.total()` after `Counter::new(2)` and two `bump()`s.
        let rebuilt = rulebook().rebuilt("rulebook::Counter::total", 0, "rulebook::Counter", false);
        let (rule, setup, checks) = (rebuilt.rule, rebuilt.setup, rebuilt.checks);
        assert_eq!(rule, "calls");
        assert_eq!(
            setup,
            [
                "rulebook::Counter::new(2u32)",
                "receiver.bump()",
                "receiver.bump()"
            ]
        );
        assert_eq!(checks, ["receiver.total() == 4u32"]);
    }
}
