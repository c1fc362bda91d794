//! Which recorded calls become which tests: a pure function from a trace and the crate's API to
//! plain data, ready to render.
//!
//! Each call is sorted into one of: carved (a test, or a duplicate of one), skipped (its function
//! is callable but the call cannot be replayed: `undecoded`, `did not return`, `unsupported
//! type`, `receiver not rebuilt`, `trait not mockable`, `mock not replayable`, `needs mockall`),
//! private (its function is not reachable from outside the crate), or not supported yet
//! (closures, binary-only or other crates' functions...). What one test does is built by
//! [`crate::scenario`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use carve_storage::{closing_angle, CallId, FunctionInfo, Language, Trace, Value};
use serde::Serialize;

use crate::api::{CrateApi, FnApi, ModuleApi, TypeApi};
use crate::literal::{self, DeclType, LiteralError, Position, Prim};
use crate::naming::{self, NameParts};
use crate::scenario::{self, Body, MockDecl};
use crate::{display, instance, std_traits};

/// Skip reason: an argument or the return value is not an exact scalar or string.
pub const UNDECODED: &str = "undecoded";
/// Skip reason: the call panicked, unwound, or was cut off by the end of the process.
pub const DID_NOT_RETURN: &str = "did not return";
/// Skip reason: a value does not fit the declared type, or the type takes no literal.
pub const UNSUPPORTED_TYPE: &str = "unsupported type";
/// A name in the trace (a field or variant) is not Rust syntax where a test would write it: the
/// trace is damaged or was made to inject code, and the name is never written.
pub const NOT_RUST_SYNTAX: &str = "name in the trace is not Rust syntax";
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
}

/// What the test checks about the result.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Assertion {
    /// `assert_eq!(result, <expected>)`.
    Eq { expected: String },
    /// `assert!(result)`.
    True,
    /// `assert!(!result)`.
    False,
    /// `assert!(result.is_nan())`.
    Nan,
    /// The function returns `()`: the call itself is the test.
    Unit,
    /// The result cannot be compared as a whole (no `PartialEq`, or a private field): what of
    /// it is observable (getters, public fields) is asserted, as the test's effects. `unwrap`
    /// (`.unwrap()`) gets the value out of the `Ok` or `Some` it was returned in.
    Observed { unwrap: Option<String> },
    /// `assert!(matches!(result, <pattern>))`: a result `==` cannot compare, checked by its
    /// variant and the parts a pattern can name (see [`crate::pattern`]).
    Matches { pattern: String },
    /// `#[should_panic(expected = <expected>)]`: the recorded call panicked. `expected` is a
    /// Rust string literal of the longest exact part of the recorded message, `None` when the
    /// message was not recorded.
    Panics { expected: Option<String> },
}

/// The part of a recorded panic message a test can expect exactly: the longest run of literal
/// text (formatted arguments were recorded as `{…}`), as a Rust string literal.
pub(crate) fn expected_panic(message: &str) -> Option<String> {
    let piece = message
        .split("{…}")
        .map(str::trim)
        .max_by_key(|p| p.len())
        .filter(|p| !p.is_empty())?;
    Some(crate::syntax::str_lit(piece))
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
}

/// Skip reason: the function already has `--max-per-function` tests.
pub const OVER_MAX_PER_FUNCTION: &str = "over --max-per-function";
/// Skip reason: the test needs a mock of a trait whose name another trait's mock in the same
/// file already has.
pub const MOCK_NAME_CLASH: &str = "mock name clash";

