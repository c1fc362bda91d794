//! Carves unit tests out of a recorded trace: calls of the library's public functions become
//! `#[test]`s.
//!
//! A pipeline of stages, one folder each, passing plain data, read top to bottom in
//! `generate_recording`: `read` (the trace grouped, the crate's API, the crate to build) →
//! `plan` (which calls become which tests; each body built by `arrange`, `act` and `assert`) →
//! `render` (templates, written all or nothing) → `verify` (what fails or does not compile
//! taken out) → the [`Report`]. A stage uses only those before it in the order read, act,
//! arrange, assert, plan, render, verify, and the foundation files (`body.rs`, `reasons.rs`,
//! `syntax.rs`, `naming.rs`); ARCHITECTURE.md draws it and says where a new rule goes.

// No function over the 100 lines generator/clippy.toml sets (.ci/run denies it).
#![warn(clippy::too_many_lines)]

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
mod report;
mod syntax;
#[cfg(test)]
mod testdata;
mod verify;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use carve_storage::Trace;

pub use crate::progress::{Progress, Step};
use crate::read::group::Recording;
pub use crate::read::group::{GroupedTrace, Grouper, LeanValues, VALUE_NOT_KEPT};
pub use crate::report::{CarvedTest, Report};
pub use crate::verify::{libtest, Quarantined, Verify};

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
        CLOSURE_ARGUMENT, FAILED_VERIFICATION, HISTORY_NOT_REPLAYABLE, MOCK_UNREPLAYABLE,
        NOT_MOCKABLE, RECEIVER_NOT_REBUILT, UNTESTABLE,
    },
    render::targets::forget_test_targets,
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

/// Writes one test file per module of the library for the carvable calls of `trace`.
///
/// Everything is rendered before anything is written; on error no file is left half-written.
pub fn generate(trace: &Trace, opts: &GenerateOptions) -> Result<Report, GenerateError> {
    generate_recording(
        &Recording {
            trace,
            equivalent: &BTreeMap::new(),
            over_max: &BTreeMap::new(),
            rows: &[],
            threads: &BTreeMap::new(),
        },
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
    generate_recording(
        &Recording {
            trace: &grouped.trace,
            equivalent: &grouped.equivalent,
            over_max: &grouped.over_max_per_function,
            rows: &grouped.rows,
            threads: &grouped.threads,
        },
        opts,
    )
}

/// The pipeline: read (check the recording, find the crate, read its API) → plan (each test
/// body built by arrange, act and assert) → render and write → verify (and, at most once, plan
/// again with whole histories for the calls whose tests it took out) → the report.
fn generate_recording(rec: &Recording, opts: &GenerateOptions) -> Result<Report, GenerateError> {
    if !opts.out_dir.is_dir() {
        return Err(GenerateError::OutDirNotADirectory {
            path: opts.out_dir.clone(),
        });
    }
    let templates = Templates::load(opts.templates.as_deref())?;
    let (crate_dir, api) = read::crate_dir::check(rec, opts.crate_dir.as_ref(), &opts.out_dir)?;
    let (mut plan, mut over_max) = plan::grouped::plan_recording(rec, &api, &opts.plan);
    let mut files =
        render::render_and_write(&plan, &templates, &opts.out_dir, rec.trace, rec.threads)?;
    Progress::report(
        opts.progress.as_ref(),
        Step::Carved {
            tests: plan.files.iter().map(|f| f.tests.len()).sum(),
            files: plan.files.len(),
        },
    );
    let targets = render::targets::TestTargets::needed(&crate_dir, &opts.out_dir);
    let run = Run {
        rec,
        api: &api,
        crate_dir: &crate_dir,
        opts,
        templates: &templates,
        targets: targets.as_ref(),
    };
    let (quarantined, targets_added) = verify_listed(&run, &mut plan, &mut files, &mut over_max)
        .inspect_err(|_| {
            // Nothing carved stays: neither the files nor their targets in the manifest.
            for path in files.iter() {
                let _ = std::fs::remove_file(path);
            }
            if let Some(t) = &targets {
                t.restore();
            }
        })?;
    let mut report = report::report(
        rec,
        plan,
        (crate_dir, &api),
        files,
        quarantined,
        over_max,
        (
            opts.verify.as_ref().map(|v| v.runs),
            opts.plan.max_per_function,
        ),
    );
    report.test_targets_added = targets_added;
    Ok(report)
}

/// Verifies the files written, when asked, with every carved file a test target of the crate
/// (`render/targets.rs`: a manifest with `autotests = false` is told of them, before and after
/// verification): the tests taken out, and the names of the targets added to the manifest.
fn verify_listed(
    run: &Run,
    plan: &mut Plan,
    files: &mut Vec<PathBuf>,
    over_max: &mut Vec<OverMax>,
) -> Result<(Vec<Quarantined>, Vec<String>), GenerateError> {
    list_targets(run, files)?;
    let quarantined = match &run.opts.verify {
        Some(v) => verify_and_replan(run, v, plan, files, over_max)?,
        None => Vec::new(),
    };
    Ok((quarantined, list_targets(run, files)?))
}

/// [`render::targets::TestTargets::list`] when the crate's manifest needs it.
fn list_targets(run: &Run, files: &[PathBuf]) -> Result<Vec<String>, GenerateError> {
    run.targets.map_or(Ok(Vec::new()), |t| t.list(files))
}

/// What one run of the pipeline works on, for the verification round.
struct Run<'r> {
    rec: &'r Recording<'r>,
    api: &'r CrateApi,
    crate_dir: &'r Path,
    opts: &'r GenerateOptions,
    templates: &'r Templates,
    /// The manifest to tell of the carved files (`autotests = false`), if it must be.
    targets: Option<&'r render::targets::TestTargets>,
}

