//! The background writer: a thread that owns the SQLite connection and stores a run's events.
//!
//! The recorder calls [`RunWriter::record`](crate::TraceSink::record), which pushes the event
//! onto a queue behind an uncontended mutex: no system call, no thread wake-up per event. A
//! call's start or end is queued as its columns, its JSON written there and then by the
//! recorder's thread ([`Queued`]): the two threads share the work, and each frees what it
//! allocated. The thread takes the queue every [`DRAIN_EVERY`], or as soon as [`NUDGE_AT`]
//! events wait, and commits what it took in transactions of at most
//! [`EVENTS_PER_TRANSACTION`] events, half the bound: while it writes one half, the recorder
//! fills the other.
//!
//! Within a transaction, calls' rows wait in a [`CallRows`] buffer: a call's end that finds
//! its row there completes it (one row, never an `UPDATE`), and the rows go to SQLite before
//! the commit in multi-row `INSERT`s of up to [`ROWS_PER_INSERT`] rows. The rows and every
//! value in them are those one `INSERT` per start and one `UPDATE` per end would leave.
//!
//! **Bound:** at most [`MAX_UNCOMMITTED_EVENTS`] events are ever queued or in an open
//! transaction: when that many wait, `record` blocks (and with it the tracer and the traced
//! program) until the writer has committed them. So a `kill -9` of carve loses at most the
//! last 2,000 events (a call is a start and an end event), and another process holding the
//! database's write lock pauses the recording instead of growing memory or dropping events:
//! the writer waits for the lock as long as it takes, telling [`LockWait`] once per wait.

use std::any::Any;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{params, Connection, Statement, ToSql};

use crate::codec;
use crate::error::StorageError;
use crate::json;
use crate::model::{
    CallEnd, CallStart, CodeLine, FileRead, FunctionInfo, LineId, ObjectInfo, ProcessExit, RunEnd,
    RunId, TraceEvent, TraceSink,
};
use crate::repeats::Repeats;
use crate::schema::{wait_for_lock, LockWait};

mod counting;

/// The most events queued or written but not yet committed, and so the most one transaction
/// holds; `record` waits for the writer rather than go over it.
pub(crate) const MAX_UNCOMMITTED_EVENTS: usize = 2000;
/// The most events one transaction commits: half the bound, so that while the writer stores
/// one half the recorder can queue the other (double buffering). With the whole bound in one
/// transaction the two took turns: the recorder waited while the writer wrote, and the writer
/// while the recorder filled the queue again.
pub(crate) const EVENTS_PER_TRANSACTION: usize = MAX_UNCOMMITTED_EVENTS / 2;
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
    events: Vec<Queued>,
    /// The JSON columns of the queued calls' starts and ends, written by the recorder's
    /// thread as it queues them (see [`Queued`]).
    text: Vec<u8>,
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
/// The most call rows one `INSERT` stores; a buffer of n rows takes n / this statements of
/// that size, then one of each power of two in the rest (so at most 8 statement sizes;
/// 128 rows bind 1,920 parameters, far under SQLite's 32,766, and were ~5% faster than 64 in
/// alternating recordings of 200,000 calls).
pub(crate) const ROWS_PER_INSERT: usize = 128;
/// The columns of a call's row, in the order [`CallRow::bind`] binds them.
/// `OR IGNORE`: the rows break no constraint (`Stored` refuses what would, NOT NULL columns are
/// bound from values that are never null), and without a constraint that may abort the
/// statement SQLite keeps no statement journal for each multi-row insert (a sixth of the
/// writer's time). A row skipped all the same is caught by the count of rows stored.
const CALL_COLUMNS: &str = "INSERT OR IGNORE INTO calls \
    (run_id, id, parent_id, function_id, thread, depth, args, objects, started_ns, \
    outcome_kind, panic_message, ret, after_args, touches, ended_ns) VALUES ";
