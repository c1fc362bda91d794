//! The selection rule, on plain data: keep the fewest tests that reach every goal the whole
//! verified set reaches. A goal is a line of the library a test runs, a distinct outcome
//! of a function it calls (see `outcome.rs`), a value class of what a call returned, of its
//! calls or of those inside them (see `classes.rs`), or a value fault it detects on a line
//! (see `faults.rs`). Greedy set cover, as EvoSuite minimises a
//! suite: take the test that adds the most goals not yet reached, again and again, until no
//! test adds one; a tie goes to the smaller test (fewer arrange steps), then to the earlier.
//! A test whose lines were not measured is kept as it is: nothing says what it adds; so is a
//! test chosen before, whose goals the others are weighed against.

use std::collections::BTreeSet;

/// What one goal is: a line (file, line) of the library, an outcome (function, outcome), a
/// value class (function, class) or a fault detected (function, `file:line from→to`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Goal {
    Line(String, u32),
    Outcome(String, String),
    Class(String, String),
    Fault(String, String),
}

/// One verified test as the rule weighs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// The lines it reaches, `None` when they were not measured.
    pub(crate) lines: Option<BTreeSet<(String, u32)>>,
    /// (function, outcome) of the calls it checks.
    pub(crate) outcomes: BTreeSet<(String, String)>,
    /// (function, value class) of what those calls, and the calls inside them, returned.
    pub(crate) classes: BTreeSet<(String, String)>,
    /// (function, `file:line from→to`) of the value faults it detects (see `faults.rs`).
    pub(crate) faults: BTreeSet<(String, String)>,
    /// How much arranging it does (bindings, mocks, checks): the smaller wins a tie.
    pub(crate) size: usize,
    /// Kept whatever it adds: a test chosen before (a carved test distilled already, beside
    /// which `carve explore`'s are weighed: `recorded.rs`).
    pub(crate) chosen: bool,
}

impl Candidate {
    fn goals(&self) -> BTreeSet<Goal> {
        let lines = self.lines.iter().flatten();
        lines
            .map(|(f, l)| Goal::Line(f.clone(), *l))
            .chain(
                self.outcomes
                    .iter()
                    .map(|(f, o)| Goal::Outcome(f.clone(), o.clone())),
            )
            .chain(
                self.classes
                    .iter()
                    .map(|(f, c)| Goal::Class(f.clone(), c.clone())),
            )
            .chain(
                self.faults
                    .iter()
                    .map(|(f, c)| Goal::Fault(f.clone(), c.clone())),
            )
            .collect()
    }
}

/// Which of `candidates` to keep, by position, in order.
pub(crate) fn select(candidates: &[Candidate]) -> Vec<usize> {
    let goals: Vec<BTreeSet<Goal>> = candidates.iter().map(Candidate::goals).collect();
    let mut kept: Vec<usize> = Vec::new();
    let mut reached: BTreeSet<&Goal> = BTreeSet::new();
    for (i, c) in candidates.iter().enumerate() {
        if c.lines.is_none() || c.chosen {
            kept.push(i);
            reached.extend(&goals[i]);
        }
    }
    loop {
        let best = (0..candidates.len())
            .filter(|i| !kept.contains(i))
            .map(|i| {
                let adds = goals[i].iter().filter(|g| !reached.contains(g)).count();
                (i, adds)
            })
            .filter(|(_, adds)| *adds > 0)
            // Most goals added, then the smallest test, then the earliest.
            .min_by_key(|(i, adds)| (std::cmp::Reverse(*adds), candidates[*i].size, *i));
        let Some((i, _)) = best else {
            break;
        };
        kept.push(i);
        reached.extend(&goals[i]);
    }
    kept.sort_unstable();
    kept
}

/// How many goals of each kind some tests reach together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Reached {
    pub(crate) lines: usize,
    pub(crate) outcomes: usize,
    pub(crate) classes: usize,
    pub(crate) faults: usize,
}

