//! Call form: a method of a standard-library trait implemented by one of the crate's types
//! (`impl FromStr for ByteSize`, `impl From<u64> for Id`, `impl Add for Size`, `impl Default`).
//!
//! Most of a real crate's public surface is reached this way, but the trait's source is not in
//! the crate, so its signature comes from the recorded instance (DWARF gives each parameter's
//! concrete type) and the test calls it through the trait's public path:
//! `<bytesize::ByteSize as std::str::FromStr>::from_str("1 KiB")` (which render spells
//! `"1 KiB".parse::<bytesize::ByteSize>()`, `render/spell/parse.rs`), or `x.add(y)` with the
//! trait imported. Methods whose arguments a test cannot write (a `Formatter`, a `Hasher`) stay
//! unsupported, with that as the reason.

use carve_storage::FunctionInfo;

use crate::read::crate_api::{FnApi, ParamApi};
use crate::read::types::DeclType;

/// Standard traits by their last path segment: where a test names them. rustc's DWARF spells
/// them by their defining module (`core::str::traits::FromStr`), which is private.
const PUBLIC_PATHS: &[(&str, &str)] = &[
    ("FromStr", "std::str::FromStr"),
    ("From", "std::convert::From"),
    ("TryFrom", "std::convert::TryFrom"),
    ("AsRef", "std::convert::AsRef"),
    ("AsMut", "std::convert::AsMut"),
    ("Default", "std::default::Default"),
    ("Clone", "std::clone::Clone"),
    ("PartialEq", "std::cmp::PartialEq"),
    ("PartialOrd", "std::cmp::PartialOrd"),
    ("Ord", "std::cmp::Ord"),
    ("Iterator", "std::iter::Iterator"),
    ("DoubleEndedIterator", "std::iter::DoubleEndedIterator"),
    ("Extend", "std::iter::Extend"),
    ("FromIterator", "std::iter::FromIterator"),
    ("IntoIterator", "std::iter::IntoIterator"),
    ("ExactSizeIterator", "std::iter::ExactSizeIterator"),
    ("Add", "std::ops::Add"),
    ("Sub", "std::ops::Sub"),
    ("Mul", "std::ops::Mul"),
    ("Div", "std::ops::Div"),
    ("Rem", "std::ops::Rem"),
    ("Neg", "std::ops::Neg"),
    ("Not", "std::ops::Not"),
    ("BitAnd", "std::ops::BitAnd"),
    ("BitOr", "std::ops::BitOr"),
    ("BitXor", "std::ops::BitXor"),
    ("Shl", "std::ops::Shl"),
    ("Shr", "std::ops::Shr"),
    ("AddAssign", "std::ops::AddAssign"),
    ("SubAssign", "std::ops::SubAssign"),
    ("MulAssign", "std::ops::MulAssign"),
    ("DivAssign", "std::ops::DivAssign"),
    ("Index", "std::ops::Index"),
    ("IndexMut", "std::ops::IndexMut"),
    ("Deref", "std::ops::Deref"),
    ("Borrow", "std::borrow::Borrow"),
];

/// Argument types a test cannot build: the reason the call stays unsupported.
const UNWRITABLE: &[(&str, &str)] = &[
    ("core::fmt::Formatter", "takes a Formatter"),
    ("Hasher", "takes a Hasher"),
];

/// The public path of standard trait `tr` (as DWARF spells it, without generic arguments),
/// when it is one this rule knows.
pub fn public_path(tr: &str) -> Option<&'static str> {
    let std_crate = ["core::", "alloc::", "std::"]
        .iter()
        .any(|p| tr.starts_with(p));
    let last = tr.rsplit("::").next()?;
    std_crate
        .then(|| PUBLIC_PATHS.iter().find(|(name, _)| *name == last))
        .flatten()
        .map(|(_, path)| *path)
}

/// The method as a test can call it, from the recorded instance's parameter and return types;
/// `Err` with the reason when a parameter cannot be written by a test.
pub fn method_api(info: &FunctionInfo, method: &str) -> Result<FnApi, &'static str> {
    api_from_instance(info, method, false)
}

/// The method as a test calls it by its full path with the receiver as the first argument
/// (`<[u8; 4] as hex::FromHex>::from_hex("cafebabe")`, `<str as m::Shout>::shout("hi")`): for
/// the crate's traits implemented by standard or foreign types, whose receiver is a value a
/// literal can write rather than an object to rebuild.
pub fn path_call_api(info: &FunctionInfo, method: &str) -> Result<FnApi, &'static str> {
    api_from_instance(info, method, true)
}

