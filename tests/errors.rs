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

/// Every file in `dir` with its bytes and permissions.
fn snapshot(dir: &Path) -> Vec<(std::ffi::OsString, Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let mode = e.metadata().unwrap().permissions().mode();
            (e.file_name(), std::fs::read(e.path()).unwrap(), mode)
        })
        .collect();
    files.sort();
    files
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_read_only_trace_in_a_read_only_directory_is_shown_carved_and_gated_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("traces");
    std::fs::create_dir(&dir).unwrap();
    let db = dir.join("t.db");
    let bin = fixture_bin("pauses");
    assert!(record(&db, &[], &bin, &["steps", "3", "2"])
        .status
        .success());
    chmod(&db, 0o444);
    chmod(&dir, 0o555);
    let before = snapshot(&dir);

    let show = carve().args(["show", "--db"]).arg(&db).output().unwrap();
    assert!(show.status.success(), "{}", stderr(&show));
    assert!(stdout(&show).contains("pauses::step"), "{}", stdout(&show));
    let out = tmp.path().join("tests");
    std::fs::create_dir(&out).unwrap();
    let crate_dir = repo().join("fixtures/pauses");
    let generated = generate_unverified(&db, &out, &["--crate", crate_dir.to_str().unwrap()]);
    assert!(generated.status.success(), "{}", stderr(&generated));
    assert!(
        stdout(&generated).contains("wrote"),
        "{}",
        stdout(&generated)
    );
    let gated = carve()
        .args(["gate", "--baseline"])
        .arg(&db)
        .arg("--")
        .arg(&bin)
        .args(["steps", "3", "2"])
        .output()
        .unwrap();
    assert_eq!(gated.status.code(), Some(0), "{}", stderr(&gated));

    // Permissions do not stop root from writing: the bytes themselves are the proof.
    assert_eq!(snapshot(&dir), before);
    chmod(&dir, 0o755);
}

#[test]
fn show_on_an_empty_file_refuses_it_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("empty.db");
    std::fs::write(&db, "").unwrap();
    let line = error_line(&carve().args(["show", "--db"]).arg(&db).output().unwrap());
    assert!(line.contains("empty.db is empty"), "{line}");
    assert!(line.contains("carve record --db"), "{line}");
    assert_eq!(std::fs::metadata(&db).unwrap().len(), 0);
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
}

#[test]
fn record_into_a_trace_without_its_calls_table_is_refused_before_the_program_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let bin = fixture_bin("pauses");
    assert!(record(&db, &[], &bin, &["steps", "1", "1"])
        .status
        .success());
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("DROP TABLE calls").unwrap();
    drop(conn);
    let before = snapshot(tmp.path());
    let marker = tmp.path().join("it-ran");
    let out = record(&db, &[], &bin, &["marker", marker.to_str().unwrap()]);
    let line = error_line(&out);
    assert!(line.contains("damaged carve trace"), "{line}");
    assert!(line.contains("`calls`"), "{line}");
    assert!(line.contains(&db.display().to_string()), "{line}");
    assert!(!marker.exists(), "the program ran");
    assert_eq!(snapshot(tmp.path()), before);
    // The reading commands refuse it the same way.
    let shown = error_line(&carve().args(["show", "--db"]).arg(&db).output().unwrap());
    assert!(shown.contains("damaged carve trace"), "{shown}");
}

#[test]
fn a_32_bit_elf_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    // An ELF32 i386 executable header (52 bytes): enough to be what `file` calls one.
    let mut elf = vec![0x7f, b'E', b'L', b'F', 1, 1, 1, 0];
    elf.extend([0; 8]);
    elf.extend(2u16.to_le_bytes()); // e_type: EXEC
    elf.extend(3u16.to_le_bytes()); // e_machine: EM_386
    elf.extend(1u32.to_le_bytes()); // e_version
    elf.extend(0x0804_8000u32.to_le_bytes()); // e_entry
    elf.extend(52u32.to_le_bytes()); // e_phoff
    elf.extend(0u32.to_le_bytes()); // e_shoff
    elf.extend(0u32.to_le_bytes()); // e_flags
    elf.extend(52u16.to_le_bytes()); // e_ehsize
    elf.extend([32, 0, 0, 0, 40, 0, 0, 0, 0, 0]);
    let bin = tmp.path().join("old32");
    std::fs::write(&bin, &elf).unwrap();
    chmod(&bin, 0o755);
    let db = tmp.path().join("t.db");
    let line = error_line(&record(&db, &[], &bin, &[]));
    assert!(line.contains("old32"), "{line}");
    assert!(line.contains("32-bit x86"), "{line}");
    assert!(line.contains("x86-64"), "{line}");
    assert!(!db.exists());
}

