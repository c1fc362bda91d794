//! A recorded `Formatter`'s options, decoded from the fields DWARF showed, and the format spec
//! (`{:>10}`, `{:+.2}`) that hands a `fmt` call the same options in a test's `format!`.
//!
//! rustc ≥ 1.87 packs them into `FormattingOptions { flags: u32, width: u16, precision: u16 }`:
//! the fill `char` in bits 0–20, then the `+`, `-`, `#`, `0`, `x?` and `X?` flags (21–26), a
//! width flag (27) and a precision flag (28), the alignment in bits 29–30 (left, right, center,
//! none), bit 31 set by 1.87 and clear by later compilers (ignored). Older compilers keep
//! separate fields, on the `Formatter` itself or in `options`: `flags` (bits 0–5: `+`, `-`,
//! `#`, `0`, `x?`, `X?`), `fill: char`, `align` (`rt::Alignment`, or an `Option` of
//! `fmt::Alignment`), `width` and `precision` as `Option<usize>`. Anything else is not
//! decoded, and the call's text is not used.

use carve_storage::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
    Center,
}

/// What `format!` options a `fmt` call was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FmtOptions {
    pub fill: char,
    pub align: Option<Align>,
    pub plus: bool,
    pub minus: bool,
    pub alternate: bool,
    pub zero: bool,
    /// `x?` (`Some(false)`) or `X?` (`Some(true)`).
    pub debug_hex: Option<bool>,
    pub width: Option<u64>,
    pub precision: Option<u64>,
}

impl FmtOptions {
    /// Whether these are the options `to_string()` (and `{}`) gives.
    pub fn is_default(&self) -> bool {
        *self == FmtOptions::default()
    }

    /// The format spec giving these options to the trait `kind` names (`""` for `Display`,
    /// `"?"` for `Debug`, `"x"`...): `{:>10}`. `None` when no format string sets them (a fill
    /// without an alignment, a `{` or `}` fill, hex-debug flags outside `Debug`).
    pub fn spec(&self, kind: &str) -> Option<String> {
        let mut s = String::from("{:");
        match self.align {
            Some(align) => {
                if self.fill == '{' || self.fill == '}' {
                    return None;
                }
                if self.fill != ' ' {
                    s.push(self.fill);
                }
                s.push(match align {
                    Align::Left => '<',
                    Align::Right => '>',
                    Align::Center => '^',
                });
            }
            None if self.fill != ' ' => return None,
            None => {}
        }
        if self.plus {
            s.push('+');
        }
        if self.minus {
            s.push('-');
        }
        if self.alternate {
            s.push('#');
        }
        if self.zero {
            s.push('0');
        }
        if let Some(w) = self.width {
            s.push_str(&w.to_string());
        }
        if let Some(p) = self.precision {
            s.push('.');
            s.push_str(&p.to_string());
        }
        match (self.debug_hex, kind) {
            (Some(false), "?") => s.push_str("x?"),
            (Some(true), "?") => s.push_str("X?"),
            (Some(_), _) => return None,
            (None, k) => s.push_str(k),
        }
        if s == "{:" {
            return Some("{}".to_string());
        }
        s.push('}');
        Some(s)
    }
}

impl Default for FmtOptions {
    fn default() -> Self {
        FmtOptions {
            fill: ' ',
            align: None,
            plus: false,
            minus: false,
            alternate: false,
            zero: false,
            debug_hex: None,
            width: None,
            precision: None,
        }
    }
}

/// The options of a recorded `Formatter` (or `&mut Formatter`), when its layout is one above
/// and every field was read.
pub fn decode(formatter: &Value) -> Option<FmtOptions> {
    let mut f = formatter;
    while let Value::Ref { target, .. } = f {
        f = target;
    }
    let Value::Struct { fields, .. } = f else {
        return None;
    };
    let options = fields
        .iter()
        .find(|x| x.name == "options")
        .map_or(f, |x| &x.value);
    packed(options).or_else(|| separate(options))
}

