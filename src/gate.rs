//! `carve gate`: record the new build with the baseline's selection and compare it call by call
//! with the baseline trace, or run carved tests; print the report and exit 0 (no divergence),
//! 1 (divergence) or 2 (usage or setup error). The new build is the command after `--`; the
//! command stored in the baseline runs only with `--rerun-recorded-command` (a trace never
//! chooses what runs).

use std::borrow::Cow;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context};
use carve_gate::{CarvedFile, Options, Report};
use carve_storage::{Run, RunId, Store, Trace};

use crate::args::{GateArgs, GateFormat};
use crate::exit;

pub fn run(a: GateArgs) -> anyhow::Result<i32> {
    let report = match &a.tests {
        Some(dir) => run_carved_tests(dir)?,
        None => match compare_with_baseline(&a)? {
            Some(report) => report,
            // `carve record` could not record the new build and said why in its one line.
            None => return Ok(exit::USAGE),
        },
    };
    let text = match a.format {
        GateFormat::Human => {
            let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            carve_gate::human(&report, color)
        }
        GateFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
        GateFormat::Junit => carve_gate::junit(&report),
    };
    crate::emit(&text)?;
    Ok(if report.summary.divergences == 0 {
        exit::OK
    } else {
        exit::DIVERGED
    })
}

/// The report of the new build against the baseline, or `None` when `carve record` could not
/// record the new build (it printed the error).
fn compare_with_baseline(a: &GateArgs) -> anyhow::Result<Option<Report>> {
    let baseline_db = a
        .baseline
        .as_deref()
        .context("give --baseline TRACE.DB (or --tests DIR)")?;
    let store = Store::open(baseline_db)
        .with_context(|| format!("opening the baseline {}", baseline_db.display()))?;
    let runs = store.runs()?;
    let reference = runs.last().with_context(|| {
        format!(
            "the baseline {} holds no run: record one with `carve record --db {} --runs 3 -- PROGRAM`",
            baseline_db.display(),
            baseline_db.display()
        )
    })?;
    // The reference and the earlier runs of the same command and selection, oldest first.
    let baseline: Vec<Trace> = runs
        .iter()
        .filter(|r| same_recording(r, reference))
        .map(|r| store.load_trace_whole(r.id))
        .collect::<Result<_, _>>()?;

    let command = new_build_command(a, baseline_db, reference)?;
    // The baseline's selection (its filters, excludes and crates), unless --filter replaces it.
    let selection = if a.filters.is_empty() {
        let mut excludes = reference.info.excludes.clone();
        excludes.extend(a.excludes.iter().cloned());
        Selection {
            filters: reference.info.filters.clone(),
            excludes,
            crates: reference.info.crates.clone(),
        }
    } else {
        Selection {
            filters: a.filters.clone(),
            excludes: a.excludes.clone(),
            crates: Vec::new(),
        }
    };

    let tmp = tempfile::tempdir().context("creating a temporary directory for the new trace")?;
    let new_db = a
        .new_db
        .clone()
        .unwrap_or_else(|| tmp.path().join("new.db"));
    // A `--new-db` may hold runs already: the new build's is the one recorded now.
    let before = latest_run(&new_db);
    let all_calls = !reference.info.distinct_calls;
    let status = record_new(a, &new_db, (&selection, all_calls), &command)?;
    let new_run = latest_run(&new_db).filter(|&run| Some(run) != before);
    let Some(new_run) = new_run else {
        // carve's own errors exit 2 after one line; the program's own code comes with a run.
        if status.code() == Some(exit::USAGE) {
            return Ok(None);
        }
        bail!(
            "recording the new build stored no run (`carve record` ended with {status}): run `carve record --db NEW.db -- {}` to see why",
            shell_quoted(command.iter().map(|w| w.to_string_lossy()))
        );
    };
    let new = Store::open(&new_db)?.load_trace_whole(new_run)?;

    let options = Options {
        ignore: a.ignore.clone(),
    };
    Ok(Some(carve_gate::compare(&baseline, &new, &options)?))
}

/// The run a trace file ends with, if it is a trace with one.
fn latest_run(db: &Path) -> Option<RunId> {
    Store::open(db).ok()?.latest_run().ok()?
}

/// What runs as the new build: the command after `--`, or with `--rerun-recorded-command` the
/// one stored in the baseline's reference run. A baseline is a file people pass around (CI
/// artefacts, bug reports), so what it names never runs unasked: without either, the stored
/// command is shown and one of them asked for.
fn new_build_command(a: &GateArgs, db: &Path, reference: &Run) -> anyhow::Result<Vec<OsString>> {
    if !a.command.is_empty() {
        return Ok(a.command.clone());
    }
    let info = &reference.info;
    if info.program.is_empty() {
        bail!(
            "run {} of the baseline {} names no program: name the new build with `carve gate --baseline {} -- PROGRAM [ARGS]`",
            reference.id,
            db.display(),
            db.display()
        );
    }
    if !a.rerun_recorded_command {
        bail!(
            "the baseline {} was recorded from `{}`, and a baseline never chooses what runs: name the new build with `carve gate --baseline {} -- PROGRAM [ARGS]`, or pass --rerun-recorded-command to run that command",
            db.display(),
            shell_quoted(std::iter::once(&info.program).chain(&info.args).map(Cow::from)),
            db.display()
        );
    }
    Ok(std::iter::once(&info.program)
        .chain(&info.args)
        .map(OsString::from)
        .collect())
}

