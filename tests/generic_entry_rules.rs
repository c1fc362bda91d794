//! Issue 30, shape 5: generic entry points that take a builder-made value through `Into`
//! (`fill(text, Options::new(w).indent(..))`, as textwrap's `fill` takes `impl Into<Options>`).
//! The call of the crate that executes most of its code must be carved, not skipped as
//! generic: its argument is rebuilt by the builder calls that made it, or written as the plain
//! value the program converted (`fill(text, 12usize)`).

mod common;

use common::*;

const LIB: &str = r#"//! A text formatter whose entry points take a width or a builder-made configuration, through
//! `Into` (as textwrap's `fill(text, Options::new(w).initial_indent(..))`).

#[derive(Debug, Clone, PartialEq)]
pub struct Options<'a> {
    width: usize,
    indent: &'a str,
    break_words: bool,
}

impl<'a> Options<'a> {
    pub fn new(width: usize) -> Options<'a> {
        Options { width, indent: "", break_words: true }
    }

    pub fn indent(self, indent: &'a str) -> Options<'a> {
        Options { indent, ..self }
    }

    pub fn break_words(self, break_words: bool) -> Options<'a> {
        Options { break_words, ..self }
    }
}

impl From<usize> for Options<'_> {
    fn from(width: usize) -> Self {
        Options::new(width)
    }
}

/// `text` in lines of at most the width, each after the indent; a word longer than a line is
/// broken when `break_words`.
pub fn fill<'a, O: Into<Options<'a>>>(text: &str, options: O) -> String {
    let options = options.into();
    let room = options.width.saturating_sub(options.indent.len()).max(1);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word = word.to_string();
        while options.break_words && word.len() > room {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            let rest = word.split_off(room);
            lines.push(word);
            word = rest;
        }
        if !line.is_empty() && line.len() + 1 + word.len() > room {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
        .iter()
        .map(|l| format!("{}{l}", options.indent))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines of [`fill`], through `impl Into`.
pub fn wrap<'a>(text: &str, options: impl Into<Options<'a>>) -> Vec<String> {
    fill(text, options).lines().map(str::to_string).collect()
}
"#;

const MAIN: &str = r#"use wrapfmt::{fill, wrap, Options};

fn main() {
    let text = "the quick brown fox jumps over the extraordinarily lazy dog";
    println!("{}", fill(text, Options::new(16).indent("> ")));
    println!("{}", fill(text, 12));
    println!("{}", fill(text, Options::new(10).break_words(false)));
    println!("{:?}", wrap(text, Options::new(20).indent("  ")));
}
"#;

#[test]
fn a_generic_entry_point_is_called_with_its_builder_made_argument() {
    let c = carve_small_crate("wrapfmt", LIB, MAIN, &[]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_wrapfmt.rs")).unwrap();
    assert!(c.summary.contains("skipped: 0"), "{}", c.summary);
    assert_carved(
        &file,
        &c.summary,
        &[
            // The builder chain the program wrote, step by step, then the generic call.
            "wrapfmt::Options::new(16usize)",
            ".indent(\"> \")",
            ".break_words(false)",
            "let result = wrapfmt::fill(",
            // The width the program passed, converted by `Into` inside `fill`.
            "12usize,",
            // `impl Into<Options>` in argument position.
            "let result = wrapfmt::wrap(",
        ],
    );
    assert!(
        !file.contains("fill::<") && !file.contains("wrap::<"),
        "the argument pins the instance down: {file}"
    );
    // One character fewer of room per line changes where `fill` breaks.
    assert_pass_then_fail_after(
        &c.dir,
        "line.len() + 1 + word.len() > room",
        "line.len() + 2 + word.len() > room",
        "fill_",
    );
}
