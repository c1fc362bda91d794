//! End-to-end tests of the trace store: writing runs through `RunWriter` and reading them back.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use carve_storage::*;

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("trace.db");
    (dir, path)
}

fn info(program: &str) -> RunInfo {
    RunInfo {
        program: program.to_owned(),
        args: vec!["--flag".to_owned(), "two words".to_owned()],
        cwd: "/work".to_owned(),
        pid: 4242,
        started_at_ms: 1_700_000_000_000,
        filters: vec!["expr::*".to_owned()],
        excludes: vec!["expr::debug::*".to_owned()],
        crates: vec!["expr".to_owned()],
        carve_version: "0.1.0".to_owned(),
        distinct_calls: false,
        features: Vec::new(),
    }
}

fn function(id: u32, path: &str) -> FunctionInfo {
    FunctionInfo {
        id: FunctionId(id),
        path: path.to_owned(),
        name: path.rsplit("::").next().unwrap_or(path).to_owned(),
        linkage_name: Some(format!("_ZN{id}")),
        language: Language::Rust,
        decl_file: Some("/src/lib.rs".to_owned()),
        decl_line: Some(10 + id),
        low_pc: 0x1000 + u64::from(id),
        params: vec![ParamInfo {
            name: "x".to_owned(),
            type_name: "i32".to_owned(),
        }],
        return_type: Some("i32".to_owned()),
    }
}

fn int(value: i128) -> Value {
    Value::Int {
        ty: "i32".to_owned(),
        value,
    }
}

fn start(call: u64, parent: Option<u64>, function: u32, depth: u32, args: Vec<Arg>) -> TraceEvent {
    TraceEvent::CallStarted(CallStart {
        call: CallId(call),
        parent: parent.map(CallId),
        function: FunctionId(function),
        thread: 100,
        depth,
        args,
        objects: vec![],
        at_ns: Some(call * 1000),
    })
}

fn end(call: u64, outcome: Outcome, ret: Option<Value>) -> TraceEvent {
    TraceEvent::CallEnded(CallEnd {
        call: CallId(call),
        outcome,
        ret,
        after: Vec::new(),
        touches: Vec::new(),
        at_ns: Some(call * 1000 + 500),
    })
}

fn arg(name: &str, value: Value) -> Arg {
    Arg {
        name: name.to_owned(),
        value,
    }
}

fn field(name: &str, value: Value) -> Field {
    Field {
        name: name.to_owned(),
        value,
    }
}

/// One value of every kind, with the awkward corners (128-bit extremes, NaN bits, unicode).
fn every_value_kind() -> Vec<Value> {
    vec![
        Value::Unit,
        Value::Bool { value: true },
        Value::Int {
            ty: "i128".to_owned(),
            value: i128::MIN,
        },
        Value::Int {
            ty: "i128".to_owned(),
            value: i128::MAX,
        },
        int(-3),
        Value::Uint {
            ty: "u128".to_owned(),
            value: u128::MAX,
        },
        Value::Uint {
            ty: "u64".to_owned(),
            value: u128::from(u64::MAX),
        },
        Value::Float {
            ty: "f64".to_owned(),
            bits: f64::NAN.to_bits() | 1,
        },
        Value::Float {
            ty: "f32".to_owned(),
            bits: u64::from(2.5f32.to_bits()),
        },
        Value::Char { value: 'é' },
        Value::Str {
            ty: "&str".to_owned(),
            value: "quote \" newline \n nul \0 emoji 🦀".to_owned(),
            truncated: false,
        },
        Value::Str {
            ty: "alloc::string::String".to_owned(),
            value: "long…".to_owned(),
            truncated: true,
        },
        Value::Struct {
            ty: "app::User".to_owned(),
            fields: vec![field("age", int(3))],
        },
        Value::Tuple {
            ty: "(i32, bool)".to_owned(),
            elems: vec![int(1), Value::Bool { value: false }],
        },
        Value::Seq {
            ty: "alloc::vec::Vec<i32>".to_owned(),
            elems: vec![int(1), int(2)],
            truncated: true,
        },
        Value::Enum {
            ty: "core::option::Option<i32>".to_owned(),
            variant: "Some".to_owned(),
            fields: vec![field("__0", int(3))],
        },
        Value::Ref {
            ty: "&i32".to_owned(),
            addr: u64::MAX,
            target: Box::new(int(9)),
        },
        Value::Pointer {
            ty: "*const u8".to_owned(),
            addr: 0,
        },
        Value::Opaque {
            ty: "std::collections::HashMap<i32, i32>".to_owned(),
            bytes: vec![0, 1, 255],
        },
        Value::Unavailable {
            ty: "i32".to_owned(),
            reason: "optimized out".to_owned(),
        },
    ]
}

