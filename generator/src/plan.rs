//! Which recorded calls become which tests: a pure function from a trace and the crate's API to
//! plain data, ready to render.
//!
//! Each call is sorted into one of: carved (a test, or a duplicate of one), skipped (its function
//! is callable but the call cannot be replayed: `undecoded`, `did not return`, `unsupported
//! type`, `receiver not rebuilt`, `closure argument`, `trait not mockable`, `mock not replayable`, `needs mockall`),
//! private (its function is not reachable from outside the crate), or not supported yet
//! (closures, binary-only or other crates' functions...). What one test does is built by
//! [`crate::plan::scenario`].

pub(crate) mod body;
pub(crate) mod table;
pub(crate) mod through;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use carve_storage::{Call, CallId, FunctionId, Trace};
use serde::Serialize;

use crate::act::call::resolve;
use crate::act::display;
use crate::act::target::Target;
pub use crate::body::Assertion;
use crate::body::{Body, MockDecl};
use crate::naming::{self, NameParts};
use crate::plan::table::{Row, Table};
use crate::read::crate_api::CrateApi;
pub use crate::reasons::{DID_NOT_RETURN, UNDECODED, UNSUPPORTED_TYPE};

/// Skip reason: the test needs mocks and the crate has no `mockall` dev-dependency.
pub const NEEDS_MOCKALL: &str = "needs mockall";
/// The `mockall` version generated tests are written for.
pub const MOCKALL_VERSION: &str = "0.13";

/// Everything to write, in writing order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// The library crate the tests call (`expr`).
    pub crate_name: String,
    /// The recorded program's file name.
    pub program: String,
    pub run_id: i64,
    /// One per module with at least one test, sorted by module path.
    pub files: Vec<FilePlan>,
    pub summary: Summary,
    /// Paths the tests must spell differently from where the items are defined, because a
    /// `pub use` is what makes them reachable: (`shop::store::Store`, `shop::Store`); a path
    /// ending in `::` maps everything under a module. Applied to the rendered files.
    pub public_paths: Vec<(String, String)>,
}

/// The tests of one module.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilePlan {
    /// `carved_expr_lexer.rs`.
    pub file_name: String,
    /// `expr::lexer` (the crate name for the root).
    pub module_path: String,
    pub tests: Vec<TestPlan>,
    /// The `mock!`s the tests use, sorted by trait path.
    pub mocks: Vec<MockDecl>,
    /// Traits imported for method calls (`abc::Asker`), sorted.
    pub uses: Vec<String>,
    /// Some expectation matches arguments (`use mockall::predicate::*`).
    pub needs_predicates: bool,
    /// Some test orders expectations (`use mockall::Sequence`).
    pub needs_sequence: bool,
}

/// One test: arrange mocks and objects, call a function or method, check what it returns and
/// what it changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestPlan {
    pub name: String,
    /// What the test does (the same fields in the template's `test`).
    #[serde(flatten)]
    pub body: Body,
    /// Ids of the recorded calls this test stands for (equivalent calls share one test); the
    /// first is the one it was carved from.
    pub calls: Vec<u64>,
    /// Ids of recorded calls its arrange steps make again as they were made.
    #[serde(skip)]
    pub replayed: Vec<u64>,
    /// A table-driven test: `body` is written once, with `case.N` for the values of each
    /// row (see [`crate::plan::table`]); `calls` and `replayed` are all its rows'.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<Table>,
}

/// An in-scope recorded call that got no test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedCall {
    pub call: u64,
    pub function: String,
    pub reason: String,
    /// More on the reason, when there is more: for `untestable`, what the call read and where
    /// (`clock: std::time::SystemTime::now in app::stamp`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Unsupported kinds that are not the crate's public API: code a test outside the crate cannot
/// call by any path. Their calls are carved through the public calls above them. Every other
/// unsupported kind is public API carve cannot carve yet, and counts against the headline.
pub const OUTSIDE_PUBLIC_API: &[&str] = &[
    "closure",
    "compiler-generated",
    "binary only",
    "other crate",
    "not Rust",
];

