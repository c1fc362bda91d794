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
