//! Equivalent calls grouped while a trace is read, so `generate` holds one representative of a
//! million alike calls rather than all of them (JET's redundancy by state equivalence).
//!
//! Two calls are *equivalent* when they are calls of the same function under the same parent
//! with the same arguments (receiver state included), the same objects, the same outcome, return
//! value, state after the call and reads of the world, and equivalent calls below them, in the
//! same order. The later one is dropped with everything below it and counted under the earlier
//! one, which stays in the trace the planner sees. Because only siblings are grouped, every call
//! that stays still has below it a call like each one dropped (a parent that reads the clock
//! through a dropped child still has the kept child that reads it).
//!
//! Never dropped: calls of trait methods (`<T as Trait>::m`) and closures, which a parent's test
//! replays through a mock, one expectation per call; calls that made an object (an object's
//! `created_by` must stay in the trace). A trace whose calls do not nest (a parent that is not
//! open on the call's thread) stops the grouping from there on: nothing more is dropped.
//!
//! With a cap ([`Grouper::max_per_function`], `generate`'s `--max-per-function`), only the first
//! N distinct calls of each function (distinct: their keys differ) are kept for planning. A later
//! call of the function is dropped when it is *quiet* (a droppable function, not a creator, no
//! reads of the world, and nothing kept below it: a parent's test only needs, of the calls below
//! it, the calls through traits and the reads of the world, which are never quiet): equal to one
//! of the first N (not a sibling of it), it is counted under it as an equivalent call; else it is
//! counted per function as over the cap ([`GroupedTrace::over_max_per_function`]), unless it is
//! one of the next `N × ROWS_PER_CAP` distinct calls of the function: those are kept aside
//! ([`GroupedTrace::rows`]), out of the trace, as the rows of table tests the planner may write
//! (`table.rs`). A call that is not quiet stays, whatever its function's count, and the
//! planner's own cap keeps the tests per function at N. So what stays is bounded by the cap and
//! the program's functions, not by the trace's length: the keys remembered are at most
//! `N × (1 + ROWS_PER_CAP)` per function, and the calls kept are the first N, the rows, the
//! calls that are not quiet and the calls above them.
//!
//! Values follow what can be written ([`LeanValues`], `generate --crate`): a call kept whose
//! function no test can call (`Target::Private`) and whose values no rule reads keeps its
//! shape (argument names, types, outcome, objects) but not its values, once the grouper has
//! decided about it. Its key was computed from the full values, and later calls are compared
//! with it through a 128-bit digest of them, so grouping and every count are as with the values.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};

use carve_storage::{
    Arg, Call, CallId, FunctionId, FunctionInfo, ObjectId, ObjectInfo, Run, Trace, Value,
};

/// How many rows the tables of one function hold at most, per test the cap allows
/// (`--max-per-function 100`: 1,000 rows; see `plan/table.rs`). Calls past that stay counted
/// over the cap.
pub const ROWS_PER_CAP: usize = 10;

/// Why a kept call's value is [`Value::Unavailable`]: the grouper let it go (see [`LeanValues`]).
pub const VALUE_NOT_KEPT: &str = "not kept: no test calls this function";

/// Which calls' values [`Grouper`] may let go once it decided about them: calls no test can
/// make and whose values no planning rule reads.
///
/// A call qualifies when its function resolves to `Target::Private` (the planner counts such
/// calls as private and reads nothing else of them) and it is none of the calls whose values a
/// rule reads although no test makes them:
/// - calls of methods of the crate's own traits (`<T as Trait>::m`, private `T` included: a
///   parent's test replays them through a mock of the trait with their recorded arguments and
///   results), of `Display::fmt` (the texts observations use) and `Drop::drop`, of other impl
///   blocks carve does not split, and closures. A method of a trait from elsewhere
///   (`<Tree<T> as core::ops::Index<_>>::index` on a private `Tree`) qualifies: no mock is made of
///   such a trait (`mockable` wants a public trait of the crate), and the one thing read of it
///   before that check, the receiver's address (which dependency it is), is kept;
/// - calls that made an object (an object's history starts from the value its maker returned);
/// - calls that read the world (`touches`: why a test is untestable, named from the call);
/// - calls with an object of a type a test may hold (anything but a type the crate declares and
///   does not make public): an object's history (`history.rs`, `moved_from`) reads the states
///   of every call on objects of the rebuilt object's type;
/// - calls with a `self` that is not such a private object: a handle chain (`scenario.rs`,
///   `handle_chain`) ends at the next call on the object, private or not, and takes its state.
///
/// What such a call keeps, argument names and types, outcome, objects, is what the other rules
/// look at (`holding_call` goes up through calls on the same object and needs a public call
/// around it, which these are not; `building_call` reads only objects and parents).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeanValues {
    /// Functions no test calls: private, not trait methods, not closures.
    pub(crate) functions: HashSet<FunctionId>,
    /// Objects of types the crate declares and keeps private.
    pub(crate) private_objects: HashSet<ObjectId>,
}

