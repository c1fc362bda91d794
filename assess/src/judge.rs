//! A transformed run's verdict from how the test binary ended and what libtest printed.

use carve_generator::libtest;

use crate::Verdict;

/// How a transformed run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEnd {
    Exited(i32),
    Signaled(String),
    /// Killed after `seconds`, past its limit (`limit` says what the limit was and where it
    /// came from).
    TimedOut {
        seconds: f64,
        limit: String,
    },
    /// Killed as a loop that never ends: the transformed function was called `calls` times
    /// (after `seconds`), against `original` times by the same tests as they are.
    Runaway {
        calls: u64,
        original: u64,
        seconds: f64,
    },
    /// The recorder lost the process; the reason says why.
    Lost(String),
}

/// Detected when a test failed, the binary crashed or timed out; undetected when it exited 0
/// after running tests.
/// The test running when libtest printed `output` (with `--test-threads=1` it prints
/// `test NAME ... ` before running NAME, the result after): the last one with no result yet.
pub fn running_test(output: &str) -> Option<String> {
    output
        .lines()
        .filter_map(|l| l.strip_prefix("test "))
        .next_back()
        .filter(|l| l.trim_end().ends_with("..."))
        .map(|l| l.trim_end().trim_end_matches("...").trim().to_string())
}

pub fn judge(end: &RunEnd, output: &str) -> Verdict {
    // A test with no result yet is the one running when the process died.
    let running = running_test(output);
    match end {
        RunEnd::Exited(0) => {
            let results = libtest::results(output);
            if results.is_empty() {
                Verdict::NotRun {
                    reason: "the test binary ran no test".into(),
                }
            } else {
                Verdict::Undetected { diagnosis: None }
            }
        }
        RunEnd::Exited(101) if !libtest::failed(output).is_empty() => {
            let failed = libtest::failed(output);
            let failures = libtest::failures(output);
            let test = failed[0].clone();
            let why = failures
                .get(&test)
                .and_then(|f| f.first())
                .map(|f| f.summary())
                .unwrap_or_else(|| "(no message)".into());
            Verdict::Detected {
                test: Some(test),
                reason: format!("failed: {why}"),
            }
        }
        RunEnd::Exited(code) => Verdict::Detected {
            test: running,
            reason: format!("exited with code {code}"),
        },
        RunEnd::Signaled(name) => {
            let overflow = output.contains("has overflowed its stack");
            Verdict::Detected {
                test: running,
                reason: if overflow {
                    format!("crashed: stack overflow ({name})")
                } else {
                    format!("crashed: killed by {name}")
                },
            }
        }
        RunEnd::TimedOut { seconds, limit } => Verdict::Detected {
            test: running,
            reason: format!("timed out after {seconds:.1} s ({limit})"),
        },
        RunEnd::Runaway {
            calls,
            original,
            seconds,
        } => Verdict::Detected {
            test: running,
            reason: format!(
                "timed out: a loop that never ends, stopped after {calls} calls of the \
                 transformed function ({original} as the code is) in {seconds:.1} s"
            ),
        },
        RunEnd::Lost(reason) => Verdict::NotRun {
            reason: reason.clone(),
        },
    }
}

/// Why a run of the tests as they are did not pass: the tests that failed (for a crash or a
/// hang, the one running then) and what they printed, at most `lines` lines of each test
/// (libtest's `---- NAME stdout ----` section; for a crash, the end of the output).
pub fn baseline_failure(end: &RunEnd, output: &str, lines: usize) -> (Vec<String>, String) {
    let failed = libtest::failed(output);
    let cut = |text: Vec<&str>, from_end: bool| -> String {
        let n = text.len();
        let kept: Vec<&str> = if n <= lines {
            text
        } else if from_end {
            text[n - lines..].to_vec()
        } else {
            text[..lines].to_vec()
        };
        let mut out = kept.join("\n");
        if n > lines {
            let more = format!("({} more lines)", n - lines);
            out = if from_end {
                format!("{more}\n{out}")
            } else {
                format!("{out}\n{more}")
            };
        }
        out
    };
    if matches!(end, RunEnd::Exited(101)) && !failed.is_empty() {
        let mut shown = Vec::new();
        for test in &failed {
            let header = format!("---- {test} stdout ----");
            let section: Vec<&str> = output
                .lines()
                .skip_while(|l| *l != header)
                .skip(1)
                .take_while(|l| !l.starts_with("---- ") && *l != "failures:")
                .collect();
            let section: Vec<&str> = match section.iter().rposition(|l| !l.trim().is_empty()) {
                Some(last) => section[..=last].to_vec(),
                None => Vec::new(),
            };
            shown.push(format!("{header}\n{}", cut(section, false)));
        }
        return (failed, shown.join("\n"));
    }
    let running = running_test(output).into_iter().collect();
    let text: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
    (running, cut(text, true))
}

