//! `carve record`: spawn the program under the recorder and stream its calls into the store.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::Arc;

use anyhow::Context;
use carve_recorder::{Limits, Program, RecordOptions, Recording, Selection};
use carve_storage::{LockWait, ProcessExit, RunInfo, Store};
use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};

use crate::args::RecordArgs;

pub fn run(a: RecordArgs) -> anyhow::Result<i32> {
    let mut code = 0;
    // `--runs N`: the same recording N times, each a run of its own, so `carve gate` can tell
    // values that change from run to run; the exit code is the last run's.
    for _ in 0..a.runs {
        code = record_once(&a)?;
        if TERMINATIONS.load(Ordering::SeqCst) > 0 {
            break; // asked to stop: no further run
        }
    }
    Ok(code)
}

fn record_once(a: &RecordArgs) -> anyhow::Result<i32> {
    let (program, args) = a
        .command
        .split_first()
        .context("no program given: carve record -- ./program [args]")?;
    let path = carve_recorder::resolve_program(&PathBuf::from(program));
    let program = Program::load(&path)?;
    let options = RecordOptions {
        selection: Selection {
            filters: a.filters.clone(),
            excludes: a.excludes.clone(),
            depth: a.depth,
        },
        limits: Limits {
            max_depth: a.max_depth,
            max_elems: a.max_elements,
            max_string: a.max_string,
        },
        max_calls_per_function: a.max_calls_per_function,
        force_returns: a
            .force_returns
            .iter()
            .map(|spec| parse_force(spec))
            .collect::<anyhow::Result<_>>()?,
        pin_cpu: !a.no_pin,
        coverage: a.coverage,
        coverage_per_thread: a.coverage_per_thread,
    };
    let selected = program.select(&options.selection)?.len();
    let abs = std::fs::canonicalize(&path).unwrap_or(path.clone());
    // A trace file that cannot take the run (damaged, not a trace, read-only) is refused before
    // the program is even started.
    Store::check_for_recording(&a.db)?;
    // Spawned (stopped before its first instruction) before the store is touched, so a program
    // that cannot start leaves no trace file behind.
    let recording = Recording::spawn(program, args, options)?;
    let _forwarding = forward_terminations_to(recording.pid());
    let waiting: LockWait = Arc::new(|db: &Path| {
        eprintln!(
            "carve: waiting for another process to release its write lock on {}; the program is paused meanwhile and no call is lost",
            db.display()
        );
    });
    let store = Store::create_waiting(&a.db, Some(waiting.clone()))?;
    let info = RunInfo {
        program: abs.display().to_string(),
        args: args
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect(),
        cwd: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        pid: recording.pid(),
        started_at_ms: now_ms(),
        filters: a.filters.clone(),
        excludes: a.excludes.clone(),
        carve_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let writer = store.begin_run(&info)?;
    let run_id = writer.run_id();
    // Ctrl-C reaches the program (same process group); carve stays to record how it ended.
    ignore_interrupts();
    // Calls recorded and their rate on a terminal (the sinks count, the bar polls).
    let progress = crate::progress::Recording::start(&abs.display().to_string());
    let children: std::sync::Mutex<Vec<(i32, carve_storage::RunId)>> = Default::default();
    let make_child = |pid: i32| -> Option<Box<dyn carve_storage::TraceSink + Send>> {
        let child = RunInfo {
            pid,
            started_at_ms: now_ms(),
            ..info.clone()
        };
        match Store::create_waiting(&a.db, Some(waiting.clone()))
            .and_then(|store| store.begin_run(&child))
        {
            Ok(writer) => {
                children.lock().ok()?.push((pid, writer.run_id()));
                Some(Box::new(progress.count(writer)))
            }
            Err(e) => {
                eprintln!("carve: forked child {pid} runs untraced: {e}");
                None
            }
        }
    };
    let mut sink = progress.count(writer);
    let result = if a.follow_forks {
        recording.run_with_children(&mut sink, Some(&make_child))
    } else {
        recording.run(&mut sink)
    };
    drop(progress);
    let stored = sink.inner.finish();
    for (pid, run) in children.lock().map(|c| c.clone()).unwrap_or_default() {
        eprintln!("carve: recorded forked child {pid} as run {}", run.0);
    }
    let summary = result?;
    stored?;
    let (code, how) = match &summary.exit {
        ProcessExit::Exited { code } => (*code, format!("exited with {code}")),
        ProcessExit::Signaled { signal, name } => (128 + signal, format!("killed by {name}")),
        ProcessExit::Lost { reason } => (crate::exit::USAGE, reason.clone()),
    };
    eprintln!(
        "carve: recorded {} calls of {} selected functions into {} (run {}); the program {}",
        summary.calls,
        selected,
        a.db.display(),
        run_id.0,
        how
    );
    if a.coverage {
        let (hit, all) = Store::open(&a.db)?.coverage(run_id)?.totals();
        eprintln!(
            "carve: reached {hit} of {all} lines with code in the selected functions; see them with `carve coverage --db {} --run {}`",
            a.db.display(),
            run_id.0
        );
    }
    Ok(code)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The recorded program's pid while a recording runs (0 otherwise), for the signal handler.
static PROGRAM: AtomicI32 = AtomicI32::new(0);
/// How many SIGTERM/SIGHUP carve received while recording.
static TERMINATIONS: AtomicU32 = AtomicU32::new(0);

/// SIGTERM or SIGHUP to carve: the first is passed on to the program, and carve stays to record
/// how it ended (like Ctrl-C, which reaches both); the second kills the program (SIGKILL).
/// Either way the run is closed with the program's exit, its threads and its open calls. A
/// third ends carve itself at once (for a carve stuck waiting on another process's lock).
extern "C" fn on_termination(sig: std::ffi::c_int) {
    let pid = PROGRAM.load(Ordering::SeqCst);
    let earlier = TERMINATIONS.fetch_add(1, Ordering::SeqCst);
    if earlier >= 2 {
        // SAFETY: signal(2) and raise(3) are async-signal-safe.
        if let Ok(sig) = Signal::try_from(sig) {
            unsafe {
                let _ = signal::signal(sig, SigHandler::SigDfl);
            }
            let _ = signal::raise(sig);
        }
        return;
    }
    if pid <= 0 {
        return;
    }
    let sig = match (earlier, Signal::try_from(sig)) {
        (0, Ok(sig)) => sig,
        _ => Signal::SIGKILL,
    };
    // kill(2) is async-signal-safe.
    let _ = signal::kill(nix::unistd::Pid::from_raw(pid), sig);
}

/// Routes SIGTERM and SIGHUP to [`on_termination`] for the program `pid` until dropped (then
/// a late signal finds no program and only stops further `--runs`).
fn forward_terminations_to(pid: i32) -> Forwarding {
    PROGRAM.store(pid, Ordering::SeqCst);
    let action = SigAction::new(
        SigHandler::Handler(on_termination),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for sig in [Signal::SIGTERM, Signal::SIGHUP] {
        // SAFETY: the handler only reads and writes atomics and calls kill(2).
        unsafe {
            let _ = signal::sigaction(sig, &action);
        }
    }
    Forwarding
}

struct Forwarding;

impl Drop for Forwarding {
    fn drop(&mut self) {
        PROGRAM.store(0, Ordering::SeqCst);
    }
}

fn ignore_interrupts() {
    // SAFETY: installing SIG_IGN has no handler code to be unsafe about.
    unsafe {
        let _ = nix::sys::signal::signal(
            nix::sys::signal::Signal::SIGINT,
            nix::sys::signal::SigHandler::SigIgn,
        );
    }
}

/// `GLOB=VALUE` of `--force-return`.
fn parse_force(spec: &str) -> anyhow::Result<(String, i64)> {
    let (glob, value) = spec.rsplit_once('=').with_context(|| {
        format!("--force-return {spec}: write it as GLOB=VALUE, e.g. 'app::answer=41'")
    })?;
    let value: i64 = value
        .trim()
        .parse()
        .with_context(|| format!("--force-return {spec}: {value} is not an integer"))?;
    Ok((glob.to_string(), value))
}
