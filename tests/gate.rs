//! `carve gate` on real fixtures: a baseline recorded from a copy of a fixture, then seeded
//! behavioural changes (a different return value deep in the call tree, a changed argument to a
//! dependency, an extra call, a panic) make the gate exit 1 naming the function and both
//! values; an unchanged rebuild, and repeated runs of the non-deterministic `dice` and `ping`
//! against baselines recorded with `--runs 3`, exit 0.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

/// The target directory of one test's fixture copy, kept between test runs so dependencies
/// (rusqlite for `dao`) build once. One per test: their binaries must not overwrite each other.
fn fixture_target(test: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("gate-fixtures")
        .join(test)
}

/// A copy of fixture `name` with the fixtures' lock file, so it builds with the same versions.
fn copy_with_lock(name: &str) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = copy_fixture(name);
    std::fs::copy(repo().join("fixtures/Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    (tmp, dir)
}

/// Builds the crate at `dir` into a target directory named after the binary; returns the binary.
fn build(dir: &Path, bin: &str) -> PathBuf {
    build_in(dir, bin, bin)
}

/// Builds the crate at `dir` into the target directory `target` of [`fixture_target`].
fn build_in(dir: &Path, bin: &str, target: &str) -> PathBuf {
    let out = Command::new(cargo())
        .args(["build", "--quiet"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", fixture_target(target))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "{}", stderr(&out));
    fixture_target(target).join("debug").join(bin)
}

/// Replaces `from` by `to` in `dir/file`, insisting it was there.
fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let source = std::fs::read_to_string(&path).unwrap();
    assert!(source.contains(from), "{from:?} is in {file}");
    std::fs::write(&path, source.replacen(from, to, 1)).unwrap();
}

/// `carve gate --baseline DB --rerun-recorded-command [extra...]`: the baseline's own command,
/// whose program these tests rebuild in place.
fn gate(baseline: &Path, extra: &[&str]) -> Output {
    let mut with_rerun = vec!["--rerun-recorded-command"];
    with_rerun.extend(extra);
    gate_as_typed(baseline, &with_rerun)
}

/// `carve gate --baseline DB [extra...]`.
fn gate_as_typed(baseline: &Path, extra: &[&str]) -> Output {
    carve()
        .arg("gate")
        .arg("--baseline")
        .arg(baseline)
        .args(extra)
        .output()
        .expect("carve runs")
}

/// Records a baseline of `program` with `--runs N`.
fn baseline(dir: &Path, program: &Path, runs: u32) -> PathBuf {
    let db = dir.join("baseline.db");
    let runs = runs.to_string();
    let out = record(&db, &["--runs", &runs], program, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    db
}

fn report(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        stdout(out),
        stderr(out)
    )
}

#[test]
fn expr_passes_unchanged_and_fails_on_a_changed_return_value_or_a_panic() {
    let (_tmp, dir) = copy_with_lock("expr");
    let program = build(&dir, "expr");
    let db = baseline(&dir, &program, 2);

    // The new build named after `--`, as CI does.
    let same = gate_as_typed(&db, &["--", program.to_str().unwrap()]);
    assert_eq!(same.status.code(), Some(0), "{}", report(&same));
    assert!(
        stdout(&same).contains("carve gate: no divergence"),
        "{}",
        report(&same)
    );
    assert!(
        !stdout(&same).contains("2*(3+4)-5/2 = 11.5"),
        "the program's output stays off the report"
    );

    // An unchanged rebuild.
    edit(&dir, "src/eval.rs", "pub fn apply", "\npub fn apply");
    build(&dir, "expr");
    let rebuilt = gate(&db, &[]);
    assert_eq!(rebuilt.status.code(), Some(0), "{}", report(&rebuilt));

    // A different return value deep in the call tree: addition is off by one.
    edit(
        &dir,
        "src/eval.rs",
        "'+' => lhs + rhs,",
        "'+' => lhs + rhs + 1.0,",
    );
    build(&dir, "expr");
    let changed = gate(&db, &[]);
    let text = stdout(&changed);
    assert_eq!(changed.status.code(), Some(1), "{}", report(&changed));
    assert!(text.contains("✗ expr::evaluate"), "{text}");
    assert!(
        text.contains("main > evaluate > eval > eval > eval#2 > apply: return value changed"),
        "the first divergence is the addition itself: {text}"
    );
    assert!(text.contains("baseline: 7.0"), "{text}");
    assert!(text.contains("new:      8.0"), "{text}");

    // The JSON form of the same report.
    let json = gate(&db, &["--format", "json"]);
    assert_eq!(json.status.code(), Some(1));
    let value: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("valid JSON");
    assert_eq!(value["mode"], "trace");
    assert_eq!(value["baseline_runs"].as_array().unwrap().len(), 2);
    let evaluate = value["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["function"] == "expr::evaluate")
        .expect("a group for evaluate");
    assert_eq!(evaluate["module"], "expr");
    assert_eq!(evaluate["first"]["kind"], "return_changed");
    assert_eq!(evaluate["first"]["function"], "expr::eval::apply");
    assert_eq!(evaluate["first"]["baseline"], "7.0");
    assert_eq!(evaluate["first"]["new"], "8.0");
    assert!(value["summary"]["divergences"].as_u64().unwrap() > 1);

    // JUnit: valid XML, one failing testcase per diverged top-level function.
    let junit = gate(&db, &["--format", "junit"]);
    assert_eq!(junit.status.code(), Some(1));
    let cases = parse_junit(&stdout(&junit));
    let evaluate = cases
        .iter()
        .find(|c| c.name == "expr::evaluate")
        .expect("a testcase for evaluate");
    assert_eq!(evaluate.classname, "expr");
    let message = evaluate.failure.as_deref().expect("evaluate failed");
    assert!(message.contains("apply: return value changed"), "{message}");
    assert!(message.contains("7.0 → 8.0"), "{message}");
    assert!(
        cases.iter().any(|c| c.failure.is_none()),
        "passing testcases are listed too"
    );

    // A panic introduced: `apply('^', 2, 10)` no longer returns.
    edit(
        &dir,
        "src/eval.rs",
        "'+' => lhs + rhs + 1.0,",
        "'+' => lhs + rhs,",
    );
    edit(
        &dir,
        "src/eval.rs",
        "'^' => lhs.powf(rhs),",
        "'^' => panic!(\"no powers today\"),",
    );
    build(&dir, "expr");
    let panicked = gate(&db, &[]);
    let text = stdout(&panicked);
    assert_eq!(panicked.status.code(), Some(1), "{}", report(&panicked));
    assert!(
        text.contains("exit changed: exited with 0 → exited with 101"),
        "{text}"
    );
    assert!(text.contains("main > apply#2: outcome changed"), "{text}");
    assert!(text.contains("panicked: no powers today"), "{text}");
}

#[test]
fn a_changed_sql_string_reaching_the_connection_is_an_argument_divergence() {
    let (_tmp, dir) = copy_with_lock("dao");
    let program = build(&dir, "dao");
    let db = baseline(&dir, &program, 2);
    let same = gate(&db, &[]);
    assert_eq!(same.status.code(), Some(0), "{}", report(&same));

    edit(
        &dir,
        "src/lib.rs",
        "WHERE name = ?\"",
        "WHERE name = ? LIMIT 1\"",
    );
    build(&dir, "dao");
    let out = gate(&db, &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{}", report(&out));
    assert!(
        text.contains("✗ dao::DataAccessObject::get_user_details"),
        "{text}"
    );
    assert!(
        text.contains("prepare: argument changed (argument sql)"),
        "{text}"
    );
    assert!(
        text.contains("\"SELECT name, occupation FROM people WHERE name = ? LIMIT 1\""),
        "{text}"
    );
}

#[test]
fn an_extra_call_to_a_dependency_is_reported_with_the_changed_count() {
    let (_tmp, dir) = copy_with_lock("abc");
    let program = build(&dir, "abc");
    let db = baseline(&dir, &program, 2);
    let same = gate(&db, &[]);
    assert_eq!(same.status.code(), Some(0), "{}", report(&same));

    edit(
        &dir,
        "src/lib.rs",
        "        B::adjust(a.answer())",
        "        let _ = a.answer();\n        B::adjust(a.answer())",
    );
    build(&dir, "abc");
    let out = gate(&db, &["--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", report(&out));
    let value: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let divergences: Vec<&serde_json::Value> = value["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| std::iter::once(&g["first"]).chain(g["others"].as_array().unwrap()))
        .filter(|d| !d.is_null())
        .collect();
    let added = divergences
        .iter()
        .find(|d| d["kind"] == "call_added")
        .expect("a call was added");
    assert_eq!(added["function"], "<abc::A as abc::Answerer>::answer");
    assert!(
        added["call_path"]
            .as_str()
            .unwrap()
            .ends_with("ask > answer#2"),
        "{added}"
    );
    let count = divergences
        .iter()
        .find(|d| d["kind"] == "call_count_changed")
        .expect("the count changed");
    assert_eq!(count["baseline"], "1 call");
    assert_eq!(count["new"], "2 calls");
}

#[test]
fn ten_gates_of_unchanged_dice_and_ping_pass_against_baselines_of_three_runs() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["dice", "ping"] {
        let db = tmp.path().join(format!("{name}.db"));
        let out = record(&db, &["--runs", "3"], &fixture_bin(name), &[]);
        assert!(out.status.success(), "{}", stderr(&out));
        for round in 0..10 {
            let out = gate(&db, &[]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{name}, gate {round}: {}",
                report(&out)
            );
        }
    }
}

/// `hashorder` weighs words in the order its `RandomState` hashes them: the calls under
/// `Tally::total` see other words in every process. One baseline run learns nothing, yet the
/// gate stays quiet: the receiver's seed differs, so what runs under `total` may follow it. So
/// does `Word::hash`, given a `DefaultHasher` the seed keyed (`.0.hasher.k0`, and all it
/// hashed): a seed, not a divergence (pulldown-cmark's `CowStr::hash`). The total itself is
/// still compared, and a changed total fails the gate.
#[test]
fn values_ordered_by_a_hash_seed_stay_quiet_and_a_changed_result_still_fails() {
    let (_tmp, dir) = copy_with_lock("hashorder");
    let program = build(&dir, "hashorder");
    let db = baseline(&dir, &program, 1);
    for round in 0..3 {
        let out = gate(&db, &[]);
        assert_eq!(out.status.code(), Some(0), "gate {round}: {}", report(&out));
        assert!(
            stdout(&out).contains("unstable differences skipped"),
            "{}",
            report(&out)
        );
    }
    edit(
        &dir,
        "src/lib.rs",
        "order.iter().map(|(_, w)| weigh(w)).sum()",
        "order.iter().map(|(_, w)| weigh(w)).sum::<u64>() + 1",
    );
    build(&dir, "hashorder");
    let changed = gate(&db, &[]);
    assert_eq!(changed.status.code(), Some(1), "{}", report(&changed));
    let text = stdout(&changed);
    assert!(
        text.contains("main > total: return value changed"),
        "{}",
        report(&changed)
    );
    assert!(text.contains("baseline: 122"), "{}", report(&changed));
}

#[test]
fn record_runs_stores_one_run_per_repetition() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &["--runs", "3"], &fixture_bin("abc"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).matches("A::the_answer() = 42").count(),
        3,
        "each run's output passes through"
    );
    let store = carve_storage::Store::open(&db).unwrap();
    assert_eq!(store.runs().unwrap().len(), 3);
}

#[test]
fn a_baseline_with_one_run_reports_randomness_that_ignore_then_silences() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("dice.db");
    let out = record(&db, &[], &fixture_bin("dice"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let noisy = gate(&db, &[]);
    assert_eq!(noisy.status.code(), Some(1), "{}", report(&noisy));
    let quiet = gate(
        &db,
        &["--ignore", "dice::*", "--ignore", "<dice::OsRandom as *"],
    );
    assert_eq!(quiet.status.code(), Some(0), "{}", report(&quiet));
    assert!(
        stdout(&quiet).contains("ignored difference"),
        "{}",
        report(&quiet)
    );
}

#[test]
fn setup_errors_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = gate(&tmp.path().join("none.db"), &[]);
    assert_eq!(missing.status.code(), Some(2), "{}", report(&missing));
    let no_baseline = carve().arg("gate").output().unwrap();
    assert_eq!(no_baseline.status.code(), Some(2));
    let no_tests = carve()
        .args(["gate", "--tests"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(no_tests.status.code(), Some(2), "{}", report(&no_tests));
    assert!(stderr(&no_tests).contains("holds no carved tests"));
}

#[test]
fn gate_tests_summarises_failing_carved_tests_per_function() {
    let (_tmp, dir) = copy_with_lock("expr");
    let program = build_in(&dir, "expr", "expr-tests");
    let db = dir.join("trace.db");
    let out = record(&db, &[], &program, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    // Every verified test: the counts below are per carved test.
    let generated = carve()
        .args(["generate", "--no-distil", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(dir.join("tests"))
        .output()
        .unwrap();
    assert!(generated.status.success(), "{}", stderr(&generated));

    let tests = |format: &str| {
        carve()
            .args(["gate", "--format", format, "--tests"])
            .arg(&dir)
            .env("CARGO_TARGET_DIR", fixture_target("expr-tests"))
            .output()
            .unwrap()
    };
    let pass = tests("human");
    assert_eq!(pass.status.code(), Some(0), "{}", report(&pass));
    assert!(
        stdout(&pass).contains("carve gate: no divergence"),
        "{}",
        report(&pass)
    );

    edit(
        &dir,
        "src/eval.rs",
        "'+' => lhs + rhs,",
        "'+' => lhs + rhs + 1.0,",
    );
    let fail = tests("human");
    let text = stdout(&fail);
    assert_eq!(fail.status.code(), Some(1), "{}", report(&fail));
    assert!(text.contains("✗ expr::eval::apply"), "{text}");
    assert!(text.contains("carved_expr_eval::apply_"), "{text}");
    // 3 + 4 now gives 8: shown in full or on one line, by where its test comes in the list.
    assert!(
        text.contains("new:      8.0") || text.contains("7.0 → 8.0"),
        "{text}"
    );
    let junit = tests("junit");
    let cases = parse_junit(&stdout(&junit));
    let apply = cases
        .iter()
        .find(|c| c.name == "expr::eval::apply")
        .expect("a testcase for apply");
    assert_eq!(apply.classname, "expr::eval");
    assert!(apply.failure.is_some());
}

/// A JUnit testcase as parsed back with quick-xml.
#[derive(Debug)]
struct Case {
    name: String,
    classname: String,
    /// The `message` attribute of its `<failure>`.
    failure: Option<String>,
}

/// Parses JUnit XML strictly (any malformed markup fails the test) into its testcases.
fn parse_junit(xml: &str) -> Vec<Case> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    reader.config_mut().check_end_names = true;
    let mut cases: Vec<Case> = Vec::new();
    let attr = |e: &quick_xml::events::BytesStart, key: &str| -> Option<String> {
        e.try_get_attribute(key)
            .expect("well-formed attributes")
            .map(|a| {
                a.normalized_value(quick_xml::XmlVersion::Explicit1_0)
                    .expect("valid escapes")
                    .into_owned()
            })
    };
    let mut depth = 0;
    loop {
        match reader.read_event().expect("valid XML") {
            Event::Start(e) | Event::Empty(e) if e.name().0 == "testcase" => {
                cases.push(Case {
                    name: attr(&e, "name").expect("testcase name"),
                    classname: attr(&e, "classname").expect("testcase classname"),
                    failure: None,
                });
            }
            Event::Start(e) if e.name().0 == "failure" => {
                let case = cases.last_mut().expect("failure inside a testcase");
                case.failure = Some(attr(&e, "message").expect("failure message"));
            }
            Event::Start(_) => depth += 1,
            Event::End(_) => depth -= 1,
            Event::Eof => break,
            _ => {}
        }
    }
    let _ = depth;
    assert!(!cases.is_empty(), "{xml}");
    cases
}

/// The baseline's `--crate` is stored with its run, so the gate records the new build with the
/// same selection: only the library's functions, not the test functions calling them.
#[test]
fn the_new_build_is_recorded_with_the_baselines_crate_selection() {
    let (_tmp, dir) = copy_fixture("twotests");
    let db = dir.join("baseline.db");
    let out = output_within(
        carve()
            .args(["record", "--crate", "twotests", "--db"])
            .arg(&db)
            .args([
                "--",
                &cargo(),
                "test",
                "--offline",
                "--quiet",
                "--test",
                "a",
            ])
            .args(["--", "--test-threads=1"])
            .current_dir(&dir)
            .env("CARGO_TARGET_DIR", dir.join("target"))
            .env_remove("RUSTFLAGS"),
        RECORD_LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let baseline = carve_storage::Store::open(&db).unwrap();
    let runs = baseline.runs().unwrap();
    assert_eq!(runs.len(), 1, "the test binary of tests/a.rs");
    assert_eq!(runs[0].info.crates, ["twotests"]);

    let new_db = dir.join("new.db");
    let out = gate(&db, &["--new-db", new_db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", report(&out));
    let store = carve_storage::Store::open(&new_db).unwrap();
    let run = store.latest_run().unwrap().unwrap();
    let trace = store.load_trace(run).unwrap();
    assert_eq!(trace.run.info.crates, ["twotests"]);
    let paths: Vec<&str> = trace
        .calls
        .iter()
        .map(|c| trace.function(c.function).unwrap().path.as_str())
        .collect();
    assert!(paths.contains(&"twotests::multiply"), "{paths:?}");
    // Recorded with the default selection, the test functions of `a` would be there too.
    assert!(
        paths.iter().all(|p| p.starts_with("twotests::")),
        "{paths:?}"
    );
}

/// The one error line of a gate that could not start, after checking its exit code is 2.
fn error_line(out: &Output) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{}", report(out));
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line: {err}");
    assert!(lines[0].starts_with("carve: error: "), "{err}");
    lines[0].to_string()
}

/// The opt-in that runs the baseline's own command again, as recorded: it records and compares
/// as `-- PROGRAM ARGS` would.
#[test]
fn rerun_recorded_command_gates_the_command_stored_in_the_baseline() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("abc.db");
    let out = record(&db, &[], &fixture_bin("abc"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let same = gate_as_typed(&db, &["--rerun-recorded-command"]);
    assert_eq!(same.status.code(), Some(0), "{}", report(&same));
    assert!(
        stdout(&same).contains("carve gate: no divergence"),
        "{}",
        report(&same)
    );
    // Both at once is a contradiction, refused by the command line.
    let both = carve()
        .args(["gate", "--rerun-recorded-command", "--baseline"])
        .arg(&db)
        .arg("--")
        .arg(fixture_bin("abc"))
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2), "{}", report(&both));
}

/// A baseline whose run names no program, or a program that is gone, gets one line saying so,
/// and nothing about the temporary trace the new build would have gone to.
#[test]
fn a_baseline_whose_program_is_empty_or_gone_gets_one_clear_line() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("baseline.db");
    let out = record(&db, &[], &c_basic_bin(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let set_program = |program: &str| {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute("UPDATE runs SET program = ?1", [program])
            .unwrap();
    };

    set_program("");
    for extra in [&[][..], &["--rerun-recorded-command"][..]] {
        let line = error_line(&gate_as_typed(&db, extra));
        assert!(line.contains("names no program"), "{line}");
        assert!(line.contains("-- PROGRAM"), "{line}");
    }

    let gone = tmp.path().join("gone");
    set_program(gone.to_str().unwrap());
    let rerun = error_line(&gate_as_typed(&db, &["--rerun-recorded-command"]));
    let named = error_line(&gate_as_typed(&db, &["--", gone.to_str().unwrap()]));
    for line in [rerun, named] {
        assert!(line.contains(&gone.display().to_string()), "{line}");
        assert!(!line.contains("new.db"), "{line}");
    }
}