/// Keeps at most `max` drafts per function, those standing for the most calls (in their order
/// otherwise); returns the others.
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
        indices.sort_by_key(|&i| std::cmp::Reverse(drafts[i].calls.len()));
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
    let cx = scenario::Ctx::new(trace, api, &targets, &children);
    let has_mockall = api.dev_dependencies.contains("mockall");
    // module path -> tests under construction, and where each body already is.
    let mut modules: BTreeMap<Vec<String>, Vec<Draft>> = BTreeMap::new();
    let mut index: HashMap<(Vec<String>, Body, Option<u64>), usize> = HashMap::new();

    let mut unsupported_by_fn: BTreeMap<(&str, &str, bool), usize> = BTreeMap::new();
    for call in &trace.calls {
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
        let call = if callable.display {
            match display::as_to_string(call) {
                Ok(c) => {
                    as_to_string = c;
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
        let (body, name) = match scenario::carve(&cx, call, callable) {
            Ok(carved) => carved,
            Err(reason) => {
                summary.skip(call.id.0, &callable.call_path, reason);
                if reason == scenario::UNTESTABLE {
                    if let Some(last) = summary.skipped_calls.last_mut() {
                        last.detail = scenario::world_read(&cx, call);
                    }
                }
                continue;
            }
        };
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
                }
            }
            None => {
                let list = modules.entry(callable.module.clone()).or_default();
                index.insert(key, list.len());
                list.push(Draft {
                    body,
                    name,
                    calls: vec![call.id.0],
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
        if let Some(max) = options.max_per_function {
            for d in cap_per_function(&mut drafts, max) {
                summary.uncarve(&d.body.function_path, &d.calls, OVER_MAX_PER_FUNCTION);
            }
        }
        let names = naming::test_names(&drafts.iter().map(|d| d.name.clone()).collect::<Vec<_>>());
        let mut module_path = vec![api.crate_name.clone()];
        module_path.extend(module.iter().cloned());
        let mut file_name = naming::file_name(&module_path);
        let seen = used_names.entry(file_name.clone()).or_default();
        *seen += 1;
        if *seen > 1 {
            file_name = format!("{}_{}.rs", file_name.trim_end_matches(".rs"), seen);
        }
        let mut mocks: BTreeSet<MockDecl> = BTreeSet::new();
        let mut uses: BTreeSet<String> = BTreeSet::new();
        let tests: Vec<TestPlan> = drafts
            .into_iter()
            .zip(names)
            .map(|(d, name)| {
                mocks.extend(d.body.mock_decls.iter().cloned());
                uses.extend(d.body.trait_uses.iter().cloned());
                TestPlan {
                    name,
                    body: d.body,
                    calls: d.calls,
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

/// `source` with every path in `public_paths` spelled the public way. A path only matches
/// whole: not inside a longer identifier or path (`xshop::store::Store`, `Storehouse`).
pub fn spell_public(source: &str, public_paths: &[(String, String)]) -> String {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = source.to_string();
    for (from, to) in public_paths {
        let mut result = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find(from.as_str()) {
            let before = if at > 0 {
                rest[..at].chars().last()
            } else {
                result.chars().last()
            };
            let after = rest[at + from.len()..].chars().next();
            let whole_start = !before.is_some_and(|c| ident(c) || c == ':');
            let whole_end = from.ends_with("::") || !after.is_some_and(ident);
            result.push_str(&rest[..at]);
            if whole_start && whole_end {
                result.push_str(to);
            } else {
                result.push_str(from);
            }
            rest = &rest[at + from.len()..];
        }
        result.push_str(rest);
        out = result;
    }
    out
}

/// Where a recorded function lives, as far as tests are concerned.
pub(crate) enum Target {
    Callable(Box<Callable>),
    Private,
    Unsupported(&'static str),
}

/// A public, reachable function or method with its signature.
pub(crate) struct Callable {
    /// Module path below the crate root.
    pub module: Vec<String>,
    /// The path a test writes to call it.
    pub call_path: String,
    /// What names start with (`parser_precedence`).
    pub subject: String,
    pub api: FnApi,
    /// The type of an associated function or method, as recorded (`abc::C`).
    pub self_type: Option<String>,
    /// The trait of a trait method (`abc::Asker`): tests import it.
    pub via_trait: Option<String>,
    /// A `Display::fmt` call, carved as `to_string()` (see [`display`]).
    pub display: bool,
}

struct Draft {
    body: Body,
    name: NameParts,
    /// The recorded calls it stands for, in recording order.
    calls: Vec<u64>,
}

fn resolve(api: &CrateApi, info: &FunctionInfo) -> Target {
    if info.language != Language::Rust {
        return Target::Unsupported("not Rust");
    }
    if let Some((ty, tr, method)) =
        split_trait_impl(&info.path).or_else(|| split_impl_block(&info.path))
    {
        return resolve_trait_impl(api, info, &ty, &tr, &method);
    }
    // `module::<impl Type<Args>>::method`, an inherent impl written in another module: no test
    // can call it when the type is private.
    if let Some(ty) = inherent_impl_type(&info.path) {
        let base = literal::strip_generics(&ty);
        if api.declared_type(base).is_some() && api.public_type(base).is_none() {
            return Target::Private;
        }
    }
    let segments = match parse_fn_path(&info.path) {
        Ok(segments) => segments,
        Err(kind) => return Target::Unsupported(kind),
    };
    let Some((krate, rest)) = segments.split_first() else {
        return Target::Unsupported("unknown function");
    };
    if krate != &api.crate_name || rest.is_empty() {
        return Target::Unsupported("other crate");
    }
    if let Some(outside) = outside_lib(api, info) {
        return outside;
    }
    let (fn_name, owners) = match rest.split_last() {
        Some(split) => split,
        None => return Target::Unsupported("unknown function"),
    };
    // A free function of module `owners`...
    if let Some((module, f)) = api
        .find_module(owners)
        .and_then(|m| Some((m, m.functions.get(fn_name)?)))
    {
        let full = format!("{}::{}", api.crate_name, rest.join("::"));
        if !(f.public && (module.reachable || api.public_path(&full).is_some())) {
            return Target::Private;
        }
        return callable(api, info, module, None, f);
    }
    // ...or an associated function of type `owners.last()`.
    if let Some((type_name, module_path)) = owners.split_last() {
        if let Some(module) = api.find_module(module_path) {
            if let Some(ty) = module.types.get(type_name) {
                if let Some(f) = ty.functions.get(fn_name) {
                    let type_path = format!("{}::{}", api.crate_name, owners.join("::"));
                    let reachable = module.reachable || api.public_path(&type_path).is_some();
                    if !(reachable && ty.public && f.public) {
                        return Target::Private;
                    }
                    return callable(api, info, module, Some(ty), f);
                }
            }
        }
    }
    Target::Unsupported("not found in the source")
}

/// A source file we can see that is not part of the lib: the binary (or another crate).
fn outside_lib(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let file = info.decl_file.as_deref().map(Path::new)?;
    if !file.is_file() || api.contains_file(file) {
        return None;
    }
    let in_crate = std::fs::canonicalize(file)
        .ok()
        .zip(std::fs::canonicalize(&api.dir).ok())
        .is_some_and(|(f, d)| f.starts_with(d));
    Some(Target::Unsupported(if in_crate {
        "binary only"
    } else {
        "other crate"
    }))
}

/// `m::<impl abc::Tree<abc::Item>>::append` → `abc::Tree<abc::Item>` (legacy mangling's
/// spelling of an inherent impl).
fn inherent_impl_type(path: &str) -> Option<String> {
    let at = path.find("<impl ")?;
    let inner = &path[at + 1..];
    let end = closing_angle(inner)?;
    let ty = inner[..end].strip_prefix("impl ")?;
    (split_top(ty, " for ").len() == 1).then(|| ty.trim().to_string())
}

/// `<abc::B as abc::Asker>::ask` → (`abc::B`, `abc::Asker`, `ask`).
fn split_trait_impl(path: &str) -> Option<(String, String, String)> {
    let (ty, tr, method) = split_angled(path.strip_prefix('<')?, "", " as ")?;
    Some((ty, tr, method))
}

/// `(type, trait, method)` of `module::<impl Trait for Type>::method`, the spelling of legacy
/// symbol mangling.
fn split_impl_block(path: &str) -> Option<(String, String, String)> {
    let at = path.find("<impl ")?;
    let (tr, ty, method) = split_angled(&path[at + 1..], "impl ", " for ")?;
    Some((ty, tr, method))
}

/// `A SEP B>::method` (the text after a `<`, whose inside starts with `prefix`) →
/// (`A`, `B`, `method`).
fn split_angled(inner_and_rest: &str, prefix: &str, sep: &str) -> Option<(String, String, String)> {
    let end = closing_angle(inner_and_rest)?;
    let inner = inner_and_rest[..end].strip_prefix(prefix)?;
    let parts = split_top(inner, sep);
    let [first, second] = parts.as_slice() else {
        return None;
    };
    let method = inner_and_rest[end + 1..].trim_start_matches("::");
    Some((
        first.trim().to_string(),
        second.trim().to_string(),
        method.to_string(),
    ))
}

/// The trait of a `<Type as Trait>::method` path, without generic arguments.
pub(crate) fn trait_of_impl(path: &str) -> Option<String> {
    split_trait_impl(path).map(|(_, tr, _)| literal::strip_generics(&tr).to_string())
}

/// A trait method called on a type of the crate: callable as a method when both are public.
fn resolve_trait_impl(
    api: &CrateApi,
    info: &FunctionInfo,
    ty: &str,
    tr: &str,
    method: &str,
) -> Target {
    if method.contains("{{closure}}") || method.contains("{closure#") {
        return Target::Unsupported("closure");
    }
    if method.contains(['{', '<', ':']) {
        return Target::Unsupported("trait impl");
    }
    let ty_segments = match parse_fn_path(ty) {
        Ok(s) => s,
        Err(_) => return Target::Unsupported("trait impl"),
    };
    let trait_base = literal::strip_generics(tr);
    if ty_segments.first() != Some(&api.crate_name) {
        return resolve_foreign_self_impl(api, info, ty, tr, method);
    }
    // A trait impl on a private type (`impl<K: Hash> Hash for KeyRef<K>`) is no public API,
    // whatever the trait.
    let base = literal::strip_generics(ty);
    if api.declared_type(base).is_some() && api.public_type(base).is_none() {
        return Target::Private;
    }
    if display::is_display(trait_base) {
        if let Some(outside) = outside_lib(api, info) {
            return outside;
        }
        return display::resolve(api, info, ty);
    }
    if let Some(public_trait) = std_traits::public_path(trait_base) {
        if let Some(outside) = outside_lib(api, info) {
            return outside;
        }
        return resolve_std_trait_impl(api, info, ty, tr, public_trait, method);
    }
    if tr != trait_base {
        return Target::Unsupported("trait impl");
    }
    if let Some(outside) = outside_lib(api, info) {
        return outside;
    }
    // The type and trait come from the trace's function name: written only when the crate's
    // source declares them, and as Rust paths (`&mut D`, a blanket impl's Self, is not one).
    if !(crate::syntax::is_path(base) && crate::syntax::is_path(tr)) {
        return Target::Unsupported("trait impl on a reference or type parameter");
    }
    let (Some(_), Some(trait_api)) = (api.public_type(base), api.public_trait(tr)) else {
        return Target::Private;
    };
    let Some(m) = trait_api.methods.iter().find(|m| m.name == method) else {
        return Target::Unsupported("not found in the source");
    };
    let Some((_, module)) = ty_segments.split_first() else {
        return Target::Unsupported("trait impl");
    };
    let module = module[..module.len().saturating_sub(1)].to_vec();
    Target::Callable(Box::new(Callable {
        module,
        call_path: format!("{base}::{method}"),
        subject: m.name.clone(),
        api: FnApi {
            name: m.name.clone(),
            ident: m.name.clone(),
            public: true,
            has_receiver: true,
            mut_receiver: m.mut_receiver,
            params: m.params.clone(),
            ret: m.ret.clone(),
            blocker: None,
            uninferable_generics: 0,
        },
        self_type: Some(base.to_string()),
        via_trait: Some(tr.to_string()),
        display: false,
    }))
}

/// A method of one of the crate's public traits implemented by a standard or foreign type
/// (`impl FromHex for [u8; 4]`, `impl Shout for str`): called by its full path, the receiver
/// written as the first argument.
fn resolve_foreign_self_impl(
    api: &CrateApi,
    info: &FunctionInfo,
    ty: &str,
    tr: &str,
    method: &str,
) -> Target {
    let trait_base = literal::strip_generics(tr);
    if tr != trait_base
        || !crate::syntax::is_path(trait_base)
        || api.public_trait(trait_base).is_none()
    {
        return Target::Unsupported("trait impl");
    }
    let written = std_traits::std_spelling(ty);
    // The Self type as a test writes it; a type parameter (a blanket impl) is not one.
    let Ok(self_ty) = syn::parse_str::<syn::Type>(&written) else {
        return Target::Unsupported("trait impl");
    };
    // A one-segment name that is no primitive is a type parameter (a blanket impl).
    if let syn::Type::Path(p) = &self_ty {
        let one = p.path.segments.len() == 1 && p.qself.is_none();
        let name = p.path.segments[0].ident.to_string();
        if one && name != "str" && Prim::from_name(&name).is_none() {
            return Target::Unsupported("trait impl on a type parameter");
        }
    }
    if let Some(outside) = outside_lib(api, info) {
        return outside;
    }
    let f = match std_traits::path_call_api(info, method) {
        Ok(f) => f,
        Err(why) => return Target::Unsupported(why),
    };
    Target::Callable(Box::new(Callable {
        module: Vec::new(),
        call_path: format!("<{written} as {trait_base}>::{method}"),
        subject: f.name.clone(),
        api: f,
        self_type: None,
        via_trait: None,
        display: false,
    }))
}

/// A method of a standard trait implemented by a public type of the crate, called through the
/// trait's public path (see [`std_traits`]).
fn resolve_std_trait_impl(
    api: &CrateApi,
    info: &FunctionInfo,
    ty: &str,
    tr: &str,
    public_trait: &str,
    method: &str,
) -> Target {
    let base = literal::strip_generics(ty);
    if !(crate::syntax::is_path(base) && crate::syntax::is_ident(method)) {
        return Target::Unsupported("trait impl on a reference or type parameter");
    }
    if api.public_type(base).is_none() {
        return Target::Private;
    }
    // `<shapes::Stack<T> as Default>::default` is called on the recorded instance.
    let written = if ty == base {
        ty.to_string()
    } else {
        match instance::instance_type(info, base, api) {
            Some(written) => written,
            None => return Target::Unsupported("trait impl on a generic type"),
        }
    };
    let f = match std_traits::method_api(info, method) {
        Ok(f) => f,
        Err(why) => return Target::Unsupported(why),
    };
    // `From<u64>` is written `From<_>`: the argument's recorded type picks the impl.
    let generic_args = tr.len() > literal::strip_generics(tr).len();
    let trait_written = if generic_args {
        let inner = &tr[literal::strip_generics(tr).len() + 1..tr.len() - 1];
        let n = split_top(inner, ",").len();
        format!("{public_trait}<{}>", vec!["_"; n].join(", "))
    } else {
        public_trait.to_string()
    };
    let module = parse_fn_path(base)
        .ok()
        .and_then(|segments| {
            segments
                .get(1..segments.len().saturating_sub(1))
                .map(<[String]>::to_vec)
        })
        .unwrap_or_default();
    Target::Callable(Box::new(Callable {
        module,
        call_path: format!("<{written} as {trait_written}>::{method}"),
        subject: f.name.clone(),
        api: f,
        self_type: Some(base.to_string()),
        via_trait: Some(public_trait.to_string()),
        display: false,
    }))
}

fn callable(
    api: &CrateApi,
    info: &FunctionInfo,
    module: &ModuleApi,
    ty: Option<&TypeApi>,
    f: &FnApi,
) -> Target {
    if let Some(blocker) = f.blocker {
        return Target::Unsupported(blocker);
    }
    let mut call_path = vec![api.crate_name.clone()];
    call_path.extend(module.path.iter().cloned());
    let mut subject = String::new();
    if let Some(ty) = ty {
        call_path.push(ty.name.clone());
        subject.push_str(&ty.name);
        subject.push('_');
    }
    let self_type = ty.map(|_| {
        call_path
            .iter()
            .map(|s| s.trim_start_matches("r#"))
            .collect::<Vec<_>>()
            .join("::")
    });
    // A generic type's associated function is called on the recorded instance
    // (`Stack::<u32>::new()`; see [`instance`]); `impl<R: Repo> Service<R>` leaves to
    // inference the parameters carve fills in with mocks. A method needs no instance: its
    // receiver is rebuilt by calls that name it.
    if let (Some(ty), Some(self_type)) = (ty, &self_type) {
        if ty.generic && !f.has_receiver {
            let args = instance::recorded_args(info, self_type);
            let fish = args
                .as_deref()
                .map(|a| instance::turbofish(a, api, !ty.unmockable_generic))
                .unwrap_or_default();
            if fish.is_empty() && ty.unmockable_generic {
                return Target::Unsupported("generic instance not nameable");
            }
            if let Some(last) = call_path.last_mut() {
                last.push_str(&fish);
            }
        }
    }
    // A generic function whose arguments do not pin its type parameters down names the
    // recorded instance: `TextDiff::from_lines::<&str, &str, str>(..)`, `x.parse_as::<u8>()`.
    let mut f = f.clone();
    if f.uninferable_generics > 0 {
        match instance::fn_turbofish(&info.name, f.uninferable_generics, api) {
            Some(fish) => f.ident.push_str(&fish),
            None => return Target::Unsupported("generic instance not nameable"),
        }
    }
    call_path.push(f.ident.clone());
    subject.push_str(&f.name);
    Target::Callable(Box::new(Callable {
        module: module.path.clone(),
        call_path: call_path.join("::"),
        subject,
        api: f,
        self_type,
        via_trait: None,
        display: false,
    }))
}

/// Splits a demangled path into plain segments (`expr::parser::Parser::new`), dropping generic
/// arguments; `<T>::f` (an inherent impl in v0 mangling) becomes `T::f`.
fn parse_fn_path(path: &str) -> Result<Vec<String>, &'static str> {
    if path.contains("{{closure}}") || path.contains("{closure#") {
        return Err("closure");
    }
    if path.contains("{{") || path.contains("{shim") {
        return Err("compiler-generated");
    }
    let mut segments = Vec::new();
    let rest = if let Some(inner_and_rest) = path.strip_prefix('<') {
        let end = closing_angle(inner_and_rest).ok_or("unknown function")?;
        let inner = &inner_and_rest[..end];
        if split_top(inner, " as ").len() > 1 {
            return Err("trait impl");
        }
        segments.extend(split_top(inner, "::"));
        inner_and_rest[end + 1..].trim_start_matches("::")
    } else {
        path
    };
    segments.extend(split_top(rest, "::"));
    let cleaned: Vec<String> = segments
        .into_iter()
        .map(|s| strip_generics(&s).trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if cleaned
        .iter()
        .any(|s| s.contains(['<', '>', ' ', '&', '*', '[', '(', '{']))
    {
        return Err("unknown function");
    }
    Ok(cleaned)
}

/// `s` split at each `sep` outside any `<>`, `()` or `[]`.
pub(crate) fn split_top(s: &str, sep: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if rest.starts_with("->") {
            i += 2;
            continue;
        }
        if rest.starts_with(['<', '(', '[']) {
            depth += 1;
        } else if rest.starts_with(['>', ')', ']']) {
            depth = depth.saturating_sub(1);
        } else if depth == 0 && rest.starts_with(sep) {
            parts.push(s[start..i].to_string());
            i += sep.len();
            start = i;
            continue;
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    parts.push(s[start..].to_string());
    parts
}

fn strip_generics(segment: &str) -> String {
    match segment.find('<') {
        Some(i) => segment[..i].to_string(),
        None => segment.to_string(),
    }
}

/// What the test checks about the returned value, and the slug naming it.
pub(crate) fn assertion(
    ret: Option<&Value>,
    decl: &DeclType,
    facts: &dyn literal::TypeFacts,
) -> Result<(Assertion, Option<String>), &'static str> {
    let Some(value) = ret else {
        return match decl {
            DeclType::Unit => Ok((Assertion::Unit, None)),
            _ => Err(UNDECODED),
        };
    };
    if !value.is_scalar_or_string()
        && !matches!(value, Value::Ref { target, .. } if target.is_scalar_or_string())
    {
        // `Ok(43i32)`, `abc::User { .. }`: compared whole when every type in it allows.
        if !value.is_exact() {
            return Err(UNDECODED);
        }
        let expected = literal::render_value(value, true, facts).map_err(reason)?;
        return Ok((Assertion::Eq { expected }, Some(naming::value_slug(value))));
    }
    if let (Value::Unit, DeclType::Unit) = (value, decl) {
        return Ok((Assertion::Unit, None));
    }
    let slug = Some(naming::value_slug(value));
    if literal::is_nan(value) {
        // Still check that a float is what the declaration allows.
        literal::render(value, decl, Position::Expected).map_err(reason)?;
        return Ok((Assertion::Nan, slug));
    }
    if let Value::Bool { value: b } = value {
        let plain_bool = matches!(
            decl,
            DeclType::Prim(Prim::Bool) | DeclType::Generic(_) | DeclType::Other(_)
        );
        if plain_bool {
            literal::render(value, decl, Position::Expected).map_err(reason)?;
            return Ok((
                if *b {
                    Assertion::True
                } else {
                    Assertion::False
                },
                slug,
            ));
        }
    }
    let expected = literal::render(value, decl, Position::Expected).map_err(reason)?;
    Ok((Assertion::Eq { expected }, slug))
}

pub(crate) fn reason(e: LiteralError) -> &'static str {
    match e {
        LiteralError::Undecoded => UNDECODED,
        LiteralError::UnsupportedType(_) => UNSUPPORTED_TYPE,
        LiteralError::Refused(_) => NOT_RUST_SYNTAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::{Arg, Call, CallId, FunctionId, Outcome, ParamInfo, Run, RunId, RunInfo};

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
                    carve_version: "0".to_string(),
                },
                end: None,
            },
            functions,
            calls,
            objects: Vec::new(),
        }
    }

    #[test]
    fn paths_are_respelled_as_pub_use_makes_them_public_and_only_whole() {
        let paths = vec![
            ("shop::store::Store".to_string(), "shop::Store".to_string()),
            ("shop::util::".to_string(), "shop::".to_string()),
        ];
        assert_eq!(
            spell_public(
                "let s = shop::store::Store::new(shop::util::pad(\"x\")); xshop::store::Store; shop::store::Storehouse",
                &paths
            ),
            "let s = shop::Store::new(shop::pad(\"x\")); xshop::store::Store; shop::store::Storehouse"
        );
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
    fn a_panic_test_expects_the_longest_exact_part_of_the_message() {
        assert_eq!(
            expected_panic("not implemented: the question is not known yet").as_deref(),
            Some("\"not implemented: the question is not known yet\"")
        );
        assert_eq!(
            expected_panic("index out of bounds: the len is {…} but the index is {…}").as_deref(),
            Some("\"index out of bounds: the len is\"")
        );
        assert_eq!(expected_panic("{…}"), None);
        assert_eq!(
            expected_panic("say \"hi\"\n").as_deref(),
            Some("\"say \\\"hi\\\"\"")
        );
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

    #[test]
    fn demangled_paths_are_split_into_segments() {
        assert_eq!(
            parse_fn_path("expr::lexer::precedence").unwrap(),
            ["expr", "lexer", "precedence"]
        );
        assert_eq!(
            parse_fn_path("<expr::parser::Parser>::new").unwrap(),
            ["expr", "parser", "Parser", "new"]
        );
        assert_eq!(
            parse_fn_path("expr::Stack<T>::push").unwrap(),
            ["expr", "Stack", "push"]
        );
        assert_eq!(
            parse_fn_path("<abc::A as abc::Answerer>::answer"),
            Err("trait impl")
        );
        assert_eq!(parse_fn_path("abc::main::{{closure}}"), Err("closure"));
        assert_eq!(parse_fn_path("<abc::A"), Err("unknown function"));
        assert_eq!(parse_fn_path("<&[u8]>::len"), Err("unknown function"));
    }

    #[test]
    fn inherent_impls_in_legacy_spelling_name_their_type() {
        assert_eq!(
            inherent_impl_type("md::parse::<impl md::tree::Tree<md::parse::Item>>::append")
                .unwrap(),
            "md::tree::Tree<md::parse::Item>"
        );
        assert_eq!(
            inherent_impl_type("md::<impl core::fmt::Debug for md::A>::fmt"),
            None
        );
        assert_eq!(inherent_impl_type("md::A::new"), None);
    }
}
