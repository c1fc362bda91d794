//! Why an undetected transformation went unnoticed, after Reneri (seed 002), from a recording of
//! the original tests and one of the transformed tests: no infection (every original call already
//! returned the forced value and changed nothing), no propagation (the calls the test made itself
//! returned the same values and left its objects in the same state), or a weak oracle (one of
//! them differs and the test asserted nothing about it).

use carve_storage::{CallId, Value};

use crate::{Diagnosis, Kind, Observed, Seen};

/// How a transformation of a function returning `()` is written: its body skipped.
const UNIT: &str = "()";

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
            evidence: if value == UNIT {
                format!(
                    "no call of {function} under the tests ({calls} in all) changed `self` or a `&mut` argument: skipping its body changes nothing carve sees"
                )
            } else {
                format!(
                    "every call of {function} under the tests ({calls} in all) already returned {value} and changed nothing"
                )
            },
            suggestion: no_infection_advice(function, value),
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
    let mut witnesses = infected_calls(test);
    witnesses.truncate(MAX_WITNESSES);
    // What the transformation changed, in values the same in every run of the original.
    let at = original.tests[test].calls[function]
        .iter()
        .position(|c| c.call == first[0].call)
        .unwrap_or(0);
    let again: Vec<&Seen> = repeats
        .iter()
        .filter_map(|r| r.tests.get(test)?.calls.get(function)?.get(at))
        .collect();
    let returned: Vec<&Value> = again.iter().filter_map(|s| s.ret.as_ref()).collect();
    let changed = if value == UNIT {
        format!("skipping the body of {function} leaves its arguments in another state")
    } else {
        match &first[0].ret {
            Some(v) if returned.len() == again.len() => format!(
                "{function} returns {value} where it returned {}",
                stable_text(v, &returned)
            ),
            _ => format!("{function} returns {value} where it changed its arguments"),
        }
    };
    let check = if value == UNIT {
        "what it changes"
    } else {
        "its result"
    };
    Diagnosis {
        kind: Kind::NoPropagation,
        test: Some(test.clone()),
        evidence: format!(
            "{test}: {changed}, but every call the test makes itself returns the same values and leaves its objects in the same state"
        ),
        suggestion: format!(
            "call {function} directly in a test and check {check}: its effect is lost before it reaches anything {test} looks at"
        ),
        witnesses,
    }
}

/// What to do about a no-infection case of `function` forced to return `value`.
fn no_infection_advice(function: &str, value: &str) -> String {
    if value != UNIT {
        return format!(
            "the tests never give {function} inputs for which it returns anything but {value}: add a test with such inputs and check what it returns"
        );
    }
    // A function returning `()` has no other value to return: what a test can check is what
    // its body does.
    if function.ends_with(" as core::ops::drop::Drop>::drop") {
        return format!(
            "skipping {function} only leaks what it would release: if releasing it matters, check it in a test (a count of drops, a file closed, a lock released); if not, leave it out of the assessment (--filter)"
        );
    }
    format!(
        "{function} returns nothing, so a test can only check what it does: add a test that checks the state it leaves behind or what it writes, sends or frees"
    )
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
                format!("it no longer calls {} (and what follows)", o.function),
            ));
        };
        if n.function != o.function {
            return Some((
                i,
                format!("it calls {} where it called {}", n.function, o.function),
            ));
        }
        let rets: Vec<Option<&Value>> = same_call.iter().map(|a| a.ret.as_ref()).collect();
        if opt_differs(o.ret.as_ref(), &rets, n.ret.as_ref()) {
            let again: Vec<&Value> = rets.iter().flatten().copied().collect();
            let part = match (o.ret.as_ref(), n.ret.as_ref()) {
                (Some(was), Some(now)) if again.len() == rets.len() => {
                    changed_part(was, &again, now)
                }
                _ => None,
            };
            let what = match part {
                Some((path, was, now, _)) if path.is_empty() => format!(
                    "{} returned {} and now returns {}",
                    o.function,
                    text(Some(was)),
                    text(Some(now))
                ),
                Some((path, was, now, _)) => format!(
                    "{} returned a value whose `{path}` was {} and now is {}",
                    o.function,
                    text(Some(was)),
                    text(Some(now))
                ),
                None => format!(
                    "{} returned {} and now returns {}",
                    o.function,
                    opt_masked_text(o.ret.as_ref(), o.ret.as_ref(), &again),
                    opt_masked_text(n.ret.as_ref(), o.ret.as_ref(), &again)
                ),
            };
            return Some((i, what));
        }
        if let Some((name, was, is, again)) = changed_after(o, &same_call, n) {
            let what = match changed_part(was, &again, is) {
                Some((path, was, now, _)) => format!(
                    "after {}, `{name}{path}` was {} and now is {}",
                    o.function,
                    text(Some(was)),
                    text(Some(now))
                ),
                None => format!(
                    "after {}, `{name}` was {} and now is {}",
                    o.function,
                    stable_text(was, &again),
                    masked_text(is, was, &again)
                ),
            };
            return Some((i, what));
        }
    }
    None
}

