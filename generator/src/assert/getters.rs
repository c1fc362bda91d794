//! A value's cheap getters and what a test checks through them. A cheap getter is a public
//! inherent method taking `&self` and nothing else, not generic, not `unsafe`/`async`, whose
//! name does not say it costs or changes something, returning a type a test can compare or
//! print (scalars, text, `Option` of those, or a type with `Debug`). The names left out are
//! the conversions and walks std's naming conventions give (`iter*`, `into_*`, `to_*`, `as_mut*`,
//! `clone*`, `take*`, `drain*`, `next*`), the ones that change or empty a value (`pop*`,
//! `reset*`, `clear*`) and the ones that run a verification (`check*`, `validate*`, `verify*`,
//! url's `check_invariants()`): what they return is a new value, a view or a verdict, not a
//! part of the state.
//! At most [`MAX_GETTERS`] per value, in name order, so a type with dozens stays readable.
//!
//! The expected value is the recorded one when the run called the getter on an object recorded
//! exactly equal (addresses included); otherwise the test probes it and verification writes
//! what this build gives (`verify/observe.rs`).

use carve_storage::Value;

use crate::arrange::check::getter_calls;
use crate::arrange::context::Ctx;
use crate::arrange::literal::{self, Position};
use crate::arrange::values::{holds_dyn, strip_ref};
use crate::assert::printed::Kind;
use crate::body::Effect;
use crate::read::crate_api::{CrateApi, FnApi, TypeApi};

/// The most getters a test checks of one value.
pub(crate) const MAX_GETTERS: usize = 8;

/// Name prefixes of methods that are no getter (see the module's documentation).
const NOT_GETTERS: &[&str] = &[
    "iter", "into_", "to_", "as_mut", "clone", "take", "drain", "next", "pop", "reset", "clear",
    "check", "validate", "verify",
];

/// The type `type_path` names, public or not (a method call does not name it).
pub(crate) fn type_api<'a>(api: &'a CrateApi, type_path: &str) -> Option<&'a TypeApi> {
    api.public_type(type_path)
        .or_else(|| api.declared_type(type_path))
}

/// Checks of the cheap getters of `var` (holding struct or enum `value`, of `type_path`) that are not
/// its fields' namesakes, at most [`MAX_GETTERS`]: none for an object holding a trait object
/// (a getter may call into it: a mock, in a test) or a type the source does not show.
pub(crate) fn other_getters(cx: &Ctx, var: &str, value: &Value, type_path: &str) -> Vec<Effect> {
    // A struct's fields are checked by name already; an enum's (`TinyVec::Inline(..)`, whose
    // insides are private) are not, so its getters are all it shows.
    let fields: &[carve_storage::Field] = match value {
        Value::Struct { fields, .. } => fields,
        Value::Enum { .. } => &[],
        _ => return Vec::new(),
    };
    let Some(ty) = type_api(cx.api, type_path).filter(|_| !holds_dyn(value)) else {
        return Vec::new();
    };
    cheap_getters(ty)
        .filter(|g| !fields.iter().any(|f| f.name == g.name))
        .filter_map(|g| getter_effect(cx, (var, value, type_path), g))
        .take(MAX_GETTERS)
        .collect()
}

/// The cheap getters of `ty`, in name order.
pub(crate) fn cheap_getters(ty: &TypeApi) -> impl Iterator<Item = &FnApi> {
    ty.functions.values().filter(|f| {
        f.public
            && f.has_receiver
            && !f.mut_receiver
            && !f.self_by_value
            && f.params.is_empty()
            && f.blocker.is_none()
            && f.uninferable_generics == 0
            && !NOT_GETTERS.iter().any(|p| f.name.starts_with(p))
    })
}

/// The check of getter `g` on `var`, holding `state` (of `type_path`): the recorded value of a
/// call on an object in the same state, else a probe; `None` when its value can be neither
/// written nor printed.
pub(crate) fn getter_effect(
    cx: &Ctx,
    (var, state, type_path): (&str, &Value, &str),
    g: &FnApi,
) -> Option<Effect> {
    let actual = format!("{var}.{}()", g.ident);
    let calls = getter_calls(cx, type_path, &g.ident);
    let recorded = calls.iter().find_map(|&i| {
        let call = &cx.trace.calls[i];
        // Equal exactly: `same_state` takes memory a `MaybeUninit` holds for no state, which
        // a getter may read (smallvec's `len()` while a `Drain` holds it).
        let recv = strip_ref(call.arg("self")?);
        (recv == state && state.is_exact())
            .then_some(call.ret.as_ref()?)
            .filter(|r| r.is_exact())
    });
    if let Some(expected) =
        recorded.and_then(|r| literal::render(r, &g.ret, Position::Expected).ok())
    {
        return Some(Effect {
            actual,
            expected,
            message: None,
            observe: None,
        });
    }
    probe(cx, actual, g)
}

