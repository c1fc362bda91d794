//! Calls on an object a public call is still building (`generator/src/plan/through.rs`,
//! `building_call`): no test can hold it before the call returns it, so they count as carved
//! through that call's passing test. On a small real crate: written, recorded through ptrace,
//! carved, the carved tests run with cargo and broken by an edit.

mod common;

use common::*;

/// A bag over memory the recorder does not follow (a raw pointer): its state is rebuilt only
/// from its history, and a public constructor, `from_words`, is the only way to one: the bag it
/// fills is made by a private function, inside it.
const LIB: &str = r#"
pub struct Bag {
    ptr: *mut u32,
    len: usize,
    cap: usize,
}

impl Bag {
    fn empty(cap: usize) -> Bag {
        let mut items: Vec<u32> = Vec::with_capacity(cap);
        let ptr = items.as_mut_ptr();
        std::mem::forget(items);
        Bag { ptr, len: 0, cap }
    }

    /// One item per word: its length.
    pub fn from_words(text: &str) -> Bag {
        let mut bag = Bag::empty(8);
        for word in text.split(' ') {
            bag.push(word.len() as u32);
        }
        bag
    }

    pub fn push(&mut self, x: u32) {
        assert!(self.len < self.cap, "the bag is full");
        // SAFETY: `len < cap`, inside the allocation.
        unsafe { *self.ptr.add(self.len) = x };
        self.len += 1;
    }

    pub fn sum(&self) -> u64 {
        // SAFETY: the first `len` items were written.
        let items = unsafe { std::slice::from_raw_parts(self.ptr, self.len) };
        items.iter().map(|&x| u64::from(x)).sum()
    }
}

/// A count of letters that remembers where the last word was (a pointer the recorder does not
/// follow), made by a function that is no constructor: it has no recorded maker.
pub struct Tally {
    last: *const u8,
    letters: u32,
}

impl Tally {
    pub fn add(&mut self, word: &str) {
        self.last = word.as_ptr();
        self.letters += word.len() as u32;
    }

    pub fn total(&self) -> u32 {
        self.letters
    }
}

fn tally() -> Tally {
    Tally { last: std::ptr::null(), letters: 0 }
}

pub fn letters(text: &str) -> u32 {
    let mut t = tally();
    for word in text.split(' ') {
        t.add(word);
    }
    t.total()
}

impl Drop for Bag {
    fn drop(&mut self) {
        // SAFETY: made by `empty` from a `Vec` of this capacity.
        unsafe { drop(Vec::from_raw_parts(self.ptr, 0, self.cap)) };
    }
}
"#;

const MAIN: &str = r#"
fn main() {
    let b = bag::Bag::from_words("a bb ccc");
    println!("{} {}", b.sum(), bag::letters("dd e"));
}
"#;

/// The three `push` calls inside `from_words` act on a bag no test can hold (it is made inside
/// the call and returned at its end): they count as carved through `from_words`, whose test
/// (here an arrange step of `sum`'s) makes them again. So do the calls on the tally `letters`
/// makes with a function that is no constructor (no recorded maker: it was made where it was
/// first seen). Breaking `push` fails that test.
#[test]
fn calls_on_an_object_a_public_call_is_building_count_through_that_call() {
    let c = carve_small_crate_with(
        "bag",
        LIB,
        MAIN,
        &["--filter", "bag::*", "--exclude", "bag::main"],
        &["--format", "json"],
    );
    let report: serde_json::Value = serde_json::from_str(&c.summary).expect("a JSON report");
    let pushes = report["skipped_calls"]
        .as_array()
        .expect("skipped calls")
        .iter()
        .filter(|s| s["function"].as_str().is_some_and(|f| f.ends_with("push")))
        .count();
    assert_eq!(pushes, 0, "{}", c.summary);
    // The pushes inside `from_words`; `add` and `total` on the tally inside `letters`.
    assert_eq!(report["carved_through_callers"], 3 + 2 + 1, "{}", c.summary);
    assert_eq!(
        report["calls_carved"], report["public_api"],
        "{}",
        c.summary
    );
    let file = std::fs::read_to_string(c.dir.join("tests/carved_bag.rs")).unwrap();
    assert_carved(
        &file,
        &c.summary,
        &[
            "bag::Bag::from_words(\"a bb ccc\")",
            "assert_eq!(result, 6u64);",
            "let result = bag::letters(\"dd e\");",
        ],
    );
    assert_pass_then_fail_after(
        &c.dir,
        "*self.ptr.add(self.len) = x }",
        "*self.ptr.add(self.len) = x + 1 }",
        "sum_returns_6",
    );
}

/// A stack over `MaybeUninit` storage that a public call, `into_vec`, turns into an iterator
/// with `into_iter()` (`IntoIterator`, a standard trait a test calls like any public method)
/// and collects.
const STACK_LIB: &str = r#"
use std::mem::MaybeUninit;

pub struct Stack {
    items: [MaybeUninit<u8>; 4],
    len: usize,
}

impl Stack {
    pub fn new() -> Stack {
        Stack { items: [MaybeUninit::uninit(); 4], len: 0 }
    }

    pub fn push(&mut self, x: u8) {
        self.items[self.len] = MaybeUninit::new(x);
        self.len += 1;
    }

    pub fn into_vec(self) -> Vec<u8> {
        self.into_iter().collect()
    }
}

pub struct IntoIter {
    stack: Stack,
    at: usize,
}

impl IntoIterator for Stack {
    type Item = u8;
    type IntoIter = IntoIter;

    fn into_iter(self) -> IntoIter {
        IntoIter { stack: self, at: 0 }
    }
}

impl Iterator for IntoIter {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        (self.at < self.stack.len).then(|| {
            self.at += 1;
            // SAFETY: the first `len` items were written.
            unsafe { self.stack.items[self.at - 1].assume_init() }
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.stack.len - self.at;
        (left, Some(left))
    }
}
"#;

const STACK_MAIN: &str = r#"
fn main() {
    let mut s = stack::Stack::new();
    s.push(3);
    s.push(4);
    s.push(5);
    println!("{:?}", s.into_vec());
}
"#;

/// The iterator `into_vec` makes with a public call, `into_iter()`, is no object only the call
/// can hold: its `next` and `size_hint`, which `collect` calls inside `into_vec`, get tests of
/// their own, on an iterator the test makes the same way (before, they counted as carved
/// through `into_vec`'s test, which ran them and checked none of their answers). Making
/// `size_hint`'s upper bound `None` fails a test.
#[test]
fn an_iterator_a_public_call_makes_with_into_iter_is_rebuilt_through_it() {
    let c = carve_small_crate_with(
        "stack",
        STACK_LIB,
        STACK_MAIN,
        &["--filter", "stack::*", "--exclude", "stack::main"],
        &["--format", "json"],
    );
    let report: serde_json::Value = serde_json::from_str(&c.summary).expect("a JSON report");
    assert_eq!(report["carved_through_callers"], 0, "{}", c.summary);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_stack.rs")).unwrap();
    assert_carved(
        &file,
        &c.summary,
        &[".into_iter();", "(2usize, Some(2usize))"],
    );
    assert_pass_then_fail_after(&c.dir, "(left, Some(left))", "(left, None)", "size_hint");
}
