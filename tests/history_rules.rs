//! The rules about an object's replayed history (`generator/src/arrange/rebuild/history.rs`)
//! and the tables its tests make (`generator/src/plan/table.rs`), each on a small real crate:
//! written, recorded through ptrace, carved, the carved tests run with cargo and broken by an
//! edit.

mod common;

use common::*;

/// A scratch buffer (`MaybeUninit` bytes, as itoa's `Buffer`) formats many numbers; each call
/// leaves the state a test can compare as it found it. Its tests build the buffer fresh rather
/// than replaying every earlier call: those steps are state-equivalent. A call that changed the
/// comparable state (`set_upper`) stays in the history. A `Latch` whose `put` writes only
/// `MaybeUninit` storage that `get` reads back looks state-equivalent too, but the shortened
/// test fails: verification carves it again with the whole history, which passes.
#[test]
fn state_equivalent_steps_are_left_out_and_a_wrong_drop_falls_back_to_the_whole_history() {
    let lib = r#"
use std::mem::MaybeUninit;

pub struct Scratch {
    bytes: [MaybeUninit<u8>; 8],
    upper: bool,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch { bytes: [MaybeUninit::uninit(); 8], upper: false }
    }
    pub fn set_upper(&mut self, on: bool) {
        self.upper = on;
    }
    pub fn hex(&mut self, mut n: u32) -> &str {
        let digits: &[u8; 16] = if self.upper { b"0123456789ABCDEF" } else { b"0123456789abcdef" };
        let mut at = 8;
        loop {
            at -= 1;
            self.bytes[at] = MaybeUninit::new(digits[(n % 16) as usize]);
            n /= 16;
            if n == 0 {
                break;
            }
        }
        let written = &self.bytes[at..];
        // SAFETY: bytes[at..] were written above with ASCII digits.
        unsafe { std::str::from_utf8_unchecked(&*(written as *const [MaybeUninit<u8>] as *const [u8])) }
    }
}

pub struct Latch {
    cell: MaybeUninit<u8>,
}

impl Latch {
    pub fn new() -> Latch {
        Latch { cell: MaybeUninit::new(0) }
    }
    pub fn put(&mut self, v: u8) {
        self.cell = MaybeUninit::new(v);
    }
    pub fn get(&self) -> u8 {
        // SAFETY: `new` and `put` always write the cell.
        unsafe { self.cell.assume_init() }
    }
}
"#;
    let main = r#"
