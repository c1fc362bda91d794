//! `carve gate --tests`: the output of `cargo test` on carved tests, summarised per function so
//! it reads like a trace comparison (which recorded call no longer behaves).

use std::collections::HashMap;

use carve_generator::libtest;

use crate::compare::module_of;
use crate::report::{Divergence, DivergenceKind, Group, Mode, Report, Summary};

/// A carved test file: its stem (`carved_expr_eval`) and its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CarvedFile {
    pub stem: String,
    pub source: String,
}

/// One `#[test]` of a carved file and the function it calls.
#[derive(Debug, Clone)]
struct CarvedTest {
    file: String,
    name: String,
    function: String,
}

/// Summarises a `cargo test` run of carved tests: `output` is what cargo printed (stdout and
/// stderr), `files` the carved test files, `succeeded` cargo's status. One group per tested
/// function; every failing test is a divergence whose values are the assertion's `right`
/// (recorded) and `left` (now).
pub fn summarise_tests(
    subject: &str,
    output: &str,
    files: &[CarvedFile],
    succeeded: bool,
) -> Report {
    let tests: Vec<CarvedTest> = files.iter().flat_map(carved_tests).collect();
    let results = libtest::results(output);
    let failures = libtest::failures(output);

    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut ran = 0;
    for t in &tests {
        let g = *index.entry(t.function.clone()).or_insert_with(|| {
            groups.push(Group {
                function: t.function.clone(),
                module: module_of(&t.function),
                calls: 0,
                first: None,
                others: Vec::new(),
            });
            groups.len() - 1
        });
        groups[g].calls += 1;
        let Some(passed) = results.get(&t.name) else {
            continue;
        };
        ran += 1;
        if *passed {
            continue;
        }
        let failure = failures
            .get(&t.name)
            .and_then(|fs| {
                fs.iter()
                    .find(|f| f.file.as_deref() == Some(t.file.as_str()))
                    .or_else(|| fs.first())
            })
            .cloned()
            .unwrap_or_default();
        if failure.file.as_deref().is_some_and(|f| f != t.file) {
            // The same test name in another carved file failed, not this one.
            continue;
        }
        let divergence = Divergence {
            kind: DivergenceKind::TestFailed,
            call_path: format!("{}::{}", t.file, t.name),
            function: t.function.clone(),
            field: (!failure.message.is_empty()).then(|| failure.message.clone()),
            at: String::new(),
            baseline: failure.right.clone(),
            new: failure.left.clone(),
        };
        if groups[g].first.is_none() {
            groups[g].first = Some(divergence);
        } else {
            groups[g].others.push(divergence);
        }
    }
    let mut process = Vec::new();
    let failed_tests = results.values().filter(|p| !**p).count();
    if !succeeded && failed_tests == 0 {
        process.push(Divergence {
            kind: DivergenceKind::TestFailed,
            call_path: "cargo test".into(),
            function: subject.to_string(),
            field: Some(first_error(output)),
            at: String::new(),
            baseline: None,
            new: None,
        });
    }
    let diverged = groups.iter().filter(|g| g.diverged()).count();
    let divergences = process.len()
        + groups
            .iter()
            .map(|g| g.divergences().count())
            .sum::<usize>();
    Report {
        mode: Mode::Tests,
        subject: subject.to_string(),
        baseline_runs: Vec::new(),
        process,
        summary: Summary {
            functions: groups.len(),
            diverged_functions: diverged,
            divergences,
            calls_compared: ran,
            ignored_unstable: 0,
            ignored_by_glob: 0,
        },
        groups,
    }
}

/// The `#[test]` functions of a carved file with the function each one calls.
fn carved_tests(file: &CarvedFile) -> Vec<CarvedTest> {
    let parts: Vec<&str> = file.source.split("#[test]").collect();
    parts
        .iter()
        .skip(1)
        .filter_map(|part| {
            let after_fn = part.split_once("fn ")?.1;
            let name: String = after_fn
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name.is_empty() {
                return None;
            }
            let function = tested_function(part).unwrap_or_else(|| fallback(&file.stem, &name));
            Some(CarvedTest {
                file: file.stem.clone(),
                name,
                function,
            })
        })
        .collect()
}

/// The function a carved test exercises: the first path call after `// Act`
/// (`expr::eval::apply(`), or a method call there (`.eval(`) on the receiver the arrange section
/// built (`expr::eval::Evaluator::new(` gives `expr::eval::Evaluator::eval`).
fn tested_function(body: &str) -> Option<String> {
    let (arrange, act) = match body.split_once("// Act") {
        Some((arrange, act)) => (arrange, act),
        None => ("", body),
    };
    let act = act.split("// Assert").next().unwrap_or(act);
    let call = first_call(act)?;
    if call.path.contains("::") {
        return Some(call.path);
    }
    if call.method {
        let receiver = first_call_matching(arrange, |c| c.path.contains("::"))
            .and_then(|c| c.path.rsplit_once("::").map(|(ty, _)| ty.to_string()));
        return Some(match receiver {
            Some(ty) => format!("{ty}::{}", call.path),
            None => call.path,
        });
    }
    None
}

