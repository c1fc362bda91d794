//! Calls of one function past `--max-per-function` whose tests differ only in literal values are
//! carved as the rows of one table-driven test (`generator/src/plan/table.rs`): a small real crate is
//! recorded through ptrace, carved with a small cap, and the table test is built, run, checked
//! row by row by verification, and broken by an edit.

mod common;

use common::*;

const MANIFEST: &str =
    "[package]\nname = \"temps\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";

/// Writes the crate, records its program, carves it with `extra` options; returns the crate dir,
/// what generate printed and the carved file.
fn carve_temps(
    lib: &str,
    main: &str,
    extra: &[&str],
) -> (tempfile::TempDir, std::path::PathBuf, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("temps");
    write_tree(
        &dir,
        &[
            ("Cargo.toml", MANIFEST),
            ("src/lib.rs", lib),
            ("src/main.rs", main),
        ],
    );
    let db = build_and_record(&dir, "temps", &[]);
    let summary = generate_into_tests(&dir, &db, extra);
    let file = std::fs::read_to_string(dir.join("tests/carved_temps.rs")).unwrap();
    (tmp, dir, summary, file)
}

const MAIN: &str = r#"
fn main() {
    for c in 1..=20 {
        println!("{c} C = {} F", temps::to_fahrenheit(c));
    }
}
"#;

/// Twenty distinct calls, a cap of three: three tests of their own, seventeen rows of one
/// `to_fahrenheit_recorded_cases`, every call carved, none left over the cap. The table test
/// compiles, passes, and fails once the function computes something else.
#[test]
fn calls_past_the_cap_become_rows_of_one_table_test_that_catches_a_change() {
    let lib = "pub fn to_fahrenheit(c: i32) -> i32 {\n    c * 9 / 5 + 32\n}\n";
    let (_tmp, dir, summary, file) = carve_temps(lib, MAIN, &["--max-per-function", "3"]);
    assert_eq!(carved_share(&summary), (20, 20), "{summary}");
    assert!(summary.contains("tests written: 4 "), "{summary}");
    assert!(!summary.contains("over --max-per-function"), "{summary}");
    assert_eq!(file.matches("#[test]").count(), 4, "{file}");
    for piece in [
        "fn to_fahrenheit_recorded_cases() {",
        "let cases: &[(i32, i32)] = &[",
        "(20i32, 68i32),",
        "for (i, case) in cases.iter().enumerate() {",
        "let result = temps::to_fahrenheit(case.0);",
        "assert_eq!(result, case.1, \"case {i}\");",
    ] {
        assert!(file.contains(piece), "{piece} in {file}\n{summary}");
    }
    let rows = file
        .lines()
        .filter(|l| l.trim_start().starts_with('(') && l.trim_end().ends_with("i32),"))
        .count();
    assert_eq!(rows, 17, "{file}");

    let (ok, out) = cargo_test(&dir);
    assert!(ok, "{out}");
    edit(&dir.join("src/lib.rs"), "+ 32", "+ 33");
    let (ok, out) = cargo_test(&dir);
    assert!(!ok, "the changed function must fail the table: {out}");
    assert!(
        out.contains("to_fahrenheit_recorded_cases") && out.contains("case "),
        "the failure names the row: {out}"
    );
}

/// A row that fails against the code it was carved from (the function answered differently on
/// the recorded program's main thread) is taken out alone by verification, listed in the
/// quarantine file with its row, and counted as failed verification; the table keeps the rest.
#[test]
fn verification_takes_out_a_failing_row_not_the_table() {
    let lib = r#"pub fn to_fahrenheit(c: i32) -> i32 {
    // Only the recorded program's main thread sees 13 C as 56 F.
    if c == 13 && std::thread::current().name() == Some("main") {
        return 56;
    }
    c * 9 / 5 + 32
}
"#;
    let (_tmp, dir, summary, file) = carve_temps(lib, MAIN, &["--max-per-function", "3"]);
    assert_eq!(carved_share(&summary), (20, 19), "{summary}");
    assert!(summary.contains("failed verification 1"), "{summary}");
    assert!(
        file.contains("fn to_fahrenheit_recorded_cases() {"),
        "{file}"
    );
    assert!(!file.contains("(13i32, 56i32)"), "{file}");
    assert!(file.contains("(12i32, 53i32)"), "{file}");
    let quarantine = std::fs::read_to_string(dir.join("tests/carved_quarantine.md")).unwrap();
    assert!(
        quarantine.contains("`to_fahrenheit_recorded_cases` (row ") && quarantine.contains("case "),
        "{quarantine}"
    );
    let (ok, out) = cargo_test(&dir);
    assert!(ok, "{out}");
}
