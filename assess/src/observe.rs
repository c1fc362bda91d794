//! Which tests reached which functions, and what each test's own calls returned: a trace sink
//! for a libtest binary run with `--test-threads=1` (each test runs on a thread of its own,
//! calling its test function, which the default selection records as the program's own code).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use carve_storage::{Arg, CallId, FunctionId, FunctionInfo, Outcome, TraceEvent, TraceSink, Value};

/// How the report names `f`: its path, and for an instance of a generic function the generic
/// arguments DWARF names it with (`gen::double<i32>`, `gen::Stack<T>::top<f32>`): legacy
/// symbol names give every instance the same path, but each instance is a function of its own,
/// with its own return type.
pub fn label(f: &FunctionInfo) -> String {
    instance_label(&f.path, &f.name)
}

/// [`label`] from a path and DWARF's name for it.
pub fn instance_label(path: &str, name: &str) -> String {
    let generics = match name.find('<') {
        Some(at) if at > 0 && name.ends_with('>') => &name[at..],
        _ => return path.to_string(),
    };
    if path.ends_with(generics) {
        path.to_string()
    } else {
        format!("{path}{generics}")
    }
}

/// One call as a test saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// The call's id in the recording (the same id a trace of the same run stores).
    pub call: CallId,
    /// The function's [`label`].
    pub function: String,
    /// Arguments at entry (for `self` and `&mut` arguments, the state before the call).
    pub args: Vec<Arg>,
    pub ret: Option<Value>,
    /// The state of `self` and `&mut` arguments after the call.
    pub after: Vec<Arg>,
    pub returned: bool,
}

/// What one test did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TestCalls {
    /// Every recorded function it reached (the test function itself included), by [`label`].
    pub reached: BTreeSet<String>,
    /// Every call of each function it reached (by [`label`]), in order.
    pub calls: BTreeMap<String, Vec<Seen>>,
    /// The calls the test function made itself, in order: what it observed.
    pub own: Vec<Seen>,
    /// How many calls of each function it reached (by [`label`]) it made.
    pub counts: BTreeMap<String, u64>,
    /// It read its command line (`std::env::args`, `args_os`) in a recorded call: what libtest
    /// is given shows there.
    pub reads_args: bool,
    /// Nanoseconds from the first to the last recorded event of its threads (the test
    /// function's own call included): how long it ran under the recorder.
    pub nanos: u64,
}

/// The tests of a run, by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    pub functions: Vec<FunctionInfo>,
    pub tests: BTreeMap<String, TestCalls>,
}

#[derive(Debug)]
struct Open {
    thread: i32,
    function: FunctionId,
    parent: Option<CallId>,
    args: Vec<Arg>,
}

/// Collects a test binary's run (see the module doc).
#[derive(Debug, Default)]
pub struct Observer {
    /// Only who reached what, how often and when ([`Observer::counting`]).
    counting: bool,
    functions: HashMap<FunctionId, FunctionInfo>,
    /// Threads in the order they first showed up.
    order: Vec<i32>,
    open: HashMap<CallId, Open>,
    /// Per thread: every call started, in order, and every ended call.
    starts: HashMap<i32, Vec<(CallId, FunctionId)>>,
    ended: HashMap<i32, Vec<(CallId, Option<CallId>, Seen)>>,
    /// Per thread: the times (ns since the run's start) of its first and last events.
    span: HashMap<i32, (u64, u64)>,
    /// Counting: per thread, the calls of each function.
    counts: HashMap<i32, HashMap<FunctionId, u64>>,
    /// Threads a recorded call of which read the command line.
    read_args: BTreeSet<i32>,
}

/// True for the label the recorder charges a call with when it read the command line.
fn reads_args(touch: &str) -> bool {
    matches!(touch, "env: std::env::args" | "env: std::env::args_os")
}

