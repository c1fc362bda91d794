//! Observation rule: a result that cannot be compared with `==` (an error type without
//! `PartialEq`, a struct with private fields inside `Err`) is checked with `matches!` against a
//! pattern of what can be written: the variant, and inside it every part a pattern can name
//! (integers, `bool`, `char`, `&str`, the crate's public enums and structs with public fields);
//! the rest is `_` or `..`.

use carve_storage::Value;

use crate::arrange::literal;
use crate::read::types::{Shape, TypeFacts};
use crate::syntax;

/// The pattern for `value`, when it says more than `_`.
pub fn of(value: &Value, facts: &dyn TypeFacts) -> Option<String> {
    let pattern = write(value, facts)?;
    (pattern != "_").then_some(pattern)
}

/// Whether `pattern` names variants and nothing inside them (`Some(_)`, `Err(k::E::At(_))`,
/// `k::P { .. }`): a wildcard somewhere and no literal anywhere.
pub fn is_bare(pattern: &str) -> bool {
    let wildcard = pattern.contains("..")
        || pattern
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| word == "_");
    let literal = pattern.contains(['"', '\'', '-'])
        || pattern
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| {
                word.starts_with(|c: char| c.is_ascii_digit()) || word == "true" || word == "false"
            });
    wildcard && !literal
}

fn write(value: &Value, facts: &dyn TypeFacts) -> Option<String> {
    Some(match value {
        // `Ok(())`: a unit has one value, so the pattern says all there is.
        Value::Unit => "()".to_string(),
        Value::Bool { value } => value.to_string(),
        Value::Char { value } => syntax::char_lit(*value),
        Value::Int { .. } | Value::Uint { .. } => {
            literal::render_value(value, false, facts).unwrap_or_else(|_| "_".into())
        }
        // A string pattern matches `&str` only; a `String` field (or `&Path`) takes `_`.
        Value::Str {
            ty,
            value,
            truncated: false,
        } if ty.starts_with('&') && ty.ends_with("str") && !ty.contains("::") => {
            syntax::str_lit(value)
        }
        Value::Enum {
            ty,
            variant,
            fields,
        } => {
            let base = crate::read::types::strip_generics(ty);
            let path = match base {
                "core::option::Option" | "core::result::Result" => {
                    if !matches!(variant.as_str(), "Some" | "None" | "Ok" | "Err") {
                        return None;
                    }
                    variant.clone()
                }
                _ => {
                    facts.shape(base)?;
                    format!("{base}::{}", syntax::ident(variant).ok()?)
                }
            };
            parts(&path, fields, facts, true)?
        }
        Value::Struct { ty, fields } => {
            let base = crate::read::types::strip_generics(ty);
            match facts.shape(base) {
                Some(Shape {
                    fields_public: true,
                    ..
                }) => parts(base, fields, facts, false)?,
                _ => "_".to_string(),
            }
        }
        _ => "_".to_string(),
    })
}

/// `Path`, `Path(a, _)` or `Path { x: a, .. }`.
fn parts(
    path: &str,
    fields: &[carve_storage::Field],
    facts: &dyn TypeFacts,
    variant: bool,
) -> Option<String> {
    if fields.is_empty() {
        return Some(if variant {
            path.to_string()
        } else {
            format!("{path} {{ .. }}")
        });
    }
    let inner: Vec<String> = fields
        .iter()
        .map(|f| write(&f.value, facts).unwrap_or_else(|| "_".into()))
        .collect();
    if fields.iter().all(|f| f.name.starts_with("__")) {
        return Some(format!("{path}({})", inner.join(", ")));
    }
    let named = fields
        .iter()
        .zip(&inner)
        .filter(|(_, p)| p.as_str() != "_")
        .map(|(f, p)| Some(format!("{}: {p}", syntax::ident(&f.name).ok()?)))
        .collect::<Option<Vec<_>>>()?;
    Some(if named.is_empty() {
        format!("{path} {{ .. }}")
    } else {
        format!("{path} {{ {}, .. }}", named.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::Field;

    struct Facts;

    impl TypeFacts for Facts {
        fn shape(&self, path: &str) -> Option<Shape> {
            match path {
                "m::E" => Some(Shape::default()),
                "m::P" => Some(Shape {
                    fields_public: true,
                    ..Shape::default()
                }),
                _ => None,
            }
        }
    }

    fn en(ty: &str, variant: &str, fields: Vec<Field>) -> Value {
        Value::Enum {
            ty: ty.into(),
            variant: variant.into(),
            fields,
        }
    }

    #[test]
    fn patterns_name_the_variant_and_every_part_a_pattern_can_name() {
        let n = Value::Uint {
            ty: "usize".into(),
            value: 3,
        };
        let err = en(
            "core::result::Result<u8, m::E>",
            "Err",
            vec![Field::new(
                "__0",
                en("m::E", "At", vec![Field::new("__0", n.clone())]),
            )],
        );
        assert_eq!(of(&err, &Facts).as_deref(), Some("Err(m::E::At(3usize))"));
        let private = en(
            "core::result::Result<u8, m::Hidden>",
            "Err",
            vec![Field::new(
                "__0",
                Value::Struct {
                    ty: "m::Hidden".into(),
                    fields: vec![Field::new("x", n.clone())],
                },
            )],
        );
        assert_eq!(of(&private, &Facts).as_deref(), Some("Err(_)"));
        let public = Value::Struct {
            ty: "m::P".into(),
            fields: vec![
                Field::new("line", n),
                Field::new(
                    "msg",
                    Value::Str {
                        ty: "alloc::string::String".into(),
                        value: "x".into(),
                        truncated: false,
                    },
                ),
            ],
        };
        assert_eq!(
            of(&public, &Facts).as_deref(),
            Some("m::P { line: 3usize, .. }")
        );
        let unknown = Value::Struct {
            ty: "other::T".into(),
            fields: vec![],
        };
        assert_eq!(of(&unknown, &Facts), None);
        assert!(is_bare("Err(_)") && is_bare("m::E::At { .. }") && is_bare("Some((_, _))"));
        assert!(is_bare("Some(m::E::At(_))") && !is_bare("Some(m::E::At(_, 'x'))"));
        assert!(!is_bare("Ok(())") && !is_bare("None") && !is_bare("Err(m::E::At(3usize))"));
        let hostile = en("m::E", "A(_) | _", vec![]);
        assert_eq!(of(&hostile, &Facts), None);
    }
}
