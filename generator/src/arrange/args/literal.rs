//! An argument written as a literal of its declared type (`2i32`, `"abc"`, `String::from(..)`,
//! `&mut 3u8`; `arrange/literal.rs`). For the tested call, a scalar or string no literal of the
//! declared type writes was not read as declared: refused with the literal's reason rather than
//! written some other way. A producer's argument goes on to the next rules.

use carve_storage::Value;

use crate::arrange::args::borrowed;
use crate::arrange::args::site::{Built, Place, Site, Verdict};
use crate::arrange::builder::Builder;
use crate::arrange::literal::{self, Position};

/// The rule: a literal of the parameter's declared type.
pub(crate) fn rule(site: &Site, b: &mut Builder) -> Verdict {
    let value = &site.arg.value;
    match literal::render(value, &site.param.ty, Position::Arg) {
        Ok(expr) => Verdict::Built(borrowed::bound(site, b, Built::expr(expr))),
        Err(e) if site.place == Place::Tested && scalar(value) => {
            Verdict::Refused(literal::reason(e))
        }
        Err(_) => Verdict::Pass,
    }
}

/// A scalar or string, or a reference to one.
fn scalar(value: &Value) -> bool {
    value.is_scalar_or_string()
        || matches!(value, Value::Ref { target, .. } if target.is_scalar_or_string())
}

#[cfg(test)]
mod tests {
    use crate::arrange::args::Verdict;
    use crate::testdata::rulebook;

    #[test]
    fn a_scalar_is_a_literal_of_its_declared_type() {
        let (verdict, _) = rulebook().arg("rulebook::add", 0, "b", super::rule);
        let Verdict::Built(built) = verdict else {
            panic!("a literal")
        };
        assert_eq!(built.expr, "3i32");
    }

    #[test]
    fn a_slice_is_no_literal_of_its_declared_type() {
        let (verdict, _) = rulebook().arg("rulebook::find", 0, "xs", super::rule);
        assert!(matches!(verdict, Verdict::Pass));
    }
}