impl TraceSink for Observer {
    fn record(&mut self, event: TraceEvent) {
        match event {
            TraceEvent::Functions(fs) => {
                for f in fs {
                    self.functions.insert(f.id, f);
                }
            }
            TraceEvent::CallStarted(c) if self.counting => {
                self.seen_thread(c.thread);
                self.saw_time(c.thread, c.at_ns);
                // A test function is called by the harness's closure, or first.
                if c.depth <= 1 {
                    self.starts
                        .entry(c.thread)
                        .or_default()
                        .push((c.call, c.function));
                }
                *self
                    .counts
                    .entry(c.thread)
                    .or_default()
                    .entry(c.function)
                    .or_default() += 1;
                self.open.insert(
                    c.call,
                    Open {
                        thread: c.thread,
                        function: c.function,
                        parent: None,
                        args: Vec::new(),
                    },
                );
            }
            TraceEvent::CallEnded(e) if self.counting => {
                if let Some(open) = self.open.remove(&e.call) {
                    self.saw_time(open.thread, e.at_ns);
                    if e.touches.iter().any(|t| reads_args(t)) {
                        self.read_args.insert(open.thread);
                    }
                }
            }
            TraceEvent::CallStarted(c) => {
                self.seen_thread(c.thread);
                self.saw_time(c.thread, c.at_ns);
                self.starts
                    .entry(c.thread)
                    .or_default()
                    .push((c.call, c.function));
                self.open.insert(
                    c.call,
                    Open {
                        thread: c.thread,
                        function: c.function,
                        parent: c.parent,
                        args: c.args,
                    },
                );
            }
            TraceEvent::CallEnded(e) => {
                let Some(open) = self.open.remove(&e.call) else {
                    return;
                };
                self.saw_time(open.thread, e.at_ns);
                if e.touches.iter().any(|t| reads_args(t)) {
                    self.read_args.insert(open.thread);
                }
                let function = self
                    .functions
                    .get(&open.function)
                    .map(label)
                    .unwrap_or_default();
                self.ended.entry(open.thread).or_default().push((
                    e.call,
                    open.parent,
                    Seen {
                        call: e.call,
                        function,
                        args: open.args,
                        ret: e.ret,
                        after: e.after,
                        returned: e.outcome == Outcome::Returned,
                    },
                ));
            }
            _ => {}
        }
    }
}

impl Observer {
    /// An observer that keeps only which tests reach which functions, how often, and how long
    /// each test ran: no values, so a recording of a whole test suite stays small (the values
    /// are recorded again, for the tests that need them, when a diagnosis needs them).
    pub fn counting() -> Observer {
        Observer {
            counting: true,
            ..Observer::default()
        }
    }

    fn saw_time(&mut self, thread: i32, at_ns: Option<u64>) {
        if let Some(at) = at_ns {
            let span = self.span.entry(thread).or_insert((at, at));
            span.0 = span.0.min(at);
            span.1 = span.1.max(at);
        }
    }

    fn seen_thread(&mut self, thread: i32) {
        if !self.order.contains(&thread) {
            self.order.push(thread);
        }
    }