impl LeanValues {
    /// Whether `call`'s values may go (see the type's documentation); `creator`: it made an
    /// object.
    fn may_drop_values(&self, call: &Call, creator: bool) -> bool {
        let private_object =
            |o: &carve_storage::ArgObject| self.private_objects.contains(&o.object);
        self.functions.contains(&call.function)
            && !creator
            && call.touches.is_empty()
            && call.objects.iter().all(private_object)
            && (call.arg("self").is_none()
                || call
                    .objects
                    .iter()
                    .any(|o| o.arg == "self" && private_object(o)))
    }
}

/// `call` with every value (arguments, result, state after) replaced by an unavailable value of
/// the same type: the shape stays, the bytes go. A reference keeps its address (a trait call's
/// receiver says which dependency it was made on), not what it points to.
fn without_values(call: &mut Call) {
    fn gone(v: &Value) -> Value {
        match v {
            Value::Ref { ty, addr, target } => Value::Ref {
                ty: ty.clone(),
                addr: *addr,
                target: Box::new(Value::Unavailable {
                    ty: target.type_name().to_string(),
                    reason: VALUE_NOT_KEPT.to_string(),
                }),
            },
            other => Value::Unavailable {
                ty: other.type_name().to_string(),
                reason: VALUE_NOT_KEPT.to_string(),
            },
        }
    }
    let blank = |args: &mut Vec<Arg>| {
        for a in args.iter_mut() {
            a.value = gone(&a.value);
        }
        args.shrink_to_fit();
    };
    blank(&mut call.args);
    blank(&mut call.after);
    if let Some(ret) = &mut call.ret {
        *ret = gone(ret);
    }
}

/// A trace with equivalent calls grouped: the calls kept, and for each representative the
/// calls counted under it.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupedTrace {
    pub trace: Trace,
    /// Representative → the equivalent calls dropped (their ids, in start order).
    pub equivalent: BTreeMap<CallId, Vec<CallId>>,
    /// Calls dropped, per function, because the function already had its
    /// [`Grouper::max_per_function`] distinct calls (not planned, not listed one by one).
    pub over_max_per_function: BTreeMap<FunctionId, usize>,
    /// Quiet calls past their function's cap kept out of `trace`, in start order, to be the
    /// rows of table tests (at most `ROWS_PER_CAP` times the cap per function).
    pub rows: Vec<Call>,
    /// The run's thread names by thread id, when the reader gives them (libtest names each
    /// test's thread after the test: carved tests say which test their call came from).
    pub threads: BTreeMap<i32, String>,
}

impl GroupedTrace {
    /// A trace taken as it is, nothing grouped.
    pub fn whole(trace: Trace) -> GroupedTrace {
        GroupedTrace {
            trace,
            equivalent: BTreeMap::new(),
            over_max_per_function: BTreeMap::new(),
            rows: Vec::new(),
            threads: BTreeMap::new(),
        }
    }

    /// How many recorded calls the grouped trace stands for.
    pub fn recorded_calls(&self) -> usize {
        self.trace.calls.len()
            + self.rows.len()
            + self.equivalent.values().map(Vec::len).sum::<usize>()
            + self.over_max_per_function.values().sum::<usize>()
    }
}

/// A call still running on its thread while the trace is read.
struct Open {
    id: CallId,
    /// The keys of the children that closed, in order, folded into one (a call with a million
    /// children must not hold a million keys).
    kids: u128,
    /// Children kept so far, by key: the first call of each.
    seen: HashMap<u128, CallId>,
    /// Kept calls below it, in start order.
    below: Vec<CallId>,
}

impl Open {
    fn new(id: CallId) -> Open {
        Open {
            id,
            kids: 0,
            seen: HashMap::new(),
            below: Vec::new(),
        }
    }
}

/// `kids` with one more child's key folded in (order matters).
fn fold_kid(kids: u128, kid: u128) -> u128 {
    let half = |salt: u8| {
        let mut h = DefaultHasher::new();
        salt.hash(&mut h);
        kids.hash(&mut h);
        kid.hash(&mut h);
        h.finish()
    };
    (u128::from(half(1)) << 64) | u128::from(half(2))
}