/// The goals `candidates` reach together, of those at `positions` (all when `None`).
pub(crate) fn reached(candidates: &[Candidate], positions: Option<&[usize]>) -> Reached {
    let all: Vec<usize> = (0..candidates.len()).collect();
    let mut goals = BTreeSet::new();
    for i in positions.unwrap_or(&all) {
        goals.extend(candidates[*i].goals());
    }
    let count = |kind: fn(&Goal) -> bool| goals.iter().filter(|g| kind(g)).count();
    Reached {
        lines: count(|g| matches!(g, Goal::Line(..))),
        outcomes: count(|g| matches!(g, Goal::Outcome(..))),
        classes: count(|g| matches!(g, Goal::Class(..))),
        faults: count(|g| matches!(g, Goal::Fault(..))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(lines: &[u32], outcomes: &[(&str, &str)], size: usize) -> Candidate {
        Candidate {
            lines: Some(lines.iter().map(|l| ("lib.rs".to_string(), *l)).collect()),
            outcomes: outcomes
                .iter()
                .map(|(f, o)| (f.to_string(), o.to_string()))
                .collect(),
            classes: BTreeSet::new(),
            faults: BTreeSet::new(),
            size,
            chosen: false,
        }
    }

    fn reach(lines: usize, outcomes: usize, classes: usize) -> Reached {
        Reached {
            lines,
            outcomes,
            classes,
            faults: 0,
        }
    }

    #[test]
    fn tests_that_take_the_same_path_to_the_same_outcome_are_kept_once() {
        // A loop called `parse` five times with inputs that take one path: one test is kept;
        // the input that took the other branch, and the one that failed, are kept too.
        let ok = [("p::parse", "Ok")];
        let candidates = vec![
            test(&[1, 2, 3], &ok, 1),
            test(&[1, 2, 3], &ok, 1),
            test(&[1, 2, 4], &ok, 1),
            test(&[1, 2, 3], &ok, 1),
            test(&[1, 5], &[("p::parse", "Err(Empty)")], 1),
        ];
        assert_eq!(select(&candidates), vec![0, 2, 4]);
        assert_eq!(reached(&candidates, None), reach(5, 2, 0));
        assert_eq!(reached(&candidates, Some(&[0, 2, 4])), reach(5, 2, 0));
    }

    #[test]
    fn an_outcome_no_other_test_has_keeps_its_test_even_on_covered_lines() {
        // `is_even(3)` runs the same lines as `is_even(2)` but answers false.
        let candidates = vec![
            test(&[1, 2], &[("p::is_even", "true")], 0),
            test(&[1, 2], &[("p::is_even", "true")], 0),
            test(&[1, 2], &[("p::is_even", "false")], 0),
        ];
        assert_eq!(select(&candidates), vec![0, 2]);
    }

    #[test]
    fn the_test_adding_most_goals_goes_first_and_a_tie_goes_to_the_smaller_test() {
        let candidates = vec![
            test(&[1, 2], &[("p::a", "returned")], 0),
            test(&[3], &[("p::b", "returned")], 0),
            // Reaches everything the first two do, through a bigger arrangement.
            test(&[1, 2, 3], &[("p::a", "returned"), ("p::b", "returned")], 5),
            // The same goals as the third, arranged with less.
            test(&[1, 2, 3], &[("p::a", "returned"), ("p::b", "returned")], 2),
        ];
        assert_eq!(select(&candidates), vec![3]);
    }

    #[test]
    fn a_test_whose_lines_were_not_measured_is_kept_and_counts_what_it_reaches() {
        let mut unmeasured = test(&[], &[("p::a", "returned")], 0);
        unmeasured.lines = None;
        let candidates = vec![
            test(&[1], &[("p::a", "returned")], 0),
            unmeasured,
            test(&[1, 2], &[("p::a", "returned")], 0),
        ];
        assert_eq!(select(&candidates), vec![1, 2]);
    }

    #[test]
    fn a_zero_no_other_test_returned_keeps_its_test_on_the_same_lines_and_outcome() {
        // `divmod(100)` and `divmod(42)` run the same lines to the same outcome, but only the
        // first gives a zero remainder: a mutant `r + q * 100` for `r - q * 100` needs it.
        let ok = [("p::format", "returned")];
        let mut zero = test(&[1, 2], &ok, 3);
        zero.classes = [("p::divmod", ".0 +"), ("p::divmod", ".1 0")]
            .iter()
            .map(|(f, c)| (f.to_string(), c.to_string()))
            .collect();
        let mut other = test(&[1, 2], &ok, 0);
        other.classes = [("p::divmod", ".0 0"), ("p::divmod", ".1 +")]
            .iter()
            .map(|(f, c)| (f.to_string(), c.to_string()))
            .collect();
        let same = other.clone();
        let candidates = vec![other, same, zero];
        assert_eq!(select(&candidates), vec![0, 2]);
        assert_eq!(reached(&candidates, Some(&[0])), reach(2, 1, 2));
        assert_eq!(reached(&candidates, None), reach(2, 1, 4));
    }

    #[test]
    fn nothing_is_kept_of_nothing() {
        assert_eq!(select(&[]), Vec::<usize>::new());
        assert_eq!(reached(&[], None), Reached::default());
    }
}
