//! How to build an object — a public `const` of the crate (`let limits = abc::STRICT;`): no
//! recorded call made it (a const is written into the program where it is used, so no call and
//! no symbol shows it), and it is exactly what one of the crate's public consts of its type
//! holds. The const's initializer is read from the source and compared with the recorded state
//! part by part: literals, struct literals naming every field, arrays (`[x; N]` too), `&`,
//! `-`, and other consts of the crate it names. An initializer that calls a function (a
//! `const fn`) cannot be read so, and is never taken on trust (two consts of one type differ
//! only in such calls often enough: `STANDARD` and `URL_SAFE`): its value is what a program
//! built against the crate printed of it (`verify/consts.rs`), compared with the state's
//! derived `Debug` where that is known exactly.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use carve_storage::Value;
use syn::ext::IdentExt;

use crate::arrange::builder::Builder;
use crate::arrange::context::Ctx;
use crate::arrange::wanted::Wanted;
use crate::body::Binding;
use crate::read::crate_api::{ConstApi, CrateApi};
use crate::read::types::strip_generics;

/// How many consts deep one initializer may name others.
const MAX_DEPTH: usize = 8;

/// The object as the public const of its type whose initializer is its recorded state.
pub(crate) fn rule(cx: &Ctx, b: &mut Builder, w: Wanted) -> bool {
    let Some(path) = matching_const(cx.api, w.type_path, w.state) else {
        return false;
    };
    b.setup.push(Binding {
        var: w.var.to_string(),
        mutable: w.mutable,
        expr: path,
        repeat: 1,
        times: None,
    });
    true
}

/// The path a test names the one public const of type `type_path` (reachable from outside the
/// crate) whose initializer holds exactly `state`.
pub(crate) fn matching_const(api: &CrateApi, type_path: &str, state: &Value) -> Option<String> {
    let base = strip_generics(type_path);
    let type_name = base.rsplit("::").next()?;
    // Two consts holding the same state are the same value: the first, in module order.
    api.modules
        .values()
        .filter(|m| m.reachable)
        .flat_map(|m| m.consts.values().map(move |c| (m, c)))
        .filter(|(_, c)| c.type_name == type_name)
        .filter(|(m, c)| same_const(api, &m.path, c, state, 0))
        .map(|(m, c)| {
            let mut path = vec![api.crate_name.clone()];
            path.extend(m.path.iter().cloned());
            path.push(c.ident.clone());
            path.join("::")
        })
        .next()
}

/// Whether const `c` of module `module` holds `value`.
fn same_const(
    api: &CrateApi,
    module: &[String],
    c: &ConstApi,
    value: &Value,
    depth: usize,
) -> bool {
    parsed(&c.expr).is_some_and(|expr| same(api, module, &expr, value, depth))
        || c.probed.as_deref().is_some_and(|text| {
            crate::arrange::debug_repr::debug_repr(value, api).as_deref() == Some(text)
        })
}

/// An initializer's tokens parsed, once per text on this thread (`syn::Expr` is not `Send`,
/// so the crate's API keeps the text; an object of the const's type is wanted once per test).
fn parsed(expr: &str) -> Option<Rc<syn::Expr>> {
    thread_local! {
        static PARSED: RefCell<HashMap<String, Option<Rc<syn::Expr>>>> = RefCell::default();
    }
    PARSED.with(|cache| {
        if let Some(found) = cache.borrow().get(expr) {
            return found.clone();
        }
        let made = syn::parse_str::<syn::Expr>(expr).ok().map(Rc::new);
        cache.borrow_mut().insert(expr.to_string(), made.clone());
        made
    })
}

