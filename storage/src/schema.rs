//! The trace schema: opening a database file, checking it is a carve trace, and migrating it.
//!
//! The schema version lives in SQLite's `PRAGMA user_version`. [`MIGRATIONS`] is append-only:
//! entry `i` moves a database from version `i` to `i + 1`, so a database at version `n` is
//! brought up to date by running `MIGRATIONS[n..]` in one transaction. Never edit or remove a
//! migration that has shipped; add a new one instead (the same rule as cargo's
//! `src/util/sqlite.rs`). See `docs/trace-schema.md` for what the tables mean.

use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::error::StorageError;

/// The value of the `format` key in `carve_meta` that marks a file as a carve trace.
pub(crate) const FORMAT_MARKER: &str = "carve-trace";

/// The schema migrations, oldest first. Append only: never remove or change an entry.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: the initial schema.
    r#"
    CREATE TABLE carve_meta (
        key   TEXT PRIMARY KEY NOT NULL,
        value TEXT NOT NULL
    );
    INSERT INTO carve_meta (key, value) VALUES ('format', 'carve-trace');

    CREATE TABLE runs (
        id               INTEGER PRIMARY KEY,
        program          TEXT NOT NULL,
        args             TEXT NOT NULL,
        cwd              TEXT NOT NULL,
        pid              INTEGER NOT NULL,
        started_at_ms    INTEGER NOT NULL,
        filters          TEXT NOT NULL,
        excludes         TEXT NOT NULL,
        carve_version    TEXT NOT NULL,
        exit_kind        TEXT CHECK (exit_kind IN ('exited', 'signaled', 'lost')),
        exit_code        INTEGER,
        exit_signal      INTEGER,
        exit_signal_name TEXT,
        exit_reason      TEXT,
        ended_at_ms      INTEGER
    );

    CREATE TABLE functions (
        run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        id           INTEGER NOT NULL,
        path         TEXT NOT NULL,
        name         TEXT NOT NULL,
        linkage_name TEXT,
        language     TEXT NOT NULL CHECK (language IN ('rust', 'c', 'other')),
        decl_file    TEXT,
        decl_line    INTEGER,
        low_pc       INTEGER NOT NULL,
        params       TEXT NOT NULL,
        return_type  TEXT,
        PRIMARY KEY (run_id, id)
    );

    CREATE TABLE calls (
        run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        id            INTEGER NOT NULL,
        parent_id     INTEGER,
        function_id   INTEGER NOT NULL,
        thread        INTEGER NOT NULL,
        depth         INTEGER NOT NULL,
        args          TEXT NOT NULL,
        outcome_kind  TEXT CHECK (outcome_kind IN ('returned', 'panicked', 'unwound', 'unfinished')),
        panic_message TEXT,
        ret           TEXT,
        PRIMARY KEY (run_id, id),
        FOREIGN KEY (run_id, function_id) REFERENCES functions (run_id, id) ON DELETE CASCADE,
        FOREIGN KEY (run_id, parent_id) REFERENCES calls (run_id, id) ON DELETE CASCADE
    );
    CREATE INDEX calls_by_parent ON calls (run_id, parent_id);
    CREATE INDEX calls_by_function ON calls (run_id, function_id);

    CREATE TABLE threads (
        run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        tid     INTEGER NOT NULL,
        started INTEGER NOT NULL DEFAULT 0,
        exited  INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (run_id, tid)
    );
    "#,
    // 2: field effects, the state behind `self` and `&mut` arguments after a call (JSON list
    // of {name, value}); NULL for calls recorded before this version.
    r#"
    ALTER TABLE calls ADD COLUMN after_args TEXT;
    "#,
    // 3: object identity: the objects of a run, and which object each argument referred to
    // (JSON list of {arg, object}; NULL for calls recorded before this version).
    r#"
    CREATE TABLE objects (
        run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        id         INTEGER NOT NULL,
        type_name  TEXT NOT NULL,
        addr       INTEGER NOT NULL,
        created_by INTEGER,
        PRIMARY KEY (run_id, id)
    );
    ALTER TABLE calls ADD COLUMN objects TEXT;
    "#,
    // 4: what a call read that a test cannot control (the clock, the environment, files, the
    // network...): JSON list of `kind: function`; NULL when nothing (and before this version).
    r#"
    ALTER TABLE calls ADD COLUMN touches TEXT;
    "#,
    // 5: line coverage (`record --coverage`): the source lines with code in each selected
    // function (one row per function and line), which thread reached each one
    // first, whether the run recorded coverage at all, and thread names (for per-test
    // attribution: libtest names each test's thread after the test).
    r#"
    ALTER TABLE runs ADD COLUMN coverage INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE threads ADD COLUMN name TEXT;
    CREATE TABLE code_lines (
        run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        id        INTEGER NOT NULL,
        file        TEXT NOT NULL,
        line        INTEGER NOT NULL,
        function_id INTEGER NOT NULL,
        PRIMARY KEY (run_id, id),
        UNIQUE (run_id, file, line, function_id)
    );
    CREATE TABLE line_hits (
        run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        line_id INTEGER NOT NULL,
        thread  INTEGER NOT NULL,
        PRIMARY KEY (run_id, line_id, thread),
        FOREIGN KEY (run_id, line_id) REFERENCES code_lines (run_id, id) ON DELETE CASCADE
    );
    "#,
    // 6: call times (the timeline, `show --format chrome-trace`): when each call started and
    // ended, in nanoseconds since its run started (monotonic); NULL before this version, and
    // `ended_ns` NULL for a call whose end was not seen as it happened (unwound, unfinished).
    r#"
    ALTER TABLE calls ADD COLUMN started_ns INTEGER;
    ALTER TABLE calls ADD COLUMN ended_ns INTEGER;
    "#,
    // 7: the `--crate` names a run was recorded with (JSON array, like `filters`), so a
    // re-recording (`carve gate`) selects the same functions; empty before this version.
    r#"
    ALTER TABLE runs ADD COLUMN crates TEXT NOT NULL DEFAULT '[]';
    "#,
    // 8: the file-system reads of calls (std's read-only `&Path` functions) and what carve
    // found at each path at that moment: `kind` missing | file | dir | symlink | not_read;
    // a file's `len` and `contents` (NULL past the bound carve copies), a listed directory's
    // `entries` (JSON [{name, kind}]), a symlink's target or why nothing was read (`detail`).
    r#"
    CREATE TABLE file_reads (
        run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        seq      INTEGER NOT NULL,
        call_id  INTEGER NOT NULL,
        op       TEXT NOT NULL,
        path     TEXT NOT NULL,
        kind     TEXT NOT NULL,
        len      INTEGER,
        contents BLOB,
        entries  TEXT,
        detail   TEXT,
        PRIMARY KEY (run_id, seq)
    );
    "#,
    // 9: equivalent calls counted at record time instead of stored (`distinct_calls` = 1; see
    // the writer's `repeats`): each stored call's repeats as runs of ids `first`,
    // `first + step`, ... (`count` ids), all made on `thread`.
    r#"
    ALTER TABLE runs ADD COLUMN distinct_calls INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE repeats (
        run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        representative INTEGER NOT NULL,
        first          INTEGER NOT NULL,
        step           INTEGER NOT NULL,
        count          INTEGER NOT NULL,
        thread         INTEGER NOT NULL,
        PRIMARY KEY (run_id, representative, first)
    );
    "#,
    // 10: the cargo features the recorded program's package was built with beyond its
    // defaults (`cargo carve record`), which the carved tests need too.
    r#"
    ALTER TABLE runs ADD COLUMN features TEXT NOT NULL DEFAULT '[]';
    "#,
];