fn write_run(path: &Path, program: &str, events: Vec<TraceEvent>) -> RunId {
    let store = Store::create(path).expect("create store");
    let mut writer = store.begin_run(&info(program)).expect("begin run");
    for event in events {
        writer.record(event);
    }
    writer.finish().expect("finish")
}

#[test]
fn a_run_with_nested_calls_and_every_value_kind_reads_back_exactly() {
    let (_dir, path) = temp_db();
    let values = every_value_kind();
    let args: Vec<Arg> = values
        .iter()
        .enumerate()
        .map(|(i, v)| arg(&format!("a{i}"), v.clone()))
        .collect();
    let run_end = RunEnd {
        exit: ProcessExit::Exited { code: 3 },
        ended_at_ms: 1_700_000_000_500,
    };
    let mut events = vec![
        TraceEvent::ThreadStarted { thread: 100 },
        TraceEvent::Functions(vec![function(0, "app::main"), function(1, "app::helper")]),
        start(0, None, 0, 0, vec![]),
        start(1, Some(0), 1, 1, args.clone()),
        start(2, Some(1), 1, 2, vec![arg("x", int(5))]),
        end(
            2,
            Outcome::Panicked {
                message: Some("boom".to_owned()),
            },
            None,
        ),
        end(1, Outcome::Unwound, None),
    ];
    for (i, v) in values.iter().enumerate() {
        let call = 3 + i as u64;
        events.push(start(call, Some(0), 1, 1, vec![]));
        events.push(end(call, Outcome::Returned, Some(v.clone())));
    }
    events.push(TraceEvent::ThreadExited { thread: 100 });
    events.push(TraceEvent::RunEnded(run_end.clone()));
    let run = write_run(&path, "/bin/app", events);

    let store = Store::open(&path).expect("open");
    let trace = store.load_trace(run).expect("load");
    assert_eq!(trace.run.id, run);
    assert_eq!(trace.run.info, info("/bin/app"));
    assert_eq!(trace.run.end, Some(run_end));
    assert_eq!(
        trace.functions,
        vec![function(0, "app::main"), function(1, "app::helper")]
    );
    assert_eq!(trace.calls.len(), 3 + values.len());

    let root = &trace.calls[0];
    assert_eq!(root.parent, None);
    assert_eq!(root.outcome, Outcome::Unfinished, "the root never ended");
    let helper = &trace.calls[1];
    assert_eq!(helper.parent, Some(CallId(0)));
    assert_eq!(helper.depth, 1);
    assert_eq!(helper.thread, 100);
    assert_eq!(helper.outcome, Outcome::Unwound);
    // NaN payloads and other values compare by their JSON form, which keeps the bits.
    assert_eq!(
        serde_json::to_string(&helper.args).unwrap(),
        serde_json::to_string(&args).unwrap()
    );
    let inner = &trace.calls[2];
    assert_eq!(inner.parent, Some(CallId(1)));
    assert_eq!(
        inner.outcome,
        Outcome::Panicked {
            message: Some("boom".to_owned())
        }
    );
    for (i, v) in values.iter().enumerate() {
        let call = &trace.calls[3 + i];
        assert_eq!(call.id, CallId(3 + i as u64));
        assert_eq!(call.outcome, Outcome::Returned);
        assert_eq!(
            serde_json::to_string(&call.ret).unwrap(),
            serde_json::to_string(&Some(v)).unwrap(),
            "value {i}"
        );
    }
    assert_eq!(trace.children(Some(CallId(0))).count(), 1 + values.len());
}