/// The assertion that would catch the difference at the test's own call `o` (now `n`). A value
/// is suggested only where every recording of the original agrees with it: a part that differs
/// from run to run (a hash seed, a clock) is shown as `_`, and never as a value to assert.
fn suggestion(o: &Seen, n: Option<&Seen>, again: &[&[Seen]], at: usize) -> String {
    let same_call = n.is_some_and(|n| n.function == o.function);
    let repeats = repeated(again, at, &o.function).unwrap_or_default();
    let rets: Vec<Option<&Value>> = repeats.iter().map(|a| a.ret.as_ref()).collect();
    if !same_call || opt_differs(o.ret.as_ref(), &rets, n.and_then(|n| n.ret.as_ref())) {
        let again: Vec<&Value> = rets.iter().flatten().copied().collect();
        let now = n.filter(|_| same_call).and_then(|n| n.ret.as_ref());
        let part = match (&o.ret, now) {
            (Some(was), Some(now)) if again.len() == rets.len() => changed_part(was, &again, now),
            _ => None,
        };
        return match (&o.ret, part) {
            (Some(v), _) if again.len() == rets.len() && is_stable(v, &again) => format!(
                "check the result: assert_eq!({}(..), {})",
                o.function,
                text(Some(v))
            ),
            (_, Some((path, was, _, _))) => format!(
                "check the result's `{path}`, which changed and is the same in every run: assert_eq!({}(..){path}, {})",
                o.function,
                text(Some(was))
            ),
            (Some(v), None) if again.len() == rets.len() => format!(
                "check the parts of the result of {}(..) that are the same in every run: {} (`_` differs from run to run)",
                o.function,
                stable_text(v, &again)
            ),
            _ => format!("check what {} did", o.function),
        };
    }
    if let Some((name, was, is, again)) = n.and_then(|n| changed_after(o, &repeats, n)) {
        if is_stable(was, &again) {
            return format!(
                "after {}(..), check the state of `{name}`: it should be {}",
                o.function,
                text(Some(was))
            );
        }
        if let Some((path, was, _, _)) = changed_part(was, &again, is) {
            return format!(
                "after {}(..), check `{name}{path}`, which changed and is the same in every run: it should be {}",
                o.function,
                text(Some(was))
            );
        }
        return format!(
            "after {}(..), check the parts of `{name}` that are the same in every run: {} (`_` differs from run to run)",
            o.function,
            stable_text(was, &again)
        );
    }
    "add an assertion on the values the test computes".into()
}

