//! Which recorded calls become which tests: a pure function from a trace and the crate's API to
//! plain data, ready to render.
//!
//! Each call is sorted into one of: carved (a test, or a duplicate of one), skipped (its function
//! is callable but the call cannot be replayed: `undecoded`, `did not return`, `unsupported
//! type`, `receiver not rebuilt`, `closure argument`, `trait not mockable`, `mock not replayable`, `needs mockall`),
//! private (its function is not reachable from outside the crate), or not supported yet
//! (closures, binary-only or other crates' functions...). In: the trace (grouped) and the
//! crate's API. Out: a [`Plan`] (`model.rs`). Per call, its fate (`fate.rs`) and, for a test, its
//! body (`body.rs`: arrange → act → assert); then drafts (`drafts.rs`, `table.rs`) and files
//! (`files.rs`).

pub(crate) mod body;
pub(crate) mod drafts;
pub(crate) mod fate;
pub(crate) mod files;
pub(crate) mod grouped;
pub(crate) mod model;
pub(crate) mod table;
pub(crate) mod through;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use carve_storage::{Call, CallId, FunctionId, Trace};

use crate::act::rules::resolve;
use crate::act::target::Target;
use crate::arrange::context::Ctx;
pub use crate::body::Assertion;
use crate::features::recorded_features;
use crate::plan::drafts::{Draft, Drafts};
pub use crate::plan::model::{
    FilePlan, OverMax, Plan, PlanOptions, SkippedCall, Summary, TestPlan,
};
use crate::read::crate_api::CrateApi;
pub use crate::reasons::{
    DID_NOT_RETURN, MOCK_NAME_CLASH, NEEDS_MOCKALL, OVER_MAX_PER_FUNCTION, UNDECODED,
    UNSUPPORTED_TYPE,
};

/// The `mockall` version generated tests are written for.
pub const MOCKALL_VERSION: &str = "0.13";

pub fn plan(trace: &Trace, api: &CrateApi, options: &PlanOptions) -> Plan {
    plan_grouped(
        trace,
        api,
        options,
        &BTreeMap::new(),
        &BTreeMap::new(),
        &[],
        &|_, _| true,
    )
}

