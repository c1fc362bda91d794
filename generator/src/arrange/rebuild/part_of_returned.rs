//! How to build an object — a part of a returned value: the recorded call whose result holds
//! the object as a variant's field or a `pub` field, made again and the part taken out
//! (`let Entry::Vacant(e) = map.entry(k) else {..}`, `parse(s).head`).

use std::rc::Rc;

use carve_storage::{Call, CallId, Outcome, Value};

use crate::act::target::{Callable, Target};
use crate::arrange::builder::{Builder, MAX_PRODUCER_DEPTH};
use crate::arrange::context::{cached, Ctx};
use crate::arrange::rebuild::producer::producer_call;
use crate::arrange::values::{dyn_addrs, returned_struct, same_state};
use crate::arrange::wanted::Wanted;
use crate::body::Binding;
use crate::syntax;

/// Positions of the recorded public calls whose result holds a `type_path` value as a direct
/// part a test can take out: a field of a variant of one of the crate's public enums
/// (`Entry::Vacant(entry)`), or a `pub` field of one of its structs.
pub(crate) fn part_producers(cx: &Ctx, type_path: &str) -> Rc<Vec<usize>> {
    cached(&cx.parts, type_path, || {
        returned_public_calls(cx, |call, c| {
            call.ret
                .as_ref()
                .and_then(|r| returned_struct(cx, r, &c.call_path))
                .is_some_and(|(whole, _)| !parts(cx, whole, type_path).is_empty())
        })
    })
}

/// Positions of the recorded calls of functions a test can call that returned and that `keep`
/// accepts (given the call and how a test calls its function).
pub(crate) fn returned_public_calls(
    cx: &Ctx,
    keep: impl Fn(&Call, &Callable) -> bool,
) -> Vec<usize> {
    (0..cx.trace.calls.len())
        .filter(|&i| {
            let call = &cx.trace.calls[i];
            matches!(cx.targets.get(&call.function),
                Some(Target::Callable(c)) if call.outcome == Outcome::Returned && keep(call, c))
        })
        .collect()
}

/// The parts of `whole` of type `type_path` a test can take out, each with the pattern (a
/// `let ... else`, `{}` standing for the variable) or the field access that takes it.
pub(crate) fn parts<'v>(
    cx: &Ctx,
    whole: &'v Value,
    type_path: &str,
) -> Vec<(&'v Value, Projection)> {
    let is_part = |v: &Value| {
        matches!(v, Value::Struct { ty, .. } | Value::Enum { ty, .. }
            if crate::read::types::strip_generics(ty) == type_path)
    };
    match whole {
        Value::Enum {
            ty,
            variant,
            fields,
        } => {
            let base = crate::read::types::strip_generics(ty);
            if cx.api.public_type(base).is_none() || syntax::ident(variant).is_err() {
                return Vec::new();
            }
            let tuple = fields.iter().all(|f| f.name.starts_with("__"));
            fields
                .iter()
                .enumerate()
                .filter(|(_, f)| is_part(&f.value))
                .filter_map(|(at, f)| {
                    let pattern = if tuple {
                        let mut slots = vec!["_"; at];
                        slots.push("{}");
                        if at + 1 < fields.len() {
                            slots.push("..");
                        }
                        format!("{base}::{variant}({})", slots.join(", "))
                    } else {
                        let name = syntax::ident(&f.name).ok()?;
                        format!("{base}::{variant} {{ {name}: {{}}, .. }}")
                    };
                    Some((&f.value, Projection::Variant(pattern)))
                })
                .collect()
        }
        Value::Struct { ty, fields } => {
            let Some(api_ty) = cx.api.public_type(crate::read::types::strip_generics(ty)) else {
                return Vec::new();
            };
            fields
                .iter()
                .filter(|f| is_part(&f.value))
                .filter_map(|f| {
                    // A tuple struct's fields are recorded `__0`, declared and written `0`.
                    let name = match f.name.strip_prefix("__") {
                        Some(n) if n.bytes().all(|c| c.is_ascii_digit()) => n.to_string(),
                        _ => syntax::ident(&f.name).ok()?.to_string(),
                    };
                    api_ty
                        .fields
                        .iter()
                        .any(|a| a.public && a.name == name)
                        .then_some((&f.value, Projection::Field(name)))
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// How a test takes a part out of a value.
pub(crate) enum Projection {
    /// `let <pattern> = value else { panic!(..) };`, `{}` in the pattern standing for the part.
    Variant(String),
    /// `value.field`.
    Field(String),
}

/// An object in `state` that a recorded public call returned as a part of its result (the
/// `VacantEntry` inside the `Entry::Vacant` that `map.entry(k)` gave): that call replayed and the
/// part taken out, by a `let ... else` on the recorded variant or a `pub` field.
pub(crate) fn part_of_returned(
    cx: &Ctx,
    b: &mut Builder,
    state: &Value,
    type_path: &str,
    before: CallId,
    var: &str,
    mutable: bool,
) -> bool {
    if b.producer_depth >= MAX_PRODUCER_DEPTH {
        return false;
    }
    let mut state_dyns = Vec::new();
    dyn_addrs(state, &mut state_dyns);
    for &i in part_producers(cx, type_path).iter().rev() {
        let call = &cx.trace.calls[i];
        if call.id >= before {
            continue;
        }
        let Some(Target::Callable(c)) = cx.targets.get(&call.function) else {
            continue;
        };
        let Some((whole, _)) = call
            .ret
            .as_ref()
            .and_then(|r| returned_struct(cx, r, &c.call_path))
        else {
            continue;
        };
        let Some((part, projection)) = parts(cx, whole, type_path)
            .into_iter()
            .find(|(part, _)| same_state(part, state))
        else {
            continue;
        };
        b.producer_depth += 1;
        let expr = producer_call(cx, b, call, part, &state_dyns, before);
        b.producer_depth -= 1;
        let Some(expr) = expr else {
            continue;
        };
        b.arranged.push(call.id);
        b.setup.push(match projection {
            Projection::Field(field) => Binding {
                var: var.to_string(),
                mutable,
                expr: format!("{expr}.{field}"),
                repeat: 1,
                times: None,
            },
            Projection::Variant(pattern) => {
                let bound = format!("{}{var}", if mutable { "mut " } else { "" });
                Binding {
                    var: String::new(),
                    mutable: false,
                    expr: format!(
                        "let {} = {expr} else {{ panic!(\"{} returned another variant than in the recording\") }}",
                        pattern.replace("{}", &bound),
                        c.call_path
                    ),
                    repeat: 1,
                    times: None,
                }
            }
        });
        return true;
    }
    false
}

/// See [`part_of_returned`].
pub(crate) fn rule(cx: &Ctx, b: &mut Builder, w: Wanted) -> bool {
    part_of_returned(cx, b, w.state, w.type_path, w.before, w.var, w.mutable)
}

#[cfg(test)]
mod tests {
    use crate::testdata::rulebook;

    #[test]
    fn an_object_only_handed_out_in_a_variant_is_taken_out_of_the_call_that_returned_it() {
        let rebuilt = rulebook().rebuilt("rulebook::Slot::value", 0, "rulebook::Slot", true);
        let (rule, setup) = (rebuilt.rule, rebuilt.setup);
        assert_eq!(rule, "part_of_returned");
        assert_eq!(
            setup,
            ["let rulebook::Entry::Found(receiver) = rulebook::find(&[4u32, 5u32, 6u32][..], 5u32) \
              else { panic!(\"rulebook::find returned another variant than in the recording\") }"]
        );
    }
}
