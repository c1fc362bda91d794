//! Questions about recorded values every rule asks: the trait objects inside one, whether two
//! are the same state for a test's purpose, the value inside an `Ok`/`Some` a call returned.

use carve_storage::Value;

use crate::arrange::context::Ctx;

/// `dao::Connection` from `alloc::boxed::Box<dyn dao::Connection, alloc::alloc::Global>` or
/// `&dyn dao::Connection`.
pub fn dyn_trait(ty: &str) -> Option<String> {
    let rest = &ty[ty.find("dyn ")? + 4..];
    let end = rest.find([',', '>', '+', ' ']).unwrap_or(rest.len());
    let path = rest[..end].trim();
    (!path.is_empty()).then(|| path.to_string())
}

/// The trait object inside an argument or return value: (trait path, address).
pub(crate) fn dyn_object(value: &Value) -> Option<(String, u64)> {
    match value {
        Value::Ref { ty, addr, .. } => dyn_trait(ty).map(|t| (t, *addr)),
        _ => None,
    }
}

/// Recorded states equal for the test's purpose: addresses ignored, trait objects equal when
/// their concrete types are (they become mocks).
pub(crate) fn same_state(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (
            Value::Ref {
                ty: ta, target: a, ..
            },
            Value::Ref {
                ty: tb, target: b, ..
            },
        ) => {
            ta == tb
                && if ta.contains("dyn ") {
                    a.type_name() == b.type_name()
                } else {
                    same_state(a, b)
                }
        }
        (Value::Struct { ty: ta, fields: fa }, Value::Struct { ty: tb, fields: fb })
        | (
            Value::Enum {
                ty: ta, fields: fa, ..
            },
            Value::Enum {
                ty: tb, fields: fb, ..
            },
        ) => {
            ta == tb
                && fa.len() == fb.len()
                && fa
                    .iter()
                    .zip(fb)
                    .all(|(x, y)| x.name == y.name && same_state(&x.value, &y.value))
                && match (a, b) {
                    (Value::Enum { variant: va, .. }, Value::Enum { variant: vb, .. }) => va == vb,
                    _ => true,
                }
        }
        (Value::Tuple { elems: ea, .. }, Value::Tuple { elems: eb, .. })
        | (Value::Seq { elems: ea, .. }, Value::Seq { elems: eb, .. }) => {
            a.type_name() == b.type_name()
                && ea.len() == eb.len()
                && ea.iter().zip(eb).all(|(x, y)| same_state(x, y))
        }
        // Memory a `MaybeUninit` holds is no state a caller can observe: the type's code may
        // only read what it wrote since (itoa's scratch buffer, a cache's spare slots).
        (Value::Opaque { ty: ta, .. }, Value::Opaque { ty: tb, .. })
            if ta == tb && is_maybe_uninit(ta) =>
        {
            true
        }
        _ => a == b,
    }
}

/// A hash of `value` that [`same_state`] values share: two states with different keys are
/// never the same (an index of states by key finds the same ones without comparing every one).
pub(crate) fn state_key(value: &Value) -> u64 {
    use std::hash::Hasher;
    // XXH3 rather than SipHash: big states (20 KB tables) are hashed often.
    let mut h = twox_hash::XxHash3_64::new();
    hash_state(value, &mut h);
    h.finish()
}

