//! Equivalent calls counted at record time (`RunInfo::distinct_calls`): the same events stored
//! with every call and with repeats counted give the same trace once the repeats are made
//! again (`Store::load_trace_whole`), while the second stores only the distinct calls.

use carve_storage::*;

fn info(distinct_calls: bool) -> RunInfo {
    RunInfo {
        program: "/bin/loops".to_owned(),
        args: Vec::new(),
        cwd: "/".to_owned(),
        pid: 1,
        started_at_ms: 0,
        filters: Vec::new(),
        excludes: Vec::new(),
        crates: Vec::new(),
        carve_version: "test".to_owned(),
        distinct_calls,
        features: Vec::new(),
    }
}

const F: u32 = 0;
const G: u32 = 1;
const H: u32 = 2;
const TRAIT_METHOD: u32 = 3;
const MAKER: u32 = 4;

fn functions() -> Vec<FunctionInfo> {
    let paths = [
        "loops::f",
        "loops::g",
        "loops::h",
        "<loops::S as loops::T>::m",
        "loops::S::new",
    ];
    paths
        .iter()
        .enumerate()
        .map(|(i, path)| FunctionInfo {
            id: FunctionId(i as u32),
            path: (*path).to_owned(),
            name: path.rsplit("::").next().unwrap().to_owned(),
            linkage_name: None,
            language: Language::Rust,
            decl_file: None,
            decl_line: None,
            low_pc: 0x1000 * (i as u64 + 1),
            params: Vec::new(),
            return_type: Some("u64".to_owned()),
        })
        .collect()
}

fn uint(value: u64) -> Value {
    Value::Uint {
        ty: "u64".to_owned(),
        value: u128::from(value),
    }
}

/// Builds a run's events: calls nest per thread, ids grow.
struct Events {
    out: Vec<TraceEvent>,
    next: u64,
    open: Vec<(u64, i32)>,
}

impl Events {
    fn new() -> Events {
        Events {
            out: vec![TraceEvent::Functions(functions())],
            next: 1,
            open: Vec::new(),
        }
    }

    /// Starts a call of `function` with argument `n` on `thread`, under the innermost open
    /// call of that thread.
    fn start(&mut self, function: u32, n: u64, thread: i32) -> u64 {
        let id = self.next;
        self.next += 1;
        let parent = self
            .open
            .iter()
            .rev()
            .find(|(_, t)| *t == thread)
            .map(|(p, _)| CallId(*p));
        let depth = self.open.iter().filter(|(_, t)| *t == thread).count() as u32;
        self.out.push(TraceEvent::CallStarted(CallStart {
            call: CallId(id),
            parent,
            function: FunctionId(function),
            thread,
            depth,
            args: vec![Arg {
                name: "n".to_owned(),
                value: uint(n),
            }],
            objects: Vec::new(),
            at_ns: Some(id * 10),
        }));
        self.open.push((id, thread));
        id
    }

    /// Ends the innermost open call of `thread`, returning `ret` (or panicking when `None`).
    fn end(&mut self, thread: i32, ret: Option<u64>) {
        let at = self.open.iter().rposition(|(_, t)| *t == thread).unwrap();
        let (id, _) = self.open.remove(at);
        let outcome = match ret {
            Some(_) => Outcome::Returned,
            None => Outcome::Panicked {
                message: Some("too big".to_owned()),
            },
        };
        self.out.push(TraceEvent::CallEnded(CallEnd {
            call: CallId(id),
            outcome,
            ret: ret.map(uint),
            after: Vec::new(),
            touches: Vec::new(),
            at_ns: Some(id * 10 + 5),
        }));
    }

    fn leaf(&mut self, function: u32, n: u64, thread: i32, ret: Option<u64>) {
        self.start(function, n, thread);
        self.end(thread, ret);
    }
}

