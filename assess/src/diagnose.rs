//! Why an undetected transformation went unnoticed, after Reneri (seed 002), from a recording of
//! the original tests and one of the transformed tests: no infection (every original call already
//! returned the forced value and changed nothing), no propagation (the calls the test made itself
//! returned the same values and left its objects in the same state), or a weak oracle (one of
//! them differs and the test asserted nothing about it).

use carve_storage::{CallId, Value};

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
        witnesses: Vec::new(),
    }
}

/// At most this many witnesses (calls to carve a catching test from) per diagnosis.
const MAX_WITNESSES: usize = 32;

/// The diagnosis of `function` forced to return `value` (as source writes it), from the
/// original run and the transformed run of the tests reaching it. `repeats` are more
/// recordings of the original tests: a value that differs between them and the original (a
/// clock, a hash seed, an address-derived number) is unstable, and a difference there is not
/// what a test failed to check; so is a test's own call that is not the same function at the
/// same position in every repeat.
pub fn diagnose(
    function: &str,
    value: &str,
    original: &Observed,
    repeats: &[Observed],
    transformed: &Observed,
) -> Diagnosis {
    let short = short_name(function);
    // Per test reaching it, the original calls whose effect the transformation changes.
    let mut infected_in: Vec<(String, Vec<&Seen>)> = Vec::new();
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
        let infected: Vec<&Seen> = orig
            .iter()
            .filter(|c| !forced_matches(c, forced.as_ref()))
            .collect();
        if !infected.is_empty() {
            infected_in.push((test.clone(), infected));
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
            witnesses: Vec::new(),
        };
    }
    // The function's own infected calls, the first test's first.
    let infected_calls = |first: &str| -> Vec<CallId> {
        let mut out: Vec<CallId> = Vec::new();
        let ordered = infected_in
            .iter()
            .filter(|(t, _)| t == first)
            .chain(infected_in.iter().filter(|(t, _)| t != first));
        for (_, calls) in ordered {
            out.extend(calls.iter().map(|c| c.call));
        }
        out
    };
    for (test, _) in &infected_in {
        let (Some(orig), Some(now)) = (original.tests.get(test), transformed.tests.get(test))
        else {
            continue;
        };
        let again: Vec<&[Seen]> = repeats
            .iter()
            .map(|r| r.tests.get(test).map(|t| t.own.as_slice()).unwrap_or(&[]))
            .collect();
        if let Some((at, d)) = first_difference(&orig.own, &again, &now.own) {
            let mut witnesses = vec![orig.own[at].call];
            witnesses.extend(infected_calls(test));
            witnesses.dedup();
            witnesses.truncate(MAX_WITNESSES);
            return Diagnosis {
                kind: Kind::WeakOracle,
                test: Some(test.clone()),
                evidence: format!("{test}: {d}, and the test asserts nothing about it"),
                suggestion: suggestion(&orig.own[at], now.own.get(at), &again, at),
                witnesses,
            };
        }
    }
    let (test, first) = &infected_in[0];
    let was = match &first[0].ret {
        Some(v) => format!("where it returned {}", text(Some(v))),
        None => "where it changed its arguments".into(),
    };
    let mut witnesses = infected_calls(test);
    witnesses.truncate(MAX_WITNESSES);
    Diagnosis {
        kind: Kind::NoPropagation,
        test: Some(test.clone()),
        evidence: format!(
            "{test}: {short} returns {value} {was}, but every call the test makes itself returns the same values and leaves its objects in the same state"
        ),
        suggestion: format!(
            "call {short} directly in a test and check its result: its effect is lost before it reaches anything {test} looks at"
        ),
        witnesses,
    }
}

/// The same call in each repeat: the call at position `at` of each repeat's own calls, when
/// every repeat has one of the same function; `None` when some repeat does not (the test's
/// calls are not the same from run to run there).
fn repeated<'a>(again: &[&'a [Seen]], at: usize, function: &str) -> Option<Vec<&'a Seen>> {
    again
        .iter()
        .map(|calls| calls.get(at).filter(|c| c.function == function))
        .collect()
}