fn api_from_instance(
    info: &FunctionInfo,
    method: &str,
    receiver_as_arg: bool,
) -> Result<FnApi, &'static str> {
    if let Some((_, why)) = UNWRITABLE
        .iter()
        .find(|(ty, _)| info.params.iter().any(|p| p.type_name.contains(ty)))
    {
        return Err(why);
    }
    let has_receiver = !receiver_as_arg && info.params.first().is_some_and(|p| p.name == "self");
    let mut_receiver = has_receiver && info.params[0].type_name.starts_with("&mut ");
    let params = info
        .params
        .iter()
        .skip(usize::from(has_receiver))
        .map(|p| ParamApi {
            name: p.name.clone(),
            ty: DeclType::parse(&std_spelling(&p.type_name), &[]),
            bound: None,
        })
        .collect();
    let ret_written = info
        .return_type
        .as_deref()
        .map_or_else(|| "()".to_string(), std_spelling);
    let ret = info
        .return_type
        .as_deref()
        .map_or(DeclType::Unit, |r| DeclType::parse(&std_spelling(r), &[]));
    Ok(FnApi {
        name: method.to_string(),
        ident: method.to_string(),
        public: true,
        has_receiver,
        mut_receiver,
        self_by_value: false,
        params,
        ret,
        ret_written,
        ret_ok_unit: false,
        blocker: None,
        uninferable_generics: 0,
        signature: String::new(),
    })
}

