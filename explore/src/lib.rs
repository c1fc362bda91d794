//! `carve explore`: new call sequences beyond the recorded run (seeds 001 and 004).
//!
//! A pipeline with plain data between stages, read top to bottom in [`explore`]: `api` (which
//! public calls the run reached can be explored) → `pools` (seed 004's test context: recorded
//! values and their boundary neighbours) → `harness` (one program per crate that runs call
//! sequences in process, built once, what does not compile taken out) → `strategy` (R, BE or
//! BOBW over canonical-form call numbers) → `keep` (JET's feasibility and redundancy; a
//! sequence kept only for an outcome nobody gave; unrecorded panics are findings) → `render`
//! (tests and reproducers), verified by the generator's verification.

// No function over 100 lines, as in the generator.
#![warn(clippy::too_many_lines)]

mod api;
mod closures;
mod compares;
mod dictionary;
mod drained;
mod error;
mod extend;
mod formats;
mod generic_types;
mod harness;
mod keep;
mod lines;
mod lookups;
mod moved;
mod operands;
mod operators;
mod pools;
mod prune;
mod pure;
mod render;
mod replay;
mod rounds;
mod search;
mod shapes;
mod std_traits;
mod strategy;
mod substitute;
mod tables;
#[cfg(test)]
mod testdata;
mod trait_calls;
mod world;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use carve_generator::{CrateApi, Interrupt, Quarantined, Verify};
use carve_storage::Trace;
use serde::Serialize;

use crate::rounds::{search_rounds, sequences, watch_coverage, Round};
use crate::search::{BATCH, SEQUENCE_TIMEOUT};

pub use crate::api::{Callable, Explorable, PoolKind};
pub use crate::error::ExploreError;
pub use crate::strategy::{Permutation, Strategy};

/// How long to explore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    Time(Duration),
    /// This many sequences run (those the strategy skipped or the harness stopped at a dead
    /// prefix not counted).
    Runs(u64),
}

/// What to explore and how.
#[derive(Debug, Clone)]
pub struct ExploreOptions {
    /// Where the kept tests go: a test directory of `crate_dir` (usually its `tests/`).
    pub out_dir: PathBuf,
    /// The recorded library crate.
    pub crate_dir: PathBuf,
    pub strategy: Strategy,
    /// Calls per sequence.
    pub length: usize,
    pub budget: Budget,
    pub seed: u64,
    /// The cargo that builds the harness and the tests.
    pub cargo: PathBuf,
    /// Run the kept tests before keeping them (`None`: write them unverified).
    pub verify: Option<Verify>,
    /// Set by the caller to stop: the search ends with [`ExploreError::Interrupted`] and
    /// verification puts the test file back.
    pub interrupt: Interrupt,
    /// The lines of the recorded run, when it was recorded with `--coverage`: a call reaching
    /// one it did not reach is kept. `None`: lines are not counted.
    pub run_lines: Option<RunLines>,
    /// Extend each kept sequence by one call on what it made and took (`extend.rs`), and
    /// search further rounds on grown pools (`Pools::grown`); off, only the strategy's
    /// sequences over the first pools run (seed 004's comparison of strategies).
    pub extend: bool,
}

/// The lines of a run recorded with `--coverage`, (file, line) with files as its DWARF names
/// them.
#[derive(Debug, Clone, Default)]
pub struct RunLines {
    /// The lines it reached.
    pub reached: std::collections::BTreeSet<(String, u32)>,
    /// Every line with code in the functions it selected, reached or not: only these count as
    /// lines beyond the run (code it did not select, such as formatting impls, is not
    /// counted as if the run had missed it).
    pub with_code: std::collections::BTreeSet<(String, u32)>,
    /// The functions it reached a line of: with those it recorded calls of, those with no
    /// code of their own (every call of them inlined: `#[inline(always)]`, even in a debug
    /// build), whose lines it reached where they were inlined. The run ran them: they are
    /// explored as if called.
    pub functions_reached: std::collections::BTreeSet<String>,
}

/// The crate lines the search reached beyond the run.
#[derive(Debug, Clone, Serialize)]
pub struct LinesReport {
    /// Crate lines the harness's coverage places (lines with an edge of compiled code).
    pub with_guard: usize,
    /// The crate lines the recorded run reached.
    pub run: usize,
    /// Lines the run never reached that the search reached, as `file:line`.
    pub beyond: Vec<String>,
    /// The recording's own calls the harness replayed first (where the counts start).
    pub replayed: usize,
    /// Comparison outcomes at crate lines the search met that the replayed calls did not, as
    /// `file:line equal|below|above`; `None` when the harness does not report comparisons.
    pub compares_beyond: Option<Vec<String>>,
}

