//! The trace database handle: opening, reading runs and traces back, and starting a run's writer.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, Row};
use serde::de::DeserializeOwned;

use crate::codec;
use crate::error::StorageError;
use crate::model::{
    Arg, ArgObject, Call, CallId, Coverage, FileRead, FunctionId, FunctionInfo, FunctionLines,
    ObjectId, ObjectInfo, ParamInfo, ProcessExit, Run, RunEnd, RunId, RunInfo, ThreadLines, Trace,
    Value,
};
use crate::repeats::IdRun;
use crate::schema;

pub use crate::schema::{LockWait, SCHEMA_VERSION};
pub use crate::writer::RunWriter;

/// An open trace database (a SQLite file in WAL mode at [`SCHEMA_VERSION`]).
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// Opened with [`Store::create`] (for recording), not [`Store::open`] (read-only).
    writable: bool,
    /// Told when recording waits for another process's write lock.
    waiting: Option<LockWait>,
    /// The temporary copy `conn` reads when the trace had an older schema; declared after
    /// `conn` so the connection closes before the file is deleted.
    migrated_copy: Option<tempfile::TempPath>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("writable", &self.writable)
            .finish_non_exhaustive()
    }
}

const RUN_COLUMNS: &str = "id, program, args, cwd, pid, started_at_ms, filters, excludes, \
     carve_version, exit_kind, exit_code, exit_signal, exit_signal_name, exit_reason, ended_at_ms, \
     crates, distinct_calls, features";

impl Store {
    /// Opens the trace database at `path` for recording, creating it when missing, and
    /// migrates it to the current schema. Refuses files that are not carve traces or lack
    /// tables or columns. Waits as long as it takes for another process's write lock.
    pub fn create(path: &Path) -> Result<Store, StorageError> {
        Store::create_waiting(path, None)
    }