/// The schema version this build writes and reads: the number of migrations.
pub const SCHEMA_VERSION: usize = MIGRATIONS.len();

/// How a trace file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpenMode {
    /// For writing, creating the file when missing (`carve record`).
    Create,
    /// For reading only: the file must exist and hold a trace, and its bytes are never changed
    /// (`show`, `generate`, `gate`'s baseline).
    ReadOnly,
}

/// Called once each time carve starts waiting for another process's write lock on the file.
pub type LockWait = std::sync::Arc<dyn Fn(&Path) + Send + Sync>;

/// How long one attempt to take the write lock waits before carve says it is waiting (and then
/// keeps trying, without limit).
pub(crate) const LOCK_ATTEMPT: Duration = Duration::from_secs(1);

/// Opens `path` for recording (creating it when missing), checks it is a carve trace or empty
/// with every table and column its schema version has, sets the connection pragmas and brings
/// it to [`SCHEMA_VERSION`]. For reading, see [`open_for_reading`].
pub(crate) fn open_for_recording(
    path: &Path,
    waiting: Option<&LockWait>,
) -> Result<Connection, StorageError> {
    let conn = connect(path, OpenMode::Create)?;
    let version = check_is_trace(&conn, path, OpenMode::Create)?;
    check_tables(&conn, path, version)?;
    configure(&conn)?;
    migrate(conn, path, MIGRATIONS, waiting)
}

