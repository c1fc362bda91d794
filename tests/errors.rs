//! Bad input gets one clear line naming the thing and the fix, a non-zero exit, and no
//! half-written files.

mod common;

use std::path::Path;
use std::process::Output;

use common::*;

/// The one error line, after checking the exit code is 2 and nothing else was printed.
fn error_line(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(2),
        "stdout: {}\nstderr: {}",
        stdout(out),
        stderr(out)
    );
    let err = stderr(out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line: {err}");
    assert!(lines[0].starts_with("carve: error: "), "{err}");
    lines[0].to_string()
}

#[test]
fn a_missing_program_is_named_and_no_trace_is_created() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let line = error_line(&record(&db, &[], Path::new("./no-such-program"), &[]));
    assert!(line.contains("no-such-program"), "{line}");
    assert!(!db.exists());
}

#[test]
fn a_file_that_is_not_executable_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let file = tmp.path().join("notes.txt");
    std::fs::write(&file, "hello").unwrap();
    let line = error_line(&record(&db, &[], &file, &[]));
    assert!(line.contains("is not executable"), "{line}");
    assert!(!db.exists());
}

#[test]
fn a_program_without_debug_info_says_how_to_build_it() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("nodebug");
    let status = std::process::Command::new("cc")
        .args(["-O0", "-o"])
        .arg(&bin)
        .arg(repo().join("fixtures/c_basic/c_basic.c"))
        .status()
        .unwrap();
    assert!(status.success());
    let db = tmp.path().join("t.db");
    let line = error_line(&record(&db, &[], &bin, &[]));
    assert!(line.contains("no debug info in"), "{line}");
    assert!(line.contains("-g"), "{line}");
    assert!(!db.exists());
}

#[test]
fn a_filter_that_matches_nothing_lists_functions_that_exist() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let line = error_line(&record(
        &db,
        &["--filter", "nothing::here"],
        &c_basic_bin(),
        &[],
    ));
    assert!(line.contains("nothing::here"), "{line}");
    assert!(
        line.contains("count_vowels"),
        "existing functions are suggested: {line}"
    );
    assert!(!db.exists());
}

#[test]
fn an_unwritable_trace_path_is_named_and_the_program_does_not_run() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("missing-dir/t.db");
    let out = record(&db, &[], &c_basic_bin(), &[]);
    let line = error_line(&out);
    assert!(line.contains("missing-dir"), "{line}");
    assert!(
        stdout(&out).is_empty(),
        "the program did not run: {}",
        stdout(&out)
    );
}

fn generate(db: &Path, out: &Path) -> Output {
    carve()
        .args(["generate", "--db"])
        .arg(db)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn generate_on_a_missing_trace_says_how_to_record_one() {
    let tmp = tempfile::tempdir().unwrap();
    let line = error_line(&generate(&tmp.path().join("none.db"), tmp.path()));
    assert!(line.contains("carve record"), "{line}");
}

#[test]
fn generate_on_a_file_that_is_not_a_trace_refuses_it() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("junk.db");
    std::fs::write(&db, "this is not a database at all, just text").unwrap();
    let line = error_line(&generate(&db, tmp.path()));
    assert!(line.contains("not a carve trace"), "{line}");
}

#[test]
fn generate_on_a_trace_from_a_newer_carve_asks_for_an_upgrade() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    assert!(record(&db, &[], &c_basic_bin(), &[]).status.success());
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.pragma_update(None, "user_version", 999).unwrap();
    drop(conn);
    let line = error_line(&generate(&db, tmp.path()));
    assert!(line.contains("upgrade carve"), "{line}");
}

#[test]
fn generate_on_a_c_program_says_it_writes_tests_for_rust_only_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    assert!(record(&db, &[], &c_basic_bin(), &[]).status.success());
    let out = tmp.path().join("tests");
    std::fs::create_dir(&out).unwrap();
    let line = error_line(&generate(&db, &out));
    assert!(
        line.contains("`c_basic` was recorded from C code"),
        "{line}"
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}

#[test]
fn generate_into_something_that_is_not_a_directory_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    assert!(record(&db, &[], &c_basic_bin(), &[]).status.success());
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let line = error_line(&generate(&db, &file));
    assert!(line.contains("not a directory"), "{line}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

#[test]
fn split_dwarf_is_named_with_how_to_build_without_it() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("cs");
    let status = std::process::Command::new("cc")
        .args(["-g", "-gsplit-dwarf", "-O0", "-o"])
        .arg(&bin)
        .arg(repo().join("fixtures/c_basic/c_basic.c"))
        .current_dir(tmp.path())
        .status()
        .unwrap();
    assert!(status.success());
    let db = tmp.path().join("t.db");
    let line = error_line(&record(&db, &[], &bin, &[]));
    assert!(line.contains(".dwo"), "{line}");
    assert!(line.contains("-gsplit-dwarf"), "{line}");
    assert!(!db.exists());
}

#[test]
fn verify_asked_for_without_cargo_says_so_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    assert!(record(&db, &[], &fixture_bin("abc"), &[]).status.success());
    let out = tmp.path().join("tests");
    std::fs::create_dir(&out).unwrap();
    let run = carve()
        .args(["generate", "--verify", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(&out)
        .env("CARGO", tmp.path().join("no-cargo-here"))
        .output()
        .unwrap();
    let line = error_line(&run);
    assert!(line.contains("--verify needs cargo"), "{line}");
    assert!(line.contains("--no-verify"), "{line}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}
