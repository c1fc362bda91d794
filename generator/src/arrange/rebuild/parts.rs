//! How to build an object — from its parts: a variant of one of the crate's enums, or a struct
//! whose fields are all public, that holds an object no literal can write (private fields:
//! `TinyVec::Inline(array_vec)`), the parts rebuilt first by the other rules, each into a
//! binding of its own, then the value composed of them. The parts move into it, so what their
//! rebuilding left to check is checked on the value.

use carve_storage::Value;

use crate::arrange::builder::{mark, undo, Builder};
use crate::arrange::context::Ctx;
use crate::arrange::literal::{self, compose::compose};
use crate::arrange::wanted::{Answer, Wanted};
use crate::body::Binding;
use crate::read::types::{strip_generics, TypeFacts};
use crate::syntax;

/// The object wanted composed of its parts, those no literal writes rebuilt first.
pub(crate) fn rule(cx: &Ctx, b: &mut Builder, w: Wanted) -> Answer {
    let (path, fields) = match w.state {
        Value::Enum {
            ty,
            variant,
            fields,
        } => {
            let base = strip_generics(ty);
            let (Some(_), Ok(variant)) = (cx.api.shape(base), syntax::ident(variant)) else {
                return Answer::Pass(None);
            };
            (format!("{base}::{variant}"), fields)
        }
        Value::Struct { ty, fields } => {
            let base = strip_generics(ty);
            match cx.api.shape(base) {
                Some(shape) if shape.fields_public && !shape.unit => (base.to_string(), fields),
                _ => return Answer::Pass(None),
            }
        }
        _ => return Answer::Pass(None),
    };
    if fields.is_empty() {
        return Answer::Pass(None);
    }
    let at = mark(b);
    let checks = b.checks.len();
    let mut args = Vec::with_capacity(fields.len());
    let mut rebuilt = false;
    for field in fields {
        if let Ok(expr) = literal::render_value(&field.value, false, cx.api) {
            args.push(expr);
            continue;
        }
        let (Value::Struct { ty, .. } | Value::Enum { ty, .. }) = &field.value else {
            undo(b, at);
            return Answer::Pass(None);
        };
        let part_type = strip_generics(ty);
        if cx.api.shape(part_type).is_none() {
            undo(b, at);
            return Answer::Pass(None);
        }
        let var = b.fresh(part_type.rsplit("::").next().unwrap_or("part"));
        let part = Wanted {
            state: &field.value,
            object: None,
            type_path: part_type,
            before: w.before,
            var: &var,
            mutable: false,
        };
        if cx.rebuild(b, part).is_err() {
            b.vars.remove(&var);
            undo(b, at);
            return Answer::Pass(None);
        }
        args.push(var);
        rebuilt = true;
    }
    // Every part a literal: the struct_literal rule's object, not this one's.
    let composed = rebuilt.then(|| compose(&path, fields, &args, true).ok());
    let Some(Some(expr)) = composed else {
        undo(b, at);
        return Answer::Pass(None);
    };
    // The parts move into the value: a state a part's rebuilding rests on is checked on the
    // value they make, where it can still be observed.
    let hypothesis = b.checks.len() > checks;
    b.checks.truncate(checks);
    b.setup.push(Binding {
        var: w.var.to_string(),
        mutable: w.mutable,
        expr,
        repeat: 1,
        times: None,
    });
    Answer::Built { check: hypothesis }
}

#[cfg(test)]
mod tests {
    use crate::testdata::rulebook;

    #[test]
    fn a_variant_holding_an_object_with_private_fields_is_composed_of_it_rebuilt() {
        // `run.length()` on the `Run::Solid` that `solid(3, 8)` made inside the crate: the
        // extent it holds is rebuilt first, by the constructor that stores its fields.
        let rebuilt = rulebook().rebuilt("rulebook::Run::length", 0, "rulebook::Run", false);
        assert_eq!(rebuilt.rule, "parts");
        assert_eq!(
            rebuilt.setup,
            [
                "rulebook::Extent::new(3u32, 8u32)",
                "rulebook::Run::Solid(extent)"
            ]
        );
        // The extent moved into the run: nothing is checked on it after.
        assert!(
            rebuilt.checks.iter().all(|c| !c.contains("extent.")),
            "{:?}",
            rebuilt.checks
        );
    }
}
