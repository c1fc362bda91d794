//! Each test run alone. A test that passes beside the other tests of its file may pass only
//! because of them: a value taken from state the whole process shares, which another test
//! moved first (url's `origin()` of an opaque URL numbers it from a process-wide counter: the
//! test carved from the run's second such call asserts `OpaqueOrigin(1)`, which it gets only
//! when the test of the first call ran before it), a cache another test filled. Such a test
//! fails when a reviewer runs it by itself, and flakes when the harness's order changes. After
//! a file's runs pass, each of its tests runs once more in a process of its own (`NAME
//! --exact`, as `cargo test NAME` runs one); one that fails there is taken out as a failure is,
//! with a reason that says so.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::GenerateError;
use crate::interrupt::Interrupt;
use crate::verify::cargo::{build_args, run_cargo, run_in, Verify};
use crate::verify::libtest;

/// A test that failed run alone: its first failure's summary, and the row of a table test
/// it named (`case {i}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FailedAlone {
    pub(crate) test: String,
    pub(crate) message: String,
    pub(crate) row: Option<usize>,
}

/// Why a test that failed run alone with `message` is taken out.
pub(crate) fn reason(message: &str) -> String {
    format!(
        "fails when run alone: it passed only after other tests of its file ran in the same \
         process (it reads state they changed): {message}"
    )
}

/// Runs each of `tests` of the test target `stem` alone (built again first: its file may have
/// just lost tests) and gives those that failed. A target cargo cannot build or name gives
/// none: the file's runs already judged it.
pub(crate) fn failures(
    crate_dir: &Path,
    stem: &str,
    tests: &[String],
    (v, interrupt): (&Verify, Interrupt),
) -> Result<Vec<FailedAlone>, GenerateError> {
    if tests.is_empty() {
        return Ok(Vec::new());
    }
    let Some(exe) = executable(crate_dir, stem, (v, interrupt))? else {
        return Ok(Vec::new());
    };
    let mut failed = Vec::new();
    for test in tests {
        let mut one = Command::new(&exe);
        one.args([
            test.as_str(),
            "--exact",
            "--test-threads=1",
            "--color",
            "never",
        ]);
        let command = format!("{} {test} --exact", exe.display());
        let Some(ran) = run_in(crate_dir, one, &command, (v, interrupt))? else {
            failed.push(FailedAlone {
                test: test.clone(),
                message: format!("took longer than {} s", v.timeout.as_secs()),
                row: None,
            });
            continue;
        };
        if let Some(f) = failed_in(test, &ran.stdout) {
            failed.push(f);
        }
    }
    Ok(failed)
}

/// `test` as the output of its run alone reports it: failed, or not (passed, or not found).
fn failed_in(test: &str, stdout: &str) -> Option<FailedAlone> {
    if !libtest::failed(stdout).iter().any(|t| t == test) {
        return None;
    }
    let failures = libtest::failures(stdout);
    let first = failures.get(test).and_then(|f| f.first());
    Some(FailedAlone {
        test: test.to_string(),
        message: first.map_or_else(|| "(no message)".to_string(), |f| f.summary()),
        row: first.and_then(|f| crate::verify::rows::failed_row(&f.message)),
    })
}

/// The test executable cargo builds for the target `stem`, from its JSON messages.
fn executable(
    crate_dir: &Path,
    stem: &str,
    (v, interrupt): (&Verify, Interrupt),
) -> Result<Option<PathBuf>, GenerateError> {
    let Some(built) = run_cargo(crate_dir, &build_args(stem), (v, interrupt))? else {
        return Ok(None);
    };
    if !built.success {
        return Ok(None);
    }
    Ok(executable_in(&built.stdout, stem))
}

/// The `executable` of the `compiler-artifact` message for the target `stem`.
fn executable_in(cargo_json: &str, stem: &str) -> Option<PathBuf> {
    cargo_json.lines().find_map(|line| {
        let message: serde_json::Value = serde_json::from_str(line).ok()?;
        if message["reason"] != "compiler-artifact" || message["target"]["name"] != stem {
            return None;
        }
        message["executable"].as_str().map(PathBuf::from)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_executable_is_the_one_built_for_the_target() {
        let json = concat!(
            r#"{"reason":"compiler-artifact","target":{"name":"url"},"executable":null}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"name":"carved_app"},"executable":"/t/debug/deps/carved_app-1f"}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
        );
        assert_eq!(
            executable_in(json, "carved_app"),
            Some(PathBuf::from("/t/debug/deps/carved_app-1f"))
        );
        assert_eq!(executable_in(json, "url"), None);
    }

    #[test]
    fn a_failed_run_alone_names_its_message_and_row() {
        let out = "\nrunning 1 test\ntest origin_recorded_cases ... FAILED\n\nfailures:\n\n\
                   ---- origin_recorded_cases stdout ----\n\nthread 'origin_recorded_cases' \
                   panicked at tests/carved_app.rs:9:5:\nassertion `left == right` failed: \
                   case 1\n  left: \"Opaque(OpaqueOrigin(0))\"\n right: \
                   \"Opaque(OpaqueOrigin(1))\"\n\nfailures:\n    origin_recorded_cases\n\n\
                   test result: FAILED. 0 passed; 1 failed\n";
        let f = failed_in("origin_recorded_cases", out).unwrap();
        assert_eq!(f.row, Some(1));
        assert!(f.message.contains("OpaqueOrigin(0)"), "{}", f.message);
        let passed = "\nrunning 1 test\ntest origin ... ok\n\ntest result: ok. 1 passed\n";
        assert_eq!(failed_in("origin", passed), None);
    }
}