const PARAMS_PER_CALL: usize = 15;
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
    /// Calls are counted (`RunInfo::distinct_calls`): their starts and ends are digested as
    /// they are queued, on the recorder's thread, which the writer's outruns.
    digests: bool,
}

impl RunWriter {
    /// Starts the writer thread for `run`, which owns `conn` (on the file at `path`) from now on.
    pub(crate) fn spawn(
        conn: Connection,
        run: RunId,
        path: PathBuf,
        waiting: Option<LockWait>,
        distinct_calls: bool,
    ) -> Result<RunWriter, StorageError> {
        // The writer's rows meet the schema's CHECKs by construction (`outcome_kind` and
        // `language` come from `codec`'s fixed words, tested to read back; `exit_kind` is one
        // of `end_run`'s three): not checking them
        // again spares SQLite an ephemeral table per inserted call (its `IN (...)` list), a
        // quarter of the writer's time. Other connections (and readers) still check.
        conn.pragma_update(None, "ignore_check_constraints", true)
            .map_err(StorageError::sql(
                "skipping CHECK constraints on the writer",
            ))?;
        // No fsync while recording: in WAL mode a crash of carve (or a `kill -9`) still
        // loses nothing committed, only a crash of the machine could; the fsyncs of the
        // checkpoints (every 1000 pages) cost a seventh of the writer's time. The writer's last
        // act is a checkpoint with `synchronous = NORMAL`, which syncs the file: once `finish`
        // returns, the run is on disk.
        conn.pragma_update(None, "synchronous", "OFF")
            .map_err(StorageError::sql("setting synchronous = OFF on the writer"))?;
        // The calls' foreign keys (their function, their parent) are checked by the writer
        // itself (`Stored`), on what it stored: SQLite's checks were two index lookups per
        // inserted call, a tenth of the writer's time. Other connections still check.
        conn.pragma_update(None, "foreign_keys", false)
            .map_err(StorageError::sql(
                "checking foreign keys in the writer instead",
            ))?;
        // Room for every statement the writer runs, the multi-row inserts included.
        conn.set_prepared_statement_cache_capacity(32);
        let shared = Arc::new(Shared::default());
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("carve-writer-{run}"))
            .spawn(move || {
                let _stop = StopGuard(&theirs);
                let checkpoints = Checkpoints::start(&conn, &path, run);
                let writer = EventWriter {
                    conn,
                    run,
                    path,
                    waiting,
                    first_error: None,
                    rows: CallRows::default(),
                    file_reads: 0,
                    checkpoints,
                    commits: 0,
                    stored: Stored::default(),
                    repeats: distinct_calls.then(Repeats::default),
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
            digests: distinct_calls,
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
        let q = &mut *queue;
        let queued = Queued::of(event, &mut q.text, self.digests);
        q.events.push(queued);
        q.uncommitted += 1;
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
    // The queue's previous vector, emptied: handed back so the recorder's pushes reuse its
    // memory instead of growing a new one (reallocating and copying) for every batch.
    let (mut spare, mut spare_text) = (Vec::new(), Vec::new());
    loop {
        // Read `closed` before taking the queue: everything pushed before closing is then taken.
        let closed = shared.closed.load(Ordering::Acquire);
        let (mut batch, mut text) = {
            let mut queue = shared.lock();
            queue.nudged = false;
            (
                std::mem::replace(&mut queue.events, std::mem::take(&mut spare)),
                std::mem::replace(&mut queue.text, std::mem::take(&mut spare_text)),
            )
        };
        let mut events = batch.drain(..).peekable();
        while events.peek().is_some() {
            let in_transaction = writer.begin();
            let mut written = 0;
            for event in events.by_ref().take(EVENTS_PER_TRANSACTION) {
                writer.apply(event, &text);
                written += 1;
            }
            // Every waiting row goes now: their JSON lies in this batch's text.
            writer.flush_rows(&text);
            writer.write_repeats();
            if in_transaction {
                writer.commit();
            }
            writer.committed();
            let mut queue = shared.lock();
            queue.uncommitted = queue.uncommitted.saturating_sub(written);
            drop(queue);
            shared.room.notify_all();
        }
        drop(events);
        text.clear();
        (spare, spare_text) = (batch, text);
        if closed {
            break;
        }
        if shared.lock().events.len() >= NUDGE_AT {
            // The recorder queued enough while this batch was written: go on at once.
            continue;
        }
        std::thread::park_timeout(DRAIN_EVERY);
    }
    if let Some(checkpoints) = writer.checkpoints.take() {
        checkpoints.stop();
    }
    writer.sync();
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
    /// The calls of the open transaction not inserted yet (see [`CallRows`]).
    rows: CallRows,
    /// File reads stored so far (the next one's `seq`).
    file_reads: i64,
    /// The thread copying the log into the file, if it could start (else SQLite's own
    /// checkpoints on this connection do it).
    checkpoints: Option<Checkpoints>,
    /// Transactions committed so far.
    commits: u64,
    /// The functions and calls of this run stored so far, for the calls' keys.
    stored: Stored,
    /// Equivalent calls counted instead of stored ([`RunInfo::distinct_calls`]).
    repeats: Option<Repeats>,
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

    /// Makes what was committed durable (see [`RunWriter::spawn`]): a checkpoint with
    /// `synchronous = NORMAL` syncs the log, copies it into the file and syncs that. (Pages a
    /// reader's snapshot still needs are copied, and synced, by a later checkpoint.)
    fn sync(&mut self) {
        let synced = self
            .conn
            .execute_batch("PRAGMA synchronous = NORMAL")
            .and_then(|()| {
                self.conn
                    .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
            });
        if let Err(source) = synced {
            let context = format!("syncing run {} to disk", self.run);
            self.note(StorageError::Sql { context, source });
        }
    }

    /// After each transaction: every [`COMMITS_PER_CHECKPOINT`] the checkpoint thread is
    /// woken to copy the log into the file.
    fn committed(&mut self) {
        self.commits += 1;
        let Some(checkpoints) = &self.checkpoints else {
            return;
        };
        if !self.commits.is_multiple_of(COMMITS_PER_CHECKPOINT) {
            return;
        }
        if (self.commits / COMMITS_PER_CHECKPOINT).is_multiple_of(CHECKPOINTS_PER_RESTART) {
            // This one on the writer's thread, after the thread's last one ended: then the
            // whole log is in the file when the next transaction starts, which writes the log
            // from its beginning again.
            let _idle = checkpoints.idle();
            let _ = self
                .conn
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        } else {
            checkpoints.wake();
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

    /// Applies one queued event; `text` holds the JSON its columns point into.
    fn apply(&mut self, event: Queued, text: &[u8]) {
        let event = match event {
            Queued::Started(start) => {
                if !self.rows.follows(start.call) {
                    // Out of call order (no recorder sends that): what waits goes first.
                    self.flush_rows(text);
                }
                if let Some(repeats) = &mut self.repeats {
                    repeats.started(
                        start.call.0,
                        start.parent.map(|p| p.0),
                        start.thread,
                        start.function.0,
                        start.digest(text),
                    );
                }
                self.rows.rows.push(CallRow { start, end: None });
                return;
            }
            Queued::Ended(end) => {
                if self.counted_as_repeat(&end, text) {
                    return;
                }
                if let Some(end) = self.rows.end(end) {
                    if let Err(e) = self.end_call(&end, text) {
                        self.note(e);
                    }
                }
                return;
            }
            Queued::Other(event) => event,
        };
        let result = match event {
            // Queued as their columns (`Queued::of`), never whole.
            TraceEvent::CallStarted(_) | TraceEvent::CallEnded(_) => Ok(()),
            TraceEvent::Functions(functions) => {
                // Calls waiting may name these functions: they keep being checked against the
                // functions stored before them.
                self.flush_rows(text);
                if let Some(repeats) = &mut self.repeats {
                    for f in &functions {
                        repeats.function(f.id.0, &f.path);
                    }
                }
                functions.iter().try_for_each(|f| self.insert_function(f))
            }
            TraceEvent::ObjectCreated(object) => {
                if let (Some(repeats), Some(by)) = (&mut self.repeats, object.created_by) {
                    repeats.made_object(by.0);
                }
                self.insert_object(&object)
            }
            TraceEvent::ThreadStarted { thread } => self.thread_event(THREAD_STARTED, thread),
            TraceEvent::ThreadExited { thread } => self.thread_event(THREAD_EXITED, thread),
            TraceEvent::CodeLines(lines) => self.insert_code_lines(&lines),
            TraceEvent::LineReached { line, thread } => self.line_reached(line, thread),
            TraceEvent::ThreadNamed { thread, name } => self.name_thread(thread, &name),
            TraceEvent::FileRead(read) => self.insert_file_read(&read),
            TraceEvent::RunEnded(end) => {
                self.flush_rows(text);
                self.end_run(&end)
            }
        };
        if let Err(e) = result {
            self.note(e);
        }
    }

    /// Inserts the calls waiting in [`rows`](Self::rows): whole statements of
    /// [`ROWS_PER_INSERT`] rows, then smaller ones for the rest. What the schema's keys would
    /// refuse is left out first (`Stored`); a statement that fails all the same (a full disk)
    /// stores nothing, so its rows are then inserted one by one: exactly the rows one `INSERT`
    /// each would have stored, each failure noted.
    fn flush_rows(&mut self, text: &[u8]) {
        let mut rows = std::mem::take(&mut self.rows);
        // What the schema's keys would refuse is noted and left out (see `Stored`).
        rows.rows
            .retain(|row| match self.stored.refusal(&row.start) {
                None => true,
                Some(detail) => {
                    let run = self.run;
                    self.note(StorageError::InvalidEvent { run, detail });
                    false
                }
            });
        let mut rest = &rows.rows[..];
        while !rest.is_empty() {
            let n = if rest.len() >= ROWS_PER_INSERT {
                ROWS_PER_INSERT
            } else {
                1 << rest.len().ilog2()
            };
            let (now, later) = rest.split_at(n);
            rest = later;
            if n > 1 {
                // On failure it stored nothing (a statement is all or nothing): one by one.
                if let Ok(stored) = self.insert_rows(text, now) {
                    self.count_ignored(now, stored);
                    continue;
                }
            }
            for row in now {
                match self.insert_rows(text, std::slice::from_ref(row)) {
                    Ok(stored) => self.count_ignored(std::slice::from_ref(row), stored),
                    Err(source) => {
                        let context =
                            format!("storing call {} of run {}", row.start.call, self.run);
                        self.note(StorageError::Sql { context, source });
                    }
                }
            }
        }
        self.rows = rows.cleared();
    }

    /// One `INSERT` of `rows` (whose JSON lies in `text`); how many rows it stored.
    fn insert_rows(&self, text: &[u8], rows: &[CallRow]) -> rusqlite::Result<usize> {
        let mut stmt = self.conn.prepare_cached(insert_calls_sql(rows.len()))?;
        for (i, row) in rows.iter().enumerate() {
            row.bind(text, &mut stmt, i * PARAMS_PER_CALL, self.run)?;
        }
        stmt.raw_execute()
    }

    /// `OR IGNORE` skipped rows of `rows` (`stored` of them were stored): nothing `Stored`
    /// lets through can break a constraint, so that is a bug, said rather than lost quietly.
    fn count_ignored(&mut self, rows: &[CallRow], stored: usize) {
        if stored < rows.len() {
            let (first, last) = (rows[0].start.call, rows[rows.len() - 1].start.call);
            let detail = format!(
                "{} of the calls {first} to {last} broke a constraint of the calls table and \
                 were not stored",
                rows.len() - stored
            );
            let run = self.run;
            self.note(StorageError::InvalidEvent { run, detail });
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

    fn insert_function(&mut self, f: &FunctionInfo) -> Result<(), StorageError> {
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
        self.stored.functions.insert(f.id.0);
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

    /// The end of a call whose row is stored already: one `UPDATE`.
    fn end_call(&self, end: &EndColumns, text: &[u8]) -> Result<(), StorageError> {
        let json = |range: &Option<Range<usize>>| range.clone().map(|r| Text(&text[r]));
        let error = self.sql_error(|| format!("storing the end of call {}", end.call));
        let updated = self
            .conn
            .prepare_cached(END_CALL)
            .and_then(|mut stmt| {
                stmt.execute(params![
                    self.run.0,
                    codec::u64_to_sql(end.call.0),
                    end.kind,
                    end.panic_message,
                    json(&end.ret),
                    json(&end.after),
                    json(&end.touches),
                    end.ended_ns.map(codec::u64_to_sql),
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

/// The keys a call's row refers to, as the writer stored them: the run's functions, and the
/// ids of its calls (as ranges: ids grow, so this is nearly always one range). The schema's
/// foreign keys and its primary key, checked here instead of by SQLite on the writer's
/// connection; a call refused is noted and not stored, as a failed constraint left it out
/// before. A row that passes is counted stored before its `INSERT` runs.
#[derive(Debug, Default)]
struct Stored {
    functions: std::collections::HashSet<u32>,
    /// Disjoint, sorted, not adjacent: `start..end` ranges of call ids.
    calls: Vec<Range<u64>>,
}

impl Stored {
    /// Why `start`'s row would break a key of the calls table, or `None` (and it is now
    /// stored).
    fn refusal(&mut self, start: &StartColumns) -> Option<String> {
        if self.has_call(start.call.0) {
            return Some(format!("call {} started twice", start.call));
        }
        if !self.functions.contains(&start.function.0) {
            return Some(format!(
                "call {} names function {}, which the run does not have",
                start.call, start.function
            ));
        }
        if let Some(parent) = start.parent {
            if !self.has_call(parent.0) {
                return Some(format!(
                    "call {} names call {} as its parent, which the run does not have",
                    start.call, parent
                ));
            }
        }
        self.add_call(start.call.0);
        None
    }

    fn has_call(&self, id: u64) -> bool {
        let at = self.calls.partition_point(|r| r.end <= id);
        self.calls.get(at).is_some_and(|r| r.contains(&id))
    }

    fn add_call(&mut self, id: u64) {
        let after = id.saturating_add(1);
        let at = self.calls.partition_point(|r| r.end < id);
        match self.calls.get_mut(at) {
            Some(r) if r.contains(&id) => {}
            Some(r) if r.end == id => {
                r.end = after;
                if self
                    .calls
                    .get(at + 1)
                    .is_some_and(|next| next.start == after)
                {
                    let next = self.calls.remove(at + 1);
                    self.calls[at].end = next.end;
                }
            }
            Some(r) if r.start == after => r.start = id,
            _ => self.calls.insert(at, id..after),
        }
    }
}

/// How many of the writer's transactions (of up to [`EVENTS_PER_TRANSACTION`] events, some
/// 50 pages of log each for leaf calls) go between two checkpoints: the log stays near
/// SQLite's own threshold of 1000 pages.
const COMMITS_PER_CHECKPOINT: u64 = 16;
/// Every this many checkpoints, the writer's thread makes the checkpoint itself, so that the
/// log restarts (see [`Checkpoints`]).
const CHECKPOINTS_PER_RESTART: u64 = 4;

/// A thread of the writer's with a connection of its own that copies the log into the
/// database file (SQLite's checkpoint) whenever the writer wakes it, so that the writer's
/// commits never stop to do it: the checkpoints were a sixth of the writer's time, and on two
/// CPUs they now run beside it. A passive checkpoint takes no lock the writer waits for.
///
/// SQLite writes the log from its beginning again only when a transaction starts with every
/// frame of the log copied into the file, which the thread's checkpoints, with the writer
/// appending meanwhile, never leave behind: the log grew as large as the trace, each frame
/// appended to the file (ext4 allocating its blocks) rather than written over the frames of a
/// log already copied. So every [`CHECKPOINTS_PER_RESTART`]-th checkpoint is the writer's
/// own, made between two transactions once the thread is idle ([`Checkpoints::idle`]).
struct Checkpoints {
    thread: JoinHandle<()>,
    stop: Arc<AtomicBool>,
    /// Held by the thread while it checkpoints.
    busy: Arc<Mutex<()>>,
}

impl Checkpoints {
    /// Starts the thread and turns `writer`'s own checkpoints off; `None` (SQLite's
    /// checkpoints stay on) when the second connection cannot be opened.
    fn start(writer: &Connection, path: &std::path::Path, run: RunId) -> Option<Checkpoints> {
        let conn = Connection::open(path).ok()?;
        // Its fsyncs wait for the writer's last act (`EventWriter::sync`).
        conn.pragma_update(None, "synchronous", "OFF").ok()?;
        writer.pragma_update(None, "wal_autocheckpoint", 0).ok()?;
        let stop = Arc::new(AtomicBool::new(false));
        let busy = Arc::new(Mutex::new(()));
        let (theirs, their_busy) = (stop.clone(), busy.clone());
        let thread = std::thread::Builder::new()
            .name(format!("carve-ckpt-{run}"))
            .spawn(move || {
                while !theirs.load(Ordering::Acquire) {
                    std::thread::park();
                    let _busy = their_busy.lock().unwrap_or_else(PoisonError::into_inner);
                    // A busy or failed checkpoint copies less now and more next time;
                    // the writer's final one copies and syncs whatever is left.
                    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                }
            });
        match thread {
            Ok(thread) => Some(Checkpoints { thread, stop, busy }),
            Err(_) => {
                let _ = writer.pragma_update(None, "wal_autocheckpoint", 1000);
                None
            }
        }
    }

    fn wake(&self) {
        self.thread.thread().unpark();
    }

    /// Waits for the thread's checkpoint, if one is under way, and keeps it from starting
    /// another while the guard lives.
    fn idle(&self) -> MutexGuard<'_, ()> {
        self.busy.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Release);
        self.wake();
        let _ = self.thread.join();
    }
}

/// The `INSERT` of `rows` call rows (a power of two up to [`ROWS_PER_INSERT`]), built once.
fn insert_calls_sql(rows: usize) -> &'static str {
    static SQL: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let all = SQL.get_or_init(|| {
        (0..=ROWS_PER_INSERT.ilog2())
            .map(|power| {
                let one = format!("({})", vec!["?"; PARAMS_PER_CALL].join(", "));
                let values = vec![one; 1 << power].join(", ");
                format!("{CALL_COLUMNS}{values}")
            })
            .collect()
    });
    debug_assert!(rows.is_power_of_two() && rows <= ROWS_PER_INSERT);
    &all[rows.ilog2() as usize]
}

/// An event as the writer thread takes it. A call's start and end (nearly every event) are
/// turned into their columns by the recorder's thread as it queues them, their JSON written
/// into the queue's text: the writer only binds and inserts, and the event's values are
/// dropped on the thread that made them (freeing them on the writer's thread made the two
/// threads' allocators contend).
#[derive(Debug)]
enum Queued {
    Started(StartColumns),
    Ended(EndColumns),
    Other(TraceEvent),
}

impl Queued {
    /// `event` as the writer takes it, its JSON appended to `text`, a call's start and end
    /// digested when `digests` (see `writer/counting.rs`).
    fn of(event: TraceEvent, text: &mut Vec<u8>, digests: bool) -> Queued {
        match event {
            TraceEvent::CallStarted(start) => {
                let mut columns = StartColumns::of(&start, text);
                if digests {
                    columns.digest = Some(columns.digest_of(text));
                }
                Queued::Started(columns)
            }
            TraceEvent::CallEnded(end) => {
                let mut columns = EndColumns::of(&end, text);
                if digests {
                    columns.digest = Some(columns.digest_of(text));
                }
                Queued::Ended(columns)
            }
            other => Queued::Other(other),
        }
    }
}

/// The columns of a call's start; the JSON ones as ranges of the batch's text.
#[derive(Debug)]
struct StartColumns {
    call: crate::model::CallId,
    parent: Option<crate::model::CallId>,
    function: crate::model::FunctionId,
    thread: i32,
    depth: u32,
    started_ns: Option<u64>,
    args: Range<usize>,
    objects: Option<Range<usize>>,
    /// The digest of `args` and `objects`, when calls are counted.
    digest: Option<u128>,
}

impl StartColumns {
    fn of(start: &CallStart, text: &mut Vec<u8>) -> StartColumns {
        let args = json_of(text, |t| json::args(t, &start.args));
        let objects = (!start.objects.is_empty())
            .then(|| json_of(text, |t| json::objects(t, &start.objects)));
        StartColumns {
            call: start.call,
            parent: start.parent,
            function: start.function,
            thread: start.thread,
            depth: start.depth,
            started_ns: start.at_ns,
            args,
            objects,
            digest: None,
        }
    }
}

/// Appends what `write` writes to `text` and returns where it lies.
fn json_of(text: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) -> Range<usize> {
    let at = text.len();
    write(text);
    at..text.len()
}

/// The columns of a call's end; the JSON ones as ranges of the batch's text.
#[derive(Debug)]
struct EndColumns {
    call: crate::model::CallId,
    kind: &'static str,
    panic_message: Option<String>,
    ret: Option<Range<usize>>,
    after: Option<Range<usize>>,
    touches: Option<Range<usize>>,
    ended_ns: Option<u64>,
    /// The digest of what the equivalence compares of the end, when calls are counted.
    digest: Option<u128>,
}

impl EndColumns {
    fn of(end: &CallEnd, text: &mut Vec<u8>) -> EndColumns {
        let ret = end
            .ret
            .as_ref()
            .map(|v| json_of(text, |t| json::value(t, v)));
        let after = (!end.after.is_empty()).then(|| json_of(text, |t| json::args(t, &end.after)));
        let touches =
            (!end.touches.is_empty()).then(|| json_of(text, |t| json::strings(t, &end.touches)));
        let (kind, panic_message) = codec::outcome_to_columns(&end.outcome);
        EndColumns {
            call: end.call,
            kind,
            panic_message: panic_message.map(str::to_owned),
            ret,
            after,
            touches,
            ended_ns: end.at_ns,
            digest: None,
        }
    }
}

/// The rows of calls started in the open transaction and not inserted yet, in call order. A
/// call's end completes its row here when the row still waits; the rows are inserted before
/// the commit (and before an event their foreign keys depend on), so nothing is held past the
/// writer's bound, nor past the batch whose text holds their JSON.
#[derive(Debug, Default)]
struct CallRows {
    rows: Vec<CallRow>,
}

/// A call's row: its start's columns, and its end's once it ended.
#[derive(Debug)]
struct CallRow {
    start: StartColumns,
    end: Option<EndColumns>,
}

/// JSON text bound as SQLite TEXT (as a `String` would be) without copying it out first.
struct Text<'a>(&'a [u8]);

impl ToSql for Text<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(ValueRef::Text(self.0)))
    }
}

impl CallRows {
    /// Whether a call started now comes after every row waiting (call ids grow).
    fn follows(&self, call: crate::model::CallId) -> bool {
        self.rows
            .last()
            .is_none_or(|last| last.start.call.0 < call.0)
    }

    /// Completes the waiting row of `end`'s call (a second end replaces the first, as a
    /// second `UPDATE` would); gives `end` back when its row does not wait here (inserted
    /// already, or never started).
    fn end(&mut self, end: EndColumns) -> Option<EndColumns> {
        match self
            .rows
            .binary_search_by_key(&end.call.0, |row| row.start.call.0)
        {
            Ok(at) => {
                self.rows[at].end = Some(end);
                None
            }
            Err(_) => Some(end),
        }
    }

    /// Empty, keeping the buffer's memory for the next transaction.
    fn cleared(mut self) -> CallRows {
        self.rows.clear();
        self
    }
}

impl CallRow {
    /// Binds this row's columns (JSON from `text`) to parameters `base + 1 ..= base + 15`.
    fn bind(
        &self,
        text: &[u8],
        stmt: &mut Statement<'_>,
        base: usize,
        run: RunId,
    ) -> rusqlite::Result<()> {
        let json = |range: &Option<Range<usize>>| range.clone().map(|r| Text(&text[r]));
        let (start, end) = (&self.start, self.end.as_ref());
        stmt.raw_bind_parameter(base + 1, run.0)?;
        stmt.raw_bind_parameter(base + 2, codec::u64_to_sql(start.call.0))?;
        stmt.raw_bind_parameter(base + 3, start.parent.map(|p| codec::u64_to_sql(p.0)))?;
        stmt.raw_bind_parameter(base + 4, start.function.0)?;
        stmt.raw_bind_parameter(base + 5, start.thread)?;
        stmt.raw_bind_parameter(base + 6, start.depth)?;
        stmt.raw_bind_parameter(base + 7, Text(&text[start.args.clone()]))?;
        stmt.raw_bind_parameter(base + 8, json(&start.objects))?;
        stmt.raw_bind_parameter(base + 9, start.started_ns.map(codec::u64_to_sql))?;
        stmt.raw_bind_parameter(base + 10, end.map(|e| e.kind))?;
        stmt.raw_bind_parameter(base + 11, end.and_then(|e| e.panic_message.as_deref()))?;
        stmt.raw_bind_parameter(base + 12, end.and_then(|e| json(&e.ret)))?;
        stmt.raw_bind_parameter(base + 13, end.and_then(|e| json(&e.after)))?;
        stmt.raw_bind_parameter(base + 14, end.and_then(|e| json(&e.touches)))?;
        stmt.raw_bind_parameter(
            base + 15,
            end.and_then(|e| e.ended_ns).map(codec::u64_to_sql),
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CallId, FunctionId};

    fn start(call: u64, parent: Option<u64>, function: u32) -> StartColumns {
        StartColumns {
            call: CallId(call),
            parent: parent.map(CallId),
            function: FunctionId(function),
            thread: 1,
            depth: 0,
            started_ns: None,
            args: 0..0,
            objects: None,
            digest: None,
        }
    }

    #[test]
    fn stored_call_ids_are_the_ids_added_in_any_order() {
        let mut stored = Stored::default();
        let mut model = std::collections::BTreeSet::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let id = x % 700;
            stored.add_call(id);
            model.insert(id);
            assert!(stored.calls.windows(2).all(|w| w[0].end < w[1].start));
        }
        for id in 0..800 {
            assert_eq!(stored.has_call(id), model.contains(&id), "{id}");
        }
    }

    #[test]
    fn a_call_naming_a_function_or_a_parent_not_stored_is_refused_and_not_counted() {
        let mut stored = Stored::default();
        stored.functions.insert(0);
        assert!(stored.refusal(&start(1, None, 0)).is_none());
        assert!(stored.refusal(&start(2, Some(1), 0)).is_none());
        let bad_function = stored.refusal(&start(3, Some(2), 9)).unwrap();
        assert!(bad_function.contains("call 3") && bad_function.contains("function 9"));
        let orphan = stored.refusal(&start(4, Some(3), 0)).unwrap();
        assert!(
            orphan.contains("call 4") && orphan.contains("call 3"),
            "{orphan}"
        );
        assert!(stored.has_call(2) && !stored.has_call(3) && !stored.has_call(4));
        let twice = stored.refusal(&start(2, Some(1), 0)).unwrap();
        assert!(twice.contains("call 2 started twice"), "{twice}");
    }
}
