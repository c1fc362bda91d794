//! Record a fixture, carve its tests into a copy of the crate, and run them with cargo: they pass
//! on the recorded version and fail when the recorded behaviour changes.

mod common;

use common::*;

fn passed(output: &std::process::Output) -> usize {
    stdout(output)
        .lines()
        .filter(|l| l.starts_with("test result:"))
        .filter_map(|l| l.split_whitespace().nth(3)?.parse::<usize>().ok())
        .sum()
}

#[test]
fn carved_expr_tests_compile_and_pass_unedited() {
    let (_tmp, dir) = copy_fixture("expr");
    let summary = carve_tests(&dir, "expr", &[]);
    assert!(summary.contains("tests written:"), "{summary}");
    let lexer = std::fs::read_to_string(dir.join("tests/carved_expr_lexer.rs")).unwrap();
    assert!(lexer.contains("expr::lexer::is_operator('*')"), "{lexer}");
    let eval = std::fs::read_to_string(dir.join("tests/carved_expr_eval.rs")).unwrap();
    assert!(
        eval.contains("expr::eval::apply('-', 14.0f64, 2.5f64)"),
        "{eval}"
    );

    let test = cargo_in(&dir, &["test", "--tests"]);
    assert!(
        test.status.success(),
        "{}\n{}",
        stdout(&test),
        stderr(&test)
    );
    assert!(passed(&test) >= 30, "{}", stdout(&test));
}

#[test]
fn carved_tests_fail_when_a_recorded_return_value_changes() {
    let (_tmp, dir) = copy_fixture("expr");
    carve_tests(&dir, "expr", &[]);
    // A behavioural change in a traced function: addition is off by one.
    let eval = dir.join("src/eval.rs");
    let source = std::fs::read_to_string(&eval).unwrap();
    let changed = source.replacen("lhs + rhs", "lhs + rhs + 1.0", 1);
    assert_ne!(source, changed, "the fixture's addition was found");
    std::fs::write(&eval, changed).unwrap();

    let test = cargo_in(&dir, &["test", "--tests", "--no-fail-fast"]);
    assert!(!test.status.success(), "tests must fail after the change");
    let out = stdout(&test);
    assert!(
        out.contains("apply_"),
        "the failing test names the changed function: {out}"
    );
    assert!(
        out.contains("left: 8.0") || out.contains("left: 4.0"),
        "{out}"
    );
}

#[test]
fn carved_account_tests_cover_its_pure_functions() {
    let (_tmp, dir) = copy_fixture("account");
    carve_tests(&dir, "account", &[]);
    let file = std::fs::read_to_string(dir.join("tests/carved_account.rs")).unwrap();
    assert!(file.contains("account::format_cents(1234i64)"), "{file}");
    assert!(file.contains("\"12.34\""), "{file}");
    // transfer: alice is rebuilt by replaying her recorded history, and both balances are
    // checked after the call.
    let transfer = file
        .split("#[test]")
        .find(|t| t.contains("fn transfer_returns_ok_unit"))
        .unwrap_or_else(|| panic!("no transfer test in {file}"));
    assert!(
        transfer.contains("let mut account = account::Account::new(10000i64).unwrap();"),
        "{transfer}"
    );
    assert!(
        transfer.contains("let _ = account.deposit(1234i64);"),
        "{transfer}"
    );
    assert!(
        transfer.contains("let _ = account.withdraw(500i64);"),
        "{transfer}"
    );
    assert!(
        transfer.contains("assert_eq!(account.balance(), 7734i64);"),
        "{transfer}"
    );
    assert!(
        transfer.contains("assert_eq!(other.balance(), 5550i64);"),
        "{transfer}"
    );
    let test = cargo_in(&dir, &["test", "--tests"]);
    assert!(
        test.status.success(),
        "{}\n{}",
        stdout(&test),
        stderr(&test)
    );
}

#[test]
fn generating_twice_writes_the_same_files() {
    let (_tmp, dir) = copy_fixture("expr");
    carve_tests(&dir, "expr", &["1+2*3"]);
    let first = std::fs::read_to_string(dir.join("tests/carved_expr_eval.rs")).unwrap();
    let again = carve()
        .args(["generate", "--no-distil", "--db"])
        .arg(dir.join("trace.db"))
        .arg("--out")
        .arg(dir.join("tests"))
        .output()
        .unwrap();
    assert!(again.status.success());
    assert_eq!(
        first,
        std::fs::read_to_string(dir.join("tests/carved_expr_eval.rs")).unwrap()
    );
}