/// Counts of recorded calls by fate.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Calls of the crate's public API: every function a test outside the crate can reach by a
    /// public path (trait methods and generic instances included), whether carve can carve it
    /// yet or not. The headline figure is `calls_carved` out of these.
    pub public_api: usize,
    /// Calls of public, reachable free or associated functions of the library.
    pub in_scope: usize,
    /// Distinct tests written.
    pub tests_written: usize,
    /// In-scope calls covered by a test.
    pub calls_carved: usize,
    /// Of `calls_carved`, calls with no test of their own whose result the test cannot check
    /// directly, made again as they were recorded by the arrange steps of a test that checks
    /// what they gave (`Url::options()` in a test of `ParseOptions::parse`).
    pub carved_as_steps: usize,
    /// Of `calls_carved`, calls on a receiver no public path reaches (a private field of the
    /// object a public call was made on, or an object a public call was still building), made
    /// again by the passing test of that public call.
    pub carved_through_callers: usize,
    /// Per skipped call on such a receiver, the public call holding it (see
    /// `scenario::holding_call`, `scenario::building_call`).
    #[serde(skip)]
    pub(crate) through: BTreeMap<u64, u64>,
    /// In-scope calls without a test, by reason.
    pub skipped: BTreeMap<String, usize>,
    /// Calls of functions of the library that tests cannot reach.
    pub private_calls: usize,
    /// Calls of functions carve does not write tests for yet, by kind.
    pub unsupported: BTreeMap<String, usize>,
    /// Tests calling a method on a rebuilt receiver.
    pub method_tests: usize,
    /// Tests with at least one mock.
    pub mock_tests: usize,
    /// `mock!` blocks written (one per trait and file).
    pub mocks: usize,
    /// Calls that would have been carved with mocks if the crate had `mockall`.
    pub needs_mockall: usize,
    /// Every in-scope call without a test, with its function and the reason (the counts in
    /// `skipped`, one by one).
    pub skipped_calls: Vec<SkippedCall>,
    /// Every recorded function carve does not write tests for yet, with the reason and how
    /// many calls it had (the counts in `unsupported`, by function).
    pub unsupported_functions: Vec<UnsupportedFunction>,
}

/// A recorded function carve does not write tests for yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnsupportedFunction {
    /// As recorded: `indexmap::map::IndexMap<K,V,S>::retain`.
    pub function: String,
    pub reason: String,
    pub calls: usize,
    /// Whether the function is public API (counted in `public_api`).
    pub public_api: bool,
}

/// Plans the tests for every call in `trace` against the crate described by `api`.
impl Summary {
    /// Counts call `call` of `function` as skipped for `reason`, and lists it.
    /// Counts the carved calls of a test that will not be written as skipped for `reason`.
    pub(crate) fn uncarve(&mut self, function: &str, calls: &[u64], reason: &str) {
        self.calls_carved -= calls.len();
        for &call in calls {
            self.skip(call, function, reason);
        }
    }

    /// Counts as carved the skipped calls that `tests` replay as arrange steps, when they were
    /// skipped only for what a test of their own could not write or check. A replayed call
    /// stands for the calls grouped as equivalent to it (`equivalent`: same function, arguments,
    /// result and calls below): the test makes each of them again as it was made, as a test of
    /// a call stands for its equivalents (every `Url::options()` inside `Url::parse`/`join`
    /// is one call, replayed by the tests of the `ParseOptions::parse` it feeds).
    /// Likewise the skipped calls on a receiver no public path reaches whose holding public call
    /// (`through`) has a passing test.
    pub(crate) fn credit_replayed<'t>(
        &mut self,
        tests: impl Iterator<Item = &'t TestPlan>,
        equivalent: &BTreeMap<CallId, Vec<CallId>>,
    ) {
        let tests: Vec<&TestPlan> = tests.collect();
        let replayed: BTreeSet<u64> = tests
            .iter()
            .flat_map(|t| t.replayed.iter().copied())
            .flat_map(|id| {
                let same = equivalent.get(&CallId(id)).into_iter().flatten();
                std::iter::once(id).chain(same.map(|c| c.0))
            })
            .collect();
        let tested: BTreeSet<u64> = tests.iter().flat_map(|t| t.calls.iter().copied()).collect();
        let steps = [
            UNSUPPORTED_TYPE,
            UNDECODED,
            crate::reasons::RECEIVER_NOT_REBUILT,
        ];
        let (mut as_steps, mut through) = (0, 0);
        let holding = &self.through;
        self.skipped_calls.retain(|s| {
            let step = replayed.contains(&s.call) && steps.contains(&s.reason.as_str());
            // The holding call ran again in a passing test: its own, or an arrange step's.
            let inner = !step
                && holding
                    .get(&s.call)
                    .is_some_and(|h| tested.contains(h) || replayed.contains(h));
            if step || inner {
                if step {
                    as_steps += 1;
                } else {
                    through += 1;
                }
                if let Some(n) = self.skipped.get_mut(&s.reason) {
                    *n -= 1;
                }
            }
            !(step || inner)
        });
        self.skipped.retain(|_, n| *n > 0);
        self.calls_carved += as_steps + through;
        self.carved_as_steps += as_steps;
        self.carved_through_callers += through;
    }

    pub(crate) fn skip(&mut self, call: u64, function: &str, reason: &str) {
        *self.skipped.entry(reason.to_string()).or_default() += 1;
        self.skipped_calls.push(SkippedCall {
            call,
            function: function.to_string(),
            reason: reason.to_string(),
            detail: None,
        });
    }
}

