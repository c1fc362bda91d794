//! Stories, on plain data: kept tests that build one object by the same steps and check it
//! at different points of its life become one test that takes those steps once and checks
//! each call where it was made (seed 003 grows a tree of tests from each entry point; this is
//! one path of it). A test whose arrangement is the first steps of another's (`new`, six
//! `push`es) and whose call changes nothing it was given (`capacity()`) is checked there,
//! between two steps; one whose call *is* the other's next step (`let _ = v.truncate(3)`)
//! takes that step's place, its checks after it. The longest arrangement hosts the others.
//!
//! Never a test that panics, mocks, or is a table; a host of no stop stays as it was. The
//! caller verifies the file and keeps the tests as they were when it does not pass whole.

use std::collections::{BTreeMap, BTreeSet};

use crate::body::{Assertion, Binding, Body, Effect};
use crate::plan::model::TestPlan;

/// Where a stop goes in its host's steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Before the host's step `k` (after its last when `k` is their count).
    Before(usize),
    /// In place of the host's step `k`: the stop's call is that step.
    Replacing(usize),
}

impl At {
    fn step(self) -> usize {
        let (At::Before(k) | At::Replacing(k)) = self;
        k
    }
}

/// The tests with those a longer arrangement takes folded into it, in the order of their
/// hosts; `leaves_state` says whether a test's call leaves what it was given as it found it
/// (no `&mut`, nothing moved). Returns the tests and how many stories they hold.
pub(crate) fn stories(
    tests: Vec<TestPlan>,
    leaves_state: &dyn Fn(&TestPlan) -> bool,
) -> (Vec<TestPlan>, usize) {
    let mut order: Vec<usize> = (0..tests.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(tests[i].body.setup.len()), i));
    let mut hosts: Vec<usize> = Vec::new();
    let mut stops: BTreeMap<usize, Vec<(At, usize)>> = BTreeMap::new();
    for i in order {
        let t = &tests[i];
        if can_stop(t) {
            let place = hosts.iter().find_map(|&h| {
                let at = place(&tests[h].body, &t.body, || leaves_state(t))?;
                let taken = stops
                    .get(&h)
                    .is_some_and(|s| s.iter().any(|(a, _)| *a == at));
                (!taken || matches!(at, At::Before(_))).then_some((h, at))
            });
            if let Some((h, at)) = place {
                stops.entry(h).or_default().push((at, i));
                continue;
            }
        }
        if can_host(t) {
            hosts.push(i);
        }
    }
    let made = stops.len();
    let absorbed: BTreeSet<usize> = stops.values().flatten().map(|(_, i)| *i).collect();
    let mut taken: BTreeSet<String> = tests
        .iter()
        .enumerate()
        .filter(|(i, _)| !absorbed.contains(i) && !stops.contains_key(i))
        .map(|(_, t)| t.name.clone())
        .collect();
    let mut slots: Vec<Option<TestPlan>> = tests.into_iter().map(Some).collect();
    let mut out = Vec::new();
    for i in 0..slots.len() {
        if absorbed.contains(&i) {
            continue;
        }
        let Some(host) = slots[i].take() else {
            continue;
        };
        match stops.remove(&i) {
            Some(mut at) => {
                // By step, a check between two steps before the stop that is the step.
                at.sort_by_key(|(a, s)| (a.step(), matches!(a, At::Replacing(_)), *s));
                let stops: Vec<(At, TestPlan)> = at
                    .into_iter()
                    .filter_map(|(a, s)| slots[s].take().map(|t| (a, t)))
                    .collect();
                out.push(tell(host, stops, &mut taken));
            }
            None => out.push(host),
        }
    }
    (out, made)
}

/// A test that can take others in: its steps are plain statements a check can go between.
fn can_host(t: &TestPlan) -> bool {
    let b = &t.body;
    t.table.is_none()
        && b.mocks.is_empty()
        && b.ordered_expectations.is_empty()
        && !matches!(b.assertion, Assertion::Panics { .. })
        && b.setup.iter().all(|s| s.times.is_none())
}