/// A finding as reported.
#[derive(Debug, Clone, Serialize)]
pub struct FindingReport {
    /// The function that panicked (`None`: the harness died or hung in the sequence).
    pub function: Option<String>,
    pub message: String,
    pub times: u64,
    /// Markdown: the calls that reproduce it.
    pub reproducer: String,
}

/// What exploring did.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub strategy: Strategy,
    /// Calls per sequence explored: `--length`, or shorter for the reason given.
    pub length: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length_reason: Option<&'static str>,
    pub seed: u64,
    /// The functions explored (not the values written as they are: struct literals,
    /// variants), and those the run reached that were not (with why).
    pub explored: Vec<String>,
    pub left_out: Vec<(String, String)>,
    /// C: distinct calls per sequence position, F of them can come first (their receiver
    /// and object arguments start filled); F * C^(length-1) when it fits.
    pub calls_per_position: u64,
    pub first_calls: u64,
    pub sequences_in_space: Option<u128>,
    /// Sequences proposed by the strategy, skipped by it for a dead prefix, run, and stopped
    /// by the harness at a dead prefix (not counted as run).
    pub proposed: u64,
    pub skipped: u64,
    /// Rounds searched: after a round that ran every sequence of its space or levelled off,
    /// with budget left, the next runs pools grown with the rest of the crate's literals
    /// (`Pools::grown`).
    pub rounds: usize,
    pub sequences_run: u64,
    /// Of those run, how many extended a kept sequence (`extend.rs`).
    pub extended: u64,
    /// Of those run, how many were a kept sequence with a value a grown pool gained in place
    /// of one of its own (`substitute.rs`).
    pub substituted: u64,
    pub stopped_dead: u64,
    pub calls_run: u64,
    /// Seconds spent searching (the harness build not included), and of those, waiting for
    /// the harness's answers.
    pub seconds: f64,
    pub harness_seconds: f64,
    pub build_seconds: f64,
    /// BE or BOBW visited every sequence.
    pub exhausted: bool,
    /// Tests kept: written, and of those, passing verification.
    pub tests_written: usize,
    pub tests_kept: usize,
    /// The kept tests were run (`verify`) before being kept.
    pub verified: bool,
    pub taken_out: Vec<Quarantined>,
    pub findings: Vec<FindingReport>,
    pub file: Option<PathBuf>,
    pub findings_file: Option<PathBuf>,
    /// The functions explored that the run never reached, or why none is (the crate or a
    /// dependency names a way to touch the world: `pure.rs`).
    pub beyond_run: Result<Vec<String>, String>,
    /// Lines beyond the run, or why they were not counted.
    pub lines: Result<LinesReport, String>,
    /// Why each kept test was kept, by test name, as far as a recording of it cannot tell
    /// (the comparison outcomes it met first, the outcomes it gave a function first):
    /// distilling weighs them (`carve_generator::ExploreReasons`).
    #[serde(skip)]
    pub reasons: BTreeMap<String, carve_generator::ExploreReasons>,
    /// The kept tests distilled beside the carved suite (the CLI's; `None`: not asked), or
    /// why they were not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distilled: Option<Result<carve_generator::RecordedDistilled, String>>,
    /// The parameters' names of each function: by how a test writes it when it has no
    /// receiver (`clamps::clamp_to`), by its path when it is a method: a table's columns
    /// (`fold_tables`).
    #[serde(skip)]
    pub parameters: BTreeMap<String, Vec<String>>,
    /// How each function takes its receiver, by its path (`&`, `&mut`, `self`; empty for a
    /// function without one), then its parameters' kinds and its result: which functions
    /// share a table's column (`fold_tables`, `shapes::Receivers`).
    #[serde(skip)]
    pub receivers: shapes::Receivers,
    /// Of the tests distilling kept, those written as rows of tables (`fold_tables`): how many
    /// tables, how many rows.
    pub tables: usize,
    pub table_rows: usize,
}

impl Report {
    /// Calls run per second of the search.
    pub fn calls_per_second(&self) -> f64 {
        per_second(self.calls_run, self.seconds)
    }

    /// Calls run per second the harness was running them.
    pub fn harness_calls_per_second(&self) -> f64 {
        per_second(self.calls_run, self.harness_seconds)
    }
}