/// A trace opened for reading: the connection, and the temporary file it reads when the trace
/// had an older schema (deleted when dropped, so it must outlive the connection).
pub(crate) type Reading = (Connection, Option<tempfile::TempPath>);

/// Opens the trace at `path` read-only. An older schema is migrated in a temporary copy of the
/// file on disk (in the system's temporary directory), never in the file itself and never in
/// memory: reading a trace of any size costs SQLite's page cache, not the file's size (a copy
/// in memory cost 3.7 GB for a 1.15 GB trace). Migrations only add tables and columns, so the
/// copy needs no journal.
pub(crate) fn open_for_reading(path: &Path) -> Result<Reading, StorageError> {
    let conn = connect(path, OpenMode::ReadOnly)?;
    let version = check_is_trace(&conn, path, OpenMode::ReadOnly)?;
    check_tables(&conn, path, version)?;
    if version >= SCHEMA_VERSION as i64 {
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(StorageError::sql("turning foreign keys on"))?;
        return Ok((conn, None));
    }
    let copying = || {
        format!(
            "copying {} (schema version {version}) to a temporary file to read it",
            path.display()
        )
    };
    let scratch = tempfile::Builder::new()
        .prefix("carve-migrated-")
        .suffix(".db")
        .tempfile()
        .map_err(|source| StorageError::Scratch {
            context: copying(),
            source,
        })?
        .into_temp_path();
    let mut copy = Connection::open(&scratch).map_err(StorageError::sql(copying()))?;
    copy.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")
        .map_err(StorageError::sql(copying()))?;
    rusqlite::backup::Backup::new(&conn, &mut copy)
        .and_then(|b| b.run_to_completion(1024, Duration::ZERO, None))
        .map_err(StorageError::sql(copying()))?;
    drop(conn);
    copy.pragma_update(None, "foreign_keys", true)
        .map_err(StorageError::sql("turning foreign keys on"))?;
    let copy = migrate(copy, path, MIGRATIONS, None)?;
    Ok((copy, Some(scratch)))
}

/// Checks, without changing anything, that `carve record` may write into `path`: missing, an
/// empty file, or a trace with all its tables and columns, writable.
pub(crate) fn check_for_recording(path: &Path) -> Result<(), StorageError> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Ok(meta) if meta.is_file() && meta.len() == 0 => {}
        _ => {
            let conn = connect(path, OpenMode::ReadOnly)?;
            let version = check_is_trace(&conn, path, OpenMode::Create)?;
            check_tables(&conn, path, version)?;
        }
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map(drop)
        .map_err(|source| StorageError::CannotWrite {
            path: path.to_path_buf(),
            source,
        })
}

