//! Calls spelled as a person writes them (`generator/src/render/spell/`): one test per spelling
//! rule, each writing a small real crate (a library and the program using it), recording the
//! program through ptrace, carving tests, building and running them with cargo, and checking
//! that they fail once the behaviour they recorded changes.

mod common;

use common::*;

const LIB: &str = r#"
use std::str::FromStr;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl FromStr for Version {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Version, std::num::ParseIntError> {
        let mut parts = s.splitn(3, '.');
        let mut next = || parts.next().unwrap_or("0").parse::<u32>();
        Ok(Version { major: next()?, minor: next()?, patch: next()? })
    }
}

impl Version {
    pub fn bump_minor(&self) -> Version {
        Version { major: self.major, minor: self.minor + 1, patch: 0 }
    }
}

#[derive(Debug, PartialEq)]
pub struct Size(pub u64);

impl FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> Result<Size, String> {
        let n: u64 = s.trim_end_matches('k').parse().map_err(|_| format!("not a size: {s}"))?;
        Ok(Size(if s.ends_with('k') { n * 1024 } else { n }))
    }
}

/// An error a test cannot print.
pub struct Empty;

/// A value only its parser makes.
#[derive(Debug, PartialEq)]
pub struct Tag {
    text: String,
}

impl FromStr for Tag {
    type Err = Empty;
    fn from_str(s: &str) -> Result<Tag, Empty> {
        if s.is_empty() {
            return Err(Empty);
        }
        Ok(Tag { text: s.to_uppercase() })
    }
}

impl Tag {
    pub fn len(&self) -> usize {
        self.text.len()
    }
}
"#;

const MAIN: &str = r#"
fn main() {
    for text in ["1.2.3", "2.0.1", "3.1.4", "4.4.0", "5.0.0", "0.9.12"] {
        let v: shapes::Version = text.parse().unwrap();
        println!("{:?}", v.bump_minor());
    }
    println!("{:?}", "1.x".parse::<shapes::Version>().is_err());
    for text in ["2k", "10", "1k", "7", "3k", "64"] {
        println!("{:?}", text.parse::<shapes::Size>());
    }
    let tag: shapes::Tag = "kiwi".parse().unwrap_or_else(|_| panic!("empty"));
    println!("{}", tag.len());
}
"#;

