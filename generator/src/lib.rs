//! Carves unit tests out of a recorded trace: calls of the library's public functions become `#[test]`s.
//!
//! The stages pass plain data: [`CrateApi::load`] reads the crate's source with `syn`, [`plan`]
//! decides which recorded calls become which tests, the templates render them and the files are
//! written all or nothing. [`generate`] runs them all.

mod act;
mod arrange;
mod assert;
mod body;
mod error;
mod naming;
mod plan;
mod progress;
mod read;
mod reasons;
mod render;
mod syntax;
mod verify;

pub use crate::verify::libtest;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use carve_storage::{CallId, FunctionId, Language, Trace};
use serde::Serialize;

pub use crate::progress::{Progress, Step};
pub use crate::read::group::{GroupedTrace, Grouper, LeanValues, VALUE_NOT_KEPT};
pub use crate::verify::{Quarantined, Verify};
pub use crate::{
    body::{Binding, Body, Effect, Expectation, MockDecl, MockSetup, OrderedExpectation, Returns},
    error::GenerateError,
    plan::{
        plan, Assertion, FilePlan, OverMax, Plan, PlanOptions, SkippedCall, Summary, TestPlan,
        DID_NOT_RETURN, MOCKALL_VERSION, MOCK_NAME_CLASH, NEEDS_MOCKALL, OVER_MAX_PER_FUNCTION,
        UNDECODED, UNSUPPORTED_TYPE,
    },
    read::crate_api::{CrateApi, FnApi, ModuleApi, ParamApi, TypeApi},
    read::types::{DeclType, Prim},
    reasons::{
        CLOSURE_ARGUMENT, HISTORY_NOT_REPLAYABLE, MOCK_UNREPLAYABLE, NOT_MOCKABLE,
        RECEIVER_NOT_REBUILT, UNTESTABLE,
    },
    render::{format_rust, Templates, TEMPLATE_NAMES, TEST_FILE_TEMPLATE},
    verify::line_coverage::{compare_lines, LineCoverage, MissedFunction, SkipReason},
};

/// How many tests per function `carve generate` writes at most unless told otherwise: the
/// first this many distinct calls of each function are planned ([`Grouper::max_per_function`]).
pub const DEFAULT_MAX_PER_FUNCTION: usize = 100;

/// Where and how to write the tests.
#[derive(Debug, Clone, Default)]
pub struct GenerateOptions {
    /// An existing directory, usually the crate's `tests/`.
    pub out_dir: PathBuf,
    /// The library crate's directory. When `None`: the package holding `out_dir`, or else the
    /// current directory, and only if the recorded sources are in it (a trace never chooses
    /// the crate that is built and tested).
    pub crate_dir: Option<PathBuf>,
    /// A directory whose template files replace the built-in ones of the same name.
    pub templates: Option<PathBuf>,
    /// Run the carved tests against the crate and take out those that do not pass every time.
    pub verify: Option<Verify>,
    /// Which tests to keep.
    pub plan: PlanOptions,
    /// Told each step reached (tests carved, verification runs), for a progress display.
    pub progress: Option<Progress>,
}

/// What `generate` did: the plan's counts (flattened into the same JSON object) and what
/// writing and verifying added.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The files written, in order.
    pub files: Vec<PathBuf>,
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
    /// The library crate's directory (the one given, or found from the recorded sources).
    pub crate_dir: PathBuf,
    /// Every source file of the library's module tree (canonical where possible): the files
    /// whose lines [`compare_lines`] compares.
    #[serde(skip)]
    pub lib_files: Vec<PathBuf>,
    /// The recorded function of each skipped call, by call id: the path as the trace has it
    /// (`<hex::FromHexError as core::fmt::Display>::fmt`), where the skipped call names it as
    /// a test would (`hex::FromHexError::to_string`).
    #[serde(skip)]
    pub skipped_functions: BTreeMap<u64, String>,
    /// Which of the lines the recording reached the carved tests reach (the CLI measures it
    /// after verification; see [`compare_lines`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_coverage: Option<LineCoverage>,
    /// Why the line coverage was not measured, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_coverage_note: Option<String>,
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