/// [`plan`] on a trace grouping left calls out of: `equivalent` (per kept call, the equivalent
/// calls dropped) and `over_max` (per function, the calls dropped over its cap) tell what an
/// object's history held beyond the calls kept. `rows` are calls grouping kept aside, past
/// their function's cap, only to be rows of table tests (see [`crate::plan::table`]): planned after
/// the trace's calls, each joins a test with the same body or a table, or counts over the cap.
/// `tick(n, total)` is told every few hundred calls how many were planned; when it answers
/// false, planning stops there (the caller was interrupted and throws the plan away).
pub fn plan_grouped(
    trace: &Trace,
    api: &CrateApi,
    options: &PlanOptions,
    equivalent: &BTreeMap<CallId, Vec<CallId>>,
    over_max: &BTreeMap<FunctionId, usize>,
    rows: &[Call],
    tick: &dyn Fn(usize, usize) -> bool,
) -> Plan {
    let mut summary = Summary::default();
    let targets: HashMap<_, Target> = trace
        .functions
        .iter()
        .map(|f| (f.id, resolve(api, f)))
        .collect();
    let mut children: HashMap<Option<CallId>, Vec<usize>> = HashMap::new();
    for (i, call) in trace.calls.iter().enumerate() {
        children.entry(call.parent).or_default().push(i);
    }
    // Calls kept aside as rows are not in the trace either: an object's history lacks them.
    let mut hidden = over_max.clone();
    for row in rows {
        *hidden.entry(row.function).or_default() += 1;
    }
    let cx = Ctx::new(
        trace,
        api,
        &targets,
        &children,
        equivalent,
        &hidden,
        (
            crate::arrange::rebuild::rebuild,
            crate::arrange::rebuild::stored_fields::written_avoiding,
        ),
    );
    let mut drafts = Drafts::default();
    let mut unsupported_by_fn: BTreeMap<(&str, &str, bool), usize> = BTreeMap::new();
    let total = trace.calls.len() + rows.len();
    for (n, call) in trace.calls.iter().chain(rows).enumerate() {
        if n % 256 == 0 && !tick(n, total) {
            break;
        }
        if let Some(only) = &options.only_calls {
            if !only.contains(&call.id.0) {
                continue;
            }
        }
        let Some(callable) =
            fate::callable(trace, &targets, call, &mut summary, &mut unsupported_by_fn)
        else {
            continue;
        };
        summary.in_scope += 1;
        summary.public_api += 1;
        let Some((body, name, ran)) = fate::carve_call(&cx, options, call, callable, &mut summary)
        else {
            continue;
        };
        summary.calls_carved += 1;
        let row_only = n >= trace.calls.len();
        let draft = Draft {
            body,
            name,
            calls: vec![call.id.0],
            replayed: ran.replayed,
            arranged: ran.arranged,
            row_only,
            row_calls: usize::from(row_only),
        };
        drafts.add(&callable.module, draft, options.keep_equivalent);
    }
    let files = files::plan_files(drafts.modules, api, options, &mut summary);
    summary.unsupported_functions = fate::unsupported_functions(unsupported_by_fn);
    let program = Path::new(&trace.run.info.program).file_name().map_or_else(
        || trace.run.info.program.clone(),
        |n| n.to_string_lossy().into_owned(),
    );
    Plan {
        crate_name: api.crate_name.clone(),
        program,
        run_id: trace.run.id.0,
        features: recorded_features(&trace.run.info),
        files,
        summary,
        public_paths: public_paths(api),
        stand_ins: api.stand_ins.clone(),
    }
}

