//! The plan as plain data: the files to write, their tests, the options that chose them and
//! the counts of recorded calls by fate (with the calls behind them). What render reads and the
//! report holds.

use std::collections::{BTreeMap, BTreeSet};

use carve_storage::CallId;
use serde::Serialize;

use crate::body::{Body, MockDecl};
use crate::plan::table::Table;
use crate::reasons::{UNDECODED, UNSUPPORTED_TYPE};

/// Everything to write, in writing order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// The library crate the tests call (`expr`).
    pub crate_name: String,
    /// The recorded program's file name.
    pub program: String,
    pub run_id: i64,
    /// The cargo features the recorded program was built with beyond the crate's defaults
    /// ([`carve_storage::RunInfo::features`]): every carved file needs them.
    pub features: Vec<String>,
    /// One per module with at least one test, sorted by module path.
    pub files: Vec<FilePlan>,
    pub summary: Summary,
    /// Paths the tests must spell differently from where the items are defined, because a
    /// `pub use` is what makes them reachable: (`shop::store::Store`, `shop::Store`); a path
    /// ending in `::` maps everything under a module. Applied to the rendered files.
    pub public_paths: Vec<(String, String)>,
    /// The recorded program's types a test may declare a stand-in for; each file declares
    /// those it names (their paths are in `public_paths`, spelled by the stand-in's name).
    pub stand_ins: crate::read::stand_ins::StandIns,
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
    /// Ids of every recorded call its arrange steps make again (history steps too): distil
    /// weighs them as calls the test runs.
    #[serde(skip)]
    pub arranged: Vec<u64>,
    /// A table-driven test: `body` is written once, with `case.N` for the values of each
    /// row (see [`crate::plan::table`]); `calls` and `replayed` are all its rows'.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<Table>,
    /// A story (`distil/fold/story.rs`): its steps check, where they make it, the calls of
    /// the kept tests that took the same first steps.
    pub story: bool,
    /// What its name was made of (`naming.rs`), for a test of one call: distilling names
    /// the tests a file keeps again from them (`distil/rename.rs`). `None` for a table.
    #[serde(skip)]
    pub name_parts: Option<crate::naming::NameParts>,
}

/// Which tests to keep (issue 4 item 6). The default keeps one test per equivalence class and
/// any number per function.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// One test per recorded call, equivalent calls included (`--all`).
    pub keep_equivalent: bool,
    /// At most this many tests per function (`--max-per-function N`): those standing for the
    /// most recorded calls are kept; the calls of the others are skipped as
    /// [`crate::reasons::OVER_MAX_PER_FUNCTION`].
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
    /// Recorded calls whose tests check only what the recording says of the result, no getter,
    /// `Display` or `Debug` beyond it (but what the getters of a value told only by its variant
    /// answer on this build): verification found the stronger test failing (a value that hangs
    /// on state the test does not rebuild: a global counter, a temporary path).
    pub weak_oracles: BTreeSet<u64>,
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

/// A function with recorded calls not carved because of `--max-per-function`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OverMax {
    /// As recorded (`hotloop::mix`).
    pub function: String,
    pub calls: usize,
}
