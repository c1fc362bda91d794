//! Observation: the result compared whole, written for the declared return type
//! (`assert_eq!(result, 5)`, `assert!(result)`, `result.is_nan()`, a `Cow` against what it
//! holds, the call alone for `()`; see `assert/observe.rs`). Its reason is the one given when
//! no later rule observes the result.

use crate::arrange::builder::Builder;
use crate::arrange::context::Constructing;
use crate::assert::observe::assertion;
use crate::assert::subject::{Subject, Verdict};

/// A result a literal of its declared type can be compared with.
pub(crate) fn rule(s: &Subject, _b: &mut Builder) -> Verdict {
    // A private-field value of the crate inside the result is written through its storing
    // constructor, where its type compares (`Some(NodeIndex::<u32>::new(3usize))`).
    match assertion(
        s.call.ret.as_ref(),
        &s.target.api.ret,
        &Constructing(s.cx, Some(s.call.function)),
    ) {
        Ok(observed) => Verdict::Observed(observed),
        Err(reason) => Verdict::Pass(Some(reason)),
    }
}

#[cfg(test)]
mod tests {
    use crate::body::Assertion;
    use crate::testdata::rulebook;

    #[test]
    fn a_result_a_literal_can_equal_is_compared_whole() {
        let (rule, (assertion, slug), _) = rulebook().observe("rulebook::add", 0);
        assert_eq!(rule, "compared");
        assert_eq!(
            assertion,
            Assertion::Eq {
                expected: "5i32".to_string()
            }
        );
        assert_eq!(slug.as_deref(), Some("5"));
    }
}
