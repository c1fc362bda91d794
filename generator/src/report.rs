//! What `generate` did, as the CLI prints it and `--format json` writes it.

pub(crate) mod bare;

use std::collections::BTreeMap;
use std::path::PathBuf;

use carve_storage::{CallId, Trace};
use serde::Serialize;

use crate::distil::Distilled;
use crate::plan;
use crate::plan::model::{OverMax, Plan, SkippedCall, Summary};
use crate::plan::MOCKALL_VERSION;
use crate::read::crate_api::CrateApi;
use crate::read::group::Recording;
use crate::verify::line_coverage::LineCoverage;
use crate::verify::Quarantined;

/// What `generate` did: the plan's counts (flattened into the same JSON object) and what
/// writing and verifying added.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The files written, in order.
    pub files: Vec<PathBuf>,
    /// Files of the output directory this generate replaced: written again, or removed when
    /// verification took out every test carved for them. The CLI says so.
    pub replaced: Vec<PathBuf>,
    pub crate_name: String,
    /// Recorded calls by fate, after verification took out what failed.
    #[serde(flatten)]
    pub summary: Summary,
    /// What to add to the crate's manifest so the tests that need mocks can be written.
    pub missing_dev_dependency: Option<String>,
    /// How many times each carved test ran when verified (`None`: not verified).
    pub verified_runs: Option<u32>,
    /// Tests verification took out, with the reason (listed in `carved_quarantine.md`).
    pub quarantined: Vec<Quarantined>,
    /// The cap on distinct calls planned per function (`--max-per-function`), if any.
    pub max_per_function: Option<usize>,
    /// Public functions with calls never planned because the function already had its
    /// `max_per_function` distinct calls, most calls first. Those calls are counted in
    /// `skipped` as `over --max-per-function` but, unlike other skipped calls, not listed one by
    /// one in `skipped_calls` (a million of them would be the whole trace again).
    pub over_max_per_function: Vec<OverMax>,
    /// The library crate's directory (the one given, or the one holding `--out` or the
    /// current directory; see `read/crate_dir.rs`).
    pub crate_dir: PathBuf,
    /// Every source file of the library's module tree (canonical where possible): the files
    /// whose lines [`crate::verify::line_coverage::compare_lines`] compares.
    #[serde(skip)]
    pub lib_files: Vec<PathBuf>,
    /// Where the crate was when the trace was recorded, when it was moved since
    /// ([`CrateApi::recorded_root`]): the recording's files under it are the crate's.
    #[serde(skip)]
    pub recorded_root: Option<PathBuf>,
    /// The recorded function of each skipped call, by call id: the path as the trace has it
    /// (`<hex::FromHexError as core::fmt::Display>::fmt`), where the skipped call names it as
    /// a test would (`hex::FromHexError::to_string`).
    #[serde(skip)]
    pub skipped_functions: BTreeMap<u64, String>,
    /// Which of the lines the recording reached the carved tests reach (the CLI measures it
    /// after verification; see [`crate::verify::line_coverage::compare_lines`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_coverage: Option<LineCoverage>,
    /// Why the line coverage was not measured, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_coverage_note: Option<String>,
    /// What distilling kept of the verified tests (`None`: not distilled, `--all` or
    /// `--no-verify`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distilled: Option<Distilled>,
    /// The cargo features the recorded program was built with beyond the crate's defaults: each
    /// carved file compiles only with them (`#![cfg(feature = ..)]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    /// The `[[test]]` targets carve added to the crate's manifest for the carved files, by name:
    /// it says `autotests = false`, so cargo builds only the tests it lists.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub test_targets_added: Vec<String>,
    /// Tests left whose only check is a bare variant (`matches!(result, Some(_))`): nothing
    /// inside their result was observable (`report/bare.rs`).
    pub bare_checks: usize,
    /// Every test left in the files (after verification), with the recorded calls it stands
    /// for: how `carve assess --write-tests` finds the test carved from a given call.
    #[serde(skip)]
    pub tests: Vec<CarvedTest>,
}

/// One test written: its file (name in the output directory), its name, and the recorded
/// calls it stands for (the first is the one it was carved from).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CarvedTest {
    pub file: String,
    pub name: String,
    pub calls: Vec<u64>,
}

