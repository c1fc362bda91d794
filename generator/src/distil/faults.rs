//! Value faults (issue 27: "every fault it detects"), measured without rebuilding: a function
//! the test's calls call inside them is made to answer otherwise — the other `bool`, `None`
//! where it returned `Some`, an integer one more or one less — by the recorder, which returns the forced value at the
//! function's entry instead of running it (as `carve assess` does), and the test is run so.
//! A non-empty `String`, `Vec`, `&str` or slice is made empty, and a `Result<(), E>` that was
//! an `Err` made `Ok(())` (values that own no memory: the recorder builds them from nothing).
//! A function returning `()` that changed what its `self` or `&mut` arguments refer to is made
//! to return at once: its effect is left undone (Reneri's no-infection transformation of an
//! effect, seed 002; the whole effect, not one field of it).
//! A test that then fails (or hangs) *detects* the fault. A fault is tried only where every
//! call of the function inside the test ended alike, so that the one answer forced is the
//! other one for each of them; never on a function the test calls itself (its own check sees
//! that at once).
//!
//! The goal a detecting test reaches is the fault on each line of that function the test ran,
//! when the test called it once (else the fault alone: the call it saw the fault through may
//! not be the one that ran the line): two tests that both see `in_range` made `true` where it was `false` are told apart by the
//! path it took there. glob's `in_char_specifiers` answers `false` in a case-insensitive
//! `[a-c]` both for `"main.rs"` and for `"d.txt"`, on the same lines; made `true`, only
//! `"d.txt"` then matches — the test a reviewer needs for a `&&` made `||` on that path, and
//! the one line goals alone may drop for the other.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use carve_storage::{Call, FunctionId};

use super::outcome;
use crate::read::types::Prim;

/// The recorded calls, as distilling holds them: by id, the calls inside each, and each
/// function's path.
pub(crate) struct Calls<'a, 'c> {
    pub(crate) by_id: &'a HashMap<u64, &'c Call>,
    pub(crate) children: &'a HashMap<u64, Vec<&'c Call>>,
    pub(crate) paths: &'a HashMap<FunctionId, &'c str>,
}

/// A value a function is forced to answer.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultValue {
    Bool(bool),
    /// `None` of an `Option`.
    None,
    /// An integer one off what every call answered (`answered` ± 1).
    Int {
        answered: i64,
        forced: i64,
    },
    /// An empty `String`, `Vec`, `&str` or slice where every call answered a filled one.
    Empty,
    /// `Ok(())` of a `Result<(), E>` where every call answered the same `Err`.
    OkUnit,
    /// Return at once from a function returning `()` whose every call changed what its
    /// `self` or `&mut` arguments refer to: the effect left undone.
    Undone,
}

/// One fault: the function (by path, as the recording names it) forced to answer `value`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fault {
    pub function: String,
    pub value: FaultValue,
}

impl Fault {
    /// `true→false`, `Some→None`, `3→4`: what it answered, and what it is made to answer.
    pub(crate) fn label(&self) -> String {
        match self.value {
            FaultValue::Bool(true) => "false→true".to_string(),
            FaultValue::Bool(false) => "true→false".to_string(),
            FaultValue::None => "Some→None".to_string(),
            FaultValue::Int { answered, forced } => format!("{answered}→{forced}"),
            FaultValue::Empty => "filled→empty".to_string(),
            FaultValue::OkUnit => "Err→Ok(())".to_string(),
            FaultValue::Undone => "effect→undone".to_string(),
        }
    }
}

/// How many faults one test is tried with.
pub(crate) const MAX_PER_TEST: usize = 6;
/// How many (test, fault) pairs one suite may try: past it, the first faults of each test go
/// first (a test's first fault before any test's second). The caller runs each fault once
/// per test binary with every test asking for it, so a pair costs a test's run, not a
/// binary's.
pub(crate) const MAX_TRIES: usize = 5_000;
/// How many calls inside a test's calls are looked at.
const MAX_CALLS: usize = 10_000;

