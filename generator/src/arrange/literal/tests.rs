//! The literal rules, case by case.

use super::*;
use crate::arrange::literal::scalar::f64_literal;
use crate::read::types::Shape;
use carve_storage::{Field, Value};

fn arg(value: &Value, ty: &str) -> Result<String, LiteralError> {
    render(
        value,
        &DeclType::parse(ty, &["T".to_string()]),
        Position::Arg,
    )
}

fn expected(value: &Value, ty: &str) -> Result<String, LiteralError> {
    render(
        value,
        &DeclType::parse(ty, &["T".to_string()]),
        Position::Expected,
    )
}

#[test]
fn paths_are_written_with_their_constructor_only_where_their_type_fits_and_exact() {
    let path = |ty: &str, truncated| Value::Str {
        ty: ty.into(),
        value: "a/b".into(),
        truncated,
    };
    assert_eq!(
        arg(&path("&std::path::Path", false), "&Path").unwrap(),
        "std::path::Path::new(\"a/b\")"
    );
    assert_eq!(
        arg(&path("std::path::PathBuf", false), "T").unwrap(),
        "std::path::PathBuf::from(\"a/b\")"
    );
    assert_eq!(
        expected(&path("std::ffi::os_str::OsString", false), "OsString").unwrap(),
        "std::ffi::OsString::from(\"a/b\")"
    );
    // Cut short (bytes that are not UTF-8): not exact, never written.
    assert!(matches!(
        arg(&path("&std::path::Path", true), "&Path"),
        Err(LiteralError::Undecoded)
    ));
    // A declared `&str` or `String` takes no path.
    assert!(arg(&path("&std::path::Path", false), "&str").is_err());
    assert!(arg(&path("std::path::PathBuf", false), "String").is_err());
}

fn s(text: &str) -> Value {
    Value::Str {
        ty: "&str".to_string(),
        value: text.to_string(),
        truncated: false,
    }
}

fn int(ty: &str, value: i128) -> Value {
    Value::Int {
        ty: ty.to_string(),
        value,
    }
}

fn uint(ty: &str, value: u128) -> Value {
    Value::Uint {
        ty: ty.to_string(),
        value,
    }
}

fn f64v(x: f64) -> Value {
    Value::Float {
        ty: "f64".to_string(),
        bits: x.to_bits(),
    }
}

fn f32v(x: f32) -> Value {
    Value::Float {
        ty: "f32".to_string(),
        bits: u64::from(x.to_bits()),
    }
}

/// Parses the literal back as Rust and checks it is an expression.
fn parses(src: &str) -> bool {
    syn::parse_str::<syn::Expr>(src).is_ok()
}