/// Writes one test file per module of the library for the carvable calls of `trace`.
///
/// Everything is rendered before anything is written; on error no file is left half-written.
pub fn generate(trace: &Trace, opts: &GenerateOptions) -> Result<Report, GenerateError> {
    generate_with_groups(
        trace,
        &BTreeMap::new(),
        &BTreeMap::new(),
        &[],
        &BTreeMap::new(),
        opts,
    )
}

/// [`generate`] on a trace whose equivalent calls were grouped while it was read
/// ([`Grouper`]): the tests are planned from the calls kept, every call counted under a
/// representative shares its fate (its test, or its reason to be skipped) in the report, and
/// the calls over the grouper's cap are counted per function (those it kept aside as rows are
/// planned as table rows, see `table.rs`).
pub fn generate_grouped(
    grouped: &GroupedTrace,
    opts: &GenerateOptions,
) -> Result<Report, GenerateError> {
    generate_with_groups(
        &grouped.trace,
        &grouped.equivalent,
        &grouped.over_max_per_function,
        &grouped.rows,
        &grouped.threads,
        opts,
    )
}

fn generate_with_groups(
    trace: &Trace,
    equivalent: &BTreeMap<CallId, Vec<CallId>>,
    over_max: &BTreeMap<FunctionId, usize>,
    rows: &[carve_storage::Call],
    threads: &BTreeMap<i32, String>,
    opts: &GenerateOptions,
) -> Result<Report, GenerateError> {
    if !opts.out_dir.is_dir() {
        return Err(GenerateError::OutDirNotADirectory {
            path: opts.out_dir.clone(),
        });
    }
    let templates = Templates::load(opts.templates.as_deref())?;
    if !trace.functions.is_empty() && trace.functions.iter().all(|f| f.language != Language::Rust) {
        return Err(GenerateError::NotRust {
            program: program_name(trace),
            language: match trace.functions[0].language {
                Language::C => "C",
                _ => "non-Rust",
            }
            .to_string(),
        });
    }
    if let Some(call) = call_in_parent_cycle(trace.calls.iter().chain(rows)) {
        return Err(GenerateError::ParentCycle {
            call: call.0,
            run: trace.run.id.0,
        });
    }
    let crate_dir = match &opts.crate_dir {
        Some(dir) => dir.clone(),
        None => crate_to_build(trace, equivalent, over_max, rows, &opts.out_dir)?,
    };
    let api = CrateApi::load(&crate_dir)?;
    check_tests_are_targets(&crate_dir, &opts.out_dir)?;
    let mut plan_options = opts.plan.clone();
    let mut plan = plan::plan_grouped(trace, &api, &plan_options, equivalent, over_max, rows);
    count_equivalent(&mut plan, trace, rows, equivalent, &api, &plan_options);
    let mut over_max_per_function = count_over_max(&mut plan, trace, over_max, &api);
    let mut files = render_and_write(&plan, &templates, &opts.out_dir, trace, threads)?;
    Progress::report(
        opts.progress.as_ref(),
        Step::Carved {
            tests: plan.files.iter().map(|f| f.tests.len()).sum(),
            files: plan.files.len(),
        },
    );
    let mut quarantined = Vec::new();
    // A second round at most: the calls of tests verification took out are carved again with
    // their receivers' whole histories, where a left-out state-equivalent step differed.
    let mut fallback_round = false;
    while let Some(v) = &opts.verify {
        let under_test: Vec<verify::UnderTest> = plan
            .files
            .iter()
            .map(|f| verify::UnderTest {
                file: f.file_name.clone(),
                tests: f.tests.iter().map(|t| t.name.clone()).collect(),
                rows: f
                    .tests
                    .iter()
                    .filter_map(|t| Some((t.name.clone(), t.table.as_ref()?.rows.len())))
                    .collect(),
            })
            .collect();
        quarantined = match verify::quarantine(
            &crate_dir,
            &opts.out_dir,
            &under_test,
            v,
            opts.progress.as_ref(),
        ) {
            Ok(quarantined) => quarantined,
            Err(e) => {
                // Unverified files may not even compile: leave none behind.
                for path in &files {
                    let _ = std::fs::remove_file(path);
                }
                return Err(e);
            }
        };
        if !quarantined.is_empty() && !fallback_round {
            fallback_round = true;
            let failed = failed_calls(&plan, &quarantined);
            plan_options.whole_histories.extend(failed);
            let mut whole =
                plan::plan_grouped(trace, &api, &plan_options, equivalent, over_max, rows);
            count_equivalent(&mut whole, trace, rows, equivalent, &api, &plan_options);
            if whole.files != plan.files {
                for path in &files {
                    let _ = std::fs::remove_file(path);
                }
                over_max_per_function = count_over_max(&mut whole, trace, over_max, &api);
                plan = whole;
                files = render_and_write(&plan, &templates, &opts.out_dir, trace, threads)?;
                continue;
            }
        }
        if !quarantined.is_empty() {
            take_out(&mut plan, &quarantined);
            // Verification left each file without what it took out, or removed it.
            files.retain(|path| path.is_file());
            let report = verify::quarantine_report(&program_name(trace), v.runs, &quarantined);
            let name = match &opts.plan.file_prefix {
                Some(prefix) => format!("{prefix}quarantine.md"),
                None => QUARANTINE_FILE.to_string(),
            };
            files.extend(crate::render::write::write_all(
                &opts.out_dir,
                &[(name, report)],
            )?);
        }
        break;
    }
    plan.summary
        .credit_replayed(plan.files.iter().flat_map(|f| f.tests.iter()), equivalent);
    let skipped_functions =
        recorded_functions(trace, rows, equivalent, &plan.summary.skipped_calls);
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
    Ok(Report {
        files,
        tests,
        crate_name: plan.crate_name,
        summary: plan.summary,
        missing_dev_dependency,
        verified_runs: opts.verify.as_ref().map(|v| v.runs),
        quarantined,
        max_per_function: opts.plan.max_per_function,
        over_max_per_function,
        crate_dir,
        lib_files: api.files.iter().cloned().collect(),
        skipped_functions,
        line_coverage: None,
        line_coverage_note: None,
    })
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

/// Counts the calls the grouper left out over its cap by their function's kind: calls of a
/// public function as skipped `over --max-per-function` (returned per function), the others as
/// private or not supported, as planning them would have.
fn count_over_max(
    plan: &mut Plan,
    trace: &Trace,
    over_max: &BTreeMap<FunctionId, usize>,
    api: &CrateApi,
) -> Vec<OverMax> {
    let summary = &mut plan.summary;
    let mut over = Vec::new();
    for (&function, &n) in over_max {
        let Some(info) = trace.function(function) else {
            *summary
                .unsupported
                .entry("unknown function".to_string())
                .or_default() += n;
            continue;
        };
        match crate::act::call::resolve(api, info) {
            crate::act::target::Target::Private => summary.private_calls += n,
            crate::act::target::Target::Unsupported(kind) => {
                *summary.unsupported.entry(kind.to_string()).or_default() += n;
                let public_api = !plan::model::OUTSIDE_PUBLIC_API.contains(&kind);
                if public_api {
                    summary.public_api += n;
                }
                match summary
                    .unsupported_functions
                    .iter_mut()
                    .find(|u| u.function == info.path && u.reason == kind)
                {
                    Some(u) => u.calls += n,
                    None => summary
                        .unsupported_functions
                        .push(plan::UnsupportedFunction {
                            function: info.path.clone(),
                            reason: kind.to_string(),
                            calls: n,
                            public_api,
                        }),
                }
            }
            crate::act::target::Target::Callable(_) => {
                summary.in_scope += n;
                summary.public_api += n;
                *summary
                    .skipped
                    .entry(OVER_MAX_PER_FUNCTION.to_string())
                    .or_default() += n;
                over.push(OverMax {
                    function: info.path.clone(),
                    calls: n,
                });
            }
        }
    }
    summary.unsupported_functions.sort_by(|a, b| {
        b.calls
            .cmp(&a.calls)
            .then_with(|| a.function.cmp(&b.function))
    });
    over.sort_by(|a, b| {
        b.calls
            .cmp(&a.calls)
            .then_with(|| a.function.cmp(&b.function))
    });
    over
}

/// Gives the calls grouped under each representative the representative's fate in `plan`: the
/// same test (its `calls`), the same skip reason, or the same kind of call outside the tests.
fn count_equivalent(
    plan: &mut Plan,
    trace: &Trace,
    rows: &[carve_storage::Call],
    equivalent: &BTreeMap<CallId, Vec<CallId>>,
    api: &CrateApi,
    options: &PlanOptions,
) {
    if equivalent.is_empty() {
        return;
    }
    let mut in_test: HashMap<u64, (usize, usize)> = HashMap::new();
    for (f, file) in plan.files.iter().enumerate() {
        for (t, test) in file.tests.iter().enumerate() {
            for &call in &test.calls {
                in_test.insert(call, (f, t));
            }
        }
    }
    let skipped: HashMap<u64, SkippedCall> = plan
        .summary
        .skipped_calls
        .iter()
        .map(|s| (s.call, s.clone()))
        .collect();
    let by_id: HashMap<CallId, &carve_storage::Call> =
        trace.calls.iter().chain(rows).map(|c| (c.id, c)).collect();
    // What planning one call of a function alone says about it: private, or unsupported of
    // which kind (a function's kind does not depend on the call).
    let mut kind_of: HashMap<carve_storage::FunctionId, Summary> = HashMap::new();
    let summary = &mut plan.summary;
    for (representative, others) in equivalent {
        let n = others.len();
        if let Some(&(f, t)) = in_test.get(&representative.0) {
            let test = &mut plan.files[f].tests[t];
            test.calls.extend(others.iter().map(|c| c.0));
            test.calls.sort_unstable();
            // A table's row stands for them too (verification may take it out alone).
            let row = test.table.as_mut().and_then(|table| {
                table
                    .rows
                    .iter_mut()
                    .find(|r| r.calls.contains(&representative.0))
            });
            if let Some(row) = row {
                row.calls.extend(others.iter().map(|c| c.0));
            }
            summary.calls_carved += n;
            summary.in_scope += n;
            summary.public_api += n;
        } else if let Some(skip) = skipped.get(&representative.0) {
            summary.in_scope += n;
            summary.public_api += n;
            if skip.reason == NEEDS_MOCKALL {
                summary.needs_mockall += n;
            }
            *summary.skipped.entry(skip.reason.clone()).or_default() += n;
            summary
                .skipped_calls
                .extend(others.iter().map(|c| SkippedCall {
                    call: c.0,
                    ..skip.clone()
                }));
        } else if let Some(call) = by_id.get(representative) {
            let alone = kind_of.entry(call.function).or_insert_with(|| {
                let mut one = (*call).clone();
                one.parent = None;
                let single = Trace {
                    run: trace.run.clone(),
                    functions: trace.functions.clone(),
                    calls: vec![one],
                    objects: Vec::new(),
                    file_reads: Vec::new(),
                };
                plan::plan(&single, api, options).summary
            });
            summary.private_calls += n * alone.private_calls;
            summary.public_api += n * alone.public_api;
            for (kind, k) in &alone.unsupported {
                *summary.unsupported.entry(kind.clone()).or_default() += n * k;
            }
        }
    }
    summary.skipped_calls.sort_by_key(|s| s.call);
}

/// Takes the tests named in `names` out of `file` in `out_dir` (rewritten through a temporary
/// file): `carve assess --write-tests` keeps only the carved tests that catch a transformation.
pub fn remove_tests(
    out_dir: &Path,
    file: &str,
    names: &std::collections::BTreeSet<String>,
) -> Result<(), GenerateError> {
    verify::rewrite_without(out_dir, file, names)
}

/// Where verification lists the tests it took out.
pub const QUARANTINE_FILE: &str = "carved_quarantine.md";

/// Renders every file of `plan` (those with tests) and writes them all or nothing.
fn render_and_write(
    plan: &Plan,
    templates: &Templates,
    out_dir: &Path,
    trace: &Trace,
    threads: &BTreeMap<i32, String>,
) -> Result<Vec<PathBuf>, GenerateError> {
    let rendered = plan
        .files
        .iter()
        .filter(|file| !file.tests.is_empty())
        .map(|file| {
            let origins: Vec<String> = file
                .tests
                .iter()
                .map(|t| test_origin(trace, threads, &t.calls).unwrap_or_default())
                .collect();
            let source = templates.render_file_from(plan, file, &origins)?;
            Ok((file.file_name.clone(), source))
        })
        .collect::<Result<Vec<_>, GenerateError>>()?;
    crate::render::write::write_all(out_dir, &rendered)
}

/// Which test of which test binary the first of `calls` was made in, when a cargo test binary
/// made it on a named thread other than the main one (libtest runs each test on a thread
/// named after it):
/// ``test `adds` of `a` `` for a call of `tests/a.rs`'s test `adds`.
fn test_origin(trace: &Trace, threads: &BTreeMap<i32, String>, calls: &[u64]) -> Option<String> {
    let first = calls.first()?;
    let call = trace.calls.iter().find(|c| c.id.0 == *first)?;
    if call.thread == trace.run.info.pid {
        return None;
    }
    let test = threads.get(&call.thread)?;
    let binary = Path::new(&trace.run.info.program)
        .file_name()?
        .to_string_lossy();
    // cargo names a test binary `TARGET-HASH` (16 hex digits); any other program's named
    // threads are its own, not tests.
    let (target, hash) = binary.rsplit_once('-')?;
    if hash.len() != 16 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(format!("test `{test}` of `{target}`"))
}

/// The recorded calls of the tests and table rows verification took out.
fn failed_calls(plan: &Plan, quarantined: &[Quarantined]) -> Vec<u64> {
    let mut out = Vec::new();
    for file in &plan.files {
        for t in &file.tests {
            for q in quarantined
                .iter()
                .filter(|q| q.file == file.file_name && q.test == t.name)
            {
                match (q.row, &t.table) {
                    (Some(row), Some(table)) => {
                        out.extend(table.rows.get(row).into_iter().flat_map(|r| &r.calls));
                    }
                    _ => out.extend(&t.calls),
                }
            }
        }
    }
    out
}

/// Removes the quarantined tests and table rows from `plan`; their calls count as skipped.
fn take_out(plan: &mut Plan, quarantined: &[Quarantined]) {
    for file in &mut plan.files {
        for t in &mut file.tests {
            let Some(table) = t.table.as_mut() else {
                continue;
            };
            let gone: std::collections::BTreeSet<usize> = quarantined
                .iter()
                .filter(|q| q.file == file.file_name && q.test == t.name)
                .filter_map(|q| q.row)
                .collect();
            if gone.is_empty() {
                continue;
            }
            let mut at = 0;
            table.rows.retain(|row| {
                let out = gone.contains(&at);
                at += 1;
                if out {
                    plan.summary
                        .uncarve(&t.body.function_path, &row.calls, FAILED_VERIFICATION);
                    t.calls.retain(|c| !row.calls.contains(c));
                }
                !out
            });
        }
        file.tests.retain(|t| {
            let emptied = t.table.as_ref().is_some_and(|table| table.rows.is_empty());
            if emptied {
                plan.summary.tests_written -= 1;
                return false;
            }
            let out = quarantined
                .iter()
                .any(|q| q.file == file.file_name && q.test == t.name && q.row.is_none());
            if out {
                plan.summary.tests_written -= 1;
                plan.summary
                    .uncarve(&t.body.function_path, &t.calls, FAILED_VERIFICATION);
            }
            !out
        });
    }
}

/// The skip reason of calls whose tests verification took out.
pub const FAILED_VERIFICATION: &str = "failed verification";

/// A call whose parent links lead back to itself (its own parent, two calls parenting each
/// other, `main` under its child), if the trace has one. A recorder writes none: a call's
/// parent started before it. Every walk of the call tree (up the parents, down the children)
/// assumes a tree, so a damaged trace is refused here, before anything walks it.
fn call_in_parent_cycle<'c>(
    calls: impl Iterator<Item = &'c carve_storage::Call>,
) -> Option<CallId> {
    #[derive(Clone, Copy, PartialEq)]
    enum Seen {
        OnPath,
        Done,
    }
    let calls: Vec<&carve_storage::Call> = calls.collect();
    let parent: HashMap<CallId, Option<CallId>> = calls.iter().map(|c| (c.id, c.parent)).collect();
    let mut seen: HashMap<CallId, Seen> = HashMap::with_capacity(calls.len());
    let mut path = Vec::new();
    for call in calls {
        let mut at = Some(call.id);
        while let Some(id) = at {
            match seen.get(&id) {
                Some(Seen::OnPath) => return Some(id),
                Some(Seen::Done) => break,
                None => {}
            }
            // A parent outside the trace (grouping left it out) ends the walk.
            let Some(&up) = parent.get(&id) else { break };
            seen.insert(id, Seen::OnPath);
            path.push(id);
            at = up;
        }
        for id in path.drain(..) {
            seen.insert(id, Seen::Done);
        }
    }
    None
}

