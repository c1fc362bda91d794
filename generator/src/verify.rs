//! Verify: in, the files written and the crate; out, what was taken out and why. Build the
//! carved tests against the crate they were carved from, take out the tests that do not
//! compile (compile repair, `repair.rs`: the rules of `repair/rules/`), then run the rest
//! several times and take out any test that fails or flakes, then run each test left alone
//! and take out one that fails so (`alone.rs`): every carved test must pass on the recorded
//! version, with its file and by itself.
//! Each file on disk is left as verified, without what was taken out; what was taken out, and
//! why, goes to `carved_quarantine.md`. A table test (`rows.rs`) loses only its failing rows:
//! the row a compile error points into, or the one a failed run names (`case {i}`), and the
//! file runs again without it; a table that fails without naming a row goes whole. Before all
//! that, the values some checks expect are observed on this build (`observe.rs`).

pub(crate) mod alone;
pub(crate) mod cargo;
pub(crate) mod consts;
pub mod libtest;
pub(crate) mod line_coverage;
pub(crate) mod observe;
pub(crate) mod repair;
pub(crate) mod rows;
pub(crate) mod take_out;
pub(crate) mod tidy;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use crate::error::GenerateError;
use crate::interrupt::Interrupt;
use crate::plan::files::Header;
use crate::plan::model::Plan;
use crate::progress::{Progress, Step};
pub(crate) use crate::verify::cargo::rewrite_without;
use crate::verify::cargo::{read_back, rewrite, run_cargo};

pub use crate::verify::cargo::Verify;

/// A carved test, or one row of a table test, taken out by verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Quarantined {
    pub file: String,
    pub test: String,
    /// The row of a table test taken out alone: its position in the table as carved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row: Option<usize>,
    pub reason: String,
}

/// One carved file to verify: its tests, and how many rows each table test has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnderTest {
    pub(crate) file: String,
    pub(crate) tests: Vec<String>,
    pub(crate) rows: BTreeMap<String, usize>,
}

/// A test's failures over a file's runs.
#[derive(Debug, Default)]
struct Failed {
    times: u32,
    /// The first failure's message.
    message: String,
    /// For a table test: how many times each row (as written) was the one failing.
    rows: BTreeMap<usize, u32>,
    /// For a table test: failures that named no row.
    unnamed: u32,
    /// Failed run alone, having passed beside the other tests of its file (`alone.rs`).
    alone: bool,
}

/// The outcome of one file's runs.
#[derive(Debug, Default)]
struct FileRuns {
    failed: BTreeMap<String, Failed>,
    /// Set when the file did not compile: the first error line.
    compile_error: Option<String>,
}

/// Rounds of runs a file gets while rows of its tables fail one by one (a table stops at its
/// first failing row, so each round may find the next); after them, a failing table goes whole.
const MAX_ROW_ROUNDS: usize = 8;

/// The rows of each table test still written, by their positions as carved.
type Alive = BTreeMap<String, Vec<usize>>;

/// Rounds of compile repair before giving up on a file. rustc reports errors in phases (names,
/// then types, then borrows), so a second or third round is normal; each round must take out
/// at least one test.
const MAX_REPAIR_ROUNDS: usize = 5;

/// Verifies every file of `files` (name in `out_dir`, its tests): repairs it until it compiles,
/// runs it `runs` times, and rewrites it without the tests taken out (or removes it when none is
/// left, then calls `removed`, which takes its target out of a manifest that lists it, so the
/// next file builds). Returns the tests taken out.
pub(crate) fn quarantine(
    (crate_dir, out_dir): (&Path, &Path),
    files: &[UnderTest],
    v: &Verify,
    progress: Option<&Progress>,
    interrupt: Interrupt,
    removed: &dyn Fn() -> Result<(), GenerateError>,
) -> Result<Vec<Quarantined>, GenerateError> {
    let mut out = Vec::new();
    let runs_per_file = v.runs.max(1) as usize;
    let total = files.len() * runs_per_file;
    for (index, under) in files.iter().enumerate() {
        let at = |done: usize| {
            Progress::report(
                progress,
                Step::Verifying {
                    file: under.file.clone(),
                    done: index * runs_per_file + done,
                    total,
                },
            )
        };
        out.extend(verify_file(crate_dir, out_dir, under, (v, interrupt), &at)?);
        if !out_dir.join(&under.file).is_file() {
            removed()?;
        }
    }
    Ok(out)
}

