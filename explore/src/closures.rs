//! Closures for parameters a closure bound types (`F: FnMut(&mut T) -> bool`, `F: FnOnce() ->
//! V`). A recording holds no closure's code, so explore writes a few of each shape, the ones a
//! reviewer reads at a glance:
//! - a **producer** (`FnOnce() -> V`, `get_or_insert(k, f)`, `resize_with(n, f)`): `|| v` for
//!   the first values of `V`'s pool (`|_| v` when it takes arguments: `FnOnce(&K) -> V`);
//! - a **predicate** (`-> bool`: `retain`, `dedup_by`): `|_| true`, `|_| false`, on an integer
//!   `|x| *x % 2 == 0` (keeps some, drops some), on two of one type `|a, b| a == b`;
//! - a **comparator** (`-> Ordering`: `sort_by`): `|a, b| a.cmp(b)` and `|a, b| b.cmp(a)`, and
//!   for a map's `(&K, &V, &K, &V)` by key either way and by value.
//!
//! The harness holds them as function pointers (`fn(&mut u32) -> bool`: a closure that captures
//! nothing is one), so one pool holds closures of one shape; a test writes them inline.

use quote::ToTokens;
use syn::visit_mut::VisitMut;

use crate::api::{param_kind, Pass, PoolKind};
use crate::pools::{literal, Lit, Pools};

/// Most producers in one pool.
const MAX_PRODUCERS: usize = 6;

/// The pool kind of a closure parameter typed `f` (its stand-in function pointer), when
/// closures of its shape can be written.
pub(crate) fn kind(f: &syn::TypeFnPtr) -> Option<PoolKind> {
    let mut f = f.clone();
    // A pool's type names no lifetime of the method's (`fn(&'a str)` is `fn(&str)`), and only
    // types the harness knows: pooled ones (`&u64`, `&mut String`) and `std::cmp::Ordering`.
    Elide.visit_type_fn_ptr_mut(&mut f);
    if !f.inputs.iter().all(|a| pooled_behind(&a.ty)) {
        return None;
    }
    if let syn::ReturnType::Type(_, out) = &mut f.output {
        if out.to_token_stream().to_string().ends_with("Ordering") {
            **out = syn::parse_quote!(std::cmp::Ordering);
        }
    }
    let kind = PoolKind::Closure(crate::generic_types::tidy(&f));
    let shape = Shape::of(&f)?;
    (!matches!(shape, Shape::Producer(_)) || produced(&f).is_some()).then_some(kind)
}

/// The pool a producer of `kind` draws its values from, with how each is passed.
pub(crate) fn produced_kind(kind: &PoolKind) -> Option<(PoolKind, Pass)> {
    produced(&bare_fn(kind)?)
}

/// The closures of `kind` (a `PoolKind::Closure`), the producers' values from `pools`.
pub(crate) fn closures(kind: &PoolKind, pools: &Pools) -> Vec<Lit> {
    let Some(f) = bare_fn(kind) else {
        return Vec::new();
    };
    let code = |s: String| Lit::Code(s);
    match Shape::of(&f) {
        Some(Shape::Producer(n)) => {
            let Some((k, pass)) = produced(&f) else {
                return Vec::new();
            };
            (pools.get(&k).iter().take(MAX_PRODUCERS))
                .map(|v| {
                    let written = literal(&k, v);
                    let blanks = vec!["_"; n].join(", ");
                    match (pass, &k) {
                        (Pass::Owned, PoolKind::Str) => {
                            code(format!("|{blanks}| {written}.to_string()"))
                        }
                        _ => code(format!("|{blanks}| {written}")),
                    }
                })
                .collect()
        }
        Some(Shape::Predicate(inputs)) => {
            let blanks = vec!["_"; inputs.len()].join(", ");
            let mut out = vec![
                code(format!("|{blanks}| true")),
                code(format!("|{blanks}| false")),
            ];
            if let Some(first) = inputs.first().filter(|t| integer_behind(t).is_some()) {
                let rest = vec!["_"; inputs.len() - 1];
                let params = std::iter::once("x")
                    .chain(rest)
                    .collect::<Vec<_>>()
                    .join(", ");
                let x = if matches!(first, syn::Type::Reference(_)) {
                    "*x"
                } else {
                    "x"
                };
                out.push(code(format!("|{params}| {x} % 2 == 0")));
            }
            if inputs.len() == 2 && same(&inputs[0], &inputs[1]) {
                out.push(code("|a, b| a == b".to_string()));
            }
            out
        }
        Some(Shape::Comparator(2)) => vec![
            code("|a, b| a.cmp(b)".to_string()),
            code("|a, b| b.cmp(a)".to_string()),
        ],
        Some(Shape::Comparator(_)) => vec![
            code("|a, _, b, _| a.cmp(b)".to_string()),
            code("|a, _, b, _| b.cmp(a)".to_string()),
            code("|_, a, _, b| a.cmp(b)".to_string()),
        ],
        None => Vec::new(),
    }
}

/// What a closure of one function pointer type does, as far as explore writes them.
enum Shape {
    /// Its arguments (how many: not read), a value of the type its result is (not `bool` or
    /// `Ordering`): that type's pooled values.
    Producer(usize),
    /// Its arguments' types, `-> bool`.
    Predicate(Vec<syn::Type>),
    /// `-> Ordering` over 2 of one type or a map's 4 (`&K, &V, &K, &V`).
    Comparator(usize),
}