/// A fault to try on a test, and whether its function is called once in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tried {
    pub(crate) fault: Fault,
    pub(crate) once: bool,
}

/// The faults worth trying on a test whose calls (its own, replayed and arranged) are `ran`:
/// per function called inside them (not one the test calls itself), when every call of it
/// ended in one outcome that can be turned over (`true`, `false`, `Some`, a filled text or
/// sequence, the same `Err` of a `Result<(), E>`, `()` with the same arguments changed) or
/// answered one integer (one more, one less, where the type holds them).
pub(crate) fn to_try(calls: &Calls, ran: &[u64]) -> Vec<Tried> {
    let own_functions: BTreeSet<&str> = ran
        .iter()
        .filter_map(|id| calls.by_id.get(id))
        .filter_map(|c| calls.paths.get(&c.function).copied())
        .collect();
    let mut outcomes: BTreeMap<&str, (BTreeSet<Answer>, usize)> = BTreeMap::new();
    let mut todo: Vec<&Call> = ran
        .iter()
        .filter_map(|id| calls.by_id.get(id))
        .copied()
        .collect();
    let mut seen = 0;
    while let Some(call) = todo.pop() {
        seen += 1;
        if seen > MAX_CALLS {
            // Past the cap, an outcome not seen could make a function's calls disagree.
            return Vec::new();
        }
        todo.extend(calls.children.get(&call.id.0).into_iter().flatten());
        if ran.contains(&call.id.0) {
            continue;
        }
        let Some(path) = calls.paths.get(&call.function).copied() else {
            continue;
        };
        let (ended, times) = outcomes.entry(path).or_default();
        ended.insert(answer(call));
        *times += 1;
    }
    let mut out = Vec::new();
    for (path, (ended, times)) in outcomes {
        // The force names the function by its path as a glob: `*` and `?` would name others.
        if own_functions.contains(path) || path.contains(['*', '?']) || ended.len() != 1 {
            continue;
        }
        let values = match ended.first() {
            Some(Answer::Integer(value, ty)) => off_by_one(*value, ty),
            Some(Answer::Filled) => vec![FaultValue::Empty],
            Some(Answer::ErrOfUnit(_)) => vec![FaultValue::OkUnit],
            Some(Answer::Changed(_)) => vec![FaultValue::Undone],
            Some(Answer::Outcome(Some(o))) => match o.as_str() {
                "true" => vec![FaultValue::Bool(false)],
                "false" => vec![FaultValue::Bool(true)],
                o if o == "Some" || o.starts_with("Some(") => vec![FaultValue::None],
                _ => continue,
            },
            _ => continue,
        };
        for value in values {
            out.push(Tried {
                fault: Fault {
                    function: path.to_string(),
                    value,
                },
                once: times == 1,
            });
        }
        if out.len() >= MAX_PER_TEST {
            out.truncate(MAX_PER_TEST);
            break;
        }
    }
    out
}

/// What one call inside a test answered: an integer of a type, or else its outcome
/// (`outcome.rs`; `None` when it did not end).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Answer<'c> {
    Integer(i128, &'c str),
    /// A text or sequence with something in it, of a type the recorder can empty.
    Filled,
    /// An `Err` of a `Result<(), E>`, by its outcome (the error's text).
    ErrOfUnit(Option<String>),
    /// `()`, with what some `self` or `&mut` arguments refer to changed (which ones).
    Changed(Vec<&'c str>),
    Outcome(Option<String>),
}

/// What `call` answered, as a fault can turn it over: an integer (with its type), a filled
/// `String`, `Vec`, `&str` or slice (read whole or not: one cut short at the recording limit
/// is not empty either), the `Err` of a `Result<(), E>`, `()` with arguments changed (read
/// whole before and after: `outcome::changed`), or else its outcome.
fn answer(call: &Call) -> Answer<'_> {
    use carve_storage::Value;
    let returned = matches!(call.outcome, carve_storage::Outcome::Returned);
    match call.ret.as_ref().filter(|_| returned) {
        Some(Value::Int { ty, value }) => Answer::Integer(*value, ty),
        Some(Value::Uint { ty, value }) if i128::try_from(*value).is_ok() => {
            Answer::Integer(*value as i128, ty)
        }
        Some(Value::Str { ty, value, .. })
            if !value.is_empty() && matches!(ty.as_str(), "alloc::string::String" | "&str") =>
        {
            Answer::Filled
        }
        Some(Value::Seq { ty, elems, .. })
            if !elems.is_empty()
                && (ty.starts_with("alloc::vec::Vec<") || ty.starts_with("&[")) =>
        {
            Answer::Filled
        }
        Some(Value::Enum { ty, variant, .. })
            if variant == "Err" && ty.starts_with("core::result::Result<(), ") =>
        {
            Answer::ErrOfUnit(outcome::of(call))
        }
        // `outcome::changed` answers only for a call that returned.
        None => match outcome::changed(call).filter(|c| !c.is_empty()) {
            Some(changed) => Answer::Changed(changed),
            None => Answer::Outcome(outcome::of(call)),
        },
        _ => Answer::Outcome(outcome::of(call)),
    }
}

