//! Arrange: how a test builds each value it needs. In: recorded values and the calls that made
//! them. Out: Rust expressions and `let` bindings.

pub(crate) mod literal;
pub(crate) mod sequence;
