//! `carve generate`: turn a recorded run into Rust test files.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use carve_generator::{
    GenerateError, GenerateOptions, GroupedTrace, Grouper, Interrupt, LeanValues, PlanOptions,
    Report, Verify,
};
use carve_storage::{CallRange, Store};
use nix::sys::signal::{self, SigHandler, Signal};

use crate::args::{Format, GenerateArgs};

/// Set by SIGINT, SIGTERM or SIGHUP while `generate` works: it then stops, leaving `--out` as
/// it was (the generator stages its files and takes them back).
pub(crate) static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: nix::libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Routes SIGINT, SIGTERM and SIGHUP to [`INTERRUPTED`] until dropped.
pub(crate) struct Interruptible;

impl Interruptible {
    pub(crate) fn start() -> Interruptible {
        for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
            // SAFETY: the handler only stores to an atomic.
            unsafe {
                let _ = signal::signal(sig, SigHandler::Handler(on_interrupt));
            }
        }
        Interruptible
    }
}

impl Drop for Interruptible {
    fn drop(&mut self) {
        for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
            // SAFETY: restoring the default action.
            unsafe {
                let _ = signal::signal(sig, SigHandler::SigDfl);
            }
        }
    }
}

pub fn run(a: GenerateArgs) -> anyhow::Result<i32> {
    let report = match generate(&a) {
        Err(e) if is_interrupted(&e) => {
            eprintln!(
                "carve: error: {}",
                carve_storage::terminal_safe(&e.to_string(), &[])
            );
            return Ok(crate::exit::INTERRUPTED);
        }
        report => report?,
    };
    let text = match a.format {
        Format::Json => serde_json::to_string_pretty(&report)? + "\n",
        Format::Text => {
            let mut text = String::new();
            for f in &report.files {
                let again = if report.replaced.contains(f) {
                    " (replacing the file that was there)"
                } else {
                    ""
                };
                text.push_str(&format!("wrote {}{again}\n", f.display()));
            }
            for f in report.replaced.iter().filter(|f| !report.files.contains(f)) {
                text.push_str(&format!(
                    "removed {}: carved again, and no test carved for it passed verification\n",
                    f.display()
                ));
            }
            if let Some(line) = report.features_line() {
                text.push_str(&line);
                text.push('\n');
            }
            if let Some(line) = report.test_targets_line() {
                text.push_str(&line);
                text.push('\n');
            }
            // The headline is the lines of the run the carved tests execute again, when
            // measured: calls weigh differently (issue 30); the call counts come after it.
            let measured = report.line_coverage.is_some();
            let lines = report.line_coverage_line();
            if let Some(line) = lines.as_ref().filter(|_| measured) {
                text.push_str(line);
                text.push('\n');
            }
            text.push_str(&report.summary_line());
            text.push('\n');
            if let Some(d) = &report.distilled {
                text.push_str(&d.line());
                text.push('\n');
            }
            if let Some(note) = lines.filter(|_| !measured) {
                text.push_str(&note);
                text.push('\n');
            }
            text
        }
    };
    crate::emit(&text)?;
    Ok(0)
}

fn is_interrupted(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<GenerateError>(),
        Some(GenerateError::Interrupted { .. })
    )
}

/// Carves the tests `a` asks for; no progress is shown once it returns (`carve demo` goes on
/// with other steps).
pub fn generate(a: &GenerateArgs) -> anyhow::Result<Report> {
    let report = carve(a);
    crate::progress::clear();
    report
}