/// The faults `value ± 1` of an integer of type `ty`, those the type holds; none for a
/// 128-bit type (the recorder forces integers of at most 8 bytes).
fn off_by_one(value: i128, ty: &str) -> Vec<FaultValue> {
    let prim = Prim::from_name(ty).filter(|p| !matches!(p, Prim::I128 | Prim::U128));
    let (Some((min, max)), Ok(answered)) = (prim.and_then(Prim::int_range), i64::try_from(value))
    else {
        return Vec::new();
    };
    [value + 1, value - 1]
        .into_iter()
        .filter(|v| *v >= min && u128::try_from(*v).map_or(true, |v| v <= max))
        .filter_map(|v| i64::try_from(v).ok())
        .map(|forced| FaultValue::Int { answered, forced })
        .collect()
}

/// Of the faults each test is to be tried with (in test order), those within [`MAX_TRIES`]:
/// round by round, each test's next fault.
pub(crate) fn within_budget(mut per_test: Vec<Vec<Fault>>) -> Vec<Vec<Fault>> {
    let mut left = MAX_TRIES;
    let mut out = vec![Vec::new(); per_test.len()];
    for round in 0..MAX_PER_TEST {
        for (test, faults) in per_test.iter_mut().enumerate() {
            if left == 0 {
                return out;
            }
            if let Some(f) = faults.get(round) {
                out[test].push(f.clone());
                left -= 1;
            }
        }
    }
    out
}

