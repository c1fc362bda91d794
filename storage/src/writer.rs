//! The background writer: a thread that owns the SQLite connection and stores a run's events.
//!
//! The recorder calls [`RunWriter::record`](crate::TraceSink::record), which pushes the event
//! onto a queue behind an uncontended mutex: no system call, no thread wake-up per event. The
//! thread takes the queue every [`DRAIN_EVERY`], or as soon as [`NUDGE_AT`] events wait, and
//! commits what it took in one transaction.
//!
//! **Bound:** at most [`MAX_UNCOMMITTED_EVENTS`] events are ever queued or in an open
//! transaction: when that many wait, `record` blocks (and with it the tracer and the traced
//! program) until the writer has committed them. So a `kill -9` of carve loses at most the
//! last 2,000 events (a call is a start and an end event), and another process holding the
//! database's write lock pauses the recording instead of growing memory or dropping events:
//! the writer waits for the lock as long as it takes, telling [`LockWait`] once per wait.

use std::any::Any;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{params, Connection};

use crate::codec;
use crate::error::StorageError;
use crate::model::{
    CallEnd, CallStart, CodeLine, FileRead, FunctionInfo, LineId, ObjectInfo, ProcessExit, RunEnd,
    RunId, TraceEvent, TraceSink,
};
use crate::schema::{wait_for_lock, LockWait};

/// The most events queued or written but not yet committed, and so the most one transaction
/// holds; `record` waits for the writer rather than go over it.
pub(crate) const MAX_UNCOMMITTED_EVENTS: usize = 2000;
/// How many waiting events wake the writer before its next [`DRAIN_EVERY`] tick, so it commits
/// while the recorder goes on filling the rest of the bound.
pub(crate) const NUDGE_AT: usize = MAX_UNCOMMITTED_EVENTS / 4;
/// How often the thread takes what the recorder queued.
pub(crate) const DRAIN_EVERY: Duration = Duration::from_millis(20);

/// What the recorder's thread and the writer thread share.
#[derive(Debug, Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// Signalled when committed events make room under the bound (or the writer stopped).
    room: Condvar,
    /// Set by `finish`/drop: drain what is left and stop.
    closed: AtomicBool,
}

#[derive(Debug, Default)]
struct Queue {
    events: Vec<TraceEvent>,
    /// Events pushed and not yet committed (queued plus the writer's open transaction).
    uncommitted: usize,
    /// The writer was woken for the events now queued.
    nudged: bool,
    /// The writer thread has ended: nothing will make room any more.
    stopped: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Poisoned only if a thread panicked while holding it; the data is still consistent.
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Marks the queue stopped when the writer thread ends, however it ends.
struct StopGuard<'s>(&'s Shared);

impl Drop for StopGuard<'_> {
    fn drop(&mut self) {
        self.0.lock().stopped = true;
        self.0.room.notify_all();
    }
}

const INSERT_FUNCTION: &str = "INSERT INTO functions \
    (run_id, id, path, name, linkage_name, language, decl_file, decl_line, low_pc, params, return_type) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) \
    ON CONFLICT (run_id, id) DO UPDATE SET path = excluded.path, name = excluded.name, \
    linkage_name = excluded.linkage_name, language = excluded.language, \
    decl_file = excluded.decl_file, decl_line = excluded.decl_line, low_pc = excluded.low_pc, \
    params = excluded.params, return_type = excluded.return_type";
const INSERT_OBJECT: &str = "INSERT OR REPLACE INTO objects \
    (run_id, id, type_name, addr, created_by) VALUES (?1, ?2, ?3, ?4, ?5)";
/// A call's row: its start, and its end when it came right after (else NULL until `END_CALL`).
const INSERT_CALL: &str = "INSERT INTO calls \
    (run_id, id, parent_id, function_id, thread, depth, args, objects, started_ns, \
    outcome_kind, panic_message, ret, after_args, touches, ended_ns) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";
const END_CALL: &str =
    "UPDATE calls SET outcome_kind = ?3, panic_message = ?4, ret = ?5, after_args = ?6, \
    touches = ?7, ended_ns = ?8 WHERE run_id = ?1 AND id = ?2";
const THREAD_STARTED: &str = "INSERT INTO threads (run_id, tid, started) VALUES (?1, ?2, 1) \
    ON CONFLICT (run_id, tid) DO UPDATE SET started = 1";
