//! The standard operator traits a public type implements (`impl Add for ByteSize`, `impl
//! AddAssign for ByteSize`, `impl Neg for Money`), when the run called their method or reached
//! its lines (an `#[inline(always)]` one has no call of its own: bytesize's `add`), written as
//! a test writes them: `a + b`, `a += b`, `-a`. The right-hand side is an object of the type
//! itself or a primitive scalar from its pool, as the recorded method declares it; another
//! right-hand side (`Add<&str>`) is not explored.

use std::collections::BTreeSet;

use carve_generator::TypeApi;

use crate::api::{object_index, Callable, Explorable, Made, Param, Pass, PoolKind, Receiver, Ret};

/// How an operator's callable ends its `call`: `+ (operator)` is `a + b`, and on a receiver
/// `recv.+= (operator)` is `recv += b` (see [`Callable::written`]).
pub(crate) const OPERATOR: &str = " (operator)";

/// (trait, method, operator) of the operator traits explored: binary, compound assignment,
/// unary. The shifts are left out: their right-hand side is seldom the type or a pooled scalar
/// of the same meaning.
const OPERATORS: [(&str, &str, &str); 18] = [
    ("Add", "add", "+"),
    ("Sub", "sub", "-"),
    ("Mul", "mul", "*"),
    ("Div", "div", "/"),
    ("Rem", "rem", "%"),
    ("BitAnd", "bitand", "&"),
    ("BitOr", "bitor", "|"),
    ("BitXor", "bitxor", "^"),
    ("AddAssign", "add_assign", "+="),
    ("SubAssign", "sub_assign", "-="),
    ("MulAssign", "mul_assign", "*="),
    ("DivAssign", "div_assign", "/="),
    ("RemAssign", "rem_assign", "%="),
    ("BitAndAssign", "bitand_assign", "&="),
    ("BitOrAssign", "bitor_assign", "|="),
    ("BitXorAssign", "bitxor_assign", "^="),
    ("Neg", "neg", "-"),
    ("Not", "not", "!"),
];

/// The primitive scalars a right-hand side may be, from the pools.
const SCALARS: [&str; 14] = [
    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32",
    "f64",
];

/// A recorded method's declaration: its parameters' types and its return type, as the run's
/// function table names them (`bytesize::ByteSize`, `&mut bytesize::ByteSize`, `u64`).
pub(crate) type Declared = (Vec<String>, Option<String>);

/// Adds to `out` the operators of the public, non-generic type `ty` (a test names it
/// `type_path`, the run `recorded`) whose method the run reached (`called`, its declaration in
/// `declared`): the run's call shows the impl, also one a macro writes that the crate API does
/// not see (`bitflags!`'s `impl BitOr for Options`).
pub(crate) fn operator_methods(
    out: &mut Explorable,
    (type_path, recorded): (&str, &str),
    ty: &TypeApi,
    (called, declared): (
        &BTreeSet<String>,
        &std::collections::BTreeMap<String, Declared>,
    ),
) {
    if !ty.public || ty.generic || !ty.type_params.is_empty() || ty.lifetimes > 0 {
        return;
    }
    for (tr, method, op) in OPERATORS {
        let tail = format!("{tr}>::{method}");
        let Some(path) = crate::std_traits::recorded_trait_method(called, recorded, &tail) else {
            continue;
        };
        let Some((params, ret)) = declared.get(&path) else {
            continue;
        };
        let object = object_index(out, type_path, ty);
        if let Some(c) = operator_callable((path, op), object, recorded, (params, ret.as_deref())) {
            out.callables.push(c);
        }
    }
}

/// The callable of operator `op` recorded as `path` on object type `object` (recorded as
/// `recorded`), from its declared parameter and return types; `None` when its operands are not
/// the type itself or, on the right, a pooled scalar.
fn operator_callable(
    (path, op): (String, &str),
    object: usize,
    recorded: &str,
    (params, ret): (&[String], Option<&str>),
) -> Option<Callable> {
    let itself = |t: &str| t == recorded;
    let operand = |t: &str, name: &str| {
        let kind = if itself(t) {
            PoolKind::Object(object)
        } else if SCALARS.contains(&t) {
            PoolKind::Scalar(t.to_string())
        } else {
            return None;
        };
        Some(Param {
            name: name.to_string(),
            kind,
            pass: Pass::Value,
        })
    };
    let call = format!("{op}{OPERATOR}");
    let (receiver, operands) = match params {
        // `a += b`: the receiver changed in its slot.
        [lhs, rhs] if op.ends_with('=') => {
            if lhs.strip_prefix("&mut ").is_none_or(|t| !itself(t)) {
                return None;
            }
            let receiver = Receiver {
                object,
                mutable: true,
                by_value: false,
            };
            (Some(receiver), vec![operand(rhs, "rhs")?])
        }
        [lhs, rhs] if itself(lhs) => (None, vec![operand(lhs, "self")?, operand(rhs, "rhs")?]),
        [only] if itself(only) => (None, vec![operand(only, "self")?]),
        _ => return None,
    };
    let makes = (receiver.is_none() && ret.is_some_and(itself)).then_some((object, Made::Plain));
    Some(Callable {
        path,
        call,
        receiver,
        params: operands,
        makes,
        ret: if receiver.is_some() {
            Ret::Unit
        } else {
            Ret::Other
        },
    })
}

