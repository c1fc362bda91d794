//! Distil: in, the plan and the files verification left, the recorded calls (what each test's
//! calls ended in) and the lines each test reaches and the value faults it detects, measured
//! by the caller through [`Distil`] (the CLI records each carved test binary one test at a
//! time, and runs it again with each fault `faults.rs` asks for; the generator never touches
//! ptrace); out, the files rewritten with only the tests `select.rs` keeps (a file left with
//! none goes), the plan without the others, and [`Distilled`], what was kept of what. The
//! kept tests reach every library line, every outcome per function (`outcome.rs`) and every
//! value class of what their calls and the calls inside them returned (`classes.rs`), of the
//! constants a call was given (`boundaries.rs`) and of the characters a test gave its calls
//! (`characters.rs`), and every fault on every line (`faults.rs`) the verified set reaches
//! and detects; the others add nothing and are dropped, and the names of those kept are made
//! again over the tests their file keeps (`rename.rs`: no `_2` without a first). Then
//! `fold_files` writes the kept tests of one call with other values as tables and those that
//! take the first steps of a longer one inside it, as stories (`fold.rs`, `fold/story.rs`).

pub(crate) mod boundaries;
pub(crate) mod characters;
pub(crate) mod classes;
pub(crate) mod faults;
pub(crate) mod fold;
pub(crate) mod measured;
pub(crate) mod outcome;
pub(crate) mod recorded;
pub(crate) mod rename;
pub(crate) mod select;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use carve_storage::{Call, FunctionId};
use serde::Serialize;

use crate::error::GenerateError;
use crate::plan::model::{FilePlan, Plan};
use select::Candidate;

pub use faults::{Fault, FaultValue};
pub use measured::{LinesPerTest, Measured};
pub use recorded::{
    recorded_faults, select_recorded, ExploreReasons, RecordedDistilled, RecordedTest,
};

/// The tests of one carved file, for the caller to measure: its cargo test target (the file's
/// stem), the names of its tests and, beside each, the faults to run it with (`faults.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestsToMeasure {
    pub target: String,
    pub tests: Vec<String>,
    pub faults: Vec<Vec<Fault>>,
}

/// The caller's measure of the verified tests: given the crate's directory and the tests of
/// each carved file, what each test reaches, or why they could not be measured.
#[derive(Clone)]
pub struct Distil(Arc<MeasureFn>);

type MeasureFn = dyn Fn(&Path, &[TestsToMeasure]) -> Result<Measured, String> + Send + Sync;

impl Distil {
    pub fn new(
        measure: impl Fn(&Path, &[TestsToMeasure]) -> Result<Measured, String> + Send + Sync + 'static,
    ) -> Distil {
        Distil(Arc::new(measure))
    }
}

impl std::fmt::Debug for Distil {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Distil(..)")
    }
}

/// What distilling kept of the verified tests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Distilled {
    pub verified_tests: usize,
    pub kept_tests: usize,
    /// Lines of the library's files the verified tests reach, and of those the kept ones.
    pub verified_lines: usize,
    pub kept_lines: usize,
    /// Distinct outcomes per function (variant, error, panic; `&mut` effects changed or left)
    /// of the verified tests' calls, and of the kept ones'.
    pub verified_outcomes: usize,
    pub kept_outcomes: usize,
    /// Value classes (zero, sign, empty) of what the verified tests' calls and the calls
    /// inside them returned, and of the kept ones'.
    #[serde(default)]
    pub verified_classes: usize,
    #[serde(default)]
    pub kept_classes: usize,
    /// Value faults (`faults.rs`) the verified tests detect, by the line of the faulty
    /// function they ran, and of those the kept ones; how many runs trying them took.
    #[serde(default)]
    pub verified_faults: usize,
    #[serde(default)]
    pub kept_faults: usize,
    #[serde(default)]
    pub fault_runs: usize,
    /// Tests whose lines were not measured (kept as they are).
    pub unmeasured_tests: usize,
    /// Of the kept tests, those of one shape folded into table tests (`fold.rs`): how many
    /// tables, and how many `#[test]`s the files hold then (0: not folded).
    #[serde(default)]
    pub tables: usize,
    /// Of the kept tests, those checked inside a longer one that takes the same first steps
    /// (`fold/story.rs`): how many such tests (stories) the files hold.
    #[serde(default)]
    pub stories: usize,
    #[serde(default)]
    pub written_tests: usize,
    /// Why the suite was not distilled (every verified test kept), when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_distilled: Option<String>,
}