fn carve(a: &GenerateArgs) -> anyhow::Result<Report> {
    // Before the trace is read (a minute for a trace of a gigabyte): a mistyped --out is told
    // at once.
    if !a.out.is_dir() {
        return Err(GenerateError::OutDirNotADirectory {
            path: a.out.clone(),
        }
        .into());
    }
    let interruptible = Interruptible::start();
    let store = Store::open(&a.db)?;
    let run = crate::show::pick_run(&store, a.run)?;
    // Equivalent calls are grouped as the trace is read, and only the first distinct calls of
    // each function are kept, so memory follows what is written out, not the trace's length.
    // `--all` wants every call's test: it reads the trace whole.
    let max_per_function = match (a.max_per_function, a.all || a.whole_trace) {
        (Some(n), _) => Some(n as usize),
        (None, true) => None,
        (None, false) => Some(carve_generator::DEFAULT_MAX_PER_FUNCTION),
    };
    let mut grouped = if a.all || a.whole_trace {
        // Every call, the repeats the recorder counted made again.
        GroupedTrace::whole(store.load_trace_whole(run)?)
    } else {
        let (functions, objects) = (store.functions(run)?, store.objects(run)?);
        // With the crate given, the calls no test can make lose their values once grouped
        // (memory follows what can be written). A crate that does not load keeps them all: its
        // error is reported where it always was, after the trace is read.
        let lean = a
            .crate_dir
            .as_deref()
            .and_then(|dir| LeanValues::load(dir, &functions, &objects).ok());
        let mut grouper =
            Grouper::new(store.run(run)?, functions, objects).with_repeats(store.repeats(run)?);
        if let Some(n) = max_per_function {
            grouper = grouper.max_per_function(n);
        }
        if let Some(lean) = lean {
            grouper = grouper.lean_values(lean);
        }
        let read = crate::progress::Counter::start(
            &format!("reading the calls of run {}", run.0),
            "calls",
        );
        store.each_call(run, CallRange::default(), |call| {
            if INTERRUPTED.load(Ordering::Relaxed) {
                // Nothing was written yet.
                return Err(anyhow::Error::new(GenerateError::Interrupted {
                    out_dir: a.out.clone(),
                }));
            }
            read.inc();
            grouper.push(call);
            Ok(())
        })?;
        grouper.finish()
    };
    grouped.threads = store.thread_names(run)?;
    // The reads of the calls kept only (a file's contents may be 64 KiB each).
    let kept: std::collections::HashSet<_> = grouped.trace.calls.iter().map(|c| c.id).collect();
    grouped.trace.file_reads = store.file_reads_of(run, |call| kept.contains(&call))?;
    let mut options = GenerateOptions {
        out_dir: a.out.clone(),
        crate_dir: a.crate_dir.clone(),
        templates: a.templates.clone(),
        verify: if a.no_verify {
            None
        } else {
            match cargo_for_verification(a.verify_runs) {
                None if a.verify => anyhow::bail!(
                    "--verify needs cargo, and `cargo --version` did not run: install cargo, set CARGO, or pass --no-verify"
                ),
                found => found,
            }
        },
        plan: PlanOptions {
            keep_equivalent: a.all,
            max_per_function,
            ..PlanOptions::default()
        },
        progress: crate::progress::generation(),
        distil: None,
        interrupt: Interrupt::new(&INTERRUPTED),
    };
    // Distilled unless --no-distil or --all: each verified test recorded alone for its lines.
    if let (false, Some(v)) = (a.all || a.no_distil, &options.verify) {
        options.distil = Some(crate::carved_coverage::distil(
            &store.run(run)?.info,
            &v.cargo,
        ));
    }
    let mut report = carve_generator::generate_grouped(&grouped, &options)?;
    // The files are in place: from here a signal ends carve as usual.
    drop(interruptible);
    if !a.no_coverage {
        crate::progress::step("measuring the carved tests' line coverage");
        let cargo = options
            .verify
            .as_ref()
            .map_or_else(|| PathBuf::from("cargo"), |v| v.cargo.clone());
        crate::carved_coverage::measure(&store, run, &mut report, &cargo)?;
    }
    Ok(report)
}

/// Verification settings when cargo can be run (`$CARGO` when carve runs under cargo).
fn cargo_for_verification(runs: u32) -> Option<Verify> {
    let cargo = std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from);
    let works = std::process::Command::new(&cargo)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    works.then(|| Verify {
        cargo,
        runs: runs.max(1),
        timeout: Duration::from_secs(600),
        features: Vec::new(),
    })
}
