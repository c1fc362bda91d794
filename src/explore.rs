//! `carve explore`: call sequences beyond the recorded run, kept as tests when they add an
//! outcome, panics on unrecorded inputs reported as findings (the `carve_explore` crate).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use carve_explore::{Budget, ExploreOptions, Report, Strategy};
use carve_generator::Verify;
use carve_storage::{terminal_safe, Store};

use crate::args::{ExploreArgs, ExploreStrategy, Format};

/// The time budget when neither --budget nor --runs is given.
const DEFAULT_BUDGET: Duration = Duration::from_secs(10);

pub fn run(a: ExploreArgs) -> anyhow::Result<i32> {
    if !a.out.is_dir() {
        anyhow::bail!(
            "--out {}: not a directory (create it, usually the crate's tests/)",
            a.out.display()
        );
    }
    let crate_dir = match &a.crate_dir {
        Some(dir) => dir.clone(),
        None => package_holding(&a.out).with_context(|| {
            format!(
                "--out {} is in no package (no Cargo.toml above it): give the crate with --crate DIR",
                a.out.display()
            )
        })?,
    };
    if !crate_dir.join("Cargo.toml").is_file() {
        anyhow::bail!(
            "--crate {}: no Cargo.toml there (give the directory of the recorded library crate)",
            crate_dir.display()
        );
    }
    let store = Store::open(&a.db)?;
    let run = crate::show::pick_run(&store, a.run)?;
    let trace = store.load_trace(run)?;
    // The lines the run reached, when it was recorded with --coverage.
    let run_lines = store.coverage(run).ok().map(|c| {
        let all = c.lines.iter().flat_map(|(file, lines)| {
            lines
                .iter()
                .map(move |(line, r)| ((file.clone(), *line), *r))
        });
        let mut run = carve_explore::RunLines::default();
        for (line, reached) in all {
            if reached {
                run.reached.insert(line.clone());
            }
            run.with_code.insert(line);
        }
        run.functions_reached = (c.functions.iter())
            .filter(|f| f.reached > 0)
            .map(|f| f.path.clone())
            .collect();
        run
    });
    let cargo = std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from);
    let opts = ExploreOptions {
        out_dir: a.out.clone(),
        crate_dir: crate_dir.canonicalize().unwrap_or(crate_dir),
        strategy: match a.strategy {
            ExploreStrategy::Random => Strategy::Random,
            ExploreStrategy::Exhaustive => Strategy::Exhaustive,
            ExploreStrategy::Bobw => Strategy::Bobw,
        },
        length: usize::from(a.length),
        budget: match (a.runs, a.budget) {
            (Some(n), _) => Budget::Runs(n),
            (None, Some(d)) => Budget::Time(d),
            (None, None) => Budget::Time(DEFAULT_BUDGET),
        },
        seed: a.seed,
        verify: (!a.no_verify).then(|| Verify {
            cargo: cargo.clone(),
            runs: a.verify_runs.max(1),
            timeout: Duration::from_secs(600),
            features: Vec::new(),
        }),
        cargo,
        interrupt: carve_generator::Interrupt::new(&crate::generate::INTERRUPTED),
        run_lines,
        extend: !a.no_extend,
    };
    // SIGINT, SIGTERM and SIGHUP stop exploring (the kept tests' file put back as it was).
    let interruptible = crate::generate::Interruptible::start();
    let explored = carve_explore::explore(&trace, &opts);
    drop(interruptible);
    let mut report = match explored {
        Err(e) if e.is_interrupted() => {
            eprintln!("carve: error: {}", terminal_safe(&e.to_string(), &[]));
            return Ok(crate::exit::INTERRUPTED);
        }
        report => report?,
    };
    // The kept tests distilled beside the carved ones: each recorded alone (issue 27).
    if let (false, true, Some(file)) = (a.all, report.verified, report.file.clone()) {
        crate::progress::step("distilling the kept tests beside the carved ones");
        let info = store.run(run)?.info;
        let distilled = crate::distil_explored::distil(
            &info,
            &opts.cargo,
            &opts.crate_dir,
            &a.out,
            &file,
            &report.reasons,
        );
        crate::progress::clear();
        if distilled.is_ok() && file.is_file() {
            let features = carve_generator::recorded_features(&info);
            let named = (&features[..], &report.parameters, &report.receivers);
            (report.tables, report.table_rows) = carve_explore::fold_tables(&opts, &file, named)?;
        }
        report.distilled = Some(distilled.map_err(|e| format!("{e:#}")));
    }
    let text = match a.format {
        Format::Json => serde_json::to_string_pretty(&report)? + "\n",
        Format::Text => text(&report),
    };
    crate::emit(&terminal_safe(&text, &['\n']))?;
    Ok(0)
}

/// The nearest directory at or above `dir` with a `Cargo.toml`.
fn package_holding(dir: &Path) -> Option<PathBuf> {
    let dir = dir.canonicalize().ok()?;
    dir.ancestors()
        .find(|d| d.join("Cargo.toml").is_file())
        .map(Path::to_path_buf)
}

