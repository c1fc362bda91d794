//! One recorded call to one test body: the receiver rebuilt through its recorded constructor, the
//! arguments as literals, the call's trait-object dependencies as mock trees, the result and
//! field effects as assertions.
//!
//! Dependencies are the `Box<dyn Trait>` / `&dyn Trait` values the call can reach from its
//! receiver's constructor and its arguments. Every recorded call made through such an object
//! (`<Concrete as Trait>::method` with that object as `self`) becomes an expectation on a mock of
//! the trait; a trait object such a call returned becomes a child mock. Calls into the crate's
//! concrete code run for real, so the walk goes through them.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

use carve_storage::{Call, CallId, FileRead, FunctionId, ObjectId, Outcome, Trace, Value};
use serde::Serialize;

use crate::act::target::{Callable, Target};
use crate::arrange::literal::{self, Position};
use crate::arrange::sequence::{self, Transition};
use crate::assert::debug_repr::debug_repr;
use crate::assert::observe::{Assertion, DID_NOT_RETURN, UNDECODED, UNSUPPORTED_TYPE};
use crate::naming::{self, NameParts};
use crate::read::crate_api::{CrateApi, ParamApi, TraitApi};
use crate::read::types::DeclType;
use crate::syntax;

mod closure;
mod history;
mod inner;
mod text;
mod world;

pub use history::HISTORY_NOT_REPLAYABLE;
pub use inner::{building_call, holding_call};

/// Skip reason: the receiver or an object argument has no recorded constructor giving its state
/// and cannot be written as a struct literal.
pub const RECEIVER_NOT_REBUILT: &str = "receiver not rebuilt";
/// Skip reason: an argument is a closure, or a value holding one (an iterator adapter,
/// `words.iter().map(|w| ..)`), which no test can write from the recording: a closure the
/// replay-closure rule (`closure.rs`) cannot rebuild (the library's own, one whose calls were
/// not recorded, one the call kept, an answer no literal gives).
pub const CLOSURE_ARGUMENT: &str = "closure argument";
/// Skip reason: a dependency's trait cannot be mocked (private, generic, associated items...).
pub const NOT_MOCKABLE: &str = "trait not mockable";
/// Skip reason: a mock would have to return a value carve cannot write, or a mocked call did
/// not return.
pub const MOCK_UNREPLAYABLE: &str = "mock not replayable";
/// Skip reason: the call, or code it runs for real in the test, read what a test cannot
/// control (the clock, randomness, the environment, files, the network...) outside any trait
/// that a mock could stand in for.
pub const UNTESTABLE: &str = "untestable";

/// A mock object a test sets up, with what it expects, in the order to write them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct MockSetup {
    /// `mock_a`.
    pub var: String,
    /// `MockAnswerer`.
    pub mock_type: String,
    /// Needs `let mut` (it has expectations).
    pub mutable: bool,
    /// `seq_statement`: the `Sequence` its expectations are checked in, when their order is
    /// part of the behaviour (see [`mock_setups`]).
    pub sequence: Option<String>,
    pub expectations: Vec<Expectation>,
}

/// `mock.expect_method().with(..).times(n).in_sequence(&mut seq).return_const(..)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Expectation {
    pub method: String,
    /// One predicate per parameter (`eq(1usize)`, `always()`); empty: no `.with`.
    pub with: Vec<String>,
    pub times: usize,
    /// The `Sequence` it is checked in (`seq_statement`, or `seq` across mocks), if any.
    pub sequence: Option<String>,
    pub returns: Returns,
}

/// What a mocked call gives back.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Returns {
    /// `.return_const(())`.
    Unit,
    /// `.return_const(<expr>)`.
    Const { expr: String },
    /// `.return_once(move |<pattern>| Box::new(<var>))`: a child mock.
    Mock { var: String, pattern: String },
}

/// `let [mut] <var> = <expr>;` before the call; with `repeat` above 1 (a replayed call made
/// that many times in a row, `it.next()`), `for _ in 0..repeat { let _ = <expr>; }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Binding {
    pub var: String,
    pub mutable: bool,
    pub expr: String,
    pub repeat: usize,
    /// In a table test (`table.rs`): the loop's count is a column, `for _ in 0..case.N`, and
    /// this is that expression (`repeat` is then 0 in the shape).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub times: Option<String>,
}

/// The same replayed call made three or more times in a row (an iterator advanced, a counter
/// raised) as one binding with its count: a test reads `for _ in 0..40 { let _ = it.next(); }`
/// rather than forty lines. Two stay two lines, which read better than a loop.
fn collapse_repeats(setup: Vec<Binding>) -> Vec<Binding> {
    let mut runs: Vec<Binding> = Vec::with_capacity(setup.len());
    for b in setup {
        match runs.last_mut() {
            Some(last) if last.var == "_" && b.var == "_" && last.expr == b.expr => {
                last.repeat += b.repeat;
            }
            _ => runs.push(b),
        }
    }
    let mut out = Vec::with_capacity(runs.len());
    for b in runs {
        if b.repeat == 2 {
            let one = Binding { repeat: 1, ..b };
            out.push(one.clone());
            out.push(one);
        } else {
            out.push(b);
        }
    }
    out
}

/// `assert_eq!(<actual>, <expected>)` on state after the call.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Effect {
    pub actual: String,
    pub expected: String,
    /// The assertion's message, a string literal (a replay closure's count check).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A `mock!` the file must declare.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct MockDecl {
    /// `Answerer` (the mock struct is `MockAnswerer`).
    pub name: String,
    /// `abc::Answerer`.
    pub trait_path: String,
    /// Method signatures as a test writes them, without `;`.
    pub methods: Vec<String>,
}

/// Everything a test does, before it gets a name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Body {
    /// The path of the function, `expr::lexer::precedence` or `expr::parser::Parser::new`.
    pub function_path: String,
    /// Mocks to set up, children before the mocks returning them.
    pub mocks: Vec<MockSetup>,
    /// Expectations checked in one `Sequence` across mocks, in recorded order.
    pub ordered_expectations: Vec<OrderedExpectation>,
    pub setup: Vec<Binding>,
    /// Checks, before the call, that objects rebuilt by replaying calls are in their recorded
    /// state.
    pub checks: Vec<Effect>,
    /// What is called: `abc::label` or `c.calls_b_with_a`.
    pub callee: String,
    /// The arguments as Rust expressions.
    pub args: Vec<String>,
    pub assertion: Assertion,
    /// Checks of fields after the call.
    pub effects: Vec<Effect>,
    /// Some expectation is in a `Sequence`.
    pub sequence: bool,
    /// The mocks' traits (declared once per file, in `FilePlan::mocks`).
    #[serde(skip)]
    pub mock_decls: Vec<MockDecl>,
    /// Traits to import so method syntax works (`abc::Asker`; in `FilePlan::uses`).
    #[serde(skip)]
    pub trait_uses: Vec<String>,
    /// A closure argument is a replay closure (`closure.rs`): its checks name no table row.
    #[serde(skip)]
    pub replays_closures: bool,
}

/// What the planner knows about the whole trace.
pub struct Ctx<'a> {
    pub trace: &'a Trace,
    pub api: &'a CrateApi,
    pub targets: &'a HashMap<FunctionId, Target>,
    pub children: &'a HashMap<Option<CallId>, Vec<usize>>,
    /// Per call: (a call made through a trait below it, it or a call below it read the world
    /// in a way no test rebuilds, it or a call below it read files a test rebuilds (see
    /// [`world`])).
    below: HashMap<CallId, (bool, bool, bool)>,
    /// Per call, the positions of its own file reads in `trace.file_reads`.
    file_reads: HashMap<CallId, Vec<usize>>,
    /// The replayable calls on each type, the shortest to write first (see [`derive`]).
    steps: RefCell<HashMap<String, Rc<Vec<Step<'a>>>>>,
    /// Per type, the positions of the calls [`replay`] may use, in recording order.
    candidates: RefCell<HashMap<String, Rc<Vec<usize>>>>,
    /// Per type, the positions of its recorded constructor-like calls, in recording order.
    ctors: RefCell<HashMap<String, Rc<Vec<usize>>>>,
    /// Per `type::getter`, the positions of its recorded calls (see [`getter_contradicted`]).
    getter_calls: RefCell<HashMap<String, Rc<Vec<usize>>>>,
    /// Per type, the positions of the calls whose result holds such a value as a part.
    parts: RefCell<HashMap<String, Rc<Vec<usize>>>>,
    /// Per type, the positions of its recorded text getters' calls (see [`text`]).
    text_getters: RefCell<HashMap<String, Rc<Vec<usize>>>>,
    /// The calls grouping left out of `trace`: per kept call, the equivalent calls dropped.
    equivalent: &'a BTreeMap<CallId, Vec<CallId>>,
    /// Per function, how many of its calls grouping dropped over its cap.
    over_max: &'a BTreeMap<FunctionId, usize>,
    /// The `Display` texts the recording holds, by state (see [`crate::act::display::Texts`]).
    texts: crate::act::display::Texts,
    /// Replay every step of an object's history, state-equivalent ones included (the fallback
    /// for a call whose shortened test failed verification; see [`history`]).
    whole_histories: std::cell::Cell<bool>,
}

/// `cache[key]`, computing it with `make` the first time.
fn cached(
    cache: &RefCell<HashMap<String, Rc<Vec<usize>>>>,
    key: &str,
    make: impl FnOnce() -> Vec<usize>,
) -> Rc<Vec<usize>> {
    if let Some(found) = cache.borrow().get(key) {
        return Rc::clone(found);
    }
    let made = Rc::new(make());
    cache.borrow_mut().insert(key.to_string(), Rc::clone(&made));
    made
}

/// A recorded `&mut self` call a derived sequence may replay: `method(args)`, and the state
/// before and after.
type Step<'t> = (String, &'t Value, &'t Value);