/// Where the calls a test made itself first differ between the original run (`orig`) and the
/// transformed one (`now`), on what is stable across the repeats of the original (`again`),
/// and what differs.
fn first_difference(orig: &[Seen], again: &[&[Seen]], now: &[Seen]) -> Option<(usize, String)> {
    for (i, o) in orig.iter().enumerate() {
        let Some(same_call) = repeated(again, i, &o.function) else {
            continue;
        };
        let Some(n) = now.get(i) else {
            return Some((
                i,
                format!(
                    "it no longer calls {} (and what follows)",
                    short_name(&o.function)
                ),
            ));
        };
        if n.function != o.function {
            return Some((
                i,
                format!(
                    "it calls {} where it called {}",
                    short_name(&n.function),
                    short_name(&o.function)
                ),
            ));
        }
        let rets: Vec<Option<&Value>> = same_call.iter().map(|a| a.ret.as_ref()).collect();
        if opt_differs(o.ret.as_ref(), &rets, n.ret.as_ref()) {
            return Some((
                i,
                format!(
                    "{} returned {} and now returns {}",
                    short_name(&o.function),
                    text(o.ret.as_ref()),
                    text(n.ret.as_ref())
                ),
            ));
        }
        if let Some((name, was, is)) = changed_after(o, &same_call, n) {
            return Some((
                i,
                format!(
                    "after {}, `{name}` was {} and now is {}",
                    short_name(&o.function),
                    text(Some(was)),
                    text(Some(is))
                ),
            ));
        }
    }
    None
}

/// The assertion that would catch the difference at the test's own call `o` (now `n`).
fn suggestion(o: &Seen, n: Option<&Seen>, again: &[&[Seen]], at: usize) -> String {
    let same_call = n.is_some_and(|n| n.function == o.function);
    let repeats = repeated(again, at, &o.function).unwrap_or_default();
    let rets: Vec<Option<&Value>> = repeats.iter().map(|a| a.ret.as_ref()).collect();
    if !same_call || opt_differs(o.ret.as_ref(), &rets, n.and_then(|n| n.ret.as_ref())) {
        return match &o.ret {
            Some(v) => format!(
                "check the result: assert_eq!({}(..), {})",
                short_name(&o.function),
                text(Some(v))
            ),
            None => format!("check what {} did", short_name(&o.function)),
        };
    }
    if let Some((name, was, _)) = n.and_then(|n| changed_after(o, &repeats, n)) {
        return format!(
            "after {}(..), check the state of `{name}`: it should be {}",
            short_name(&o.function),
            text(Some(was))
        );
    }
    "add an assertion on the values the test computes".into()
}

/// The first `self` or `&mut` argument whose state after the call differs between `o` and
/// `n` where the repeats agree with `o`.
fn changed_after<'a>(
    o: &'a Seen,
    again: &[&'a Seen],
    n: &'a Seen,
) -> Option<(&'a str, &'a Value, &'a Value)> {
    o.after.iter().find_map(|oa| {
        let na = n.after.iter().find(|x| x.name == oa.name)?;
        let repeats: Option<Vec<&Value>> = again
            .iter()
            .map(|a| a.after.iter().find(|x| x.name == oa.name).map(|x| &x.value))
            .collect();
        let differs = match repeats {
            Some(repeats) => differs(&oa.value, &repeats, &na.value),
            // A repeat without the argument: nothing stable to compare.
            None => false,
        };
        differs.then_some((oa.name.as_str(), &oa.value, &na.value))
    })
}

fn opt_differs(o: Option<&Value>, again: &[Option<&Value>], n: Option<&Value>) -> bool {
    match (o, n) {
        (Some(o), Some(n)) => {
            let repeats: Option<Vec<&Value>> = again.iter().copied().collect();
            match repeats {
                Some(repeats) => differs(o, &repeats, n),
                None => false,
            }
        }
        _ => !opt_same(o, n) && again.iter().all(|a| opt_same(o, *a)),
    }
}

