//! The value classes of what a call returned: for each number in the result, whether it is
//! negative, zero or positive; for each text, slice or vector, whether it is empty; for each
//! `bool` and each enum's variant inside it, which. A leaf is named by its path in the value (`.1` the second of a
//! tuple, `Ok.0` inside an `Ok`, `.len` a field), so `divmod100(100) = (1, 0)` has the classes
//! `.0 +` and `.1 0`. Two tests that give a function the same outcome but a zero where the
//! other had a positive number tell apart mutants the other does not (`value - q * 100` made
//! `value + q * 100` is the same when `q` is 0): distilling keeps a test for each class the
//! verified tests reach, of the tests' calls and of the calls inside them. What a call leaves
//! behind its `&mut` receiver and parameters is classed the same way (`self:.line_no +`), and
//! each of its fields the call changed is a class (`self:.line_no changed`), where a test can
//! see it: the caller says which of a call's arguments the test observes (`distil.rs`: those
//! of the test's own calls, and of the calls inside them on the same objects — not a lexer a
//! `split` made and dropped inside itself).

use std::collections::{BTreeMap, BTreeSet};

use carve_storage::{Call, Outcome, Value};

/// How deep into a value its leaves are classed.
const MAX_DEPTH: usize = 3;
/// How many fields or elements of one struct or tuple are classed.
const MAX_WIDTH: usize = 8;

/// The value classes of `call`'s result (none when it did not return, or returned `()`),
/// and of what it left behind its `&mut` parameters and receiver (`self: .line_no +`): a
/// counter a call moves is told apart as its result is. Only the arguments `observed` names
/// are classed so.
pub(crate) fn of(call: &Call, observed: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    if let Outcome::Returned = &call.outcome {
        if let Some(ret) = &call.ret {
            leaves(ret, "", 0, &mut out);
        }
        for arg in call.after.iter().filter(|a| observed(&a.name)) {
            // A bool left behind is a class too: depth 1.
            let path = format!("{}:", arg.name);
            leaves(&arg.value, &path, 1, &mut out);
            // Which of its fields the call changed: `line_no += 1` run or not.
            if let Some(before) = call.args.iter().find(|a| a.name == arg.name) {
                changed(&before.value, &arg.value, &path, 1, &mut out);
            }
        }
    }
    out
}

fn leaves(value: &Value, path: &str, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_DEPTH {
        return;
    }
    let at = |class: &str| {
        if path.is_empty() {
            class.to_string()
        } else {
            format!("{path} {class}")
        }
    };
    match value {
        Value::Int { value, .. } => out.push(at(sign(value.signum() as i8))),
        Value::Uint { value, .. } => out.push(at(sign(i8::from(*value > 0)))),
        Value::Float { bits, ty } => {
            let x = if ty == "f32" {
                f64::from(f32::from_bits(*bits as u32))
            } else {
                f64::from_bits(*bits)
            };
            let class = if x.is_nan() {
                "NaN"
            } else if x == 0.0 {
                "0"
            } else if x < 0.0 {
                "-"
            } else {
                "+"
            };
            out.push(at(class));
        }
        // A whole result's `bool` is its outcome already (`outcome.rs`).
        Value::Bool { value } if depth > 0 => out.push(at(&value.to_string())),
        Value::Str { value, .. } => out.push(at(empty(value.is_empty()))),
        Value::Seq { elems, .. } => out.push(at(empty(elems.is_empty()))),
        Value::Ref { target, .. } => leaves(target, path, depth, out),
        Value::Enum {
            variant, fields, ..
        } => {
            // Which variant, inside a value (a whole result's variant is its outcome already):
            // `quoting_strategy` returning `(5, DoubleQuoted)` is told from `(5, Unquoted)`.
            if depth > 0 {
                out.push(at(variant));
            }
            for (i, f) in fields.iter().take(MAX_WIDTH).enumerate() {
                leaves(&f.value, &format!("{path}{variant}.{i}"), depth + 1, out);
            }
        }
        Value::Struct { fields, .. } => {
            for f in fields.iter().take(MAX_WIDTH) {
                leaves(&f.value, &format!("{path}.{}", f.name), depth + 1, out);
            }
        }
        Value::Tuple { elems, .. } => {
            for (i, v) in elems.iter().take(MAX_WIDTH).enumerate() {
                leaves(v, &format!("{path}.{i}"), depth + 1, out);
            }
        }
        Value::Bool { .. }
        | Value::Unit
        | Value::Char { .. }
        | Value::Pointer { .. }
        | Value::Function { .. }
        | Value::Opaque { .. }
        | Value::Unavailable { .. } => {}
    }
}

