//! The JSON of the columns every call writes (arguments, return value, state after, objects,
//! what it read), written directly: the same bytes `serde_json::to_writer` writes for the
//! model's derived `Serialize` (field order, the `kind` tag first, escapes, numbers, 128-bit
//! integers as strings when they leave 64 bits), at a fraction of the cost. serde's derived
//! code goes through a map serializer per value and escapes every key; at a million calls a
//! second that was a fifth of the recorder's thread.
//!
//! The derived form stays the reference: `tests::written_as_serde_json_writes_it` compares the
//! two on thousands of generated values, and readers parse the columns with serde. A variant
//! added to [`Value`] fails to compile here until it is written.

use crate::model::{Arg, ArgObject, Field, Value};

/// Appends `args` as serde_json writes a `Vec<Arg>`.
pub(crate) fn args(out: &mut Vec<u8>, args: &[Arg]) {
    seq(out, args, |out, a| named(out, "name", &a.name, &a.value));
}

/// Appends `objects` as serde_json writes a `Vec<ArgObject>`.
pub(crate) fn objects(out: &mut Vec<u8>, objects: &[ArgObject]) {
    seq(out, objects, |out, o| {
        out.extend_from_slice(b"{\"arg\":");
        string(out, &o.arg);
        out.extend_from_slice(b",\"object\":");
        unsigned(out, o.object.0);
        out.push(b'}');
    });
}

/// Appends `strings` as serde_json writes a `Vec<String>`.
pub(crate) fn strings(out: &mut Vec<u8>, strings: &[String]) {
    seq(out, strings, |out, s| string(out, s));
}

/// Appends `value` as serde_json writes it.
pub(crate) fn value(out: &mut Vec<u8>, value: &Value) {
    out.extend_from_slice(b"{\"kind\":\"");
    match value {
        Value::Unit => out.extend_from_slice(b"unit\""),
        Value::Bool { value } => {
            out.extend_from_slice(b"bool\",\"value\":");
            out.extend_from_slice(if *value { b"true" } else { b"false" });
        }
        Value::Int { ty, value } => {
            kind_ty(out, b"int", ty);
            out.extend_from_slice(b",\"value\":");
            match i64::try_from(*value) {
                Ok(small) => out.extend_from_slice(itoa::Buffer::new().format(small).as_bytes()),
                Err(_) => quoted_number(out, itoa::Buffer::new().format(*value)),
            }
        }
        Value::Uint { ty, value } => {
            kind_ty(out, b"uint", ty);
            out.extend_from_slice(b",\"value\":");
            match u64::try_from(*value) {
                Ok(small) => unsigned(out, small),
                Err(_) => quoted_number(out, itoa::Buffer::new().format(*value)),
            }
        }
        Value::Float { ty, bits } => {
            kind_ty(out, b"float", ty);
            out.extend_from_slice(b",\"bits\":");
            unsigned(out, *bits);
        }
        Value::Char { value } => {
            out.extend_from_slice(b"char\",\"value\":");
            string(out, value.encode_utf8(&mut [0; 4]));
        }
        Value::Str {
            ty,
            value,
            truncated,
        } => {
            kind_ty(out, b"str", ty);
            out.extend_from_slice(b",\"value\":");
            string(out, value);
            truncated_flag(out, *truncated);
        }
        Value::Struct { ty, fields } => {
            kind_ty(out, b"struct", ty);
            out.extend_from_slice(b",\"fields\":");
            field_list(out, fields);
        }
        Value::Tuple { ty, elems } => {
            kind_ty(out, b"tuple", ty);
            out.extend_from_slice(b",\"elems\":");
            seq(out, elems, self::value);
        }
        Value::Seq {
            ty,
            elems,
            truncated,
        } => {
            kind_ty(out, b"seq", ty);
            out.extend_from_slice(b",\"elems\":");
            seq(out, elems, self::value);
            truncated_flag(out, *truncated);
        }
        Value::Enum {
            ty,
            variant,
            fields,
        } => {
            kind_ty(out, b"enum", ty);
            out.extend_from_slice(b",\"variant\":");
            string(out, variant);
            out.extend_from_slice(b",\"fields\":");
            field_list(out, fields);
        }
        Value::Ref { ty, addr, target } => {
            kind_ty(out, b"ref", ty);
            out.extend_from_slice(b",\"addr\":");
            unsigned(out, *addr);
            out.extend_from_slice(b",\"target\":");
            self::value(out, target);
        }
        Value::Pointer { ty, addr } => {
            kind_ty(out, b"pointer", ty);
            out.extend_from_slice(b",\"addr\":");
            unsigned(out, *addr);
        }
        Value::Opaque { ty, bytes } => {
            kind_ty(out, b"opaque", ty);
            out.extend_from_slice(b",\"bytes\":");
            seq(out, bytes, |out, b| unsigned(out, u64::from(*b)));
        }
        Value::Function { ty, path } => {
            kind_ty(out, b"function", ty);
            out.extend_from_slice(b",\"path\":");
            string(out, path);
        }
        Value::Unavailable { ty, reason } => {
            kind_ty(out, b"unavailable", ty);
            out.extend_from_slice(b",\"reason\":");
            string(out, reason);
        }
    }
    out.push(b'}');
}

