//! The writer's call rows (buffered per transaction, inserted many per statement) against the
//! plain way of storing them: one `INSERT` per start, one `UPDATE` per end, each value as
//! `serde_json::to_string` writes it. Every column of every row, with its SQLite type, must be
//! the same; and what a `kill -9` of the writing process leaves is every committed call.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use carve_storage::*;
use rusqlite::Connection;

fn info() -> RunInfo {
    RunInfo {
        program: "/bin/rows".to_owned(),
        args: Vec::new(),
        cwd: "/".to_owned(),
        pid: 1,
        started_at_ms: 0,
        filters: Vec::new(),
        excludes: Vec::new(),
        crates: Vec::new(),
        carve_version: "test".to_owned(),
        distinct_calls: false,
        features: Vec::new(),
    }
}

fn function(id: u32) -> FunctionInfo {
    FunctionInfo {
        id: FunctionId(id),
        path: format!("rows::f{id}"),
        name: format!("f{id}"),
        linkage_name: None,
        language: Language::Rust,
        decl_file: None,
        decl_line: None,
        low_pc: 0x1000 * u64::from(id + 1),
        params: Vec::new(),
        return_type: Some("u64".to_owned()),
    }
}

fn uint(value: u64) -> Value {
    Value::Uint {
        ty: "u64".to_owned(),
        value: u128::from(value),
    }
}

fn start(call: u64, parent: Option<u64>, depth: u32, function: u32) -> CallStart {
    CallStart {
        call: CallId(call),
        parent: parent.map(CallId),
        function: FunctionId(function),
        thread: 7 + (call % 3) as i32,
        depth,
        args: vec![
            Arg {
                name: "n".to_owned(),
                value: uint(call),
            },
            Arg {
                name: "s".to_owned(),
                value: Value::Str {
                    ty: "&str".to_owned(),
                    value: format!("\"quoted\" ünïcode {call}\n"),
                    truncated: call.is_multiple_of(2),
                },
            },
        ],
        objects: if call.is_multiple_of(5) {
            vec![ArgObject {
                arg: "self".to_owned(),
                object: ObjectId(call),
            }]
        } else {
            Vec::new()
        },
        at_ns: (!call.is_multiple_of(7)).then_some(call * 10),
    }
}

fn end(call: u64) -> CallEnd {
    let outcome = match call % 4 {
        0 => Outcome::Returned,
        1 => Outcome::Panicked {
            message: Some(format!("boom {call}")),
        },
        2 => Outcome::Panicked { message: None },
        _ => Outcome::Unwound,
    };
    CallEnd {
        call: CallId(call),
        ret: matches!(outcome, Outcome::Returned).then(|| uint(call * 3)),
        outcome,
        after: if call.is_multiple_of(3) {
            vec![Arg {
                name: "self".to_owned(),
                value: uint(call + 1),
            }]
        } else {
            Vec::new()
        },
        touches: if call % 6 == 1 {
            vec!["clock: std::time::SystemTime::now".to_owned()]
        } else {
            Vec::new()
        },
        at_ns: (!call.is_multiple_of(11)).then_some(call * 10 + 5),
    }
}

/// A run's events: `roots` trees of nested calls (each root has children, one of which has
/// children of its own), ends coming right after their start or after the children, plus
/// some calls that never end. Long enough to span several of the writer's transactions.
fn events(roots: u64) -> Vec<TraceEvent> {
    let mut out = vec![TraceEvent::Functions(vec![function(0), function(1)])];
    let mut next = 1;
    let mut call = |parent: Option<u64>, depth: u32, out: &mut Vec<TraceEvent>| {
        let id = next;
        next += 1;
        out.push(TraceEvent::CallStarted(start(
            id,
            parent,
            depth,
            (id % 2) as u32,
        )));
        id
    };
    for root in 0..roots {
        let r = call(None, 0, &mut out);
        for child in 0..5 {
            let c = call(Some(r), 1, &mut out);
            if child == 2 {
                let g = call(Some(c), 2, &mut out);
                out.push(TraceEvent::CallEnded(end(g)));
                let h = call(Some(c), 2, &mut out);
                out.push(TraceEvent::ObjectCreated(ObjectInfo {
                    id: ObjectId(h),
                    type_name: "rows::Thing".to_owned(),
                    addr: 0x5000 + h,
                    created_by: Some(CallId(c)),
                }));
                out.push(TraceEvent::CallEnded(end(h)));
            }
            if root % 17 != 3 || child != 4 {
                out.push(TraceEvent::CallEnded(end(c)));
            }
        }
        out.push(TraceEvent::ThreadStarted {
            thread: root as i32,
        });
        if root % 13 != 5 {
            out.push(TraceEvent::CallEnded(end(r)));
        }
    }
    out
}