impl Report {
    /// `in scope: 41 calls; tests written: 12 (covering 39 calls); skipped: 2 (undecoded 1, did
    /// not return 1); private: 5 calls`, plus what is not supported yet when there is any.
    pub fn summary_line(&self) -> String {
        let skipped: usize = self.summary.skipped.values().sum();
        let outside: usize = self.summary.private_calls
            + self
                .summary
                .unsupported
                .iter()
                .filter(|(k, _)| plan::model::OUTSIDE_PUBLIC_API.contains(&k.as_str()))
                .map(|(_, n)| n)
                .sum::<usize>();
        // The headline: recorded calls of the public API that ended in a passing test (or, not
        // verified, in a written test). What carve cannot carve yet counts against it.
        let headline_pct =
            100.0 * self.summary.calls_carved as f64 / self.summary.public_api.max(1) as f64;
        let mut steps = match self.summary.carved_as_steps {
            0 => String::new(),
            n => format!(
                ", {n} of them as steps other tests replay and check through the call they feed"
            ),
        };
        if self.summary.carved_through_callers > 0 {
            steps.push_str(&format!(
                ", {} of them on private fields or objects a call was building, through the \
                 tested public call holding them",
                self.summary.carved_through_callers
            ));
        }
        let mut line = format!(
            "public API: {} of {} recorded calls carved into {} tests ({headline_pct:.0}%{steps}); \
             outside it: {outside} calls (private helpers, closures...), reached through the \
             public calls above them; ",
            self.summary.calls_carved,
            self.summary.public_api,
            if self.verified_runs.is_some() {
                "passing"
            } else {
                "unverified"
            },
        );
        line.push_str(&format!(
            "in scope: {} calls; tests written: {} (covering {} calls); skipped: {}",
            self.summary.in_scope, self.summary.tests_written, self.summary.calls_carved, skipped
        ));
        if skipped > 0 {
            line.push_str(&format!(" ({})", breakdown(&self.summary.skipped)));
        }
        if let Some(runs) = self.verified_runs {
            let pct =
                100.0 * self.summary.calls_carved as f64 / self.summary.in_scope.max(1) as f64;
            line.push_str(&format!(
                "; passing after verify ({runs} runs): {} tests, {pct:.0}% of in-scope calls",
                self.summary.tests_written
            ));
        }
        line.push_str(&format!("; bare checks left: {}", self.bare_checks));
        if self.summary.method_tests > 0 {
            line.push_str(&format!(
                "; on methods: {} tests",
                self.summary.method_tests
            ));
        }
        if self.summary.mock_tests > 0 {
            line.push_str(&format!(
                "; with mocks: {} tests ({} mock! blocks)",
                self.summary.mock_tests, self.summary.mocks
            ));
        }
        line.push_str(&format!("; private: {} calls", self.summary.private_calls));
        let unsupported: usize = self.summary.unsupported.values().sum();
        if unsupported > 0 {
            line.push_str(&format!(
                "; not supported yet: {unsupported} calls ({})",
                breakdown(&self.summary.unsupported)
            ));
        }
        let over: usize = self.over_max_per_function.iter().map(|o| o.calls).sum();
        if let (Some(max), true) = (self.max_per_function, over > 0) {
            line.push_str(&format!(
                "; {over} more calls of {} functions not carved, beyond the first {max} distinct \
                 calls of each (--max-per-function N or --all to change)",
                self.over_max_per_function.len()
            ));
        }
        if let Some(hint) = &self.missing_dev_dependency {
            line.push_str(&format!("; {hint}"));
        }
        line
    }

    /// The line the CLI prints when the carved tests need features the crate does not turn on
    /// by default.
    pub fn features_line(&self) -> Option<String> {
        (!self.features.is_empty() && !self.files.is_empty()).then(|| {
            format!(
                "the recorded program was built with the features {}: the carved tests run \
                 with `cargo test --features {}` (without them each file compiles to nothing)",
                self.features.join(", "),
                self.features.join(",")
            )
        })
    }

    /// The line the CLI prints when carve added `[[test]]` targets to the crate's manifest.
    pub fn test_targets_line(&self) -> Option<String> {
        (!self.test_targets_added.is_empty()).then(|| {
            format!(
                "added a [[test]] target to {} for each of {}: it sets `autotests = false`, so \
                 cargo builds only the test files it lists",
                self.crate_dir.join("Cargo.toml").display(),
                self.test_targets_added.join(", ")
            )
        })
    }

    /// The line the CLI prints under the summary about the carved tests' line coverage: the
    /// figure, or why it was not measured.
    pub fn line_coverage_line(&self) -> Option<String> {
        match (&self.line_coverage, &self.line_coverage_note) {
            (Some(c), _) => Some(c.line(&self.crate_name)),
            (None, Some(note)) => Some(note.clone()),
            (None, None) => None,
        }
    }
}