impl<'a> Ctx<'a> {
    /// Works out once, for every call, what lies below it (walking the tree per question made
    /// carving a 10,000-call trace take minutes).
    pub fn new(
        trace: &'a Trace,
        api: &'a CrateApi,
        targets: &'a HashMap<FunctionId, Target>,
        children: &'a HashMap<Option<CallId>, Vec<usize>>,
        equivalent: &'a BTreeMap<CallId, Vec<CallId>>,
        over_max: &'a BTreeMap<FunctionId, usize>,
    ) -> Ctx<'a> {
        let mut cx = Ctx {
            trace,
            api,
            targets,
            children,
            equivalent,
            over_max,
            below: HashMap::new(),
            file_reads: HashMap::new(),
            steps: RefCell::new(HashMap::new()),
            candidates: RefCell::new(HashMap::new()),
            ctors: RefCell::new(HashMap::new()),
            getter_calls: RefCell::new(HashMap::new()),
            parts: RefCell::new(HashMap::new()),
            text_getters: RefCell::new(HashMap::new()),
            texts: crate::act::display::Texts::new(trace),
            whole_histories: std::cell::Cell::new(false),
        };
        for (i, read) in trace.file_reads.iter().enumerate() {
            cx.file_reads.entry(read.call).or_default().push(i);
        }
        // Children start after their parent: in reverse order every child comes first.
        let mut below = HashMap::with_capacity(trace.calls.len());
        for call in trace.calls.iter().rev() {
            let own: Vec<&FileRead> = cx.file_reads(call.id).collect();
            let (mut world, mut files) = world::own_reads(call, &own);
            let mut trait_calls = false;
            for &i in children.get(&Some(call.id)).map_or(&[][..], Vec::as_slice) {
                let kid = &trace.calls[i];
                let (kid_traits, kid_world, kid_files) =
                    below.get(&kid.id).copied().unwrap_or_default();
                trait_calls |= kid_traits || is_trait_call(&cx, kid).is_some();
                world |= kid_world;
                files |= kid_files;
            }
            below.insert(call.id, (trait_calls, world, files));
        }
        cx.below = below;
        cx
    }

    /// The file reads `call` made itself, in the order it made them.
    fn file_reads(&self, call: CallId) -> impl Iterator<Item = &'a FileRead> + '_ {
        let trace = self.trace;
        self.file_reads
            .get(&call)
            .into_iter()
            .flatten()
            .map(move |&i| &trace.file_reads[i])
    }

    /// Whether the tests carved next replay objects' whole histories, leaving out no
    /// state-equivalent step (see [`history`]).
    pub fn replay_whole_histories(&self, whole: bool) {
        self.whole_histories.set(whole);
    }
}

/// A trait object the test replaces with a mock.
/// A recorded call made through a dependency: (rank among all the test's mock calls, method,
/// predicates, returns).
type Interaction = (usize, String, Vec<String>, Returns);

#[derive(Clone)]
struct Dep {
    trait_path: String,
    addr: u64,
    var: String,
    /// Recorded interactions, in order.
    calls: Vec<Interaction>,
}

#[derive(Default, Clone)]
struct Builder {
    /// The first value a mock answers with, as a name slug (`next_u32_returns_7`).
    first_answer: Option<String>,
    deps: Vec<Dep>,
    vars: BTreeSet<String>,
    setup: Vec<Binding>,
    checks: Vec<Effect>,
    effects: Vec<Effect>,
    /// Traits the arrange steps call methods of (a producer reached through a trait).
    trait_uses: BTreeSet<String>,
    /// How many producer calls deep the object being rebuilt is (`a.b().c()`).
    producer_depth: u32,
    /// Producer calls whose arguments are other objects to rebuild are not tried (yet).
    plain_only: bool,
    /// Recorded calls the arrange steps make again as they were made (`Url::options()` in
    /// `Url::options().base_url(Some(&base)).parse(..)`): the test runs them and checks what
    /// they gave through the call it asserts on.
    replayed: BTreeSet<u64>,
    /// Recorded calls that arrange steps make again and that read files (see [`world`]).
    arranged: Vec<CallId>,
    /// A closure argument of the call or of an arrange step is a replay closure.
    replay_closures: bool,
}

impl Builder {
    fn fresh(&mut self, base: &str) -> String {
        let base = naming::sanitize_ident(base);
        let mut name = base.clone();
        let mut n = 2;
        while !self.vars.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        name
    }

    fn add_dep(&mut self, trait_path: String, addr: u64, base: &str) -> String {
        let var = self.fresh(&format!("mock_{base}"));
        self.deps.push(Dep {
            trait_path,
            addr,
            var: var.clone(),
            calls: Vec::new(),
        });
        var
    }

    /// The dependency a call through `trait_path` on the object at `addr` goes to.
    fn find_dep(&self, trait_path: &str, addr: u64) -> Option<usize> {
        let same_trait: Vec<usize> = (0..self.deps.len())
            .filter(|&i| self.deps[i].trait_path == trait_path)
            .collect();
        same_trait
            .iter()
            .copied()
            .find(|&i| self.deps[i].addr == addr)
            .or(match same_trait.as_slice() {
                [only] => Some(*only),
                _ => None,
            })
    }
}

/// `dao::Connection` from `alloc::boxed::Box<dyn dao::Connection, alloc::alloc::Global>` or
/// `&dyn dao::Connection`.
pub fn dyn_trait(ty: &str) -> Option<String> {
    let rest = &ty[ty.find("dyn ")? + 4..];
    let end = rest.find([',', '>', '+', ' ']).unwrap_or(rest.len());
    let path = rest[..end].trim();
    (!path.is_empty()).then(|| path.to_string())
}

/// The trait object inside an argument or return value: (trait path, address).
fn dyn_object(value: &Value) -> Option<(String, u64)> {
    match value {
        Value::Ref { ty, addr, .. } => dyn_trait(ty).map(|t| (t, *addr)),
        _ => None,
    }
}

/// Recorded states equal for the test's purpose: addresses ignored, trait objects equal when
/// their concrete types are (they become mocks).
fn same_state(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (
            Value::Ref {
                ty: ta, target: a, ..
            },
            Value::Ref {
                ty: tb, target: b, ..
            },
        ) => {
            ta == tb
                && if ta.contains("dyn ") {
                    a.type_name() == b.type_name()
                } else {
                    same_state(a, b)
                }
        }
        (Value::Struct { ty: ta, fields: fa }, Value::Struct { ty: tb, fields: fb })
        | (
            Value::Enum {
                ty: ta, fields: fa, ..
            },
            Value::Enum {
                ty: tb, fields: fb, ..
            },
        ) => {
            ta == tb
                && fa.len() == fb.len()
                && fa
                    .iter()
                    .zip(fb)
                    .all(|(x, y)| x.name == y.name && same_state(&x.value, &y.value))
                && match (a, b) {
                    (Value::Enum { variant: va, .. }, Value::Enum { variant: vb, .. }) => va == vb,
                    _ => true,
                }
        }
        (Value::Tuple { elems: ea, .. }, Value::Tuple { elems: eb, .. })
        | (Value::Seq { elems: ea, .. }, Value::Seq { elems: eb, .. }) => {
            a.type_name() == b.type_name()
                && ea.len() == eb.len()
                && ea.iter().zip(eb).all(|(x, y)| same_state(x, y))
        }
        // Memory a `MaybeUninit` holds is no state a caller can observe: the type's code may
        // only read what it wrote since (itoa's scratch buffer, a cache's spare slots).
        (Value::Opaque { ty: ta, .. }, Value::Opaque { ty: tb, .. })
            if ta == tb && is_maybe_uninit(ta) =>
        {
            true
        }
        _ => a == b,
    }
}

fn is_maybe_uninit(ty: &str) -> bool {
    ["core::mem::maybe_uninit::MaybeUninit<", "MaybeUninit<"]
        .iter()
        .any(|p| ty.starts_with(p))
}

/// The trait objects inside a value, in tree order.
fn dyn_addrs(value: &Value, out: &mut Vec<(String, u64)>) {
    match value {
        Value::Ref { ty, addr, target } => match dyn_trait(ty) {
            Some(t) => out.push((t, *addr)),
            None => dyn_addrs(target, out),
        },
        Value::Struct { fields, .. } | Value::Enum { fields, .. } => {
            fields.iter().for_each(|f| dyn_addrs(&f.value, out));
        }
        Value::Tuple { elems, .. } | Value::Seq { elems, .. } => {
            elems.iter().for_each(|e| dyn_addrs(e, out));
        }
        _ => {}
    }
}

fn strip_ref(value: &Value) -> &Value {
    match value {
        Value::Ref { target, .. } => target,
        other => other,
    }
}

/// Builds the body of the test for `call`, or says why there is none.
/// A carved test: its body, its name's parts, and the recorded calls its arrange steps replay
/// (see [`Builder`]'s `replayed`).
pub type Carved = (Body, NameParts, Vec<u64>);