    /// What each of `tests` (the names the binary ran) did. A thread whose calls include a test
    /// function (`…::NAME`) is that test's; a thread without one was started by the test whose
    /// thread came last before it (libtest runs them one at a time with `--test-threads=1`).
    pub fn by_test(self, tests: &[String]) -> Observed {
        let mut fs: Vec<FunctionInfo> = self.functions.values().cloned().collect();
        fs.sort_by_key(|f| f.id);
        let mut out = Observed {
            functions: fs,
            tests: BTreeMap::new(),
        };
        let path_of = |f: &FunctionId| self.functions.get(f).map(|f| f.path.as_str());
        let mut current: Option<&String> = None;
        let mut spans: BTreeMap<&String, (u64, u64)> = BTreeMap::new();
        for thread in &self.order {
            let starts = self
                .starts
                .get(thread)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let found = starts.iter().find_map(|(call, f)| {
                let path = path_of(f)?;
                tests
                    .iter()
                    .find(|t| path.ends_with(&format!("::{t}")))
                    .map(|t| (t, *call))
            });
            let (test, test_call) = match found {
                Some((t, call)) => (t, Some(call)),
                None => match current {
                    Some(t) => (t, None),
                    None => continue,
                },
            };
            current = Some(test);
            if let Some(&(first, last)) = self.span.get(thread) {
                let span = spans.entry(test).or_insert((first, last));
                span.0 = span.0.min(first);
                span.1 = span.1.max(last);
            }
            let entry = out.tests.entry(test.clone()).or_default();
            entry.reads_args |= self.read_args.contains(thread);
            for (f, n) in self.counts.get(thread).into_iter().flatten() {
                if let Some(info) = self.functions.get(f) {
                    let name = label(info);
                    entry.reached.insert(name.clone());
                    *entry.counts.entry(name).or_default() += n;
                }
            }
            for (_, parent, seen) in self.ended.get(thread).into_iter().flatten() {
                *entry.counts.entry(seen.function.clone()).or_default() += 1;
                entry.reached.insert(seen.function.clone());
                if parent.is_some() && *parent == test_call {
                    entry.own.push(seen.clone());
                }
                entry
                    .calls
                    .entry(seen.function.clone())
                    .or_default()
                    .push(seen.clone());
            }
        }
        for (test, (first, last)) in spans {
            if let Some(t) = out.tests.get_mut(test) {
                t.nanos = last - first;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::{CallEnd, CallStart, Language};

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
            params: Vec::new(),
            return_type: None,
        }
    }

    fn call(o: &mut Observer, id: u64, parent: Option<u64>, f: u32, thread: i32, ret: i128) {
        o.record(TraceEvent::CallStarted(CallStart {
            at_ns: None,
            call: CallId(id),
            parent: parent.map(CallId),
            function: FunctionId(f),
            thread,
            depth: 0,
            args: Vec::new(),
            objects: Vec::new(),
        }));
        o.record(TraceEvent::CallEnded(CallEnd {
            at_ns: None,
            call: CallId(id),
            outcome: Outcome::Returned,
            ret: Some(Value::Int {
                ty: "i64".into(),
                value: ret,
            }),
            after: Vec::new(),
            touches: Vec::new(),
        }));
    }

    #[test]
    fn each_thread_belongs_to_the_test_whose_function_it_calls_and_started_threads_to_their_test() {
        let mut o = Observer::default();
        o.record(TraceEvent::Functions(vec![
            function(1, "w::tests::a"),
            function(2, "w::tests::b"),
            function(3, "w::fee"),
            function(4, "w::tests::a::{closure#0}"),
        ]));
        // Thread 10 runs test a (through libtest's closure), which calls fee itself.
        o.record(TraceEvent::CallStarted(CallStart {
            at_ns: None,
            call: CallId(1),
            parent: None,
            function: FunctionId(4),
            thread: 10,
            depth: 0,
            args: Vec::new(),
            objects: Vec::new(),
        }));
        o.record(TraceEvent::CallStarted(CallStart {
            at_ns: None,
            call: CallId(2),
            parent: Some(CallId(1)),
            function: FunctionId(1),
            thread: 10,
            depth: 1,
            args: Vec::new(),
            objects: Vec::new(),
        }));
        call(&mut o, 3, Some(2), 3, 10, 77);
        // Thread 11 is one test a started: its call of fee is a's, not a's own.
        call(&mut o, 4, None, 3, 11, 5);
        // Thread 12 runs test b, which reaches nothing else.
        call(&mut o, 5, None, 2, 12, 0);
        let seen = o.by_test(&["tests::a".into(), "tests::b".into()]);
        let a = &seen.tests["tests::a"];
        assert!(a.reached.contains("w::fee"));
        assert_eq!(a.calls["w::fee"].len(), 2);
        assert_eq!(a.own.len(), 1);
        assert_eq!(a.own[0].function, "w::fee");
        let b = &seen.tests["tests::b"];
        assert!(!b.reached.contains("w::fee"));
    }

    #[test]
    fn a_counting_observer_sees_who_reaches_what_and_how_often_without_the_values() {
        let feed = |o: &mut Observer| {
            o.record(TraceEvent::Functions(vec![
                function(1, "w::tests::a"),
                function(2, "w::fee"),
            ]));
            o.record(TraceEvent::CallStarted(CallStart {
                at_ns: Some(10),
                call: CallId(1),
                parent: None,
                function: FunctionId(1),
                thread: 10,
                depth: 0,
                args: Vec::new(),
                objects: Vec::new(),
            }));
            call(o, 2, Some(1), 2, 10, 77);
            call(o, 3, Some(1), 2, 10, 78);
            o.record(TraceEvent::CallEnded(CallEnd {
                at_ns: Some(20),
                call: CallId(1),
                outcome: Outcome::Returned,
                ret: None,
                after: Vec::new(),
                touches: Vec::new(),
            }));
        };
        let mut full = Observer::default();
        feed(&mut full);
        let mut counting = Observer::counting();
        feed(&mut counting);
        let (full, counting) = (
            full.by_test(&["tests::a".into()]),
            counting.by_test(&["tests::a".into()]),
        );
        let (f, c) = (&full.tests["tests::a"], &counting.tests["tests::a"]);
        assert_eq!(c.reached, f.reached);
        assert_eq!(c.counts["w::fee"], 2);
        assert_eq!(f.counts["w::fee"], 2);
        assert_eq!(f.calls["w::fee"].len(), 2);
        assert!(c.calls.is_empty() && c.own.is_empty());
    }

    #[test]
    fn each_instance_of_a_generic_function_is_named_by_its_generic_arguments() {
        assert_eq!(
            instance_label("gen::double", "double<i32>"),
            "gen::double<i32>"
        );
        assert_eq!(
            instance_label("gen::Stack<T>::top", "top<f32>"),
            "gen::Stack<T>::top<f32>"
        );
        assert_eq!(instance_label("gen::half", "half"), "gen::half");
        assert_eq!(
            instance_label("gen::double::<i32>", "double<i32>"),
            "gen::double::<i32>"
        );
    }

    #[test]
    fn a_test_s_time_runs_from_the_first_to_the_last_event_of_its_threads() {
        let mut o = Observer::default();
        o.record(TraceEvent::Functions(vec![
            function(1, "w::tests::a"),
            function(2, "w::tests::b"),
            function(3, "w::fee"),
        ]));
        let start = |o: &mut Observer, id: u64, f: u32, thread: i32, at: u64| {
            o.record(TraceEvent::CallStarted(CallStart {
                at_ns: Some(at),
                call: CallId(id),
                parent: None,
                function: FunctionId(f),
                thread,
                depth: 0,
                args: Vec::new(),
                objects: Vec::new(),
            }))
        };
        let end = |o: &mut Observer, id: u64, at: Option<u64>| {
            o.record(TraceEvent::CallEnded(CallEnd {
                at_ns: at,
                call: CallId(id),
                outcome: Outcome::Returned,
                ret: None,
                after: Vec::new(),
                touches: Vec::new(),
            }))
        };
        // Test a from 1,000 to 5,000 ns, with a thread of its own running until 9,000.
        start(&mut o, 1, 1, 10, 1_000);
        start(&mut o, 2, 3, 11, 2_000);
        end(&mut o, 2, Some(9_000));
        end(&mut o, 1, Some(5_000));
        // Test b: one call whose end time is not known.
        start(&mut o, 3, 2, 12, 10_000);
        end(&mut o, 3, None);
        let seen = o.by_test(&["tests::a".into(), "tests::b".into()]);
        assert_eq!(seen.tests["tests::a"].nanos, 8_000);
        assert_eq!(seen.tests["tests::b"].nanos, 0);
    }
}
