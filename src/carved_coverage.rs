//! `carve generate`'s measure of its own carved tests: builds the carved test targets that
//! verification left, records each test binary with `--coverage` (the recorder's library, as
//! `carve record` uses it, into memory: only the lines are kept), and compares the lines they
//! reached with the lines the recording reached in the library's files
//! (`carve_generator::compare_lines`). For distilling ([`distil`]), the same recording one test
//! at a time: the lines each carved test reaches.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use carve_generator::{
    compare_lines, recorded_features, Distil, Fault, LineCoverage, Measured, Report, TestsToMeasure,
};
use carve_recorder::{Program, RecordOptions, Recording, Selection};
use carve_storage::{
    Coverage, FunctionId, LineId, ProcessExit, RunId, RunInfo, StorageError, Store, TraceEvent,
    TraceSink,
};

use crate::fault_runs;

/// Why no figure: the start of every note.
const NOT_MEASURED: &str = "line coverage of the carved tests not measured";

/// Measures the carved tests' line coverage into `report` (`line_coverage`), or says in
/// `line_coverage_note` why it was not measured: the run was recorded without `--coverage`,
/// the tests were not verified, or building or recording them failed. Only a trace that cannot
/// be read is an error.
pub fn measure(store: &Store, run: RunId, report: &mut Report, cargo: &Path) -> anyhow::Result<()> {
    let recorded = match store.coverage(run) {
        Ok(c) => c,
        Err(StorageError::NoCoverage { .. }) => {
            report.line_coverage_note = Some(format!(
                "{NOT_MEASURED}: run {run} was recorded without --coverage; record with \
                 --coverage to measure which of the lines it reached the carved tests reach"
            ));
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    if report.verified_runs.is_none() {
        report.line_coverage_note = Some(format!(
            "{NOT_MEASURED}: the carved tests were not verified (--no-verify); verification \
             builds them, then carve records them"
        ));
        return Ok(());
    }
    let info = store.run(run)?.info;
    match measure_tests(&recorded, &info, report, cargo) {
        Ok((coverage, warnings)) => {
            for w in warnings {
                eprintln!("carve: {w}");
            }
            report.line_coverage = Some(coverage);
        }
        Err(e) => report.line_coverage_note = Some(format!("{NOT_MEASURED}: {e:#}")),
    }
    Ok(())
}

/// Builds and records the carved test targets; returns the comparison and what to warn about.
fn measure_tests(
    recorded: &Coverage,
    info: &RunInfo,
    report: &Report,
    cargo: &Path,
) -> anyhow::Result<(LineCoverage, Vec<String>)> {
    let crate_dir = report.crate_dir.canonicalize().with_context(|| {
        format!(
            "cannot find the crate directory {}",
            report.crate_dir.display()
        )
    })?;
    let tests_dir = crate_dir.join("tests");
    let mut targets = Vec::new();
    for file in report
        .files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
    {
        let dir = file.parent().and_then(|d| d.canonicalize().ok());
        if dir.as_deref() != Some(tests_dir.as_path()) {
            bail!(
                "{} is not in {}, so cargo does not build it as a test target",
                file.display(),
                tests_dir.display()
            );
        }
        if let Some(stem) = file.file_stem() {
            targets.push(stem.to_string_lossy().into_owned());
        }
    }
    let binaries = if targets.is_empty() {
        Vec::new()
    } else {
        build(cargo, &crate_dir, &targets, &recorded_features(info))?
    };
    let mut reached = BTreeSet::new();
    let mut warnings = Vec::new();
    {
        // The test binaries print their results: not onto carve's own output (JSON may be
        // going there), nor from carve's working directory (cargo runs tests in the crate's).
        let log = tempfile::tempfile().context("cannot create a temporary file for test output")?;
        let _quiet = Redirected::to(&log).context("cannot redirect the tests' output")?;
        let _cwd = InDir::enter(&crate_dir)?;
        for (target, exe) in &binaries {
            let sink = record_lines(exe, info)
                .with_context(|| format!("recording the test binary {}", exe.display()))?;
            match &sink.exit {
                Some(ProcessExit::Exited { code: 0 }) => {}
                other => warnings.push(format!(
                    "the carved tests {target} did not exit 0 when recorded for line coverage \
                     ({}); the lines they reached before count",
                    match other {
                        Some(ProcessExit::Exited { code }) => format!("exit code {code}"),
                        Some(ProcessExit::Signaled { name, .. }) => format!("killed by {name}"),
                        Some(ProcessExit::Lost { reason }) => reason.clone(),
                        None => "no exit recorded".to_string(),
                    }
                )),
            }
            reached.extend(sink.reached);
        }
    }
    let mut names = Canonical::default();
    let reached: BTreeSet<(String, u32)> = reached
        .into_iter()
        .map(|(file, line)| (names.of(&file), line))
        .collect();
    let lib_files: BTreeSet<String> = report
        .lib_files
        .iter()
        .map(|f| names.of(&f.to_string_lossy()))
        .collect();
    // A trace moved with its crate: its files are read where the crate is now.
    let recorded = match &report.recorded_root {
        Some(root) => names.coverage(&moved(recorded, root, &crate_dir)),
        None => names.coverage(recorded),
    };
    if !recorded.lines.keys().any(|f| lib_files.contains(f)) {
        bail!(
            "the recording has no line of {}'s sources (was it built from another copy of {}?)",
            report.crate_name,
            crate_dir.display()
        );
    }
    Ok((
        compare_lines(
            &recorded,
            &lib_files,
            &reached,
            targets,
            &report.summary,
            &report.skipped_functions,
            &report.over_max_per_function,
        ),
        warnings,
    ))
}

/// The generator's measure of the verified tests for distilling: builds the carved test
/// targets and records each test alone (`--exact NAME`) with `--coverage` and the recording's
/// selection, then runs the tests again with each value fault the generator asks for (a
/// function forced to answer otherwise: `fault_runs.rs`). A test that does not exit 0 when
/// recorded is left unmeasured (kept).
pub fn distil(info: &RunInfo, cargo: &Path) -> Distil {
    let (info, cargo) = (info.clone(), cargo.to_path_buf());
    Distil::new(move |crate_dir, files| {
        measure_each_test(&info, &cargo, crate_dir, files).map_err(|e| format!("{e:#}"))
    })
}

fn measure_each_test(
    info: &RunInfo,
    cargo: &Path,
    crate_dir: &Path,
    files: &[TestsToMeasure],
) -> anyhow::Result<Measured> {
    let targets: Vec<String> = files.iter().map(|f| f.target.clone()).collect();
    let binaries = build(cargo, crate_dir, &targets, &recorded_features(info))?;
    let log = tempfile::tempfile().context("cannot create a temporary file for test output")?;
    let _quiet = Redirected::to(&log).context("cannot redirect the tests' output")?;
    let _cwd = InDir::enter(crate_dir)?;
    let mut names = Canonical::default();
    let mut out = Measured::default();
    for (target, exe) in &binaries {
        let program = Program::load(exe)
            .with_context(|| format!("loading the test binary {}", exe.display()))?;
        let tests = files.iter().filter(|f| &f.target == target);
        let with_faults = tests.flat_map(|f| f.tests.iter().zip(&f.faults));
        let mut asked: BTreeMap<Fault, Vec<fault_runs::Timed>> = BTreeMap::new();
        // Whose lines they are is the binary's: read from its first measured run.
        let mut placed = false;
        for (test, faults) in with_faults {
            let args: Vec<OsString> =
                vec![test.into(), "--exact".into(), "--test-threads=1".into()];
            let started = Instant::now();
            let sink = record_lines_of(program.clone(), &args, info)
                .with_context(|| format!("recording the test {test} of {}", exe.display()))?;
            if !matches!(sink.exit, Some(ProcessExit::Exited { code: 0 })) {
                continue;
            }
            // A fault that makes the test loop is detected; ten times the recorded run (which
            // stopped at every line) and three seconds at least is long enough to say so.
            let limit = (started.elapsed() * 10).max(Duration::from_secs(3));
            for fault in faults {
                let tests = asked.entry(fault.clone()).or_default();
                tests.push((test.clone(), limit));
            }
            if !placed {
                for ((file, line), function) in sink.functions() {
                    let paths = out.functions.entry((names.of(&file), line)).or_default();
                    paths.extend(function);
                }
                placed = true;
            }
            let lines = sink.reached.into_iter();
            let lines = lines.map(|(file, line)| (names.of(&file), line)).collect();
            out.lines.insert((target.clone(), test.clone()), lines);
        }
        let (detected, runs) = fault_runs::detected(&program, &asked);
        out.fault_runs += runs;
        for (test, faults) in detected {
            out.detected.insert((target.clone(), test), faults);
        }
    }
    Ok(out)
}

/// `cargo test --no-run` of `targets` in `crate_dir`, with the features the recorded program
/// was built with: each target with its executable, from cargo's JSON messages.
pub(crate) fn build(
    cargo: &Path,
    crate_dir: &Path,
    targets: &[String],
    features: &[String],
) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut cmd = Command::new(cargo);
    cmd.args([
        "test",
        "--no-run",
        "--message-format=json",
        "--color",
        "never",
    ])
    .current_dir(crate_dir);
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    for t in targets {
        cmd.args(["--test", t]);
    }
    let out = cmd.output().with_context(|| {
        format!(
            "cannot run {} test --no-run in {}",
            cargo.display(),
            crate_dir.display()
        )
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr
            .lines()
            .find(|l| l.trim_start().starts_with("error"))
            .unwrap_or("(no error line)");
        bail!("cargo test --no-run of the carved tests failed: {first}");
    }
    let mut found = carve_generator::test_executables(&String::from_utf8_lossy(&out.stdout));
    found.retain(|(name, _)| targets.contains(name));
    for t in targets {
        if !found.iter().any(|(n, _)| n == t) {
            bail!("cargo built no executable for the test target {t}");
        }
    }
    found.sort();
    Ok(found)
}

/// Records the test binary `exe` (one test at a time) with `--coverage` and the recording's
/// selection, keeping only the lines it reached.
fn record_lines(exe: &Path, info: &RunInfo) -> anyhow::Result<LinesReached> {
    let args: Vec<OsString> = vec!["--test-threads=1".into()];
    record_lines_of(Program::load(exe)?, &args, info)
}

/// Records `program` run with `args` with `--coverage` and the recording's selection.
pub(crate) fn record_lines_of(
    program: Program,
    args: &[OsString],
    info: &RunInfo,
) -> anyhow::Result<LinesReached> {
    let mut sink = LinesReached::default();
    record_into(program, args, info, &mut sink)?;
    Ok(sink)
}

/// Records `program` run with `args` with `--coverage` and the recording's selection into
/// `sink`.
pub(crate) fn record_into(
    program: Program,
    args: &[OsString],
    info: &RunInfo,
    sink: &mut dyn TraceSink,
) -> anyhow::Result<()> {
    let options = RecordOptions {
        selection: Selection {
            filters: info.filters.clone(),
            excludes: info.excludes.clone(),
            crates: Vec::new(),
            depth: 0,
        },
        coverage: true,
        ..RecordOptions::default()
    };
    let recording = Recording::spawn(program, args, options)?;
    recording.run(sink)?;
    Ok(())
}

/// A sink that keeps the (file, line)s reached, whose lines they are and how the program
/// ended, nothing else.
#[derive(Default)]
pub(crate) struct LinesReached {
    /// Each line with code: its file, line and function.
    code: HashMap<LineId, (String, u32, FunctionId)>,
    pub(crate) reached: BTreeSet<(String, u32)>,
    paths: HashMap<FunctionId, String>,
    pub(crate) exit: Option<ProcessExit>,
}

impl LinesReached {
    /// The paths of the functions each line with code belongs to (the same for every run of
    /// one binary).
    pub(crate) fn functions(&self) -> BTreeMap<(String, u32), BTreeSet<String>> {
        let mut out: BTreeMap<(String, u32), BTreeSet<String>> = BTreeMap::new();
        for (file, line, function) in self.code.values() {
            if let Some(path) = self.paths.get(function) {
                let at = (file.clone(), *line);
                out.entry(at).or_default().insert(path.clone());
            }
        }
        out
    }
}

impl TraceSink for LinesReached {
    fn record(&mut self, event: TraceEvent) {
        match event {
            TraceEvent::Functions(functions) => {
                self.paths
                    .extend(functions.into_iter().map(|f| (f.id, f.path)));
            }
            TraceEvent::CodeLines(lines) => {
                self.code.extend(
                    lines
                        .into_iter()
                        .map(|l| (l.id, (l.file, l.line, l.function))),
                );
            }
            TraceEvent::LineReached { line, .. } => {
                if let Some((file, line, _)) = self.code.get(&line) {
                    self.reached.insert((file.clone(), *line));
                }
            }
            TraceEvent::RunEnded(end) => self.exit = Some(end.exit),
            _ => {}
        }
    }
}

/// `c` with the files recorded under `root` (where the crate was recorded) named under
/// `crate_dir` instead.
fn moved(c: &Coverage, root: &Path, crate_dir: &Path) -> Coverage {
    let local = |file: &str| match Path::new(file).strip_prefix(root) {
        Ok(rest) => crate_dir.join(rest).to_string_lossy().into_owned(),
        Err(_) => file.to_string(),
    };
    let mut out = c.clone();
    out.lines = c
        .lines
        .iter()
        .map(|(file, lines)| (local(file), lines.clone()))
        .collect();
    for f in &mut out.functions {
        for (file, _) in f.lines.iter_mut().chain(f.reached_lines.iter_mut()) {
            *file = local(file);
        }
    }
    out
}

/// Source file names as the file system resolves them (`..`, symlinks), so that the program's
/// and the tests' DWARF name one file alike; a name that does not resolve stays as it is.
#[derive(Default)]
pub(crate) struct Canonical(HashMap<String, String>);

impl Canonical {
    pub(crate) fn of(&mut self, file: &str) -> String {
        self.0
            .entry(file.to_string())
            .or_insert_with(|| {
                std::fs::canonicalize(file)
                    .map_or_else(|_| file.to_string(), |p| p.to_string_lossy().into_owned())
            })
            .clone()
    }

    /// `c` with its file names resolved (lines of two names for one file merged).
    fn coverage(&mut self, c: &Coverage) -> Coverage {
        let mut out = Coverage {
            functions: c.functions.clone(),
            threads: Vec::new(),
            ..Coverage::default()
        };
        for (file, lines) in &c.lines {
            let merged = out.lines.entry(self.of(file)).or_default();
            for (line, reached) in lines {
                *merged.entry(*line).or_default() |= *reached;
            }
        }
        for f in &mut out.functions {
            for (file, _) in f.lines.iter_mut().chain(f.reached_lines.iter_mut()) {
                *file = self.of(file);
            }
        }
        out
    }
}

/// carve's stdout and stderr sent to a file until dropped (the recorder's programs inherit
/// them).
pub(crate) struct Redirected {
    stdout: OwnedFd,
    stderr: OwnedFd,
}

impl Redirected {
    pub(crate) fn to(file: &std::fs::File) -> std::io::Result<Redirected> {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        let saved = Redirected {
            stdout: nix::unistd::dup(std::io::stdout())?,
            stderr: nix::unistd::dup(std::io::stderr())?,
        };
        nix::unistd::dup2_stdout(file)?;
        nix::unistd::dup2_stderr(file)?;
        Ok(saved)
    }
}

impl Drop for Redirected {
    fn drop(&mut self) {
        let _ = nix::unistd::dup2_stdout(&self.stdout);
        let _ = nix::unistd::dup2_stderr(&self.stderr);
    }
}

/// carve's working directory changed to a directory until dropped.
pub(crate) struct InDir(PathBuf);

impl InDir {
    pub(crate) fn enter(dir: &Path) -> anyhow::Result<InDir> {
        let before = std::env::current_dir().context("cannot read the working directory")?;
        std::env::set_current_dir(dir)
            .with_context(|| format!("cannot change into {}", dir.display()))?;
        Ok(InDir(before))
    }
}

impl Drop for InDir {
    fn drop(&mut self) {
        let _ = std::env::set_current_dir(&self.0);
    }
}
