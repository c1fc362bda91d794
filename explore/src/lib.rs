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
mod error;
mod extend;
mod generic_types;
mod harness;
mod keep;
mod lines;
mod pools;
mod prune;
mod render;
mod replay;
mod std_traits;
mod strategy;
mod substitute;
#[cfg(test)]
mod testdata;
mod trait_calls;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use carve_generator::{CrateApi, Interrupt, Quarantined, Verify};
use carve_storage::Trace;
use serde::Serialize;

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
    /// Lines beyond the run, or why they were not counted.
    pub lines: Result<LinesReport, String>,
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

/// Sequences sent to the harness at a time.
const BATCH: usize = 256;
/// A search that could go on with grown pools levels off when it has run this many
/// sequences since it last kept one, and as many as it had run before that.
const LEVEL_OFF: u64 = 20_000;
/// Sequences the strategy skips (dead prefixes) before the budget is checked again.
const MAX_SKIPS: u32 = 100_000;
/// Longest a sequence may run before it counts as hung.
const SEQUENCE_TIMEOUT: Duration = Duration::from_secs(10);

/// Explores the crate `opts.crate_dir` from `trace` and writes what it keeps into
/// `opts.out_dir` (`explored_CRATE.rs`, verified; `explored_CRATE_findings.md`).
pub fn explore(trace: &Trace, opts: &ExploreOptions) -> Result<Report, ExploreError> {
    check(opts)?;
    let api = crate_api(trace, &opts.crate_dir)?;
    let ex = api::explorable(&api, trace);
    if ex.callables.is_empty() {
        return Err(nothing_reached(trace, &ex));
    }
    let (pools, dictionary) = pools_for(trace, &ex, &api);
    let started = Instant::now();
    let harness_dir = opts.crate_dir.join("target/carve/explore");
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
    // With no object a call holds or makes (an object type whose calls were all left out
    // counts for nothing), nothing carries state from one call to the next: every sequence
    // ends after its first call (JET), so its space is the calls alone.
    let (length, length_reason) = if ex.stateless() && opts.length > 1 {
        (1, Some(SHORT_WITHOUT_OBJECTS))
    } else {
        (opts.length, None)
    };
    let seqs = sequences(opts, &ex, space, length)?;
    let mut keeper = keep::Keeper::new(trace, &ex.callables);
    let lines_unread = watch_coverage(&mut keeper, (&built.bin, &built.coverage), &api, opts);
    let mut runner = harness::run::Runner::new(&built.bin, SEQUENCE_TIMEOUT);
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
        left_out: ex.left_out.clone(),
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
        lines: keeper
            .lines
            .as_ref()
            .map(|l| LinesReport::of(l, replayed, keeper.compares.as_ref()))
            .ok_or_else(|| lines_unread.unwrap_or_default()),
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
    let replays = replay::sequences(trace, &ex.callables, pools, space);
    for batch in replays.chunks(BATCH) {
        let results = runner.run_batch(batch)?;
        for (seq, result) in batch.iter().zip(&results) {
            keeper.replayed(space, seq, result);
        }
    }
    Ok(replays.len())
}

/// Gives `keeper` the harness's coverage: the crate lines its guards stand for (starting from
/// the run's) and its comparison sites; returns why lines are not counted, if they are not.
fn watch_coverage(
    keeper: &mut keep::Keeper,
    (bin, coverage): (&std::path::Path, &Result<(), String>),
    api: &CrateApi,
    opts: &ExploreOptions,
) -> Option<String> {
    let run_lines = opts.run_lines.as_ref().map(|run| run_lines_here(run, api));
    // The harness's line tables, read once for its guards and its comparison sites.
    let table = coverage.clone().and_then(|()| {
        carve_recorder::line_table(bin).map_err(|e| format!("placing its coverage: {e}"))
    });
    let lines_read = lines_of((bin, &table), opts, run_lines.as_ref());
    let lines_unread = lines_read.as_ref().err().cloned();
    keeper.lines = lines_read.ok();
    if let Ok(table) = table {
        let with_code = run_lines.map(|r| r.with_code).unwrap_or_default();
        keeper.compares = Some(compares::Compares::of_table(
            table,
            &opts.crate_dir,
            with_code,
        ));
    }
    lines_unread
}

/// The run's lines where its files are now (a trace moved with its crate).
fn run_lines_here(run: &RunLines, api: &CrateApi) -> RunLines {
    let here = |lines: &std::collections::BTreeSet<(String, u32)>| {
        lines
            .iter()
            .map(|(file, line)| {
                let file = api.local_file(std::path::Path::new(file));
                (file.to_string_lossy().into_owned(), *line)
            })
            .collect()
    };
    RunLines {
        reached: here(&run.reached),
        with_code: here(&run.with_code),
    }
}