impl Distilled {
    /// The line the CLI prints under the summary.
    pub fn line(&self) -> String {
        if let Some(why) = &self.not_distilled {
            return format!(
                "not distilled, all {} verified tests kept: {why}",
                self.verified_tests
            );
        }
        let mut line = format!(
            "distilled: kept {} of {} verified tests (--all keeps every one); they reach {} of \
             the {} library lines, {} of the {} outcomes per function (variant, error, \
             panic) and {} of the {} value classes (zero, sign, empty) of what their calls \
             and the calls inside them returned, that the verified tests reach",
            self.kept_tests,
            self.verified_tests,
            self.kept_lines,
            self.verified_lines,
            self.kept_outcomes,
            self.verified_outcomes,
            self.kept_classes,
            self.verified_classes
        );
        if self.fault_runs > 0 {
            line.push_str(&format!(
                "; they detect {} of the {} faults the verified tests detect (a function \
                 called inside made to answer the other bool, None, an integer one off, an \
                 empty text or sequence, or Ok(()) for an Err, or to leave its effect undone, \
                 on each line of it a test ran; \
                 {} runs)",
                self.kept_faults, self.verified_faults, self.fault_runs
            ));
        }
        if self.tables > 0 || self.stories > 0 {
            line.push_str(&format!(
                "; written as {} tests, {} of them tables of the kept tests that are the same \
                 steps with other values, {} of them stories checking the kept tests that take \
                 the same first steps where their calls are made",
                self.written_tests, self.tables, self.stories
            ));
        }
        if self.unmeasured_tests > 0 {
            line.push_str(&format!(
                "; {} tests kept unmeasured (their lines could not be read)",
                self.unmeasured_tests
            ));
        }
        line
    }
}

/// Where distilling works and what it reads.
pub(crate) struct Inputs<'a> {
    pub(crate) crate_dir: &'a Path,
    pub(crate) out_dir: &'a Path,
    /// The library's source files, canonical: only their lines are goals.
    pub(crate) lib_files: BTreeSet<String>,
    /// The recorded calls the tests stand for, by id.
    pub(crate) calls: HashMap<u64, &'a Call>,
    /// The recorded calls inside each call, by its id.
    pub(crate) children: HashMap<u64, Vec<&'a Call>>,
    /// Each recorded function's path.
    pub(crate) paths: HashMap<FunctionId, &'a str>,
    /// The crate's integer constants by value (`boundaries.rs`): a call given one is a class.
    pub(crate) boundaries: BTreeMap<i128, String>,
}

