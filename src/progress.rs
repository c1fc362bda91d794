//! Progress on stderr while carve works (indicatif): calls recorded and their rate, tests
//! carved, verification runs. Drawn only when stderr is a terminal and `--quiet` was not given.
//! Off a terminal (a CI log, a pipe), `generate`, which can run for minutes, prints instead a
//! plain line every few seconds saying where it is (`carve: verifying carved_x.rs: run 2 of
//! 3 (12 s)`), after the first few seconds only, so a quick run prints none; `record` prints
//! nothing there, and with `--quiet` nothing is printed anywhere.
//! The recorder and the generator never print: the recorder's calls are counted by a sink
//! wrapped around the store's writer, which the bar polls; the generator reports its steps
//! through `carve_generator::Progress`.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use carve_storage::{TraceEvent, TraceSink};
use indicatif::{HumanCount, ProgressBar, ProgressStyle};

static ENABLED: AtomicBool = AtomicBool::new(false);
/// The bar on screen, so an error can clear it before its line is printed.
static SHOWN: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Progress as lines, off a terminal (see the module's documentation).
static LINES: AtomicBool = AtomicBool::new(false);
/// What is under way, for the line printer; `None` between steps.
static STATUS: Mutex<Option<Status>> = Mutex::new(None);
static PRINTER: Once = Once::new();
/// When the line printer started (the command's first step), for the elapsed time it prints.
static STARTED: OnceLock<Instant> = OnceLock::new();
/// Seconds between two progress lines, unless `CARVE_PROGRESS_SECONDS` says otherwise.
const LINE_EVERY_SECONDS: f64 = 5.0;

/// Decides once, from `--quiet` and whether stderr is a terminal, if progress is drawn, or
/// printed as lines.
pub fn init(quiet: bool) {
    let terminal = std::io::stderr().is_terminal();
    ENABLED.store(!quiet && terminal, Ordering::SeqCst);
    LINES.store(!quiet && !terminal, Ordering::SeqCst);
}

/// A step under way, as a line prints it: `what`, then how many of how many (`count`).
struct Status {
    what: String,
    count: Option<(Arc<AtomicU64>, Option<u64>, &'static str)>,
}

impl Status {
    fn line(&self) -> String {
        match &self.count {
            None => self.what.clone(),
            Some((done, total, unit)) => {
                let done = HumanCount(done.load(Ordering::Relaxed));
                match total {
                    Some(total) => {
                        format!("{}: {done} of {} {unit}", self.what, HumanCount(*total))
                    }
                    None => format!("{}: {done} {unit}", self.what),
                }
            }
        }
    }
}

/// Says what is under way, for the line printer (started on first use); nothing when progress
/// is not printed as lines.
fn set_status(status: Status) {
    if !LINES.load(Ordering::SeqCst) {
        return;
    }
    PRINTER.call_once(|| {
        let started = *STARTED.get_or_init(Instant::now);
        let every = std::env::var("CARVE_PROGRESS_SECONDS")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite())
            .unwrap_or(LINE_EVERY_SECONDS)
            .max(0.01);
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_secs_f64(every));
            // Printed under the lock: once `clear` has returned, no line comes after it.
            if let Ok(status) = STATUS.lock() {
                if let Some(status) = status.as_ref() {
                    eprintln!(
                        "carve: {} ({} s)",
                        status.line(),
                        started.elapsed().as_secs()
                    );
                }
            }
        });
    });
    if let Ok(mut shown) = STATUS.lock() {
        *shown = Some(status);
    }
}

fn enabled() -> bool {
    ENABLED.load(Ordering::SeqCst)
}

/// Takes the bar on screen away (before an error line, or when a step ends); off a terminal,
/// no progress line is printed after it until the next step.
pub fn clear() {
    if let Ok(mut status) = STATUS.lock() {
        *status = None;
    }
    if let Some(bar) = SHOWN.lock().ok().and_then(|mut s| s.take()) {
        bar.finish_and_clear();
    }
}

fn show(bar: ProgressBar) -> ProgressBar {
    bar.enable_steady_tick(Duration::from_millis(120));
    if let Ok(mut shown) = SHOWN.lock() {
        if let Some(old) = shown.replace(bar.clone()) {
            old.finish_and_clear();
        }
    }
    bar
}

fn spinner(template: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    show(bar)
}

/// Calls recorded so far, shared by the sinks of a recording (the program's run and the runs
/// of its followed children) and read by the bar.
#[derive(Clone, Default)]
pub struct CallCounter(Arc<AtomicU64>);

/// A sink counting the calls that pass through it on their way to `inner`: one relaxed atomic
/// add per call, no lock, no system call, so the tracer's hot path stays as it was.
pub struct Counting<S> {
    pub inner: S,
    calls: CallCounter,
}

