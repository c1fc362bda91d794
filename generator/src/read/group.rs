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
//! Never dropped: calls of trait methods (`<T as Trait>::m`) and closures under a recorded
//! parent, which the parent's test replays through a mock, one expectation per call (roots are
//! grouped like other calls: no test replays them); calls that made an object (an object's
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
/// What such a call keeps, argument names and types, outcome, objects, and its result when it
/// is a number, `bool`, `char` or variant without fields (what distilling reads of the calls
/// inside a test), is what the other rules look at (`holding_call` goes up through calls on the same object and needs a public call
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
/// the same type, but a result no bigger than its shape: the shape stays, the bytes go. A reference keeps its address (a trait call's
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
        if !is_scalar(ret) {
            *ret = gone(ret);
        }
    }
}

/// A result no bigger than its shape (a number, `bool`, `char`, a variant without fields),
/// kept: distilling reads what the calls inside a test answered (`distil/outcome.rs`,
/// `classes.rs`, `faults.rs`: a private `in_range` answering `false`).
fn is_scalar(v: &Value) -> bool {
    v.is_scalar() || matches!(v, Value::Enum { fields, .. } if fields.is_empty())
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
    /// Parent → the representatives of the calls dropped from under it past the cap (each
    /// equal to its representative, which ran under another parent): what ran inside the
    /// parent, for distilling's classes and faults.
    pub stand_ins: BTreeMap<CallId, Vec<CallId>>,
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
            stand_ins: BTreeMap::new(),
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
    /// Its kept children, in start order.
    children: Vec<CallId>,
    /// How many kept calls lie below it (children, theirs, and so on).
    descendants: usize,
}

impl Open {
    fn new(id: CallId) -> Open {
        Open {
            id,
            kids: 0,
            seen: HashMap::new(),
            children: Vec::new(),
            descendants: 0,
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
    /// The kept children of each kept call that has any, and how many kept calls lie below it
    /// (to map a dropped subtree onto its representative's, one level at a time: a list of
    /// every call below each call grew with the square of a deep recursion's depth).
    children: HashMap<CallId, (Vec<CallId>, usize)>,
    open: HashMap<i32, Vec<Open>>,
    /// The first root of each key (roots are siblings too).
    roots: HashMap<u128, CallId>,
    equivalent: BTreeMap<CallId, Vec<CallId>>,
    stand_ins: BTreeMap<CallId, Vec<CallId>>,
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
            children: HashMap::new(),
            open: HashMap::new(),
            roots: HashMap::new(),
            equivalent: BTreeMap::new(),
            stand_ins: BTreeMap::new(),
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

    /// Starts from the repeats the recorder counted instead of storing them (a run recorded
    /// with `RunInfo::distinct_calls`; see `Store::repeats`): each stored call's equivalent
    /// calls, as if this grouper had dropped them. The recorder groups by this module's
    /// equivalence, so what is pushed then is what this grouper would have kept of every call.
    pub fn with_repeats(mut self, repeats: BTreeMap<CallId, Vec<CallId>>) -> Grouper {
        self.equivalent = repeats;
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
            stand_ins: self.stand_ins,
        }
    }

    /// Ends the innermost open call of `thread`: drops it when a sibling before it was
    /// equivalent, or when it is quiet and its function already has its distinct calls (see the
    /// module's documentation); else keeps it.
    fn close(&mut self, thread: i32) {
        let stack = self.open.get_mut(&thread).expect("an open call to close");
        let done = stack.pop().expect("an open call to close");
        let parent_id = stack.last().map(|p| p.id);
        let call = &self.kept[&done.id];
        let key = key(call, done.kids);
        let function = call.function;
        // A root's test replays no mock: a root trait call or closure may be grouped too.
        let droppable = self.grouping
            && (self.droppable_function.contains(&function) || stack.is_empty())
            && !self.creators.contains(&done.id);
        let quiet = droppable && call.touches.is_empty() && done.children.is_empty();
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
                && self.children.get(&first).map_or(0, |c| c.1) == done.descendants;
            if same {
                self.drop_onto(first, done.id, done.children);
                return;
            }
        }
        if let Some(max) = self.max_per_function {
            let known = self.distinct.entry(function).or_default();
            match known.get(&key).copied() {
                Some(rep) if rep != done.id && quiet => {
                    let equal = self.same_as(rep, &self.kept[&done.id]);
                    self.kept.remove(&done.id);
                    // Its own equivalents (counted by the recorder) go with it.
                    let mut theirs = self.equivalent.remove(&done.id).unwrap_or_default();
                    if equal {
                        let list = self.equivalent.entry(rep).or_default();
                        list.push(done.id);
                        list.append(&mut theirs);
                        if let Some(parent) = parent_id {
                            self.stand_ins.entry(parent).or_default().push(rep);
                        }
                    } else {
                        *self.over_max_per_function.entry(function).or_default() +=
                            1 + theirs.len();
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
                    let theirs = self.equivalent.remove(&done.id).map_or(0, |e| e.len());
                    *self.over_max_per_function.entry(function).or_default() += 1 + theirs;
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
                parent.children.push(done.id);
                parent.descendants += 1 + done.descendants;
            }
            None => {
                self.roots.entry(key).or_insert(done.id);
            }
        }
        if !done.children.is_empty() {
            self.children
                .insert(done.id, (done.children, done.descendants));
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

    /// Drops `call` (whose kept children are `children`) and the kept calls below it, each
    /// counted under its counterpart in `first`'s subtree (same shape: their keys are equal).
    /// Walks both subtrees a level at a time, however deep they are.
    fn drop_onto(&mut self, first: CallId, call: CallId, children: Vec<CallId>) {
        let mut pairs = vec![(call, first, children)];
        while let Some((dropped, onto, below)) = pairs.pop() {
            let theirs = self.children.get(&onto).map(|c| c.0.clone());
            for (d, o) in below.into_iter().zip(theirs.unwrap_or_default()) {
                let grandchildren = self.children.remove(&d).map(|c| c.0).unwrap_or_default();
                pairs.push((d, o, grandchildren));
            }
            self.kept.remove(&dropped);
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
    /// See [`GroupedTrace::stand_ins`].
    pub(crate) stand_ins: &'t BTreeMap<CallId, Vec<CallId>>,
}

#[cfg(test)]
mod tests;
