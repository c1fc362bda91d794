//! `carve assess` on the `assessed` fixture, whose own tests leave one function of each of
//! Reneri's pseudo-tested kinds: every transformation's exact verdict, each undetected one's
//! diagnosis, and the report formats.

mod common;

use common::*;

/// One line per transformation: `function -> value: verdict` (with the diagnosis kind of an
/// undetected one, and `timeout`/`stack overflow` for those detected that way); skipped
/// functions as `function: skipped`.
fn verdicts(report: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for f in report["functions"].as_array().unwrap() {
        let name = f["function"].as_str().unwrap();
        if f["skipped"].is_string() {
            out.push(format!("{name}: skipped"));
            continue;
        }
        for t in f["transformations"].as_array().unwrap() {
            let v = &t["verdict"];
            let verdict = match v["verdict"].as_str().unwrap() {
                "detected" => {
                    let reason = v["reason"].as_str().unwrap();
                    if reason.starts_with("timed out") {
                        "detected (timeout)".to_string()
                    } else if reason.starts_with("crashed: stack overflow") {
                        "detected (stack overflow)".to_string()
                    } else {
                        assert!(reason.starts_with("failed: "), "{reason}");
                        "detected".to_string()
                    }
                }
                "undetected" => format!(
                    "undetected {}",
                    v["diagnosis"]["kind"].as_str().unwrap_or("(no diagnosis)")
                ),
                "not_reached" => "not reached".to_string(),
                "flaky" => format!(
                    "flaky ({} of {})",
                    v["detected"].as_u64().unwrap(),
                    v["runs"].as_u64().unwrap()
                ),
                other => other.to_string(),
            };
            out.push(format!(
                "{name} -> {}: {verdict}",
                t["value"].as_str().unwrap()
            ));
        }
    }
    out
}

#[test]
fn the_fixture_s_pseudo_tested_functions_are_found_and_diagnosed() {
    let (tmp, dir) = copy_fixture("assessed");
    let junit = tmp.path().join("assess.xml");
    let out = output_within(
        carve()
            .arg("assess")
            .arg("--crate")
            .arg(&dir)
            .args(["--format", "json", "--fail-under", "90", "--junit"])
            .arg(&junit),
        RECORD_LIMIT,
    );
    // 21 of 30 detected (7 undetected, 2 not reached by any test): below 90%.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        verdicts(&report),
        [
            "assessed::Countdown::new: skipped",
            "assessed::Countdown::run -> 0: detected",
            "assessed::Countdown::run -> 1: detected",
            "assessed::Countdown::tick -> true: detected (timeout)",
            "assessed::Countdown::tick -> false: detected",
            "assessed::Wallet::balance -> 0: detected",
            "assessed::Wallet::balance -> 1: detected",
            "assessed::Wallet::deposit -> (): detected",
            "assessed::Wallet::fee -> 0: undetected weak-oracle",
            "assessed::Wallet::fee -> 1: undetected weak-oracle",
            "assessed::Wallet::find -> None: detected",
            "assessed::Wallet::find -> Some(0): detected",
            // The one call of the tests already finds it at 1.
            "assessed::Wallet::find -> Some(1): undetected no-infection",
            // No test calls it, nor the binary's `main`: nothing to run, and counted as not
            // detected.
            "assessed::Wallet::history -> &[]: not reached",
            "assessed::Wallet::history_len -> 0: undetected no-propagation",
            "assessed::Wallet::history_len -> 1: undetected no-propagation",
            "assessed::Wallet::is_full -> true: detected",
            "assessed::Wallet::is_full -> false: undetected no-infection",
            "assessed::Wallet::is_overdrawn -> true: detected",
            "assessed::Wallet::is_overdrawn -> false: undetected no-infection",
            "assessed::Wallet::new: skipped",
            "assessed::Wallet::note -> (): detected",
            "assessed::Wallet::owner -> \"\": detected",
            "assessed::Wallet::rate -> 0.0: detected",
            "assessed::Wallet::rate -> 1.0: detected",
            "assessed::Wallet::statement -> String::new(): detected",
            "assessed::Wallet::withdraw -> Ok(()): detected",
            "assessed::half -> 0: detected",
            "assessed::half -> 1: detected (stack overflow)",
            "assessed::halvings -> 0: detected",
            "assessed::halvings -> 1: detected",
            "assessed::main -> (): not reached",
        ]
    );
    let summary = &report["summary"];
    assert_eq!(summary["detected"], 21);
    assert_eq!(summary["undetected"], 7);
    assert_eq!(summary["not_reached"], 2);
    assert_eq!(summary["not_reached_functions"], 2);
    assert_eq!(summary["score"], 70.0);
    assert_eq!(summary["flaky"], 0);
    // Every transformation ran --runs (3) times and agreed, but for the hang: a run killed by
    // the timeout is not repeated.
    for f in report["functions"].as_array().unwrap() {
        for t in f["transformations"].as_array().unwrap() {
            let hang = t["verdict"]["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("timed out"));
            let reached = !f["tests"].as_array().unwrap().is_empty();
            let runs = match (reached, hang) {
                (false, _) => 0,
                (true, true) => 1,
                (true, false) => 3,
            };
            assert_eq!(t["runs"], runs, "{} -> {}", f["function"], t["value"]);
        }
    }

    // The weak oracle names the test, the call and the value to assert.
    let fee = report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["function"] == "assessed::Wallet::fee")
        .unwrap();
    let d = &fee["transformations"][0]["verdict"]["diagnosis"];
    assert_eq!(d["test"], "tests::a_fee_can_be_computed");
    assert_eq!(
        d["evidence"],
        "tests::a_fee_can_be_computed: assessed::Wallet::fee returned 77 and now returns 0, and the test asserts nothing about it"
    );
    assert_eq!(
        d["suggestion"],
        "check the result: assert_eq!(assessed::Wallet::fee(..), 77)"
    );
    // Only the tests reaching a function run under its transformations.
    assert_eq!(
        fee["tests"],
        serde_json::json!(["tests::a_fee_can_be_computed"])
    );

    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("tests=\"30\" failures=\"9\""), "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 9);
}