fn per_second(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

/// Why a crate with no object is explored one call at a time.
const SHORT_WITHOUT_OBJECTS: &str = "no object carries state from one call to the next";

/// Explores the crate `opts.crate_dir` from `trace` and writes what it keeps into
/// `opts.out_dir` (`explored_CRATE.rs`, verified; `explored_CRATE_findings.md`).
pub fn explore(trace: &Trace, opts: &ExploreOptions) -> Result<Report, ExploreError> {
    check(opts)?;
    let api = crate_api(trace, &opts.crate_dir)?;
    let only_computes = pure::only_computes(&api, &opts.cargo);
    let (mut ex, mut pools, dictionary) =
        calls_and_pools(trace, &api, opts, only_computes.is_ok())?;
    let started = Instant::now();
    let harness_dir = opts.crate_dir.join("target/carve/explore");
    world::build(&mut ex, &mut pools, &harness_dir)?;
    let features = carve_generator::recorded_features(&trace.run.info);
    let crate_dir = (opts.crate_dir.as_path(), features.as_slice());
    let built = harness::build::build(&harness_dir, crate_dir, &opts.cargo, ex, &pools)?;
    let build_seconds = started.elapsed().as_secs_f64();
    let ex = built.explorable;
    if ex.callables.is_empty() {
        return Err(nothing(&ex, "none of their calls compiles"));
    }
    let space = harness::space(&ex.callables, &pools)
        .ok_or_else(|| nothing(&ex, "their calls are too many to number"))?;
    let (length, length_reason) = length_of(&ex, opts);
    let seqs = sequences(opts, &ex, space, length)?;
    let mut keeper = keep::Keeper::new(trace, (&api, &opts.out_dir), &ex.callables);
    let watched = watch_coverage((&built.bin, &built.coverage), &api, opts);
    let lines_unread = watched.lines.as_ref().err().cloned();
    keeper.lines = watched.lines.ok();
    keeper.compares = watched.compares;
    let mut runner =
        harness::run::Runner::new(&built.bin, SEQUENCE_TIMEOUT).with_crate_code(watched.crate_code);
    let replayed = replay_recorded(trace, (&ex, &pools, seqs.space()), &mut keeper, &mut runner)?;
    let mut round = Round {
        pools,
        seqs,
        runner,
        bin: built.bin,
        coverage: built.coverage,
    };
    let dir = (harness_dir.as_path(), crate_dir);
    let (searched, rounds) = search_rounds(
        (&mut round, &mut keeper),
        (&ex, length, &dictionary),
        dir,
        (&api, opts),
    )?;
    let Round {
        pools, seqs, bin, ..
    } = round;
    let mut report = Report {
        strategy: opts.strategy,
        length: seqs.length(),
        length_reason,
        seed: opts.seed,
        explored: functions_explored(&ex),
        beyond_run: only_computes.map(|()| ex.beyond_run()),
        left_out: ex.left_out_of_the_run(),
        calls_per_position: seqs.space().calls,
        first_calls: seqs.first_calls(),
        sequences_in_space: seqs.total(),
        proposed: searched.proposed,
        skipped: searched.skipped,
        rounds,
        sequences_run: searched.run,
        extended: searched.extended,
        substituted: searched.substituted,
        stopped_dead: keeper.stopped_dead,
        calls_run: keeper.calls_run,
        seconds: searched.seconds,
        harness_seconds: searched.harness_seconds,
        build_seconds,
        exhausted: searched.exhausted,
        tests_written: 0,
        tests_kept: 0,
        verified: opts.verify.is_some(),
        taken_out: Vec::new(),
        findings: Vec::new(),
        file: None,
        findings_file: None,
        lines: lines_report(&keeper, replayed, lines_unread),
        reasons: BTreeMap::new(),
        distilled: None,
        parameters: parameters_of(&ex),
        receivers: receivers_of(&ex),
        tables: 0,
        table_rows: 0,
    };
    let cx = render::Context {
        ex: &ex,
        pools: &pools,
        space: seqs.space(),
    };
    let kept: Vec<keep::Kept> = keeper
        .kept
        .iter()
        .map(|k| prune::needed(k, &ex.callables, seqs.space()))
        .collect();
    let kept = with_lookups(&bin, kept, &ex, seqs.space())?;
    let kept = with_moved_getters(&bin, kept, &ex, seqs.space())?;
    let states = final_states(&bin, &kept)?;
    write_out(trace, opts, &cx, (&kept, &states), &keeper, &mut report)?;
    Ok(report)
}

/// Options no search can start from: `--out` not a directory, `--length 0`.
fn check(opts: &ExploreOptions) -> Result<(), ExploreError> {
    if !opts.out_dir.is_dir() {
        return Err(ExploreError::OutDirNotADirectory {
            path: opts.out_dir.clone(),
        });
    }
    if opts.length == 0 {
        return Err(ExploreError::Length {
            length: 0,
            why: "a sequence needs at least one call (try --length 3)".to_string(),
        });
    }
    Ok(())
}

impl LinesReport {
    fn of(l: &lines::Lines, replayed: usize, compares: Option<&compares::Compares>) -> LinesReport {
        LinesReport {
            with_guard: l.with_guard,
            run: l.run,
            beyond: l.beyond.iter().map(|(f, n)| format!("{f}:{n}")).collect(),
            replayed,
            compares_beyond: compares.map(|c| {
                c.met
                    .iter()
                    .map(|((f, n), side)| format!("{f}:{n} {}", side.word()))
                    .collect()
            }),
        }
    }
}

/// Runs the recording's own calls that the harness can make (`replay.rs`) through `runner`,
/// so that `keeper` starts from what they reach; returns how many.
fn replay_recorded(
    trace: &Trace,
    (ex, pools, space): (&Explorable, &pools::Pools, &strategy::Space),
    keeper: &mut keep::Keeper,
    runner: &mut harness::run::Runner,
) -> Result<usize, ExploreError> {
    let replays = replay::sequences((trace, &keeper.carved), &ex.callables, pools, space);
    for batch in replays.chunks(BATCH) {
        let results = runner.run_batch(batch)?;
        for (seq, result) in batch.iter().zip(&results) {
            keeper.replayed(space, seq, result);
        }
    }
    Ok(replays.len())
}

/// The crate's API, anchored where the run's sources were (a trace moved with its crate); a
/// crate holding none of them is told by what the run reached of it: nothing to explore.
fn crate_api(trace: &Trace, crate_dir: &std::path::Path) -> Result<CrateApi, ExploreError> {
    Ok(match CrateApi::load_recorded(crate_dir, &trace.functions) {
        Err(carve_generator::GenerateError::NoRecordedSource { .. }) => CrateApi::load(crate_dir)?,
        loaded => loaded?,
    })
}

/// The pools of the kinds `ex`'s calls take, from the values of the crate's public calls,
/// seeded with the first of the crate's own literals (`dictionary.rs`); and all of them,
/// for later rounds.
fn pools_for(
    trace: &Trace,
    ex: &Explorable,
    api: &CrateApi,
) -> (pools::Pools, dictionary::Dictionary) {
    let mut kinds: Vec<PoolKind> = ex
        .callables
        .iter()
        .flat_map(|c| c.params.iter().map(|p| p.kind.clone()))
        .collect();
    // An option's pool is made from its inner one, a list of texts from the text pool.
    let inner: Vec<PoolKind> = kinds
        .iter()
        .filter_map(|k| match k {
            PoolKind::Option(inner) => Some((**inner).clone()),
            PoolKind::Texts => Some(PoolKind::Str),
            PoolKind::Range(int) => Some(PoolKind::Scalar(int.clone())),
            PoolKind::Closure(_) => closures::produced_kind(k).map(|(inner, _)| inner),
            _ => None,
        })
        .collect();
    kinds.extend(inner);
    kinds.retain(|k| !matches!(k, PoolKind::Object(_)));
    kinds.sort();
    kinds.dedup();
    let public: std::collections::BTreeSet<String> = ex
        .callables
        .iter()
        .map(|c| c.path.clone())
        .chain(
            ex.left_out
                .iter()
                .filter(|l| l.1 != "not public")
                .map(|l| l.0.clone()),
        )
        .collect();
    let dictionary = dictionary::Dictionary::of_files(api.files.iter().map(PathBuf::as_path));
    let pools = pools::from_trace(trace, &public, &kinds).seeded(&dictionary.first());
    (pools, dictionary)
}

/// The calls to explore (`beyond`: also the public functions the run never reached, within
/// their share of the calls), the pools they draw on and the crate's literals.
fn calls_and_pools(
    trace: &Trace,
    api: &CrateApi,
    opts: &ExploreOptions,
    beyond: bool,
) -> Result<(Explorable, pools::Pools, dictionary::Dictionary), ExploreError> {
    let none = Default::default();
    let reached = (opts.run_lines.as_ref()).map_or(&none, |r| &r.functions_reached);
    let mut ex = api::explorable(api, trace, reached, beyond);
    world::settle(trace, &mut ex);
    if ex.callables.is_empty() {
        return Err(nothing_reached(trace, &ex));
    }
    let (pools, dictionary) = pools_for(trace, &ex, api);
    ex.beyond_within(|c| {
        let dims = harness::dims(c, &pools);
        dims.iter().fold(1u64, |n, d| n.saturating_mul(*d))
    });
    Ok((ex, pools, dictionary))
}

/// The functions explored: not the values written as they are (struct literals, variants),
/// `Display::fmt` once, not once per format spec, and a call taking an `IntoIterator` once, not
/// again for its twin that hides the iterator's length.
fn functions_explored(ex: &Explorable) -> Vec<String> {
    (ex.callables.iter())
        .filter(|c| !c.writes_value() && !c.is_format_spec() && !c.is_unsized_twin())
        .map(|c| c.path.clone())
        .collect()
}

/// No explorable call: why, when the run reached functions of the crate explore cannot match
/// to its API (see [`api::why_none_matched`]).
fn nothing_reached(trace: &Trace, ex: &Explorable) -> ExploreError {
    let (called, _) = api::Seen::of(trace);
    let why = match api::why_none_matched(&called, &ex.crate_name) {
        Some(why) if ex.left_out.is_empty() => why,
        _ => "the run reached none of its public functions".to_string(),
    };
    nothing(ex, &why)
}

fn nothing(ex: &Explorable, why: &str) -> ExploreError {
    let reasons: Vec<String> = ex
        .left_out
        .iter()
        .take(3)
        .map(|(f, r)| format!("{f}: {r}"))
        .collect();
    let why = if reasons.is_empty() {
        why.to_string()
    } else {
        format!("{why} ({})", reasons.join("; "))
    };
    ExploreError::NothingToExplore {
        krate: ex.crate_name.clone(),
        why,
    }
}

/// Each kept sequence with, after its calls, the lookups `lookups::asked` gives it, as far
/// as two fresh harness processes answered them alike (`lookups::answered`).
fn with_lookups(
    bin: &Path,
    kept: Vec<keep::Kept>,
    ex: &api::Explorable,
    space: &strategy::Space,
) -> Result<Vec<keep::Kept>, ExploreError> {
    let asked: Vec<Vec<u64>> = kept.iter().map(|k| lookups::asked(k, ex, space)).collect();
    answered_after(bin, kept, &asked)
}

/// Each kept sequence with, after its calls, the getters of the object its last change
/// changed or made whose answers that change moved (`moved::asked`, from the states two fresh
/// harness processes answered alike before and after it), then, when that object is an
/// iterator, its drain (`drained.rs`, where its items say what its `Debug` text did not), as
/// far as two more answered them alike (`lookups::answered`).
fn with_moved_getters(
    bin: &Path,
    kept: Vec<keep::Kept>,
    ex: &api::Explorable,
    space: &strategy::Space,
) -> Result<Vec<keep::Kept>, ExploreError> {
    let changes: Vec<Option<moved::Change>> = (kept.iter())
        .map(|k| moved::last_change(k, ex, space))
        .collect();
    // Each changed sequence run up to its last change, then whole.
    let around: Vec<Vec<u64>> = (kept.iter().zip(&changes))
        .filter_map(|(k, change)| change.map(|c| [k.calls[..c.at].to_vec(), k.calls.clone()]))
        .flatten()
        .collect();
    if around.is_empty() {
        return Ok(kept);
    }
    let ran = harness::run::Runner::final_states_twice(bin, &around)?;
    let beyond = moved::beyond_debug(ran.iter().filter_map(|r| alike(r, &r.0.calls)));
    let mut pairs = ran.chunks_exact(2);
    // Per sequence, the calls to ask after it, and its drain with the `Debug` text before it.
    let (asked, drains): (Vec<Vec<u64>>, Vec<Option<drained::Drain>>) = (kept.iter().zip(&changes))
        .map(|(k, change)| {
            // Only a sequence with a change has a pair of runs.
            let Some(c) = *change else {
                return (Vec::new(), None);
            };
            let Some([before, after]) = pairs.next() else {
                return (Vec::new(), None);
            };
            let (Some(b), Some(a)) = (
                alike(before, &k.outcomes[..c.at]),
                alike(after, &k.outcomes),
            ) else {
                return (Vec::new(), None);
            };
            let mut asked = moved::asked(k, space, c, (b, a), &beyond);
            let drain = drained::asked(k, ex, space, c).map(|d| {
                asked.push(d);
                let debug = (a.debug.iter()).find(|(o, s, _)| (*o, *s) == c.slot);
                (d, debug.map(|(.., t)| t.clone()).unwrap_or_default())
            });
            (asked, drain)
        })
        .unzip();
    let kept = answered_after(bin, kept, &asked)?;
    Ok((kept.into_iter().zip(drains))
        .map(|(k, drain)| match drain {
            Some((d, debug)) => drained::told_by_debug(k, d, &debug),
            None => k,
        })
        .collect())
}

/// The states two harness processes answered (`twice`), when both answered `outcomes` and
/// the same getters' answers.
fn alike<'r>(
    twice: &'r (harness::run::SeqResult, harness::run::SeqResult),
    outcomes: &[harness::run::CallOutcome],
) -> Option<&'r harness::run::Final> {
    let (a, b) = twice;
    (a.calls == outcomes && b.calls == outcomes && a.states.getters == b.states.getters)
        .then_some(&a.states)
}