const THREAD_EXITED: &str = "INSERT INTO threads (run_id, tid, exited) VALUES (?1, ?2, 1) \
    ON CONFLICT (run_id, tid) DO UPDATE SET exited = 1";
const INSERT_CODE_LINE: &str =
    "INSERT INTO code_lines (run_id, id, file, line, function_id) VALUES (?1, ?2, ?3, ?4, ?5)";
const MARK_COVERAGE: &str = "UPDATE runs SET coverage = 1 WHERE id = ?1";
const INSERT_LINE_HIT: &str =
    "INSERT OR IGNORE INTO line_hits (run_id, line_id, thread) VALUES (?1, ?2, ?3)";
const NAME_THREAD: &str = "INSERT INTO threads (run_id, tid, name) VALUES (?1, ?2, ?3) \
    ON CONFLICT (run_id, tid) DO UPDATE SET name = excluded.name";
const INSERT_FILE_READ: &str = "INSERT INTO file_reads \
    (run_id, seq, call_id, op, path, kind, len, contents, entries, detail) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
const END_RUN: &str = "UPDATE runs SET exit_kind = ?2, exit_code = ?3, exit_signal = ?4, \
    exit_signal_name = ?5, exit_reason = ?6, ended_at_ms = ?7 WHERE id = ?1";

/// Stores one run's events from a background thread; see the module docs.
///
/// Call [`finish`](RunWriter::finish) to learn whether everything was stored. Dropping the
/// writer also stores everything sent so far and waits for the thread, but discards errors.
#[derive(Debug)]
pub struct RunWriter {
    run: RunId,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<Result<(), StorageError>>>,
}

impl RunWriter {
    /// Starts the writer thread for `run`, which owns `conn` (on the file at `path`) from now on.
    pub(crate) fn spawn(
        conn: Connection,
        run: RunId,
        path: PathBuf,
        waiting: Option<LockWait>,
    ) -> Result<RunWriter, StorageError> {
        let shared = Arc::new(Shared::default());
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("carve-writer-{run}"))
            .spawn(move || {
                let _stop = StopGuard(&theirs);
                let writer = EventWriter {
                    conn,
                    run,
                    path,
                    waiting,
                    first_error: None,
                    pending: None,
                    file_reads: 0,
                };
                write_events(writer, &theirs)
            })
            .map_err(|e| {
                StorageError::WriterFailed(format!("cannot start the writer thread: {e}"))
            })?;
        Ok(RunWriter {
            run,
            shared,
            thread: Some(thread),
        })
    }

    /// The id the store gave this run.
    pub fn run_id(&self) -> RunId {
        self.run
    }

    /// Stores every event sent so far, stops the thread and reports the first error it hit.
    pub fn finish(mut self) -> Result<RunId, StorageError> {
        self.stop()?;
        Ok(self.run)
    }

    fn stop(&mut self) -> Result<(), StorageError> {
        self.shared.closed.store(true, Ordering::Release);
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        thread.thread().unpark();
        thread.join().unwrap_or_else(|panic| {
            Err(StorageError::WriterFailed(format!(
                "the writer thread panicked: {}",
                panic_message(panic.as_ref())
            )))
        })
    }
}

impl TraceSink for RunWriter {
    fn record(&mut self, event: TraceEvent) {
        let wake = |thread: &Option<JoinHandle<_>>| {
            if let Some(t) = thread {
                t.thread().unpark();
            }
        };
        let mut queue = self.shared.lock();
        while queue.uncommitted >= MAX_UNCOMMITTED_EVENTS && !queue.stopped {
            // Full: hold the recorder (and the program) until the writer committed.
            wake(&self.thread);
            queue = self
                .shared
                .room
                .wait(queue)
                .unwrap_or_else(|p| p.into_inner());
        }
        queue.events.push(event);
        queue.uncommitted += 1;
        let nudge = queue.events.len() >= NUDGE_AT && !queue.nudged;
        queue.nudged |= nudge;
        drop(queue);
        if nudge {
            wake(&self.thread);
        }
    }
}

