//! The report as text: human (the CLI prints it through `terminal_safe`) and JUnit XML
//! (undetected and flaky transformations are failures). JSON is serde's (`Report::json`).

use std::fmt::Write;

use crate::{Report, Verdict, WrittenTest};

pub fn human(r: &Report) -> String {
    let mut out = String::new();
    for f in &r.functions {
        if let Some(reason) = &f.skipped {
            let _ = writeln!(out, "skipped      {}: {reason}", f.function);
            continue;
        }
        let unreached: Vec<&str> = f
            .transformations
            .iter()
            .filter(|t| t.verdict == Verdict::NotReached)
            .map(|t| t.value.as_str())
            .collect();
        if !unreached.is_empty() {
            let _ = writeln!(
                out,
                "NOT REACHED  {} -> {}: not reached by any test",
                f.function,
                unreached.join(", ")
            );
        }
        for t in &f.transformations {
            match &t.verdict {
                Verdict::Detected { test, reason } => {
                    let by = test
                        .as_deref()
                        .map(|t| format!(" by {t}"))
                        .unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "detected     {} -> {}{by}: {reason}",
                        f.function, t.value
                    );
                }
                Verdict::Undetected { diagnosis } => {
                    let reach = match f.tests.len() {
                        0 => "no test reaches it".to_string(),
                        n => format!("{n} tests reach it: {}", f.tests.join(", ")),
                    };
                    let _ = writeln!(out, "UNDETECTED   {} -> {} ({reach})", f.function, t.value);
                    if let Some(d) = diagnosis {
                        let _ = writeln!(out, "    {}: {}", d.kind.label(), d.evidence);
                        let _ = writeln!(out, "    suggestion: {}", d.suggestion);
                    }
                    match &t.written {
                        Some(WrittenTest::Written {
                            file,
                            test,
                            fails_with,
                        }) => {
                            let _ = writeln!(
                                out,
                                "    wrote test {test} in {file}: it passes, and fails under the transformation ({fails_with})"
                            );
                        }
                        Some(WrittenTest::NotWritten { reason }) => {
                            let _ = writeln!(out, "    no test written: {reason}");
                        }
                        None => {}
                    }
                }
                Verdict::Flaky {
                    detected,
                    runs,
                    test,
                    reason,
                    diagnosis,
                    not_diagnosed,
                } => {
                    let by = test
                        .as_deref()
                        .map(|t| format!(" by {t}"))
                        .unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "FLAKY        {} -> {}: detected in {detected} of {runs} runs{by} ({reason})",
                        f.function, t.value
                    );
                    if let Some(d) = diagnosis {
                        let _ = writeln!(
                            out,
                            "    in the runs where it went undetected, {}: {}",
                            d.kind.label(),
                            d.evidence
                        );
                        let _ = writeln!(out, "    suggestion: {}", d.suggestion);
                    }
                    if let Some(why) = not_diagnosed {
                        let _ = writeln!(out, "    not diagnosed: {why}");
                    }
                }
                Verdict::NotRun { reason } => {
                    let _ = writeln!(out, "not run      {} -> {}: {reason}", f.function, t.value);
                }
                Verdict::NotReached => {}
            }
        }
    }
    let s = &r.summary;
    let _ = writeln!(
        out,
        "\n{} functions, {} transformations: {} detected, {} undetected, {} not reached by any test ({} functions), {} flaky, {} not run; {} functions skipped. Score {:.1}% ({:.1} s)",
        s.functions, s.transformations, s.detected, s.undetected, s.not_reached, s.not_reached_functions, s.flaky, s.not_run, s.skipped_functions, s.score, r.seconds
    );
    if s.caught_by_written_tests + s.left_without_test > 0 {
        let _ = writeln!(
            out,
            "Written tests (each passes, and fails under its transformation) catch {} weak-oracle or no-propagation cases; {} left without one.",
            s.caught_by_written_tests, s.left_without_test
        );
    }
    out
}

fn xml(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .map(|c| match c {
            '&' => "&amp;".to_string(),
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '"' => "&quot;".to_string(),
            '\'' => "&apos;".to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// JUnit XML: one test case per transformation; undetected, flaky and not reached ones are
/// failures.
pub fn junit(r: &Report) -> String {
    let s = &r.summary;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites><testsuite name=\"carve assess\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
        s.transformations, s.undetected + s.flaky + s.not_reached, s.not_run, r.seconds
    );
    for f in &r.functions {
        for t in &f.transformations {
            let _ = write!(
                out,
                "  <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\">",
                xml(&f.function),
                xml(&format!("-> {}", t.value)),
                t.seconds
            );
            match &t.verdict {
                Verdict::Detected { .. } => {}
                Verdict::Undetected { diagnosis } => {
                    let message = diagnosis
                        .as_ref()
                        .map(|d| format!("{}: {} ({})", d.kind.label(), d.evidence, d.suggestion))
                        .unwrap_or_else(|| "every test passed".into());
                    let _ = write!(out, "<failure message=\"undetected: {}\"/>", xml(&message));
                }
                Verdict::Flaky {
                    detected,
                    runs,
                    diagnosis,
                    ..
                } => {
                    let why = diagnosis
                        .as_ref()
                        .map(|d| {
                            format!(
                                "; where undetected, {}: {} ({})",
                                d.kind.label(),
                                d.evidence,
                                d.suggestion
                            )
                        })
                        .unwrap_or_default();
                    let _ = write!(
                        out,
                        "<failure message=\"flaky: detected in {detected} of {runs} runs{}\"/>",
                        xml(&why)
                    );
                }
                Verdict::NotRun { reason } => {
                    let _ = write!(out, "<skipped message=\"{}\"/>", xml(reason));
                }
                Verdict::NotReached => {
                    out.push_str("<failure message=\"not reached by any test\"/>");
                }
            }
            out.push_str("</testcase>\n");
        }
    }
    out.push_str("</testsuite></testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Diagnosis, FunctionAssessed, Kind, Transformation};

    #[test]
    fn a_flaky_transformation_shows_the_diagnosis_of_its_undetected_runs_as_such() {
        let diagnosis = Diagnosis {
            kind: Kind::WeakOracle,
            test: Some("tests::t".into()),
            evidence: "tests::t: w::answer returned 42 and now returns 0, and the test asserts nothing about it".into(),
            suggestion: "check the result: assert_eq!(w::answer(..), 42)".into(),
            witnesses: Vec::new(),
        };
        let mut report = Report {
            functions: vec![FunctionAssessed {
                function: "w::answer".into(),
                file: None,
                line: None,
                tests: vec!["tests::t".into()],
                skipped: None,
                transformations: vec![Transformation {
                    value: "0".into(),
                    verdict: Verdict::Flaky {
                        detected: 1,
                        runs: 2,
                        test: Some("tests::t".into()),
                        reason: "failed: boom".into(),
                        diagnosis: Some(diagnosis),
                        not_diagnosed: None,
                    },
                    seconds: 0.1,
                    runs: 2,
                    written: None,
                }],
            }],
            ..Report::default()
        };
        report.summarise();
        let text = human(&report);
        assert!(
            text.starts_with(
                "FLAKY        w::answer -> 0: detected in 1 of 2 runs by tests::t (failed: boom)\n    in the runs where it went undetected, weak-oracle: tests::t: w::answer returned 42 and now returns 0, and the test asserts nothing about it\n    suggestion: check the result: assert_eq!(w::answer(..), 42)\n"
            ),
            "{text}"
        );
    }
}
