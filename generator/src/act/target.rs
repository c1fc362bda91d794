//! What the call-form rules give for a recorded function: a [`Target`], the function as tests
//! see it. Plain data, read by every later stage.

use crate::read::crate_api::FnApi;

/// Where a recorded function lives, as far as tests are concerned.
pub(crate) enum Target {
    Callable(Box<Callable>),
    Private,
    Unsupported(&'static str),
}

/// A public, reachable function or method with its signature.
pub(crate) struct Callable {
    /// Module path below the crate root.
    pub module: Vec<String>,
    /// The path a test writes to call it.
    pub call_path: String,
    /// What names start with (`parser_precedence`).
    pub subject: String,
    pub api: FnApi,
    /// The type of an associated function or method, as recorded (`abc::C`).
    pub self_type: Option<String>,
    /// The trait of a trait method (`abc::Asker`): tests import it.
    pub via_trait: Option<String>,
    /// A `Display::fmt` call, carved as `to_string()` (see [`crate::act::display`]).
    pub display: bool,
}
