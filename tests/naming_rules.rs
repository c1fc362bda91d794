//! Test names (`generator/src/naming.rs`, `naming/marks.rs`): each test writes a small real
//! crate, records its program through ptrace, carves tests, runs them with cargo, and checks
//! the names say what tells the tests apart, not a number, and that the tests still fail once
//! the behaviour they recorded changes.

mod common;

use common::*;

const LIB: &str = r#"
pub struct Stack<T> {
    items: Vec<T>,
}

impl<T> Stack<T> {
    pub fn new() -> Stack<T> {
        Stack { items: Vec::new() }
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
}

pub struct Size(pub u64);

impl Size {
    pub fn label(&self) -> Label {
        Label { size: Size(self.0), style: Style::Long }
    }
}

enum Style {
    Long,
    Short,
}

/// Its state is not a number or a text (bytesize's `Display`): its tests are not told apart
/// by it.
pub struct Label {
    size: Size,
    style: Style,
}

impl Label {
    pub fn short(self) -> Label {
        Label { style: Style::Short, ..self }
    }
    pub fn text(&self) -> String {
        if self.size.0 == 0 {
            return "none".to_string();
        }
        match self.style {
            Style::Short => format!("{}B", self.size.0),
            Style::Long => format!("{} bytes", self.size.0),
        }
    }
}
"#;

const MAIN: &str = r#"
fn main() {
    let bytes: marks::Stack<u8> = marks::Stack::new();
    let words: marks::Stack<String> = marks::Stack::new();
    println!("{} {}", bytes.len(), words.len());
    let long = marks::Size(0).label();
    let short = marks::Size(0).label().short();
    println!("{} {}", long.text(), short.text());
}
"#;

/// smallvec's `SmallVec::<[&str; 4]>::new()` and `SmallVec::<[u32; 8]>::new()` gave
/// `small_vec_new_returns_small_vec` and `…_2`; bytesize's `to_string()` of `display()` and
/// of `display().si()`, both `"0 B"`, `to_string_returns_0_b` and `…_2`. Tests whose names
/// are still one after what they show are told by the instance's type arguments, then by the
/// functions only some of their arrangements call.
#[test]
fn tests_of_one_name_are_told_by_their_instance_and_by_how_their_objects_were_made() {
    let c = carve_small_crate("marks", LIB, MAIN, &[]);
    let carved = std::fs::read_to_string(c.dir.join("tests/carved_marks.rs")).unwrap();
    assert_carved(
        &carved,
        &c.summary,
        &[
            "fn stack_new_returns_stack_for_u8()",
            "fn stack_new_returns_stack_for_string()",
            "fn text_returns_none()",
            "fn text_returns_none_after_short()",
        ],
    );
    assert!(!carved.contains("_2()"), "{carved}\n{}", c.summary);
    assert_pass_then_fail_after(
        &c.dir,
        "Label { style: Style::Short, ..self }",
        "Label { style: Style::Short, size: Size(self.size.0 + 1) }",
        "text_returns_none_after_short",
    );
}