    /// [`Store::create`], telling `waiting` (once per wait) when another process holds the
    /// write lock and carve waits for it, here or in the run's writer.
    pub fn create_waiting(path: &Path, waiting: Option<LockWait>) -> Result<Store, StorageError> {
        let conn = schema::open_for_recording(path, waiting.as_ref())?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            writable: true,
            waiting,
            migrated_copy: None,
        })
    }

    /// Opens an existing trace database read-only: the file's bytes are never changed and no
    /// file is created beside it, so a read-only file in a read-only directory reads fine. An
    /// older schema is migrated in a temporary copy on disk (see [`Store::migrated_copy`]),
    /// deleted when the store is dropped; a newer one, an empty file or a damaged trace is
    /// refused.
    pub fn open(path: &Path) -> Result<Store, StorageError> {
        let (conn, migrated_copy) = schema::open_for_reading(path)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            writable: false,
            waiting: None,
            migrated_copy,
        })
    }

    /// The temporary file this store reads instead of its trace, when the trace had an older
    /// schema and was migrated in a copy; `None` when it reads the trace itself.
    pub fn migrated_copy(&self) -> Option<&Path> {
        self.migrated_copy.as_deref()
    }

    /// Checks, changing nothing, that `carve record` can record into `path` (missing, empty,
    /// or a writable trace with all its tables), so a bad file is refused before the program
    /// runs.
    pub fn check_for_recording(path: &Path) -> Result<(), StorageError> {
        schema::check_for_recording(path)
    }

    /// The file this store reads and writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every recorded run, oldest first.
    pub fn runs(&self) -> Result<Vec<Run>, StorageError> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY id"))
            .map_err(StorageError::sql("listing runs"))?;
        let raws = stmt
            .query_map([], RawRun::from_row)
            .map_err(StorageError::sql("listing runs"))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(StorageError::sql("listing runs"))?;
        raws.into_iter().map(RawRun::decode).collect()
    }

    /// One run, without its calls.
    pub fn run(&self, run: RunId) -> Result<Run, StorageError> {
        let raw = self
            .conn
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"),
                [run.0],
                RawRun::from_row,
            )
            .optional()
            .map_err(|source| StorageError::Sql {
                context: format!("reading run {run}"),
                source,
            })?
            .ok_or(StorageError::RunNotFound(run))?;
        raw.decode()
    }

    /// The most recently started run, if any.
    pub fn latest_run(&self) -> Result<Option<RunId>, StorageError> {
        self.conn
            .query_row("SELECT max(id) FROM runs", [], |row| {
                row.get::<_, Option<i64>>(0)
            })
            .map(|id| id.map(RunId))
            .map_err(StorageError::sql("finding the latest run"))
    }

    /// A run with all its functions (by id) and calls (in start order).
    ///
    /// A call the recorder never saw end reads as [`crate::Outcome::Unfinished`]; a run whose
    /// end was never written has `end: None`.
    pub fn load_trace(&self, run: RunId) -> Result<Trace, StorageError> {
        let run_row = self.run(run)?;
        let functions = self.functions(run)?;
        let mut calls = Vec::new();
        self.each_call(run, CallRange::default(), |call| {
            calls.push(call);
            Ok::<(), StorageError>(())
        })?;
        let objects = self.objects(run)?;
        let file_reads = self.file_reads(run)?;
        Ok(Trace {
            run: run_row,
            functions,
            calls,
            objects,
            file_reads,
        })
    }

    /// The file-system reads of a run's calls, in the order they happened (none before schema
    /// 8).
    pub fn file_reads(&self, run: RunId) -> Result<Vec<FileRead>, StorageError> {
        self.file_reads_of(run, |_| true)
    }

    /// [`Store::file_reads`] of the calls `wanted` keeps only, read one row at a time: a
    /// reader holding some calls of a long run holds their reads, not every file it read.
    pub fn file_reads_of(
        &self,
        run: RunId,
        wanted: impl Fn(CallId) -> bool,
    ) -> Result<Vec<FileRead>, StorageError> {
        let context = || format!("reading the file reads of run {run}");
        let sql_error = |source| StorageError::Sql {
            context: context(),
            source,
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT call_id, op, path, kind, len, contents, entries, detail \
                 FROM file_reads WHERE run_id = ?1 ORDER BY seq",
            )
            .map_err(sql_error)?;
        let mut rows = stmt.query([run.0]).map_err(sql_error)?;
        let mut reads = Vec::new();
        while let Some(row) = rows.next().map_err(sql_error)? {
            let call = CallId(codec::u64_from_sql(row.get(0).map_err(sql_error)?));
            if !wanted(call) {
                continue;
            }
            let columns = (|| {
                Ok::<_, rusqlite::Error>((
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                    row.get(4)?,
                    row.get(5)?,
                    row.get(6)?,
                    row.get(7)?,
                ))
            })();
            let (op, path, kind, len, contents, entries, detail) = columns.map_err(sql_error)?;
            let found = codec::found_from_columns(&kind, len, contents, entries, detail).map_err(
                |what| StorageError::InvalidRow {
                    what: format!("{what} in the read of {path} by call {call} in run {run}"),
                },
            )?;
            reads.push(FileRead {
                call,
                op,
                path,
                found,
            });
        }
        Ok(reads)
    }

    /// The line coverage of a run recorded with `--coverage`: every line with code in the
    /// selected functions and whether it was reached, per function and per thread.
    /// [`StorageError::NoCoverage`] when the run was recorded without `--coverage`.
    pub fn coverage(&self, run: RunId) -> Result<Coverage, StorageError> {
        let context = || format!("reading the line coverage of run {run}");
        let sql = |source| StorageError::Sql {
            context: context(),
            source,
        };
        let recorded: Option<i64> = self
            .conn
            .query_row("SELECT coverage FROM runs WHERE id = ?1", [run.0], |r| {
                r.get(0)
            })
            .optional()
            .map_err(sql)?;
        match recorded {
            None => return Err(StorageError::RunNotFound(run)),
            Some(0) => {
                return Err(StorageError::NoCoverage {
                    path: self.path.clone(),
                    run,
                })
            }
            Some(_) => {}
        }
        // id -> (file, line, function)
        let mut code: BTreeMap<u32, (String, u32, FunctionId)> = BTreeMap::new();
        {
            let mut stmt = self
                .conn
                .prepare_cached(
                    "SELECT id, file, line, function_id FROM code_lines WHERE run_id = ?1",
                )
                .map_err(sql)?;
            let mut rows = stmt.query([run.0]).map_err(sql)?;
            while let Some(row) = rows.next().map_err(sql)? {
                let id: u32 = row.get(0).map_err(sql)?;
                let file: String = row.get(1).map_err(sql)?;
                let line: u32 = row.get(2).map_err(sql)?;
                let function: u32 = row.get(3).map_err(sql)?;
                code.insert(id, (file, line, FunctionId(function)));
            }
        }
        let mut coverage = Coverage::default();
        for (file, line, _) in code.values() {
            coverage
                .lines
                .entry(file.clone())
                .or_default()
                .insert(*line, false);
        }
        let mut reached_ids = std::collections::BTreeSet::new();
        let mut threads: BTreeMap<i32, ThreadLines> = BTreeMap::new();
        {
            let mut stmt = self
                .conn
                .prepare_cached(
                    "SELECT h.line_id, h.thread, t.name FROM line_hits h \
                     LEFT JOIN threads t ON t.run_id = h.run_id AND t.tid = h.thread \
                     WHERE h.run_id = ?1 ORDER BY h.thread, h.line_id",
                )
                .map_err(sql)?;
            let mut rows = stmt.query([run.0]).map_err(sql)?;
            while let Some(row) = rows.next().map_err(sql)? {
                let id: u32 = row.get(0).map_err(sql)?;
                let thread: i32 = row.get(1).map_err(sql)?;
                let name: Option<String> = row.get(2).map_err(sql)?;
                let Some((file, line, function)) = code.get(&id) else {
                    return Err(StorageError::InvalidRow {
                        what: format!("line hit of run {run} naming no line with code ({id})"),
                    });
                };
                reached_ids.insert(id);
                if let Some(reached) = coverage.lines.get_mut(file).and_then(|l| l.get_mut(line)) {
                    *reached = true;
                }
                let t = threads.entry(thread).or_insert_with(|| ThreadLines {
                    thread,
                    name,
                    lines: BTreeMap::new(),
                    functions: Default::default(),
                });
                t.lines.entry(file.clone()).or_default().insert(*line);
                t.functions.insert(*function);
            }
        }
        coverage.threads = threads.into_values().collect();
        // function -> its (file, line, reached)
        let mut by_function: BTreeMap<FunctionId, Vec<(String, u32, bool)>> = BTreeMap::new();
        for (id, (file, line, function)) in &code {
            by_function.entry(*function).or_default().push((
                file.clone(),
                *line,
                reached_ids.contains(id),
            ));
        }
        for f in self.functions(run)? {
            let Some(mut lines) = by_function.remove(&f.id) else {
                continue;
            };
            lines.sort();
            let reached_lines: Vec<(String, u32)> = lines
                .iter()
                .filter(|(_, _, r)| *r)
                .map(|(file, line, _)| (file.clone(), *line))
                .collect();
            coverage.functions.push(FunctionLines {
                id: f.id,
                path: f.path,
                decl_file: f.decl_file,
                decl_line: f.decl_line,
                lines: lines
                    .into_iter()
                    .map(|(file, line, _)| (file, line))
                    .collect(),
                reached: reached_lines.len(),
                reached_lines,
            });
        }
        Ok(coverage)
    }

    /// The objects of a run, in the order they were first seen.
    pub fn objects(&self, run: RunId) -> Result<Vec<ObjectInfo>, StorageError> {
        let context = || format!("reading the objects of run {run}");
        let sql_error = |source| StorageError::Sql {
            context: context(),
            source,
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, type_name, addr, created_by FROM objects WHERE run_id = ?1 ORDER BY id",
            )
            .map_err(sql_error)?;
        let rows = stmt
            .query_map([run.0], |row| {
                Ok(ObjectInfo {
                    id: ObjectId(codec::u64_from_sql(row.get(0)?)),
                    type_name: row.get(1)?,
                    addr: codec::u64_from_sql(row.get(2)?),
                    created_by: row
                        .get::<_, Option<i64>>(3)?
                        .map(|c| CallId(codec::u64_from_sql(c))),
                })
            })
            .map_err(sql_error)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(sql_error)
    }

    /// Inserts the run row now (so its id is known) and hands the connection to a background
    /// writer thread that stores the run's events.
    pub fn begin_run(self, info: &RunInfo) -> Result<RunWriter, StorageError> {
        if !self.writable {
            return Err(StorageError::OpenedReadOnly { path: self.path });
        }
        let args = codec::to_json(&info.args, "program arguments")?;
        let filters = codec::to_json(&info.filters, "filters")?;
        let excludes = codec::to_json(&info.excludes, "excludes")?;
        let crates = codec::to_json(&info.crates, "crates")?;
        let features = codec::to_json(&info.features, "features")?;
        schema::wait_for_lock(&self.path, self.waiting.as_ref(), || {
            self.conn.execute(
                "INSERT INTO runs (program, args, cwd, pid, started_at_ms, filters, excludes, \
                 carve_version, crates, distinct_calls, features) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                rusqlite::params![
                    info.program,
                    args,
                    info.cwd,
                    info.pid,
                    info.started_at_ms,
                    filters,
                    excludes,
                    info.carve_version,
                    crates,
                    info.distinct_calls,
                    features,
                ],
            )
        })
        .map_err(StorageError::sql("inserting the run"))?;
        let run = RunId(self.conn.last_insert_rowid());
        RunWriter::spawn(self.conn, run, self.path, self.waiting, info.distinct_calls)
    }

    /// The functions of a run, by id.
    pub fn functions(&self, run: RunId) -> Result<Vec<FunctionInfo>, StorageError> {
        let context = || format!("reading the functions of run {run}");
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, path, name, linkage_name, language, decl_file, decl_line, low_pc, \
                 params, return_type FROM functions WHERE run_id = ?1 ORDER BY id",
            )
            .map_err(|source| StorageError::Sql {
                context: context(),
                source,
            })?;
        let mut rows = stmt.query([run.0]).map_err(|source| StorageError::Sql {
            context: context(),
            source,
        })?;
        let mut functions = Vec::new();
        while let Some(row) = rows.next().map_err(|source| StorageError::Sql {
            context: context(),
            source,
        })? {
            functions.push(function_from_row(row, run).map_err(|e| e.in_context(context))?);
        }
        Ok(functions)
    }

    /// The shape of every call of a run (id, parent, function, thread), in start order: enough
    /// to lay out a call tree or pick calls before any value is read (a few dozen bytes a call).
    pub fn call_shapes(&self, run: RunId) -> Result<Vec<CallShape>, StorageError> {
        let context = || format!("reading the call tree of run {run}");
        let sql_error = |source| StorageError::Sql {
            context: context(),
            source,
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, parent_id, function_id, thread FROM calls WHERE run_id = ?1 \
                 ORDER BY id",
            )
            .map_err(sql_error)?;
        let rows = stmt
            .query_map([run.0], |row| {
                Ok(CallShape {
                    id: CallId(codec::u64_from_sql(row.get(0)?)),
                    parent: row
                        .get::<_, Option<i64>>(1)?
                        .map(|p| CallId(codec::u64_from_sql(p))),
                    function: FunctionId(row.get(2)?),
                    thread: row.get(3)?,
                })
            })
            .map_err(sql_error)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(sql_error)
    }

    /// When each call of a run started and ended (nanoseconds since the run started), with
    /// its place in the tree, in start order: the timeline (`show --format chrome-trace`).
    /// Times are `None` in traces recorded before schema version 6, and a call's end when it
    /// was not seen as it happened.
    pub fn call_times(&self, run: RunId) -> Result<Vec<CallTime>, StorageError> {
        let context = || format!("reading the call times of run {run}");
        let sql_error = |source| StorageError::Sql {
            context: context(),
            source,
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, parent_id, function_id, thread, started_ns, ended_ns FROM calls \
                 WHERE run_id = ?1 ORDER BY id",
            )
            .map_err(sql_error)?;
        let rows = stmt
            .query_map([run.0], |row| {
                Ok(CallTime {
                    shape: CallShape {
                        id: CallId(codec::u64_from_sql(row.get(0)?)),
                        parent: row
                            .get::<_, Option<i64>>(1)?
                            .map(|p| CallId(codec::u64_from_sql(p))),
                        function: FunctionId(row.get(2)?),
                        thread: row.get(3)?,
                    },
                    started_ns: row.get::<_, Option<i64>>(4)?.map(codec::u64_from_sql),
                    ended_ns: row.get::<_, Option<i64>>(5)?.map(codec::u64_from_sql),
                })
            })
            .map_err(sql_error)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(sql_error)
    }

    /// The names of a run's threads that have one (libtest's test threads are named after
    /// their test), by thread id.
    pub fn thread_names(
        &self,
        run: RunId,
    ) -> Result<std::collections::BTreeMap<i32, String>, StorageError> {
        let context = || format!("reading the thread names of run {run}");
        let sql_error = |source| StorageError::Sql {
            context: context(),
            source,
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT tid, name FROM threads WHERE run_id = ?1 AND name IS NOT NULL ORDER BY tid",
            )
            .map_err(sql_error)?;
        let rows = stmt
            .query_map([run.0], |row| Ok((row.get(0)?, row.get(1)?)))
            .map_err(sql_error)?;
        rows.collect::<Result<_, _>>().map_err(sql_error)
    }

    /// Hands the calls of `run` in `range` to `f` one at a time, in start order, without
    /// holding more than one in memory; stops at the first error `f` returns.
    ///
    /// A call the recorder never saw end reads as [`crate::Outcome::Unfinished`].
    pub fn each_call<E: From<StorageError>>(
        &self,
        run: RunId,
        range: CallRange,
        mut f: impl FnMut(Call) -> Result<(), E>,
    ) -> Result<(), E> {
        let context = || format!("reading the calls of run {run}");
        let sql_error = |source| StorageError::Sql {
            context: context(),
            source,
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, parent_id, function_id, thread, depth, args, outcome_kind, \
                 panic_message, ret, after_args, objects, touches FROM calls \
                 WHERE run_id = ?1 AND id >= ?2 AND id < ?3 AND (?4 IS NULL OR thread = ?4) \
                 ORDER BY id",
            )
            .map_err(sql_error)?;
        let from = range.from.map_or(0, |c| codec::u64_to_sql(c.0));
        let until = range.until.map_or(i64::MAX, |c| codec::u64_to_sql(c.0));
        let mut rows = stmt
            .query(rusqlite::params![run.0, from, until, range.thread])
            .map_err(sql_error)?;
        while let Some(row) = rows.next().map_err(sql_error)? {
            let call = call_from_row(row, run).map_err(|e| e.in_context(context))?;
            f(call)?;
        }
        Ok(())
    }

    /// The calls of `run` counted as repeats of a stored call while it was recorded (see
    /// [`RunInfo::distinct_calls`]): per stored call (the representative), the ids of the
    /// calls equivalent to it, in start order. Empty for a run that stored every call.
    pub fn repeats(&self, run: RunId) -> Result<BTreeMap<CallId, Vec<CallId>>, StorageError> {
        let mut out: BTreeMap<CallId, Vec<CallId>> = BTreeMap::new();
        for (representative, ids) in self.repeat_runs(run)? {
            out.entry(representative)
                .or_default()
                .extend(ids.ids().map(CallId));
        }
        for ids in out.values_mut() {
            ids.sort_unstable();
        }
        Ok(out)
    }

    /// A run with every call, as [`Store::load_trace`] gives it, where the calls counted as
    /// repeats while it was recorded ([`RunInfo::distinct_calls`]) are made again from their
    /// representatives: the same function, values, objects, outcome and depth, their own id
    /// and thread, and as parent the call they ran under (the representative's parent, or the
    /// repeat of it that encloses them). Equal, call for call, to the trace `--all-calls` would
    /// have stored, but for the calls' times, which repeats do not keep.
    pub fn load_trace_whole(&self, run: RunId) -> Result<Trace, StorageError> {
        let mut trace = self.load_trace(run)?;
        let runs = self.repeat_runs(run)?;
        if runs.is_empty() {
            return Ok(trace);
        }
        let at: HashMap<CallId, usize> = trace
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id, i))
            .collect();
        // Every instance, by thread, of each stored call a repeat's parent may be: the parents of
        // the representatives, each itself and its repeats, in id order.
        let parents: std::collections::HashSet<CallId> = runs
            .iter()
            .filter_map(|(rep, _)| trace.calls[*at.get(rep)?].parent)
            .collect();
        let mut instances: HashMap<(CallId, i32), Vec<u64>> = HashMap::new();
        for p in &parents {
            if let Some(&i) = at.get(p) {
                instances.insert((*p, trace.calls[i].thread), vec![p.0]);
            }
        }
        for (rep, ids) in runs.iter().filter(|(rep, _)| parents.contains(rep)) {
            instances
                .entry((*rep, ids.thread))
                .or_default()
                .extend(ids.ids());
        }
        for ids in instances.values_mut() {
            ids.sort_unstable();
        }
        let mut made = Vec::new();
        for (rep, ids) in &runs {
            let Some(&i) = at.get(rep) else {
                continue;
            };
            let original = &trace.calls[i];
            for id in ids.ids() {
                let parent = original.parent.and_then(|p| {
                    let theirs = instances.get(&(p, ids.thread))?;
                    let before = theirs.partition_point(|&x| x < id);
                    before.checked_sub(1).map(|k| CallId(theirs[k]))
                });
                made.push(Call {
                    id: CallId(id),
                    thread: ids.thread,
                    parent,
                    ..original.clone()
                });
            }
        }
        trace.calls.extend(made);
        trace.calls.sort_by_key(|c| c.id);
        Ok(trace)
    }

    /// How many calls of `run` were counted as repeats (see [`Store::repeats`]).
    pub fn repeat_count(&self, run: RunId) -> Result<u64, StorageError> {
        Ok(self.repeat_counts(run)?.values().sum())
    }

    /// Per stored call, how many calls were counted as its repeats (see [`Store::repeats`]),
    /// without listing their ids.
    pub fn repeat_counts(&self, run: RunId) -> Result<HashMap<CallId, u64>, StorageError> {
        let mut out: HashMap<CallId, u64> = HashMap::new();
        for (representative, ids) in self.repeat_runs(run)? {
            *out.entry(representative).or_default() += ids.count;
        }
        Ok(out)
    }

    fn repeat_runs(&self, run: RunId) -> Result<Vec<(CallId, IdRun)>, StorageError> {
        let sql_error = |source| StorageError::Sql {
            context: format!("reading the repeated calls of run {run}"),
            source,
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT representative, first, step, count, thread FROM repeats \
                 WHERE run_id = ?1 ORDER BY representative, first",
            )
            .map_err(sql_error)?;
        let rows = stmt
            .query_map([run.0], |row| {
                Ok((
                    CallId(codec::u64_from_sql(row.get(0)?)),
                    IdRun {
                        first: codec::u64_from_sql(row.get(1)?),
                        step: codec::u64_from_sql(row.get(2)?),
                        count: codec::u64_from_sql(row.get(3)?),
                        thread: row.get(4)?,
                    },
                ))
            })
            .map_err(sql_error)?;
        rows.collect::<Result<_, _>>().map_err(sql_error)
    }
}