/// Verifies one test file another tool wrote (`carve explore`): `file` in `out_dir` is a test
/// target of the crate at `crate_dir` holding the top-level `#[test]` functions `tests`. Builds
/// it, taking out the tests the compiler's errors point into, runs it `v.runs` times and takes
/// out what fails or flakes; the file is left without them (removed when none is left).
pub fn verify_test_file(
    (crate_dir, out_dir): (&Path, &Path),
    file: &str,
    tests: &[String],
    v: &Verify,
    interrupt: Interrupt,
) -> Result<Vec<Quarantined>, GenerateError> {
    let under = UnderTest {
        file: file.to_string(),
        tests: tests.to_vec(),
        rows: BTreeMap::new(),
    };
    verify_file(crate_dir, out_dir, &under, (v, interrupt), &|_| {})
}

/// The errors in `cargo build --message-format=json` output, each with the line of the file
/// named `file_name` its primary span points at (out of macro expansions), when it does: how
/// a program carve generated learns which of its parts do not compile.
pub fn compile_error_lines(cargo_json: &str, file_name: &str) -> Vec<(String, Option<usize>)> {
    repair::compile_errors(cargo_json, file_name)
        .into_iter()
        .map(|e| (e.message, e.line))
        .collect()
}

/// Verifies one file (`at(n)`: told after its n-th run): builds it, taking out the tests the
/// compiler names, then runs it `v.runs` times, taking out what fails, row by row for a table,
/// round after round. Gives what it took out; a file with no test left goes.
fn verify_file(
    crate_dir: &Path,
    out_dir: &Path,
    under: &UnderTest,
    (v, interrupt): (&Verify, Interrupt),
    at: &dyn Fn(usize),
) -> Result<Vec<Quarantined>, GenerateError> {
    let (file, tests) = (&under.file, &under.tests);
    let runs_per_file = v.runs.max(1) as usize;
    at(0);
    let stem = file.trim_end_matches(".rs");
    let mut alive: Alive = under
        .rows
        .iter()
        .map(|(t, &n)| (t.clone(), (0..n).collect()))
        .collect();
    let mut taken_out = Vec::new();
    // The tests that passed run alone: they need not run alone again in a later round.
    let mut alone_ok: BTreeSet<String> = BTreeSet::new();
    observe::observe_file(crate_dir, out_dir, file, (v, interrupt))?;
    let mut compile_error = repair_file(
        crate_dir,
        out_dir,
        file,
        (v, interrupt),
        &mut taken_out,
        &mut alive,
    )?;
    for round in 0..MAX_ROW_ROUNDS {
        let mut runs = FileRuns {
            compile_error: compile_error.take(),
            ..FileRuns::default()
        };
        for run in 0..runs_per_file {
            if runs.compile_error.is_some() {
                break;
            }
            run_once(crate_dir, stem, (v, interrupt), &mut runs)?;
            if round == 0 {
                at(run + 1);
            }
        }
        if runs.compile_error.is_some() {
            if round == 0 {
                at(runs_per_file); // its runs are skipped
            }
            compile_error = runs.compile_error;
            break;
        }
        let last_round = round + 1 == MAX_ROW_ROUNDS;
        let (failed, rows) = judge(file, runs.failed, &mut alive, last_round, v, &mut taken_out);
        take_out(out_dir, file, (&failed, &rows), &mut alive)?;
        if !rows.is_empty() {
            continue; // the file runs again without them
        }
        // The file's runs pass: each test left runs alone, once.
        let left: Vec<String> = tests
            .iter()
            .filter(|t| !gone(&taken_out, &alive, t) && !alone_ok.contains(*t))
            .cloned()
            .collect();
        let failures = alone_failures(crate_dir, stem, &left, (v, interrupt))?;
        if failures.is_empty() {
            break;
        }
        alone_ok.extend(left.into_iter().filter(|t| !failures.contains_key(t)));
        let (failed, rows) = judge(file, failures, &mut alive, last_round, v, &mut taken_out);
        take_out(out_dir, file, (&failed, &rows), &mut alive)?;
        // and the next round runs the file again without them.
    }
    if let Some(error) = &compile_error {
        let reason = format!("the file does not compile: {error}");
        let left: Vec<_> = tests
            .iter()
            .filter(|t| !taken_out.iter().any(|q| &q.test == *t && q.row.is_none()))
            .filter(|t| alive.get(*t).is_none_or(|rows| !rows.is_empty()))
            .map(|t| taken_out_test(file, t, reason.clone()))
            .collect();
        taken_out.extend(left);
    }
    // The file on disk already lacks what was taken out; a file with no test left goes.
    if tests.iter().all(|t| gone(&taken_out, &alive, t)) {
        let _ = std::fs::remove_file(out_dir.join(file));
    }
    Ok(taken_out)
}