/// Where `n` differs from `o` in a part that is the same in `o` and every repeat (`again`):
/// the Rust path to that part from the whole value (empty when the whole value is the same in
/// every run; `.len`, `.0.count`, `[2]`), the original and new values there, and the repeats'.
/// `None` when the path cannot be written (through an enum's payload) or nothing stable differs.
fn changed_part<'a>(
    o: &'a Value,
    again: &[&'a Value],
    n: &'a Value,
) -> Option<(String, &'a Value, &'a Value, Vec<&'a Value>)> {
    if same(o, n) {
        return None;
    }
    if is_stable(o, again) {
        return Some((String::new(), o, n, again.to_vec()));
    }
    let (shape, inside) = parts(o)?;
    let (now_shape, now_inside) = parts(n)?;
    if shape != now_shape {
        return None;
    }
    let repeated: Vec<Vec<&Value>> = again
        .iter()
        .map(|a| parts(a).filter(|(s, _)| *s == shape).map(|(_, p)| p))
        .collect::<Option<_>>()?;
    for i in 0..inside.len() {
        let again_i: Vec<&Value> = repeated.iter().map(|p| p[i]).collect();
        let Some((path, was, now, at)) = changed_part(inside[i], &again_i, now_inside[i]) else {
            continue;
        };
        let step = match o {
            Value::Ref { .. } => String::new(),
            Value::Struct { fields, .. } => {
                let name = &fields[i].name;
                format!(".{}", name.strip_prefix("__").unwrap_or(name))
            }
            Value::Tuple { .. } => format!(".{i}"),
            Value::Seq { .. } => format!("[{i}]"),
            _ => return None,
        };
        return Some((format!("{step}{path}"), was, now, at));
    }
    None
}

/// The first `self` or `&mut` argument whose state after the call differs between `o` and
/// `n` where the repeats agree with `o`, with its states in the repeats.
fn changed_after<'a>(
    o: &'a Seen,
    again: &[&'a Seen],
    n: &'a Seen,
) -> Option<(&'a str, &'a Value, &'a Value, Vec<&'a Value>)> {
    o.after.iter().find_map(|oa| {
        let na = n.after.iter().find(|x| x.name == oa.name)?;
        let repeats: Option<Vec<&Value>> = again
            .iter()
            .map(|a| a.after.iter().find(|x| x.name == oa.name).map(|x| &x.value))
            .collect();
        // A repeat without the argument: nothing stable to compare.
        let repeats = repeats?;
        differs(&oa.value, &repeats, &na.value).then_some((
            oa.name.as_str(),
            &oa.value,
            &na.value,
            repeats,
        ))
    })
}

/// True when every repeat agrees with `o` (addresses aside).
fn is_stable(o: &Value, again: &[&Value]) -> bool {
    again.iter().all(|a| same(o, a))
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

/// A type's name as source that imported it writes it: `wallet::Wallet` → `Wallet`,
/// `alloc::vec::Vec<a::B>` → `Vec<a::B>`, `<a::B as c::D>::E` → itself (only a `::` outside
/// angle brackets separates path segments).
fn type_name(path: &str) -> &str {
    if path.starts_with('<') {
        return path;
    }
    let mut depth = 0i32;
    let mut start = 0;
    let bytes = path.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'<' => depth += 1,
            b'>' if i == 0 || bytes[i - 1] != b'-' => depth -= 1,
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => start = i + 2,
            _ => {}
        }
    }
    &path[start.min(path.len())..]
}

/// `o` as [`text`] writes it, with each part that is not the same in every one of `again`
/// (recordings of the same call in other runs of the original) written `_`.
fn stable_text(o: &Value, again: &[&Value]) -> String {
    masked_text(o, o, again)
}

