//! Rounds of search: when a round has run its whole space, levelled off or spent its share
//! of the budget with budget left, the next runs pools grown append-only (`Pools::grown`) in
//! a harness built again, kept sequences and findings renumbered in its space, its guards and
//! comparison sites placed again with what was reached and met still known, and the kept
//! sequences with the grown pools' values first (`substitute.rs`). Also what a round's
//! harness watches: the crate lines its guards stand for and its comparison sites.

use std::path::{Path, PathBuf};

use carve_generator::CrateApi;

use crate::search::{search, Searched, SEQUENCE_TIMEOUT};
use crate::{
    compares, dictionary, extend, harness, keep, lines, operands, pools, strategy, substitute,
    Explorable, ExploreError, ExploreOptions, PoolKind, RunLines, Strategy,
};

/// Searches round after round: when a round has run every sequence of its space, levelled
/// off (see [`search`]) or spent its share of the budget (`Searched::share_of`) with budget
/// left, the next runs pools grown by the rest of `dictionary` and by what the crate compared
/// the kept and recorded values with (a harness built again), first on the kept sequences
/// with a new value in place of one of theirs (`substitute.rs`); returns what the searches
/// did and how many rounds ran.
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
        // With the strategy alone (`--no-extend`), one round. Whether the pools can grow is
        // known before the search (it may level off only then); they grow by what was kept
        // by its end.
        let mut kept_before = keeper.kept.len();
        let mut grown = match opts.extend {
            true => grown_pools((round, &mut searched), keeper, (ex, dictionary), opts.seed)?,
            false => None,
        };
        // A round that may grow its pools (by what it keeps, if not yet) takes a share of the
        // budget; when its share is spent and they still cannot grow, it goes on with the rest.
        let mut share = opts.extend;
        // The kept sequences of earlier rounds are extended again, with the grown pools.
        let mut extender = (opts.extend).then(|| {
            let mut e = extend::Extender::new(&ex.callables, opts.seed);
            for k in &keeper.kept {
                e.kept_earlier(round.seqs.space(), &k.calls, round.seqs.length());
            }
            e
        });
        loop {
            let counted = (round.seqs.proposed, round.seqs.skipped);
            let s = search(
                (&mut round.seqs, extender.as_mut(), substitutions.take()),
                keeper,
                &mut round.runner,
                (
                    searched.share_of(opts.budget, share),
                    opts.interrupt,
                    grown.is_some(),
                ),
            )?;
            searched.add(&s, (&round.seqs, counted));
            if searched.left_of(opts.budget).is_spent() {
                return Ok((searched, rounds));
            }
            // A round that kept something grows by it too.
            if keeper.kept.len() > kept_before {
                grown = grown_pools((round, &mut searched), keeper, (ex, dictionary), opts.seed)?;
                kept_before = keeper.kept.len();
            }
            if s.exhausted || s.levelled_off || grown.is_some() {
                break;
            }
            share = false;
        }
        let Some(grown) = grown else {
            return Ok((searched, rounds));
        };
        let before = round.seqs.space().clone();
        // A later round's harness build is part of the budget (the first one's is not): a
        // round that ran its small space in no time grows again, and lru ran 185 rounds.
        let building = std::time::Instant::now();
        let grew = grow((ex, length), grown, round, dir, opts)?;
        searched.seconds += building.elapsed().as_secs_f64();
        let Some(seqs) = grew else {
            return Ok((searched, rounds));
        };
        renumber_round(keeper, round, seqs, (api, opts));
        let kept = keeper.kept.iter().map(|k| k.calls.clone()).collect();
        substitutions = Some(substitute::Substitutions::new(
            &before,
            round.seqs.space(),
            kept,
        ));
    }
}

/// The round's pools grown (`Pools::grown`) by the rest of `dictionary`, by what the crate
/// compared the kept sequences' values with, and by their texts edited; `None` when no pool
/// grows.
fn grown_pools(
    (round, searched): (&mut Round, &mut Searched),
    keeper: &mut keep::Keeper,
    (ex, dictionary): (&Explorable, &dictionary::Dictionary),
    seed: u64,
) -> Result<Option<pools::Pools>, ExploreError> {
    // Asking the harness is part of the budget too.
    let asking = std::time::Instant::now();
    let keys: Vec<Vec<extend::Key>> = ex.callables.iter().map(extend::keys).collect();
    let suggested = suggested(keeper, &keys, round)?;
    searched.seconds += asking.elapsed().as_secs_f64();
    let texts = kept_texts(keeper, &keys, round);
    Ok(round.pools.grown(dictionary, (&texts, &suggested), seed))
}