fn text(r: &Report) -> String {
    let mut t = String::new();
    if let Some(f) = &r.file {
        t.push_str(&format!("wrote {}\n", f.display()));
    }
    if let Some(f) = &r.findings_file {
        t.push_str(&format!("wrote {}\n", f.display()));
    }
    let space = r
        .sequences_in_space
        .map_or("past 2^128".to_string(), |z| z.to_string());
    t.push_str(&format!(
        "explored {} functions ({} left out) with {}, length {}{}, seed {}: {} sequences run \
         ({} of them extending a kept one, {} a kept one with a value a grown pool gained; {} more stopped by the harness at a dead prefix, {} skipped by the strategy for one{}{}), {} calls in {:.2} s = {:.0} calls/s \
         ({:.0} calls/s in the harness, built in {:.1} s); space {space} sequences of {} calls per position ({} can come first)\n",
        r.explored.len(),
        r.left_out.len(),
        carve_explore::strategy_name(r.strategy),
        r.length,
        r.length_reason.map_or(String::new(), |why| format!(" ({why})")),
        r.seed,
        r.sequences_run,
        r.extended,
        r.substituted,
        r.stopped_dead,
        r.skipped,
        match (r.exhausted, r.strategy) {
            (false, _) => "",
            (true, Strategy::Random) => "; every draw now extends a dead prefix",
            (true, _) => "; space exhausted",
        },
        match r.rounds {
            0 | 1 => String::new(),
            n => format!(
                "; {n} rounds, each after one that ran its whole space, levelled off or spent \
                 its share of the budget, with pools grown by more of the crate's literals and \
                 what it compared the values with (the space below is the last round's)"
            ),
        },
        r.calls_run,
        r.seconds,
        r.calls_per_second(),
        r.harness_calls_per_second(),
        r.build_seconds,
        r.calls_per_position,
        r.first_calls,
    ));
    t.push_str(&match &r.beyond_run {
        Ok(paths) => format!(
            "beyond the run: {} of the functions explored are public functions the run never \
             reached (neither the crate nor its dependencies name a way to touch the world)\n",
            paths.len()
        ),
        Err(why) => format!(
            "beyond the run: only functions the run reached are explored (a function it never \
             ran may touch the world: {why})\n"
        ),
    });
    let verified = if r.verified {
        format!(
            "{} of {} written passed verification",
            r.tests_kept, r.tests_written
        )
    } else {
        format!("{} written, not verified", r.tests_written)
    };
    t.push_str(&match &r.lines {
        Ok(l) => format!(
            "lines: the search reached {} crate lines the run never reached ({:+.0}% on the {} \
             crate lines the run reached; the harness sees {} lines with compiled code)\n",
            l.beyond.len(),
            100.0 * l.beyond.len() as f64 / l.run.max(1) as f64,
            l.run,
            l.with_guard
        ),
        Err(why) => format!("lines beyond the run: not counted ({why})\n"),
    });
    if let Ok(l) = &r.lines {
        if let Some(met) = &l.compares_beyond {
            t.push_str(&format!(
                "comparisons: the search met {} at crate comparisons that the {} recorded \
                 calls replayed first did not\n",
                match met.len() {
                    1 => "1 outcome".to_string(),
                    n => format!("{n} outcomes"),
                },
                l.replayed
            ));
        }
    }
    t.push_str(&format!(
        "tests kept: {verified} (each reaches a line the run never reached, gives a function \
         an outcome no carved test checks, meets a comparison outcome or takes a branch no \
         call before it did); findings: {}\n",
        r.findings.len()
    ));
    match &r.distilled {
        Some(Ok(d)) => t.push_str(&format!(
            "distilled: kept {} of the {} tests (--all keeps every one): beside the carved \
             tests in the directory, they reach {} of the {} goals all of them reach together \
             ({} of {} library lines, {} of {} value faults detected: a function called \
             inside made to answer otherwise; {} runs), the carved tests alone {}\n",
            d.kept_tests,
            d.weighed_tests,
            d.kept_goals,
            d.all_goals,
            d.kept_lines,
            d.all_lines,
            d.kept_faults,
            d.all_faults,
            d.fault_runs,
            d.chosen_goals
        )),
        Some(Err(why)) => t.push_str(&format!("not distilled, every test kept: {why}\n")),
        None => {}
    }
    if r.tables > 0 {
        t.push_str(&format!(
            "tables: {} of the kept tests, the same calls as others with other values, \
             written as {} (a row each, named in its failure message)\n",
            r.table_rows,
            match r.tables {
                1 => "1 table test".to_string(),
                n => format!("{n} table tests"),
            }
        ));
    }
    for q in &r.taken_out {
        t.push_str(&format!("  taken out: {}: {}\n", q.test, q.reason));
    }
    for f in &r.findings {
        t.push_str(&format!(
            "  finding: {} panics: {:?} ({} times)\n",
            f.function.as_deref().unwrap_or("the harness"),
            f.message,
            f.times
        ));
    }
    for (f, why) in &r.left_out {
        t.push_str(&format!("  left out: {f}: {why}\n"));
    }
    t
}
