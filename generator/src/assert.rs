//! Assert: what a test checks of a result. In: a recorded call, its result and its declared type
//! ([`subject::Subject`]). Out: an [`crate::body::Assertion`] (`assert_eq!`, `matches!`, a panic
//! expected...) from the first of the observation rules of `rules/` that observes it
//! ([`rules::RULES`]), and the effects the call had on the objects it changed (`effects.rs`).

pub(crate) mod effects;
pub(crate) mod getters;
pub(crate) mod inside;
pub(crate) mod observe;
pub(crate) mod pattern;
pub(crate) mod printed;
pub(crate) mod rules;
pub(crate) mod subject;
