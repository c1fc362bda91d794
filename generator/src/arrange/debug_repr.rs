//! What `format!("{:?}", x)` prints for a recorded value, where that is knowable: the last-resort
//! check of an object's state when neither a getter nor a public field shows it (issue 4 item 4).
//!
//! Knowable means every type inside has a `Debug` whose output follows from the value: the
//! primitives, strings, `Option`/`Result`, tuples, `Vec`/slices/arrays/`VecDeque`, `BTreeMap`/
//! `BTreeSet`, `Box`/`Rc`/`Arc`/references, and the crate's types that *derive* `Debug` (a
//! hand-written `impl Debug` may print anything). `HashMap`/`HashSet` print in an order that
//! changes from run to run, so they are refused, as are trait objects and anything not recorded
//! exactly.

use carve_storage::Value;

use crate::read::types::{strip_generics, TypeFacts};

/// The text `{:?}` gives for `value`, or `None` when it cannot be known.
pub fn debug_repr(value: &Value, facts: &dyn TypeFacts) -> Option<String> {
    let list = |values: &mut dyn Iterator<Item = &Value>| -> Option<Vec<String>> {
        values.map(|v| debug_repr(v, facts)).collect()
    };
    Some(match value {
        Value::Unit => "()".to_string(),
        Value::Bool { value } => value.to_string(),
        Value::Int { value, .. } => value.to_string(),
        Value::Uint { value, .. } => value.to_string(),
        Value::Float { ty, bits } if ty == "f32" => format!("{:?}", f32::from_bits(*bits as u32)),
        Value::Float { bits, .. } => format!("{:?}", f64::from_bits(*bits)),
        Value::Char { value } => format!("{value:?}"),
        Value::Str {
            value,
            truncated: false,
            ..
        } => format!("{value:?}"),
        Value::Struct { ty, fields } => {
            let base = strip_generics(ty);
            if !facts.shape(base)?.debug_derived {
                return None;
            }
            let name = base.rsplit("::").next().unwrap_or(base);
            compose(name, fields, facts)?
        }
        Value::Enum {
            ty,
            variant,
            fields,
        } => {
            let base = strip_generics(ty);
            let std = matches!(
                base,
                "core::option::Option" | "core::result::Result" | "core::cmp::Ordering"
            );
            if !std && !facts.shape(base)?.debug_derived {
                return None;
            }
            compose(variant, fields, facts)?
        }
        Value::Tuple { elems, .. } => {
            let items = list(&mut elems.iter())?;
            match items.len() {
                1 => format!("({},)", items[0]),
                _ => format!("({})", items.join(", ")),
            }
        }
        Value::Seq {
            ty,
            elems,
            truncated: false,
        } => {
            if ty.starts_with("alloc::collections::btree::map::BTreeMap") {
                let entries = elems
                    .iter()
                    .map(|e| match e {
                        Value::Tuple { elems, .. } if elems.len() == 2 => Some(format!(
                            "{}: {}",
                            debug_repr(&elems[0], facts)?,
                            debug_repr(&elems[1], facts)?
                        )),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()?;
                format!("{{{}}}", entries.join(", "))
            } else if ty.starts_with("alloc::collections::btree::set::BTreeSet") {
                format!("{{{}}}", list(&mut elems.iter())?.join(", "))
            } else if ty.starts_with("alloc::vec::Vec")
                || ty.starts_with("alloc::collections::vec_deque::VecDeque")
                || ty.starts_with('[')
                || ty.starts_with("&[")
                || ty.starts_with("&mut [")
            {
                format!("[{}]", list(&mut elems.iter())?.join(", "))
            } else {
                return None;
            }
        }
        Value::Ref { ty, target, .. } => {
            let transparent = ty.starts_with('&')
                || ty.starts_with("alloc::boxed::Box<")
                || ty.starts_with("alloc::rc::Rc<")
                || ty.starts_with("alloc::sync::Arc<");
            if !transparent || ty.contains("dyn ") {
                return None;
            }
            debug_repr(target, facts)?
        }
        _ => return None,
    })
}

/// `Name`, `Name(a, b)` or `Name { x: a }`, as derived `Debug` writes them (tuple fields are
/// recorded as `__0`, `__1`...).
fn compose(name: &str, fields: &[carve_storage::Field], facts: &dyn TypeFacts) -> Option<String> {
    if fields.is_empty() {
        return Some(name.to_string());
    }
    let values = fields
        .iter()
        .map(|f| debug_repr(&f.value, facts))
        .collect::<Option<Vec<_>>>()?;
    if fields.iter().all(|f| f.name.starts_with("__")) {
        return Some(format!("{name}({})", values.join(", ")));
    }
    let named: Vec<String> = fields
        .iter()
        .zip(values)
        .map(|(f, v)| format!("{}: {v}", f.name))
        .collect();
    Some(format!("{name} {{ {} }}", named.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::types::Shape;
    use carve_storage::Field;

    /// `k::Derived` derives Debug; `k::Custom` implements it by hand.
    struct Facts;
    impl TypeFacts for Facts {
        fn shape(&self, path: &str) -> Option<Shape> {
            let debug_derived = match path {
                "k::Derived" | "k::Kind" => true,
                "k::Custom" => false,
                _ => return None,
            };
            Some(Shape {
                debug: true,
                debug_derived,
                ..Shape::default()
            })
        }
    }

    fn usize_v(v: u128) -> Value {
        Value::Uint {
            ty: "usize".into(),
            value: v,
        }
    }

    fn text(s: &str) -> Value {
        Value::Str {
            ty: "alloc::string::String".into(),
            value: s.into(),
            truncated: false,
        }
    }

    #[test]
    fn a_derived_struct_prints_as_derive_writes_it() {
        let kind = Value::Enum {
            ty: "k::Kind".into(),
            variant: "Op".into(),
            fields: vec![Field::new("__0", Value::Char { value: '+' })],
        };
        let v = Value::Struct {
            ty: "k::Derived".into(),
            fields: vec![
                Field::new("pos", usize_v(3)),
                Field::new("name", text("a\"b")),
                Field::new(
                    "items",
                    Value::Seq {
                        ty: "alloc::vec::Vec<k::Kind, alloc::alloc::Global>".into(),
                        elems: vec![kind],
                        truncated: false,
                    },
                ),
                Field::new(
                    "ratio",
                    Value::Float {
                        ty: "f64".into(),
                        bits: 0.5f64.to_bits(),
                    },
                ),
            ],
        };
        assert_eq!(
            debug_repr(&v, &Facts).as_deref(),
            Some(r#"Derived { pos: 3, name: "a\"b", items: [Op('+')], ratio: 0.5 }"#)
        );
    }

    #[test]
    fn a_hand_written_debug_or_a_hash_map_makes_the_output_unknowable() {
        let custom = Value::Struct {
            ty: "k::Custom".into(),
            fields: vec![Field::new("pos", usize_v(1))],
        };
        assert_eq!(debug_repr(&custom, &Facts), None);
        let map = Value::Seq {
            ty: "std::collections::hash::map::HashMap<u8, u8>".into(),
            elems: vec![],
            truncated: false,
        };
        assert_eq!(debug_repr(&map, &Facts), None);
    }

    #[test]
    fn options_tuples_and_btree_maps_print_like_std() {
        let some = Value::Enum {
            ty: "core::option::Option<usize>".into(),
            variant: "Some".into(),
            fields: vec![Field::new("__0", usize_v(7))],
        };
        let pair = Value::Tuple {
            ty: "(usize, alloc::string::String)".into(),
            elems: vec![usize_v(1), text("x")],
        };
        let map = Value::Seq {
            ty: "alloc::collections::btree::map::BTreeMap<usize, alloc::string::String>".into(),
            elems: vec![pair.clone()],
            truncated: false,
        };
        assert_eq!(debug_repr(&some, &Facts).as_deref(), Some("Some(7)"));
        assert_eq!(debug_repr(&pair, &Facts).as_deref(), Some(r#"(1, "x")"#));
        assert_eq!(debug_repr(&map, &Facts).as_deref(), Some(r#"{1: "x"}"#));
    }
}
