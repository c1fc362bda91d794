//! Values observed by their `Display` text: one test per rule, each writing a small real crate
//! (a library and the program using it), recording the program through ptrace, carving tests,
//! running them with cargo, and checking that they fail once the text they expect changes.
//!
//! 1. The recorder catches what a `fmt` call writes through its `Formatter`, whatever the
//!    `dyn Write` behind it (stdout here), exactly, with the formatter's options.
//! 2. Such a call is carved as `format!("{:>10}", value)` against that text.
//! 3. A returned value whose type has no `PartialEq` is checked by the text an equal value was
//!    displayed as; a `Cow<str>` is compared with a borrowed literal.

mod common;

use carve_storage::{Value, WRITTEN_EFFECT};
use common::*;

/// Writes the crate, records its program, carves tests: (temp dir, crate dir, trace, summary).
fn carve_crate(
    lib: &str,
    main: &str,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
    String,
) {
    // Formatting impls are left out of the default selection: name the crate, as users do.
    let c = carve_small_crate("shown", lib, main, &["--filter", "shown::*"]);
    assert!(c.recorded.status.success(), "{}", stderr(&c.recorded));
    (c.tmp, c.dir, c.db, c.summary)
}

fn carved_file(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("tests/carved_shown.rs")).unwrap()
}

const SIZE_LIB: &str = r#"
use std::fmt;

/// A size in bytes, shown in kB; honours width, alignment, fill and precision (through `pad`).
pub struct Size(pub u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = f.precision().unwrap_or(1);
        let text = format!("{:.*} kB", digits, self.0 as f64 / 1000.0);
        f.pad(&text)
    }
}

/// A label written piece by piece (`write_str`, `write_char`), options ignored.
pub struct Label(pub char, pub u8);

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for _ in 0..self.1 {
            fmt::Write::write_char(f, self.0)?;
        }
        write!(f, "]{}", self.1)
    }
}
"#;

/// Rule 1 and 2: `println!` hands `fmt` a formatter writing to stdout, with options. The text
/// is caught at the formatter's `dyn Write` exactly as the program printed it, and the call is
/// carved as `format!` with the spec rebuilt from the recorded options.
#[test]
fn a_display_call_writing_to_stdout_is_carved_as_format_with_its_options() {
    let main = r#"
use shown::{Label, Size};
fn main() {
    println!("{:>10}|{:<9}|{:*^11}|{:.3}|{}", Size(1500), Size(20), Size(999), Size(1234), Size(7));
    println!("{} {:>6}", Label('é', 3), Label('-', 0));
}
"#;
    let (_tmp, dir, db, summary) = carve_crate(SIZE_LIB, main);

    // What the recorder caught is what the program printed, piece by piece.
    let trace = load(&db);
    let written: Vec<String> = calls_of(&trace, "<shown::Size as core::fmt::Display>::fmt")
        .into_iter()
        .chain(calls_of(
            &trace,
            "<shown::Label as core::fmt::Display>::fmt",
        ))
        .map(|c| match c.after(WRITTEN_EFFECT) {
            Some(Value::Str {
                value,
                truncated: false,
                ..
            }) => value.clone(),
            other => panic!("no text caught for call {}: {other:?}", c.id.0),
        })
        .collect();
    assert_eq!(
        written,
        [
            "    1.5 kB",
            "0.0 kB   ",
            "**1.0 kB***",
            "1.2", // `pad` cuts at the precision
            "0.0 kB",
            "[ééé]3",
            "[]0"
        ],
        "{summary}"
    );

    let (in_scope, carved) = carved_share(&summary);
    assert_eq!((in_scope, carved), (7, 7), "{summary}");
    let file = carved_file(&dir);
    assert_carved(
        &file,
        &summary,
        &[
            r#"format!("{:>10}", size)"#,
            r#"format!("{:<9}", size)"#,
            r#"format!("{:*^11}", size)"#,
            r#"format!("{:.3}", size)"#,
            r#"assert_eq!(result, "1.2")"#,
            r#"assert_eq!(result, "    1.5 kB")"#,
            r#"assert_eq!(result, "**1.0 kB***")"#,
            "size.to_string()",
            r#"format!("{:>6}", label)"#,
            r#"assert_eq!(result, "[ééé]3")"#,
        ],
    );
    assert_pass_then_fail_after(&dir, "f.pad(&text)", "f.write_str(&text)", "to_string");
}

const SHOWN_LIB: &str = r#"
use std::borrow::Cow;
use std::fmt;

#[derive(Debug, PartialEq)]
pub struct Size(pub u64);

impl Size {
    pub fn b(n: u64) -> Size {
        Size(n)
    }
    /// A view of the size for display; it has no `PartialEq` and no public field.
    pub fn display(&self) -> Shown {
        Shown { bytes: self.0, short: false }
    }
}

pub struct Shown {
    bytes: u64,
    short: bool,
}

impl Shown {
    pub fn short(self) -> Shown {
        Shown { short: true, ..self }
    }
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.short {
            write!(f, "{}k", self.bytes / 1000)
        } else {
            write!(f, "{} bytes", self.bytes)
        }
    }
}

/// The text without surrounding blanks: borrowed when there were none.
pub fn tidy(s: &str) -> Cow<'_, str> {
    if s.trim() == s {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.trim().to_uppercase())
    }
}
"#;

/// Rule 3: `display()` and `short()` return a `Shown` without `PartialEq`: each is checked by
/// the text the program displayed an equal value as; `tidy` returns a `Cow<str>`, compared with
/// a borrowed literal whether it was borrowed or owned.
#[test]
fn a_value_without_partialeq_is_checked_by_the_text_an_equal_value_was_displayed_as() {
    let main = r#"
fn main() {
    for n in [2000u64, 75_000] {
        let s = shown::Size::b(n);
        println!("{} / {}", s.display(), s.display().short());
    }
    println!("{} {}", shown::tidy("kept"), shown::tidy("  trimmed "));
}
"#;
    let (_tmp, dir, _db, summary) = carve_crate(SHOWN_LIB, main);
    let file = carved_file(&dir);
    assert_carved(
        &file,
        &summary,
        &[
            r#"assert_eq!(result.to_string(), "2000 bytes")"#,
            r#"assert_eq!(result.to_string(), "75k")"#,
            // Named by the text checked, not by the bytes behind it.
            "fn display_returns_2000_bytes()",
            "fn short_returns_75k()",
            r#"assert_eq!(result, "kept")"#,
            r#"assert_eq!(result, "TRIMMED")"#,
        ],
    );
    let (in_scope, carved) = carved_share(&summary);
    assert_eq!(carved, in_scope, "{summary}");
    assert_pass_then_fail_after(
        &dir,
        "Shown { bytes: self.0, short: false }",
        "Shown { bytes: self.0 + 1, short: false }",
        "display",
    );
}
