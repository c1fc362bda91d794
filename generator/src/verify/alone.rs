//! Each test run alone. A test that passes beside the other tests of its file may pass only
//! because of them: a value taken from state the whole process shares, which another test
//! moved first (url's `origin()` of an opaque URL numbers it from a process-wide counter: the
//! test carved from the run's second such call asserts `OpaqueOrigin(1)`, which it gets only
//! when the test of the first call ran before it), a cache another test filled. Such a test
//! fails when a reviewer runs it by itself, and flakes when the harness's order changes. After
//! a file's runs pass, each of its tests runs once more in a process of its own (`NAME
//! --exact`, as `cargo test NAME` runs one); `verify.rs` reads what each run printed as it
//! reads the file's runs, and takes out one that fails with a reason that says so.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::GenerateError;
use crate::interrupt::Interrupt;
use crate::verify::cargo::{build_args, run_cargo, run_in, test_executables, Verify};

/// Why a test that failed run alone with `message` is taken out.
pub(crate) fn reason(message: &str) -> String {
    format!(
        "fails when run alone: it passed only after other tests of its file ran in the same \
         process (it reads state they changed): {message}"
    )
}

/// Runs each of `tests` of the test target `stem` alone (built again first: its file may have
/// just lost tests): each test with what libtest printed, `None` when it took longer than
/// the timeout. A target cargo cannot build or name runs none: the file's runs already
/// judged it.
pub(crate) fn run_each(
    crate_dir: &Path,
    stem: &str,
    tests: &[String],
    (v, interrupt): (&Verify, Interrupt),
) -> Result<Vec<(String, Option<String>)>, GenerateError> {
    if tests.is_empty() {
        return Ok(Vec::new());
    }
    let Some(exe) = executable(crate_dir, stem, (v, interrupt))? else {
        return Ok(Vec::new());
    };
    let mut printed = Vec::new();
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
        let ran = run_in(crate_dir, one, &command, (v, interrupt))?;
        printed.push((test.clone(), ran.map(|r| r.stdout)));
    }
    Ok(printed)
}

/// The test executable cargo builds for the target `stem`.
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
    let found = test_executables(&built.stdout);
    Ok(found
        .into_iter()
        .find(|(target, _)| target == stem)
        .map(|(_, exe)| exe))
}