/// Verifies the files written: the tests taken out. A second round at most: the calls of tests
/// verification took out are carved again with their receivers' whole histories, where a
/// left-out state-equivalent step differed (`plan`, `files` and `over_max` are then the new
/// plan's). What it took out leaves the plan, and is listed in the quarantine file.
fn verify_and_replan(
    run: &Run,
    v: &Verify,
    plan: &mut Plan,
    files: &mut Vec<PathBuf>,
    over_max: &mut Vec<OverMax>,
) -> Result<Vec<Quarantined>, GenerateError> {
    let opts = run.opts;
    let mut plan_options = opts.plan.clone();
    let mut fallback_round = false;
    loop {
        let under_test = verify::under_test(plan);
        let quarantined = verify::quarantine(
            (run.crate_dir, &opts.out_dir),
            &under_test,
            v,
            opts.progress.as_ref(),
            &|| list_targets(run, files).map(drop),
        )
        .inspect_err(|_| {
            // Unverified files may not even compile: leave none behind.
            for path in files.iter() {
                let _ = std::fs::remove_file(path);
            }
        })?;
        if !quarantined.is_empty() && !fallback_round {
            fallback_round = true;
            let failed = verify::take_out::failed_calls(plan, &quarantined);
            plan_options.whole_histories.extend(failed);
            let (whole, whole_over) =
                plan::grouped::plan_recording(run.rec, run.api, &plan_options);
            if whole.files != plan.files {
                for path in files.iter() {
                    let _ = std::fs::remove_file(path);
                }
                *over_max = whole_over;
                *plan = whole;
                *files = render::render_and_write(
                    plan,
                    run.templates,
                    &opts.out_dir,
                    run.rec.trace,
                    run.rec.threads,
                )?;
                list_targets(run, files)?;
                continue;
            }
        }
        if !quarantined.is_empty() {
            verify::take_out::take_out(plan, &quarantined);
            // Verification left each file without what it took out, or removed it.
            files.retain(|path| path.is_file());
            let program = read::crate_dir::program_name(run.rec.trace);
            let report = verify::quarantine_report(&program, v.runs, &quarantined);
            let name = match &opts.plan.file_prefix {
                Some(prefix) => format!("{prefix}quarantine.md"),
                None => QUARANTINE_FILE.to_string(),
            };
            files.extend(render::write::write_all(&opts.out_dir, &[(name, report)])?);
        }
        return Ok(quarantined);
    }
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
