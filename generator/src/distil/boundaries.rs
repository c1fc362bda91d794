//! Inputs at a boundary the code names: the crate's integer constants (`pub const KIB: u64 =
//! 1_024;`), and which numbers a call was given that equal one of them. A comparison with a
//! constant (`bytes < KIB`) made `<=` is told apart only by an input exactly at it: a test
//! whose call got 1024 keeps a goal of its own (`self:.0 = KIB`), as a zero it returned does.

use std::collections::BTreeMap;

use carve_storage::Value;

use crate::read::crate_api::ConstApi;

/// The integer values of the crate's constants whose initializer is a literal, each with the
/// constant's name (the first, by name, when two share a value). 0 and 1 are left out: they
/// are everywhere, and the sign classes already tell a zero apart.
pub(crate) fn of<'c>(consts: impl IntoIterator<Item = &'c ConstApi>) -> BTreeMap<i128, String> {
    let mut out = BTreeMap::new();
    for c in consts {
        if let Some(v) = int_literal(&c.expr) {
            if !(0..=1).contains(&v) {
                out.entry(v).or_insert_with(|| c.ident.clone());
            }
        }
    }
    out
}

/// `1_024`, `1024u64`, `0x400`, `-3i32` as a number; `None` for anything else.
fn int_literal(expr: &str) -> Option<i128> {
    let text: String = expr.chars().filter(|c| !c.is_whitespace()).collect();
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest.to_string()),
        None => (false, text),
    };
    let lit: syn::LitInt = syn::parse_str(&text).ok()?;
    let v: i128 = lit.base10_parse().ok()?;
    Some(if negative { -v } else { v })
}

/// `PATH = NAME` for each integer inside `value` (through references, fields, tuples and
/// variants, to `depth` levels) equal to a constant of `boundaries`.
pub(crate) fn at(
    value: &Value,
    path: &str,
    boundaries: &BTreeMap<i128, String>,
    depth: usize,
    out: &mut Vec<String>,
) {
    if depth == 0 || boundaries.is_empty() {
        return;
    }
    let number = match value {
        Value::Int { value, .. } => Some(*value),
        Value::Uint { value, .. } => i128::try_from(*value).ok(),
        _ => None,
    };
    if let Some(name) = number.and_then(|n| boundaries.get(&n)) {
        out.push(format!("{path} = {name}"));
    }
    match value {
        Value::Ref { target, .. } => at(target, path, boundaries, depth, out),
        Value::Struct { fields, .. } => {
            for f in fields {
                at(
                    &f.value,
                    &format!("{path}.{}", f.name),
                    boundaries,
                    depth - 1,
                    out,
                );
            }
        }
        Value::Enum {
            variant, fields, ..
        } => {
            for (i, f) in fields.iter().enumerate() {
                let path = format!("{path}{variant}.{i}");
                at(&f.value, &path, boundaries, depth - 1, out);
            }
        }
        Value::Tuple { elems, .. } => {
            for (i, v) in elems.iter().enumerate() {
                at(v, &format!("{path}.{i}"), boundaries, depth - 1, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::Field;

    fn konst(ident: &str, expr: &str) -> (String, ConstApi) {
        (
            ident.to_string(),
            ConstApi {
                ident: ident.to_string(),
                type_name: String::new(),
                expr: expr.to_string(),
                probed: None,
            },
        )
    }

    #[test]
    fn integer_literal_constants_are_boundaries() {
        let consts: BTreeMap<String, ConstApi> = [
            konst("KIB", "1_024"),
            konst("KB", "1000u64"),
            konst("MASK", "0x0f"),
            konst("LOW", "- 3"),
            konst("ONE", "1"),
            konst("NAME", "\"x\""),
            konst("MIB", "KIB * KIB"),
        ]
        .into();
        let b = of(consts.values());
        assert_eq!(b.get(&1024).map(String::as_str), Some("KIB"));
        assert_eq!(b.get(&1000).map(String::as_str), Some("KB"));
        assert_eq!(b.get(&15).map(String::as_str), Some("MASK"));
        assert_eq!(b.get(&-3).map(String::as_str), Some("LOW"));
        assert_eq!(b.len(), 4);
    }

    #[test]
    fn a_number_given_at_a_boundary_is_named_by_its_place() {
        let boundaries: BTreeMap<i128, String> = [(1024, "KIB".to_string())].into();
        let size = |n| Value::Struct {
            ty: "ByteSize".into(),
            fields: vec![Field::new(
                "0",
                Value::Uint {
                    ty: "u64".into(),
                    value: n,
                },
            )],
        };
        let mut out = Vec::new();
        at(&size(1024), "self:", &boundaries, 3, &mut out);
        assert_eq!(out, ["self:.0 = KIB"]);
        out.clear();
        at(&size(1023), "self:", &boundaries, 3, &mut out);
        assert!(out.is_empty());
    }
}
