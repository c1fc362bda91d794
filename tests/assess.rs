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
    // 20 of 27 detected: below 90%.
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
            "assessed::Wallet::history -> &[]: undetected not-reached",
            "assessed::Wallet::history_len -> 0: undetected no-propagation",
            "assessed::Wallet::history_len -> 1: undetected no-propagation",
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
        ]
    );
    let summary = &report["summary"];
    assert_eq!(summary["detected"], 20);
    assert_eq!(summary["undetected"], 7);

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
        "tests::a_fee_can_be_computed: Wallet::fee returned 77 and now returns 0, and the test asserts nothing about it"
    );
    assert_eq!(
        d["suggestion"],
        "check the result: assert_eq!(Wallet::fee(..), 77)"
    );
    // Only the tests reaching a function run under its transformations.
    assert_eq!(
        fee["tests"],
        serde_json::json!(["tests::a_fee_can_be_computed"])
    );

    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("tests=\"27\" failures=\"7\""), "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 7);
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
        text.contains("no-infection: every call of Wallet::is_overdrawn under the tests (2 in all) already returned false and changed nothing"),
        "{text}"
    );
    assert!(
        text.contains("1 functions, 2 transformations: 1 detected, 1 undetected"),
        "{text}"
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
