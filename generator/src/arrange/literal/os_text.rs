//! Paths and OS strings recorded as their text, and `Chars` as the text it has left: written as
//! the std constructor a user writes (`std::path::Path::new("a/b")`, `"ab".chars()`).

use carve_storage::Value;

use crate::arrange::literal::error::{mismatch, LiteralError};
use crate::read::types::{os_text_constructor, text_iterator_method, DeclType};
use crate::syntax::str_lit;

/// A path or OS string recorded as its text (`&std::path::Path`, `PathBuf`, `&OsStr`,
/// `OsString`), written as the std constructor a user writes: `std::path::Path::new("a/b")`.
/// `None` when the value is no such text or the declared type takes another kind of value.
pub(crate) fn os_text(value: &Value, decl: &DeclType) -> Option<Result<String, LiteralError>> {
    let Value::Str {
        ty,
        value: text,
        truncated,
    } = value
    else {
        return None;
    };
    if let Some(method) = text_iterator_method(ty) {
        let fits = matches!(decl, DeclType::Generic(_) | DeclType::ImplTrait)
            || matches!(decl, DeclType::Other(d) if d == ty);
        return Some(match (fits, truncated) {
            (false, _) => Err(mismatch(value, decl)),
            (true, true) => Err(LiteralError::Undecoded),
            (true, false) => Ok(format!("{}.{method}()", str_lit(text))),
        });
    }
    let ctor = os_text_constructor(ty)?;
    let fits = match decl {
        DeclType::Other(_) | DeclType::Generic(_) | DeclType::ImplTrait => true,
        DeclType::Ref { inner, .. } => matches!(**inner, DeclType::Other(_)),
        _ => false,
    };
    Some(match (fits, truncated) {
        (false, _) => Err(mismatch(value, decl)),
        (true, true) => Err(LiteralError::Undecoded),
        (true, false) => Ok(format!("{ctor}({})", str_lit(text))),
    })
}
