//! Calls that read what a test cannot control (the clock, the environment, files) outside any
//! trait are recorded with what they read and skipped as `untestable`, with the reason; the
//! pure calls next to them are carved as usual.

mod common;

use common::*;

const MANIFEST: &str = r#"[package]
name = "world"
version = "0.1.0"
edition = "2021"

[dependencies]
"#;

const LIB: &str = r#"
use std::time::{SystemTime, UNIX_EPOCH};

/// Pure: a test can replay it.
pub fn pad(s: &str, width: usize) -> String {
    format!("{s:>width$}")
}

/// Reads the clock.
pub fn stamped(msg: &str) -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    format!("[{secs}] {}", pad(msg, 3))
}

/// Reads the environment, through a private helper.
pub fn greeting() -> String {
    format!("hello, {}", name())
}

fn name() -> String {
    std::env::var("WORLD_NAME").unwrap_or_else(|_| "world".to_string())
}

/// Reads a file.
pub fn first_line(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().next().map(str::to_string)
}
"#;

const MAIN: &str = r#"
fn main() {
    for (s, w) in [("a", 3), ("bb", 4), ("ccc", 2)] {
        println!("{:?}", world::pad(s, w));
    }
    println!("{}", world::stamped("hi"));
    println!("{}", world::greeting());
    // A relative path: read against the program's directory, which a test does not rebuild
    // (files read by absolute path are: tests/world_files.rs).
    println!("{:?}", world::first_line("Cargo.toml"));
}
"#;

#[test]
fn calls_reading_the_clock_the_environment_or_files_are_untestable_and_say_what_they_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    write_tree(
        &dir,
        &[
            ("Cargo.toml", MANIFEST),
            ("src/lib.rs", LIB),
            ("src/main.rs", MAIN),
        ],
    );
    let db = build_and_record(&dir, "world", &[]);

    // The recording says what each call read.
    let trace = load(&db);
    let touches = |path: &str| calls_of(&trace, path)[0].touches.clone();
    assert_eq!(
        touches("world::stamped"),
        ["clock: std::time::SystemTime::now"]
    );
    assert_eq!(touches("world::name"), ["env: std::env::var"]);
    assert!(touches("world::greeting").is_empty(), "its helper read it");
    assert!(touches("world::first_line")
        .iter()
        .any(|t| t == "fs: std::fs::read_to_string"));
    assert!(calls_of(&trace, "world::pad")
        .iter()
        .all(|c| c.touches.is_empty()));
    let shown = carve().args(["show", "--db"]).arg(&db).output().unwrap();
    assert!(
        stdout(&shown).contains("⚠ reads clock: std::time::SystemTime::now"),
        "{}",
        stdout(&shown)
    );

    let generated = generate_into_tests(&dir, &db, &["--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&generated).unwrap();
    assert_eq!(report["skipped"]["untestable"], 3, "{report:#}");
    let detail = |function: &str| {
        report["skipped_calls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["function"] == function)
            .map(|s| (s["reason"].clone(), s["detail"].clone()))
            .unwrap_or_else(|| panic!("{function} is skipped: {report:#}"))
    };
    assert_eq!(
        detail("world::stamped"),
        (
            "untestable".into(),
            "clock: std::time::SystemTime::now in world::stamped".into()
        )
    );
    assert_eq!(
        detail("world::greeting").1,
        "env: std::env::var in world::name"
    );
    // Every pad call (three, and the one stamped made) is carved and passes.
    assert_eq!(report["quarantined"].as_array().unwrap().len(), 0);
    let test = cargo_in(&dir, &["test", "--tests"]);
    assert!(test.status.success(), "{}", stdout(&test));
    let carved = std::fs::read_to_string(dir.join("tests/carved_world.rs")).unwrap();
    assert!(carved.contains("world::pad(\"bb\", 4usize)"), "{carved}");
    assert!(!carved.contains("stamped"), "{carved}");
}
