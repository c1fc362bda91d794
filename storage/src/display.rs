//! A compact, Rust-like rendering of recorded values for people (`carve show`).
//!
//! Type names lose their module paths (`alloc::vec::Vec<alloc::string::String>` shows as
//! `Vec<String>`); anything carve could not read completely is marked (`…`, `<T: 16 bytes>`).
//! This is for reading only: the generator builds real literals from the full value tree.

use std::borrow::Cow;
use std::fmt;

use crate::model::{Field, Value};

/// Whether a terminal could act on `c` instead of showing it: C0 and C1 control characters (ESC
/// and CSI start escape sequences, CR and BS overwrite what was shown), the Unicode line and
/// paragraph separators, and invisible format characters such as bidirectional overrides, which
/// make text read differently from what it is.
pub fn acts_on_terminal(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
        )
}

/// `text` with every character a terminal could act on written as `\uXXXX` (the JSON escape, so
/// JSON text stays valid and means the same), except the line breaks and tabs in `keep`. Traces
/// are shared files: whatever carve prints from one goes through here.
pub fn terminal_safe<'t>(text: &'t str, keep: &[char]) -> Cow<'t, str> {
    if !text
        .chars()
        .any(|c| acts_on_terminal(c) && !keep.contains(&c))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acts_on_terminal(c) && !keep.contains(&c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Unit => f.write_str("()"),
            Value::Bool { value } => write!(f, "{value}"),
            Value::Int { value, .. } => write!(f, "{value}"),
            Value::Uint { value, .. } => write!(f, "{value}"),
            Value::Float { ty, bits } => {
                // `{:?}` is the shortest text that reads back to the same float, with a `.0`
                // on whole numbers.
                if matches!(ty.as_str(), "f32" | "float") {
                    write!(f, "{:?}", f32::from_bits(*bits as u32))
                } else {
                    write!(f, "{:?}", f64::from_bits(*bits))
                }
            }
            Value::Char { value } => write!(f, "{value:?}"),
            Value::Str {
                value, truncated, ..
            } => {
                write!(f, "{value:?}")?;
                if *truncated {
                    f.write_str("…")?;
                }
                Ok(())
            }
            Value::Struct { ty, fields } => {
                f.write_str(&short_type(ty))?;
                write_fields(f, fields)
            }
            Value::Tuple { elems, .. } => {
                f.write_str("(")?;
                write_list(f, elems)?;
                if elems.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
            Value::Seq {
                elems, truncated, ..
            } => {
                f.write_str("[")?;
                write_list(f, elems)?;
                if *truncated {
                    f.write_str(if elems.is_empty() { "…" } else { ", …" })?;
                }
                f.write_str("]")
            }
            Value::Enum {
                ty,
                variant,
                fields,
            } => {
                let short = short_type(ty);
                let base = without_generics(&short);
                if matches!(base, "Option" | "Result") || base.is_empty() {
                    f.write_str(variant)?;
                } else {
                    write!(f, "{base}::{variant}")?;
                }
                write_fields(f, fields)
            }
            Value::Ref { target, .. } => write!(f, "&{target}"),
            Value::Pointer { addr, .. } => write!(f, "{addr:#x}"),
            Value::Function { path, .. } => f.write_str(path),
            Value::Opaque { ty, bytes } => {
                let unit = if bytes.len() == 1 { "byte" } else { "bytes" };
                write!(f, "<{}: {} {unit}>", short_type(ty), bytes.len())
            }
            Value::Unavailable { ty, reason } => {
                write!(f, "<{}: unavailable ({reason})>", short_type(ty))
            }
        }
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, values: &[Value]) -> fmt::Result {
    for (i, value) in values.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{value}")?;
    }
    Ok(())
}

/// ` { a: 1, b: 2 }` for named fields, `(1, 2)` for tuple fields (`__0`, `__1`), nothing for none.
fn write_fields(f: &mut fmt::Formatter<'_>, fields: &[Field]) -> fmt::Result {
    if fields.is_empty() {
        return Ok(());
    }
    if fields.iter().all(|field| is_positional(&field.name)) {
        f.write_str("(")?;
        for (i, field) in fields.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", field.value)?;
        }
        return f.write_str(")");
    }
    f.write_str(" { ")?;
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{}: {}", field.name, field.value)?;
    }
    f.write_str(" }")
}