/// Which tests to keep (issue 4 item 6). The default keeps one test per equivalence class and
/// any number per function.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// One test per recorded call, equivalent calls included (`--all`).
    pub keep_equivalent: bool,
    /// At most this many tests per function (`--max-per-function N`): those standing for the
    /// most recorded calls are kept; the calls of the others are skipped as
    /// [`OVER_MAX_PER_FUNCTION`].
    pub max_per_function: Option<usize>,
    /// Plan only these recorded calls (`carve assess --write-tests`: the calls a catching test
    /// is carved from); `None` plans every call.
    pub only_calls: Option<BTreeSet<u64>>,
    /// File names begin with this instead of `carved_` (`carved_assess_` for `carve assess`,
    /// so its files and `carve generate`'s never overwrite each other).
    pub file_prefix: Option<String>,
    /// Recorded calls whose tests replay their receivers' whole histories, state-equivalent
    /// steps included: verification found the shortened test failing (see
    /// `scenario/history.rs`).
    pub whole_histories: BTreeSet<u64>,
}

/// A function with recorded calls not carved because of `--max-per-function`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OverMax {
    /// As recorded (`hotloop::mix`).
    pub function: String,
    pub calls: usize,
}

/// Skip reason: the function already has `--max-per-function` tests.
pub const OVER_MAX_PER_FUNCTION: &str = "over --max-per-function";
/// Skip reason: the test needs a mock of a trait whose name another trait's mock in the same
/// file already has.
pub const MOCK_NAME_CLASH: &str = "mock name clash";

/// Keeps at most `max` drafts per function, those standing for the most calls (in their order
/// otherwise; drafts of calls kept only as table rows last); returns the others.
fn cap_per_function(drafts: &mut Vec<Draft>, max: usize) -> Vec<Draft> {
    let mut by_function: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, d) in drafts.iter().enumerate() {
        by_function
            .entry(d.body.function_path.as_str())
            .or_default()
            .push(i);
    }
    let mut keep = vec![true; drafts.len()];
    for mut indices in by_function.into_values() {
        indices.sort_by_key(|&i| {
            let d = &drafts[i];
            (d.row_only, std::cmp::Reverse(d.calls.len() - d.row_calls))
        });
        for &i in indices.iter().skip(max) {
            keep[i] = false;
        }
    }
    let (kept, dropped): (Vec<_>, Vec<_>) = std::mem::take(drafts)
        .into_iter()
        .zip(keep)
        .partition(|(_, kept)| *kept);
    *drafts = kept.into_iter().map(|(d, _)| d).collect();
    dropped.into_iter().map(|(d, _)| d).collect()
}

pub fn plan(trace: &Trace, api: &CrateApi, options: &PlanOptions) -> Plan {
    plan_grouped(trace, api, options, &BTreeMap::new(), &BTreeMap::new(), &[])
}

