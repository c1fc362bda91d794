//! Rounds of search: when a round has run its whole space or levelled off with budget left,
//! the next runs pools grown append-only (`Pools::grown`) in a harness built again, kept
//! sequences and findings renumbered in its space, its guards and comparison sites placed
//! again with what was reached and met still known, and the kept sequences with the grown
//! pools' values first (`substitute.rs`). Also what a round's harness watches: the crate
//! lines its guards stand for and its comparison sites.

use std::path::{Path, PathBuf};

use carve_generator::CrateApi;

use crate::search::{search, Searched, SEQUENCE_TIMEOUT};
use crate::{
    compares, dictionary, extend, harness, keep, lines, nothing, pools, strategy, substitute,
    Explorable, ExploreError, ExploreOptions, PoolKind, RunLines, Strategy,
};

/// Searches round after round: when a round has run every sequence of its space, or levelled
/// off (see [`search`]), with budget left, the next runs pools grown by the rest of
/// `dictionary` (a harness built again), first on the kept sequences with a new value in
/// place of one of theirs (`substitute.rs`); returns what the searches did and how many
/// rounds ran.
pub(crate) fn search_rounds(
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
        // With the strategy alone (`--no-extend`), one round. The pools can grow when the
        // dictionary has more or a text was kept; they grow by what was kept by the round's
        // end.
        let can_grow = opts.extend && {
            let kept = kept_texts(keeper, ex, round);
            round.pools.grown(dictionary, &kept, opts.seed).is_some()
        };
        let extender = (opts.extend).then(|| extend::Extender::new(&ex.callables, opts.seed));
        let budget = searched.left_of(opts.budget);
        let s = search(
            (&mut round.seqs, extender, substitutions.take()),
            keeper,
            &mut round.runner,
            (budget, opts.interrupt, can_grow),
        )?;
        searched.add(&s, &round.seqs);
        let ended = s.exhausted || s.levelled_off;
        if !can_grow || !ended || searched.left_of(opts.budget).is_spent() {
            return Ok((searched, rounds));
        }
        let kept = kept_texts(keeper, ex, round);
        let Some(grown) = round.pools.grown(dictionary, &kept, opts.seed) else {
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
pub(crate) struct Round {
    pub(crate) pools: pools::Pools,
    pub(crate) seqs: strategy::Sequences,
    pub(crate) runner: harness::run::Runner,
    pub(crate) bin: PathBuf,
    /// Built with coverage, or why not.
    pub(crate) coverage: Result<(), String>,
}

/// The strategy's sequences of `length` calls over `space` (first calls: those `ex` says can
/// come first), or why BE and BOBW cannot number them.
pub(crate) fn sequences(
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

/// Gives `keeper` the harness's coverage: the crate lines its guards stand for (starting from
/// the run's) and its comparison sites; returns why lines are not counted, if they are not.
pub(crate) fn watch_coverage(
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