/// Measures the plan's tests through `distil`, keeps those `select` keeps, rewrites the files
/// without the others and takes them out of `plan` and `files`.
pub(crate) fn distil(
    distil: &Distil,
    inputs: &Inputs,
    plan: &mut Plan,
    files: &mut Vec<PathBuf>,
) -> Result<Distilled, GenerateError> {
    let verified_tests = plan.files.iter().map(|f| f.tests.len()).sum();
    let not_distilled = |why: String| Distilled {
        verified_tests,
        kept_tests: verified_tests,
        not_distilled: Some(why),
        ..Distilled::default()
    };
    if verified_tests == 0 {
        return Ok(Distilled::default());
    }
    // The faults worth trying on each test, in plan order: asked for, then made goals.
    let calls = faults::Calls {
        by_id: &inputs.calls,
        children: &inputs.children,
        paths: &inputs.paths,
    };
    let tried: Vec<Vec<faults::Tried>> = plan
        .files
        .iter()
        .flat_map(|f| &f.tests)
        .map(|t| faults::to_try(&calls, &ran(t)))
        .collect();
    let request = request(plan, &tried);
    let measured = match (distil.0)(inputs.crate_dir, &request) {
        Ok(m) => m,
        Err(why) => return Ok(not_distilled(why)),
    };
    let reached_lib = measured.lines.values().flatten();
    if !measured.lines.is_empty()
        && !reached_lib
            .into_iter()
            .any(|(f, _)| inputs.lib_files.contains(f))
    {
        return Ok(not_distilled(
            "the carved tests reached no line of the library's own files (was the crate built \
             from another copy of its sources?)"
                .to_string(),
        ));
    }
    let candidates = candidates(plan, inputs, &measured, &tried);
    let kept = select::select(&candidates);
    let verified = select::reached(&candidates, None);
    let reached = select::reached(&candidates, Some(&kept));
    let kept_tests = kept.len();
    take_out_dropped(inputs.out_dir, plan, &kept)?;
    rename::rename_kept(inputs.out_dir, plan)?;
    files.retain(|path| path.is_file());
    Ok(Distilled {
        verified_tests,
        kept_tests,
        verified_lines: verified.lines,
        kept_lines: reached.lines,
        verified_outcomes: verified.outcomes,
        kept_outcomes: reached.outcomes,
        verified_classes: verified.classes,
        kept_classes: reached.classes,
        verified_faults: verified.faults,
        kept_faults: reached.faults,
        fault_runs: measured.fault_runs,
        unmeasured_tests: candidates.iter().filter(|c| c.lines.is_none()).count(),
        tables: 0,
        stories: 0,
        written_tests: kept_tests,
        not_distilled: None,
    })
}

/// What folding the distilled tests into tables needs from the pipeline: how a file is
/// written, and how it is verified.
pub(crate) struct Folding<'a> {
    pub(crate) templates: &'a crate::render::Templates,
    pub(crate) verify: &'a crate::verify::cargo::Verify,
    pub(crate) progress: Option<&'a crate::progress::Progress>,
    pub(crate) interrupt: crate::interrupt::Interrupt,
}

/// Folds the tests of each distilled file that are the same steps with other values into
/// table tests (`fold.rs`), writes the file again and verifies it as carved files are; a file
/// whose folded tests do not all pass every run is put back as distilling left it, so that no
/// goal a kept test reached is lost. Then, a pass of its own, tests that take the first steps
/// of a longer one's arrangement are checked inside it (`fold/story.rs`), and the tests left
/// alone are named again among the file's (`rename.rs`). Returns how many tables and stories
/// the files hold now.
pub(crate) fn fold_files(
    folding: &Folding,
    inputs: &Inputs,
    plan: &mut Plan,
) -> Result<(usize, usize), GenerateError> {
    let arg_types = |t: &crate::plan::model::TestPlan| -> Vec<String> {
        let call = t.calls.first().and_then(|id| inputs.calls.get(id));
        call.map(|c| {
            c.args
                .iter()
                .map(|a| a.value.type_name().to_string())
                .collect()
        })
        .unwrap_or_default()
    };
    // A story's stop must leave what it was given as it found it: what the recorder read
    // again at the call's end (a `&mut` argument, a receiver) the same as before, nothing
    // moved.
    use crate::arrange::values::strip_ref;
    let leaves_state = |t: &crate::plan::model::TestPlan| -> bool {
        let Some(call) = t.calls.first().and_then(|id| inputs.calls.get(id)) else {
            return false;
        };
        call.args.iter().all(|a| {
            let after = call.after.iter().find(|b| b.name == a.name);
            match (&a.value, after) {
                (before, Some(after)) => strip_ref(before) == strip_ref(&after.value),
                (carve_storage::Value::Ref { ty, .. }, None) => !ty.starts_with("&mut"),
                (
                    carve_storage::Value::Pointer { .. } | carve_storage::Value::Unavailable { .. },
                    None,
                ) => false,
                (_, None) => a.name != "self",
            }
        })
    };
    let tables = fold_pass(folding, inputs, plan, &|tests| {
        fold::fold(tests, &arg_types)
    })?;
    let stories = fold_pass(folding, inputs, plan, &|tests| {
        fold::stories(tests, &leaves_state)
    })?;
    // A test folded into a table or a story no longer stands beside those it was named apart
    // from.
    rename::rename_kept(inputs.out_dir, plan)?;
    Ok((tables, stories))
}