/// Each kept sequence with the calls `asked` appended, as far as two fresh harness processes
/// answered them alike (`lookups::answered`).
fn answered_after(
    bin: &Path,
    kept: Vec<keep::Kept>,
    asked: &[Vec<u64>],
) -> Result<Vec<keep::Kept>, ExploreError> {
    let seqs: Vec<Vec<u64>> = (kept.iter().zip(asked))
        .filter(|(_, a)| !a.is_empty())
        .map(|(k, a)| [k.calls.as_slice(), a].concat())
        .collect();
    if seqs.is_empty() {
        return Ok(kept);
    }
    let mut ran = harness::run::Runner::final_states_twice(bin, &seqs)?.into_iter();
    Ok((kept.into_iter().zip(asked))
        .map(|(k, a)| match a.is_empty() {
            true => k,
            false => match ran.next() {
                Some(twice) => lookups::answered(k, a, &twice),
                None => k,
            },
        })
        .collect())
}

/// Each kept sequence's objects after its calls and its results' `Display` texts, from two
/// runs in two fresh harness processes: kept only when both runs gave the kept outcomes and
/// the same texts (a hash map's order or an address differs between processes), else none
/// of that sequence's is asserted.
fn final_states(bin: &Path, kept: &[keep::Kept]) -> Result<Vec<harness::run::Final>, ExploreError> {
    let seqs: Vec<Vec<u64>> = kept.iter().map(|k| k.calls.clone()).collect();
    let ran = harness::run::Runner::final_states_twice(bin, &seqs)?;
    Ok((kept.iter().zip(&ran))
        .map(|(k, twice)| {
            (alike(twice, &k.outcomes).filter(|_| twice.0.states == twice.1.states))
                .cloned()
                .unwrap_or_default()
        })
        .collect())
}

