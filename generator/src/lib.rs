//! Carves unit tests out of a recorded trace: calls of the library's public functions become
//! `#[test]`s.
//!
//! A pipeline of stages, one folder each, passing plain data, read top to bottom in
//! `generate_recording`: `read` (the trace grouped, the crate's API, the crate to build) →
//! `plan` (which calls become which tests; each body built by `arrange`, `act` and `assert`) →
//! `render` (templates, written all or nothing) → `verify` (what fails or does not compile
//! taken out) → `distil` (only the tests that add a line or an outcome kept) → the [`Report`].
//! A stage uses only those before it in the order read, act, arrange, assert, plan, render,
//! verify, distil, and the foundation files (`body.rs`, `reasons.rs`,
//! `syntax.rs`, `naming.rs`, `features.rs`); ARCHITECTURE.md draws it and says where a new rule goes.

// No function over the 100 lines generator/clippy.toml sets (.ci/run denies it).
#![warn(clippy::too_many_lines)]

mod act;
mod arrange;
mod assert;
mod body;
mod distil;
mod error;
mod features;
mod interrupt;
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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use carve_storage::{Call, Trace};

/// The sources that only read files by path (the recorder's labels), whose reads it snapshots.
pub use crate::arrange::context::FILE_READS;
/// The files recorded reads saw, as a directory a test (or `carve explore`'s harness) builds.
pub use crate::arrange::world::{
    build_steps as file_build_steps, layout as files_layout, strings as recorded_strings,
    Node as FileNode,
};
pub use crate::distil::{
    recorded_faults, select_recorded, Distil, Distilled, ExploreReasons, Fault, FaultValue,
    LinesPerTest, Measured, RecordedDistilled, RecordedTest, TestsToMeasure,
};
pub use crate::features::{features_cfg, recorded_features};
pub use crate::interrupt::Interrupt;
pub use crate::progress::{Progress, Step};
use crate::read::group::Recording;
pub use crate::read::group::{GroupedTrace, Grouper, LeanValues, VALUE_NOT_KEPT};
/// A long text written more than once in a generated file as one `const` at its top.
pub use crate::render::hoist::long_literals as hoist_long_literals;
use crate::render::stage::Stage;
pub use crate::report::{CarvedTest, Report};
pub use crate::verify::{
    cargo::test_executables, compile_error_lines, libtest, verify_test_file, Quarantined, Verify,
    QUARANTINE_FILE,
};

pub use crate::{
    body::{Binding, Body, Effect, Expectation, MockDecl, MockSetup, OrderedExpectation, Returns},
    error::GenerateError,
    plan::{
        plan, Assertion, FilePlan, OverMax, Plan, PlanOptions, SkippedCall, Summary, TestPlan,
        DID_NOT_RETURN, MOCKALL_VERSION, MOCK_NAME_CLASH, NEEDS_MOCKALL, OVER_MAX_PER_FUNCTION,
        UNDECODED, UNSUPPORTED_TYPE,
    },
    read::crate_api::{
        CrateApi, FieldApi, FnApi, ModuleApi, ParamApi, TraitMethodApi, TypeApi, TypeParamApi,
    },
    read::paths::split_top,
    read::types::{type_arguments, DeclType, Prim},
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
    /// Told each step reached (calls planned, tests carved, verification runs), for a progress
    /// display.
    pub progress: Option<Progress>,
    /// After verification, keep only the tests that add a line or an outcome, as this measures
    /// the lines each test reaches (`None`: every verified test is kept, `--all`).
    pub distil: Option<Distil>,
    /// Set by the caller to stop generation: `out_dir` is then left as it was.
    pub interrupt: Interrupt,
}

/// Writes one test file per module of the library for the carvable calls of `trace`.
///
/// The files are staged beside `out_dir` and moved into it when everything (verification
/// included) is done; on error or interruption `out_dir` is left as it was. Files named after
/// the recorded target (`carved_it_...` for the integration test `it`) keep the tests carved
/// from different targets apart; the report lists the files of `out_dir` that were replaced.
pub fn generate(trace: &Trace, opts: &GenerateOptions) -> Result<Report, GenerateError> {
    generate_recording(
        &Recording {
            trace,
            equivalent: &BTreeMap::new(),
            over_max: &BTreeMap::new(),
            rows: &[],
            threads: &BTreeMap::new(),
            stand_ins: &BTreeMap::new(),
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
            stand_ins: &grouped.stand_ins,
        },
        opts,
    )
}

