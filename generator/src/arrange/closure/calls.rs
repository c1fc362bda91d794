//! Which recorded calls of a closure a replay closure answers, in the order the program made
//! them: those below the call that got it ([`below`]) or, when the call kept it in its result
//! (an adaptor), also those of the program's later use of that result ([`while_kept`]).
//!
//! A call left out as equivalent to a kept sibling (the recorder's repeats, `generate`'s
//! grouping) made the same calls below it as that sibling, in the same order (equivalence
//! compares the calls below): the sibling's calls of the closure are given again at the place
//! of each one left out. The equivalents of a call also name its counterparts below an
//! ancestor's left-out equivalent; those all come after that ancestor's first left-out
//! equivalent (after the ancestor's subtree), while a sibling left out comes before it, inside
//! its parent.

use carve_storage::{Call, CallId, FunctionId};

use crate::arrange::context::Ctx;

/// The calls of `functions` (the bodies the closure may be) below `call`; `None` when one did
/// not return.
pub(super) fn below<'t>(
    cx: &Ctx<'t>,
    call: &Call,
    functions: &[FunctionId],
) -> Option<Vec<&'t Call>> {
    let bound = first_left_out(cx, call.id).min(ancestors_bound(cx, call));
    let walk = Walk {
        cx,
        functions,
        after: None,
        end: u64::MAX,
    };
    walk.run(kids(cx, Some(call.id)), bound, call.thread)
}

/// The calls of `functions` below `call` and below the calls after it under its parent on its
/// thread, up to the first call after it that is given a new closure of the environment `env`
/// (the program made another one, as a loop does: its calls answer that call's test); `None`
/// when one did not return. A call left out as equivalent to `call` got such a new closure.
pub(super) fn while_kept<'t>(
    cx: &Ctx<'t>,
    call: &Call,
    functions: &[FunctionId],
    env: &str,
) -> Option<Vec<&'t Call>> {
    let siblings = kids(cx, call.parent);
    let at = siblings
        .iter()
        .position(|&i| cx.trace.calls[i].id == call.id)?;
    let walk = Walk {
        cx,
        functions,
        after: Some((call.id, env)),
        end: first_left_out(cx, call.id),
    };
    walk.run(&siblings[at..], ancestors_bound(cx, call), call.thread)
}