fn field<'v>(v: &'v Value, name: &str) -> Option<&'v Value> {
    let Value::Struct { fields, .. } = v else {
        return None;
    };
    fields.iter().find(|f| f.name == name).map(|f| &f.value)
}

fn uint(v: &Value) -> Option<u64> {
    match v {
        Value::Uint { value, .. } => u64::try_from(*value).ok(),
        _ => None,
    }
}

/// rustc ≥ 1.87: `{ flags: u32, width: u16, precision: u16 }`.
fn packed(options: &Value) -> Option<FmtOptions> {
    let flags = uint(field(options, "flags")?)?;
    let width_field = field(options, "width")?;
    let precision_field = field(options, "precision")?;
    if !matches!(width_field, Value::Uint { ty, .. } if ty == "u16") {
        return None;
    }
    let (width, precision) = (uint(width_field)?, uint(precision_field)?);
    let bit = |n: u32| flags >> n & 1 == 1;
    let fill = char::from_u32((flags & 0x1F_FFFF) as u32)?;
    let align = match flags >> 29 & 0b11 {
        0 => Some(Align::Left),
        1 => Some(Align::Right),
        2 => Some(Align::Center),
        _ => None,
    };
    Some(FmtOptions {
        fill,
        align,
        plus: bit(21),
        minus: bit(22),
        alternate: bit(23),
        zero: bit(24),
        debug_hex: match (bit(25), bit(26)) {
            (false, false) => None,
            (true, false) => Some(false),
            (false, true) => Some(true),
            (true, true) => return None,
        },
        width: bit(27).then_some(width),
        precision: bit(28).then_some(precision),
    })
}

/// Older compilers: `flags`, `fill`, `align`, `width`, `precision` as separate fields.
fn separate(options: &Value) -> Option<FmtOptions> {
    let flags = uint(field(options, "flags")?)?;
    let Value::Char { value: fill } = field(options, "fill")? else {
        return None;
    };
    let align = match field(options, "align")? {
        // `rt::Alignment` (a C-like enum) or `Option<fmt::Alignment>`.
        Value::Enum {
            variant, fields, ..
        } => match (variant.as_str(), fields.as_slice()) {
            ("None" | "Unknown", []) => None,
            ("Some", [inner]) => match &inner.value {
                Value::Enum { variant, .. } => Some(alignment(variant)?),
                _ => return None,
            },
            (v, []) => Some(alignment(v)?),
            _ => return None,
        },
        _ => return None,
    };
    let optional = |name: &str| -> Option<Option<u64>> {
        match field(options, name)? {
            Value::Enum {
                variant, fields, ..
            } => match (variant.as_str(), fields.as_slice()) {
                ("None", []) => Some(None),
                ("Some", [inner]) => Some(Some(uint(&inner.value)?)),
                _ => None,
            },
            _ => None,
        }
    };
    let bit = |n: u32| flags >> n & 1 == 1;
    if flags >> 6 != 0 {
        return None;
    }
    Some(FmtOptions {
        fill: *fill,
        align,
        plus: bit(0),
        minus: bit(1),
        alternate: bit(2),
        zero: bit(3),
        debug_hex: match (bit(4), bit(5)) {
            (false, false) => None,
            (true, false) => Some(false),
            (false, true) => Some(true),
            (true, true) => return None,
        },
        width: optional("width")?,
        precision: optional("precision")?,
    })
}

