//! The writer's side of counting equivalent calls instead of storing them (see
//! [`crate::repeats`] for the equivalence): a call that ended as a repeat leaves the waiting
//! rows (or the table, when its row went already), with the calls below it, and its id is
//! stored as a repeat of the representative's; its repeats are stored as runs of ids at the end
//! of each transaction.

use std::ops::Range;

use rusqlite::params;

use super::{EndColumns, EventWriter, StartColumns};
use crate::codec;
use crate::error::StorageError;
use crate::repeats::{digest, Ended, IdRun, Kept};

const CALLS_BELOW: &str = "SELECT id FROM calls WHERE run_id = ?1 AND thread = ?2 \
    AND id > ?3 AND id <= ?4 ORDER BY id";
const DELETE_CALLS: &str = "DELETE FROM calls WHERE run_id = ?1 AND thread = ?2 \
    AND id >= ?3 AND id <= ?4";
const DELETE_CALL: &str = "DELETE FROM calls WHERE run_id = ?1 AND id = ?2";
const RUNS_OF: &str = "SELECT first, step, count, thread FROM repeats \
    WHERE run_id = ?1 AND representative = ?2";
const DELETE_RUNS_OF: &str = "DELETE FROM repeats WHERE run_id = ?1 AND representative = ?2";
const STORE_RUN: &str = "INSERT OR REPLACE INTO repeats \
    (run_id, representative, first, step, count, thread) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

/// What stands for an absent JSON column in a digest (no JSON text is a NUL byte).
const ABSENT: &[u8] = b"\0";

impl StartColumns {
    /// The digest of what the equivalence compares of a call's start: its arguments and
    /// objects (computed as it was queued, or now).
    pub(super) fn digest(&self, text: &[u8]) -> u128 {
        self.digest.unwrap_or_else(|| self.digest_of(text))
    }

    pub(super) fn digest_of(&self, text: &[u8]) -> u128 {
        let objects = self.objects.clone().map_or(ABSENT, |r| &text[r]);
        digest(2, &[&text[self.args.clone()], objects])
    }
}

impl EndColumns {
    /// The digest of what the equivalence compares of a call's end: its outcome, return value,
    /// state after and reads of the world (computed as it was queued, or now).
    fn digest(&self, text: &[u8]) -> u128 {
        self.digest.unwrap_or_else(|| self.digest_of(text))
    }

    pub(super) fn digest_of(&self, text: &[u8]) -> u128 {
        let json = |r: &Option<Range<usize>>| r.clone().map_or(ABSENT, |r| &text[r]);
        let message = self.panic_message.as_deref().map_or(ABSENT, str::as_bytes);
        digest(
            3,
            &[
                self.kind.as_bytes(),
                message,
                json(&self.ret),
                json(&self.after),
                json(&self.touches),
            ],
        )
    }
}

impl EventWriter {
    /// Whether `end`'s call was counted as a repeat: then it is gone, with the calls below it,
    /// and `end` is not to be stored.
    pub(super) fn counted_as_repeat(&mut self, end: &EndColumns, text: &[u8]) -> bool {
        let Some(repeats) = &mut self.repeats else {
            return false;
        };
        let ended = repeats.ended(end.call.0, end.digest(text));
        let Ended::Repeat {
            id,
            thread,
            last,
            onto,
            ..
        } = ended
        else {
            return false;
        };
        let dropped = if last == id {
            self.drop_leaf((id, thread), onto.id)
        } else {
            self.drop_with_calls_below(text, id, (thread, last), onto)
        };
        match dropped {
            Ok(true) => return true,
            Ok(false) => {}
            Err(e) => self.note(e),
        }
        if let Some(repeats) = &mut self.repeats {
            repeats.keep_after_all(ended);
        }
        false
    }

    /// Takes out `id` (of `thread`), which has no calls below it, as a repeat of `onto`.
    fn drop_leaf(&mut self, (id, thread): (u64, i32), onto: u64) -> Result<bool, StorageError> {
        let waiting = self
            .rows
            .rows
            .binary_search_by_key(&id, |row| row.start.call.0);
        match waiting {
            Ok(at) => {
                self.rows.rows.remove(at);
            }
            Err(_) => {
                let error = self.sql_error(|| format!("taking out call {id}, a repeat"));
                self.conn
                    .prepare_cached(DELETE_CALL)
                    .and_then(|mut stmt| stmt.execute(params![self.run.0, codec::u64_to_sql(id)]))
                    .map_err(error)?;
            }
        }
        if let Some(repeats) = &mut self.repeats {
            repeats.repeat(onto, (id, thread), &[]);
        }
        Ok(true)
    }

