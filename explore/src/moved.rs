//! Getters a change moved (a strong oracle, issue 27's, for explored tests): in, a kept
//! sequence, the crate's callables, and the states two harness runs answered before and after
//! the sequence's last change (a `&mut self` call, or a call that made an object); out, the
//! getters of the object that call changed or made whose answers it moved, to append to the
//! sequence (`lookups::answered` then keeps those two processes answered alike). An object's
//! `Debug` text says what it holds, not always what a call did to it: `shrink_to_fit` leaves a
//! vector's elements as they were and gives back its capacity, so a test that checks only the
//! elements passes with the shrink broken; `IndexSet::with_capacity(6)` and `IndexSet::new()`
//! both print `{}`. The test asks `v.capacity()` after the calls, as a reviewer would, where
//! the call moved it (a made object had no answer before: each of its getters moved).

use std::collections::{BTreeMap, BTreeSet};

use crate::api::Explorable;
use crate::harness::run::Final;
use crate::keep::Kept;
use crate::strategy::Space;

/// A sequence's last change: where it stands, the object slot it changed or made, and
/// whether it made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    pub at: usize,
    pub slot: (usize, u64),
    pub made: bool,
}

/// The last call of `kept` that changed an object (a `&mut self` call) or made one (its result
/// filled a slot).
pub fn last_change(kept: &Kept, ex: &Explorable, space: &Space) -> Option<Change> {
    let changed = (kept.changed_slots(&ex.callables, space).last()).map(|&(slot, at)| Change {
        at,
        slot,
        made: false,
    });
    let made = (kept.calls.iter().enumerate().rev()).find_map(|(at, &call)| {
        let (f, digits) = space.decode(call);
        let slot = ex.callables[f].filled_slot(&digits, kept.outcomes.get(at))?;
        Some(Change {
            at,
            slot,
            made: true,
        })
    });
    [changed, made].into_iter().flatten().max_by_key(|c| c.at)
}

/// The getters, as (object type, callable), whose answers say what the object's `Debug` text
/// does not: those two of `states` with the same `Debug` text answered differently (a
/// vector's `capacity()` before and after `shrink_to_fit`), and every getter of an object
/// `states` hold no `Debug` text of. A getter the `Debug` text always told (`len()` of a
/// vector whose `Debug` lists its elements) checks nothing that text does not.
pub fn beyond_debug<'f>(states: impl IntoIterator<Item = &'f Final>) -> BTreeSet<(usize, usize)> {
    let mut answers: BTreeMap<(usize, usize, Option<&str>), BTreeSet<&str>> = BTreeMap::new();
    for fin in states {
        for (object, slot, getter, text) in &fin.getters {
            let debug = (fin.debug.iter())
                .find(|(o, s, _)| (o, s) == (object, slot))
                .map(|(.., t)| t.as_str());
            (answers.entry((*object, *getter, debug)).or_default()).insert(text);
        }
    }
    (answers.into_iter())
        .filter(|((.., debug), said)| debug.is_none() || said.len() > 1)
        .map(|((object, getter, _), _)| (object, getter))
        .collect()
}

