//! carve's own exit codes (besides `record`, which exits with the recorded program's code).

/// Bad usage or a setup problem (missing program, unreadable trace, ...).
pub const USAGE: i32 = 2;
/// Generated tests failed (demo, generate --verify).
pub const TESTS_FAILED: i32 = 1;
