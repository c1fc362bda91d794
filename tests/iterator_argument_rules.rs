//! Iterator and `Ordering` arguments written the way a program makes them
//! (`generator/src/arrange/literal.rs`): a slice iterator as `[..].iter()`, a vector's as
//! `vec![..].into_iter()` (what it has left), with `.copied()` where the
//! program copied it, a fresh `str::Split` at a char as `"..".split(' ')`, and a comparator's
//! answers as `std::cmp::Ordering::Less`/`Greater` in its replay closure. Written, recorded
//! through ptrace, carved, the carved tests run with cargo and broken by an edit.

mod common;

use common::*;

const LIB: &str = r#"
#[derive(Debug, Default)]
pub struct Tally {
    total: u64,
    words: usize,
    seen: Vec<u32>,
}

impl Tally {
    pub fn new() -> Tally {
        Tally::default()
    }

    /// Sums the bytes an iterator gives.
    pub fn add_bytes<I: Iterator<Item = u8>>(&mut self, bytes: I) -> u64 {
        for b in bytes {
            self.total += u64::from(b);
        }
        self.total
    }

    /// Sums and keeps the numbers a slice iterator gives.
    pub fn add_all<'a, I: Iterator<Item = &'a u32>>(&mut self, items: I) -> u64 {
        for x in items {
            self.total += u64::from(*x);
            self.seen.push(*x);
        }
        self.total
    }

    /// Sums the numbers an owning iterator gives.
    pub fn add_owned<I: Iterator<Item = u32>>(&mut self, items: I) -> u64 {
        for x in items {
            self.total += u64::from(x);
        }
        self.total
    }

    /// Counts the non-empty words of a split.
    pub fn count_words(&mut self, words: std::str::Split<'_, char>) -> usize {
        let n = words.filter(|w| !w.is_empty()).count();
        self.words += n;
        n
    }

    /// Orders what it kept by the caller's comparator.
    pub fn order_by<F: FnMut(&u32, &u32) -> std::cmp::Ordering>(&mut self, cmp: F) {
        self.seen.sort_by(cmp);
    }

    pub fn first(&self) -> Option<u32> {
        self.seen.first().copied()
    }
}
"#;

const MAIN: &str = r#"
fn main() {
    let mut t = tally::Tally::new();
    let bytes = t.add_bytes(b"abc".iter().copied());
    let all = t.add_all([5u32, 1, 9].iter());
    let mut owned = vec![3u32, 4, 6].into_iter();
    owned.next();
    let owned = t.add_owned(owned);
    let words = t.count_words("one two  three".split(' '));
    t.order_by(|a, b| b.cmp(a));
    println!("{bytes} {all} {owned} {words} {:?}", t.first());
}
"#;

/// Each argument is written as the program made it, the calls are carved into passing tests,
/// and each test checks what its call did: counting empty words too fails `count_words`' test,
/// skipping an owned item fails `add_owned`'s,
/// a comparator answer ignored fails the test of `first` after `order_by`.
#[test]
fn iterator_and_ordering_arguments_are_written_as_a_program_makes_them() {
    let c = carve_small_crate("tally", LIB, MAIN, &["--filter", "tally::Tally*"]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_tally.rs")).unwrap();
    assert_carved(
        &file,
        &c.summary,
        &[
            ".iter().copied()",
            ".add_all([5u32, 1u32, 9u32].iter())",
            ".add_owned(vec![4u32, 6u32].into_iter())",
            ".count_words(\"one two  three\".split(' '))",
            "std::cmp::Ordering::Greater",
            "std::cmp::Ordering::Less",
        ],
    );
    let (in_scope, carved) = carved_share(&c.summary);
    assert_eq!(carved, in_scope, "{}", c.summary);
    assert_pass_then_fail_after(
        &c.dir,
        ".filter(|w| !w.is_empty())",
        ".filter(|_| true)",
        "count_words",
    );
    edit(
        &c.dir.join("src/lib.rs"),
        ".filter(|_| true)",
        ".filter(|w| !w.is_empty())",
    );
    assert_pass_then_fail_after(&c.dir, "self.seen.sort_by(cmp);", "let _ = cmp;", "first");
    edit(
        &c.dir.join("src/lib.rs"),
        "let _ = cmp;",
        "self.seen.sort_by(cmp);",
    );
    assert_pass_then_fail_after(
        &c.dir,
        "for x in items {",
        "for x in items.skip(1) {",
        "add_owned",
    );
}