/// Where a call sits in a run's tree, without its values (see [`Store::call_shapes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallShape {
    pub id: CallId,
    pub parent: Option<CallId>,
    pub function: FunctionId,
    pub thread: i32,
}

/// When a call ran (see [`Store::call_times`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallTime {
    pub shape: CallShape,
    /// Nanoseconds since the run started.
    pub started_ns: Option<u64>,
    pub ended_ns: Option<u64>,
}

/// Which calls [`Store::each_call`] reads: all by default, or one thread's, or those whose ids
/// lie in `from..until`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallRange {
    pub thread: Option<i32>,
    pub from: Option<CallId>,
    pub until: Option<CallId>,
}

/// Either a SQLite error from reading a column (which gets a context later) or a finished error.
enum RowError {
    Sql(rusqlite::Error),
    Storage(StorageError),
}

impl RowError {
    fn in_context(self, context: impl FnOnce() -> String) -> StorageError {
        match self {
            RowError::Sql(source) => StorageError::Sql {
                context: context(),
                source,
            },
            RowError::Storage(e) => e,
        }
    }
}

impl From<rusqlite::Error> for RowError {
    fn from(e: rusqlite::Error) -> Self {
        RowError::Sql(e)
    }
}

impl From<StorageError> for RowError {
    fn from(e: StorageError) -> Self {
        RowError::Storage(e)
    }
}

