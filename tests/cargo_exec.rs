//! `carve record` follows `exec`: `carve record -- cargo test` records each test binary cargo
//! runs as a run of its own (cargo and rustc run untraced), with the test each call came from,
//! and `show --format chrome-trace` lays a run's calls on a timeline.

mod common;

use std::path::Path;
use std::process::Command;

use carve_storage::{Run, Store};
use common::*;

/// The file name of a run's program (`a-0123abcd` for a test binary).
fn binary(run: &Run) -> String {
    Path::new(&run.info.program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// (thread name, function path) of every call of a run, in start order.
fn calls_by_test(store: &Store, run: &Run) -> Vec<(String, String)> {
    let trace = store.load_trace(run.id).unwrap();
    let names = store.thread_names(run.id).unwrap();
    trace
        .calls
        .iter()
        .map(|c| {
            (
                names.get(&c.thread).cloned().unwrap_or_default(),
                trace.function(c.function).unwrap().path.clone(),
            )
        })
        .collect()
}

#[test]
fn recording_cargo_test_records_each_test_binary_as_a_run_with_its_test_names() {
    let (_tmp, dir) = copy_fixture("twotests");
    let db = dir.join("trace.db");
    // cargo builds the crate (rustc, the linker) and runs its test binaries, all under carve.
    let out = output_within(
        carve()
            .args(["record", "--db"])
            .arg(&db)
            .args(["--", &cargo(), "test", "--offline", "--quiet"])
            .current_dir(&dir)
            .env("CARGO_TARGET_DIR", dir.join("target"))
            .env_remove("RUSTFLAGS"),
        RECORD_LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("test result: ok. 2 passed"),
        "{}",
        stdout(&out)
    );

    let store = Store::open(&db).unwrap();
    let runs = store.runs().unwrap();
    let names: Vec<String> = runs.iter().map(binary).collect();
    // Only programs with debug info selecting something: no cargo, rustc, cc or ld.
    for name in &names {
        assert!(
            name.starts_with("a-") || name.starts_with("b-") || name.starts_with("twotests-"),
            "unexpected run of {name}: {names:?}"
        );
    }
    let a = runs
        .iter()
        .find(|r| binary(r).starts_with("a-"))
        .expect("tests/a.rs recorded");
    let b = runs
        .iter()
        .find(|r| binary(r).starts_with("b-"))
        .expect("tests/b.rs recorded");
    assert_eq!(
        names
            .iter()
            .filter(|n| n.starts_with("a-") || n.starts_with("b-"))
            .count(),
        2,
        "one run per test binary: {names:?}"
    );
    for run in [a, b] {
        assert_eq!(
            run.end.as_ref().map(|e| &e.exit),
            Some(&carve_storage::ProcessExit::Exited { code: 0 })
        );
    }
    let in_a = calls_by_test(&store, a);
    let of_test = |calls: &[(String, String)], test: &str, f: &str| {
        calls.iter().filter(|(t, p)| t == test && p == f).count()
    };
    assert_eq!(of_test(&in_a, "adds", "twotests::add"), 1, "{in_a:?}");
    // A name longer than the 15 bytes the kernel keeps is given in full.
    let long = "multiplies_by_repeated_addition";
    assert_eq!(of_test(&in_a, long, "twotests::multiply"), 1, "{in_a:?}");
    assert_eq!(of_test(&in_a, long, "twotests::add"), 3, "{in_a:?}");
    let in_b = calls_by_test(&store, b);
    assert_eq!(
        of_test(&in_b, "greets_someone_by_name", "twotests::greet"),
        1,
        "{in_b:?}"
    );

    let shown = carve()
        .args(["show", "--db"])
        .arg(&db)
        .args(["--run", &a.id.0.to_string()])
        .output()
        .unwrap();
    assert!(shown.status.success(), "{}", stderr(&shown));
    let text = stdout(&shown);
    assert!(text.contains(&format!(": {long}\n")), "{text}");
    assert!(text.contains("twotests::multiply(a: 4, b: 3)"), "{text}");
    let summary = stderr(&out);
    assert!(summary.contains(&format!("as run {}", a.id.0)), "{summary}");

    // Every run on one timeline: both test binaries' processes, each test's thread named.
    let timeline = carve()
        .args(["show", "--format", "chrome-trace", "--all-runs", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(timeline.status.success(), "{}", stderr(&timeline));
    let timeline: serde_json::Value = serde_json::from_slice(&timeline.stdout).unwrap();
    let events = timeline["traceEvents"].as_array().unwrap();
    for run in [a, b] {
        assert!(
            events
                .iter()
                .any(|e| e["pid"] == run.info.pid && e["ph"] == "B"),
            "run {} is on the timeline",
            run.id.0
        );
    }
    assert!(events.iter().any(|e| e["name"] == "thread_name"
        && e["args"]["name"] == "greets_someone_by_name"
        && e["pid"] == b.info.pid));

    // Unit tests carved from an integration test's run say which test each call came from.
    let generated = carve()
        .args(["generate", "--no-distil", "--db"])
        .arg(&db)
        .args(["--run", &a.id.0.to_string(), "--out"])
        .arg(dir.join("tests"))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(generated.status.success(), "{}", stderr(&generated));
    // Named after the test binary `a` it was carved from.
    let carved = std::fs::read_to_string(dir.join("tests/carved_a_twotests.rs")).unwrap();
    assert!(
        carved.contains(&format!(
            "/// Carved from a call made in test `{long}` of `a` (run {}).\n#[test]\nfn multiply_returns_12()",
            a.id.0
        )),
        "{carved}"
    );
    assert!(
        carved.contains("/// Carved from a call made in test `adds` of `a`"),
        "{carved}"
    );
}

#[test]
fn with_crate_only_that_crates_functions_are_recorded_in_each_test_binary() {
    let (_tmp, dir) = copy_fixture("twotests");
    let built = cargo_in(&dir, &["test", "--offline", "--no-run", "--quiet"]);
    assert!(built.status.success(), "{}", stderr(&built));
    let db = dir.join("trace.db");
    let out = carve()
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
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let store = Store::open(&db).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1, "only tests/a.rs ran");
    let calls = calls_by_test(&store, &runs[0]);
    assert!(!calls.is_empty());
    // The test functions themselves (crate `a`) are not selected, the library's are.
    assert!(
        calls.iter().all(|(_, f)| f.starts_with("twotests::")),
        "{calls:?}"
    );
}

#[test]
fn a_program_a_shell_runs_is_recorded_and_the_shell_is_not() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let bin = fixture_bin("twotests");
    let out = record(
        &db,
        &[],
        Path::new("/bin/sh"),
        &["-c", &format!("{} && exit 3", bin.display())],
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "the shell's exit: {}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("hello, main"));
    let store = Store::open(&db).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1, "the program, not the shell");
    assert_eq!(
        Path::new(&runs[0].info.program),
        bin.canonicalize().unwrap()
    );
    let trace = store.load_trace(runs[0].id).unwrap();
    assert_eq!(
        calls_of(&trace, "twotests::add")
            .iter()
            .map(|c| c.ret.clone().unwrap().to_string())
            .collect::<Vec<_>>(),
        ["3", "6"]
    );
}

/// A shell that `exec`s the program: alone on the thread serving it, the process is traced on
/// there; with a process of the shell's still running (`sleep &`), it is let go to a thread of
/// its own. Either way the program is recorded from its first instruction, and carve exits
/// with its code (101: the program panics on a bad argument).
#[test]
fn a_program_a_shell_execs_is_recorded_alone_or_beside_another_process() {
    let bin = fixture_bin("twotests");
    for script in [
        format!("exec {} spawn x 0", bin.display()),
        format!("sleep 0.3 & exec {} spawn x 0", bin.display()),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("t.db");
        let out = record(&db, &[], Path::new("/bin/sh"), &["-c", &script]);
        assert_eq!(out.status.code(), Some(101), "{script}: {}", stderr(&out));
        let store = Store::open(&db).unwrap();
        let runs = store.runs().unwrap();
        assert_eq!(runs.len(), 1, "{script}");
        assert_eq!(
            Path::new(&runs[0].info.program),
            bin.canonicalize().unwrap()
        );
        assert_eq!(
            runs[0].end.as_ref().map(|e| &e.exit),
            Some(&carve_storage::ProcessExit::Exited { code: 101 }),
            "{script}"
        );
        // Its first call, `main` (the program's own code), was seen.
        let trace = store.load_trace(runs[0].id).unwrap();
        assert!(
            trace
                .calls
                .iter()
                .any(|c| trace.function(c.function).unwrap().path == "twotests::main"),
            "{script}"
        );
    }
}

/// A process forked by a followed process can report its first stop before its parent's fork
/// event. Taken for a new thread of the parent, it was let run, its `exec` was taken for the
/// parent's, and it was left stopped at that exec while its parent waited for it: recording
/// hung (seen as `cargo test` under carve hanging in the linker, cc -> collect2, on CI).
#[test]
fn processes_spawned_by_spawned_processes_are_all_followed_to_their_end() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let bin = fixture_bin("twotests");
    // 1 + 40 programs with debug info (the top and its children), 160 `true`s under them:
    // before the fix this hung within the first few dozen spawns on a 2-core machine.
    let out = record(&db, &[], &bin, &["spawn", "40", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().collect::<Vec<_>>().len(), 41);
    let store = Store::open(&db).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 41, "one run per program with debug info");
    for run in &runs {
        assert_eq!(
            run.end.as_ref().map(|e| &e.exit),
            Some(&carve_storage::ProcessExit::Exited { code: 0 }),
            "run {}",
            run.id
        );
        let trace = store.load_trace(run.id).unwrap();
        assert_eq!(calls_of(&trace, "twotests::add").len(), 1, "run {}", run.id);
    }
}

/// `carve show --format chrome-trace` of the `twotests` program, parsed.
fn chrome_trace(db: &Path) -> serde_json::Value {
    let out = carve()
        .args(["show", "--format", "chrome-trace", "--db"])
        .arg(db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("the chrome trace is JSON")
}

#[test]
fn chrome_trace_output_is_json_with_begin_and_end_events_in_nesting_order() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &fixture_bin("twotests"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = chrome_trace(&db);
    let events = trace["traceEvents"].as_array().expect("traceEvents");
    let calls: Vec<(&str, &str, f64)> = events
        .iter()
        .filter(|e| e["ph"] == "B" || e["ph"] == "E")
        .map(|e| {
            (
                e["ph"].as_str().unwrap(),
                e["name"].as_str().unwrap(),
                e["ts"].as_f64().unwrap(),
            )
        })
        .collect();
    let order: Vec<(&str, &str)> = calls.iter().map(|(ph, n, _)| (*ph, *n)).collect();
    assert_eq!(
        order,
        [
            ("B", "twotests::main"),
            ("B", "twotests::multiply"),
            ("B", "twotests::add"),
            ("E", "twotests::add"),
            ("B", "twotests::add"),
            ("E", "twotests::add"),
            ("E", "twotests::multiply"),
            ("B", "twotests::greet"),
            ("E", "twotests::greet"),
            ("E", "twotests::main"),
        ]
    );
    assert!(
        calls.windows(2).all(|w| w[0].2 <= w[1].2),
        "timestamps never go back: {calls:?}"
    );
    assert!(calls.first().unwrap().2 < calls.last().unwrap().2);
    let pid = events[0]["pid"].clone();
    assert!(events.iter().all(|e| e["pid"] == pid && e["tid"].is_i64()));
    assert!(events
        .iter()
        .any(|e| e["ph"] == "M" && e["name"] == "process_name"));
}

#[test]
fn chrome_trace_escapes_hostile_text_from_the_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &fixture_bin("twotests"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let hostile = "evil\"},{\"ph\":\"X\"}\n\u{1b}[2J\u{202e}";
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE functions SET path = ?1 WHERE path = 'twotests::greet'",
        [hostile],
    )
    .unwrap();
    conn.execute("UPDATE threads SET name = ?1", [hostile])
        .unwrap();
    drop(conn);
    let trace = chrome_trace(&db);
    let events = trace["traceEvents"].as_array().unwrap();
    assert_eq!(events.iter().filter(|e| e["name"] == hostile).count(), 2);
    assert!(events.iter().all(|e| e["ph"] != "X"));
    assert!(events
        .iter()
        .any(|e| e["name"] == "thread_name" && e["args"]["name"] == hostile));
}

#[test]
fn chrome_trace_of_a_trace_without_call_times_says_to_record_again() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &fixture_bin("twotests"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("UPDATE calls SET started_ns = NULL, ended_ns = NULL", [])
        .unwrap();
    drop(conn);
    let out = Command::new(env!("CARGO_BIN_EXE_carve"))
        .args(["show", "--format", "chrome-trace", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("record it again"), "{}", stderr(&out));
}