/// DWARF names tuple fields `__0`, `__1`...
fn is_positional(name: &str) -> bool {
    name.strip_prefix("__")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The type name with every path reduced to its last segment, generics kept:
/// `core::option::Option<alloc::string::String>` becomes `Option<String>`.
pub(crate) fn short_type(ty: &str) -> String {
    let mut out = String::with_capacity(ty.len());
    // Where the path being read started in `out`.
    let mut path_start = 0;
    let mut chars = ty.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            if out.len() > path_start {
                // `a::b` drops `a::`.
                out.truncate(path_start);
            } else {
                // `<T as Trait>::Item` keeps its `::`.
                out.push_str("::");
                path_start = out.len();
            }
        } else if c.is_alphanumeric() || c == '_' {
            out.push(c);
        } else {
            out.push(c);
            path_start = out.len();
        }
    }
    out
}

/// `Option<i32>` → `Option`.
fn without_generics(ty: &str) -> &str {
    ty.split('<').next().unwrap_or(ty).trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_safe_escapes_what_a_terminal_would_act_on() {
        let hostile = "a\u{1b}]0;title\u{7}\u{1b}[2J\rb\u{9b}c\u{202e}d\ne\tf";
        assert_eq!(
            terminal_safe(hostile, &['\n', '\t']),
            "a\\u001b]0;title\\u0007\\u001b[2J\\u000db\\u009bc\\u202ed\ne\tf"
        );
        assert_eq!(terminal_safe("x\ny", &[]), "x\\u000ay");
        assert!(matches!(
            terminal_safe("plain ✓ text", &[]),
            Cow::Borrowed(_)
        ));
        // As JSON, an escaped string still means the same.
        let json = serde_json::to_string("\u{9b}\u{202e}").unwrap();
        let safe = terminal_safe(&json, &[]);
        assert_eq!(
            serde_json::from_str::<String>(&safe).unwrap(),
            "\u{9b}\u{202e}"
        );
    }

    fn int(value: i128) -> Value {
        Value::Int {
            ty: "i32".into(),
            value,
        }
    }

    fn shown(value: &Value) -> String {
        value.to_string()
    }

    #[test]
    fn scalars_render_like_rust_literals() {
        assert_eq!(shown(&Value::Unit), "()");
        assert_eq!(shown(&Value::Bool { value: true }), "true");
        assert_eq!(shown(&int(42)), "42");
        assert_eq!(shown(&int(-3)), "-3");
        assert_eq!(
            shown(&Value::Uint {
                ty: "u128".into(),
                value: u128::MAX
            }),
            u128::MAX.to_string()
        );
        assert_eq!(shown(&Value::Char { value: 'x' }), "'x'");
        assert_eq!(shown(&Value::Char { value: '\'' }), "'\\''");
    }

    #[test]
    fn floats_render_from_their_bits_in_shortest_form() {
        let f64v = |v: f64| Value::Float {
            ty: "f64".into(),
            bits: v.to_bits(),
        };
        let f32v = |v: f32| Value::Float {
            ty: "f32".into(),
            bits: u64::from(v.to_bits()),
        };
        assert_eq!(shown(&f64v(2.5)), "2.5");
        assert_eq!(shown(&f64v(1.0)), "1.0");
        assert_eq!(shown(&f64v(0.1)), "0.1");
        assert_eq!(shown(&f32v(0.1)), "0.1");
        assert_eq!(shown(&f32v(-7.25)), "-7.25");
        assert_eq!(shown(&f64v(f64::NAN)), "NaN");
    }

    #[test]
    fn strings_are_quoted_escaped_and_marked_when_truncated() {
        let s = |value: &str, truncated| Value::Str {
            ty: "&str".into(),
            value: value.into(),
            truncated,
        };
        assert_eq!(
            shown(&s("escaped \"string\"", false)),
            r#""escaped \"string\"""#
        );
        assert_eq!(shown(&s("a\nb", false)), r#""a\nb""#);
        assert_eq!(shown(&s("abc", true)), "\"abc\"…");
    }

    #[test]
    fn structs_show_short_type_names_and_fields() {
        let user = Value::Struct {
            ty: "app::model::User".into(),
            fields: vec![
                Field::new(
                    "name",
                    Value::Str {
                        ty: "alloc::string::String".into(),
                        value: "Gandhi".into(),
                        truncated: false,
                    },
                ),
                Field::new("age", int(3)),
            ],
        };
        assert_eq!(shown(&user), r#"User { name: "Gandhi", age: 3 }"#);
        let unit = Value::Struct {
            ty: "app::Marker".into(),
            fields: vec![],
        };
        assert_eq!(shown(&unit), "Marker");
        let tuple_struct = Value::Struct {
            ty: "app::Meters<f64>".into(),
            fields: vec![Field::new("__0", int(5))],
        };
        assert_eq!(shown(&tuple_struct), "Meters<f64>(5)");
    }

    #[test]
    fn tuples_and_sequences_render_with_brackets() {
        let pair = Value::Tuple {
            ty: "(i32, i32)".into(),
            elems: vec![int(1), int(2)],
        };
        assert_eq!(shown(&pair), "(1, 2)");
        let single = Value::Tuple {
            ty: "(i32,)".into(),
            elems: vec![int(1)],
        };
        assert_eq!(shown(&single), "(1,)");
        let seq = |truncated| Value::Seq {
            ty: "alloc::vec::Vec<i32>".into(),
            elems: vec![int(1), int(2), int(3)],
            truncated,
        };
        assert_eq!(shown(&seq(false)), "[1, 2, 3]");
        assert_eq!(shown(&seq(true)), "[1, 2, 3, …]");
    }

    #[test]
    fn enums_name_their_variant() {
        let some = Value::Enum {
            ty: "core::option::Option<i32>".into(),
            variant: "Some".into(),
            fields: vec![Field::new("__0", int(3))],
        };
        assert_eq!(shown(&some), "Some(3)");
        let none = Value::Enum {
            ty: "core::option::Option<i32>".into(),
            variant: "None".into(),
            fields: vec![],
        };
        assert_eq!(shown(&none), "None");
        let ok = Value::Enum {
            ty: "core::result::Result<(), alloc::string::String>".into(),
            variant: "Ok".into(),
            fields: vec![Field::new("__0", Value::Unit)],
        };
        assert_eq!(shown(&ok), "Ok(())");
        let circle = Value::Enum {
            ty: "geo::Shape".into(),
            variant: "Circle".into(),
            fields: vec![Field::new(
                "r",
                Value::Float {
                    ty: "f64".into(),
                    bits: 1.0f64.to_bits(),
                },
            )],
        };
        assert_eq!(shown(&circle), "Shape::Circle { r: 1.0 }");
        let generic = Value::Enum {
            ty: "either::Either<i32, u8>".into(),
            variant: "Left".into(),
            fields: vec![Field::new("__0", int(1))],
        };
        assert_eq!(shown(&generic), "Either::Left(1)");
    }

    #[test]
    fn references_pointers_and_unreadable_values_are_marked() {
        let r = Value::Ref {
            ty: "&i32".into(),
            addr: 0x1000,
            target: Box::new(int(7)),
        };
        assert_eq!(shown(&r), "&7");
        let p = Value::Pointer {
            ty: "*const u8".into(),
            addr: 0x7ffd_1234,
        };
        assert_eq!(shown(&p), "0x7ffd1234");
        let opaque = Value::Opaque {
            ty: "std::collections::hash::map::HashMap<i32, i32>".into(),
            bytes: vec![0; 16],
        };
        assert_eq!(shown(&opaque), "<HashMap<i32, i32>: 16 bytes>");
        let gone = Value::Unavailable {
            ty: "i32".into(),
            reason: "optimized out".into(),
        };
        assert_eq!(shown(&gone), "<i32: unavailable (optimized out)>");
    }

    #[test]
    fn type_names_lose_module_paths_but_keep_generics() {
        assert_eq!(
            short_type("alloc::vec::Vec<alloc::string::String>"),
            "Vec<String>"
        );
        assert_eq!(
            short_type("core::result::Result<(), std::io::error::Error>"),
            "Result<(), Error>"
        );
        assert_eq!(short_type("&[u8; 4]"), "&[u8; 4]");
        assert_eq!(short_type("dyn core::fmt::Debug"), "dyn Debug");
        assert_eq!(
            short_type("<abc::A as abc::Answerer>::Out"),
            "<A as Answerer>::Out"
        );
    }
}