/// Groups the calls of one run as they come in start order ([`Grouper::push`]), then hands
/// over the grouped trace ([`Grouper::finish`]).
pub struct Grouper {
    run: Run,
    functions: Vec<FunctionInfo>,
    objects: Vec<ObjectInfo>,
    droppable_function: HashSet<FunctionId>,
    creators: HashSet<CallId>,
    kept: BTreeMap<CallId, Call>,
    /// Kept calls below each kept call that has any (to map a dropped subtree onto its
    /// representative's).
    below: HashMap<CallId, Vec<CallId>>,
    open: HashMap<i32, Vec<Open>>,
    /// The first root of each key (roots are siblings too).
    roots: HashMap<u128, CallId>,
    equivalent: BTreeMap<CallId, Vec<CallId>>,
    /// False once the calls stopped nesting: nothing more is dropped.
    grouping: bool,
    /// At most this many distinct calls per function are kept for planning (`None`: all).
    max_per_function: Option<usize>,
    /// Per function, the keys of its first distinct calls (at most `max_per_function`) and the
    /// call kept for each.
    distinct: HashMap<FunctionId, HashMap<u128, CallId>>,
    over_max_per_function: BTreeMap<FunctionId, usize>,
    /// Quiet distinct calls past the cap, kept for table rows.
    rows: BTreeMap<CallId, Call>,
    /// Calls whose values may go once decided about (none unless [`Grouper::lean_values`]).
    lean: LeanValues,
    /// Kept calls (or rows) whose values went: the digest of those values, to compare later
    /// calls with.
    digests: HashMap<CallId, u128>,
}

impl Grouper {
    pub fn new(run: Run, functions: Vec<FunctionInfo>, objects: Vec<ObjectInfo>) -> Grouper {
        let droppable_function = functions
            .iter()
            .filter(|f| !f.path.starts_with('<') && !f.path.contains("{{closure}}"))
            .map(|f| f.id)
            .collect();
        let creators = objects.iter().filter_map(|o| o.created_by).collect();
        Grouper {
            run,
            functions,
            objects,
            droppable_function,
            creators,
            kept: BTreeMap::new(),
            below: HashMap::new(),
            open: HashMap::new(),
            roots: HashMap::new(),
            equivalent: BTreeMap::new(),
            grouping: true,
            max_per_function: None,
            distinct: HashMap::new(),
            over_max_per_function: BTreeMap::new(),
            rows: BTreeMap::new(),
            lean: LeanValues::default(),
            digests: HashMap::new(),
        }
    }

    /// Lets go of the values of the calls `lean` names once they are decided about (kept or
    /// kept aside as rows): the planner never reads them.
    pub fn lean_values(mut self, lean: LeanValues) -> Grouper {
        self.lean = lean;
        self
    }

    /// Keeps for planning only the first `n` distinct calls of each function, and those that
    /// are not quiet (see the module's documentation); the others are counted, not kept.
    pub fn max_per_function(mut self, n: usize) -> Grouper {
        self.max_per_function = Some(n);
        self
    }

    /// Takes the next call in start order.
    pub fn push(&mut self, call: Call) {
        let (id, thread, parent) = (call.id, call.thread, call.parent);
        let stack_has_parent = |stack: &Vec<Open>| match parent {
            None => true,
            Some(p) => stack.iter().any(|o| o.id == p),
        };
        let nests = self.open.get(&thread).is_none_or(stack_has_parent) && parent < Some(id);
        // Calls of this thread that are not the parent have ended.
        loop {
            let top = self.open.get(&thread).and_then(|s| s.last()).map(|o| o.id);
            match top {
                Some(top) if Some(top) != parent => self.close(thread),
                _ => break,
            }
        }
        if !nests && parent.is_some() {
            self.grouping = false;
        }
        self.kept.insert(id, call);
        self.open.entry(thread).or_default().push(Open::new(id));
    }

    /// The grouped trace, once every call was pushed.
    pub fn finish(mut self) -> GroupedTrace {
        let threads: Vec<i32> = self.open.keys().copied().collect();
        for thread in threads {
            while self.open.get(&thread).is_some_and(|s| !s.is_empty()) {
                self.close(thread);
            }
        }
        GroupedTrace {
            trace: Trace {
                run: self.run,
                functions: self.functions,
                calls: self.kept.into_values().collect(),
                objects: self.objects,
                file_reads: Vec::new(),
            },
            equivalent: self.equivalent,
            over_max_per_function: self.over_max_per_function,
            rows: self.rows.into_values().collect(),
            threads: BTreeMap::new(),
        }
    }

