use super::*;

/// Functions: 1 `lib::f`, 2 `lib::g` (droppable), 3 `<lib::S as lib::T>::m`, 4 a closure.
fn repeats() -> Repeats {
    let mut r = Repeats::default();
    r.function(1, "lib::f");
    r.function(2, "lib::g");
    r.function(3, "<lib::S as lib::T>::m");
    r.function(4, "lib::main::{{closure}}");
    r
}

/// A leaf call of `function` started and ended, with start and end digests `args`, `ret`.
fn leaf(r: &mut Repeats, id: u64, parent: Option<u64>, function: u32, args: u128) -> Ended {
    r.started(id, parent, 1, function, args);
    r.ended(id, 7)
}

fn onto(ended: Ended) -> Option<u64> {
    match ended {
        Ended::Kept => None,
        Ended::Repeat { onto, .. } => Some(onto.id),
    }
}

#[test]
fn a_root_call_like_an_earlier_one_repeats_it_and_a_different_one_is_kept() {
    let mut r = repeats();
    assert_eq!(leaf(&mut r, 1, None, 1, 10), Ended::Kept);
    assert_eq!(leaf(&mut r, 2, None, 1, 11), Ended::Kept);
    assert_eq!(onto(leaf(&mut r, 3, None, 1, 10)), Some(1));
    // Another function with the same values is another call.
    assert_eq!(leaf(&mut r, 4, None, 2, 10), Ended::Kept);
}

#[test]
fn repeats_are_counted_as_runs_of_ids() {
    let mut r = repeats();
    leaf(&mut r, 1, None, 1, 10);
    leaf(&mut r, 2, None, 1, 11);
    for id in [3, 5, 7, 9, 20] {
        let ended = leaf(&mut r, id, None, 1, 10);
        assert_eq!(onto(ended), Some(1));
        r.repeat(1, (id, 1), &[]);
    }
    let changed = r.take_changed();
    assert_eq!(
        changed,
        vec![
            (
                1,
                IdRun {
                    first: 3,
                    step: 2,
                    count: 4,
                    thread: 1,
                }
            ),
            (
                1,
                IdRun {
                    first: 20,
                    step: 0,
                    count: 1,
                    thread: 1,
                }
            ),
        ]
    );
    assert!(r.take_changed().is_empty(), "taken once");
    let ids: Vec<u64> = changed.iter().flat_map(|(_, run)| run.ids()).collect();
    assert_eq!(ids, vec![3, 5, 7, 9, 20]);
}

#[test]
fn trait_methods_and_closures_under_a_parent_and_makers_of_objects_are_never_repeats() {
    let mut r = repeats();
    r.started(100, None, 1, 2, 1);
    leaf(&mut r, 1, Some(100), 3, 10);
    assert_eq!(leaf(&mut r, 2, Some(100), 3, 10), Ended::Kept);
    leaf(&mut r, 3, Some(100), 4, 10);
    assert_eq!(leaf(&mut r, 4, Some(100), 4, 10), Ended::Kept);
    r.ended(100, 7);
    // At the root, no parent's test replays them through a mock.
    leaf(&mut r, 101, None, 3, 10);
    assert_eq!(onto(leaf(&mut r, 102, None, 3, 10)), Some(101));
    leaf(&mut r, 5, None, 1, 12);
    r.started(6, None, 1, 1, 12);
    r.made_object(6);
    assert_eq!(r.ended(6, 7), Ended::Kept);
}

#[test]
fn only_siblings_repeat_each_other() {
    let mut r = repeats();
    // f(10) at the root, then g(1) { f(10) }: the inner f is not the root's sibling.
    leaf(&mut r, 1, None, 1, 10);
    r.started(2, None, 1, 2, 1);
    assert_eq!(leaf(&mut r, 3, Some(2), 1, 10), Ended::Kept);
    assert_eq!(onto(leaf(&mut r, 4, Some(2), 1, 10)), Some(3));
    assert_eq!(r.ended(2, 7), Ended::Kept);
}

#[test]
fn a_parent_repeats_another_only_with_the_same_calls_below_it_dropped_or_not() {
    let mut r = repeats();
    // g(1) { f(10) f(10) }, then g(1) { f(10) }: the second f of the first g was a repeat,
    // yet the two g differ.
    r.started(1, None, 1, 2, 1);
    leaf(&mut r, 2, Some(1), 1, 10);
    assert_eq!(onto(leaf(&mut r, 3, Some(1), 1, 10)), Some(2));
    r.repeat(2, (3, 1), &[]);
    assert_eq!(r.ended(1, 7), Ended::Kept);
    r.started(4, None, 1, 2, 1);
    leaf(&mut r, 5, Some(4), 1, 10);
    assert_eq!(r.ended(4, 7), Ended::Kept);
    // g(1) { f(10) f(10) } again: a repeat of the first, with the calls below it.
    r.started(6, None, 1, 2, 1);
    leaf(&mut r, 7, Some(6), 1, 10);
    assert_eq!(onto(leaf(&mut r, 8, Some(6), 1, 10)), Some(7));
    r.repeat(7, (8, 1), &[]);
    match r.ended(6, 7) {
        Ended::Repeat { onto, last, .. } => {
            assert_eq!((onto.id, onto.last), (1, 3));
            assert_eq!(last, 8, "the calls below it are 7 and 8");
        }
        Ended::Kept => panic!("the third g repeats the first"),
    }
}

