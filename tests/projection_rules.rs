//! Parameters declared with an associated type of a type parameter or of `Self` (`A::Item`,
//! `Self::Output`): which type that is depends on the instance, so the value is written as the
//! type the recording gave it, as for a plain type parameter (`ring.push(3u32)` on a recorded
//! `Ring<[u32; 4]>`).

mod common;

use common::*;

const LIB: &str = r#"
/// A fixed-size backing store, as `smallvec::Array` is.
pub trait Slots {
    type Item: Copy + Default;
    const LEN: usize;
}

impl Slots for [u32; 4] {
    type Item = u32;
    const LEN: usize = 4;
}

impl Slots for [i8; 2] {
    type Item = i8;
    const LEN: usize = 2;
}

/// Keeps the last `A::LEN` items pushed.
pub struct Ring<A: Slots> {
    items: Vec<A::Item>,
    pub pushed: usize,
}

impl<A: Slots> Ring<A> {
    pub fn new() -> Self {
        Ring { items: Vec::new(), pushed: 0 }
    }

    pub fn push(&mut self, value: A::Item) {
        if self.items.len() == A::LEN {
            self.items.remove(0);
        }
        self.items.push(value);
        self.pushed += 1;
    }

    pub fn oldest(&self) -> A::Item {
        self.items.first().copied().unwrap_or_default()
    }
}
"#;

const MAIN: &str = r#"
fn main() {
    let mut wide: ring::Ring<[u32; 4]> = ring::Ring::new();
    for v in [10, 20, 30, 40, 50] {
        wide.push(v);
    }
    let mut narrow: ring::Ring<[i8; 2]> = ring::Ring::new();
    narrow.push(-3);
    println!("{} {} {}", wide.oldest(), wide.pushed, narrow.oldest());
}
"#;

#[test]
fn arguments_and_results_declared_as_associated_types_are_written_as_their_recorded_type() {
    let c = carve_small_crate("ring", LIB, MAIN, &["--filter", "ring::*"]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_ring.rs")).unwrap();
    assert_carved(
        &file,
        &c.summary,
        &[
            ".push(50u32);",
            ".push(-3i8);",
            "assert_eq!(result, 20u32);",
            "assert_eq!(result, -3i8);",
        ],
    );
    assert!(!c.summary.contains("unsupported type"), "{}", c.summary);
    assert_pass_then_fail_after(
        &c.dir,
        "if self.items.len() == A::LEN {",
        "if self.items.len() > A::LEN {",
        "oldest",
    );
}
