//! Iterators a program makes from a string: a fresh `Split<char>` as `"a b".split(' ')`.

use carve_storage::{Field, Value};

use crate::syntax::{char_lit, str_lit};

/// `"text".split('c')` for a `Split<char>` that has not moved: searching from 0 to the text's
/// end, not finished.
pub(crate) fn split_at_char(
    fields: &[Field],
    field: impl Fn(&[Field], &str) -> Option<Value>,
    usize_of: impl Fn(Option<Value>) -> Option<u128>,
) -> Option<String> {
    let Value::Struct { fields: inner, .. } = field(fields, "__0")? else {
        return None;
    };
    let Value::Struct {
        fields: searcher, ..
    } = field(&inner, "matcher")?
    else {
        return None;
    };
    let Value::Str {
        value: text,
        truncated: false,
        ..
    } = field(&searcher, "haystack")?
    else {
        return None;
    };
    let Value::Char { value: needle } = field(&searcher, "needle")? else {
        return None;
    };
    let len = text.len() as u128;
    let fresh = usize_of(field(&inner, "start")) == Some(0)
        && usize_of(field(&inner, "end")) == Some(len)
        && usize_of(field(&searcher, "finger")) == Some(0)
        && usize_of(field(&searcher, "finger_back")) == Some(len)
        && field(&inner, "allow_trailing_empty") == Some(Value::Bool { value: true })
        && field(&inner, "finished") == Some(Value::Bool { value: false });
    fresh.then(|| format!("{}.split({})", str_lit(&text), char_lit(needle)))
}
