//! `carve record --coverage` and `carve coverage` on real fixture programs: the lines a run
//! reached, lines never reached, the calls left unchanged, forks, and the lcov export read by
//! genhtml.

mod common;

use std::path::Path;

use carve_storage::{Coverage, Store, Trace};
use common::*;

/// Records `program args` with `extra` flags into a new trace; returns the trace's directory,
/// its path and the program's stdout.
fn recorded(
    extra: &[&str],
    program: &Path,
    args: &[&str],
) -> (tempfile::TempDir, std::path::PathBuf, String) {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, extra, program, args);
    assert!(out.status.success(), "{}", stderr(&out));
    (tmp, db, stdout(&out))
}

fn coverage_of(db: &Path) -> Coverage {
    let store = Store::open(db).unwrap();
    let run = store.latest_run().unwrap().unwrap();
    store.coverage(run).unwrap()
}

/// The 1-based number of the first line of `file` containing `text`.
fn line_of(file: &Path, text: &str) -> u32 {
    let source = std::fs::read_to_string(file).unwrap();
    source
        .lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("{text} not in {}", file.display())) as u32
        + 1
}

/// Whether `line` of the file ending in `file` has code, and was reached.
fn state(c: &Coverage, file: &str, line: u32) -> Option<bool> {
    let (_, lines) = c.lines.iter().find(|(f, _)| f.ends_with(file))?;
    lines.get(&line).copied()
}

#[test]
fn lines_of_a_function_never_called_have_code_but_are_not_reached() {
    let (_tmp, db, _) = recorded(&["--coverage"], &fixture_bin("expr"), &[]);
    let c = coverage_of(&db);
    let parser = repo().join("fixtures/expr/src/parser.rs");
    // `is_right_associative` is never called by expr's main: its body has code, never run.
    let body = line_of(&parser, "op == '^'");
    assert_eq!(state(&c, "expr/src/parser.rs", body), Some(false), "{c:#?}");
    let f = c
        .functions
        .iter()
        .find(|f| f.path == "expr::parser::is_right_associative")
        .expect("the function has lines");
    assert_eq!(f.reached, 0);
    assert!(!f.lines.is_empty());
    // What main does run is reached: `apply`'s `'+' => a + b` arm and main's first print.
    let eval = repo().join("fixtures/expr/src/eval.rs");
    let add = line_of(&eval, "'+' =>");
    assert_eq!(state(&c, "expr/src/eval.rs", add), Some(true));
    let main = repo().join("fixtures/expr/src/main.rs");
    let print = line_of(&main, "Ok(v) => println!");
    assert_eq!(state(&c, "expr/src/main.rs", print), Some(true));
    // A comment has no code.
    let comment = line_of(&parser, "/// Whether `op` groups to the right");
    assert_eq!(state(&c, "expr/src/parser.rs", comment), None);
    // Only the program's own files: std code inlined into it is not listed.
    assert!(
        c.lines.keys().all(|f| f.contains("/fixtures/expr/src/")),
        "{:?}",
        c.lines.keys()
    );
    let (hit, all) = c.totals();
    assert!(hit > 0 && hit < all, "{hit} of {all}");
}

/// What a test would compare of a recording: each call's function, place in the tree, values
/// and outcome (thread ids and pids differ from run to run).
fn calls_as_text(t: &Trace) -> Vec<String> {
    t.calls
        .iter()
        .map(|c| {
            let f = t
                .function(c.function)
                .map(|f| f.path.as_str())
                .unwrap_or("?");
            format!(
                "{f} parent={:?} depth={} args={:?} ret={:?} after={:?} outcome={:?} touches={:?}",
                c.parent, c.depth, c.args, c.ret, c.after, c.outcome, c.touches
            )
        })
        .collect()
}