pub fn carve<'c>(cx: &Ctx, call: &'c Call, target: &Callable) -> Result<Carved, &'static str> {
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
    let mut callee = target.call_path.clone();
    let mut receiver_var = None;
    let mut receiver_state = None;
    if api.has_receiver {
        let Some(pos) = args_values.iter().position(|a| a.name == "self") else {
            return Err(UNDECODED);
        };
        let self_arg = args_values.remove(pos);
        receiver_state = state_slug(strip_ref(&self_arg.value));
        let Some(self_type) = target.self_type.as_deref() else {
            return Err(UNSUPPORTED_TYPE);
        };
        let short = self_type.rsplit("::").next().unwrap_or(self_type);
        let var = b.fresh(short);
        rebuild(
            cx,
            &mut b,
            Wanted {
                state: strip_ref(&self_arg.value),
                object: call.object("self"),
                type_path: self_type,
                before: call.id,
                var: &var,
                mutable: api.mut_receiver,
            },
        )?;
        callee = format!("{var}.{}", api.ident);
        receiver_var = Some(var);
    }
    if args_values.len() != api.params.len() {
        return Err(UNDECODED);
    }
    let mut args = Vec::with_capacity(api.params.len());
    let mut arg_slugs = Vec::new();
    let mut object_args = Vec::new();
    // How many times each replay closure was called, checked first after the call.
    let mut closure_checks = Vec::new();
    for (arg, param) in args_values.iter().zip(&api.params) {
        arg_slugs.push(naming::value_slug(&arg.value));
        if let Some(expr) = dep_arg(cx, &mut b, &arg.value, param, |addr| addr) {
            args.push(expr?);
            continue;
        }
        if let Some(replay) = closure::replay(cx, call, arg, &api.ident, param.bound.as_deref()) {
            let (expr, check) = replay?.add_to(&mut b);
            // Named for what it is, not for what it captured.
            if let Some(slug) = arg_slugs.last_mut() {
                *slug = "closure".to_string();
            }
            args.push(expr);
            closure_checks.extend(check);
            continue;
        }
        let scalar = arg.value.is_scalar_or_string()
            || matches!(&arg.value, Value::Ref { target, .. } if target.is_scalar_or_string());
        match literal::render(&arg.value, &param.ty, Position::Arg) {
            Ok(expr) => args.push(expr),
            Err(e) if scalar => return Err(crate::assert::observe::reason(e)),
            Err(_) => match literal::render_value(&arg.value, false, cx.api) {
                Ok(expr) => args.push(expr),
                Err(_) if arg.value.type_name().contains("{closure_env#") => {
                    return Err(CLOSURE_ARGUMENT);
                }
                Err(_) => {
                    // An object of the crate (by reference, by value, in `Some`): rebuilt too.
                    let (expr, mutated) = object_arg(
                        cx,
                        &mut b,
                        &arg.value,
                        call.object(&arg.name),
                        param,
                        call.id,
                    )?;
                    args.push(expr);
                    if let Some(var) = mutated {
                        object_args.push((arg.name.clone(), var));
                    }
                }
            },
        }
    }

    // The mock trees: every call made through a dependency, in order.
    interactions(cx, &mut b, call.id)?;

    let (assertion, ret_slug) = match panicked {
        Some(message) => (
            Assertion::Panics {
                expected: message.and_then(crate::assert::observe::expected_panic),
            },
            None,
        ),
        None => match crate::assert::observe::assertion(call.ret.as_ref(), &api.ret, cx.api) {
            Ok(checked) => checked,
            // Nothing recorded because nothing was returned: a zero-sized `Result<(), E>`.
            Err(reason)
                if call.ret.is_none()
                    && cx
                        .trace
                        .function(call.function)
                        .is_some_and(|f| f.return_type.is_none()) =>
            {
                crate::assert::observe::zero_sized_ok(api.ret_ok_unit).ok_or(reason)?
            }

            Err(reason) => 'observe: {
                // A struct of the crate that cannot be compared whole (also inside `Ok` or
                // `Some`, which the test unwraps): check what a caller can observe of it
                // (getters, public fields), as a developer would.
                // Else, the variant and the parts a pattern can name (`Err(E::At(3usize))`).
                // The pattern names only parts read exactly (`_` for pointers, opaque or
                // unread memory, truncated strings), so the value need not be exact whole.
                let pattern = || {
                    let ret = call.ret.as_ref()?;
                    let pattern = crate::assert::pattern::of(ret, cx.api)?;
                    Some((
                        Assertion::Matches { pattern },
                        Some(naming::value_slug(ret)),
                    ))
                };
                // Else the text an equal value was displayed as (`display.rs`).
                let shown = |b: &mut Builder| {
                    let ret = call.ret.as_ref()?;
                    let (actual, expected) = cx.texts.check("result", ret)?;
                    b.effects.push(Effect {
                        actual,
                        expected,
                        message: None,
                    });
                    Some((
                        Assertion::Observed { unwrap: None },
                        Some(naming::value_slug(ret)),
                    ))
                };
                let matches = |b: &mut Builder| pattern().or_else(|| shown(b));
                // A reference to a struct (`Deref::deref`, a getter returning `&Inner`) is
                // observed through the reference, as the value (`result.line_no`).
                let through_ref = |r: &'c Value| match r {
                    Value::Ref { target, .. } if matches!(**target, Value::Struct { .. }) => {
                        target.as_ref()
                    }
                    other => other,
                };
                let Some((ret, unwrap)) = call
                    .ret
                    .as_ref()
                    .map(through_ref)
                    .and_then(|r| returned_struct(cx, r, &target.call_path))
                else {
                    break 'observe matches(&mut b).ok_or(reason)?;
                };
                let Value::Struct { ty, .. } = ret else {
                    break 'observe matches(&mut b).ok_or(reason)?;
                };
                let before = b.effects.len();
                effects(
                    cx,
                    &mut b,
                    "result",
                    ret,
                    crate::read::types::strip_generics(ty),
                );
                // With nothing to observe, the mocks still check what it did to its
                // dependencies (a mock without expectations fails on any call).
                if b.effects.len() == before && b.deps.is_empty() {
                    break 'observe matches(&mut b).ok_or(reason)?;
                }
                // Named after what it returns (`new_returns_versioned_set`): its contents are
                // what the assertions observe, not a short value.
                let short = crate::read::types::strip_generics(ty)
                    .rsplit("::")
                    .next()
                    .unwrap_or("value");
                (
                    Assertion::Observed { unwrap },
                    Some(naming::snake_case(short)),
                )
            }
        },
    };

    b.effects.splice(0..0, closure_checks);
    // Field effects on `&mut self` and `&mut` object arguments.
    if let (Some(var), true) = (&receiver_var, api.mut_receiver) {
        if let Some(after) = call.after("self") {
            effects(
                cx,
                &mut b,
                var,
                after,
                target.self_type.as_deref().unwrap_or(""),
            );
        }
    }
    for (name, var) in object_args {
        if let Some(after) = call.after(&name) {
            let ty = crate::read::types::strip_generics(strip_ref(after).type_name()).to_string();
            effects(cx, &mut b, &var, after, &ty);
        }
    }

    let (mocks, ordered_expectations, mock_decls, sequence) = mock_setups(cx, &b)?;
    // Only those that read files are looked up (a history may replay hundreds of calls).
    let arranged: Vec<&Call> = b
        .arranged
        .iter()
        .filter(|id| cx.below.get(id).is_some_and(|b| b.2))
        .filter_map(|id| cx.trace.calls.iter().find(|c| c.id == *id))
        .collect();
    let subject = if api.has_receiver {
        api.name.clone()
    } else {
        target.subject.clone()
    };
    // A getter test already asserts what a check of its state would.
    let act = format!("{callee}({})", args.join(", "));
    let body = Body {
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
        trait_uses: target
            .via_trait
            .iter()
            .cloned()
            .chain(b.trait_uses)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        replays_closures: b.replay_closures,
    };
    // The files it and the calls its arrange steps make again read, rebuilt.
    let mut body = body;
    let calls: Vec<&Call> = std::iter::once(call).chain(arranged).collect();
    world::rebuild(cx, &calls, &mut body).map_err(|()| UNTESTABLE)?;
    let name = NameParts {
        panics: panicked.is_some(),
        subject,
        args: arg_slugs,
        ret: ret_slug,
        when: b.first_answer.clone().or(receiver_state),
    };
    Ok((body, name, b.replayed.into_iter().collect()))
}

/// `src_1_2_pos_5`: the receiver's first two scalar or string fields, naming a test apart from
/// others that call the same method with the same arguments on another state.
fn state_slug(state: &Value) -> Option<String> {
    let Value::Struct { fields, .. } = state else {
        return None;
    };
    let parts: Vec<String> = fields
        .iter()
        .filter(|f| f.value.is_scalar_or_string())
        .take(2)
        .map(|f| format!("{}_{}", f.name, naming::value_slug(&f.value)))
        .collect();
    (!parts.is_empty()).then(|| parts.join("_"))
}

/// A dependency passed as an argument becomes a mock, written as the parameter takes it: a
/// trait object (`&dyn T`, `Box<dyn T>`, `Rc<dyn T>`...) or a value of a trait-bounded generic
/// (`repo: R`, `&R`, `&impl Repo`). `None` when the argument is no dependency; `moved` maps the
/// recorded address to where the object lives in the state the mock stands in for.
fn dep_arg(
    cx: &Ctx,
    b: &mut Builder,
    value: &Value,
    param: &ParamApi,
    moved: impl Fn(u64) -> u64,
) -> Option<Result<String, &'static str>> {
    let addr = match value {
        Value::Ref { addr, .. } => moved(*addr),
        _ => 0,
    };
    if let Some(trait_path) = param.bound.as_ref().filter(|t| mockable(cx.api, t).is_ok()) {
        let var = b.add_dep(trait_path.clone(), addr, &param.name);
        return Some(Ok(match &param.ty {
            DeclType::Ref { mutable: true, .. } => format!("&mut {var}"),
            DeclType::Ref { .. } => format!("&{var}"),
            _ => var,
        }));
    }
    let (trait_path, _) = dyn_object(value)?;
    let var = b.add_dep(trait_path, addr, &param.name);
    Some(wrap_object(value.type_name(), &var))
}

/// An argument holding an object of the crate that no literal can write, rebuilt into a new
/// variable from its own recorded provenance (as it was when call `before` was made) and passed
/// as the recorded argument held it: `&var` / `&mut var` (the parameter's declared mutability, or
/// the recorded reference's), `var` by value, `Some(&var)` / `Some(var)`. Gives the expression
/// and, for `&mut`, the variable whose effects the test may check.
fn object_arg(
    cx: &Ctx,
    b: &mut Builder,
    value: &Value,
    object: Option<ObjectId>,
    param: &ParamApi,
    before: CallId,
) -> Result<(String, Option<String>), &'static str> {
    fn shape(value: &Value, declared_mut: Option<bool>) -> Option<(&Value, String)> {
        match value {
            Value::Ref { ty, target, .. } if ty.starts_with('&') => {
                let mutable = declared_mut.unwrap_or_else(|| ty.starts_with("&mut "));
                let (inner, wrap) = shape(target, None)?;
                // Only one reference deep: `&&T` is no shape a test writes from a variable.
                (wrap == "{}").then(|| (inner, if mutable { "&mut {}" } else { "&{}" }.to_string()))
            }
            Value::Struct { ty, .. } | Value::Enum { ty, .. }
                if !ty.starts_with("core::option::Option") =>
            {
                Some((value, "{}".to_string()))
            }
            Value::Enum {
                ty,
                variant,
                fields,
            } if ty.starts_with("core::option::Option") && variant == "Some" => {
                let (inner, wrap) = shape(&fields.first()?.value, None)?;
                Some((inner, format!("Some({wrap})")))
            }
            _ => None,
        }
    }
    let (declared_mut, declared) = match &param.ty {
        DeclType::Ref { mutable, inner } => (Some(*mutable), inner.as_ref()),
        other => (None, other),
    };
    // A scalar or string parameter recorded as an object: the value was not read as declared.
    if matches!(
        declared,
        DeclType::Unit | DeclType::Prim(_) | DeclType::Str | DeclType::String
    ) {
        return Err(UNDECODED);
    }
    let (obj, wrap) = shape(value, declared_mut).ok_or(UNDECODED)?;
    let mutable = wrap.contains("&mut ");
    let obj_type = crate::read::types::strip_generics(obj.type_name()).to_string();
    let var = b.fresh(&param.name);
    let wanted = Wanted {
        state: obj,
        object,
        type_path: &obj_type,
        before,
        var: &var,
        mutable,
    };
    if let Err(e) = rebuild(cx, b, wanted) {
        b.vars.remove(&var);
        return Err(e);
    }
    Ok((wrap.replace("{}", &var), mutable.then_some(var)))
}

