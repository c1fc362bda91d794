//! The words of a name (`snake_words`), and the slug of a value in a test's name (`2`,
//! `minus_5`, `star`, `hello_world`, `case_sensitive_true`), or of its variants alone for a test
//! that checks nothing more.

use carve_storage::Value;

/// `raw` lowered to `[a-z0-9]` words joined by single underscores (possibly empty).
pub(super) fn snake_words(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut pending_sep = false;
    let mut prev_lower = false;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_alphanumeric() {
            // `CamelCase` → `camel_case`; a capital ending a word is not a word of its own
            // (`1.0 KiB` → `1_0_kib`, `3 kB` → `3_kb`).
            let ends_word = !chars.peek().is_some_and(char::is_ascii_alphanumeric);
            if c.is_ascii_uppercase() && prev_lower && !ends_word {
                pending_sep = true;
            }
            if pending_sep && !out.is_empty() {
                out.push('_');
            }
            pending_sep = false;
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            out.push(c.to_ascii_lowercase());
        } else {
            pending_sep = true;
            prev_lower = false;
        }
    }
    out
}

/// Longest slug of one value.
const MAX_SLUG: usize = 24;

/// Whether a field is a tuple struct's, which has no name to give: `0`, or `__0` as DWARF
/// names it.
fn is_tuple_field(name: &str) -> bool {
    name.trim_start_matches('_')
        .starts_with(|c: char| c.is_ascii_digit())
}

/// A slug naming only the variants of `value`, down through the first field while it is an
/// enum (`Err(E::At(3))` → `err_at`): the name of a test that checks the variant and nothing
/// inside it (`matches!(result, Some(_))`), which must not name a number it does not check.
pub fn variant_slug(value: &Value) -> String {
    match value {
        Value::Ref { target, .. } => variant_slug(target),
        Value::Enum {
            variant, fields, ..
        } => {
            let inner = fields
                .first()
                .map(|f| variant_slug(&f.value))
                .unwrap_or_default();
            [snake_words(variant), inner]
                .into_iter()
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join("_")
        }
        _ => String::new(),
    }
}

/// A short slug describing a value: `2`, `minus_5`, `3_5`, `star`, `hello_world`.
pub fn value_slug(value: &Value) -> String {
    let slug = match value {
        Value::Unit => "unit".to_string(),
        Value::Bool { value } => value.to_string(),
        Value::Int { value, .. } if *value < 0 => format!("minus_{}", value.unsigned_abs()),
        Value::Int { value, .. } => value.to_string(),
        Value::Uint { value, .. } => value.to_string(),
        Value::Float { ty, bits } => {
            let x = if ty == "f32" || ty == "float" {
                f64::from(f32::from_bits(
                    u32::try_from(bits & 0xffff_ffff).unwrap_or(0),
                ))
            } else {
                f64::from_bits(*bits)
            };
            float_slug(x)
        }
        Value::Char { value } => char_slug(*value),
        Value::Str { value, .. } if value.is_empty() => "empty".to_string(),
        // A path by its file name: the directories above it are often the machine's
        // (`/tmp/.tmpXYZ/ping` → `ping`), and a test's name must not change between runs.
        Value::Str { ty, value, .. } if crate::read::types::os_text_constructor(ty).is_some() => {
            let name = value
                .rsplit('/')
                .find(|part| !part.is_empty())
                .unwrap_or("root");
            match snake_words(name) {
                words if words.is_empty() => "path".to_string(),
                words => words,
            }
        }
        Value::Str { value, .. } => {
            let words = snake_words(value);
            if words.is_empty() {
                "text".to_string()
            } else {
                words
            }
        }
        Value::Ref { target, .. } => value_slug(target),
        Value::Enum {
            variant, fields, ..
        } => {
            let mut words = vec![snake_words(variant)];
            words.extend(fields.first().map(|f| value_slug(&f.value)));
            words.retain(|w| !w.is_empty());
            words.join("_")
        }
        // A struct is named after its first field (`User { name: "Gandhi", .. }` → `gandhi`);
        // a named field that is a `bool` by its name too (`MatchOptions { case_sensitive:
        // true, .. }` → `case_sensitive_true`, not `true`, which reads as what a predicate
        // returned).
        Value::Struct { fields, .. } => fields.first().map_or_else(
            || "value".to_string(),
            |f| match &f.value {
                Value::Bool { value } if !is_tuple_field(&f.name) => {
                    format!("{}_{value}", snake_words(&f.name))
                }
                value => value_slug(value),
            },
        ),
        Value::Tuple { elems, .. } if !elems.is_empty() => {
            elems.iter().map(value_slug).collect::<Vec<_>>().join("_")
        }
        // Bytes that are printable text (`b"ls -la /tmp"`, as the test spells them) by their
        // words, as a text is.
        Value::Seq { elems, .. } => printable_bytes(elems)
            .map(|text| snake_words(&text))
            .filter(|words| !words.is_empty())
            .unwrap_or_else(|| "value".to_string()),
        _ => "value".to_string(),
    };
    let mut slug = slug;
    if slug.len() > MAX_SLUG {
        // Whole words only (`some_ref_catalog`, not `some_ref_catalog_shop_ca`), unless the
        // first word alone is longer.
        let cut = slug
            .char_indices()
            .nth(MAX_SLUG)
            .map_or(slug.len(), |(i, _)| i);
        let at_word = if slug[cut..].starts_with('_') {
            cut
        } else {
            slug[..cut].rfind('_').unwrap_or(cut)
        };
        slug.truncate(at_word);
        while slug.ends_with('_') {
            slug.pop();
        }
    }
    slug
}