#[test]
fn coverage_does_not_change_the_recorded_calls_or_the_program_output() {
    for fixture in ["expr", "abc", "account", "dao", "mouse", "returns"] {
        let (_a, plain_db, plain_out) = recorded(&[], &fixture_bin(fixture), &[]);
        let (_b, cov_db, cov_out) = recorded(&["--coverage"], &fixture_bin(fixture), &[]);
        assert_eq!(
            plain_out, cov_out,
            "{fixture}: the program printed otherwise"
        );
        let (plain, cov) = (load(&plain_db), load(&cov_db));
        assert_eq!(plain.functions, cov.functions, "{fixture}");
        assert_eq!(calls_as_text(&plain), calls_as_text(&cov), "{fixture}");
        assert!(!plain.calls.is_empty());
        let (hit, _) = coverage_of(&cov_db).totals();
        assert!(hit > 0, "{fixture}: no line reached");
    }
}

#[test]
fn a_forked_child_runs_unharmed_and_its_lines_are_not_the_parents() {
    let c_file = repo().join("fixtures/c_basic/c_basic.c");
    let child_line = line_of(&c_file, "printf(\"child: add(7, 8)");
    let parent_line = line_of(&c_file, "printf(\"parent: add(1, 1)");
    // Not followed: the child gets its original bytes back and runs untraced.
    let (_tmp, db, out) = recorded(&["--coverage"], &c_basic_bin(), &["fork"]);
    assert!(out.contains("child: add(7, 8) = 15"), "{out}");
    let parent = coverage_of(&db);
    assert_eq!(state(&parent, "c_basic.c", child_line), Some(false));
    assert_eq!(state(&parent, "c_basic.c", parent_line), Some(true));
    // Followed: the child's run has its own coverage.
    let (_tmp, db, out) = recorded(&["--coverage", "--follow-forks"], &c_basic_bin(), &["fork"]);
    assert!(out.contains("child: add(7, 8) = 15"), "{out}");
    let store = Store::open(&db).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 2);
    let parent = store.coverage(runs[0].id).unwrap();
    let child = store.coverage(runs[1].id).unwrap();
    assert_eq!(state(&parent, "c_basic.c", child_line), Some(false));
    assert_eq!(state(&child, "c_basic.c", child_line), Some(true));
    assert_eq!(state(&child, "c_basic.c", parent_line), Some(false));
}

#[test]
fn every_thread_reaching_lines_is_named() {
    let (_tmp, db, _) = recorded(&["--coverage"], &fixture_bin("threads"), &[]);
    let c = coverage_of(&db);
    assert!(!c.threads.is_empty());
    for t in &c.threads {
        let name = t
            .name
            .as_deref()
            .unwrap_or_else(|| panic!("{t:?} has no name"));
        assert!(!name.is_empty() && name.len() <= 15, "{name:?}");
    }
    let (hit, _) = c.totals();
    let charged: usize = c
        .threads
        .iter()
        .flat_map(|t| t.lines.iter())
        .map(|(_, l)| l.len())
        .sum();
    assert!(charged >= hit, "every reached line is charged to a thread");
}

/// `genhtml`, or a failure saying how to install it.
fn genhtml() -> std::process::Command {
    let found = std::process::Command::new("genhtml")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "genhtml not found: install it (Debian/Ubuntu: `apt-get install lcov`; .ci/run does)"
    );
    std::process::Command::new("genhtml")
}

/// The first "(N of M" after `after` in genhtml's or carve's summary.
fn n_of_m(text: &str, after: &str) -> (usize, usize) {
    let at = text
        .find(after)
        .unwrap_or_else(|| panic!("{after} not in {text}"))
        + after.len();
    let rest = &text[at..];
    let rest = &rest[rest.find('(').unwrap_or_else(|| panic!("no ( in {rest}")) + 1..];
    let words: Vec<&str> = rest.split_whitespace().take(3).collect();
    let num = |s: &str| {
        s.trim_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .unwrap()
    };
    assert_eq!(words[1], "of", "{rest}");
    (num(words[0]), num(words[2]))
}