/// The rest of the tag (`"kind":"` is written) and the `ty` field.
fn kind_ty(out: &mut Vec<u8>, kind: &[u8], ty: &str) {
    out.extend_from_slice(kind);
    out.extend_from_slice(b"\",\"ty\":");
    string(out, ty);
}

fn truncated_flag(out: &mut Vec<u8>, truncated: bool) {
    out.extend_from_slice(if truncated {
        b",\"truncated\":true"
    } else {
        b",\"truncated\":false"
    });
}

fn field_list(out: &mut Vec<u8>, fields: &[Field]) {
    seq(out, fields, |out, f| named(out, "name", &f.name, &f.value));
}

/// `{"<key>":"<name>","value":<value>}`: an `Arg` or a `Field`.
fn named(out: &mut Vec<u8>, key: &str, name: &str, v: &Value) {
    out.extend_from_slice(b"{\"");
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
    string(out, name);
    out.extend_from_slice(b",\"value\":");
    value(out, v);
    out.push(b'}');
}

fn seq<T>(out: &mut Vec<u8>, items: &[T], mut each: impl FnMut(&mut Vec<u8>, &T)) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        each(out, item);
    }
    out.push(b']');
}

fn unsigned(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// A 128-bit integer outside 64 bits: a decimal string (digits and a sign need no escape).
fn quoted_number(out: &mut Vec<u8>, digits: &str) {
    out.push(b'"');
    out.extend_from_slice(digits.as_bytes());
    out.push(b'"');
}

/// A JSON string as serde_json escapes it: `"` and `\` escaped, control characters below
/// U+0020 as `\b \t \n \f \r` or `\u00XX` (lowercase hex), everything else as is.
fn string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => {
                out.extend_from_slice(&bytes[start..i]);
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xf)]);
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(escape);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ObjectId;

    /// xorshift64*: the values are the same on every run, so a failure names its seed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        /// Strings that exercise every escape: quotes, backslashes, each control character,
        /// DEL, multi-byte UTF-8, the empty string.
        fn text(&mut self) -> String {
            const PIECES: &[&str] = &[
                "",
                "a",
                "ty",
                "&str",
                "\"",
                "\\",
                "\n",
                "\r",
                "\t",
                "\u{8}",
                "\u{c}",
                "\u{0}",
                "\u{1}",
                "\u{1f}",
                "\u{7f}",
                "é",
                "日本",
                "🦀",
                "</script>",
                "{\"k\":1}",
                " ",
            ];
            let n = self.below(5);
            (0..n)
                .map(|_| {
                    if self.below(4) == 0 {
                        char::from_u32(self.below(0x20) as u32).unwrap().to_string()
                    } else {
                        PIECES[self.below(PIECES.len() as u64) as usize].to_owned()
                    }
                })
                .collect()
        }

        fn wide(&mut self) -> u128 {
            match self.below(4) {
                0 => u128::from(self.next()),
                1 => u128::MAX - u128::from(self.below(1000)),
                2 => (u128::from(self.next()) << 64) | u128::from(self.next()),
                _ => u128::from(self.below(300)),
            }
        }

        fn value(&mut self, depth: u32) -> Value {
            let leaf = depth == 0;
            match self.below(if leaf { 10 } else { 15 }) {
                0 => Value::Unit,
                1 => Value::Bool {
                    value: self.below(2) == 0,
                },
                2 => Value::Int {
                    ty: self.text(),
                    value: self.wide() as i128,
                },
                3 => Value::Uint {
                    ty: self.text(),
                    value: self.wide(),
                },
                4 => Value::Float {
                    ty: "f64".into(),
                    bits: self.next(),
                },
                5 => Value::Char {
                    value: char::from_u32(self.below(0x11_0000) as u32).unwrap_or('\u{1f}'),
                },
                6 => Value::Str {
                    ty: self.text(),
                    value: self.text(),
                    truncated: self.below(2) == 0,
                },
                7 => Value::Pointer {
                    ty: self.text(),
                    addr: self.next(),
                },
                8 => Value::Opaque {
                    ty: self.text(),
                    bytes: (0..self.below(5)).map(|_| self.next() as u8).collect(),
                },
                9 if self.below(2) == 0 => Value::Function {
                    ty: self.text(),
                    path: self.text(),
                },
                9 => Value::Unavailable {
                    ty: self.text(),
                    reason: self.text(),
                },
                10 => Value::Struct {
                    ty: self.text(),
                    fields: self.fields(depth),
                },
                11 => Value::Tuple {
                    ty: self.text(),
                    elems: (0..self.below(3)).map(|_| self.value(depth - 1)).collect(),
                },
                12 => Value::Seq {
                    ty: self.text(),
                    elems: (0..self.below(3)).map(|_| self.value(depth - 1)).collect(),
                    truncated: self.below(2) == 0,
                },
                13 => Value::Enum {
                    ty: self.text(),
                    variant: self.text(),
                    fields: self.fields(depth),
                },
                _ => Value::Ref {
                    ty: self.text(),
                    addr: self.next(),
                    target: Box::new(self.value(depth - 1)),
                },
            }
        }

        fn fields(&mut self, depth: u32) -> Vec<Field> {
            (0..self.below(3))
                .map(|_| Field::new(self.text(), self.value(depth - 1)))
                .collect()
        }
    }

    fn serde(v: &(impl serde::Serialize + ?Sized)) -> String {
        serde_json::to_string(v).unwrap()
    }

    fn ours(write: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        write(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn written_as_serde_json_writes_it() {
        for seed in 1..=4000u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let list: Vec<Arg> = (0..rng.below(4))
                .map(|_| Arg {
                    name: rng.text(),
                    value: rng.value(3),
                })
                .collect();
            assert_eq!(ours(|o| args(o, &list)), serde(&list), "seed {seed}");
            let v = rng.value(3);
            assert_eq!(ours(|o| value(o, &v)), serde(&v), "seed {seed}");
            let objs: Vec<ArgObject> = (0..rng.below(3))
                .map(|_| ArgObject {
                    arg: rng.text(),
                    object: ObjectId(rng.next()),
                })
                .collect();
            assert_eq!(ours(|o| objects(o, &objs)), serde(&objs), "seed {seed}");
            let texts: Vec<String> = (0..rng.below(3)).map(|_| rng.text()).collect();
            assert_eq!(ours(|o| strings(o, &texts)), serde(&texts), "seed {seed}");
        }
    }

    #[test]
    fn every_control_character_and_the_integer_limits_are_written_as_serde_json_writes_them() {
        let all: String = (0u32..0x80).filter_map(char::from_u32).collect();
        let s = Value::Str {
            ty: all.clone(),
            value: all,
            truncated: false,
        };
        assert_eq!(ours(|o| value(o, &s)), serde(&s));
        for v in [
            i128::MIN,
            i128::from(i64::MIN) - 1,
            i128::from(i64::MIN),
            -1,
            0,
        ]
        .into_iter()
        .chain([i128::from(i64::MAX), i128::from(i64::MAX) + 1, i128::MAX])
        {
            let int = Value::Int {
                ty: "i128".into(),
                value: v,
            };
            assert_eq!(ours(|o| value(o, &int)), serde(&int), "{v}");
        }
        for v in [0, u128::from(u64::MAX), u128::from(u64::MAX) + 1, u128::MAX] {
            let uint = Value::Uint {
                ty: "u128".into(),
                value: v,
            };
            assert_eq!(ours(|o| value(o, &uint)), serde(&uint), "{v}");
        }
    }
}
