//! How the caller stops a `generate` under way (the CLI, on SIGINT or SIGTERM): it sets a flag
//! the generator looks at between steps and while cargo runs, and the generator then stops with
//! [`crate::GenerateError::Interrupted`], its staged files taken back (`render/stage.rs`).

use std::sync::atomic::{AtomicBool, Ordering};

/// A flag the caller sets to stop generation; the default is never set.
#[derive(Clone, Copy, Default)]
pub struct Interrupt(Option<&'static AtomicBool>);

impl Interrupt {
    /// Stops generation once `flag` is set (a signal handler may set it).
    pub fn new(flag: &'static AtomicBool) -> Interrupt {
        Interrupt(Some(flag))
    }

    /// Whether the caller asked generation to stop.
    pub fn is_set(self) -> bool {
        self.0.is_some_and(|f| f.load(Ordering::SeqCst))
    }
}

impl PartialEq for Interrupt {
    fn eq(&self, other: &Interrupt) -> bool {
        match (self.0, other.0) {
            (Some(a), Some(b)) => std::ptr::eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        }
    }
}

impl Eq for Interrupt {}

impl std::fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Interrupt(set: {})", self.is_set())
    }
}