/// [`plan`] on a trace grouping left calls out of: `equivalent` (per kept call, the equivalent
/// calls dropped) and `over_max` (per function, the calls dropped over its cap) tell what an
/// object's history held beyond the calls kept. `rows` are calls grouping kept aside, past
/// their function's cap, only to be rows of table tests (see [`crate::plan::table`]): planned after
/// the trace's calls, each joins a test with the same body or a table, or counts over the cap.
pub fn plan_grouped(
    trace: &Trace,
    api: &CrateApi,
    options: &PlanOptions,
    equivalent: &BTreeMap<CallId, Vec<CallId>>,
    over_max: &BTreeMap<FunctionId, usize>,
    rows: &[Call],
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
    let cx = crate::arrange::context::Ctx::new(
        trace,
        api,
        &targets,
        &children,
        equivalent,
        &hidden,
        crate::arrange::rebuild::rebuild,
    );
    let has_mockall = api.dev_dependencies.contains("mockall");
    // module path -> tests under construction, and where each body already is.
    let mut modules: BTreeMap<Vec<String>, Vec<Draft>> = BTreeMap::new();
    let mut index: HashMap<(Vec<String>, Body, Option<u64>), usize> = HashMap::new();

    let mut unsupported_by_fn: BTreeMap<(&str, &str, bool), usize> = BTreeMap::new();
    for (n, call) in trace.calls.iter().chain(rows).enumerate() {
        let row_only = n >= trace.calls.len();
        if let Some(only) = &options.only_calls {
            if !only.contains(&call.id.0) {
                continue;
            }
        }
        let callable = match targets.get(&call.function) {
            None => {
                *summary
                    .unsupported
                    .entry("unknown function".to_string())
                    .or_default() += 1;
                continue;
            }
            Some(Target::Private) => {
                summary.private_calls += 1;
                continue;
            }
            Some(Target::Unsupported(kind)) => {
                *summary.unsupported.entry((*kind).to_string()).or_default() += 1;
                let public = !OUTSIDE_PUBLIC_API.contains(kind);
                if public {
                    summary.public_api += 1;
                }
                let path = trace
                    .function(call.function)
                    .map_or("", |f| f.path.as_str());
                *unsupported_by_fn.entry((path, *kind, public)).or_default() += 1;
                continue;
            }
            Some(Target::Callable(c)) => c,
        };
        summary.in_scope += 1;
        summary.public_api += 1;
        // `Display::fmt` is carved as the `to_string()` call it stands for.
        let as_to_string;
        let mut format_spec = None;
        let call = if callable.display {
            match display::as_to_string(call) {
                Ok((c, spec)) => {
                    as_to_string = c;
                    format_spec = spec;
                    &as_to_string
                }
                Err(reason) => {
                    summary.skip(call.id.0, &callable.call_path, reason);
                    continue;
                }
            }
        } else {
            call
        };
        cx.replay_whole_histories(options.whole_histories.contains(&call.id.0));
        let (mut body, name, replayed) = match crate::plan::body::carve(&cx, call, callable) {
            Ok(carved) => carved,
            Err(reason) => {
                // A result of a crate not recorded: say so, and how to record it.
                let reason = match &call.ret {
                    Some(ret)
                        if reason == UNSUPPORTED_TYPE
                            && crate::assert::observe::of_other_crate(ret, &api.crate_name)
                            && crate::assert::observe::assertion(
                                Some(ret),
                                &callable.api.ret,
                                api,
                            )
                            .is_err() =>
                    {
                        crate::reasons::UNRECORDED_CRATE_VALUE
                    }
                    _ => reason,
                };
                summary.skip(call.id.0, &callable.call_path, reason);
                let unreachable = [
                    crate::reasons::RECEIVER_NOT_REBUILT,
                    crate::reasons::HISTORY_NOT_REPLAYABLE,
                ];
                if unreachable.contains(&reason) {
                    let outer = crate::plan::through::holding_call(&cx, call)
                        .or_else(|| crate::plan::through::building_call(&cx, call));
                    if let Some(outer) = outer {
                        summary.through.insert(call.id.0, outer.0);
                    }
                }
                if reason == crate::reasons::UNTESTABLE {
                    if let Some(last) = summary.skipped_calls.last_mut() {
                        last.detail = crate::arrange::context::world_read(&cx, call);
                    }
                }
                continue;
            }
        };
        // A formatter with options (`{:>10}`): `format!` hands the call the same ones.
        if let Some(spec) = &format_spec {
            if !display::use_format(&mut body.callee, &mut body.args, spec) {
                summary.skip(call.id.0, &callable.call_path, display::OPTIONS_NOT_DECODED);
                continue;
            }
        }
        if !body.mocks.is_empty() && !has_mockall {
            summary.needs_mockall += 1;
            summary.skip(call.id.0, &callable.call_path, NEEDS_MOCKALL);
            continue;
        }
        summary.calls_carved += 1;
        // Equivalent calls (same arranged state, arguments and interactions) give the same
        // body; with `keep_equivalent` the call id keeps them apart.
        let key = (
            callable.module.clone(),
            body.clone(),
            options.keep_equivalent.then_some(call.id.0),
        );
        match index.get(&key) {
            Some(&i) => {
                if let Some(existing) = modules.get_mut(&callable.module).and_then(|v| v.get_mut(i))
                {
                    existing.calls.push(call.id.0);
                    existing.replayed.extend(replayed);
                    existing.row_calls += usize::from(row_only);
                }
            }
            None => {
                let list = modules.entry(callable.module.clone()).or_default();
                index.insert(key, list.len());
                list.push(Draft {
                    body,
                    name,
                    calls: vec![call.id.0],
                    replayed,
                    row_only,
                    row_calls: usize::from(row_only),
                });
            }
        }
    }

    let mut files = Vec::new();
    let mut used_names: BTreeMap<String, usize> = BTreeMap::new();
    for (module, mut drafts) in modules {
        // Ordered by what the tests are, not when their calls happened: a re-recording whose
        // threads ran in another order writes the same file.
        drafts.sort_by_cached_key(|d| {
            (
                d.body.function_path.clone(),
                d.name.clone(),
                format!("{:?}", d.body),
                d.calls[0],
            )
        });
        // Two traits with the same name cannot both be `MockName` in one file: keep the first.
        let mut mock_names: BTreeMap<String, String> = BTreeMap::new();
        let (kept, clashing): (Vec<Draft>, Vec<Draft>) = drafts.into_iter().partition(|d| {
            d.body.mock_decls.iter().all(|m| {
                mock_names
                    .entry(m.name.clone())
                    .or_insert_with(|| m.trait_path.clone())
                    == &m.trait_path
            })
        });
        let mut drafts = kept;
        for d in clashing {
            summary.uncarve(&d.body.function_path, &d.calls, MOCK_NAME_CLASH);
        }
        let mut tables = Vec::new();
        if let Some(max) = options.max_per_function {
            let over = cap_per_function(&mut drafts, max);
            let (found, alone) = tables_of(over, max.saturating_mul(table::ROWS_PER_CAP));
            tables = found;
            for d in alone {
                summary.uncarve(&d.body.function_path, &d.calls, OVER_MAX_PER_FUNCTION);
            }
        }
        let mut names =
            naming::test_names(&drafts.iter().map(|d| d.name.clone()).collect::<Vec<_>>());
        let mut module_path = vec![api.crate_name.clone()];
        module_path.extend(module.iter().cloned());
        let mut file_name = naming::file_name(&module_path);
        if let Some(prefix) = &options.file_prefix {
            file_name = format!("{prefix}{}", file_name.trim_start_matches("carved_"));
        }
        let seen = used_names.entry(file_name.clone()).or_default();
        *seen += 1;
        if *seen > 1 {
            file_name = format!("{}_{}.rs", file_name.trim_end_matches(".rs"), seen);
        }
        let mut mocks: BTreeSet<MockDecl> = BTreeSet::new();
        let mut uses: BTreeSet<String> = BTreeSet::new();
        let table_names = table_names(&tables, &names);
        names.extend(table_names);
        let tests: Vec<TestPlan> = drafts
            .into_iter()
            .map(|d| (d.body, d.calls, d.replayed, None))
            .chain(tables.into_iter().map(|(_, body, table)| {
                let calls = table.rows.iter().flat_map(|r| r.calls.iter().copied());
                let replayed = table.rows.iter().flat_map(|r| r.replayed.iter().copied());
                (body, calls.collect(), replayed.collect(), Some(table))
            }))
            .zip(names)
            .map(|((body, calls, replayed, table), name)| {
                mocks.extend(body.mock_decls.iter().cloned());
                uses.extend(body.trait_uses.iter().cloned());
                TestPlan {
                    name,
                    body,
                    calls,
                    replayed,
                    table,
                }
            })
            .collect();
        summary.tests_written += tests.len();
        summary.method_tests += tests
            .iter()
            .filter(|t| !t.body.setup.is_empty() && t.body.callee != t.body.function_path)
            .count();
        summary.mock_tests += tests.iter().filter(|t| !t.body.mocks.is_empty()).count();
        summary.mocks += mocks.len();
        let needs_predicates = tests
            .iter()
            .flat_map(|t| &t.body.mocks)
            .flat_map(|m| &m.expectations)
            .any(|e| !e.with.is_empty());
        let needs_sequence = tests.iter().any(|t| t.body.sequence);
        files.push(FilePlan {
            file_name,
            module_path: module_path.join("::"),
            tests,
            mocks: mocks.into_iter().collect(),
            uses: uses.into_iter().collect(),
            needs_predicates,
            needs_sequence,
        });
    }

    summary.unsupported_functions = unsupported_by_fn
        .into_iter()
        .map(
            |((function, reason, public_api), calls)| UnsupportedFunction {
                function: function.to_string(),
                reason: reason.to_string(),
                calls,
                public_api,
            },
        )
        .collect();
    // The most called first: what holds the most calls back.
    summary.unsupported_functions.sort_by(|a, b| {
        b.calls
            .cmp(&a.calls)
            .then_with(|| a.function.cmp(&b.function))
    });

    let program = Path::new(&trace.run.info.program).file_name().map_or_else(
        || trace.run.info.program.clone(),
        |n| n.to_string_lossy().into_owned(),
    );
    Plan {
        crate_name: api.crate_name.clone(),
        program,
        run_id: trace.run.id.0,
        files,
        summary,
        public_paths: public_paths(api),
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
    out.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.cmp(b)));
    out.dedup();
    out
}