/// One folding pass over every file: each file `pass` changes is written again and verified
/// on its own; one whose tests do not all pass every run is put back as it was. Returns how
/// many folds the files hold now.
fn fold_pass(
    folding: &Folding,
    inputs: &Inputs,
    plan: &mut Plan,
    pass: &dyn Fn(Vec<crate::plan::model::TestPlan>) -> (Vec<crate::plan::model::TestPlan>, usize),
) -> Result<usize, GenerateError> {
    let mut folds = 0;
    for at in 0..plan.files.len() {
        let (folded, made) = pass(plan.files[at].tests.clone());
        if made == 0 {
            continue;
        }
        let file_name = plan.files[at].file_name.clone();
        let path = inputs.out_dir.join(&file_name);
        let unfolded_text = crate::verify::cargo::read_back(inputs.out_dir, &file_name)?;
        let unfolded = std::mem::replace(&mut plan.files[at].tests, folded);
        let text = folding.templates.render_file(plan, &plan.files[at])?;
        write(&path, &text)?;
        let under = crate::verify::file_under_test(&plan.files[at]);
        let taken_out = crate::verify::quarantine(
            (inputs.crate_dir, inputs.out_dir),
            &[under],
            folding.verify,
            folding.progress,
            folding.interrupt,
            &|| Ok(()),
        )?;
        if taken_out.is_empty() && path.is_file() {
            folds += made;
        } else {
            plan.files[at].tests = unfolded;
            write(&path, &unfolded_text)?;
        }
    }
    Ok(folds)
}

fn write(path: &Path, text: &str) -> Result<(), GenerateError> {
    std::fs::write(path, text).map_err(|source| GenerateError::Verify {
        what: format!("cannot write {}", path.display()),
        source: Some(source),
    })
}

/// A file's cargo test target: its name without `.rs`.
fn target(file: &FilePlan) -> String {
    file.file_name
        .strip_suffix(".rs")
        .unwrap_or(&file.file_name)
        .to_string()
}

/// What to measure of the plan's tests: each file's, with the faults each test is to be run
/// with (`tried`, in plan order), within the tries a suite may take.
fn request(plan: &Plan, tried: &[Vec<faults::Tried>]) -> Vec<TestsToMeasure> {
    let per_test = tried
        .iter()
        .map(|t| t.iter().map(|t| t.fault.clone()).collect())
        .collect();
    let mut faults = faults::within_budget(per_test).into_iter();
    plan.files
        .iter()
        .map(|f| TestsToMeasure {
            target: target(f),
            tests: f.tests.iter().map(|t| t.name.clone()).collect(),
            faults: faults.by_ref().take(f.tests.len()).collect(),
        })
        .collect()
}

/// The recorded calls a test makes: its own, and those its arrange steps make again
/// (producers and history steps).
fn ran(t: &crate::plan::model::TestPlan) -> Vec<u64> {
    t.calls
        .iter()
        .chain(&t.replayed)
        .chain(&t.arranged)
        .copied()
        .collect::<BTreeSet<u64>>()
        .into_iter()
        .collect()
}

