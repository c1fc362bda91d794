//! What an argument rule is asked ([`Site`]: one recorded argument of a call) and what it
//! answers ([`Verdict`]).

use carve_storage::{Arg, Call};

use crate::arrange::context::Ctx;
use crate::body::Effect;
use crate::read::crate_api::ParamApi;

/// Where the argument is passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// To the call the test makes.
    Tested,
    /// To a producer call that rebuilds an object the test needs (a constructor, a builder
    /// step): no replay closure there, and objects rebuilt only to a bounded depth.
    Producer,
}

/// One recorded argument, as the rules are asked to build it.
pub(crate) struct Site<'a, 'c> {
    pub(crate) cx: &'a Ctx<'c>,
    /// The call the argument was recorded in.
    pub(crate) call: &'a Call,
    pub(crate) arg: &'a Arg,
    /// Its parameter, as the crate declares it.
    pub(crate) param: &'a ParamApi,
    /// The called function's name as written (`retain`), named in replay closures' messages.
    pub(crate) callee: &'a str,
    pub(crate) place: Place,
    /// Where a recorded address lives in the state the test rebuilds (a mock standing in for
    /// an object moved into it); the identity for a tested call.
    pub(crate) moved: &'a dyn Fn(u64) -> u64,
}

/// An argument built: its expression and what else the test gets with it.
#[derive(Debug, Default)]
pub(crate) struct Built {
    pub(crate) expr: String,
    /// A `&mut` object argument: (parameter, variable), whose effects the test may check.
    pub(crate) mutated: Option<(String, String)>,
    /// Checked first after the call (a replay closure called as often as recorded).
    pub(crate) check: Option<Effect>,
    /// `check` is made last instead, after the result's checks, which run a closure the
    /// result keeps.
    pub(crate) check_last: bool,
    /// What the test's name calls the argument, instead of its value's slug.
    pub(crate) slug: Option<&'static str>,
}

impl Built {
    pub(crate) fn expr(expr: String) -> Built {
        Built {
            expr,
            ..Built::default()
        }
    }
}

/// What a rule made of an argument.
pub(crate) enum Verdict {
    Built(Built),
    /// Not this rule's case: the next rule is asked.
    Pass,
    /// This rule's case, and no test can pass it: the reason.
    Refused(&'static str),
}
