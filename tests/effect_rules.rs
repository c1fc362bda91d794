//! What a call leaves behind a `&mut` argument that is not an object of the crate — an output
//! buffer (`&mut [u8]`), a counter, a `String` or `Vec` it appends to — is recorded at the
//! call's end on both capture paths, and the carved test binds the argument to a variable and
//! checks it whole after the call.

mod common;

use common::*;

const LIB: &str = r#"/// Writes `bytes` as hex digits into `out`, two per byte.
pub fn to_hex(bytes: &[u8], out: &mut [u8]) -> usize {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (i, b) in bytes.iter().enumerate() {
        out[2 * i] = DIGITS[(b >> 4) as usize];
        out[2 * i + 1] = DIGITS[(b & 0xf) as usize];
    }
    bytes.len() * 2
}

/// Doubles each number in place.
pub fn double_all(xs: &mut [u32]) {
    for x in xs.iter_mut() {
        *x *= 2;
    }
}

/// Adds `n` to a running total.
pub fn add_to(total: &mut u64, n: u64) {
    *total += n;
}

/// Appends a greeting.
pub fn greet(out: &mut String, name: &str) {
    out.push_str("hello ");
    out.push_str(name);
}

/// Pushes the squares below `n`.
pub fn squares(out: &mut Vec<u32>, n: u32) {
    for i in 0..n {
        out.push(i * i);
    }
}
"#;

const MAIN: &str = r#"fn main() {
    let mut out = [0u8; 6];
    let n = effects::to_hex(&[0xca, 0xfe, 0x01], &mut out);
    println!("{}", std::str::from_utf8(&out[..n]).unwrap());
    let mut xs = vec![1u32, 2, 3];
    effects::double_all(&mut xs);
    let mut total = 40;
    effects::add_to(&mut total, 2);
    let mut s = String::from(">");
    effects::greet(&mut s, "bob");
    let mut v = vec![7];
    effects::squares(&mut v, 3);
    println!("{xs:?} {total} {s} {v:?}");
}
"#;

/// The carved file of the crate at `dir`.
fn carved(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("tests/carved_effects.rs")).unwrap()
}

#[test]
fn what_a_call_leaves_in_a_mut_buffer_counter_or_text_is_checked_after_it() {
    let c = carve_small_crate("effects", LIB, MAIN, &[]);
    let file = carved(&c.dir);
    assert_carved(
        &file,
        &c.summary,
        &[
            "let mut out = [0u8, 0u8, 0u8, 0u8, 0u8, 0u8];",
            "effects::to_hex(&[202u8, 254u8, 1u8][..], &mut out[..]);",
            "assert_eq!(out, [99u8, 97u8, 102u8, 101u8, 48u8, 49u8]);",
            "let mut xs = [1u32, 2u32, 3u32];",
            "assert_eq!(xs, [2u32, 4u32, 6u32]);",
            "let mut total = 40u64;",
            "assert_eq!(total, 42u64);",
            "let mut out = String::from(\">\");",
            "assert_eq!(out, \">hello bob\");",
            "assert_eq!(out, vec![7u32, 0u32, 1u32, 4u32]);",
        ],
    );
    // The buffer is the only place `to_hex` leaves its digits: a change in the low nibble's
    // digit fails its test.
    assert_pass_then_fail_after(&c.dir, "(b & 0xf)", "(b & 0x7)", "to_hex_returns_6");

    // The ptrace path reads the same values again: the same tests.
    edit(&c.dir.join("src/lib.rs"), "(b & 0x7)", "(b & 0xf)");
    // (`cargo test` built the program again with the change.)
    let built = cargo_in(&c.dir, &["build", "--quiet"]);
    assert!(built.status.success(), "{}", stderr(&built));
    let db = c.dir.join("ptrace.db");
    let program = c.dir.join("target/debug/effects");
    let recorded = record(&db, &["--capture", "ptrace"], &program, &[]);
    assert!(recorded.status.success(), "{}", stderr(&recorded));
    let summary = generate_into_tests(&c.dir, &db, &[]);
    assert_eq!(carved(&c.dir), file, "{summary}");
}