/// Whether `test` was taken out whole, or lost every row of its table.
fn gone(taken_out: &[Quarantined], alive: &Alive, test: &String) -> bool {
    taken_out.iter().any(|q| &q.test == test && q.row.is_none())
        || alive.get(test).is_some_and(Vec::is_empty)
}

/// Writes `file` again without the tests (`failed`) and table rows (`rows`, positions as
/// written, then forgotten in `alive`) one round's judgement took out.
fn take_out(
    out_dir: &Path,
    file: &str,
    (failed, rows): (&BTreeSet<String>, &BTreeMap<String, BTreeSet<usize>>),
    alive: &mut Alive,
) -> Result<(), GenerateError> {
    if !failed.is_empty() {
        rewrite_without(out_dir, file, failed)?;
    }
    if !rows.is_empty() {
        forget_rows(alive, rows);
        rewrite_without_rows(out_dir, file, rows)?;
    }
    Ok(())
}

/// `test` of `file` taken out, whole, for `reason`.
fn taken_out_test(file: &str, test: &str, reason: String) -> Quarantined {
    Quarantined {
        file: file.to_string(),
        test: test.to_string(),
        row: None,
        reason,
    }
}

/// Why a test (or row) that failed `times` of `v.runs` runs with `message` is taken out.
fn failure_reason(times: u32, v: &Verify, message: &str) -> String {
    if times >= v.runs.max(1) {
        format!("fails against the recorded code: {message}")
    } else {
        format!("flaky: failed {times} of {} runs: {message}", v.runs.max(1))
    }
}

impl Failed {
    /// Why the test (or a row of it) that failed so, `times` of `v.runs` runs, is taken out.
    fn reason(&self, times: u32, v: &Verify) -> String {
        if self.alone {
            alone::reason(&self.message)
        } else {
            failure_reason(times, v, &self.message)
        }
    }
}

/// What goes for the failures of one round (added to `taken_out`): a test whole (returned in
/// the first set), or, for a table whose failures each named a row still written, those rows
/// (returned by test, as written), unless it is the `last_round`.
fn judge(
    file: &str,
    failures: BTreeMap<String, Failed>,
    alive: &mut Alive,
    last_round: bool,
    v: &Verify,
    taken_out: &mut Vec<Quarantined>,
) -> (BTreeSet<String>, BTreeMap<String, BTreeSet<usize>>) {
    let mut failed = BTreeSet::new();
    let mut rows: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for (test, f) in failures {
        let by_row = alive
            .get_mut(&test)
            .filter(|_| f.unnamed == 0 && !last_round);
        let Some(left) = by_row.filter(|left| f.rows.keys().all(|&r| r < left.len())) else {
            taken_out.push(taken_out_test(file, &test, f.reason(f.times, v)));
            alive.remove(&test);
            failed.insert(test);
            continue;
        };
        for (&row, &times) in &f.rows {
            taken_out.push(Quarantined {
                row: Some(left[row]),
                ..taken_out_test(file, &test, f.reason(times, v))
            });
        }
        rows.insert(test, f.rows.keys().copied().collect());
    }
    (failed, rows)
}

/// Drops from `alive` the rows (positions as written) just taken out of each table.
fn forget_rows(alive: &mut Alive, rows: &BTreeMap<String, BTreeSet<usize>>) {
    for (test, gone) in rows {
        if let Some(left) = alive.get_mut(test) {
            let mut at = 0;
            left.retain(|_| {
                let keep = !gone.contains(&at);
                at += 1;
                keep
            });
        }
    }
}

/// Writes `file` again without the table rows in `rows` (see [`crate::verify::rows::remove_rows`]).
fn rewrite_without_rows(
    out_dir: &Path,
    file: &str,
    rows: &BTreeMap<String, BTreeSet<usize>>,
) -> Result<(), GenerateError> {
    rewrite(out_dir, file, |source| {
        crate::verify::rows::remove_rows(source, rows)
    })
}

