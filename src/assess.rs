//! `carve assess`: runs a crate's test binaries once under the recorder to learn which tests
//! reach which functions, then, for every reached function and every extreme value that fits its
//! return type, runs only those tests with the function forced to return that value at its entry
//! (no rebuild), `--runs` times, and reports which transformations no test notices, and why.
//! With `--write-tests`, carves (through the generator) the test each weak-oracle or
//! no-propagation case lacks, and keeps it only when it passes as the code is and fails under
//! the transformation.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use carve_assess::{
    combine, diagnose, judge, FunctionAssessed, Kind, Observed, Observer, Report, RunEnd,
    Transformation, Verdict, WrittenTest,
};
use carve_generator::{GenerateOptions, GroupedTrace, PlanOptions, Verify};
use carve_recorder::{Extreme, ForcedValue, Program, RecordOptions, Recording, Selection};
use carve_storage::{CallId, ProcessExit, RunId, RunInfo, RunWriter, Store, TraceEvent, TraceSink};

use crate::args::{AssessArgs, AssessFormat};

pub fn run(a: AssessArgs) -> anyhow::Result<i32> {
    let started = Instant::now();
    let (binaries, extra) = match (&a.crate_dir, a.command.split_first()) {
        (Some(_), Some(_)) => bail!("give either --crate DIR or -- TEST_BINARY, not both"),
        (Some(dir), None) => (test_binaries(dir)?, Vec::new()),
        (None, Some((bin, rest))) => (vec![(PathBuf::from(bin), None)], rest.to_vec()),
        (None, None) => {
            bail!("nothing to assess: give --crate DIR or -- TEST_BINARY (built by cargo test --no-run)")
        }
    };
    let scratch = tempfile::tempdir().context("making a scratch directory")?;
    // Written after the tests ran from their packages' directories.
    let junit = a
        .junit
        .as_ref()
        .map(|p| std::path::absolute(p).unwrap_or(p.clone()));
    // A verdict reads a failure's message, never its backtrace: capturing and symbolising one
    // costs a failing test about 0.3 s (every test a transformation makes fail).
    std::env::set_var("RUST_BACKTRACE", "0");
    let mut report = Report::default();
    for (bin, package) in &binaries {
        if let Some(dir) = package {
            // As `cargo test` runs them: from the package's directory, which tests that read
            // their own files (README.md, fixtures) count on.
            std::env::set_current_dir(dir)
                .with_context(|| format!("entering {}", dir.display()))?;
            std::env::set_var("CARGO_MANIFEST_DIR", dir);
        }
        report.binaries.push(bin.display().to_string());
        assess_binary(&a, bin, &extra, scratch.path(), &mut report)?;
    }
    report.seconds = started.elapsed().as_secs_f64();
    report.summarise();
    match a.format {
        AssessFormat::Human => crate::emit(&carve_assess::human(&report))?,
        AssessFormat::Json => crate::emit(&(report.json() + "\n"))?,
    }
    if let Some(path) = &junit {
        std::fs::write(path, carve_assess::junit(&report))
            .with_context(|| format!("writing the JUnit report to {}", path.display()))?;
    }
    match a.fail_under {
        Some(pct) if report.summary.score < pct => Ok(crate::exit::BELOW_FAIL_UNDER),
        _ => Ok(crate::exit::OK),
    }
}

/// The test executables `cargo test --no-run` builds for the crate in `dir`, each with its
/// package's directory.
fn test_binaries(dir: &Path) -> anyhow::Result<Vec<(PathBuf, Option<PathBuf>)>> {
    let manifest = dir.join("Cargo.toml");
    if !manifest.is_file() {
        bail!(
            "{} has no Cargo.toml: give --crate the directory of a crate",
            dir.display()
        );
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "test",
            "--no-run",
            "--message-format=json",
            "--manifest-path",
        ])
        .arg(&manifest)
        .output()
        .context("running cargo test --no-run")?;
    if !out.status.success() {
        bail!(
            "cargo test --no-run failed in {}: {}",
            dir.display(),
            carve_generator::libtest::first_error(&String::from_utf8_lossy(&out.stdout))
                .unwrap_or_else(|| String::from_utf8_lossy(&out.stderr).trim().to_string())
        );
    }
    let mut bins = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let is_test = msg["reason"] == "compiler-artifact" && msg["profile"]["test"] == true;
        if let (true, Some(exe)) = (is_test, msg["executable"].as_str()) {
            let package = msg["manifest_path"]
                .as_str()
                .and_then(|m| Path::new(m).parent())
                .map(Path::to_path_buf);
            bins.push((PathBuf::from(exe), package));
        }
    }
    if bins.is_empty() {
        bail!("cargo built no test binary for {}", dir.display());
    }
    Ok(bins)
}