fn hash_state(value: &Value, h: &mut impl std::hash::Hasher) {
    use std::hash::Hash;
    std::mem::discriminant(value).hash(h);
    match value {
        Value::Ref { ty, target, .. } => {
            ty.hash(h);
            if ty.contains("dyn ") {
                target.type_name().hash(h);
            } else {
                hash_state(target, h);
            }
        }
        Value::Struct { ty, fields } => {
            ty.hash(h);
            fields.len().hash(h);
            for f in fields {
                f.name.hash(h);
                hash_state(&f.value, h);
            }
        }
        Value::Enum {
            ty,
            variant,
            fields,
        } => {
            ty.hash(h);
            variant.hash(h);
            fields.len().hash(h);
            for f in fields {
                f.name.hash(h);
                hash_state(&f.value, h);
            }
        }
        Value::Tuple { ty, elems } | Value::Seq { ty, elems, .. } => {
            ty.hash(h);
            elems.len().hash(h);
            elems.iter().for_each(|e| hash_state(e, h));
        }
        Value::Opaque { ty, bytes } => {
            ty.hash(h);
            if !is_maybe_uninit(ty) {
                bytes.hash(h);
            }
        }
        Value::Unit => {}
        Value::Bool { value } => value.hash(h),
        Value::Int { ty, value } => (ty, value).hash(h),
        Value::Uint { ty, value } => (ty, value).hash(h),
        Value::Float { ty, bits } => (ty, bits).hash(h),
        Value::Char { value } => value.hash(h),
        Value::Str {
            ty,
            value,
            truncated,
        } => (ty, value, truncated).hash(h),
        Value::Pointer { ty, addr } => (ty, addr).hash(h),
        Value::Function { ty, path } => (ty, path).hash(h),
        Value::Unavailable { ty, reason } => (ty, reason).hash(h),
    }
}

pub(crate) fn is_maybe_uninit(ty: &str) -> bool {
    ["core::mem::maybe_uninit::MaybeUninit<", "MaybeUninit<"]
        .iter()
        .any(|p| ty.starts_with(p))
}

/// Whether a value holds a trait object (a getter of it may call into it: a mock, in a test).
pub(crate) fn holds_dyn(value: &Value) -> bool {
    let mut held = Vec::new();
    dyn_addrs(value, &mut held);
    !held.is_empty()
}

/// The trait objects inside a value, in tree order.
pub(crate) fn dyn_addrs(value: &Value, out: &mut Vec<(String, u64)>) {
    match value {
        Value::Ref { ty, addr, target } => match dyn_trait(ty) {
            Some(t) => out.push((t, *addr)),
            None => dyn_addrs(target, out),
        },
        Value::Struct { fields, .. } | Value::Enum { fields, .. } => {
            fields.iter().for_each(|f| dyn_addrs(&f.value, out));
        }
        Value::Tuple { elems, .. } | Value::Seq { elems, .. } => {
            elems.iter().for_each(|e| dyn_addrs(e, out));
        }
        _ => {}
    }
}

pub(crate) fn strip_ref(value: &Value) -> &Value {
    match value {
        Value::Ref { target, .. } => target,
        other => other,
    }
}

/// Why a test unwraps the `Result` a producer gives, in its panic message.
pub(crate) const OK_IN_THE_RECORDING: &str = "it returned Ok in the recording";

/// The value a call returned, looking inside `Ok(..)` and `Some(..)`, with the `.unwrap()` (or a
/// panic naming `call_path`, when the error type has no `Debug`) a test needs to get at it.
pub(crate) fn returned_struct<'v>(
    cx: &Ctx,
    ret: &'v Value,
    call_path: &str,
) -> Option<(&'v Value, Option<String>)> {
    match ret {
        Value::Enum {
            ty,
            variant,
            fields,
        } if ty.starts_with("core::result::Result") && variant == "Ok" => {
            let debug = err_type(ty).is_some_and(|e| debug_error(cx.api, &e));
            let unwrap = if debug {
                ".unwrap()".to_string()
            } else {
                format!(
                    ".unwrap_or_else(|_| panic!(\"{call_path} failed; {OK_IN_THE_RECORDING}\"))"
                )
            };
            Some((&fields.first()?.value, Some(unwrap)))
        }
        Value::Enum {
            ty,
            variant,
            fields,
        } if ty.starts_with("core::option::Option") && variant == "Some" => {
            Some((&fields.first()?.value, Some(".unwrap()".to_string())))
        }
        // `Err`, `None`: nothing was produced.
        Value::Enum { ty, .. }
            if ty.starts_with("core::result::Result") || ty.starts_with("core::option::Option") =>
        {
            None
        }
        other => Some((other, None)),
    }
}

/// `E` of a recorded `core::result::Result<T, E>`, read past the commas of `T`'s and `E`'s own
/// generic arguments.
fn err_type(ty: &str) -> Option<String> {
    let args = ty
        .strip_prefix("core::result::Result<")?
        .strip_suffix('>')?;
    match crate::read::paths::split_top(args, ",").as_slice() {
        [_, err] => Some(err.trim().to_string()),
        _ => None,
    }
}

