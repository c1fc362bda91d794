//! Grouping on hand-made traces: what is kept, grouped, counted or kept aside as rows.

use super::*;
use crate::act::rules::resolve;
use crate::act::target::Target;
use crate::read::crate_api::CrateApi;
use crate::testdata::{function, run};
use carve_storage::{Arg, Outcome, Value};

fn call(id: u64, parent: Option<u64>, function: u32, x: i128, ret: i128) -> Call {
    Call {
        id: CallId(id),
        parent: parent.map(CallId),
        function: FunctionId(function),
        thread: 1,
        depth: 0,
        args: vec![Arg {
            name: "x".into(),
            value: Value::Int {
                ty: "i32".into(),
                value: x,
            },
        }],
        outcome: Outcome::Returned,
        ret: Some(Value::Int {
            ty: "i32".into(),
            value: ret,
        }),
        after: vec![],
        objects: vec![],
        touches: vec![],
    }
}

fn group(functions: Vec<FunctionInfo>, calls: Vec<Call>) -> GroupedTrace {
    let mut g = Grouper::new(run(), functions, vec![]);
    for c in calls {
        g.push(c);
    }
    g.finish()
}

fn ids(t: &GroupedTrace) -> Vec<u64> {
    t.trace.calls.iter().map(|c| c.id.0).collect()
}

fn functions() -> Vec<FunctionInfo> {
    vec![
        function(0, "app::main"),
        function(1, "app::f"),
        function(2, "app::g"),
        function(3, "<app::A as app::T>::m"),
    ]
}

#[test]
fn equivalent_siblings_keep_the_first_and_count_the_others_under_it() {
    let t = group(
        functions(),
        vec![
            call(1, None, 0, 0, 0),
            call(2, Some(1), 1, 5, 10),
            call(3, Some(1), 1, 6, 12),
            call(4, Some(1), 1, 5, 10),
            call(5, Some(1), 1, 5, 10),
        ],
    );
    assert_eq!(ids(&t), [1, 2, 3]);
    assert_eq!(t.equivalent[&CallId(2)], [CallId(4), CallId(5)]);
    assert_eq!(t.recorded_calls(), 5);
}

#[test]
fn a_call_is_equivalent_only_with_equivalent_calls_below_it() {
    let t = group(
        functions(),
        vec![
            call(1, None, 0, 0, 0),
            call(2, Some(1), 1, 5, 10),
            call(3, Some(2), 2, 1, 1),
            call(4, Some(1), 1, 5, 10),
            call(5, Some(4), 2, 2, 2),
            call(6, Some(1), 1, 5, 10),
            call(7, Some(6), 2, 1, 1),
        ],
    );
    assert_eq!(ids(&t), [1, 2, 3, 4, 5], "4 made another call below it");
    // The subtree of 6 is counted under 2's, call by call.
    assert_eq!(t.equivalent[&CallId(2)], [CallId(6)]);
    assert_eq!(t.equivalent[&CallId(3)], [CallId(7)]);
}