/// A walk over recorded subtrees collecting the calls of `functions`.
struct Walk<'c, 't> {
    cx: &'c Ctx<'t>,
    functions: &'c [FunctionId],
    /// Stop at a call after this one that is given a new closure of this environment (by
    /// value: its type is the environment's).
    after: Option<(CallId, &'c str)>,
    /// Where the walk ends: calls and left-out calls from this id on are not counted.
    end: u64,
}

/// A call whose subtree is being walked (with a stack, not by recursion: a deep recursion
/// records a tree as deep).
struct Frame<'t> {
    at: Option<&'t Call>,
    kids: std::slice::Iter<'t, usize>,
    /// Where a left-out call of an ancestor starts: equivalents from there on are counterparts
    /// below it, not siblings.
    bound: u64,
    /// The calls of the closure found so far below, each run at the id it holds its place by.
    parts: Vec<(u64, Vec<&'t Call>)>,
}

impl<'t> Walk<'_, 't> {
    fn run(mut self, top: &'t [usize], bound: u64, thread: i32) -> Option<Vec<&'t Call>> {
        let trace: &'t carve_storage::Trace = self.cx.trace;
        let mut stack = vec![Frame {
            at: None,
            kids: top.iter(),
            bound,
            parts: Vec::new(),
        }];
        loop {
            let top = stack.last_mut()?;
            match top.kids.next().map(|&i| &trace.calls[i]) {
                // Roots of other threads.
                Some(kid) if kid.thread != thread => {}
                Some(kid) if kid.id.0 >= self.end || self.new_closure(kid) => {
                    self.end = self.end.min(kid.id.0);
                    for frame in &mut stack {
                        frame.kids = [].iter();
                    }
                }
                Some(kid) if self.functions.contains(&kid.function) => {
                    if kid.outcome != carve_storage::Outcome::Returned {
                        return None;
                    }
                    let again = self.siblings_left_out(kid.id, top.bound);
                    top.parts.push((kid.id.0, vec![kid]));
                    top.parts
                        .extend(again.into_iter().map(|at| (at, vec![kid])));
                }
                Some(kid) => {
                    let bound = top.bound.min(first_left_out(self.cx, kid.id));
                    stack.push(Frame {
                        at: Some(kid),
                        kids: kids(self.cx, Some(kid.id)).iter(),
                        bound,
                        parts: Vec::new(),
                    });
                }
                None => {
                    let mut done = stack.pop()?;
                    done.parts.retain(|p| p.0 < self.end);
                    done.parts.sort_by_key(|p| p.0);
                    let found: Vec<&Call> = done.parts.into_iter().flat_map(|p| p.1).collect();
                    let Some(at) = done.at else {
                        return Some(found);
                    };
                    let parent = stack.last_mut()?;
                    if !found.is_empty() {
                        let again = self.siblings_left_out(at.id, parent.bound);
                        parent
                            .parts
                            .extend(again.into_iter().map(|left_out| (left_out, found.clone())));
                        parent.parts.push((at.id.0, found));
                    }
                }
            }
        }
    }

    /// Whether `kid`, after the call that kept the closure, is given a new closure of its
    /// environment by value (not the closure's own body, which takes it by reference or value).
    fn new_closure(&self, kid: &Call) -> bool {
        let Some((after, env)) = self.after else {
            return false;
        };
        kid.id > after
            && !self.functions.contains(&kid.function)
            && kid.args.iter().any(|a| a.value.type_name().trim() == env)
    }

    /// The calls left out as equivalent to `id` that were its siblings (before `bound`).
    fn siblings_left_out(&self, id: CallId, bound: u64) -> Vec<u64> {
        let left_out = self.cx.equivalent.get(&id).into_iter().flatten();
        left_out
            .map(|c| c.0)
            .filter(|&c| c > id.0 && c < bound)
            .collect()
    }
}

/// The calls under `parent` (the roots for `None`), as positions in the trace.
fn kids<'t>(cx: &Ctx<'t>, parent: Option<CallId>) -> &'t [usize] {
    cx.children.get(&parent).map_or(&[][..], Vec::as_slice)
}

/// Where the first call left out as equivalent to `id` is (`u64::MAX` when none).
fn first_left_out(cx: &Ctx, id: CallId) -> u64 {
    cx.equivalent
        .get(&id)
        .and_then(|e| e.iter().map(|c| c.0).filter(|&c| c > id.0).min())
        .unwrap_or(u64::MAX)
}

/// Where the first call left out as equivalent to one of `call`'s ancestors is.
fn ancestors_bound(cx: &Ctx, call: &Call) -> u64 {
    let mut bound = u64::MAX;
    let mut above = call.parent;
    while let Some(id) = above {
        bound = bound.min(first_left_out(cx, id));
        above = cx.call_by_id(id).and_then(|c| c.parent);
    }
    bound
}

#[cfg(test)]
mod tests {
    use carve_storage::FunctionId;

    use crate::testdata::rulebook;

    #[test]
    fn the_calls_below_are_those_of_whichever_body_the_closure_is() {
        let book = rulebook();
        let cx = book.cx();
        let call = book.calls_of("rulebook::apply_each")[0];
        // `main`'s closure, called by `apply_each` once per item.
        let body = book
            .trace
            .calls
            .iter()
            .find(|c| c.parent == Some(call.id))
            .map(|c| c.function)
            .expect("the closure's calls nest under the call");
        // Another body of the same name first (the harness's closure of a test): never called.
        let found = super::below(&cx, call, &[FunctionId(u32::MAX), body]).unwrap();
        let items: Vec<String> = found
            .iter()
            .map(|c| format!("{:?}", c.args.last().map(|a| &a.value)))
            .collect();
        assert_eq!(found.len(), 2, "{items:?}");
        assert!(found.iter().all(|c| c.function == body), "{items:?}");
    }
}