impl<S: TraceSink> TraceSink for Counting<S> {
    fn record(&mut self, event: TraceEvent) {
        if matches!(event, TraceEvent::CallStarted(_)) {
            self.calls.0.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.record(event);
    }
}

/// The recording's bar, polling a [`CallCounter`]; cleared when dropped.
pub struct Recording {
    calls: CallCounter,
    stop: Arc<AtomicBool>,
    poller: Option<std::thread::JoinHandle<()>>,
}

impl Recording {
    /// Starts the bar (when progress is drawn) for the recording of `program`.
    pub fn start(program: &str) -> Recording {
        let calls = CallCounter::default();
        let stop = Arc::new(AtomicBool::new(false));
        let poller = enabled().then(|| {
            let bar = spinner("{spinner} recording {prefix}: {msg}, {elapsed}");
            let name = Path::new(program)
                .file_name()
                .map_or(program.into(), |n| n.to_string_lossy());
            bar.set_prefix(carve_storage::terminal_safe(&name, &[]).into_owned());
            let (calls, stop) = (calls.clone(), stop.clone());
            std::thread::spawn(move || {
                let started = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    let n = calls.0.load(Ordering::Relaxed);
                    let secs = started.elapsed().as_secs_f64();
                    let rate = if secs > 0.0 { n as f64 / secs } else { 0.0 };
                    bar.set_message(format!(
                        "{} calls ({}/s)",
                        HumanCount(n),
                        HumanCount(rate as u64)
                    ));
                    std::thread::sleep(Duration::from_millis(100));
                }
                clear();
            })
        });
        Recording {
            calls,
            stop,
            poller,
        }
    }

    /// `sink`, counting its calls for the bar.
    pub fn count<S: TraceSink>(&self, sink: S) -> Counting<S> {
        Counting {
            inner: sink,
            calls: self.calls.clone(),
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(poller) = self.poller.take() {
            let _ = poller.join();
        }
    }
}

/// A spinner counting items read (`generate` reading a run's calls); cleared when dropped. Off
/// a terminal, the line printer shows the count.
pub struct Counter {
    bar: Option<ProgressBar>,
    count: Option<Arc<AtomicU64>>,
}

impl Counter {
    pub fn start(what: &str, unit: &'static str) -> Counter {
        let count = LINES.load(Ordering::SeqCst).then(|| {
            let count = Arc::new(AtomicU64::new(0));
            set_status(Status {
                what: what.to_string(),
                count: Some((count.clone(), None, unit)),
            });
            count
        });
        Counter {
            bar: enabled().then(|| {
                let bar = spinner("{spinner} {prefix}: {human_pos}");
                bar.set_prefix(what.to_string());
                bar
            }),
            count,
        }
    }

    pub fn inc(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        if let Some(count) = &self.count {
            count.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        if self.bar.is_some() || self.count.is_some() {
            clear();
        }
    }
}

/// A step with no count (`measuring the carved tests' line coverage`), shown until [`clear`].
pub fn step(what: &str) {
    set_status(Status {
        what: what.to_string(),
        count: None,
    });
    if enabled() {
        let line = spinner("{spinner} {msg}");
        line.set_message(what.to_string());
    }
}

/// What the generator reports: on a terminal a line (calls planned, tests carved) and then a
/// bar over the verification runs; off one, the same as progress lines. `None` when progress
/// is neither drawn nor printed.
pub fn generation() -> Option<carve_generator::Progress> {
    if LINES.load(Ordering::SeqCst) {
        return Some(carve_generator::Progress::new(|step| {
            if let Some(what) = step_line(step) {
                set_status(Status { what, count: None });
            }
        }));
    }
    if !enabled() {
        return None;
    }
    let bar: Mutex<Option<ProgressBar>> = Mutex::new(None);
    Some(carve_generator::Progress::new(move |step| {
        use carve_generator::Step;
        let Ok(mut bar) = bar.lock() else { return };
        match step {
            Step::Planning { .. } => {
                let line = bar.get_or_insert_with(|| spinner("{spinner} {msg}"));
                line.set_message(step_line(step).unwrap_or_default());
            }
            Step::Carved { .. } => {
                clear();
                let line = spinner("{spinner} {msg}");
                line.set_message(step_line(step).unwrap_or_default());
                *bar = Some(line);
            }
            Step::Verifying { file, done, total } => {
                let b = bar.get_or_insert_with(|| spinner("{msg}"));
                if b.length() != Some(*total as u64) {
                    b.set_length(*total as u64);
                    b.set_style(
                        ProgressStyle::with_template(
                            "{spinner} verifying {msg}: run {pos}/{len} {wide_bar} {elapsed}",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                    );
                }
                b.set_position(*done as u64);
                b.set_message(carve_storage::terminal_safe(file, &[]).into_owned());
            }
            _ => {}
        }
    }))
}

/// A generator step in words: `planning the tests: 1,200 of 5,000 calls`.
fn step_line(step: &carve_generator::Step) -> Option<String> {
    use carve_generator::Step;
    Some(match step {
        Step::Planning { done, total } => format!(
            "planning the tests: {} of {} calls",
            HumanCount(*done as u64),
            HumanCount(*total as u64)
        ),
        Step::Carved { tests, files } => format!("carved {tests} tests into {files} files"),
        Step::Verifying { file, done, total } => format!(
            "verifying {}: {done} of {total} runs done",
            carve_storage::terminal_safe(file, &[])
        ),
        _ => return None,
    })
}