/// `PATH changed` for each leaf (number, bool, char, text, a sequence's length) of `after`
/// that differs from the same leaf of `before`, the two walked side by side.
fn changed(before: &Value, after: &Value, path: &str, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_DEPTH {
        return;
    }
    match (before, after) {
        (Value::Ref { target, .. }, other) => changed(target, other, path, depth, out),
        (other, Value::Ref { target, .. }) => changed(other, target, path, depth, out),
        (Value::Struct { fields: a, .. }, Value::Struct { fields: b, .. }) => {
            for (fa, fb) in a.iter().zip(b).take(MAX_WIDTH) {
                if fa.name == fb.name {
                    let path = format!("{path}.{}", fa.name);
                    changed(&fa.value, &fb.value, &path, depth + 1, out);
                }
            }
        }
        (Value::Tuple { elems: a, .. }, Value::Tuple { elems: b, .. }) => {
            for (i, (x, y)) in a.iter().zip(b).take(MAX_WIDTH).enumerate() {
                changed(x, y, &format!("{path}.{i}"), depth + 1, out);
            }
        }
        (Value::Seq { elems: a, .. }, Value::Seq { elems: b, .. }) if a.len() != b.len() => {
            out.push(format!("{path} len changed"));
        }
        (
            Value::Enum {
                variant: va,
                fields: a,
                ..
            },
            Value::Enum {
                variant: vb,
                fields: b,
                ..
            },
        ) if va == vb => {
            for (i, (x, y)) in a.iter().zip(b).take(MAX_WIDTH).enumerate() {
                changed(
                    &x.value,
                    &y.value,
                    &format!("{path}{va}.{i}"),
                    depth + 1,
                    out,
                );
            }
        }
        (
            a @ (Value::Int { .. }
            | Value::Uint { .. }
            | Value::Float { .. }
            | Value::Bool { .. }
            | Value::Char { .. }
            | Value::Str { .. }
            | Value::Enum { .. }),
            b,
        ) if a != b => out.push(format!("{path} changed")),
        _ => {}
    }
}

fn sign(s: i8) -> &'static str {
    match s {
        ..=-1 => "-",
        0 => "0",
        _ => "+",
    }
}

fn empty(is_empty: bool) -> &'static str {
    if is_empty {
        "empty"
    } else {
        "not empty"
    }
}

/// How many calls inside one test's calls are classed: a test standing for a call that made
/// millions weighs the first ones.
const MAX_CALLS_CLASSED: usize = 10_000;

