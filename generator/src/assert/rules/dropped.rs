//! Observation, when no other rule observes the result: a call that changed its receiver
//! (`&mut self`) and returned a value no test can look into — tinyvec's `splice`, whose
//! `TinyVecSplice` borrows the vector and does the splicing when it drops. The result is
//! dropped at once (`let _ = tiny_vec.splice(..);`, which runs that work) and the receiver is
//! checked after it through its cheap getters (`assert/getters.rs`). The recording read the
//! receiver when the call returned, before the drop, so those checks are all probes: their
//! values are what this build shows after the drop, observed at verification
//! (`verify/observe.rs`). A receiver with no printable getter gives no test (nothing would
//! be checked).

use crate::arrange::builder::Builder;
use crate::assert::getters::{cheap_getters, debuggable, type_api};
use crate::assert::printed::Kind;
use crate::assert::subject::{Subject, Verdict};
use crate::body::Assertion;

/// A `&mut self` call whose receiver shows something through a getter.
pub(crate) fn rule(s: &Subject, b: &mut Builder) -> Verdict {
    let changed = s.panicked.is_none()
        && s.target.api.mut_receiver
        && s.call.after("self").is_some()
        && !s.cx.weak_oracles.get();
    let type_path = s.target.self_type.as_deref().unwrap_or("");
    let shown = type_api(s.cx.api, type_path).is_some_and(|ty| {
        cheap_getters(ty).any(|g| Kind::of(&g.ret_written, &|t| debuggable(s.cx.api, t)).is_some())
    });
    if !(changed && shown) {
        return Verdict::Pass(None);
    }
    b.after_drop = true;
    Verdict::Observed((Assertion::Observed { unwrap: None }, None))
}
