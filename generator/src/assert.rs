//! Assert: what a test checks of a result. In: a recorded result and its declared type. Out:
//! an [`observe::Assertion`] (`assert_eq!`, `matches!`, a panic expected...).

pub(crate) mod effects;
pub(crate) mod observe;
pub(crate) mod pattern;
pub(crate) mod rules;
pub(crate) mod subject;