/// `&mock_a`, `&mut mock_a`, `Box::new(mock_a)` or `std::rc::Rc::new(mock_a)` for a parameter
/// of recorded type `ty`.
fn wrap_object(ty: &str, var: &str) -> Result<String, &'static str> {
    if ty.starts_with("&mut ") {
        Ok(format!("&mut {var}"))
    } else if ty.starts_with('&') {
        Ok(format!("&{var}"))
    } else if ty.starts_with("alloc::boxed::Box<") {
        Ok(format!("Box::new({var})"))
    } else if ty.starts_with("alloc::rc::Rc<") {
        Ok(format!("std::rc::Rc::new({var})"))
    } else if ty.starts_with("alloc::sync::Arc<") {
        Ok(format!("std::sync::Arc::new({var})"))
    } else {
        Err(UNSUPPORTED_TYPE)
    }
}

/// What a rebuild rule is asked for: a binding `var` (`let mut` when `mutable`) holding an
/// object of `type_path` in `state`, as it was just before call `before`; `object` is its
/// identity when the recorder gave one (its history is then replayable).
#[derive(Clone, Copy)]
pub(super) struct Wanted<'a> {
    pub state: &'a Value,
    pub object: Option<ObjectId>,
    pub type_path: &'a str,
    pub before: CallId,
    pub var: &'a str,
    pub mutable: bool,
}

impl<'a> Wanted<'a> {
    /// A mutable binding of `state` with no identity: an arrangement the test changes further.
    fn new(state: &'a Value, type_path: &'a str, before: CallId, var: &'a str) -> Wanted<'a> {
        Wanted {
            state,
            object: None,
            type_path,
            before,
            var,
            mutable: true,
        }
    }
}

/// Adds `let <var> = ...;` giving an object in `state`: its recorded constructor replayed
/// (trait objects it got become mocks), or a struct literal, or else the constructor followed by
/// the recorded calls that brought the object to `state` (seed 001's feasible call sequences).
/// A state reached through calls is checked before the test acts, where it is observable.
/// An object whose recorded state leaves out what its methods read (memory behind pointers) is
/// rebuilt from its own history first (see [`history`]): equal recorded states prove nothing.
/// Where that history cannot be replayed, the state-based rules below still try, and
/// verification takes out a test whose arrangement did not give the recorded result.
fn rebuild(cx: &Ctx, b: &mut Builder, w: Wanted) -> Result<(), &'static str> {
    let Wanted {
        state,
        type_path,
        var,
        ..
    } = w;
    let mut history_failed = None;
    if history::incomplete(state) {
        // State behind pointers the recorder did not follow: equal recorded states may differ,
        // so the object's own history comes first. Where it cannot be replayed, the rules below
        // still try, and verification drops a test whose arrangement was not the recorded one.
        let mut attempt = b.clone();
        match history::rebuild(cx, &mut attempt, w) {
            Ok(()) => {
                *b = attempt;
                let checks = observations(cx, var, state, type_path);
                b.checks.extend(checks);
                return Ok(());
            }
            Err(e) => history_failed = Some(e),
        }
    }
    // When nothing else rebuilds it either, the history's reason is the one to give.
    let not_rebuilt = |e: &'static str| match (e, history_failed) {
        (RECEIVER_NOT_REBUILT, Some(history)) => history,
        _ => e,
    };
    // Calls with literal arguments first: a constructor and the calls since make a shorter test
    // than a producer whose arguments are objects to rebuild in turn.
    let outer = b.plain_only;
    b.plain_only = true;
    let plain = rebuild_by_calls(cx, b, w);
    b.plain_only = outer;
    let by_calls = match plain {
        Err(RECEIVER_NOT_REBUILT) if !outer => rebuild_by_calls(cx, b, w),
        other => other,
    };
    match by_calls {
        // Built by its producer: the state is what that call gave, nothing to check.
        Ok(Rebuilt::Directly) => return Ok(()),
        Ok(Rebuilt::Replayed) => {}
        Err(RECEIVER_NOT_REBUILT) => match derive(cx, b, state, type_path, w.before, var) {
            Ok(()) => {}
            // No call leads to the state, but its text does (`Url::parse(..)` of what
            // `as_str()` gave on it): the rule checks that text itself.
            Err(RECEIVER_NOT_REBUILT) if text::rebuild(cx, b, state, type_path, var, w.mutable) => {
                return Ok(());
            }
            Err(e) => return Err(not_rebuilt(e)),
        },
        Err(e) => return Err(not_rebuilt(e)),
    }
    let checks = observations(cx, var, state, type_path);
    b.checks.extend(checks);
    Ok(())
}

/// How [`rebuild_by_calls`] reached the state.
enum Rebuilt {
    /// A call that gave the state (or a literal).
    Directly,
    /// The calls that led to the state, replayed.
    Replayed,
}

/// [`rebuild`] through recorded calls: a producer of the state, else the calls that led to it.
fn rebuild_by_calls(cx: &Ctx, b: &mut Builder, w: Wanted) -> Result<Rebuilt, &'static str> {
    match rebuild_directly(cx, b, w) {
        Err(RECEIVER_NOT_REBUILT) => {}
        other => return other.map(|()| Rebuilt::Directly),
    }
    let mut budget = REPLAY_BUDGET;
    let Wanted {
        state,
        type_path,
        before,
        var,
        ..
    } = w;
    replay(cx, b, state, type_path, before, var, 0, &mut budget).map(|()| Rebuilt::Replayed)
}

/// A recorded call that can be replayed on an object of `type_path` in an arrange step: a
/// returned `&mut self` method call with literal arguments, and, unless `with_deps`, no
/// dependency calls to mock. Gives `method(args)` and the object's state before and after.
fn replayable<'t>(
    cx: &Ctx<'t>,
    step: &'t Call,
    type_path: &str,
    with_deps: bool,
) -> Option<(String, &'t Value, &'t Value)> {
    let (pre, after) = replay_states(cx, step, type_path, with_deps)?;
    Some((replay_expr(cx, step)?, pre, after))
}

/// The cheap half of [`replayable`]: whether `step` qualifies, and the states before and after.
fn replay_states<'t>(
    cx: &Ctx<'t>,
    step: &'t Call,
    type_path: &str,
    with_deps: bool,
) -> Option<(&'t Value, &'t Value)> {
    if step.outcome != Outcome::Returned {
        return None;
    }
    let Some(Target::Callable(c)) = cx.targets.get(&step.function) else {
        return None;
    };
    if !c.api.has_receiver || !c.api.mut_receiver || c.self_type.as_deref() != Some(type_path) {
        return None;
    }
    let (after, pre) = (step.after("self")?, step.arg("self")?);
    if (!with_deps && has_trait_calls(cx, step.id)) || reads_world(cx, step) {
        return None;
    }
    Some((strip_ref(pre), strip_ref(after)))
}

/// The costly half of [`replayable`]: `method(args)`, when every argument can be written as
/// an expression alone (no replay closure).
fn replay_expr(cx: &Ctx, step: &Call) -> Option<String> {
    replay_call(cx, step)?.plain()
}

/// A recorded call as an arrange step makes it again: `method(args)`, each argument a literal or
/// a replay closure (`closure.rs`).
#[derive(Debug, Clone)]
struct ReplayCall {
    ident: String,
    args: Vec<ReplayArg>,
}

#[derive(Debug, Clone)]
enum ReplayArg {
    Expr(String),
    Closure(closure::ReplayClosure),
}

/// `step` as an arrange step, when every argument can be written.
fn replay_call(cx: &Ctx, step: &Call) -> Option<ReplayCall> {
    let Some(Target::Callable(c)) = cx.targets.get(&step.function) else {
        return None;
    };
    let others: Vec<&carve_storage::Arg> = step.args.iter().filter(|a| a.name != "self").collect();
    if others.len() != c.api.params.len() {
        return None;
    }
    let args = others
        .iter()
        .zip(&c.api.params)
        .map(|(arg, param)| {
            let bound = param.bound.as_deref();
            if let Some(replay) = closure::replay(cx, step, arg, &c.api.ident, bound) {
                return replay.ok().map(ReplayArg::Closure);
            }
            literal::render(&arg.value, &param.ty, Position::Arg)
                .or_else(|_| literal::render_value(&arg.value, false, cx.api))
                .ok()
                .map(ReplayArg::Expr)
        })
        .collect::<Option<Vec<ReplayArg>>>()?;
    Some(ReplayCall {
        ident: c.api.ident.clone(),
        args,
    })
}

impl ReplayCall {
    /// `method(args)`, when no argument is a replay closure.
    fn plain(&self) -> Option<String> {
        let args = self
            .args
            .iter()
            .map(|a| match a {
                ReplayArg::Expr(e) => Some(e.as_str()),
                ReplayArg::Closure(_) => None,
            })
            .collect::<Option<Vec<&str>>>()?;
        Some(format!("{}({})", self.ident, args.join(", ")))
    }

    /// `method(args)`, each replay closure's replies bound in `b`'s setup first; gives the
    /// statements that check, after the step, that each closure was called as recorded.
    fn add_to(&self, b: &mut Builder) -> (String, Vec<Binding>) {
        let mut after = Vec::new();
        let args: Vec<String> = self
            .args
            .iter()
            .map(|a| match a {
                ReplayArg::Expr(e) => e.clone(),
                ReplayArg::Closure(c) => {
                    let (expr, check) = c.add_to(b);
                    after.extend(check.map(|e| Binding {
                        var: String::new(),
                        mutable: false,
                        expr: match &e.message {
                            Some(m) => format!("assert_eq!({}, {}, {m})", e.actual, e.expected),
                            None => format!("assert_eq!({}, {})", e.actual, e.expected),
                        },
                        repeat: 1,
                        times: None,
                    }));
                    expr
                }
            })
            .collect();
        (format!("{}({})", self.ident, args.join(", ")), after)
    }
}

/// A replay step through a handle: a `&mut self` method of the object returns a handle
/// (`map.entry(k)`, `url.query_pairs_mut()`), the calls right after it on the same thread act on
/// that handle (`.or_insert(0)`, `.append_pair("q", "1")`, each returning the handle again but
/// the last; the handle's `Drop` impl may run too), and then the object's next call comes. When
/// the last call returned `&mut` to a scalar the caller wrote through (`+= 1`, recorded as the
/// [`carve_storage::RESULT_EFFECT`] effect), the write is replayed too. Written as one chain,
/// `*map.entry(k).or_insert(0) = 1` or `url.query_pairs_mut().append_pair("q", "1")`: the object
/// goes from its state before the first call to its state at its next call. A call returning the
/// reference itself is a chain without steps: `*bag.index_mut(0) = 6`.
struct HandleChain<'t> {
    first: &'t Call,
    steps: Vec<&'t Call>,
    written: Option<&'t Value>,
    pre: &'t Value,
    after: &'t Value,
}

/// How many calls on one handle a chain may hold.
const MAX_CHAIN: usize = 8;

