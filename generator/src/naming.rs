//! Test and file names: behaviour-describing, sanitized, unique.
//!
//! A test is named after what it shows (`precedence_returns_2`); when two tests of one file
//! would get the same name the arguments join in (`apply_mul_2_3_returns_6`), and a numeric
//! suffix settles what is left. Every name is a plain lowercase snake identifier, whatever the
//! recorded DWARF names contained.

use std::collections::{BTreeMap, BTreeSet};

use carve_storage::Value;

use crate::syntax::KEYWORDS;

/// Longest generated identifier, before any numeric suffix.
const MAX_IDENT: usize = 72;
/// Longest slug of one value.
const MAX_SLUG: usize = 24;

/// Lowercase snake identifier made of `[a-z0-9_]`, not starting with a digit, not a keyword,
/// never empty.
pub fn sanitize_ident(raw: &str) -> String {
    let mut out = snake_words(raw);
    if out.len() > MAX_IDENT {
        out = whole_words(&out, MAX_IDENT);
    }
    if out.is_empty() {
        out.push_str("carved");
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "n_");
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// `raw` lowered to `[a-z0-9]` words joined by single underscores (possibly empty).
fn snake_words(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut pending_sep = false;
    let mut prev_lower = false;
    for c in raw.chars() {
        if c.is_ascii_alphanumeric() {
            // `CamelCase` → `camel_case`.
            if c.is_ascii_uppercase() && prev_lower {
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

/// `carved_<crate>_<module>.rs`, only `[a-z0-9_]` before the extension. A stem over 180
/// bytes is cut and ends in a hash of the whole (`_` + 16 hex digits, FNV-1a: the same on
/// every run and platform), so the name, a clash suffix and the temporary name `write.rs`
/// derives from it stay under the file systems' 255-byte limit.
pub fn file_name(module_path: &[String]) -> String {
    const MAX_STEM: usize = 180;
    let joined = module_path.join("_");
    let mut stem = snake_words(&joined.replace('_', " "));
    if stem.is_empty() {
        stem.push_str("crate");
    }
    if stem.len() > MAX_STEM {
        let hash = stem.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        stem.truncate(MAX_STEM - 17); // ASCII only: any byte is a character boundary
        stem = format!("{}_{hash:016x}", stem.trim_end_matches('_'));
    }
    format!("carved_{stem}.rs")
}

/// Longest recorded target name a file name carries.
const MAX_TARGET: usize = 48;

/// The file-name prefix of the tests carved from `program` for crate `crate_name`:
/// `carved_it_` for a cargo test binary (`target/debug/deps/it-0123456789abcdef`, its
/// `-HASH` dropped), an example or a binary not named after the crate, so the tests carved from
/// two targets live side by side; `None` (plain `carved_`) for the crate's own binary or its
/// unit tests.
pub fn target_prefix(program: &str, crate_name: &str) -> Option<String> {
    let name = std::path::Path::new(program).file_name()?.to_string_lossy();
    let name = match name.rsplit_once('-') {
        Some((stem, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            stem
        }
        _ => &name,
    };
    let mut target = snake_words(name);
    if target.is_empty() || target == snake_words(crate_name) {
        return None;
    }
    target.truncate(MAX_TARGET); // ASCII only
    Some(format!("carved_{}_", target.trim_end_matches('_')))
}

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

/// The words of snake identifier `name` that fit in `max` bytes, the name never cut inside a
/// word (`origin_returns_tuple_https_when_..._debug`, not `..._debug_sch`) nor ending on a word
/// that joins its parts (`_returns`, `_when`): a cut word reads as a typo and a dangling joint
/// as a sentence cut short. A first word longer than `max` is cut at `max`.
fn whole_words(name: &str, max: usize) -> String {
    const JOINTS: &[&str] = &["returns", "when", "with", "after"];
    if name.len() <= max {
        return name.to_string();
    }
    let mut out = if name.as_bytes()[max] == b'_' {
        name[..max].to_string()
    } else {
        match name[..max].rfind('_') {
            Some(at) if at > 0 => name[..at].to_string(),
            _ => name[..max].to_string(),
        }
    };
    while let Some((head, last)) = out.rsplit_once('_') {
        if !JOINTS.contains(&last) || head.is_empty() {
            break;
        }
        out.truncate(head.len());
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
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

/// What a test name is made of.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct NameParts {
    /// The function, prefixed with its type for associated functions (`parser_precedence`).
    pub subject: String,
    /// One slug per argument.
    pub args: Vec<String>,
    /// Slug of the return value; `None` for `()`.
    pub ret: Option<String>,
    /// The call panicked (`question_panics`).
    pub panics: bool,
    /// What else the outcome depended on, for telling apart tests that call the same function
    /// with the same arguments: a mock's first answer (`next_u32_returns_7`) or the receiver's
    /// state (`pos_5`).
    pub when: Option<String>,
    /// How many steps the arrangement takes on the objects before the call (`let _ =
    /// replace.equal(..)`), for telling apart tests that differ only in the history behind
    /// their receiver (`finish_returns_ok_after_11_steps`).
    pub steps: usize,
}

impl NameParts {
    fn base(&self) -> String {
        if self.panics {
            return format!("{}_panics", self.subject);
        }
        match &self.ret {
            Some(ret) => format!("{}_returns_{ret}", self.subject),
            None if self.args.is_empty() => format!("{}_runs", self.subject),
            None => format!("{}_with_{}", self.subject, self.args.join("_")),
        }
    }

    fn with_args(&self) -> String {
        if self.panics && !self.args.is_empty() {
            return format!("{}_{}_panics", self.subject, self.args.join("_"));
        }
        match &self.ret {
            Some(ret) if !self.args.is_empty() => {
                format!("{}_{}_returns_{ret}", self.subject, self.args.join("_"))
            }
            _ => self.base(),
        }
    }

    fn with_when(&self) -> String {
        match &self.when {
            Some(when) => format!("{}_when_{when}", self.with_args()),
            None => self.with_args(),
        }
    }

    fn with_steps(&self) -> String {
        match self.steps {
            1 => format!("{}_after_1_step", self.with_when()),
            n => format!("{}_after_{n}_steps", self.with_when()),
        }
    }
}

/// `VersionedSet` → `versioned_set`.
pub fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Unique, sanitized test names for the tests of one file, in the order given.
pub fn test_names(parts: &[NameParts]) -> Vec<String> {
    let bases: Vec<String> = parts.iter().map(|p| sanitize_ident(&p.base())).collect();
    let mut base_counts: BTreeMap<&str, usize> = BTreeMap::new();
    for b in &bases {
        *base_counts.entry(b).or_default() += 1;
    }
    let with_args: Vec<String> = parts
        .iter()
        .zip(&bases)
        .map(|(p, b)| {
            if base_counts.get(b.as_str()).copied().unwrap_or(0) > 1 {
                sanitize_ident(&p.with_args())
            } else {
                b.clone()
            }
        })
        .collect();
    // Still the same name: say what else the outcome depended on.
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for name in &with_args {
        *counts.entry(name).or_default() += 1;
    }
    let wanted: Vec<String> = parts
        .iter()
        .zip(&with_args)
        .map(|(p, name)| {
            if counts.get(name.as_str()).copied().unwrap_or(0) > 1 {
                sanitize_ident(&p.with_when())
            } else {
                name.clone()
            }
        })
        .collect();
    // Still the same name, and the arrangements differ in length: say how long each is.
    let mut steps: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
    for (p, name) in parts.iter().zip(&wanted) {
        steps.entry(name).or_default().insert(p.steps);
    }
    let wanted: Vec<String> = parts
        .iter()
        .zip(&wanted)
        .map(|(p, name)| {
            if steps.get(name.as_str()).is_some_and(|s| s.len() > 1) {
                sanitize_ident(&p.with_steps())
            } else {
                name.clone()
            }
        })
        .collect();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::with_capacity(wanted.len());
    for name in wanted {
        let mut candidate = name.clone();
        let mut n = 2;
        while taken.contains(&candidate) {
            candidate = format!("{name}_{n}");
            n += 1;
        }
        taken.insert(candidate.clone());
        out.push(candidate);
    }
    out
}

/// `base`, or `base_2`, `base_3` … the first not in `taken`, which it joins: a name apart from
/// the others of a file.
pub(crate) fn apart(base: String, taken: &mut std::collections::BTreeSet<String>) -> String {
    let mut name = base.clone();
    let mut n = 1;
    while taken.contains(&name) {
        n += 1;
        name = format!("{base}_{n}");
    }
    taken.insert(name.clone());
    name
}

/// The type of a table's first column as a word of a name (`u64`, `i16`, `str` for `&str`),
/// when it is a primitive: what tells apart the tables of a generic function's instances
/// (itoa's `Buffer::format` on `u64` and on `i16`: `format_u64_recorded_cases`, not
/// `format_recorded_cases_2`).
pub(crate) fn column_type_word(columns: &[String]) -> Option<&'static str> {
    const PRIMITIVES: &[&str] = &[
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "f32", "f64", "bool", "char", "str",
    ];
    let first = columns.first()?.trim_start_matches('&').trim();
    PRIMITIVES.iter().copied().find(|p| *p == first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::Field;

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
    fn a_long_name_is_cut_between_words_and_not_after_a_joint() {
        // url's `origin()` on `https://[::1]:3000/api?debug`, named by its receiver's state.
        let name =
            "origin_returns_tuple_https_when_serialization_https_1_3000_api_debug_scheme_end_5";
        let cut = sanitize_ident(name);
        assert_eq!(
            cut,
            "origin_returns_tuple_https_when_serialization_https_1_3000_api_debug"
        );
        assert!(cut.len() <= MAX_IDENT);
        // Cut after `returns`, the joint goes too.
        let joint = "connectivity_detector_new_fake_ping_sh_unreachable_invalid_returns_connectivity_detector";
        assert_eq!(
            sanitize_ident(joint),
            "connectivity_detector_new_fake_ping_sh_unreachable_invalid"
        );
        // One word longer than the limit is cut inside it: there is no other place.
        assert_eq!(sanitize_ident(&"x".repeat(500)).len(), MAX_IDENT);
    }

    #[test]
    fn type_names_become_snake_case() {
        assert_eq!(snake_case("VersionedSet"), "versioned_set");
        assert_eq!(snake_case("Evaluator"), "evaluator");
        assert_eq!(snake_case("io"), "io");
    }

    fn parts(subject: &str, args: &[&str], ret: Option<&str>) -> NameParts {
        NameParts {
            panics: false,
            subject: subject.to_string(),
            args: args.iter().map(|s| s.to_string()).collect(),
            ret: ret.map(str::to_string),
            when: None,
            steps: 0,
        }
    }

    #[test]
    fn identifiers_are_lowercase_snake_without_odd_characters() {
        assert_eq!(sanitize_ident("{{closure}}"), "closure");
        assert_eq!(sanitize_ident("../etc/passwd"), "etc_passwd");
        assert_eq!(
            sanitize_ident("<abc::A as abc::Answerer>::answer"),
            "abc_a_as_abc_answerer_answer"
        );
        assert_eq!(sanitize_ident("ParseNumber"), "parse_number");
        assert_eq!(sanitize_ident("3d"), "n_3d");
        assert_eq!(sanitize_ident("type"), "type_");
        assert_eq!(sanitize_ident(""), "carved");
        assert_eq!(sanitize_ident("héllo"), "h_llo");
        assert!(sanitize_ident(&"x".repeat(500)).len() <= MAX_IDENT);
    }

    #[test]
    fn a_target_not_named_after_the_crate_prefixes_its_files() {
        let prefix = |program: &str| target_prefix(program, "carve_cargo");
        assert_eq!(
            prefix("/p/target/debug/deps/it-c802670fa26ab638").as_deref(),
            Some("carved_it_")
        );
        assert_eq!(
            prefix("/p/target/debug/examples/Tour-Two").as_deref(),
            Some("carved_tour_two_")
        );
        // The crate's own binary (`-` or `_`) and its unit tests keep the plain name.
        assert_eq!(prefix("/p/target/debug/carve-cargo"), None);
        assert_eq!(
            prefix("/p/target/debug/deps/carve_cargo-0123456789abcdef"),
            None
        );
        // Only cargo's 16-hex-digit hash is dropped.
        assert_eq!(
            prefix("/p/bin/carve_cargo-v2").as_deref(),
            Some("carved_carve_cargo_v2_")
        );
        assert_eq!(prefix("/"), None);
        let long = prefix(&"x".repeat(300)).unwrap();
        assert!(long.len() <= MAX_TARGET + "carved__".len(), "{long}");
    }

    #[test]
    fn file_names_never_contain_separators_or_dots() {
        let odd = [
            "expr".to_string(),
            "..".to_string(),
            "a/b".to_string(),
            "<T>".to_string(),
        ];
        let name = file_name(&odd);
        assert_eq!(name, "carved_expr_a_b_t.rs");
        assert_eq!(
            file_name(&["expr".to_string(), "lexer".to_string()]),
            "carved_expr_lexer.rs"
        );
        assert_eq!(file_name(&["my_crate".to_string()]), "carved_my_crate.rs");
        assert_eq!(file_name(&[]), "carved_crate.rs");
        let stem = name.trim_end_matches(".rs");
        assert!(stem
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'));
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

    #[test]
    fn names_say_what_the_function_returned() {
        let names = test_names(&[
            parts("precedence", &["star"], Some("2")),
            parts("is_operator", &["plus"], Some("true")),
            parts("reset", &[], None),
            parts("log", &["hi"], None),
        ]);
        assert_eq!(
            names,
            [
                "precedence_returns_2",
                "is_operator_returns_true",
                "reset_runs",
                "log_with_hi"
            ]
        );
    }

    #[test]
    fn clashing_names_take_their_arguments_then_a_number() {
        let names = test_names(&[
            parts("apply", &["mul", "2", "3"], Some("6")),
            parts("apply", &["add", "3", "3"], Some("6")),
            parts("apply", &["add", "1", "2"], Some("3")),
            parts("upper", &["A"], Some("a")),
            parts("upper", &["a"], Some("a")),
        ]);
        assert_eq!(
            names,
            [
                "apply_mul_2_3_returns_6",
                "apply_add_3_3_returns_6",
                "apply_returns_3",
                "upper_a_returns_a",
                "upper_a_returns_a_2",
            ]
        );
    }

    #[test]
    fn names_still_clashing_say_what_else_the_outcome_depended_on() {
        let when = |ret: &str, when: &str| NameParts {
            when: Some(when.to_string()),
            ..parts("roll", &[], Some(ret))
        };
        let names = test_names(&[
            when("2", "next_u32_returns_7"),
            when("2", "next_u32_returns_13"),
            when("5", "next_u32_returns_4"),
        ]);
        assert_eq!(
            names,
            [
                "roll_returns_2_when_next_u32_returns_7",
                "roll_returns_2_when_next_u32_returns_13",
                "roll_returns_5",
            ]
        );
    }

    #[test]
    fn names_still_clashing_say_how_long_the_arrangement_is() {
        let steps = |n: usize| NameParts {
            steps: n,
            ..parts("finish", &[], Some("ok"))
        };
        let names = test_names(&[steps(11), steps(1), steps(1), steps(0)]);
        assert_eq!(
            names,
            [
                "finish_returns_ok_after_11_steps",
                "finish_returns_ok_after_1_step",
                "finish_returns_ok_after_1_step_2",
                "finish_returns_ok_after_0_steps",
            ]
        );
        // Arrangements of one length: nothing to say.
        let same = test_names(&[steps(2), steps(2)]);
        assert_eq!(same, ["finish_returns_ok", "finish_returns_ok_2"]);
    }
}