#[test]
fn a_call_that_panicked_becomes_a_should_panic_test_that_notices_when_it_stops_panicking() {
    let (_tmp, dir) = copy_fixture("mouse");
    carve_tests(&dir, "mouse", &[]);
    let file = std::fs::read_to_string(dir.join("tests/carved_mouse.rs")).unwrap();
    assert!(
        file.contains(
            "#[should_panic(expected = \"not implemented: the question is not known yet\")]"
        ),
        "{file}"
    );
    let test = cargo_in(&dir, &["test", "--tests"]);
    assert!(
        test.status.success(),
        "{}\n{}",
        stdout(&test),
        stderr(&test)
    );

    // The question gets an answer: the recorded panic no longer happens.
    let lib = dir.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib).unwrap();
    let changed = source.replacen(
        "unimplemented!(\"the question is not known yet\")",
        "String::from(\"six by nine\")",
        1,
    );
    assert_ne!(source, changed);
    std::fs::write(&lib, changed).unwrap();
    let test = cargo_in(&dir, &["test", "--tests", "--no-fail-fast"]);
    assert!(!test.status.success());
    assert!(
        stdout(&test).contains("question_panics"),
        "{}",
        stdout(&test)
    );
    assert!(stdout(&test).contains("should panic"), "{}", stdout(&test));
}

/// `carve generate` (without verification) on a recording of expr, with `extra` options;
/// returns its summary line.
fn summary_with(db: &std::path::Path, extra: &[&str]) -> String {
    let out = tempfile::tempdir().unwrap();
    let generated = carve()
        .args(["generate", "--no-verify", "--db"])
        .arg(db)
        .arg("--out")
        .arg(out.path())
        .arg("--crate")
        .arg(repo().join("fixtures/expr"))
        .args(extra)
        .output()
        .unwrap();
    assert!(generated.status.success(), "{}", stderr(&generated));
    stdout(&generated)
        .lines()
        .find(|l| l.starts_with("public API: "))
        .unwrap()
        .to_string()
}

#[test]
fn all_keeps_equivalent_calls_and_max_per_function_caps_each_function() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("trace.db");
    let out = record(&db, &[], &fixture_bin("expr"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));

    let tests_written = |summary: &str| -> usize {
        let (_, rest) = summary.split_once("tests written: ").unwrap();
        rest.split(' ').next().unwrap().parse().unwrap()
    };
    let default = summary_with(&db, &[]);
    let all = summary_with(&db, &["--all"]);
    let capped = summary_with(&db, &["--max-per-function", "1"]);
    // Equivalent calls share a test by default; --all gives each carved call its own.
    let (_, carved) = carved_share(&default);
    assert!(tests_written(&default) < carved, "{default}");
    // (Calls replayed as arrange steps of other tests are carved without a test of their own.)
    let steps = |summary: &str| -> usize {
        summary
            .split_once(", ")
            .and_then(|(_, rest)| rest.split_once(" of them as steps"))
            .map_or(0, |(n, _)| n.parse().unwrap())
    };
    assert_eq!(tests_written(&all), carved - steps(&all), "{all}");
    // One test per function at most; the calls of the others are skipped, and said so.
    assert!(tests_written(&capped) < tests_written(&default), "{capped}");
    assert!(capped.contains("over --max-per-function"), "{capped}");

    let zero = carve()
        .args(["generate", "--db"])
        .arg(&db)
        .args(["--out", ".", "--max-per-function", "0"])
        .output()
        .unwrap();
    assert_eq!(zero.status.code(), Some(2));
    assert!(
        stderr(&zero).contains("--max-per-function"),
        "{}",
        stderr(&zero)
    );
}

/// A crate shaped like ripgrep's libraries: private modules, `pub use` at the root. Their items
/// are in scope, and the carved tests name them by the public paths.
#[test]
fn items_reexported_from_private_modules_are_carved_under_their_public_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("facade");
    write_tree(
        &dir,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"facade\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            (
                "src/lib.rs",
                "mod shapes;\npub use shapes::{area, Circle};\n",
            ),
            (
                "src/shapes.rs",
                "#[derive(Debug, Clone, PartialEq)]\npub struct Circle { pub r: u32 }\n\
                 impl Circle {\n    pub fn new(r: u32) -> Circle { Circle { r } }\n    \
                 pub fn grow(&mut self, by: u32) { self.r += by; }\n}\n\
                 pub fn area(c: &Circle) -> u32 { 3 * c.r * c.r }\n",
            ),
            (
                "src/main.rs",
                "fn main() {\n    let mut c = facade::Circle::new(2);\n    c.grow(1);\n    \
                 println!(\"{}\", facade::area(&c));\n}\n",
            ),
        ],
    );
    let summary = carve_tests(&dir, "facade", &[]);
    assert!(summary.contains("in scope: 3 calls"), "{summary}");
    let carved = std::fs::read_to_string(dir.join("tests/carved_facade_shapes.rs")).unwrap();
    assert!(carved.contains("facade::Circle::new(2u32)"), "{carved}");
    assert!(
        carved.contains("facade::area(&facade::Circle { r: 3u32 })"),
        "{carved}"
    );
    assert!(!carved.contains("facade::shapes::"), "{carved}");
    let test = cargo_in(&dir, &["test", "--tests"]);
    assert!(test.status.success(), "{}", stdout(&test));
}

