//! How to build an object of the crate in a recorded state (a receiver, an object argument):
//! the rules of `rebuild/` tried in order by [`rebuild`].

use crate::arrange::builder::Builder;
use crate::arrange::check::observations;
use crate::arrange::context::Ctx;
use crate::arrange::rebuild::derive::derive;
use crate::arrange::rebuild::directly::rebuild_directly;
use crate::arrange::rebuild::replay::REPLAY_BUDGET;
use crate::arrange::wanted::Wanted;
use crate::reasons::RECEIVER_NOT_REBUILT;

pub(crate) mod derive;
pub(crate) mod directly;
pub(crate) mod history;
pub(crate) mod part_of_returned;
pub(crate) mod producer;
pub(crate) mod replay;
pub(crate) mod text;

/// Adds `let <var> = ...;` giving an object in `state`: its recorded constructor replayed
/// (trait objects it got become mocks), or a struct literal, or else the constructor followed by
/// the recorded calls that brought the object to `state` (seed 001's feasible call sequences).
/// A state reached through calls is checked before the test acts, where it is observable.
/// An object whose recorded state leaves out what its methods read (memory behind pointers) is
/// rebuilt from its own history first (see [`history`]): equal recorded states prove nothing.
/// Where that history cannot be replayed, the state-based rules below still try, and
/// verification takes out a test whose arrangement did not give the recorded result.
pub(crate) fn rebuild(cx: &Ctx, b: &mut Builder, w: Wanted) -> Result<(), &'static str> {
    let Wanted {
        state,
        type_path,
        var,
        ..
    } = w;
    let mut history_failed = None;
    if history::incomplete(state) {
        // State behind pointers the recorder did not follow: equal recorded states may differ,
        // so the object's own history comes first. Where it cannot be replayed, the rules below
        // still try, and verification drops a test whose arrangement was not the recorded one.
        let mut attempt = b.clone();
        match history::rebuild(cx, &mut attempt, w) {
            Ok(()) => {
                *b = attempt;
                let checks = observations(cx, var, state, type_path);
                b.checks.extend(checks);
                return Ok(());
            }
            Err(e) => history_failed = Some(e),
        }
    }
    // When nothing else rebuilds it either, the history's reason is the one to give.
    let not_rebuilt = |e: &'static str| match (e, history_failed) {
        (RECEIVER_NOT_REBUILT, Some(history)) => history,
        _ => e,
    };
    // Calls with literal arguments first: a constructor and the calls since make a shorter test
    // than a producer whose arguments are objects to rebuild in turn.
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
        Ok(Rebuilt::Directly) => return Ok(()),
        Ok(Rebuilt::Replayed) => {}
        Err(RECEIVER_NOT_REBUILT) => match derive(cx, b, state, type_path, w.before, var) {
            Ok(()) => {}
            // No call leads to the state, but its text does (`Url::parse(..)` of what
            // `as_str()` gave on it): the rule checks that text itself.
            Err(RECEIVER_NOT_REBUILT) if text::rebuild(cx, b, state, type_path, var, w.mutable) => {
                return Ok(());
            }
            Err(e) => return Err(not_rebuilt(e)),
        },
        Err(e) => return Err(not_rebuilt(e)),
    }
    let checks = observations(cx, var, state, type_path);
    b.checks.extend(checks);
    Ok(())
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
