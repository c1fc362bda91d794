//! `carve assess` on small crates made up by each test: the timeout of a transformed run taken
//! from the tests it runs, flaky transformations diagnosed from their undetected runs, and
//! `--write-tests` for a case found through an integration test's binary.

mod common;

use common::*;

const MANIFEST: &str =
    "[package]\nname = \"NAME\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";

/// A crate `name` in a new temporary directory, with `files` besides its manifest.
fn small_crate(name: &str, files: &[(&str, &str)]) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(name);
    let manifest = MANIFEST.replace("NAME", name);
    let mut all = vec![("Cargo.toml", manifest.as_str())];
    all.extend_from_slice(files);
    write_tree(&dir, &all);
    (tmp, dir)
}

/// `carve assess --crate DIR --format json ARGS`: the exit code and the report.
fn assess(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, serde_json::Value, String) {
    let out = output_within(
        carve()
            .arg("assess")
            .arg("--crate")
            .arg(dir)
            .args(["--format", "json"])
            .args(args),
        RECORD_LIMIT,
    );
    let report = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&out), stderr(&out)));
    (out.status.code(), report, stderr(&out))
}

/// `Meter::step -> 0` makes `ticks_to`'s loop endless without calling `step` again, so the
/// runaway-loop count never stops it: the timeout does, and the limit that stops it is the
/// hanging test's own (2 s + 5 × its recorded time), not the run's, which also counts the other
/// test reaching `step`, one that sleeps a second first (libtest runs it first).
#[test]
fn an_endless_loop_that_never_calls_the_forced_function_again_times_out_on_the_hanging_test_s_own_limit(
) {
    let (_tmp, dir) = small_crate(
        "meter",
        &[(
            "src/lib.rs",
            r#"pub struct Meter {
    step: u32,
}

impl Meter {
    pub fn with_step(step: u32) -> Meter {
        Meter { step }
    }

    pub fn step(&self) -> u32 {
        self.step
    }

    /// How many steps it takes to reach `target`.
    pub fn ticks_to(&self, target: u32) -> u32 {
        let step = self.step();
        let (mut at, mut ticks) = (0, 0);
        while at < target {
            at += step;
            ticks += 1;
        }
        ticks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_takes_five_steps_of_two() {
        assert_eq!(Meter::with_step(2).ticks_to(10), 5);
    }

    #[test]
    fn a_slow_reading_of_the_step() {
        std::thread::sleep(std::time::Duration::from_secs(1));
        let _ = Meter::with_step(3).step();
    }
}
"#,
        )],
    );
    let (code, report, err) = assess(&dir, &["--runs", "1", "--filter", "meter::Meter::step"]);
    assert_eq!(code, Some(0), "{err}");
    let v = transformation_verdict(&report, "meter::Meter::step", "0");
    assert_eq!(v["verdict"], "detected", "{v:#}");
    assert_eq!(v["test"], "tests::ten_takes_five_steps_of_two");
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.starts_with("timed out after "), "{reason}");
    assert!(
        reason.contains(": 2 s + 5 × ")
            && reason
                .ends_with(" s, the time tests::ten_takes_five_steps_of_two took when recorded)"),
        "{reason}"
    );
    // The other value is caught by the assertion, as any failing test is.
    let v = transformation_verdict(&report, "meter::Meter::step", "1");
    assert_eq!(
        v["reason"],
        "failed: assertion `left == right` failed (left: 10, right: 5)"
    );
}

