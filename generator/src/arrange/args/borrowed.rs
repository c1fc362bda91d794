//! A producer keeps what it borrows (`Request::new(&mut headers)`, `Window::new(&mut cells)`):
//! a borrowed literal written in its call would be a temporary dropped at the end of the `let`
//! that makes the object (E0716), so it is bound to a variable of its own first, named after
//! the parameter:
//!
//! ```text
//! let mut cells = [0u32, 0u32, 0u32];
//! let mut window = abc::Window::new(&mut cells[..]);
//! ```
//!
//! A `&mut` literal always (never promoted to a static); a `&` one when it calls or expands
//! anything (`&String::from(..)`, `&vec![..]`): a constant one (`&[1u8, 2u8][..]`) lives for the
//! whole program already. Applied by the literal rules (`literal.rs`, `value_literal.rs`): a
//! mock or a rebuilt object is a variable already.
//!
//! The call a test makes gets the same for a `&mut` literal the call changed (an output
//! buffer, `encode_to_slice(key, &mut buf)`): bound first, so that the test can check what the
//! call left in it (`assert/effects.rs`).
//!
//! ```text
//! let mut out = [0u8, 0u8, 0u8, 0u8];
//! let result = abc::to_hex(&[202u8, 254u8][..], &mut out[..]);
//! assert_eq!(out, [99u8, 97u8, 102u8, 101u8]);
//! ```

use crate::arrange::args::site::{Built, Place, Site};
use crate::arrange::builder::Builder;
use crate::arrange::values::strip_ref;
use crate::body::Binding;

/// `built`, with a borrowed temporary of a producer's argument bound first, and a `&mut` one
/// of the tested call whose value the call changed.
pub(crate) fn bound(site: &Site, b: &mut Builder, built: Built) -> Built {
    let changed = site.place == Place::Tested && changed_behind(site);
    if site.place != Place::Producer && !changed {
        return built;
    }
    let Some((mutable, value, tail)) = borrowed_temporary(&built.expr) else {
        return built;
    };
    if site.place == Place::Tested && !mutable {
        return built;
    }
    let var = b.fresh(&site.param.name);
    b.setup.push(Binding {
        var: var.clone(),
        mutable,
        expr: value.to_string(),
        repeat: 1,
        times: None,
    });
    let amp = if mutable { "&mut " } else { "&" };
    Built {
        expr: format!("{amp}{var}{tail}"),
        mutated: changed.then(|| (site.arg.name.clone(), var)),
        ..built
    }
}

/// Whether the call left something else than it got behind the argument (`&mut` only:
/// nothing else is read again at the call's end).
fn changed_behind(site: &Site) -> bool {
    site.call
        .after(&site.arg.name)
        .is_some_and(|after| strip_ref(after) != strip_ref(&site.arg.value))
}

/// `&mut [..][..]` as (mutable, `[..]`, `[..]`): the borrow, the value borrowed and what
/// follows it (a full-range slice), when the value is a temporary that would not outlive the
/// statement.
pub(crate) fn borrowed_temporary(expr: &str) -> Option<(bool, &str, &str)> {
    let (mutable, rest) = match expr.strip_prefix("&mut ") {
        Some(rest) => (true, rest),
        None => (false, expr.strip_prefix('&')?),
    };
    let (value, tail) = match rest.strip_suffix("[..]") {
        Some(value) => (value, "[..]"),
        None => (rest, ""),
    };
    let calls = value.contains('(') || value.contains('!');
    let constant_parens = value.starts_with("([] as ");
    (mutable || (calls && !constant_parens)).then_some((mutable, value, tail))
}

#[cfg(test)]
mod tests {
    use super::borrowed_temporary;
    use crate::testdata::rulebook;

    #[test]
    fn a_literal_a_made_object_borrows_is_bound_before_it() {
        let rebuilt = rulebook().rebuilt("rulebook::Window::fill", 0, "rulebook::Window", true);
        assert_eq!(rebuilt.rule, "producer");
        assert_eq!(
            rebuilt.setup,
            [
                "[0u32, 0u32, 0u32]",
                "rulebook::Window::new(&mut cells[..])"
            ]
        );
    }

    #[test]
    fn only_temporaries_are_bound() {
        assert_eq!(
            borrowed_temporary("&mut [1u8][..]"),
            Some((true, "[1u8]", "[..]"))
        );
        assert_eq!(
            borrowed_temporary("&String::from(\"a\")"),
            Some((false, "String::from(\"a\")", ""))
        );
        assert_eq!(borrowed_temporary("&[1u8, 2u8][..]"), None);
        assert_eq!(borrowed_temporary("&([] as [u8; 0])[..]"), None);
        assert_eq!(borrowed_temporary("3u32"), None);
    }
}
