//! A function given as a value (`Value::Function`: a function item the recorder named from its
//! instance's code) written as a person names it in a call: `Ord::cmp`, `PartialEq::eq`,
//! `app::double`.
//!
//! The recorded path is the definition's, demangled (`core::cmp::impls::<impl core::cmp::Ord
//! for u32>::cmp`), which no test can write: a trait's method is written by the trait
//! (`Ord::cmp`, its `Self` inferred from the parameter's bound, as the program wrote it), an
//! inherent method by its type without generics, a free function by its path.

use carve_storage::closing_angle;

use crate::arrange::literal::error::LiteralError;
use crate::read::paths::{split_impl_block, split_trait_impl};
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
        None => std_path(&owner),
    };
    Ok(format!("{written}::{method}"))
}

/// `(TRAIT or TYPE without generics, method)` of a method defined in an impl block:
/// `a::<impl TRAIT for TYPE>::m` (legacy mangling), `<TYPE as TRAIT>::m` (v0), `a::<impl TYPE>::m`.
fn impl_block(path: &str) -> Option<(String, String)> {
    let (owner, method) = match split_trait_impl(path).or_else(|| split_impl_block(path)) {
        Some((_, tr, method)) => (tr, method),
        None => {
            // An inherent impl: `a::<impl TYPE>::m`.
            let inner_and_rest = &path[path.find("<impl ")? + 1..];
            let end = closing_angle(inner_and_rest)?;
            let ty = inner_and_rest[..end].strip_prefix("impl ")?;
            let method = inner_and_rest[end + 1..].strip_prefix("::")?;
            (ty.trim().to_string(), method.to_string())
        }
    };
    if method.is_empty() || method.contains("::") || method.contains('<') {
        return None;
    }
    Some((strip_generics(&owner).to_string(), method))
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