#[test]
fn file_reads_read_back_per_call_in_the_order_they_happened() {
    let (_dir, path) = temp_db();
    let read = |call: u64, op: &str, path: &str, found: Found| {
        TraceEvent::FileRead(FileRead {
            call: CallId(call),
            op: op.to_owned(),
            path: path.to_owned(),
            found,
        })
    };
    let reads = vec![
        read(0, "metadata", "/r", Found::Dir { entries: None }),
        read(
            1,
            "read_dir",
            "/r",
            Found::Dir {
                entries: Some(vec![
                    DirEntry {
                        name: "a".to_owned(),
                        kind: EntryKind::File,
                    },
                    DirEntry {
                        name: "d".to_owned(),
                        kind: EntryKind::Dir,
                    },
                ]),
            },
        ),
        read(
            1,
            "read",
            "/r/a",
            Found::File {
                len: 3,
                contents: Some(vec![0, 1, 255]),
            },
        ),
        read(
            1,
            "metadata",
            "/r/big",
            Found::File {
                len: 1 << 20,
                contents: None,
            },
        ),
        read(0, "metadata", "/r/none", Found::Missing),
        read(
            0,
            "metadata",
            "/r/l",
            Found::Symlink {
                target: "a".to_owned(),
            },
        ),
        read(
            0,
            "read",
            "",
            Found::NotRead {
                reason: "a relative path".to_owned(),
            },
        ),
    ];
    // A read arrives while its call is open, between its start and its end.
    let mut events = vec![
        TraceEvent::Functions(vec![function(0, "app::walk")]),
        start(0, None, 0, 0, vec![arg("x", int(1))]),
    ];
    events.push(reads[0].clone());
    events.push(start(1, Some(0), 0, 1, vec![arg("x", int(2))]));
    events.extend(reads[1..4].iter().cloned());
    events.push(end(1, Outcome::Returned, Some(int(3))));
    events.extend(reads[4..].iter().cloned());
    events.push(end(0, Outcome::Returned, Some(int(4))));
    let run = write_run(&path, "/bin/walk", events);
    let store = Store::open(&path).unwrap();
    let expected: Vec<FileRead> = reads
        .into_iter()
        .map(|e| match e {
            TraceEvent::FileRead(r) => r,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(store.file_reads(run).unwrap(), expected);
    assert_eq!(
        store.file_reads_of(run, |call| call == CallId(1)).unwrap(),
        expected[1..4],
        "only the wanted calls' reads"
    );
    let trace = store.load_trace(run).unwrap();
    assert_eq!(trace.file_reads, expected);
    assert_eq!(trace.calls[1].ret, Some(int(3)), "the calls are whole too");
}

#[test]
fn unfinished_calls_read_back_as_unfinished() {
    let (_dir, path) = temp_db();
    let run = write_run(
        &path,
        "/bin/crash",
        vec![
            TraceEvent::Functions(vec![function(0, "app::main")]),
            start(0, None, 0, 0, vec![arg("x", int(1))]),
            start(1, Some(0), 0, 1, vec![arg("x", int(2))]),
            end(1, Outcome::Unfinished, None),
            TraceEvent::RunEnded(RunEnd {
                exit: ProcessExit::Signaled {
                    signal: 11,
                    name: "SIGSEGV".to_owned(),
                },
                ended_at_ms: 5,
            }),
        ],
    );
    let trace = Store::open(&path).unwrap().load_trace(run).unwrap();
    assert_eq!(trace.calls[0].outcome, Outcome::Unfinished);
    assert_eq!(trace.calls[1].outcome, Outcome::Unfinished);
    assert_eq!(trace.calls[0].ret, None);
    assert_eq!(
        trace.run.end.map(|e| e.exit),
        Some(ProcessExit::Signaled {
            signal: 11,
            name: "SIGSEGV".to_owned()
        })
    );
}

#[test]
fn calls_stream_one_at_a_time_by_thread_and_id_range_and_shapes_hold_the_tree() {
    let (_dir, path) = temp_db();
    let on_thread = |event: TraceEvent, thread: i32| match event {
        TraceEvent::CallStarted(mut s) => {
            s.thread = thread;
            TraceEvent::CallStarted(s)
        }
        other => other,
    };
    let run = write_run(
        &path,
        "/bin/two-threads",
        vec![
            TraceEvent::Functions(vec![function(0, "app::main"), function(1, "app::work")]),
            start(0, None, 0, 0, vec![]),
            on_thread(start(1, None, 1, 0, vec![arg("x", int(1))]), 200),
            start(2, Some(0), 1, 1, vec![arg("x", int(2))]),
            end(2, Outcome::Returned, Some(int(20))),
            end(1, Outcome::Returned, Some(int(10))),
            start(3, Some(0), 1, 1, vec![arg("x", int(3))]),
            end(3, Outcome::Returned, Some(int(30))),
            end(0, Outcome::Returned, None),
        ],
    );
    let store = Store::open(&path).unwrap();
    let shapes = store.call_shapes(run).unwrap();
    let tree: Vec<(u64, Option<u64>, i32)> = shapes
        .iter()
        .map(|s| (s.id.0, s.parent.map(|p| p.0), s.thread))
        .collect();
    assert_eq!(
        tree,
        [
            (0, None, 100),
            (1, None, 200),
            (2, Some(0), 100),
            (3, Some(0), 100)
        ]
    );
    let read = |range: CallRange| {
        let mut ids = Vec::new();
        store
            .each_call(run, range, |call| {
                ids.push((call.id.0, call.ret));
                Ok::<(), StorageError>(())
            })
            .unwrap();
        ids
    };
    assert_eq!(read(CallRange::default()).len(), 4);
    let main_thread = CallRange {
        thread: Some(100),
        from: Some(CallId(1)),
        until: Some(CallId(3)),
    };
    assert_eq!(read(main_thread), [(2, Some(int(20)))]);
    // The reader's error stops the walk.
    let mut seen = 0;
    let stopped = store.each_call(run, CallRange::default(), |_| {
        seen += 1;
        Err(StorageError::RunNotFound(run))
    });
    assert!(stopped.is_err());
    assert_eq!(seen, 1);
}

#[test]
fn a_run_that_never_ended_has_no_end() {
    let (_dir, path) = temp_db();
    let run = write_run(&path, "/bin/lost", vec![]);
    let trace = Store::open(&path).unwrap().load_trace(run).unwrap();
    assert_eq!(trace.run.end, None);
    assert!(trace.calls.is_empty());
    assert!(trace.functions.is_empty());
}

#[test]
fn a_lost_run_keeps_its_reason() {
    let (_dir, path) = temp_db();
    let exit = ProcessExit::Lost {
        reason: "interrupted".to_owned(),
    };
    let run = write_run(
        &path,
        "/bin/lost",
        vec![TraceEvent::RunEnded(RunEnd {
            exit: exit.clone(),
            ended_at_ms: 9,
        })],
    );
    let trace = Store::open(&path).unwrap().load_trace(run).unwrap();
    assert_eq!(trace.run.end.map(|e| e.exit), Some(exit));
}

#[test]
fn runs_are_listed_oldest_first_and_the_latest_is_the_last() {
    let (_dir, path) = temp_db();
    assert_eq!(Store::create(&path).unwrap().latest_run().unwrap(), None);
    let first = write_run(&path, "/bin/one", vec![]);
    let second = write_run(&path, "/bin/two", vec![]);
    let store = Store::open(&path).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(
        runs.iter()
            .map(|r| (r.id, r.info.program.as_str()))
            .collect::<Vec<_>>(),
        vec![(first, "/bin/one"), (second, "/bin/two")]
    );
    assert_eq!(store.latest_run().unwrap(), Some(second));
    assert_eq!(store.run(first).unwrap().info.program, "/bin/one");
}

#[test]
fn loading_an_unknown_run_says_which_run() {
    let (_dir, path) = temp_db();
    let store = Store::create(&path).unwrap();
    let err = store.load_trace(RunId(7)).unwrap_err();
    assert!(
        matches!(err, StorageError::RunNotFound(RunId(7))),
        "{err:?}"
    );
    assert!(err.to_string().contains("run 7"), "{err}");
}

#[test]
fn the_database_is_in_wal_mode() {
    let (_dir, path) = temp_db();
    let _store = Store::create(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION as i64);
}

#[test]
fn opening_a_missing_file_says_to_record_one_first() {
    let (_dir, path) = temp_db();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StorageError::NotFound { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("carve record --db"), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(!path.exists(), "open must not create the file");
}

#[test]
fn opening_a_text_file_says_it_is_not_a_trace() {
    let (_dir, path) = temp_db();
    std::fs::write(&path, "these are my notes, not a database\n".repeat(100)).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StorageError::NotATrace { .. }), "{err:?}");
    assert!(err.to_string().contains("--db"), "{err}");
}

#[test]
fn opening_another_programs_sqlite_database_says_it_is_not_a_trace() {
    let (_dir, path) = temp_db();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('la');")
        .unwrap();
    drop(conn);
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StorageError::NotATrace { .. }), "{err:?}");
    let err = Store::create(&path).unwrap_err();
    assert!(matches!(err, StorageError::NotATrace { .. }), "{err:?}");
}

