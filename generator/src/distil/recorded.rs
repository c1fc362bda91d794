//! Distilling tests carve did not plan from a recording (`carve explore`'s kept sequences),
//! beside tests chosen before (the carved suite, distilled already): the caller records each
//! test alone with the run's selection, and its calls stand for what the plan's recorded
//! calls are to a carved test. The test's own calls are those its body makes (the recorded
//! calls without a recorded caller); the rest are the calls inside them. Then the goals are
//! the carved tests' (`select.rs`): the library lines a test runs, the outcomes of its own
//! calls, the value classes of what they and the calls inside them returned, and the value
//! faults (`faults.rs`) it detects, tried on the calls inside as on a carved test's; and, as
//! `carve explore` says, the comparisons it met first at their boundary and what it was kept
//! for in functions its recording has no call of (`ExploreReasons`). A test
//! chosen before is kept whatever it adds; of the others, only those that add a goal.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use carve_storage::{Call, FunctionId, Trace};
use serde::Serialize;

use super::boundaries;
use super::classes;
use super::faults::{self, Fault};
use super::measured::Measured;
use super::outcome;
use super::select::{self, Candidate};
use crate::read::crate_api::CrateApi;

/// One test, recorded alone.
#[derive(Debug, Clone)]
pub struct RecordedTest {
    /// Its cargo test target (the file's stem).
    pub target: String,
    pub name: String,
    /// Kept whatever it adds (a carved test, distilled already).
    pub chosen: bool,
    /// The calls of its run with the run's selection; `None` when it could not be recorded
    /// (it is kept: nothing says what it adds).
    pub trace: Option<Trace>,
    /// Why `carve explore` kept it, for what its recording cannot tell.
    pub explored: ExploreReasons,
}

/// Why `carve explore` kept a test, as far as a recording cannot tell: the comparisons it met
/// first, (file, line, side: `below`, `equal` or `above`; the file as the test binary names
/// it), and the outcomes it gave a function first, (function path, class). A comparison met
/// at its boundary, both sides equal, is a goal of its own (a `<` made `<=` shows there only,
/// and a recording never sees comparisons); another comparison outcome, or an outcome, is one
/// when the test's recording holds no call of the function it is in or of (a function every
/// call of which was inlined: bytesize's `as_gb` and `+=`, whose results and effects nothing
/// recorded tells apart).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExploreReasons {
    pub compares: Vec<(String, u32, String)>,
    pub outcomes: Vec<(String, String)>,
}

impl ExploreReasons {
    /// The goals these reasons make for a test whose recording called the functions `seen`;
    /// `functions` says whose lines a line's are.
    fn goals(
        &self,
        seen: &BTreeSet<&str>,
        functions: &BTreeMap<(String, u32), BTreeSet<String>>,
    ) -> BTreeSet<(String, String)> {
        let unseen = |f: &String| !seen.contains(f.as_str());
        let mut out = BTreeSet::new();
        for (file, line, side) in &self.compares {
            let at = format!("{file}:{line}");
            let whose = functions.get(&(file.clone(), *line));
            if side == "equal" {
                out.insert((at, "compared at its boundary".to_string()));
            } else if whose.is_some_and(|fs| !fs.is_empty() && fs.iter().all(unseen)) {
                out.insert((at, format!("compared {side}, unrecorded")));
            }
        }
        for (function, class) in self.outcomes.iter().filter(|(f, _)| unseen(f)) {
            out.insert((function.clone(), format!("outcome {class}, unrecorded")));
        }
        out
    }
}

/// What distilling kept of the tests not chosen before, and what they reach beside those.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RecordedDistilled {
    /// The tests to keep, by position among those given.
    #[serde(skip)]
    pub kept: Vec<usize>,
    /// Tests weighed (not chosen before), and of those kept.
    pub weighed_tests: usize,
    pub kept_tests: usize,
    /// Goals every test given reaches together, and the chosen and kept ones.
    pub all_lines: usize,
    pub kept_lines: usize,
    pub all_faults: usize,
    pub kept_faults: usize,
    pub all_goals: usize,
    pub kept_goals: usize,
    /// Goals the tests chosen before reach alone.
    pub chosen_goals: usize,
    pub fault_runs: usize,
}

/// A recorded test's calls as distilling reads them.
struct Recorded<'t> {
    by_id: HashMap<u64, &'t Call>,
    children: HashMap<u64, Vec<&'t Call>>,
    paths: HashMap<FunctionId, &'t str>,
    /// The calls its body makes, in start order.
    own: Vec<u64>,
}