/// How much of a command [`shell_quoted`] shows.
const SHOWN_COMMAND_CHARS: usize = 300;

/// `words` as a POSIX shell would take them (single quotes around any word holding more than
/// letters, digits and `-_./:=@%+,`), with nothing a terminal acts on (`\uXXXX` instead), and
/// cut after [`SHOWN_COMMAND_CHARS`] characters: the text may come from a trace.
fn shell_quoted<'w>(words: impl IntoIterator<Item = Cow<'w, str>>) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c);
    let quoted: Vec<String> = words
        .into_iter()
        .map(|w| {
            if !w.is_empty() && w.chars().all(plain) {
                w.into_owned()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect();
    let text = quoted.join(" ");
    let text = carve_storage::terminal_safe(&text, &[]);
    let total = text.chars().count();
    if total <= SHOWN_COMMAND_CHARS {
        return text.into_owned();
    }
    let shown: String = text.chars().take(SHOWN_COMMAND_CHARS).collect();
    format!("{shown}… ({} more characters)", total - SHOWN_COMMAND_CHARS)
}

/// Runs of one baseline that teach each other: same program, arguments and selection.
fn same_recording(run: &Run, reference: &Run) -> bool {
    let (a, b) = (&run.info, &reference.info);
    a.program == b.program
        && a.args == b.args
        && a.filters == b.filters
        && a.excludes == b.excludes
        && a.crates == b.crates
}

/// What the new build is recorded with: `carve record`'s `--filter`, `--exclude`, `--crate`.
struct Selection {
    filters: Vec<String>,
    excludes: Vec<String>,
    crates: Vec<String>,
}

/// `carve record` in a child process: the program's stdout goes to our stderr so the report on
/// stdout stays clean, and the recorder's one-child-at-a-time rule holds.
fn record_new(
    a: &GateArgs,
    db: &Path,
    (selection, all_calls): (&Selection, bool),
    command: &[OsString],
) -> anyhow::Result<std::process::ExitStatus> {
    let carve = crate::carve_exe()?;
    let mut cmd = Command::new(carve);
    cmd.arg("record").arg("--db").arg(db);
    for f in &selection.filters {
        cmd.arg("--filter").arg(f);
    }
    for e in &selection.excludes {
        cmd.arg("--exclude").arg(e);
    }
    for c in &selection.crates {
        cmd.arg("--crate").arg(c);
    }
    if a.depth > 0 {
        cmd.arg("--depth").arg(a.depth.to_string());
    }
    if let Some(n) = a.max_calls_per_function {
        cmd.arg("--max-calls-per-function").arg(n.to_string());
    }
    // As the baseline was recorded: every call, or repeats counted (both compared whole).
    if all_calls {
        cmd.arg("--all-calls");
    }
    cmd.arg("--").args(command);
    let stderr = std::io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .context("duplicating stderr for the program's output")?;
    let status = cmd
        .stdout(Stdio::from(stderr))
        .status()
        .context("starting `carve record` for the new build")?;
    // The program's own exit code is compared with the baseline's; only a recording that never
    // started is a setup error, and the caller notices it (no run stored).
    Ok(status)
}

/// `--tests DIR`: `cargo test` on the crate's carved test files, summarised per function.
fn run_carved_tests(dir: &Path) -> anyhow::Result<Report> {
    let tests_dir = dir.join("tests");
    let mut files = Vec::new();
    let entries = std::fs::read_dir(&tests_dir).into_iter().flatten();
    for entry in entries {
        let path: PathBuf = entry?.path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if stem.starts_with("carved_") && path.extension().is_some_and(|e| e == "rs") {
            let source = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            files.push(CarvedFile {
                stem: stem.to_string(),
                source,
            });
        }
    }
    files.sort_by(|a, b| a.stem.cmp(&b.stem));
    if files.is_empty() {
        bail!(
            "{} holds no carved tests (tests/carved_*.rs): write them with `carve generate --out {}`",
            dir.display(),
            tests_dir.display()
        );
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.arg("test").arg("--no-fail-fast");
    for f in &files {
        cmd.arg("--test").arg(&f.stem);
    }
    let output = cmd
        .current_dir(dir)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running cargo test in {}", dir.display()))?;
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(carve_gate::summarise_tests(
        &dir.display().to_string(),
        &text,
        &files,
        output.status.success(),
    ))
}