fn decode<T: DeserializeOwned>(json: &str, what: impl FnOnce() -> String) -> Result<T, RowError> {
    serde_json::from_str(json).map_err(|source| {
        RowError::Storage(StorageError::Decode {
            what: what(),
            source,
        })
    })
}

fn function_from_row(row: &Row<'_>, run: RunId) -> Result<FunctionInfo, RowError> {
    let id = FunctionId(row.get(0)?);
    let language: String = row.get(4)?;
    let params: String = row.get(8)?;
    Ok(FunctionInfo {
        id,
        path: row.get(1)?,
        name: row.get(2)?,
        linkage_name: row.get(3)?,
        language: codec::language_from_str(&language).ok_or_else(|| StorageError::InvalidRow {
            what: format!("language {language:?} of function {id} in run {run}"),
        })?,
        decl_file: row.get(5)?,
        decl_line: row.get(6)?,
        low_pc: codec::u64_from_sql(row.get(7)?),
        params: decode::<Vec<ParamInfo>>(&params, || {
            format!("parameters of function {id} in run {run}")
        })?,
        return_type: row.get(9)?,
    })
}

fn call_from_row(row: &Row<'_>, run: RunId) -> Result<Call, RowError> {
    let id = CallId(codec::u64_from_sql(row.get(0)?));
    let parent = row
        .get::<_, Option<i64>>(1)?
        .map(|p| CallId(codec::u64_from_sql(p)));
    let args: String = row.get(5)?;
    let outcome_kind: Option<String> = row.get(6)?;
    let panic_message: Option<String> = row.get(7)?;
    let ret: Option<String> = row.get(8)?;
    let after: Option<String> = row.get(9)?;
    let objects: Option<String> = row.get(10)?;
    let touches: Option<String> = row.get(11)?;
    let outcome =
        codec::outcome_from_columns(outcome_kind.as_deref(), panic_message).ok_or_else(|| {
            StorageError::InvalidRow {
                what: format!("outcome {outcome_kind:?} of call {id} in run {run}"),
            }
        })?;
    Ok(Call {
        id,
        parent,
        function: FunctionId(row.get(2)?),
        thread: row.get(3)?,
        depth: row.get(4)?,
        args: decode::<Vec<Arg>>(&args, || format!("arguments of call {id} in run {run}"))?,
        outcome,
        ret: match ret {
            Some(json) => Some(decode::<Value>(&json, || {
                format!("return value of call {id} in run {run}")
            })?),
            None => None,
        },
        after: match after {
            Some(json) => {
                decode::<Vec<Arg>>(&json, || format!("state after call {id} in run {run}"))?
            }
            None => Vec::new(),
        },
        objects: match objects {
            Some(json) => {
                decode::<Vec<ArgObject>>(&json, || format!("objects of call {id} in run {run}"))?
            }
            None => Vec::new(),
        },
        touches: match touches {
            Some(json) => {
                decode::<Vec<String>>(&json, || format!("what call {id} in run {run} read"))?
            }
            None => Vec::new(),
        },
    })
}

