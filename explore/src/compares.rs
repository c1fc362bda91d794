//! Comparison outcomes: in, the harness's `k` answers (each integer comparison a call met,
//! as its site in the executable and how its operands compared: below, equal or above); out,
//! the outcomes at comparisons of the crate's own lines that no earlier call met. A boundary
//! (`n >= 1024` met with `n == 1024`) is where a test tells `>=` from `>` (the mutants a run's
//! inputs leave alive), and it runs no line the other sides do not: lines alone never keep
//! it. Sites are placed once each by the harness's line tables, and only the crate's lines the
//! run selected count (`lines::crate_line`).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::lines::{crate_line, Line};

/// How a comparison's operands compared (as unsigned integers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Side {
    Below,
    Equal,
    Above,
}

impl Side {
    fn of(code: u64) -> Option<Side> {
        match code {
            0 => Some(Side::Below),
            1 => Some(Side::Equal),
            2 => Some(Side::Above),
            _ => None,
        }
    }

    /// As a kept test's doc line says it.
    pub fn word(self) -> &'static str {
        match self {
            Side::Below => "below",
            Side::Equal => "equal",
            Side::Above => "above",
        }
    }
}

/// A comparison outcome at a crate line.
pub type Met = (Line, Side);

/// The comparison sites placed so far and the outcomes met.
pub struct Compares {
    /// Where an address of the harness is (its line tables).
    place: Box<dyn Fn(u64) -> Option<Line>>,
    crate_dir: PathBuf,
    with_code: BTreeSet<Line>,
    /// Site offset → its crate line (`None`: not the crate's).
    placed: HashMap<u64, Option<Line>>,
    /// (site, side) met by a call so far.
    known: HashSet<u64>,
    /// The outcomes met first by a call the search kept or could have kept.
    pub met: BTreeSet<Met>,
    /// Outcomes another harness met ([`Self::carry`]): known at whichever site here.
    met_before: HashSet<Met>,
}

impl std::fmt::Debug for Compares {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compares")
            .field("placed", &self.placed.len())
            .field("known", &self.known.len())
            .finish_non_exhaustive()
    }
}

impl Compares {
    /// Places sites by the harness's line tables `table`; the crate is in `crate_dir`, and of
    /// its lines only those in `with_code` count (all when it is empty).
    pub fn of_table(
        table: carve_recorder::LineTable,
        crate_dir: &Path,
        with_code: BTreeSet<Line>,
    ) -> Compares {
        let place = move |addr| table.line(addr).map(|(f, n)| (f.to_string(), n));
        Compares::new(Box::new(place), crate_dir, with_code)
    }

    pub(crate) fn new(
        place: Box<dyn Fn(u64) -> Option<Line>>,
        crate_dir: &Path,
        with_code: BTreeSet<Line>,
    ) -> Compares {
        Compares {
            place,
            crate_dir: crate_dir.to_path_buf(),
            with_code,
            placed: HashMap::new(),
            known: HashSet::new(),
            met: BTreeSet::new(),
            met_before: HashSet::new(),
        }
    }

    /// Knows what `old` (another harness's, whose sites lie elsewhere) met, by crate line.
    pub fn carry(&mut self, old: Compares) {
        for &id in &old.known {
            let (site, Some(side)) = (id >> 2, Side::of(id & 3)) else {
                continue;
            };
            if let Some(Some(line)) = old.placed.get(&site) {
                self.met_before.insert((line.clone(), side));
            }
        }
        self.met_before.extend(old.met_before);
        self.met.extend(old.met);
    }

    /// The outcomes among `ids` (site offset times four plus the side) at crate lines that no
    /// earlier call met (now known, and counted in `met`).
    pub fn first_met(&mut self, ids: &[u64]) -> Vec<Met> {
        let new = self.unknown(ids);
        self.met.extend(new.iter().cloned());
        new
    }

    /// Marks `ids` met without counting them (the recording's own calls, replayed).
    pub fn known_already(&mut self, ids: &[u64]) {
        self.unknown(ids);
    }

    /// Whether comparison site `site` is on one of the crate's lines that count.
    pub fn at_crate_line(&mut self, site: u64) -> bool {
        let (place, dir, with_code) = (&self.place, &self.crate_dir, &self.with_code);
        (self.placed.entry(site))
            .or_insert_with(|| crate_line(place(site)?, dir, with_code))
            .is_some()
    }