impl HandleChain<'_> {
    /// `entry(k).or_insert(0) = 1`, when every argument and the written value can be written.
    fn expr(&self, cx: &Ctx) -> Option<String> {
        let mut chain = replay_expr(cx, self.first)?;
        for step in &self.steps {
            chain = format!("{chain}.{}", replay_expr(cx, step)?);
        }
        Some(match self.written {
            Some(written) => {
                let written = literal::render_value(written, false, cx.api).ok()?;
                format!("{chain} = {written}")
            }
            None => chain,
        })
    }

    /// Every call of the chain, for the mocks they asked.
    fn calls(&self) -> impl Iterator<Item = &Call> {
        std::iter::once(self.first).chain(self.steps.iter().copied())
    }
}

fn is_drop_impl(cx: &Ctx, call: &Call) -> bool {
    cx.trace
        .function(call.function)
        .is_some_and(|f| f.path.ends_with("as core::ops::drop::Drop>::drop"))
}

fn handle_chain<'t>(cx: &Ctx<'t>, first: &'t Call, type_path: &str) -> Option<HandleChain<'t>> {
    if first.outcome != Outcome::Returned {
        return None;
    }
    let Some(Target::Callable(c)) = cx.targets.get(&first.function) else {
        return None;
    };
    if !c.api.has_receiver || !c.api.mut_receiver || c.self_type.as_deref() != Some(type_path) {
        return None;
    }
    let handle = strip_ref(first.ret.as_ref()?);
    let handle_type = crate::read::types::strip_generics(handle.type_name());
    if handle_type == type_path || reads_world(cx, first) {
        return None;
    }
    let Value::Ref {
        addr: object,
        target: pre,
        ..
    } = first.arg("self")?
    else {
        return None;
    };
    // The calls after `first` on its thread, at its level.
    let siblings = cx.children.get(&first.parent)?;
    // Siblings are mostly in id order (one thread's are): a binary search finds `first`
    // without a scan of every sibling (ids are unique, so a hit is the one); else the scan.
    let at = match siblings.binary_search_by_key(&first.id, |&i| cx.trace.calls[i].id) {
        Ok(at) => at,
        Err(_) => siblings
            .iter()
            .position(|&i| cx.trace.calls[i].id == first.id)?,
    };
    let next = siblings[at + 1..]
        .iter()
        .map(|&i| &cx.trace.calls[i])
        .filter(|c| c.thread == first.thread);
    let mut steps: Vec<&Call> = Vec::new();
    let mut dropped = false;
    for call in next.take(MAX_CHAIN + 2) {
        // The object's next call: its state then is what the chain left.
        if let Some(Value::Ref {
            addr,
            target: after,
            ..
        }) = call.arg("self")
        {
            if *addr == *object
                && crate::read::types::strip_generics(after.type_name()) == type_path
            {
                // No step: the call itself returned the reference written through
                // (`*v.index_mut(0) = 6`).
                let written = steps
                    .last()
                    .copied()
                    .unwrap_or(first)
                    .after(carve_storage::RESULT_EFFECT);
                if steps.is_empty() && written.is_none() {
                    return None;
                }
                // Each step but the last hands the handle on.
                let handed_on = steps.iter().rev().skip(1).all(|s| {
                    s.ret.as_ref().is_some_and(|r| {
                        crate::read::types::strip_generics(strip_ref(r).type_name()) == handle_type
                    })
                });
                return handed_on.then_some(HandleChain {
                    first,
                    steps,
                    written,
                    pre,
                    after,
                });
            }
        }
        if dropped || steps.len() == MAX_CHAIN {
            return None;
        }
        if is_drop_impl(cx, call) {
            // The handle's drop glue ran (`UrlQuery` writes the query back): the chain's end.
            dropped = true;
            continue;
        }
        let on_handle = call.arg("self").is_some_and(|s| {
            crate::read::types::strip_generics(strip_ref(s).type_name()) == handle_type
        });
        if call.outcome != Outcome::Returned
            || !on_handle
            || !matches!(cx.targets.get(&call.function), Some(Target::Callable(_)))
            || reads_world(cx, call)
            // Only the last step's write is replayed.
            || steps.last().is_some_and(|s| s.after(carve_storage::RESULT_EFFECT).is_some())
        {
            return None;
        }
        steps.push(call);
    }
    None
}

/// How far a test under construction had got: bindings, mocks, and each mock's expectations.
struct Mark {
    arranged: usize,
    setup: usize,
    checks: usize,
    deps: usize,
    calls: Vec<usize>,
}

fn mark(b: &Builder) -> Mark {
    Mark {
        arranged: b.arranged.len(),
        setup: b.setup.len(),
        checks: b.checks.len(),
        deps: b.deps.len(),
        calls: b.deps.iter().map(|d| d.calls.len()).collect(),
    }
}

/// Forgets the bindings, mocks and expectations added since `mark` (a failed attempt).
fn undo(b: &mut Builder, mark: Mark) {
    b.arranged.truncate(mark.arranged);
    b.setup.truncate(mark.setup);
    b.checks.truncate(mark.checks);
    for dep in b.deps.drain(mark.deps..) {
        b.vars.remove(&dep.var);
    }
    for (dep, len) in b.deps.iter_mut().zip(mark.calls) {
        dep.calls.truncate(len);
    }
}

/// How many recorded calls a rebuilt object may replay after its constructor.
const MAX_REPLAYED_CALLS: usize = 512;
/// How many candidate calls the search for one object's replay may try in all.
const REPLAY_BUDGET: usize = 200;

/// The latest recorded `&mut self` call before `before` that left an object of `type_path` in
/// `state`, replayed on an object rebuilt in that call's own pre-state.
#[allow(clippy::too_many_arguments)]
fn replay(
    cx: &Ctx,
    b: &mut Builder,
    state: &Value,
    type_path: &str,
    before: CallId,
    var: &str,
    replayed: usize,
    budget: &mut usize,
) -> Result<(), &'static str> {
    if replayed >= MAX_REPLAYED_CALLS {
        return Err(RECEIVER_NOT_REBUILT);
    }
    let candidates = cached(&cx.candidates, type_path, || {
        (0..cx.trace.calls.len())
            .filter(|&i| {
                let step = &cx.trace.calls[i];
                replay_states(cx, step, type_path, true).is_some()
                    || handle_chain(cx, step, type_path).is_some()
            })
            .collect()
    });
    for &i in candidates.iter().rev() {
        let step = &cx.trace.calls[i];
        if step.id >= before {
            continue;
        }
        let chain = handle_chain(cx, step, type_path);
        // A handle's write-through is what the call is for: `entry(k)` alone changes nothing.
        let Some((pre, after)) = chain
            .as_ref()
            .map(|w| (w.pre, w.after))
            .or_else(|| replay_states(cx, step, type_path, true))
        else {
            continue;
        };
        if !same_state(after, state) || same_state(pre, state) {
            continue;
        }
        // Each way tried may recurse; a long recording could otherwise try them all.
        if *budget == 0 {
            return Err(RECEIVER_NOT_REBUILT);
        }
        *budget -= 1;
        // A chain's text, or the call's own (its replay closures written once it is chosen).
        let call_expr = match &chain {
            None => replay_call(cx, step).map(Err),
            Some(w) => w.expr(cx).map(Ok),
        };
        let Some(call_expr) = call_expr else {
            continue;
        };
        let at = mark(b);
        let rebuilt = match rebuild_directly(cx, b, Wanted::new(pre, type_path, step.id, var)) {
            Err(RECEIVER_NOT_REBUILT) => {
                replay(cx, b, pre, type_path, step.id, var, replayed + 1, budget)
            }
            other => other,
        };
        // What the replayed call asked of the mocks, they must answer in the test too.
        let asked = rebuilt
            .and_then(|()| interactions(cx, b, step.id))
            .and_then(|()| {
                chain
                    .iter()
                    .flat_map(|w| w.calls().skip(1))
                    .try_for_each(|c| interactions(cx, b, c.id))
            });
        if asked.is_err() {
            undo(b, at);
            continue;
        }
        // A replayed trait method (`replace.equal(..)` of `DiffHook`) needs its trait in scope.
        let replayed_calls =
            std::iter::once(step).chain(chain.iter().flat_map(|w| w.steps.iter().copied()));
        for c in replayed_calls {
            if let Some(Target::Callable(c)) = cx.targets.get(&c.function) {
                b.trait_uses.extend(c.via_trait.iter().cloned());
            }
        }
        match (chain, call_expr) {
            // A statement, not a binding: `*map.entry(k).or_insert(0) = 1;`,
            // `url.query_pairs_mut().append_pair("q", "1");`.
            (Some(w), Ok(call_expr)) => b.setup.push(Binding {
                var: String::new(),
                mutable: false,
                expr: format!(
                    "{}{var}.{call_expr}",
                    if w.written.is_some() { "*" } else { "" }
                ),
                repeat: 1,
                times: None,
            }),
            (_, call) => {
                let (call_expr, after) = match call {
                    Ok(text) => (text, Vec::new()),
                    Err(call) => call.add_to(b),
                };
                b.setup.push(Binding {
                    var: "_".to_string(),
                    mutable: false,
                    expr: format!("{var}.{call_expr}"),
                    repeat: 1,
                    times: None,
                });
                b.setup.extend(after);
            }
        }
        return Ok(());
    }
    Err(RECEIVER_NOT_REBUILT)
}

/// A state no completed call left an object in (a counter raised inside an unfinished recursive
/// call): a recorded constructor's state followed by the shortest sequence of recorded calls
/// whose changes to the object's integers add up to it ([`sequence::counter_path`]). Only for
/// states the test can check before acting, since the sequence rests on a hypothesis.
fn derive(
    cx: &Ctx,
    b: &mut Builder,
    state: &Value,
    type_path: &str,
    before: CallId,
    var: &str,
) -> Result<(), &'static str> {
    if observations(cx, var, state, type_path).is_empty() {
        return Err(RECEIVER_NOT_REBUILT);
    }
    // Every replayable call on the type, the shortest to write first (worked out once per type).
    let cached = cx.steps.borrow().get(type_path).cloned();
    let steps = match cached {
        Some(steps) => steps,
        None => {
            let mut steps: Vec<Step> = cx
                .trace
                .calls
                .iter()
                .filter_map(|c| replayable(cx, c, type_path, false))
                .collect();
            steps.sort_by_key(|(expr, ..)| expr.len());
            let steps = Rc::new(steps);
            cx.steps
                .borrow_mut()
                .insert(type_path.to_string(), Rc::clone(&steps));
            steps
        }
    };
    let transitions: Vec<Transition> = steps
        .iter()
        .map(|(_, before, after)| Transition { before, after })
        .collect();
    let mut starts: Vec<&Value> = Vec::new();
    for i in producers_in_order(cx, type_path) {
        let ctor = &cx.trace.calls[i];
        if ctor.id >= before {
            continue;
        }
        if let Some(start) = constructed(cx, ctor, type_path) {
            if !starts.iter().any(|s| same_state(s, start)) {
                starts.push(start);
            }
        }
    }
    let mut best: Option<(&Value, Vec<usize>)> = None;
    for start in starts {
        let Some(path) = sequence::counter_path(start, state, &transitions, &same_state) else {
            continue;
        };
        if best.as_ref().is_none_or(|(_, p)| path.len() < p.len()) {
            best = Some((start, path));
        }
    }
    let (start, path) = best.ok_or(RECEIVER_NOT_REBUILT)?;
    let at = mark(b);
    if let Err(e) = rebuild_directly(cx, b, Wanted::new(start, type_path, before, var)) {
        undo(b, at);
        return Err(e);
    }
    for i in path {
        b.setup.push(Binding {
            var: "_".to_string(),
            mutable: false,
            expr: format!("{var}.{}", steps[i].0),
            repeat: 1,
            times: None,
        });
    }
    Ok(())
}