/// Opens a raw connection, turning "no such file" and "cannot write" into their own errors.
pub(crate) fn connect(path: &Path, mode: OpenMode) -> Result<Connection, StorageError> {
    // Ask the OS first: its errors name the real problem (missing directory, permissions),
    // where SQLite only says "unable to open database file", or "disk I/O error" for a
    // directory (which opens for reading).
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(StorageError::IsADirectory {
            path: path.to_path_buf(),
        });
    }
    let probe = OpenOptions::new()
        .read(true)
        .write(mode == OpenMode::Create)
        .create(mode == OpenMode::Create)
        .open(path);
    match probe {
        Ok(file) => {
            if mode == OpenMode::ReadOnly && file.metadata().is_ok_and(|m| m.len() == 0) {
                return Err(StorageError::Empty {
                    path: path.to_path_buf(),
                });
            }
        }
        Err(e) if e.kind() == ErrorKind::NotFound && mode == OpenMode::ReadOnly => {
            return Err(StorageError::NotFound {
                path: path.to_path_buf(),
            })
        }
        Err(source) if mode == OpenMode::ReadOnly => {
            return Err(StorageError::CannotRead {
                path: path.to_path_buf(),
                source,
            })
        }
        Err(source) => {
            return Err(StorageError::CannotWrite {
                path: path.to_path_buf(),
                source,
            })
        }
    }
    let conn = match mode {
        OpenMode::Create => {
            let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI;
            let conn = Connection::open_with_flags(path, flags);
            conn.and_then(|c| c.busy_timeout(LOCK_ATTEMPT).map(|()| c))
        }
        OpenMode::ReadOnly => {
            // A read-only connection to a WAL database creates `-wal` and `-shm` files when they
            // are missing, and leaves them behind. Missing, the whole trace is in the main file:
            // read it as immutable (no side files, no locks). Present, a recording is writing
            // (or died writing): read through them, as SQLite needs to.
            let mut wal = path.as_os_str().to_owned();
            wal.push("-wal");
            let immutable = !Path::new(&wal).exists();
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI;
            let conn = Connection::open_with_flags(file_uri(path, immutable), flags);
            conn.and_then(|c| c.busy_timeout(Duration::from_secs(5)).map(|()| c))
        }
    };
    conn.map_err(StorageError::sql(format!("opening {}", path.display())))
}

/// `path` as a SQLite `file:` URI, read-only, and immutable when asked.
fn file_uri(path: &Path, immutable: bool) -> String {
    use std::os::unix::ffi::OsStrExt;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &b in absolute.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?mode=ro");
    if immutable {
        uri.push_str("&immutable=1");
    }
    uri
}

