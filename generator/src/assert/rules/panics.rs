//! Observation: a call that panicked becomes a `#[should_panic]` test expecting the longest
//! exact part of the recorded message.

use crate::arrange::builder::Builder;
use crate::assert::observe::expected_panic;
use crate::assert::subject::{Subject, Verdict};
use crate::body::Assertion;

/// A call recorded as panicking.
pub(crate) fn rule(s: &Subject, _b: &mut Builder) -> Verdict {
    match s.panicked {
        Some(message) => Verdict::Observed((
            Assertion::Panics {
                expected: message.and_then(expected_panic),
            },
            None,
        )),
        None => Verdict::Pass(None),
    }
}

#[cfg(test)]
mod tests {
    use crate::body::Assertion;
    use crate::testdata::rulebook;

    #[test]
    fn a_call_that_panicked_expects_its_message() {
        // `divide(1, 0)`, the second call.
        let (rule, (assertion, slug), _) = rulebook().observe("rulebook::divide", 1);
        assert_eq!(rule, "panics");
        assert_eq!(
            assertion,
            Assertion::Panics {
                expected: Some("\"division by zero\"".to_string())
            }
        );
        assert_eq!(slug, None);
    }
}