/// Whether a result with error type `err` (as recorded) may be `.unwrap()`ped, which needs
/// `E: Debug`: text, `()`, a scalar, a standard type without generic arguments (every one of
/// std's is `Debug`: `core::num::error::ParseIntError`, `std::io::error::Error`), or a type of
/// the crate that derives or implements `Debug`.
fn debug_error(facts: &dyn crate::read::types::TypeFacts, err: &str) -> bool {
    let std_plain = ["core::", "alloc::", "std::"]
        .iter()
        .any(|p| err.starts_with(p))
        && !err.contains(['<', ' ']);
    err == "()"
        || err.starts_with("alloc::string::String")
        || err.starts_with("&str")
        || crate::read::types::Prim::from_name(err).is_some()
        || std_plain
        || facts.shape(err).is_some_and(|s| s.debug)
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::Field;

    #[test]
    fn a_result_is_unwrapped_when_its_error_type_is_debug() {
        struct Facts;
        impl crate::read::types::TypeFacts for Facts {
            fn shape(&self, path: &str) -> Option<crate::read::types::Shape> {
                Some(crate::read::types::Shape {
                    debug: path.starts_with("k::Loud"),
                    ..Default::default()
                })
            }
        }
        let err = |ty: &str| err_type(ty).unwrap();
        assert_eq!(
            err("core::result::Result<k::V, alloc::string::String>"),
            "alloc::string::String"
        );
        assert_eq!(
            err("core::result::Result<k::P<u8, u8>, k::Loud>"),
            "k::Loud"
        );
        assert_eq!(
            err("core::result::Result<u8, k::Loud<u8, u8>>"),
            "k::Loud<u8, u8>"
        );
        for debug in [
            "alloc::string::String",
            "&str",
            "()",
            "u8",
            "core::num::error::ParseIntError",
            "k::Loud",
            "k::Loud<u8, u8>",
        ] {
            assert!(debug_error(&Facts, debug), "{debug}");
        }
        for not_debug in [
            "k::Quiet",
            // A standard container of a type that may not be `Debug`.
            "alloc::boxed::Box<dyn k::Failure>",
            "alloc::vec::Vec<k::Quiet>",
        ] {
            assert!(!debug_error(&Facts, not_debug), "{not_debug}");
        }
    }

    fn counter(addr: u64, dyn_addr: u64, scratch: u8) -> Value {
        Value::Ref {
            ty: "&mut abc::Counter".into(),
            addr,
            target: Box::new(Value::Struct {
                ty: "abc::Counter".into(),
                fields: vec![
                    Field {
                        name: "total".into(),
                        value: Value::Uint {
                            ty: "u32".into(),
                            value: 7,
                        },
                    },
                    Field {
                        name: "src".into(),
                        value: Value::Ref {
                            ty: "alloc::boxed::Box<dyn abc::Source>".into(),
                            addr: dyn_addr,
                            target: Box::new(Value::Struct {
                                ty: "app::Ticker".into(),
                                fields: vec![],
                            }),
                        },
                    },
                    Field {
                        name: "scratch".into(),
                        value: Value::Opaque {
                            ty: "core::mem::maybe_uninit::MaybeUninit<u8>".into(),
                            bytes: vec![scratch],
                        },
                    },
                ],
            }),
        }
    }

    #[test]
    fn states_the_same_for_a_test_have_one_key() {
        let (a, b) = (counter(8, 16, 1), counter(24, 32, 2));
        assert!(same_state(&a, &b));
        assert_eq!(state_key(&a), state_key(&b));
        let Value::Ref { target, .. } = counter(8, 16, 1) else {
            unreachable!()
        };
        let Value::Struct { ty, mut fields } = *target else {
            unreachable!()
        };
        fields[0].value = Value::Uint {
            ty: "u32".into(),
            value: 8,
        };
        let other = Value::Struct { ty, fields };
        assert!(!same_state(strip_ref(&a), &other));
        assert_ne!(state_key(strip_ref(&a)), state_key(&other));
    }
}
