//! Lines beyond the run: in, the harness's coverage guards (`--pcs`: each guard's address in
//! the executable) and the lines the recorded run reached; out, the crate line each guard
//! stands for, and which of them no earlier call reached. A guard is an edge of the compiled
//! code (LLVM's SanitizerCoverage); its address is placed by the harness's line tables
//! (`carve_recorder::LineTable`), and only lines of the explored crate's own files count:
//! the harness's dispatch, the standard library's inlined code and other crates are not the
//! crate's behaviour.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::process::Command;

use crate::error::ExploreError;
use crate::RunLines;

/// A source line: (file, line).
pub type Line = (String, u32);

/// An edge of the crate's code: its line and its place among the guards on that line, in
/// guard order (what a rebuilt harness, whose guards are numbered afresh, keeps).
type Edge = (Line, u32);

/// The crate line of each guard, and the lines reached so far.
#[derive(Debug, Default)]
pub struct Lines {
    of_guard: HashMap<u32, Line>,
    /// Each guard's place among those on its line.
    nth_on_line: HashMap<u32, u32>,
    /// The edges a call took (the recording's, replayed, or the search's).
    taken: HashSet<Edge>,
    /// Lines the recorded run reached, or a call before reached.
    known: BTreeSet<Line>,
    /// The lines the run reached in the crate's files the harness links.
    pub run: usize,
    /// Lines the run never reached that a call reached.
    pub beyond: BTreeSet<Line>,
    /// Crate lines with a guard.
    pub with_guard: usize,
}

impl Lines {
    /// Places the guards of the harness `bin` by its line tables `table` (crate files: those
    /// under `crate_dir`, or named relative to it) and starts from the lines the run reached,
    /// `run_lines`.
    pub fn read(
        (bin, table): (&Path, &carve_recorder::LineTable),
        crate_dir: &Path,
        run_lines: &RunLines,
    ) -> Result<Lines, ExploreError> {
        let out = Command::new(bin)
            .arg("--pcs")
            .output()
            .map_err(|e| ExploreError::io(format!("run {} --pcs", bin.display()), e))?;
        let addrs: Vec<u64> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| u64::from_str_radix(l.trim(), 16).ok())
            .collect();
        let placed = addrs
            .iter()
            .map(|&a| table.line(a).map(|(f, n)| (f.to_string(), n)))
            .collect();
        Ok(Lines::new(placed, crate_dir, run_lines))
    }

    /// `placed[i]`: where guard `i + 1` lies.
    pub(crate) fn new(placed: Vec<Option<Line>>, crate_dir: &Path, run_lines: &RunLines) -> Lines {
        let mut of_guard = HashMap::new();
        let mut nth_on_line = HashMap::new();
        let mut on_line: HashMap<Line, u32> = HashMap::new();
        for (i, place) in placed.into_iter().enumerate() {
            if let Some(place) = place.and_then(|p| crate_line(p, crate_dir, &run_lines.with_code))
            {
                let nth = on_line.entry(place.clone()).or_default();
                nth_on_line.insert(i as u32 + 1, *nth);
                *nth += 1;
                of_guard.insert(i as u32 + 1, place);
            }
        }
        let with_guard: BTreeSet<&Line> = of_guard.values().collect();
        // The library's files: those the harness links code of (not the program's main.rs).
        let files: BTreeSet<&str> = with_guard.iter().map(|(f, _)| f.as_str()).collect();
        let run = run_lines
            .reached
            .iter()
            .filter(|(f, _)| files.contains(f.as_str()))
            .count();
        Lines {
            with_guard: with_guard.len(),
            of_guard,
            nth_on_line,
            taken: HashSet::new(),
            known: run_lines.reached.clone(),
            run,
            beyond: BTreeSet::new(),
        }
    }

    /// Knows what `old` (another harness's) knew: the lines reached, those beyond the run.
    pub fn carry(&mut self, old: Lines) {
        self.known.extend(old.known);
        self.taken.extend(old.taken);
        self.beyond.extend(old.beyond);
    }

    /// Marks the crate lines among `guards` reached, as the run's own (the recording's calls,
    /// replayed): not lines beyond the run.
    pub fn known_already(&mut self, guards: &[u32]) {
        self.first_taken(guards);
        for g in guards {
            if let Some(line) = self.of_guard.get(g) {
                self.known.insert(line.clone());
            }
        }
    }

    /// The crate lines, reached before, on which `guards` took an edge no call took before
    /// (the recording's calls, replayed, or the search's): a branch within a line (`a && b`
    /// stopping at `a`, a match arm with no code of its own, a loop run once more). Every
    /// edge among `guards` is now taken; a line reached for the first time is
    /// [`Self::first_reached`]'s.
    pub fn first_taken(&mut self, guards: &[u32]) -> Vec<Line> {
        let mut new: Vec<Line> = Vec::new();
        for g in guards {
            let (Some(line), Some(&nth)) = (self.of_guard.get(g), self.nth_on_line.get(g)) else {
                continue;
            };
            if self.taken.insert((line.clone(), nth))
                && self.known.contains(line)
                && !new.contains(line)
            {
                new.push(line.clone());
            }
        }
        new
    }

    /// The crate lines among `guards` that neither the run nor an earlier call reached (now
    /// known).
    pub fn first_reached(&mut self, guards: &[u32]) -> Vec<Line> {
        let mut new = Vec::new();
        for g in guards {
            if let Some(line) = self.of_guard.get(g) {
                if self.known.insert(line.clone()) {
                    if let Some(&nth) = self.nth_on_line.get(g) {
                        self.taken.insert((line.clone(), nth));
                    }
                    self.beyond.insert(line.clone());
                    new.push(line.clone());
                }
            }
        }
        new
    }
}

