//! Observation: the result compared whole, written for the declared return type
//! (`assert_eq!(result, 5)`, `assert!(result)`, `result.is_nan()`, a `Cow` against what it
//! holds, the call alone for `()`; see `assert/observe.rs`). Its reason is the one given when
//! no later rule observes the result.

use crate::arrange::builder::Builder;
use crate::assert::observe::assertion;
use crate::assert::subject::{Subject, Verdict};

/// A result a literal of its declared type can be compared with.
pub(crate) fn rule(s: &Subject, _b: &mut Builder) -> Verdict {
    match assertion(s.call.ret.as_ref(), &s.target.api.ret, s.cx.api) {
        Ok(observed) => Verdict::Observed(observed),
        Err(reason) => Verdict::Pass(Some(reason)),
    }
}