/// `v` as [`text`] writes it, with `_` for each part where the original value `o` and its
/// repeats `again` disagree (a part that differs from run to run).
fn masked_text(v: &Value, o: &Value, again: &[&Value]) -> String {
    if is_stable(o, again) {
        return text(Some(v));
    }
    let (Some((shape, inside)), Some((v_shape, v_inside))) = (parts(o), parts(v)) else {
        return "_".into();
    };
    let repeated: Option<Vec<Vec<&Value>>> = again
        .iter()
        .map(|a| parts(a).filter(|(s, _)| *s == shape).map(|(_, p)| p))
        .collect();
    let (Some(repeated), true) = (repeated, shape == v_shape) else {
        return "_".into();
    };
    let part = |i: usize| -> String {
        let again_i: Vec<&Value> = repeated.iter().map(|p| p[i]).collect();
        masked_text(v_inside[i], inside[i], &again_i)
    };
    let list = |n: usize| (0..n).map(part).collect::<Vec<_>>().join(", ");
    match v {
        Value::Ref { .. } => part(0),
        Value::Struct { ty, fields } => format!(
            "{} {{ {} }}",
            type_name(ty),
            fields
                .iter()
                .enumerate()
                .map(|(i, f)| format!("{}: {}", f.name, part(i)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Enum {
            variant, fields, ..
        } => format!("{variant}({})", list(fields.len())),
        Value::Seq { elems, .. } => format!("[{}]", list(elems.len())),
        Value::Tuple { elems, .. } => format!("({})", list(elems.len())),
        _ => "_".into(),
    }
}

/// `v` (a value recorded where `o` was, repeated as `again`) as [`masked_text`] writes it.
fn opt_masked_text(v: Option<&Value>, o: Option<&Value>, again: &[&Value]) -> String {
    match (v, o) {
        (Some(v), Some(o)) => masked_text(v, o, again),
        (v, _) => text(v),
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
            type_name(ty),
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
        // The id differs from run to run: it is never shown as a value, let alone one to assert.
        assert_eq!(
            d.evidence,
            "t: w::entry returned a value whose `.amount` was 77 and now is 0, and the test asserts nothing about it"
        );
        assert_eq!(
            d.suggestion,
            "check the result's `.amount`, which changed and is the same in every run: assert_eq!(w::entry(..).amount, 77)"
        );
    }

    #[test]
    fn a_function_returning_unit_is_never_told_to_return_anything_but_unit() {
        let unit = |after: i128| {
            let mut s = seen("w::Guard::release", 0);
            s.ret = None;
            s.args = vec![carve_storage::Arg {
                name: "self".into(),
                value: Value::Ref {
                    addr: 1,
                    ty: "&mut w::Guard".into(),
                    target: Box::new(int(1)),
                },
            }];
            s.after = vec![carve_storage::Arg {
                name: "self".into(),
                value: int(after),
            }];
            s
        };
        let observed = |after: i128| {
            let mut calls = TestCalls::default();
            calls
                .calls
                .insert("w::Guard::release".into(), vec![unit(after)]);
            let mut o = Observed::default();
            o.tests.insert("t".into(), calls);
            o
        };
        // `self` is left as it was: skipping the body changes nothing carve sees.
        let d = diagnose("w::Guard::release", "()", &observed(1), &[], &observed(1));
        assert_eq!(d.kind, Kind::NoInfection);
        assert!(!d.suggestion.contains("anything but"), "{}", d.suggestion);
        assert!(d.suggestion.contains("returns nothing"), "{}", d.suggestion);
        let drop = "<w::Guard as core::ops::drop::Drop>::drop";
        let d = diagnose(drop, "()", &observed(1), &[], &observed(1));
        assert!(
            d.suggestion
                .starts_with(&format!("skipping {drop} only leaks")),
            "{}",
            d.suggestion
        );
        // `self` changed: the body matters, and the advice is about what it changes.
        let d = diagnose("w::Guard::release", "()", &observed(0), &[], &observed(1));
        assert_eq!(d.kind, Kind::NoPropagation);
        assert_eq!(
            d.suggestion,
            "call w::Guard::release directly in a test and check what it changes: its effect is lost before it reaches anything t looks at"
        );
    }
}