fn main() {
    let mut s = scratch::Scratch::new();
    for n in [1u32, 250, 4096, 48879] {
        println!("{}", s.hex(n));
    }
    s.set_upper(true);
    println!("{}", s.hex(3054));
    let mut l = scratch::Latch::new();
    l.put(5);
    println!("{}", l.get());
}
"#;
    let c = carve_small_crate_with("scratch", lib, main, &[], &[]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_scratch.rs")).unwrap();
    // Unverified, the latch's test is the shortened one: `put` left the state as compared.
    let unverified = c.tmp.path().join("unverified");
    std::fs::create_dir_all(&unverified).unwrap();
    let out = generate_unverified(&c.db, &unverified, &["--crate", c.dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let shortened = std::fs::read_to_string(unverified.join("carved_scratch.rs")).unwrap();
    let get_test = |file: &str| -> String {
        let at = file.find("fn get_returns_5()").expect("the latch's test");
        file[at..].split("#[test]").next().unwrap().to_string()
    };
    assert!(!get_test(&shortened).contains("put("), "{shortened}");
    // Verified: that test failed, and was carved again with the whole history.
    assert!(get_test(&file).contains("latch.put(5u8);"), "{file}");
    let (in_scope, carved) = carved_share(&c.summary);
    assert_eq!(carved, in_scope, "{}", c.summary);
    assert_carved(
        &file,
        &c.summary,
        &[
            // The upper-case call's test: built fresh, then the one call that changed state.
            "let mut scratch = scratch::Scratch::new();\n    let _ = scratch.set_upper(true);\n",
            "\"BEE\"",
        ],
    );
    // No `hex` call is replayed before another: each left the state as it found it.
    assert!(!file.contains("let _ = scratch.hex("), "{file}");
    // Set to lower case, the test of the upper-case call fails.
    assert_pass_then_fail_after(
        &c.dir,
        "b\"0123456789ABCDEF\"",
        "b\"0123456789abcdef\"",
        "hex_returns_bee",
    );
}

/// An iterator over memory the recorder does not follow (a raw pointer, as a parser's over its
/// text) is rebuilt from its history: made, then advanced k times (`for _ in 0..k`). Calls past
/// `--max-per-function` whose tests differ only in literals and that count share one table
/// test, the count a column (`for _ in 0..case.N`), and each row counts as carved.
#[test]
fn rows_whose_replay_differs_only_in_a_repeat_count_share_a_table() {
    let lib = r#"
pub struct Cursor {
    base: *const u32,
    len: usize,
    at: usize,
}

impl Cursor {
    /// The first `n` squares, in memory only the pointer leads to.
    pub fn new(n: u32) -> Cursor {
        let squares: Vec<u32> = (1..=n).map(|i| i * i).collect();
        let data: &'static [u32] = Box::leak(squares.into_boxed_slice());
        Cursor { base: data.as_ptr(), len: data.len(), at: 0 }
    }
}

impl Iterator for Cursor {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.at == self.len {
            return None;
        }
        // SAFETY: `at < len`, within the slice `new` was given.
        let v = unsafe { *self.base.add(self.at) };
        self.at += 1;
        Some(v * 3)
    }
}
"#;
    let main = r#"
fn main() {
    let mut c = cursor::Cursor::new(8);
    let mut total = 0;
    while let Some(v) = c.next() {
        total += v;
    }
    println!("{total}");
}
"#;
    let c = carve_small_crate_with("cursor", lib, main, &[], &["--max-per-function", "2"]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_cursor.rs")).unwrap();
    // `new` and the nine `next` calls: two tests within the cap, six rows (advanced 1, 2, 3, 4,
    // 6 and 7 times: one step is a count too) in one table. Advanced 0 times the test has no
    // loop: another shape, alone in it, over the cap.
    let (in_scope, carved) = carved_share(&c.summary);
    assert_eq!((in_scope, carved), (10, 9), "{}", c.summary);
    assert!(
        c.summary.contains("skipped: 1 (over --max-per-function"),
        "{}",
        c.summary
    );
    assert_carved(
        &file,
        &c.summary,
        &["next_recorded_cases", "for _ in 0..case.", "usize"],
    );
    // Stepping two at a time, the rows after the first fail.
    assert_pass_then_fail_after(&c.dir, "self.at += 1;", "self.at += 2;", "recorded_cases");
}

/// A producer that takes its receiver by value (`bytes_mut.freeze()`) moves it: the check of
/// the state the receiver was rebuilt to is not written after it (E0382 on bytes' tests).
#[test]
fn a_receiver_a_producer_consumes_is_not_checked_after_it_moved() {
    let lib = r#"
pub struct Draft {
    text: String,
    len: usize,
}

pub struct Note {
    text: String,
}

impl Draft {
    pub fn new(s: &str) -> Draft {
        Draft { text: s.to_string(), len: s.len() }
    }
    pub fn split_off(&mut self, at: usize) -> Draft {
        let tail = self.text.split_off(at);
        self.len = self.text.len();
        Draft { len: tail.len(), text: tail }
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn finish(self) -> Note {
        Note { text: self.text }
    }
}

impl Note {
    pub fn shout(&self) -> String {
        self.text.to_uppercase()
    }
}
"#;
    let main = r#"
fn main() {
    let mut d = shapes::Draft::new("abc");
    let tail = d.split_off(2);
    println!("{} {}", d.len(), tail.len());
    let n = d.finish();
    println!("{}", n.shout());
}
"#;
    let c = carve_small_crate("shapes", lib, main, &[]);
    assert!(!c.summary.contains("failed verification"), "{}", c.summary);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &c.summary,
        &[
            "let _draft_2 = draft.split_off(2usize);",
            "let note = draft.finish();",
            "assert_eq!(result, \"AB\")",
        ],
    );
    assert_pass_then_fail_after(
        &c.dir,
        "self.text.to_uppercase()",
        "self.text.clone()",
        "shout_",
    );
}