/// Each file of `plan` in `out_dir` without the header lines (imports, `mock!`s, hoisted
/// texts) its tests no longer need; the plan's files say what they declare after.
pub(crate) fn tidy_files(out_dir: &Path, plan: &mut Plan) -> Result<(), GenerateError> {
    for file in &mut plan.files {
        if !out_dir.join(&file.file_name).is_file() {
            continue;
        }
        let declared = Header::declared(file);
        let needed = Header::of(&file.tests);
        let source = read_back(out_dir, &file.file_name)?;
        let tidy = tidy::without_stale(&source, &declared, &needed);
        let tidy = crate::render::hoist::without_unused_consts(&tidy);
        if tidy != source {
            crate::render::write::write_all(out_dir, &[(file.file_name.clone(), tidy)])?;
        }
        file.mocks = needed.mocks;
        file.uses = needed.uses;
        file.needs_predicates = needed.needs_predicates;
        file.needs_sequence = needed.needs_sequence;
    }
    Ok(())
}

/// Builds `file`'s test target and, while it does not compile, takes out the tests the
/// compiler's errors point into (writing the file again each round), adding each to
/// `taken_out`. Returns why the file cannot be repaired test by test, when it cannot: then the
/// whole file goes.
fn repair_file(
    crate_dir: &Path,
    out_dir: &Path,
    file: &str,
    (v, interrupt): (&Verify, Interrupt),
    taken_out: &mut Vec<Quarantined>,
    alive: &mut Alive,
) -> Result<Option<String>, GenerateError> {
    let stem = file.trim_end_matches(".rs");
    let args = cargo::build_args(stem);
    let mut round = 0;
    loop {
        let Some(built) = run_cargo(crate_dir, &args, (v, interrupt))? else {
            return Ok(Some(format!(
                "cargo test --no-run --test {stem} took longer than {} s",
                v.timeout.as_secs()
            )));
        };
        if built.success {
            return Ok(None);
        }
        let errors = repair::compile_errors(&built.stdout, file);
        let Some(first) = errors.first() else {
            // Not the compiler: cargo itself (a dependency that cannot be fetched, ...).
            return Ok(Some(libtest::first_error(&built.stderr).unwrap_or_else(
                || format!("cargo test --no-run --test {stem} failed without saying why"),
            )));
        };
        if round == MAX_REPAIR_ROUNDS {
            return Ok(Some(format!(
                "{} (still, after {MAX_REPAIR_ROUNDS} rounds of taking out the tests the \
                 compiler named)",
                first.message
            )));
        }
        round += 1;
        let source = read_back(out_dir, file)?;
        let repair = match repair::blame(&source, &errors) {
            Ok(repair) if !repair.tests.is_empty() || !repair.rows.is_empty() => repair,
            // Only a mock no test uses: taking it out would take out no test.
            Ok(_) => return Ok(Some(first.message.clone())),
            Err(why) => {
                return Ok(Some(format!(
                    "{why}; this error is not inside one test, so no test could be taken out \
                     alone"
                )))
            }
        };
        if !repair.remove.is_empty() {
            rewrite_without(out_dir, file, &repair.remove)?;
        }
        for (test, rows) in &repair.rows {
            let Some(left) = alive.get(test) else {
                continue;
            };
            for (&row, reason) in rows {
                taken_out.push(Quarantined {
                    file: file.to_string(),
                    test: test.clone(),
                    row: left.get(row).copied(),
                    reason: reason.clone(),
                });
            }
        }
        if !repair.rows.is_empty() {
            let rows = repair
                .rows
                .iter()
                .map(|(t, rows)| (t.clone(), rows.keys().copied().collect()))
                .collect();
            forget_rows(alive, &rows);
            rewrite_without_rows(out_dir, file, &rows)?;
        }
        for test in &repair.remove {
            alive.remove(test);
        }
        taken_out.extend(repair.tests.into_iter().map(|(test, reason)| Quarantined {
            file: file.to_string(),
            test,
            row: None,
            reason,
        }));
    }
}