/// Loops of alike calls: leaves, panics, trait calls, makers of objects, nested trees whose
/// own children repeat, a tree larger than one of the writer's transactions, two threads.
fn events() -> Vec<TraceEvent> {
    let mut e = Events::new();
    for i in 0..600 {
        e.leaf(F, i % 3, 1, Some(i % 3 * 2));
        if i % 100 == 7 {
            e.leaf(F, 99, 1, None);
        }
        // Under a parent: the parent's test replays each through a mock.
        e.start(G, 3, 1);
        e.leaf(TRAIT_METHOD, 1, 1, Some(1));
        if i == 5 {
            e.leaf(TRAIT_METHOD, 1, 1, Some(1));
        }
        e.end(1, Some(1));
        if i % 50 == 0 {
            let made = e.start(MAKER, 1, 1);
            e.out.push(TraceEvent::ObjectCreated(ObjectInfo {
                id: ObjectId(made),
                type_name: "loops::S".to_owned(),
                addr: 0x5000,
                created_by: Some(CallId(made)),
            }));
            e.end(1, Some(1));
        }
    }
    // g(1) { f(5) f(5) h(2) { f(7) f(7) } } forty times, on two threads in turn.
    for i in 0..40 {
        let thread = 1 + i % 2;
        e.start(G, 1, thread);
        e.leaf(F, 5, thread, Some(10));
        e.leaf(F, 5, thread, Some(10));
        e.start(H, 2, thread);
        e.leaf(F, 7, thread, Some(14));
        e.leaf(F, 7, thread, Some(14));
        e.end(thread, Some(3));
        e.end(thread, Some(4));
    }
    // g(1) { f(5) } differs from the g above: fewer calls below it.
    e.start(G, 1, 1);
    e.leaf(F, 5, 1, Some(10));
    e.end(1, Some(4));
    // Three trees of 800 calls each, each longer than a transaction: the first stays.
    for _ in 0..3 {
        e.start(G, 8, 1);
        for j in 0..800 {
            e.leaf(H, j % 400, 1, Some(j % 400));
        }
        e.end(1, Some(0));
    }
    // Threads interleaved: the roots of both are siblings.
    for i in 0..30 {
        let a = e.start(F, 40 + i % 2, 1);
        let b = e.start(F, 40 + i % 2, 2);
        assert!(a < b);
        e.end(1, Some(1));
        e.end(2, Some(1));
    }
    e.out.push(TraceEvent::RunEnded(RunEnd {
        exit: ProcessExit::Exited { code: 0 },
        ended_at_ms: 1,
    }));
    e.out
}

fn record(db: &std::path::Path, distinct_calls: bool) -> RunId {
    let mut writer = Store::create(db)
        .unwrap()
        .begin_run(&info(distinct_calls))
        .unwrap();
    for event in events() {
        writer.record(event);
    }
    writer.finish().unwrap()
}

#[test]
fn repeats_made_again_give_the_trace_of_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let all_db = dir.path().join("all.db");
    let counted_db = dir.path().join("counted.db");
    let all_run = record(&all_db, false);
    let counted_run = record(&counted_db, true);
    let all = Store::open(&all_db).unwrap().load_trace(all_run).unwrap();
    let store = Store::open(&counted_db).unwrap();
    let stored = store.load_trace(counted_run).unwrap();
    let whole = store.load_trace_whole(counted_run).unwrap();
    assert!(store.run(counted_run).unwrap().info.distinct_calls);

    assert_eq!(whole.calls.len(), all.calls.len());
    for (made, recorded) in whole.calls.iter().zip(&all.calls) {
        assert_eq!(made, recorded, "call {}", recorded.id);
    }
    assert_eq!(whole.objects, all.objects);
    // The loops are stored once per distinct call: the three f leaves and the panic, one g
    // with its trait call (a trait call never repeats its siblings, but goes with a parent
    // that repeats another) and the g with two trait calls, the 12 makers, the first g tree (g, f(5), h, f(7)), the shorter g (2),
    // the first 800-call tree (1 + 400 distinct h), the two interleaved f roots.
    assert_eq!(stored.calls.len(), 3 + 1 + 2 + 3 + 12 + 4 + 2 + 401 + 2);
    let counted = store.repeat_count(counted_run).unwrap();
    assert_eq!(stored.calls.len() as u64 + counted, all.calls.len() as u64);
    // Each repeat names a representative that is stored.
    let repeats = store.repeats(counted_run).unwrap();
    assert!(repeats
        .keys()
        .all(|rep| stored.calls.iter().any(|c| c.id == *rep)));
}

#[test]
fn a_run_that_stores_every_call_has_no_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("all.db");
    let run = record(&db, false);
    let store = Store::open(&db).unwrap();
    assert_eq!(store.repeat_count(run).unwrap(), 0);
    assert_eq!(
        store.load_trace_whole(run).unwrap(),
        store.load_trace(run).unwrap()
    );
}