struct CallText {
    path: String,
    method: bool,
}

fn first_call(text: &str) -> Option<CallText> {
    first_call_matching(text, |c| {
        !matches!(
            c.path.as_str(),
            "Box::new" | "Some" | "Ok" | "Err" | "vec" | "assert_eq" | "assert" | "String::from"
        )
    })
}

/// The first `path(` in `text` (identifiers and `::`) accepted by `keep`.
fn first_call_matching(text: &str, keep: impl Fn(&CallText) -> bool) -> Option<CallText> {
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'(' {
            continue;
        }
        let mut start = i;
        while start > 0 {
            let c = bytes[start - 1];
            if c.is_ascii_alphanumeric() || c == b'_' || c == b':' {
                start -= 1;
            } else {
                break;
            }
        }
        let path = text[start..i].trim_start_matches(':').to_string();
        if path.is_empty() || path.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let before = text[..start].trim_end();
        let call = CallText {
            path,
            method: before.ends_with('.'),
        };
        if keep(&call) {
            return Some(call);
        }
    }
    None
}

/// Without a recognisable call: the file's module and the test name up to `_returns`.
fn fallback(stem: &str, test: &str) -> String {
    let module = stem.strip_prefix("carved_").unwrap_or(stem);
    let function = ["_returns", "_panics", "_ends", "_unwinds"]
        .iter()
        .filter_map(|s| test.find(s))
        .min()
        .map(|i| &test[..i])
        .unwrap_or(test);
    format!("{module}::{function}")
}

/// The first `error` line cargo printed, for a run that failed before any test did.
fn first_error(output: &str) -> String {
    libtest::first_error(output)
        .unwrap_or_else(|| "cargo test failed before running the carved tests".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVAL: &str = r#"//! Carved by carve.

#[test]
fn eval_returns_ok_11_5() {
    // Arrange
    let mut evaluator = expr::eval::Evaluator::new();
    // Act
    let result = evaluator
        .eval(&expr::parser::Expr::Num(2.0f64));
    // Assert
    assert_eq!(result, Ok(2.0f64));
}

#[test]
fn apply_returns_7_0() {
    // Act
    let result = expr::eval::apply('+', 3.0f64, 4.0f64);
    // Assert
    assert_eq!(result, 7.0f64);
}
"#;

    const OUTPUT: &str = "running 2 tests
test eval_returns_ok_11_5 ... ok
test apply_returns_7_0 ... FAILED

failures:

---- apply_returns_7_0 stdout ----

thread 'apply_returns_7_0' panicked at tests/carved_expr_eval.rs:17:5:
assertion `left == right` failed
  left: 8.0
 right: 7.0
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    apply_returns_7_0

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
";

    fn files() -> Vec<CarvedFile> {
        vec![CarvedFile {
            stem: "carved_expr_eval".into(),
            source: EVAL.into(),
        }]
    }

    #[test]
    fn tests_are_grouped_by_the_function_they_call() {
        let tests = carved_tests(&files()[0]);
        let functions: Vec<&str> = tests.iter().map(|t| t.function.as_str()).collect();
        assert_eq!(
            functions,
            ["expr::eval::Evaluator::eval", "expr::eval::apply"]
        );
    }

    #[test]
    fn a_failed_assertion_becomes_a_divergence_with_both_values() {
        let report = summarise_tests("expr", OUTPUT, &files(), false);
        assert_eq!(report.summary.calls_compared, 2);
        assert_eq!(report.summary.diverged_functions, 1);
        let apply = &report.groups[1];
        let first = apply.first.as_ref().expect("apply failed");
        assert_eq!(first.call_path, "carved_expr_eval::apply_returns_7_0");
        assert_eq!(first.baseline.as_deref(), Some("7.0"));
        assert_eq!(first.new.as_deref(), Some("8.0"));
        assert_eq!(
            first.field.as_deref(),
            Some("assertion `left == right` failed")
        );
        assert!(report.groups[0].first.is_none());
    }

    #[test]
    fn a_build_failure_is_a_divergence_of_the_whole_run() {
        let output = "error[E0425]: cannot find function `apply` in module `expr::eval`\n";
        let report = summarise_tests("expr", output, &files(), false);
        assert_eq!(report.process.len(), 1);
        assert!(report.process[0]
            .field
            .as_deref()
            .unwrap()
            .starts_with("error[E0425]"));
    }
}