#[test]
fn the_lcov_export_is_read_by_genhtml_with_carves_own_counts() {
    let (tmp, db, _) = recorded(&["--coverage"], &fixture_bin("expr"), &[]);
    let lcov = tmp.path().join("out/expr.info");
    std::fs::create_dir_all(lcov.parent().unwrap()).unwrap();
    let out = carve()
        .args(["coverage", "--db"])
        .arg(&db)
        .arg("--lcov")
        .arg(&lcov)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let summary = stdout(&out);
    let (hit, all) = n_of_m(&summary, "# run");
    assert_eq!((hit, all), coverage_of(&db).totals());
    let text = std::fs::read_to_string(&lcov).unwrap();
    assert!(
        text.contains("FN:") && text.contains("end_of_record"),
        "{text}"
    );
    let html = tmp.path().join("html");
    let shown = genhtml().arg("-o").arg(&html).arg(&lcov).output().unwrap();
    assert!(
        shown.status.success(),
        "genhtml refused the file: {}{}",
        stdout(&shown),
        stderr(&shown)
    );
    assert_eq!(n_of_m(&stdout(&shown), "lines......:"), (hit, all));
    assert!(html.join("index.html").is_file());
    // The JSON form says the same.
    let out = carve()
        .args(["coverage", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["lines_reached"], hit);
    assert_eq!(json["lines_with_code"], all);
}

#[test]
fn coverage_of_a_run_recorded_without_it_is_one_error_line_and_writes_nothing() {
    let (tmp, db, _) = recorded(&[], &fixture_bin("abc"), &[]);
    let lcov = tmp.path().join("abc.info");
    let out = carve()
        .args(["coverage", "--db"])
        .arg(&db)
        .arg("--lcov")
        .arg(&lcov)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("without --coverage") && err.contains("carve record --coverage"));
    assert!(!lcov.exists());
}

#[test]
fn an_lcov_file_in_a_missing_directory_is_refused_and_nothing_is_left() {
    let (tmp, db, _) = recorded(&["--coverage"], &fixture_bin("abc"), &[]);
    let lcov = tmp.path().join("no/such/dir/abc.info");
    let out = carve()
        .args(["coverage", "--db"])
        .arg(&db)
        .arg("--lcov")
        .arg(&lcov)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cannot write the lcov file"), "{err}");
    assert!(!tmp.path().join("no").exists());
}

const TESTS_SOURCE: &str = r#"
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

pub fn mul(a: i32, b: i32) -> i32 {
    a * b
}

pub fn neg(a: i32) -> i32 {
    -a
}

#[test]
fn t_add() {
    assert_eq!(add(2, 3), 5);
}

#[test]
fn t_mul() {
    assert_eq!(mul(2, 3), 6);
}

#[test]
fn t_both() {
    assert_eq!(add(mul(2, 3), 1), 7);
}

mod tests {
    #[test]
    fn a_rather_long_test_name() {
        assert_eq!(super::neg(1), -1);
    }
}
"#;

/// The functions of `pt` (a test binary) each named thread reached, without the tests' own.
fn functions_by_thread(c: &Coverage) -> Vec<(String, Vec<String>)> {
    c.threads
        .iter()
        .map(|t| {
            let functions = c
                .functions_reached_by(t)
                .iter()
                .map(|f| f.path.clone())
                .filter(|p| ["pt::add", "pt::mul", "pt::neg"].contains(&p.as_str()))
                .collect();
            (t.name.clone().unwrap_or_default(), functions)
        })
        .filter(|(name, _)| name != "pt")
        .collect()
}