/// (function, value class) of what the calls `ids` (those the test makes) and the calls
/// inside them returned; the outcome of each call but the test's `own` is a class too. What a
/// call left behind an argument counts where the test can see it: the test's calls' own
/// arguments, and the objects they referred to when a call inside works on them again; not
/// an object a call made and dropped inside itself (a lexer inside `split`), whose fields no
/// assertion of the test compares.
pub(crate) fn of_calls(
    (calls, boundaries): (&super::faults::Calls, &BTreeMap<i128, String>),
    ids: &[u64],
    own: &[u64],
) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    let mut todo: Vec<&Call> = ids
        .iter()
        .filter_map(|id| calls.by_id.get(id))
        .copied()
        .collect();
    let held: BTreeSet<_> = todo
        .iter()
        .flat_map(|call| call.objects.iter().map(|o| o.object))
        .collect();
    let mut seen = 0;
    while let Some(call) = todo.pop() {
        seen += 1;
        if seen > MAX_CALLS_CLASSED {
            break;
        }
        let Some(path) = calls.paths.get(&call.function) else {
            continue;
        };
        let made = ids.contains(&call.id.0);
        let observed = |name: &str| made || call.object(name).is_some_and(|o| held.contains(&o));
        for class in of(call, observed) {
            out.insert((path.to_string(), class));
        }
        // A number given at a boundary the code names (`bytes < KIB` needs 1024 exactly).
        let mut at = Vec::new();
        for arg in &call.args {
            let path = format!("{}:", arg.name);
            super::boundaries::at(&arg.value, &path, boundaries, 3, &mut at);
        }
        // The kinds of character the test itself gave it (`$`, a three-byte character).
        if own.contains(&call.id.0) {
            for arg in &call.args {
                super::characters::of(&arg.value, &format!("{}:", arg.name), &mut at);
            }
        }
        out.extend(at.into_iter().map(|class| (path.to_string(), class)));
        // The outcomes of the tests' own calls are goals of their own (`Goal::Outcome`).
        if !own.contains(&call.id.0) {
            if let Some(outcome) = super::outcome::of(call) {
                out.insert((path.to_string(), format!("outcome {outcome}")));
            }
        }
        todo.extend(calls.children.get(&call.id.0).into_iter().flatten());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distil::test_call;
    use carve_storage::Field;

    fn returning(ret: Value) -> Vec<String> {
        of(&test_call(Outcome::Returned, Some(ret)), |_| true)
    }

    fn uint(value: u128) -> Value {
        Value::Uint {
            ty: "u32".into(),
            value,
        }
    }

    #[test]
    fn each_number_of_a_tuple_is_classed_by_sign() {
        let pair = |q, r| Value::Tuple {
            ty: "(u32, u32)".into(),
            elems: vec![uint(q), uint(r)],
        };
        assert_eq!(returning(pair(1, 0)), vec![".0 +", ".1 0"]);
        assert_eq!(returning(pair(0, 42)), vec![".0 0", ".1 +"]);
        let negative = Value::Int {
            ty: "i64".into(),
            value: -3,
        };
        assert_eq!(returning(negative), vec!["-"]);
    }

    #[test]
    fn inside_variants_and_fields_texts_are_empty_or_not_and_bools_count() {
        let ok = Value::Enum {
            ty: "Result".into(),
            variant: "Ok".into(),
            fields: vec![Field::new(
                "__0",
                Value::Struct {
                    ty: "Token".into(),
                    fields: vec![
                        Field::new(
                            "text",
                            Value::Str {
                                ty: "String".into(),
                                value: String::new(),
                                truncated: false,
                            },
                        ),
                        Field::new("last", Value::Bool { value: true }),
                    ],
                },
            )],
        };
        assert_eq!(returning(ok), vec!["Ok.0.text empty", "Ok.0.last true"]);
        // A variant inside a value is a class; the whole result's is its outcome.
        let unit = |variant: &str| Value::Enum {
            ty: "Strategy".into(),
            variant: variant.into(),
            fields: vec![],
        };
        let pair = Value::Tuple {
            ty: "(u32, Strategy)".into(),
            elems: vec![uint(5), unit("DoubleQuoted")],
        };
        assert_eq!(returning(pair), vec![".0 +", ".1 DoubleQuoted"]);
        assert!(returning(unit("Unquoted")).is_empty());
        // A bare bool is the call's outcome, not a class.
        assert!(returning(Value::Bool { value: false }).is_empty());
    }

    #[test]
    fn what_a_call_left_behind_its_mut_receiver_is_classed_too() {
        let mut call = test_call(Outcome::Returned, None);
        call.after = vec![carve_storage::Arg {
            name: "self".into(),
            value: Value::Struct {
                ty: "Lexer".into(),
                fields: vec![
                    Field::new("line_no", uint(2)),
                    Field::new("had_error", Value::Bool { value: false }),
                ],
            },
        }];
        assert_eq!(
            of(&call, |_| true),
            vec!["self:.line_no +", "self:.had_error false"]
        );
        // Before the call the counter was 1: the call moved it.
        let before = |line_no| carve_storage::Arg {
            name: "self".into(),
            value: Value::Ref {
                ty: "&mut Lexer".into(),
                addr: 0x10,
                target: Box::new(Value::Struct {
                    ty: "Lexer".into(),
                    fields: vec![
                        Field::new("line_no", uint(line_no)),
                        Field::new("had_error", Value::Bool { value: false }),
                    ],
                }),
            },
        };
        call.args = vec![before(1)];
        assert_eq!(
            of(&call, |_| true),
            vec![
                "self:.line_no +",
                "self:.had_error false",
                "self:.line_no changed"
            ]
        );
        call.args = vec![before(2)];
        assert_eq!(
            of(&call, |_| true),
            vec!["self:.line_no +", "self:.had_error false"]
        );
        // A receiver the test does not observe leaves no class behind.
        assert!(of(&call, |name| name != "self").is_empty());
        call.outcome = Outcome::Panicked { message: None };
        assert!(of(&call, |_| true).is_empty());
    }

    #[test]
    fn a_call_that_panicked_has_no_class() {
        let mut call = test_call(Outcome::Panicked { message: None }, Some(uint(3)));
        assert!(of(&call, |_| true).is_empty());
        call.outcome = Outcome::Returned;
        assert_eq!(of(&call, |_| true), vec!["+"]);
    }
}
