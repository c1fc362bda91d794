//! Why an undetected transformation went unnoticed, after Reneri (seed 002), from a recording of
//! the original tests and one of the transformed tests: no infection (every original call already
//! returned the forced value and changed nothing), no propagation (the calls the test made itself
//! returned the same values and left its objects in the same state), or a weak oracle (one of
//! them differs and the test asserted nothing about it).

use carve_storage::{Arg, Value};

use crate::{Diagnosis, Kind, Observed, Seen};

/// True when the original call `seen` had exactly the effect of returning `forced` at once: the
/// same return value and no change to `self` or `&mut` arguments.
pub fn forced_matches(seen: &Seen, forced: Option<&Value>) -> bool {
    let changed = seen.after.iter().any(|after| {
        let before = seen.args.iter().find(|a| a.name == after.name);
        match before.map(|b| &b.value) {
            Some(Value::Ref { target, .. }) => !same(target, &after.value),
            _ => true,
        }
    });
    seen.returned && !changed && opt_same(seen.ret.as_ref(), forced)
}

/// The diagnosis of a function no test reaches: every transformation of it goes unnoticed.
pub fn not_reached(function: &str) -> Diagnosis {
    let short = short_name(function);
    Diagnosis {
        kind: Kind::NotReached,
        test: None,
        evidence: format!("no test calls {short}"),
        suggestion: format!("write a test that calls {short} and checks its result"),
    }
}

/// The diagnosis of `function` forced to return `value` (as source writes it), from the
/// original run and the transformed run of the tests reaching it. With `repeat`, a second
/// recording of the original tests: what a test's own calls returned differently in the two is
/// unstable (a clock, a hash seed) and not compared.
pub fn diagnose(
    function: &str,
    value: &str,
    original: &Observed,
    repeat: Option<&Observed>,
    transformed: &Observed,
) -> Diagnosis {
    let short = short_name(function);
    let mut infected_in = Vec::new();
    for (test, calls) in &original.tests {
        let Some(orig) = calls.calls.get(function) else {
            continue;
        };
        let forced = transformed
            .tests
            .get(test)
            .and_then(|t| t.calls.get(function))
            .and_then(|c| c.first())
            .and_then(|c| c.ret.clone());
        if let Some(c) = orig.iter().find(|c| !forced_matches(c, forced.as_ref())) {
            infected_in.push((test.clone(), c.ret.clone()));
        }
    }
    if infected_in.is_empty() {
        let calls: usize = original
            .tests
            .values()
            .filter_map(|t| t.calls.get(function))
            .map(Vec::len)
            .sum();
        return Diagnosis {
            kind: Kind::NoInfection,
            test: None,
            evidence: format!(
                "every call of {short} under the tests ({calls} in all) already returned {value} and changed nothing"
            ),
            suggestion: format!(
                "the tests never give {short} inputs for which it returns anything but {value}: add a test with such inputs and check what it returns"
            ),
        };
    }
    for (test, _) in &infected_in {
        let (Some(orig), Some(now)) = (original.tests.get(test), transformed.tests.get(test))
        else {
            continue;
        };
        let again = repeat
            .and_then(|r| r.tests.get(test))
            .map(|t| t.own.as_slice());
        let (orig_own, now_own) = stable(&orig.own, again, &now.own);
        if let Some(d) = first_difference(&orig_own, &now_own) {
            return Diagnosis {
                kind: Kind::WeakOracle,
                test: Some(test.clone()),
                evidence: format!("{test}: {d}, and the test asserts nothing about it"),
                suggestion: suggestion(&orig_own, &now_own),
            };
        }
    }
    let (test, was) = infected_in[0].clone();
    let was = match was {
        Some(v) => format!("where it returned {}", text(Some(&v))),
        None => "where it changed its arguments".into(),
    };
    Diagnosis {
        kind: Kind::NoPropagation,
        test: Some(test.clone()),
        evidence: format!(
            "{test}: {short} returns {value} {was}, but every call the test makes itself returns the same values and leaves its objects in the same state"
        ),
        suggestion: format!(
            "call {short} directly in a test and check its result: its effect is lost before it reaches anything {test} looks at"
        ),
    }
}