#[test]
fn per_thread_coverage_of_a_test_binary_says_which_test_reached_which_function() {
    let tmp = tempfile::tempdir().unwrap();
    let flags = ["--test", "-g", "--edition", "2021"];
    let bin = compiled(tmp.path(), "pt.rs", "rustc", &flags, TESTS_SOURCE);
    let owned = |v: &[(&str, &[&str])]| -> Vec<(String, Vec<String>)> {
        v.iter()
            .map(|(n, f)| (n.to_string(), f.iter().map(|s| s.to_string()).collect()))
            .collect()
    };
    // libtest runs the tests in name order, each on a thread named after it (cut to 15 bytes
    // by the kernel, given in full by carve); with --test-threads=1, one at a time.
    let (_t, db, _) = recorded(
        &["--coverage", "--coverage-per-thread"],
        &bin,
        &["--test-threads=1"],
    );
    assert_eq!(
        functions_by_thread(&coverage_of(&db)),
        owned(&[
            ("t_add", &["pt::add"]),
            ("t_both", &["pt::add", "pt::mul"]),
            ("t_mul", &["pt::mul"]),
            ("tests::a_rather_long_test_name", &["pt::neg"]),
        ])
    );
    // Without re-arming, a line is charged to the first test only.
    let (_t, db, _) = recorded(&["--coverage"], &bin, &["--test-threads=1"]);
    assert_eq!(
        functions_by_thread(&coverage_of(&db)),
        owned(&[
            ("t_add", &["pt::add"]),
            ("t_both", &["pt::mul"]),
            ("t_mul", &[]),
            ("tests::a_rather_long_test_name", &["pt::neg"]),
        ])
    );
}

#[test]
fn hostile_file_names_in_a_trace_reach_neither_the_terminal_nor_the_lcov_structure() {
    let (tmp, db, _) = recorded(&["--coverage"], &fixture_bin("abc"), &[]);
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE code_lines SET file = ?1 WHERE id = 1",
        ["/x/\u{1b}[31mred\u{202e}\nSF:/etc/passwd\nDA:1,1"],
    )
    .unwrap();
    drop(conn);
    let lcov = tmp.path().join("abc.info");
    let out = carve()
        .args(["coverage", "--db"])
        .arg(&db)
        .arg("--lcov")
        .arg(&lcov)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let shown = stdout(&out);
    assert!(shown.contains("/x/\\u001b[31mred"), "{shown}");
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{202e}'),
        "{shown}"
    );
    assert!(!shown.lines().any(|l| l.starts_with("SF:")), "{shown}");
    let text = std::fs::read_to_string(&lcov).unwrap();
    assert!(!text.lines().any(|l| l == "SF:/etc/passwd"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
    // Each record still has one SF line and ends once.
    assert_eq!(
        text.lines().filter(|l| l.starts_with("SF:")).count(),
        text.lines().filter(|l| *l == "end_of_record").count()
    );
}

/// A crate whose carved tests skip one function on purpose: `stamped` reads the clock, so its
/// call is skipped as `untestable`; `double` is carved.
const STAMP: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        "[package]\nname = \"stamp\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    ),
    (
        "src/lib.rs",
        r#"use std::time::{SystemTime, UNIX_EPOCH};

/// Pure: carved tests replay it.
pub fn double(x: u32) -> u32 {
    x * 2
}

/// Reads the clock: carved tests skip it as untestable.
pub fn stamped(msg: &str) -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let shown = if secs > 0 { 1 } else { 0 };
    format!("[{shown}] {msg}")
}
"#,
    ),
    (
        "src/main.rs",
        r#"fn main() {
    println!("{}", stamp::double(3));
    println!("{}", stamp::double(4));
    println!("{}", stamp::stamped("hi"));
}
"#,
    ),
];

/// The `stamp` crate written and built under a new temporary directory: (its guard, the crate).
fn stamp_crate() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("stamp");
    write_tree(&dir, STAMP);
    let built = cargo_in(&dir, &["build", "--quiet"]);
    assert!(built.status.success(), "{}", stderr(&built));
    (tmp, dir)
}