/// `(file, line)` as a line of the crate in `crate_dir` (its file named from there), when it
/// is one and the run selected code on it (`with_code`, when known): the harness's dispatch,
/// the standard library's inlined code, other crates and code the run had no breakpoint on (a
/// derived `Debug`) are not the crate's behaviour.
pub(crate) fn crate_line(
    (file, line): Line,
    crate_dir: &Path,
    with_code: &BTreeSet<Line>,
) -> Option<Line> {
    let path = Path::new(&file);
    let path = if path.is_relative() {
        crate_dir.join(path)
    } else {
        path.to_path_buf()
    };
    let place = (path.to_string_lossy().into_owned(), line);
    let selected = with_code.is_empty() || with_code.contains(&place);
    (path.starts_with(crate_dir) && !path.starts_with(crate_dir.join("target")) && selected)
        .then_some(place)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(file: &str, n: u32) -> Line {
        (file.to_string(), n)
    }

    #[test]
    fn only_the_crates_lines_count_and_a_line_the_run_reached_is_not_new() {
        let dir = Path::new("/work/lib");
        let placed = vec![
            Some(line("/work/lib/src/lib.rs", 3)),
            Some(line("src/lib.rs", 7)),
            // The harness's own dispatch, std's inlined code.
            Some(line("/work/lib/target/carve/explore/src/main.rs", 90)),
            Some(line("/rustc/abc/library/core/src/fmt/mod.rs", 12)),
            None,
            Some(line("/work/lib/src/lib.rs", 9)),
        ];
        let run = RunLines {
            reached: [line("/work/lib/src/lib.rs", 3)].into_iter().collect(),
            with_code: BTreeSet::new(),
            ..Default::default()
        };
        let mut lines = Lines::new(placed.clone(), dir, &run);
        assert_eq!(lines.with_guard, 3);
        assert_eq!(lines.run, 1);
        assert_eq!(
            lines.first_reached(&[1, 2, 3, 4, 5]),
            vec![line("/work/lib/src/lib.rs", 7)]
        );
        // A line is new once; a restarted harness that runs guard 2 again adds nothing.
        assert_eq!(
            lines.first_reached(&[2, 6]),
            vec![line("/work/lib/src/lib.rs", 9)]
        );
        assert!(lines.first_reached(&[2]).is_empty());
        assert_eq!(lines.beyond.len(), 2);

        // A line with no code the run selected (a derived impl) is not counted.
        let run = RunLines {
            with_code: [3, 7]
                .iter()
                .map(|n| line("/work/lib/src/lib.rs", *n))
                .collect(),
            ..run
        };
        let mut lines = Lines::new(placed, dir, &run);
        assert_eq!(lines.with_guard, 2);
        assert!(lines.first_reached(&[6]).is_empty());
    }

    #[test]
    fn an_edge_no_call_took_on_a_line_reached_before_is_a_branch_first_taken() {
        let dir = Path::new("/work/lib");
        let run = RunLines {
            reached: [line("/work/lib/src/lib.rs", 7)].into_iter().collect(),
            ..RunLines::default()
        };
        // Guards 1 and 2 on line 7 (`a && b`), 3 on line 9; the replayed calls took guard 1.
        let placed = vec![
            Some(line("src/lib.rs", 7)),
            Some(line("src/lib.rs", 7)),
            Some(line("src/lib.rs", 9)),
        ];
        let mut lines = Lines::new(placed.clone(), dir, &run);
        lines.known_already(&[1]);
        assert!(
            lines.first_taken(&[1]).is_empty(),
            "taken by the replayed calls"
        );
        // A line reached for the first time is a new line, not a branch.
        assert!(lines.first_taken(&[3]).is_empty());
        assert_eq!(
            lines.first_reached(&[3]),
            vec![line("/work/lib/src/lib.rs", 9)]
        );
        assert_eq!(
            lines.first_taken(&[2, 3]),
            vec![line("/work/lib/src/lib.rs", 7)]
        );
        assert!(lines.first_taken(&[2]).is_empty());
        // A rebuilt harness numbers its guards afresh: the edges are known by line and place.
        let mut after = Lines::new([vec![None], placed].concat(), dir, &run);
        after.carry(lines);
        assert!(after.first_taken(&[2, 3, 4]).is_empty());
    }

    #[test]
    fn another_harness_whose_guards_lie_elsewhere_knows_the_lines_reached_before() {
        let dir = Path::new("/work/lib");
        let run = RunLines::default();
        let mut before = Lines::new(vec![Some(line("src/lib.rs", 7))], dir, &run);
        assert_eq!(before.first_reached(&[1]).len(), 1);
        let placed = vec![
            None,
            Some(line("src/lib.rs", 9)),
            Some(line("src/lib.rs", 7)),
        ];
        let mut after = Lines::new(placed, dir, &run);
        after.carry(before);
        assert!(
            after.first_reached(&[3]).is_empty(),
            "line 7 was reached before"
        );
        assert_eq!(
            after.first_reached(&[2, 3]),
            vec![line("/work/lib/src/lib.rs", 9)]
        );
        assert_eq!(after.beyond.len(), 2);
    }
}