#[test]
fn a_module_name_of_236_characters_still_gets_its_tests_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("longmod");
    let module = "m".repeat(236);
    write_tree(
        &dir,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"longmod\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
            ),
            (
                "src/lib.rs",
                &format!("pub mod {module} {{\n    pub fn double(x: i32) -> i32 {{\n        x * 2\n    }}\n}}\n"),
            ),
            (
                "src/main.rs",
                &format!("fn main() {{\n    println!(\"{{}}\", longmod::{module}::double(21));\n}}\n"),
            ),
        ],
    );
    let db = build_and_record(&dir, "longmod", &[]);
    let out = dir.join("tests");
    std::fs::create_dir(&out).unwrap();
    let generated = generate_unverified(&db, &out, &[]);
    assert!(generated.status.success(), "{}", stderr(&generated));
    let files: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].len() <= 200, "{}", files[0]);
    assert!(files[0].starts_with("carved_longmod_mmmm"), "{}", files[0]);
    let text = std::fs::read_to_string(out.join(&files[0])).unwrap();
    assert!(
        text.contains(&format!("longmod::{module}::double(")),
        "{text}"
    );
    assert!(text.contains("assert_eq!(result, 42i32)"), "{text}");
}

/// A directory given as the trace (`--db traces`, `--baseline traces`) is named as a directory,
/// with the file to pass instead, by every command that takes a trace; SQLite alone only says
/// "disk I/O error". `record` refuses it before the program runs.
#[test]
fn a_directory_as_the_trace_is_named_as_one_by_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("traces");
    std::fs::create_dir(&dir).unwrap();
    let bin = fixture_bin("pauses");
    let marker = tmp.path().join("it-ran");
    let out = tmp.path().join("tests");
    std::fs::create_dir(&out).unwrap();
    let lines = [
        (
            "record",
            error_line(&record(
                &dir,
                &[],
                &bin,
                &["marker", marker.to_str().unwrap()],
            )),
        ),
        (
            "show",
            error_line(&carve().args(["show", "--db"]).arg(&dir).output().unwrap()),
        ),
        ("generate", error_line(&generate(&dir, &out))),
        (
            "coverage",
            error_line(
                &carve()
                    .args(["coverage", "--db"])
                    .arg(&dir)
                    .output()
                    .unwrap(),
            ),
        ),
        (
            "gate",
            error_line(
                &carve()
                    .args(["gate", "--baseline"])
                    .arg(&dir)
                    .arg("--")
                    .arg(&bin)
                    .args(["marker", marker.to_str().unwrap()])
                    .output()
                    .unwrap(),
            ),
        ),
    ];
    for (command, line) in lines {
        assert!(
            line.contains(&format!("{} is a directory", dir.display())),
            "{command}: {line}"
        );
        assert!(
            line.contains(&dir.join("trace.db").display().to_string()),
            "{command} names a file to pass instead: {line}"
        );
        assert!(!line.contains("disk I/O"), "{command}: {line}");
    }
    assert!(!marker.exists(), "the program ran");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing written in it"
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}

/// A trace whose `parent_id`s loop (a shared file, edited or damaged) is refused in one line:
/// every walk of the call tree assumes a tree, and one that never ends overflowed the stack.
#[test]
fn generate_on_a_trace_whose_parent_links_loop_refuses_it_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let recorded = tmp.path().join("recorded.db");
    assert!(record(&recorded, &[], &fixture_bin("abc"), &[])
        .status
        .success());
    let crate_dir = repo().join("fixtures/abc");
    // The last call and its parent.
    let (child, parent): (i64, i64) = rusqlite::Connection::open(&recorded)
        .unwrap()
        .query_row(
            "select id, parent_id from calls where parent_id is not null order by id desc limit 1",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    // A call that is its own parent, two calls parenting each other, `main` under its child.
    let loops = [
        format!("update calls set parent_id = id where id = {child}"),
        format!("update calls set parent_id = {child} where id = {parent}"),
        format!("update calls set parent_id = {child} where parent_id is null"),
    ];
    for (i, edit) in loops.iter().enumerate() {
        let db = tmp.path().join(format!("loop{i}.db"));
        std::fs::copy(&recorded, &db).unwrap();
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(&format!("PRAGMA foreign_keys = OFF; {edit}"))
            .unwrap();
        drop(conn);
        let out = tmp.path().join(format!("out{i}"));
        std::fs::create_dir(&out).unwrap();
        let generated = carve()
            .args(["generate", "--no-verify", "--db"])
            .arg(&db)
            .arg("--out")
            .arg(&out)
            .arg("--crate")
            .arg(&crate_dir)
            .output()
            .unwrap();
        let line = error_line(&generated);
        assert!(
            line.contains("is its own ancestor") && line.contains("record the program again"),
            "{edit}: {line}"
        );
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "{edit}");
    }
}