/// Where the built harness's coverage guards lie, starting from the run's lines; or why
/// lines are not counted.
fn lines_of(
    (bin, table): (&std::path::Path, &Result<carve_recorder::LineTable, String>),
    opts: &ExploreOptions,
    run_lines: Option<&RunLines>,
) -> Result<lines::Lines, String> {
    match (table, run_lines) {
        (Err(why), _) => Err(why.clone()),
        (Ok(_), None) => Err("the run was recorded without --coverage".to_string()),
        (Ok(table), Some(here)) => {
            lines::Lines::read((bin, table), &opts.crate_dir, here).map_err(|e| e.to_string())
        }
    }
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

/// The functions explored: not the values written as they are (struct literals, variants).
fn functions_explored(ex: &Explorable) -> Vec<String> {
    (ex.callables.iter())
        .filter(|c| !c.writes_value())
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

impl Budget {
    fn is_spent(self) -> bool {
        matches!(self, Budget::Time(t) if t.is_zero()) || self == Budget::Runs(0)
    }
}

/// What a search did (over all rounds).
#[derive(Default)]
struct Searched {
    run: u64,
    /// Of those run, extensions of kept sequences.
    extended: u64,
    exhausted: bool,
    /// It ran twice the sequences it had run when it last kept one (and [`LEVEL_OFF`] more).
    levelled_off: bool,
    seconds: f64,
    harness_seconds: f64,
    /// Of those run, a kept sequence with a grown pool's value in place of one of its own.
    substituted: u64,
    /// Proposed by the strategies, and skipped for a dead prefix.
    proposed: u64,
    skipped: u64,
}

impl Searched {
    /// Adds a round's search `s`, whose strategy was `seqs`.
    fn add(&mut self, s: &Searched, seqs: &strategy::Sequences) {
        self.run += s.run;
        self.extended += s.extended;
        self.substituted += s.substituted;
        self.exhausted = s.exhausted;
        self.levelled_off = s.levelled_off;
        self.seconds += s.seconds;
        self.harness_seconds += s.harness_seconds;
        self.proposed += seqs.proposed;
        self.skipped += seqs.skipped;
    }

    /// What is left of `budget` after the rounds so far.
    fn left_of(&self, budget: Budget) -> Budget {
        match budget {
            Budget::Time(t) => {
                Budget::Time(t.saturating_sub(Duration::from_secs_f64(self.seconds)))
            }
            Budget::Runs(n) => Budget::Runs(n.saturating_sub(self.run)),
        }
    }
}

/// Searches round after round: when a round has run every sequence of its space, or levelled
/// off (see [`search`]), with budget left, the next runs pools grown by the rest of
/// `dictionary` (a harness built again), first on the kept sequences with a new value in
/// place of one of theirs (`substitute.rs`); returns what the searches did and how many
/// rounds ran.
fn search_rounds(
    (round, keeper): (&mut Round, &mut keep::Keeper),
    (ex, length, dictionary): (&Explorable, usize, &dictionary::Dictionary),
    dir: (&Path, (&Path, &[String])),
    (api, opts): (&CrateApi, &ExploreOptions),
) -> Result<(Searched, usize), ExploreError> {
    let mut searched = Searched::default();
    let mut rounds = 0;
    let mut substitutions = None;
    loop {
        rounds += 1;
        // With the strategy alone (`--no-extend`), one round.
        let kept = kept_texts(keeper, ex, round);
        let grown = (opts.extend)
            .then(|| round.pools.grown(dictionary, &kept))
            .flatten();
        let extender = (opts.extend).then(|| extend::Extender::new(&ex.callables, opts.seed));
        let budget = searched.left_of(opts.budget);
        let s = search(
            (&mut round.seqs, extender, substitutions.take()),
            keeper,
            &mut round.runner,
            (budget, opts.interrupt, grown.is_some()),
        )?;
        searched.add(&s, &round.seqs);
        let ended = s.exhausted || s.levelled_off;
        let left = searched.left_of(opts.budget);
        let (Some(grown), true) = (grown, ended && !left.is_spent()) else {
            return Ok((searched, rounds));
        };
        let before = round.seqs.space().clone();
        if !grow(ex, grown, round, dir, opts)? {
            return Ok((searched, rounds));
        }
        renumber_round(keeper, round, (ex, length), (api, opts))?;
        let kept = keeper.kept.iter().map(|k| k.calls.clone()).collect();
        substitutions = Some(substitute::Substitutions::new(
            &before,
            round.seqs.space(),
            kept,
        ));
    }
}

/// Texts longer than this are not grown further (`Pools::grown`).
const MAX_GROWN_TEXT: usize = 64;

/// The texts of the text pool that kept sequences took, each once, in the order they were
/// kept (none longer than [`MAX_GROWN_TEXT`] characters).
fn kept_texts(keeper: &keep::Keeper, ex: &Explorable, round: &Round) -> Vec<String> {
    let keys: Vec<Vec<extend::Key>> = ex.callables.iter().map(extend::keys).collect();
    let texts = round.pools.get(&PoolKind::Str);
    let text_key = extend::Key::Pool(PoolKind::Str);
    let mut out: Vec<String> = Vec::new();
    for &c in keeper.kept.iter().flat_map(|k| &k.calls) {
        let (f, digits) = round.seqs.space().decode(c);
        for (key, d) in keys[f].iter().zip(digits) {
            let Some(pools::Lit::Str(t)) = texts.get(d as usize) else {
                continue;
            };
            if *key == text_key && t.chars().count() <= MAX_GROWN_TEXT && !out.contains(t) {
                out.push(t.clone());
            }
        }
    }
    out
}

/// One round's pools, strategy, and the harness that runs them.
struct Round {
    pools: pools::Pools,
    seqs: strategy::Sequences,
    runner: harness::run::Runner,
    bin: PathBuf,
    /// Built with coverage, or why not.
    coverage: Result<(), String>,
}

/// The strategy's sequences of `length` calls over `space` (first calls: those `ex` says can
/// come first), or why BE and BOBW cannot number them.
fn sequences(
    opts: &ExploreOptions,
    ex: &Explorable,
    space: strategy::Space,
    length: usize,
) -> Result<strategy::Sequences, ExploreError> {
    let first = strategy::FirstCalls::new(&space, &ex.can_come_first());
    let seqs = strategy::Sequences::starting_with(opts.strategy, (space, first), length, opts.seed);
    if opts.strategy != Strategy::Random && seqs.total().is_none() {
        return Err(ExploreError::Length {
            length,
            why: format!(
                "{} calls per position to the power {} is past 2^128 sequences; use a smaller \
                 --length or --strategy random",
                seqs.space().calls,
                length
            ),
        });
    }
    Ok(seqs)
}

/// Builds the harness again with `grown` pools for the next round: `false` (and the
/// round's harness built again as it was) when the build took out a call or an object's
/// start, as then the calls no longer number the same.
fn grow(
    ex: &Explorable,
    grown: pools::Pools,
    round: &mut Round,
    (dir, crate_dir): (&Path, (&Path, &[String])),
    opts: &ExploreOptions,
) -> Result<bool, ExploreError> {
    let _ = round.runner.stop();
    let built = harness::build::build(dir, crate_dir, &opts.cargo, ex.clone(), &grown)?;
    let same = built.explorable.callables == ex.callables && built.explorable.objects == ex.objects;
    if !same {
        harness::build::build(dir, crate_dir, &opts.cargo, ex.clone(), &round.pools)?;
        return Ok(false);
    }
    round.pools = grown;
    round.bin = built.bin;
    round.coverage = built.coverage;
    Ok(true)
}

/// Starts the round the grown pools make: its space and strategy; what was kept and found
/// renumbered in it (a pool's values keep their places); the new harness's guards and
/// comparison sites placed again, the lines and outcomes known so far still known.
fn renumber_round(
    keeper: &mut keep::Keeper,
    round: &mut Round,
    (ex, length): (&Explorable, usize),
    (api, opts): (&CrateApi, &ExploreOptions),
) -> Result<(), ExploreError> {
    let space = harness::space(&ex.callables, &round.pools)
        .ok_or_else(|| nothing(ex, "their calls are too many to number"))?;
    keeper.renumber(round.seqs.space(), &space);
    round.seqs = sequences(opts, ex, space, length)?;
    let mut fresh = keep::Keeper::default();
    watch_coverage(&mut fresh, (&round.bin, &round.coverage), api, opts);
    keeper.replace_coverage(fresh);
    round.runner = harness::run::Runner::new(&round.bin, SEQUENCE_TIMEOUT);
    Ok(())
}

/// Runs sequences until the budget is spent or the strategy has none left: extensions of
/// kept sequences first, then `substitutions`, then the strategy's. When `can_level_off` (a
/// later round can grow the pools) it also stops once it levels off: [`LEVEL_OFF`] sequences
/// and as many as it had run before its last kept one have run since that one.
fn search(
    (seqs, mut extender, mut substitutions): (
        &mut strategy::Sequences,
        Option<extend::Extender>,
        Option<substitute::Substitutions>,
    ),
    keeper: &mut keep::Keeper,
    runner: &mut harness::run::Runner,
    (budget, interrupt, can_level_off): (Budget, Interrupt, bool),
) -> Result<Searched, ExploreError> {
    let start = Instant::now();
    let mut done = Searched::default();
    // Sequences run when the last one was kept.
    let mut kept_at = 0;
    // BE learns a prefix is dead only from the answers: while most of a batch is stopped at
    // a dead prefix, the next batch is smaller, so BE jumps sooner.
    let mut size = BATCH;
    loop {
        if interrupt.is_set() {
            return Err(ExploreError::Interrupted);
        }
        let left = match budget {
            Budget::Time(limit) if start.elapsed() >= limit => break,
            Budget::Runs(n) if done.run >= n => break,
            Budget::Runs(n) => (n - done.run) as usize,
            Budget::Time(_) => size,
        };
        let mut batch = Vec::new();
        let mut paused = false;
        while batch.len() < size.min(left) {
            if let Some(s) = extender.as_mut().and_then(|e| e.next()) {
                if !seqs.holds_dead(&s) {
                    batch.push(s);
                    done.extended += 1;
                }
                continue;
            }
            if let Some(s) = substitutions.as_mut().and_then(|s| s.next()) {
                if !seqs.holds_dead(&s) {
                    batch.push(s);
                    done.substituted += 1;
                }
                continue;
            }
            match seqs.next_within(MAX_SKIPS) {
                Ok(Some(s)) => batch.push(s),
                Ok(None) => break,
                Err(strategy::Paused) => {
                    paused = true;
                    break;
                }
            }
        }
        if batch.is_empty() && paused {
            // Only dead prefixes so far: the budget is checked again before skipping more.
            continue;
        }
        if batch.is_empty() {
            done.exhausted = true;
            break;
        }
        let kept_before = keeper.kept.len();
        let asked = Instant::now();
        let results = runner.run_batch(&batch)?;
        done.harness_seconds += asked.elapsed().as_secs_f64();
        for (seq, result) in batch.iter().zip(&results) {
            let kept = keeper.kept.len();
            if let Some(k) = keeper.observe(seqs.space(), seq, result) {
                seqs.dead_prefix(seq, k);
            }
            if let (Some(e), Some(k)) = (extender.as_mut(), keeper.kept.get(kept)) {
                e.kept(seqs.space(), &k.calls, seqs.length());
            }
            if matches!(result.end, harness::run::End::Crashed(_)) {
                // The call it died in: the first one not answered.
                if let Some(&c) = seq.get(result.calls.len()) {
                    seqs.fatal_call(c);
                }
            }
        }
        let ran = results
            .iter()
            .filter(|r| r.end != harness::run::End::Skipped)
            .count();
        if keeper.kept.len() > kept_before {
            kept_at = done.run + ran as u64;
        }
        done.run += ran as u64;
        let since = done.run - kept_at;
        if can_level_off && since >= LEVEL_OFF && since >= kept_at {
            done.levelled_off = true;
            break;
        }
        size = (ran * 2).clamp(1, BATCH);
    }
    done.seconds = start.elapsed().as_secs_f64();
    Ok(done)
}

/// Each kept sequence's objects after its calls and its results' `Display` texts, from two
/// runs in two fresh harness processes: kept only when both runs gave the kept outcomes and
/// the same texts (a hash map's order or an address differs between processes), else none
/// of that sequence's is asserted.
fn final_states(bin: &Path, kept: &[keep::Kept]) -> Result<Vec<harness::run::Final>, ExploreError> {
    let seqs: Vec<Vec<u64>> = kept.iter().map(|k| k.calls.clone()).collect();
    let first = harness::run::Runner::new(bin, SEQUENCE_TIMEOUT).final_states(&seqs)?;
    let second = harness::run::Runner::new(bin, SEQUENCE_TIMEOUT).final_states(&seqs)?;
    Ok(kept
        .iter()
        .zip(first.into_iter().zip(second))
        .map(|(k, (a, b))| {
            let same = a.calls == k.outcomes && b.calls == k.outcomes && a.states == b.states;
            if same {
                a.states
            } else {
                harness::run::Final::default()
            }
        })
        .collect())
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
        write_tests(trace, opts, &cx.ex.crate_name, &tests, report)?;
    }
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
        write(&path, &text)?;
        report.findings_file = Some(path);
    }
    Ok(())
}

/// Writes `explored_CRATE.rs` and verifies it.
fn write_tests(
    trace: &Trace,
    opts: &ExploreOptions,
    krate: &str,
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
        &render::file(&program, trace.run.id.0, &features, tests),
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
