//! The value inside a result a rule observes through its parts (getters, `Display`, `Debug`):
//! the struct or enum itself, the one inside `Ok`/`Some` (`.unwrap()`) or `Err`
//! (`.unwrap_err()`), looked at through a reference.

use carve_storage::Value;

use crate::arrange::context::Ctx;
use crate::arrange::values::{returned_struct, strip_ref};

/// The value inside `ret` and the call that gets it out of the result (`.unwrap()`), when the
/// result holds one: nothing for `None`. Looked at through a reference.
pub(crate) fn inside<'v>(
    cx: &Ctx,
    ret: &'v Value,
    call_path: &str,
) -> Option<(&'v Value, Option<String>)> {
    inside_as_is(cx, ret, call_path).map(|(v, unwrap)| (strip_ref(v), unwrap))
}

/// [`inside`], a reference left as it is (what the unwrapped value is, for `==`). A result
/// inside a result (`Some(Ok(path))`: an iterator's item that may fail, `Paths::next`) is
/// unwrapped level by level (`.unwrap().unwrap()`): the outer level alone leaves a value no
/// `==` compares when the inner error type has no `PartialEq`.
pub(crate) fn inside_as_is<'v>(
    cx: &Ctx,
    ret: &'v Value,
    call_path: &str,
) -> Option<(&'v Value, Option<String>)> {
    let (mut value, mut unwrap) = one_level(cx, ret, call_path)?;
    while let Some(chain) = unwrap.as_mut() {
        match one_level(cx, value, call_path) {
            Some((inner, Some(more))) => {
                chain.push_str(&more);
                value = inner;
            }
            _ => break,
        }
    }
    Some((value, unwrap))
}

/// The value inside one level of `Option`/`Result` and the call that gets it out; the value
/// itself (no call) when it is neither.
fn one_level<'v>(cx: &Ctx, ret: &'v Value, call_path: &str) -> Option<(&'v Value, Option<String>)> {
    if let Value::Enum {
        ty,
        variant,
        fields,
    } = ret
    {
        if ty.starts_with("core::result::Result") && variant == "Err" {
            // `unwrap_err` needs the `Ok` type to be `Debug`; `err()` needs nothing.
            let ok_debug = ok_type(ty).is_some_and(plain_debug);
            let unwrap = if ok_debug {
                ".unwrap_err()"
            } else {
                ".err().unwrap()"
            };
            return Some((&fields.first()?.value, Some(unwrap.to_string())));
        }
    }
    returned_struct(cx, ret, call_path)
}

/// `T` of a recorded `core::result::Result<T, E>`.
fn ok_type(ty: &str) -> Option<&str> {
    let args = ty.strip_prefix("core::result::Result<")?;
    let mut depth = 0usize;
    for (i, c) in args.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => return Some(args[..i].trim()),
            _ => {}
        }
    }
    None
}

/// A recorded std type that is `Debug` whatever the crate does: scalars, text, `()`.
fn plain_debug(ty: &str) -> bool {
    ty == "()"
        || crate::read::types::Prim::from_name(ty).is_some()
        || ty.starts_with("alloc::string::String")
        || ty.starts_with("&str")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ok_type_of_a_recorded_result_is_read_past_nested_generics() {
        assert_eq!(
            ok_type("core::result::Result<alloc::vec::Vec<(u8, u8)>, k::E>"),
            Some("alloc::vec::Vec<(u8, u8)>")
        );
        assert_eq!(
            ok_type("core::result::Result<u8, k::E<u8, u8>>"),
            Some("u8")
        );
        assert!(plain_debug("u8") && plain_debug("()") && !plain_debug("k::T"));
    }
}