/// `<T as FromStr>::from_str(s)` is written `s.parse::<T>()` wherever carve writes it: the call
/// under test, a table's rows (past `--max-per-function`), the arrangement that makes a
/// receiver; what gets the value out of an `Ok` stays `.unwrap()` where the error is `Debug`
/// (a std error counts) and the panic where it is not. No file names the trait, imports it, or
/// builds with a warning, and the tests catch a change of the parser.
#[test]
fn from_str_is_spelled_as_parse_in_the_act_the_tables_and_the_arrangements() {
    let c = carve_small_crate_with("shapes", LIB, MAIN, &[], &["--max-per-function", "2"]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_shapes.rs")).unwrap();
    // prettyplease breaks a long chain over lines: compared line by line, trimmed and joined.
    let flat: String = file.lines().map(str::trim).collect();
    // `{start}"<recorded text>"{end}`, for some recorded text.
    let on_a_literal = |start: &str, end: &str| {
        flat.split(start).skip(1).any(|rest| {
            rest.strip_prefix('"')
                .and_then(|rest| rest.split_once('"'))
                .is_some_and(|(text, rest)| !text.is_empty() && rest.starts_with(end))
        })
    };
    for (start, end) in [
        // The call under test, whole or unwrapped to be looked at part by part.
        ("let result = ", ".parse::<shapes::Size>();"),
        ("let result = ", ".parse::<shapes::Version>().unwrap();"),
        // Receivers made by the parse that made them, unwrapped as their error allows.
        ("let version = ", ".parse::<shapes::Version>().unwrap();"),
        (
            "let tag = ",
            ".parse::<shapes::Tag>().unwrap_or_else(|_| {panic!(",
        ),
    ] {
        assert!(
            on_a_literal(start, end),
            "{start}\"..\"{end} in {file}\n{}",
            c.summary
        );
    }
    assert_carved(
        &flat,
        &c.summary,
        &[
            // The calls past the cap, as rows of one table: the call under test, and the
            // arrangement that makes a receiver.
            "let result = case.0.parse::<shapes::Size>();",
            "let version = case.0.parse::<shapes::Version>().unwrap();",
            "let result = tag.len();",
        ],
    );
    // No call names the trait (the panic's message still says which impl failed), and the
    // file does not import it.
    assert!(!file.contains("FromStr>::from_str("), "{file}");
    assert!(!file.contains("use std::str::FromStr"), "{file}");
    // Nor does a test's name: it is named after the call it makes.
    assert!(file.contains("fn parse_"), "{file}");
    assert!(!file.contains("fn from_str_"), "{file}");
    // Verification took out no test: every one written built and passed.
    let count = |label: &str| {
        let rest = &c.summary[c.summary.find(label).expect(label) + label.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<usize>().expect(label)
    };
    assert_eq!(
        count("tests written: "),
        count("passing after verify (3 runs): "),
        "{}",
        c.summary
    );
    let built = cargo_in(&c.dir, &["test", "--tests", "--no-run"]);
    assert!(built.status.success(), "{}", stderr(&built));
    assert!(!stderr(&built).contains("warning"), "{}", stderr(&built));
    assert_pass_then_fail_after(&c.dir, "minor: next()?", "minor: next()? + 1", "parse_");
}

const BAG_LIB: &str = r#"
/// Numbers in a bag.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Bag {
    items: Vec<u32>,
}

impl Bag {
    pub fn sum(&self) -> u32 {
        self.items.iter().sum()
    }
}

impl From<&[u32]> for Bag {
    fn from(xs: &[u32]) -> Bag {
        Bag { items: xs.to_vec() }
    }
}

impl FromIterator<u32> for Bag {
    fn from_iter<I: IntoIterator<Item = u32>>(it: I) -> Bag {
        Bag { items: it.into_iter().collect() }
    }
}
"#;

const BAG_MAIN: &str = r#"fn main() {
    let empty = bags::Bag::default();
    let two = bags::Bag::from(&[1, 2][..]);
    let words = "3 4";
    let parsed: bags::Bag = words.split(' ').map(|w| w.len() as u32).collect();
    let doubled: bags::Bag = [5u32, 6].iter().copied().collect();
    println!("{} {} {} {}", empty.sum(), two.sum(), parsed.sum(), doubled.sum());
}
"#;

/// `Default::default`, `From::from` with an inferred parameter and `FromIterator::from_iter`
/// of a plain iterator are written as a person writes them: `Bag::default()`,
/// `Bag::from(..)`, `it.collect::<Bag>()`.
#[test]
fn default_from_and_from_iter_are_spelled_on_their_type() {
    let c = carve_small_crate("bags", BAG_LIB, BAG_MAIN, &[]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_bags.rs")).unwrap();
    for spelled in ["bags::Bag::default()", "bags::Bag::from(&[1u32, 2u32][..])"] {
        assert!(file.contains(spelled), "{spelled} in {file}");
    }
    for qualified in ["as std::default::Default>", "as std::convert::From<_>>"] {
        assert!(!file.contains(qualified), "{qualified} in {file}");
    }
    assert!(file.contains(".collect::<bags::Bag>()"), "{file}");
    assert_pass_then_fail_after(&c.dir, "xs.to_vec()", "xs[1..].to_vec()", "from");
}

const BYTES_LIB: &str = r#"
/// How many words `line` holds.
pub fn words(line: &[u8]) -> usize {
    line.split(|b| *b == b' ').filter(|w| !w.is_empty()).count()
}
"#;

const BYTES_MAIN: &str = r#"fn main() {
    for line in [&b"ls -la /tmp"[..], &b"echo hello world"[..]] {
        println!("{}", bytes_names::words(line));
    }
}
"#;

/// Two tests of one function returning the same are told apart by their arguments; a byte
/// string that is printable text is named by its words (`words_ls_la_tmp_returns_3`), as a
/// text is, not `words_value_returns_3` and `words_value_returns_3_2`.
#[test]
fn a_byte_string_argument_names_its_test_by_its_words() {
    let c = carve_small_crate_with("bytes_names", BYTES_LIB, BYTES_MAIN, &[], &["--all"]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_bytes_names.rs")).unwrap();
    for name in [
        "fn words_ls_la_tmp_returns_3()",
        "fn words_echo_hello_world_returns_3()",
    ] {
        assert!(file.contains(name), "{name} in {file}\n{}", c.summary);
    }
    assert_pass_then_fail_after(&c.dir, "!w.is_empty()", "w.is_empty()", "words_ls_la_tmp");
}