/// The tests `bin` would run, as `--list --format terse` names them.
fn list_tests(bin: &Path, extra: &[OsString]) -> anyhow::Result<Vec<String>> {
    let out = Command::new(bin)
        .args(extra)
        .args(["--list", "--format", "terse"])
        .output()
        .with_context(|| format!("listing the tests of {}", bin.display()))?;
    if !out.status.success() {
        bail!(
            "{} --list failed: is it a libtest test binary (built by cargo test --no-run)?",
            bin.display()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect())
}

/// A sink that keeps nothing (the transformed runs need only the exit).
struct Discard;

impl TraceSink for Discard {
    fn record(&mut self, _: TraceEvent) {}
}

/// Hands every event to `first` and, when there is one, to a trace's writer; with `runaway`,
/// kills the program once more calls than its limit started.
struct Tee<'a> {
    first: &'a mut dyn TraceSink,
    writer: Option<RunWriter>,
    runaway: Option<Runaway>,
}

/// A forced function called over and over: the loop around it never ends.
struct Runaway {
    pid: i32,
    limit: u64,
    calls: u64,
    killed: bool,
}

impl TraceSink for Tee<'_> {
    fn record(&mut self, event: TraceEvent) {
        if let (Some(r), TraceEvent::CallStarted(_)) = (self.runaway.as_mut(), &event) {
            r.calls += 1;
            if r.calls > r.limit && !r.killed {
                r.killed = true;
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(r.pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
        if let Some(w) = self.writer.as_mut() {
            w.record(event.clone());
        }
        self.first.record(event);
    }
}

/// A transformed run is stopped as a loop that never ends when its forced function was called
/// this many times more than the same tests call it as the code is...
const RUNAWAY_FACTOR: u64 = 100;
/// ...and at least this many times.
const RUNAWAY_FLOOR: u64 = 10_000;

/// How long a run may take before it is killed as a hang, and, for the report, where that
/// limit came from.
#[derive(Debug, Clone)]
struct Limit {
    time: Duration,
    why: String,
    /// Each test's recorded time, in seconds: a test running longer than [`Limit::for_test`]
    /// of it is a hang too, however much of the whole limit is left.
    tests: BTreeMap<String, f64>,
}

/// A hang is a run that takes this many times as long as the recorded run of the same tests...
const TIMEOUT_FACTOR: f64 = 5.0;
/// ...plus this many seconds (starting the binary under the recorder, a loaded machine).
const TIMEOUT_FLOOR_SECS: f64 = 2.0;

impl Limit {
    /// `--timeout`, when given.
    fn given(seconds: f64) -> Limit {
        Limit {
            time: Duration::from_secs_f64(seconds),
            why: format!("limit {seconds:.1} s, from --timeout"),
            tests: BTreeMap::new(),
        }
    }

    /// The limit of one test of `tests`, and why.
    fn for_test(&self, test: &str) -> Option<(Duration, String)> {
        let seconds = *self.tests.get(test)?;
        let limit = TIMEOUT_FLOOR_SECS + TIMEOUT_FACTOR * seconds;
        Some((
            Duration::from_secs_f64(limit),
            format!(
                "limit {limit:.1} s: {TIMEOUT_FLOOR_SECS} s + {TIMEOUT_FACTOR} × {seconds:.2} s, the time {test} took when recorded"
            ),
        ))
    }

    /// From the recorded time of what the run will do (`what` says what that was).
    fn from_recorded(seconds: f64, what: &str) -> Limit {
        let limit = TIMEOUT_FLOOR_SECS + TIMEOUT_FACTOR * seconds;
        Limit {
            time: Duration::from_secs_f64(limit),
            why: format!(
                "limit {limit:.1} s: {TIMEOUT_FLOOR_SECS} s + {TIMEOUT_FACTOR} × {seconds:.2} s, {what}"
            ),
            tests: BTreeMap::new(),
        }
    }
}

struct Ran {
    end: RunEnd,
    output: String,
    seconds: f64,
    /// The run stored in the trace asked for, if one was.
    stored: Option<RunId>,
}

/// The tests as they are (no transformation, every function of the crate selected), recorded
/// into an `Observer`: who reaches what, and what each test saw. With `store_to`, also stored
/// as a run of that trace (what `--write-tests` carves from).
fn run_as_is(
    program: &Program,
    args: &[OsString],
    output: &Path,
    store_to: Option<&Path>,
) -> anyhow::Result<(Ran, Observer)> {
    let mut observer = Observer::default();
    let ran = run_recorded(
        program,
        args,
        Selection::default(),
        Vec::new(),
        None,
        &mut observer,
        output,
        store_to,
        false,
        None,
    )?;
    Ok((ran, observer))
}

/// Runs `bin` with `args` under the recorder (selecting `selection`, forcing `force`), killed
/// after `timeout`, its events to `sink` (and stored in the trace `store_to`, when given).
/// `acting_only`: a run judged by its exit alone, beside others: the selected functions'
/// entries are its only breakpoints, and it is not pinned to carve's CPU.
#[allow(clippy::too_many_arguments)]
fn run_recorded(
    program: &Program,
    args: &[OsString],
    selection: Selection,
    force: Vec<(String, ForcedValue)>,
    timeout: Option<&Limit>,
    sink: &mut dyn TraceSink,
    output: &Path,
    store_to: Option<&Path>,
    acting_only: bool,
    original_calls: Option<u64>,
) -> anyhow::Result<Ran> {
    // A copy shares the loaded file and DWARF: loading it again for every run cost more than
    // most transformed runs themselves.
    let program = program.clone();
    let bin = program.path().to_path_buf();
    let options = RecordOptions {
        selection,
        force_returns: force,
        output_to: Some(output.to_path_buf()),
        entries_only: acting_only,
        pin_cpu: !acting_only,
        ..RecordOptions::default()
    };
    let started = Instant::now();
    let recording = Recording::spawn(program, args, options)?;
    let pid = recording.pid();
    let writer = match store_to {
        Some(db) => {
            let info = RunInfo {
                program: bin.display().to_string(),
                args: args
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect(),
                cwd: std::env::current_dir()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default(),
                pid,
                started_at_ms: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis() as i64)
                    .unwrap_or(0),
                filters: Vec::new(),
                excludes: Vec::new(),
                crates: Vec::new(),
                carve_version: env!("CARGO_PKG_VERSION").to_string(),
            };
            Some(Store::create(db)?.begin_run(&info)?)
        }
        None => None,
    };
    let done = Arc::new(AtomicBool::new(false));
    // Why the watchdog killed the run, when it did.
    let timed_out: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let watchdog = timeout.map(|limit| {
        let limit = limit.clone();
        let (done, timed_out) = (done.clone(), timed_out.clone());
        let output = output.to_path_buf();
        std::thread::spawn(move || {
            let start = Instant::now();
            // The test libtest says is running, since when.
            let mut running: Option<(String, Instant)> = None;
            let mut polls = 0u32;
            while !done.load(Ordering::SeqCst) {
                let mut why = (start.elapsed() >= limit.time).then(|| limit.why.clone());
                polls += 1;
                if why.is_none() && !limit.tests.is_empty() && polls.is_multiple_of(5) {
                    let now = std::fs::read_to_string(&output)
                        .ok()
                        .and_then(|o| carve_assess::running_test(&o));
                    if running.as_ref().map(|r| &r.0) != now.as_ref() {
                        running = now.map(|t| (t, Instant::now()));
                    }
                    if let Some((test, since)) = &running {
                        if let Some((time, reason)) = limit.for_test(test) {
                            why = (since.elapsed() >= time).then_some(reason);
                        }
                    }
                }
                if let Some(why) = why {
                    if let Ok(mut t) = timed_out.lock() {
                        *t = Some(why);
                    }
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    });
    let mut tee = Tee {
        first: sink,
        writer,
        runaway: original_calls.map(|original| Runaway {
            pid,
            limit: original.saturating_mul(RUNAWAY_FACTOR).max(RUNAWAY_FLOOR),
            calls: 0,
            killed: false,
        }),
    };
    let result = recording.run(&mut tee);
    let runaway = tee.runaway.take().filter(|r| r.killed);
    let stored = match tee.writer.take() {
        Some(w) => Some(w.finish()?),
        None => None,
    };
    done.store(true, Ordering::SeqCst);
    if let Some(w) = watchdog {
        let _ = w.join();
    }
    let seconds = started.elapsed().as_secs_f64();
    let output = std::fs::read_to_string(output).unwrap_or_default();
    let end = match result {
        _ if timed_out.lock().is_ok_and(|t| t.is_some()) => RunEnd::TimedOut {
            seconds,
            limit: timed_out
                .lock()
                .ok()
                .and_then(|mut t| t.take())
                .unwrap_or_default(),
        },
        _ if runaway.is_some() => RunEnd::Runaway {
            calls: runaway.as_ref().map_or(0, |r| r.calls),
            original: original_calls.unwrap_or(0),
            seconds,
        },
        Ok(summary) => match summary.exit {
            ProcessExit::Exited { code } => RunEnd::Exited(code),
            ProcessExit::Signaled { name, .. } => RunEnd::Signaled(name),
            ProcessExit::Lost { reason } => RunEnd::Lost(reason),
        },
        Err(e) => RunEnd::Lost(e.to_string()),
    };
    Ok(Ran {
        end,
        output,
        seconds,
        stored,
    })
}

/// An undetected weak-oracle or no-propagation case `--write-tests` carves a test for.
struct Case {
    /// Where its transformation is in the report: function, transformation.
    at: (usize, usize),
    function: String,
    value: ForcedValue,
    /// The function's source file.
    file: Option<String>,
    /// The original run's calls a catching test can be carved from, best first.
    witnesses: Vec<CallId>,
}

fn assess_binary(
    a: &AssessArgs,
    bin: &Path,
    extra: &[OsString],
    scratch: &Path,
    report: &mut Report,
) -> anyhow::Result<()> {
    let tests = list_tests(bin, extra)?;
    if tests.is_empty() {
        return Ok(());
    }
    let output = scratch.join("output.txt");
    let one_thread: Vec<OsString> = vec!["--test-threads=1".into()];
    let mut args = one_thread.clone();
    args.extend(extra.iter().cloned());
    // The tests as they are, recorded: who reaches what, and what each test saw (stored as a
    // trace too when tests are to be carved from it).
    let trace_db = scratch.join(format!("baseline-{}.db", report.binaries.len()));
    let store_to = a.write_tests.then_some(trace_db.as_path());
    let mut program = Program::load(bin)?;
    let (baseline, observer) = run_as_is(&program, &args, &output, store_to)?;
    if baseline.end != RunEnd::Exited(0) {
        bail!(
            "the tests of {} do not pass as they are ({:?}): fix them before assessing them",
            bin.display(),
            baseline.end
        );
    }
    let original = observer.by_test(&tests);
    // A run of all the tests (a diagnosis's, a written test's) may take as long as the
    // recorded baseline allows; a transformed run, as long as its own tests took in it.
    let whole = match a.timeout {
        Some(secs) => Limit::given(secs),
        None => Limit::from_recorded(
            baseline.seconds,
            "the time the recorded run of all the tests took",
        ),
    };
    // More recordings of the tests as they are, made at the first diagnosis: what changes
    // between runs of the same code is not what a test failed to check.
    let mut repeats: Option<Vec<Observed>> = None;
    let mut cases: Vec<Case> = Vec::new();
    // Every function in report order, with the extremes its transformations try; the
    // transformed runs are made first (several at once), the diagnoses after, in order.
    let mut entries: Vec<(FunctionAssessed, Vec<Extreme>)> = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    for (function, reaching) in candidates(&original, &tests, &a.filters) {
        let info = original.functions.iter().find(|f| f.path == function);
        let entry = program
            .functions()
            .iter()
            .find(|f| f.path == function)
            .cloned();
        let mut assessed = FunctionAssessed {
            function: function.clone(),
            file: info.and_then(|f| f.decl_file.clone()),
            line: info.and_then(|f| f.decl_line),
            tests: reaching.clone(),
            skipped: None,
            transformations: Vec::new(),
        };
        let extremes: Result<Vec<Extreme>, String> = match &entry {
            Some(e) => program.extremes(e),
            None => Err("not found in the binary's debug info".into()),
        };
        let extremes = match extremes {
            Ok(x) => x,
            Err(reason) => {
                assessed.skipped = Some(reason);
                entries.push((assessed, Vec::new()));
                continue;
            }
        };
        if reaching.is_empty() {
            for extreme in extremes {
                assessed.transformations.push(Transformation {
                    verdict: Verdict::Undetected {
                        diagnosis: Some(carve_assess::not_reached(&function)),
                    },
                    value: extreme.source,
                    seconds: 0.0,
                    runs: 0,
                    written: None,
                });
            }
            entries.push((assessed, Vec::new()));
            continue;
        }
        let calls = reaching
            .iter()
            .filter_map(|t| original.tests.get(t)?.calls.get(&function))
            .map(|c| c.len() as u64)
            .sum();
        let limit = match a.timeout {
            Some(secs) => Limit::given(secs),
            None => {
                let each: BTreeMap<String, f64> = reaching
                    .iter()
                    .filter_map(|t| Some((t.clone(), original.tests.get(t)?.nanos as f64 / 1e9)))
                    .collect();
                let mut limit = Limit::from_recorded(
                    each.values().sum(),
                    &format!(
                        "the time the {} tests reaching it took when recorded",
                        reaching.len()
                    ),
                );
                limit.tests = each;
                limit
            }
        };
        for extreme in &extremes {
            jobs.push(Job {
                function: function.clone(),
                value: extreme.value.clone(),
                tests: reaching.clone(),
                calls,
                limit: limit.clone(),
            });
        }
        entries.push((assessed, extremes));
    }
    let mut results = run_jobs(&jobs, &program, &one_thread, a.runs, scratch)?.into_iter();
    for (mut assessed, extremes) in entries {
        let function = assessed.function.clone();
        let reaching = assessed.tests.clone();
        for extreme in extremes {
            let Some((mut verdict, runs, seconds)) = results.next() else {
                bail!("a transformation of {function} was not run");
            };
            let mut run_args = one_thread.clone();
            run_args.push("--exact".into());
            run_args.extend(reaching.iter().map(OsString::from));
            // An undetected transformation is diagnosed from one more run of its tests,
            // recorded as fully as the original; a flaky one from the first of up to --runs
            // more in which every test passes (the runs where it went undetected).
            let attempts = match (&verdict, a.no_diagnosis) {
                (_, true) => 0,
                (Verdict::Undetected { .. }, false) => 1,
                (Verdict::Flaky { .. }, false) => a.runs,
                _ => 0,
            };
            let mut transformed = None;
            let mut detected_again = 0;
            for _ in 0..attempts {
                let mut observer = Observer::default();
                let force = vec![(function.clone(), extreme.value.clone())];
                let again = run_recorded(
                    &program,
                    &run_args,
                    Selection::default(),
                    force,
                    Some(&whole),
                    &mut observer,
                    &output,
                    None,
                    false,
                    None,
                )?;
                if again.end == RunEnd::Exited(0) {
                    transformed = Some(observer.by_test(&tests));
                    break;
                }
                detected_again += 1;
            }
            let diagnosed = match transformed {
                Some(transformed) => {
                    if repeats.is_none() {
                        let mut made = Vec::new();
                        for _ in 0..a.runs.saturating_sub(1).max(1) {
                            let (rerun, observer) = run_as_is(&program, &args, &output, None)?;
                            if rerun.end == RunEnd::Exited(0) {
                                made.push(observer.by_test(&tests));
                            }
                        }
                        repeats = Some(made);
                    }
                    Some(diagnose(
                        &function,
                        &extreme.source,
                        &original,
                        repeats.as_deref().unwrap_or_default(),
                        &transformed,
                    ))
                }
                None => None,
            };
            match (&mut verdict, diagnosed) {
                (Verdict::Undetected { diagnosis }, Some(d)) => {
                    if a.write_tests && matches!(d.kind, Kind::WeakOracle | Kind::NoPropagation) {
                        cases.push(Case {
                            at: (report.functions.len(), assessed.transformations.len()),
                            function: function.clone(),
                            value: extreme.value.clone(),
                            file: assessed.file.clone(),
                            witnesses: d.witnesses.clone(),
                        });
                    }
                    *diagnosis = Some(d);
                }
                (Verdict::Flaky { diagnosis, .. }, Some(d)) => *diagnosis = Some(d),
                (Verdict::Flaky { not_diagnosed, .. }, None) if attempts > 0 => {
                    *not_diagnosed = Some(format!(
                        "each of the {detected_again} runs recorded to diagnose it detected it: \
                         no run where it went undetected to compare with the original"
                    ));
                }
                _ => {}
            }
            assessed.transformations.push(Transformation {
                value: extreme.source,
                verdict,
                seconds,
                runs,
                written: None,
            });
        }
        report.functions.push(assessed);
    }
    if let (false, Some(run)) = (cases.is_empty(), baseline.stored) {
        write_tests(a, bin, &trace_db, run, cases, &whole, &output, report)?;
    }
    Ok(())
}

/// One transformation to run: `function` forced to return `value` under the tests reaching it.
struct Job {
    function: String,
    value: ForcedValue,
    tests: Vec<String>,
    /// How often those tests call `function` as the code is.
    calls: u64,
    /// How long one run may take.
    limit: Limit,
}

/// Runs every job ([`run_transformed`]) and gives their results in the jobs' order. As many
/// run at once as there are CPUs, but never two that share a test: each test runs as `cargo
/// test` may run it, beside other tests but never beside itself (a test counting its runs in a
/// file sees them one after another, in order). Each worker has its own output file.
fn run_jobs(
    jobs: &[Job],
    program: &Program,
    one_thread: &[OsString],
    runs: u32,
    scratch: &Path,
) -> anyhow::Result<Vec<(Verdict, u32, f64)>> {
    type Outcome = anyhow::Result<(Verdict, u32, f64)>;
    struct Queue {
        started: Vec<bool>,
        busy: BTreeSet<String>,
        results: Vec<Option<Outcome>>,
        failed: bool,
    }
    let queue = Mutex::new(Queue {
        started: vec![false; jobs.len()],
        busy: BTreeSet::new(),
        results: jobs.iter().map(|_| None).collect(),
        failed: false,
    });
    let changed = Condvar::new();
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(jobs.len());
    let work = |worker: usize| loop {
        let Ok(mut q) = queue.lock() else { return };
        let next = loop {
            let free = (0..jobs.len())
                .find(|&i| !q.started[i] && jobs[i].tests.iter().all(|t| !q.busy.contains(t)));
            if free.is_some() || q.failed || q.started.iter().all(|s| *s) {
                break free.filter(|_| !q.failed);
            }
            q = match changed.wait(q) {
                Ok(q) => q,
                Err(_) => return,
            };
        };
        let Some(i) = next else { return };
        let job = &jobs[i];
        q.started[i] = true;
        q.busy.extend(job.tests.iter().cloned());
        drop(q);
        let mut args = one_thread.to_vec();
        args.push("--exact".into());
        args.extend(job.tests.iter().map(OsString::from));
        let output = scratch.join(format!("output-{worker}.txt"));
        let result = run_transformed(
            program,
            &args,
            (&job.function, &job.value, Some(job.calls)),
            &job.limit,
            runs,
            &output,
        );
        let Ok(mut q) = queue.lock() else { return };
        q.failed |= result.is_err();
        q.results[i] = Some(result);
        for t in &job.tests {
            q.busy.remove(t);
        }
        changed.notify_all();
    };
    std::thread::scope(|s| {
        for worker in 0..workers {
            let work = &work;
            s.spawn(move || work(worker));
        }
    });
    let q = queue
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a transformed run panicked"))?;
    q.results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(anyhow::anyhow!("a transformation was not run"))))
        .collect()
}

/// Runs `bin` with `args` (the tests reaching `function`) `runs` times with `function` forced
/// to return `value`, and combines the verdicts; a run killed by the timeout is not repeated.
/// With `original_calls` (how often the same tests call `function` as the code is), a run that
/// calls it [`RUNAWAY_FACTOR`] times as often (and at least [`RUNAWAY_FLOOR`] times) is killed
/// then, as a loop that never ends, without waiting for the timeout.
/// Returns the verdict, the runs made and their wall time.
fn run_transformed(
    program: &Program,
    args: &[OsString],
    (function, value, original_calls): (&str, &ForcedValue, Option<u64>),
    timeout: &Limit,
    runs: u32,
    output: &Path,
) -> anyhow::Result<(Verdict, u32, f64)> {
    let mut verdicts = Vec::new();
    let mut seconds = 0.0;
    for _ in 0..runs.max(1) {
        let only = Selection {
            filters: vec![function.to_string()],
            ..Selection::default()
        };
        let ran = run_recorded(
            program,
            args,
            only,
            vec![(function.to_string(), value.clone())],
            Some(timeout),
            &mut Discard,
            output,
            None,
            true,
            original_calls,
        )?;
        seconds += ran.seconds;
        verdicts.push(judge(&ran.end, &ran.output));
        if matches!(ran.end, RunEnd::TimedOut { .. } | RunEnd::Runaway { .. }) {
            break;
        }
    }
    let made = verdicts.len() as u32;
    Ok((combine(verdicts), made, seconds))
}

/// `--write-tests`: carves, from the baseline run stored in `db`, the tests that may catch
/// each case, verifies them (they must pass as the code is), keeps for each case the first
/// that fails under its transformation in every run, and takes the others out again.
#[allow(clippy::too_many_arguments)]
fn write_tests(
    a: &AssessArgs,
    bin: &Path,
    db: &Path,
    run: RunId,
    cases: Vec<Case>,
    timeout: &Limit,
    output: &Path,
    report: &mut Report,
) -> anyhow::Result<()> {
    let store = Store::open(db)?;
    let trace = store.load_trace(run)?;
    let threads = store.thread_names(run)?;
    drop(store);
    // After the diagnosis's witnesses, the calls above them: a public caller of a private
    // function may be the one a test can call, and verification tells whether its test
    // catches the transformation.
    let parents: BTreeMap<CallId, Option<CallId>> =
        trace.calls.iter().map(|c| (c.id, c.parent)).collect();
    let mut by_crate: BTreeMap<PathBuf, Vec<Case>> = BTreeMap::new();
    for mut case in cases {
        case.witnesses = with_callers(&case.witnesses, &parents);
        match case.file.as_deref().and_then(|f| package_dir(Path::new(f))) {
            Some(dir) => by_crate.entry(dir).or_default().push(case),
            None => set_written(
                report,
                case.at,
                WrittenTest::NotWritten {
                    reason: "its source file is in no package (no Cargo.toml above it): carve writes tests into a package's tests/ directory".into(),
                },
            ),
        }
    }
    let back_to = std::env::current_dir().context("reading the current directory")?;
    for (dir, cases) in by_crate {
        let mut grouped = GroupedTrace::whole(trace.clone());
        grouped.threads = threads.clone();
        // As cargo test runs them: from the package's directory.
        std::env::set_current_dir(&dir).with_context(|| format!("entering {}", dir.display()))?;
        let done = write_tests_in(a, bin, &dir, &grouped, &cases, timeout, output, report);
        std::env::set_current_dir(&back_to)
            .with_context(|| format!("entering {}", back_to.display()))?;
        done?;
    }
    Ok(())
}

fn set_written(report: &mut Report, (f, t): (usize, usize), written: WrittenTest) {
    if let Some(t) = report
        .functions
        .get_mut(f)
        .and_then(|f| f.transformations.get_mut(t))
    {
        t.written = Some(written);
    }
}

/// At most this many calls are carved for one case.
const MAX_CANDIDATES: usize = 64;

/// `witnesses`, then the recorded callers of each, nearest first (the first witness's first).
fn with_callers(witnesses: &[CallId], parents: &BTreeMap<CallId, Option<CallId>>) -> Vec<CallId> {
    let mut out = witnesses.to_vec();
    for w in witnesses {
        let mut at = parents.get(w).copied().flatten();
        while let Some(p) = at {
            if !out.contains(&p) {
                out.push(p);
            }
            at = parents.get(&p).copied().flatten();
        }
    }
    out.truncate(MAX_CANDIDATES);
    out
}

/// The nearest directory at or above `file` with a `Cargo.toml`.
fn package_dir(file: &Path) -> Option<PathBuf> {
    file.ancestors()
        .skip(1)
        .find(|d| d.join("Cargo.toml").is_file())
        .map(Path::to_path_buf)
}

/// `write_tests` for the cases of one package (`dir`).
#[allow(clippy::too_many_arguments)]
fn write_tests_in(
    a: &AssessArgs,
    bin: &Path,
    dir: &Path,
    grouped: &GroupedTrace,
    cases: &[Case],
    timeout: &Limit,
    output: &Path,
    report: &mut Report,
) -> anyhow::Result<()> {
    let out_dir = dir.join("tests");
    let created = !out_dir.exists();
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let result = carve_into(
        a, bin, dir, &out_dir, grouped, cases, timeout, output, report,
    );
    // A tests/ directory made for tests none of which was kept goes again.
    if created {
        let _ = std::fs::remove_dir(&out_dir);
    }
    result
}

/// `write_tests_in`, the tests going to `out_dir`.
#[allow(clippy::too_many_arguments)]
fn carve_into(
    a: &AssessArgs,
    bin: &Path,
    dir: &Path,
    out_dir: &Path,
    grouped: &GroupedTrace,
    cases: &[Case],
    timeout: &Limit,
    output: &Path,
    report: &mut Report,
) -> anyhow::Result<()> {
    // `carved_assess_<module>.rs` for the library's own unit tests; an integration test's
    // cases get its name too, so two test binaries never write the same file.
    let target = bin
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let target = target.rsplit_once('-').map_or(target.as_str(), |(t, _)| t);
    let krate = cases[0].function.split("::").next().unwrap_or_default();
    let prefix = if target == krate || target.is_empty() {
        "carved_assess_".to_string()
    } else {
        format!("carved_assess_{target}_")
    };
    let cargo = std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from);
    let options = GenerateOptions {
        out_dir: out_dir.to_path_buf(),
        crate_dir: Some(dir.to_path_buf()),
        templates: None,
        verify: Some(Verify {
            cargo: cargo.clone(),
            runs: a.runs,
            timeout: Duration::from_secs(600),
        }),
        plan: PlanOptions {
            only_calls: Some(
                cases
                    .iter()
                    .flat_map(|c| c.witnesses.iter().map(|w| w.0))
                    .collect(),
            ),
            file_prefix: Some(prefix),
            ..PlanOptions::default()
        },
        progress: None,
    };
    let carved = match carve_generator::generate_grouped(grouped, &options) {
        Ok(r) => r,
        Err(e) => {
            for case in cases {
                set_written(
                    report,
                    case.at,
                    WrittenTest::NotWritten {
                        reason: format!("carving failed: {e}"),
                    },
                );
            }
            return Ok(());
        }
    };
    // Each carved file's test binary.
    let mut exes: BTreeMap<String, PathBuf> = BTreeMap::new();
    let files: BTreeSet<&String> = carved.tests.iter().map(|t| &t.file).collect();
    for file in files {
        let stem = file.trim_end_matches(".rs");
        if let Some(exe) = test_executable(&cargo, dir, stem)? {
            exes.insert(file.clone(), exe);
        }
    }
    let mut used: BTreeSet<(String, String)> = BTreeSet::new();
    for case in cases {
        let mut tried: Vec<String> = Vec::new();
        let mut written = None;
        let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
        for w in &case.witnesses {
            let Some(t) = carved.tests.iter().find(|t| t.calls.contains(&w.0)) else {
                continue;
            };
            if !seen.insert((t.file.as_str(), t.name.as_str())) {
                continue;
            }
            let Some(exe) = exes.get(&t.file) else {
                tried.push(format!("{} was not built", t.name));
                continue;
            };
            let args: Vec<OsString> = vec![
                "--test-threads=1".into(),
                "--exact".into(),
                t.name.clone().into(),
            ];
            let program = Program::load(exe)?;
            let (verdict, _, _) = run_transformed(
                &program,
                &args,
                (&case.function, &case.value, None),
                timeout,
                a.runs,
                output,
            )?;
            match verdict {
                Verdict::Detected { reason, .. } => {
                    used.insert((t.file.clone(), t.name.clone()));
                    written = Some(WrittenTest::Written {
                        file: out_dir.join(&t.file).display().to_string(),
                        test: t.name.clone(),
                        fails_with: reason,
                    });
                    break;
                }
                Verdict::Undetected { .. } => tried.push(format!("{} passes under it too", t.name)),
                Verdict::Flaky { detected, runs, .. } => tried.push(format!(
                    "{} fails under it in only {detected} of {runs} runs",
                    t.name
                )),
                Verdict::NotRun { reason } => {
                    tried.push(format!("{} could not be run under it: {reason}", t.name))
                }
            }
        }
        let written = written.unwrap_or_else(|| {
            let uncarved: Vec<CallId> = case
                .witnesses
                .iter()
                .filter(|w| !carved.tests.iter().any(|t| t.calls.contains(&w.0)))
                .copied()
                .collect();
            let reason = match (tried.is_empty(), uncarved.is_empty()) {
                (true, _) if case.witnesses.is_empty() => {
                    "no recorded call to carve it from".to_string()
                }
                (true, _) => format!(
                    "none of the {} recorded calls it could be carved from became a test: {}",
                    case.witnesses.len(),
                    not_carved(&uncarved, &carved)
                ),
                (false, true) => format!("no carved test catches it: {}", tried.join("; ")),
                (false, false) => format!(
                    "no carved test catches it: {}; {} other calls became no test: {}",
                    tried.join("; "),
                    uncarved.len(),
                    not_carved(&uncarved, &carved)
                ),
            };
            WrittenTest::NotWritten { reason }
        });
        set_written(report, case.at, written);
    }
    // Only the tests that catch a case stay.
    let mut by_file: BTreeMap<&str, (BTreeSet<String>, usize)> = BTreeMap::new();
    for t in &carved.tests {
        let entry = by_file.entry(t.file.as_str()).or_default();
        entry.1 += 1;
        if !used.contains(&(t.file.clone(), t.name.clone())) {
            entry.0.insert(t.name.clone());
        }
    }
    for (file, (unused, all)) in by_file {
        if unused.len() == all {
            let path = out_dir.join(file);
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        } else if !unused.is_empty() {
            carve_generator::remove_tests(out_dir, file, &unused)?;
        }
    }
    Ok(())
}

/// Why `calls` became no test: the generator's reasons, counted, and what verification took
/// out.
fn not_carved(calls: &[CallId], carved: &carve_generator::Report) -> String {
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for w in calls {
        let reason = carved
            .summary
            .skipped_calls
            .iter()
            .find(|s| s.call == w.0)
            .map(|s| match &s.detail {
                Some(d) => format!("{} ({d})", s.reason),
                None => s.reason.clone(),
            })
            .unwrap_or_else(|| "not callable from a test (private or not supported)".into());
        *reasons.entry(reason).or_default() += 1;
    }
    let mut text = reasons
        .iter()
        .map(|(r, n)| format!("{r} ({n})"))
        .collect::<Vec<_>>()
        .join(", ");
    if !carved.quarantined.is_empty() {
        text.push_str(&format!(
            "; verification took out {}",
            carved
                .quarantined
                .iter()
                .map(|q| format!("{} ({})", q.test, q.reason))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    text
}

/// The executable of the integration test `stem` of the package in `dir` (built already by
/// verification; `cargo test --no-run` only finds it).
fn test_executable(cargo: &Path, dir: &Path, stem: &str) -> anyhow::Result<Option<PathBuf>> {
    let out = Command::new(cargo)
        .args(["test", "--no-run", "--message-format=json", "--test", stem])
        .current_dir(dir)
        .output()
        .with_context(|| format!("running cargo test --no-run --test {stem}"))?;
    if !out.status.success() {
        return Ok(None);
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| m["target"]["name"] == stem && m["profile"]["test"] == true)
        .and_then(|m| m["executable"].as_str().map(PathBuf::from)))
}

/// The functions of the crate in the binary, each with the tests reaching it, in path order:
/// not the tests themselves nor `tests` modules, not integration tests' helpers (declared under
/// a `tests/` directory), not closures, not derived impls.
fn candidates(
    observed: &Observed,
    tests: &[String],
    filters: &[String],
) -> Vec<(String, Vec<String>)> {
    // The test functions themselves, and the `main` the test harness generates beside them.
    let mut test_code: Vec<String> = Vec::new();
    for f in &observed.functions {
        for t in tests {
            if let Some(krate) = f.path.strip_suffix(&format!("::{t}")) {
                test_code.push(f.path.clone());
                test_code.push(format!("{krate}::main"));
            }
        }
    }
    // Every function of the binary's own code, reached or not: one no test reaches is as
    // undetected as can be.
    let mut by_function: std::collections::BTreeMap<String, Vec<String>> = observed
        .functions
        .iter()
        .map(|f| (f.path.clone(), Vec::new()))
        .collect();
    for (test, calls) in &observed.tests {
        for function in &calls.reached {
            by_function
                .entry(function.clone())
                .or_default()
                .push(test.clone());
        }
    }
    by_function
        .into_iter()
        .filter(|(path, _)| {
            !test_code.contains(path)
                && !in_test_module(path)
                && !path.contains("{closure")
                && !observed.functions.iter().any(|f| {
                    &f.path == path && f.decl_file.as_deref().is_some_and(in_integration_tests)
                })
                && !path.contains("{async")
                && (filters.is_empty()
                    || filters.iter().any(|g| {
                        let name = path.rsplit("::").next().unwrap_or(path);
                        carve_storage::matches_function(g, path, name)
                    }))
                && !observed
                    .functions
                    .iter()
                    .any(|f| &f.path == path && derived(f))
        })
        .collect()
}

/// In a module named `tests` or `test` (`#[cfg(test)] mod tests`), or a closure or item
/// inside a test function's body.
fn in_test_module(path: &str) -> bool {
    path.split("::")
        .any(|segment| segment == "tests" || segment == "test")
}

/// Declared under a package's `tests/` directory (an integration test or its helpers).
fn in_integration_tests(file: &str) -> bool {
    Path::new(file).ancestors().any(|dir| {
        dir.file_name().is_some_and(|n| n == "tests")
            && dir.parent().is_some_and(|p| p.join("Cargo.toml").is_file())
    })
}

/// A function `#[derive]` wrote: its declaration line is the derive attribute.
fn derived(f: &carve_storage::FunctionInfo) -> bool {
    let (Some(file), Some(line)) = (&f.decl_file, f.decl_line) else {
        return false;
    };
    std::fs::read_to_string(file)
        .ok()
        .and_then(|text| {
            text.lines()
                .nth(line.saturating_sub(1) as usize)
                .map(|l| l.contains("derive("))
        })
        .unwrap_or(false)
}