#[test]
fn calls_under_different_parents_trait_methods_and_creators_are_kept() {
    let mut g = Grouper::new(
        run(),
        functions(),
        vec![ObjectInfo {
            id: carve_storage::ObjectId(1),
            type_name: "app::A".into(),
            addr: 0x10,
            created_by: Some(CallId(9)),
        }],
    );
    for c in [
        call(1, None, 0, 0, 0),
        call(2, Some(1), 2, 0, 0),
        call(3, Some(2), 1, 5, 10),
        call(4, Some(1), 2, 1, 0),
        call(5, Some(4), 1, 5, 10),
        call(6, Some(1), 3, 5, 10),
        call(7, Some(1), 3, 5, 10),
        call(8, Some(1), 1, 7, 7),
        call(9, Some(1), 1, 7, 7),
    ] {
        g.push(c);
    }
    let t = g.finish();
    assert_eq!(ids(&t), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert!(t.equivalent.is_empty());
}

#[test]
fn calls_that_do_not_nest_stop_the_grouping() {
    let t = group(
        functions(),
        vec![
            call(1, None, 0, 0, 0),
            call(2, Some(1), 1, 5, 10),
            call(3, Some(1), 1, 5, 10),
            call(4, Some(99), 1, 5, 10),
            call(5, Some(1), 1, 5, 10),
        ],
    );
    assert_eq!(ids(&t), [1, 2, 4, 5]);
    assert_eq!(t.equivalent[&CallId(2)], [CallId(3)]);
}

#[test]
fn with_a_cap_only_the_first_distinct_calls_of_a_function_stay_and_the_rest_are_counted() {
    let mut g = Grouper::new(run(), functions(), vec![]).max_per_function(2);
    for c in [
        call(1, None, 0, 0, 0),
        call(2, Some(1), 1, 1, 1),
        call(3, Some(1), 1, 2, 2),
        // Over the cap: kept aside as a table row.
        call(4, Some(1), 1, 3, 3),
        // Equal to call 2 but under another parent: counted under it.
        call(5, Some(1), 2, 0, 0),
        call(6, Some(5), 1, 1, 1),
        // Over the cap, but a first call of g (a new key) lies below it: it stays.
        call(7, Some(1), 1, 4, 4),
        call(8, Some(7), 2, 9, 9),
        // Trait methods are never quiet: over the cap, still kept.
        call(9, Some(1), 3, 1, 1),
        call(10, Some(1), 3, 2, 2),
        call(11, Some(1), 3, 3, 3),
    ] {
        g.push(c);
    }
    let t = g.finish();
    assert_eq!(ids(&t), [1, 2, 3, 5, 7, 8, 9, 10, 11]);
    assert_eq!(t.equivalent[&CallId(2)], [CallId(6)]);
    let rows: Vec<u64> = t.rows.iter().map(|c| c.id.0).collect();
    assert_eq!(rows, [4]);
    assert!(t.over_max_per_function.is_empty());
    assert_eq!(t.recorded_calls(), 11);
}

#[test]
fn past_the_cap_rows_are_kept_up_to_ten_times_it_and_the_rest_counted() {
    let mut g = Grouper::new(run(), functions(), vec![]).max_per_function(1);
    g.push(call(1, None, 0, 0, 0));
    // 1 kept, 10 rows, 4 over the cap; then calls equal to a row count under it.
    for n in 0..15 {
        g.push(call(2 + n, Some(1), 1, n as i128, n as i128));
    }
    g.push(call(20, None, 2, 0, 0));
    g.push(call(21, Some(20), 1, 3, 3));
    g.push(call(22, Some(20), 1, 13, 13));
    let t = g.finish();
    assert_eq!(ids(&t), [1, 2, 20]);
    let rows: Vec<u64> = t.rows.iter().map(|c| c.id.0).collect();
    assert_eq!(rows, (3..13).collect::<Vec<u64>>());
    assert_eq!(t.equivalent[&CallId(5)], [CallId(21)]);
    // 21 ran under 20, not under 5's parent: 5 stands in for it there.
    assert_eq!(t.stand_ins, BTreeMap::from([(CallId(20), vec![CallId(5)])]));
    assert_eq!(
        t.over_max_per_function,
        BTreeMap::from([(FunctionId(1), 5)])
    );
    assert_eq!(t.recorded_calls(), 19);
}

/// `f` (function 1) and `g` (function 2) as functions whose values may go, and object 7
/// as one of a private type.
fn lean() -> LeanValues {
    LeanValues {
        functions: HashSet::from([FunctionId(1), FunctionId(2)]),
        private_objects: HashSet::from([carve_storage::ObjectId(7)]),
    }
}

#[test]
fn a_reference_keeps_its_address_and_type_when_its_values_go() {
    let mut c = call(1, None, 1, 0, 0);
    c.args[0].value = Value::Ref {
        ty: "&app::T".into(),
        addr: 0x40,
        target: Box::new(Value::Int {
            ty: "i32".into(),
            value: 3,
        }),
    };
    without_values(&mut c);
    let Value::Ref { ty, addr, target } = &c.args[0].value else {
        panic!("{c:?}");
    };
    assert_eq!((ty.as_str(), *addr), ("&app::T", 0x40));
    assert!(
        matches!(&**target, Value::Unavailable { ty, reason } if ty == "i32" && reason == VALUE_NOT_KEPT)
    );
}

fn values_gone(call: &Call) -> bool {
    let gone =
        |v: &Value| matches!(v, Value::Unavailable { reason, .. } if reason == VALUE_NOT_KEPT);
    // A result no bigger than its shape (a number here) stays.
    call.args.iter().all(|a| gone(&a.value))
        && call.ret.as_ref().is_none_or(|r| gone(r) || is_scalar(r))
}

/// Groups `calls` with a cap of 1 with and without lean values.
fn both_ways(calls: &[Call]) -> (GroupedTrace, GroupedTrace) {
    let run_with = |lean_values: Option<LeanValues>| {
        let mut g = Grouper::new(run(), functions(), vec![]).max_per_function(1);
        if let Some(l) = lean_values {
            g = g.lean_values(l);
        }
        for c in calls {
            g.push(c.clone());
        }
        g.finish()
    };
    (run_with(None), run_with(Some(lean())))
}

#[test]
fn lean_values_group_and_count_every_call_as_the_full_values_do() {
    let mut calls = vec![call(1, None, 0, 0, 0)];
    // Equal siblings (the first one's values are gone when the second closes), distinct
    // calls over the cap (rows, then counted), equal calls under another parent.
    for (n, x) in [5, 5, 6, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 6]
        .into_iter()
        .enumerate()
    {
        calls.push(call(2 + n as u64, Some(1), 1, x, 2 * x));
    }
    calls.push(call(30, Some(1), 2, 0, 0));
    calls.push(call(31, Some(30), 1, 5, 10));
    calls.push(call(32, Some(30), 1, 6, 12));
    let (full, lean) = both_ways(&calls);
    assert_eq!(ids(&lean), ids(&full));
    assert_eq!(lean.equivalent, full.equivalent);
    assert!(!full.equivalent.is_empty());
    assert_eq!(lean.over_max_per_function, full.over_max_per_function);
    assert!(!full.over_max_per_function.is_empty());
    let row_ids = |t: &GroupedTrace| t.rows.iter().map(|c| c.id).collect::<Vec<_>>();
    assert_eq!(row_ids(&lean), row_ids(&full));
    assert_eq!(lean.recorded_calls(), full.recorded_calls());
    // f's and g's kept calls and rows lost their values, keeping their shape; main did not.
    for c in lean.trace.calls.iter().chain(&lean.rows) {
        let f = &full
            .trace
            .calls
            .iter()
            .chain(&full.rows)
            .find(|k| k.id == c.id)
            .unwrap();
        assert_eq!(values_gone(c), c.function != FunctionId(0), "{c:?}");
        assert_eq!(c.args.len(), f.args.len());
        assert_eq!(c.args[0].name, f.args[0].name);
        assert_eq!(c.args[0].value.type_name(), f.args[0].value.type_name());
        assert_eq!(c.outcome, f.outcome);
        // What a call inside answered is read by distilling: a number stays.
        assert_eq!(c.ret, f.ret);
    }
}

#[test]
fn a_call_equal_but_for_values_is_not_taken_for_one_whose_values_went() {
    // 2 and 3 differ only in their result: never equivalent, 2's values gone or not.
    let (full, lean) = both_ways(&[
        call(1, None, 0, 0, 0),
        call(2, Some(1), 1, 5, 10),
        call(3, Some(1), 1, 5, 11),
    ]);
    assert_eq!(ids(&lean), ids(&full));
    assert_eq!(lean.equivalent, full.equivalent);
    assert!(lean.equivalent.is_empty());
}

#[test]
fn values_stay_on_calls_a_rule_reads_even_of_private_functions() {
    let creator = call(2, Some(1), 1, 1, 1);
    let mut touches = call(3, Some(1), 1, 2, 2);
    touches.touches = vec!["clock: std::time::SystemTime::now".into()];
    let with_object = |id: u64, arg: &str, object: u64| {
        let mut c = call(id, Some(1), 2, id as i128, 0);
        c.objects = vec![carve_storage::ArgObject {
            arg: arg.into(),
            object: carve_storage::ObjectId(object),
        }];
        c
    };
    // An object of a type a test may hold (8): its history reads the call's states.
    let public_object = with_object(4, "x", 8);
    let private_object = with_object(5, "x", 7);
    // A `self` that is no private object: a handle chain may end at this call.
    let mut untracked_self = call(6, Some(1), 2, 6, 0);
    untracked_self.args[0].name = "self".into();
    let mut private_self = with_object(7, "self", 7);
    private_self.args[0].name = "self".into();
    let trait_method = call(8, Some(1), 3, 8, 8);
    let mut g = Grouper::new(
        run(),
        functions(),
        vec![ObjectInfo {
            id: carve_storage::ObjectId(9),
            type_name: "app::A".into(),
            addr: 0x10,
            created_by: Some(CallId(2)),
        }],
    )
    .lean_values(lean());
    for c in [
        call(1, None, 0, 0, 0),
        creator,
        touches,
        public_object,
        private_object,
        untracked_self,
        private_self,
        trait_method,
    ] {
        g.push(c);
    }
    let t = g.finish();
    let gone: Vec<u64> = t
        .trace
        .calls
        .iter()
        .filter(|c| values_gone(c))
        .map(|c| c.id.0)
        .collect();
    assert_eq!(gone, [5, 7]);
}

#[test]
fn lean_functions_are_the_private_ones_but_the_crate_traits_methods_display_and_closures() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("src")).unwrap();
    std::fs::write(tmp.path().join("Cargo.toml"), "[package]\nname = \"mk\"\n").unwrap();
    std::fs::write(
        tmp.path().join("src/lib.rs"),
        "pub trait Shape { fn area(&self) -> u64; }\n\
         struct Square { side: u64 }\n\
         impl Square { fn side2(&self) -> u64 { self.side * self.side } }\n\
         impl Shape for Square { fn area(&self) -> u64 { self.side2() } }\n\
         impl Clone for Square { fn clone(&self) -> Square { Square { side: self.side } } }\n\
         impl core::fmt::Display for Square {\n\
             fn fmt(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result { write!(f, \"s\") }\n\
         }\n\
         pub struct Open;\n\
         fn helper(x: u64) -> u64 { [x].iter().map(|v| v + 1).sum() }\n\
         pub fn area(s: &dyn Shape) -> u64 { helper(s.area()) }\n",
    )
    .unwrap();
    let api = CrateApi::load(tmp.path()).unwrap();
    let fns = vec![
        function(0, "mk::helper"),
        function(1, "mk::Square::side2"),
        function(2, "<mk::Square as mk::Shape>::area"),
        function(3, "mk::helper::{{closure}}"),
        function(4, "mk::area"),
        function(5, "<mk::Square as core::clone::Clone>::clone"),
        function(6, "<mk::Square as core::fmt::Display>::fmt"),
    ];
    // The trait method of the private type is private to the planner too: the path is what
    // keeps its values (a parent's test mocks it with them).
    assert!(matches!(resolve(&api, &fns[2]), Target::Private));
    assert!(matches!(resolve(&api, &fns[6]), Target::Private));
    let object = |id: u64, ty: &str| ObjectInfo {
        id: carve_storage::ObjectId(id),
        type_name: ty.into(),
        addr: id,
        created_by: None,
    };
    let lean = LeanValues::new(
        &api,
        &fns,
        &[
            object(1, "mk::Square"),
            object(2, "mk::Open"),
            object(3, "alloc::string::String"),
        ],
    );
    // A std trait's method on the private type (no mock is made of it) may go.
    assert_eq!(
        lean.functions,
        HashSet::from([FunctionId(0), FunctionId(1), FunctionId(5)])
    );
    assert_eq!(
        lean.private_objects,
        HashSet::from([carve_storage::ObjectId(1)])
    );
}

