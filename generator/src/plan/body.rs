//! One recorded call to one test body: the receiver rebuilt through its recorded constructor, the
//! arguments as literals, the call's trait-object dependencies as mock trees, the result and
//! field effects as assertions.
//!
//! Dependencies are the `Box<dyn Trait>` / `&dyn Trait` values the call can reach from its
//! receiver's constructor and its arguments. Every recorded call made through such an object
//! (`<Concrete as Trait>::method` with that object as `self`) becomes an expectation on a mock of
//! the trait; a trait object such a call returned becomes a child mock. Calls into the crate's
//! concrete code run for real, so the walk goes through them.

use std::collections::BTreeSet;

use carve_storage::{Call, Outcome};

use crate::act::target::Callable;
use crate::arrange::args::call_args;
use crate::arrange::builder::{collapse_repeats, Builder};
use crate::arrange::context::{own_world, Ctx};
use crate::arrange::mocks::{interactions, mock_setups};
use crate::arrange::{receiver, world};
use crate::assert::subject::Subject;
use crate::assert::{effects, rules};
use crate::body::{Assertion, Body};
use crate::naming::NameParts;
use crate::reasons::{DID_NOT_RETURN, UNDECODED, UNTESTABLE};

/// A carved test: its body, its name's parts, and the recorded calls its arrange steps make
/// again.
pub type Carved = (Body, NameParts, Ran);

/// The recorded calls a test's arrange steps make again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ran {
    /// Those whose results the call it asserts on checks (see [`Builder`]'s `replayed`).
    pub replayed: Vec<u64>,
    /// Every one, producers and history steps alike (see [`Builder`]'s `arranged`): distil
    /// weighs what they returned and changed, as the test runs them.
    pub arranged: Vec<u64>,
}

/// Builds the body of the test for `call`, or says why there is none: arrange (the receiver,
/// the arguments, the mocks), act (the call as `target` spells it), assert (the result, the
/// effects).
pub fn carve(cx: &Ctx, call: &Call, target: &Callable) -> Result<Carved, &'static str> {
    // A call that panicked becomes a #[should_panic] test expecting its recorded message.
    let panicked = match &call.outcome {
        Outcome::Returned => None,
        Outcome::Panicked { message } => Some(message.as_deref()),
        Outcome::Unwound | Outcome::Unfinished => return Err(DID_NOT_RETURN),
    };
    if own_world(cx, call) {
        return Err(UNTESTABLE);
    }
    let api = &target.api;
    let mut b = Builder::default();
    let mut args_values: Vec<&carve_storage::Arg> = call.args.iter().collect();
    let receiver = receiver::arrange(cx, &mut b, call, target, &mut args_values)?;
    if args_values.len() != api.params.len() {
        return Err(UNDECODED);
    }
    let args = call_args(cx, &mut b, call, api, &args_values)?;
    // The mock trees: every call made through a dependency, in order.
    interactions(cx, &mut b, call.id)?;
    let subject = Subject {
        cx,
        call,
        target,
        panicked,
    };
    let (assertion, ret_slug) = rules::observe(&subject, &mut b)?;
    b.effects.splice(0..0, args.closure_checks);
    // Field effects on `&mut self` and `&mut` object arguments.
    effects::of_call(
        cx,
        &mut b,
        call,
        target,
        receiver.var.as_deref(),
        &args.objects,
    );
    // A closure the result keeps runs where a check takes the result's items; no other check
    // runs it, and its replies would go unasked.
    if !args.closure_checks_last.is_empty() && !b.items_taken {
        return Err(crate::reasons::CLOSURE_ARGUMENT);
    }
    b.effects.extend(args.closure_checks_last);
    let when = b.first_answer.clone().or(receiver.state_slug);
    let ran = Ran {
        replayed: b.replayed.iter().copied().collect(),
        arranged: b.arranged.iter().map(|id| id.0).collect(),
    };
    let body = assemble(
        cx,
        b,
        call,
        target,
        (receiver.callee, args.exprs),
        assertion,
    )?;
    let name = NameParts {
        panics: panicked.is_some(),
        subject: if api.has_receiver {
            api.name.clone()
        } else {
            target.subject.clone()
        },
        args: args.slugs,
        ret: ret_slug,
        when,
        steps: body
            .setup
            .iter()
            .filter(|s| s.var == "_")
            .map(|s| s.repeat)
            .sum(),
        instance: crate::naming::instance(
            std::iter::once(body.callee.as_str()).chain(body.setup.iter().map(|s| &*s.expr)),
        ),
        arranged: crate::naming::arranged(body.setup.iter().map(|s| s.expr.as_str())),
    };
    Ok((body, name, ran))
}

