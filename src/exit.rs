//! carve's own exit codes (besides `record`, which exits with the recorded program's code).

/// Bad usage or a setup problem (missing program, unreadable trace, ...).
pub const USAGE: i32 = 2;
/// Generated tests failed (demo, generate --verify).
pub const TESTS_FAILED: i32 = 1;
/// `carve gate`: the new build diverged from the baseline, or carved tests failed.
pub const DIVERGED: i32 = 1;
/// `carve gate`: no divergence.
pub const OK: i32 = 0;
/// `carve assess --fail-under PCT`: fewer transformations detected than asked.
pub const BELOW_FAIL_UNDER: i32 = 1;
/// `carve generate` was interrupted (SIGINT, SIGTERM or SIGHUP: 128 + SIGINT), its output
/// directory left as it was.
pub const INTERRUPTED: i32 = 130;