impl Drop for RunWriter {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// The `args` and `objects` columns of a call's start (`objects` NULL when it has none).
fn start_columns(start: &CallStart) -> Result<(String, Option<String>), StorageError> {
    let args = codec::to_json(&start.args, "call arguments")?;
    let objects = if start.objects.is_empty() {
        None
    } else {
        Some(codec::to_json(&start.objects, "call objects")?)
    };
    Ok((args, objects))
}

/// The JSON columns of a call's end: return value, state after, what it read.
type EndColumns = (Option<String>, Option<String>, Option<String>);

fn end_columns(end: &CallEnd) -> Result<EndColumns, StorageError> {
    let ret = end
        .ret
        .as_ref()
        .map(|v| codec::to_json(v, "return value"))
        .transpose()?;
    let after = if end.after.is_empty() {
        None
    } else {
        Some(codec::to_json(&end.after, "state after the call")?)
    };
    let touches = if end.touches.is_empty() {
        None
    } else {
        Some(codec::to_json(&end.touches, "what the call read")?)
    };
    Ok((ret, after, touches))
}

fn panic_message(panic: &(dyn Any + Send)) -> &str {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s
    } else {
        "no message"
    }
}

/// The thread's body: takes the queued events every [`DRAIN_EVERY`] (or when nudged) and
/// commits them, until the writer is closed and the queue is empty.
fn write_events(mut writer: EventWriter, shared: &Shared) -> Result<(), StorageError> {
    loop {
        // Read `closed` before taking the queue: everything pushed before closing is then taken.
        let closed = shared.closed.load(Ordering::Acquire);
        let batch = {
            let mut queue = shared.lock();
            queue.nudged = false;
            std::mem::take(&mut queue.events)
        };
        let mut events = batch.into_iter().peekable();
        while events.peek().is_some() {
            let in_transaction = writer.begin();
            let mut written = 0;
            for event in events.by_ref().take(MAX_UNCOMMITTED_EVENTS) {
                writer.apply(event);
                written += 1;
            }
            writer.flush_pending();
            if in_transaction {
                writer.commit();
            }
            let mut queue = shared.lock();
            queue.uncommitted = queue.uncommitted.saturating_sub(written);
            drop(queue);
            shared.room.notify_all();
        }
        if closed {
            break;
        }
        std::thread::park_timeout(DRAIN_EVERY);
    }
    match writer.first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Applies events to the database, remembering the first failure and carrying on with the rest
/// (a failed statement does not undo the others in its transaction).
struct EventWriter {
    conn: Connection,
    run: RunId,
    path: PathBuf,
    waiting: Option<LockWait>,
    first_error: Option<StorageError>,
    /// The last call started, not inserted yet: when its end is the next event (a leaf call,
    /// the usual case of a hot function) the row is inserted whole, once, instead of inserted
    /// and then updated. Any other event inserts it first, so the order of statements (and
    /// every foreign key) is as if it had been inserted at once; so does the batch's commit.
    pending: Option<CallStart>,
    /// File reads stored so far (the next one's `seq`).
    file_reads: i64,
}

impl EventWriter {
    fn note(&mut self, error: StorageError) {
        self.first_error.get_or_insert(error);
    }

    /// Starts a transaction holding the write lock, waiting for another process's lock as long
    /// as it takes; on any other failure the batch is written in autocommit mode.
    fn begin(&mut self) -> bool {
        let conn = &self.conn;
        match wait_for_lock(&self.path, self.waiting.as_ref(), || {
            conn.execute_batch("BEGIN IMMEDIATE")
        }) {
            Ok(()) => true,
            Err(source) => {
                let context = format!("starting a transaction for run {}", self.run);
                self.note(StorageError::Sql { context, source });
                false
            }
        }
    }

    fn commit(&mut self) {
        // A COMMIT that finds the database busy leaves the transaction open: try again.
        let conn = &self.conn;
        let committed = wait_for_lock(&self.path, self.waiting.as_ref(), || {
            conn.execute_batch("COMMIT")
        });
        if let Err(source) = committed {
            let context = format!("committing events of run {}", self.run);
            self.note(StorageError::Sql { context, source });
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }

    fn apply(&mut self, event: TraceEvent) {
        let event = match event {
            TraceEvent::CallEnded(end)
                if self.pending.as_ref().is_some_and(|s| s.call == end.call) =>
            {
                if let Some(start) = self.pending.take() {
                    if let Err(e) = self.insert_call(&start, Some(&end)) {
                        self.note(e);
                    }
                }
                return;
            }
            TraceEvent::CallStarted(start) => {
                self.flush_pending();
                self.pending = Some(start);
                return;
            }
            other => other,
        };
        self.flush_pending();
        let result = match &event {
            TraceEvent::Functions(functions) => {
                functions.iter().try_for_each(|f| self.insert_function(f))
            }
            TraceEvent::CallStarted(start) => self.insert_call(start, None),
            TraceEvent::CallEnded(end) => self.end_call(end),
            TraceEvent::ObjectCreated(object) => self.insert_object(object),
            TraceEvent::ThreadStarted { thread } => self.thread_event(THREAD_STARTED, *thread),
            TraceEvent::ThreadExited { thread } => self.thread_event(THREAD_EXITED, *thread),
            TraceEvent::CodeLines(lines) => self.insert_code_lines(lines),
            TraceEvent::LineReached { line, thread } => self.line_reached(*line, *thread),
            TraceEvent::ThreadNamed { thread, name } => self.name_thread(*thread, name),
            TraceEvent::FileRead(read) => self.insert_file_read(read),
            TraceEvent::RunEnded(end) => self.end_run(end),
        };
        if let Err(e) = result {
            self.note(e);
        }
    }

    /// Inserts the call started last and not inserted yet, if any.
    fn flush_pending(&mut self) {
        if let Some(start) = self.pending.take() {
            if let Err(e) = self.insert_call(&start, None) {
                self.note(e);
            }
        }
    }

    fn sql_error(
        &self,
        what: impl FnOnce() -> String,
    ) -> impl FnOnce(rusqlite::Error) -> StorageError {
        let run = self.run;
        move |source| StorageError::Sql {
            context: format!("{} of run {run}", what()),
            source,
        }
    }

    fn insert_function(&self, f: &FunctionInfo) -> Result<(), StorageError> {
        let params_json = codec::to_json(&f.params, "function parameters")?;
        let error = self.sql_error(|| format!("storing function {} ({})", f.id, f.path));
        self.conn
            .prepare_cached(INSERT_FUNCTION)
            .and_then(|mut stmt| {
                stmt.execute(params![
                    self.run.0,
                    f.id.0,
                    f.path,
                    f.name,
                    f.linkage_name,
                    codec::language_to_str(f.language),
                    f.decl_file,
                    f.decl_line,
                    codec::u64_to_sql(f.low_pc),
                    params_json,
                    f.return_type,
                ])
            })
            .map_err(error)?;
        Ok(())
    }

    fn insert_object(&self, object: &ObjectInfo) -> Result<(), StorageError> {
        let error = self.sql_error(|| format!("storing object {}", object.id.0));
        self.conn
            .prepare_cached(INSERT_OBJECT)
            .and_then(|mut stmt| {
                stmt.execute(params![
                    self.run.0,
                    codec::u64_to_sql(object.id.0),
                    object.type_name,
                    codec::u64_to_sql(object.addr),
                    object.created_by.map(|c| codec::u64_to_sql(c.0)),
                ])
            })
            .map_err(error)?;
        Ok(())
    }

    /// A call's row: its start, and its end when the end came right after the start (one row
    /// with both, exactly the row this without `end` then [`end_call`](Self::end_call) leave).
    fn insert_call(&self, start: &CallStart, end: Option<&CallEnd>) -> Result<(), StorageError> {
        let (args, objects) = start_columns(start)?;
        let (ret, after, touches) = match end {
            Some(end) => end_columns(end)?,
            None => (None, None, None),
        };
        let (kind, message) = end.map_or((None, None), |e| {
            let (kind, message) = codec::outcome_to_columns(&e.outcome);
            (Some(kind), message)
        });
        let error = self.sql_error(|| format!("storing call {}", start.call));
        self.conn
            .prepare_cached(INSERT_CALL)
            .and_then(|mut stmt| {
                stmt.execute(params![
                    self.run.0,
                    codec::u64_to_sql(start.call.0),
                    start.parent.map(|p| codec::u64_to_sql(p.0)),
                    start.function.0,
                    start.thread,
                    start.depth,
                    args,
                    objects,
                    start.at_ns.map(codec::u64_to_sql),
                    kind,
                    message,
                    ret,
                    after,
                    touches,
                    end.and_then(|e| e.at_ns).map(codec::u64_to_sql),
                ])
            })
            .map_err(error)?;
        Ok(())
    }

    fn end_call(&self, end: &CallEnd) -> Result<(), StorageError> {
        let (ret, after, touches) = end_columns(end)?;
        let (kind, message) = codec::outcome_to_columns(&end.outcome);
        let error = self.sql_error(|| format!("storing the end of call {}", end.call));
        let updated = self
            .conn
            .prepare_cached(END_CALL)
            .and_then(|mut stmt| {
                stmt.execute(params![
                    self.run.0,
                    codec::u64_to_sql(end.call.0),
                    kind,
                    message,
                    ret,
                    after,
                    touches,
                    end.at_ns.map(codec::u64_to_sql),
                ])
            })
            .map_err(error)?;
        if updated == 0 {
            return Err(StorageError::InvalidEvent {
                run: self.run,
                detail: format!("call {} ended but never started", end.call),
            });
        }
        Ok(())
    }

    fn thread_event(&self, sql: &str, thread: i32) -> Result<(), StorageError> {
        let error = self.sql_error(|| format!("storing an event of thread {thread}"));
        self.conn
            .prepare_cached(sql)
            .and_then(|mut stmt| stmt.execute(params![self.run.0, thread]))
            .map_err(error)?;
        Ok(())
    }

    fn insert_code_lines(&self, lines: &[CodeLine]) -> Result<(), StorageError> {
        let error = self.sql_error(|| "storing the lines with code".to_owned());
        self.conn
            .prepare_cached(MARK_COVERAGE)
            .and_then(|mut stmt| stmt.execute(params![self.run.0]))
            .map_err(error)?;
        for line in lines {
            let error = self.sql_error(|| format!("storing line {}:{}", line.file, line.line));
            self.conn
                .prepare_cached(INSERT_CODE_LINE)
                .and_then(|mut stmt| {
                    stmt.execute(params![
                        self.run.0,
                        line.id.0,
                        line.file,
                        line.line,
                        line.function.0
                    ])
                })
                .map_err(error)?;
        }
        Ok(())
    }

    fn line_reached(&self, line: LineId, thread: i32) -> Result<(), StorageError> {
        let error =
            self.sql_error(|| format!("storing that thread {thread} reached line {}", line.0));
        self.conn
            .prepare_cached(INSERT_LINE_HIT)
            .and_then(|mut stmt| stmt.execute(params![self.run.0, line.0, thread]))
            .map_err(error)?;
        Ok(())
    }

    fn insert_file_read(&mut self, read: &FileRead) -> Result<(), StorageError> {
        let seq = self.file_reads;
        self.file_reads += 1;
        let (kind, len, contents, entries, detail) = codec::found_to_columns(&read.found)?;
        let error =
            self.sql_error(|| format!("storing a read of {} by call {}", read.path, read.call));
        self.conn
            .prepare_cached(INSERT_FILE_READ)
            .and_then(|mut stmt| {
                stmt.execute(params![
                    self.run.0,
                    seq,
                    codec::u64_to_sql(read.call.0),
                    read.op,
                    read.path,
                    kind,
                    len,
                    contents,
                    entries,
                    detail,
                ])
            })
            .map_err(error)?;
        Ok(())
    }

    fn name_thread(&self, thread: i32, name: &str) -> Result<(), StorageError> {
        let error = self.sql_error(|| format!("storing the name of thread {thread}"));
        self.conn
            .prepare_cached(NAME_THREAD)
            .and_then(|mut stmt| stmt.execute(params![self.run.0, thread, name]))
            .map_err(error)?;
        Ok(())
    }

    fn end_run(&self, end: &RunEnd) -> Result<(), StorageError> {
        let (kind, code, signal, signal_name, reason) = match &end.exit {
            ProcessExit::Exited { code } => ("exited", Some(*code), None, None, None),
            ProcessExit::Signaled { signal, name } => {
                ("signaled", None, Some(*signal), Some(name.as_str()), None)
            }
            ProcessExit::Lost { reason } => ("lost", None, None, None, Some(reason.as_str())),
        };
        let error = self.sql_error(|| "storing the end".to_owned());
        self.conn
            .prepare_cached(END_RUN)
            .and_then(|mut stmt| {
                stmt.execute(params![
                    self.run.0,
                    kind,
                    code,
                    signal,
                    signal_name,
                    reason,
                    end.ended_at_ms,
                ])
            })
            .map_err(error)?;
        Ok(())
    }
}