/// The spellings `pub use` gives items of private modules (see [`Plan::public_paths`]),
/// longest first so that a type's path is rewritten before its module's.
fn public_paths(api: &CrateApi) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = api
        .reexports
        .iter()
        .filter_map(|r| {
            if r.glob {
                // Where any item of the glob's module ends up: ask for a stand-in item `_`.
                let to = api.public_path(&format!("{}::_", r.from))?;
                let to_module = to.strip_suffix("::_")?;
                Some((format!("{}::", r.from), format!("{to_module}::")))
            } else {
                Some((r.from.clone(), api.public_path(&r.from)?))
            }
        })
        .filter(|(from, to)| from != to)
        .collect();
    out.extend(api.stand_ins.spellings());
    out.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.cmp(b)));
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::features_cfg;
    use crate::read::crate_api::CrateApi;
    use carve_storage::{
        Arg, Call, CallId, FunctionId, FunctionInfo, Language, Outcome, ParamInfo, Run, RunId,
        RunInfo, Value,
    };
    use std::collections::BTreeSet;

    fn api() -> (tempfile::TempDir, CrateApi) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"calc\"\n").unwrap();
        std::fs::write(
            dir.join("src/lib.rs"),
            r#"
            pub mod ops {
                pub fn add(a: i32, b: i32) -> i32 { a + b }
                pub fn is_even(n: u64) -> bool { n % 2 == 0 }
                pub fn ratio(a: f64, b: f64) -> f64 { a / b }
                pub fn shout(s: &str) -> String { s.to_uppercase() }
                pub fn log(_s: String) {}
                pub(crate) fn hidden() -> u8 { 1 }
                pub struct Acc(i32);
                impl Acc {
                    pub fn zero() -> i32 { 0 }
                    pub fn get(&self) -> i32 { self.0 }
                }
            }
            mod private { pub fn p() -> u8 { 1 } }
            pub trait T { fn t(&self) -> u8; }
            "#,
        )
        .unwrap();
        let api = CrateApi::load(dir).unwrap();
        (tmp, api)
    }

    fn function(id: u32, path: &str) -> FunctionInfo {
        FunctionInfo {
            id: FunctionId(id),
            path: path.to_string(),
            name: path.rsplit("::").next().unwrap_or(path).to_string(),
            linkage_name: None,
            language: Language::Rust,
            decl_file: None,
            decl_line: None,
            low_pc: 0,
            params: Vec::<ParamInfo>::new(),
            return_type: None,
        }
    }

    fn i32v(v: i128) -> Value {
        Value::Int {
            ty: "i32".to_string(),
            value: v,
        }
    }

    fn call(
        id: u64,
        function: u32,
        args: Vec<Value>,
        outcome: Outcome,
        ret: Option<Value>,
    ) -> Call {
        Call {
            id: CallId(id),
            parent: None,
            function: FunctionId(function),
            thread: 1,
            depth: 0,
            args: args
                .into_iter()
                .enumerate()
                .map(|(i, value)| Arg {
                    name: format!("a{i}"),
                    value,
                })
                .collect(),
            outcome,
            ret,
            after: Vec::new(),
            objects: Vec::new(),
            touches: Vec::new(),
        }
    }

    fn trace(functions: Vec<FunctionInfo>, calls: Vec<Call>) -> Trace {
        Trace {
            run: Run {
                id: RunId(7),
                info: RunInfo {
                    program: "/somewhere/target/debug/calc".to_string(),
                    args: vec![],
                    cwd: "/".to_string(),
                    pid: 1,
                    started_at_ms: 0,
                    filters: vec![],
                    excludes: vec![],
                    crates: vec![],
                    carve_version: "0".to_string(),
                    distinct_calls: false,
                    features: Vec::new(),
                },
                end: None,
            },
            functions,
            calls,
            objects: Vec::new(),
            file_reads: Vec::new(),
        }
    }

    #[test]
    fn identical_calls_share_one_test_and_are_all_counted() {
        let (_tmp, api) = api();
        let t = trace(
            vec![function(1, "calc::ops::add")],
            vec![
                call(
                    1,
                    1,
                    vec![i32v(2), i32v(3)],
                    Outcome::Returned,
                    Some(i32v(5)),
                ),
                call(
                    2,
                    1,
                    vec![i32v(2), i32v(3)],
                    Outcome::Returned,
                    Some(i32v(5)),
                ),
                call(
                    3,
                    1,
                    vec![i32v(-1), i32v(1)],
                    Outcome::Returned,
                    Some(i32v(0)),
                ),
            ],
        );
        let plan = plan(&t, &api, &PlanOptions::default());
        assert_eq!(plan.program, "calc");
        assert_eq!(plan.files.len(), 1);
        let file = &plan.files[0];
        assert_eq!(file.file_name, "carved_calc_ops.rs");
        assert_eq!(file.module_path, "calc::ops");
        let names: Vec<_> = file.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["add_returns_5", "add_returns_0"]);
        assert_eq!(file.tests[0].body.args, ["2i32", "3i32"]);
        assert_eq!(file.tests[0].calls.len(), 2);
        assert_eq!(file.tests[0].body.function_path, "calc::ops::add");
        assert_eq!(
            file.tests[0].body.assertion,
            Assertion::Eq {
                expected: "5i32".to_string()
            }
        );
        assert_eq!(plan.summary.in_scope, 3);
        assert_eq!(plan.summary.calls_carved, 3);
        assert_eq!(plan.summary.tests_written, 2);
    }

    #[test]
    fn the_recorded_features_are_named_in_the_plan_and_one_cfg_gates_the_files() {
        let mut t = trace(Vec::new(), Vec::new());
        // A name cargo would not accept never reaches a file or a command line.
        t.run.info.features = vec!["alloc".into(), "std".into(), "x\"]#![".into()];
        assert_eq!(recorded_features(&t.run.info), ["alloc", "std"]);
        assert_eq!(features_cfg(&[]), None);
        assert_eq!(
            features_cfg(&["alloc".into()]).as_deref(),
            Some("#![cfg(feature = \"alloc\")]")
        );
        assert_eq!(
            features_cfg(&recorded_features(&t.run.info)).as_deref(),
            Some("#![cfg(all(feature = \"alloc\", feature = \"std\"))]")
        );
    }

    fn two_equal_adds_and_another() -> Trace {
        let add = |id, a, b, sum| {
            call(
                id,
                1,
                vec![i32v(a), i32v(b)],
                Outcome::Returned,
                Some(i32v(sum)),
            )
        };
        trace(
            vec![function(1, "calc::ops::add")],
            vec![add(1, 2, 3, 5), add(2, 2, 3, 5), add(3, -1, 1, 0)],
        )
    }

    #[test]
    fn with_keep_equivalent_every_call_gets_its_own_test() {
        let (_tmp, api) = api();
        let options = PlanOptions {
            keep_equivalent: true,
            ..PlanOptions::default()
        };
        let plan = plan(&two_equal_adds_and_another(), &api, &options);
        let names: Vec<_> = plan.files[0]
            .tests
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(
            names,
            ["add_2_3_returns_5", "add_2_3_returns_5_2", "add_returns_0"]
        );
        assert_eq!(plan.summary.calls_carved, 3);
    }

    #[test]
    fn only_the_chosen_calls_are_planned_into_files_with_the_chosen_prefix() {
        let (_tmp, api) = api();
        let options = PlanOptions {
            only_calls: Some(BTreeSet::from([3])),
            file_prefix: Some("carved_assess_".into()),
            ..PlanOptions::default()
        };
        let plan = plan(&two_equal_adds_and_another(), &api, &options);
        assert_eq!(plan.files.len(), 1);
        assert_eq!(plan.files[0].file_name, "carved_assess_calc_ops.rs");
        let tests: Vec<_> = plan.files[0]
            .tests
            .iter()
            .map(|t| (t.name.as_str(), t.calls.clone()))
            .collect();
        assert_eq!(tests, [("add_returns_0", vec![3])]);
    }

    #[test]
    fn a_cap_per_function_keeps_the_tests_standing_for_most_calls_and_lists_the_rest() {
        let (_tmp, api) = api();
        let options = PlanOptions {
            max_per_function: Some(1),
            ..PlanOptions::default()
        };
        let plan = plan(&two_equal_adds_and_another(), &api, &options);
        let tests = &plan.files[0].tests;
        assert_eq!(tests.len(), 1);
        assert_eq!(tests[0].calls, [1, 2]);
        assert_eq!(plan.summary.tests_written, 1);
        assert_eq!(plan.summary.calls_carved, 2);
        assert_eq!(plan.summary.skipped.get(OVER_MAX_PER_FUNCTION), Some(&1));
        assert_eq!(plan.summary.skipped_calls[0].call, 3);
    }

    #[test]
    fn calls_past_the_cap_of_one_shape_become_the_rows_of_one_table_test() {
        let (_tmp, api) = api();
        let add = |id: u64, a: i128| {
            call(
                id,
                1,
                vec![i32v(a), i32v(1)],
                Outcome::Returned,
                Some(i32v(a + 1)),
            )
        };
        let calls: Vec<Call> = (1..=6).map(|n| add(n, n as i128 * 10)).collect();
        // Planned from the trace and from grouping's rows alike.
        let whole = trace(vec![function(1, "calc::ops::add")], calls.clone());
        let (first, rows) = calls.split_at(2);
        let grouped = trace(vec![function(1, "calc::ops::add")], first.to_vec());
        let options = PlanOptions {
            max_per_function: Some(2),
            ..PlanOptions::default()
        };
        for plan in [
            plan(&whole, &api, &options),
            plan_grouped(
                &grouped,
                &api,
                &options,
                &BTreeMap::new(),
                &BTreeMap::new(),
                rows,
                &|_, _| true,
            ),
        ] {
            let tests = &plan.files[0].tests;
            let names: Vec<&str> = tests.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(
                names,
                ["add_returns_11", "add_returns_21", "add_recorded_cases"]
            );
            let table = tests[2].table.as_ref().unwrap();
            assert_eq!(table.columns, ["i32", "i32", "i32"]);
            let values: Vec<&[String]> = table.rows.iter().map(|r| r.values.as_slice()).collect();
            assert_eq!(values[0], ["30i32", "1i32", "31i32"]);
            assert_eq!(table.rows.len(), 4);
            assert_eq!(tests[2].calls, [3, 4, 5, 6]);
            assert_eq!(tests[2].body.args, ["case.0", "case.1"]);
            // Every row is a carved call; nothing is over the cap.
            assert_eq!(plan.summary.calls_carved, 6);
            assert_eq!(plan.summary.tests_written, 3);
            assert_eq!(plan.summary.skipped.get(OVER_MAX_PER_FUNCTION), None);
        }
    }

    #[test]
    fn rows_past_ten_times_the_cap_stay_over_it() {
        let (_tmp, api) = api();
        let calls: Vec<Call> = (1..=15)
            .map(|n| {
                call(
                    n,
                    1,
                    vec![i32v(n as i128), i32v(0)],
                    Outcome::Returned,
                    Some(i32v(n as i128)),
                )
            })
            .collect();
        let options = PlanOptions {
            max_per_function: Some(1),
            ..PlanOptions::default()
        };
        let plan = plan(
            &trace(vec![function(1, "calc::ops::add")], calls),
            &api,
            &options,
        );
        let tests = &plan.files[0].tests;
        assert_eq!(tests.len(), 2);
        assert_eq!(tests[1].table.as_ref().unwrap().rows.len(), 10);
        assert_eq!(plan.summary.calls_carved, 11);
        assert_eq!(plan.summary.skipped.get(OVER_MAX_PER_FUNCTION), Some(&4));
    }

    #[test]
    fn each_call_is_sorted_by_its_fate() {
        let (_tmp, api) = api();
        let undecoded = Value::Struct {
            ty: "calc::ops::Acc".to_string(),
            fields: vec![],
        };
        let t = trace(
            vec![
                function(1, "calc::ops::add"),
                function(2, "calc::ops::hidden"),
                function(3, "calc::private::p"),
                function(4, "<calc::ops::Acc as calc::T>::t"),
                function(5, "calc::ops::Acc::get"),
                function(6, "calc::ops::add::{{closure}}"),
                function(7, "std::rt::lang_start"),
                function(8, "calc::ops::is_even"),
            ],
            vec![
                call(
                    1,
                    1,
                    vec![i32v(1), undecoded],
                    Outcome::Returned,
                    Some(i32v(1)),
                ),
                call(
                    2,
                    1,
                    vec![i32v(1), i32v(1)],
                    Outcome::Panicked { message: None },
                    None,
                ),
                call(3, 1, vec![i32v(1), i32v(1)], Outcome::Unfinished, None),
                call(
                    4,
                    2,
                    vec![],
                    Outcome::Returned,
                    Some(Value::Uint {
                        ty: "u8".into(),
                        value: 1,
                    }),
                ),
                call(
                    5,
                    3,
                    vec![],
                    Outcome::Returned,
                    Some(Value::Uint {
                        ty: "u8".into(),
                        value: 1,
                    }),
                ),
                call(6, 4, vec![], Outcome::Returned, None),
                call(7, 5, vec![], Outcome::Returned, None),
                call(8, 6, vec![], Outcome::Returned, None),
                call(9, 7, vec![], Outcome::Returned, None),
                call(10, 99, vec![], Outcome::Returned, None),
                call(
                    11,
                    8,
                    vec![i32v(1)],
                    Outcome::Returned,
                    Some(Value::Bool { value: false }),
                ),
                call(
                    12,
                    8,
                    vec![i32v(-1)],
                    Outcome::Returned,
                    Some(Value::Bool { value: false }),
                ),
            ],
        );
        let plan = plan(&t, &api, &PlanOptions::default());
        let s = &plan.summary;
        // Methods and trait methods of public types are in scope; these were recorded without
        // their `self`, so they cannot be replayed.
        assert_eq!(s.in_scope, 7);
        assert_eq!(s.skipped.get(UNDECODED), Some(&3));
        // One call panicked (a #[should_panic] test), one never finished.
        assert_eq!(s.skipped.get(DID_NOT_RETURN), Some(&1));
        assert_eq!(s.skipped.get(UNSUPPORTED_TYPE), Some(&1));
        assert_eq!(s.private_calls, 2);
        assert_eq!(s.unsupported.get("closure"), Some(&1));
        assert_eq!(s.unsupported.get("other crate"), Some(&1));
        assert_eq!(s.unsupported.get("unknown function"), Some(&1));
        assert_eq!(s.tests_written, 2);
        let tests = &plan.files[0].tests;
        assert!(tests
            .iter()
            .any(|t| t.body.assertion == Assertion::Panics { expected: None }));
        let test = tests
            .iter()
            .find(|t| t.name == "is_even_returns_false")
            .unwrap();
        assert_eq!(test.body.args, ["1u64"]);
        assert_eq!(test.body.assertion, Assertion::False);
    }

    #[test]
    fn assertions_fit_the_return_type() {
        let (_tmp, api) = api();
        let f64v = |x: f64| Value::Float {
            ty: "f64".to_string(),
            bits: x.to_bits(),
        };
        let text = |s: &str| Value::Str {
            ty: "&str".to_string(),
            value: s.to_string(),
            truncated: false,
        };
        let t = trace(
            vec![
                function(1, "calc::ops::ratio"),
                function(2, "calc::ops::shout"),
                function(3, "calc::ops::log"),
                function(4, "calc::ops::Acc::zero"),
            ],
            vec![
                call(
                    1,
                    1,
                    vec![f64v(0.0), f64v(0.0)],
                    Outcome::Returned,
                    Some(f64v(f64::NAN)),
                ),
                call(
                    2,
                    1,
                    vec![f64v(5.0), f64v(2.0)],
                    Outcome::Returned,
                    Some(f64v(2.5)),
                ),
                call(
                    3,
                    2,
                    vec![text("a\"b")],
                    Outcome::Returned,
                    Some(text("A\"B")),
                ),
                call(4, 3, vec![text("x")], Outcome::Returned, None),
                call(5, 4, vec![], Outcome::Returned, Some(i32v(0))),
            ],
        );
        let plan = plan(&t, &api, &PlanOptions::default());
        let tests: Vec<_> = plan.files[0].tests.iter().collect();
        let by_name = |n: &str| {
            tests
                .iter()
                .find(|t| t.name == n)
                .unwrap_or_else(|| panic!("{n} in {tests:#?}"))
        };
        assert_eq!(by_name("ratio_returns_nan").body.assertion, Assertion::Nan);
        assert_eq!(by_name("ratio_returns_nan").body.args, ["0.0f64", "0.0f64"]);
        assert_eq!(
            by_name("ratio_returns_2_5").body.assertion,
            Assertion::Eq {
                expected: "2.5f64".to_string()
            }
        );
        let shout = by_name("shout_returns_a_b");
        assert_eq!(shout.body.args, [r#""a\"b""#]);
        assert_eq!(
            shout.body.assertion,
            Assertion::Eq {
                expected: r#""A\"B""#.to_string()
            }
        );
        assert_eq!(by_name("log_with_x").body.args, [r#"String::from("x")"#]);
        assert_eq!(by_name("log_with_x").body.assertion, Assertion::Unit);
        assert_eq!(
            by_name("acc_zero_returns_0").body.function_path,
            "calc::ops::Acc::zero"
        );
        // Sorted by function path, then first call.
        let order: Vec<_> = tests
            .iter()
            .map(|t| t.body.function_path.as_str())
            .collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted);
    }
}