#[test]
fn opening_a_newer_schema_is_refused() {
    let (_dir, path) = temp_db();
    drop(Store::create(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", SCHEMA_VERSION as i64 + 1)
        .unwrap();
    drop(conn);
    let err = Store::open(&path).unwrap_err();
    match &err {
        StorageError::NewerSchema {
            found, supported, ..
        } => {
            assert_eq!(*found, SCHEMA_VERSION as i64 + 1);
            assert_eq!(*supported, SCHEMA_VERSION);
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    assert!(err.to_string().contains("upgrade carve"), "{err}");
}

#[test]
fn creating_in_a_missing_directory_names_the_path() {
    let (dir, _) = temp_db();
    let path = dir.path().join("no/such/dir/trace.db");
    let err = Store::create(&path).unwrap_err();
    assert!(matches!(err, StorageError::CannotWrite { .. }), "{err:?}");
    assert!(err.to_string().contains("no/such/dir/trace.db"), "{err}");
}

#[test]
fn creating_over_an_existing_trace_keeps_its_runs() {
    let (_dir, path) = temp_db();
    let first = write_run(&path, "/bin/one", vec![]);
    let store = Store::create(&path).unwrap();
    assert_eq!(store.latest_run().unwrap(), Some(first));
    assert_eq!(store.path(), path);
}

#[test]
fn a_writer_dropped_without_finish_still_persists_its_events() {
    let (_dir, path) = temp_db();
    let store = Store::create(&path).unwrap();
    let mut writer = store.begin_run(&info("/bin/app")).unwrap();
    let run = writer.run_id();
    writer.record(TraceEvent::Functions(vec![function(0, "app::main")]));
    writer.record(start(0, None, 0, 0, vec![]));
    writer.record(end(0, Outcome::Returned, Some(int(1))));
    drop(writer);
    let trace = Store::open(&path).unwrap().load_trace(run).unwrap();
    assert_eq!(trace.calls.len(), 1);
    assert_eq!(trace.calls[0].ret, Some(int(1)));
}

#[test]
fn committed_events_are_visible_to_a_reader_while_the_run_goes_on() {
    let (_dir, path) = temp_db();
    let store = Store::create(&path).unwrap();
    let mut writer = store.begin_run(&info("/bin/app")).unwrap();
    writer.record(TraceEvent::Functions(vec![function(0, "app::main")]));
    writer.record(start(0, None, 0, 0, vec![]));
    let reader = Store::open(&path).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let trace = reader.load_trace(writer.run_id()).unwrap();
        if trace.calls.len() == 1 {
            assert_eq!(trace.calls[0].outcome, Outcome::Unfinished);
            break;
        }
        assert!(Instant::now() < deadline, "the writer never committed");
        std::thread::sleep(Duration::from_millis(5));
    }
    writer.finish().unwrap();
}

#[test]
fn ending_a_call_that_never_started_is_reported_by_finish() {
    let (_dir, path) = temp_db();
    let store = Store::create(&path).unwrap();
    let mut writer = store.begin_run(&info("/bin/app")).unwrap();
    writer.record(TraceEvent::Functions(vec![function(0, "app::main")]));
    writer.record(end(5, Outcome::Returned, None));
    writer.record(start(0, None, 0, 0, vec![]));
    let run = writer.run_id();
    let err = writer.finish().unwrap_err();
    assert!(matches!(err, StorageError::InvalidEvent { .. }), "{err:?}");
    // Events after the bad one are still stored.
    let trace = Store::open(&path).unwrap().load_trace(run).unwrap();
    assert_eq!(trace.calls.len(), 1);
}

#[test]
fn a_call_to_an_unknown_function_is_reported_by_finish() {
    let (_dir, path) = temp_db();
    let store = Store::create(&path).unwrap();
    let mut writer = store.begin_run(&info("/bin/app")).unwrap();
    writer.record(start(0, None, 42, 0, vec![]));
    let run = writer.run_id();
    let err = writer.finish().unwrap_err();
    assert!(matches!(err, StorageError::InvalidEvent { .. }), "{err:?}");
    assert!(err.to_string().contains("call 0"), "{err}");
    assert!(err.to_string().contains("function 42"), "{err}");
    // Not stored: the schema's foreign key, checked by the writer.
    let trace = Store::open(&path).unwrap().load_trace(run).unwrap();
    assert!(trace.calls.is_empty());
}

#[test]
fn a_call_started_twice_keeps_its_first_row_and_is_reported_by_finish() {
    let (_dir, path) = temp_db();
    let store = Store::create(&path).unwrap();
    let mut writer = store.begin_run(&info("/bin/app")).unwrap();
    writer.record(TraceEvent::Functions(vec![
        function(0, "app::main"),
        function(1, "app::other"),
    ]));
    writer.record(start(1, None, 0, 0, vec![]));
    writer.record(start(1, None, 1, 0, vec![]));
    writer.record(start(2, Some(1), 1, 1, vec![]));
    let run = writer.run_id();
    let err = writer.finish().unwrap_err();
    assert!(matches!(err, StorageError::InvalidEvent { .. }), "{err:?}");
    assert!(err.to_string().contains("call 1 started twice"), "{err}");
    let trace = Store::open(&path).unwrap().load_trace(run).unwrap();
    let got: Vec<(u64, u32)> = trace.calls.iter().map(|c| (c.id.0, c.function.0)).collect();
    assert_eq!(got, [(1, 0), (2, 1)]);
}

#[test]
fn fifty_thousand_calls_write_and_read_back() {
    const CALLS: u64 = 50_000;
    let (_dir, path) = temp_db();
    let store = Store::create(&path).unwrap();
    let mut writer = store.begin_run(&info("/bin/busy")).unwrap();
    writer.record(TraceEvent::Functions(vec![
        function(0, "app::main"),
        function(1, "app::work"),
    ]));
    writer.record(start(0, None, 0, 0, vec![]));
    for call in 1..=CALLS {
        writer.record(start(
            call,
            Some(0),
            1,
            1,
            vec![arg("x", int(call as i128))],
        ));
        writer.record(end(call, Outcome::Returned, Some(int(2 * call as i128))));
    }
    writer.record(end(0, Outcome::Returned, None));
    let run = writer.finish().unwrap();

    let trace = Store::open(&path).unwrap().load_trace(run).unwrap();
    assert_eq!(trace.calls.len() as u64, CALLS + 1);
    for (i, call) in trace.calls.iter().enumerate().skip(1) {
        let i = i as u64;
        assert_eq!(call.id, CallId(i));
        assert_eq!(call.args, vec![arg("x", int(i as i128))]);
        assert_eq!(call.ret, Some(int(2 * i as i128)));
        assert_eq!(call.outcome, Outcome::Returned);
    }
}

#[test]
fn a_damaged_json_column_is_a_decode_error_not_a_panic() {
    let (_dir, path) = temp_db();
    let run = write_run(
        &path,
        "/bin/app",
        vec![
            TraceEvent::Functions(vec![function(0, "app::main")]),
            start(0, None, 0, 0, vec![]),
        ],
    );
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE calls SET args = 'not json'", [])
        .unwrap();
    drop(conn);
    let err = Store::open(&path).unwrap().load_trace(run).unwrap_err();
    assert!(matches!(err, StorageError::Decode { .. }), "{err:?}");
    assert!(err.to_string().contains("arguments of call 0"), "{err}");
}

#[test]
fn every_error_message_is_one_line() {
    let (dir, path) = temp_db();
    let missing = Store::open(&path).unwrap_err();
    std::fs::write(&path, "text".repeat(200)).unwrap();
    let not_a_trace = Store::open(&path).unwrap_err();
    let cannot_write = Store::create(&dir.path().join("nope/trace.db")).unwrap_err();
    for err in [missing, not_a_trace, cannot_write] {
        assert!(!err.to_string().contains('\n'), "{err}");
    }
}

/// Every file in `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(std::ffi::OsString, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn reading_a_trace_changes_no_byte_and_creates_no_file() {
    let (dir, path) = temp_db();
    let run = write_run(
        &path,
        "/bin/app",
        vec![
            TraceEvent::Functions(vec![function(0, "app::main")]),
            start(0, None, 0, 0, vec![]),
            end(0, Outcome::Returned, Some(int(1))),
        ],
    );
    let before = snapshot(dir.path());
    let store = Store::open(&path).unwrap();
    assert_eq!(store.load_trace(run).unwrap().calls.len(), 1);
    assert!(matches!(
        store.begin_run(&info("/bin/app")).unwrap_err(),
        StorageError::OpenedReadOnly { .. }
    ));
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_trace_of_an_older_schema_is_read_without_being_migrated_on_disk() {
    let (dir, path) = temp_db();
    write_run(&path, "/bin/app", vec![]);
    // Version 3 is version 10 without migration 10's `runs.features`, migration 9's `repeats`
    // and `runs.distinct_calls`,
    // migration 8's `file_reads`, migration 7's `runs.crates`,
    // migration 6's call times, migration 5's coverage tables and columns, and migration 4's
    // `calls.touches`.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "ALTER TABLE runs DROP COLUMN features; \
         DROP TABLE repeats; ALTER TABLE runs DROP COLUMN distinct_calls; \
         DROP TABLE file_reads; ALTER TABLE runs DROP COLUMN crates; \
         ALTER TABLE calls DROP COLUMN started_ns; ALTER TABLE calls DROP COLUMN ended_ns; \
         DROP TABLE line_hits; DROP TABLE code_lines; \
         ALTER TABLE threads DROP COLUMN name; ALTER TABLE runs DROP COLUMN coverage; \
         ALTER TABLE calls DROP COLUMN touches; PRAGMA user_version = 3;",
    )
    .unwrap();
    drop(conn);
    let before = snapshot(dir.path());
    let store = Store::open(&path).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1);
    // Recorded before `--crate` was stored: no crate restriction known.
    assert_eq!(runs[0].info.crates, Vec::<String>::new());
    // The migration ran in a copy on disk, elsewhere (not in memory, whose cost would be the
    // trace's size): a file holding the migrated schema, gone with the store.
    let copy = store
        .migrated_copy()
        .expect("an older trace is read through a copy")
        .to_path_buf();
    assert!(!copy.starts_with(dir.path()), "{}", copy.display());
    let migrated =
        rusqlite::Connection::open_with_flags(&copy, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let version: i64 = migrated
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap();
    assert_eq!(version, carve_storage::SCHEMA_VERSION as i64);
    drop(migrated);
    drop(store);
    assert!(!copy.exists(), "{} outlived the store", copy.display());
    assert_eq!(snapshot(dir.path()), before);
    // The file itself still has the older schema, so each reading copies it again, while a
    // trace of the current schema is read as it is.
    assert!(Store::open(&path).unwrap().migrated_copy().is_some());
    let (_current_dir, current) = temp_db();
    write_run(&current, "/bin/app", vec![]);
    assert!(Store::open(&current).unwrap().migrated_copy().is_none());
}

#[test]
fn an_empty_file_is_refused_for_reading_and_left_empty() {
    let (dir, path) = temp_db();
    std::fs::write(&path, "").unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StorageError::Empty { .. }), "{err:?}");
    assert!(err.to_string().contains("carve record --db"), "{err}");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // Recording into it is fine: an empty file is what `mktemp` makes.
    Store::check_for_recording(&path).unwrap();
}