/// Kept sequences asked for their comparisons' operands at once.
const OPERANDS_BATCH: usize = 64;

/// What the crate compared the values of the kept sequences (the latest kept first) and of
/// the recording's own calls with (at most [`operands::MAX_ASKED`] sequences, half of them
/// kept ones when there are so many), asked of the round's harness; nothing when it reports
/// no comparisons.
fn suggested(
    keeper: &mut keep::Keeper,
    keys: &[Vec<extend::Key>],
    round: &mut Round,
) -> Result<operands::Suggested, ExploreError> {
    let Some(compares) = keeper.compares.as_mut() else {
        return Ok(operands::Suggested::default());
    };
    let kept = (keeper.kept.iter().rev().map(|k| &k.calls)).take(operands::MAX_ASKED / 2);
    let asked: Vec<(Vec<u64>, Vec<operands::Inputs>)> = (kept.chain(&keeper.seeds))
        .take(operands::MAX_ASKED)
        .map(|calls| (calls.clone(), pooled_values(calls, keys, round)))
        .filter(|(_, inputs)| inputs.iter().any(|i| !i.is_empty()))
        .collect();
    // Asked twice, of two harness processes: an operand that differs between them is an
    // address (a stack pointer compared with an index gave indexmap a capacity of 140 TB),
    // not what the code wanted.
    let mut twice = [
        operands::Suggested::default(),
        operands::Suggested::default(),
    ];
    for once in &mut twice {
        round.runner.stop();
        for batch in asked.chunks(OPERANDS_BATCH) {
            let seqs: Vec<Vec<u64>> = batch.iter().map(|(calls, _)| calls.clone()).collect();
            let results = round.runner.operands(&seqs)?;
            for (r, (_, inputs)) in results.iter().zip(batch) {
                let at_crate_line = |site| compares.at_crate_line(site);
                operands::suggestions(inputs, &r.states.operands, at_crate_line, once);
            }
        }
    }
    let [first, second] = twice;
    Ok(first.also_in(&second))
}

/// Texts longer than this are not grown further (`Pools::grown`).
const MAX_GROWN_TEXT: usize = 64;