fn run_once(
    crate_dir: &Path,
    stem: &str,
    (v, interrupt): (&Verify, Interrupt),
    runs: &mut FileRuns,
) -> Result<(), GenerateError> {
    let args = ["test", "--test", stem, "--color", "never"];
    let Some(ran) = run_cargo(crate_dir, &args, (v, interrupt))? else {
        runs.compile_error = Some(format!(
            "cargo test --test {stem} took longer than {} s",
            v.timeout.as_secs()
        ));
        return Ok(());
    };
    let (stdout, stderr) = (ran.stdout, ran.stderr);
    if !stdout.lines().any(|l| l.starts_with("test result:")) {
        let error = libtest::first_error(&stderr)
            .unwrap_or_else(|| "cargo test ended without running it".to_string());
        runs.compile_error = Some(error);
        return Ok(());
    }
    count_failures(&stdout, &mut runs.failed);
    Ok(())
}

/// Counts into `failed` each test libtest's output `stdout` reports failed: one time more,
/// its first failure's message, and the row of a table test it named (`case {i}`).
fn count_failures(stdout: &str, failed: &mut BTreeMap<String, Failed>) {
    let failures = libtest::failures(stdout);
    for test in libtest::failed(stdout) {
        let first = failures.get(&test).and_then(|f| f.first());
        let message = first.map_or_else(|| "(no message)".to_string(), |f| f.summary());
        let row = first.and_then(|f| crate::verify::rows::failed_row(&f.message));
        let entry = failed.entry(test).or_insert_with(|| Failed {
            message,
            ..Failed::default()
        });
        entry.times += 1;
        match row {
            Some(row) => *entry.rows.entry(row).or_default() += 1,
            None => entry.unnamed += 1,
        }
    }
}

/// Runs each of `tests` of the target `stem` alone (`alone.rs`) and gives the failures of
/// those that fail so, marked as failing alone; a test that hangs alone fails.
fn alone_failures(
    crate_dir: &Path,
    stem: &str,
    tests: &[String],
    (v, interrupt): (&Verify, Interrupt),
) -> Result<BTreeMap<String, Failed>, GenerateError> {
    let mut failed = BTreeMap::new();
    for (test, printed) in alone::run_each(crate_dir, stem, tests, (v, interrupt))? {
        match printed {
            Some(stdout) => count_failures(&stdout, &mut failed),
            None => {
                let hung = Failed {
                    times: 1,
                    message: format!("took longer than {} s", v.timeout.as_secs()),
                    unnamed: 1,
                    ..Failed::default()
                };
                failed.insert(test, hung);
            }
        }
    }
    for f in failed.values_mut() {
        f.alone = true;
    }
    Ok(failed)
}

/// `carved_quarantine.md`: the tests verification took out and why.
pub(crate) fn quarantine_report(program: &str, runs: u32, quarantined: &[Quarantined]) -> String {
    // The program's name comes from the trace: hostile text, like everything in it.
    let program = crate::syntax::markdown_code_text(program);
    let mut s = format!(
        "# Carved tests taken out by verification\n\n\
         These tests were carved from a recording of `{program}` but did not compile, did not \
         pass all {runs} runs against the code they were carved from, or failed when run alone, \
         so they were taken out of the files. Regenerate after fixing what the reason points \
         at, or record again.\n\n\
         | file | test | reason |\n| --- | --- | --- |\n"
    );
    for q in quarantined {
        let row = q.row.map_or_else(String::new, |row| {
            format!(" (row {row} of its table as carved)")
        });
        s.push_str(&format!(
            "| {} | `{}`{row} | {} |\n",
            q.file,
            q.test,
            q.reason.replace('|', "\\|")
        ));
    }
    s
}

/// Where verification lists the tests it took out.
pub const QUARANTINE_FILE: &str = "carved_quarantine.md";

/// The file `carve generate` lists its taken-out tests in, for tests whose files begin with
/// `prefix` (`carved_it_` for a recorded target other than the crate's own).
pub(crate) fn quarantine_file_name(prefix: Option<&str>) -> String {
    prefix.map_or_else(
        || QUARANTINE_FILE.to_string(),
        |prefix| format!("{prefix}quarantine.md"),
    )
}

/// What a [`quarantine_report`] lists, read back (its rows; the reason as written, `|`
/// unescaped); other lines are not rows.
pub(crate) fn read_quarantine_report(text: &str) -> Vec<Quarantined> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(row) = line.strip_prefix("| ").and_then(|l| l.strip_suffix(" |")) else {
            continue;
        };
        let Some((file, rest)) = row.split_once(" | `") else {
            continue;
        };
        let Some((test, rest)) = rest.split_once('`') else {
            continue;
        };
        let Some((at, reason)) = rest.split_once(" | ") else {
            continue;
        };
        let row = (at.strip_prefix(" (row "))
            .and_then(|r| r.split_once(' '))
            .and_then(|(n, _)| n.parse().ok());
        out.push(Quarantined {
            file: file.to_string(),
            test: test.to_string(),
            row,
            reason: reason.replace("\\|", "|"),
        });
    }
    out
}