/// A test whose call and checks can be written as statements inside another.
fn can_stop(t: &TestPlan) -> bool {
    can_host(t) && !t.body.setup.is_empty()
}

/// Where `stop` goes in `host`: its arrangement is the host's first steps, and its call either
/// changes nothing (checked between two steps) or is the host's next step.
fn place(host: &Body, stop: &Body, leaves_state: impl Fn() -> bool) -> Option<At> {
    let k = stop.setup.len();
    if k > host.setup.len() || host.setup[..k] != stop.setup[..] {
        return None;
    }
    let next = host.setup.get(k);
    if next.is_some_and(|step| is_call_step(step, &act(stop))) {
        return Some(At::Replacing(k));
    }
    let moves = stop
        .args
        .iter()
        .any(|a| stop.setup.iter().any(|s| s.var == *a));
    (!moves && leaves_state()).then_some(At::Before(k))
}

/// `let _ = <call>;` made once.
fn is_call_step(step: &Binding, call: &str) -> bool {
    (step.var == "_" || step.var.is_empty()) && step.repeat == 1 && step.expr == call
}

/// The call a test makes, as written.
fn act(b: &Body) -> String {
    format!("{}({})", b.callee, b.args.join(", "))
}

/// The host with its stops written in: one test that takes every step once.
fn tell(mut host: TestPlan, stops: Vec<(At, TestPlan)>, taken: &mut BTreeSet<String>) -> TestPlan {
    let steps = std::mem::take(&mut host.body.setup);
    let mut setup = Vec::with_capacity(steps.len() + stops.len() * 2);
    let mut stops = stops.into_iter().peekable();
    // The checks made since the last statement that may change state: the same check again
    // detects nothing more (`cap()` after each of five reads), nor does a count check the
    // replay closure's stop made already.
    let mut checked: BTreeSet<String> = BTreeSet::new();
    let mut put = |setup: &mut Vec<Binding>, b: Binding, changes: bool| {
        if changes {
            checked.clear();
        } else if !checked.insert(b.expr.clone()) {
            return;
        }
        setup.push(b);
    };
    for k in 0..=steps.len() {
        let mut replaced = false;
        while let Some((at, _)) = stops.peek() {
            if at.step() != k {
                break;
            }
            let (at, stop) = stops.next().expect("peeked");
            let replacing = matches!(at, At::Replacing(_));
            replaced |= replacing;
            for (b, changes) in statements(&stop.name, &stop.body, replacing) {
                put(&mut setup, b, changes);
            }
            host.calls.extend(&stop.calls);
            host.replayed.extend(&stop.replayed);
            host.arranged.extend(&stop.arranged);
        }
        if let (false, Some(step)) = (replaced, steps.get(k)) {
            // A plain statement of the host's (a count check) is a check; a step, a change.
            put(&mut setup, step.clone(), !step.var.is_empty());
        }
    }
    debug_assert!(
        stops.next().is_none(),
        "every stop is at a step of its host"
    );
    host.body.setup = setup;
    host.story = true;
    host.name = story_name(&host, taken);
    // Named as a story now, not by its call's parts (`rename.rs` leaves it so).
    host.name_parts = None;
    host
}

/// `small_vec_steps_to_as_slice`: the object whose steps it takes, and the last call, apart
/// from `taken` (which it joins). A second story to the same call is told by what that call
/// returned (url's `parse_options_steps_to_cannot_be_a_base_returns_true`, of a `mailto:`
/// URL, beside the story of a `file:` URL's), before a number.
fn story_name(host: &TestPlan, taken: &mut BTreeSet<String>) -> String {
    let base = story_stem(host);
    let told = (host.name_parts.as_ref())
        .and_then(|p| p.ret.as_ref())
        .map(|ret| crate::naming::sanitize_ident(&format!("{base}_returns_{ret}")))
        .filter(|told| taken.contains(&base) && !taken.contains(told));
    crate::naming::apart(told.unwrap_or(base), taken)
}