/// Every test of the plan, in order, as the selection rule weighs it; `tried`, the faults
/// each was asked to run with.
fn candidates(
    plan: &Plan,
    inputs: &Inputs,
    measured: &Measured,
    tried: &[Vec<faults::Tried>],
) -> Vec<Candidate> {
    let mut out = Vec::new();
    let mut tried = tried.iter();
    for file in &plan.files {
        let target = target(file);
        for t in &file.tests {
            let tried = tried.next().map_or(&[][..], Vec::as_slice);
            let key = (target.clone(), t.name.clone());
            let lines: Option<BTreeSet<(String, u32)>> = measured.lines.get(&key).map(|lines| {
                lines
                    .iter()
                    .filter(|(f, _)| inputs.lib_files.contains(f))
                    .cloned()
                    .collect()
            });
            // An outcome belongs to the function's source, not to one instance of it:
            // `SmallVec::<[u8; 16]>::new` and `SmallVec::<[i64; 4]>::new` run the same lines,
            // and a test of one catches what a changed line does to both.
            let outcomes = t
                .calls
                .iter()
                .filter_map(|id| inputs.calls.get(id))
                .filter_map(|call| {
                    let function = inputs
                        .paths
                        .get(&call.function)
                        .map_or_else(|| t.body.function_path.clone(), |p| (*p).to_string());
                    outcome::with_effects(call).map(|o| (function, o))
                })
                .collect();
            // The calls its arrange steps make again run in it too (producers and history
            // steps): a counter a replayed `next()` moved is what its state check sees.
            let recorded = faults::Calls {
                by_id: &inputs.calls,
                children: &inputs.children,
                paths: &inputs.paths,
            };
            let classes = classes::of_calls((&recorded, &inputs.boundaries), &ran(t), &t.calls);
            let faults = match (measured.detected.get(&key), &lines) {
                (Some(detected), Some(lines)) => {
                    let once = tried.iter().filter(|t| t.once);
                    let once = once.map(|t| t.fault.function.as_str()).collect();
                    faults::goals(detected, &once, lines, &measured.functions)
                }
                _ => BTreeSet::new(),
            };
            let size = t.body.setup.len() + t.body.mocks.len() + t.body.checks.len();
            out.push(Candidate {
                lines,
                outcomes,
                classes,
                faults,
                size,
                chosen: false,
            });
        }
    }
    out
}

/// Rewrites each file without the tests not in `kept` (positions over the plan's tests in
/// order), removing a file left with none, and takes them out of `plan`.
fn take_out_dropped(out_dir: &Path, plan: &mut Plan, kept: &[usize]) -> Result<(), GenerateError> {
    let kept: BTreeSet<usize> = kept.iter().copied().collect();
    let mut at = 0;
    for file in &mut plan.files {
        let mut dropped = BTreeSet::new();
        file.tests.retain(|t| {
            let keep = kept.contains(&at);
            at += 1;
            if !keep {
                dropped.insert(t.name.clone());
            }
            keep
        });
        plan.summary.tests_written = plan.summary.tests_written.saturating_sub(dropped.len());
        if file.tests.is_empty() {
            let _ = std::fs::remove_file(out_dir.join(&file.file_name));
        } else if !dropped.is_empty() {
            crate::verify::rewrite_without(out_dir, &file.file_name, &dropped)?;
        }
    }
    plan.files.retain(|f| !f.tests.is_empty());
    crate::verify::tidy_files(out_dir, plan)
}

/// A recorded root call that ended in `outcome` with `ret`, for the rules' unit tests.
#[cfg(test)]
pub(crate) fn test_call(
    outcome: carve_storage::Outcome,
    ret: Option<carve_storage::Value>,
) -> Call {
    Call {
        id: carve_storage::CallId(1),
        parent: None,
        function: FunctionId(1),
        thread: 1,
        depth: 0,
        args: Vec::new(),
        outcome,
        ret,
        after: Vec::new(),
        objects: Vec::new(),
        touches: Vec::new(),
    }
}
