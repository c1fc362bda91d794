//! Getters a change moved (a strong oracle, issue 27's, for explored tests): in, a kept
//! sequence, the crate's callables, and the states two harness runs answered before and after
//! the sequence's last `&mut self` call; out, the getters of the object that call changed
//! whose answers it moved, to append to the sequence (`lookups::answered` then keeps those two
//! processes answered alike). An object's `Debug` text says what it holds, not always what a
//! call did to it: `shrink_to_fit` leaves a vector's elements as they were and gives back its
//! capacity, so a test that checks only the elements passes with the shrink broken. The test
//! asks `v.capacity()` after the calls, as a reviewer would, where the call moved it.

use std::collections::{BTreeMap, BTreeSet};

use crate::api::Explorable;
use crate::harness::run::Final;
use crate::keep::Kept;
use crate::strategy::Space;

/// The last call of `kept` that changed its receiver (a `&mut self` call): where it stands in
/// the sequence and the object slot it changed.
pub fn last_change(kept: &Kept, ex: &Explorable, space: &Space) -> Option<(usize, (usize, u64))> {
    (kept.changed_slots(&ex.callables, space).last()).map(|&(slot, at)| (at, slot))
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

/// The getter calls to append to `kept`: each getter of the slot its last change (`at`,
/// `slot`) changed whose answer after the calls (`after`) differs from its answer before that
/// call (`before`: the states after `kept.calls[..at]`) and says what the object's `Debug`
/// text does not (`beyond`, [`beyond_debug`]); not one the sequence already calls on that
/// slot after the change.
pub fn asked(
    kept: &Kept,
    space: &Space,
    (at, (object, slot)): (usize, (usize, u64)),
    (before, after): (&Final, &Final),
    beyond: &BTreeSet<(usize, usize)>,
) -> Vec<u64> {
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
        let moved = before_said(*getter).is_some_and(|was| was != text)
            && beyond.contains(&(object, *getter));
        let call = space.encode(*getter, &[slot]);
        if moved && !since.contains(&call) && !out.contains(&call) {
            out.push(call);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Callable, Receiver, Ret};
    use crate::testdata::{gauge_api, getter, kept};

    /// `Gauge::NAME(&mut self)`.
    fn change(name: &str) -> Callable {
        Callable {
            path: format!("g::Gauge::{name}"),
            call: name.into(),
            receiver: Some(Receiver {
                object: 0,
                mutable: true,
                by_value: false,
            }),
            params: Vec::new(),
            makes: None,
            ret: Ret::Unit,
        }
    }

    fn said(getters: &[(u64, usize, &str)]) -> Final {
        Final {
            getters: (getters.iter())
                .map(|&(slot, g, t)| (0, slot, g, t.to_string()))
                .collect(),
            ..Final::default()
        }
    }

    #[test]
    fn the_last_change_is_the_last_mut_self_call_and_its_slot() {
        // new (0), level (1, `&self`), shrink (2, `&mut self`); slots 0..2.
        let ex = gauge_api(vec![getter("level", "u8"), change("shrink")]);
        let space = Space::new(vec![vec![8, 2], vec![2], vec![2]]).unwrap();
        let calls = vec![
            space.encode(0, &[3, 1]),
            space.encode(2, &[1]),
            space.encode(2, &[0]),
            space.encode(1, &[0]),
        ];
        assert_eq!(
            last_change(&kept(calls.clone()), &ex, &space),
            Some((2, (0, 0)))
        );
        assert_eq!(last_change(&kept(calls[..1].to_vec()), &ex, &space), None);
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
        let (at, slot) = last_change(&kept(calls.clone()), &ex, &space).unwrap();
        let before = said(&[(1, 1, "3"), (1, 2, "8"), (0, 2, "4")]);
        let after = said(&[(1, 1, "3"), (1, 2, "3"), (0, 2, "2")]);
        let all: BTreeSet<(usize, usize)> = [(0, 1), (0, 2)].into();
        // `room` of slot 1 moved (8 to 3); its `level` did not; slot 0 is not the one changed.
        let room = space.encode(2, &[1]);
        let ask = |calls: Vec<u64>, before: &Final, beyond: &BTreeSet<(usize, usize)>| {
            asked(&kept(calls), &space, (at, slot), (before, &after), beyond)
        };
        assert_eq!(ask(calls.clone(), &before, &all), vec![room]);
        // Not when the object's `Debug` text tells the room.
        assert!(ask(calls.clone(), &before, &[(0, 1)].into()).is_empty());
        // Not asked again when the sequence already asks it after the change.
        let mut looked = calls.clone();
        looked.push(room);
        assert!(ask(looked, &before, &all).is_empty());
        // A getter that did not answer before (it panicked, or the slot was empty) is not
        // said to have moved.
        assert!(ask(calls, &said(&[]), &all).is_empty());
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