impl<'t> Recorded<'t> {
    /// The calls of `trace`, a recording of one test of the cargo test target `target`. The
    /// test's own code (its function and closures: paths under the target's crate, recorded
    /// when the selection was the program's own code) stands for the test: the calls it makes
    /// are the test's own calls, and it is never a call tried with a fault or classed.
    fn of(trace: &'t Trace, target: &str) -> Recorded<'t> {
        let test_code = format!("{}::", target.replace('-', "_"));
        let paths: HashMap<FunctionId, &str> = (trace.functions.iter())
            .filter(|f| !f.path.starts_with(&test_code))
            .map(|f| (f.id, f.path.as_str()))
            .collect();
        let by_id: HashMap<u64, &Call> = trace.calls.iter().map(|c| (c.id.0, c)).collect();
        let is_test_code = |call: &Call| !paths.contains_key(&call.function);
        let mut children: HashMap<u64, Vec<&Call>> = HashMap::new();
        let mut own = Vec::new();
        for call in trace.calls.iter().filter(|c| !is_test_code(c)) {
            let parent = call.parent.and_then(|p| by_id.get(&p.0));
            match parent.filter(|p| !is_test_code(p)) {
                Some(parent) => children.entry(parent.id.0).or_default().push(call),
                None => own.push(call.id.0),
            }
        }
        for calls in children.values_mut() {
            calls.sort_by_key(|c| c.id);
        }
        own.sort_unstable();
        Recorded {
            by_id,
            children,
            paths,
            own,
        }
    }

    fn calls(&self) -> faults::Calls<'_, 't> {
        faults::Calls {
            by_id: &self.by_id,
            children: &self.children,
            paths: &self.paths,
        }
    }
}

/// The faults to run each test with (in order; none for a test not recorded), within the
/// tries a suite may take.
pub fn recorded_faults(tests: &[RecordedTest]) -> Vec<Vec<Fault>> {
    let per_test = tests
        .iter()
        .map(|t| {
            t.trace.as_ref().map_or_else(Vec::new, |trace| {
                let recorded = Recorded::of(trace, &t.target);
                let tried = faults::to_try(&recorded.calls(), &recorded.own);
                tried.into_iter().map(|t| t.fault).collect()
            })
        })
        .collect();
    faults::within_budget(per_test)
}

/// Which tests to keep: every test chosen before or not measured, and the fewest others
/// that reach every goal all of them reach together (`select.rs`). `measured` holds what
/// the caller measured of each (target, name): its lines and the faults it detected.
pub fn select_recorded(
    api: &CrateApi,
    tests: &[RecordedTest],
    measured: &Measured,
) -> RecordedDistilled {
    let lib_files: BTreeSet<String> = (api.files.iter())
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    let bounds = boundaries::of(api.modules.values().flat_map(|m| m.consts.values()));
    let candidates: Vec<Candidate> = tests
        .iter()
        .map(|t| candidate(t, measured, &lib_files, &bounds))
        .collect();
    let kept = select::select(&candidates);
    let chosen: Vec<usize> = (0..tests.len()).filter(|&i| tests[i].chosen).collect();
    let all = select::reached(&candidates, None);
    let reached = select::reached(&candidates, Some(&kept));
    let by_chosen = select::reached(&candidates, Some(&chosen));
    let total = |r: select::Reached| r.lines + r.outcomes + r.classes + r.faults;
    RecordedDistilled {
        weighed_tests: tests.len() - chosen.len(),
        kept_tests: kept.len() - chosen.len(),
        kept,
        all_lines: all.lines,
        kept_lines: reached.lines,
        all_faults: all.faults,
        kept_faults: reached.faults,
        all_goals: total(all),
        kept_goals: total(reached),
        chosen_goals: total(by_chosen),
        fault_runs: measured.fault_runs,
    }
}

/// One test as the selection rule weighs it.
fn candidate(
    test: &RecordedTest,
    measured: &Measured,
    lib_files: &BTreeSet<String>,
    bounds: &BTreeMap<i128, String>,
) -> Candidate {
    let key = (test.target.clone(), test.name.clone());
    let lines: Option<BTreeSet<(String, u32)>> = measured
        .lines
        .get(&key)
        .filter(|_| test.trace.is_some())
        .map(|lines| {
            (lines.iter())
                .filter(|(f, _)| lib_files.contains(f))
                .cloned()
                .collect()
        });
    let mut out = Candidate {
        lines,
        outcomes: BTreeSet::new(),
        classes: BTreeSet::new(),
        faults: BTreeSet::new(),
        size: 0,
        chosen: test.chosen,
    };
    let (Some(trace), Some(lines)) = (&test.trace, &out.lines) else {
        return out;
    };
    let recorded = Recorded::of(trace, &test.target);
    let calls = recorded.calls();
    out.outcomes = (recorded.own.iter())
        .filter_map(|id| recorded.by_id.get(id))
        .filter_map(|call| {
            let function = recorded.paths.get(&call.function)?;
            outcome::with_effects(call).map(|o| (function.to_string(), o))
        })
        .collect();
    out.classes = classes::of_calls((&calls, bounds), &recorded.own, &recorded.own);
    let seen: BTreeSet<&str> = (trace.calls.iter())
        .filter_map(|c| recorded.paths.get(&c.function).copied())
        .collect();
    out.classes
        .extend(test.explored.goals(&seen, &measured.functions));
    if let Some(detected) = measured.detected.get(&key) {
        let tried = faults::to_try(&calls, &recorded.own);
        let once = (tried.iter().filter(|t| t.once))
            .map(|t| t.fault.function.as_str())
            .collect();
        out.faults = faults::goals(detected, &once, lines, &measured.functions);
    }
    // The fewer calls its body makes, the smaller it is to read.
    out.size = recorded.own.len();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distil::test_call;
    use crate::testdata;
    use carve_storage::{CallId, Outcome, Value};
    use faults::FaultValue;

    fn trace(calls: Vec<Call>) -> Trace {
        Trace {
            run: testdata::run(),
            functions: vec![
                testdata::function(1, "lib::width"),
                testdata::function(2, "lib::lookup"),
                testdata::function(3, "explored::explored_001_width"),
            ],
            calls,
            objects: Vec::new(),
            file_reads: Vec::new(),
        }
    }

    fn call(id: u64, parent: Option<u64>, function: u32, ret: Value) -> Call {
        let mut c = test_call(Outcome::Returned, Some(ret));
        c.id = CallId(id);
        c.parent = parent.map(CallId);
        c.function = FunctionId(function);
        c
    }

    fn int(value: i128) -> Value {
        Value::Int {
            ty: "i32".to_string(),
            value,
        }
    }

    /// `width` (the test's own call, made by the test's function, recorded too) answering
    /// `own`, having called `lookup`, which answered `inside`.
    fn test(name: &str, chosen: bool, own: i128, inside: i128) -> RecordedTest {
        RecordedTest {
            target: "explored".to_string(),
            name: name.to_string(),
            chosen,
            trace: Some(trace(vec![
                call(1, None, 3, Value::Unit),
                call(2, Some(1), 1, int(own)),
                call(3, Some(2), 2, int(inside)),
            ])),
            explored: ExploreReasons::default(),
        }
    }

    #[test]
    fn explores_reasons_count_where_the_recording_cannot_tell() {
        let reasons = ExploreReasons {
            compares: vec![
                ("/lib.rs".to_string(), 3, "equal".to_string()),
                ("/lib.rs".to_string(), 4, "above".to_string()),
                ("/lib.rs".to_string(), 9, "below".to_string()),
            ],
            outcomes: vec![
                ("lib::width".to_string(), "+".to_string()),
                ("lib::as_gb".to_string(), "+".to_string()),
            ],
        };
        let seen = BTreeSet::from(["lib::width"]);
        let functions = BTreeMap::from([
            (
                ("/lib.rs".to_string(), 4),
                BTreeSet::from(["lib::width".to_string()]),
            ),
            (
                ("/lib.rs".to_string(), 9),
                BTreeSet::from(["lib::as_gb".to_string()]),
            ),
        ]);
        let goals: Vec<String> = reasons
            .goals(&seen, &functions)
            .into_iter()
            .map(|(at, what)| format!("{at} {what}"))
            .collect();
        assert_eq!(
            goals,
            [
                "/lib.rs:3 compared at its boundary",
                "/lib.rs:9 compared below, unrecorded",
                "lib::as_gb outcome +, unrecorded",
            ]
        );
    }

    #[test]
    fn the_calls_inside_a_tests_own_calls_are_tried_with_faults() {
        let faults = recorded_faults(&[test("a", false, 2, 7)]);
        let forced: Vec<(String, FaultValue)> = faults[0]
            .iter()
            .map(|f| (f.function.clone(), f.value.clone()))
            .collect();
        assert_eq!(
            forced,
            vec![
                (
                    "lib::lookup".to_string(),
                    FaultValue::Int {
                        answered: 7,
                        forced: 8
                    }
                ),
                (
                    "lib::lookup".to_string(),
                    FaultValue::Int {
                        answered: 7,
                        forced: 6
                    }
                ),
            ]
        );
    }

    #[test]
    fn a_test_adding_nothing_beside_the_chosen_ones_is_dropped() {
        let tests = [
            test("carved", true, 2, 7),
            test("same", false, 2, 7),
            test("detects", false, 2, 7),
        ];
        let mut measured = Measured::default();
        for t in &tests {
            let key = (t.target.clone(), t.name.clone());
            let lines = BTreeSet::from([("/lib.rs".to_string(), 3)]);
            measured.lines.insert(key, lines);
        }
        let fault = recorded_faults(&tests)[2][0].clone();
        measured.detected.insert(
            ("explored".to_string(), "detects".to_string()),
            BTreeSet::from([fault]),
        );
        let mut api = CrateApi::default();
        api.files.insert("/lib.rs".into());
        let distilled = select_recorded(&api, &tests, &measured);
        assert_eq!(distilled.kept, vec![0, 2]);
        assert_eq!((distilled.weighed_tests, distilled.kept_tests), (2, 1));
        assert_eq!((distilled.all_faults, distilled.kept_faults), (1, 1));
    }
}