/// A test that checks `answer` only on every other run (it counts its runs in a file): each
/// transformation is caught in some runs and not in others, so it is flaky, and diagnosed from
/// a run where it went undetected: there the test called `answer` itself and asserted nothing
/// about what it returned, a weak oracle.
#[test]
fn a_flaky_transformation_is_diagnosed_from_a_run_where_it_went_undetected() {
    let (_tmp, dir) = small_crate("everysecond", &[("src/lib.rs", EVERY_OTHER_RUN_LIB)]);
    let junit = dir.join("assess.xml");
    let (code, report, err) = assess(&dir, &["--runs", "2", "--junit", junit.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    // Run 1 is the tests as they are; `-> 0` runs 2 (caught) and 3, `-> 1` runs 4 (caught)
    // and 5. Runs 6 and 7 record the code as it is for the diagnoses to compare with.
    // Diagnosing `-> 0`: run 8 catches it, run 9 does not and is the one compared; diagnosing
    // `-> 1`: run 10 catches it, run 11 does not.
    for value in ["0", "1"] {
        let v = transformation_verdict(&report, "everysecond::answer", value);
        assert_eq!(v["verdict"], "flaky", "{v:#}");
        assert_eq!(
            (v["detected"].as_u64(), v["runs"].as_u64()),
            (Some(1), Some(2))
        );
        let d = &v["diagnosis"];
        assert_eq!(d["kind"], "weak-oracle", "{v:#}");
        assert_eq!(d["test"], "tests::the_answer_is_checked_every_other_run");
        assert_eq!(
            d["evidence"],
            format!("tests::the_answer_is_checked_every_other_run: everysecond::answer returned 42 and now returns {value}, and the test asserts nothing about it")
        );
        assert!(v.get("not_diagnosed").is_none(), "{v:#}");
    }
    assert_eq!(report["summary"]["flaky"], 2);
    assert_eq!(
        std::fs::read_to_string(dir.join("runs")).unwrap().trim(),
        "11"
    );
    // The JUnit failure carries the diagnosis too.
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("flaky: detected in 1 of 2 runs; where undetected, weak-oracle: "),
        "{xml}"
    );
}

/// A crate whose only tests are an integration test (`tests/wallet.rs`): the weak oracle on
/// `fee` is found through that test's binary, and `--write-tests` writes its test into the
/// package's `tests/` as `carved_assess_wallet_*.rs`, which passes as the code is and fails
/// under both transformations (checked again by `carve assess` on the written test's binary).
#[test]
fn write_tests_carves_a_catching_test_for_a_case_found_through_an_integration_test() {
    let (_tmp, dir) = small_crate(
        "ledger",
        &[
            (
                "src/lib.rs",
                r#"pub struct Wallet {
    balance: i64,
}

impl Wallet {
    pub fn new() -> Wallet {
        Wallet { balance: 0 }
    }

    pub fn deposit(&mut self, amount: i64) {
        self.balance += amount;
    }

    pub fn balance(&self) -> i64 {
        self.balance
    }

    /// One percent of the balance.
    pub fn fee(&self) -> i64 {
        self.balance / 100
    }
}

impl Default for Wallet {
    fn default() -> Self {
        Self::new()
    }
}
"#,
            ),
            (
                "tests/wallet.rs",
                r#"use ledger::Wallet;

#[test]
fn a_fee_can_be_computed() {
    let mut w = Wallet::new();
    w.deposit(7734);
    let _fee = w.fee();
    assert_eq!(w.balance(), 7734);
}
"#,
            ),
        ],
    );
    let (code, report, err) = assess(&dir, &["--write-tests", "--filter", "ledger::Wallet::fee"]);
    assert_eq!(code, Some(0), "{err}");
    let mut written = Vec::new();
    for value in ["0", "1"] {
        let v = transformation_verdict(&report, "ledger::Wallet::fee", value);
        assert_eq!(v["diagnosis"]["kind"], "weak-oracle", "{v:#}");
        assert_eq!(v["diagnosis"]["test"], "a_fee_can_be_computed");
    }
    let fee = report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["function"] == "ledger::Wallet::fee")
        .unwrap();
    for t in fee["transformations"].as_array().unwrap() {
        let w = &t["written"];
        assert_eq!(w["status"], "written", "{t:#}");
        written.push((
            w["file"].as_str().unwrap().to_string(),
            w["test"].as_str().unwrap().to_string(),
            w["fails_with"].as_str().unwrap().to_string(),
        ));
    }
    assert_eq!(
        written
            .iter()
            .map(|(_, t, f)| format!("{t}: {f}"))
            .collect::<Vec<_>>(),
        [
            "fee_returns_77: failed: assertion `left == right` failed (left: 0, right: 77)",
            "fee_returns_77: failed: assertion `left == right` failed (left: 1, right: 77)",
        ]
    );
    let file = std::path::PathBuf::from(&written[0].0);
    assert_eq!(file.parent(), Some(dir.join("tests").as_path()));
    let stem = file.file_stem().unwrap().to_str().unwrap().to_string();
    assert!(stem.starts_with("carved_assess_wallet_"), "{stem}");
    // Only the written file besides the crate's own test.
    let mut names: Vec<String> = std::fs::read_dir(dir.join("tests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [format!("{stem}.rs"), "wallet.rs".to_string()]);

    let test = cargo_in(&dir, &["test", "--test", &stem]);
    assert!(test.status.success(), "{}", stderr(&test));
    assert!(
        stdout(&test).contains("test result: ok. 1 passed"),
        "{}",
        stdout(&test)
    );
    // Its own binary catches both transformations.
    let built = cargo_in(
        &dir,
        &["test", "--no-run", "--message-format=json", "--test", &stem],
    );
    let bin = stdout(&built)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| m["target"]["name"] == stem.as_str() && m["profile"]["test"] == true)
        .and_then(|m| m["executable"].as_str().map(str::to_string))
        .expect("the written test's binary");
    let out = output_within(
        carve()
            .args([
                "assess",
                "--format",
                "json",
                "--filter",
                "ledger::Wallet::fee",
                "--",
            ])
            .arg(&bin),
        RECORD_LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let again: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    for value in ["0", "1"] {
        assert_eq!(
            transformation_verdict(&again, "ledger::Wallet::fee", value)["verdict"],
            "detected"
        );
    }
}

/// A flaky transformation every diagnosis run catches too has no run to compare: the report
/// says so instead of a diagnosis. The test checks `bump`'s effect on every run but the first
/// (the tests as they are) and the third (the second run under the transformation), so
/// `bump -> ()` is caught in 1 of 2 runs and by both runs recorded to diagnose it (runs 6 and 7,
/// after runs 4 and 5 recorded the code as it is to compare with).
#[test]
fn a_flaky_transformation_caught_by_every_diagnosis_run_says_why_it_has_no_diagnosis() {
    let (_tmp, dir) = small_crate(
        "oddrun",
        &[(
            "src/lib.rs",
            r#"pub fn bump(count: &mut u32) {
    *count += 1;
}

#[cfg(test)]
mod tests {
    #[test]
    fn bump_is_checked_on_most_runs() {
        let mut count = 0;
        super::bump(&mut count);
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("runs");
        let runs: u32 = std::fs::read_to_string(&file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
            + 1;
        std::fs::write(&file, runs.to_string()).unwrap();
        if runs != 1 && runs != 3 {
            assert_eq!(count, 1);
        }
    }
}
"#,
        )],
    );
    let (code, report, err) = assess(&dir, &["--runs", "2"]);
    assert_eq!(code, Some(0), "{err}");
    let v = transformation_verdict(&report, "oddrun::bump", "()");
    assert_eq!(v["verdict"], "flaky", "{v:#}");
    assert_eq!(
        (v["detected"].as_u64(), v["runs"].as_u64()),
        (Some(1), Some(2))
    );
    assert!(v.get("diagnosis").is_none(), "{v:#}");
    assert_eq!(
        v["not_diagnosed"],
        "each of the 2 runs recorded to diagnose it detected it: no run where it went undetected to compare with the original"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("runs")).unwrap().trim(),
        "7"
    );
}