/// The plain way: a statement per event, in order.
fn store_plainly(conn: &Connection, run: i64, events: &[TraceEvent]) {
    let json = |v: &dyn erased::Json| v.json();
    for event in events {
        match event {
            TraceEvent::CallStarted(s) => {
                conn.execute(
                    "INSERT INTO calls (run_id, id, parent_id, function_id, thread, depth, args, \
                     objects, started_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    rusqlite::params![
                        run,
                        s.call.0 as i64,
                        s.parent.map(|p| p.0 as i64),
                        s.function.0,
                        s.thread,
                        s.depth,
                        json(&s.args),
                        (!s.objects.is_empty()).then(|| json(&s.objects)),
                        s.at_ns.map(|t| t as i64),
                    ],
                )
                .unwrap();
            }
            TraceEvent::CallEnded(e) => {
                let (kind, message) = match &e.outcome {
                    Outcome::Returned => ("returned", None),
                    Outcome::Panicked { message } => ("panicked", message.clone()),
                    Outcome::Unwound => ("unwound", None),
                    Outcome::Unfinished => ("unfinished", None),
                };
                let updated = conn
                    .execute(
                        "UPDATE calls SET outcome_kind = ?3, panic_message = ?4, ret = ?5, \
                         after_args = ?6, touches = ?7, ended_ns = ?8 WHERE run_id = ?1 AND id = ?2",
                        rusqlite::params![
                            run,
                            e.call.0 as i64,
                            kind,
                            message,
                            e.ret.as_ref().map(|v| json(v)),
                            (!e.after.is_empty()).then(|| json(&e.after)),
                            (!e.touches.is_empty()).then(|| json(&e.touches)),
                            e.at_ns.map(|t| t as i64),
                        ],
                    )
                    .unwrap();
                assert_eq!(updated, 1);
            }
            _ => {}
        }
    }
}

mod erased {
    pub trait Json {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> String {
            serde_json::to_string(self).unwrap()
        }
    }
}

