//! Objects whose state is a slice iterator, and results that are references to structs.
//!
//! A `core::slice::Iter<T>` holds two pointers that change from run to run; what a test can
//! check is what it will still yield. The recorder reads it as the elements it has left, so two
//! states of such an object compare by what is left, a receiver is rebuilt from a constructor
//! whose result is in that state, and the value is stable across runs. A call returning `&T`
//! (`Deref::deref`, a getter returning `&Inner`) is observed through the reference: its public
//! fields and getters, as from a `T`.

mod common;

use common::*;

const LIB: &str = r#"
/// Words of a line, one at a time.
pub struct Words<'a> {
    bytes: core::slice::Iter<'a, u8>,
    pub taken: usize,
    pub saw_tab: bool,
}

impl<'a> Words<'a> {
    pub fn new(line: &'a str) -> Words<'a> {
        Words { bytes: line.as_bytes().iter(), taken: 0, saw_tab: false }
    }

    /// The bytes not yet read.
    pub fn left(&self) -> usize {
        self.bytes.len()
    }
}

impl<'a> Iterator for Words<'a> {
    type Item = String;
    fn next(&mut self) -> Option<String> {
        let mut word = String::new();
        for &b in self.bytes.by_ref() {
            if b == b' ' || b == b'\t' {
                self.saw_tab |= b == b'\t';
                if word.is_empty() {
                    continue;
                }
                break;
            }
            word.push(b as char);
        }
        if word.is_empty() {
            return None;
        }
        self.taken += 1;
        Some(word)
    }
}

/// A `Words` with a line number, handing out the `Words` it wraps.
pub struct Line<'a> {
    words: Words<'a>,
    pub number: u32,
}

impl<'a> Line<'a> {
    pub fn new(number: u32, text: &'a str) -> Line<'a> {
        Line { words: Words::new(text), number }
    }
}

impl<'a> std::ops::Deref for Line<'a> {
    type Target = Words<'a>;
    fn deref(&self) -> &Words<'a> {
        &self.words
    }
}

impl<'a> Iterator for Line<'a> {
    type Item = String;
    fn next(&mut self) -> Option<String> {
        self.words.next()
    }
}
"#;

const MAIN: &str = r#"
fn main() {
    let mut line = words::Line::new(7, "ls\t-la  /tmp");
    let first = line.next();
    let inner = std::ops::Deref::deref(&line);
    println!("{first:?} {} {} {}", inner.taken, inner.saw_tab, inner.left());
    let rest: Vec<String> = line.collect();
    println!("{rest:?}");
}
"#;

#[test]
fn a_slice_iterator_is_recorded_as_what_it_has_left_and_a_returned_reference_is_observed_through() {
    let c = carve_small_crate("words", LIB, MAIN, &["--filter", "words::*"]);
    let trace = load(&c.db);
    // The receiver of `Words::left` holds its iterator as the bytes it has left: "-la  /tmp"
    // after the first word and the tab were read. No pointer is recorded.
    let left = calls_of(&trace, "words::Words::left");
    assert_eq!(left.len(), 1, "{}", c.summary);
    let shown = format!("{:?}", arg(left[0], "self"));
    let rest: Vec<String> = b"-la  /tmp".iter().map(|b| b.to_string()).collect();
    let expected_elems = rest.join(", ");
    assert!(
        shown.contains("core::slice::iter::Iter<u8>") && !shown.contains("NonNull"),
        "{shown}"
    );
    let elems: Vec<String> = match strip(arg(left[0], "self")) {
        carve_storage::Value::Struct { fields, .. } => match &fields
            .iter()
            .find(|f| f.name == "bytes")
            .expect("bytes field")
            .value
        {
            carve_storage::Value::Seq {
                elems, truncated, ..
            } => {
                assert!(!truncated);
                elems.iter().map(scalar).collect()
            }
            other => panic!("bytes recorded as {other:?}"),
        },
        other => panic!("self recorded as {other:?}"),
    };
    assert_eq!(elems.join(", "), expected_elems);

    let file = std::fs::read_to_string(c.dir.join("tests/carved_words.rs")).unwrap();
    // `deref` returns `&Words`: checked by the fields a caller reads through the reference.
    assert_carved(
        &file,
        &c.summary,
        &[
            "line.deref()",
            "assert_eq!(result.taken, 1usize);",
            "assert!(result.saw_tab);",
        ],
    );
    assert_pass_then_fail_after(
        &c.dir,
        "self.saw_tab |= b == b'\\t';",
        "self.saw_tab |= b == b'x';",
        "deref",
    );
}

fn strip(v: &carve_storage::Value) -> &carve_storage::Value {
    match v {
        carve_storage::Value::Ref { target, .. } => strip(target),
        other => other,
    }
}

fn scalar(v: &carve_storage::Value) -> String {
    match v {
        carve_storage::Value::Uint { value, .. } => value.to_string(),
        other => panic!("element {other:?}"),
    }
}

const REST_LIB: &str = r#"
/// The `k` smallest of `v`, as an owning iterator.
pub fn smallest(mut v: Vec<i64>, k: usize) -> std::vec::IntoIter<i64> {
    v.sort();
    v.truncate(k);
    v.into_iter()
}

/// The first half of `v`.
pub fn first_half(v: &[u32]) -> std::slice::Iter<'_, u32> {
    v[..v.len() / 2].iter()
}
"#;

const REST_MAIN: &str = r#"
fn main() {
    println!("{:?}", rest::smallest(vec![5, 1, 4], 2).collect::<Vec<_>>());
    println!("{:?}", rest::first_half(&[5, 1, 4, 6]).collect::<Vec<_>>());
}
"#;

/// A returned std iterator the recorder read as the elements it has left (a vector's or a
/// slice's) is checked by its items, and a function that gives other items fails its test.
#[test]
fn a_returned_iterator_read_as_what_it_has_left_is_checked_by_its_items() {
    let c = carve_small_crate("rest", REST_LIB, REST_MAIN, &["--filter", "rest::*"]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_rest.rs"))
        .unwrap_or_else(|e| panic!("{e}: {}", c.summary));
    assert_carved(
        &file,
        &c.summary,
        &[
            "rest::smallest(vec![5i64, 1i64, 4i64], 2usize)",
            "assert_eq!(format!(\"{:?}\", result.collect::<Vec<_>>()), \"[1, 4]\");",
            "assert_eq!(format!(\"{:?}\", result.collect::<Vec<_>>()), \"[5, 1]\");",
        ],
    );
    let (in_scope, carved) = carved_share(&c.summary);
    assert_eq!(carved, in_scope, "{}", c.summary);
    assert_pass_then_fail_after(&c.dir, "v.sort();", "v.reverse();", "smallest");
}
