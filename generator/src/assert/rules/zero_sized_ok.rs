//! Observation: nothing recorded because nothing was returned, from a function declared to
//! return `Result<(), E>`: zero-sized, it has one value, `Ok(())`, checked with a pattern that
//! compiles whatever `E` implements.

use crate::arrange::builder::Builder;
use crate::assert::observe::zero_sized_ok;
use crate::assert::subject::{Subject, Verdict};

/// A call with no recorded result and no return type in the debug info.
pub(crate) fn rule(s: &Subject, _b: &mut Builder) -> Verdict {
    let no_return_type =
        s.cx.trace
            .function(s.call.function)
            .is_some_and(|f| f.return_type.is_none());
    if s.call.ret.is_some() || !no_return_type {
        return Verdict::Pass(None);
    }
    match zero_sized_ok(s.target.api.ret_ok_unit) {
        Some(observed) => Verdict::Observed(observed),
        None => Verdict::Pass(None),
    }
}

#[cfg(test)]
mod tests {
    use crate::body::Assertion;
    use crate::testdata::rulebook;

    #[test]
    fn a_zero_sized_ok_recorded_as_nothing_is_checked_as_its_one_value() {
        let (rule, (assertion, _), _) = rulebook().observe("rulebook::settle", 0);
        assert_eq!(rule, "zero_sized_ok");
        assert_eq!(
            assertion,
            Assertion::Matches {
                pattern: "Ok(())".to_string()
            }
        );
    }
}