/// A probe of getter `g` (`actual`: its call), its value observed at verification; `None`
/// when what it returns cannot be printed.
pub(crate) fn probe(cx: &Ctx, actual: String, g: &FnApi) -> Option<Effect> {
    let kind = Kind::of(&g.ret_written, &|ty| debuggable(cx.api, ty))?;
    Some(Effect {
        actual,
        expected: String::new(),
        message: None,
        observe: Some(kind.name()),
    })
}

/// The most leaves (numbers, texts, ...) a value may hold for its whole `Debug` text to be a
/// check a reader takes in.
const MAX_DEBUG_LEAVES: usize = 16;

/// A probe of the whole `Debug` text of `var` (holding `state`, of `type_path`), when the
/// crate's type implements `Debug`, the value is small and holds no hash map or set: what
/// shows the parts its getters do not (a vector's elements behind private fields:
/// `"[4, 5, 6]"`).
pub(crate) fn debug_probe(cx: &Ctx, var: &str, state: &Value, type_path: &str) -> Option<Effect> {
    let ty = type_api(cx.api, type_path)?;
    let small = leaves(strip_ref(state)) <= MAX_DEBUG_LEAVES;
    let ordered = !hashed(state);
    (ty.traits.contains("Debug") && !holds_dyn(state) && small && ordered).then(|| Effect {
        actual: var.to_string(),
        expected: String::new(),
        message: None,
        observe: Some(Kind::Debug.name()),
    })
}

/// Whether `value` holds a hash map or set, whose `Debug` order changes from run to run.
fn hashed(value: &Value) -> bool {
    let name = value.type_name();
    name.contains("HashMap")
        || name.contains("HashSet")
        || match value {
            Value::Ref { target, .. } => hashed(target),
            Value::Struct { fields, .. } | Value::Enum { fields, .. } => {
                fields.iter().any(|f| hashed(&f.value))
            }
            Value::Tuple { elems, .. } | Value::Seq { elems, .. } => elems.iter().any(hashed),
            _ => false,
        }
}

/// How many scalars and texts `value` holds.
fn leaves(value: &Value) -> usize {
    match value {
        Value::Ref { target, .. } => leaves(target),
        Value::Struct { fields, .. } | Value::Enum { fields, .. } => {
            fields.iter().map(|f| leaves(&f.value)).sum()
        }
        Value::Tuple { elems, .. } | Value::Seq { elems, .. } => elems.iter().map(leaves).sum(),
        Value::Unit => 0,
        _ => 1,
    }
}

/// Probes of every cheap getter of `var` (of `type_path`), at most [`MAX_GETTERS`]: what a
/// test checks of an object whose recorded state is not the one it checks.
pub(crate) fn probed_getters(cx: &Ctx, var: &str, type_path: &str) -> Vec<Effect> {
    let Some(ty) = type_api(cx.api, type_path) else {
        return Vec::new();
    };
    cheap_getters(ty)
        .filter_map(|g| probe(cx, format!("{var}.{}()", g.ident), g))
        .take(MAX_GETTERS)
        .collect()
}

/// Whether `ty` (as written in the crate) is `Debug` with an output that is the same from run
/// to run: scalars, text, std containers of such (not hash maps, whose order changes), and the
/// crate's types that derive or implement `Debug`.
pub(crate) fn debuggable(api: &CrateApi, ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Reference(r) => debuggable(api, &r.elem),
        syn::Type::Paren(p) => debuggable(api, &p.elem),
        syn::Type::Slice(s) => debuggable(api, &s.elem),
        syn::Type::Array(a) => debuggable(api, &a.elem),
        syn::Type::Tuple(t) => t.elems.iter().all(|e| debuggable(api, e)),
        syn::Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else {
                return false;
            };
            let name = last.ident.to_string();
            let args = crate::read::types::type_arguments(last);
            const STD: &[&str] = &[
                "str", "String", "Option", "Result", "Vec", "VecDeque", "Box", "Rc", "Arc",
                "BTreeMap", "BTreeSet", "Cow", "PathBuf", "Path",
            ];
            let known = crate::read::types::Prim::from_name(&name).is_some()
                || STD.contains(&name.as_str())
                || api.types_named(&name).any(|t| t.traits.contains("Debug"));
            known && args.iter().all(|a| debuggable(api, a))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::Field;

    #[test]
    fn a_whole_debug_text_is_for_small_values_without_hashed_parts() {
        let uint = |value| Value::Uint {
            ty: "usize".into(),
            value,
        };
        let lexer = Value::Struct {
            ty: "expr::lexer::Lexer".into(),
            fields: vec![Field::new("pos", uint(3)), Field::new("len", uint(5))],
        };
        assert_eq!(leaves(&lexer), 2);
        assert!(!hashed(&lexer));
        let set = Value::Struct {
            ty: "Set".into(),
            fields: vec![Field::new(
                "items",
                Value::Seq {
                    ty: "std::collections::hash::set::HashSet<i32>".into(),
                    elems: (0..20).map(uint).collect(),
                    truncated: false,
                },
            )],
        };
        assert!(hashed(&set));
        assert_eq!(leaves(&set), 20);
    }
}