/// A `runs` row as stored, before its JSON and exit columns are decoded.
struct RawRun {
    id: i64,
    program: String,
    args: String,
    cwd: String,
    pid: i32,
    started_at_ms: i64,
    filters: String,
    excludes: String,
    carve_version: String,
    exit_kind: Option<String>,
    exit_code: Option<i32>,
    exit_signal: Option<i32>,
    exit_signal_name: Option<String>,
    exit_reason: Option<String>,
    ended_at_ms: Option<i64>,
    crates: String,
    distinct_calls: bool,
    features: String,
}

impl RawRun {
    fn from_row(row: &Row<'_>) -> rusqlite::Result<RawRun> {
        Ok(RawRun {
            id: row.get(0)?,
            program: row.get(1)?,
            args: row.get(2)?,
            cwd: row.get(3)?,
            pid: row.get(4)?,
            started_at_ms: row.get(5)?,
            filters: row.get(6)?,
            excludes: row.get(7)?,
            carve_version: row.get(8)?,
            exit_kind: row.get(9)?,
            exit_code: row.get(10)?,
            exit_signal: row.get(11)?,
            exit_signal_name: row.get(12)?,
            exit_reason: row.get(13)?,
            ended_at_ms: row.get(14)?,
            crates: row.get(15)?,
            distinct_calls: row.get(16)?,
            features: row.get(17)?,
        })
    }