    /// Ends the innermost open call of `thread`: drops it when a sibling before it was
    /// equivalent, or when it is quiet and its function already has its distinct calls (see the
    /// module's documentation); else keeps it.
    fn close(&mut self, thread: i32) {
        let stack = self.open.get_mut(&thread).expect("an open call to close");
        let done = stack.pop().expect("an open call to close");
        let call = &self.kept[&done.id];
        let key = key(call, done.kids);
        let function = call.function;
        let droppable = self.grouping
            && self.droppable_function.contains(&function)
            && !self.creators.contains(&done.id);
        let quiet = droppable && call.touches.is_empty() && done.below.is_empty();
        let seen = match stack.last_mut() {
            Some(parent) => {
                parent.kids = fold_kid(parent.kids, key);
                &parent.seen
            }
            None => &self.roots,
        };
        let first = seen.get(&key).copied();
        if let Some(first) = first {
            let same = droppable
                && self.same_as(first, &self.kept[&done.id])
                && self.below.get(&first).map_or(0, Vec::len) == done.below.len();
            if same {
                self.drop_onto(first, done.id, &done.below);
                return;
            }
        }
        if let Some(max) = self.max_per_function {
            let known = self.distinct.entry(function).or_default();
            match known.get(&key).copied() {
                Some(rep) if rep != done.id && quiet => {
                    let equal = self.same_as(rep, &self.kept[&done.id]);
                    self.kept.remove(&done.id);
                    if equal {
                        self.equivalent.entry(rep).or_default().push(done.id);
                    } else {
                        *self.over_max_per_function.entry(function).or_default() += 1;
                    }
                    return;
                }
                Some(_) => {}
                None if known.len() < max => {
                    known.insert(key, done.id);
                }
                None if quiet && known.len() < max.saturating_mul(1 + ROWS_PER_CAP) => {
                    known.insert(key, done.id);
                    if let Some(mut call) = self.kept.remove(&done.id) {
                        let_values_go(&self.lean, &self.creators, &mut self.digests, &mut call);
                        self.rows.insert(done.id, call);
                    }
                    return;
                }
                None if quiet => {
                    self.kept.remove(&done.id);
                    *self.over_max_per_function.entry(function).or_default() += 1;
                    return;
                }
                None => {}
            }
        }
        match self
            .open
            .get_mut(&thread)
            .and_then(|stack| stack.last_mut())
        {
            Some(parent) => {
                parent.seen.entry(key).or_insert(done.id);
                parent.below.push(done.id);
                parent.below.extend(done.below.iter().copied());
            }
            None => {
                self.roots.entry(key).or_insert(done.id);
            }
        }
        if !done.below.is_empty() {
            self.below.insert(done.id, done.below);
        }
        if let Some(call) = self.kept.get_mut(&done.id) {
            let_values_go(&self.lean, &self.creators, &mut self.digests, call);
        }
    }

    /// Whether the kept call (or row) `rep` is the same call as `call` (see [`same_call`]),
    /// through the digest of its values when they went.
    fn same_as(&self, rep: CallId, call: &Call) -> bool {
        let Some(r) = self.kept.get(&rep).or_else(|| self.rows.get(&rep)) else {
            return false;
        };
        match self.digests.get(&rep) {
            None => same_call(r, call),
            Some(&digest) => same_shape(r, call) && digest == values_digest(call),
        }
    }

    /// Drops `call` and the kept calls below it, each counted under its counterpart in
    /// `first`'s subtree (same shape: their keys are equal).
    fn drop_onto(&mut self, first: CallId, call: CallId, below: &[CallId]) {
        let counterparts: Vec<CallId> = std::iter::once(first)
            .chain(self.below.get(&first).into_iter().flatten().copied())
            .collect();
        for (dropped, onto) in std::iter::once(call)
            .chain(below.iter().copied())
            .zip(counterparts)
        {
            self.kept.remove(&dropped);
            self.below.remove(&dropped);
            self.digests.remove(&dropped);
            let mut moved = self.equivalent.remove(&dropped).unwrap_or_default();
            let list = self.equivalent.entry(onto).or_default();
            list.push(dropped);
            list.append(&mut moved);
        }
    }
}

/// Drops `call`'s values when `lean` allows (see [`LeanValues`]), remembering their digest.
fn let_values_go(
    lean: &LeanValues,
    creators: &HashSet<CallId>,
    digests: &mut HashMap<CallId, u128>,
    call: &mut Call,
) {
    if lean.may_drop_values(call, creators.contains(&call.id)) {
        digests.insert(call.id, values_digest(call));
        without_values(call);
    }
}

