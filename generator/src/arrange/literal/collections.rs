//! Sequences and standard collections by their recorded type: `vec![..]`, an array, a slice,
//! and `VecDeque`, `HashMap`, `HashSet`, `BTreeMap`, `BTreeSet` through their `from([..])`.
//!
//! An empty one names its element types (`Vec::<String>::new()`,
//! `std::collections::HashMap::<String, u32>::new()`): a bare `vec![]` leaves them to inference,
//! which `assert_eq!` or a generic parameter cannot do (E0282). Where a test cannot name an
//! element type (a private type of the crate), an empty collection is written untyped as an
//! argument, where the parameter's type decides, and not at all for `==`.

use crate::act::instance::test_spelling;
use crate::arrange::literal::error::LiteralError;
use crate::arrange::literal::std_values::{known_comparable, mentioned_types};
use crate::read::paths::split_top;
use crate::read::types::TypeFacts;

/// The standard collections written through `Type::from([..])`, by the path DWARF gives them:
/// (recorded path, the path a test writes, how many element types it has).
const COLLECTIONS: &[(&str, &str, usize)] = &[
    (
        "alloc::collections::vec_deque::VecDeque",
        "std::collections::VecDeque",
        1,
    ),
    (
        "std::collections::hash::map::HashMap",
        "std::collections::HashMap",
        2,
    ),
    (
        "std::collections::hash::set::HashSet",
        "std::collections::HashSet",
        1,
    ),
    (
        "alloc::collections::btree::map::BTreeMap",
        "std::collections::BTreeMap",
        2,
    ),
    (
        "alloc::collections::btree::set::BTreeSet",
        "std::collections::BTreeSet",
        1,
    ),
];

/// A sequence of recorded type `ty` whose elements are already written (`args`); `compare`:
/// for the right-hand side of `assert_eq!`.
pub(crate) fn render_seq(
    ty: &str,
    args: &[String],
    compare: bool,
    facts: &dyn TypeFacts,
) -> Result<String, LiteralError> {
    let items = args.join(", ");
    let unsupported = || LiteralError::UnsupportedType(ty.to_string());
    // The element type as a test writes it, needed only when there is no element to infer it
    // from; `None` when a test cannot name it.
    let typed_empty = |elem: &str| {
        args.is_empty()
            .then(|| element_type(elem, compare, facts))
            .flatten()
    };
    let text = text_bytes(args).map(|bytes| crate::syntax::byte_str_lit(&bytes));
    if let Some(params) = type_args(ty, "alloc::vec::Vec") {
        let elem = params.first().ok_or_else(unsupported)?;
        if let Some(text) = &text {
            return Ok(format!("{text}.to_vec()"));
        }
        return match (args.is_empty(), typed_empty(elem)) {
            (true, Some(t)) => Ok(format!("Vec::<{t}>::new()")),
            (true, None) if compare => Err(unsupported()),
            _ => Ok(format!("vec![{items}]")),
        };
    }
    if let Some(written) = std_collection(ty, args, compare, facts) {
        return written;
    }
    let (amp, slice) = if let Some(rest) = ty.strip_prefix("&mut [") {
        ("&mut ", rest)
    } else if let Some(rest) = ty.strip_prefix("&[") {
        ("&", rest)
    } else if let Some(rest) = ty.strip_prefix('[') {
        // An array `[T; N]`.
        let elem = rest.split(';').next().unwrap_or("");
        if let Some(text) = &text {
            return Ok(format!("*{text}"));
        }
        return match (args.is_empty(), typed_empty(elem)) {
            (true, Some(t)) => Ok(format!("([] as [{t}; 0])")),
            (true, None) if compare => Err(unsupported()),
            _ => Ok(format!("[{items}]")),
        };
    } else {
        return Err(unsupported());
    };
    let elem = slice.strip_suffix(']').unwrap_or(slice);
    if elem.contains(';') {
        // `&[T; N]`, recorded as the array itself.
        return Ok(match &text {
            Some(text) if amp == "&" => text.clone(),
            _ => format!("{amp}[{items}]"),
        });
    }
    if let Some(text) = text.filter(|_| amp == "&") {
        return Ok(format!("&{text}[..]"));
    }
    match (args.is_empty(), typed_empty(elem)) {
        (true, Some(t)) => Ok(format!("{amp}([] as [{t}; 0])[..]")),
        (true, None) if compare => Err(unsupported()),
        _ => Ok(format!("{amp}[{items}][..]")),
    }
}

/// One of [`COLLECTIONS`]: `std::collections::HashMap::from([(k, v), ..])` (map entries are
/// recorded as `(key, value)` tuples), or when empty `std::collections::HashMap::<K, V>::new()`.
/// A hash collection only with the standard hasher, the one `from` and `new` make. `None` for
/// any other type.
fn std_collection(
    ty: &str,
    args: &[String],
    compare: bool,
    facts: &dyn TypeFacts,
) -> Option<Result<String, LiteralError>> {
    let (recorded, written, n) = COLLECTIONS
        .iter()
        .find(|(recorded, ..)| type_args(ty, recorded).is_some())?;
    let params = type_args(ty, recorded)?;
    let unsupported = || LiteralError::UnsupportedType(ty.to_string());
    let hasher = params.get(*n).map(String::as_str);
    if recorded.starts_with("std::collections::hash::")
        && hasher.is_some_and(|h| h.trim() != "std::hash::random::RandomState")
    {
        return Some(Err(unsupported()));
    }
    if !args.is_empty() {
        return Some(Ok(format!("{written}::from([{}])", args.join(", "))));
    }
    let elems: Option<Vec<String>> = params
        .get(..*n)
        .map(|p| p.iter().map(|e| element_type(e, compare, facts)).collect())
        .unwrap_or_default();
    Some(match elems {
        Some(elems) => Ok(format!("{written}::<{}>::new()", elems.join(", "))),
        None if compare => Err(unsupported()),
        None => Ok(format!("{written}::new()")),
    })
}

/// Element type `elem` (recorded) as a test writes it; with `compare`, only when `==` is known
/// to compile on it (no element's `PartialEq` checks it when there is none).
fn element_type(elem: &str, compare: bool, facts: &dyn TypeFacts) -> Option<String> {
    let elem = elem.trim();
    if compare && !mentioned_types(elem).all(|t| known_comparable(t, facts)) {
        return None;
    }
    test_spelling(elem, facts)
}

/// The top-level type arguments of `ty` when it is `path<..>`: `alloc::vec::Vec<(u8, u8),
/// alloc::alloc::Global>` gives `(u8, u8)` and `alloc::alloc::Global`.
pub(super) fn type_args(ty: &str, path: &str) -> Option<Vec<String>> {
    let inner = ty
        .strip_prefix(path)?
        .strip_prefix('<')?
        .strip_suffix('>')?;
    Some(
        split_top(inner, ",")
            .into_iter()
            .map(|a| a.trim().to_string())
            .collect(),
    )
}

/// The bytes of a sequence of `u8`s written `104u8`, when a person writes them as a byte string
/// (`b"GET"`): all printable ASCII, `\n`, `\r` or `\t`. `None` for any other sequence, an empty
/// one included (its element type is named instead).
fn text_bytes(args: &[String]) -> Option<Vec<u8>> {
    if args.is_empty() {
        return None;
    }
    let bytes = args
        .iter()
        .map(|a| a.strip_suffix("u8")?.parse::<u8>().ok())
        .collect::<Option<Vec<u8>>>()?;
    bytes
        .iter()
        .all(|b| matches!(b, 0x20..=0x7e | b'\n' | b'\r' | b'\t'))
        .then_some(bytes)
}