fn program_name(trace: &Trace) -> String {
    let program = &trace.run.info.program;
    Path::new(program)
        .file_name()
        .map_or_else(|| program.clone(), |n| n.to_string_lossy().into_owned())
}

/// The crate `generate` reads, builds and tests when `--crate` does not name it: the package
/// holding `--out`, or else the current directory (the nearest `Cargo.toml` with a
/// `[package]` at or above it). A trace is a file people share, so what it says never chooses
/// what runs: when its source files point into another crate, it is refused with both paths.
fn crate_to_build(
    trace: &Trace,
    equivalent: &BTreeMap<CallId, Vec<CallId>>,
    over_max: &BTreeMap<FunctionId, usize>,
    rows: &[carve_storage::Call],
    out_dir: &Path,
) -> Result<PathBuf, GenerateError> {
    let found = package_at_or_above(out_dir).or_else(|| package_at_or_above(Path::new(".")));
    let recorded = find_crate_dir(trace, equivalent, over_max, rows);
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    match (found, recorded) {
        (Some(found), Some(recorded)) if !same(&found, &recorded) => {
            Err(GenerateError::CrateElsewhere { found, recorded })
        }
        // Spelled as the recorded sources spell it: their paths are compared with it.
        (Some(_), Some(recorded)) => Ok(recorded),
        (Some(found), None) => Ok(found),
        (None, Some(recorded)) => Err(GenerateError::NoCrateAtOut {
            out_dir: out_dir.to_path_buf(),
            recorded,
        }),
        (None, None) => Err(GenerateError::CrateNotFound {
            program: program_name(trace),
        }),
    }
}

