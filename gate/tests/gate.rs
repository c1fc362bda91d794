//! `compare` on hand-built traces: every kind of divergence, alignment that survives inserted
//! calls, unstable values learned from several baseline runs, `--ignore`, and odd traces.

use carve_gate::{compare, human, junit, DivergenceKind, GateError, Options, Report};
use carve_storage::{
    Arg, Call, CallId, FunctionId, FunctionInfo, Language, Outcome, ProcessExit, Run, RunEnd,
    RunId, RunInfo, Trace, Value,
};

/// A call to build: function path, arguments, how it ended, effects, children, thread.
#[derive(Clone)]
struct N {
    path: &'static str,
    args: Vec<(&'static str, Value)>,
    ret: Option<Value>,
    outcome: Outcome,
    after: Vec<(&'static str, Value)>,
    kids: Vec<N>,
    thread: i32,
}

fn n(path: &'static str, args: Vec<(&'static str, Value)>, ret: Option<Value>, kids: Vec<N>) -> N {
    N {
        path,
        args,
        ret,
        outcome: Outcome::Returned,
        after: Vec::new(),
        kids,
        thread: 1,
    }
}

fn leaf(path: &'static str, arg: i128, ret: i128) -> N {
    n(path, vec![("x", int(arg))], Some(int(ret)), vec![])
}

fn int(v: i128) -> Value {
    Value::Int {
        ty: "i32".into(),
        value: v,
    }
}

fn text(s: &str) -> Value {
    Value::Str {
        ty: "&str".into(),
        value: s.into(),
        truncated: false,
    }
}

/// A trace of run `id` with these roots; calls numbered in start order.
fn trace(id: i64, roots: Vec<N>) -> Trace {
    let mut t = Trace {
        run: Run {
            id: RunId(id),
            info: RunInfo {
                program: "/bin/app".into(),
                args: vec![],
                cwd: "/".into(),
                pid: 1,
                started_at_ms: 0,
                filters: vec![],
                excludes: vec![],
                crates: vec![],
                carve_version: "0".into(),
                distinct_calls: false,
                features: Vec::new(),
            },
            end: Some(RunEnd {
                exit: ProcessExit::Exited { code: 0 },
                ended_at_ms: 0,
            }),
        },
        functions: vec![],
        calls: vec![],
        objects: vec![],
        file_reads: Vec::new(),
    };
    for root in roots {
        add(&mut t, &root, None, 0);
    }
    t
}

fn add(t: &mut Trace, node: &N, parent: Option<CallId>, depth: u32) {
    let function = match t.functions.iter().find(|f| f.path == node.path) {
        Some(f) => f.id,
        None => {
            let id = FunctionId(t.functions.len() as u32 + 1);
            t.functions.push(FunctionInfo {
                id,
                path: node.path.into(),
                name: node.path.rsplit("::").next().unwrap().into(),
                linkage_name: None,
                language: Language::Rust,
                decl_file: None,
                decl_line: None,
                low_pc: 0,
                params: vec![],
                return_type: None,
            });
            id
        }
    };
    let id = CallId(t.calls.len() as u64 + 1);
    let args = |list: &[(&str, Value)]| {
        list.iter()
            .map(|(name, value)| Arg {
                name: name.to_string(),
                value: value.clone(),
            })
            .collect()
    };
    t.calls.push(Call {
        id,
        parent,
        function,
        thread: node.thread,
        depth,
        args: args(&node.args),
        outcome: node.outcome.clone(),
        ret: node.ret.clone(),
        after: args(&node.after),
        objects: vec![],
        touches: Vec::new(),
    });
    for kid in &node.kids {
        add(t, kid, Some(id), depth + 1);
    }
}

/// `main { evaluate(src) { apply(1)=2, apply(3)=4, apply(5)=6 } = 12, format(12) }`, with the
/// second apply's result and the sum given.
fn program(second: i128, sum: i128) -> Vec<N> {
    vec![n(
        "app::main",
        vec![],
        None,
        vec![
            n(
                "app::evaluate",
                vec![("src", text("1+2"))],
                Some(int(sum)),
                vec![
                    leaf("app::eval::apply", 1, 2),
                    leaf("app::eval::apply", 3, second),
                    leaf("app::eval::apply", 5, 6),
                ],
            ),
            leaf("app::format", sum, 0),
        ],
    )]
}

fn gate(baseline: Vec<Trace>, new: Trace) -> Report {
    compare(&baseline, &new, &Options::default()).expect("compares")
}

fn kinds(report: &Report) -> Vec<DivergenceKind> {
    report
        .groups
        .iter()
        .flat_map(|g| g.divergences())
        .map(|d| d.kind)
        .collect()
}

#[test]
fn identical_traces_have_no_divergence() {
    let report = gate(vec![trace(1, program(4, 12))], trace(2, program(4, 12)));
    assert_eq!(report.summary.divergences, 0, "{report:#?}");
    assert_eq!(report.summary.calls_compared, 6);
    let functions: Vec<&str> = report.groups.iter().map(|g| g.function.as_str()).collect();
    assert_eq!(functions, ["app::main", "app::evaluate", "app::format"]);
    assert!(human(&report, false).contains("no divergence in 3 functions"));
}

#[test]
fn a_return_value_changed_deep_down_is_the_first_divergence_of_its_top_level_call() {
    let report = gate(vec![trace(1, program(4, 12))], trace(2, program(5, 13)));
    let evaluate = &report.groups[1];
    assert_eq!(evaluate.function, "app::evaluate");
    let first = evaluate.first.as_ref().expect("evaluate diverged");
    assert_eq!(first.kind, DivergenceKind::ReturnChanged);
    assert_eq!(first.call_path, "main > evaluate > apply#2");
    assert_eq!(first.function, "app::eval::apply");
    assert_eq!(first.baseline.as_deref(), Some("4"));
    assert_eq!(first.new.as_deref(), Some("5"));
    // Then evaluate's own result, in execution order.
    assert_eq!(evaluate.others[0].call_path, "main > evaluate");
    assert_eq!(evaluate.others[0].new.as_deref(), Some("13"));
    // format received the new sum: an argument reaching a callee changed.
    let format = report.groups[2].first.as_ref().unwrap();
    assert_eq!(format.kind, DivergenceKind::ArgumentChanged);
    assert_eq!(format.field.as_deref(), Some("argument x"));
    let text = human(&report, false);
    assert!(
        text.contains("main > evaluate > apply#2: return value changed"),
        "{text}"
    );
    assert!(
        text.contains("baseline: 4") && text.contains("new:      5"),
        "{text}"
    );
}

#[test]
fn a_call_inserted_in_the_middle_of_its_siblings_does_not_shift_the_rest() {
    let base = program(4, 12);
    let mut new = program(4, 12);
    new[0].kids[0]
        .kids
        .insert(1, leaf("app::eval::check", 9, 9));
    let report = gate(vec![trace(1, base)], trace(2, new));
    assert_eq!(
        kinds(&report),
        [DivergenceKind::CallAdded, DivergenceKind::CallCountChanged],
        "{report:#?}"
    );
    let added = report.groups[1].first.as_ref().unwrap();
    assert_eq!(added.call_path, "main > evaluate > check");
    assert_eq!(added.new.as_deref(), Some("check(9) = 9"));
    let count = &report.groups[1].others[0];
    assert_eq!(count.function, "app::eval::check");
    assert_eq!(count.baseline.as_deref(), Some("0 calls"));
    assert_eq!(count.new.as_deref(), Some("1 call"));
}

#[test]
fn a_missing_call_is_reported_with_what_the_baseline_did() {
    let base = program(4, 12);
    let mut new = program(4, 12);
    new[0].kids[0].kids.remove(0);
    let report = gate(vec![trace(1, base)], trace(2, new));
    assert_eq!(
        kinds(&report),
        [
            DivergenceKind::CallMissing,
            DivergenceKind::CallCountChanged
        ]
    );
    let missing = report.groups[1].first.as_ref().unwrap();
    assert_eq!(missing.call_path, "main > evaluate > apply");
    assert_eq!(missing.baseline.as_deref(), Some("apply(1) = 2"));
    let count = &report.groups[1].others[0];
    assert_eq!(
        (count.baseline.as_deref(), count.new.as_deref()),
        (Some("3 calls"), Some("2 calls"))
    );
}

#[test]
fn a_panic_instead_of_a_return_is_an_outcome_change() {
    let base = program(4, 12);
    let mut new = program(4, 12);
    let apply = &mut new[0].kids[0].kids[2];
    apply.outcome = Outcome::Panicked {
        message: Some("attempt to add with overflow".into()),
    };
    apply.ret = None;
    let report = gate(vec![trace(1, base)], trace(2, new));
    let first = report.groups[1].first.as_ref().unwrap();
    assert_eq!(first.kind, DivergenceKind::OutcomeChanged);
    assert_eq!(first.call_path, "main > evaluate > apply#3");
    assert_eq!(first.baseline.as_deref(), Some("returned 6"));
    assert_eq!(
        first.new.as_deref(),
        Some("panicked: attempt to add with overflow")
    );
}

#[test]
fn a_changed_field_effect_names_the_parameter_and_the_field() {
    let account = |balance| Value::Struct {
        ty: "bank::Account".into(),
        fields: vec![carve_storage::Field {
            name: "balance".into(),
            value: int(balance),
        }],
    };
    let deposit = |after| {
        let mut call = n(
            "bank::Account::deposit",
            vec![("self", account(10)), ("amt", int(5))],
            None,
            vec![],
        );
        call.after = vec![("self", account(after))];
        call
    };
    let report = gate(
        vec![trace(1, vec![deposit(15)])],
        trace(2, vec![deposit(16)]),
    );
    let first = report.groups[0].first.as_ref().unwrap();
    assert_eq!(first.kind, DivergenceKind::EffectChanged);
    assert_eq!(first.field.as_deref(), Some("self after the call"));
    assert_eq!(first.at, ".balance");
    assert_eq!(
        (first.baseline.as_deref(), first.new.as_deref()),
        (Some("15"), Some("16"))
    );
}

#[test]
fn a_function_called_more_often_is_a_count_change_of_its_top_level_call() {
    let ask = |answers: usize| {
        vec![n(
            "abc::main",
            vec![],
            None,
            vec![n(
                "abc::C::calls_b_with_a",
                vec![],
                Some(int(43)),
                vec![n(
                    "abc::B::ask",
                    vec![],
                    Some(int(43)),
                    (0..answers)
                        .map(|_| leaf("abc::A::answer", 0, 42))
                        .collect(),
                )],
            )],
        )]
    };
    let report = gate(vec![trace(1, ask(1))], trace(2, ask(2)));
    let group = &report.groups[1];
    assert_eq!(group.function, "abc::C::calls_b_with_a");
    assert_eq!(
        group.first.as_ref().unwrap().call_path,
        "main > calls_b_with_a > ask > answer#2"
    );
    let count = group.others.last().unwrap();
    assert_eq!(count.kind, DivergenceKind::CallCountChanged);
    assert_eq!(count.function, "abc::A::answer");
}

#[test]
fn values_that_differ_between_baseline_runs_are_unstable_and_ignored() {
    // `roll` returns a random number; `face` of it too. `check` is stable.
    let run = |roll: i128, check: i128| {
        vec![n(
            "dice::main",
            vec![],
            None,
            vec![
                leaf("dice::roll", 0, roll),
                leaf("dice::face", roll, roll % 6),
                leaf("dice::check", 1, check),
            ],
        )]
    };
    let baseline = vec![
        trace(1, run(7, 1)),
        trace(2, run(9, 1)),
        trace(3, run(8, 1)),
    ];
    let report = gate(baseline.clone(), trace(4, run(11, 1)));
    assert_eq!(report.summary.divergences, 0, "{report:#?}");
    assert!(report.summary.ignored_unstable >= 3);
    assert_eq!(report.baseline_runs, [1, 2, 3]);
    // A stable value that changes is still reported.
    let report = gate(baseline, trace(4, run(11, 2)));
    assert_eq!(kinds(&report), [DivergenceKind::ReturnChanged]);
    assert_eq!(report.groups[3].function, "dice::check");
}

#[test]
fn a_result_computed_from_unstable_values_is_not_reported_even_if_the_baseline_runs_agreed() {
    // `roll_sum` adds two random rolls: 3 + 4 and 5 + 2 both make 7 in the baseline runs, so
    // its result looks stable; 6 + 6 now makes 12. The rolls differed, so the sum may too.
    let run = |a: i128, b: i128, check: i128| {
        vec![n(
            "dice::main",
            vec![],
            None,
            vec![
                n(
                    "dice::roll_sum",
                    vec![("n", int(2))],
                    Some(int(a + b)),
                    vec![leaf("dice::roll", 0, a), leaf("dice::roll", 0, b)],
                ),
                leaf("dice::check", 1, check),
            ],
        )]
    };
    let baseline = vec![trace(1, run(3, 4, 1)), trace(2, run(5, 2, 1))];
    let report = gate(baseline.clone(), trace(3, run(6, 6, 1)));
    assert_eq!(report.summary.divergences, 0, "{report:#?}");
    // What did not read the random values is still checked.
    let report = gate(baseline, trace(3, run(6, 6, 2)));
    assert_eq!(kinds(&report), [DivergenceKind::ReturnChanged]);
}

/// `main { map::entry(self: Map { state, len: 2 }, key) { probe(slot) = true } = len, check(1) }`:
/// the receiver's `state` picks the slot `probe` looks at, as a hash does in `IndexMap::entry`.
fn probing(state: Value, slot: i128, len: i128, probes: usize, check: i128) -> Vec<N> {
    let map = Value::Struct {
        ty: "app::Map".into(),
        fields: vec![
            carve_storage::Field {
                name: "state".into(),
                value: state,
            },
            carve_storage::Field {
                name: "len".into(),
                value: int(2),
            },
        ],
    };
    let probe = n(
        "app::probe",
        vec![("slot", int(slot))],
        Some(Value::Bool { value: true }),
        vec![],
    );
    vec![n(
        "app::main",
        vec![],
        None,
        vec![
            n(
                "app::Map::entry",
                vec![("self", map), ("key", text("k"))],
                Some(int(len)),
                vec![probe; probes],
            ),
            leaf("app::check", 1, check),
        ],
    )]
}

fn seed(k0: i128) -> Value {
    Value::Struct {
        ty: "std::hash::random::RandomState".into(),
        fields: vec![carve_storage::Field {
            name: "k0".into(),
            value: int(k0),
        }],
    }
}

#[test]
fn values_under_a_call_whose_receiver_was_unstable_are_not_reported_even_if_the_baseline_runs_agreed(
) {
    // The receiver's `state` differed between the baseline runs (11, 12), which both happened
    // to probe slot 3; the new run probes slot 4. That slot follows the state.
    let baseline = vec![
        trace(1, probing(int(11), 3, 2, 1, 1)),
        trace(2, probing(int(12), 3, 2, 1, 1)),
    ];
    let report = gate(baseline.clone(), trace(3, probing(int(13), 4, 2, 1, 1)));
    assert_eq!(report.summary.divergences, 0, "{report:#?}");
    // How many probes ran follows the state too (a second one after a hash collision).
    let report = gate(baseline.clone(), trace(3, probing(int(13), 4, 2, 2, 1)));
    assert_eq!(report.summary.divergences, 0, "{report:#?}");
    // What did not run under the unstable state is still compared.
    let report = gate(baseline.clone(), trace(3, probing(int(13), 4, 2, 1, 2)));
    assert_eq!(kinds(&report), [DivergenceKind::ReturnChanged]);
    assert_eq!(report.groups[2].function, "app::check");
    // A state that is unstable but did not change this time holds nothing.
    let report = gate(baseline, trace(3, probing(int(12), 4, 2, 1, 1)));
    assert_eq!(kinds(&report), [DivergenceKind::ArgumentChanged]);
    assert_eq!(
        report.groups[1].first.as_ref().unwrap().call_path,
        "main > entry > probe"
    );
}

#[test]
fn a_hash_seed_that_changed_makes_nested_values_unstable_but_not_the_holders_own_result() {
    // One baseline run: nothing learned, the differing seed alone says where values may follow.
    let baseline = vec![trace(1, probing(seed(7), 3, 2, 1, 1))];
    let report = gate(baseline.clone(), trace(2, probing(seed(8), 4, 2, 1, 1)));
    assert_eq!(report.summary.divergences, 0, "{report:#?}");
    assert!(report.summary.ignored_unstable >= 1);
    // The holder's own result is compared: a map's answer does not depend on its seed.
    let report = gate(baseline.clone(), trace(2, probing(seed(8), 4, 3, 1, 1)));
    assert_eq!(
        kinds(&report),
        [DivergenceKind::ReturnChanged],
        "{report:#?}"
    );
    assert_eq!(
        report.groups[1].first.as_ref().unwrap().call_path,
        "main > entry"
    );
    // The same seed holds nothing unstable: the probe's slot is a divergence, a second probe
    // is an added call and a changed count.
    let report = gate(baseline.clone(), trace(2, probing(seed(7), 4, 2, 1, 1)));
    assert_eq!(kinds(&report), [DivergenceKind::ArgumentChanged]);
    let report = gate(baseline, trace(2, probing(seed(7), 3, 2, 2, 1)));
    assert_eq!(
        kinds(&report),
        [DivergenceKind::CallAdded, DivergenceKind::CallCountChanged]
    );
}

#[test]
fn a_single_baseline_run_reports_every_difference() {
    let run = |roll| vec![leaf("dice::roll", 0, roll)];
    let report = gate(vec![trace(1, run(7))], trace(2, run(8)));
    assert_eq!(report.summary.divergences, 1);
}

#[test]
fn ignore_globs_skip_matching_functions_by_path_or_bare_name() {
    let options = |globs: &[&str]| Options {
        ignore: globs.iter().map(|g| g.to_string()).collect(),
    };
    let (base, new) = (trace(1, program(4, 12)), trace(2, program(5, 13)));
    let report = compare(std::slice::from_ref(&base), &new, &options(&["app::*"])).unwrap();
    assert_eq!(report.summary.divergences, 0);
    assert!(report.summary.ignored_by_glob >= 3);
    let report = compare(&[base], &new, &options(&["apply"])).unwrap();
    let first = report.groups[1].first.as_ref().unwrap();
    assert_eq!(
        first.call_path, "main > evaluate",
        "apply itself is skipped"
    );
}

#[test]
fn thread_roots_match_by_function_and_order_whatever_their_thread_ids() {
    let worker = |tid, x, ret| {
        let mut w = leaf("threads::fib", x, ret);
        w.thread = tid;
        w
    };
    let base = trace(1, vec![worker(100, 10, 55), worker(101, 13, 233)]);
    let new = trace(2, vec![worker(7, 10, 55), worker(8, 13, 233)]);
    assert_eq!(gate(vec![base.clone()], new).summary.divergences, 0);
    let changed = trace(2, vec![worker(7, 10, 55), worker(8, 13, 234)]);
    let report = gate(vec![base], changed);
    let first = report.groups[0].first.as_ref().unwrap();
    assert_eq!(first.call_path, "fib#2");
}

#[test]
fn a_different_exit_is_a_divergence_of_the_process() {
    let base = trace(1, program(4, 12));
    let mut new = trace(2, program(4, 12));
    new.run.end = Some(RunEnd {
        exit: ProcessExit::Exited { code: 101 },
        ended_at_ms: 0,
    });
    let report = gate(vec![base], new);
    assert_eq!(report.process.len(), 1);
    assert_eq!(report.process[0].kind, DivergenceKind::ExitChanged);
    assert_eq!(report.process[0].new.as_deref(), Some("exited with 101"));
    assert_eq!(report.summary.divergences, 1);
}

#[test]
fn odd_traces_are_compared_without_panicking() {
    let mut odd = trace(1, program(4, 12));
    // A parent that does not exist, a parent that starts later, a function that is not listed.
    odd.calls[1].parent = Some(CallId(999));
    odd.calls[2].parent = Some(CallId(5));
    odd.calls[3].function = FunctionId(77);
    let empty = trace(2, vec![]);
    for (base, new) in [
        (odd.clone(), empty.clone()),
        (empty.clone(), odd.clone()),
        (odd.clone(), odd.clone()),
        (empty.clone(), empty),
    ] {
        let report = gate(vec![base], new);
        let _ = human(&report, true);
        let _ = junit(&report);
    }
}

#[test]
fn an_empty_baseline_is_an_error_not_a_panic() {
    let new = trace(1, vec![]);
    assert!(matches!(
        compare(&[], &new, &Options::default()),
        Err(GateError::NoBaseline)
    ));
}

#[test]
fn the_json_form_has_the_documented_fields() {
    let report = gate(vec![trace(1, program(4, 12))], trace(2, program(5, 13)));
    let json = serde_json::to_value(&report).unwrap();
    for key in [
        "mode",
        "subject",
        "baseline_runs",
        "process",
        "groups",
        "summary",
    ] {
        assert!(json.get(key).is_some(), "{key} missing");
    }
    let group = &json["groups"][1];
    for key in ["function", "module", "calls", "first", "others"] {
        assert!(group.get(key).is_some(), "{key} missing");
    }
    assert_eq!(group["module"], "app");
    let first = &group["first"];
    assert_eq!(first["kind"], "return_changed");
    for key in ["call_path", "function", "field", "at", "baseline", "new"] {
        assert!(first.get(key).is_some(), "{key} missing");
    }
    assert_eq!(json["mode"], "trace");
}

#[test]
fn junit_has_one_testcase_per_top_level_function_and_the_process() {
    let report = gate(vec![trace(1, program(4, 12))], trace(2, program(5, 13)));
    let xml = junit(&report);
    assert_eq!(xml.matches("<testcase ").count(), 4, "{xml}");
    assert!(
        xml.contains(r#"<testcase name="app::evaluate" classname="app">"#),
        "{xml}"
    );
    assert!(xml.contains(r#"tests="4" failures="2""#), "{xml}");
    assert!(
        xml.contains("main &gt; evaluate &gt; apply#2: return value changed"),
        "{xml}"
    );
}

#[test]
fn thousands_of_added_calls_under_one_parent_are_listed_briefly() {
    let base = trace(1, vec![n("app::main", vec![], None, vec![])]);
    let many = (0..1000).map(|i| leaf("app::noise", i, i)).collect();
    let new = trace(2, vec![n("app::main", vec![], None, many)]);
    let report = gate(vec![base], new);
    // The calls are top-level (children of `main`): one group for `noise`.
    let noise = &report.groups[1];
    assert_eq!(noise.function, "app::noise");
    let added = noise
        .divergences()
        .filter(|d| d.kind == DivergenceKind::CallAdded && d.call_path != "main > …")
        .count();
    assert_eq!(added, 5);
    let rest = noise.divergences().find(|d| d.call_path == "main > …");
    assert_eq!(rest.unwrap().new.as_deref(), Some("995 more calls"));
}