/// A call's own values and its children's keys (folded), hashed to 128 bits.
fn key(call: &Call, kids: u128) -> u128 {
    let own = serde_json::to_string(&(
        call.function,
        &call.args,
        &call.outcome,
        &call.ret,
        &call.after,
        &call.objects,
        &call.touches,
    ))
    .unwrap_or_default();
    let half = |salt: u8| {
        let mut h = DefaultHasher::new();
        salt.hash(&mut h);
        own.hash(&mut h);
        kids.hash(&mut h);
        h.finish()
    };
    (u128::from(half(1)) << 64) | u128::from(half(2))
}

/// The same values, compared exactly (the key is only a hash).
fn same_call(a: &Call, b: &Call) -> bool {
    same_shape(a, b) && a.args == b.args && a.ret == b.ret && a.after == b.after
}

/// The same function, outcome, objects and reads of the world: what [`same_call`] compares
/// besides the values.
fn same_shape(a: &Call, b: &Call) -> bool {
    a.function == b.function
        && a.outcome == b.outcome
        && a.objects == b.objects
        && a.touches == b.touches
}

/// The values [`without_values`] lets go (arguments, result, state after), hashed to 128 bits
/// with other salts than [`key`]'s.
fn values_digest(call: &Call) -> u128 {
    let values = serde_json::to_string(&(&call.args, &call.ret, &call.after)).unwrap_or_default();
    let half = |salt: u8| {
        let mut h = DefaultHasher::new();
        salt.hash(&mut h);
        values.hash(&mut h);
        h.finish()
    };
    (u128::from(half(3)) << 64) | u128::from(half(4))
}

