//! An argument written as a literal of its recorded type, when its declared type gives none:
//! slices (`&[4u32, 5u32][..]`) and `Vec`s, tuples, `Some(..)`/`Ok(..)`, the crate's structs with
//! public fields and enums, std values with a known constructor (`arrange/literal.rs`'s
//! `render_value`).

use crate::arrange::args::borrowed;
use crate::arrange::args::site::{Built, Site, Verdict};
use crate::arrange::builder::Builder;
use crate::arrange::context::Constructing;
use crate::arrange::literal;

/// The rule: a literal of the recorded value's own type. Inside it (`Some(..)`, a tuple, a
/// `Vec`), a value of the crate's with private fields is written through a constructor that
/// stores its fields; such a value alone is left to the rules that rebuild objects, which
/// replay how the program made it.
pub(crate) fn rule(site: &Site, b: &mut Builder) -> Verdict {
    let value = &site.arg.value;
    let facts = Constructing(site.cx, None);
    let object = match value {
        carve_storage::Value::Ref { target, .. } => target.as_ref(),
        v => v,
    };
    let written = if matches!(object, carve_storage::Value::Struct { .. }) {
        literal::render_value(value, false, site.cx.api)
    } else {
        literal::render_value(value, false, &facts)
    };
    match written {
        Ok(expr) => Verdict::Built(borrowed::bound(site, b, Built::expr(expr))),
        Err(_) => Verdict::Pass,
    }
}

#[cfg(test)]
mod tests {
    use crate::arrange::args::Verdict;
    use crate::testdata::rulebook;

    #[test]
    fn a_slice_is_a_literal_of_its_recorded_elements() {
        let (verdict, _) = rulebook().arg("rulebook::find", 0, "xs", super::rule);
        let Verdict::Built(built) = verdict else {
            panic!("a literal")
        };
        assert_eq!(built.expr, "&[4u32, 5u32, 6u32][..]");
    }

    #[test]
    fn an_object_with_private_fields_is_no_literal() {
        let (verdict, _) = rulebook().arg("rulebook::twice", 0, "c", super::rule);
        assert!(matches!(verdict, Verdict::Pass));
    }
}