/// The nearest directory at or above `dir` (made absolute) with a `Cargo.toml` that has a
/// `[package]`.
fn package_at_or_above(dir: &Path) -> Option<PathBuf> {
    let dir = dir.canonicalize().ok()?;
    crate::read::crate_api::find_package_dir(&dir.join("Cargo.toml"))
}

/// The package with a library that most recorded calls point into, found by walking up from
/// the functions' source files to their `Cargo.toml`.
fn find_crate_dir(
    trace: &Trace,
    equivalent: &BTreeMap<CallId, Vec<CallId>>,
    over_max: &BTreeMap<FunctionId, usize>,
    rows: &[carve_storage::Call],
) -> Option<PathBuf> {
    let mut calls_per_function: HashMap<_, usize> =
        over_max.iter().map(|(&f, &n)| (f, n)).collect();
    for row in rows {
        *calls_per_function.entry(row.function).or_default() += 1;
    }
    for call in &trace.calls {
        *calls_per_function.entry(call.function).or_default() +=
            1 + equivalent.get(&call.id).map_or(0, Vec::len);
    }
    let mut package_of_dir: HashMap<PathBuf, Option<PathBuf>> = HashMap::new();
    let mut weight: BTreeMap<PathBuf, usize> = BTreeMap::new();
    for f in &trace.functions {
        if f.language != Language::Rust {
            continue;
        }
        let Some(file) = f
            .decl_file
            .as_deref()
            .map(Path::new)
            .filter(|p| p.is_file())
        else {
            continue;
        };
        let Some(parent) = file.parent() else {
            continue;
        };
        let package = package_of_dir
            .entry(parent.to_path_buf())
            .or_insert_with(|| {
                crate::read::crate_api::find_package_dir(file).filter(|dir| has_library(dir))
            })
            .clone();
        if let Some(dir) = package {
            // Functions with no calls still vote, a little.
            *weight.entry(dir).or_default() +=
                1 + calls_per_function.get(&f.id).copied().unwrap_or(0);
        }
    }
    // Highest weight; ties go to the first path in order, for determinism.
    weight
        .into_iter()
        .fold(
            None,
            |best: Option<(PathBuf, usize)>, (dir, w)| match best {
                Some((_, bw)) if bw >= w => best,
                _ => Some((dir, w)),
            },
        )
        .map(|(dir, _)| dir)
}

