//! Reading what `cargo test` printed (libtest's human format): which tests passed or failed,
//! and what each failure said: its message, where it panicked and the `left`/`right` values of
//! a failed `assert_eq!`. Verification and `carve gate --tests` both read it from here.

use std::collections::{BTreeMap, HashMap};

/// What one failed test printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Failure {
    /// Stem of the file it panicked in (`carved_calc`), when that was a carved test file.
    pub file: Option<String>,
    /// The panic message (`assertion `left == right` failed`), lines joined by spaces.
    pub message: String,
    /// `left:` of a failed `assert_eq!`: the value now.
    pub left: Option<String>,
    /// `right:` of a failed `assert_eq!`: the value expected.
    pub right: Option<String>,
}

impl Failure {
    /// `assertion `left == right` failed (left: 2, right: 1)`, or the message alone.
    pub fn summary(&self) -> String {
        let message = if self.message.is_empty() {
            "(no message)"
        } else {
            self.message.as_str()
        };
        match (&self.left, &self.right) {
            (Some(left), Some(right)) => format!("{message} (left: {left}, right: {right})"),
            _ => message.to_string(),
        }
    }
}

/// `test NAME ... ok` / `... FAILED` lines: test name → passed. A name failing in one file and
/// passing in another stays failed.
pub fn results(output: &str) -> BTreeMap<String, bool> {
    let mut results = BTreeMap::new();
    for line in output.lines() {
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, status)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        let passed = match status.trim() {
            "ok" => true,
            s if s.starts_with("FAILED") => false,
            _ => continue,
        };
        let entry = results.entry(name.trim().to_string()).or_insert(passed);
        *entry &= passed;
    }
    results
}

/// The names of the failed tests, in name order.
pub fn failed(output: &str) -> Vec<String> {
    results(output)
        .into_iter()
        .filter(|(_, passed)| !passed)
        .map(|(name, _)| name)
        .collect()
}

/// The `---- NAME stdout ----` blocks: test name → what each failure printed.
pub fn failures(output: &str) -> HashMap<String, Vec<Failure>> {
    let mut blocks: HashMap<String, Vec<Failure>> = HashMap::new();
    let mut current: Option<(String, Vec<&str>)> = None;
    let mut close = |current: &mut Option<(String, Vec<&str>)>| {
        if let Some((name, lines)) = current.take() {
            blocks.entry(name).or_default().push(parse_failure(&lines));
        }
    };
    for line in output.lines() {
        if let Some(name) = line
            .strip_prefix("---- ")
            .and_then(|r| r.strip_suffix(" stdout ----"))
        {
            close(&mut current);
            current = Some((name.trim().to_string(), Vec::new()));
        } else if line == "failures:" || line.starts_with("test result:") {
            close(&mut current);
        } else if let Some((_, lines)) = current.as_mut() {
            lines.push(line);
        }
    }
    close(&mut current);
    blocks
}

fn parse_failure(lines: &[&str]) -> Failure {
    let mut failure = Failure::default();
    let mut message: Vec<&str> = Vec::new();
    let mut in_message = false;
    for line in lines {
        if let Some(at) = line
            .split_once("panicked at ")
            .map(|(_, at)| at.trim_end_matches(':'))
        {
            failure.file = at
                .split(':')
                .next()
                .and_then(|path| path.rsplit('/').next())
                .and_then(|file| file.strip_suffix(".rs"))
                .filter(|stem| stem.starts_with("carved_"))
                .map(str::to_string);
            in_message = true;
            continue;
        }
        let trimmed = line.trim();
        if let Some(v) = trimmed.strip_prefix("left:") {
            failure.left = Some(v.trim().to_string());
        } else if let Some(v) = trimmed.strip_prefix("right:") {
            failure.right = Some(v.trim().to_string());
        } else if trimmed.starts_with("note:")
            || trimmed.starts_with("stack backtrace:")
            || trimmed.is_empty()
        {
            in_message = false;
        } else if in_message {
            message.push(trimmed);
        }
    }
    failure.message = message.join(" ");
    failure
}

/// The first `error` line cargo printed (a build that failed before any test ran).
pub fn first_error(output: &str) -> Option<String> {
    output
        .lines()
        .find(|l| l.trim_start().starts_with("error"))
        .map(|l| l.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "
running 3 tests
test add_returns_5 ... ok
test sub_returns_1 ... FAILED
test mul_returns_6 ... ok

failures:

---- sub_returns_1 stdout ----

thread 'sub_returns_1' panicked at tests/carved_calc.rs:12:5:
assertion `left == right` failed
  left: 2
 right: 1
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

failures:
    sub_returns_1

test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
";

    #[test]
    fn failed_tests_are_read_from_the_result_lines() {
        assert_eq!(failed(OUTPUT), ["sub_returns_1"]);
        assert_eq!(results(OUTPUT).get("add_returns_5"), Some(&true));
    }

    #[test]
    fn a_failure_has_its_message_file_and_values() {
        let failures = failures(OUTPUT);
        let failure = &failures["sub_returns_1"][0];
        assert_eq!(failure.file.as_deref(), Some("carved_calc"));
        assert_eq!(failure.message, "assertion `left == right` failed");
        assert_eq!(
            failure.summary(),
            "assertion `left == right` failed (left: 2, right: 1)"
        );
    }

    #[test]
    fn a_build_error_is_found_when_no_test_ran() {
        let output = "   Compiling calc v0.1.0\nerror[E0425]: cannot find value `x`\n";
        assert_eq!(
            first_error(output).as_deref(),
            Some("error[E0425]: cannot find value `x`")
        );
        assert_eq!(first_error(OUTPUT), None);
    }
}
