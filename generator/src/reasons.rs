//! Why a recorded call got no test: the skip reasons the report counts, each given by the rule
//! named in its documentation.

/// Skip reason: the receiver or an object argument has no recorded constructor giving its state
/// and cannot be written as a struct literal.
pub const RECEIVER_NOT_REBUILT: &str = "receiver not rebuilt";

/// Skip reason: an argument is a closure, or a value holding one (an iterator adapter,
/// `words.iter().map(|w| ..)`), which no test can write from the recording: a closure the
/// replay-closure rule (`closure.rs`) cannot rebuild (the library's own, one whose calls were
/// not recorded, one the call kept, an answer no literal gives).
pub const CLOSURE_ARGUMENT: &str = "closure argument";

/// Skip reason: a dependency's trait cannot be mocked (private, generic, associated items...).
pub const NOT_MOCKABLE: &str = "trait not mockable";

/// Skip reason: a mock would have to return a value carve cannot write, or a mocked call did
/// not return.
pub const MOCK_UNREPLAYABLE: &str = "mock not replayable";

/// Skip reason: the call, or code it runs for real in the test, read what a test cannot
/// control (the clock, randomness, the environment, files, the network...) outside any trait
/// that a mock could stand in for.
pub const UNTESTABLE: &str = "untestable";

/// Skip reason: an argument or the return value is not an exact scalar or string.
pub const UNDECODED: &str = "undecoded";

/// Skip reason: the call panicked, unwound, or was cut off by the end of the process.
pub const DID_NOT_RETURN: &str = "did not return";

/// Skip reason: a value does not fit the declared type, or the type takes no literal.
pub const UNSUPPORTED_TYPE: &str = "unsupported type";

/// Skip reason: the call returned a value of another crate, not recorded, with no `==` or text
/// a test could check it by (`form_urlencoded::Parse` from `Url::query_pairs()`), and what the
/// program did with it were that crate's calls, not in the recording: no recorded call shows
/// what a test should do with it or what it should give. Recording that crate too
/// (`--filter 'form_urlencoded::*'`) records them.
pub const UNRECORDED_CRATE_VALUE: &str = "returns a value of a crate not recorded";

/// A name in the trace (a field or variant) is not Rust syntax where a test would write it: the
/// trace is damaged or was made to inject code, and the name is never written.
pub const NOT_RUST_SYNTAX: &str = "name in the trace is not Rust syntax";

/// Skip reason: the object's recorded state leaves out memory its methods read (behind a
/// pointer, `MaybeUninit` storage), and the calls that brought it there cannot all be replayed
/// (a closure or a dependency as argument, a call from inside the crate, no recorded maker).
pub const HISTORY_NOT_REPLAYABLE: &str = "state behind pointers, history not replayable";

/// Skip reason: the call ran inside a method of a handle that a `&mut self` call of its
/// receiver returned (`len()` inside the drop of the `Drain` that `drain(..)` gave): the
/// receiver was in a state only that handle's life gives, which no test can call into while
/// the handle holds it, and an arrangement that drops the handle at once does not leave.
pub const INSIDE_A_HANDLE: &str = "called inside a handle holding its receiver";

/// Skip reason: the test needs mocks and the crate has no `mockall` dev-dependency.
pub const NEEDS_MOCKALL: &str = "needs mockall";

/// Skip reason: the function already has `--max-per-function` tests.
pub const OVER_MAX_PER_FUNCTION: &str = "over --max-per-function";

/// Skip reason: the test needs a mock of a trait whose name another trait's mock in the same
/// file already has.
pub const MOCK_NAME_CLASH: &str = "mock name clash";

/// The skip reason of calls whose tests verification took out.
pub const FAILED_VERIFICATION: &str = "failed verification";