/// The calls per sequence, and why fewer than asked: with no object a call holds or makes
/// (an object type whose calls were all left out counts for nothing), nothing carries state
/// from one call to the next: every sequence ends after its first call (JET), so its space is
/// the calls alone.
fn length_of(ex: &Explorable, opts: &ExploreOptions) -> (usize, Option<&'static str>) {
    if ex.stateless() && opts.length > 1 {
        (1, Some(SHORT_WITHOUT_OBJECTS))
    } else {
        (opts.length, None)
    }
}

/// Why `k` was kept, as distilling weighs it: the comparison outcomes it met first and the
/// outcomes it gave a function first.
fn reasons(cx: &render::Context, k: &keep::Kept) -> carve_generator::ExploreReasons {
    carve_generator::ExploreReasons {
        compares: (k.new_compares.iter())
            .map(|((file, line), side)| (file.clone(), *line, side.word().to_string()))
            .collect(),
        outcomes: (k.new.iter())
            .map(|(c, class)| (cx.ex.callables[*c].path.clone(), class.clone()))
            .collect(),
    }
}

/// The parameters' names of each callable: by how a test writes it for one without a
/// receiver (`lib::f`), by its path for a method (`lib::Gauge::raise`, `self` not counted).
fn parameters_of(ex: &Explorable) -> BTreeMap<String, Vec<String>> {
    (ex.callables.iter())
        .map(|c| {
            let key = match c.receiver {
                None => c.call.clone(),
                Some(_) => c.path.clone(),
            };
            (key, c.params.iter().map(|p| p.name.clone()).collect())
        })
        .collect()
}