/// The body from what `b` arranged, the call (`act`: callee and arguments) and the assertion:
/// the mocks in the order to write them, and the files the call and the calls its arrange
/// steps make again read, rebuilt.
fn assemble(
    cx: &Ctx,
    b: Builder,
    call: &Call,
    target: &Callable,
    (callee, args): (String, Vec<String>),
    assertion: Assertion,
) -> Result<Body, &'static str> {
    let (mocks, ordered_expectations, mock_decls, sequence) = mock_setups(cx, &b)?;
    // Only those that read files are looked up (a history may replay hundreds of calls).
    let arranged: Vec<&Call> = b
        .arranged
        .iter()
        .filter(|id| crate::arrange::context::reads_files(cx, **id))
        .filter_map(|id| cx.trace.calls.iter().find(|c| c.id == *id))
        .collect();
    // A getter test already asserts what a check of its state would.
    let act = format!("{callee}({})", args.join(", "));
    let qualified = callee.starts_with('<');
    let mut body = Body {
        function_path: target.call_path.clone(),
        mocks,
        ordered_expectations,
        setup: collapse_repeats(b.setup),
        checks: b.checks.into_iter().filter(|c| c.actual != act).collect(),
        callee,
        args,
        assertion,
        effects: b.effects,
        sequence,
        mock_decls,
        // A call written `<T as Trait>::f(..)` names its trait: no import.
        trait_uses: target
            .via_trait
            .iter()
            .filter(|_| !qualified)
            .cloned()
            .chain(b.trait_uses)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        replays_closures: b.replay_closures,
    };
    let calls: Vec<&Call> = std::iter::once(call).chain(arranged).collect();
    world::rebuild(cx, &calls, &mut body).map_err(|()| UNTESTABLE)?;
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrange::values::dyn_trait;
    use crate::body::Effect;
    use crate::body::{Binding, Returns};
    use crate::plan::{plan, Plan, PlanOptions, NEEDS_MOCKALL};
    use crate::read::crate_api::CrateApi;
    use crate::reasons::RECEIVER_NOT_REBUILT;
    use carve_storage::Value;
    use carve_storage::{Arg, Field, FunctionInfo, Language, ParamInfo, Run, RunId, RunInfo};
    use carve_storage::{CallId, FunctionId, Trace};

    const LIB: &str = r#"
        pub trait Source { fn next(&mut self) -> u32; fn name(&self, i: usize) -> String; }
        pub trait Factory { fn make(&self, host: &str) -> Box<dyn Source>; }
        pub struct Counter { total: u32, src: Box<dyn Source> }
        impl Counter {
            pub fn new(src: Box<dyn Source>) -> Counter { Counter { total: 0, src } }
            pub fn total(&self) -> u32 { self.total }
            pub fn pull(&mut self) -> u32 { self.total += self.src.next(); self.total }
        }
        pub struct Wallet { cents: i64 }
        impl Wallet {
            pub fn open(cents: i64) -> Option<Wallet> { Some(Wallet { cents }) }
            pub fn cents(&self) -> i64 { self.cents }
            pub fn add(&mut self, n: i64) { self.cents += n; }
        }
        pub fn fetch(f: &dyn Factory) -> u32 { f.make("h").next() }
    "#;

    fn crate_with(manifest_extra: &str) -> (tempfile::TempDir, CrateApi) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            format!("[package]\nname = \"mk\"\n{manifest_extra}"),
        )
        .unwrap();
        std::fs::write(dir.join("src/lib.rs"), LIB).unwrap();
        let api = CrateApi::load(dir).unwrap();
        (tmp, api)
    }

    fn u32v(v: u128) -> Value {
        Value::Uint {
            ty: "u32".into(),
            value: v,
        }
    }

    fn i64v(v: i128) -> Value {
        Value::Int {
            ty: "i64".into(),
            value: v,
        }
    }

    fn obj(ty: &str, addr: u64, concrete: &str) -> Value {
        Value::Ref {
            ty: ty.into(),
            addr,
            target: Box::new(Value::Struct {
                ty: concrete.into(),
                fields: vec![],
            }),
        }
    }

    fn strukt(ty: &str, fields: Vec<(&str, Value)>) -> Value {
        Value::Struct {
            ty: ty.into(),
            fields: fields
                .into_iter()
                .map(|(name, value)| Field {
                    name: name.into(),
                    value,
                })
                .collect(),
        }
    }

    fn by_ref(target: Value) -> Value {
        Value::Ref {
            ty: format!("&{}", target.type_name()),
            addr: 0x1000,
            target: Box::new(target),
        }
    }

    /// Functions by path, calls as (id, parent, function path, args, ret, after).
    type CallSpec<'a> = (
        u64,
        Option<u64>,
        &'a str,
        Vec<(&'a str, Value)>,
        Option<Value>,
        Vec<(&'a str, Value)>,
    );

    fn trace(calls: Vec<CallSpec>) -> Trace {
        let mut functions: Vec<FunctionInfo> = Vec::new();
        let mut out = Vec::new();
        for (id, parent, path, args, ret, after) in calls {
            let fid = match functions.iter().find(|f| f.path == path) {
                Some(f) => f.id,
                None => {
                    let fid = FunctionId(functions.len() as u32 + 1);
                    functions.push(FunctionInfo {
                        id: fid,
                        path: path.into(),
                        name: path.rsplit("::").next().unwrap_or(path).into(),
                        linkage_name: None,
                        language: Language::Rust,
                        decl_file: None,
                        decl_line: None,
                        low_pc: 0,
                        params: Vec::<ParamInfo>::new(),
                        return_type: None,
                    });
                    fid
                }
            };
            let arg = |(name, value): (&str, Value)| Arg {
                name: name.into(),
                value,
            };
            out.push(Call {
                id: CallId(id),
                parent: parent.map(CallId),
                function: fid,
                thread: 1,
                depth: 0,
                args: args.into_iter().map(arg).collect(),
                outcome: Outcome::Returned,
                ret,
                after: after.into_iter().map(arg).collect(),
                objects: Vec::new(),
                touches: Vec::new(),
            });
        }
        Trace {
            run: Run {
                id: RunId(1),
                info: RunInfo {
                    program: "/t/mk".into(),
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
                end: None,
            },
            functions,
            calls: out,
            objects: Vec::new(),
            file_reads: Vec::new(),
        }
    }

    const BOX_SOURCE: &str = "alloc::boxed::Box<dyn mk::Source, alloc::alloc::Global>";

    fn counter(total: u128) -> Value {
        strukt(
            "mk::Counter",
            vec![
                ("total", u32v(total)),
                ("src", obj(BOX_SOURCE, 0x50, "main::Dev")),
            ],
        )
    }

    /// `Counter::new(dev)`, then `pull()` twice: the source answers 3, then 3, then 4.
    fn counter_trace() -> Trace {
        let next = "<main::Dev as mk::Source>::next";
        let dev = || vec![("self", obj("&main::Dev", 0x50, "main::Dev"))];
        trace(vec![
            (
                1,
                None,
                "mk::Counter::new",
                vec![("src", obj(BOX_SOURCE, 0x50, "main::Dev"))],
                Some(counter(0)),
                vec![],
            ),
            (
                2,
                None,
                "mk::Counter::pull",
                vec![("self", by_ref(counter(0)))],
                Some(u32v(10)),
                vec![("self", counter(10))],
            ),
            (3, Some(2), next, dev(), Some(u32v(3)), vec![]),
            (4, Some(2), next, dev(), Some(u32v(3)), vec![]),
            (5, Some(2), next, dev(), Some(u32v(4)), vec![]),
        ])
    }

    /// The one test of the plan besides those observing what a constructor built.
    fn only_test(plan: &Plan) -> &crate::plan::TestPlan {
        assert_eq!(plan.files.len(), 1, "{plan:#?}");
        let tests: Vec<_> = plan.files[0]
            .tests
            .iter()
            .filter(|t| !matches!(t.body.assertion, Assertion::Observed { .. }))
            .collect();
        assert_eq!(tests.len(), 1, "{plan:#?}");
        tests[0]
    }

    #[test]
    fn a_receiver_is_rebuilt_through_the_constructor_that_gave_its_state_with_mocks_in_place() {
        let (_tmp, api) = crate_with("[dev-dependencies]\nmockall = \"0.13\"\n");
        let plan = plan(&counter_trace(), &api, &PlanOptions::default());
        let test = only_test(&plan);
        assert_eq!(test.name, "pull_returns_10");
        assert_eq!(
            test.body.setup,
            [Binding {
                var: "counter".into(),
                mutable: true,
                expr: "mk::Counter::new(Box::new(mock_src))".into(),
                repeat: 1,
                times: None,
            }]
        );
        assert_eq!(test.body.callee, "counter.pull");
        assert_eq!(
            test.body.effects,
            [Effect {
                actual: "counter.total()".into(),
                expected: "10u32".into(),
                message: None,
                observe: None,
            }]
        );
        assert_eq!(plan.files[0].mocks[0].trait_path, "mk::Source");
        assert_eq!(
            plan.files[0].mocks[0].methods,
            [
                "fn next(&mut self) -> u32",
                "fn name(&self, i: usize) -> String"
            ]
        );
        assert_eq!(plan.summary.method_tests, 1);
        // `pull`, and `Counter::new` observed through its getter (with a mock source).
        assert_eq!(plan.summary.mock_tests, 2);
    }

    #[test]
    fn identical_consecutive_mock_calls_become_one_expectation_called_n_times_in_sequence() {
        let (_tmp, api) = crate_with("[dev-dependencies]\nmockall = \"0.13\"\n");
        let plan = plan(&counter_trace(), &api, &PlanOptions::default());
        let mock = &only_test(&plan).body.mocks[0];
        assert_eq!(mock.var, "mock_src");
        let shape: Vec<_> = mock
            .expectations
            .iter()
            .map(|e| {
                let seq = e.sequence.as_deref();
                (e.method.as_str(), e.times, seq, e.returns.clone())
            })
            .collect();
        let three = Returns::Const {
            expr: "3u32".into(),
        };
        let four = Returns::Const {
            expr: "4u32".into(),
        };
        let seq = Some("seq_src");
        assert_eq!(shape, [("next", 2, seq, three), ("next", 1, seq, four)]);
        assert!(only_test(&plan).body.sequence);
        assert!(plan.files[0].needs_sequence && !plan.files[0].needs_predicates);
    }

    #[test]
    fn a_trait_object_returned_by_a_mock_becomes_a_child_mock_declared_first() {
        let (_tmp, api) = crate_with("[dev-dependencies]\nmockall = \"0.13\"\n");
        let t = trace(vec![
            (
                1,
                None,
                "mk::fetch",
                vec![("f", obj("&dyn mk::Factory", 0x10, "main::F"))],
                Some(u32v(7)),
                vec![],
            ),
            (
                2,
                Some(1),
                "<main::F as mk::Factory>::make",
                vec![
                    ("self", obj("&main::F", 0x10, "main::F")),
                    (
                        "host",
                        Value::Str {
                            ty: "&str".into(),
                            value: "h".into(),
                            truncated: false,
                        },
                    ),
                ],
                Some(obj(BOX_SOURCE, 0x20, "main::Dev")),
                vec![],
            ),
            (
                3,
                Some(1),
                "<main::Dev as mk::Source>::next",
                vec![("self", obj("&main::Dev", 0x20, "main::Dev"))],
                Some(u32v(7)),
                vec![],
            ),
        ]);
        let plan = plan(&t, &api, &PlanOptions::default());
        let test = only_test(&plan);
        let vars: Vec<_> = test.body.mocks.iter().map(|m| m.var.as_str()).collect();
        assert_eq!(vars, ["mock_source", "mock_f"]);
        let make = &test.body.mocks[1].expectations[0];
        assert_eq!(make.with, [r#"eq("h")"#]);
        assert_eq!(
            make.returns,
            Returns::Mock {
                var: "mock_source".into(),
                pattern: "_".into()
            }
        );
        assert_eq!(test.body.args, ["&mock_f"]);
        assert!(!test.body.sequence);
    }

    #[test]
    fn without_mockall_tests_needing_mocks_are_skipped_and_counted() {
        let (_tmp, api) = crate_with("");
        let plan = plan(&counter_trace(), &api, &PlanOptions::default());
        assert!(plan.files.is_empty());
        // `pull`, and the observation of what `Counter::new` built: both need a mock source.
        assert_eq!(plan.summary.needs_mockall, 2);
        assert_eq!(plan.summary.skipped.get(NEEDS_MOCKALL), Some(&2));
    }

    fn wallet(cents: i128) -> Value {
        strukt("mk::Wallet", vec![("cents", i64v(cents))])
    }

    /// `Some(wallet)`, as `Wallet::open` returns it.
    fn some(wallet: Value) -> Value {
        Value::Enum {
            ty: "core::option::Option<mk::Wallet>".into(),
            variant: "Some".into(),
            fields: vec![Field {
                name: "__0".into(),
                value: wallet,
            }],
        }
    }

    /// A recorded row: `Wallet::open(cents)` returning `Some(wallet)`.
    fn open(id: u64, cents: i128) -> CallSpec<'static> {
        (
            id,
            None,
            "mk::Wallet::open",
            vec![("cents", i64v(cents))],
            Some(some(wallet(cents))),
            vec![],
        )
    }

    /// A recorded row: `wallet.add(n)` on a wallet holding `before`, which then holds `after`.
    fn add(id: u64, before: i128, n: i128, after: i128) -> CallSpec<'static> {
        (
            id,
            None,
            "mk::Wallet::add",
            vec![("self", by_ref(wallet(before))), ("n", i64v(n))],
            None,
            vec![("self", wallet(after))],
        )
    }

    #[test]
    fn a_receiver_whose_state_came_from_earlier_calls_is_rebuilt_by_replaying_them() {
        let (_tmp, api) = crate_with("");
        let t = trace(vec![
            open(1, 5),
            add(2, 5, 2, 7),
            add(3, 7, 1, 8),
            add(4, 5, 2, 7),
        ]);
        let plan = plan(&t, &api, &PlanOptions::default());
        assert!(plan.summary.skipped.is_empty(), "{:?}", plan.summary);
        let tests = &plan.files[0].tests;
        assert_eq!(tests.len(), 3, "{tests:#?}");
        // `open` returns a wallet with a private field inside `Some`: no literal to compare it
        // with, so the test unwraps it and checks what its getter shows.
        let opened = tests.iter().find(|t| t.calls[0] == 1).unwrap();
        assert_eq!(
            opened.body.assertion,
            Assertion::Observed {
                unwrap: Some(".unwrap()".to_string())
            }
        );
        assert_eq!(opened.body.effects[0].actual, "result.cents()");
        assert_eq!(opened.body.effects[0].expected, "5i64");
        let from_open = tests
            .iter()
            .find(|t| t.calls.len() == 2)
            .expect("calls 2 and 4 share one test");
        assert_eq!(
            from_open.body.setup[0].expr,
            "mk::Wallet::open(5i64).unwrap()"
        );
        assert_eq!(from_open.body.effects[0].actual, "wallet.cents()");
        assert_eq!(from_open.body.effects[0].expected, "7i64");
        // The wallet holding 7 came from open(5) then add(2): both are replayed.
        let replayed = tests.iter().find(|t| t.calls.len() == 1).unwrap();
        let setup: Vec<&str> = replayed
            .body
            .setup
            .iter()
            .map(|b| b.expr.as_str())
            .collect();
        assert_eq!(
            setup,
            ["mk::Wallet::open(5i64).unwrap()", "wallet.add(2i64)"]
        );
        assert_eq!(replayed.body.effects[0].expected, "8i64");
        // The replayed state is checked before the call.
        assert_eq!(replayed.body.checks.len(), 1);
        assert_eq!(replayed.body.checks[0].actual, "wallet.cents()");
        assert_eq!(replayed.body.checks[0].expected, "7i64");
        assert!(
            from_open.body.checks.is_empty(),
            "a constructed state needs no check"
        );
    }

    #[test]
    fn three_or_more_identical_replayed_calls_in_a_row_become_one_loop() {
        let b = |var: &str, expr: &str| Binding {
            var: var.into(),
            mutable: false,
            expr: expr.into(),
            repeat: 1,
            times: None,
        };
        let setup = vec![
            b("it", "m::Iter::new()"),
            b("_", "it.next()"),
            b("_", "it.next()"),
            b("_", "it.next()"),
            b("_", "it.skip(1)"),
            b("_", "it.skip(1)"),
        ];
        let got = collapse_repeats(setup);
        let shown: Vec<(&str, usize)> = got.iter().map(|b| (b.expr.as_str(), b.repeat)).collect();
        assert_eq!(
            shown,
            [
                ("m::Iter::new()", 1),
                ("it.next()", 3),
                ("it.skip(1)", 1),
                ("it.skip(1)", 1)
            ]
        );
    }

    #[test]
    fn a_state_only_an_unfinished_call_had_is_reached_through_recorded_changes_and_checked() {
        let (_tmp, api) = crate_with("");
        // No completed call left a wallet holding 6: the add(1) starting there began while
        // its wallet was being changed by code carve did not see finish.
        let t = trace(vec![open(1, 5), add(2, 5, 3, 8), add(3, 6, 1, 7)]);
        let plan = plan(&t, &api, &PlanOptions::default());
        assert_eq!(plan.summary.skipped.get(RECEIVER_NOT_REBUILT), None);
        let tests = &plan.files[0].tests;
        let derived = tests.iter().find(|t| t.calls[0] == 3).unwrap();
        let setup: Vec<&str> = derived.body.setup.iter().map(|b| b.expr.as_str()).collect();
        // 5 + 1 = 6: the fewest recorded changes from the constructed wallet.
        assert_eq!(
            setup,
            ["mk::Wallet::open(5i64).unwrap()", "wallet.add(1i64)"]
        );
        assert_eq!(derived.body.checks[0].actual, "wallet.cents()");
        assert_eq!(derived.body.checks[0].expected, "6i64");
        assert_eq!(derived.body.effects[0].expected, "7i64");
    }

    #[test]
    fn dyn_trait_paths_are_read_from_recorded_types() {
        assert_eq!(dyn_trait(BOX_SOURCE).as_deref(), Some("mk::Source"));
        assert_eq!(
            dyn_trait("&dyn abc::Answerer").as_deref(),
            Some("abc::Answerer")
        );
        assert_eq!(dyn_trait("&mut dyn a::T + Send").as_deref(), Some("a::T"));
        assert_eq!(dyn_trait("&abc::B"), None);
    }

    #[test]
    fn a_call_that_names_its_trait_imports_nothing() {
        let book = crate::testdata::rulebook();
        let path = "<rulebook::Counter as core::convert::From<u32>>::from";
        let call = book.calls_of(path)[0];
        let (body, _, _) = carve(&book.cx(), call, book.callable(path)).expect("carved");
        assert!(
            body.callee.starts_with("<rulebook::Counter as"),
            "{}",
            body.callee
        );
        assert!(body.trait_uses.is_empty(), "{:?}", body.trait_uses);
        // A method call through a trait imports it.
        let path = "<rulebook::Square as rulebook::Shape>::area";
        let call = book.calls_of(path)[0];
        let (body, _, _) = carve(&book.cx(), call, book.callable(path)).expect("carved");
        assert_eq!(body.trait_uses, ["rulebook::Shape"]);
    }
}
