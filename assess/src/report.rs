//! The report of an assessment: per function, the tests that reach it and each extreme
//! transformation's verdict (plain data, serde).

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
    /// The tests that reach it (only these run under its transformations).
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
    /// Wall time of the transformed run, in seconds.
    pub seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// A test failed, crashed or timed out.
    Detected {
        test: Option<String>,
        reason: String,
    },
    /// Every test passed.
    Undetected { diagnosis: Option<Diagnosis> },
    /// The transformed run could not be made (the reason says why).
    NotRun { reason: String },
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
    /// No test calls the function at all (nothing to run).
    NotReached,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::NoInfection => "no-infection",
            Kind::NoPropagation => "no-propagation",
            Kind::WeakOracle => "weak-oracle",
            Kind::NotReached => "not-reached",
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
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub functions: usize,
    pub transformations: usize,
    pub detected: usize,
    pub undetected: usize,
    pub not_run: usize,
    /// Functions reached by the tests but without a transformation.
    pub skipped_functions: usize,
    /// Detected among detected + undetected, in percent (100 when there is none).
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
            for t in &f.transformations {
                s.transformations += 1;
                match t.verdict {
                    Verdict::Detected { .. } => s.detected += 1,
                    Verdict::Undetected { .. } => s.undetected += 1,
                    Verdict::NotRun { .. } => s.not_run += 1,
                }
            }
        }
        let judged = s.detected + s.undetected;
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
