//! Verification: run the carved tests against the crate they were carved from, several times,
//! and take out any test that fails, flakes or does not compile (every carved test must pass on
//! the recorded version). What was taken out, and why, goes to `carved_quarantine.md`.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::GenerateError;
use crate::libtest;

/// How to verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verify {
    /// The cargo to run (the CLI passes `$CARGO` or `cargo`).
    pub cargo: PathBuf,
    /// How many times each test file runs; a test must pass every time.
    pub runs: u32,
    /// Longest one `cargo test` of one file may take.
    pub timeout: Duration,
}

/// A carved test taken out by verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Quarantined {
    pub file: String,
    pub test: String,
    pub reason: String,
}

/// The outcome of one file's runs.
#[derive(Debug, Default)]
struct FileRuns {
    /// Failures per test name, with the first failure's message.
    failed: BTreeMap<String, (u32, String)>,
    /// Set when the file did not compile: the first error line.
    compile_error: Option<String>,
}

/// Runs every file `runs` times and returns the tests to take out.
pub(crate) fn quarantine(
    crate_dir: &Path,
    files: &[(String, Vec<String>)],
    v: &Verify,
) -> Result<Vec<Quarantined>, GenerateError> {
    let mut out = Vec::new();
    for (file, tests) in files {
        let stem = file.trim_end_matches(".rs");
        let mut runs = FileRuns::default();
        for _ in 0..v.runs.max(1) {
            run_once(crate_dir, stem, v, &mut runs)?;
            if runs.compile_error.is_some() {
                break;
            }
        }
        if let Some(error) = &runs.compile_error {
            out.extend(tests.iter().map(|t| Quarantined {
                file: file.clone(),
                test: t.clone(),
                reason: format!("the file does not compile: {error}"),
            }));
            continue;
        }
        for (test, (times, message)) in runs.failed {
            let reason = if times >= v.runs.max(1) {
                format!("fails against the recorded code: {message}")
            } else {
                format!("flaky: failed {times} of {} runs: {message}", v.runs.max(1))
            };
            out.push(Quarantined {
                file: file.clone(),
                test,
                reason,
            });
        }
    }
    Ok(out)
}

fn run_once(
    crate_dir: &Path,
    stem: &str,
    v: &Verify,
    runs: &mut FileRuns,
) -> Result<(), GenerateError> {
    let mut child = Command::new(&v.cargo)
        .args(["test", "--test", stem, "--color", "never"])
        .current_dir(crate_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| GenerateError::Verify {
            what: format!(
                "cannot run {} test in {}",
                v.cargo.display(),
                crate_dir.display()
            ),
            source: Some(source),
        })?;
    // Read both pipes while waiting: a run printing more than a pipe holds would otherwise
    // block on its write and never exit.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > v.timeout => {
                let _ = child.kill();
                let _ = child.wait();
                runs.compile_error = Some(format!(
                    "cargo test --test {stem} took longer than {} s",
                    v.timeout.as_secs()
                ));
                return Ok(());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(source) => {
                return Err(GenerateError::Verify {
                    what: format!("waiting for cargo test --test {stem}"),
                    source: Some(source),
                })
            }
        }
    }
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    if !stdout.lines().any(|l| l.starts_with("test result:")) {
        let error = libtest::first_error(&stderr)
            .unwrap_or_else(|| "cargo test ended without running it".to_string());
        runs.compile_error = Some(error);
        return Ok(());
    }
    let failures = libtest::failures(&stdout);
    for failed in libtest::failed(&stdout) {
        let message = failures
            .get(&failed)
            .and_then(|f| f.first())
            .map_or_else(|| "(no message)".to_string(), |f| f.summary());
        let entry = runs.failed.entry(failed).or_insert((0, message));
        entry.0 += 1;
    }
    Ok(())
}

/// Reads `pipe` to its end on a thread of its own, as text.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// `carved_quarantine.md`: the tests verification took out and why.
pub(crate) fn quarantine_report(program: &str, runs: u32, quarantined: &[Quarantined]) -> String {
    let mut s = format!(
        "# Carved tests taken out by verification\n\n\
         These tests were carved from a recording of `{program}` but did not pass all {runs} runs \
         against the code they were carved from, so they were not written. Regenerate after \
         fixing what the reason points at, or record again.\n\n\
         | file | test | reason |\n| --- | --- | --- |\n"
    );
    for q in quarantined {
        s.push_str(&format!(
            "| {} | `{}` | {} |\n",
            q.file,
            q.test,
            q.reason.replace('|', "\\|")
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quarantine_report_lists_each_test_with_its_reason() {
        let report = quarantine_report(
            "calc",
            3,
            &[Quarantined {
                file: "carved_calc.rs".into(),
                test: "now_returns_5".into(),
                reason: "flaky: failed 1 of 3 runs: a|b".into(),
            }],
        );
        assert!(report
            .contains("| carved_calc.rs | `now_returns_5` | flaky: failed 1 of 3 runs: a\\|b |"));
    }
}