/// `elems` as text, when each is a `u8` of printable ASCII or whitespace (and there is one).
fn printable_bytes(elems: &[Value]) -> Option<String> {
    let text: Option<String> = elems
        .iter()
        .map(|e| match e {
            Value::Uint { ty, value } if ty == "u8" => u8::try_from(*value)
                .ok()
                .filter(|b| b.is_ascii_graphic() || b.is_ascii_whitespace())
                .map(char::from),
            _ => None,
        })
        .collect();
    text.filter(|t| !t.is_empty())
}

fn float_slug(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "infinity"
        } else {
            "minus_infinity"
        }
        .to_string();
    }
    let repr = format!("{x:?}");
    let mut out = String::new();
    for c in repr.chars() {
        match c {
            '-' => out.push_str("minus_"),
            '.' => out.push('_'),
            'e' => out.push_str("e_"),
            c if c.is_ascii_digit() => out.push(c),
            _ => {}
        }
    }
    out.replace("e__", "e_")
}

fn char_slug(c: char) -> String {
    if c.is_ascii_alphanumeric() {
        return c.to_ascii_lowercase().to_string();
    }
    let name = match c {
        '*' => "star",
        '+' => "plus",
        '-' => "minus",
        '/' => "slash",
        '\\' => "backslash",
        '%' => "percent",
        '(' => "open_paren",
        ')' => "close_paren",
        '[' => "open_bracket",
        ']' => "close_bracket",
        '{' => "open_brace",
        '}' => "close_brace",
        '<' => "less",
        '>' => "greater",
        '=' => "equals",
        '!' => "bang",
        '?' => "question",
        '.' => "dot",
        ',' => "comma",
        ':' => "colon",
        ';' => "semicolon",
        '_' => "underscore",
        '\'' => "quote",
        '"' => "double_quote",
        '&' => "amp",
        '|' => "pipe",
        '^' => "caret",
        '#' => "hash",
        '@' => "at",
        '$' => "dollar",
        '~' => "tilde",
        '`' => "backtick",
        ' ' => "space",
        '\n' => "newline",
        '\t' => "tab",
        '\r' => "carriage_return",
        '\0' => "nul",
        _ => return format!("u{:x}", u32::from(c)),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::Field;

    #[test]
    fn camel_case_splits_into_words_but_a_capital_ending_a_word_stays_in_it() {
        assert_eq!(snake_words("SmallVec"), "small_vec");
        assert_eq!(snake_words("IpV4"), "ip_v4");
        assert_eq!(snake_words("parseURL"), "parse_url");
        // bytesize's units: `ki_b` read as two words before.
        assert_eq!(snake_words("1.0 KiB"), "1_0_kib");
        assert_eq!(snake_words("3 kB/s"), "3_kb_s");
    }

    #[test]
    fn paths_are_named_by_their_file_name_so_temporary_directories_never_show() {
        let path = |ty: &str, text: &str| Value::Str {
            ty: ty.into(),
            value: text.into(),
            truncated: false,
        };
        assert_eq!(
            value_slug(&path("std::path::PathBuf", "/tmp/.tmpzvYbEE/ping")),
            "ping"
        );
        assert_eq!(
            value_slug(&path("&std::path::Path", "src/lib.rs")),
            "lib_rs"
        );
        assert_eq!(value_slug(&path("&std::path::Path", "/")), "root");
        // Text that is no path keeps all its words.
        assert_eq!(value_slug(&path("&str", "src/lib.rs")), "src_lib_rs");
    }

    #[test]
    fn a_struct_whose_first_field_is_a_flag_is_named_by_the_field_too() {
        let record = |name: &str, value: Value| Value::Struct {
            ty: "k::S".into(),
            fields: vec![Field::new(name, value)],
        };
        let flag = record("case_sensitive", Value::Bool { value: true });
        assert_eq!(value_slug(&flag), "case_sensitive_true");
        let text = Value::Str {
            ty: "alloc::string::String".into(),
            value: "Gandhi".into(),
            truncated: false,
        };
        assert_eq!(value_slug(&record("name", text)), "gandhi");
        // A tuple struct's field has no name to give (`__0`, as DWARF names it).
        assert_eq!(
            value_slug(&record("0", Value::Bool { value: false })),
            "false"
        );
        assert_eq!(
            value_slug(&record("__0", Value::Bool { value: true })),
            "true"
        );
        // A number names a struct alone, as before (`big_returns_8`, not `big_returns_a_8`).
        let size = Value::Uint {
            ty: "u64".into(),
            value: 512_000,
        };
        assert_eq!(value_slug(&record("bytes", size)), "512000");
    }

    #[test]
    fn a_value_checked_by_its_variant_alone_is_named_by_its_variants_alone() {
        let serial = Value::Struct {
            ty: "k::Serial".into(),
            fields: vec![Field::new(
                "__0",
                Value::Uint {
                    ty: "u32".into(),
                    value: 5,
                },
            )],
        };
        let drawn = Value::Enum {
            ty: "k::Ticket".into(),
            variant: "Drawn".into(),
            fields: vec![Field::new("__0", serial)],
        };
        assert_eq!(value_slug(&drawn), "drawn_5");
        assert_eq!(variant_slug(&drawn), "drawn");
        let some = Value::Enum {
            ty: "core::option::Option<k::Ticket>".into(),
            variant: "Some".into(),
            fields: vec![Field::new("__0", drawn)],
        };
        assert_eq!(variant_slug(&some), "some_drawn");
    }

    #[test]
    fn values_become_short_slugs() {
        let int = |value| Value::Int {
            ty: "i32".into(),
            value,
        };
        let float = |x: f64| Value::Float {
            ty: "f64".into(),
            bits: x.to_bits(),
        };
        let text = |s: &str| Value::Str {
            ty: "&str".into(),
            value: s.into(),
            truncated: false,
        };
        assert_eq!(value_slug(&int(2)), "2");
        assert_eq!(value_slug(&int(-5)), "minus_5");
        assert_eq!(value_slug(&float(3.5)), "3_5");
        assert_eq!(value_slug(&float(-0.25)), "minus_0_25");
        assert_eq!(value_slug(&float(1e-7)), "1e_minus_7");
        assert_eq!(value_slug(&float(f64::NAN)), "nan");
        assert_eq!(value_slug(&Value::Char { value: '*' }), "star");
        assert_eq!(value_slug(&Value::Char { value: 'Q' }), "q");
        assert_eq!(value_slug(&Value::Char { value: '✓' }), "u2713");
        assert_eq!(value_slug(&Value::Bool { value: true }), "true");
        assert_eq!(value_slug(&text("Hello, World!")), "hello_world");
        assert_eq!(value_slug(&text("")), "empty");
        assert_eq!(value_slug(&text("?!")), "text");
        let bytes = |b: &[u8]| Value::Seq {
            ty: "[u8]".into(),
            elems: b
                .iter()
                .map(|b| Value::Uint {
                    ty: "u8".into(),
                    value: u128::from(*b),
                })
                .collect(),
            truncated: false,
        };
        assert_eq!(value_slug(&bytes(b"ls -la /tmp")), "ls_la_tmp");
        assert_eq!(value_slug(&bytes(&[0, 159])), "value");
        assert_eq!(value_slug(&bytes(b"")), "value");
        assert!(value_slug(&text(&"long words ".repeat(20))).len() <= MAX_SLUG);
        // Cut between words, not inside one.
        assert_eq!(
            value_slug(&text("alpha beta gamma delta epsilon")),
            "alpha_beta_gamma_delta"
        );
    }
}
