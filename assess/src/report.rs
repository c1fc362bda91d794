//! The report of an assessment: per function, the tests that reach it and each extreme
//! transformation's verdict (plain data, serde).

use carve_storage::CallId;
use serde::Serialize;

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// The test binaries run.
    pub binaries: Vec<String>,
    pub functions: Vec<FunctionAssessed>,
    pub summary: Summary,
    /// Wall time of the whole assessment, in seconds.
    pub seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionAssessed {
    pub function: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// The tests that reach it (only these run under its transformations); none for a
    /// skipped function (one carve cannot transform is not recorded).
    pub tests: Vec<String>,
    /// Why it has no transformation (no extreme value carve can build for its return type).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    pub transformations: Vec<Transformation>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Transformation {
    /// The value returned instead of running the body, as source writes it (`Ok(())`, `0`).
    pub value: String,
    pub verdict: Verdict,
    /// Wall time of the transformed runs, in seconds.
    pub seconds: f64,
    /// How many times the tests ran under it (`--runs`; fewer when a run timed out).
    pub runs: u32,
    /// With `--write-tests`, for a weak-oracle or no-propagation case: the test written to
    /// catch it, or why none was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<WrittenTest>,
}

/// What `--write-tests` did for one undetected transformation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum WrittenTest {
    /// A carved test that passes on the code as it is and fails under the transformation.
    Written {
        /// The file, as written.
        file: String,
        test: String,
        /// How it fails under the transformation (the assertion and its values).
        fails_with: String,
    },
    /// No test that both passes and catches it could be carved: why.
    NotWritten { reason: String },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// A test failed, crashed or timed out.
    Detected {
        test: Option<String>,
        reason: String,
    },
    /// Every test passed, in every run.
    Undetected { diagnosis: Option<Diagnosis> },
    /// Some runs detected it and some did not: the tests do not agree with themselves.
    Flaky {
        /// Runs that detected it, of `runs`.
        detected: u32,
        runs: u32,
        /// The first detecting run's test and reason.
        test: Option<String>,
        reason: String,
        /// Why the runs where it went undetected did not notice it: diagnosed as an undetected
        /// transformation is, from one more run in which every test passed.
        #[serde(skip_serializing_if = "Option::is_none")]
        diagnosis: Option<Diagnosis>,
        /// Why it has no diagnosis, when one was tried and could not be made.
        #[serde(skip_serializing_if = "Option::is_none")]
        not_diagnosed: Option<String>,
    },
    /// The transformed run could not be made (the reason says why).
    NotRun { reason: String },
    /// No test reaches the function, so nothing was run: as undetected as can be (counted
    /// as not detected in the score).
    NotReached,
}

/// Why an undetected transformation went unnoticed (Reneri's three kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The tests' inputs give the transformed function the same effect as the original.
    NoInfection,
    /// The state right after the call differs, but nothing the tests observe does.
    NoPropagation,
    /// A test sees a different value and asserts nothing about it.
    WeakOracle,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::NoInfection => "no-infection",
            Kind::NoPropagation => "no-propagation",
            Kind::WeakOracle => "weak-oracle",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnosis {
    pub kind: Kind,
    /// The test the diagnosis is about, when it is about one.
    pub test: Option<String>,
    /// What carve saw, with the recorded values.
    pub evidence: String,
    /// What to do about it, in plain words.
    pub suggestion: String,
    /// The recorded calls of the original run a test catching it can be carved from, best
    /// first (for weak-oracle: the call whose value changed, then the function's own calls
    /// whose result the transformation changes; for no-propagation: those). Ids of the
    /// assessment's scratch trace, not reported.
    #[serde(skip)]
    pub witnesses: Vec<CallId>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub functions: usize,
    pub transformations: usize,
    pub detected: usize,
    pub undetected: usize,
    pub not_run: usize,
    /// Transformations of functions no test reaches (nothing run; in the score, as not
    /// detected), and those functions.
    pub not_reached: usize,
    pub not_reached_functions: usize,
    /// Transformations some runs detected and others did not (not in the score).
    pub flaky: usize,
    /// With `--write-tests`: weak-oracle and no-propagation cases a written test catches, and
    /// those left without one.
    pub caught_by_written_tests: usize,
    pub left_without_test: usize,
    /// Functions without a transformation (no value carve can force for their return type).
    pub skipped_functions: usize,
    /// Detected among detected + undetected + not reached, in percent (100 when there is
    /// none).
    pub score: f64,
}

impl Report {
    /// Counts the verdicts into `summary`.
    pub fn summarise(&mut self) {
        let mut s = Summary {
            functions: self.functions.len(),
            ..Summary::default()
        };
        for f in &self.functions {
            if f.skipped.is_some() {
                s.skipped_functions += 1;
            }
            if !f.transformations.is_empty()
                && f.transformations
                    .iter()
                    .all(|t| t.verdict == Verdict::NotReached)
            {
                s.not_reached_functions += 1;
            }
            for t in &f.transformations {
                s.transformations += 1;
                match t.verdict {
                    Verdict::Detected { .. } => s.detected += 1,
                    Verdict::Undetected { .. } => s.undetected += 1,
                    Verdict::NotRun { .. } => s.not_run += 1,
                    Verdict::Flaky { .. } => s.flaky += 1,
                    Verdict::NotReached => s.not_reached += 1,
                }
                match t.written {
                    Some(WrittenTest::Written { .. }) => s.caught_by_written_tests += 1,
                    Some(WrittenTest::NotWritten { .. }) => s.left_without_test += 1,
                    None => {}
                }
            }
        }
        let judged = s.detected + s.undetected + s.not_reached;
        s.score = if judged == 0 {
            100.0
        } else {
            s.detected as f64 * 100.0 / judged as f64
        };
        self.summary = s;
    }

    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}
