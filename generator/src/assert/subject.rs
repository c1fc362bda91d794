//! What an observation rule (`assert/rules/`) is given and what it says (plain data).

use carve_storage::Call;

use crate::act::target::Callable;
use crate::arrange::context::Ctx;
use crate::body::Assertion;

/// The call whose result a rule observes: `panicked` holds the message it panicked with (itself
/// `None` when not recorded), when it did.
pub(crate) struct Subject<'s, 't> {
    pub(crate) cx: &'s Ctx<'t>,
    pub(crate) call: &'s Call,
    pub(crate) target: &'s Callable,
    pub(crate) panicked: Option<Option<&'s str>>,
}

/// An assertion on the result and the slug of the result a test's name ends with.
pub(crate) type Observation = (Assertion, Option<String>);

/// What an observation rule says.
pub(crate) enum Verdict {
    /// The result observed so (the checks it adds go to the test under construction).
    Observed(Observation),
    /// Not this rule's: the next rule tries; with a reason, the one to give when none observes.
    Pass(Option<&'static str>),
}