/// The goals a test reaches by the faults it `detected`: (function, `file:line from→to`) for
/// each line of the function the test ran (`lines`; `functions` says whose lines they are)
/// when it called the function `once` — the call forced is then the one that ran those
/// lines; a test that calls it more often may see the fault through one call and have run a
/// line through another — else (function, `from→to`).
pub(crate) fn goals(
    detected: &BTreeSet<Fault>,
    once: &BTreeSet<&str>,
    lines: &BTreeSet<(String, u32)>,
    functions: &BTreeMap<(String, u32), BTreeSet<String>>,
) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for fault in detected {
        let on: Vec<&(String, u32)> = lines
            .iter()
            .filter(|_| once.contains(fault.function.as_str()))
            .filter(|l| {
                functions
                    .get(*l)
                    .is_some_and(|f| f.contains(&fault.function))
            })
            .collect();
        if on.is_empty() {
            out.insert((fault.function.clone(), fault.label()));
        }
        for (file, line) in on {
            let at = format!("{file}:{line} {}", fault.label());
            out.insert((fault.function.clone(), at));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distil::test_call;
    use carve_storage::{CallId, Outcome, Value};

    fn call(id: u64, parent: Option<u64>, function: u32, ret: Value) -> Call {
        let mut c = test_call(Outcome::Returned, Some(ret));
        c.id = CallId(id);
        c.parent = parent.map(CallId);
        c.function = FunctionId(function);
        c
    }

    fn boolean(value: bool) -> Value {
        Value::Bool { value }
    }

    fn some() -> Value {
        Value::Enum {
            ty: "Option<u8>".into(),
            variant: "Some".into(),
            fields: vec![carve_storage::Field::new(
                "__0",
                Value::Uint {
                    ty: "u8".into(),
                    value: 3,
                },
            )],
        }
    }

    /// The faults a test of the first of `calls` (id 1, the others all inside it) is tried
    /// with; `paths[n]` is the path of function `n + 1`.
    fn tried_inside_first(calls: &[Call], paths: &[&'static str]) -> Vec<Tried> {
        let paths: HashMap<FunctionId, &str> =
            (1..).map(FunctionId).zip(paths.iter().copied()).collect();
        let children: HashMap<u64, Vec<&Call>> = [(1, calls[1..].iter().collect())].into();
        let by_id = calls.iter().map(|c| (c.id.0, c)).collect();
        let calls = Calls {
            by_id: &by_id,
            children: &children,
            paths: &paths,
        };
        to_try(&calls, &[1])
    }

    #[test]
    fn a_function_answering_alike_inside_a_test_is_tried_the_other_way() {
        // matches(1) calls in_range twice (false, false), first_digit (Some), and
        // is_sep (true, false); the test's own function matches is never forced.
        let calls = [
            call(1, None, 1, boolean(false)),
            call(2, Some(1), 2, boolean(false)),
            call(3, Some(1), 2, boolean(false)),
            call(4, Some(1), 3, some()),
            call(5, Some(1), 4, boolean(true)),
            call(6, Some(1), 4, boolean(false)),
            call(7, Some(1), 1, boolean(true)),
        ];
        let paths = ["p::matches", "p::in_range", "p::first_digit", "p::is_sep"];
        let faults = tried_inside_first(&calls, &paths);
        assert_eq!(
            faults,
            vec![
                Tried {
                    fault: Fault {
                        function: "p::first_digit".into(),
                        value: FaultValue::None,
                    },
                    once: true,
                },
                Tried {
                    fault: Fault {
                        function: "p::in_range".into(),
                        value: FaultValue::Bool(true),
                    },
                    once: false,
                },
            ]
        );
    }

    #[test]
    fn a_filled_text_is_tried_empty_and_an_err_of_a_unit_result_ok() {
        let text = |value: &str| Value::Str {
            ty: "alloc::string::String".into(),
            value: value.into(),
            truncated: false,
        };
        let err = Value::Enum {
            ty: "core::result::Result<(), p::Error>".into(),
            variant: "Err".into(),
            fields: vec![carve_storage::Field::new("__0", Value::Unit)],
        };
        // render(1) calls quote twice (two filled texts), trim once (an empty text: never
        // emptied), and check once (Err of a Result<(), _>).
        let calls = [
            call(1, None, 1, boolean(true)),
            call(2, Some(1), 2, text("'a'")),
            call(3, Some(1), 2, text("'b c'")),
            call(4, Some(1), 3, text("")),
            call(5, Some(1), 4, err),
        ];
        let paths = ["p::render", "p::quote", "p::trim", "p::check"];
        let tried: Vec<(String, FaultValue)> = tried_inside_first(&calls, &paths)
            .into_iter()
            .map(|t| (t.fault.function, t.fault.value))
            .collect();
        assert_eq!(
            tried,
            vec![
                ("p::check".to_string(), FaultValue::OkUnit),
                ("p::quote".to_string(), FaultValue::Empty),
            ]
        );
    }

    #[test]
    fn a_unit_function_that_changed_its_argument_every_time_is_tried_with_the_effect_undone() {
        let text = |value: &str| Value::Str {
            ty: "alloc::string::String".into(),
            value: value.into(),
            truncated: false,
        };
        let changing = |id, from: &str, to: &str| {
            let mut c = test_call(Outcome::Returned, None);
            c.id = CallId(id);
            c.parent = Some(CallId(1));
            c.args = vec![carve_storage::Arg {
                name: "text".into(),
                value: Value::Ref {
                    ty: "&mut alloc::string::String".into(),
                    addr: 0x10,
                    target: Box::new(text(from)),
                },
            }];
            c.after = vec![carve_storage::Arg {
                name: "text".into(),
                value: text(to),
            }];
            c
        };
        // label(1) calls pad twice, each time changing the text; clear twice, once changing
        // it and once leaving it (another outcome: not tried).
        let mut calls = vec![
            call(1, None, 1, boolean(true)),
            changing(2, "ab", "ab.."),
            changing(3, "abc", "abc."),
            changing(4, "x", ""),
            changing(5, "", ""),
        ];
        for c in &mut calls[3..] {
            c.function = FunctionId(3);
        }
        for c in &mut calls[1..3] {
            c.function = FunctionId(2);
        }
        let paths = ["p::label", "p::pad", "p::clear"];
        let tried: Vec<(String, FaultValue)> = tried_inside_first(&calls, &paths)
            .into_iter()
            .map(|t| (t.fault.function, t.fault.value))
            .collect();
        assert_eq!(tried, vec![("p::pad".to_string(), FaultValue::Undone)]);
    }

    #[test]
    fn an_integer_every_call_answered_is_tried_one_more_and_one_less_where_its_type_holds_them() {
        let int = |answered, forced| FaultValue::Int { answered, forced };
        assert_eq!(off_by_one(3, "u32"), vec![int(3, 4), int(3, 2)]);
        assert_eq!(off_by_one(255, "u8"), vec![int(255, 254)]);
        assert_eq!(off_by_one(0, "usize"), vec![int(0, 1)]);
        assert_eq!(off_by_one(-128, "i8"), vec![int(-128, -127)]);
        // The recorder forces integers of at most 8 bytes; "returned" is no integer type.
        assert!(off_by_one(3, "u128").is_empty());
        assert!(off_by_one(3, "returned").is_empty());
        let fault = Fault {
            function: "p::width".into(),
            value: int(3, 4),
        };
        assert_eq!(fault.label(), "3→4");
    }

    #[test]
    fn a_detected_fault_is_a_goal_on_each_line_of_its_function_the_test_ran() {
        let fault = Fault {
            function: "p::in_range".into(),
            value: FaultValue::Bool(true),
        };
        let lines: BTreeSet<(String, u32)> = [("lib.rs".to_string(), 3), ("lib.rs".to_string(), 9)]
            .into_iter()
            .collect();
        let functions: BTreeMap<(String, u32), BTreeSet<String>> = [
            (
                ("lib.rs".to_string(), 3),
                ["p::in_range".to_string()].into(),
            ),
            (("lib.rs".to_string(), 9), ["p::matches".to_string()].into()),
        ]
        .into_iter()
        .collect();
        let detected: BTreeSet<Fault> = [fault.clone()].into();
        let once: BTreeSet<&str> = ["p::in_range"].into();
        assert_eq!(
            goals(&detected, &once, &lines, &functions),
            [("p::in_range".to_string(), "lib.rs:3 false→true".to_string())].into()
        );
        // Lines nobody placed in the function: the fault alone is the goal.
        let alone = [("p::in_range".to_string(), "false→true".to_string())].into();
        assert_eq!(goals(&detected, &once, &lines, &BTreeMap::new()), alone);
        // Called twice, the call whose answer the test saw may not be the one that ran line 3.
        assert_eq!(
            goals(&detected, &BTreeSet::new(), &lines, &functions),
            alone
        );
        assert!(goals(&BTreeSet::new(), &once, &lines, &functions).is_empty());
    }

    #[test]
    fn past_the_budget_each_test_s_first_fault_goes_before_any_second() {
        let f = |n: &str| Fault {
            function: n.into(),
            value: FaultValue::Bool(true),
        };
        let per_test = vec![vec![f("a"), f("b")]; MAX_TRIES];
        let kept = within_budget(per_test);
        assert!(kept.iter().all(|t| t == &vec![f("a")]));
        let few = within_budget(vec![vec![f("a"), f("b")], vec![f("c")]]);
        assert_eq!(few, vec![vec![f("a"), f("b")], vec![f("c")]]);
    }
}