/// The calls of `orig` (and the same positions of `now`) that `again`, a repeat of the original
/// run, agrees with: same function, same result, same state after.
fn stable(orig: &[Seen], again: Option<&[Seen]>, now: &[Seen]) -> (Vec<Seen>, Vec<Seen>) {
    let Some(again) = again else {
        return (orig.to_vec(), now.to_vec());
    };
    let keep = |i: usize| {
        again.get(i).is_some_and(|a| {
            a.function == orig[i].function
                && opt_same(a.ret.as_ref(), orig[i].ret.as_ref())
                && changed_after(&orig[i].after, &a.after).is_none()
        })
    };
    let kept: Vec<usize> = (0..orig.len()).filter(|&i| keep(i)).collect();
    (
        kept.iter().map(|&i| orig[i].clone()).collect(),
        kept.iter().filter_map(|&i| now.get(i).cloned()).collect(),
    )
}

/// What first differs between the calls a test made in the original and the transformed run.
fn first_difference(orig: &[Seen], now: &[Seen]) -> Option<String> {
    for (i, o) in orig.iter().enumerate() {
        let Some(n) = now.get(i) else {
            return Some(format!(
                "it no longer calls {} (and what follows)",
                short_name(&o.function)
            ));
        };
        if n.function != o.function {
            return Some(format!(
                "it calls {} where it called {}",
                short_name(&n.function),
                short_name(&o.function)
            ));
        }
        if !opt_same(o.ret.as_ref(), n.ret.as_ref()) {
            return Some(format!(
                "{} returned {} and now returns {}",
                short_name(&o.function),
                text(o.ret.as_ref()),
                text(n.ret.as_ref())
            ));
        }
        if let Some((name, was, is)) = changed_after(&o.after, &n.after) {
            return Some(format!(
                "after {}, `{name}` was {} and now is {}",
                short_name(&o.function),
                text(Some(was)),
                text(Some(is))
            ));
        }
    }
    None
}

/// The assertion that would catch the first difference.
fn suggestion(orig: &[Seen], now: &[Seen]) -> String {
    for (i, o) in orig.iter().enumerate() {
        let same_call = now.get(i).is_some_and(|n| n.function == o.function);
        let n = now.get(i);
        if !same_call || !opt_same(o.ret.as_ref(), n.and_then(|n| n.ret.as_ref())) {
            return match &o.ret {
                Some(v) => format!(
                    "check the result: assert_eq!({}(..), {})",
                    short_name(&o.function),
                    text(Some(v))
                ),
                None => format!("check what {} did", short_name(&o.function)),
            };
        }
        if let Some((name, was, _)) = n.and_then(|n| changed_after(&o.after, &n.after)) {
            return format!(
                "after {}(..), check the state of `{name}`: it should be {}",
                short_name(&o.function),
                text(Some(was))
            );
        }
    }
    "add an assertion on the values the test computes".into()
}

fn changed_after<'a>(orig: &'a [Arg], now: &'a [Arg]) -> Option<(&'a str, &'a Value, &'a Value)> {
    orig.iter().find_map(|o| {
        let n = now.iter().find(|n| n.name == o.name)?;
        (!same(&o.value, &n.value)).then_some((o.name.as_str(), &o.value, &n.value))
    })
}

fn opt_same(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => same(a, b),
        (Some(Value::Unit), None) | (None, Some(Value::Unit)) => true,
        _ => false,
    }
}

/// Equal values, addresses aside (allocations move when a transformation skips some).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Ref { target: x, .. }, Value::Ref { target: y, .. }) => same(x, y),
        (Value::Pointer { ty: x, .. }, Value::Pointer { ty: y, .. }) => x == y,
        (Value::Struct { ty: t1, fields: f1 }, Value::Struct { ty: t2, fields: f2 })
        | (
            Value::Enum {
                ty: t1, fields: f1, ..
            },
            Value::Enum {
                ty: t2, fields: f2, ..
            },
        ) => {
            let variants_equal = match (a, b) {
                (Value::Enum { variant: v1, .. }, Value::Enum { variant: v2, .. }) => v1 == v2,
                _ => true,
            };
            variants_equal
                && t1 == t2
                && f1.len() == f2.len()
                && f1
                    .iter()
                    .zip(f2)
                    .all(|(x, y)| x.name == y.name && same(&x.value, &y.value))
        }
        (Value::Seq { elems: e1, .. }, Value::Seq { elems: e2, .. })
        | (Value::Tuple { elems: e1, .. }, Value::Tuple { elems: e2, .. }) => {
            a_ty(a) == a_ty(b) && e1.len() == e2.len() && e1.iter().zip(e2).all(|(x, y)| same(x, y))
        }
        _ => a == b,
    }
}