fn alignment(variant: &str) -> Option<Align> {
    match variant {
        "Left" => Some(Align::Left),
        "Right" => Some(Align::Right),
        "Center" => Some(Align::Center),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::Field;

    fn uint(ty: &str, value: u128) -> Value {
        Value::Uint {
            ty: ty.into(),
            value,
        }
    }

    /// A `Formatter` as rustc 1.95 lays it out and carve records it.
    fn packed(flags: u128, width: u128, precision: u128) -> Value {
        Value::Struct {
            ty: "core::fmt::Formatter".into(),
            fields: vec![Field::new(
                "options",
                Value::Struct {
                    ty: "core::fmt::FormattingOptions".into(),
                    fields: vec![
                        Field::new("flags", uint("u32", flags)),
                        Field::new("width", uint("u16", width)),
                        Field::new("precision", uint("u16", precision)),
                    ],
                },
            )],
        }
    }

    fn spec_of(formatter: &Value, kind: &str) -> Option<String> {
        decode(formatter)?.spec(kind)
    }

    #[test]
    fn packed_options_of_rustc_1_95_give_the_spec_that_sets_them() {
        // Values read from `Formatter`s of rustc 1.95 programs (`{}`, `{:>10}`).
        assert_eq!(spec_of(&packed(0x6000_0020, 0, 0), ""), Some("{}".into()));
        assert!(decode(&packed(0x6000_0020, 0, 0)).unwrap().is_default());
        assert_eq!(
            spec_of(&packed(0x2800_0020, 10, 0), ""),
            Some("{:>10}".into())
        );
        // rustc 1.87 also sets bit 31.
        assert_eq!(spec_of(&packed(0xE000_0020, 0, 0), ""), Some("{}".into()));
        // `{:*^+#012.3}`: fill '*', center, plus, alternate, zero, width 12, precision 3.
        let flags = 0x2A | 1 << 21 | 1 << 23 | 1 << 24 | 1 << 27 | 1 << 28 | 2 << 29;
        assert_eq!(
            spec_of(&packed(flags, 12, 3), ""),
            Some("{:*^+#012.3}".into())
        );
        // `{:<5}` and `{:x?}` / `{:#X?}` for Debug.
        assert_eq!(
            spec_of(&packed(0x20 | 1 << 27, 5, 0), ""),
            Some("{:<5}".into())
        );
        let lower = 0x6000_0020 | 1 << 25;
        assert_eq!(spec_of(&packed(lower, 0, 0), "?"), Some("{:x?}".into()));
        let upper = 0x6000_0020 | 1 << 26 | 1 << 23;
        assert_eq!(spec_of(&packed(upper, 0, 0), "?"), Some("{:#X?}".into()));
        assert_eq!(
            spec_of(&packed(0x6000_0020, 0, 0), "?"),
            Some("{:?}".into())
        );
        // `{:.0}`: a precision of zero is still a precision.
        assert_eq!(
            spec_of(&packed(0x6000_0020 | 1 << 28, 0, 0), ""),
            Some("{:.0}".into())
        );
    }

    #[test]
    fn options_no_format_string_gives_are_not_decoded_into_a_spec() {
        // A fill without alignment, a brace as fill, hex-debug outside Debug.
        assert_eq!(spec_of(&packed(0x6000_002A, 0, 0), ""), None);
        assert_eq!(spec_of(&packed(u128::from(b'{') | 1 << 29, 0, 0), ""), None);
        assert_eq!(spec_of(&packed(0x6000_0020 | 1 << 25, 0, 0), ""), None);
        // A fill that is no char.
        assert_eq!(decode(&packed(0x6000_0000 | 0xD800, 0, 0)), None);
        // Not a formatter at all.
        assert_eq!(decode(&uint("u32", 3)), None);
    }

    #[test]
    fn separate_fields_of_older_compilers_are_decoded_too() {
        let some = |v: Value| Value::Enum {
            ty: "core::option::Option<usize>".into(),
            variant: "Some".into(),
            fields: vec![Field::new("__0", v)],
        };
        let none = || Value::Enum {
            ty: "core::option::Option<usize>".into(),
            variant: "None".into(),
            fields: vec![],
        };
        let old = Value::Struct {
            ty: "core::fmt::Formatter".into(),
            fields: vec![
                Field::new("flags", uint("u32", 0b1001)), // `+`, `0`
                Field::new("fill", Value::Char { value: ' ' }),
                Field::new(
                    "align",
                    Value::Enum {
                        ty: "core::fmt::rt::Alignment".into(),
                        variant: "Unknown".into(),
                        fields: vec![],
                    },
                ),
                Field::new("width", some(uint("usize", 8))),
                Field::new("precision", none()),
            ],
        };
        assert_eq!(spec_of(&old, ""), Some("{:+08}".into()));
    }
}