/// Whether `expr` (an initializer written in module `module`) evaluates to `value`.
fn same(api: &CrateApi, module: &[String], expr: &syn::Expr, value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let same_in = |e: &syn::Expr, v: &Value| same(api, module, e, v, depth + 1);
    match (expr, value) {
        (syn::Expr::Paren(p), _) => same_in(&p.expr, value),
        (syn::Expr::Group(g), _) => same_in(&g.expr, value),
        // The recorder gives a reference's target; a `&` in the source is the same value.
        (syn::Expr::Reference(r), Value::Ref { target, .. }) => same_in(&r.expr, target),
        (syn::Expr::Reference(r), _) => same_in(&r.expr, value),
        (_, Value::Ref { target, .. }) => same_in(expr, target),
        (syn::Expr::Lit(lit), _) => same_lit(&lit.lit, value, false),
        (syn::Expr::Unary(u), _) if matches!(u.op, syn::UnOp::Neg(_)) => match &*u.expr {
            syn::Expr::Lit(lit) => same_lit(&lit.lit, value, true),
            _ => false,
        },
        (syn::Expr::Struct(s), Value::Struct { fields, .. }) => {
            s.rest.is_none()
                && s.fields.len() == fields.len()
                && s.fields.iter().all(|f| {
                    let name = match &f.member {
                        syn::Member::Named(id) => id.unraw().to_string(),
                        syn::Member::Unnamed(i) => i.index.to_string(),
                    };
                    fields
                        .iter()
                        .find(|field| field.name == name || field.name == format!("__{name}"))
                        .is_some_and(|field| same_in(&f.expr, &field.value))
                })
        }
        (
            syn::Expr::Array(a),
            Value::Seq {
                elems,
                truncated: false,
                ..
            },
        ) => a.elems.len() == elems.len() && a.elems.iter().zip(elems).all(|(e, v)| same_in(e, v)),
        (
            syn::Expr::Repeat(r),
            Value::Seq {
                elems,
                truncated: false,
                ..
            },
        ) => usize_lit(&r.len) == Some(elems.len()) && elems.iter().all(|v| same_in(&r.expr, v)),
        (syn::Expr::Path(p), _) => named_const(api, module, &p.path)
            .is_some_and(|(m, c)| same_const(api, &m, c, value, depth + 1)),
        _ => false,
    }
}

/// A literal against a recorded scalar (`neg`: written after a `-`).
fn same_lit(lit: &syn::Lit, value: &Value, neg: bool) -> bool {
    match (lit, value) {
        (syn::Lit::Int(i), Value::Uint { value, .. }) if !neg => {
            i.base10_parse::<u128>().is_ok_and(|n| n == *value)
        }
        (syn::Lit::Int(i), Value::Int { value, .. }) => i
            .base10_parse::<i128>()
            .is_ok_and(|n| (if neg { -n } else { n }) == *value),
        (syn::Lit::Bool(b), Value::Bool { value }) if !neg => b.value == *value,
        (syn::Lit::Char(c), Value::Char { value }) if !neg => c.value() == *value,
        (
            syn::Lit::Str(s),
            Value::Str {
                value,
                truncated: false,
                ..
            },
        ) if !neg => s.value() == *value,
        (
            syn::Lit::ByteStr(s),
            Value::Seq {
                elems,
                truncated: false,
                ..
            },
        ) if !neg => {
            let bytes = s.value();
            bytes.len() == elems.len()
                && bytes.iter().zip(elems).all(
                    |(b, v)| matches!(v, Value::Uint { value, .. } if *value == u128::from(*b)),
                )
        }
        _ => false,
    }
}

/// The number an array length is written as (`16`), when it is a literal.
fn usize_lit(expr: &syn::Expr) -> Option<usize> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        _ => None,
    }
}

/// The const a path in module `module` names (`OTHER`, `self::OTHER`, `crate::m::OTHER`,
/// `super::OTHER`), with the module it is defined in.
fn named_const<'a>(
    api: &'a CrateApi,
    module: &[String],
    path: &syn::Path,
) -> Option<(Vec<String>, &'a ConstApi)> {
    let segments: Vec<String> = path
        .segments
        .iter()
        .map(|s| s.ident.unraw().to_string())
        .collect();
    let (name, dirs) = segments.split_last()?;
    let mut at: Vec<String> = module.to_vec();
    for (i, dir) in dirs.iter().enumerate() {
        match dir.as_str() {
            "crate" if i == 0 => at.clear(),
            "self" if i == 0 => {}
            "super" => {
                at.pop()?;
            }
            other if i == 0 && *other == api.crate_name => at.clear(),
            other => at.push(other.to_string()),
        }
    }
    let c = api.modules.get(&at)?.consts.get(name)?;
    Some((at, c))
}

#[cfg(test)]
mod tests {
    use crate::testdata::rulebook;

    #[test]
    fn an_object_a_public_const_holds_is_that_const() {
        let book = rulebook();
        for (n, want) in [(0, "rulebook::STRICT"), (1, "rulebook::limits::LOOSE")] {
            let rebuilt = book.rebuilt("rulebook::Limits::allows", n, "rulebook::Limits", true);
            assert_eq!(rebuilt.rule, "public_const");
            assert_eq!(rebuilt.setup, [want]);
        }
    }

    #[test]
    fn a_const_made_by_a_call_is_never_taken_on_trust() {
        let book = rulebook();
        let call = book.calls_of("rulebook::Limits::allows")[2];
        let state = crate::arrange::values::strip_ref(call.arg("self").unwrap());
        assert_eq!(
            super::matching_const(&book.api, "rulebook::Limits", state),
            None
        );
    }
}