impl Shape {
    fn of(f: &syn::TypeFnPtr) -> Option<Shape> {
        let inputs: Vec<syn::Type> = f.inputs.iter().map(|a| a.ty.clone()).collect();
        let syn::ReturnType::Type(_, out) = &f.output else {
            return None;
        };
        if crate::api::is_named(out, "bool") && !inputs.is_empty() {
            return Some(Shape::Predicate(inputs));
        }
        let ordering = out.to_token_stream().to_string().ends_with("Ordering");
        match inputs.len() {
            2 if ordering && same(&inputs[0], &inputs[1]) => Some(Shape::Comparator(2)),
            4 if ordering && same(&inputs[0], &inputs[2]) && same(&inputs[1], &inputs[3]) => {
                Some(Shape::Comparator(4))
            }
            _ if ordering => None,
            n => Some(Shape::Producer(n)),
        }
    }
}

/// The pool a producer's values come from: its result's, by value (`u32`, `String`).
fn produced(f: &syn::TypeFnPtr) -> Option<(PoolKind, Pass)> {
    let (Some(Shape::Producer(_)), syn::ReturnType::Type(_, out)) = (Shape::of(f), &f.output)
    else {
        return None;
    };
    match param_kind(out)? {
        (k @ (PoolKind::Scalar(_) | PoolKind::Str), pass @ (Pass::Value | Pass::Owned)) => {
            Some((k, pass))
        }
        _ => None,
    }
}

fn bare_fn(kind: &PoolKind) -> Option<syn::TypeFnPtr> {
    let PoolKind::Closure(text) = kind else {
        return None;
    };
    syn::parse_str(text).ok()
}

/// Whether a pool holds values of the type `ty` is or is behind one reference to: a type the
/// harness can name.
fn pooled_behind(ty: &syn::Type) -> bool {
    let inner = match ty {
        syn::Type::Reference(r) => r.elem.as_ref(),
        t => t,
    };
    crate::api::is_named(inner, "str") || param_kind(inner).is_some()
}

/// The integer a type is, or is behind one reference to.
fn integer_behind(ty: &syn::Type) -> Option<String> {
    let inner = match ty {
        syn::Type::Reference(r) => r.elem.as_ref(),
        t => t,
    };
    match param_kind(inner)? {
        (PoolKind::Scalar(n), Pass::Value) if !matches!(n.as_str(), "bool" | "char") => {
            (!n.starts_with('f')).then_some(n)
        }
        _ => None,
    }
}

fn same(a: &syn::Type, b: &syn::Type) -> bool {
    a.to_token_stream().to_string() == b.to_token_stream().to_string()
}

/// Takes the named lifetimes out of references.
struct Elide;

impl VisitMut for Elide {
    fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
        r.lifetime = None;
        syn::visit_mut::visit_type_reference_mut(self, r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind_of(text: &str) -> Option<PoolKind> {
        kind(&syn::parse_str(text).unwrap())
    }

    fn written(text: &str, pools: &Pools) -> Vec<String> {
        let k = kind_of(text).expect("a closure kind");
        closures(&k, pools).iter().map(|l| literal(&k, l)).collect()
    }

    #[test]
    fn predicates_and_comparators_are_written_by_shape() {
        let pools = Pools::default();
        assert_eq!(
            written("fn(&mut u32) -> bool", &pools),
            ["|_| true", "|_| false", "|x| *x % 2 == 0"]
        );
        assert_eq!(
            written("fn(&mut u32, &mut u32) -> bool", &pools),
            [
                "|_, _| true",
                "|_, _| false",
                "|x, _| *x % 2 == 0",
                "|a, b| a == b"
            ]
        );
        assert_eq!(
            written("fn(&String, &mut u64) -> bool", &pools),
            ["|_, _| true", "|_, _| false"]
        );
        assert_eq!(
            written("fn(&u32, &u32) -> std::cmp::Ordering", &pools),
            ["|a, b| a.cmp(b)", "|a, b| b.cmp(a)"]
        );
        assert_eq!(
            written("fn(&u64, &String, &u64, &String) -> Ordering", &pools).len(),
            3
        );
        assert_eq!(
            kind_of("fn(&u64, &u64) -> Ordering"),
            Some(PoolKind::Closure(
                "fn(&u64, &u64) -> std::cmp::Ordering".into()
            ))
        );
        // A type the harness cannot name (a method's own `T`), and a shape explore does not
        // write: left out.
        assert_eq!(kind_of("fn(&T) -> bool"), None);
        assert_eq!(kind_of("fn(&mut u32) -> Vec<u64>"), None);
        assert_eq!(kind_of("fn(&u32, &u64) -> Ordering"), None);
    }

    #[test]
    fn a_producer_gives_values_of_its_pool_and_its_type_names_no_lifetime() {
        let k = kind_of("fn() -> String").unwrap();
        assert_eq!(produced_kind(&k), Some((PoolKind::Str, Pass::Owned)));
        let pools = Pools {
            by_kind: [(
                PoolKind::Str,
                vec![Lit::Str("a".into()), Lit::Str("".into())],
            )]
            .into_iter()
            .collect(),
        };
        assert_eq!(
            written("fn() -> String", &pools),
            ["|| \"a\".to_string()", "|| \"\".to_string()"]
        );
        assert_eq!(
            kind_of("fn(&'a str) -> bool"),
            Some(PoolKind::Closure("fn(&str) -> bool".into()))
        );
        assert_eq!(
            written("fn(&u64) -> String", &pools),
            ["|_| \"a\".to_string()", "|_| \"\".to_string()"]
        );
        // A producer of what no pool holds is left out.
        assert_eq!(kind_of("fn() -> Vec<String>"), None);
    }
}