#[test]
fn a_trace_missing_a_table_or_a_column_is_damaged_for_every_use() {
    for damage in ["DROP TABLE calls", "ALTER TABLE calls DROP COLUMN objects"] {
        let (_dir, path) = temp_db();
        write_run(&path, "/bin/app", vec![]);
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(damage).unwrap();
        drop(conn);
        let before = std::fs::read(&path).unwrap();
        let errors = [
            Store::open(&path).unwrap_err(),
            Store::create(&path).unwrap_err(),
            Store::check_for_recording(&path).unwrap_err(),
        ];
        for err in errors {
            assert!(
                matches!(err, StorageError::Damaged { .. }),
                "{damage}: {err:?}"
            );
            let message = err.to_string();
            assert!(message.contains("calls"), "{message}");
            assert!(message.contains("carve record --db"), "{message}");
            assert!(!message.contains('\n'), "{message}");
        }
        assert_eq!(std::fs::read(&path).unwrap(), before, "{damage}");
    }
}

#[test]
fn a_writer_waits_for_another_process_lock_and_loses_nothing() {
    const CALLS: u64 = 5_000;
    let (_dir, path) = temp_db();
    let (told_tx, told_rx) = std::sync::mpsc::channel();
    let told_tx = std::sync::Mutex::new(told_tx);
    let waiting: LockWait = std::sync::Arc::new(move |p: &Path| {
        told_tx.lock().unwrap().send(p.to_path_buf()).unwrap();
    });
    let store = Store::create_waiting(&path, Some(waiting)).unwrap();
    let mut writer = store.begin_run(&info("/bin/app")).unwrap();
    let run = writer.run_id();
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let recorder = std::thread::spawn(move || {
        writer.record(TraceEvent::Functions(vec![function(0, "app::main")]));
        for call in 0..CALLS {
            writer.record(start(call, None, 0, 0, vec![]));
            writer.record(end(call, Outcome::Returned, Some(int(call as i128))));
        }
        writer.finish()
    });
    // The writer says it waits; only then does the other connection let go.
    assert_eq!(told_rx.recv().unwrap(), path);
    other.execute_batch("COMMIT").unwrap();
    recorder.join().unwrap().unwrap();
    let trace = Store::open(&path).unwrap().load_trace(run).unwrap();
    assert_eq!(trace.calls.len() as u64, CALLS);
    assert!(trace.calls.iter().all(|c| c.outcome == Outcome::Returned));
    assert!(told_rx.try_recv().is_err(), "one wait, one notice");
}