#[test]
fn generate_says_how_many_recorded_lines_its_tests_reach_and_why_the_others_are_missed() {
    let (_tmp, dir) = stamp_crate();
    let db = dir.join("trace.db");
    let out = record(&db, &["--coverage"], &dir.join("target/debug/stamp"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lib = dir.join("src/lib.rs");
    // Debug code for every line from `double`'s signature to its closing brace (3 lines) and
    // from `stamped`'s to its own (7): the recording reached all ten in lib.rs (main.rs is the
    // program's, not the library's).
    let stamped_lines: Vec<u32> =
        (line_of(&lib, "pub fn stamped")..=line_of(&lib, "format!(") + 1).collect();
    let c = coverage_of(&db);
    let (_, lib_lines) = c
        .lines
        .iter()
        .find(|(f, _)| f.ends_with("stamp/src/lib.rs"))
        .expect("lib.rs has lines");
    assert_eq!(
        lib_lines.values().filter(|r| **r).count(),
        10,
        "{lib_lines:?}"
    );

    // Not verified, not built: nothing to measure.
    let elsewhere = tempfile::tempdir().unwrap();
    let unverified = stdout(&generate_unverified(
        &db,
        elsewhere.path(),
        &["--crate", dir.to_str().unwrap()],
    ));
    assert!(
        unverified.ends_with(
            "\nline coverage of the carved tests not measured: the carved tests were not \
             verified (--no-verify); verification builds them, then carve records them\n"
        ),
        "{unverified}"
    );

    // The tests carve `double` only: they reach its 3 lines, and none of `stamped`'s 7.
    let text = generate_into_tests(&dir, &db, &[]);
    assert!(
        text.contains(
            "\ncarved tests reach 3 of the 10 lines (30%) the recording reached in stamp\n"
        ),
        "{text}"
    );
    // The line figure is the headline: before the call counts (issue 30).
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} in {text}"));
    assert!(at("carved tests reach") < at("public API:"), "{text}");

    let json = generate_into_tests(&dir, &db, &["--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let lc = &report["line_coverage"];
    assert_eq!(lc["recorded_lines"], 10, "{lc:#}");
    assert_eq!(lc["reached_lines"], 3, "{lc:#}");
    assert_eq!(lc["test_targets"], serde_json::json!(["carved_stamp"]));
    let missed = lc["not_reached"].as_array().unwrap();
    let functions: Vec<&str> = missed
        .iter()
        .map(|m| m["function"].as_str().unwrap())
        .collect();
    assert_eq!(
        functions,
        ["stamp::stamped", "stamp::stamped::{{closure}}"],
        "{lc:#}"
    );
    let stamped = &missed[0];
    assert!(stamped["file"]
        .as_str()
        .unwrap()
        .ends_with("stamp/src/lib.rs"));
    assert_eq!(stamped["lines"], serde_json::json!(stamped_lines));
    assert_eq!(
        stamped["skipped"],
        serde_json::json!([{
            "reason": "untestable",
            "calls": 1,
            "detail": "clock: std::time::SystemTime::now in stamp::stamped",
        }])
    );
    // The closure on the `map_or` line is no function a test can call.
    let closure = &missed[1];
    assert_eq!(
        closure["lines"],
        serde_json::json!([line_of(&lib, ".map_or(0")])
    );
    assert_eq!(closure["not_supported"], "closure");
}

#[test]
fn generate_says_to_record_with_coverage_and_measures_nothing_when_told_not_to() {
    let (_tmp, dir) = stamp_crate();
    let db = dir.join("trace.db");
    let out = record(&db, &[], &dir.join("target/debug/stamp"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tests = dir.join("tests");
    std::fs::create_dir_all(&tests).unwrap();
    let generated = generate_unverified(&db, &tests, &[]);
    assert!(generated.status.success(), "{}", stderr(&generated));
    let text = stdout(&generated);
    let last = text.lines().last().unwrap();
    assert_eq!(
        last,
        "line coverage of the carved tests not measured: run 1 was recorded without --coverage; \
         record with --coverage to measure which of the lines it reached the carved tests reach"
    );
    let json = generate_unverified(&db, &tests, &["--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert!(report["line_coverage"].is_null());
    assert!(report["line_coverage_note"]
        .as_str()
        .unwrap()
        .contains("record with --coverage"));

    let quiet = generate_unverified(&db, &tests, &["--no-coverage"]);
    assert!(
        !stdout(&quiet).contains("line coverage"),
        "{}",
        stdout(&quiet)
    );
}

/// A selected function every call of which the compiler inlined (`#[inline(always)]`, even in
/// a debug build) has no code of its own, but its lines run where it was inlined: `--coverage`
/// counts them there, as that function's, reached or not, also where a traced function
/// inlined it, and not where the linker dropped the code inlining it (no breakpoint at
/// address 0: the program starts and runs as without carve).
#[test]
fn the_lines_of_a_function_only_inlined_into_its_callers_are_counted_where_it_was_inlined() {
    const LIB: &str = r#"
pub struct Size(pub u64);

impl Size {
    #[inline(always)]
    pub fn as_kib(&self) -> u64 {
        self.0 / 1024
    }

    #[inline(always)]
    pub fn as_mib(&self) -> u64 {
        self.0 / (1024 * 1024)
    }

    pub fn bytes(&self) -> u64 {
        self.0 + self.as_kib() * 0
    }
}

/// Never called: the linker drops its code, and DWARF describes it (and the copy of `as_kib`
/// inlined into it) at address 0.
pub fn unused(s: &Size) -> u64 {
    let mut total = 0;
    for n in [1, 2, 3] {
        total += n * s.0;
    }
    total + s.as_kib()
}
"#;
    const MAIN: &str = r#"
fn main() {
    let s = inlined::Size(4096);
    println!("{} {}", s.as_kib(), s.bytes());
    if std::env::args().count() > 5 {
        println!("{}", s.as_mib());
    }
}
"#;
    let c = record_small_crate("inlined", LIB, MAIN, &["--coverage"]);
    assert!(c.recorded.status.success(), "{}", stderr(&c.recorded));
    let lib = c.dir.join("src/lib.rs");
    let lib = lib.to_string_lossy();
    let cov = coverage_of(&c.db);
    let function = |path: &str| {
        (cov.functions.iter())
            .find(|f| f.path == path)
            .unwrap_or_else(|| panic!("no {path} in {:?}", cov.functions))
    };
    let kib = line_of(&c.dir.join("src/lib.rs"), "self.0 / 1024");
    let mib = line_of(&c.dir.join("src/lib.rs"), "self.0 / (1024 * 1024)");
    let bytes = line_of(&c.dir.join("src/lib.rs"), "self.0 + self.as_kib()");
    let as_kib = function("inlined::Size::as_kib");
    // Its copy in `unused` lies at address 0 with `unused`'s own first rows: not its line.
    assert_eq!(as_kib.lines, vec![(lib.to_string(), kib)]);
    assert_eq!(as_kib.reached_lines, vec![(lib.to_string(), kib)]);
    let as_mib = function("inlined::Size::as_mib");
    assert_eq!(as_mib.lines, vec![(lib.to_string(), mib)]);
    assert_eq!(as_mib.reached, 0);
    assert!(!cov.lines[&*lib][&mib]);
    // `bytes` and `main` have code of their own: what they inlined is not their line.
    let own = function("inlined::Size::bytes");
    let at = |line: u32| (lib.to_string(), line);
    assert_eq!(
        own.reached_lines,
        vec![at(bytes - 1), at(bytes), at(bytes + 1)]
    );
    let main = function("inlined::main");
    assert!(
        main.lines.iter().all(|(file, _)| file.ends_with("main.rs")),
        "{main:?}"
    );
    // No call of a function with no code is recorded.
    let store = Store::open(&c.db).unwrap();
    let trace: Trace = store
        .load_trace(store.latest_run().unwrap().unwrap())
        .unwrap();
    let calls = |path: &str| {
        let id = trace.functions.iter().find(|f| f.path == path).unwrap().id;
        trace.calls.iter().filter(|c| c.function == id).count()
    };
    assert_eq!(calls("inlined::Size::as_kib"), 0);
    assert_eq!(calls("inlined::Size::bytes"), 1);
}