#[test]
fn a_test_binary_can_be_assessed_directly_and_for_some_functions_only() {
    let (_tmp, dir) = copy_fixture("assessed");
    let built = cargo_in(&dir, &["test", "--no-run", "--message-format=json"]);
    assert!(built.status.success(), "{}", stderr(&built));
    let bin = stdout(&built)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| m["profile"]["test"] == true && m["target"]["kind"][0] == "lib")
        .and_then(|m| m["executable"].as_str().map(str::to_string))
        .expect("the lib's test binary");
    let out = output_within(
        carve()
            .args(["assess", "--filter", "assessed::Wallet::is_overdrawn", "--"])
            .arg(&bin),
        RECORD_LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("detected     assessed::Wallet::is_overdrawn -> true by tests::a_withdrawal_lowers_the_balance: failed: assertion failed: !w.is_overdrawn()"),
        "{text}"
    );
    assert!(
        text.contains("UNDETECTED   assessed::Wallet::is_overdrawn -> false (2 tests reach it: tests::a_withdrawal_lowers_the_balance, tests::too_large_a_withdrawal_is_refused)"),
        "{text}"
    );
    assert!(
        text.contains("no-infection: every call of assessed::Wallet::is_overdrawn under the tests (2 in all) already returned false and changed nothing"),
        "{text}"
    );
    assert!(
        text.contains("1 functions, 2 transformations: 1 detected, 1 undetected"),
        "{text}"
    );
}

/// Per transformation: `function -> value: kind: what --write-tests did`.
fn written(report: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for f in report["functions"].as_array().unwrap() {
        for t in f["transformations"].as_array().unwrap() {
            let v = &t["verdict"];
            let kind = v["diagnosis"]["kind"].as_str().unwrap_or("detected");
            let w = &t["written"];
            let what = match w["status"].as_str() {
                Some("written") => format!(
                    "{} fails with {}",
                    w["test"].as_str().unwrap(),
                    w["fails_with"].as_str().unwrap()
                ),
                Some("not_written") => format!("not written: {}", w["reason"].as_str().unwrap()),
                _ => "-".to_string(),
            };
            out.push(format!(
                "{} -> {}: {kind}: {what}",
                f["function"].as_str().unwrap(),
                t["value"].as_str().unwrap()
            ));
        }
    }
    out
}

