//! What an observation rule (`assert/rules/`) is given and what it says (plain data).

use carve_storage::{Call, Value};

use crate::act::target::Callable;
use crate::arrange::context::Ctx;
use crate::assert::inside::inside;
use crate::body::Assertion;
use crate::naming;

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

impl<'s> Subject<'s, '_> {
    /// The value a rule observes through its parts (getters, `Display`, `Debug`): the one
    /// inside the result, and how to get it out (see [`inside`]); none when the call is carved
    /// with the recording's checks only (`Ctx::weak_oracles`).
    pub(crate) fn inside_for_parts(&self) -> Option<(&'s Value, Option<String>)> {
        if self.cx.weak_oracles.get() {
            return None;
        }
        inside(self.cx, self.call.ret.as_ref()?, &self.target.call_path)
    }

    /// [`Subject::inside_for_parts`] when that value is a struct or an enum, or a std iterator
    /// the recorder read as the elements it has left (`slice::Iter`, `vec::IntoIter`), with its
    /// type's path without generic arguments: what the getters, `Display`, items and `Debug`
    /// rules look at.
    pub(crate) fn inside_typed(&self) -> Option<(&'s Value, Option<String>, &'s str)> {
        let (value, unwrap) = self.inside_for_parts()?;
        let ty = match value {
            Value::Struct { ty, .. } | Value::Enum { ty, .. } => ty,
            Value::Seq { ty, .. } if is_iterator_rest(ty) => ty,
            _ => return None,
        };
        Some((value, unwrap, crate::read::types::strip_generics(ty)))
    }
}

/// The std iterators the recorder reads as the elements they have left.
fn is_iterator_rest(ty: &str) -> bool {
    [
        "core::slice::iter::Iter<",
        "core::slice::iter::IterMut<",
        "alloc::vec::into_iter::IntoIter<",
    ]
    .iter()
    .any(|p| ty.starts_with(p))
}

/// The result observed through checks the rule added, got out with `unwrap`, named after the
/// last segment of `type_path` (`node` for `abc::Node`).
pub(crate) fn observed_parts(unwrap: Option<String>, type_path: &str) -> Verdict {
    let short = type_path.rsplit("::").next().unwrap_or("value");
    Verdict::Observed((
        Assertion::Observed { unwrap },
        Some(naming::snake_case(short)),
    ))
}