/// The pipeline: read (check the recording, find the crate, read its API) → plan (each test
/// body built by arrange, act and assert) → render and stage → verify (and, at most once, plan
/// again with whole histories for the calls whose tests it took out) → commit → the report.
fn generate_recording(rec: &Recording, opts: &GenerateOptions) -> Result<Report, GenerateError> {
    if !opts.out_dir.is_dir() {
        return Err(GenerateError::OutDirNotADirectory {
            path: opts.out_dir.clone(),
        });
    }
    let templates = Templates::load(opts.templates.as_deref())?;
    let (crate_dir, mut api) = read::crate_dir::check(rec, opts.crate_dir.as_ref(), &opts.out_dir)?;
    // Every cargo command builds the crate with the features the recorded program had.
    let features = recorded_features(&rec.trace.run.info);
    let verify = opts.verify.as_ref().map(|v| v.with_features(&features));
    // What consts hold that the source does not say, when cargo is at hand.
    if let Some(v) = &verify {
        verify::consts::probe(&mut api, &crate_dir, (v, opts.interrupt))?;
    }
    // The recorded program's own types the library held, declared by the tests that name them.
    api.stand_ins = act::stand_ins::collect(rec.trace, &api);
    let plan_options = plan_options(&opts.plan, rec.trace, &api);
    let tick = |done, total| {
        Progress::report(opts.progress.as_ref(), Step::Planning { done, total });
        !opts.interrupt.is_set()
    };
    let (mut plan, mut over_max) = plan::grouped::plan_recording(rec, &api, &plan_options, &tick);
    let interrupted = || GenerateError::Interrupted {
        out_dir: opts.out_dir.clone(),
    };
    if opts.interrupt.is_set() {
        return Err(interrupted());
    }
    let mut stage = Stage::new(&opts.out_dir)?;
    let mut files =
        render::render_and_stage(&plan, &templates, &mut stage, rec.trace, rec.threads)?;
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
        verify: verify.as_ref(),
        plan_options: &plan_options,
        templates: &templates,
        targets: targets.as_ref(),
    };
    // On an error or an interruption the stage puts the output directory back when dropped,
    // and the manifest is put back here.
    let finished = verify_and_distil(&run, &mut stage, (&mut plan, &mut files, &mut over_max))
        .and_then(|done| Ok((done, stage.commit()?)))
        .map_err(|e| match e {
            GenerateError::Interrupted { .. } => interrupted(),
            e => e,
        });
    let ((quarantined, distilled), replaced) = finished.inspect_err(|_| {
        if let Some(t) = &targets {
            t.restore();
        }
    })?;
    let targets_added = list_targets(&run, &files)?;
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
    report.bare_checks = report::bare::count(&report.files);
    report.distilled = distilled;
    report.replaced = replaced;
    report.test_targets_added = targets_added;
    Ok(report)
}

/// Verification (when asked) and distilling (when asked and verified), with every carved file
/// a test target of the crate while cargo builds them (`render/targets.rs`: a manifest with
/// `autotests = false` is told of them): the tests taken out, and what distilling kept.
fn verify_and_distil(
    run: &Run,
    stage: &mut Stage,
    (plan, files, over_max): Planned,
) -> Result<(Vec<Quarantined>, Option<Distilled>), GenerateError> {
    let opts = run.opts;
    let quarantined = match run.verify {
        Some(v) => verify_and_replan(run, v, stage, (plan, files, over_max))?,
        None => Vec::new(),
    };
    // Distilling measures the tests with cargo, which finds them only in place.
    let distilled = match (&opts.distil, run.verify) {
        (Some(d), Some(_)) => {
            stage.place()?;
            list_targets(run, files)?;
            Some(distil_verified(run, d, plan, files)?)
        }
        _ => None,
    };
    if opts.interrupt.is_set() {
        return Err(GenerateError::Interrupted {
            out_dir: opts.out_dir.clone(),
        });
    }
    Ok((quarantined, distilled))
}

