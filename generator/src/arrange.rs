//! Arrange: how a test builds each value it needs. In: recorded values, the calls that made them
//! and the recording around them ([`context::Ctx`]). Out: Rust expressions and `let` bindings
//! added to the test under construction ([`builder::Builder`]): values by `literal.rs`
//! (structural recursion over the value), closures, mocks and files by their own files, objects
//! by the rebuild rules of `rebuild/` ([`rebuild::RULES`]).

pub(crate) mod args;
pub(crate) mod builder;
pub(crate) mod check;
pub(crate) mod closure;
pub(crate) mod context;
pub(crate) mod debug_repr;
pub(crate) mod literal;
pub(crate) mod mocks;
pub(crate) mod rebuild;
pub(crate) mod receiver;
pub(crate) mod sequence;
pub(crate) mod texts;
pub(crate) mod values;
pub(crate) mod wanted;
pub(crate) mod world;
