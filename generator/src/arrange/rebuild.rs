//! How to build an object of the crate in a recorded state (a receiver, an object argument):
//! the rules of `rebuild/`, one file each, tried in the order of [`RULES`] by [`rebuild`]; those
//! that build it directly are listed in [`directly::DIRECTLY`]. A new way is a new file and one
//! line in one of the two lists.

use crate::arrange::builder::{Attempt, Builder};
use crate::arrange::check::observations;
use crate::arrange::context::Ctx;
use crate::arrange::rebuild::directly::rebuild_directly;
use crate::arrange::rebuild::replay::REPLAY_BUDGET;
use crate::arrange::values::state_key;
use crate::arrange::wanted::{Answer, Wanted};
use crate::reasons::RECEIVER_NOT_REBUILT;

pub(crate) mod derive;
pub(crate) mod directly;
pub(crate) mod history;
pub(crate) mod part_of_returned;
pub(crate) mod parts;
pub(crate) mod producer;
pub(crate) mod public_const;
pub(crate) mod replay;
pub(crate) mod stored_fields;
pub(crate) mod struct_literal;
pub(crate) mod text;

/// Adds `let <var> = ...;` giving an object in `state`: its recorded constructor replayed
/// (trait objects it got become mocks), or a struct literal, or else the constructor followed by
/// the recorded calls that brought the object to `state` (seed 001's feasible call sequences),
/// or else a constructor seen to store its arguments, given the state's fields, or the value
/// composed of its parts rebuilt in turn.
/// A state reached through calls is checked before the test acts, where it is observable.
/// An object whose recorded state leaves out what its methods read (memory behind pointers) is
/// rebuilt from its own history first (see [`history`]): equal recorded states prove nothing.
/// Where that history cannot be replayed, the state-based rules below still try, and
/// verification takes out a test whose arrangement did not give the recorded result.
pub(crate) fn rebuild(cx: &Ctx, b: &mut Builder, w: Wanted) -> Result<(), &'static str> {
    decide(cx, b, w).map(|_| ())
}

/// [`rebuild`], with the name of the rule that built the object.
pub(crate) fn decide(cx: &Ctx, b: &mut Builder, w: Wanted) -> Result<&'static str, &'static str> {
    let attempt = Attempt {
        type_path: w.type_path.to_string(),
        state: state_key(w.state),
        object: w.object,
        before: w.before,
        mutable: w.mutable,
        producer_depth: b.producer_depth,
        plain_only: b.plain_only,
        mocks: (b.deps.len(), b.deps.iter().map(|d| d.calls.len()).sum()),
        fallbacks: (cx.whole_histories.get(), cx.weak_oracles.get()),
    };
    if let Some(why) = b.failed.get(&attempt) {
        return Err(why);
    }
    let decided = try_rules(cx, b, w);
    if let Err(why) = decided {
        b.failed.insert(attempt, why);
    }
    decided
}

/// [`decide`], worked out: each rule of [`RULES`] in turn.
fn try_rules(cx: &Ctx, b: &mut Builder, w: Wanted) -> Result<&'static str, &'static str> {
    // When nothing rebuilds it, a rule's reason (the history's) is the one to give.
    let mut reason = RECEIVER_NOT_REBUILT;
    for (name, rule) in RULES {
        match rule(cx, b, w) {
            Answer::Built { check } => {
                if check {
                    let checks = observations(cx, w.var, w.state, w.type_path);
                    b.checks.extend(checks);
                }
                return Ok(name);
            }
            Answer::Pass(Some(why)) => reason = why,
            Answer::Pass(None) => {}
            Answer::Fail(why) => return Err(why),
        }
    }
    Err(reason)
}

/// A rebuild rule: an object in the state wanted, bound to `var`.
pub(crate) type Rule = fn(&Ctx, &mut Builder, Wanted) -> Answer;

/// The rebuild rules in the order they are tried, by name.
pub(crate) const RULES: &[(&str, Rule)] = &[
    ("history", history::rule),
    ("calls", calls),
    ("derive", derive::rule),
    ("text", text::rule),
    ("stored_fields", stored_fields::rule),
    ("parts", parts::rule),
];

/// The object by recorded calls: a producer of the state (the rules of
/// [`directly::DIRECTLY`]), else the calls that led to it ([`replay`]); calls with literal
/// arguments first, since a constructor and the calls since make a shorter test than a
/// producer whose arguments are objects to rebuild in turn.
fn calls(cx: &Ctx, b: &mut Builder, w: Wanted) -> Answer {
    let outer = b.plain_only;
    b.plain_only = true;
    let plain = rebuild_by_calls(cx, b, w);
    b.plain_only = outer;
    let by_calls = match plain {
        Err(RECEIVER_NOT_REBUILT) if !outer => rebuild_by_calls(cx, b, w),
        other => other,
    };
    match by_calls {
        // Built by its producer: the state is what that call gave, nothing to check.
        Ok(Rebuilt::Directly) => Answer::Built { check: false },
        Ok(Rebuilt::Replayed) => Answer::Built { check: true },
        Err(RECEIVER_NOT_REBUILT) => Answer::Pass(None),
        Err(why) => Answer::Fail(why),
    }
}

/// How [`rebuild_by_calls`] reached the state.
pub(crate) enum Rebuilt {
    /// A call that gave the state (or a literal).
    Directly,
    /// The calls that led to the state, replayed.
    Replayed,
}

/// [`rebuild`] through recorded calls: a producer of the state, else the calls that led to it.
pub(crate) fn rebuild_by_calls(
    cx: &Ctx,
    b: &mut Builder,
    w: Wanted,
) -> Result<Rebuilt, &'static str> {
    match rebuild_directly(cx, b, w) {
        Err(RECEIVER_NOT_REBUILT) => {}
        other => return other.map(|()| Rebuilt::Directly),
    }
    let mut budget = REPLAY_BUDGET;
    let Wanted {
        state,
        type_path,
        before,
        var,
        ..
    } = w;
    replay::replay(cx, b, state, type_path, before, var, 0, &mut budget).map(|()| Rebuilt::Replayed)
}

#[cfg(test)]
mod tests {
    use carve_storage::CallId;

    use crate::arrange::builder::Builder;
    use crate::reasons::RECEIVER_NOT_REBUILT;
    use crate::testdata::rulebook;

    #[test]
    fn a_rebuild_that_failed_is_not_worked_out_again_in_the_same_test() {
        // `c.total()`'s counter as it was before the first call: no call made it yet.
        let r = rulebook();
        let cx = r.cx();
        let mut b = Builder::default();
        let mut w = r.receiver("rulebook::Counter::total", 0, "rulebook::Counter");
        w.before = CallId(0);
        assert_eq!(super::decide(&cx, &mut b, w), Err(RECEIVER_NOT_REBUILT));
        assert_eq!(b.failed.len(), 1);
        let (vars, setup) = (b.vars.clone(), b.setup.len());
        assert_eq!(super::decide(&cx, &mut b, w), Err(RECEIVER_NOT_REBUILT));
        assert_eq!(
            (b.vars.clone(), b.setup.len(), b.failed.len()),
            (vars, setup, 1)
        );
        // Asked as it was before the call instead, the same counter is rebuilt.
        let w = r.receiver("rulebook::Counter::total", 0, "rulebook::Counter");
        assert!(super::decide(&cx, &mut b, w).is_ok());
    }
}