struct Draft {
    body: Body,
    name: NameParts,
    /// The recorded calls it stands for, in recording order.
    calls: Vec<u64>,
    replayed: Vec<u64>,
    /// Made from a call kept only as a table row: written on its own only when its function
    /// has fewer tests than the cap.
    row_only: bool,
    /// How many of `calls` were kept only as table rows.
    row_calls: usize,
}

/// A table test to write: its function's name slug, its body with `case.N` holes, its rows.
type TableDraft = (String, Body, Table);

/// The table tests the drafts past the cap make (see [`crate::plan::table`]), at most `max_rows`
/// rows per function; returns them and the drafts no table took.
fn tables_of(over: Vec<Draft>, max_rows: usize) -> (Vec<TableDraft>, Vec<Draft>) {
    let bodies: Vec<&Body> = over.iter().map(|d| &d.body).collect();
    let (found, alone) = table::gather(&bodies, max_rows);
    let mut over: Vec<Option<Draft>> = over.into_iter().map(Some).collect();
    let mut tables = Vec::new();
    for (shape, rows) in found {
        let mut subject = String::new();
        let rows = rows
            .into_iter()
            .filter_map(|(i, values)| {
                let d = over[i].take()?;
                if subject.is_empty() {
                    subject = d.name.subject.clone();
                }
                Some(Row {
                    values,
                    calls: d.calls,
                    replayed: d.replayed,
                })
            })
            .collect();
        tables.push((
            subject,
            shape.body,
            Table {
                columns: shape.columns,
                rows,
            },
        ));
    }
    let alone = alone.into_iter().filter_map(|i| over[i].take()).collect();
    (tables, alone)
}

/// `format_recorded_cases` for a table of `format`'s calls, kept apart from `taken` and each
/// other (`format_recorded_cases_2`).
fn table_names(tables: &[TableDraft], taken: &[String]) -> Vec<String> {
    let mut used: BTreeSet<String> = taken.iter().cloned().collect();
    tables
        .iter()
        .map(|(subject, _, _)| {
            let base = format!("{subject}_recorded_cases");
            let mut name = base.clone();
            let mut n = 1;
            while used.contains(&name) {
                n += 1;
                name = format!("{base}_{n}");
            }
            used.insert(name.clone());
            name
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::crate_api::CrateApi;
    use carve_storage::{
        Arg, Call, CallId, FunctionId, FunctionInfo, Language, Outcome, ParamInfo, Run, RunId,
        RunInfo, Value,
    };

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