fn a_ty(v: &Value) -> Option<&str> {
    match v {
        Value::Seq { ty, .. } | Value::Tuple { ty, .. } => Some(ty),
        _ => None,
    }
}

/// `wallet::Wallet::fee` → `Wallet::fee`.
fn short_name(path: &str) -> String {
    let parts: Vec<&str> = path.split("::").collect();
    if parts.len() > 2 && !path.starts_with('<') {
        parts[parts.len() - 2..].join("::")
    } else {
        path.to_string()
    }
}

/// A recorded value as Rust source would write it, roughly (for messages).
fn text(v: Option<&Value>) -> String {
    let Some(v) = v else { return "()".into() };
    match v {
        Value::Unit => "()".into(),
        Value::Bool { value } => value.to_string(),
        Value::Int { value, .. } => value.to_string(),
        Value::Uint { value, .. } => value.to_string(),
        Value::Float { ty, bits } if ty == "f32" => format!("{:?}", f32::from_bits(*bits as u32)),
        Value::Float { bits, .. } => format!("{:?}", f64::from_bits(*bits)),
        Value::Char { value } => format!("{value:?}"),
        Value::Str { value, .. } => format!("{value:?}"),
        Value::Ref { target, .. } => text(Some(target)),
        Value::Enum {
            variant, fields, ..
        } if fields.is_empty() => variant.clone(),
        Value::Enum {
            variant, fields, ..
        } => format!(
            "{variant}({})",
            fields
                .iter()
                .map(|f| text(Some(&f.value)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Seq { elems, .. } => format!(
            "[{}]",
            elems
                .iter()
                .map(|e| text(Some(e)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Struct { ty, fields } => format!(
            "{} {{ {} }}",
            short_name(ty),
            fields
                .iter()
                .map(|f| format!("{}: {}", f.name, text(Some(&f.value))))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestCalls;

    fn int(v: i128) -> Value {
        Value::Int {
            ty: "i64".into(),
            value: v,
        }
    }

    fn seen(function: &str, ret: i128) -> Seen {
        Seen {
            function: function.into(),
            args: Vec::new(),
            ret: Some(int(ret)),
            after: Vec::new(),
            returned: true,
        }
    }

    /// One test `t` calling `own` itself, `f` returning `f_ret` somewhere below.
    fn run(own: Vec<Seen>, f_ret: i128) -> Observed {
        let mut calls = TestCalls::default();
        calls.calls.insert("w::f".into(), vec![seen("w::f", f_ret)]);
        calls.own = own;
        let mut o = Observed::default();
        o.tests.insert("t".into(), calls);
        o
    }

    #[test]
    fn a_function_that_already_returned_the_forced_value_is_not_infected() {
        let d = diagnose("w::f", "0", &run(vec![], 0), None, &run(vec![], 0));
        assert_eq!(d.kind, Kind::NoInfection);
    }

    #[test]
    fn a_changed_value_the_test_saw_is_a_weak_oracle_and_one_it_did_not_see_does_not_propagate() {
        let original = run(vec![seen("w::g", 7734)], 5);
        let d = diagnose(
            "w::f",
            "0",
            &original,
            None,
            &run(vec![seen("w::g", 7729)], 0),
        );
        assert_eq!(d.kind, Kind::WeakOracle);
        assert_eq!(d.test.as_deref(), Some("t"));
        assert_eq!(d.suggestion, "check the result: assert_eq!(w::g(..), 7734)");
        let d = diagnose(
            "w::f",
            "0",
            &original,
            None,
            &run(vec![seen("w::g", 7734)], 0),
        );
        assert_eq!(d.kind, Kind::NoPropagation);
        assert!(d.evidence.contains("where it returned 5"), "{}", d.evidence);
    }

    #[test]
    fn a_value_that_differs_between_two_original_runs_is_not_what_the_test_failed_to_check() {
        // `w::now` returns a different value in every run: only `w::g` is compared.
        let original = run(vec![seen("w::now", 1), seen("w::g", 7734)], 5);
        let again = run(vec![seen("w::now", 2), seen("w::g", 7734)], 5);
        let now = run(vec![seen("w::now", 3), seen("w::g", 7734)], 0);
        let d = diagnose("w::f", "0", &original, Some(&again), &now);
        assert_eq!(d.kind, Kind::NoPropagation);
        let d = diagnose("w::f", "0", &original, None, &now);
        assert_eq!(d.kind, Kind::WeakOracle);
    }
}