    fn unknown(&mut self, ids: &[u64]) -> Vec<Met> {
        let mut new = Vec::new();
        for &id in ids {
            let (site, Some(side)) = (id >> 2, Side::of(id & 3)) else {
                continue;
            };
            let (place, dir, with_code) = (&self.place, &self.crate_dir, &self.with_code);
            let line = self
                .placed
                .entry(site)
                .or_insert_with(|| crate_line(place(site)?, dir, with_code));
            if let Some(line) = line {
                let met = (line.clone(), side);
                if self.known.insert(id) && !self.met_before.contains(&met) {
                    new.push(met);
                }
            }
        }
        new
    }
}

/// Where the crate's own code is in the harness: the [start, end) addresses of the rows of
/// `rows` (a line table's, in order) on a crate line that counts (`crate_line`), adjacent ones
/// merged, flat. The harness's `--crate-code` reads them and stops tracing comparisons
/// elsewhere, which [`Compares`] would not place.
pub fn crate_code<'t>(
    rows: impl Iterator<Item = (std::ops::Range<u64>, &'t str, u32)>,
    crate_dir: &Path,
    with_code: &BTreeSet<Line>,
) -> Vec<u64> {
    let mut counts: HashMap<(&str, u32), bool> = HashMap::new();
    let mut code: Vec<u64> = Vec::new();
    for (range, file, line) in rows {
        let counts = *counts.entry((file, line)).or_insert_with(|| {
            crate_line((file.to_string(), line), crate_dir, with_code).is_some()
        });
        if !counts || range.is_empty() {
            continue;
        }
        match code.last_mut() {
            Some(end) if *end == range.start => *end = range.end,
            _ => code.extend([range.start, range.end]),
        }
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crates_code_is_the_rows_on_its_lines_that_count_merged() {
        let rows = [
            (0x10..0x20, "/w/lib/src/lib.rs", 3),
            (0x20..0x28, "/w/lib/src/lib.rs", 4),
            (0x28..0x30, "/rustc/abc/library/core/src/slice/index.rs", 9),
            (0x30..0x38, "src/lib.rs", 5),
            (0x40..0x48, "/w/lib/src/lib.rs", 6),
            (0x48..0x50, "/w/lib/src/lib.rs", 7),
        ];
        let all = crate_code(rows.iter().cloned(), Path::new("/w/lib"), &BTreeSet::new());
        assert_eq!(all, [0x10, 0x28, 0x30, 0x38, 0x40, 0x50]);
        // Only the lines the run selected code on count, when it says.
        let with_code = BTreeSet::from([("/w/lib/src/lib.rs".to_string(), 4)]);
        let some = crate_code(rows.iter().cloned(), Path::new("/w/lib"), &with_code);
        assert_eq!(some, [0x20, 0x28]);
    }

    #[test]
    fn an_outcome_counts_once_at_a_crate_line_and_replayed_ones_not_at_all() {
        // Site 0x10 is the crate's line 7, 0x20 the harness's own dispatch.
        let place = |addr: u64| match addr {
            0x10 => Some(("src/lib.rs".to_string(), 7)),
            0x20 => Some(("/w/lib/target/carve/explore/src/main.rs".to_string(), 3)),
            _ => None,
        };
        let mut c = Compares::new(Box::new(place), Path::new("/w/lib"), BTreeSet::new());
        let at = |site: u64, side: u64| site << 2 | side;
        let line7 = ("/w/lib/src/lib.rs".to_string(), 7);
        c.known_already(&[at(0x10, 0)]);
        assert!(c
            .first_met(&[at(0x10, 0), at(0x20, 1), at(0x30, 1)])
            .is_empty());
        assert_eq!(
            c.first_met(&[at(0x10, 1), at(0x10, 2), at(0x10, 1)]),
            vec![(line7.clone(), Side::Equal), (line7.clone(), Side::Above)]
        );
        assert!(c.first_met(&[at(0x10, 1)]).is_empty());
        assert_eq!(c.met.len(), 2);
        // A line the run had no code selected on (a derived impl) does not count.
        let mut c = Compares::new(
            Box::new(place),
            Path::new("/w/lib"),
            [("/w/lib/src/lib.rs".to_string(), 9)].into_iter().collect(),
        );
        assert!(c.first_met(&[at(0x10, 1)]).is_empty());
    }
}