/// A run as read hands it on: the calls kept, and what grouping left out of them (see
/// [`GroupedTrace`], whose parts these are).
pub(crate) struct Recording<'t> {
    pub(crate) trace: &'t Trace,
    pub(crate) equivalent: &'t BTreeMap<CallId, Vec<CallId>>,
    pub(crate) over_max: &'t BTreeMap<FunctionId, usize>,
    pub(crate) rows: &'t [Call],
    pub(crate) threads: &'t BTreeMap<i32, String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::act::call::resolve;
    use crate::act::target::Target;
    use crate::read::crate_api::CrateApi;
    use carve_storage::{Arg, Language, Outcome, RunId, RunInfo, Value};

    fn run() -> Run {
        Run {
            id: RunId(1),
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
            },
            end: None,
        }
    }

    fn function(id: u32, path: &str) -> FunctionInfo {
        FunctionInfo {
            id: FunctionId(id),
            path: path.into(),
            name: path.rsplit("::").next().unwrap().into(),
            linkage_name: None,
            language: Language::Rust,
            decl_file: None,
            decl_line: None,
            low_pc: 0,
            params: vec![],
            return_type: None,
        }
    }

    fn call(id: u64, parent: Option<u64>, function: u32, x: i128, ret: i128) -> Call {
        Call {
            id: CallId(id),
            parent: parent.map(CallId),
            function: FunctionId(function),
            thread: 1,
            depth: 0,
            args: vec![Arg {
                name: "x".into(),
                value: Value::Int {
                    ty: "i32".into(),
                    value: x,
                },
            }],
            outcome: Outcome::Returned,
            ret: Some(Value::Int {
                ty: "i32".into(),
                value: ret,
            }),
            after: vec![],
            objects: vec![],
            touches: vec![],
        }
    }

    fn group(functions: Vec<FunctionInfo>, calls: Vec<Call>) -> GroupedTrace {
        let mut g = Grouper::new(run(), functions, vec![]);
        for c in calls {
            g.push(c);
        }
        g.finish()
    }

    fn ids(t: &GroupedTrace) -> Vec<u64> {
        t.trace.calls.iter().map(|c| c.id.0).collect()
    }

    fn functions() -> Vec<FunctionInfo> {
        vec![
            function(0, "app::main"),
            function(1, "app::f"),
            function(2, "app::g"),
            function(3, "<app::A as app::T>::m"),
        ]
    }

    #[test]
    fn equivalent_siblings_keep_the_first_and_count_the_others_under_it() {
        let t = group(
            functions(),
            vec![
                call(1, None, 0, 0, 0),
                call(2, Some(1), 1, 5, 10),
                call(3, Some(1), 1, 6, 12),
                call(4, Some(1), 1, 5, 10),
                call(5, Some(1), 1, 5, 10),
            ],
        );
        assert_eq!(ids(&t), [1, 2, 3]);
        assert_eq!(t.equivalent[&CallId(2)], [CallId(4), CallId(5)]);
        assert_eq!(t.recorded_calls(), 5);
    }

    #[test]
    fn a_call_is_equivalent_only_with_equivalent_calls_below_it() {
        let t = group(
            functions(),
            vec![
                call(1, None, 0, 0, 0),
                call(2, Some(1), 1, 5, 10),
                call(3, Some(2), 2, 1, 1),
                call(4, Some(1), 1, 5, 10),
                call(5, Some(4), 2, 2, 2),
                call(6, Some(1), 1, 5, 10),
                call(7, Some(6), 2, 1, 1),
            ],
        );
        assert_eq!(ids(&t), [1, 2, 3, 4, 5], "4 made another call below it");
        // The subtree of 6 is counted under 2's, call by call.
        assert_eq!(t.equivalent[&CallId(2)], [CallId(6)]);
        assert_eq!(t.equivalent[&CallId(3)], [CallId(7)]);
    }

    #[test]
    fn calls_under_different_parents_trait_methods_and_creators_are_kept() {
        let mut g = Grouper::new(
            run(),
            functions(),
            vec![ObjectInfo {
                id: carve_storage::ObjectId(1),
                type_name: "app::A".into(),
                addr: 0x10,
                created_by: Some(CallId(9)),
            }],
        );
        for c in [
            call(1, None, 0, 0, 0),
            call(2, Some(1), 2, 0, 0),
            call(3, Some(2), 1, 5, 10),
            call(4, Some(1), 2, 1, 0),
            call(5, Some(4), 1, 5, 10),
            call(6, Some(1), 3, 5, 10),
            call(7, Some(1), 3, 5, 10),
            call(8, Some(1), 1, 7, 7),
            call(9, Some(1), 1, 7, 7),
        ] {
            g.push(c);
        }
        let t = g.finish();
        assert_eq!(ids(&t), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert!(t.equivalent.is_empty());
    }

    #[test]
    fn calls_that_do_not_nest_stop_the_grouping() {
        let t = group(
            functions(),
            vec![
                call(1, None, 0, 0, 0),
                call(2, Some(1), 1, 5, 10),
                call(3, Some(1), 1, 5, 10),
                call(4, Some(99), 1, 5, 10),
                call(5, Some(1), 1, 5, 10),
            ],
        );
        assert_eq!(ids(&t), [1, 2, 4, 5]);
        assert_eq!(t.equivalent[&CallId(2)], [CallId(3)]);
    }

    #[test]
    fn with_a_cap_only_the_first_distinct_calls_of_a_function_stay_and_the_rest_are_counted() {
        let mut g = Grouper::new(run(), functions(), vec![]).max_per_function(2);
        for c in [
            call(1, None, 0, 0, 0),
            call(2, Some(1), 1, 1, 1),
            call(3, Some(1), 1, 2, 2),
            // Over the cap: kept aside as a table row.
            call(4, Some(1), 1, 3, 3),
            // Equal to call 2 but under another parent: counted under it.
            call(5, Some(1), 2, 0, 0),
            call(6, Some(5), 1, 1, 1),
            // Over the cap, but a first call of g (a new key) lies below it: it stays.
            call(7, Some(1), 1, 4, 4),
            call(8, Some(7), 2, 9, 9),
            // Trait methods are never quiet: over the cap, still kept.
            call(9, Some(1), 3, 1, 1),
            call(10, Some(1), 3, 2, 2),
            call(11, Some(1), 3, 3, 3),
        ] {
            g.push(c);
        }
        let t = g.finish();
        assert_eq!(ids(&t), [1, 2, 3, 5, 7, 8, 9, 10, 11]);
        assert_eq!(t.equivalent[&CallId(2)], [CallId(6)]);
        let rows: Vec<u64> = t.rows.iter().map(|c| c.id.0).collect();
        assert_eq!(rows, [4]);
        assert!(t.over_max_per_function.is_empty());
        assert_eq!(t.recorded_calls(), 11);
    }

    #[test]
    fn past_the_cap_rows_are_kept_up_to_ten_times_it_and_the_rest_counted() {
        let mut g = Grouper::new(run(), functions(), vec![]).max_per_function(1);
        g.push(call(1, None, 0, 0, 0));
        // 1 kept, 10 rows, 4 over the cap; then calls equal to a row count under it.
        for n in 0..15 {
            g.push(call(2 + n, Some(1), 1, n as i128, n as i128));
        }
        g.push(call(20, None, 2, 0, 0));
        g.push(call(21, Some(20), 1, 3, 3));
        g.push(call(22, Some(20), 1, 13, 13));
        let t = g.finish();
        assert_eq!(ids(&t), [1, 2, 20]);
        let rows: Vec<u64> = t.rows.iter().map(|c| c.id.0).collect();
        assert_eq!(rows, (3..13).collect::<Vec<u64>>());
        assert_eq!(t.equivalent[&CallId(5)], [CallId(21)]);
        assert_eq!(
            t.over_max_per_function,
            BTreeMap::from([(FunctionId(1), 5)])
        );
        assert_eq!(t.recorded_calls(), 19);
    }

    /// `f` (function 1) and `g` (function 2) as functions whose values may go, and object 7
    /// as one of a private type.
    fn lean() -> LeanValues {
        LeanValues {
            functions: HashSet::from([FunctionId(1), FunctionId(2)]),
            private_objects: HashSet::from([carve_storage::ObjectId(7)]),
        }
    }

    #[test]
    fn a_reference_keeps_its_address_and_type_when_its_values_go() {
        let mut c = call(1, None, 1, 0, 0);
        c.args[0].value = Value::Ref {
            ty: "&app::T".into(),
            addr: 0x40,
            target: Box::new(Value::Int {
                ty: "i32".into(),
                value: 3,
            }),
        };
        without_values(&mut c);
        let Value::Ref { ty, addr, target } = &c.args[0].value else {
            panic!("{c:?}");
        };
        assert_eq!((ty.as_str(), *addr), ("&app::T", 0x40));
        assert!(
            matches!(&**target, Value::Unavailable { ty, reason } if ty == "i32" && reason == VALUE_NOT_KEPT)
        );
    }

    fn values_gone(call: &Call) -> bool {
        let gone =
            |v: &Value| matches!(v, Value::Unavailable { reason, .. } if reason == VALUE_NOT_KEPT);
        call.args.iter().all(|a| gone(&a.value)) && call.ret.as_ref().is_none_or(gone)
    }

    /// Groups `calls` with a cap of 1 with and without lean values.
    fn both_ways(calls: &[Call]) -> (GroupedTrace, GroupedTrace) {
        let run_with = |lean_values: Option<LeanValues>| {
            let mut g = Grouper::new(run(), functions(), vec![]).max_per_function(1);
            if let Some(l) = lean_values {
                g = g.lean_values(l);
            }
            for c in calls {
                g.push(c.clone());
            }
            g.finish()
        };
        (run_with(None), run_with(Some(lean())))
    }

    #[test]
    fn lean_values_group_and_count_every_call_as_the_full_values_do() {
        let mut calls = vec![call(1, None, 0, 0, 0)];
        // Equal siblings (the first one's values are gone when the second closes), distinct
        // calls over the cap (rows, then counted), equal calls under another parent.
        for (n, x) in [5, 5, 6, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 6]
            .into_iter()
            .enumerate()
        {
            calls.push(call(2 + n as u64, Some(1), 1, x, 2 * x));
        }
        calls.push(call(30, Some(1), 2, 0, 0));
        calls.push(call(31, Some(30), 1, 5, 10));
        calls.push(call(32, Some(30), 1, 6, 12));
        let (full, lean) = both_ways(&calls);
        assert_eq!(ids(&lean), ids(&full));
        assert_eq!(lean.equivalent, full.equivalent);
        assert!(!full.equivalent.is_empty());
        assert_eq!(lean.over_max_per_function, full.over_max_per_function);
        assert!(!full.over_max_per_function.is_empty());
        let row_ids = |t: &GroupedTrace| t.rows.iter().map(|c| c.id).collect::<Vec<_>>();
        assert_eq!(row_ids(&lean), row_ids(&full));
        assert_eq!(lean.recorded_calls(), full.recorded_calls());
        // f's and g's kept calls and rows lost their values, keeping their shape; main did not.
        for c in lean.trace.calls.iter().chain(&lean.rows) {
            let f = &full
                .trace
                .calls
                .iter()
                .chain(&full.rows)
                .find(|k| k.id == c.id)
                .unwrap();
            assert_eq!(values_gone(c), c.function != FunctionId(0), "{c:?}");
            assert_eq!(c.args.len(), f.args.len());
            assert_eq!(c.args[0].name, f.args[0].name);
            assert_eq!(c.args[0].value.type_name(), f.args[0].value.type_name());
            assert_eq!(c.outcome, f.outcome);
        }
    }

    #[test]
    fn a_call_equal_but_for_values_is_not_taken_for_one_whose_values_went() {
        // 2 and 3 differ only in their result: never equivalent, 2's values gone or not.
        let (full, lean) = both_ways(&[
            call(1, None, 0, 0, 0),
            call(2, Some(1), 1, 5, 10),
            call(3, Some(1), 1, 5, 11),
        ]);
        assert_eq!(ids(&lean), ids(&full));
        assert_eq!(lean.equivalent, full.equivalent);
        assert!(lean.equivalent.is_empty());
    }

    #[test]
    fn values_stay_on_calls_a_rule_reads_even_of_private_functions() {
        let creator = call(2, Some(1), 1, 1, 1);
        let mut touches = call(3, Some(1), 1, 2, 2);
        touches.touches = vec!["clock: std::time::SystemTime::now".into()];
        let with_object = |id: u64, arg: &str, object: u64| {
            let mut c = call(id, Some(1), 2, id as i128, 0);
            c.objects = vec![carve_storage::ArgObject {
                arg: arg.into(),
                object: carve_storage::ObjectId(object),
            }];
            c
        };
        // An object of a type a test may hold (8): its history reads the call's states.
        let public_object = with_object(4, "x", 8);
        let private_object = with_object(5, "x", 7);
        // A `self` that is no private object: a handle chain may end at this call.
        let mut untracked_self = call(6, Some(1), 2, 6, 0);
        untracked_self.args[0].name = "self".into();
        let mut private_self = with_object(7, "self", 7);
        private_self.args[0].name = "self".into();
        let trait_method = call(8, Some(1), 3, 8, 8);
        let mut g = Grouper::new(
            run(),
            functions(),
            vec![ObjectInfo {
                id: carve_storage::ObjectId(9),
                type_name: "app::A".into(),
                addr: 0x10,
                created_by: Some(CallId(2)),
            }],
        )
        .lean_values(lean());
        for c in [
            call(1, None, 0, 0, 0),
            creator,
            touches,
            public_object,
            private_object,
            untracked_self,
            private_self,
            trait_method,
        ] {
            g.push(c);
        }
        let t = g.finish();
        let gone: Vec<u64> = t
            .trace
            .calls
            .iter()
            .filter(|c| values_gone(c))
            .map(|c| c.id.0)
            .collect();
        assert_eq!(gone, [5, 7]);
    }

    #[test]
    fn lean_functions_are_the_private_ones_but_the_crate_traits_methods_display_and_closures() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("src")).unwrap();
        std::fs::write(tmp.path().join("Cargo.toml"), "[package]\nname = \"mk\"\n").unwrap();
        std::fs::write(
            tmp.path().join("src/lib.rs"),
            "pub trait Shape { fn area(&self) -> u64; }\n\
             struct Square { side: u64 }\n\
             impl Square { fn side2(&self) -> u64 { self.side * self.side } }\n\
             impl Shape for Square { fn area(&self) -> u64 { self.side2() } }\n\
             impl Clone for Square { fn clone(&self) -> Square { Square { side: self.side } } }\n\
             impl core::fmt::Display for Square {\n\
                 fn fmt(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result { write!(f, \"s\") }\n\
             }\n\
             pub struct Open;\n\
             fn helper(x: u64) -> u64 { [x].iter().map(|v| v + 1).sum() }\n\
             pub fn area(s: &dyn Shape) -> u64 { helper(s.area()) }\n",
        )
        .unwrap();
        let api = CrateApi::load(tmp.path()).unwrap();
        let fns = vec![
            function(0, "mk::helper"),
            function(1, "mk::Square::side2"),
            function(2, "<mk::Square as mk::Shape>::area"),
            function(3, "mk::helper::{{closure}}"),
            function(4, "mk::area"),
            function(5, "<mk::Square as core::clone::Clone>::clone"),
            function(6, "<mk::Square as core::fmt::Display>::fmt"),
        ];
        // The trait method of the private type is private to the planner too: the path is what
        // keeps its values (a parent's test mocks it with them).
        assert!(matches!(resolve(&api, &fns[2]), Target::Private));
        assert!(matches!(resolve(&api, &fns[6]), Target::Private));
        let object = |id: u64, ty: &str| ObjectInfo {
            id: carve_storage::ObjectId(id),
            type_name: ty.into(),
            addr: id,
            created_by: None,
        };
        let lean = LeanValues::new(
            &api,
            &fns,
            &[
                object(1, "mk::Square"),
                object(2, "mk::Open"),
                object(3, "alloc::string::String"),
            ],
        );
        // A std trait's method on the private type (no mock is made of it) may go.
        assert_eq!(
            lean.functions,
            HashSet::from([FunctionId(0), FunctionId(1), FunctionId(5)])
        );
        assert_eq!(
            lean.private_objects,
            HashSet::from([carve_storage::ObjectId(1)])
        );
    }
}