/// The done-when: `--write-tests` turns each weak-oracle and no-propagation case of the
/// fixture into a passing test that fails under the transformation. Checked three ways: carve's
/// report, `cargo test` on the written file, and `carve assess` on the written tests' own
/// binary, which must detect every one of those transformations.
#[test]
fn write_tests_carves_for_each_weak_oracle_and_no_propagation_case_a_passing_test_that_catches_it()
{
    let (_tmp, dir) = copy_fixture("assessed");
    let out = output_within(
        carve()
            .arg("assess")
            .arg("--crate")
            .arg(&dir)
            .args(["--format", "json", "--write-tests"])
            .args(["--filter", "assessed::Wallet::fee"])
            .args(["--filter", "assessed::Wallet::history_len"])
            .args(["--filter", "assessed::Wallet::is_overdrawn"]),
        RECORD_LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let file = dir.join("tests/carved_assess_assessed.rs");
    let fails = |left: &str, right: &str| {
        format!("failed: assertion `left == right` failed (left: {left}, right: {right})")
    };
    assert_eq!(
        written(&report),
        [
            format!(
                "assessed::Wallet::fee -> 0: weak-oracle: fee_returns_77 fails with {}",
                fails("0", "77")
            ),
            format!(
                "assessed::Wallet::fee -> 1: weak-oracle: fee_returns_77 fails with {}",
                fails("1", "77")
            ),
            format!(
                "assessed::Wallet::history_len -> 0: no-propagation: history_len_returns_1 fails with {}",
                fails("0", "1")
            ),
            format!(
                "assessed::Wallet::history_len -> 1: no-propagation: history_len_returns_0 fails with {}",
                fails("1", "0")
            ),
            "assessed::Wallet::is_overdrawn -> true: detected: -".to_string(),
            // Nothing to catch: no test can tell the transformation from the code.
            "assessed::Wallet::is_overdrawn -> false: no-infection: -".to_string(),
        ]
    );
    let fee = &report["functions"][0]["transformations"][0]["written"];
    assert_eq!(fee["file"], file.display().to_string());
    assert_eq!(report["summary"]["caught_by_written_tests"], 4);
    assert_eq!(report["summary"]["left_without_test"], 0);

    // Only the tests that catch a case are left, and they pass on the code as it is.
    let names: Vec<String> = std::fs::read_dir(dir.join("tests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["carved_assess_assessed.rs"]);
    let source = std::fs::read_to_string(&file).unwrap();
    assert_eq!(source.matches("#[test]").count(), 3, "{source}");
    assert!(
        source.contains("let _ = wallet.deposit(7734i64);")
            && source.contains("assert_eq!(result, 77i64);"),
        "{source}"
    );
    let test = cargo_in(&dir, &["test", "--test", "carved_assess_assessed"]);
    assert!(test.status.success(), "{}", stderr(&test));
    assert!(
        stdout(&test).contains("test result: ok. 3 passed"),
        "{}",
        stdout(&test)
    );

    // Under each transformation, the written tests fail.
    let built = cargo_in(
        &dir,
        &[
            "test",
            "--no-run",
            "--message-format=json",
            "--test",
            "carved_assess_assessed",
        ],
    );
    let bin = stdout(&built)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| m["target"]["name"] == "carved_assess_assessed" && m["profile"]["test"] == true)
        .and_then(|m| m["executable"].as_str().map(str::to_string))
        .expect("the written tests' binary");
    let out = output_within(
        carve()
            .args(["assess", "--format", "json"])
            .args(["--filter", "assessed::Wallet::fee"])
            .args(["--filter", "assessed::Wallet::history_len", "--"])
            .arg(&bin),
        RECORD_LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let again: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        verdicts(&again),
        [
            "assessed::Wallet::fee -> 0: detected",
            "assessed::Wallet::fee -> 1: detected",
            "assessed::Wallet::history_len -> 0: detected",
            "assessed::Wallet::history_len -> 1: detected",
        ]
    );
}

/// A no-propagation case no test can catch through what the tests record: every call of
/// `history_len` runs on a wallet half-way through a deposit (no public call leaves a wallet
/// in that state, so no test is carved from them, nor from `note` above them; the test
/// functions and libtest's closures above those are no API), and the tests carved from the
/// public callers (`deposit`, `withdraw`) pass under the transformation (the history never
/// fills). The case
/// gets no test, the report says why, and no file is left behind.
#[test]
fn a_case_no_carved_test_catches_gets_no_test_and_says_why() {
    let (_tmp, dir) = copy_fixture("assessed");
    // The one test that calls is_full (and so history_len on a wallet it holds) no longer does.
    edit(
        &dir.join("src/lib.rs"),
        "        assert!(!w.is_full());\n        w.deposit(5);\n        assert!(!w.is_full());",
        "        w.deposit(5);\n        assert_eq!(w.balance(), 5);",
    );
    let out = output_within(
        carve()
            .arg("assess")
            .arg("--crate")
            .arg(&dir)
            .args(["--format", "json", "--write-tests"])
            .args(["--filter", "assessed::Wallet::history_len"]),
        RECORD_LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let passes = |tests: &[&str]| {
        tests
            .iter()
            .map(|t| format!("{t} passes under it too"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    // `-> 0` is caught since a changed receiver is checked by its getters too (issue 27): the
    // carved `deposit_with_34` checks `history_len()` after the deposit.
    assert_eq!(
        written(&report),
        [
            "assessed::Wallet::history_len -> 0: no-propagation: deposit_with_34 fails with failed: assertion `left == right` failed (left: 0, right: 2)".to_string(),
            format!(
                "assessed::Wallet::history_len -> 1: no-propagation: not written: no carved test catches it: {}; 28 other calls became no test: not callable from a test (private or not supported) (14), receiver not rebuilt (14)",
                passes(&[
                    "deposit_with_700",
                    "deposit_with_7734",
                    "deposit_with_5",
                    "deposit_with_1000",
                    "deposit_with_20000",
                    "deposit_with_50",
                    "deposit_with_100"
                ])
            ),
        ]
    );
    assert_eq!(report["summary"]["left_without_test"], 1);
}

/// A test that checks `answer` only on every other run (it counts its runs in a file) catches
/// its transformations in some of the repeated runs and not in others: flaky, not undetected
/// and not detected.
#[test]
fn a_transformation_caught_in_some_runs_only_is_flaky() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("everyother");
    write_tree(
        &dir,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"everyother\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
            ),
            (
                "src/lib.rs",
                EVERY_OTHER_RUN_LIB,
            ),
        ],
    );
    let out = output_within(
        carve()
            .arg("assess")
            .arg("--crate")
            .arg(&dir)
            .args(["--format", "json", "--runs", "3"]),
        RECORD_LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    // Run 1 is the tests as they are; `-> 0` runs 2 to 4 (caught in 2 and 4), `-> 1` runs 5 to
    // 7 (caught in 6).
    assert_eq!(
        verdicts(&report),
        [
            "everyother::answer -> 0: flaky (2 of 3)",
            "everyother::answer -> 1: flaky (1 of 3)",
        ]
    );
    let v = &report["functions"][0]["transformations"][0]["verdict"];
    assert_eq!(v["test"], "tests::the_answer_is_checked_every_other_run");
    assert_eq!(
        v["reason"],
        "failed: assertion `left == right` failed (left: 0, right: 42)"
    );
    assert_eq!(report["summary"]["flaky"], 2);
    assert_eq!(report["summary"]["undetected"], 0);
    // Each is then diagnosed from a run where it went undetected (tests/assess_more.rs checks
    // the diagnosis), compared with runs 8 to 10, the code as it is recorded again: `-> 0` from
    // run 11, `-> 1` from run 13 (run 12 catches it).
    assert_eq!(
        std::fs::read_to_string(dir.join("runs")).unwrap().trim(),
        "13"
    );
}

#[test]
fn assess_without_a_crate_or_a_binary_says_what_to_give() {
    let out = carve().arg("assess").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("give --crate DIR or -- TEST_BINARY"),
        "{}",
        stderr(&out)
    );
    let out = carve()
        .args(["assess", "--crate", "/nonexistent"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("/nonexistent has no Cargo.toml"),
        "{}",
        stderr(&out)
    );
}