/// A DWARF type name as a test writes it: `alloc::string::String` is `String`, the standard
/// library's `alloc::` and `core::` paths are spelled `std::`, and the default allocator
/// argument is dropped (`alloc::vec::Vec<u8, alloc::alloc::Global>` is `std::vec::Vec<u8>`).
pub fn std_spelling(ty: &str) -> String {
    let ty = ty
        .replace("alloc::string::String", "String")
        .replace(", alloc::alloc::Global", "");
    let mut out = String::with_capacity(ty.len());
    let mut rest = ty.as_str();
    while !rest.is_empty() {
        let at_path_start = out
            .chars()
            .last()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
        if at_path_start {
            if let Some(r) = rest
                .strip_prefix("alloc::")
                .or_else(|| rest.strip_prefix("core::"))
            {
                out.push_str("std::");
                rest = r;
                continue;
            }
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    for (private, public) in PUBLIC_STD_TYPES {
        out = crate::read::paths::spell_public(&out, &[(private.to_string(), public.to_string())]);
    }
    iterator_modules(&out)
}

/// `std::iter::adapters::map::Map` as `std::iter::Map`: every iterator adapter and source is
/// defined in a private module of its own and re-exported at `std::iter`.
fn iterator_modules(ty: &str) -> String {
    let mut out = ty.to_string();
    for private in ["std::iter::adapters::", "std::iter::sources::"] {
        let mut result = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find(private) {
            result.push_str(&rest[..at]);
            let after = &rest[at + private.len()..];
            let module = after
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            match after[module..].strip_prefix("::") {
                Some(tail) => {
                    result.push_str("std::iter::");
                    rest = tail;
                }
                None => {
                    result.push_str(private);
                    rest = after;
                }
            }
        }
        result.push_str(rest);
        out = result;
    }
    out
}

/// Standard types whose defining module is private, by the path DWARF gives them (after the
/// `alloc::`/`core::` to `std::` rewrite), with the path a test writes.
const PUBLIC_STD_TYPES: &[(&str, &str)] = &[
    (
        "std::hash::random::RandomState",
        "std::collections::hash_map::RandomState",
    ),
    (
        "std::hash::random::DefaultHasher",
        "std::collections::hash_map::DefaultHasher",
    ),
    (
        "std::collections::hash::map::HashMap",
        "std::collections::HashMap",
    ),
    (
        "std::collections::hash::set::HashSet",
        "std::collections::HashSet",
    ),
    (
        "std::collections::btree::map::BTreeMap",
        "std::collections::BTreeMap",
    ),
    (
        "std::collections::btree::set::BTreeSet",
        "std::collections::BTreeSet",
    ),
    (
        "std::collections::vec_deque::VecDeque",
        "std::collections::VecDeque",
    ),
    (
        "std::collections::binary_heap::BinaryHeap",
        "std::collections::BinaryHeap",
    ),
    (
        "std::collections::linked_list::LinkedList",
        "std::collections::LinkedList",
    ),
    ("std::num::nonzero::", "std::num::"),
    ("std::ops::range::", "std::ops::"),
    ("std::ptr::non_null::NonNull", "std::ptr::NonNull"),
    ("std::ffi::c_str::CString", "std::ffi::CString"),
    ("std::ffi::c_str::CStr", "std::ffi::CStr"),
    ("std::ffi::os_str::OsString", "std::ffi::OsString"),
    ("std::ffi::os_str::OsStr", "std::ffi::OsStr"),
    // The rest of a collection's module after its type's own entry above: its iterators.
    (
        "std::collections::hash::map::",
        "std::collections::hash_map::",
    ),
    (
        "std::collections::hash::set::",
        "std::collections::hash_set::",
    ),
    (
        "std::collections::btree::map::",
        "std::collections::btree_map::",
    ),
    (
        "std::collections::btree::set::",
        "std::collections::btree_set::",
    ),
    // Iterators, each re-exported where a program names it (`std::slice::Iter`).
    ("std::slice::iter::", "std::slice::"),
    ("std::str::iter::", "std::str::"),
    ("std::vec::into_iter::IntoIter", "std::vec::IntoIter"),
    ("std::vec::drain::Drain", "std::vec::Drain"),
    ("std::iter::sources::empty::Empty", "std::iter::Empty"),
    ("std::iter::sources::once::Once", "std::iter::Once"),
    ("std::iter::sources::repeat::Repeat", "std::iter::Repeat"),
    ("std::iter::adapters::cloned::Cloned", "std::iter::Cloned"),
    ("std::iter::adapters::copied::Copied", "std::iter::Copied"),
    ("std::iter::adapters::chain::Chain", "std::iter::Chain"),
    ("std::iter::adapters::cycle::Cycle", "std::iter::Cycle"),
    (
        "std::iter::adapters::enumerate::Enumerate",
        "std::iter::Enumerate",
    ),
    ("std::iter::adapters::fuse::Fuse", "std::iter::Fuse"),
    (
        "std::iter::adapters::peekable::Peekable",
        "std::iter::Peekable",
    ),
    ("std::iter::adapters::rev::Rev", "std::iter::Rev"),
    ("std::iter::adapters::skip::Skip", "std::iter::Skip"),
    ("std::iter::adapters::step_by::StepBy", "std::iter::StepBy"),
    ("std::iter::adapters::take::Take", "std::iter::Take"),
    ("std::iter::adapters::zip::Zip", "std::iter::Zip"),
];

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use carve_storage::{FunctionId, Language, ParamInfo};

    /// A recorded function with these parameters (name, DWARF type) and return type.
    pub(crate) fn info(params: &[(&str, &str)], ret: Option<&str>) -> FunctionInfo {
        FunctionInfo {
            id: FunctionId(1),
            path: "x".into(),
            name: "x".into(),
            linkage_name: None,
            language: Language::Rust,
            decl_file: None,
            decl_line: None,
            low_pc: 0,
            params: params
                .iter()
                .map(|(n, t)| ParamInfo {
                    name: (*n).into(),
                    type_name: (*t).into(),
                })
                .collect(),
            return_type: ret.map(Into::into),
        }
    }

    #[test]
    fn std_traits_are_named_by_their_public_path() {
        assert_eq!(
            public_path("core::str::traits::FromStr"),
            Some("std::str::FromStr")
        );
        assert_eq!(public_path("core::ops::arith::Add"), Some("std::ops::Add"));
        assert_eq!(
            public_path("core::iter::traits::collect::IntoIterator"),
            Some("std::iter::IntoIterator")
        );
        assert_eq!(public_path("mycrate::FromStr"), None);
        assert_eq!(public_path("core::fmt::Display"), None);
    }

    #[test]
    fn std_types_are_spelled_as_a_test_writes_them() {
        assert_eq!(
            std_spelling("alloc::vec::Vec<u8, alloc::alloc::Global>"),
            "std::vec::Vec<u8>"
        );
        assert_eq!(
            std_spelling("core::option::Option<&alloc::string::String>"),
            "std::option::Option<&String>"
        );
        assert_eq!(std_spelling("[u8; 4]"), "[u8; 4]");
        assert_eq!(
            std_spelling(
                "core::iter::adapters::map::Map<core::iter::sources::repeat::Repeat<u8>, F>"
            ),
            "std::iter::Map<std::iter::Repeat<u8>, F>"
        );
        assert_eq!(
            std_spelling("m::Map<alloc::string::String, std::hash::random::RandomState>"),
            "m::Map<String, std::collections::hash_map::RandomState>"
        );
        assert_eq!(
            std_spelling("core::num::nonzero::NonZero<usize>"),
            "std::num::NonZero<usize>"
        );
        assert_eq!(std_spelling("mycore::x"), "mycore::x");
        // Iterators are named where std re-exports them.
        assert_eq!(
            std_spelling("core::iter::adapters::copied::Copied<core::slice::iter::Iter<i32>>"),
            "std::iter::Copied<std::slice::Iter<i32>>"
        );
        assert_eq!(
            std_spelling(
                "alloc::collections::btree::map::IntoIter<&str, i32, alloc::alloc::Global>"
            ),
            "std::collections::btree_map::IntoIter<&str, i32>"
        );
        assert_eq!(
            std_spelling("std::collections::hash::map::HashMap<u8, u8>"),
            "std::collections::HashMap<u8, u8>"
        );
    }

    #[test]
    fn the_signature_comes_from_the_recorded_instance() {
        let api = method_api(
            &info(
                &[("s", "&str")],
                Some("core::result::Result<b::B, alloc::string::String>"),
            ),
            "from_str",
        )
        .unwrap();
        assert!(!api.has_receiver);
        assert_eq!(api.params.len(), 1);
        let api = method_api(
            &info(
                &[("self", "&mut b::Iter")],
                Some("core::option::Option<u8>"),
            ),
            "next",
        )
        .unwrap();
        assert!(api.has_receiver && api.mut_receiver && api.params.is_empty());
        assert_eq!(
            method_api(
                &info(
                    &[("self", "&b::B"), ("f", "&mut core::fmt::Formatter")],
                    None
                ),
                "fmt"
            )
            .unwrap_err(),
            "takes a Formatter"
        );
    }
}