/// The files of `plan` as verification sees them: their tests, and the rows of each table test.
pub(crate) fn under_test(plan: &crate::plan::model::Plan) -> Vec<UnderTest> {
    plan.files.iter().map(file_under_test).collect()
}

/// One file of a plan as verification takes it: its tests and each table's rows.
pub(crate) fn file_under_test(f: &crate::plan::model::FilePlan) -> UnderTest {
    UnderTest {
        file: f.file_name.clone(),
        tests: f.tests.iter().map(|t| t.name.clone()).collect(),
        rows: f
            .tests
            .iter()
            .filter_map(|t| Some((t.name.clone(), t.table.as_ref()?.rows.len())))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_run_alone_names_its_message_and_row() {
        let out = "\nrunning 1 test\ntest origin_recorded_cases ... FAILED\n\nfailures:\n\n\
                   ---- origin_recorded_cases stdout ----\n\nthread 'origin_recorded_cases' \
                   panicked at tests/carved_app.rs:9:5:\nassertion `left == right` failed: \
                   case 1\n  left: \"Opaque(OpaqueOrigin(0))\"\n right: \
                   \"Opaque(OpaqueOrigin(1))\"\n\nfailures:\n    origin_recorded_cases\n\n\
                   test result: FAILED. 0 passed; 1 failed\n";
        let mut failed = BTreeMap::new();
        count_failures(out, &mut failed);
        let f = &failed["origin_recorded_cases"];
        assert_eq!(f.rows.keys().copied().collect::<Vec<_>>(), vec![1]);
        assert!(f.message.contains("OpaqueOrigin(0)"), "{}", f.message);
        let passed = "\nrunning 1 test\ntest origin ... ok\n\ntest result: ok. 1 passed\n";
        let mut none = BTreeMap::new();
        count_failures(passed, &mut none);
        assert!(none.is_empty());
    }

    #[test]
    fn a_quarantine_report_reads_back_as_the_tests_and_rows_it_lists() {
        let quarantined = [
            Quarantined {
                file: "carved_app_v.rs".into(),
                test: "eq_returns_true".into(),
                row: None,
                reason: "fails: assertion failed: result".into(),
            },
            Quarantined {
                file: "carved_app_v.rs".into(),
                test: "pop_returns_some_1".into(),
                row: Some(2),
                reason: "fails: left | right".into(),
            },
        ];
        let report = quarantine_report("app", 3, &quarantined);
        assert_eq!(read_quarantine_report(&report), quarantined);
        let names: Vec<String> = (read_quarantine_report(&report).into_iter())
            .map(|q| q.test)
            .collect();
        assert_eq!(names, ["eq_returns_true", "pop_returns_some_1"]);
        assert!(read_quarantine_report("| a | `not_a_test` b |\n# heading\n").is_empty());
        assert_eq!(quarantine_file_name(None), QUARANTINE_FILE);
        assert_eq!(
            quarantine_file_name(Some("carved_app_")),
            "carved_app_quarantine.md"
        );
    }

    #[test]
    fn the_quarantine_report_lists_each_test_with_its_reason() {
        let report = quarantine_report(
            "calc",
            3,
            &[Quarantined {
                file: "carved_calc.rs".into(),
                test: "now_returns_5".into(),
                row: None,
                reason: "flaky: failed 1 of 3 runs: a|b".into(),
            }],
        );
        assert!(report
            .contains("| carved_calc.rs | `now_returns_5` | flaky: failed 1 of 3 runs: a\\|b |"));
    }

    #[test]
    fn the_quarantine_report_escapes_the_program_name_the_trace_gives() {
        let report =
            quarantine_report("x\n\u{1b}]0;owned\u{7}<img src=x onerror=alert(1)>", 3, &[]);
        assert!(
            report.contains(
                "a recording of `x\\n\\u{1b}]0;owned\\u{7}\\u{3c}img src=x onerror=alert(1)\\u{3e}` but"
            ),
            "{report}"
        );
        assert!(
            !report.contains('\u{1b}') && !report.contains('<'),
            "{report}"
        );
    }
}