/// Carved files in the crate's `tests/` are test targets only while cargo discovers them: a
/// manifest with `autotests = false` (cargo writes it into every manifest it publishes with
/// explicit `[[test]]`s) needs to be told, or nothing carved would ever run.
fn check_tests_are_targets(crate_dir: &Path, out_dir: &Path) -> Result<(), GenerateError> {
    let manifest = crate_dir.join("Cargo.toml");
    let info = crate::read::crate_api::parse_manifest(
        &std::fs::read_to_string(&manifest).unwrap_or_default(),
    );
    let in_tests = match (
        out_dir.canonicalize(),
        crate_dir.join("tests").canonicalize(),
    ) {
        (Ok(out), Ok(tests)) => out == tests,
        _ => false,
    };
    if in_tests && info.autotests_off && !info.test_paths.iter().any(|p| p.contains("carved_")) {
        return Err(GenerateError::AutotestsOff { manifest });
    }
    Ok(())
}

fn has_library(dir: &Path) -> bool {
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
    let info = crate::read::crate_api::parse_manifest(&manifest);
    dir.join(info.lib_path.as_deref().unwrap_or("src/lib.rs"))
        .is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: u64, parent: Option<u64>) -> carve_storage::Call {
        carve_storage::Call {
            id: CallId(id),
            parent: parent.map(CallId),
            function: FunctionId(1),
            thread: 1,
            depth: 0,
            args: Vec::new(),
            outcome: carve_storage::Outcome::Returned,
            ret: None,
            after: Vec::new(),
            objects: Vec::new(),
            touches: Vec::new(),
        }
    }

    #[test]
    fn parent_links_that_loop_are_found_and_a_tree_is_not_taken_for_a_loop() {
        let cycle = |links: &[(u64, Option<u64>)]| {
            let calls: Vec<_> = links.iter().map(|&(id, p)| call(id, p)).collect();
            call_in_parent_cycle(calls.iter()).map(|c| c.0)
        };
        // A tree, and a parent grouping left out of the trace (9).
        assert_eq!(
            cycle(&[(1, None), (2, Some(1)), (3, Some(2)), (4, Some(9))]),
            None
        );
        assert_eq!(cycle(&[(1, None), (2, Some(2))]), Some(2));
        assert_eq!(cycle(&[(1, None), (2, Some(3)), (3, Some(2))]), Some(2));
        assert_eq!(cycle(&[(1, Some(3)), (2, Some(1)), (3, Some(2))]), Some(1));
    }

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
            "public API: 39 of 44 recorded calls carved into unverified tests (89%); outside it: 5 calls (private helpers, closures...), reached through the public calls above them; in scope: 41 calls; tests written: 12 (covering 39 calls); skipped: 2 (did not return 1, undecoded 1); private: 5 calls"
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
            "public API: 0 of 3 recorded calls carved into unverified tests (0%); outside it: 2 calls (private helpers, closures...), reached through the public calls above them; in scope: 0 calls; tests written: 0 (covering 0 calls); skipped: 0; private: 0 calls; not supported yet: 5 calls (closure 2, trait impl 3)"
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
