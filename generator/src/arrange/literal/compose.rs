//! Values written from their parts already written: a struct or variant literal, a sequence by
//! its recorded type (`vec![..]`, an array, a `VecDeque`...).

use crate::arrange::literal::error::LiteralError;
use crate::read::types::Prim;
use crate::syntax;

/// A sequence by its recorded type: `vec![..]`, an array `[..]`, or a slice `&[..][..]` (the
/// `[..]` makes it `&[T]`, not `&[T; N]`, so a generic parameter is the recorded instance). An
/// empty one names its element type when that is a primitive, so that it infers.
pub(crate) fn render_seq(ty: &str, args: &[String]) -> Result<String, LiteralError> {
    let items = args.join(", ");
    let typed_empty = |elem: &str| Prim::from_name(elem.trim()).map(|p| p.name());
    if let Some(rest) = ty.strip_prefix("alloc::vec::Vec<") {
        let elem = rest.split(',').next().unwrap_or("").trim_end_matches('>');
        return Ok(match (args.is_empty(), typed_empty(elem)) {
            (true, Some(p)) => format!("Vec::<{p}>::new()"),
            _ => format!("vec![{items}]"),
        });
    }
    let (amp, slice) = if let Some(rest) = ty.strip_prefix("&mut [") {
        ("&mut ", rest)
    } else if let Some(rest) = ty.strip_prefix("&[") {
        ("&", rest)
    } else if let Some(rest) = ty.strip_prefix('[') {
        // An array `[T; N]`.
        let elem = rest.split(';').next().unwrap_or("");
        return Ok(match (args.is_empty(), typed_empty(elem)) {
            (true, Some(p)) => format!("([] as [{p}; 0])"),
            _ => format!("[{items}]"),
        });
    } else {
        return Err(LiteralError::UnsupportedType(ty.to_string()));
    };
    let elem = slice.strip_suffix(']').unwrap_or(slice);
    if elem.contains(';') {
        // `&[T; N]`, recorded as the array itself.
        return Ok(format!("{amp}[{items}]"));
    }
    Ok(match (args.is_empty(), typed_empty(elem)) {
        (true, Some(p)) => format!("{amp}([] as [{p}; 0])[..]"),
        _ => format!("{amp}[{items}][..]"),
    })
}

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