    /// Takes out `id` and the calls below it (the calls of `thread` up to `last`), each a
    /// repeat of its counterpart below `onto`; `false` when the calls stored below the two do
    /// not pair up (then nothing changed).
    fn drop_with_calls_below(
        &mut self,
        text: &[u8],
        id: u64,
        (thread, last): (i32, u64),
        onto: Kept,
    ) -> Result<bool, StorageError> {
        // Everything below the two is in the table, and every run of repeats too.
        self.flush_rows(text);
        self.write_repeats();
        let mine = self.calls_below(thread, id, last)?;
        let theirs = self.calls_below(onto.thread, onto.id, onto.last)?;
        if mine.len() != theirs.len() {
            return Ok(false);
        }
        let mut moved = Vec::with_capacity(mine.len());
        for &below in &mine {
            moved.push(self.take_runs_of(below)?);
        }
        let error = self.sql_error(|| format!("taking out call {id}, a repeat, with its calls"));
        self.conn
            .prepare_cached(DELETE_CALLS)
            .and_then(|mut stmt| {
                stmt.execute(params![
                    self.run.0,
                    thread,
                    codec::u64_to_sql(id),
                    codec::u64_to_sql(last)
                ])
            })
            .map_err(error)?;
        if let Some(repeats) = &mut self.repeats {
            repeats.repeat(onto.id, (id, thread), &[]);
            for ((d, o), runs) in mine.into_iter().zip(theirs).zip(moved) {
                repeats.repeat(o, (d, thread), &runs);
            }
        }
        Ok(true)
    }

    /// The ids of the calls of `thread` after `id` up to `last`, in order.
    fn calls_below(&self, thread: i32, id: u64, last: u64) -> Result<Vec<u64>, StorageError> {
        let error = self.sql_error(|| format!("reading the calls below call {id}"));
        let (from, to) = (codec::u64_to_sql(id), codec::u64_to_sql(last));
        self.conn
            .prepare_cached(CALLS_BELOW)
            .and_then(|mut stmt| {
                stmt.query_map(params![self.run.0, thread, from, to], |row| {
                    row.get::<_, i64>(0).map(codec::u64_from_sql)
                })?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(error)
    }

    /// The runs of repeats stored under `representative`, taken out of the table.
    fn take_runs_of(&self, representative: u64) -> Result<Vec<IdRun>, StorageError> {
        let error = self.sql_error(|| format!("moving the repeats of call {representative}"));
        let rep = codec::u64_to_sql(representative);
        let runs = self
            .conn
            .prepare_cached(RUNS_OF)
            .and_then(|mut stmt| {
                stmt.query_map(params![self.run.0, rep], |row| {
                    Ok(IdRun {
                        first: codec::u64_from_sql(row.get(0)?),
                        step: codec::u64_from_sql(row.get(1)?),
                        count: codec::u64_from_sql(row.get(2)?),
                        thread: row.get(3)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(error)?;
        if !runs.is_empty() {
            let error = self.sql_error(|| format!("moving the repeats of call {representative}"));
            self.conn
                .prepare_cached(DELETE_RUNS_OF)
                .and_then(|mut stmt| stmt.execute(params![self.run.0, rep]))
                .map_err(error)?;
        }
        Ok(runs)
    }

    /// Stores the runs of repeats that changed since the last time.
    pub(super) fn write_repeats(&mut self) {
        let Some(repeats) = &mut self.repeats else {
            return;
        };
        for (representative, run) in repeats.take_changed() {
            let error = self.sql_error(|| format!("storing the repeats of call {representative}"));
            let stored = self.conn.prepare_cached(STORE_RUN).and_then(|mut stmt| {
                stmt.execute(params![
                    self.run.0,
                    codec::u64_to_sql(representative),
                    codec::u64_to_sql(run.first),
                    codec::u64_to_sql(run.step),
                    codec::u64_to_sql(run.count),
                    run.thread,
                ])
            });
            if let Err(e) = stored.map_err(error) {
                self.note(e);
            }
        }
    }
}