/// Accepts a carve trace (returning its schema version) or, for writing, an empty database;
/// refuses anything else.
fn check_is_trace(conn: &Connection, path: &Path, mode: OpenMode) -> Result<i64, StorageError> {
    let not_a_trace = |reason: String| StorageError::NotATrace {
        path: path.to_path_buf(),
        reason,
    };
    // The first read of the file is where SQLite notices it is not a database at all.
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))
        .map_err(|e| match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
                not_a_trace(e.to_string())
            }
            _ => StorageError::Sql {
                context: format!("reading the schema of {}", path.display()),
                source: e,
            },
        })?;
    let version = user_version(conn)?;
    if tables == 0 && version == 0 {
        // A new, empty database: something to record into, nothing to read.
        return match mode {
            OpenMode::Create => Ok(0),
            OpenMode::ReadOnly => Err(StorageError::Empty {
                path: path.to_path_buf(),
            }),
        };
    }
    let has_meta: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'carve_meta'",
            [],
            |row| row.get::<_, i64>(0),
        )
        .map_err(StorageError::sql("looking for the carve_meta table"))?
        > 0;
    if !has_meta {
        return Err(not_a_trace(
            "a SQLite database without carve's format marker".to_owned(),
        ));
    }
    let format: Option<String> = conn
        .query_row(
            "SELECT value FROM carve_meta WHERE key = 'format'",
            [],
            |row| row.get(0),
        )
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })
        .map_err(StorageError::sql("reading carve's format marker"))?;
    match format.as_deref() {
        Some(FORMAT_MARKER) => {}
        Some(other) => return Err(not_a_trace(format!("its format marker says {other:?}"))),
        None => return Err(not_a_trace("its format marker is missing".to_owned())),
    }
    if version > SCHEMA_VERSION as i64 {
        return Err(StorageError::NewerSchema {
            path: path.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    if version < 1 {
        return Err(StorageError::Damaged {
            path: path.to_path_buf(),
            reason: format!("its schema version is {version}"),
        });
    }
    Ok(version)
}

/// Checks that the file has every table and column the migrations up to `version` make (a
/// table dropped or altered by hand would otherwise fail half-way through a recording).
fn check_tables(conn: &Connection, path: &Path, version: i64) -> Result<(), StorageError> {
    let Ok(version) = usize::try_from(version) else {
        return Ok(()); // refused by check_is_trace
    };
    if version == 0 {
        return Ok(());
    }
    let reference = Connection::open_in_memory()
        .and_then(|c| {
            c.execute_batch(&MIGRATIONS[..version.min(MIGRATIONS.len())].join("\n"))
                .map(|()| c)
        })
        .map_err(StorageError::sql("building the reference schema"))?;
    let tables: Vec<String> = names(
        &reference,
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
        None,
    )
    .map_err(StorageError::sql("reading the reference schema"))?;
    let context = || format!("reading the schema of {}", path.display());
    for table in tables {
        let want = names(
            &reference,
            "SELECT name FROM pragma_table_info(?1)",
            Some(&table),
        )
        .map_err(StorageError::sql("reading the reference schema"))?;
        let have = names(conn, "SELECT name FROM pragma_table_info(?1)", Some(&table)).map_err(
            |source| StorageError::Sql {
                context: context(),
                source,
            },
        )?;
        let damaged = |reason: String| StorageError::Damaged {
            path: path.to_path_buf(),
            reason,
        };
        if have.is_empty() {
            return Err(damaged(format!("its table `{table}` is missing")));
        }
        if let Some(column) = want.iter().find(|c| !have.contains(c)) {
            return Err(damaged(format!(
                "its table `{table}` has no column `{column}`"
            )));
        }
    }
    Ok(())
}

/// The first column of every row `sql` returns (given `arg` as ?1 when there is one).
fn names(conn: &Connection, sql: &str, arg: Option<&str>) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(sql)?;
    let params: Vec<&str> = arg.into_iter().collect();
    let rows = stmt.query_map(rusqlite::params_from_iter(params), |r| r.get(0))?;
    rows.collect()
}

/// The page size of a new trace file. The writer's time went a quarter to `pwrite`, one
/// call per page of log written and one per page a checkpoint copies, whatever its
/// size: in 16 KiB pages a recording of 200,000 hot-loop calls took 8% less CPU and 10% less
/// wall time than in SQLite's default 4 KiB (8 KiB was between them, 64 KiB as slow as 4 KiB:
/// a commit writes the last, partly filled page of each B-tree in full). Nested calls, whose
/// rows are updated when they end, cost the same in both (the writer_rows workload).
pub(crate) const PAGE_SIZE: u32 = 16 * 1024;

/// WAL so readers (`carve show`) never block the recorder; NORMAL sync is durable enough in WAL
/// mode (a power cut may lose the last commits, never corrupt the file). A new file gets
/// [`PAGE_SIZE`] pages (SQLite takes the size only before the first table and before WAL; an
/// existing file keeps its own).
fn configure(conn: &Connection) -> Result<(), StorageError> {
    conn.pragma_update(None, "page_size", PAGE_SIZE)
        .map_err(StorageError::sql("setting the page size"))?;
    // SQLite answers with the resulting mode; only in-memory databases stay out of WAL, and
    // those still work, so the answer is not checked.
    conn.query_row("PRAGMA journal_mode = WAL", [], |row| {
        row.get::<_, String>(0)
    })
    .map_err(StorageError::sql("switching the journal to WAL mode"))?;
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(StorageError::sql("setting synchronous = NORMAL"))?;
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(StorageError::sql("turning foreign keys on"))?;
    Ok(())
}

/// The database's schema version.
pub(crate) fn user_version(conn: &Connection) -> Result<i64, StorageError> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(StorageError::sql("reading the schema version"))
}