#[test]
fn strings_are_escaped_like_rust_source() {
    let cases = [
        ("plain", r#""plain""#),
        ("say \"hi\"", r#""say \"hi\"""#),
        ("line\nbreak\ttab", r#""line\nbreak\ttab""#),
        ("back\\slash", r#""back\\slash""#),
        ("héllo ✓", r#""héllo ✓""#),
        ("nul\0", r#""nul\0""#),
    ];
    for (text, want) in cases {
        let got = arg(&s(text), "&str").unwrap();
        assert_eq!(got, want);
        assert!(parses(&got));
    }
}

#[test]
fn string_spelling_follows_the_declared_type() {
    let v = s("abc");
    assert_eq!(arg(&v, "&'a str").unwrap(), r#""abc""#);
    assert_eq!(arg(&v, "String").unwrap(), r#"String::from("abc")"#);
    assert_eq!(
        arg(&v, "std::string::String").unwrap(),
        r#"String::from("abc")"#
    );
    assert_eq!(arg(&v, "&String").unwrap(), r#"&String::from("abc")"#);
    assert_eq!(
        arg(&v, "&mut String").unwrap(),
        r#"&mut String::from("abc")"#
    );
    assert_eq!(expected(&v, "String").unwrap(), r#""abc""#);
    assert_eq!(expected(&v, "&String").unwrap(), r#""abc""#);
    let behind_ref = Value::Ref {
        ty: "&alloc::string::String".to_string(),
        addr: 8,
        target: Box::new(Value::Str {
            ty: "alloc::string::String".to_string(),
            value: "abc".to_string(),
            truncated: false,
        }),
    };
    assert_eq!(
        arg(&behind_ref, "&String").unwrap(),
        r#"&String::from("abc")"#
    );
}

#[test]
fn truncated_strings_and_structs_are_undecoded() {
    let truncated = Value::Str {
        ty: "&str".to_string(),
        value: "abc".to_string(),
        truncated: true,
    };
    assert_eq!(arg(&truncated, "&str"), Err(LiteralError::Undecoded));
    let st = Value::Struct {
        ty: "m::P".to_string(),
        fields: vec![],
    };
    assert_eq!(arg(&st, "P"), Err(LiteralError::Undecoded));
}

#[test]
fn chars_are_quoted_and_escaped() {
    for (c, want) in [
        ('x', "'x'"),
        ('\'', r"'\''"),
        ('\n', r"'\n'"),
        ('"', "'\"'"),
        ('é', "'é'"),
    ] {
        let got = arg(&Value::Char { value: c }, "char").unwrap();
        assert_eq!(got, want);
        assert!(parses(&got));
    }
}

#[test]
fn integers_carry_the_declared_suffix_and_extremes_use_constants() {
    assert_eq!(arg(&int("i32", 3), "u32").unwrap(), "3u32");
    assert_eq!(arg(&int("i64", -5), "i64").unwrap(), "-5i64");
    assert_eq!(arg(&int("i128", i128::MIN), "i128").unwrap(), "i128::MIN");
    assert_eq!(arg(&int("i128", i128::MAX), "i128").unwrap(), "i128::MAX");
    assert_eq!(
        arg(&uint("u64", u64::MAX.into()), "u64").unwrap(),
        "u64::MAX"
    );
    assert_eq!(arg(&uint("u128", u128::MAX), "u128").unwrap(), "u128::MAX");
    assert_eq!(arg(&int("i8", -128), "i8").unwrap(), "i8::MIN");
    assert_eq!(arg(&uint("u8", 255), "u8").unwrap(), "255u8");
    assert_eq!(arg(&uint("usize", 7), "usize").unwrap(), "7usize");
    assert_eq!(arg(&int("int", -1), "i32").unwrap(), "-1i32");
}

#[test]
fn integers_that_do_not_fit_the_declared_type_are_refused() {
    assert!(matches!(
        arg(&int("i32", -1), "u32"),
        Err(LiteralError::UnsupportedType(_))
    ));
    assert!(matches!(
        arg(&uint("u32", 300), "u8"),
        Err(LiteralError::UnsupportedType(_))
    ));
    assert!(matches!(
        arg(&int("i32", 1), "bool"),
        Err(LiteralError::UnsupportedType(_))
    ));
}

#[test]
fn floats_round_trip_bit_exactly() {
    assert_eq!(arg(&f64v(0.1), "f64").unwrap(), "0.1f64");
    assert_eq!(arg(&f64v(2.5), "f64").unwrap(), "2.5f64");
    assert_eq!(arg(&f64v(-0.0), "f64").unwrap(), "-0.0f64");
    assert_eq!(arg(&f64v(1e300), "f64").unwrap(), "1e300f64");
    assert_eq!(arg(&f64v(f64::NAN), "f64").unwrap(), "f64::NAN");
    // Another NaN (ryu's tests format NaNs with payloads) keeps its bits.
    let payload = f64::from_bits(0x7ff0_0000_2000_0000);
    assert_eq!(
        arg(&f64v(payload), "f64").unwrap(),
        "f64::from_bits(0x7ff0000020000000)"
    );
    assert_eq!(
        arg(&f64v(-f64::NAN), "f64").unwrap(),
        "f64::from_bits(0xfff8000000000000)"
    );
    assert_eq!(
        arg(&f32v(f32::from_bits(0x7fc0_0001)), "f32").unwrap(),
        "f32::from_bits(0x7fc00001)"
    );
    assert_eq!(arg(&f64v(f64::INFINITY), "f64").unwrap(), "f64::INFINITY");
    assert_eq!(
        arg(&f64v(f64::NEG_INFINITY), "f64").unwrap(),
        "f64::NEG_INFINITY"
    );
    assert_eq!(arg(&f32v(0.1), "f32").unwrap(), "0.1f32");
    assert_eq!(arg(&f32v(-1.5e-40), "f32").unwrap(), "-1.5e-40f32");
    for x in [
        0.1,
        -0.0,
        1e300,
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        1.0 / 3.0,
    ] {
        let lit = f64_literal(x);
        let digits = lit.trim_end_matches("f64");
        assert_eq!(
            digits.parse::<f64>().unwrap().to_bits(),
            x.to_bits(),
            "{lit}"
        );
        assert!(parses(&lit));
    }
    assert!(matches!(
        arg(&f64v(1.0), "f32"),
        Err(LiteralError::UnsupportedType(_))
    ));
}

#[test]
fn nan_is_detected_through_references() {
    assert!(is_nan(&f64v(f64::NAN)));
    assert!(is_nan(&f32v(f32::NAN)));
    assert!(!is_nan(&f64v(1.0)));
    let r = Value::Ref {
        ty: "&f64".to_string(),
        addr: 1,
        target: Box::new(f64v(f64::NAN)),
    };
    assert!(is_nan(&r));
}

#[test]
fn generic_parameters_use_the_recorded_type() {
    assert_eq!(arg(&int("i64", 4), "T").unwrap(), "4i64");
    assert!(matches!(
        arg(&int("u32", 4), "NonZeroU32"),
        Err(LiteralError::UnsupportedType(_))
    ));
    let boxed = Value::Ref {
        ty: "alloc::boxed::Box<i32>".to_string(),
        addr: 1,
        target: Box::new(int("i32", 1)),
    };
    assert!(matches!(
        arg(&boxed, "Box<i32>"),
        Err(LiteralError::UnsupportedType(_))
    ));
    assert!(matches!(
        arg(&boxed, "T"),
        Err(LiteralError::UnsupportedType(_))
    ));
    assert_eq!(arg(&s("x"), "impl AsRef<str>").unwrap(), r#""x""#);
    assert_eq!(arg(&int("i32", 4), "&T").unwrap(), "&4i32");
    assert!(matches!(
        arg(&int("int", 4), "T"),
        Err(LiteralError::UnsupportedType(_))
    ));
}

#[test]
fn references_to_scalars_take_an_ampersand() {
    let r = Value::Ref {
        ty: "&i32".to_string(),
        addr: 1,
        target: Box::new(int("i32", 9)),
    };
    assert_eq!(arg(&r, "&i32").unwrap(), "&9i32");
    assert_eq!(arg(&r, "&mut i32").unwrap(), "&mut 9i32");
    assert_eq!(expected(&r, "&i32").unwrap(), "&9i32");
    assert_eq!(arg(&Value::Bool { value: true }, "&bool").unwrap(), "&true");
}

/// Knows no type of any crate.
struct NoTypes;

impl TypeFacts for NoTypes {
    fn shape(&self, _: &str) -> Option<Shape> {
        None
    }
}

#[test]
fn an_ordering_is_written_by_its_public_path() {
    let less = Value::Enum {
        ty: "core::cmp::Ordering".into(),
        variant: "Less".into(),
        fields: vec![],
    };
    assert_eq!(
        render_value(&less, true, &NoTypes).unwrap(),
        "std::cmp::Ordering::Less"
    );
}

#[test]
fn slice_iterators_their_adapters_and_a_fresh_split_are_written_as_a_program_makes_them() {
    let field = |name: &str, value: Value| Field {
        name: name.into(),
        value,
    };
    let iter = |ty: &str, elems: Vec<Value>| Value::Seq {
        ty: format!("core::slice::iter::Iter<{ty}>"),
        elems,
        truncated: false,
    };
    let copied = Value::Struct {
        ty: "core::iter::adapters::copied::Copied<core::slice::iter::Iter<u8>>".into(),
        fields: vec![field(
            "it",
            iter("u8", vec![uint("u8", 62), uint("u8", 62)]),
        )],
    };
    let got = render_value(&copied, false, &NoTypes).unwrap();
    assert_eq!(got, "[62u8, 62u8].iter().copied()");
    assert!(parses(&got));
    // Never an expected value: an iterator has no `PartialEq`.
    assert!(render_value(&copied, true, &NoTypes).is_err());
    let vec_iter = |elems: Vec<Value>| Value::Seq {
        ty: "alloc::vec::into_iter::IntoIter<i16, alloc::alloc::Global>".into(),
        elems,
        truncated: false,
    };
    let got = render_value(
        &vec_iter(vec![int("i16", -3), int("i16", 7)]),
        false,
        &NoTypes,
    );
    assert_eq!(got.unwrap(), "vec![-3i16, 7i16].into_iter()");
    assert_eq!(
        render_value(&vec_iter(vec![]), false, &NoTypes).unwrap(),
        "Vec::<i16>::new().into_iter()"
    );
    assert!(render_value(&vec_iter(vec![]), true, &NoTypes).is_err());
    let cloned = Value::Struct {
        ty: "core::iter::adapters::cloned::Cloned<core::slice::iter::Iter<i64>>".into(),
        fields: vec![field("it", iter("i64", vec![]))],
    };
    assert_eq!(
        render_value(&cloned, false, &NoTypes).unwrap(),
        "([] as [i64; 0]).iter().cloned()"
    );
    let split = |start: u128, finished: bool| Value::Struct {
        ty: "core::str::iter::Split<char>".into(),
        fields: vec![field(
            "__0",
            Value::Struct {
                ty: "core::str::iter::SplitInternal<char>".into(),
                fields: vec![
                    field("start", uint("usize", start)),
                    field("end", uint("usize", 3)),
                    field(
                        "matcher",
                        Value::Struct {
                            ty: "core::str::pattern::CharSearcher".into(),
                            fields: vec![
                                field(
                                    "haystack",
                                    Value::Str {
                                        ty: "&str".into(),
                                        value: "a b".into(),
                                        truncated: false,
                                    },
                                ),
                                field("finger", uint("usize", start)),
                                field("finger_back", uint("usize", 3)),
                                field("needle", Value::Char { value: ' ' }),
                            ],
                        },
                    ),
                    field("allow_trailing_empty", Value::Bool { value: true }),
                    field("finished", Value::Bool { value: finished }),
                ],
            },
        )],
    };
    assert_eq!(
        render_value(&split(0, false), false, &NoTypes).unwrap(),
        "\"a b\".split(' ')"
    );
    // One that has moved on, or finished, is no fresh split of its text.
    assert!(render_value(&split(2, false), false, &NoTypes).is_err());
    assert!(render_value(&split(0, true), false, &NoTypes).is_err());
}

#[test]
fn std_values_with_private_representations_use_their_public_constructor() {
    let field = |name: &str, value: Value| Field {
        name: name.into(),
        value,
    };
    let nonzero = Value::Struct {
        ty: "core::num::nonzero::NonZero<usize>".into(),
        fields: vec![field(
            "__0",
            Value::Struct {
                ty: "core::num::niche_types::NonZeroUsizeInner".into(),
                fields: vec![field("__0", uint("usize", 8))],
            },
        )],
    };
    let got = render_value(&nonzero, true, &NoTypes).unwrap();
    assert_eq!(got, "std::num::NonZero::<usize>::new(8usize).unwrap()");
    assert!(parses(&got));
    let duration = Value::Struct {
        ty: "core::time::Duration".into(),
        fields: vec![
            field("secs", uint("u64", 3)),
            field(
                "nanos",
                Value::Struct {
                    ty: "core::num::niche_types::Nanoseconds".into(),
                    fields: vec![field("__0", uint("u32", 5))],
                },
            ),
        ],
    };
    assert_eq!(
        render_value(&duration, true, &NoTypes).unwrap(),
        "std::time::Duration::new(3u64, 5u32)"
    );
    let range = Value::Struct {
        ty: "core::ops::range::Range<usize>".into(),
        fields: vec![
            field("start", uint("usize", 2)),
            field("end", uint("usize", 5)),
        ],
    };
    assert_eq!(
        render_value(&range, true, &NoTypes).unwrap(),
        "2usize..5usize"
    );
    // Behind a reference, the range keeps its parentheses: `&1..4` is `(&1)..4`.
    let range_ref = Value::Ref {
        ty: "&core::ops::range::Range<usize>".into(),
        addr: 0x1000,
        target: Box::new(range),
    };
    assert_eq!(
        render_value(&range_ref, true, &NoTypes).unwrap(),
        "&(2usize..5usize)"
    );
    // A public `bitflags` type: its hidden inner struct holds the bits.
    struct Flags;
    impl TypeFacts for Flags {
        fn shape(&self, path: &str) -> Option<Shape> {
            (path == "md::Options").then(Shape::default)
        }
    }
    let flags = Value::Struct {
        ty: "md::Options".into(),
        fields: vec![field(
            "__0",
            Value::Struct {
                ty: "md::_::InternalBitFlags".into(),
                fields: vec![field("__0", uint("u32", 4095))],
            },
        )],
    };
    assert_eq!(
        render_value(&flags, false, &Flags).unwrap(),
        "md::Options::from_bits_retain(4095u32)"
    );
    assert!(render_value(&flags, false, &NoTypes).is_err());
    // Made by the `bitflags!` macro, so the source syn reads does not show it.
    struct MacroMade;
    impl TypeFacts for MacroMade {
        fn shape(&self, _: &str) -> Option<Shape> {
            None
        }
        fn unseen_type_nameable(&self, path: &str) -> bool {
            path == "md::Options"
        }
    }
    assert_eq!(
        render_value(&flags, false, &MacroMade).unwrap(),
        "md::Options::from_bits_retain(4095u32)"
    );
    // Another crate's `NonZero` is no standard value.
    let other = Value::Struct {
        ty: "mycrate::NonZero".into(),
        fields: vec![field("__0", uint("u8", 1))],
    };
    assert!(render_value(&other, true, &NoTypes).is_err());
}

#[test]
fn sequences_are_written_as_their_recorded_type_and_empty_ones_name_the_element() {
    let bytes = |ty: &str, n: &[u128]| Value::Seq {
        ty: ty.into(),
        elems: n.iter().map(|v| uint("u8", *v)).collect(),
        truncated: false,
    };
    let none = NoTypes;
    let cases = [
        (bytes("&[u8]", &[1, 2]), "&[1u8, 2u8][..]"),
        (bytes("&[u8]", &[]), "&([] as [u8; 0])[..]"),
        (bytes("&mut [u8]", &[7]), "&mut [7u8][..]"),
        (bytes("[u8; 2]", &[1, 2]), "[1u8, 2u8]"),
        (bytes("[u8; 0]", &[]), "([] as [u8; 0])"),
        (
            bytes("alloc::vec::Vec<u8, alloc::alloc::Global>", &[3]),
            "vec![3u8]",
        ),
        (
            bytes("alloc::vec::Vec<u8, alloc::alloc::Global>", &[]),
            "Vec::<u8>::new()",
        ),
        // Text is written as a person writes it: a byte string.
        (bytes("&[u8]", &[71, 69, 84, 10]), "&b\"GET\\n\"[..]"),
        (bytes("&mut [u8]", &[71, 69]), "&mut [71u8, 69u8][..]"),
        (bytes("[u8; 2]", &[34, 92]), "*b\"\\\"\\\\\""),
        (bytes("&[u8; 2]", &[104, 105]), "b\"hi\""),
        (
            bytes("alloc::vec::Vec<u8, alloc::alloc::Global>", &[104, 105]),
            "b\"hi\".to_vec()",
        ),
    ];
    for (value, want) in cases {
        let got = render_value(&value, false, &none).unwrap();
        assert_eq!(got, want);
        assert!(syn::parse_str::<syn::Expr>(&got).is_ok(), "{got}");
    }
}

#[test]
fn empty_collections_name_their_element_types_so_that_they_infer() {
    let seq = |ty: &str, elems: Vec<Value>| Value::Seq {
        ty: ty.into(),
        elems,
        truncated: false,
    };
    let entry = |k: &str, v: u128| Value::Tuple {
        ty: "(alloc::string::String, u32)".into(),
        elems: vec![
            Value::Str {
                ty: "alloc::string::String".into(),
                value: k.into(),
                truncated: false,
            },
            uint("u32", v),
        ],
    };
    let map = "std::collections::hash::map::HashMap<alloc::string::String, u32, \
               std::hash::random::RandomState>";
    let cases = [
        (
            seq(
                "alloc::vec::Vec<alloc::string::String, alloc::alloc::Global>",
                vec![],
            ),
            "Vec::<String>::new()",
        ),
        (
            seq("alloc::vec::Vec<(u8, &str), alloc::alloc::Global>", vec![]),
            "Vec::<(u8, &str)>::new()",
        ),
        (
            seq("&[alloc::string::String]", vec![]),
            "&([] as [String; 0])[..]",
        ),
        (
            seq(map, vec![]),
            "std::collections::HashMap::<String, u32>::new()",
        ),
        (
            seq(map, vec![entry("a", 1)]),
            "std::collections::HashMap::from([(String::from(\"a\"), 1u32)])",
        ),
        (
            seq(
                "alloc::collections::btree::set::BTreeSet<i32, alloc::alloc::Global>",
                vec![],
            ),
            "std::collections::BTreeSet::<i32>::new()",
        ),
        (
            seq(
                "alloc::collections::vec_deque::VecDeque<u8, alloc::alloc::Global>",
                vec![uint("u8", 1), uint("u8", 2)],
            ),
            "std::collections::VecDeque::from([1u8, 2u8])",
        ),
    ];
    for (value, want) in cases {
        for compare in [false, true] {
            let got = render_value(&value, compare, &NoTypes).unwrap();
            assert_eq!(got, want);
            assert!(syn::parse_str::<syn::Expr>(&got).is_ok(), "{got}");
        }
    }
    // Another hasher: neither `from` nor `new` makes it.
    let hasher = seq(
        "std::collections::hash::map::HashMap<u8, u8, ahash::RandomState>",
        vec![],
    );
    assert!(render_value(&hasher, false, &NoTypes).is_err());
    // An element type a test cannot name: untyped as an argument, where the parameter's type
    // decides; never on the right of `==`, where nothing does.
    let private = seq("alloc::vec::Vec<m::Private, alloc::alloc::Global>", vec![]);
    assert_eq!(render_value(&private, false, &NoTypes).unwrap(), "vec![]");
    assert!(render_value(&private, true, &NoTypes).is_err());
    let private_map = seq(
        "alloc::collections::btree::map::BTreeMap<m::Private, u8, alloc::alloc::Global>",
        vec![],
    );
    assert_eq!(
        render_value(&private_map, false, &NoTypes).unwrap(),
        "std::collections::BTreeMap::new()"
    );
    // A public type of the crate without `PartialEq`: named as an argument, not compared.
    struct Public;
    impl TypeFacts for Public {
        fn shape(&self, path: &str) -> Option<Shape> {
            (path == "m::Item").then(Shape::default)
        }
    }
    let items = seq("alloc::vec::Vec<m::Item, alloc::alloc::Global>", vec![]);
    assert_eq!(
        render_value(&items, false, &Public).unwrap(),
        "Vec::<m::Item>::new()"
    );
    assert!(render_value(&items, true, &Public).is_err());
}

#[test]
fn a_generic_enum_s_variant_names_its_recorded_instance() {
    struct Tiny;
    impl TypeFacts for Tiny {
        fn shape(&self, path: &str) -> Option<Shape> {
            (path == "tinyvec::TinyVec").then(Shape::default)
        }
    }
    // `Heap(Vec<A::Item>)` says nothing of the array's length: the instance does.
    let heap = Value::Enum {
        ty: "tinyvec::TinyVec<[i32; 4]>".into(),
        variant: "Heap".into(),
        fields: vec![Field {
            name: "__0".into(),
            value: Value::Seq {
                ty: "alloc::vec::Vec<i32, alloc::alloc::Global>".into(),
                elems: vec![],
                truncated: false,
            },
        }],
    };
    assert_eq!(
        render_value(&heap, false, &Tiny).unwrap(),
        "tinyvec::TinyVec::<[i32; 4]>::Heap(Vec::<i32>::new())"
    );
    // An argument no test can name leaves the instance to inference, as before.
    let private = Value::Enum {
        ty: "tinyvec::TinyVec<m::Private>".into(),
        variant: "Heap".into(),
        fields: vec![],
    };
    assert_eq!(
        render_value(&private, false, &Tiny).unwrap(),
        "tinyvec::TinyVec::Heap"
    );
}

#[test]
fn a_str_behind_two_references_is_a_borrowed_literal() {
    // `impl PartialEq<&str> for Mime`: `fn eq(&self, s: &&str)`.
    let value = Value::Ref {
        ty: "&&str".into(),
        addr: 1,
        target: Box::new(Value::Str {
            ty: "&str".into(),
            value: "a/b".into(),
            truncated: false,
        }),
    };
    assert_eq!(
        render(&value, &DeclType::parse("&&str", &[]), Position::Arg).unwrap(),
        "&\"a/b\""
    );
}

#[test]
fn every_range_a_program_writes_is_a_literal() {
    let field = |name: &str, value: Value| Field {
        name: name.into(),
        value,
    };
    let to_inclusive = Value::Struct {
        ty: "core::ops::range::RangeToInclusive<usize>".into(),
        fields: vec![field("end", uint("usize", 3))],
    };
    assert_eq!(
        render_value(&to_inclusive, true, &NoTypes).unwrap(),
        "..=3usize"
    );
    let full = Value::Struct {
        ty: "core::ops::range::RangeFull".into(),
        fields: vec![],
    };
    assert_eq!(render_value(&full, true, &NoTypes).unwrap(), "..");
}