/// `small_vec_steps_to_as_slice`: the object whose steps it takes, and the last call.
fn story_stem(host: &TestPlan) -> String {
    let object = host
        .body
        .setup
        .iter()
        .map(|s| s.var.as_str())
        .find(|v| !v.is_empty() && *v != "_")
        .unwrap_or("object");
    let call = host.body.callee.rsplit(['.', ':']).next().unwrap_or("call");
    let ident: String = format!("{object}_steps_to_{call}")
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '_' })
        .collect();
    ident.trim_matches('_').to_lowercase()
}

/// A stop's checks and call as statements, each with whether it may change state (the call
/// of a stop that `replaces` the host's step): the checks of its arrangement, the call inside
/// its assertion when nothing else reads its result (`assert_eq!(v.capacity(), 8usize)`),
/// else in a block of its own, so that a result borrowing the object is gone before the next
/// step. A check verification still observes stays a probe, tagged by the stop's own test
/// `name`.
fn statements(name: &str, b: &Body, replaces: bool) -> Vec<(Binding, bool)> {
    let check_of = |expr: String| {
        let b = Binding {
            var: String::new(),
            mutable: false,
            expr,
            repeat: 1,
            times: None,
        };
        (b, false)
    };
    let call_of = |expr: String| (check_of(expr).0, replaces);
    let mut out: Vec<(Binding, bool)> = (b.checks.iter().enumerate())
        .map(|(i, c)| check_of(check(c, &format!("{name}#check{i}"))))
        .collect();
    let call = act(b);
    let reads_result = b.effects.iter().any(|e| mentions_result(&e.actual));
    let effects = b
        .effects
        .iter()
        .enumerate()
        .map(|(i, e)| check(e, &format!("{name}#{i}")));
    match (&b.assertion, reads_result) {
        (Assertion::Unit, false) => out.push(call_of(call)),
        (Assertion::Eq { expected }, false) => {
            out.push(call_of(format!("assert_eq!({call}, {expected})")));
        }
        (Assertion::True, false) => out.push(call_of(format!("assert!({call})"))),
        (Assertion::False, false) => out.push(call_of(format!("assert!(!{call})"))),
        (Assertion::Nan, false) => out.push(call_of(format!("assert!({call}.is_nan())"))),
        (Assertion::Matches { pattern }, false) => {
            out.push(call_of(format!("assert!(matches!({call}, {pattern}))")));
        }
        (assertion, _) => {
            let unwrap = match assertion {
                Assertion::Observed { unwrap } => unwrap.clone().unwrap_or_default(),
                _ => String::new(),
            };
            let mut block = vec![format!("let result = {call}{unwrap};")];
            block.extend(result_check(assertion).map(|c| format!("{c};")));
            block.extend(effects.map(|c| format!("{c};")));
            out.push(call_of(format!("{{\n{}\n}}", block.join("\n"))));
            return out;
        }
    }
    out.extend(effects.map(check_of));
    out
}

/// The assertion on `result`, as the template writes it.
fn result_check(assertion: &Assertion) -> Option<String> {
    match assertion {
        Assertion::Eq { expected } => Some(format!("assert_eq!(result, {expected})")),
        Assertion::True => Some("assert!(result)".into()),
        Assertion::False => Some("assert!(!result)".into()),
        Assertion::Nan => Some("assert!(result.is_nan())".into()),
        Assertion::Matches { pattern } => Some(format!("assert!(matches!(result, {pattern}))")),
        Assertion::Unit | Assertion::Observed { .. } | Assertion::Panics { .. } => None,
    }
}

/// A check of a field or getter after a call, as the template writes it; a probe tagged
/// `tag#KIND` while verification has still to observe its value.
fn check(e: &Effect, tag: &str) -> String {
    if let Some(kind) = &e.observe {
        return crate::verify::observe::probe_statement(&format!("{tag}#{kind}"), &e.actual);
    }
    match (e.expected.as_str(), &e.message) {
        ("true", None) => format!("assert!({})", e.actual),
        ("false", None) => format!("assert!(!{})", e.actual),
        (_, Some(message)) => format!("assert_eq!({}, {}, {message})", e.actual, e.expected),
        (_, None) => format!("assert_eq!({}, {})", e.actual, e.expected),
    }
}

