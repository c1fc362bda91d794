//! What the caller measured of the tests it ran for distilling: the lines each reached,
//! whose lines they are, and the value faults each detected.

use std::collections::{BTreeMap, BTreeSet};

use super::faults::Fault;

/// The (file, line)s each test reached, by (target, test), file names canonical. A test
/// missing from it was not measured, and is kept.
pub type LinesPerTest = BTreeMap<(String, String), BTreeSet<(String, u32)>>;

/// What the caller measured of the tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Measured {
    pub lines: LinesPerTest,
    /// Whose lines they are: the paths of the functions each measured line belongs to, as the
    /// test binaries' DWARF places them.
    pub functions: BTreeMap<(String, u32), BTreeSet<String>>,
    /// The faults each test detected (it failed or hung when run with one), by (target, test).
    pub detected: BTreeMap<(String, String), BTreeSet<Fault>>,
    /// How many runs with a fault were made.
    pub fault_runs: usize,
}