/// True when `n` differs from `o` somewhere every repeat in `again` agrees with `o`: a
/// difference in a part that varies between the original runs does not count.
fn differs(o: &Value, again: &[&Value], n: &Value) -> bool {
    if same(o, n) {
        return false;
    }
    if again.iter().all(|a| same(o, a)) {
        return true;
    }
    // Some repeat differs from the original: look inside, where the shapes allow it.
    let (Some((shape, inside)), Some((now_shape, now_inside))) = (parts(o), parts(n)) else {
        return false;
    };
    let repeated: Option<Vec<Vec<&Value>>> = again
        .iter()
        .map(|a| parts(a).filter(|(s, _)| *s == shape).map(|(_, p)| p))
        .collect();
    let Some(repeated) = repeated else {
        return false;
    };
    if shape != now_shape {
        // A stable shape the transformation changed (another variant, another length).
        return true;
    }
    (0..inside.len()).any(|i| {
        let again_i: Vec<&Value> = repeated.iter().map(|p| p[i]).collect();
        differs(inside[i], &again_i, now_inside[i])
    })
}

/// A value's shape (type, variant, field names, length) and its parts, for values made of
/// parts.
fn parts(v: &Value) -> Option<(String, Vec<&Value>)> {
    let names = |fields: &[carve_storage::Field]| {
        fields
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(",")
    };
    match v {
        Value::Ref { target, .. } => Some(("&".into(), vec![target])),
        Value::Struct { ty, fields } => Some((
            format!("{ty}{{{}}}", names(fields)),
            fields.iter().map(|f| &f.value).collect(),
        )),
        Value::Enum {
            ty,
            variant,
            fields,
            ..
        } => Some((
            format!("{ty}::{variant}{{{}}}", names(fields)),
            fields.iter().map(|f| &f.value).collect(),
        )),
        Value::Seq { ty, elems, .. } | Value::Tuple { ty, elems, .. } => {
            Some((format!("{ty}[{}]", elems.len()), elems.iter().collect()))
        }
        _ => None,
    }
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
            call: CallId(ret as u64),
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
        let d = diagnose("w::f", "0", &run(vec![], 0), &[], &run(vec![], 0));
        assert_eq!(d.kind, Kind::NoInfection);
    }

    #[test]
    fn a_changed_value_the_test_saw_is_a_weak_oracle_and_one_it_did_not_see_does_not_propagate() {
        let original = run(vec![seen("w::g", 7734)], 5);
        let d = diagnose(
            "w::f",
            "0",
            &original,
            &[],
            &run(vec![seen("w::g", 7729)], 0),
        );
        assert_eq!(d.kind, Kind::WeakOracle);
        assert_eq!(d.test.as_deref(), Some("t"));
        // A test catching it is carved from the call whose value changed, else from f's.
        assert_eq!(d.witnesses, [CallId(7734), CallId(5)]);
        assert_eq!(d.suggestion, "check the result: assert_eq!(w::g(..), 7734)");
        let d = diagnose(
            "w::f",
            "0",
            &original,
            &[],
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
        let d = diagnose("w::f", "0", &original, &[again], &now);
        assert_eq!(d.kind, Kind::NoPropagation);
        let d = diagnose("w::f", "0", &original, &[], &now);
        assert_eq!(d.kind, Kind::WeakOracle);
    }

    fn pair(id: i128, amount: i128) -> Value {
        Value::Struct {
            ty: "w::Entry".into(),
            fields: vec![
                carve_storage::Field {
                    name: "id".into(),
                    value: int(id),
                },
                carve_storage::Field {
                    name: "amount".into(),
                    value: int(amount),
                },
            ],
        }
    }

    #[test]
    fn only_the_parts_of_a_value_that_differ_between_original_runs_are_ignored() {
        // `w::entry` returns a fresh random id beside an amount: the id is not compared, the
        // amount is.
        let returning = |id, amount, f| {
            let mut s = seen("w::entry", 0);
            s.ret = Some(pair(id, amount));
            run(vec![s], f)
        };
        let original = returning(11, 77, 5);
        let again = returning(12, 77, 5);
        let d = diagnose(
            "w::f",
            "0",
            &original,
            std::slice::from_ref(&again),
            &returning(13, 77, 0),
        );
        assert_eq!(d.kind, Kind::NoPropagation);
        assert_eq!(d.witnesses, [CallId(5)]);
        let d = diagnose("w::f", "0", &original, &[again], &returning(13, 0, 0));
        assert_eq!(d.kind, Kind::WeakOracle);
        assert!(
            d.evidence
                .contains("Entry { id: 11, amount: 77 } and now returns"),
            "{}",
            d.evidence
        );
    }
}