/// One verdict from the verdicts of repeated runs of the same transformation: detected or
/// undetected only when every run says so, flaky when they disagree. A run that could not be
/// made makes the whole transformation not run.
pub fn combine(runs: Vec<Verdict>) -> Verdict {
    if let Some(not_run) = runs.iter().find(|v| matches!(v, Verdict::NotRun { .. })) {
        return not_run.clone();
    }
    let total = runs.len() as u32;
    let detected: Vec<&Verdict> = runs
        .iter()
        .filter(|v| matches!(v, Verdict::Detected { .. }))
        .collect();
    match detected.first() {
        None => runs.into_iter().next().unwrap_or(Verdict::NotRun {
            reason: "no run was made".into(),
        }),
        Some(_) if detected.len() == runs.len() => {
            runs.into_iter().next().unwrap_or(Verdict::NotRun {
                reason: "no run was made".into(),
            })
        }
        Some(Verdict::Detected { test, reason }) => Verdict::Flaky {
            detected: detected.len() as u32,
            runs: total,
            test: test.clone(),
            reason: reason.clone(),
            diagnosis: None,
            not_diagnosed: None,
        },
        Some(other) => (*other).clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_baseline_names_each_failing_test_with_its_own_output_cut_short() {
        let output = "running 3 tests\ntest a ... ok\ntest b ... FAILED\ntest c ... FAILED\n\nfailures:\n\n---- b stdout ----\nthread 'b' panicked at src/lib.rs:3:5:\nunexpected argument '--test-threads=1'\n\n---- c stdout ----\n1\n2\n3\n4\n\n\nfailures:\n    b\n    c\n\ntest result: FAILED. 1 passed; 2 failed\n";
        let (failed, shown) = baseline_failure(&RunEnd::Exited(101), output, 3);
        assert_eq!(failed, ["b", "c"]);
        assert_eq!(
            shown,
            "---- b stdout ----\nthread 'b' panicked at src/lib.rs:3:5:\nunexpected argument '--test-threads=1'\n---- c stdout ----\n1\n2\n3\n(1 more lines)"
        );
        let (running, shown) = baseline_failure(
            &RunEnd::Signaled("SIGSEGV".into()),
            "running 1 test\ntest d ... ",
            3,
        );
        assert_eq!(running, ["d"]);
        assert_eq!(shown, "running 1 test\ntest d ... ");
    }

    #[test]
    fn repeated_runs_agree_or_the_transformation_is_flaky() {
        let caught = || Verdict::Detected {
            test: Some("t".into()),
            reason: "failed: boom".into(),
        };
        let missed = || Verdict::Undetected { diagnosis: None };
        assert_eq!(combine(vec![caught(), caught(), caught()]), caught());
        assert_eq!(combine(vec![missed(), missed()]), missed());
        assert_eq!(
            combine(vec![missed(), caught(), missed()]),
            Verdict::Flaky {
                detected: 1,
                runs: 3,
                test: Some("t".into()),
                reason: "failed: boom".into(),
                diagnosis: None,
                not_diagnosed: None,
            }
        );
        let lost = Verdict::NotRun {
            reason: "lost".into(),
        };
        assert_eq!(combine(vec![caught(), lost.clone()]), lost);
    }

    #[test]
    fn a_hanging_test_is_named_from_the_line_without_a_result() {
        let out = "running 2 tests\ntest a ... ok\ntest b ... ";
        assert_eq!(
            judge(
                &RunEnd::TimedOut {
                    seconds: 3.0,
                    limit: "limit 2.9 s, from --timeout".into()
                },
                out
            ),
            Verdict::Detected {
                test: Some("b".into()),
                reason: "timed out after 3.0 s (limit 2.9 s, from --timeout)".into()
            }
        );
    }

    #[test]
    fn a_runaway_loop_is_a_timeout_that_says_how_many_calls_it_made() {
        let out = "running 1 test\ntest spins ... ";
        let end = RunEnd::Runaway {
            calls: 10_001,
            original: 4,
            seconds: 0.4,
        };
        assert_eq!(
            judge(&end, out),
            Verdict::Detected {
                test: Some("spins".into()),
                reason: "timed out: a loop that never ends, stopped after 10001 calls of the \
                         transformed function (4 as the code is) in 0.4 s"
                    .into()
            }
        );
    }

    #[test]
    fn a_failed_assertion_is_detected_with_its_values() {
        let out = "running 1 test\ntest t ... FAILED\n\nfailures:\n\n---- t stdout ----\n\nthread 't' panicked at src/lib.rs:3:5:\nassertion `left == right` failed\n  left: 0\n right: 734\n\nfailures:\n    t\n\ntest result: FAILED. 0 passed; 1 failed\n";
        let Verdict::Detected { test, reason } = judge(&RunEnd::Exited(101), out) else {
            panic!("not detected");
        };
        assert_eq!(test.as_deref(), Some("t"));
        assert!(reason.contains("left: 0, right: 734"), "{reason}");
    }

    #[test]
    fn passing_tests_leave_it_undetected_and_no_tests_at_all_is_not_a_run() {
        let out = "running 1 test\ntest t ... ok\n\ntest result: ok. 1 passed\n";
        assert_eq!(
            judge(&RunEnd::Exited(0), out),
            Verdict::Undetected { diagnosis: None }
        );
        assert!(matches!(
            judge(&RunEnd::Exited(0), "running 0 tests\n"),
            Verdict::NotRun { .. }
        ));
    }
}