    fn decode(self) -> Result<Run, StorageError> {
        let run = RunId(self.id);
        let list = |json: &str, what: &str| -> Result<Vec<String>, StorageError> {
            serde_json::from_str(json).map_err(|source| StorageError::Decode {
                what: format!("{what} of run {run}"),
                source,
            })
        };
        let invalid = |what: &str| StorageError::InvalidRow {
            what: format!("{what} of run {run}"),
        };
        let exit = match self.exit_kind.as_deref() {
            None => None,
            Some("exited") => Some(ProcessExit::Exited {
                code: self.exit_code.ok_or_else(|| invalid("exit code"))?,
            }),
            Some("signaled") => Some(ProcessExit::Signaled {
                signal: self.exit_signal.ok_or_else(|| invalid("exit signal"))?,
                name: self.exit_signal_name.unwrap_or_default(),
            }),
            Some("lost") => Some(ProcessExit::Lost {
                reason: self.exit_reason.unwrap_or_default(),
            }),
            Some(other) => return Err(invalid(&format!("exit kind {other:?}"))),
        };
        let end = match (exit, self.ended_at_ms) {
            (Some(exit), Some(ended_at_ms)) => Some(RunEnd { exit, ended_at_ms }),
            (None, None) => None,
            _ => return Err(invalid("half-written end")),
        };
        Ok(Run {
            id: run,
            info: RunInfo {
                program: self.program,
                args: list(&self.args, "program arguments")?,
                cwd: self.cwd,
                pid: self.pid,
                started_at_ms: self.started_at_ms,
                filters: list(&self.filters, "filters")?,
                excludes: list(&self.excludes, "excludes")?,
                crates: list(&self.crates, "crates")?,
                carve_version: self.carve_version,
                distinct_calls: self.distinct_calls,
                features: list(&self.features, "features")?,
            },
            end,
        })
    }
}
