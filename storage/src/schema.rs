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

use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};

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
];

/// The schema version this build writes and reads: the number of migrations.
pub const SCHEMA_VERSION: usize = MIGRATIONS.len();

/// Whether the file must already exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpenMode {
    /// Create the file when missing.
    Create,
    /// Refuse a missing file.
    Existing,
}

/// Opens `path`, checks it is a carve trace (or empty), sets the connection pragmas and migrates
/// it to [`SCHEMA_VERSION`].
pub(crate) fn open_trace(path: &Path, mode: OpenMode) -> Result<Connection, StorageError> {
    let conn = connect(path, mode)?;
    check_is_trace(&conn, path)?;
    configure(&conn)?;
    migrate(conn, path, MIGRATIONS)
}

/// Opens a raw connection, turning "no such file" and "cannot write" into their own errors.
pub(crate) fn connect(path: &Path, mode: OpenMode) -> Result<Connection, StorageError> {
    // Ask the OS first: its errors name the real problem (missing directory, permissions),
    // where SQLite only says "unable to open database file".
    let probe = OpenOptions::new()
        .read(true)
        .write(true)
        .create(mode == OpenMode::Create)
        .open(path);
    match probe {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound && mode == OpenMode::Existing => {
            return Err(StorageError::NotFound {
                path: path.to_path_buf(),
            })
        }
        Err(source) => {
            return Err(StorageError::CannotWrite {
                path: path.to_path_buf(),
                source,
            })
        }
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags)
        .map_err(StorageError::sql(format!("opening {}", path.display())))?;
    conn.busy_timeout(Duration::from_secs(5))
        .map_err(StorageError::sql("setting the busy timeout"))?;
    Ok(conn)
}

/// Accepts an empty database or one carrying the carve marker; refuses anything else.
fn check_is_trace(conn: &Connection, path: &Path) -> Result<(), StorageError> {
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
        return Ok(()); // a new, empty database
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
    Ok(())
}

/// WAL so readers (`carve show`) never block the recorder; NORMAL sync is durable enough in WAL
/// mode (a power cut may lose the last commits, never corrupt the file).
fn configure(conn: &Connection) -> Result<(), StorageError> {
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

/// Runs the migrations the database has not seen yet, all in one transaction.
///
/// `migrations` is [`MIGRATIONS`] except in tests, which build older databases with a prefix.
pub(crate) fn migrate(
    mut conn: Connection,
    path: &Path,
    migrations: &[&str],
) -> Result<Connection, StorageError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(StorageError::sql("starting the schema migration"))?;
    // Read the version inside the write transaction so two processes cannot both migrate.
    let version = user_version(&tx)?;
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
    tx.commit()
        .map_err(StorageError::sql("committing the schema migration"))?;
    Ok(conn)
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
        let conn = open_trace(&path, OpenMode::Create).expect("create");
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
            let conn = migrate(conn, &path, &MIGRATIONS[..old]).expect("old schema");
            assert_eq!(user_version(&conn).expect("version"), old as i64);
            // A run written by the old schema must survive the migration.
            conn.execute(
                "INSERT INTO runs (program, args, cwd, pid, started_at_ms, filters, excludes, carve_version)
                 VALUES ('/bin/old', '[]', '/', 1, 2, '[]', '[]', '0.0.1')",
                [],
            )
            .expect("insert old run");
            drop(conn);

            let conn = open_trace(&path, OpenMode::Existing).expect("open and migrate");
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
        drop(open_trace(&path, OpenMode::Create).expect("create"));
        let conn = open_trace(&path, OpenMode::Existing).expect("reopen");
        let markers: i64 = conn
            .query_row("SELECT count(*) FROM carve_meta", [], |r| r.get(0))
            .expect("count");
        assert_eq!(markers, 1);
    }

    #[test]
    fn a_database_with_a_wrong_format_marker_is_not_a_trace() {
        let (_dir, path) = temp_db();
        let conn = open_trace(&path, OpenMode::Create).expect("create");
        conn.execute(
            "UPDATE carve_meta SET value = 'other' WHERE key = 'format'",
            [],
        )
        .expect("update");
        drop(conn);
        let err = open_trace(&path, OpenMode::Existing).expect_err("wrong marker");
        assert!(matches!(err, StorageError::NotATrace { .. }), "{err:?}");
    }
}
