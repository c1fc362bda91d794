//! A function given as a value (`Value::Function`: a function item the recorder named from its
//! instance's code) written as a person names it in a call: `Ord::cmp`, `PartialEq::eq`,
//! `app::double`.
//!
//! The recorded path is the definition's, demangled (`core::cmp::impls::<impl core::cmp::Ord
//! for u32>::cmp`), which no test can write: a trait's method is written by the trait
//! (`Ord::cmp`, its `Self` inferred from the parameter's bound, as the program wrote it), an
//! inherent method by its type without generics, a free function by its path.

use crate::arrange::literal::error::LiteralError;
use crate::read::types::strip_generics;

/// Traits of the prelude (by their definition paths), written by their name alone.
const PRELUDE: [(&str, &str); 13] = [
    ("core::cmp::Ord", "Ord"),
    ("core::cmp::PartialOrd", "PartialOrd"),
    ("core::cmp::PartialEq", "PartialEq"),
    ("core::cmp::Eq", "Eq"),
    ("core::clone::Clone", "Clone"),
    ("core::default::Default", "Default"),
    ("core::convert::From", "From"),
    ("core::convert::Into", "Into"),
    ("core::convert::AsRef", "AsRef"),
    ("core::convert::AsMut", "AsMut"),
    ("core::iter::traits::iterator::Iterator", "Iterator"),
    ("alloc::string::ToString", "ToString"),
    ("core::iter::traits::collect::IntoIterator", "IntoIterator"),
];

/// The expression naming the function at `path`, when a test can write one.
pub(crate) fn function_path(path: &str) -> Result<String, LiteralError> {
    let refused = || LiteralError::UnsupportedType(format!("the function {path}"));
    if path.contains("{{") || path.contains('{') {
        return Err(refused()); // a closure or a shim: no name
    }
    let (owner, method) = match impl_block(path) {
        Some((owner, method)) => (owner, method),
        None => return Ok(std_path(path)),
    };
    let written = match PRELUDE.iter().find(|(p, _)| *p == owner) {
        Some((_, name)) => name.to_string(),
        None => std_path(owner),
    };
    Ok(format!("{written}::{method}"))
}

/// `(TRAIT or TYPE without generics, method)` of a method defined in an impl block:
/// `a::<impl TRAIT for TYPE>::m` (legacy mangling), `<TYPE as TRAIT>::m` (v0), `a::<impl TYPE>::m`.
fn impl_block(path: &str) -> Option<(&str, &str)> {
    let open = path.find('<')?;
    let close = matching(path, open)?;
    let method = path[close + 1..].strip_prefix("::")?;
    if method.contains("::") || method.contains('<') {
        return None;
    }
    let inside = &path[open + 1..close];
    let owner = if let Some(block) = inside.strip_prefix("impl ") {
        match top_level(block, " for ") {
            Some(at) => &block[..at],
            None => block,
        }
    } else {
        let at = top_level(inside, " as ")?;
        &inside[at + " as ".len()..]
    };
    Some((strip_generics(owner.trim()), method))
}

/// The index of the `>` closing the `<` at `open` (a signature's `->` closes nothing).
fn matching(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'<' => depth += 1,
            b'>' if i > 0 && bytes[i - 1] == b'-' => {}
            b'>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Where `needle` first occurs in `text` outside any brackets.
fn top_level(text: &str, needle: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    for i in 0..bytes.len() {
        match bytes[i] {
            b'<' | b'(' | b'[' => depth += 1,
            b'>' if i > 0 && bytes[i - 1] == b'-' => {}
            b'>' | b')' | b']' => depth -= 1,
            _ if depth == 0 && text[i..].starts_with(needle) => return Some(i),
            _ => {}
        }
    }
    None
}

/// `alloc::…`, which a test cannot name without `extern crate alloc`, as `std::…`.
fn std_path(path: &str) -> String {
    match path.strip_prefix("alloc::") {
        Some(rest) => format!("std::{rest}"),
        None => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trait_s_method_is_written_by_its_trait() {
        let ok = |p: &str| function_path(p).unwrap();
        assert_eq!(
            ok("core::cmp::impls::<impl core::cmp::Ord for u32>::cmp"),
            "Ord::cmp"
        );
        assert_eq!(
            ok("core::tuple::<impl core::cmp::PartialEq for ()>::eq"),
            "PartialEq::eq"
        );
        assert_eq!(
            ok("core::cmp::impls::<impl core::cmp::PartialEq<&B> for &A>::eq"),
            "PartialEq::eq"
        );
        assert_eq!(ok("<u32 as core::cmp::Ord>::cmp"), "Ord::cmp");
        assert_eq!(ok("<app::Point as app::Shape>::area"), "app::Shape::area");
        assert_eq!(
            ok("alloc::vec::<impl alloc::vec::Vec<T,A>>::len"),
            "std::vec::Vec::len"
        );
        assert_eq!(ok("app::double"), "app::double");
        assert_eq!(ok("alloc::string::String::new"), "std::string::String::new");
    }

    #[test]
    fn a_closure_has_no_name() {
        assert!(function_path("app::main::{{closure}}").is_err());
    }
}
