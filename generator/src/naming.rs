//! Test and file names: behaviour-describing, sanitized, unique.
//!
//! A test is named after what it shows (`precedence_returns_2`); when two tests of one file
//! would get the same name the arguments join in (`apply_mul_2_3_returns_6`), then what else
//! the outcome depended on, the arrangement's length, the instance's type arguments and the
//! functions the arrangement calls (`marks.rs`), and a numeric suffix settles what is left.
//! Every name is a plain lowercase snake identifier, whatever the recorded DWARF names
//! contained.

use std::collections::{BTreeMap, BTreeSet};

use crate::syntax::KEYWORDS;

mod marks;
mod slug;
pub(crate) use marks::{arranged, instance, without_generics};
use slug::snake_words;
pub use slug::{value_slug, variant_slug};

/// Longest generated identifier, before any numeric suffix.
const MAX_IDENT: usize = 72;
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
    /// The type arguments of the instance called (`u32_8`), for telling apart tests of two
    /// instances of one generic function (`marks.rs`).
    pub instance: Option<String>,
    /// The functions the arrangement calls (`display`, `si`), for telling apart tests that
    /// differ only in how their objects were made (`marks.rs`).
    pub arranged: Vec<String>,
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

    /// `name` with the instance's type arguments: `…_for_u32_8`.
    fn with_instance(&self, name: &str) -> String {
        match &self.instance {
            Some(types) => format!("{name}_for_{types}"),
            None => name.to_string(),
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
    let wanted = where_they_differ(parts, wanted, |p| p.steps, |p, _| p.with_steps());
    let wanted = told_by_marks(parts, wanted);
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

/// `wanted`, each name shared by tests whose `key` differs made again by `again` (given the
/// name so far).
fn where_they_differ<K: Ord>(
    parts: &[NameParts],
    wanted: Vec<String>,
    key: impl Fn(&NameParts) -> K,
    again: impl Fn(&NameParts, &str) -> String,
) -> Vec<String> {
    let mut keys: BTreeMap<&str, BTreeSet<K>> = BTreeMap::new();
    for (p, name) in parts.iter().zip(&wanted) {
        keys.entry(name).or_default().insert(key(p));
    }
    parts
        .iter()
        .zip(&wanted)
        .map(|(p, name)| {
            if keys.get(name.as_str()).is_some_and(|k| k.len() > 1) {
                sanitize_ident(&again(p, name))
            } else {
                name.clone()
            }
        })
        .collect()
}

/// Names still the same told apart by what else the tests' code says (`marks.rs`): the
/// instance's type arguments where they differ, then the functions only some arrangements
/// call (`…_after_si`; `…_after_7_steps_with_extend`).
fn told_by_marks(parts: &[NameParts], wanted: Vec<String>) -> Vec<String> {
    let wanted = where_they_differ(
        parts,
        wanted,
        |p| p.instance.clone(),
        |p, name| p.with_instance(name),
    );
    let mut groups: BTreeMap<&str, Vec<&[String]>> = BTreeMap::new();
    for (p, name) in parts.iter().zip(&wanted) {
        groups.entry(name).or_default().push(&p.arranged);
    }
    parts
        .iter()
        .zip(&wanted)
        .map(|(p, name)| {
            let group = &groups[name.as_str()];
            let own = marks::own(&p.arranged, group);
            if group.len() < 2 || own.is_empty() {
                return name.clone();
            }
            // Once is enough: `…_after_7_steps_with_extend`.
            let joint = if name.contains("_after_") {
                "with"
            } else {
                "after"
            };
            sanitize_ident(&format!("{name}_{joint}_{}", own.join("_")))
        })
        .collect()
}

/// `base`, or `base_2`, `base_3` … the first not in `taken`, which it joins: a name apart from
/// the others of a file.
pub(crate) fn apart(base: String, taken: &mut BTreeSet<String>) -> String {
    let mut name = base.clone();
    let mut n = 1;
    while taken.contains(&name) {
        n += 1;
        name = format!("{base}_{n}");
    }
    taken.insert(name.clone());
    name
}

/// `{stem}_{rest}` apart from `taken`, which it joins; when that is taken, told by the type of
/// the table's first column if it is a primitive (`{stem}_{type}_{rest}`: itoa's
/// `Buffer::format` on `u64` and on `i16`, the instances of a generic function, are
/// `format_u64_recorded_cases`, not `format_recorded_cases_2`), else by a number.
pub(crate) fn apart_by_type(
    stem: &str,
    rest: &str,
    columns: &[String],
    taken: &mut BTreeSet<String>,
) -> String {
    let base = format!("{stem}_{rest}");
    let typed = column_type_word(columns)
        .map(|ty| format!("{stem}_{ty}_{rest}"))
        .filter(|typed| taken.contains(&base) && !taken.contains(typed));
    apart(typed.unwrap_or(base), taken)
}

/// The type of a table's first column as a word of a name (`u64`, `i16`, `str` for `&str`),
/// when it is a primitive.
fn column_type_word(columns: &[String]) -> Option<&'static str> {
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
            instance: None,
            arranged: Vec::new(),
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

    #[test]
    fn names_still_clashing_say_the_instance_then_how_the_objects_were_made() {
        // smallvec's `SmallVec::new()` of two instances.
        let typed = |types: &str| NameParts {
            instance: Some(types.to_string()),
            ..parts("small_vec_new", &[], Some("small_vec"))
        };
        let names = test_names(&[typed("str_4"), typed("u32_8")]);
        assert_eq!(
            names,
            [
                "small_vec_new_returns_small_vec_for_str_4",
                "small_vec_new_returns_small_vec_for_u32_8",
            ]
        );
        // bytesize's `to_string()` of `display()` and of `display().si()`.
        let made = |calls: &[&str]| NameParts {
            arranged: calls.iter().map(|c| c.to_string()).collect(),
            ..parts("to_string", &[], Some("0_b"))
        };
        let names = test_names(&[
            made(&["byte_size", "display"]),
            made(&["byte_size", "display", "si"]),
            made(&["byte_size", "display", "si_short"]),
        ]);
        assert_eq!(
            names,
            [
                "to_string_returns_0_b",
                "to_string_returns_0_b_after_si",
                "to_string_returns_0_b_after_si_short",
            ]
        );
        // A name that says `after` already says it once.
        let stepped = |calls: &[&str]| NameParts {
            steps: 7,
            ..made(calls)
        };
        let names = test_names(&[
            made(&["new"]),
            stepped(&["new", "extend"]),
            stepped(&["new", "try_grow"]),
        ]);
        assert_eq!(
            names,
            [
                "to_string_returns_0_b_after_0_steps",
                "to_string_returns_0_b_after_7_steps_with_extend",
                "to_string_returns_0_b_after_7_steps_with_try_grow",
            ]
        );
        // Arrangements calling the same functions: nothing to say.
        let same = test_names(&[made(&["display"]), made(&["display"])]);
        assert_eq!(same, ["to_string_returns_0_b", "to_string_returns_0_b_2"]);
    }
}
