//! `carve record` counts a call alike an earlier sibling (same function, values, effects and
//! calls below) as its repeat instead of storing it again (issue 29): a test that calls a
//! library in a loop makes a trace that grows with the library's behaviour, not with the loop,
//! and the tests carved from it are the tests carved from every call (`--all-calls`).

mod common;

use std::path::{Path, PathBuf};

use carve_storage::Store;
use common::*;

/// Builds the `loops` fixture's integration test `many` in `dir` and gives its binary.
fn many_binary(dir: &Path) -> PathBuf {
    let built = cargo_in(
        dir,
        &["test", "--no-run", "--offline", "--message-format=json"],
    );
    assert!(built.status.success(), "{}", stderr(&built));
    stdout(&built)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["target"]["name"] == "many")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .expect("the test binary of tests/many.rs")
}

fn record_loops(db: &Path, bin: &Path, calls: u64, extra: &[&str]) -> String {
    let out = output_within(
        carve()
            .args(["record", "--db"])
            .arg(db)
            .args(["--crate", "loops"])
            .args(extra)
            .arg("--")
            .arg(bin)
            .env("LOOPS_CALLS", calls.to_string()),
        RECORD_LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stderr(&out)
}

#[test]
fn a_loop_of_alike_calls_is_stored_once_and_counted() {
    let (_tmp, dir) = copy_fixture("loops");
    let bin = many_binary(&dir);
    let db = dir.join("trace.db");
    // A million calls of three functions, ten distinct arguments each (and `Size == Size`).
    let said = record_loops(&db, &bin, 1_000_000, &[]);
    let store = Store::open(&db).unwrap();
    let run = store.latest_run().unwrap().unwrap();
    let stored = store.load_trace(run).unwrap();
    let counted = store.repeat_count(run).unwrap();
    let total = stored.calls.len() as u64 + counted;
    assert_eq!(
        total,
        1 + 333_333 * 4,
        "Window::new, then four calls a round"
    );
    assert!(
        stored.calls.len() < 100,
        "{} calls stored",
        stored.calls.len()
    );
    assert!(
        said.contains(&format!(
            "; {counted} calls alike earlier ones counted, not stored"
        )),
        "{said}"
    );
    let size = std::fs::metadata(&db).unwrap().len();
    assert!(size < 20 << 20, "the trace takes {size} bytes");
    // `carve show` says what the stored calls stand for.
    let shown = carve().args(["show", "--db"]).arg(&db).output().unwrap();
    let text = stdout(&shown);
    assert!(
        text.contains(&format!(
            "and {counted} repeats of them counted, not stored"
        )),
        "{text}"
    );
    assert!(text.contains("more calls alike)"), "{text}");
}

#[test]
fn the_tests_carved_from_the_counted_trace_are_those_carved_from_every_call() {
    let (_tmp, counted_dir) = copy_fixture("loops");
    let (_tmp2, all_dir) = copy_fixture("loops");
    let calls = 30_000;
    let counted_db = counted_dir.join("trace.db");
    record_loops(&counted_db, &many_binary(&counted_dir), calls, &[]);
    let all_db = all_dir.join("trace.db");
    record_loops(&all_db, &many_binary(&all_dir), calls, &["--all-calls"]);
    let all = Store::open(&all_db).unwrap();
    let all_run = all.latest_run().unwrap().unwrap();
    assert_eq!(all.repeat_count(all_run).unwrap(), 0);
    assert!(!all.run(all_run).unwrap().info.distinct_calls);

    let counted_summary = generate_into_tests(&counted_dir, &counted_db, &[]);
    let all_summary = generate_into_tests(&all_dir, &all_db, &[]);
    let counted_dir_text = counted_dir.display().to_string();
    let all_dir_text = all_dir.display().to_string();
    assert_eq!(
        counted_summary.replace(&counted_dir_text, "DIR"),
        all_summary.replace(&all_dir_text, "DIR")
    );
    let file = "tests/carved_many_loops.rs";
    let carved = std::fs::read_to_string(counted_dir.join(file)).unwrap();
    assert_eq!(
        carved,
        std::fs::read_to_string(all_dir.join(file)).unwrap(),
        "the same tests"
    );
    assert!(carved.contains("fn classify_"), "{carved}");
    // And the trace made whole again is the trace of every call.
    let counted = Store::open(&counted_db).unwrap();
    let run = counted.latest_run().unwrap().unwrap();
    let whole = counted.load_trace_whole(run).unwrap();
    let every = all.load_trace(all_run).unwrap();
    let shape = |t: &carve_storage::Trace| -> Vec<_> {
        t.calls
            .iter()
            .map(|c| {
                let path = &t.function(c.function).unwrap().path;
                (
                    c.parent.is_some(),
                    path.clone(),
                    c.args.clone(),
                    c.ret.clone(),
                )
            })
            .collect()
    };
    assert_eq!(shape(&whole), shape(&every));
}