/// `generate` groups equivalent calls while it reads the trace and plans from one of each; what
/// it writes and reports must be what planning every call gives (`--whole-trace`, a flag for
/// tests, reads the trace whole and plans every call; the same cap keeps the reports alike).
#[test]
fn grouping_equivalent_calls_while_reading_changes_neither_the_files_nor_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &fixture_bin("expr"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let crate_dir = repo().join("fixtures/expr");
    let carve_into = |name: &str, extra: &[&str]| {
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        let mut args = vec!["--crate", crate_dir.to_str().unwrap(), "--format", "json"];
        args.extend(extra);
        let out = generate_unverified(&db, &dir, &args);
        assert!(out.status.success(), "{}", stderr(&out));
        let mut report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        report.as_object_mut().unwrap().remove("files");
        let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&p).unwrap())
            })
            .collect();
        files.sort();
        (report, files)
    };
    let (grouped, grouped_files) = carve_into("grouped", &[]);
    let (whole, whole_files) = carve_into("whole", &["--whole-trace", "--max-per-function", "100"]);
    assert!(
        grouped["calls_carved"].as_u64() > grouped["tests_written"].as_u64(),
        "the recording has equivalent calls to group: {grouped}"
    );
    assert_eq!(grouped, whole);
    assert!(!grouped_files.is_empty());
    assert_eq!(grouped_files, whole_files);
}

/// A trace of many distinct calls of one function (`hotloop::mix(i, word)`, every `i` new) is
/// carved into a bounded number of tests: the first N distinct calls of the function, in
/// recording order, each a test; the next 10×N the rows of one table test; the rest counted
/// (not listed one by one) in the summary and the JSON report. `--all` still gives every call
/// its test.
#[test]
fn generate_writes_the_first_distinct_calls_of_a_function_and_counts_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &fixture_bin("hotloop"), &["300"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let crate_dir = repo().join("fixtures/hotloop");
    let carve_into = |name: &str, extra: &[&str]| {
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        let mut args = vec!["--crate", crate_dir.to_str().unwrap()];
        args.extend(extra);
        let out = generate_unverified(&db, &dir, &args);
        assert!(out.status.success(), "{}", stderr(&out));
        let file = std::fs::read_to_string(dir.join("carved_hotloop.rs")).unwrap();
        // Sorted: the file orders tests by name, not by call. The table's rows are counted
        // apart: `(7u64, "delta", ...),` lines.
        let mut mixes: Vec<u64> = file
            .match_indices("hotloop::mix(")
            .filter(|(at, _)| !file[*at..].starts_with("hotloop::mix(case"))
            .map(|(at, m)| {
                let rest = &file[at + m.len()..];
                rest[..rest.find("u64").unwrap()].parse().unwrap()
            })
            .collect();
        mixes.sort_unstable();
        let rows = file
            .lines()
            .filter(|l| l.trim_start().starts_with('(') && l.trim_end().ends_with("u64),"))
            .count();
        (stdout(&out), mixes, rows)
    };

    let (json, mixes, rows) =
        carve_into("capped", &["--max-per-function", "5", "--format", "json"]);
    assert_eq!(mixes, [0, 1, 2, 3, 4], "the first five calls, in order");
    assert_eq!(rows, 50, "the next fifty as rows of a table");
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["max_per_function"], 5);
    assert_eq!(
        report["over_max_per_function"],
        serde_json::json!([{"function": "hotloop::mix", "calls": 245}]),
        "{report}"
    );
    assert_eq!(
        report["skipped"]["over --max-per-function"], 245,
        "{report}"
    );
    assert_eq!(report["calls_carved"], 56, "{report}");
    assert_eq!(
        report["in_scope"], 301,
        "300 calls of mix and one of cold: {report}"
    );
    let listed = report["skipped_calls"].as_array().unwrap();
    assert!(listed.len() < 5, "not listed one by one: {report}");

    let (text, mixes, rows) = carve_into("default", &[]);
    assert_eq!(mixes, (0..100).collect::<Vec<u64>>(), "100 by default");
    assert_eq!(rows, 200, "the other 200 in a table (up to 1,000 rows)");
    assert!(!text.contains("not carved"), "{text}");

    let (text, mixes, rows) = carve_into("all", &["--all"]);
    assert_eq!(mixes, (0..300).collect::<Vec<u64>>(), "--all: every call");
    assert_eq!(rows, 0);
    assert!(!text.contains("not carved"), "{text}");
}