/// Distils the verified tests (see `distil.rs`): the recorded calls they stand for say what
/// their calls ended in, the caller's measure which lines they reach.
fn distil_verified(
    run: &Run,
    d: &Distil,
    plan: &mut Plan,
    files: &mut Vec<PathBuf>,
) -> Result<Distilled, GenerateError> {
    let calls: HashMap<u64, &Call> = run
        .rec
        .trace
        .calls
        .iter()
        .chain(run.rec.rows)
        .map(|c| (c.id.0, c))
        .collect();
    let mut children: HashMap<u64, Vec<&Call>> = HashMap::new();
    for call in calls.values() {
        if let Some(parent) = call.parent {
            children.entry(parent.0).or_default().push(call);
        }
    }
    // A call dropped past its function's cap, equal to one kept under another parent, ran
    // inside its own parent all the same: its representative stands in for it there.
    for (parent, reps) in run.rec.stand_ins {
        let under = children.entry(parent.0).or_default();
        under.extend(reps.iter().filter_map(|r| calls.get(&r.0)).copied());
    }
    // In start order, so that a test over the classing cap weighs the same calls every time.
    for calls in children.values_mut() {
        calls.sort_by_key(|c| c.id);
    }
    let paths = run
        .rec
        .trace
        .functions
        .iter()
        .map(|f| (f.id, f.path.as_str()))
        .collect();
    let lib_files = run
        .api
        .files
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    let inputs = distil::Inputs {
        crate_dir: run.crate_dir,
        out_dir: &run.opts.out_dir,
        lib_files,
        calls,
        children,
        paths,
        boundaries: distil::boundaries::of(
            run.api.modules.values().flat_map(|m| m.consts.values()),
        ),
    };
    let mut distilled = distil::distil(d, &inputs, plan, files)?;
    if let (Some(verify), None) = (run.verify, &distilled.not_distilled) {
        let folding = distil::Folding {
            templates: run.templates,
            verify,
            progress: run.opts.progress.as_ref(),
            interrupt: run.opts.interrupt,
        };
        (distilled.tables, distilled.stories) = distil::fold_files(&folding, &inputs, plan)?;
        distilled.written_tests = plan.files.iter().map(|f| f.tests.len()).sum();
        // The summary counts the `#[test]`s the files hold: a table or a story is one.
        plan::files::recount_tests(&mut plan.summary, &plan.files);
    }
    Ok(distilled)
}

/// `options`, with the file prefix naming the recorded target when it is not the crate's own
/// (`carved_it_` for the integration test `it`; see [`naming::target_prefix`]) and no prefix
/// was given.
fn plan_options(options: &PlanOptions, trace: &Trace, api: &CrateApi) -> PlanOptions {
    let mut options = options.clone();
    if options.file_prefix.is_none() {
        options.file_prefix = naming::target_prefix(&trace.run.info.program, &api.crate_name);
    }
    options
}

/// The recorded calls of `trace` the carved suite in `out_dir` tests: those [`generate`]
/// plans a test of with its default options (its cap per function, the file prefix of the
/// recorded target), less those of the tests and table rows verification took out there (its
/// quarantine file). A call made inside another that no test makes directly, or one carve
/// could not carve, is tested by none (`carve explore` starts from what these check).
pub fn carved_calls(trace: &Trace, api: &CrateApi, out_dir: &Path) -> BTreeSet<u64> {
    let defaults = PlanOptions {
        max_per_function: Some(DEFAULT_MAX_PER_FUNCTION),
        ..PlanOptions::default()
    };
    let options = plan_options(&defaults, trace, api);
    let plan = plan::plan(trace, api, &options);
    let file = out_dir.join(verify::quarantine_file_name(options.file_prefix.as_deref()));
    let quarantined = std::fs::read_to_string(file)
        .map(|text| verify::read_quarantine_report(&text))
        .unwrap_or_default();
    let failed: BTreeSet<u64> = verify::take_out::failed_calls(&plan, &quarantined)
        .into_iter()
        .collect();
    (plan.files.iter().flat_map(|f| &f.tests))
        .flat_map(|t| t.calls.iter().copied())
        .filter(|c| !failed.contains(c))
        .collect()
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
    /// `opts.verify` with the features the recorded program was built with.
    verify: Option<&'r Verify>,
    /// `opts.plan` with the target's file prefix.
    plan_options: &'r PlanOptions,
    templates: &'r Templates,
    /// The manifest to tell of the carved files (`autotests = false`), if it must be.
    targets: Option<&'r render::targets::TestTargets>,
}