#[test]
fn a_repeat_taken_back_is_kept_and_met_by_later_siblings() {
    let mut r = repeats();
    leaf(&mut r, 1, None, 1, 10);
    let ended = leaf(&mut r, 2, None, 1, 10);
    assert_eq!(onto(ended), Some(1));
    r.keep_after_all(ended);
    // The first stays the one later calls repeat.
    assert_eq!(onto(leaf(&mut r, 3, None, 1, 10)), Some(1));
    assert!(r.counting());
}

#[test]
fn calls_that_stop_nesting_stop_the_counting_for_the_rest_of_the_run() {
    let mut r = repeats();
    leaf(&mut r, 1, None, 1, 10);
    r.started(2, None, 1, 1, 11);
    // 3 names 1, which ended, as its parent.
    r.started(3, Some(1), 1, 1, 10);
    assert!(!r.counting());
    assert_eq!(leaf(&mut r, 4, None, 1, 10), Ended::Kept);
}

#[test]
fn an_end_that_is_not_the_innermost_calls_stops_the_counting() {
    let mut r = repeats();
    r.started(1, None, 1, 2, 1);
    r.started(2, Some(1), 1, 1, 10);
    assert_eq!(r.ended(1, 7), Ended::Kept);
    assert!(!r.counting());
}

#[test]
fn threads_nest_apart_and_their_roots_are_siblings() {
    let mut r = repeats();
    r.started(1, None, 1, 1, 10);
    r.started(2, None, 2, 1, 10);
    assert_eq!(r.ended(1, 7), Ended::Kept);
    assert_eq!(onto(r.ended(2, 7)), Some(1));
    assert!(r.counting());
}

#[test]
fn moved_runs_become_the_new_representatives() {
    let mut r = repeats();
    leaf(&mut r, 1, None, 1, 10);
    let moved = [IdRun {
        first: 30,
        step: 5,
        count: 3,
        thread: 2,
    }];
    r.repeat(1, (12, 1), &moved);
    let changed = r.take_changed();
    assert_eq!(changed.len(), 2);
    assert!(changed.contains(&(1, IdRun::one(12, 1))));
    assert!(changed.contains(&(1, moved[0])));
}

#[test]
fn a_run_of_ids_holds_one_threads_calls() {
    let mut r = repeats();
    leaf(&mut r, 1, None, 1, 10);
    r.repeat(1, (2, 1), &[]);
    r.repeat(1, (3, 1), &[]);
    r.repeat(1, (4, 2), &[]);
    let runs: Vec<IdRun> = r.take_changed().into_iter().map(|(_, run)| run).collect();
    assert_eq!(runs.len(), 2);
    assert_eq!((runs[0].count, runs[0].thread), (2, 1));
    assert_eq!((runs[1].first, runs[1].thread), (4, 2));
}

#[test]
fn a_function_whose_calls_were_all_new_is_given_up_and_its_calls_kept() {
    let mut r = repeats();
    let n = GIVE_UP_AFTER;
    for id in 1..=n {
        assert_eq!(leaf(&mut r, id, None, 1, u128::from(id)), Ended::Kept);
    }
    // Alike the first call, but f is given up: kept, as --all-calls keeps it.
    assert_eq!(leaf(&mut r, n + 1, None, 1, 1), Ended::Kept);
    // Other functions are still counted.
    leaf(&mut r, n + 2, None, 2, 1);
    assert_eq!(onto(leaf(&mut r, n + 3, None, 2, 1)), Some(n + 2));
    assert!(r.counting());
}

#[test]
fn one_repeat_keeps_a_function_counted() {
    let mut r = repeats();
    leaf(&mut r, 1, None, 1, 0);
    assert_eq!(onto(leaf(&mut r, 2, None, 1, 0)), Some(1));
    for id in 3..=GIVE_UP_AFTER + 10 {
        leaf(&mut r, id, None, 1, u128::from(id));
    }
    assert_eq!(onto(leaf(&mut r, 100_000, None, 1, 0)), Some(1));
}