/// Runs `op` until it does not fail for want of the write lock another connection holds;
/// `waiting` is told once, when the first attempt (of [`LOCK_ATTEMPT`]) gave up.
pub(crate) fn wait_for_lock<T>(
    path: &Path,
    waiting: Option<&LockWait>,
    mut op: impl FnMut() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let mut told = false;
    loop {
        match op() {
            Err(e) if is_busy(&e) => {
                if !told {
                    told = true;
                    if let Some(tell) = waiting {
                        tell(path);
                    }
                }
                // The busy timeout already waited; this only avoids a hot loop if it is off.
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// The lock is held by another connection.
pub(crate) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Runs the migrations the database has not seen yet, all in one transaction, waiting for
/// another process's write lock as long as it takes (telling `waiting` once).
///
/// `migrations` is [`MIGRATIONS`] except in tests, which build older databases with a prefix.
pub(crate) fn migrate(
    conn: Connection,
    path: &Path,
    migrations: &[&str],
    waiting: Option<&LockWait>,
) -> Result<Connection, StorageError> {
    wait_for_lock(path, waiting, || conn.execute_batch("BEGIN IMMEDIATE"))
        .map_err(StorageError::sql("starting the schema migration"))?;
    match migrate_in_transaction(&conn, path, migrations) {
        Ok(()) => {
            conn.execute_batch("COMMIT")
                .map_err(StorageError::sql("committing the schema migration"))?;
            Ok(conn)
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

fn migrate_in_transaction(
    tx: &Connection,
    path: &Path,
    migrations: &[&str],
) -> Result<(), StorageError> {
    // Read the version inside the write transaction so two processes cannot both migrate.
    let version = user_version(tx)?;
    let target = migrations.len();
    let start = usize::try_from(version).map_err(|_| StorageError::NotATrace {
        path: path.to_path_buf(),
        reason: format!("its schema version {version} is negative"),
    })?;
    if start > target {
        return Err(StorageError::NewerSchema {
            path: path.to_path_buf(),
            found: version,
            supported: target,
        });
    }
    if start < target {
        for (i, sql) in migrations.iter().enumerate().skip(start) {
            tx.execute_batch(sql).map_err(|source| StorageError::Sql {
                context: format!("migrating the trace schema to version {}", i + 1),
                source,
            })?;
        }
        tx.pragma_update(None, "user_version", target as i64)
            .map_err(StorageError::sql("recording the schema version"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_db() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("trace.db");
        (dir, path)
    }

    #[test]
    fn a_new_database_is_migrated_to_the_current_version_in_wal_mode() {
        let (_dir, path) = temp_db();
        let conn = open_for_recording(&path, None).expect("create");
        assert_eq!(user_version(&conn).expect("version"), SCHEMA_VERSION as i64);
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .expect("journal mode");
        assert_eq!(mode, "wal");
        let fk: i64 = conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .expect("foreign keys");
        assert_eq!(fk, 1);
    }

    #[test]
    fn a_database_at_every_older_version_migrates_to_the_current_one() {
        for old in 1..=SCHEMA_VERSION {
            let (_dir, path) = temp_db();
            let conn = connect(&path, OpenMode::Create).expect("connect");
            let conn = migrate(conn, &path, &MIGRATIONS[..old], None).expect("old schema");
            assert_eq!(user_version(&conn).expect("version"), old as i64);
            // A run written by the old schema must survive the migration.
            conn.execute(
                "INSERT INTO runs (program, args, cwd, pid, started_at_ms, filters, excludes, carve_version)
                 VALUES ('/bin/old', '[]', '/', 1, 2, '[]', '[]', '0.0.1')",
                [],
            )
            .expect("insert old run");
            drop(conn);

            let conn = open_for_recording(&path, None).expect("open and migrate");
            assert_eq!(user_version(&conn).expect("version"), SCHEMA_VERSION as i64);
            let program: String = conn
                .query_row("SELECT program FROM runs", [], |r| r.get(0))
                .expect("old run");
            assert_eq!(program, "/bin/old");
        }
    }

    #[test]
    fn opening_twice_does_not_rerun_migrations() {
        let (_dir, path) = temp_db();
        drop(open_for_recording(&path, None).expect("create"));
        let conn = open_for_recording(&path, None).expect("reopen");
        let markers: i64 = conn
            .query_row("SELECT count(*) FROM carve_meta", [], |r| r.get(0))
            .expect("count");
        assert_eq!(markers, 1);
    }

    #[test]
    fn a_database_with_a_wrong_format_marker_is_not_a_trace() {
        let (_dir, path) = temp_db();
        let conn = open_for_recording(&path, None).expect("create");
        conn.execute(
            "UPDATE carve_meta SET value = 'other' WHERE key = 'format'",
            [],
        )
        .expect("update");
        drop(conn);
        let err = open_for_recording(&path, None).expect_err("wrong marker");
        assert!(matches!(err, StorageError::NotATrace { .. }), "{err:?}");
    }
}