/// The value a call returned, looking inside `Ok(..)` and `Some(..)`, with the `.unwrap()` (or a
/// panic naming `call_path`, when the error type has no `Debug`) a test needs to get at it.
fn returned_struct<'v>(
    cx: &Ctx,
    ret: &'v Value,
    call_path: &str,
) -> Option<(&'v Value, Option<String>)> {
    match ret {
        Value::Enum {
            ty,
            variant,
            fields,
        } if ty.starts_with("core::result::Result") && variant == "Ok" => {
            let err_ty = ty
                .split_once(", ")
                .map(|(_, e)| e.trim_end_matches('>').trim().to_string());
            let debug = err_ty.as_deref().is_some_and(|e| {
                e.starts_with("alloc::string::String")
                    || e.starts_with("&str")
                    || crate::read::types::TypeFacts::shape(cx.api, e).is_some_and(|s| s.debug)
            });
            let unwrap = if debug {
                ".unwrap()".to_string()
            } else {
                format!(
                    ".unwrap_or_else(|_| panic!(\"{call_path} failed; it returned Ok in the recording\"))"
                )
            };
            Some((&fields.first()?.value, Some(unwrap)))
        }
        Value::Enum {
            ty,
            variant,
            fields,
        } if ty.starts_with("core::option::Option") && variant == "Some" => {
            Some((&fields.first()?.value, Some(".unwrap()".to_string())))
        }
        // `Err`, `None`: nothing was produced.
        Value::Enum { ty, .. }
            if ty.starts_with("core::result::Result") || ty.starts_with("core::option::Option") =>
        {
            None
        }
        other => Some((other, None)),
    }
}

/// Positions of the recorded calls that constructed a `type_path` object (see [`constructed`]).
fn ctors_of(cx: &Ctx, type_path: &str) -> Rc<Vec<usize>> {
    cached(&cx.ctors, type_path, || {
        (0..cx.trace.calls.len())
            .filter(|&i| constructed(cx, &cx.trace.calls[i], type_path).is_some())
            .collect()
    })
}

/// The state of the `type_path` object a recorded producer call gave back: a constructor-like
/// associated function of the type (returning `T`, `Option<T>` or `Result<T, E>`), or any public
/// call whose result is a `T` (a free function, a method of another object such as
/// `size.display()`, a builder step `quoter.allow_nul(true)`, the item `iter.next()` gave).
fn constructed<'t>(cx: &Ctx<'t>, ctor: &'t Call, type_path: &str) -> Option<&'t Value> {
    if ctor.outcome != Outcome::Returned {
        return None;
    }
    let Some(Target::Callable(c)) = cx.targets.get(&ctor.function) else {
        return None;
    };
    // A `&mut self` producer is one too, whether it left its receiver as it was (`map.entry(k)`)
    // or moved it on (`iter.next()`): [`producer_receiver`] rebuilds the receiver in the state
    // the call found it in, so the call gives the same value again.
    if reads_unbuilt_world(cx, ctor) {
        return None;
    }
    let (state, _) = returned_struct(cx, ctor.ret.as_ref()?, &c.call_path)?;
    let own_ctor = !c.api.has_receiver && c.self_type.as_deref() == Some(type_path);
    let produces = matches!(state, Value::Struct { ty, .. } | Value::Enum { ty, .. }
        if crate::read::types::strip_generics(ty) == type_path);
    (own_ctor || produces).then_some(state)
}

/// The recorded producers of `type_path` objects (indices into the trace's calls), the latest
/// first, the type's own (inherent) ones before trait ones (`PaperLedger::new()` rather than
/// `<PaperLedger as Default>::default()`).
fn producers_in_order(cx: &Ctx, type_path: &str) -> Vec<usize> {
    let ctors = ctors_of(cx, type_path);
    let via_trait = |i: usize| {
        matches!(cx.targets.get(&cx.trace.calls[i].function),
            Some(Target::Callable(c)) if c.via_trait.is_some())
    };
    let (inherent, by_trait): (Vec<usize>, Vec<usize>) =
        ctors.iter().rev().copied().partition(|&i| !via_trait(i));
    inherent.into_iter().chain(by_trait).collect()
}

/// How many producer calls deep an arrange step may go to rebuild one object.
const MAX_PRODUCER_DEPTH: u32 = 4;

/// Rebuilds the receiver of producer method call `ctor` (made before `before`) into a new
/// variable, as it was when the call was made; `None` when it cannot be rebuilt.
fn producer_receiver(cx: &Ctx, b: &mut Builder, ctor: &Call, before: CallId) -> Option<String> {
    if b.producer_depth >= MAX_PRODUCER_DEPTH || ctor.id >= before {
        return None;
    }
    let recv = ctor.args.iter().find(|a| a.name == "self")?;
    let state = strip_ref(&recv.value);
    let Value::Struct { ty, .. } = state else {
        return None;
    };
    let recv_type = crate::read::types::strip_generics(ty).to_string();
    let var = b.fresh(recv_type.rsplit("::").next().unwrap_or("receiver"));
    let mutable = matches!(cx.targets.get(&ctor.function),
        Some(Target::Callable(c)) if c.api.mut_receiver);
    b.producer_depth += 1;
    let object = ctor.object("self");
    let wanted = Wanted {
        state,
        object,
        type_path: &recv_type,
        before: ctor.id,
        var: &var,
        mutable,
    };
    let rebuilt = rebuild(cx, b, wanted);
    b.producer_depth -= 1;
    match rebuilt {
        Ok(()) => Some(var),
        Err(_) => {
            b.vars.remove(&var);
            None
        }
    }
}

/// An object in `state` from its recorded constructor, a part of a value a recorded call
/// returned, or a struct literal.
fn rebuild_directly(cx: &Ctx, b: &mut Builder, w: Wanted) -> Result<(), &'static str> {
    let Wanted {
        state,
        type_path,
        before,
        var,
        mutable,
        ..
    } = w;
    let mut state_dyns = Vec::new();
    dyn_addrs(state, &mut state_dyns);
    for i in producers_in_order(cx, type_path) {
        let ctor = &cx.trace.calls[i];
        if ctor.id >= before {
            continue;
        }
        let Some(built) = constructed(cx, ctor, type_path) else {
            continue;
        };
        if !same_state(built, state) {
            continue;
        }
        let Some(expr) = producer_call(cx, b, ctor, built, &state_dyns, before) else {
            continue;
        };
        b.arranged.push(ctor.id);
        b.setup.push(Binding {
            var: var.to_string(),
            mutable,
            expr,
            repeat: 1,
            times: None,
        });
        return Ok(());
    }
    if part_of_returned(cx, b, state, type_path, before, var, mutable) {
        return Ok(());
    }
    // No constructor: a struct literal, when every field is public and writable.
    if state_dyns.is_empty() {
        if let Ok(expr) = literal::render_value(state, false, cx.api) {
            b.setup.push(Binding {
                var: var.to_string(),
                mutable,
                expr,
                repeat: 1,
                times: None,
            });
            return Ok(());
        }
    }
    Err(RECEIVER_NOT_REBUILT)
}

/// `callee(args).unwrap()`: recorded producer call `ctor` written again, its receiver and object
/// arguments rebuilt first (their bindings added to `b`), the trait objects it got as mocks
/// answering what it asked of them. `built` is the value it gave, `state_dyns` the trait objects
/// of the state wanted (where its mocks stand). `None`, with `b` as it was, when some part
/// cannot be written.
fn producer_call(
    cx: &Ctx,
    b: &mut Builder,
    ctor: &Call,
    built: &Value,
    state_dyns: &[(String, u64)],
    before: CallId,
) -> Option<String> {
    let replayed_before = b.replayed.clone();
    let expr = producer_call_expr(cx, b, ctor, built, state_dyns, before);
    match expr {
        Some(_) => {
            b.replayed.insert(ctor.id.0);
        }
        // What a failed attempt replayed is not part of the test.
        None => b.replayed = replayed_before,
    }
    expr
}

/// The expression of [`producer_call`].
fn producer_call_expr(
    cx: &Ctx,
    b: &mut Builder,
    ctor: &Call,
    built: &Value,
    state_dyns: &[(String, u64)],
    before: CallId,
) -> Option<String> {
    let Some(Target::Callable(c)) = cx.targets.get(&ctor.function) else {
        return None;
    };
    let unwrap = ctor
        .ret
        .as_ref()
        .and_then(|r| returned_struct(cx, r, &c.call_path))
        .and_then(|(_, unwrap)| unwrap)
        .unwrap_or_default();
    let mut built_dyns = Vec::new();
    dyn_addrs(built, &mut built_dyns);
    let to_state: HashMap<u64, u64> = built_dyns
        .iter()
        .zip(state_dyns)
        .map(|((_, from), (_, to))| (*from, *to))
        .collect();
    let at = mark(b);
    let mut args = Vec::new();
    let mut ok = true;
    // A producer method: its receiver is rebuilt first, as it was before the call.
    let receiver = if c.api.has_receiver {
        Some(producer_receiver(cx, b, ctor, before)?)
    } else {
        None
    };
    let own_args: Vec<&carve_storage::Arg> = ctor
        .args
        .iter()
        .filter(|a| !(c.api.has_receiver && a.name == "self"))
        .collect();
    for (arg, param) in own_args.iter().copied().zip(&c.api.params) {
        let moved = |addr| to_state.get(&addr).copied().unwrap_or(addr);
        if let Some(expr) = dep_arg(cx, b, &arg.value, param, moved) {
            match expr {
                Ok(expr) => args.push(expr),
                Err(_) => ok = false,
            }
            continue;
        }
        match literal::render(&arg.value, &param.ty, Position::Arg)
            .or_else(|_| literal::render_value(&arg.value, false, cx.api))
        {
            Ok(expr) => args.push(expr),
            // A builder step taking another object (`options.base_url(Some(&base))`,
            // `Replace::new(capture)`): that object rebuilt from its own provenance.
            Err(_) if !b.plain_only && b.producer_depth < MAX_PRODUCER_DEPTH => {
                b.producer_depth += 1;
                let rebuilt = object_arg(cx, b, &arg.value, ctor.object(&arg.name), param, ctor.id);
                b.producer_depth -= 1;
                match rebuilt {
                    Ok((expr, _)) => args.push(expr),
                    Err(_) => ok = false,
                }
            }
            Err(_) => ok = false,
        }
    }
    // What the constructor itself asked of its dependencies, the mocks answer too.
    if !ok || own_args.len() != c.api.params.len() || interactions(cx, b, ctor.id).is_err() {
        undo(b, at);
        return None;
    }
    let callee = match &receiver {
        Some(recv) => format!("{recv}.{}", c.api.ident),
        None => c.call_path.clone(),
    };
    if receiver.is_some() {
        b.trait_uses.extend(c.via_trait.iter().cloned());
    }
    Some(format!("{callee}({}){unwrap}", args.join(", ")))
}

