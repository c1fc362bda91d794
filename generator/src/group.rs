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

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};

use carve_storage::{Call, CallId, FunctionId, FunctionInfo, ObjectInfo, Run, Trace};

use crate::table::ROWS_PER_CAP;

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
        }
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
                && same_call(&self.kept[&first], &self.kept[&done.id])
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
                    let equal = self
                        .kept
                        .get(&rep)
                        .or_else(|| self.rows.get(&rep))
                        .is_some_and(|r| same_call(r, &self.kept[&done.id]));
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
                    if let Some(call) = self.kept.remove(&done.id) {
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
            let mut moved = self.equivalent.remove(&dropped).unwrap_or_default();
            let list = self.equivalent.entry(onto).or_default();
            list.push(dropped);
            list.append(&mut moved);
        }
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
    a.function == b.function
        && a.args == b.args
        && a.outcome == b.outcome
        && a.ret == b.ret
        && a.after == b.after
        && a.objects == b.objects
        && a.touches == b.touches
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
