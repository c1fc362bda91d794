//! What a rebuild rule is asked for, and what it answers (plain data).

use carve_storage::{CallId, ObjectId, Value};

/// What a rebuild rule is asked for: a binding `var` (`let mut` when `mutable`) holding an
/// object of `type_path` in `state`, as it was just before call `before`; `object` is its
/// identity when the recorder gave one (its history is then replayable).
#[derive(Clone, Copy)]
pub(crate) struct Wanted<'a> {
    pub state: &'a Value,
    pub object: Option<ObjectId>,
    pub type_path: &'a str,
    pub before: CallId,
    pub var: &'a str,
    pub mutable: bool,
}

impl<'a> Wanted<'a> {
    /// A mutable binding of `state` with no identity: an arrangement the test changes further.
    pub(crate) fn new(
        state: &'a Value,
        type_path: &'a str,
        before: CallId,
        var: &'a str,
    ) -> Wanted<'a> {
        Wanted {
            state,
            object: None,
            type_path,
            before,
            var,
            mutable: true,
        }
    }
}

/// What a rebuild rule of `arrange/rebuild.rs`'s `RULES` did with the object wanted.
pub(crate) enum Answer {
    /// Built, the binding added; with `check`, the state rests on a hypothesis (calls replayed,
    /// a derived sequence, a whole history) and is checked before the test acts, where it can be
    /// observed.
    Built { check: bool },
    /// Not this rule's object: the next rule tries; with a reason, the one to give when none
    /// builds it.
    Pass(Option<&'static str>),
    /// The object cannot be rebuilt, for this reason: no later rule tries.
    Fail(&'static str),
}