/// How each callable takes its receiver and what its signature says, by its path.
fn receivers_of(ex: &Explorable) -> shapes::Receivers {
    (ex.callables.iter())
        .map(|c| {
            let receiver = match &c.receiver {
                None => "",
                Some(r) if r.by_value => "self",
                Some(r) if r.mutable => "&mut",
                Some(_) => "&",
            };
            let params: Vec<String> = c.params.iter().map(|p| format!("{:?}", p.kind)).collect();
            let signature = format!("({}) -> {:?}", params.join(", "), c.ret);
            (
                c.path.clone(),
                shapes::Taken {
                    receiver,
                    signature,
                },
            )
        })
        .collect()
}

/// What the search reached beyond the run, or why it was not counted (`unread`).
fn lines_report(
    keeper: &keep::Keeper,
    replayed: usize,
    unread: Option<String>,
) -> Result<LinesReport, String> {
    (keeper.lines.as_ref())
        .map(|l| LinesReport::of(l, replayed, keeper.compares.as_ref()))
        .ok_or_else(|| unread.unwrap_or_default())
}

/// Writes the kept tests (then verifies them) and the findings into `opts.out_dir`. On an
/// error (or an interruption) during verification the test file is put back as it was.
fn write_out(
    trace: &Trace,
    opts: &ExploreOptions,
    cx: &render::Context,
    (kept, states): (&[keep::Kept], &[harness::run::Final]),
    keeper: &keep::Keeper,
    report: &mut Report,
) -> Result<(), ExploreError> {
    let origin = format!(
        "{}, length {}, seed {}",
        strategy_name(opts.strategy),
        report.length,
        opts.seed
    );
    let tests: Vec<render::RenderedTest> = kept
        .iter()
        .zip(states)
        .enumerate()
        .map(|(i, (k, s))| render::test(cx, i + 1, k, s, &origin))
        .collect();
    if !tests.is_empty() {
        let helper = cx.ex.world.as_ref().map(world::World::helper);
        write_tests(trace, opts, (&cx.ex.crate_name, helper), &tests, report)?;
    }
    report.reasons = (tests.iter().zip(kept))
        .map(|(t, k)| (t.name.clone(), reasons(cx, k)))
        .collect();
    report.findings = keeper
        .findings
        .iter()
        .map(|f| FindingReport {
            function: f.callable.map(|c| cx.ex.callables[c].path.clone()),
            message: f.message.clone(),
            times: f.times,
            reproducer: render::finding(cx, f),
        })
        .collect();
    if !report.findings.is_empty() {
        let krate = &cx.ex.crate_name;
        let path = opts.out_dir.join(format!("explored_{krate}_findings.md"));
        let mut text = format!(
            "# Findings of carve explore on `{krate}`\n\nPanics on inputs the recording never \
             gave: possible bugs or undocumented preconditions. Not tests.\n\n"
        );
        for f in &report.findings {
            text.push_str(&f.reproducer);
            text.push('\n');
        }
        let in_files = report
            .findings
            .iter()
            .any(|f| f.reproducer.contains("in_recorded_files("));
        if let Some(helper) = cx
            .ex
            .world
            .as_ref()
            .map(world::World::helper)
            .filter(|_| in_files)
        {
            text.push_str("## The files the reproducers run in\n\n```rust\n");
            text.push_str(&helper);
            text.push_str("```\n");
        }
        write(&path, &text)?;
        report.findings_file = Some(path);
    }
    Ok(())
}