/// Every column of every call row of the database's only run, with its SQLite type.
fn call_rows(path: &Path) -> Vec<Vec<String>> {
    let conn = Connection::open(path).unwrap();
    let columns = [
        "run_id",
        "id",
        "parent_id",
        "function_id",
        "thread",
        "depth",
        "args",
        "objects",
        "started_ns",
        "outcome_kind",
        "panic_message",
        "ret",
        "after_args",
        "touches",
        "ended_ns",
    ];
    let select: Vec<String> = columns
        .iter()
        .map(|c| format!("typeof({c}) || ':' || ifnull({c}, '')"))
        .collect();
    let sql = format!("SELECT {} FROM calls ORDER BY id", select.join(", "));
    let mut stmt = conn.prepare(&sql).unwrap();
    let rows = stmt
        .query_map([], |row| {
            (0..columns.len())
                .map(|i| row.get::<_, String>(i))
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

fn temp_db(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

#[test]
fn the_writer_stores_every_call_row_as_one_statement_per_event_would() {
    let dir = tempfile::tempdir().unwrap();
    let events = events(400); // 400 roots x 8 calls: 3,200 calls, ~6,000 events
    let written = temp_db(&dir, "writer.db");
    let mut writer = Store::create(&written).unwrap().begin_run(&info()).unwrap();
    for event in events.clone() {
        writer.record(event);
    }
    writer.finish().unwrap();

    let plain = temp_db(&dir, "plain.db");
    let store = Store::create(&plain).unwrap();
    let run = store.begin_run(&info()).unwrap();
    let run_id = run.run_id().0;
    run.finish().unwrap();
    let conn = Connection::open(&plain).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
    conn.execute(
        "INSERT INTO functions (run_id, id, path, name, language, low_pc, params) \
         VALUES (?1, 0, 'f0', 'f0', 'rust', 0, '[]'), (?1, 1, 'f1', 'f1', 'rust', 0, '[]')",
        [run_id],
    )
    .unwrap();
    conn.execute_batch("BEGIN").unwrap();
    store_plainly(&conn, run_id, &events);
    conn.execute_batch("COMMIT").unwrap();
    drop(conn);

    let (got, want) = (call_rows(&written), call_rows(&plain));
    assert_eq!(got.len(), 3200);
    assert!(
        got.iter().any(|r| r[9] == "null:"),
        "some calls never ended"
    );
    assert!(got.iter().any(|r| r[10].starts_with("text:boom")));
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w);
    }
    assert_eq!(got, want);
}

#[test]
fn a_bad_call_among_many_loses_only_itself() {
    let dir = tempfile::tempdir().unwrap();
    let path = temp_db(&dir, "bad.db");
    let mut writer = Store::create(&path).unwrap().begin_run(&info()).unwrap();
    writer.record(TraceEvent::Functions(vec![function(0)]));
    for call in 1..=200 {
        // Call 37 names a function the run does not have (a foreign key the insert breaks).
        let f = if call == 37 { 9 } else { 0 };
        writer.record(TraceEvent::CallStarted(start(call, None, 0, f)));
        writer.record(TraceEvent::CallEnded(end(call)));
    }
    let err = writer.finish().unwrap_err();
    assert!(err.to_string().contains("call 37"), "{err}");
    let ids: Vec<String> = call_rows(&path).into_iter().map(|r| r[1].clone()).collect();
    let want: Vec<String> = (1..=200)
        .filter(|c| *c != 37)
        .map(|c| format!("integer:{c}"))
        .collect();
    assert_eq!(ids, want);
}

const CHILD: &str = "CARVE_WRITER_ROWS_CHILD";
const COMMITTED: u64 = 3000;

/// The child process of the kill test: writes COMMITTED whole calls to `path`, says so once
/// a reader sees them all, then goes on starting calls until it is killed.
fn write_until_killed(path: PathBuf) -> ! {
    let mut writer = Store::create(&path).unwrap().begin_run(&info()).unwrap();
    writer.record(TraceEvent::Functions(vec![function(0), function(1)]));
    for call in 1..=COMMITTED {
        writer.record(TraceEvent::CallStarted(start(call, None, 0, 0)));
        writer.record(TraceEvent::CallEnded(end(call)));
    }
    let reader = Store::open(&path).unwrap();
    let run = writer.run_id();
    while (reader.load_trace(run).unwrap().calls.len() as u64) < COMMITTED {
        std::thread::sleep(Duration::from_millis(5));
    }
    println!("committed");
    let mut call = COMMITTED;
    let started = Instant::now();
    loop {
        if started.elapsed() > Duration::from_secs(120) {
            std::process::exit(1); // never killed: the test that started it is gone
        }
        call += 1;
        writer.record(TraceEvent::CallStarted(start(call, None, 0, 0)));
        if call.is_multiple_of(2) {
            writer.record(TraceEvent::CallEnded(end(call)));
        }
        if call.is_multiple_of(500) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

#[test]
fn a_kill_9_of_the_writing_process_keeps_every_committed_call() {
    // This test runs itself again as the child that writes and is killed.
    if let Ok(path) = std::env::var(CHILD) {
        write_until_killed(PathBuf::from(path));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = temp_db(&dir, "killed.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_kill_9_of_the_writing_process_keeps_every_committed_call",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, &path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // The child's lines through a thread, so a child that never says "committed" fails the
    // test after a minute instead of hanging it.
    let stdout = child.stdout.take().unwrap();
    let (lines_tx, lines_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if lines_tx.send(line.unwrap_or_default()).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines_rx.recv_timeout(left) {
            Ok(line) if line.contains("committed") => break,
            Ok(_) => {}
            Err(e) => {
                let _ = child.kill();
                panic!("the child never said it committed: {e}");
            }
        }
    }
    // Let it write (and commit) a while longer, mid-transaction at any point.
    std::thread::sleep(Duration::from_millis(150));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let conn = Connection::open(&path).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    drop(conn);
    let rows = call_rows(&path);
    assert!(rows.len() as u64 >= COMMITTED, "{} calls", rows.len());
    let trace = Store::open(&path).unwrap().load_trace(RunId(1)).unwrap();
    for (i, call) in trace.calls.iter().take(COMMITTED as usize).enumerate() {
        let id = i as u64 + 1;
        assert_eq!(call.id, CallId(id));
        assert_eq!(call.args, start(id, None, 0, 0).args);
        let e = end(id);
        assert_eq!(
            (&call.outcome, &call.ret, &call.after),
            (&e.outcome, &e.ret, &e.after)
        );
    }
    // Calls after the committed ones are whole rows too: every started call is there or not,
    // and an ended one with its end whenever its row is there (the same transaction).
    for call in &trace.calls[COMMITTED as usize..] {
        assert_eq!(call.args, start(call.id.0, None, 0, 0).args);
    }
}

/// SQLite writes the log from its beginning again only when a transaction starts with all of
/// it copied into the file. With the checkpoints on a thread of their own that never happened:
/// the log grew as large as the trace (a 1 GB trace took 2 GB of disk while recording). Some
/// checkpoints are the writer's own for that (`CHECKPOINTS_PER_RESTART`), so the log stays a
/// fraction of the trace. The log's file keeps the size the log reached while a connection is open.
#[test]
fn the_log_is_written_over_again_rather_than_grown_as_large_as_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let path = temp_db(&dir, "long.db");
    let mut writer = Store::create(&path).unwrap().begin_run(&info()).unwrap();
    // Another connection open: the last to close would copy the log into the file and
    // delete it.
    let other = Connection::open(&path).unwrap();
    let _: i64 = other
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    for event in events(32_000) {
        writer.record(event);
    }
    writer.finish().unwrap();
    let len = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let (db, log) = (len(&path), len(&dir.path().join("long.db-wal")));
    assert!(db > 60 << 20, "the trace is {db} bytes: too short to test");
    assert!(log > 0, "no log file while a connection is open");
    assert!(
        log < db / 2,
        "the log grew to {log} bytes for a trace of {db}: it is never written over"
    );
    drop(other);
}