/// `result` as a word of `expr` (`result.len()`, `&result[0]`; not `results`).
fn mentions_result(expr: &str) -> bool {
    expr.match_indices("result").any(|(i, _)| {
        let before = expr[..i].chars().next_back();
        let after = expr[i + "result".len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !word(before) && !word(after)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(var: &str, expr: &str) -> Binding {
        Binding {
            var: var.into(),
            mutable: var != "_",
            expr: expr.into(),
            repeat: 1,
            times: None,
        }
    }

    /// A test of `v.<call>` after `steps` (the first makes `v`).
    fn test(name: &str, id: u64, steps: &[&str], call: &str, assertion: Assertion) -> TestPlan {
        let mut setup = vec![step("v", "p::V::new()")];
        setup.extend(steps.iter().map(|s| step("_", s)));
        let (callee, args) = call.split_once('(').expect("a call");
        let args = args.trim_end_matches(')');
        let args: Vec<&str> = (!args.is_empty()).then_some(args).into_iter().collect();
        let mut body = super::super::testing::body(&format!("v.{callee}"), &args, assertion);
        body.function_path = format!("p::V::{callee}");
        body.setup = setup;
        super::super::testing::test(name, id, body)
    }

    use super::super::testing::eq;

    fn exprs(t: &TestPlan) -> Vec<&str> {
        t.body.setup.iter().map(|s| s.expr.as_str()).collect()
    }

    #[test]
    fn tests_on_the_first_steps_of_a_longer_one_are_checked_where_it_makes_them() {
        let tests = vec![
            // Reads; on the first two steps of `last`'s.
            test(
                "len_is_2",
                1,
                &["v.push(1)", "v.push(2)"],
                "len()",
                eq("2usize"),
            ),
            // Its call is `last`'s third step.
            test(
                "pop_gives_2",
                2,
                &["v.push(1)", "v.push(2)"],
                "pop()",
                eq("Some(2)"),
            ),
            test(
                "last_is_1",
                3,
                &["v.push(1)", "v.push(2)", "v.pop()"],
                "last()",
                eq("Some(&1)"),
            ),
            // Other steps: a test of its own.
            test("other", 4, &["v.push(9)"], "len()", eq("1usize")),
        ];
        let reads = |t: &TestPlan| t.name != "pop_gives_2";
        let (out, made) = stories(tests, &reads);
        assert_eq!(made, 1);
        let names: Vec<&str> = out.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["v_steps_to_last", "other"]);
        let story = &out[0];
        assert!(story.story);
        assert_eq!(
            exprs(story),
            [
                "p::V::new()",
                "v.push(1)",
                "v.push(2)",
                "assert_eq!(v.len(), 2usize)",
                "assert_eq!(v.pop(), Some(2))",
            ]
        );
        // Each stop is a statement, not a binding; the host's own call stays its act.
        assert!(story.body.setup[3..].iter().all(|s| s.var.is_empty()));
        assert_eq!(story.body.callee, "v.last");
        assert_eq!(story.calls, [3, 1, 2]);
    }

    #[test]
    fn a_check_made_again_before_anything_changes_is_made_once() {
        let tests = vec![
            test("len_a", 1, &["v.push(1)"], "len()", eq("1usize")),
            test("len_b", 2, &["v.push(1)"], "len()", eq("1usize")),
            test(
                "len_c",
                3,
                &["v.push(1)", "v.push(2)"],
                "len()",
                eq("2usize"),
            ),
            test(
                "last",
                4,
                &["v.push(1)", "v.push(2)", "v.push(1)"],
                "last()",
                eq("Some(&1)"),
            ),
        ];
        let (out, made) = stories(tests, &|_| true);
        assert_eq!(made, 1);
        // The second `len()` after one push is gone; the one after the second push stays.
        assert_eq!(
            exprs(&out[0]),
            [
                "p::V::new()",
                "v.push(1)",
                "assert_eq!(v.len(), 1usize)",
                "v.push(2)",
                "assert_eq!(v.len(), 2usize)",
                "v.push(1)",
            ]
        );
        assert_eq!(out[0].calls, [4, 1, 2, 3]);
    }

    #[test]
    fn a_call_that_changes_its_object_is_no_stop_where_the_longer_test_does_not_make_it() {
        let tests = vec![
            test("clear", 1, &["v.push(1)"], "clear()", Assertion::Unit),
            test(
                "last",
                2,
                &["v.push(1)", "v.push(2)"],
                "last()",
                eq("Some(&2)"),
            ),
        ];
        // `clear` changes `v` and is not `last`'s next step: both stay.
        let (out, made) = stories(tests.clone(), &|t| t.name != "clear");
        assert_eq!(made, 0);
        assert_eq!(out, tests);
        // A test that panics, or a table, hosts nothing and is no stop.
        let mut panics = tests[1].clone();
        panics.body.assertion = Assertion::Panics { expected: None };
        let reads = test("len", 3, &["v.push(1)"], "len()", eq("1usize"));
        let (out, made) = stories(vec![panics, reads], &|_| true);
        assert_eq!((made, out.len()), (0, 2));
    }

    #[test]
    fn a_result_the_checks_read_is_bound_in_a_block_and_unobserved_checks_stay_probes() {
        let mut drained = test("drain", 1, &["v.push(1)"], "drain(..)", Assertion::Unit);
        drained.body.assertion = Assertion::Observed { unwrap: None };
        drained.body.effects = vec![
            Effect {
                actual: "result.len()".into(),
                expected: "1usize".into(),
                message: None,
                observe: None,
            },
            Effect {
                actual: "v.is_empty()".into(),
                expected: String::new(),
                message: None,
                observe: Some("bool".into()),
            },
        ];
        let host = test(
            "last",
            2,
            &["v.push(1)", "v.drain(..)"],
            "last()",
            eq("None"),
        );
        let (out, made) = stories(vec![drained, host], &|_| false);
        assert_eq!(made, 1);
        let block = &out[0].body.setup[2].expr;
        assert_eq!(
            block,
            "{\nlet result = v.drain(..);\nassert_eq!(result.len(), 1usize);\n\
             println!(\"\\u{1}carve-observed {} {:?}\", \"drain#1#bool\", \
             format!(\"{:?}\", v.is_empty()));\n}"
        );
        assert!(mentions_result("&result[0]") && !mentions_result("results.len()"));
    }

    #[test]
    fn a_second_story_to_one_call_is_told_by_what_the_call_returned() {
        // Two hosts of `is_empty()` (false after 1 and 5, true, say, after 2 and 3), each
        // with a stop on its first step.
        let host = |id: u64, steps: &[&str], ret: &str| {
            let mut t = test(&format!("empty_{id}"), id, steps, "is_empty()", eq(ret));
            t.name_parts = Some(crate::naming::NameParts {
                subject: "is_empty".into(),
                args: vec![],
                ret: Some(ret.into()),
                panics: false,
                when: None,
                steps: 2,
                instance: None,
                arranged: vec![],
            });
            t
        };
        let tests = vec![
            host(1, &["v.push(1)", "v.push(5)"], "false"),
            test("len_1", 2, &["v.push(1)"], "len()", eq("1usize")),
            host(3, &["v.push(2)", "v.push(3)"], "true"),
            test("len_2", 4, &["v.push(2)"], "len()", eq("1usize")),
        ];
        let (out, made) = stories(tests, &|_| true);
        assert_eq!(made, 2);
        let names: Vec<&str> = out.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["v_steps_to_is_empty", "v_steps_to_is_empty_returns_true"]
        );
    }
}