fn code_line(id: u32, file: &str, line: u32, function: u32) -> CodeLine {
    CodeLine {
        id: LineId(id),
        file: file.to_owned(),
        line,
        function: FunctionId(function),
    }
}

#[test]
fn line_coverage_reads_back_per_file_per_function_and_per_thread() {
    let (_dir, path) = temp_db();
    let events = vec![
        TraceEvent::Functions(vec![function(1, "app::main"), function(2, "app::unused")]),
        TraceEvent::CodeLines(vec![
            code_line(1, "/src/main.rs", 3, 1),
            code_line(2, "/src/main.rs", 4, 1),
            code_line(3, "/src/lib.rs", 10, 2),
            code_line(4, "/src/lib.rs", 11, 1),
            code_line(5, "/src/lib.rs", 11, 2),
        ]),
        TraceEvent::ThreadNamed {
            thread: 100,
            name: "app".to_owned(),
        },
        TraceEvent::LineReached {
            line: LineId(1),
            thread: 100,
        },
        TraceEvent::ThreadStarted { thread: 101 },
        TraceEvent::ThreadNamed {
            thread: 101,
            name: "tests::a_long_".to_owned(),
        },
        TraceEvent::LineReached {
            line: LineId(4),
            thread: 101,
        },
        TraceEvent::LineReached {
            line: LineId(4),
            thread: 101,
        },
    ];
    let run = write_run(&path, "/bin/app", events);
    let store = Store::open(&path).expect("open");
    let coverage = store.coverage(run).expect("coverage");
    let files: Vec<(&str, Vec<(u32, bool)>)> = coverage
        .lines
        .iter()
        .map(|(f, l)| (f.as_str(), l.iter().map(|(n, r)| (*n, *r)).collect()))
        .collect();
    assert_eq!(
        files,
        vec![
            ("/src/lib.rs", vec![(10, false), (11, true)]),
            ("/src/main.rs", vec![(3, true), (4, false)]),
        ]
    );
    assert_eq!(coverage.totals(), (2, 4));
    let per_function: Vec<(&str, usize, usize)> = coverage
        .functions
        .iter()
        .map(|f| (f.path.as_str(), f.reached, f.lines.len()))
        .collect();
    // Line 11 has code in both functions; only main's code there ran.
    assert_eq!(
        per_function,
        vec![("app::main", 2, 3), ("app::unused", 0, 2)]
    );
    let threads: Vec<(i32, Option<&str>, usize, Vec<&str>)> = coverage
        .threads
        .iter()
        .map(|t| {
            (
                t.thread,
                t.name.as_deref(),
                t.lines.values().map(|l| l.len()).sum(),
                coverage
                    .functions_reached_by(t)
                    .iter()
                    .map(|f| f.path.as_str())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        threads,
        vec![
            (100, Some("app"), 1, vec!["app::main"]),
            (101, Some("tests::a_long_"), 1, vec!["app::main"])
        ]
    );
}

#[test]
fn a_run_recorded_without_coverage_says_how_to_get_it() {
    let (_dir, path) = temp_db();
    let run = write_run(
        &path,
        "/bin/app",
        vec![TraceEvent::Functions(vec![function(1, "app::main")])],
    );
    let store = Store::open(&path).expect("open");
    let err = store.coverage(run).expect_err("no coverage");
    assert!(err.to_string().contains("carve record --coverage"), "{err}");
}

#[test]
fn call_times_and_thread_names_read_back_in_start_order() {
    let (_dir, path) = temp_db();
    let events = vec![
        TraceEvent::Functions(vec![function(0, "app::main"), function(1, "app::helper")]),
        TraceEvent::ThreadNamed {
            thread: 100,
            name: "tests::adds_two_numbers".to_owned(),
        },
        start(0, None, 0, 0, vec![]),
        start(1, Some(0), 1, 1, vec![]),
        end(1, Outcome::Returned, None),
        // Seen gone only later: no end time.
        TraceEvent::CallEnded(CallEnd {
            call: CallId(0),
            outcome: Outcome::Unwound,
            ret: None,
            after: Vec::new(),
            touches: Vec::new(),
            at_ns: None,
        }),
    ];
    let run = write_run(&path, "/bin/app", events);
    let store = Store::open(&path).expect("open");
    type Row = (u64, Option<u64>, Option<u64>, Option<u64>);
    let times: Vec<Row> = store
        .call_times(run)
        .expect("times")
        .iter()
        .map(|t| {
            (
                t.shape.id.0,
                t.shape.parent.map(|p| p.0),
                t.started_ns,
                t.ended_ns,
            )
        })
        .collect();
    assert_eq!(
        times,
        vec![
            (0, None, Some(0), None),
            (1, Some(0), Some(1000), Some(1500))
        ]
    );
    let names = store.thread_names(run).expect("names");
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        vec![(100, "tests::adds_two_numbers".to_owned())]
    );
}

/// The page size of the file at `path`.
fn page_size(path: &Path) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_new_trace_has_16_kib_pages_and_an_older_one_keeps_its_own_when_runs_are_added() {
    let (_dir, path) = temp_db();
    let events = || {
        vec![
            TraceEvent::Functions(vec![function(0, "app::main")]),
            start(0, None, 0, 0, vec![arg("x", int(1))]),
            end(0, Outcome::Returned, Some(int(2))),
        ]
    };
    let first = write_run(&path, "/bin/app", events());
    assert_eq!(page_size(&path), 16 * 1024);

    // A trace written by a carve that used SQLite's default pages.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = DELETE; PRAGMA page_size = 4096; VACUUM; \
         PRAGMA journal_mode = WAL;",
    )
    .unwrap();
    drop(conn);
    assert_eq!(page_size(&path), 4096);
    let second = write_run(&path, "/bin/app", events());
    assert_eq!(page_size(&path), 4096, "an existing file keeps its pages");
    let store = Store::open(&path).unwrap();
    for run in [first, second] {
        let trace = store.load_trace(run).unwrap();
        assert_eq!(trace.calls.len(), 1);
        assert_eq!(trace.calls[0].ret, Some(int(2)));
    }
}
