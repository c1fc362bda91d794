//! Verification runs each carved test alone (`generator/src/verify/alone.rs`): a test that
//! passes only after another test of its file changed state the whole process shares is taken
//! out, with a reason that says so; the rest pass run whole and run one by one. A small real
//! crate is recorded through ptrace and carved.

mod common;

use common::*;

/// A language set once per process, and a greeting that waits a moment for it (as a program
/// whose configuration another thread publishes): the test of `greet("ann")` answers the
/// recorded "bonjour ann" beside the test of `configure("fr")`, and "hello ann" alone.
const LIB: &str = r#"use std::sync::OnceLock;
use std::time::Duration;

static LANGUAGE: OnceLock<String> = OnceLock::new();

/// Sets the language of greetings, once per process: `false` when it was set already.
pub fn configure(language: &str) -> bool {
    LANGUAGE.set(language.to_string()).is_ok()
}

/// A greeting in the language configured, waiting half a second at most for it; English
/// when none is.
pub fn greet(name: &str) -> String {
    for _ in 0..50 {
        if let Some(language) = LANGUAGE.get() {
            return match language.as_str() {
                "fr" => format!("bonjour {name}"),
                _ => format!("hello {name}"),
            };
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    format!("hello {name}")
}
"#;

const MAIN: &str = r#"fn main() {
    println!("{}", greeting::configure("fr"));
    println!("{}", greeting::greet("ann"));
}
"#;

#[test]
fn a_test_that_passes_only_after_another_test_of_its_file_is_taken_out() {
    let c = carve_small_crate("greeting", LIB, MAIN, &[]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_greeting.rs")).unwrap();
    assert!(
        file.contains("configure(\"fr\")"),
        "the test of configure stays: {file}\n{}",
        c.summary
    );
    assert!(
        !file.contains("bonjour ann"),
        "the test of greet passes only after configure's: {file}"
    );
    let quarantine = std::fs::read_to_string(c.dir.join("tests/carved_quarantine.md")).unwrap();
    let line = quarantine
        .lines()
        .find(|l| l.contains("`greet_"))
        .unwrap_or_else(|| panic!("greet's test is listed: {quarantine}"));
    assert!(line.contains("fails when run alone"), "{line}");
    assert!(line.contains("hello ann"), "what it answered alone: {line}");
    assert!(c.summary.contains("failed verification 1"), "{}", c.summary);

    let (ok, out) = cargo_test(&c.dir);
    assert!(ok, "{out}");
    let each = cargo_in(
        &c.dir,
        &[
            "test",
            "--test",
            "carved_greeting",
            "--",
            "--test-threads=1",
        ],
    );
    assert!(each.status.success(), "{}", stdout(&each));
}