fn breakdown(counts: &BTreeMap<String, usize>) -> String {
    counts
        .iter()
        .map(|(reason, n)| format!("{reason} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The recorded function path of each call in `skipped` (equivalent calls share their
/// representative's function).
fn recorded_functions(
    trace: &Trace,
    rows: &[carve_storage::Call],
    equivalent: &BTreeMap<CallId, Vec<CallId>>,
    skipped: &[SkippedCall],
) -> BTreeMap<u64, String> {
    let wanted: std::collections::HashSet<u64> = skipped.iter().map(|s| s.call).collect();
    let mut out = BTreeMap::new();
    for call in trace.calls.iter().chain(rows) {
        let Some(f) = trace.function(call.function) else {
            continue;
        };
        let ids =
            std::iter::once(call.id).chain(equivalent.get(&call.id).into_iter().flatten().copied());
        for id in ids {
            if wanted.contains(&id.0) {
                out.insert(id.0, f.path.clone());
            }
        }
    }
    out
}

/// The report of a run: the plan after verification (its summary crediting the calls replayed as
/// arrange steps), the files written and what verification took out.
pub(crate) fn report(
    rec: &Recording,
    mut plan: Plan,
    (crate_dir, api): (PathBuf, &CrateApi),
    files: Vec<PathBuf>,
    quarantined: Vec<Quarantined>,
    over_max_per_function: Vec<OverMax>,
    (verified_runs, max_per_function): (Option<u32>, Option<usize>),
) -> Report {
    plan.summary.credit_replayed(
        plan.files.iter().flat_map(|f| f.tests.iter()),
        rec.equivalent,
    );
    let skipped_functions = recorded_functions(
        rec.trace,
        rec.rows,
        rec.equivalent,
        &plan.summary.skipped_calls,
    );
    let missing_dev_dependency = (plan.summary.needs_mockall > 0).then(|| {
        format!(
            "{} calls need mocks: add `mockall = \"{MOCKALL_VERSION}\"` under [dev-dependencies] in {}",
            plan.summary.needs_mockall,
            crate_dir.join("Cargo.toml").display()
        )
    });
    let tests = plan
        .files
        .iter()
        .flat_map(|f| {
            f.tests.iter().map(|t| CarvedTest {
                file: f.file_name.clone(),
                name: t.name.clone(),
                calls: t.calls.clone(),
            })
        })
        .collect();
    Report {
        files,
        replaced: Vec::new(),
        tests,
        crate_name: plan.crate_name,
        summary: plan.summary,
        missing_dev_dependency,
        verified_runs,
        quarantined,
        max_per_function,
        over_max_per_function,
        crate_dir,
        lib_files: api.files.iter().cloned().collect(),
        recorded_root: api.recorded_root.clone(),
        skipped_functions,
        line_coverage: None,
        line_coverage_note: None,
        distilled: None,
        features: plan.features,
        test_targets_added: Vec::new(),
        bare_checks: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reasons::OVER_MAX_PER_FUNCTION;

    #[test]
    fn the_summary_line_reads_like_the_cli_prints_it() {
        let report = Report {
            summary: Summary {
                public_api: 44,
                in_scope: 41,
                tests_written: 12,
                calls_carved: 39,
                skipped: BTreeMap::from([
                    ("undecoded".to_string(), 1),
                    ("did not return".to_string(), 1),
                ]),
                private_calls: 5,
                ..Summary::default()
            },
            ..Report::default()
        };
        assert_eq!(
            report.summary_line(),
            "public API: 39 of 44 recorded calls carved into unverified tests (89%); outside it: 5 calls (private helpers, closures...), reached through the public calls above them; in scope: 41 calls; tests written: 12 (covering 39 calls); skipped: 2 (did not return 1, undecoded 1); bare checks left: 0; private: 5 calls"
        );
        let more = Report {
            summary: Summary {
                public_api: 3,
                unsupported: BTreeMap::from([
                    ("trait impl".to_string(), 3),
                    ("closure".to_string(), 2),
                ]),
                ..Summary::default()
            },
            ..Report::default()
        };
        assert_eq!(
            more.summary_line(),
            "public API: 0 of 3 recorded calls carved into unverified tests (0%); outside it: 2 calls (private helpers, closures...), reached through the public calls above them; in scope: 0 calls; tests written: 0 (covering 0 calls); skipped: 0; bare checks left: 0; private: 0 calls; not supported yet: 5 calls (closure 2, trait impl 3)"
        );
    }

    #[test]
    fn the_summary_line_says_how_many_calls_the_cap_left_out_and_how_to_change_it() {
        let report = Report {
            summary: Summary {
                public_api: 300,
                in_scope: 300,
                tests_written: 5,
                calls_carved: 5,
                skipped: BTreeMap::from([(OVER_MAX_PER_FUNCTION.to_string(), 295)]),
                ..Summary::default()
            },
            max_per_function: Some(5),
            over_max_per_function: vec![OverMax {
                function: "hotloop::mix".into(),
                calls: 295,
            }],
            ..Report::default()
        };
        assert!(
            report.summary_line().ends_with(
                "; private: 0 calls; 295 more calls of 1 functions not carved, beyond the first 5 distinct calls of each (--max-per-function N or --all to change)"
            ),
            "{}",
            report.summary_line()
        );
    }
}