#[test]
fn trait_calls_at_the_root_are_grouped_as_no_mock_replays_them() {
    let t = group(
        functions(),
        vec![
            call(1, None, 3, 5, 10),
            call(2, None, 3, 5, 10),
            call(3, None, 0, 0, 0),
            call(4, Some(3), 3, 5, 10),
            call(5, Some(3), 3, 5, 10),
        ],
    );
    assert_eq!(
        ids(&t),
        [1, 3, 4, 5],
        "under a parent, each is a mock's expectation"
    );
    assert_eq!(t.equivalent[&CallId(1)], [CallId(2)]);
}

#[test]
fn repeats_the_recorder_counted_are_equivalents_and_go_with_their_representative() {
    let mut g = Grouper::new(run(), functions(), vec![])
        .with_repeats(BTreeMap::from([
            (CallId(1), vec![CallId(4), CallId(7)]),
            (CallId(3), vec![CallId(9)]),
        ]))
        .max_per_function(1);
    // 1 and 3 are calls of f with other values; 5, with 1's values, is not 1's sibling.
    g.push(call(1, None, 1, 5, 10));
    g.push(call(2, None, 0, 0, 0));
    g.push(call(3, Some(2), 1, 6, 12));
    g.push(call(5, Some(2), 1, 5, 10));
    let t = g.finish();
    assert_eq!(ids(&t), [1, 2]);
    // 5 equals 1 (the first distinct call of f): counted under it.
    assert_eq!(t.equivalent[&CallId(1)], [CallId(4), CallId(7), CallId(5)]);
    // 3 is past f's cap of one distinct call: kept aside as a row, its repeats with it.
    assert_eq!(t.rows.iter().map(|c| c.id.0).collect::<Vec<_>>(), [3]);
    assert_eq!(t.equivalent[&CallId(3)], [CallId(9)]);
    assert_eq!(t.recorded_calls(), 7, "1 to 5, 7 and 9");
}
