//! How model values map to SQLite columns, shared by the writer and the readers.
//!
//! Structured data (values, argument lists, parameter lists, string lists) is stored as the
//! serde_json form of the model types; enums without data are stored as short lowercase words;
//! `u64` ids and addresses are stored as the `i64` with the same bits.

use serde::Serialize;

use crate::error::StorageError;
use crate::model::{DirEntry, Found, Language, Outcome};

/// Serializes `value` to JSON text for a column.
pub(crate) fn to_json<T: Serialize + ?Sized>(
    value: &T,
    what: &str,
) -> Result<String, StorageError> {
    serde_json::to_string(value).map_err(|source| StorageError::Encode {
        what: what.to_owned(),
        source,
    })
}

/// SQLite integers are `i64`: a `u64` is stored with the same bits.
pub(crate) fn u64_to_sql(value: u64) -> i64 {
    value as i64
}

/// The inverse of [`u64_to_sql`].
pub(crate) fn u64_from_sql(value: i64) -> u64 {
    value as u64
}

pub(crate) fn language_to_str(language: Language) -> &'static str {
    match language {
        Language::Rust => "rust",
        Language::C => "c",
        Language::Other => "other",
    }
}

pub(crate) fn language_from_str(s: &str) -> Option<Language> {
    match s {
        "rust" => Some(Language::Rust),
        "c" => Some(Language::C),
        "other" => Some(Language::Other),
        _ => None,
    }
}

/// The `outcome_kind` and `panic_message` columns of an outcome.
pub(crate) fn outcome_to_columns(outcome: &Outcome) -> (&'static str, Option<&str>) {
    match outcome {
        Outcome::Returned => ("returned", None),
        Outcome::Panicked { message } => ("panicked", message.as_deref()),
        Outcome::Unwound => ("unwound", None),
        Outcome::Unfinished => ("unfinished", None),
    }
}

/// The outcome stored in `outcome_kind` / `panic_message`; a NULL kind is a call that never
/// ended. `None` for a kind no carve writes.
pub(crate) fn outcome_from_columns(
    kind: Option<&str>,
    panic_message: Option<String>,
) -> Option<Outcome> {
    match kind {
        None | Some("unfinished") => Some(Outcome::Unfinished),
        Some("returned") => Some(Outcome::Returned),
        Some("panicked") => Some(Outcome::Panicked {
            message: panic_message,
        }),
        Some("unwound") => Some(Outcome::Unwound),
        Some(_) => None,
    }
}

/// A [`Found`]'s columns in `file_reads`: kind, len, contents, entries (JSON), detail.
pub(crate) type FoundColumns = (
    &'static str,
    Option<i64>,
    Option<Vec<u8>>,
    Option<String>,
    Option<String>,
);

pub(crate) fn found_to_columns(found: &Found) -> Result<FoundColumns, StorageError> {
    Ok(match found {
        Found::Missing => ("missing", None, None, None, None),
        Found::File { len, contents } => {
            ("file", Some(u64_to_sql(*len)), contents.clone(), None, None)
        }
        Found::Dir { entries } => (
            "dir",
            None,
            None,
            entries
                .as_ref()
                .map(|e| to_json(e, "a directory's entries"))
                .transpose()?,
            None,
        ),
        Found::Symlink { target } => ("symlink", None, None, None, Some(target.clone())),
        Found::NotRead { reason } => ("not_read", None, None, None, Some(reason.clone())),
    })
}

/// The inverse of [`found_to_columns`]; `Err` names what does not fit.
pub(crate) fn found_from_columns(
    kind: &str,
    len: Option<i64>,
    contents: Option<Vec<u8>>,
    entries: Option<String>,
    detail: Option<String>,
) -> Result<Found, String> {
    Ok(match kind {
        "missing" => Found::Missing,
        "file" => Found::File {
            len: u64_from_sql(len.ok_or("a file without its length")?),
            contents,
        },
        "dir" => Found::Dir {
            entries: entries
                .map(|json| serde_json::from_str::<Vec<DirEntry>>(&json))
                .transpose()
                .map_err(|e| format!("directory entries: {e}"))?,
        },
        "symlink" => Found::Symlink {
            target: detail.unwrap_or_default(),
        },
        "not_read" => Found::NotRead {
            reason: detail.unwrap_or_default(),
        },
        other => return Err(format!("kind {other:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u64_values_survive_the_trip_through_i64() {
        for v in [0, 1, i64::MAX as u64, i64::MAX as u64 + 1, u64::MAX] {
            assert_eq!(u64_from_sql(u64_to_sql(v)), v);
        }
    }

    #[test]
    fn every_outcome_survives_its_columns() {
        for outcome in [
            Outcome::Returned,
            Outcome::Panicked { message: None },
            Outcome::Panicked {
                message: Some("boom".to_owned()),
            },
            Outcome::Unwound,
            Outcome::Unfinished,
        ] {
            let (kind, message) = outcome_to_columns(&outcome);
            let back = outcome_from_columns(Some(kind), message.map(str::to_owned));
            assert_eq!(back, Some(outcome));
        }
    }

    #[test]
    fn every_language_survives_its_column() {
        for lang in [Language::Rust, Language::C, Language::Other] {
            assert_eq!(language_from_str(language_to_str(lang)), Some(lang));
        }
    }
}