const STACK_LIB: &str = r#"/// A stack that lives inline while it is small: an enum whose insides are private.
pub enum Stack {
    Small(Inline),
    Big(Vec<u32>),
}

pub struct Inline {
    items: [u32; 2],
    len: usize,
}

impl Stack {
    pub fn new() -> Stack {
        Stack::Small(Inline { items: [0; 2], len: 0 })
    }
    pub fn push(&mut self, x: u32) {
        match self {
            Stack::Small(inline) if inline.len < 2 => {
                inline.items[inline.len] = x;
                inline.len += 1;
            }
            Stack::Small(inline) => {
                let mut spilled = inline.items[..inline.len].to_vec();
                spilled.push(x);
                *self = Stack::Big(spilled);
            }
            Stack::Big(items) => items.push(x),
        }
    }
    pub fn len(&self) -> usize {
        match self {
            Stack::Small(inline) => inline.len,
            Stack::Big(items) => items.len(),
        }
    }
    pub fn is_big(&self) -> bool {
        matches!(self, Stack::Big(_))
    }
}
"#;

const STACK_MAIN: &str = r#"fn main() {
    let mut stack = enum_receiver::Stack::new();
    for x in [1, 2, 3] {
        stack.push(x);
    }
    println!("{} items, big: {}", stack.len(), stack.is_big());
}
"#;

/// A `&mut self` call on an enum whose variants hold private parts (tinyvec's `TinyVec`) is
/// checked through the enum's getters after it, as a struct's would be: before, its test
/// called `push` and checked nothing.
#[test]
fn an_enum_receiver_a_call_changed_is_checked_by_its_getters() {
    let c = carve_small_crate("enum_receiver", STACK_LIB, STACK_MAIN, &[]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_enum_receiver.rs")).unwrap();
    let spill = file
        .split("#[test]")
        .find(|t| t.contains("stack.push(3u32)"))
        .unwrap_or_else(|| panic!("a test of the third push in {file}"));
    for check in [
        "assert_eq!(stack.len(), 3usize);",
        "assert!(stack.is_big());",
    ] {
        assert!(spill.contains(check), "{check} in {spill}");
    }
    // The push that spills loses its item: only the check after it sees that.
    assert_pass_then_fail_after(&c.dir, "spilled.push(x);", "", "push_with_3");
}

const LATER_LIB: &str = r#"/// Numbers on a pile.
pub struct Pile {
    items: Vec<u32>,
}

/// Takes `n` items off the pile when it drops: what `take_later` returns, borrowing the pile.
pub struct Taking<'a> {
    pile: &'a mut Pile,
    n: usize,
}

impl Drop for Taking<'_> {
    fn drop(&mut self) {
        for _ in 0..self.n {
            self.pile.items.pop();
        }
    }
}

impl Pile {
    pub fn new() -> Pile {
        Pile { items: vec![1, 2, 3, 4] }
    }
    pub fn take_later(&mut self, n: usize) -> Taking<'_> {
        Taking { pile: self, n }
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
}
"#;

const LATER_MAIN: &str = r#"fn main() {
    let mut pile = dropped_result::Pile::new();
    drop(pile.take_later(3));
    println!("{} left", pile.len());
}
"#;

/// A `&mut self` call whose result no test can look into (a borrowing guard that does its work
/// when it drops, as tinyvec's `splice`) is tested by dropping the result at once and checking
/// the receiver after it, with values this build shows after the drop: before, the call was
/// skipped as "unsupported type".
#[test]
fn a_result_nothing_of_which_shows_is_dropped_and_the_receiver_checked_after() {
    let c = carve_small_crate("dropped_result", LATER_LIB, LATER_MAIN, &[]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_dropped_result.rs")).unwrap();
    let test = file
        .split("#[test]")
        .find(|t| t.contains("take_later"))
        .unwrap_or_else(|| panic!("a test of take_later in {file}\n{}", c.summary));
    for line in [
        "let _ = pile.take_later(3usize);",
        "assert_eq!(pile.len(), 1usize);",
    ] {
        assert!(test.contains(line), "{line} in {test}");
    }
    assert_pass_then_fail_after(
        &c.dir,
        "for _ in 0..self.n {",
        "for _ in 1..self.n {",
        "take_later",
    );
}
