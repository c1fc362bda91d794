//! `carve assess`: runs a crate's test binaries once under the recorder to learn which tests
//! reach which functions, then, for every reached function and every extreme value that fits its
//! return type, runs only those tests with the function forced to return that value at its entry
//! (no rebuild), and reports which transformations no test notices, and why.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use carve_assess::{
    diagnose, judge, FunctionAssessed, Observed, Observer, Report, RunEnd, Transformation, Verdict,
};
use carve_recorder::{Extreme, Program, RecordOptions, Recording, Selection};
use carve_storage::{ProcessExit, TraceEvent, TraceSink};

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

struct Ran {
    end: RunEnd,
    output: String,
    seconds: f64,
}

/// Runs `bin` with `args` under the recorder (selecting `selection`, forcing `force`), killed
/// after `timeout`.
/// The tests as they are (no transformation, every function of the crate selected), recorded
/// into an `Observer`: who reaches what, and what each test saw.
fn run_as_is(bin: &Path, args: &[OsString], output: &Path) -> anyhow::Result<(Ran, Observer)> {
    let mut observer = Observer::default();
    let ran = run_recorded(
        bin,
        args,
        Selection::default(),
        Vec::new(),
        None,
        &mut observer,
        output,
    )?;
    Ok((ran, observer))
}

fn run_recorded(
    bin: &Path,
    args: &[OsString],
    selection: Selection,
    force: Vec<(String, carve_recorder::ForcedValue)>,
    timeout: Option<Duration>,
    sink: &mut dyn TraceSink,
    output: &Path,
) -> anyhow::Result<Ran> {
    let program = Program::load(bin)?;
    let options = RecordOptions {
        selection,
        force_returns: force,
        output_to: Some(output.to_path_buf()),
        ..RecordOptions::default()
    };
    let started = Instant::now();
    let recording = Recording::spawn(program, args, options)?;
    let pid = recording.pid();
    let done = Arc::new(AtomicBool::new(false));
    let timed_out = Arc::new(AtomicBool::new(false));
    let watchdog = timeout.map(|limit| {
        let (done, timed_out) = (done.clone(), timed_out.clone());
        std::thread::spawn(move || {
            let start = Instant::now();
            while !done.load(Ordering::SeqCst) {
                if start.elapsed() >= limit {
                    timed_out.store(true, Ordering::SeqCst);
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
    let result = recording.run(sink);
    done.store(true, Ordering::SeqCst);
    if let Some(w) = watchdog {
        let _ = w.join();
    }
    let seconds = started.elapsed().as_secs_f64();
    let output = std::fs::read_to_string(output).unwrap_or_default();
    let end = match result {
        _ if timed_out.load(Ordering::SeqCst) => RunEnd::TimedOut(seconds),
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
    })
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
    // The tests as they are, recorded: who reaches what, and what each test saw.
    let (baseline, observer) = run_as_is(bin, &args, &output)?;
    if baseline.end != RunEnd::Exited(0) {
        bail!(
            "the tests of {} do not pass as they are ({:?}): fix them before assessing them",
            bin.display(),
            baseline.end
        );
    }
    let original = observer.by_test(&tests);
    let timeout = Duration::from_secs_f64(a.timeout.unwrap_or(2.0 + 5.0 * baseline.seconds));
    let mut program = Program::load(bin)?;
    let mut repeat: Option<Observed> = None;
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
                report.functions.push(assessed);
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
                });
            }
            report.functions.push(assessed);
            continue;
        }
        for extreme in extremes {
            let mut run_args = one_thread.clone();
            run_args.push("--exact".into());
            run_args.extend(reaching.iter().map(OsString::from));
            let force = vec![(function.clone(), extreme.value.clone())];
            let only = Selection {
                filters: vec![function.clone()],
                ..Selection::default()
            };
            let ran = run_recorded(
                bin,
                &run_args,
                only,
                force.clone(),
                Some(timeout),
                &mut Discard,
                &output,
            )?;
            let mut verdict = judge(&ran.end, &ran.output);
            if let (Verdict::Undetected { diagnosis }, false) = (&mut verdict, a.no_diagnosis) {
                // Record the transformed tests as fully as the original to compare them.
                let mut observer = Observer::default();
                let again = run_recorded(
                    bin,
                    &run_args,
                    Selection::default(),
                    force,
                    Some(timeout),
                    &mut observer,
                    &output,
                )?;
                if again.end == RunEnd::Exited(0) {
                    let transformed = observer.by_test(&tests);
                    if repeat.is_none() {
                        // The tests as they are, once more: what changes between two runs of
                        // the same code is not what a test failed to check.
                        let (rerun, observer) = run_as_is(bin, &args, &output)?;
                        if rerun.end == RunEnd::Exited(0) {
                            repeat = Some(observer.by_test(&tests));
                        }
                    }
                    *diagnosis = Some(diagnose(
                        &function,
                        &extreme.source,
                        &original,
                        repeat.as_ref(),
                        &transformed,
                    ));
                }
            }
            assessed.transformations.push(Transformation {
                value: extreme.source,
                verdict,
                seconds: ran.seconds,
            });
        }
        report.functions.push(assessed);
    }
    Ok(())
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
