//! What `generate` reports while it works, for a caller that shows progress. The generator never
//! prints: it calls the caller's function with a [`Step`] and goes on.

use std::sync::Arc;

/// A point `generate` reached.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// Planning the tests: `done` of `total` recorded calls (those kept while reading) are
    /// planned.
    Planning { done: usize, total: usize },
    /// The tests are planned, rendered and written: `tests` tests in `files` files.
    Carved { tests: usize, files: usize },
    /// Verification is at `file` (building it, or between its runs): `done` of `total` test
    /// runs are over (`total` = files × runs; a file that does not compile skips its runs,
    /// which then count as done).
    Verifying {
        file: String,
        done: usize,
        total: usize,
    },
}

/// The caller's function receiving each [`Step`].
#[derive(Clone)]
pub struct Progress(Arc<dyn Fn(&Step) + Send + Sync>);

impl Progress {
    pub fn new(f: impl Fn(&Step) + Send + Sync + 'static) -> Progress {
        Progress(Arc::new(f))
    }

    pub(crate) fn report(this: Option<&Progress>, step: Step) {
        if let Some(p) = this {
            (p.0)(&step);
        }
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}