/// `target` with `args` when `target` is an operator's (`+ (operator)`, `recv.+= (operator)`):
/// `a + b`, `recv += b`, `-a`; `None` otherwise.
pub(crate) fn written(target: &str, args: &[String]) -> Option<String> {
    let op = target.strip_suffix(OPERATOR)?;
    Some(match (op.rsplit_once('.'), args) {
        (Some((recv, op)), [rhs]) => format!("{recv} {op} {rhs}"),
        (None, [lhs, rhs]) => format!("{lhs} {op} {rhs}"),
        (None, [only]) => format!("{op}{only}"),
        _ => format!("{op}({})", args.join(", ")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operator_the_run_called_is_explored_though_a_macro_wrote_its_impl() {
        let ty = TypeApi {
            name: "Options".into(),
            public: true,
            declared: true,
            ..TypeApi::default()
        };
        let path = "md::_::<impl core::ops::bit::BitOr for md::Options>::bitor".to_string();
        let called = BTreeSet::from([path.clone()]);
        let params = vec!["md::Options".to_string(), "md::Options".to_string()];
        let declared = std::collections::BTreeMap::from([(
            path.clone(),
            (params, Some("md::Options".to_string())),
        )]);
        let mut out = Explorable::default();
        operator_methods(
            &mut out,
            ("md::Options", "md::Options"),
            &ty,
            (&called, &declared),
        );
        assert_eq!(out.callables.len(), 1);
        assert_eq!(out.callables[0].path, path);
        let args = ["a".to_string(), "b".to_string()];
        assert_eq!(
            out.callables[0].written(&out.callables[0].call, &args),
            "a | b"
        );
        // Not called by the run: not explored.
        let mut none = Explorable::default();
        let nothing = BTreeSet::new();
        operator_methods(
            &mut none,
            ("md::Options", "md::Options"),
            &ty,
            (&nothing, &declared),
        );
        assert!(none.callables.is_empty());
    }

    fn declared(params: &[&str], ret: Option<&str>) -> (Vec<String>, Option<String>) {
        (
            params.iter().map(|p| p.to_string()).collect(),
            ret.map(str::to_string),
        )
    }

    #[test]
    fn an_operator_on_the_type_itself_is_written_as_a_test_writes_it() {
        let size = "bytesize::ByteSize";
        let path = format!("<{size} as core::ops::arith::Add>::add");
        let (params, ret) = declared(&[size, size], Some(size));
        let add = operator_callable((path, "+"), 0, size, (&params, ret.as_deref())).unwrap();
        assert_eq!(add.makes, Some((0, Made::Plain)));
        assert_eq!(add.params.len(), 2);
        let args = ["a".to_string(), "b.clone()".to_string()];
        assert_eq!(add.written(&add.call, &args), "a + b.clone()");

        let path = format!("<{size} as core::ops::arith::AddAssign>::add_assign");
        let (params, ret) = declared(&[&format!("&mut {size}"), "u64"], None);
        let add_assign =
            operator_callable((path, "+="), 0, size, (&params, ret.as_deref())).unwrap();
        assert!(add_assign.receiver.is_some_and(|r| r.mutable));
        assert_eq!(add_assign.params[0].kind, PoolKind::Scalar("u64".into()));
        let target = format!("total.{}", add_assign.call);
        assert_eq!(
            add_assign.written(&target, &["3u64".into()]),
            "total += 3u64"
        );

        let path = format!("<{size} as core::ops::arith::Neg>::neg");
        let (params, ret) = declared(&[size], Some(size));
        let neg = operator_callable((path, "-"), 0, size, (&params, ret.as_deref())).unwrap();
        assert_eq!(neg.written(&neg.call, &["a".into()]), "-a");
        // A right-hand side of another type is not explored.
        let path = format!("<{size} as core::ops::arith::Add>::add");
        let (params, ret) = declared(&[size, "&str"], Some(size));
        assert!(operator_callable((path, "+"), 0, size, (&params, ret.as_deref())).is_none());
    }
}