/// Writes `explored_CRATE.rs` and verifies it.
fn write_tests(
    trace: &Trace,
    opts: &ExploreOptions,
    (krate, files_helper): (&str, Option<String>),
    tests: &[render::RenderedTest],
    report: &mut Report,
) -> Result<(), ExploreError> {
    let file = format!("explored_{krate}.rs");
    let path = opts.out_dir.join(&file);
    let before = std::fs::read(&path).ok();
    let program = Path::new(&trace.run.info.program)
        .file_name()
        .map_or(trace.run.info.program.clone(), |n| {
            n.to_string_lossy().into_owned()
        });
    let features = carve_generator::recorded_features(&trace.run.info);
    write(
        &path,
        &render::file((&program, trace.run.id.0, &features), tests, files_helper),
    )?;
    report.tests_written = tests.len();
    report.tests_kept = tests.len();
    if let Some(v) = &opts.verify {
        let names: Vec<String> = tests.iter().map(|t| t.name.clone()).collect();
        let v = &v.with_features(&features);
        let verified = carve_generator::verify_test_file(
            (&opts.crate_dir, &opts.out_dir),
            &file,
            &names,
            v,
            opts.interrupt,
        );
        let taken_out = match verified {
            Ok(t) => t,
            Err(e) => {
                match before {
                    Some(bytes) => {
                        let _ = std::fs::write(&path, bytes);
                    }
                    None => {
                        let _ = std::fs::remove_file(&path);
                    }
                }
                return Err(e.into());
            }
        };
        report.tests_kept = tests.len().saturating_sub(taken_out.len());
        report.taken_out = taken_out;
    }
    if path.is_file() {
        report.file = Some(path);
    }
    Ok(())
}

