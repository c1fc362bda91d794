//! `carve assess`: runs a crate's test binaries once under the recorder to learn which tests
//! reach which functions, then, for every reached function and every extreme value that fits its
//! return type, runs only those tests with the function forced to return that value at its entry
//! (no rebuild), `--runs` times, and reports which transformations no test notices, and why.
//! A crate's test binaries are judged together, as `cargo test` runs them all: a transformation
//! one binary's tests catch is not run under the others, one none catches is diagnosed in the
//! first binary whose tests reach it, and a function no test of any binary reaches (compiled
//! into a binary or known only from the sources) is reported as not reached.
//! With `--write-tests`, carves (through the generator) the test each weak-oracle or
//! no-propagation case lacks, and keeps it only when it passes as the code is and fails under
//! the transformation.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use carve_assess::{
    combine, diagnose, judge, FunctionAssessed, Kind, Observed, Observer, Report, RunEnd,
    Transformation, Verdict, WrittenTest,
};
use carve_generator::{GenerateOptions, GroupedTrace, PlanOptions, Verify};
use carve_recorder::{FileAddr, ForcedValue, Program, RecordOptions, Recording, Selection};
use carve_storage::{CallId, ProcessExit, RunId, RunInfo, RunWriter, Store, TraceEvent, TraceSink};

use crate::args::{AssessArgs, AssessFormat};

/// A test binary to run, and where `cargo test` would run it from.
struct Target {
    exe: PathBuf,
    /// Its package's directory (with `--crate`).
    package: Option<PathBuf>,
}

/// What `cargo test --no-run` built for a crate: its test binaries, in the order `cargo test`
/// runs them (the libraries' unit tests, the binaries', then the integration tests), and the
/// root source files of its libraries and binaries, with their crate names.
#[derive(Default)]
struct Built {
    targets: Vec<Target>,
    roots: Vec<(String, PathBuf)>,
}

