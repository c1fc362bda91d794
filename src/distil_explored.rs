//! `carve explore`'s kept tests distilled beside the carved suite (issue 27: the suite a
//! reviewer keeps): every test of the explored file and of the carved files in `--out` is
//! recorded alone with `--coverage` and the recording's selection, its calls into a
//! temporary trace; the generator says which value faults to try on the calls inside each
//! (`carve_generator::recorded_faults`), `fault_runs.rs` runs them, and the generator keeps
//! the carved tests and the fewest explored ones that reach every goal all of them reach
//! together (`carve_generator::select_recorded`). The others leave the explored file.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use carve_generator::{
    recorded_faults, recorded_features, select_recorded, CrateApi, ExploreReasons, Fault, Measured,
    RecordedDistilled, RecordedTest,
};
use carve_recorder::Program;
use carve_storage::{ProcessExit, RunInfo, RunWriter, Store, Trace, TraceEvent, TraceSink};

use crate::carved_coverage::{build, record_into, Canonical, InDir, LinesReached, Redirected};
use crate::fault_runs;

/// The carved files beside the explored one: the generator's default file prefix.
const CARVED_PREFIX: &str = "carved_";

/// Distils the explored tests of `explored` (a file of `out_dir`, the crate's `tests/`)
/// beside the carved files there, rewriting it without the tests that add nothing;
/// `reasons`, why explore kept each explored test (files named as it names them).
pub(crate) fn distil(
    info: &RunInfo,
    cargo: &Path,
    crate_dir: &Path,
    out_dir: &Path,
    explored: &Path,
    reasons: &BTreeMap<String, ExploreReasons>,
) -> anyhow::Result<RecordedDistilled> {
    let crate_dir = crate_dir
        .canonicalize()
        .with_context(|| format!("cannot find the crate directory {}", crate_dir.display()))?;
    if out_dir.canonicalize().ok() != Some(crate_dir.join("tests")) {
        bail!(
            "{} is not the crate's tests/, so cargo does not build its files as test targets",
            out_dir.display()
        );
    }
    let stem = |p: &Path| p.file_stem().map(|s| s.to_string_lossy().into_owned());
    let explored_target = stem(explored).context("the explored file has no name")?;
    let mut carved: Vec<String> = std::fs::read_dir(out_dir)
        .with_context(|| format!("cannot list {}", out_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter_map(|p| stem(&p))
        .filter(|s| s.starts_with(CARVED_PREFIX))
        .collect();
    carved.sort();
    let targets: Vec<String> = carved.iter().chain([&explored_target]).cloned().collect();
    let binaries = build(cargo, &crate_dir, &targets, &recorded_features(info))?;
    let api = CrateApi::load(&crate_dir)
        .with_context(|| format!("cannot read the crate at {}", crate_dir.display()))?;
    let scratch = tempfile::tempdir().context("cannot create a temporary directory")?;
    let log = tempfile::tempfile().context("cannot create a temporary file for test output")?;
    let (tests, measured) = {
        let _quiet = Redirected::to(&log).context("cannot redirect the tests' output")?;
        let _cwd = InDir::enter(&crate_dir)?;
        measure(info, &binaries, &explored_target, scratch.path())?
    };
    let mut tests = tests;
    let mut names = Canonical::default();
    for t in tests.iter_mut().filter(|t| !t.chosen) {
        let Some(why) = reasons.get(&t.name) else {
            continue;
        };
        // Files named as the test binaries' DWARF names them, resolved as the lines are.
        let compares = why.compares.iter();
        t.explored.compares = compares
            .map(|(file, line, side)| (names.of(file), *line, side.clone()))
            .collect();
        t.explored.outcomes = why.outcomes.clone();
    }
    let distilled = select_recorded(&api, &tests, &measured);
    let kept: BTreeSet<usize> = distilled.kept.iter().copied().collect();
    let dropped: BTreeSet<String> = (tests.iter().enumerate())
        .filter(|(i, t)| !t.chosen && !kept.contains(i))
        .map(|(_, t)| t.name.clone())
        .collect();
    if !dropped.is_empty() {
        let name = explored
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        carve_generator::remove_tests(out_dir, &name.unwrap_or_default(), &dropped)?;
    }
    Ok(distilled)
}

/// Each test of each binary recorded alone (its lines and calls), then run with the faults
/// the generator asks for.
fn measure(
    info: &RunInfo,
    binaries: &[(String, std::path::PathBuf)],
    explored_target: &str,
    scratch: &Path,
) -> anyhow::Result<(Vec<RecordedTest>, Measured)> {
    let mut names = Canonical::default();
    let mut out = Measured::default();
    let mut tests = Vec::new();
    let mut limits = Vec::new();
    let mut programs = BTreeMap::new();
    for (target, exe) in binaries {
        let program = Program::load(exe)
            .with_context(|| format!("loading the test binary {}", exe.display()))?;
        let mut placed = false;
        for name in listed(exe)? {
            let started = Instant::now();
            let db = scratch.join(format!("{}.db", tests.len()));
            let (lines, trace) = record_test(&program, &name, info, &db)
                .with_context(|| format!("recording the test {name} of {}", exe.display()))?;
            // A fault that makes the test loop is detected; ten times the recorded run and
            // three seconds at least is long enough to say so.
            limits.push((started.elapsed() * 10).max(Duration::from_secs(3)));
            let passed = matches!(lines.exit, Some(ProcessExit::Exited { code: 0 }));
            if passed {
                if !placed {
                    for ((file, line), function) in lines.functions() {
                        let at = out.functions.entry((names.of(&file), line)).or_default();
                        at.extend(function);
                    }
                    placed = true;
                }
                let reached = lines.reached.iter();
                let reached = reached
                    .map(|(file, line)| (names.of(file), *line))
                    .collect();
                out.lines.insert((target.clone(), name.clone()), reached);
            }
            tests.push(RecordedTest {
                target: target.clone(),
                chosen: target != explored_target,
                name,
                trace: trace.filter(|_| passed),
                explored: ExploreReasons::default(),
            });
        }
        programs.insert(target.clone(), program);
    }
    let faults = recorded_faults(&tests);
    for (target, program) in &programs {
        let mut asked: BTreeMap<Fault, Vec<fault_runs::Timed>> = BTreeMap::new();
        let of_target =
            (tests.iter().zip(&faults).zip(&limits)).filter(|((t, _), _)| &t.target == target);
        for ((test, faults), limit) in of_target {
            for fault in faults {
                let asking = asked.entry(fault.clone()).or_default();
                asking.push((test.name.clone(), *limit));
            }
        }
        let (detected, runs) = fault_runs::detected(program, &asked);
        out.fault_runs += runs;
        for (test, faults) in detected {
            out.detected.insert((target.clone(), test), faults);
        }
    }
    Ok((tests, out))
}

/// The tests a test binary holds, by libtest's `--list`.
fn listed(exe: &Path) -> anyhow::Result<Vec<String>> {
    let out = Command::new(exe)
        .args(["--list", "--format", "terse"])
        .output()
        .with_context(|| format!("cannot list the tests of {}", exe.display()))?;
    if !out.status.success() {
        bail!("{} --list failed", exe.display());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect())
}

/// One test recorded alone: the lines it reached, and its calls (read back from the trace
/// written to `db`; `None` when it could not be stored).
fn record_test(
    program: &Program,
    test: &str,
    info: &RunInfo,
    db: &Path,
) -> anyhow::Result<(LinesReached, Option<Trace>)> {
    let args: Vec<OsString> = vec![test.into(), "--exact".into(), "--test-threads=1".into()];
    let mut stored = info.clone();
    stored.program = program.path().to_string_lossy().into_owned();
    stored.distinct_calls = false;
    let writer = Store::create(db)?.begin_run(&stored)?;
    let mut tee = Tee {
        lines: LinesReached::default(),
        writer: Some(writer),
    };
    record_into(program.clone(), &args, info, &mut tee)?;
    let trace = match tee.writer.take().map(RunWriter::finish) {
        Some(Ok(run)) => Store::open(db)?.load_trace_whole(run).ok(),
        _ => None,
    };
    Ok((tee.lines, trace))
}

/// Every event to the lines kept and to the trace's writer.
struct Tee {
    lines: LinesReached,
    writer: Option<RunWriter>,
}

impl TraceSink for Tee {
    fn record(&mut self, event: TraceEvent) {
        if let Some(w) = self.writer.as_mut() {
            w.record(event.clone());
        }
        self.lines.record(event);
    }
}
