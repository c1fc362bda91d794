//! The one error type of the storage crate: every failure names the file, run or row involved.
//!
//! Messages are single lines that already include the underlying cause (the OS or SQLite error),
//! so printing an error with `{}` is enough for a person to act on it.

use std::path::PathBuf;

use crate::model::RunId;

/// Everything that can go wrong while opening, reading or writing a trace database.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// `Store::open` was pointed at a path where no file exists.
    #[error(
        "no trace database at {}: record one first with `carve record --db {} -- PROGRAM`",
        path.display(),
        path.display()
    )]
    NotFound { path: PathBuf },

    /// The file exists but is not SQLite, is damaged, or is a SQLite database of another program.
    #[error(
        "{} is not a carve trace database ({reason}): point --db at a file written by `carve record`",
        path.display()
    )]
    NotATrace { path: PathBuf, reason: String },

    /// The path names a directory (`--db traces`): a trace is one file.
    #[error(
        "{} is a directory, not a trace database: name a file instead, such as {}",
        path.display(),
        path.join("trace.db").display()
    )]
    IsADirectory { path: PathBuf },

    /// The file is empty (or a SQLite database with nothing in it): there is nothing to read.
    #[error(
        "{} is empty, not a trace: record into it first with `carve record --db {} -- PROGRAM`",
        path.display(),
        path.display()
    )]
    Empty { path: PathBuf },

    /// A carve trace that lacks tables or columns its schema version has (edited by hand, or
    /// damaged): recording into it or reading it would fail half-way.
    #[error(
        "{} is a damaged carve trace ({reason}): record a new trace into another file with `carve record --db NEW.db -- PROGRAM`",
        path.display()
    )]
    Damaged { path: PathBuf, reason: String },

    /// The trace was written by a newer carve whose schema this build does not know.
    #[error(
        "{} uses trace schema version {found}, newer than this carve supports ({supported}): upgrade carve",
        path.display()
    )]
    NewerSchema {
        path: PathBuf,
        found: i64,
        supported: usize,
    },

    /// The file cannot be created or opened for writing (missing directory, permissions...).
    #[error(
        "cannot write the trace database {}: {source}: check that its directory exists and is writable",
        path.display()
    )]
    CannotWrite {
        path: PathBuf,
        source: std::io::Error,
    },

    /// The file exists but cannot be opened for reading (permissions...).
    #[error(
        "cannot read the trace database {}: {source}: check its permissions",
        path.display()
    )]
    CannotRead {
        path: PathBuf,
        source: std::io::Error,
    },

    /// A temporary file carve needed could not be made (the system's temporary directory is
    /// full or not writable).
    #[error("cannot make a temporary file while {context}: {source}: free space in the temporary directory or point TMPDIR at another one")]
    Scratch {
        context: String,
        source: std::io::Error,
    },

    /// A store opened for reading was asked to record a run.
    #[error("cannot record into {}: it was opened read-only (a bug in carve: please report it)", path.display())]
    OpenedReadOnly { path: PathBuf },

    /// SQLite failed; `context` says what carve was doing.
    #[error("trace database error while {context}: {source}")]
    Sql {
        context: String,
        source: rusqlite::Error,
    },

    /// A JSON column (a value, the arguments, a list) could not be decoded.
    #[error("cannot decode the {what} stored in the trace database: {source}: the file was not written by this carve or is damaged")]
    Decode {
        what: String,
        source: serde_json::Error,
    },

    /// A value could not be encoded as JSON for storage.
    #[error("cannot encode the {what} for the trace database: {source}")]
    Encode {
        what: String,
        source: serde_json::Error,
    },

    /// A row holds something no carve writes (an unknown outcome kind, a half-written exit...).
    #[error("the trace database holds an invalid {what}: the file was not written by this carve or is damaged")]
    InvalidRow { what: String },

    /// The recorder sent an event that contradicts earlier ones (e.g. ending a call never started).
    #[error("the recorder sent an invalid event for run {run}: {detail} (a bug in carve: please report it)")]
    InvalidEvent { run: RunId, detail: String },

    /// The requested run is not in this database.
    #[error("run {0} is not in this trace database: pick one of the recorded runs")]
    RunNotFound(RunId),

    /// `carve coverage` on a run recorded without `--coverage`.
    #[error(
        "run {run} of {} was recorded without --coverage, so it holds no line coverage: record again with `carve record --coverage --db {} -- PROGRAM`",
        path.display(),
        path.display()
    )]
    NoCoverage { path: PathBuf, run: RunId },

    /// The background writer could not be started or stopped abnormally.
    #[error("the trace writer failed: {0}")]
    WriterFailed(String),
}

impl StorageError {
    /// Wraps a SQLite error with what carve was doing when it happened.
    pub(crate) fn sql(context: impl Into<String>) -> impl FnOnce(rusqlite::Error) -> StorageError {
        let context = context.into();
        move |source| StorageError::Sql { context, source }
    }
}