/// The texts of the text pool that kept sequences took, each once, in the order they were
/// kept (none longer than [`MAX_GROWN_TEXT`] characters).
fn kept_texts(keeper: &keep::Keeper, keys: &[Vec<extend::Key>], round: &Round) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in &keeper.kept {
        for (kind, value) in pooled_values(&k.calls, keys, round).into_iter().flatten() {
            let pools::Lit::Str(t) = value else {
                continue;
            };
            let short = t.chars().count() <= MAX_GROWN_TEXT;
            if kind == PoolKind::Str && short && !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

/// Per call of `calls` (numbered in `round`'s space; `keys`, what each callable's indices pick
/// from), the (pool, value) of each argument it took from a text, integer, `char` or list
/// pool.
fn pooled_values(calls: &[u64], keys: &[Vec<extend::Key>], round: &Round) -> Vec<operands::Inputs> {
    (calls.iter())
        .map(|&c| {
            let (f, digits) = round.seqs.space().decode(c);
            (keys[f].iter().zip(digits))
                .filter_map(|(key, d)| match key {
                    extend::Key::Pool(
                        kind @ (PoolKind::Str | PoolKind::Scalar(_) | PoolKind::Slice(_)),
                    ) => Some((kind.clone(), round.pools.get(kind).get(d as usize)?.clone())),
                    _ => None,
                })
                .collect()
        })
        .collect()
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

/// Builds the harness again with `grown` pools for the next round; its strategy's
/// sequences, or `None` (the round's harness as it was) when the grown space cannot be
/// numbered (past `u128`) or the build took out a call or an object's start, as then the
/// calls no longer number the same: the search ends with what it has.
fn grow(
    (ex, length): (&Explorable, usize),
    grown: pools::Pools,
    round: &mut Round,
    (dir, crate_dir): (&Path, (&Path, &[String])),
    opts: &ExploreOptions,
) -> Result<Option<strategy::Sequences>, ExploreError> {
    let numbered = harness::space(&ex.callables, &grown)
        .and_then(|space| sequences(opts, ex, space, length).ok());
    let Some(seqs) = numbered else {
        return Ok(None);
    };
    let _ = round.runner.stop();
    let built = harness::build::build(dir, crate_dir, &opts.cargo, ex.clone(), &grown)?;
    let same = built.explorable.callables == ex.callables && built.explorable.objects == ex.objects;
    if !same {
        harness::build::build(dir, crate_dir, &opts.cargo, ex.clone(), &round.pools)?;
        return Ok(None);
    }
    round.pools = grown;
    round.bin = built.bin;
    round.coverage = built.coverage;
    Ok(Some(seqs))
}

/// Starts the round the grown pools make with `seqs`, their strategy: what was kept and
/// found renumbered in it (a pool's values keep their places); the new harness's guards and
/// comparison sites placed again, the lines and outcomes known so far still known.
fn renumber_round(
    keeper: &mut keep::Keeper,
    round: &mut Round,
    seqs: strategy::Sequences,
    (api, opts): (&CrateApi, &ExploreOptions),
) {
    keeper.renumber(round.seqs.space(), seqs.space());
    round.seqs = seqs;
    let Watched {
        lines,
        compares,
        crate_code,
    } = watch_coverage((&round.bin, &round.coverage), api, opts);
    keeper.replace_coverage((lines.ok(), compares));
    round.runner =
        harness::run::Runner::new(&round.bin, SEQUENCE_TIMEOUT).with_crate_code(crate_code);
}

/// What a harness's coverage lets a search watch.
pub(crate) struct Watched {
    /// The crate lines its guards stand for (starting from the run's), or why lines are not
    /// counted.
    pub lines: Result<lines::Lines, String>,
    /// Its comparison sites.
    pub compares: Option<compares::Compares>,
    /// The file that tells it where the crate's own code is (`crate_code_file`).
    pub crate_code: Option<std::path::PathBuf>,
}

/// What the harness `bin`'s coverage lets a search watch.
pub(crate) fn watch_coverage(
    (bin, coverage): (&std::path::Path, &Result<(), String>),
    api: &CrateApi,
    opts: &ExploreOptions,
) -> Watched {
    let run_lines = opts.run_lines.as_ref().map(|run| run_lines_here(run, api));
    // The harness's line tables, read once for its guards and its comparison sites.
    let table = coverage.clone().and_then(|()| {
        carve_recorder::line_table(bin).map_err(|e| format!("placing its coverage: {e}"))
    });
    let lines = lines_of((bin, &table), opts, run_lines.as_ref());
    let with_code = run_lines.map(|r| r.with_code).unwrap_or_default();
    let crate_code = table
        .as_ref()
        .ok()
        .and_then(|table| crate_code_file(bin, table, &opts.crate_dir, &with_code));
    let compares = table
        .ok()
        .map(|table| compares::Compares::of_table(table, &opts.crate_dir, with_code));
    Watched {
        lines,
        compares,
        crate_code,
    }
}

/// Writes beside the harness `bin` where the crate's own code is in it (`compares::crate_code`),
/// for its `--crate-code`; `None` when it cannot be written (the harness then traces every
/// comparison).
fn crate_code_file(
    bin: &std::path::Path,
    table: &carve_recorder::LineTable,
    crate_dir: &std::path::Path,
    with_code: &std::collections::BTreeSet<(String, u32)>,
) -> Option<std::path::PathBuf> {
    let rows = table
        .rows()
        .map(|(range, file, line)| (range, &**file, line));
    let code = compares::crate_code(rows, crate_dir, with_code);
    let text: String = code
        .chunks(2)
        .map(|r| format!("{:x} {:x}\n", r[0], r[1]))
        .collect();
    let file = bin.with_extension("crate-code");
    std::fs::write(&file, text).ok().map(|()| file)
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
        functions_reached: run.functions_reached.clone(),
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
