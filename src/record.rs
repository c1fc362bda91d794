//! `carve record`: spawn the program under the recorder and stream its calls into the store.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use carve_recorder::{Launched, Limits, Program, RecordError, RecordOptions, Recording, Selection};
use carve_storage::{
    LockWait, ProcessExit, RunId, RunInfo, RunWriter, Store, TraceEvent, TraceSink,
};
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
    let options = RecordOptions {
        selection: Selection {
            filters: a.filters.clone(),
            excludes: a.excludes.clone(),
            crates: a.crates.clone(),
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
        force_at: Vec::new(),
        only_at: Vec::new(),
        pin_cpu: !a.no_pin,
        coverage: a.coverage,
        coverage_per_thread: a.coverage_per_thread,
        output_to: None,
        entries_only: false,
        capture: match a.capture {
            crate::args::Capture::Ptrace => carve_recorder::CaptureMode::Ptrace,
            crate::args::Capture::Inprocess | crate::args::Capture::Auto => {
                carve_recorder::CaptureMode::InProcess
            }
        },
    };
    // The program is recorded when its debug info has functions the selection picks. Without
    // debug info (`cargo`, a shell), or with `--crate` and nothing of the crate in it, it is a
    // launcher: it runs with no breakpoint and the programs it runs are recorded instead.
    let recorded: Option<Program> = match Program::load(&path) {
        Ok(program) => match program.select(&options.selection) {
            Ok(_) => Some(program),
            Err(RecordError::NothingSelected { .. })
                if !a.crates.is_empty() || !program.functions().iter().any(|f| f.own_code) =>
            {
                None
            }
            Err(e) => return Err(e.into()),
        },
        Err(RecordError::NoDebugInfo { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let mut recorded = recorded;
    // Printed once the trace file is known to take the run: an error stays the only line.
    let paths_note = match recorded.as_mut() {
        Some(program) => capture_paths_note(program, &options, a.capture)?,
        None => None,
    };
    let inlined_note = recorded
        .as_ref()
        .and_then(|program| inlined_only_note(&program.inlined_only(&options.selection)));
    // A trace file that cannot take the run (damaged, not a trace, read-only) is refused before
    // the program is even started.
    Store::check_for_recording(&a.db)?;
    // Spawned (stopped before its first instruction) before the store is touched, so a program
    // that cannot start leaves no trace file behind; runs are opened as programs start.
    let recording_itself = recorded.is_some();
    let recording = match recorded {
        Some(program) => Recording::spawn(program, args, options)?,
        None => Recording::spawn_launcher(&path, args, options)?,
    };
    let _forwarding = forward_terminations_to(recording.pid());
    let waiting: LockWait = Arc::new(|db: &Path| {
        say(&format!(
            "carve: waiting for another process to release its write lock on {}; the program is paused meanwhile and no call is lost",
            db.display()
        ));
    });
    // For a recorded program the trace file is made now, before it runs (a path that cannot
    // take it stops everything here), and holds its run; the runs of other programs open their
    // own. A launcher may run nothing recordable: only its directory is checked now, and the
    // file is made with the first run (creating a trace costs a launcher such as `cargo test
    // --no-run` more than its own work).
    let existed = a.db.exists();
    let first_store = if recording_itself {
        Some(Store::create_waiting(&a.db, Some(waiting.clone()))?)
    } else {
        let dir = match a.db.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if !existed {
            // Whether a file can be made there, without leaving one.
            let probe = dir.join(format!(".carve-probe-{}", std::process::id()));
            let writable = std::fs::File::create_new(&probe).map(|_| std::fs::remove_file(&probe));
            if let Err(e) = writable {
                anyhow::bail!(
                    "cannot write the trace database {}: {e}: check that its directory exists and is writable",
                    a.db.display()
                );
            }
        }
        None
    };
    for note in [paths_note, inlined_note].into_iter().flatten() {
        say(&note);
    }
    let first_store = Mutex::new(first_store);
    // Ctrl-C reaches the program (same process group); carve stays to record how it ended.
    ignore_interrupts();
    // Calls recorded and their rate on a terminal (the sinks count, the bar polls).
    let progress = crate::progress::Recording::start(&carve_storage::terminal_safe(
        &path.display().to_string(),
        &[],
    ));
    let made: Mutex<Vec<Arc<Mutex<RunReport>>>> = Mutex::default();
    let make_run = |l: &Launched| -> Option<Box<dyn TraceSink + Send>> {
        let info = RunInfo {
            program: l.program.display().to_string(),
            args: l.args.clone(),
            cwd: l.cwd.display().to_string(),
            pid: l.pid,
            started_at_ms: now_ms(),
            filters: a.filters.clone(),
            excludes: a.excludes.clone(),
            crates: a.crates.clone(),
            carve_version: env!("CARGO_PKG_VERSION").to_string(),
            distinct_calls: !a.all_calls,
            features: a.cargo_features.clone(),
        };
        let store = match first_store.lock().ok().and_then(|mut s| s.take()) {
            Some(store) => Ok(store),
            None => Store::create_waiting(&a.db, Some(waiting.clone())),
        };
        match store.and_then(|store| store.begin_run(&info)) {
            Ok(writer) => {
                let report = Arc::new(Mutex::new(RunReport {
                    run: writer.run_id(),
                    pid: l.pid,
                    program: l.program.clone(),
                    forked: l.forked,
                    calls: Default::default(),
                    exit: None,
                    stored: None,
                }));
                made.lock().ok()?.push(report.clone());
                Some(Box::new(progress.count(Counted {
                    writer: Some(writer),
                    report,
                })))
            }
            Err(e) => {
                say(&format!(
                    "carve: {} (pid {}) runs untraced: {e}",
                    l.program.display(),
                    l.pid
                ));
                None
            }
        }
    };
    let stop_watching = std::sync::atomic::AtomicBool::new(false);
    let result = std::thread::scope(|s| {
        // The hottest function of each run so far, for `--size-warning`'s line.
        let hottest = || {
            let runs = made.lock().map(|m| m.clone()).unwrap_or_default();
            runs.iter()
                .filter_map(|r| r.lock().ok().and_then(|r| r.calls.hottest()))
                .collect()
        };
        let stop = &stop_watching;
        let watcher =
            s.spawn(move || crate::size_guard::watch(&a.db, a.size_warning, stop, hottest, say));
        let result = recording.run_following(&make_run, a.follow_forks);
        stop_watching.store(true, Ordering::Relaxed);
        watcher.thread().unpark();
        result
    });
    drop(progress);
    let reports: Vec<RunReport> = made
        .into_inner()
        .unwrap_or_default()
        .iter()
        .filter_map(|r| r.lock().ok().map(|r| r.clone()))
        .collect();
    let summary = result?;
    for r in &reports {
        if let Some(Err(e)) = &r.stored {
            anyhow::bail!("{e}");
        }
    }
    let code = match &summary.exit {
        ProcessExit::Exited { code } => *code,
        ProcessExit::Signaled { signal, .. } => 128 + signal,
        ProcessExit::Lost { .. } => crate::exit::USAGE,
    };
    let how = ended("the program", &summary.exit);
    let Some(first) = reports.first() else {
        if !existed {
            // Made for a run that never came: leave nothing behind.
            drop(first_store);
            for suffix in ["", "-wal", "-shm"] {
                let mut path = a.db.clone().into_os_string();
                path.push(suffix);
                let _ = std::fs::remove_file(path);
            }
        }
        anyhow::bail!(
            "nothing recorded: no debug info in {} with functions the selection picks, nor in any program it ran; build with debug = true (cargo's dev profile) or -g, or check --filter/--crate ({how})",
            path.display()
        );
    };
    let total = reports.iter().map(|r| r.calls.total()).sum::<u64>();
    // Calls alike earlier ones, counted and not stored (none with --all-calls).
    let counted = |r: &RunReport| match Store::open(&a.db).and_then(|s| s.repeat_count(r.run)) {
        Ok(0) | Err(_) => String::new(),
        Ok(n) => {
            format!("; {n} calls alike earlier ones counted, not stored: --all-calls stores them")
        }
    };
    if reports.len() == 1 && !first.forked {
        say(&format!(
            "carve: recorded {} calls of {} into {} (run {}{}); {}",
            first.calls.total(),
            first.program.display(),
            a.db.display(),
            first.run.0,
            counted(first),
            how
        ));
    } else {
        for r in &reports {
            let ended = match &r.exit {
                Some(exit) => ended("it", exit),
                None => "it did not end".into(),
            };
            let what = if r.forked { "forked child" } else { "program" };
            say(&format!(
                "carve: recorded {what} {} (pid {}) as run {}: {} calls{}; {ended}",
                r.program.display(),
                r.pid,
                r.run.0,
                r.calls.total(),
                counted(r)
            ));
        }
        say(&format!(
            "carve: recorded {total} calls in {} runs into {} (runs {}); {how}",
            reports.len(),
            a.db.display(),
            run_ranges(&reports.iter().map(|r| r.run.0).collect::<Vec<_>>())
        ));
    }
    if a.coverage {
        for r in &reports {
            let (hit, all) = Store::open(&a.db)?.coverage(r.run)?.totals();
            say(&format!(
                "carve: reached {hit} of {all} lines with code in the selected functions; see them with `carve coverage --db {} --run {}`",
                a.db.display(),
                r.run.0
            ));
        }
    }
    Ok(code)
}

/// How a run ended, as a clause about `who` ("the program", "it"): "the program exited with 3",
/// "it was killed by SIGSEGV". The recorder words the reason of a run it lost either as a
/// clause about the program ("the program called exec to run ..."), as what the program did
/// ("outlived the command carve ran, ..."), or as what went wrong ("no traced process left",
/// "ptrace SETREGS failed on pid 7: ..."); each is made a sentence about `who`.
fn ended(who: &str, exit: &ProcessExit) -> String {
    match exit {
        ProcessExit::Exited { code } => format!("{who} exited with {code}"),
        ProcessExit::Signaled { name, .. } => format!("{who} was killed by {name}"),
        ProcessExit::Lost { reason } => {
            if let Some(rest) = reason.strip_prefix("the program ") {
                format!("{who} {rest}")
            } else if reason.starts_with("outlived ") {
                format!("{who} {reason}")
            } else {
                format!("carve lost track of {who}: {reason}")
            }
        }
    }
}

/// The selected functions the program has only inlined into their callers, when there are
/// some: no call of them can be recorded, so none gets a carved test (`bytesize::ByteSize::as_mib`,
/// `#[inline(always)]`, inlined even in a debug build); their lines and `carve explore` still
/// see them. The first three are named.
fn inlined_only_note(paths: &[String]) -> Option<String> {
    let named: Vec<String> = paths.iter().take(3).map(|p| format!("`{p}`")).collect();
    let more = match paths.len() {
        0 => return None,
        n if n > 3 => format!(" and {} more", n - 3),
        _ => String::new(),
    };
    let (n, its, them, was) = match paths.len() {
        1 => ("1 selected function is".to_string(), "its", "it", "it was"),
        n => (
            format!("{n} selected functions are"),
            "their",
            "them",
            "they were",
        ),
    };
    Some(format!(
        "carve: {n} only inlined into {its} callers in this program ({}{more}): the recorder \
         cannot stop in {them}, so no call of {them} is recorded or carved (`--coverage` counts \
         {its} lines where {was} inlined, and `carve explore` explores {them} when the run \
         reached those lines)",
        named.join(", ")
    ))
}

/// How many selected functions use which path, and why the others keep breakpoints (the rule
/// the recorder applies, read from the file before the program runs): always with `--capture
/// inprocess`; with `auto` only when some function keeps ptrace stops (a run with none has
/// nothing to say); never with `ptrace`.
fn capture_paths_note(
    program: &mut Program,
    options: &RecordOptions,
    capture: crate::args::Capture,
) -> anyhow::Result<Option<String>> {
    if capture == crate::args::Capture::Ptrace {
        return Ok(None);
    }
    let paths = program.capture_paths(options)?;
    let in_process = paths.iter().filter(|(_, why)| why.is_none()).count();
    if capture == crate::args::Capture::Auto && in_process == paths.len() {
        return Ok(None);
    }
    let mut reasons: std::collections::BTreeMap<&str, usize> = Default::default();
    for why in paths.iter().filter_map(|(_, why)| *why) {
        *reasons.entry(why).or_default() += 1;
    }
    let mut reasons: Vec<(&str, usize)> = reasons.into_iter().collect();
    reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let why: Vec<String> = reasons.iter().map(|(r, n)| format!("{r}: {n}")).collect();
    Ok(Some(format!(
        "carve: {in_process} of {} functions captured in process, {} with ptrace stops{}",
        paths.len(),
        paths.len() - in_process,
        if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", why.join("; "))
        }
    )))
}

/// What the summary says about one run.
#[derive(Debug, Clone)]
struct RunReport {
    run: RunId,
    pid: i32,
    program: PathBuf,
    forked: bool,
    /// Calls recorded, per function too (`--size-warning` names the hottest).
    calls: crate::size_guard::HotCounts,
    exit: Option<ProcessExit>,
    /// Whether everything was stored, once the run's writer finished.
    stored: Option<Result<(), String>>,
}

/// A run's sink: the store's writer, counting calls and keeping the exit for the summary. The
/// recorder drops it when the run ends; the writer finishes then.
struct Counted {
    writer: Option<RunWriter>,
    report: Arc<Mutex<RunReport>>,
}

impl TraceSink for Counted {
    fn record(&mut self, event: TraceEvent) {
        // One lock per event that counts (a function list, a call's start, the run's end).
        if matches!(
            event,
            TraceEvent::Functions(_) | TraceEvent::CallStarted(_) | TraceEvent::RunEnded(_)
        ) {
            if let Ok(mut r) = self.report.lock() {
                r.calls.note(&event);
                if let TraceEvent::RunEnded(end) = &event {
                    r.exit = Some(end.exit.clone());
                }
            }
        }
        if let Some(w) = self.writer.as_mut() {
            w.record(event);
        }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        if let Some(w) = self.writer.take() {
            let stored = w.finish().map(drop).map_err(|e| e.to_string());
            if let Ok(mut r) = self.report.lock() {
                r.stored = Some(stored);
            }
        }
    }
}

/// One line to stderr, with nothing a terminal acts on: the program paths in it may come from a
/// trace (`gate --rerun-recorded-command` records the baseline's command).
fn say(line: &str) {
    eprintln!("{}", carve_storage::terminal_safe(line, &[]));
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
fn parse_force(spec: &str) -> anyhow::Result<(String, carve_recorder::ForcedValue)> {
    let (glob, value) = spec.rsplit_once('=').with_context(|| {
        format!("--force-return {spec}: write it as GLOB=VALUE, e.g. 'app::answer=41'")
    })?;
    let value: i64 = value
        .trim()
        .parse()
        .with_context(|| format!("--force-return {spec}: {value} is not an integer"))?;
    Ok((glob.to_string(), carve_recorder::ForcedValue::Int(value)))
}

/// Run ids as a short list: `1, 3, 5-9` (consecutive ids as a range), so a recording of a
/// hundred programs does not print a hundred numbers.
fn run_ranges(ids: &[i64]) -> String {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(match end - start {
            0 => start.to_string(),
            1 => format!("{start}, {end}"),
            _ => format!("{start}-{end}"),
        });
        i += 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::{ended, run_ranges};
    use carve_storage::ProcessExit;

    #[test]
    fn how_a_run_ended_is_a_sentence_about_the_program_whatever_the_reason() {
        let lost = |reason: &str| ProcessExit::Lost {
            reason: reason.into(),
        };
        let cases = [
            (
                ProcessExit::Exited { code: 3 },
                "the program exited with 3",
            ),
            (
                ProcessExit::Signaled {
                    signal: 11,
                    name: "SIGSEGV".into(),
                },
                "the program was killed by SIGSEGV",
            ),
            (
                lost("the program called exec to run /bin/true, recorded on as a run of its own"),
                "the program called exec to run /bin/true, recorded on as a run of its own",
            ),
            (
                lost("outlived the command carve ran, so carve let it go"),
                "the program outlived the command carve ran, so carve let it go",
            ),
            (
                lost("ptrace SETREGS failed on pid 7: ESRCH: No such process"),
                "carve lost track of the program: ptrace SETREGS failed on pid 7: ESRCH: No such process",
            ),
        ];
        for (exit, sentence) in cases {
            assert_eq!(ended("the program", &exit), sentence);
        }
        assert_eq!(
            ended("it", &lost("no traced process left")),
            "carve lost track of it: no traced process left"
        );
    }

    #[test]
    fn consecutive_runs_are_written_as_ranges() {
        assert_eq!(run_ranges(&[]), "");
        assert_eq!(run_ranges(&[4]), "4");
        assert_eq!(run_ranges(&[1, 2]), "1, 2");
        assert_eq!(run_ranges(&[3, 1, 2, 7, 9, 10, 11, 12]), "1-3, 7, 9-12");
    }
}