/// A trace never chooses the crate `generate` builds and tests (probe row 56): with its source
/// paths pointing at a crate planted elsewhere (a build script that would run), `generate`
/// works only on the crate holding `--out` or the current directory, and refuses in one line
/// naming both crates; the planted crate is never built.
#[test]
fn generate_refuses_a_trace_whose_sources_are_in_another_crate_and_builds_nothing_there() {
    let tmp = tempfile::tempdir().unwrap();
    let (_victim_tmp, victim) = copy_fixture("abc");
    std::fs::create_dir_all(victim.join("tests")).unwrap();
    let planted = tmp.path().join("planted");
    let marker = tmp.path().join("PLANTED_BUILD_RAN");
    write_tree(
        &planted,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"abc\"\nversion = \"0.1.0\"\nedition = \"2021\"\nbuild = \"build.rs\"\n[workspace]\n",
            ),
            (
                "src/lib.rs",
                &std::fs::read_to_string(victim.join("src/lib.rs")).unwrap(),
            ),
            (
                "build.rs",
                &format!(
                    "fn main() {{ std::fs::write({:?}, \"ran\").unwrap(); }}\n",
                    marker.display().to_string()
                ),
            ),
        ],
    );
    let db = tmp.path().join("t.db");
    assert!(record(&db, &[], &fixture_bin("abc"), &[]).status.success());
    let conn = rusqlite::Connection::open(&db).unwrap();
    let fixture = repo().join("fixtures/abc").display().to_string();
    conn.execute(
        "update functions set decl_file = replace(decl_file, ?1, ?2)",
        [fixture.as_str(), planted.to_str().unwrap()],
    )
    .unwrap();
    drop(conn);

    // `--out` in the user's crate, the sources in the planted one: refused, with both paths.
    let generated = carve()
        .args(["generate", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(victim.join("tests"))
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let line = error_line(&generated);
    for piece in [
        planted.to_str().unwrap(),
        victim.to_str().unwrap(),
        "pass --crate DIR",
    ] {
        assert!(line.contains(piece), "{piece} in {line}");
    }
    assert!(!marker.exists(), "the planted crate's build script ran");
    assert_eq!(std::fs::read_dir(victim.join("tests")).unwrap().count(), 0);

    // Neither `--out` nor the current directory in a crate: the trace's crate is not taken
    // either; the line names it, for `--crate`.
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let generated = carve()
        .args(["generate", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(&out)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let line = error_line(&generated);
    assert!(
        line.contains(planted.to_str().unwrap()) && line.contains("pass --crate DIR"),
        "{line}"
    );
    assert!(!marker.exists(), "the planted crate's build script ran");

    // No recorded sources on this machine either: nothing to build.
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute("update functions set decl_file = NULL", [])
        .unwrap();
    let generated = carve()
        .args(["generate", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(&out)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let line = error_line(&generated);
    assert!(
        line.contains("cannot find the library crate of `abc`: pass --crate DIR"),
        "{line}"
    );
}

/// A mistyped `--out` is told before the trace is read (reading a trace of a gigabyte took a
/// minute before the same line came): with a file that is not a trace as `--db`, the line is
/// still about `--out`.
#[test]
fn a_missing_out_directory_is_named_before_the_trace_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let not_a_trace = tmp.path().join("notes.txt");
    std::fs::write(&not_a_trace, "not a trace").unwrap();
    let run = carve()
        .args(["generate", "--no-verify", "--db"])
        .arg(&not_a_trace)
        .arg("--out")
        .arg(tmp.path().join("tets"))
        .output()
        .unwrap();
    let line = error_line(&run);
    assert!(line.contains("--out"), "{line}");
    assert!(line.contains("is not a directory: create it"), "{line}");
    assert_eq!(std::fs::read(&not_a_trace).unwrap(), b"not a trace");
}
