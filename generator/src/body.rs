//! A carved test as plain data: what arrange, act and assert fill in for one recorded call, what
//! plan gathers into files and what render writes (the template's `test`). Nothing here decides
//! anything.

use serde::Serialize;

/// A mock object a test sets up, with what it expects, in the order to write them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct MockSetup {
    /// `mock_a`.
    pub var: String,
    /// `MockAnswerer`.
    pub mock_type: String,
    /// Needs `let mut` (it has expectations).
    pub mutable: bool,
    /// `seq_statement`: the `Sequence` its expectations are checked in, when their order is
    /// part of the behaviour (see [`crate::arrange::mocks::mock_setups`]).
    pub sequence: Option<String>,
    pub expectations: Vec<Expectation>,
}

/// `mock.expect_method().with(..).times(n).in_sequence(&mut seq).return_const(..)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Expectation {
    pub method: String,
    /// One predicate per parameter (`eq(1usize)`, `always()`); empty: no `.with`.
    pub with: Vec<String>,
    pub times: usize,
    /// The `Sequence` it is checked in (`seq_statement`, or `seq` across mocks), if any.
    pub sequence: Option<String>,
    pub returns: Returns,
}

/// What a mocked call gives back.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Returns {
    /// `.return_const(())`.
    Unit,
    /// `.return_const(<expr>)`.
    Const { expr: String },
    /// `.return_once(move |<pattern>| Box::new(<var>))`: a child mock.
    Mock { var: String, pattern: String },
}

/// `let [mut] <var> = <expr>;` before the call; with `repeat` above 1 (a replayed call made
/// that many times in a row, `it.next()`), `for _ in 0..repeat { let _ = <expr>; }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Binding {
    pub var: String,
    pub mutable: bool,
    pub expr: String,
    pub repeat: usize,
    /// In a table test (`table.rs`): the loop's count is a column, `for _ in 0..case.N`, and
    /// this is that expression (`repeat` is then 0 in the shape).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub times: Option<String>,
}

/// `assert_eq!(<actual>, <expected>)` on state after the call.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Effect {
    pub actual: String,
    pub expected: String,
    /// The assertion's message, a string literal (a replay closure's count check).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The expected value is not in the recording: verification observes it on the very build
    /// the test was carved from and writes it in (`verify/observe.rs`); until then `expected`
    /// is empty and the test holds a probe printing `actual`. The text says how the value
    /// printed becomes the expected one (see [`crate::assert::printed::Kind`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observe: Option<String>,
}

/// A `mock!` the file must declare.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct MockDecl {
    /// `Answerer` (the mock struct is `MockAnswerer`).
    pub name: String,
    /// `abc::Answerer`.
    pub trait_path: String,
    /// Method signatures as a test writes them, without `;`.
    pub methods: Vec<String>,
}

/// Everything a test does, before it gets a name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Body {
    /// The path of the function, `expr::lexer::precedence` or `expr::parser::Parser::new`.
    pub function_path: String,
    /// Mocks to set up, children before the mocks returning them.
    pub mocks: Vec<MockSetup>,
    /// Expectations checked in one `Sequence` across mocks, in recorded order.
    pub ordered_expectations: Vec<OrderedExpectation>,
    pub setup: Vec<Binding>,
    /// Checks, before the call, that objects rebuilt by replaying calls are in their recorded
    /// state.
    pub checks: Vec<Effect>,
    /// What is called: `abc::label` or `c.calls_b_with_a`.
    pub callee: String,
    /// The arguments as Rust expressions.
    pub args: Vec<String>,
    pub assertion: Assertion,
    /// Checks of fields after the call.
    pub effects: Vec<Effect>,
    /// Some expectation is in a `Sequence`.
    pub sequence: bool,
    /// The mocks' traits (declared once per file, in `FilePlan::mocks`).
    #[serde(skip)]
    pub mock_decls: Vec<MockDecl>,
    /// Traits to import so method syntax works (`abc::Asker`; in `FilePlan::uses`).
    #[serde(skip)]
    pub trait_uses: Vec<String>,
    /// A closure argument is a replay closure (`closure.rs`): its checks name no table row.
    #[serde(skip)]
    pub replays_closures: bool,
}

/// One expectation of an interleaved, cross-mock sequence: which mock it is set on.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct OrderedExpectation {
    pub var: String,
    pub expectation: Expectation,
}

/// What the test checks about the result.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Assertion {
    /// `assert_eq!(result, <expected>)`.
    Eq { expected: String },
    /// `assert!(result)`.
    True,
    /// `assert!(!result)`.
    False,
    /// `assert!(result.is_nan())`.
    Nan,
    /// The function returns `()`: the call itself is the test.
    Unit,
    /// The result cannot be compared as a whole (no `PartialEq`, or a private field): what of
    /// it is observable (getters, public fields) is asserted, as the test's effects. `unwrap`
    /// (`.unwrap()`) gets the value out of the `Ok` or `Some` it was returned in.
    Observed { unwrap: Option<String> },
    /// `assert!(matches!(result, <pattern>))`: a result `==` cannot compare, checked by its
    /// variant and the parts a pattern can name (see [`crate::assert::pattern`]).
    Matches { pattern: String },
    /// `#[should_panic(expected = <expected>)]`: the recorded call panicked. `expected` is a
    /// Rust string literal of the longest exact part of the recorded message, `None` when the
    /// message was not recorded.
    Panics { expected: Option<String> },
}