/// The getter calls to append to `kept`: each getter of the slot its last change (`change`)
/// changed or made whose answer after the calls (`after`) differs from its answer before that
/// call (`before`: the states after `kept.calls[..at]`; a made object's every answer) and says
/// what the object's `Debug` text does not (`beyond`, [`beyond_debug`]); not one the sequence
/// already calls on that slot after the change.
pub fn asked(
    kept: &Kept,
    space: &Space,
    change: Change,
    (before, after): (&Final, &Final),
    beyond: &BTreeSet<(usize, usize)>,
) -> Vec<u64> {
    let Change {
        at,
        slot: (object, slot),
        made,
    } = change;
    let before_said = |getter: usize| {
        (before.getters.iter())
            .find(|(o, s, g, _)| (*o, *s, *g) == (object, slot, getter))
            .map(|(.., text)| text)
    };
    let since = kept.calls.get(at + 1..).unwrap_or_default();
    let mut out = Vec::new();
    for (o, s, getter, text) in &after.getters {
        if (*o, *s) != (object, slot) {
            continue;
        }
        let moved = made || before_said(*getter).is_some_and(|was| was != text);
        let call = space.encode(*getter, &[slot]);
        if moved
            && beyond.contains(&(object, *getter))
            && !since.contains(&call)
            && !out.contains(&call)
        {
            out.push(call);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::run::CallOutcome;
    use crate::testdata::{change, gauge_api, getter, kept, parse};

    fn said(getters: &[(u64, usize, &str)]) -> Final {
        Final {
            getters: (getters.iter())
                .map(|&(slot, g, t)| (0, slot, g, t.to_string()))
                .collect(),
            ..Final::default()
        }
    }

    #[test]
    fn the_last_change_is_the_last_mut_self_call_or_made_object_and_its_slot() {
        // new (0), level (1, `&self`), shrink (2, `&mut self`), parse (3, may fill nothing);
        // slots 0..2.
        let ex = gauge_api(vec![getter("level", "u8"), change("shrink"), parse()]);
        let space = Space::new(vec![vec![8, 2], vec![2], vec![2], vec![4, 2]]).unwrap();
        let calls = vec![
            space.encode(0, &[3, 1]),
            space.encode(2, &[1]),
            space.encode(2, &[0]),
            space.encode(1, &[0]),
        ];
        let change = |at, slot, made| Some(Change { at, slot, made });
        assert_eq!(
            last_change(&kept(calls.clone()), &ex, &space),
            change(2, (0, 0), false)
        );
        // `Gauge::new(3)` made slot 1.
        assert_eq!(
            last_change(&kept(calls[..1].to_vec()), &ex, &space),
            change(0, (0, 1), true)
        );
        // A maker after the last `&mut self` call is the last change.
        let mut made_last = calls[..2].to_vec();
        made_last.push(space.encode(0, &[1, 0]));
        assert_eq!(
            last_change(&kept(made_last), &ex, &space),
            change(2, (0, 0), true)
        );
        // A maker whose `Err` filled nothing made nothing.
        let mut refused = kept(vec![space.encode(1, &[0]), space.encode(3, &[2, 1])]);
        refused.outcomes = vec![
            CallOutcome::Returned(Some("3".into())),
            CallOutcome::Returned(Some("Err(Empty)".into())),
        ];
        assert_eq!(last_change(&refused, &ex, &space), None);
    }

    #[test]
    fn a_getter_is_asked_where_the_last_change_moved_its_answer() {
        // new (0), level (1), room (2), shrink (3).
        let ex = gauge_api(vec![
            getter("level", "u8"),
            getter("room", "usize"),
            change("shrink"),
        ]);
        let space = Space::new(vec![vec![8, 2], vec![2], vec![2], vec![2]]).unwrap();
        let calls = vec![space.encode(0, &[3, 1]), space.encode(3, &[1])];
        let change = last_change(&kept(calls.clone()), &ex, &space).unwrap();
        let before = said(&[(1, 1, "3"), (1, 2, "8"), (0, 2, "4")]);
        let after = said(&[(1, 1, "3"), (1, 2, "3"), (0, 2, "2")]);
        let all: BTreeSet<(usize, usize)> = [(0, 1), (0, 2)].into();
        // `room` of slot 1 moved (8 to 3); its `level` did not; slot 0 is not the one changed.
        let room = space.encode(2, &[1]);
        let ask = |calls: Vec<u64>, before: &Final, beyond: &BTreeSet<(usize, usize)>| {
            asked(&kept(calls), &space, change, (before, &after), beyond)
        };
        assert_eq!(ask(calls.clone(), &before, &all), vec![room]);
        // Not when the object's `Debug` text tells the room.
        assert!(ask(calls.clone(), &before, &[(0, 1)].into()).is_empty());
        // Not asked again when the sequence already asks it after the change.
        let mut looked = calls.clone();
        looked.push(room);
        assert!(ask(looked, &before, &all).is_empty());
        // A getter that did not answer before (it panicked) is not said to have moved.
        assert!(ask(calls.clone(), &said(&[]), &all).is_empty());
        // An object the last call made had no answer before: each getter that says what the
        // `Debug` text does not is asked.
        let made = Change {
            at: 0,
            slot: (0, 1),
            made: true,
        };
        let new_only = kept(calls[..1].to_vec());
        let level = space.encode(1, &[1]);
        assert_eq!(
            asked(&new_only, &space, made, (&said(&[]), &after), &all),
            vec![level, room]
        );
        assert_eq!(
            asked(
                &new_only,
                &space,
                made,
                (&said(&[]), &after),
                &[(0, 2)].into()
            ),
            vec![room]
        );
    }

    #[test]
    fn a_getter_says_more_than_debug_where_one_debug_text_came_with_two_answers() {
        let state = |debug: &str, getters: &[(usize, &str)]| Final {
            debug: vec![(0, 1, debug.to_string())],
            getters: (getters.iter())
                .map(|&(g, t)| (0, 1, g, t.to_string()))
                .collect(),
            ..Final::default()
        };
        // `len` (1) always goes with the text; `room` (2) answered 8 and 3 for "[1, 2, 3]".
        let states = [
            state("[1, 2, 3]", &[(1, "3"), (2, "8")]),
            state("[1, 2, 3]", &[(1, "3"), (2, "3")]),
            state("[1]", &[(1, "1"), (2, "8")]),
        ];
        assert_eq!(beyond_debug(&states), [(0, 2)].into());
        // An object with no `Debug` text: every getter says something.
        let blind = Final {
            getters: vec![(0, 1, 1, "3".into())],
            ..Final::default()
        };
        assert_eq!(beyond_debug([&blind]), [(0, 1)].into());
    }
}
