//! Values written from their parts already written: a struct or variant literal.

use crate::arrange::literal::error::LiteralError;
use crate::syntax;

/// `Path`, `Path(a, b)` or `Path { x: a }`: tuple fields are recorded as `__0`, `__1`...; a
/// named field is written only when its name is an identifier.
pub(crate) fn compose(
    path: &str,
    fields: &[carve_storage::Field],
    args: &[String],
    unit: bool,
) -> Result<String, LiteralError> {
    if fields.is_empty() {
        return Ok(if unit {
            path.to_string()
        } else {
            format!("{path} {{}}")
        });
    }
    if fields.iter().all(|f| is_positional(&f.name)) {
        return Ok(format!("{path}({})", args.join(", ")));
    }
    let named = fields
        .iter()
        .zip(args)
        .map(|(f, a)| Ok(format!("{}: {a}", syntax::ident(&f.name)?)))
        .collect::<Result<Vec<String>, LiteralError>>()?;
    Ok(format!("{path} {{ {} }}", named.join(", ")))
}

/// A tuple field's recorded name: `__0`, `__1`...
pub(crate) fn is_positional(name: &str) -> bool {
    name.strip_prefix("__")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}