pub fn run(a: AssessArgs) -> anyhow::Result<i32> {
    let started = Instant::now();
    let (built, extra) = match (&a.crate_dir, a.command.split_first()) {
        (Some(_), Some(_)) => bail!("give either --crate DIR or -- TEST_BINARY, not both"),
        (Some(dir), None) => (test_binaries(dir)?, Vec::new()),
        (None, Some((bin, rest))) => (
            Built {
                targets: vec![Target {
                    exe: PathBuf::from(bin),
                    package: None,
                }],
                roots: Vec::new(),
            },
            rest.to_vec(),
        ),
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
    // One test at a time (each test's calls are the calls of its own thread), asked of libtest
    // through its environment: the tests get only the arguments `cargo test` would give them
    // (none for the run of them all), as a test reading `env::args()` expects.
    std::env::set_var(TEST_THREADS, "1");
    let mut report = Report::default();
    let mut functions = Functions::default();
    let mut loaded: Vec<Binary> = Vec::new();
    for target in &built.targets {
        enter(target.package.as_deref())?;
        let index = report.binaries.len();
        report.binaries.push(target.exe.display().to_string());
        if let Some(binary) = run_binary(&a, index, target, &extra, scratch.path(), &mut functions)?
        {
            loaded.push(binary);
        }
    }
    // Diagnosed once every binary had its runs: a transformation another binary's tests catch
    // needs no diagnosis.
    for binary in &mut loaded {
        enter(binary.package.as_deref())?;
        diagnose_binary(&a, binary, &mut functions)?;
    }
    for binary in &loaded {
        if let (false, Some(run)) = (binary.cases.is_empty(), binary.stored) {
            enter(binary.package.as_deref())?;
            write_tests(&a, binary, run, &mut functions)?;
        }
    }
    functions.add_sources(&built.roots, &a.filters);
    report.functions = functions.into_report();
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

/// libtest's environment variable for `--test-threads`.
const TEST_THREADS: &str = "RUST_TEST_THREADS";

/// As `cargo test` runs a package's tests: from the package's directory, which tests that
/// read their own files (README.md, fixtures) count on, with `CARGO_MANIFEST_DIR` set.
fn enter(package: Option<&Path>) -> anyhow::Result<()> {
    if let Some(dir) = package {
        std::env::set_current_dir(dir).with_context(|| format!("entering {}", dir.display()))?;
        std::env::set_var("CARGO_MANIFEST_DIR", dir);
    }
    Ok(())
}

/// The test executables `cargo test --no-run` builds for the crate in `dir`, each with its
/// package's directory, and the root files of the crate's own libraries and binaries.
fn test_binaries(dir: &Path) -> anyhow::Result<Built> {
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
    let here = dir.canonicalize().unwrap_or(dir.to_path_buf());
    let mut built = Built::default();
    // (order, executable, package)
    let mut bins: Vec<(u8, PathBuf, Option<PathBuf>)> = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let package = msg["manifest_path"]
            .as_str()
            .and_then(|m| Path::new(m).parent())
            .map(Path::to_path_buf);
        let kinds: Vec<&str> = msg["target"]["kind"]
            .as_array()
            .map(|k| k.iter().filter_map(|k| k.as_str()).collect())
            .unwrap_or_default();
        let own = package.as_deref().is_some_and(|p| {
            p.canonicalize()
                .unwrap_or(p.to_path_buf())
                .starts_with(&here)
        });
        let root = msg["target"]["src_path"].as_str();
        let library = kinds
            .iter()
            .any(|k| k.ends_with("lib") || *k == "proc-macro");
        let binary = kinds.contains(&"bin");
        if let (true, true, Some(root), Some(name)) =
            (own, library || binary, root, msg["target"]["name"].as_str())
        {
            let entry = (name.replace('-', "_"), PathBuf::from(root));
            if !built.roots.contains(&entry) {
                built.roots.push(entry);
            }
        }
        let is_test = msg["profile"]["test"] == true;
        if let (true, Some(exe)) = (is_test, msg["executable"].as_str()) {
            let order = if library {
                0
            } else if binary {
                1
            } else {
                2
            };
            bins.push((order, PathBuf::from(exe), package));
        }
    }
    if bins.is_empty() {
        bail!("cargo built no test binary for {}", dir.display());
    }
    // As `cargo test` runs them: unit tests first, then integration tests by name.
    bins.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    built.targets = bins
        .into_iter()
        .map(|(_, exe, package)| Target { exe, package })
        .collect();
    Ok(built)
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

/// Every function assessed, over all the crate's test binaries, by its label
/// ([`carve_assess::label`]; each instance of a generic function is a function of its own).
#[derive(Default)]
struct Functions {
    by_label: BTreeMap<String, Function>,
}

struct Function {
    /// What the report says; each transformation starts as `NotReached` until a binary whose
    /// tests reach the function runs it.
    assessed: FunctionAssessed,
    /// The values of its transformations, in the order of `assessed.transformations`.
    values: Vec<ForcedValue>,
    /// Per binary whose tests reach it: those tests, how often they call it, and the limits
    /// of a run of them.
    reached_in: BTreeMap<usize, Reach>,
    /// Per transformation: the binary whose tests let it through first (undetected or
    /// flaky), where it is diagnosed.
    diagnose_in: Vec<Option<usize>>,
}

#[derive(Clone)]
struct Reach {
    /// The tests a run of the tests reaching it runs: those, or all of the binary's when one
    /// of them reads its command line (`TestCalls::reads_args`), with the arguments that run
    /// them.
    runs: Vec<String>,
    args: Vec<OsString>,
    /// Where the function is in that binary (each binary has its own addresses).
    at: FileAddr,
    calls: u64,
    limit: Limit,
}

/// Which of two verdicts of one transformation, from two binaries' tests, stands for the
/// crate: a test failing anywhere detects it; else runs that disagree make it flaky; a run that
/// could not be made leaves it unknown rather than undetected.
fn rank(v: &Verdict) -> u8 {
    match v {
        Verdict::NotReached => 0,
        Verdict::Undetected { .. } => 1,
        Verdict::NotRun { .. } => 2,
        Verdict::Flaky { .. } => 3,
        Verdict::Detected { .. } => 4,
    }
}

impl Functions {
    /// Adds the verdict of one binary's runs of transformation `t` of `label`.
    fn merge(&mut self, label: &str, t: usize, binary: usize, (verdict, runs, seconds): Outcome) {
        let Some(f) = self.by_label.get_mut(label) else {
            return;
        };
        let Some(tr) = f.assessed.transformations.get_mut(t) else {
            return;
        };
        tr.runs += runs;
        tr.seconds += seconds;
        if rank(&verdict) > rank(&tr.verdict) {
            f.diagnose_in[t] =
                matches!(verdict, Verdict::Undetected { .. } | Verdict::Flaky { .. })
                    .then_some(binary);
            tr.verdict = verdict;
        }
    }

    /// The functions the sources declare that no test binary has (`roots`: each library's
    /// and binary's crate name and root file), as not reached by any test.
    fn add_sources(&mut self, roots: &[(String, PathBuf)], filters: &[String]) {
        // Where the binaries' functions are declared: a source function is one of them when
        // its first lines hold one's declaration.
        let canonical = |f: &str| Path::new(f).canonicalize().ok();
        let mut known: BTreeMap<PathBuf, Vec<u32>> = BTreeMap::new();
        for f in self.by_label.values() {
            if let (Some(file), Some(line)) = (&f.assessed.file, f.assessed.line) {
                if let Some(file) = canonical(file) {
                    known.entry(file).or_default().push(line);
                }
            }
        }
        for (krate, root) in roots {
            for s in carve_assess::source_functions(krate, root) {
                let file = s.file.canonicalize().unwrap_or(s.file.clone());
                let in_binary = known
                    .get(&file)
                    .is_some_and(|lines| lines.iter().any(|l| (s.lines.0..=s.lines.1).contains(l)));
                let name = s.path.rsplit("::").next().unwrap_or(&s.path);
                let wanted = filters.is_empty()
                    || filters
                        .iter()
                        .any(|g| carve_storage::matches_function(g, &s.path, name));
                if in_binary
                    || !wanted
                    || formatting_impl(&s.path)
                    || self.by_label.contains_key(&s.path)
                {
                    continue;
                }
                let mut assessed = FunctionAssessed {
                    function: s.path.clone(),
                    file: Some(s.file.display().to_string()),
                    line: Some(s.lines.0),
                    tests: Vec::new(),
                    skipped: None,
                    transformations: Vec::new(),
                };
                match (s.values, s.no_code) {
                    (_, Some(why)) => assessed.skipped = Some(why),
                    (Ok(values), None) => {
                        assessed.transformations = values
                            .into_iter()
                            .map(|value| Transformation {
                                value,
                                verdict: Verdict::NotReached,
                                seconds: 0.0,
                                runs: 0,
                                written: None,
                            })
                            .collect();
                    }
                    (Err(reason), None) => assessed.skipped = Some(reason),
                }
                let n = assessed.transformations.len();
                self.by_label.insert(
                    s.path,
                    Function {
                        assessed,
                        values: Vec::new(),
                        reached_in: BTreeMap::new(),
                        diagnose_in: vec![None; n],
                    },
                );
            }
        }
    }

    fn into_report(self) -> Vec<FunctionAssessed> {
        self.by_label.into_values().map(|f| f.assessed).collect()
    }
}

/// An impl of a formatting trait (`<T as fmt::Display>::fmt`, `Debug`, `LowerHex`...) as
/// source writes it: left out as the recorder's default selection leaves them out (they run
/// whenever a value is printed, and take a `Formatter` no test can pass).
fn formatting_impl(path: &str) -> bool {
    const TRAITS: [&str; 9] = [
        "Display", "Debug", "LowerHex", "UpperHex", "Octal", "Binary", "LowerExp", "UpperExp",
        "Pointer",
    ];
    let Some((_, rest)) = path.split_once(" as ") else {
        return false;
    };
    let tr = rest.split('>').next().unwrap_or(rest);
    let tr = tr.split('<').next().unwrap_or(tr);
    tr.contains("fmt::") || TRAITS.contains(&tr.rsplit("::").next().unwrap_or(tr))
}

/// A test binary whose tests passed as they are, kept for the diagnoses after every binary's
/// transformed runs.
struct Binary {
    index: usize,
    package: Option<PathBuf>,
    program: Program,
    tests: Vec<String>,
    /// The user's arguments for the test binary (`-- TEST_BINARY ARGS`).
    args: Vec<OsString>,
    /// How long a run of all the tests may take.
    whole: Limit,
    output: PathBuf,
    /// The trace the recording of the tests as they are that the diagnoses compare with is
    /// stored in (`--write-tests` carves from it), and its run.
    trace_db: PathBuf,
    stored: Option<RunId>,
    /// The cases `--write-tests` carves a test for.
    cases: Vec<Case>,
}

/// How many lines of each failing test's output a failing baseline shows.
const FAILURE_LINES: usize = 15;

/// Lists `target`'s tests, records them as they are, and runs, for each function they reach,
/// each transformation no earlier binary's tests caught. `None` for a binary without tests.
fn run_binary(
    a: &AssessArgs,
    index: usize,
    target: &Target,
    extra: &[OsString],
    scratch: &Path,
    functions: &mut Functions,
) -> anyhow::Result<Option<Binary>> {
    let bin = &target.exe;
    let tests = list_tests(bin, extra)?;
    if tests.is_empty() {
        return Ok(None);
    }
    let output = scratch.join(format!("output-{index}.txt"));
    // The tests as they are, recorded: who reaches what, how often and for how long. The
    // values they saw are recorded later, only for the tests a diagnosis needs.
    let mut program = Program::load(bin)?;
    // Each run clones the program: a clone of it as loaded, before the plan lowered the types
    // of every function, is the cheapest to clone (its sections and symbols are shared).
    let pristine = program.clone();
    // What can be assessed is known from the debug info alone: only those functions, and the
    // tests themselves, are recorded (a function carve cannot force costs stops for nothing).
    let (planned, tests_at) = plan(&mut program, &tests, &a.filters, functions);
    let mut only_at: Vec<FileAddr> = planned.values().copied().collect();
    only_at.extend(tests_at);
    drop(program);
    let program = pristine;
    let (baseline, observer) = run_as_is(&program, extra, &output, None, Some(only_at))?;
    if baseline.end != RunEnd::Exited(0) {
        let (failed, shown) =
            carve_assess::baseline_failure(&baseline.end, &baseline.output, FAILURE_LINES);
        if !shown.is_empty() {
            eprintln!("{}", carve_storage::terminal_safe(&shown, &['\n', '\t']));
        }
        let which = match (failed.len(), &baseline.end) {
            (0, end) => format!("they ended as {}", describe(end)),
            (n, RunEnd::Exited(101)) => {
                let mut names = failed
                    .iter()
                    .take(5)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ");
                if n > 5 {
                    names.push_str(&format!(" and {} more", n - 5));
                }
                format!("{n} failed: {names}")
            }
            (_, end) => format!("{} ended as {} during it", failed[0], describe(end)),
        };
        bail!(
            "the tests of {} do not pass as they are ({which}; their output is above): fix them before assessing them",
            bin.display()
        );
    }
    let original = observer.by_test(&tests);
    // A test that reads its command line sees libtest's filter there: it runs unfiltered.
    let sensitive: BTreeSet<&String> = original
        .tests
        .iter()
        .filter(|(_, t)| t.reads_args)
        .map(|(name, _)| name)
        .collect();
    // A run of all the tests (a diagnosis's, a written test's) may take as long as the
    // recorded baseline allows; a transformed run, as long as its own tests took in it.
    let whole = match a.timeout {
        Some(secs) => Limit::given(secs),
        None => Limit::from_recorded(
            baseline.seconds,
            "the time the recorded run of all the tests took",
        ),
    };
    let mut jobs: Vec<Job> = Vec::new();
    for (label, at) in planned {
        let reaching: Vec<String> = original
            .tests
            .iter()
            .filter(|(_, t)| t.reached.contains(&label))
            .map(|(name, _)| name.clone())
            .collect();
        let Some(f) = functions.by_label.get_mut(&label) else {
            continue;
        };
        for t in &reaching {
            if !f.assessed.tests.contains(t) {
                f.assessed.tests.push(t.clone());
            }
        }
        if reaching.is_empty() {
            continue;
        }
        // A test that reads its command line cannot run under a filter: then every test runs.
        let run = if reaching.iter().any(|t| sensitive.contains(t)) {
            tests.clone()
        } else {
            reaching.clone()
        };
        let calls = run
            .iter()
            .filter_map(|t| original.tests.get(t)?.counts.get(&label))
            .sum();
        let limit = match a.timeout {
            Some(secs) => Limit::given(secs),
            None => {
                let each: BTreeMap<String, f64> = run
                    .iter()
                    .filter_map(|t| Some((t.clone(), original.tests.get(t)?.nanos as f64 / 1e9)))
                    .collect();
                let what = if run.len() == reaching.len() {
                    format!(
                        "the time the {} tests reaching it took when recorded",
                        run.len()
                    )
                } else {
                    format!(
                        "the time all {} tests took when recorded (one that reaches it reads its command line: they run unfiltered)",
                        run.len()
                    )
                };
                let mut limit = Limit::from_recorded(each.values().sum(), &what);
                limit.tests = each;
                limit
            }
        };
        let reach = Reach {
            args: filtered(extra, &run, &tests),
            runs: run,
            at,
            calls,
            limit,
        };
        for (t, value) in f.values.iter().enumerate() {
            // Caught by an earlier binary's tests: running it again cannot change that.
            if matches!(
                f.assessed.transformations[t].verdict,
                Verdict::Detected { .. }
            ) {
                continue;
            }
            jobs.push(Job {
                label: label.clone(),
                t,
                value: value.clone(),
                reach: reach.clone(),
            });
        }
        f.reached_in.insert(index, reach);
    }
    let results = run_jobs(&jobs, &program, a.runs, scratch)?;
    for (job, outcome) in jobs.iter().zip(results) {
        functions.merge(&job.label, job.t, index, outcome);
    }
    Ok(Some(Binary {
        index,
        package: target.package.clone(),
        program,
        tests,
        args: extra.to_vec(),
        whole,
        trace_db: scratch.join(format!("recorded-{index}.db")),
        output,
        stored: None,
        cases: Vec::new(),
    }))
}

/// `extra`, and the filter that runs just `run` of the binary's `tests` (none when that is all
/// of them).
fn filtered(extra: &[OsString], run: &[String], tests: &[String]) -> Vec<OsString> {
    let mut args = extra.to_vec();
    if run.len() < tests.len() {
        args.push("--exact".into());
        args.extend(run.iter().map(OsString::from));
    }
    args
}

/// How a run ended, in words.
fn describe(end: &RunEnd) -> String {
    match end {
        RunEnd::Exited(code) => format!("exit code {code}"),
        RunEnd::Signaled(name) => format!("killed by {name}"),
        RunEnd::TimedOut { seconds, .. } => format!("timed out after {seconds:.1} s"),
        RunEnd::Runaway { calls, .. } => format!("a loop stopped after {calls} calls"),
        RunEnd::Lost(reason) => format!("lost by the recorder ({reason})"),
    }
}

/// Diagnoses each transformation this binary's tests let through first (and no other
/// binary's tests caught): its tests are recorded again under it and compared with the
/// original recording.
fn diagnose_binary(
    a: &AssessArgs,
    binary: &mut Binary,
    functions: &mut Functions,
) -> anyhow::Result<()> {
    if a.no_diagnosis {
        return Ok(());
    }
    // The tests reaching what is to be diagnosed here, recorded as they are with every value
    // they saw: once to compare with, and again (--runs − 1 times, at least once) to tell
    // what differs from run to run.
    let needed: BTreeSet<&String> = functions
        .by_label
        .values()
        .filter(|f| f.diagnose_in.contains(&Some(binary.index)))
        .filter_map(|f| f.reached_in.get(&binary.index))
        .flat_map(|r| &r.runs)
        .collect();
    if needed.is_empty() {
        return Ok(());
    }
    let needed_list: Vec<String> = needed.iter().map(|t| t.to_string()).collect();
    let args = filtered(&binary.args, &needed_list, &binary.tests);
    let wanted = 1 + a.runs.saturating_sub(1).max(1) as usize;
    let mut made: Vec<Observed> = Vec::new();
    for _ in 0..wanted + a.runs as usize {
        let store_to = (a.write_tests && made.is_empty()).then_some(binary.trace_db.as_path());
        let (ran, observer) = run_as_is(&binary.program, &args, &binary.output, store_to, None)?;
        if ran.end == RunEnd::Exited(0) {
            if made.is_empty() {
                binary.stored = ran.stored;
            }
            made.push(observer.by_test(&binary.tests));
            if made.len() == wanted {
                break;
            }
        }
    }
    if made.is_empty() {
        let names: Vec<&str> = needed.iter().map(|t| t.as_str()).collect();
        bail!(
            "the tests {} of {} passed once as they are, and then never again in {} runs: fix them (they do not agree with themselves) before assessing them",
            names.join(", "),
            binary.program.path().display(),
            wanted + a.runs as usize
        );
    }
    let original = made.remove(0);
    let repeats = made;
    // Each transformation to diagnose, recorded under it (several at once, as the
    // transformed runs are).
    let mut tasks: Vec<Diagnosing> = Vec::new();
    for (label, f) in &functions.by_label {
        let Some(reach) = f.reached_in.get(&binary.index) else {
            continue;
        };
        for t in 0..f.values.len() {
            if f.diagnose_in[t] != Some(binary.index) {
                continue;
            }
            // An undetected transformation is diagnosed from one more run of its tests,
            // recorded as fully as the original; a flaky one from the first of up to --runs
            // more in which every test passes (the runs where it went undetected).
            let attempts = match &f.assessed.transformations[t].verdict {
                Verdict::Undetected { .. } => 1,
                Verdict::Flaky { .. } => a.runs,
                _ => 0,
            };
            tasks.push(Diagnosing {
                label: label.clone(),
                t,
                value: f.values[t].clone(),
                reach: reach.clone(),
                attempts,
            });
        }
    }
    let (program, tests, whole, output) = (
        &binary.program,
        &binary.tests,
        &binary.whole,
        &binary.output,
    );
    let recorded = schedule(
        &tasks,
        |task| task.reach.runs.as_slice(),
        |task, worker| {
            let output = output.with_extension(format!("{worker}.txt"));
            let mut detected_again = 0;
            for _ in 0..task.attempts {
                let mut observer = Observer::default();
                let again = run_recorded(
                    program,
                    &task.reach.args,
                    Vec::new(),
                    Some((task.reach.at, task.value.clone())),
                    Some(whole),
                    &mut observer,
                    &output,
                    None,
                    false,
                    None,
                )?;
                if again.end == RunEnd::Exited(0) {
                    return Ok((Some(observer.by_test(tests)), detected_again));
                }
                detected_again += 1;
            }
            Ok((None, detected_again))
        },
    )?;
    for (task, (transformed, detected_again)) in tasks.iter().zip(recorded) {
        let Some(f) = functions.by_label.get_mut(&task.label) else {
            continue;
        };
        let (label, t) = (&task.label, task.t);
        let source = f.assessed.transformations[t].value.clone();
        let diagnosed = transformed
            .map(|transformed| diagnose(label, &source, &original, &repeats, &transformed));
        let verdict = &mut f.assessed.transformations[t].verdict;
        match (verdict, diagnosed) {
            (Verdict::Undetected { diagnosis }, Some(d)) => {
                if a.write_tests && matches!(d.kind, Kind::WeakOracle | Kind::NoPropagation) {
                    binary.cases.push(Case {
                        at: (label.clone(), t),
                        function: label.clone(),
                        force: (task.reach.at, task.value.clone()),
                        file: f.assessed.file.clone(),
                        witnesses: d.witnesses.clone(),
                    });
                }
                *diagnosis = Some(d);
            }
            (Verdict::Flaky { diagnosis, .. }, Some(d)) => *diagnosis = Some(d),
            (Verdict::Flaky { not_diagnosed, .. }, None) if task.attempts > 0 => {
                *not_diagnosed = Some(format!(
                    "each of the {detected_again} runs recorded to diagnose it detected it: \
                     no run where it went undetected to compare with the original"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// A transformation to diagnose: recorded under it up to `attempts` times, until every test
/// passes.
struct Diagnosing {
    label: String,
    t: usize,
    value: ForcedValue,
    reach: Reach,
    attempts: u32,
}

/// An undetected weak-oracle or no-propagation case `--write-tests` carves a test for.
#[derive(Clone)]
struct Case {
    /// Where its transformation is in the report: function label, transformation.
    at: (String, usize),
    function: String,
    /// The function's address in the binary whose tests let it through, and the value.
    force: (FileAddr, ForcedValue),
    /// The function's source file.
    file: Option<String>,
    /// The original run's calls a catching test can be carved from, best first.
    witnesses: Vec<CallId>,
}

/// One transformation to run: transformation `t` of `label` (`value`) under the tests
/// reaching it.
struct Job {
    label: String,
    t: usize,
    value: ForcedValue,
    reach: Reach,
}

/// A transformation's verdict over `--runs` runs, the runs made and their wall time.
type Outcome = (Verdict, u32, f64);

/// Runs every job ([`run_transformed`]) and gives their results in the jobs' order, as
/// [`schedule`] runs them. Each worker has its own output file.
fn run_jobs(
    jobs: &[Job],
    program: &Program,
    runs: u32,
    scratch: &Path,
) -> anyhow::Result<Vec<Outcome>> {
    schedule(
        jobs,
        |job| job.reach.runs.as_slice(),
        |job, worker| {
            run_transformed(
                program,
                &job.reach.args,
                (job.reach.at, &job.value, Some(job.reach.calls)),
                &job.reach.limit,
                runs,
                &scratch.join(format!("output-worker-{worker}.txt")),
            )
        },
    )
}

/// Does `work` for every item and gives the results in the items' order. As many run at once
/// as there are CPUs, but never two whose tests (`tests_of`) overlap: each test runs as `cargo
/// test` may run it, beside other tests but never beside itself (a test counting its runs in a
/// file sees them one after another, in the items' order). `work` gets the item and the
/// number of the worker doing it. The first error stops the work not yet started.
fn schedule<T: Sync, R: Send>(
    items: &[T],
    tests_of: impl Fn(&T) -> &[String] + Sync,
    work: impl Fn(&T, usize) -> anyhow::Result<R> + Sync,
) -> anyhow::Result<Vec<R>> {
    struct Queue<R> {
        started: Vec<bool>,
        busy: BTreeSet<String>,
        results: Vec<Option<anyhow::Result<R>>>,
        failed: bool,
    }
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let queue = Mutex::new(Queue {
        started: vec![false; items.len()],
        busy: BTreeSet::new(),
        results: items.iter().map(|_| None).collect(),
        failed: false,
    });
    let changed = Condvar::new();
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(items.len());
    let run = |worker: usize| loop {
        let Ok(mut q) = queue.lock() else { return };
        let next = loop {
            let free = (0..items.len()).find(|&i| {
                !q.started[i] && tests_of(&items[i]).iter().all(|t| !q.busy.contains(t))
            });
            if free.is_some() || q.failed || q.started.iter().all(|s| *s) {
                break free.filter(|_| !q.failed);
            }
            q = match changed.wait(q) {
                Ok(q) => q,
                Err(_) => return,
            };
        };
        let Some(i) = next else { return };
        let item = &items[i];
        q.started[i] = true;
        q.busy.extend(tests_of(item).iter().cloned());
        drop(q);
        let result = work(item, worker);
        let Ok(mut q) = queue.lock() else { return };
        q.failed |= result.is_err();
        q.results[i] = Some(result);
        for t in tests_of(item) {
            q.busy.remove(t);
        }
        changed.notify_all();
    };
    std::thread::scope(|s| {
        for worker in 0..workers {
            let run = &run;
            s.spawn(move || run(worker));
        }
    });
    let q = queue
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a run panicked"))?;
    // The error that stopped the work, rather than the work it left undone.
    let mut results = Vec::with_capacity(q.results.len());
    let mut undone = false;
    for r in q.results {
        match r {
            Some(Ok(r)) => results.push(r),
            Some(Err(e)) => return Err(e),
            None => undone = true,
        }
    }
    if undone {
        bail!("a run was not made");
    }
    Ok(results)
}

/// Runs the program with `args` (the tests reaching the function at `at`) `runs` times with
/// that function forced to return `value`, and combines the verdicts; a run killed by the
/// timeout is not repeated. With `original_calls` (how often the same tests call the function
/// as the code is), a run that calls it [`RUNAWAY_FACTOR`] times as often (and at least
/// [`RUNAWAY_FLOOR`] times) is killed then, as a loop that never ends, without waiting for the
/// timeout. Returns the verdict, the runs made and their wall time.
fn run_transformed(
    program: &Program,
    args: &[OsString],
    (at, value, original_calls): (FileAddr, &ForcedValue, Option<u64>),
    timeout: &Limit,
    runs: u32,
    output: &Path,
) -> anyhow::Result<Outcome> {
    let mut verdicts = Vec::new();
    let mut seconds = 0.0;
    for _ in 0..runs.max(1) {
        let ran = run_recorded(
            program,
            args,
            Vec::new(),
            Some((at, value.clone())),
            Some(timeout),
            // The transformed runs need only the exit.
            &mut (),
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

/// The tests as they are (no transformation, every function of the crate selected), recorded
/// into an `Observer`: who reaches what, and what each test saw. With `store_to`, also stored
/// as a run of that trace (what `--write-tests` carves from).
/// With `counting`, only the functions at those addresses, and only who reaches what, how
/// often and when ([`Observer::counting`]).
fn run_as_is(
    program: &Program,
    args: &[OsString],
    output: &Path,
    store_to: Option<&Path>,
    counting: Option<Vec<FileAddr>>,
) -> anyhow::Result<(Ran, Observer)> {
    let only_at = counting.clone().unwrap_or_default();
    let counting = counting.is_some();
    let mut observer = if counting {
        Observer::counting()
    } else {
        Observer::default()
    };
    let ran = run_recorded(
        program,
        args,
        only_at,
        None,
        None,
        &mut observer,
        output,
        store_to,
        false,
        None,
    )?;
    Ok((ran, observer))
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

/// Runs `bin` with `args` under the recorder (the crate's own code, or only the functions at
/// the addresses `only_at` names, forcing the function at
/// the address `force` names to return its value), killed after `timeout`, its events to
/// `sink` (and stored in the trace `store_to`, when given). `acting_only`: a run judged by its
/// exit alone, beside others: the forced function's entry is its only breakpoint, and it is not
/// pinned to carve's CPU.
#[allow(clippy::too_many_arguments)]
fn run_recorded(
    program: &Program,
    args: &[OsString],
    only_at: Vec<FileAddr>,
    force: Option<(FileAddr, ForcedValue)>,
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
    let only_at = match (&force, acting_only) {
        (Some((at, _)), true) => vec![*at],
        _ => only_at,
    };
    let options = RecordOptions {
        selection: Selection::default(),
        force_at: force.into_iter().collect(),
        only_at,
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
                distinct_calls: false,
                features: Vec::new(),
            };
            Some(Store::create(db)?.begin_run(&info)?)
        }
        None => None,
    };
    // Set when the run ended: the watchdog wakes at once instead of at its next poll (a sleep
    // it finished cost every run up to a poll's length).
    let done = Arc::new((Mutex::new(false), Condvar::new()));
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
            let (ended, wake) = &*done;
            loop {
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
                let Ok(guard) = ended.lock() else { return };
                match wake.wait_timeout_while(guard, Duration::from_millis(20), |ended| !*ended) {
                    Ok((guard, _)) if !*guard => {}
                    _ => return,
                }
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
    if let Ok(mut ended) = done.0.lock() {
        *ended = true;
    }
    done.1.notify_all();
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

/// `--write-tests`: carves, from the baseline run of `binary` stored in its trace, the tests
/// that may catch each of its cases, verifies them (they must pass as the code is), keeps for
/// each case the first that fails under its transformation in every run, and takes the others
/// out again.
fn write_tests(
    a: &AssessArgs,
    binary: &Binary,
    run: RunId,
    functions: &mut Functions,
) -> anyhow::Result<()> {
    let (bin, db, timeout, output) = (
        binary.program.path(),
        binary.trace_db.as_path(),
        &binary.whole,
        binary.output.as_path(),
    );
    let cases = &binary.cases;
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
    for case in cases {
        let mut case = case.clone();
        case.witnesses = with_callers(&case.witnesses, &parents);
        match case.file.as_deref().and_then(|f| package_dir(Path::new(f))) {
            Some(dir) => by_crate.entry(dir).or_default().push(case),
            None => set_written(
                functions,
                &case.at,
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
        let done = write_tests_in(a, bin, &dir, &grouped, &cases, timeout, output, functions);
        std::env::set_current_dir(&back_to)
            .with_context(|| format!("entering {}", back_to.display()))?;
        done?;
    }
    Ok(())
}

fn set_written(functions: &mut Functions, (label, t): &(String, usize), written: WrittenTest) {
    if let Some(t) = functions
        .by_label
        .get_mut(label)
        .and_then(|f| f.assessed.transformations.get_mut(*t))
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
    functions: &mut Functions,
) -> anyhow::Result<()> {
    let out_dir = dir.join("tests");
    let created = !out_dir.exists();
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let result = carve_into(
        a, bin, dir, &out_dir, grouped, cases, timeout, output, functions,
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
    functions: &mut Functions,
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
            features: Vec::new(),
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
        // Kept are the tests that catch a transformation (below), not those adding lines.
        distil: None,
        interrupt: carve_generator::Interrupt::default(),
    };
    // Verification runs `cargo test` as a user would: its tests on as many threads as it likes.
    let threads = std::env::var_os(TEST_THREADS);
    std::env::remove_var(TEST_THREADS);
    let carved = carve_generator::generate_grouped(grouped, &options);
    if let Some(t) = threads {
        std::env::set_var(TEST_THREADS, t);
    }
    let carved = match carved {
        Ok(r) => r,
        Err(e) => {
            for case in cases {
                set_written(
                    functions,
                    &case.at,
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
            let args: Vec<OsString> = vec!["--exact".into(), t.name.clone().into()];
            let program = Program::load(exe)?;
            // The same function in the carved test's own binary, at its address there.
            let Some(at) = program
                .functions()
                .iter()
                .find(|f| carve_assess::instance_label(&f.path, &f.name) == case.function)
                .map(|f| f.low_pc)
            else {
                tried.push(format!("{} does not call {}", t.name, case.function));
                continue;
            };
            let (verdict, _, _) = run_transformed(
                &program,
                &args,
                (at, &case.force.1, None),
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
                Verdict::NotReached => tried.push(format!("{} does not reach it", t.name)),
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
        set_written(functions, &case.at, written);
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
    let mut removed = Vec::new();
    for (file, (unused, all)) in by_file {
        if unused.len() == all {
            let path = out_dir.join(file);
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
            removed.push(path);
        } else if !unused.is_empty() {
            carve_generator::remove_tests(out_dir, file, &unused)?;
        }
    }
    // A manifest with `autotests = false` was given a target for each carved file.
    carve_generator::forget_test_targets(dir, &removed)?;
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

/// The functions of the crate in the binary carve can assess, by label, with their address
/// (each added to `functions` with its transformations, or as skipped, the first time a binary
/// has it), and the addresses of the test functions themselves. Not the tests nor `tests`
/// modules, nor the `main` the test harness generates, not integration tests' helpers
/// (declared under a `tests/` directory), not closures, not derived impls, not formatting
/// impls (as the recorder's default selection), only those `filters` match.
fn plan(
    program: &mut Program,
    tests: &[String],
    filters: &[String],
    functions: &mut Functions,
) -> (BTreeMap<String, FileAddr>, Vec<FileAddr>) {
    let mut planned = BTreeMap::new();
    let mut tests_at = Vec::new();
    let mut sources = Sources::default();
    let own: Vec<carve_recorder::FunctionEntry> = program
        .functions()
        .iter()
        .filter(|f| f.own_code)
        .cloned()
        .collect();
    // The test functions (`krate::tests::x` for the test `tests::x`), and the `main` the test
    // harness generates in their crate.
    let mut harness_mains = BTreeSet::new();
    for entry in &own {
        for t in tests {
            if let Some(krate) = entry.path.strip_suffix(&format!("::{t}")) {
                tests_at.push(entry.low_pc);
                harness_mains.insert(format!("{krate}::main"));
            }
        }
    }
    let mut seen: BTreeSet<FileAddr> = tests_at.iter().copied().collect();
    for entry in own {
        if !seen.insert(entry.low_pc) {
            continue;
        }
        let path = &entry.path;
        let name = path.rsplit("::").next().unwrap_or(path);
        let formatting = path.starts_with('<') && path.contains(" as core::fmt::");
        let left_out = in_test_module(path)
            || path.contains("{closure")
            || path.contains("{async")
            || formatting
            || entry.decl_file.as_deref().is_some_and(in_integration_tests)
            || harness_mains.contains(path);
        let filtered_out = !filters.is_empty()
            && !filters
                .iter()
                .any(|g| carve_storage::matches_function(g, path, name));
        if left_out || filtered_out || sources.derived(entry.decl_file.as_deref(), entry.decl_line)
        {
            continue;
        }
        let label = carve_assess::instance_label(path, &entry.name);
        if planned.contains_key(&label) {
            continue;
        }
        if !functions.by_label.contains_key(&label) {
            let mut assessed = FunctionAssessed {
                function: label.clone(),
                file: entry.decl_file.clone(),
                line: entry.decl_line,
                tests: Vec::new(),
                skipped: None,
                transformations: Vec::new(),
            };
            let mut values = Vec::new();
            match program.extremes(&entry) {
                Ok(extremes) => {
                    for e in extremes {
                        assessed.transformations.push(Transformation {
                            value: e.source,
                            verdict: Verdict::NotReached,
                            seconds: 0.0,
                            runs: 0,
                            written: None,
                        });
                        values.push(e.value);
                    }
                }
                Err(reason) => assessed.skipped = Some(reason),
            }
            let n = values.len();
            functions.by_label.insert(
                label.clone(),
                Function {
                    assessed,
                    values,
                    reached_in: BTreeMap::new(),
                    diagnose_in: vec![None; n],
                },
            );
        }
        if functions.by_label[&label].assessed.skipped.is_none() {
            planned.insert(label, entry.low_pc);
        }
    }
    (planned, tests_at)
}

/// Source files read once each (a derived impl is told by its declaration line).
#[derive(Default)]
struct Sources {
    files: BTreeMap<String, Option<Vec<String>>>,
}

impl Sources {
    /// A function `#[derive]` wrote: its declaration line is the derive attribute.
    fn derived(&mut self, file: Option<&str>, line: Option<u32>) -> bool {
        let (Some(file), Some(line)) = (file, line) else {
            return false;
        };
        let lines = self.files.entry(file.to_string()).or_insert_with(|| {
            std::fs::read_to_string(file)
                .ok()
                .map(|text| text.lines().map(str::to_string).collect())
        });
        lines
            .as_ref()
            .and_then(|l| l.get(line.saturating_sub(1) as usize))
            .is_some_and(|l| l.contains("derive("))
    }
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