/// Writes the kept tests of `file` (in `opts.out_dir`) that are one call of one function
/// with other values as tables (`tables.rs`), and those of one shape with other literals
/// (`shapes/`), then verifies the file as the kept tests were (`features`: the recorded
/// build's; `parameters`: the report's, the columns' names; `receivers`: the report's, which
/// functions a column can hold). When a table does not pass, the file is folded again
/// without it and verified again (without tables of functions when no test of it passes:
/// `Tries`); when the third try does not pass either, it is put back as it was. Returns the
/// tables written and the tests they hold as rows ((0, 0): none).
pub fn fold_tables(
    opts: &ExploreOptions,
    file: &Path,
    (features, parameters, receivers): (
        &[String],
        &BTreeMap<String, Vec<String>>,
        &shapes::Receivers,
    ),
) -> Result<(usize, usize), ExploreError> {
    let before = std::fs::read_to_string(file)
        .map_err(|e| ExploreError::io(format!("read {}", file.display()), e))?;
    let (Some(v), Some(name)) = (
        &opts.verify,
        file.file_name().map(|n| n.to_string_lossy().into_owned()),
    ) else {
        return Ok((0, 0));
    };
    let v = v.with_features(features);
    let mut tries = Tries {
        calls: true,
        functions: true,
        leave: BTreeSet::new(),
    };
    let no_functions = shapes::Receivers::new();
    for _ in 0..3 {
        let functions = if tries.functions {
            receivers
        } else {
            &no_functions
        };
        let by_call = tries
            .calls
            .then(|| tables::fold(&before, parameters))
            .flatten();
        let text = by_call
            .as_ref()
            .map_or(before.as_str(), |f| f.text.as_str());
        let by_shape = shapes::fold(text, (parameters, functions), &tries.leave);
        let Some(folded) = by_shape.map(|s| s.after(by_call.as_ref())).or(by_call) else {
            break;
        };
        write(file, &folded.text)?;
        let verified = carve_generator::verify_test_file(
            (&opts.crate_dir, &opts.out_dir),
            &name,
            &folded.tests,
            &v,
            opts.interrupt,
        );
        match verified {
            Ok(taken_out) if taken_out.is_empty() && file.is_file() => {
                return Ok((folded.tables, folded.rows));
            }
            Ok(taken_out) => tries.without(&folded, &taken_out),
            Err(e) => {
                write(file, &before)?;
                return Err(e.into());
            }
        }
    }
    write(file, &before)?;
    Ok((0, 0))
}

/// What the next try of `fold_tables` folds.
struct Tries {
    /// One-call tables (`tables.rs`).
    calls: bool,
    /// Tables of functions (`shapes/`).
    functions: bool,
    /// The shape tables left out, by their first test.
    leave: BTreeSet<String>,
}

impl Tries {
    /// Another try without what failed in `folded`: the shape tables taken out; one-call
    /// tables when another test was; when every test was (the file does not parse, say),
    /// tables of functions first, then everything that failed.
    fn without(&mut self, folded: &tables::Folded, taken_out: &[Quarantined]) {
        let failed: BTreeSet<&str> = taken_out.iter().map(|q| q.test.as_str()).collect();
        let whole = folded.tests.iter().all(|t| failed.contains(t.as_str()));
        if whole && self.functions {
            self.functions = false;
            return;
        }
        for test in failed {
            match folded.firsts.get(test).filter(|_| !whole) {
                Some(first) => {
                    self.leave.insert(first.clone());
                }
                None => self.calls = false,
            }
        }
    }
}

fn write(path: &Path, text: &str) -> Result<(), ExploreError> {
    let tmp = path.with_extension("carve-tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| ExploreError::io(format!("write {}", path.display()), e))
}

/// The strategy's name as seed 004 writes it.
pub fn strategy_name(s: Strategy) -> &'static str {
    match s {
        Strategy::Random => "R",
        Strategy::Exhaustive => "BE",
        Strategy::Bobw => "BOBW",
    }
}
