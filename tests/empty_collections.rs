//! Empty collections through a whole carve (issue 30, shape 6): a recorded empty `Vec<String>`,
//! `HashMap` or slice is written with its element types (`Vec::<String>::new()`), never as a
//! bare `vec![]` that `assert_eq!` cannot infer (E0282), and the tests built from them run.

mod common;

use common::*;

const LIB: &str = r#"
use std::collections::{HashMap, VecDeque};

/// The words of `s`; none for an empty text.
pub fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// How often each word occurs.
pub fn tally(words: &[String]) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for w in words {
        *counts.entry(w.clone()).or_insert(0) += 1;
    }
    counts
}

/// How many jobs wait.
pub fn pending(queue: &VecDeque<u32>) -> usize {
    queue.len()
}
"#;

const MAIN: &str = r#"
fn main() {
    let none = empties::words("");
    let some = empties::words("a b a");
    println!("{:?} {:?}", empties::tally(&none), empties::tally(&some).len());
    let queue = std::collections::VecDeque::from([1, 2]);
    println!("{} {}", empties::pending(&queue), empties::pending(&Default::default()));
}
"#;

#[test]
fn empty_collections_are_written_with_their_element_types_and_their_tests_run() {
    let c = carve_small_crate("empties", LIB, MAIN, &[]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_empties.rs")).unwrap();
    assert_carved(
        &file,
        &c.summary,
        &[
            "Vec::<String>::new()",
            "std::collections::HashMap::<String, usize>::new()",
            "std::collections::HashMap::from([",
            "std::collections::VecDeque::<u32>::new()",
        ],
    );
    assert!(!file.contains("vec![]"), "{file}");
    // An empty text now gives one empty word, and the test carved from `words("")` says so.
    assert_pass_then_fail_after(&c.dir, "s.split_whitespace()", "s.split(' ')", "words");
}