/// Positions of the recorded public calls whose result holds a `type_path` value as a direct
/// part a test can take out: a field of a variant of one of the crate's public enums
/// (`Entry::Vacant(entry)`), or a `pub` field of one of its structs.
fn part_producers(cx: &Ctx, type_path: &str) -> Rc<Vec<usize>> {
    cached(&cx.parts, type_path, || {
        returned_public_calls(cx, |call, c| {
            call.ret
                .as_ref()
                .and_then(|r| returned_struct(cx, r, &c.call_path))
                .is_some_and(|(whole, _)| !parts(cx, whole, type_path).is_empty())
        })
    })
}

/// Positions of the recorded calls of functions a test can call that returned and that `keep`
/// accepts (given the call and how a test calls its function).
pub(super) fn returned_public_calls(
    cx: &Ctx,
    keep: impl Fn(&Call, &Callable) -> bool,
) -> Vec<usize> {
    (0..cx.trace.calls.len())
        .filter(|&i| {
            let call = &cx.trace.calls[i];
            matches!(cx.targets.get(&call.function),
                Some(Target::Callable(c)) if call.outcome == Outcome::Returned && keep(call, c))
        })
        .collect()
}

/// The parts of `whole` of type `type_path` a test can take out, each with the pattern (a
/// `let ... else`, `{}` standing for the variable) or the field access that takes it.
fn parts<'v>(cx: &Ctx, whole: &'v Value, type_path: &str) -> Vec<(&'v Value, Projection)> {
    let is_part = |v: &Value| {
        matches!(v, Value::Struct { ty, .. } | Value::Enum { ty, .. }
            if crate::read::types::strip_generics(ty) == type_path)
    };
    match whole {
        Value::Enum {
            ty,
            variant,
            fields,
        } => {
            let base = crate::read::types::strip_generics(ty);
            if cx.api.public_type(base).is_none() || syntax::ident(variant).is_err() {
                return Vec::new();
            }
            let tuple = fields.iter().all(|f| f.name.starts_with("__"));
            fields
                .iter()
                .enumerate()
                .filter(|(_, f)| is_part(&f.value))
                .filter_map(|(at, f)| {
                    let pattern = if tuple {
                        let mut slots = vec!["_"; at];
                        slots.push("{}");
                        if at + 1 < fields.len() {
                            slots.push("..");
                        }
                        format!("{base}::{variant}({})", slots.join(", "))
                    } else {
                        let name = syntax::ident(&f.name).ok()?;
                        format!("{base}::{variant} {{ {name}: {{}}, .. }}")
                    };
                    Some((&f.value, Projection::Variant(pattern)))
                })
                .collect()
        }
        Value::Struct { ty, fields } => {
            let Some(api_ty) = cx.api.public_type(crate::read::types::strip_generics(ty)) else {
                return Vec::new();
            };
            fields
                .iter()
                .filter(|f| is_part(&f.value))
                .filter_map(|f| {
                    // A tuple struct's fields are recorded `__0`, declared and written `0`.
                    let name = match f.name.strip_prefix("__") {
                        Some(n) if n.bytes().all(|c| c.is_ascii_digit()) => n.to_string(),
                        _ => syntax::ident(&f.name).ok()?.to_string(),
                    };
                    api_ty
                        .fields
                        .iter()
                        .any(|a| a.public && a.name == name)
                        .then_some((&f.value, Projection::Field(name)))
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// How a test takes a part out of a value.
enum Projection {
    /// `let <pattern> = value else { panic!(..) };`, `{}` in the pattern standing for the part.
    Variant(String),
    /// `value.field`.
    Field(String),
}

/// An object in `state` that a recorded public call returned as a part of its result (the
/// `VacantEntry` inside the `Entry::Vacant` that `map.entry(k)` gave): that call replayed and the
/// part taken out, by a `let ... else` on the recorded variant or a `pub` field.
fn part_of_returned(
    cx: &Ctx,
    b: &mut Builder,
    state: &Value,
    type_path: &str,
    before: CallId,
    var: &str,
    mutable: bool,
) -> bool {
    if b.producer_depth >= MAX_PRODUCER_DEPTH {
        return false;
    }
    let mut state_dyns = Vec::new();
    dyn_addrs(state, &mut state_dyns);
    for &i in part_producers(cx, type_path).iter().rev() {
        let call = &cx.trace.calls[i];
        if call.id >= before {
            continue;
        }
        let Some(Target::Callable(c)) = cx.targets.get(&call.function) else {
            continue;
        };
        let Some((whole, _)) = call
            .ret
            .as_ref()
            .and_then(|r| returned_struct(cx, r, &c.call_path))
        else {
            continue;
        };
        let Some((part, projection)) = parts(cx, whole, type_path)
            .into_iter()
            .find(|(part, _)| same_state(part, state))
        else {
            continue;
        };
        b.producer_depth += 1;
        let expr = producer_call(cx, b, call, part, &state_dyns, before);
        b.producer_depth -= 1;
        let Some(expr) = expr else {
            continue;
        };
        b.arranged.push(call.id);
        b.setup.push(match projection {
            Projection::Field(field) => Binding {
                var: var.to_string(),
                mutable,
                expr: format!("{expr}.{field}"),
                repeat: 1,
                times: None,
            },
            Projection::Variant(pattern) => {
                let bound = format!("{}{var}", if mutable { "mut " } else { "" });
                Binding {
                    var: String::new(),
                    mutable: false,
                    expr: format!(
                        "let {} = {expr} else {{ panic!(\"{} returned another variant than in the recording\") }}",
                        pattern.replace("{}", &bound),
                        c.call_path
                    ),
                    repeat: 1,
                    times: None,
                }
            }
        });
        return true;
    }
    false
}

fn is_trait_call(cx: &Ctx, call: &Call) -> Option<String> {
    let info = cx.trace.function(call.function)?;
    crate::read::paths::trait_of_impl(&info.path)
}

/// Whether `call`, or any call below it, read what a test cannot control, files included.
fn reads_world(cx: &Ctx, call: &Call) -> bool {
    cx.below.get(&call.id).is_some_and(|b| b.1 || b.2)
}

/// Whether `call`, or any call below it, read what a test cannot control, files that
/// [`world`] rebuilds left out: an arrange step replaying such a call is kept in
/// [`Builder`]'s `arranged`, and the test gets those files.
fn reads_unbuilt_world(cx: &Ctx, call: &Call) -> bool {
    cx.below.get(&call.id).is_some_and(|b| b.1)
}

/// Whether what `call` itself read (not the calls below it) keeps it from running in a test.
fn own_world(cx: &Ctx, call: &Call) -> bool {
    let own: Vec<&FileRead> = cx.file_reads(call.id).collect();
    world::own_reads(call, &own).0
}

/// The first thing `call` or a call below it read that a test cannot control, and where:
/// `clock: std::time::SystemTime::now in app::stamp`.
pub fn world_read(cx: &Ctx, call: &Call) -> Option<String> {
    if let Some(first) = call.touches.first() {
        let function = cx
            .trace
            .function(call.function)
            .map_or("?", |f| f.path.as_str());
        return Some(format!("{first} in {function}"));
    }
    cx.children
        .get(&Some(call.id))?
        .iter()
        .find_map(|&i| world_read(cx, &cx.trace.calls[i]))
}

fn has_trait_calls(cx: &Ctx, id: CallId) -> bool {
    cx.below.get(&id).is_some_and(|b| b.0)
}

/// Records every call made through a dependency below `parent`; other calls are walked into.
fn interactions(cx: &Ctx, b: &mut Builder, parent: CallId) -> Result<(), &'static str> {
    let Some(kids) = cx.children.get(&Some(parent)) else {
        return Ok(());
    };
    for &i in kids {
        let call = &cx.trace.calls[i];
        let dep = is_trait_call(cx, call).and_then(|trait_path| {
            let addr = match call.arg("self") {
                Some(Value::Ref { addr, .. }) => *addr,
                _ => 0,
            };
            b.find_dep(&trait_path, addr).map(|d| (d, trait_path))
        });
        let Some((d, trait_path)) = dep else {
            // Runs for real in the test.
            if own_world(cx, call) {
                return Err(UNTESTABLE);
            }
            interactions(cx, b, call.id)?;
            continue;
        };
        if call.outcome != Outcome::Returned {
            return Err(MOCK_UNREPLAYABLE);
        }
        let tr = mockable(cx.api, &trait_path)?;
        let info = cx.trace.function(call.function).ok_or(UNDECODED)?;
        let method_name = info.path.rsplit("::").next().unwrap_or(&info.name);
        let method = tr
            .methods
            .iter()
            .find(|m| m.name == method_name)
            .ok_or(NOT_MOCKABLE)?;
        let args: Vec<_> = call.args.iter().filter(|a| a.name != "self").collect();
        if args.len() != method.params.len() {
            return Err(UNDECODED);
        }
        let mut with = Vec::new();
        for (arg, param) in args.iter().zip(&method.params) {
            let pred = match dyn_object(&arg.value) {
                Some(_) => None,
                None => literal::render(&arg.value, &param.ty, Position::Expected)
                    .or_else(|_| literal::render_value(&arg.value, false, cx.api))
                    .ok(),
            };
            with.push(pred.map_or_else(|| "always()".to_string(), |p| format!("eq({p})")));
        }
        if with.iter().all(|w| w == "always()") {
            with.clear();
        }
        let returns = match (&call.ret, &method.ret) {
            (None | Some(Value::Unit), DeclType::Unit) => Returns::Unit,
            (Some(value), decl) => {
                if let Some((child_trait, addr)) = dyn_object(value) {
                    if !method.ret_written.starts_with("Box<") {
                        return Err(MOCK_UNREPLAYABLE);
                    }
                    let short = child_trait
                        .rsplit("::")
                        .next()
                        .unwrap_or(&child_trait)
                        .to_string();
                    let var = b.add_dep(child_trait, addr, &short);
                    let pattern = vec!["_"; method.params.len()].join(", ");
                    Returns::Mock { var, pattern }
                } else {
                    let expr = literal::render(value, decl, Position::Arg)
                        .or_else(|_| literal::render_value(value, false, cx.api))
                        .map_err(|_| MOCK_UNREPLAYABLE)?;
                    if matches!(decl, DeclType::Ref { .. }) {
                        return Err(MOCK_UNREPLAYABLE);
                    }
                    if b.first_answer.is_none() {
                        b.first_answer = Some(format!(
                            "{}_returns_{}",
                            method.name,
                            naming::value_slug(value)
                        ));
                    }
                    Returns::Const { expr }
                }
            }
            (None, _) => return Err(MOCK_UNREPLAYABLE),
        };
        let rank = b.deps.iter().map(|d| d.calls.len()).sum::<usize>();
        b.deps[d]
            .calls
            .push((rank, method.name.clone(), with, returns));
    }
    Ok(())
}

fn mockable<'a>(api: &'a CrateApi, trait_path: &str) -> Result<&'a TraitApi, &'static str> {
    let tr = api.public_trait(trait_path).ok_or(NOT_MOCKABLE)?;
    if tr.blocker.is_some() {
        return Err(NOT_MOCKABLE);
    }
    Ok(tr)
}

/// Assertions on the state of `var` after the call: public fields and getters
/// (`fn field(&self) -> T`).
fn effects(cx: &Ctx, b: &mut Builder, var: &str, after: &Value, type_path: &str) {
    let observed = observations(cx, var, after, type_path);
    b.effects.extend(observed);
}

/// What a test can observe of `var` in `state`: `assert_eq!`s on its public fields and getters,
/// or, when some field shows through neither, on its derived `Debug` output as a whole.
/// Whether the recording shows getter `getter` of `type_path` returning something other than
/// field `field` of its receiver (SmallVec's `capacity()` is not its `capacity` field, which
/// holds the length while the items are inline): a field's namesake is its getter only until a
/// recorded call says otherwise.
fn getter_contradicted(cx: &Ctx, type_path: &str, getter: &str, field: &str) -> bool {
    let calls = cached(&cx.getter_calls, &format!("{type_path}::{getter}"), || {
        (0..cx.trace.calls.len())
            .filter(|&i| {
                matches!(cx.targets.get(&cx.trace.calls[i].function),
                    Some(Target::Callable(c)) if c.api.has_receiver
                        && c.api.ident == getter
                        && c.self_type.as_deref() == Some(type_path))
            })
            .collect()
    });
    calls.iter().any(|&i| {
        let call = &cx.trace.calls[i];
        let (Some(recv), Some(ret)) = (call.arg("self"), call.ret.as_ref()) else {
            return false;
        };
        let Value::Struct { fields, .. } = strip_ref(recv) else {
            return false;
        };
        fields
            .iter()
            .find(|f| f.name == field)
            .is_some_and(|f| !same_state(strip_ref(&f.value), strip_ref(ret)))
    })
}

fn observations(cx: &Ctx, var: &str, state: &Value, type_path: &str) -> Vec<Effect> {
    let Value::Struct { fields, .. } = strip_ref(state) else {
        return Vec::new();
    };
    let Some(ty) = cx.api.public_type(type_path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut hidden = 0;
    for field in fields {
        let declared = ty.fields.iter().find(|f| f.name == field.name);
        let getter = ty.functions.get(&field.name).filter(|f| {
            f.public
                && f.has_receiver
                && !f.mut_receiver
                && f.params.is_empty()
                && f.blocker.is_none()
                && !getter_contradicted(cx, type_path, &f.ident, &field.name)
        });
        let (actual, expected) = if let Some(g) = getter {
            let expected = literal::render(&field.value, &g.ret, Position::Expected)
                .or_else(|_| literal::render_value(&field.value, true, cx.api));
            (format!("{var}.{}()", g.ident), expected)
        } else if declared.is_some_and(|f| f.public) {
            (
                format!("{var}.{}", field.name),
                literal::render_value(&field.value, true, cx.api),
            )
        } else {
            hidden += 1;
            continue;
        };
        match expected {
            Ok(expected) => out.push(Effect {
                actual,
                expected,
                message: None,
            }),
            Err(_) => hidden += 1,
        }
    }
    if hidden > 0 {
        if let Some(repr) = debug_repr(strip_ref(state), cx.api) {
            return vec![Effect {
                actual: format!("format!(\"{{:?}}\", {var})"),
                expected: crate::syntax::str_lit(&repr),
                message: None,
            }];
        }
    }
    out
}

/// One expectation of an interleaved, cross-mock sequence: which mock it is set on.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct OrderedExpectation {
    pub var: String,
    pub expectation: Expectation,
}

/// Identical consecutive calls become one expectation `.times(n)`.
fn expectations<'c>(calls: impl Iterator<Item = &'c Interaction>) -> Vec<Expectation> {
    let mut out: Vec<Expectation> = Vec::new();
    for (_, method, with, returns) in calls {
        if let Some(last) = out.last_mut() {
            let mergeable = !matches!(returns, Returns::Mock { .. });
            if mergeable && &last.method == method && &last.with == with && &last.returns == returns
            {
                last.times += 1;
                continue;
            }
        }
        out.push(Expectation {
            method: method.clone(),
            with: with.clone(),
            times: 1,
            sequence: None,
            returns: returns.clone(),
        });
    }
    out
}

/// What [`mock_setups`] gives: the mocks in the order to write them, the expectations ordered
/// across mocks, the `mock!` declarations, and whether any `Sequence` is used.
type MockPlan = (Vec<MockSetup>, Vec<OrderedExpectation>, Vec<MockDecl>, bool);

/// The mocks in the order to write them (children before the mocks returning them) and their
/// expectations (identical consecutive calls become `.times(n)`).
///
/// Where the order of calls is part of the behaviour it is checked with a `Sequence`: within a
/// mock when one method answers more than once or a `&mut self` method changed the
/// dependency's state (`bind` before `query`); across mocks when two or more independent
/// dependencies (not returned by another mock) had their state changed (`withdraw` from one
/// account before `deposit` to the other). A child mock is set up before the parent returning it,
/// so children keep a sequence of their own; the tree orders them against their parents.
fn mock_setups(cx: &Ctx, b: &Builder) -> Result<MockPlan, &'static str> {
    let mut setups = Vec::new();
    let mut decls = Vec::new();
    let mut sequence = false;
    let returned: BTreeSet<&str> = b
        .deps
        .iter()
        .flat_map(|d| &d.calls)
        .filter_map(|(_, _, _, r)| match r {
            Returns::Mock { var, .. } => Some(var.as_str()),
            _ => None,
        })
        .collect();
    let mut stateful = BTreeSet::new();
    for dep in &b.deps {
        let tr = mockable(cx.api, &dep.trait_path)?;
        let called: BTreeSet<&str> = dep.calls.iter().map(|c| c.1.as_str()).collect();
        if tr
            .methods
            .iter()
            .any(|m| m.mut_receiver && called.contains(m.name.as_str()))
        {
            stateful.insert(dep.var.as_str());
        }
    }
    let across: BTreeSet<&str> = stateful
        .iter()
        .copied()
        .filter(|v| !returned.contains(v))
        .collect();
    let across = if across.len() >= 2 {
        across
    } else {
        BTreeSet::new()
    };
    for dep in b.deps.iter().rev() {
        let tr = mockable(cx.api, &dep.trait_path)?;
        let decl = MockDecl {
            name: tr.name.clone(),
            trait_path: dep.trait_path.clone(),
            methods: tr.methods.iter().map(|m| m.signature.clone()).collect(),
        };
        let mock_type = format!("Mock{}", tr.name);
        if !decls.contains(&decl) {
            decls.push(decl);
        }
        if across.contains(dep.var.as_str()) {
            // Its expectations are set below, interleaved with the other mocks'.
            setups.push(MockSetup {
                var: dep.var.clone(),
                mock_type,
                mutable: true,
                sequence: None,
                expectations: Vec::new(),
            });
            continue;
        }
        let mut expectations = expectations(dep.calls.iter());
        let mut methods = BTreeSet::new();
        let repeated = expectations
            .iter()
            .any(|e| !methods.insert(e.method.clone()));
        let ordered = expectations.len() > 1 && (repeated || stateful.contains(dep.var.as_str()));
        let seq_var =
            ordered.then(|| format!("seq_{}", dep.var.strip_prefix("mock_").unwrap_or(&dep.var)));
        if ordered {
            sequence = true;
            expectations
                .iter_mut()
                .for_each(|e| e.sequence = seq_var.clone());
        }
        setups.push(MockSetup {
            var: dep.var.clone(),
            mock_type,
            mutable: !expectations.is_empty(),
            sequence: seq_var,
            expectations,
        });
    }
    // The independent stateful mocks' calls, in the order they happened.
    let mut interleaved: Vec<(usize, &str, &Interaction)> = b
        .deps
        .iter()
        .filter(|d| across.contains(d.var.as_str()))
        .flat_map(|d| d.calls.iter().map(move |c| (c.0, d.var.as_str(), c)))
        .collect();
    interleaved.sort_by_key(|(rank, ..)| *rank);
    let mut ordered: Vec<OrderedExpectation> = Vec::new();
    for (_, var, call) in interleaved {
        let mut e = expectations(std::iter::once(call)).remove(0);
        e.sequence = Some("seq".to_string());
        if let Some(last) = ordered.last_mut() {
            let same = last.var == var
                && last.expectation.method == e.method
                && last.expectation.with == e.with
                && last.expectation.returns == e.returns
                && !matches!(e.returns, Returns::Mock { .. });
            if same {
                last.expectation.times += 1;
                continue;
            }
        }
        ordered.push(OrderedExpectation {
            var: var.to_string(),
            expectation: e,
        });
    }
    sequence |= !ordered.is_empty();
    Ok((setups, ordered, decls, sequence))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{plan, Plan, PlanOptions, NEEDS_MOCKALL};
    use carve_storage::{Arg, Field, FunctionInfo, Language, ParamInfo, Run, RunId, RunInfo};

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
}
