//! The kinds of character a test gives a function: for each text, bytes or `char` argument of the
//! test's own calls, which kinds of character it holds — each ASCII punctuation mark by
//! itself (`$`, `'`, `\`), whitespace, a control character, a digit, a lower- or upper-case
//! ASCII letter, and characters of two, three or four UTF-8 bytes. Code that reads text
//! branches on such kinds (a quote that needs escaping, a character whose width a table
//! looks up by its code point's bits), and a change there shows only on an input that holds
//! one: `"and $HOME"` is the one input of a quoting function that tells `&=` from `|=` on the
//! flag `$` clears. So each kind a verified test gave a function is a class a kept test keeps.

use std::collections::BTreeSet;

use carve_storage::Value;

/// How many characters of one text are looked at.
const MAX_CHARS: usize = 4096;

/// `PATH has KIND` for each kind of character in the text or `char` of `value` (through
/// references).
pub(crate) fn of(value: &Value, path: &str, out: &mut Vec<String>) {
    let mut kinds = BTreeSet::new();
    match value {
        Value::Ref { target, .. } => return of(target, path, out),
        Value::Str { value, .. } => {
            kinds.extend(value.chars().take(MAX_CHARS).map(kind));
        }
        Value::Char { value } => {
            kinds.insert(kind(*value));
        }
        // Bytes (`&[u8]`, `Vec<u8>`, `b"…"`): ASCII ones by their kind.
        Value::Seq { elems, .. } if elems.iter().all(is_byte) => {
            for e in elems.iter().take(MAX_CHARS) {
                if let Value::Uint { value, .. } = e {
                    kinds.insert(match u8::try_from(*value) {
                        Ok(b) if b.is_ascii() => kind(char::from(b)),
                        _ => "non-ASCII byte".into(),
                    });
                }
            }
        }
        _ => return,
    }
    out.extend(kinds.into_iter().map(|k| format!("{path} has {k}")));
}

fn is_byte(v: &Value) -> bool {
    matches!(v, Value::Uint { ty, .. } if ty == "u8")
}

/// The kind of `c`, as a class names it.
fn kind(c: char) -> String {
    match c {
        c if c.is_ascii_punctuation() => format!("`{c}`"),
        c if c.is_ascii_whitespace() => "whitespace".into(),
        c if c.is_ascii_control() => "control".into(),
        '0'..='9' => "digit".into(),
        'a'..='z' => "lowercase".into(),
        'A'..='Z' => "uppercase".into(),
        c => format!("{}-byte", c.len_utf8()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(value: Value) -> Vec<String> {
        let mut out = Vec::new();
        of(&value, "s:", &mut out);
        out
    }

    fn text(s: &str) -> Value {
        Value::Ref {
            ty: "&str".into(),
            addr: 0x10,
            target: Box::new(Value::Str {
                ty: "str".into(),
                value: s.into(),
                truncated: false,
            }),
        }
    }

    #[test]
    fn each_punctuation_mark_and_each_other_kind_of_character_is_a_class() {
        assert_eq!(
            classes(text("and $HOME")),
            [
                "s: has `$`",
                "s: has lowercase",
                "s: has uppercase",
                "s: has whitespace"
            ]
        );
        assert_eq!(
            classes(text("é世🙂\t7")),
            [
                "s: has 2-byte",
                "s: has 3-byte",
                "s: has 4-byte",
                "s: has digit",
                "s: has whitespace"
            ]
        );
        assert!(classes(text("")).is_empty());
        assert_eq!(classes(Value::Char { value: '\0' }), ["s: has control"]);
        let bytes = |b: &[u8]| Value::Seq {
            ty: "[u8]".into(),
            elems: b
                .iter()
                .map(|&b| Value::Uint {
                    ty: "u8".into(),
                    value: b.into(),
                })
                .collect(),
            truncated: false,
        };
        assert_eq!(
            classes(bytes(b"a$\xff")),
            ["s: has `$`", "s: has lowercase", "s: has non-ASCII byte"]
        );
        let number = Value::Uint {
            ty: "u32".into(),
            value: 36,
        };
        assert!(classes(number).is_empty());
    }
}