/// The plan, its staged files and the calls over the cap, as verification changes them.
type Planned<'p> = (&'p mut Plan, &'p mut Vec<PathBuf>, &'p mut Vec<OverMax>);

/// Rounds of carving again after the first verification: a test that passed the first round
/// may fail the second beside the tests carved again there (a value drawn from a process-wide
/// counter, which they now draw from first), and is carved again in its turn.
const MAX_FALLBACK_ROUNDS: usize = 3;

/// Verifies the staged files, put in place for cargo: the tests taken out. Then, while a
/// round took out tests of calls not yet carved again and [`MAX_FALLBACK_ROUNDS`] allow,
/// another: those calls are carved again with their receivers' whole histories, where a
/// left-out state-equivalent step differed, and the recording's checks only (`plan`, `files`
/// and `over_max` are then the new plan's). What the last round took out leaves the plan, and
/// is listed in the quarantine file (staged).
fn verify_and_replan(
    run: &Run,
    v: &Verify,
    stage: &mut Stage,
    (plan, files, over_max): Planned,
) -> Result<Vec<Quarantined>, GenerateError> {
    let opts = run.opts;
    let mut plan_options = run.plan_options.clone();
    let mut fallback_rounds = 0;
    stage.place()?;
    list_targets(run, files)?;
    loop {
        let under_test = verify::under_test(plan);
        let quarantined = verify::quarantine(
            (run.crate_dir, &opts.out_dir),
            &under_test,
            v,
            opts.progress.as_ref(),
            opts.interrupt,
            &|| list_targets(run, files).map(drop),
        )?;
        let failed = verify::take_out::failed_calls(plan, &quarantined);
        let again = verify::take_out::to_carve_again(&plan_options.weak_oracles, failed);
        if !again.is_empty() && fallback_rounds < MAX_FALLBACK_ROUNDS {
            fallback_rounds += 1;
            plan_options.whole_histories.extend(again.iter().copied());
            plan_options.weak_oracles.extend(again);
            let (whole, whole_over) =
                plan::grouped::plan_recording(run.rec, run.api, &plan_options, &|_, _| {
                    !opts.interrupt.is_set()
                });
            if opts.interrupt.is_set() {
                return Err(GenerateError::Interrupted {
                    out_dir: opts.out_dir.clone(),
                });
            }
            if whole.files != plan.files {
                stage.take_back()?;
                *over_max = whole_over;
                *plan = whole;
                *files = render::render_and_stage(
                    plan,
                    run.templates,
                    stage,
                    run.rec.trace,
                    run.rec.threads,
                )?;
                stage.place()?;
                list_targets(run, files)?;
                continue;
            }
        }
        if !quarantined.is_empty() {
            verify::take_out::take_out(plan, &quarantined);
            verify::tidy_files(&opts.out_dir, plan)?;
            // Verification left each file without what it took out, or removed it.
            files.retain(|path| path.is_file());
            let program = read::crate_dir::program_name(run.rec.trace);
            let report = verify::quarantine_report(&program, v.runs, &quarantined);
            let name = verify::quarantine_file_name(plan_options.file_prefix.as_deref());
            files.extend(stage.write(&[(name, report)])?);
        }
        return Ok(quarantined);
    }
}

/// Takes the tests named in `names` out of `file` in `out_dir` (rewritten through a temporary
/// file), and the `const`s only they used: `carve assess --write-tests` keeps only the carved
/// tests that catch a transformation, `carve explore` only the kept tests that add a goal.
pub fn remove_tests(
    out_dir: &Path,
    file: &str,
    names: &std::collections::BTreeSet<String>,
) -> Result<(), GenerateError> {
    verify::rewrite_without(out_dir, file, names)
}
